"""Small tf / tf.math functions added in wave 18, against TF 2.21's values (literals), eagerly and
inside tf.function where they trace."""
import numpy as np
import pytest

import tapeflow as tf

X = np.array([[1., 2., 0.], [-1., 0.5, 3.]], np.float32)


@pytest.mark.parametrize("compiled", [False, True])
def test_math_functions_match_tf(compiled):
    def run(f, *a):
        return (tf.function(f) if compiled else f)(*a).numpy()
    # TF 2.21
    np.testing.assert_allclose(run(tf.math.softmax, tf.constant(X)),
                               [[0.24472848, 0.66524088, 0.09003057], [0.01664452, 0.07459556, 0.90875989]], rtol=1e-6)
    np.testing.assert_allclose(run(tf.math.softsign, tf.constant(X)), [[0.5, 2 / 3, 0.0], [-0.5, 1 / 3, 0.75]],
                               rtol=1e-6)
    np.testing.assert_allclose(run(tf.math.reciprocal_no_nan, tf.constant(X)), [[1.0, 0.5, 0.0], [-1.0, 2.0, 1 / 3]],
                               rtol=1e-6)
    assert run(tf.math.invert_permutation, tf.constant([3, 4, 0, 2, 1])).tolist() == [2, 4, 3, 0, 1]
    assert bool(run(tf.math.is_non_decreasing, tf.constant([1, 2, 2, 3])))
    assert not bool(run(tf.math.is_strictly_increasing, tf.constant([1, 2, 2, 3])))
    assert bool(run(tf.math.is_strictly_increasing, tf.constant([[1, 2], [3, 4]])))
    assert float(run(tf.math.zero_fraction, tf.constant(X))) == pytest.approx(1 / 6)
    assert float(run(tf.nn.zero_fraction, tf.constant([0, 1, 0, 0]))) == 0.75
    np.testing.assert_allclose(run(lambda x: tf.realdiv(x, 2.), tf.constant(X)), X / 2)


@pytest.mark.parametrize("compiled", [False, True])
def test_array_functions_match_tf(compiled):
    def run(f, *a):
        return (tf.function(f) if compiled else f)(*a).numpy().tolist()
    # TF 2.21
    assert run(lambda x: tf.reverse_sequence(x, [2, 3], seq_axis=1, batch_axis=0),
               tf.constant([[1, 2, 3, 4], [5, 6, 7, 8]])) == [[2, 1, 3, 4], [7, 6, 5, 8]]
    assert run(lambda x: tf.reverse_sequence(x, [3, 1], seq_axis=0, batch_axis=1),
               tf.constant([[1, 2], [3, 4], [5, 6]])) == [[5, 2], [3, 4], [1, 6]]
    r = tf.reshape(tf.range(24), [2, 3, 4])
    assert run(lambda x: tf.strided_slice(x, [0, 1, 0], [2, 3, 4], [1, 1, 2]), r) == \
        [[[4, 6], [8, 10]], [[16, 18], [20, 22]]]
    assert run(lambda x: tf.strided_slice(x, [1, 0, 1], [2, 2, 3], [1, 1, 1], begin_mask=2, end_mask=4,
                                          shrink_axis_mask=1), r) == [[13, 14, 15], [17, 18, 19]]
    assert run(lambda x: tf.strided_slice(x, [0, 1], [0, 4], [1, 1], new_axis_mask=1), tf.range(5)) == [[1, 2, 3]]


def test_shapes_static_values_and_scopes_match_tf():
    assert tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3])).as_list() == [2, 3]
    assert tf.broadcast_dynamic_shape([2, 1], [3]).numpy().tolist() == [2, 3]
    with pytest.raises(ValueError, match="Incompatible shapes"):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))
    assert tf.get_static_value(tf.constant(X)).tolist() == X.tolist()
    assert tf.get_static_value(np.array([1, 2])).dtype == np.int64
    assert [t.numpy().tolist() for t in tf.identity_n([tf.constant(X), tf.constant(1)])] == [X.tolist(), 1]
    assert tf.inside_function() is False and tf.function(lambda: tf.constant(tf.inside_function()))().numpy()
    with tf.control_dependencies([tf.constant(X)]):
        assert tf.identity(tf.constant(X)).numpy().tolist() == X.tolist()
    with pytest.raises(RuntimeError, match="eager"):          # TF 2.21: RuntimeError eagerly
        tf.parallel_stack([tf.constant([1, 2]), tf.constant([3, 4])])
    assert tf.function(lambda: tf.parallel_stack([tf.constant([1, 2]), tf.constant([3, 4])]))().numpy().tolist() == \
        [[1, 2], [3, 4]]


def test_grad_pass_through_is_straight_through():
    x = tf.constant(X)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.grad_pass_through(tf.round)(x)
        loss = tf.reduce_sum(y * 3.0)
    assert y.numpy().tolist() == [[1.0, 2.0, 0.0], [-1.0, 0.0, 3.0]]         # TF 2.21
    assert t.gradient(loss, x).numpy().tolist() == [[3.0] * 3] * 2


@pytest.mark.parametrize("call,err", [
    (lambda: tf.math.reciprocal_no_nan(tf.constant([1, 0])), tf.errors.InvalidArgumentError),
    (lambda: tf.math.invert_permutation([0, 0, 1]), tf.errors.InvalidArgumentError),
    (lambda: tf.function(lambda x: tf.math.invert_permutation(x))(tf.constant([0, 0, 1])),
     tf.errors.InvalidArgumentError),
    (lambda: tf.realdiv(tf.constant([3]), tf.constant([2])), tf.errors.NotFoundError),
])
def test_bad_inputs_raise_tfs_classes(call, err):
    # TF 2.21's classes for each
    with pytest.raises(err):
        call()
