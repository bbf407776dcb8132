"""Gradients through a traced while_loop whose trip count depends on the data (ir/control_flow.py's
_while_vjp and the while_loop_grad primitive): against finite differences, against the eager
gradient (an eager while_loop is Python, recorded op by op), in every backend, and TF 2.21's values."""
import numpy as np
import pytest

import tapeflow as tf

F64 = np.float64
BACKENDS = ["python", "interpreter", "fused"]   # fused: the default pipeline, native tier from the first call


def _rnn_loss(W, b, h0, n):
    def body(i, h):
        return i + 1, tf.tanh(tf.linalg.matvec(W, h) + b)
    _, h = tf.while_loop(lambda i, h: i < n, body, (tf.constant(0), h0))
    return tf.reduce_sum(h * h)


def _grads(fn, args, compiled, backend="python"):
    def g(*a):
        with tf.GradientTape() as t:
            t.watch(list(a[:-1]))
            y = fn(*a)
        return [y] + t.gradient(y, list(a[:-1]))
    if compiled:
        g = tf.function(g, jit_compile=True) if backend == "fused" else tf.function(g, backend=backend)
    return [np.asarray(v) for v in g(*args)]


def _fd(fn, args, k, eps=1e-6):
    base = [np.array(a, F64) for a in args[:-1]]
    out = np.zeros_like(base[k])
    for idx in np.ndindex(base[k].shape):
        plus = [b.copy() for b in base]
        minus = [b.copy() for b in base]
        plus[k][idx] += eps
        minus[k][idx] -= eps
        out[idx] = (float(fn(*[tf.constant(x) for x in plus], args[-1])) -
                    float(fn(*[tf.constant(x) for x in minus], args[-1]))) / (2 * eps)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [0, 1, 4])
def test_rnn_loop_gradients_match_finite_differences_and_eager(backend, n):
    rng = np.random.default_rng(n)
    W, b, h0 = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3), rng.normal(size=3)
    args = [tf.constant(W), tf.constant(b), tf.constant(h0), tf.constant(n)]
    got = _grads(_rnn_loss, args, True, backend)
    want = _grads(_rnn_loss, args, False)
    for g, w in zip(got, want):
        if w.dtype == object:   # eagerly no step ran: W, b unconnected, None (TF 2.21 too); traced: zeros (TF too)
            assert n == 0 and not g.any()
            continue
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    for k in range(3):
        np.testing.assert_allclose(got[1 + k], _fd(_rnn_loss, args, k), rtol=1e-6, atol=1e-8)
    if n == 0:   # no step ran: W and b have no part in the loss, h0 passes straight through
        assert not got[1].any() and not got[2].any()
        np.testing.assert_allclose(got[3], 2 * h0)


def test_tfs_values_for_tensor_trip_counts():
    x = tf.Variable(2.0)

    @tf.function
    def f(n):
        with tf.GradientTape() as t:
            _, y = tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x), (tf.constant(0), tf.constant(1.0)))
        return y, t.gradient(y, x)

    @tf.function
    def g(n):   # AutoGraph's for over tf.range, a tensor trip count
        with tf.GradientTape() as t:
            y = tf.constant(1.0)
            for _ in tf.range(n):
                y = y * x + 1.0
        return y, t.gradient(y, x)
    # TF 2.21: (8.0, 12.0), (0.0 steps: 1.0, 0.0) and g(3): (15.0, 17.0)
    assert [float(v) for v in f(tf.constant(3))] == [8.0, 12.0]
    assert [float(v) for v in f(tf.constant(0))] == [1.0, 0.0]
    assert [float(v) for v in g(tf.constant(3))] == [15.0, 17.0]


def test_maximum_iterations_bounds_the_gradient_too():
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.while_loop(lambda a: a < 1e6, lambda a: a * 3.0, x, maximum_iterations=2)
        return t.gradient(y, x)
    assert float(tf.function(f)(tf.constant(1.0))) == 9.0   # TF 2.21: 9.0


def test_body_variable_writes_run_once():
    v = tf.Variable(0.0)
    x = tf.Variable(1.5)

    @tf.function
    def f(n):
        with tf.GradientTape() as t:
            def body(i, y):
                v.assign_add(1.0)
                return i + 1, y * x
            _, y = tf.while_loop(lambda i, y: i < n, body, (tf.constant(0), tf.constant(1.0)))
        return t.gradient(y, x)
    np.testing.assert_allclose(float(f(tf.constant(3))), 3 * 1.5 ** 2, rtol=1e-6)
    assert float(v) == 3.0     # the gradient's re-run does not write again


def test_random_bodies_and_second_order_refuse_clearly():
    def rand(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.while_loop(lambda a: a < 10.0, lambda a: a + tf.random.uniform(()) + 1.0, x)
        return t.gradient(y, x)
    with pytest.raises(NotImplementedError, match="draws random numbers"):
        tf.function(rand)(tf.constant(1.0))

    def second(x):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = tf.while_loop(lambda a: a < 10.0, lambda a: a * a + 1.0, x)
            g = t1.gradient(y, x)
        return t2.gradient(g, x)
    with pytest.raises(NotImplementedError, match="second-order gradients through a tapeflow.while_loop"):
        tf.function(second)(tf.constant(1.5))
