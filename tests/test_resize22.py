"""tf.image.resize's other methods (wave 22): bicubic, area, lanczos3/5, gaussian, mitchellcubic, and
antialias=True, against TF 2.21's outputs (tests/tf_reference/make_resize_reference.py), eagerly and
in tapeflow.function, with gradients against finite differences (the weights are constants, so the
result is linear in the image)."""
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "tf_reference"))
from resize_cases import cases  # noqa: E402

REF = np.load(os.path.join(HERE, "data", "resize22_tf.npz"))
CASES = list(cases())


@pytest.mark.parametrize("key,method,antialias,size", CASES, ids=[c[0] for c in CASES])
def test_resize_matches_tf(key, method, antialias, size):
    img = REF["image"]
    got = tf.image.resize(img, size, method=method, antialias=antialias)
    assert got.dtype == tf.float32 and got.shape == REF[key].shape
    # (sums in another order than TF's loops: float32 rounding, up to ~1e-5 of the 0-255 range)
    np.testing.assert_allclose(got.numpy(), REF[key], rtol=1e-5, atol=3e-3)
    u8 = tf.image.resize(REF["uint8_image"], size, method=method, antialias=antialias)
    np.testing.assert_allclose(u8.numpy(), REF["u8_" + key], rtol=1e-5, atol=3e-3)
    compiled = tf.function(lambda x: tf.image.resize(x, size, method=method, antialias=antialias))(img[0])
    np.testing.assert_allclose(compiled.numpy(), got.numpy()[0], rtol=1e-6, atol=1e-4)


@pytest.mark.parametrize("method", ["area", "lanczos3", "bicubic", "gaussian"])
def test_resize_gradient_is_the_transposed_weights(method):
    x0 = np.random.default_rng(3).random((4, 5, 1))
    w = np.random.default_rng(4).random((3, 7, 1))
    x = tf.Variable(x0.astype(np.float32))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.image.resize(x, (3, 7), method=method) * w)
    g = tape.gradient(y, x).numpy()

    def f(v):
        return float(np.sum(tf.image.resize(v.astype(np.float32), (3, 7), method=method).numpy() * w))
    eps, fd = 1e-2, np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        d = np.zeros_like(x0)
        d[i] = eps
        fd[i] = (f(x0 + d) - f(x0 - d)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=2e-3, atol=2e-3)


def test_unknown_method_still_raises_tf_error():
    with pytest.raises(ValueError, match="not implemented"):
        tf.image.resize(np.zeros((2, 2, 1), np.float32), (3, 3), method="cubic-spline")
