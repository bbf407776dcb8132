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
