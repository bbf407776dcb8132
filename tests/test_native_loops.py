"""Loops whose trip count is a tensor run in the native tier: ``fori_loop`` with a
tensor bound, ``while_loop`` on a tensor condition and AutoGraph's
``for i in tf.range(n)`` become one ``while_loop`` equation, which the numba
backend lowers to a native ``while`` (issue 14: as fast as a Python-int bound).

Every case runs eagerly, in the reference interpreter, in the python backend and
under 'auto', and must agree; under 'auto' the chosen backend must be numba."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

pytest.importorskip("numba")

F32 = np.float32
MODES = ("eager", "interpreter", "python", "auto")


def run(make, *args, mode):
    """``make()`` -> (python function, variables): fresh variables per mode, so
    assigns inside a loop start from the same state. Returns (outputs, variable
    values, chosen backend)."""
    fn, variables = make()
    if mode == "eager":
        tf.config.run_functions_eagerly(True)
        try:
            out = tf.function(fn)(*args)
        finally:
            tf.config.run_functions_eagerly(False)
        backend = "eager"
    else:
        f = tf.function(fn, backend=None if mode == "auto" else mode)
        out = f(*args)
        out = f(*args) if not variables else out  # the second call runs the compiled code again
        backend = f.get_concrete_function(*args).backend
    flat = [np.asarray(o) for o in tf.nest.flatten(out)]
    return flat, [v.numpy() for v in variables], backend


def check_all_modes(make, *args, rtol=1e-6):
    ref_out, ref_vars, _ = run(make, *args, mode="interpreter")
    for mode in MODES:
        out, vs, backend = run(make, *args, mode=mode)
        if mode == "auto":
            assert backend == "numba", f"'auto' chose {backend} for a loop the native tier should take"
        for got, want in zip(out + vs, ref_out + ref_vars):
            assert got.dtype == want.dtype, (mode, got.dtype, want.dtype)
            np.testing.assert_allclose(got, want, rtol=rtol, err_msg=mode)
    return ref_out, ref_vars


# -- the three loop forms with a tensor trip count ---------------------------------------------

def _fori(n, x):
    return tf.fori_loop(0, n, lambda i, c: c * 0.5 + tf.cast(i, tf.float32) * x, tf.zeros_like(x))


def _while(n, x):
    return tf.while_loop(lambda i, c: i < n, lambda i, c: (i + 1, c * 0.5 + tf.cast(i, tf.float32) * x),
                         (tf.constant(0), tf.zeros_like(x)))[1]


def _autograph(n, x):
    c = tf.zeros_like(x)
    for i in tf.range(n):
        c = c * 0.5 + tf.cast(i, tf.float32) * x
    return c


def _np_loop(n, x):
    c = np.zeros_like(x)
    for i in range(n):
        c = c * F32(0.5) + F32(i) * x
    return c


@pytest.mark.parametrize("form", [_fori, _while, _autograph], ids=["fori_loop", "while_loop", "autograph_range"])
@pytest.mark.parametrize("n", [7, 1, 0, -3])
@pytest.mark.parametrize("shape", [(), (5,)], ids=["scalar", "vector"])
def test_tensor_trip_count_runs_natively_and_agrees(form, n, shape):
    x = np.linspace(-1, 2, int(np.prod(shape))).astype(F32).reshape(shape)
    (out,), _ = check_all_modes(lambda: (form, []), tf.constant(n), tf.constant(x))
    np.testing.assert_allclose(out, _np_loop(n, x), rtol=1e-6)


def test_int64_bounds_count_in_int64():
    def f(n):
        s = tf.constant(0, tf.int64)
        for i in tf.range(n):
            s += i * i
        return s, tf.fori_loop(0, n, lambda i, c: c + i, tf.constant(0, tf.int64))

    (s, t), _ = check_all_modes(lambda: (f, []), tf.constant(10, tf.int64))
    assert int(s) == 285 and int(t) == 45 and s.dtype == np.int64


def test_data_dependent_condition_and_maximum_iterations():
    def f(x):
        # halve until the sum is small: the trip count depends on the values
        a = tf.while_loop(lambda v: tf.reduce_sum(tf.abs(v)) > 1.0, lambda v: v * 0.5, x)
        b = tf.while_loop(lambda v: tf.reduce_sum(v) < 1e9, lambda v: v * 2.0, x, maximum_iterations=4)
        c = tf.while_loop(lambda v: tf.reduce_sum(v) < 1e9, lambda v: v * 2.0, x, maximum_iterations=0)
        return a, b, c

    x = np.array([3.0, -4.0, 5.0], F32)
    (a, b, c), _ = check_all_modes(lambda: (f, []), tf.constant(x))
    np.testing.assert_allclose(a, x / 16)
    np.testing.assert_allclose(b, x * 16)
    np.testing.assert_allclose(c, x)


def test_carries_returned_in_another_order_are_read_before_rebinding():
    # a swap of the body's own inputs: a native loop that rebinds one carry before
    # reading the next returns (b, b) (AutoGraph's loop carries the previous index so)
    def f(n, a, b):
        return tf.while_loop(lambda i, p, q: i < n, lambda i, p, q: (i + 1, q, p), (tf.constant(0), a, b))

    def g(a, b):  # the same in a scan (a fori_loop with Python-int bounds), and Fibonacci
        return (tf.fori_loop(0, 5, lambda i, pq: (pq[1], pq[0]), (a, b)),
                tf.fori_loop(0, 5, lambda i, pq: (pq[1], pq[0] + pq[1]), (a, b)))

    (_, p, q), _ = check_all_modes(lambda: (f, []), tf.constant(5), tf.constant(0.0), tf.constant(1.0))
    assert (float(p), float(q)) == (1.0, 0.0)
    (p, q, r, s), _ = check_all_modes(lambda: (g, []), tf.constant(0.0), tf.constant(1.0))
    assert [float(v) for v in (p, q, r, s)] == [1.0, 0.0, 5.0, 8.0]


def test_variable_assigns_inside_the_loop_and_its_condition():
    def make():
        v = tf.Variable(np.zeros(3, F32))
        count = tf.Variable(0)

        def f(n, x):
            for i in tf.range(n):
                v.assign(v * 0.9 + x * tf.cast(i, tf.float32))
                count.assign_add(1)
            # the condition reads a variable the body writes: read on every test
            tf.while_loop(lambda k: count < 2 * n, lambda k: (count.assign_add(1), k + 1)[1], tf.constant(0))
            return v.read_value()
        return f, [v, count]

    (out,), (v, count) = check_all_modes(make, tf.constant(6), tf.constant(np.array([1, -2, 3], F32)))
    assert int(count) == 12
    np.testing.assert_allclose(out, v)


@pytest.mark.parametrize("n", [4, 0, -1])
def test_nested_loops_with_tensor_bounds(n):
    def f(n, x):
        acc = tf.zeros_like(x)
        for i in tf.range(n):
            # the inner trip count depends on the outer index
            acc = tf.fori_loop(0, i + 1, lambda j, a: a + x * tf.cast(j, tf.float32), acc)
        return acc

    (out,), _ = check_all_modes(lambda: (f, []), tf.constant(n), tf.constant(np.array([1.0, 2.0], F32)))
    want = sum(j for i in range(max(n, 0)) for j in range(i + 1))
    np.testing.assert_allclose(out, np.array([1.0, 2.0], F32) * want)


def test_break_on_a_tensor_condition():
    def f(n, x):
        s = tf.constant(0.0)
        for i in tf.range(n):
            if s > x:
                break
            s += tf.cast(i, tf.float32)
        return s

    (out,), _ = check_all_modes(lambda: (f, []), tf.constant(100), tf.constant(10.0))
    assert float(out) == 15.0  # 0+1+2+3+4+5 is the first sum above 10


def test_linear_regression_whole_loop_matches_the_python_int_bound():
    # the issue-14 workload: gradient descent written with a GradientTape inside the loop
    xs = np.arange(200, dtype=F32) * 0.1
    ys = (xs + 20 * np.sin(xs / 10) + 15).astype(F32)
    x, y = tf.constant(xs), tf.constant(ys)

    def body(i, wc):
        w, c = wc
        with tf.GradientTape() as tape:
            tape.watch(w)
            tape.watch(c)
            loss = tf.reduce_mean(tf.square(w * x + c - y))
        gw, gc = tape.gradient(loss, [w, c])
        return w - 1e-4 * gw, c - 1e-4 * gc

    static = tf.function(lambda: tf.fori_loop(0, 300, body, (tf.constant(0.0), tf.constant(0.0))))
    want = [float(v) for v in static()]
    assert static.get_concrete_function().backend == "numba"
    (w, c), _ = check_all_modes(lambda: (lambda n: tf.fori_loop(0, n, body, (tf.constant(0.0), tf.constant(0.0))),
                                         []), tf.constant(300), rtol=1e-5)
    np.testing.assert_allclose([float(w), float(c)], want, rtol=1e-6)
