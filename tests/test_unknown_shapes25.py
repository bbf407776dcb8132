"""Ops on a tensor whose every dimension is unknown while tracing (an input_signature of
``tf.TensorSpec([None] * rank)``: images of any size, what TF's ``reduce_retracing`` relaxes shapes to).
benchmarks/op_fuzz.py's grid runs each program eagerly and inside a tapeflow.function whose signature leaves
every dimension of the FIRST argument None. Before wave 25: 322 programs in 56 ops differed, among them
silent wrong values (reduce_mean/variance/std with keepdims built an (n, n) "mean" from a per-row count;
top_k and tensordot skipped the checks eager makes) and crashes of the shape inference (a 2 TiB dummy array
for an advanced index beside several unknown dims). Now: no program gives a value that differs from eager's
(a difference is an error raised while tracing or running, never a silent answer), and the ops that still
raise where eager runs, other than by a clear refusal naming the op and the unknown size, are NOT_YET (known gaps: the list must shrink, never grow; tests/test_dynamic_batch24.py
covers the first dimension alone, where every op works or refuses by name)."""
import logging
import os
import re
import sys
import warnings

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import op_fuzz as F  # noqa: E402
import tapeflow as tf  # noqa: E402

# ops that raise traced with every dimension unknown where they run eagerly (wave 25: 29 ops)
NOT_YET = {
    "tf.boolean_mask", "tf.dynamic_partition", "tf.image.crop_and_resize", "tf.image.non_max_suppression",
    "tf.linalg.cholesky_solve", "tf.linalg.expm", "tf.linalg.solve", "tf.linalg.triangular_solve",
    "tf.math.in_top_k", "tf.math.reduce_logsumexp", "tf.nn.avg_pool1d", "tf.nn.avg_pool2d", "tf.nn.avg_pool3d",
    "tf.nn.conv1d", "tf.nn.conv2d", "tf.nn.conv3d", "tf.nn.ctc_unique_labels", "tf.nn.depth_to_space",
    "tf.nn.depthwise_conv2d", "tf.nn.local_response_normalization", "tf.nn.max_pool1d", "tf.nn.max_pool3d",
    "tf.nn.max_pool_with_argmax", "tf.nn.pool", "tf.nn.separable_conv2d", "tf.nn.space_to_depth",
    "tf.reverse_sequence", "tf.squeeze", "tf.strings.format",
}


def _clear_refusal(g, args):
    """An error naming the op (the text starts 'name:') that says a size is unknown while tracing."""
    try:
        g(*[tf.constant(a) for a in args])
    except Exception as ex:  # noqa: BLE001
        msg = str(ex)
        return bool(re.match(r"[\w.]+(\(.*?\))?: ", msg)) and any(
            t in msg for t in ("known only when the function runs", "must be known"))
    return False


def test_every_dimension_unknown_never_gives_a_silently_different_value():
    logging.disable(logging.WARNING)
    silent, failing = [], set()
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            for src, args in F.grid(0):
                if not args or any(a.ndim == 0 for a in args):
                    continue
                fn = eval("lambda x=None, y=None, z=None: " + src, {"tf": tf, "np": np})  # noqa: S307
                spec = [tf.TensorSpec([None] * a.ndim if i == 0 else list(a.shape), tf.as_dtype(a.dtype))
                        for i, a in enumerate(args)]
                try:
                    g = tf.function(fn, input_signature=spec)
                except Exception:  # noqa: BLE001  (a signature the op's arguments cannot take)
                    continue
                e, c = F.outcome(tf, fn, args), F.outcome(tf, g, args)
                if F.same(e, c, 1e-6):
                    continue
                if c["k"] != "err":
                    silent.append((src, [(str(a.dtype), a.shape) for a in args], F._short(e), F._short(c)))
                elif e["k"] != "err" and not _clear_refusal(g, args):
                    failing.add(F._op(src))
    finally:
        logging.disable(logging.NOTSET)
    assert not silent, "\n".join(map(str, silent[:20]))
    assert failing <= NOT_YET, f"new failures: {sorted(failing - NOT_YET)}"
    assert failing == NOT_YET, f"no longer failing, remove from NOT_YET: {sorted(NOT_YET - failing)}"


def test_a_fully_convolutional_model_on_images_of_any_size():
    """Input(shape=(None, None, 3)) / TensorSpec([None, None, None, 3]): 'same' convolutions and pools of stride
    1 pad (k - 1) * dilation whatever the size, so they run (they refused: "SAME needs known height and
    width"); a stride > 1 with 'same' still refuses by name (its padding depends on the size)."""
    layers = [tf.keras.layers.Conv2D(4, 3, padding="same"), tf.keras.layers.Conv2D(4, 3, padding="same",
                                                                                  dilation_rate=2),
              tf.keras.layers.DepthwiseConv2D(3, padding="same"), tf.keras.layers.MaxPooling2D(3, 1, "same"),
              tf.keras.layers.Conv2D(2, 3)]
    spec = [tf.TensorSpec([None, None, None, 3])]

    def net(t):
        h = layers[0](t)
        h = layers[1](h) + h
        return layers[4](tf.squeeze(layers[3](layers[2](h[..., :3]))[:, None], 1))
    g = tf.function(net, input_signature=spec)
    rng = np.random.default_rng(0)
    for hw in ((9, 7), (5, 12)):
        x = rng.standard_normal((2,) + hw + (3,)).astype(np.float32)
        np.testing.assert_allclose(g(x).numpy(), net(tf.constant(x)).numpy(), rtol=1e-5, atol=1e-5)
    assert g.experimental_get_tracing_count() == 1
    conv1d = tf.keras.layers.Conv1D(2, 3, padding="same")
    c = tf.function(lambda t: conv1d(t), input_signature=[tf.TensorSpec([None, None, 3])])
    x = rng.standard_normal((2, 6, 3)).astype(np.float32)
    np.testing.assert_allclose(c(x).numpy(), conv1d(tf.constant(x)).numpy(), rtol=1e-5, atol=1e-5)
    strided = tf.keras.layers.Conv2D(2, 3, strides=2, padding="same")
    with pytest.raises(ValueError, match="stride > 1 needs known height and width"):
        tf.function(lambda t: strided(t), input_signature=spec)(x[:, :, None, :].repeat(3, 2))
