"""tf.numpy_function / tf.py_function, eagerly and inside tapeflow.function."""
import numpy as np
import pytest

import tapeflow as tf


def test_numpy_function_eager_gets_arrays():
    seen = []

    def f(x):
        seen.append(type(x))
        return np.sort(x)

    y = tf.numpy_function(f, [tf.constant([3., 1., 2.])], tf.float32)
    np.testing.assert_array_equal(y.numpy(), [1., 2., 3.])
    assert seen == [np.ndarray]


def test_py_function_eager_is_differentiable():
    x = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = tf.py_function(lambda v: v * v, [x], tf.float32)
    assert float(t.gradient(y, x)) == 4.0


def test_inside_function_called_on_every_run_with_declared_shapes():
    calls = []

    def noisy_sort(x):
        calls.append(1)
        return np.sort(x), np.float32(x.sum())

    @tf.function
    def g(x):
        s, total = tf.numpy_function(noisy_sort, [x], [tf.TensorSpec([None], tf.float32),
                                                        tf.TensorSpec([], tf.float32)])
        return s * 2.0, total

    for _ in range(3):
        s, total = g(tf.constant([3., 1., 2.]))
    np.testing.assert_array_equal(s.numpy(), [2., 4., 6.])
    assert float(total) == 6.0 and len(calls) == 3


def test_inside_function_a_bare_dtype_tout_is_an_unknown_shape():
    # as TF: the output can be returned (any shape); an op on it needs a TensorSpec Tout
    f = tf.function(lambda x: tf.numpy_function(np.sort, [x], tf.float32))
    np.testing.assert_array_equal(f(tf.constant([2., 1.])).numpy(), [1., 2.])
    g = tf.function(lambda x: tf.numpy_function(np.sort, [x], tf.float32) * 2.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="unknown shape.*give Tout as a TensorSpec"):
        g(tf.constant([1.]))


def test_declared_shape_is_checked_at_run_time():
    f = tf.function(lambda x: tf.numpy_function(lambda a: a[:1], [x], tf.TensorSpec([2], tf.float32)))
    with pytest.raises(ValueError, match="output 0 has shape \\(1,\\), Tout declares \\(2,\\)"):
        f(tf.constant([1., 2.]))
