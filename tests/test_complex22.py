"""Complex gaps closed in wave 22: reduce_prod, pow, tan, sigmoid take complex64/128 with TF 2.21's values
and gradients (TF's convention: a real loss's gradient is dL/dx + i dL/dy), eager == compiled."""
import numpy as np
import pytest

import tapeflow as tf

Z23 = np.array([[1 + 2j, 3 - 1j, 0.5j], [2, 1j, 1 - 1j]], np.complex128)


def _grad(f, z, wr=1.3, wi=0.7):
    z = tf.constant(z)
    with tf.GradientTape() as t:
        t.watch(z)
        y = f(z)
        loss = tf.reduce_sum(tf.math.real(y) * wr + tf.math.imag(y) * wi)
    return y.numpy(), t.gradient(loss, z).numpy()


def test_reduce_prod_complex_is_tfs():
    y, g = _grad(lambda z: tf.reduce_prod(z, axis=1), Z23)
    # TF 2.21: the values and the gradient of sum(1.3 re + 0.7 im) of the row products
    np.testing.assert_allclose(y, [-2.5 + 2.5j, 2 + 2j], rtol=1e-14)
    np.testing.assert_allclose(g, [[1.7 - 1.6j, -0.95 - 1.35j, 10 - 3j], [2 - 0.6j, 1.2 + 4j, 1.4 - 2.6j]],
                               rtol=1e-14)
    with_zero = np.array([1 + 1j, 0, 2j])
    _, g0 = _grad(lambda z: tf.reduce_prod(z), with_zero)   # (exact with a zero factor: the others' product)
    np.testing.assert_allclose(g0, [0, np.conj((1 + 1j) * 2j) * (1.3 + 0.7j), 0], atol=1e-14)


def test_complex_of_two_float64_scalars_keeps_float64():
    # (found by LinearOperatorCirculant.trace: two 0-d float64 values were rounded through float32)
    a, b = tf.constant(np.float64(0.1)), tf.constant(np.float64(0.3))
    z = tf.complex(a, b)
    assert z.dtype is tf.complex128 and z.numpy() == 0.1 + 0.3j
    assert tf.function(lambda a, b: tf.complex(a, b))(a, b).numpy() == 0.1 + 0.3j
