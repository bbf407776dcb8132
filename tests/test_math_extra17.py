"""tf.math.rint, scalar_mul and polyval (missing in ports, found by the wave-17 sweep): TF 2.21's values,
both modes, polyval's gradient against finite differences."""
import numpy as np
import pytest

import tapeflow as tf
from conftest import check_grads


def test_rint_rounds_halves_to_even_and_refuses_ints():
    for fn in (tf.math.rint, tf.function(tf.math.rint)):
        got = fn(tf.constant([0.5, 1.5, 2.5, -0.5, -1.7]))
        assert got.numpy().tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]   # TF 2.21
    with pytest.raises(tf.errors.InvalidArgumentError, match="rint: expects a float tensor"):
        tf.math.rint(tf.constant([1, 2]))


def test_scalar_mul_as_tf():
    assert tf.math.scalar_mul(2.0, tf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    assert tf.math.scalar_mul(tf.constant(3.0), tf.constant([1.0, 2.0])).numpy().tolist() == [3.0, 6.0]
    got = tf.scalar_mul(2, tf.constant([1, 2]))
    assert got.dtype == tf.int32 and got.numpy().tolist() == [2, 4]   # TF 2.21: int32 [2, 4]
    with pytest.raises(ValueError, match=r"The input scalar must be a 0-D value. Received shape \(2,\)"):
        tf.math.scalar_mul(tf.constant([3.0, 1.0]), tf.constant([1.0, 2.0]))


def test_polyval_as_tf_and_its_gradient():
    x = tf.constant([0.0, 1.0, 2.0])
    for fn in (tf.math.polyval, tf.function(tf.math.polyval)):
        assert fn([1.0, 2.0, 3.0], x).numpy().tolist() == [3.0, 6.0, 11.0]   # TF 2.21
    assert tf.math.polyval([], tf.constant([2.0])).numpy().tolist() == [0.0]
    coeffs = [tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])]
    assert tf.math.polyval(coeffs, tf.constant([2.0, 3.0])).numpy().tolist() == [5.0, 10.0]
    check_grads(lambda c0, c1, c2, x: tf.math.polyval([c0, c1, c2], x),
                [np.array(0.7), np.array(-1.2), np.array(0.4), np.array([0.5, -1.5, 2.0])])


def test_atan2_as_tf_in_every_quadrant():
    y = tf.constant([1.0, -1.0, 0.0, 0.0, 1.0])
    x = tf.constant([1.0, -1.0, -1.0, 0.0, 0.0])
    want = [0.7853982, -2.3561945, 3.1415927, 0.0, 1.5707964]   # TF 2.21 (float32; within 1 ulp)
    for fn in (tf.math.atan2, tf.function(tf.math.atan2)):
        np.testing.assert_allclose(fn(y, x).numpy(), want, rtol=2e-7)
    yv, xv = tf.Variable(y), tf.Variable(x)
    with tf.GradientTape() as t:
        z = tf.reduce_sum(tf.math.atan2(yv, xv))
    gy, gx = t.gradient(z, [yv, xv])
    # TF 2.21's Atan2Grad, NaN at (0, 0) as in TF
    np.testing.assert_array_equal(gy.numpy(), [0.5, -0.5, -1.0, np.nan, 0.0])
    np.testing.assert_array_equal(gx.numpy(), [-0.5, 0.5, -0.0, np.nan, -1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="atan2: expects floating tensors, got int32"):
        tf.math.atan2(tf.constant([1]), tf.constant([1]))
