"""3-D convolution and pooling (tf.nn.conv3d, conv3d_transpose, max_pool3d, avg_pool3d, and the
rank-5 forms of max_pool/avg_pool/convolution): TF 2.21's outputs and gradients (recorded by
tests/tf_reference/make_nn3d_reference.py), eager and compiled; gradients against finite
differences to second order; bad inputs. The Keras 3-D layers are checked against TF in
test_keras_layer_reference.py (tests/layer_cases.py)."""
import os
import zlib

import numpy as np
import pytest

import tapeflow as tf
from conftest import check_grads
from nn3d_cases import CASES, call

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "nn3d_reference.npz"))


def _grads(case, x, w, ct, compiled):
    def f(x, w):
        with tf.GradientTape() as tape:
            tape.watch(x)
            if w is not None:
                tape.watch(w)
            y = call(tf, case, x, w)
            loss = tf.reduce_sum(y * ct)
        return (y,) + tuple(tape.gradient(loss, [x] + ([] if w is None else [w])))
    if compiled:
        f = tf.function(f)
    return f(tf.constant(x), None if w is None else tf.constant(w))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tf(name, compiled):
    x, ct = REF[f"{name}/x"], REF[f"{name}/ct"]
    w = REF[f"{name}/w"] if f"{name}/w" in REF else None
    out = _grads(CASES[name], x, w, ct, compiled)
    np.testing.assert_allclose(out[0].numpy(), REF[f"{name}/out"], rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(out[1].numpy(), REF[f"{name}/gx"], rtol=2e-5, atol=2e-5)
    if w is not None:
        np.testing.assert_allclose(out[2].numpy(), REF[f"{name}/gw"], rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", ["conv_same_strided", "conv_dilated", "convt_same", "avgpool_same",
                                  "maxpool_same", "convolution"])
def test_grads_finite_differences(name):
    case = CASES[name]
    op, xs, ws, kw = case
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    # small shapes keep the float64 second-order check quick; max pooling is checked away from ties
    xs = tuple(min(d, 4) if i in (1, 2, 3) else d for i, d in enumerate(xs))
    if op == "conv3d_transpose":
        xs, case = (1, 2, 2, 2, 3), (op, xs, ws, dict(kw, output_shape=[1, 3, 2, 4, 2]))
    x = rng.permutation(np.prod(xs)).reshape(xs) / 7.0 + 0.01 * rng.standard_normal(xs)
    if ws is None:
        check_grads(lambda x: call(tf, case, x, None), [x], rtol=1e-4, atol=1e-6)
    else:
        w = rng.standard_normal(ws)
        check_grads(lambda x, w: call(tf, case, x, w), [x, w], rtol=1e-4, atol=1e-6)


def test_grouped_conv3d_is_per_group():
    # TF 2.21's CPU kernel refuses grouped 3-D convolutions (Keras' Conv3D splits the groups itself);
    # tapeflow's conv3d groups as conv2d does: each half of the filters sees its half of the channels
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 4, 3, 4)).astype(np.float32)
    w = rng.standard_normal((2, 2, 2, 2, 6)).astype(np.float32)
    y = tf.nn.conv3d(x, w, 1, "VALID").numpy()
    a = tf.nn.conv3d(x[..., :2], w[..., :3], 1, "VALID").numpy()
    b = tf.nn.conv3d(x[..., 2:], w[..., 3:], 1, "VALID").numpy()
    np.testing.assert_allclose(y, np.concatenate([a, b], -1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_unknown_batch_traces(compiled):
    x = np.ones((2, 4, 4, 4, 1), np.float32)
    w = np.ones((2, 2, 2, 1, 2), np.float32)

    def f(x):
        return tf.nn.avg_pool3d(tf.nn.conv3d(x, w, 1, "SAME"), 2, 2, "VALID")
    if compiled:
        f = tf.function(f, input_signature=[tf.TensorSpec([None, 4, 4, 4, 1], tf.float32)])
    y = f(x)
    assert y.shape == (2, 2, 2, 2, 2)
    assert float(y[0, 0, 0, 0, 0]) == 8.0


@pytest.mark.parametrize("fn, needle", [
    (lambda: tf.nn.conv3d(np.ones((1, 3, 3, 3, 3), np.float32), np.ones((2, 2, 2, 2, 4), np.float32), 1,
                          "VALID"), "evenly divisible"),
    (lambda: tf.nn.conv3d(np.ones((1, 3, 3, 3), np.float32), np.ones((2, 2, 2, 3, 4), np.float32), 1, "VALID"),
     "rank 5"),
    (lambda: tf.nn.conv3d(np.ones((1, 4, 4, 4, 2), np.float32), np.ones((2, 2, 2, 2, 3), np.float32), 1,
                          [[0, 0], [1, 1], [1, 1], [1, 1], [0, 0]]), "tf.pad the input first"),
    (lambda: tf.nn.avg_pool3d(np.ones((1, 3, 3, 3, 1), np.int32), 2, 1, "VALID"), "floating"),
    (lambda: tf.nn.max_pool3d(np.ones((1, 3, 3, 3, 1), np.float32), 4, 1, "VALID"), "does not fit"),
    (lambda: tf.nn.conv3d_transpose(np.ones((1, 2, 2, 2, 4), np.float32), np.ones((2, 2, 2, 3, 4), np.float32),
                                    [1, 4, 3, 3, 3], 1, "VALID"), "is not what conv3d"),
    (lambda: tf.nn.conv3d(np.ones((1, 3, 3, 3, 2), np.float32), np.ones((2, 2, 2, 2, 1), np.float32), 1,
                          "VALID", data_format="NCDHW"), "channels-last"),
])
def test_bad_inputs(fn, needle):
    with pytest.raises(Exception, match=needle):
        fn()
