"""tf.nn 3-D convolution and pooling cases shared by tests/tf_reference/make_nn3d_reference.py
(run under TF 2.21) and tests/test_nn3d.py (run under tapeflow): name -> (op, input shape,
filter shape or None, keyword arguments)."""
import numpy as np

CASES = {
    "conv_valid": ("conv3d", (2, 5, 6, 5, 3), (3, 2, 2, 3, 4), dict(strides=[1, 1, 1, 1, 1], padding="VALID")),
    "conv_same_strided": ("conv3d", (2, 5, 6, 7, 2), (3, 3, 2, 2, 3), dict(strides=[1, 2, 1, 3, 1], padding="SAME")),
    "conv_dilated": ("conv3d", (1, 6, 5, 6, 2), (2, 2, 3, 2, 2),
                     dict(strides=[1, 1, 1, 1, 1], padding="SAME", dilations=[1, 2, 1, 2, 1])),
    "convt_valid": ("conv3d_transpose", (2, 3, 4, 3, 4), (3, 2, 2, 3, 4),
                    dict(output_shape=[2, 7, 8, 6, 3], strides=[1, 2, 2, 2, 1], padding="VALID")),
    "convt_same": ("conv3d_transpose", (1, 3, 4, 2, 3), (3, 3, 3, 2, 3),
                   dict(output_shape=[1, 6, 4, 6, 2], strides=[1, 2, 1, 3, 1], padding="SAME")),
    "maxpool_valid": ("max_pool3d", (2, 5, 6, 5, 3), None, dict(ksize=[2, 3, 2], strides=[2, 3, 2], padding="VALID")),
    "maxpool_same": ("max_pool3d", (2, 5, 4, 5, 2), None, dict(ksize=3, strides=[1, 2, 1, 2, 1], padding="SAME")),
    "avgpool_valid": ("avg_pool3d", (2, 4, 5, 3, 2), None, dict(ksize=2, strides=1, padding="VALID")),
    "avgpool_same": ("avg_pool3d", (2, 5, 4, 5, 2), None, dict(ksize=[3, 2, 3], strides=2, padding="SAME")),
    "maxpool_generic": ("max_pool", (1, 4, 4, 4, 2), None,
                        dict(ksize=2, strides=2, padding="VALID", data_format="NDHWC")),
    "avgpool_generic": ("avg_pool", (1, 4, 4, 4, 2), None,
                        dict(ksize=2, strides=1, padding="SAME", data_format="NDHWC")),
    "convolution": ("convolution", (1, 4, 5, 4, 2), (2, 2, 2, 2, 3), dict(padding="VALID", data_format="NDHWC")),
}


def inputs_for(case, rng):
    _, xs, ws, _ = case
    x = rng.standard_normal(xs).astype(np.float32)
    return x, None if ws is None else rng.standard_normal(ws).astype(np.float32)


def call(tf, case, x, w):
    op, _, _, kw = case
    fn = getattr(tf.nn, op)
    return fn(x, **kw) if w is None else fn(x, w, **kw)
