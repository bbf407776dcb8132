"""Gradients in a shape-generic trace (an unknown batch dim): reductions and einsum
broadcast their cotangent back to a shape only known at run time."""
import numpy as np
import pytest

import tapeflow as tf

MODES = ["interpreter", "python", None]  # None: the default tiers (fused once hot)


def _grads(loss_fn, x, w):
    wv = tf.Variable(w)
    with tf.GradientTape() as t:
        loss = loss_fn(tf.constant(x), wv)
    return t.gradient(loss, wv).numpy()


LOSSES = {
    "sum_then_mean": lambda x, w: tf.reduce_mean(tf.reduce_sum(tf.matmul(x, w), axis=1)),
    "mean_over_batch": lambda x, w: tf.reduce_sum(tf.reduce_mean(tf.tanh(tf.matmul(x, w)), axis=0)),
    "max_keepdims": lambda x, w: tf.reduce_sum(tf.reduce_max(tf.matmul(x, w), axis=1, keepdims=True)),
    "einsum_drops_axis": lambda x, w: tf.reduce_sum(tf.einsum("bi,ij->b", x, w) ** 2),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_unknown_batch_gradient_equals_eager(name, mode):
    rs = np.random.RandomState(0)
    w = rs.randn(4, 3).astype(np.float32)
    wv = tf.Variable(w)
    loss_fn = LOSSES[name]

    @tf.function(input_signature=[tf.TensorSpec((None, 4), tf.float32)], backend=mode)
    def grad(x):
        with tf.GradientTape() as t:
            loss = loss_fn(x, wv)
        return t.gradient(loss, wv)

    for batch in (5, 1, 9):  # one trace serves every batch size
        x = rs.randn(batch, 4).astype(np.float32)
        np.testing.assert_allclose(grad(x).numpy(), _grads(loss_fn, x, w), rtol=1e-5, atol=1e-6)
    assert grad.experimental_get_tracing_count() == 1


def test_nan_in_the_input_does_not_leak_into_the_broadcast():
    # the unknown dim is read off x with x == x; both select branches are the cotangent
    @tf.function(input_signature=[tf.TensorSpec((None, 2), tf.float32)])
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            s = tf.reduce_sum(x * 2.0)
        return t.gradient(s, x)

    x = np.array([[np.nan, 1.0], [2.0, np.inf]], np.float32)
    np.testing.assert_array_equal(g(x).numpy(), np.full((2, 2), 2.0, np.float32))
