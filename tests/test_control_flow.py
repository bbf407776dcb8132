"""cond / while_loop / fori_loop / scan: eager vs compiled (python backend) vs
the reference interpreter; gradients through cond and fixed-trip loops against
finite differences and eager tapes; second order through cond; loop bodies
with a GradientTape and Variable writes (the linear-regression training loop
in one compiled call); and the errors control flow must raise."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

from conftest import assert_close, np_of

F32, F64 = np.float32, np.float64
BACKENDS = ["python", "interpreter"]


def run_all(fn, *args, rtol=1e-6, atol=1e-6):
    """fn eagerly, compiled with the python backend and with the interpreter: all agree."""
    want = fn(*args)
    for backend in BACKENDS:
        got = tf.function(fn, backend=backend)(*args)
        gl, wl = tf.nest.flatten(got), tf.nest.flatten(want)
        assert len(gl) == len(wl)
        for g, w in zip(gl, wl):
            assert_close(g, np_of(w), rtol=rtol, atol=atol, msg=backend)
    return want


# -- forward: eager == compiled == interpreter --------------------------------------------------------------

def _mixed(x):
    y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: tf.sin(x))
    z = tf.fori_loop(0, 5, lambda i, c: c * 0.9 + tf.cast(i, x.dtype), y)
    w, n = tf.while_loop(lambda a, k: k < 3, lambda a, k: (a * 1.5, k + 1), (z, tf.constant(0)))
    s, ys = tf.lax.scan(lambda c, xx: (c + xx, c * xx), tf.zeros([], x.dtype), x)
    return w, n, s, ys


@pytest.mark.parametrize("xv", [[0.5, -1.0, 2.0], [-0.5, -1.0, -2.0]], ids=["true-branch", "false-branch"])
def test_mixed_control_flow_agrees_everywhere(xv):
    w, n, s, ys = run_all(_mixed, tf.constant(np.array(xv, F32)))
    assert int(n) == 3
    assert_close(s, np.float32(sum(xv)))


def test_cond_with_nested_structures_and_python_scalars():
    def f(x, flag):
        out = tf.cond(flag, lambda: {"a": x + 1.0, "b": (x, 2.0)}, lambda: {"a": x * 0.0, "b": (-x, 3)})
        return out["a"], out["b"][0], out["b"][1]

    for flag in (True, False):
        x = tf.constant(np.array([1.0, 2.0], F32))
        for backend in BACKENDS:
            a, b, c = tf.function(f, backend=backend)(x, tf.constant(flag))
            want = f(x, flag)
            assert_close(a, np_of(want[0]))
            assert_close(b, np_of(want[1]))
            assert c.dtype == tf.float32 and float(c) == (2.0 if flag else 3.0)  # a Python 3 becomes f32


def test_cond_branches_with_different_dims_give_an_unknown_dim():
    def f(x, p):
        return tf.cond(p, lambda: x, lambda: tf.concat([x, x], 0))

    fn = tf.function(f, backend="python")
    x = tf.constant(np.array([1.0, 2.0], F32))
    assert_close(fn(x, tf.constant(True)), np.array([1.0, 2.0], F32))
    assert_close(fn(x, tf.constant(False)), np.array([1.0, 2.0, 1.0, 2.0], F32))
    assert "f32[?]" in str(fn.get_concrete_function(x, tf.constant(True)).graph)


def test_cond_with_a_python_bool_is_plain_python_even_when_traced():
    calls = []

    def f(x):
        return tf.cond(True, lambda: calls.append("t") or x + 1.0, lambda: calls.append("f") or x - 1.0)

    assert float(tf.function(f)(tf.constant(1.0))) == 2.0
    assert calls == ["t"]


def test_while_loop_and_fori_loop_with_tensor_bounds():
    def collatz_steps(n):
        def body(k, steps):
            k = tf.where(tf.equal(k % 2, 0), k // 2, 3 * k + 1)
            return k, steps + 1
        return tf.while_loop(lambda k, s: k > 1, body, (n, tf.constant(0)))[1]

    for n, steps in [(1, 0), (6, 8), (27, 111)]:
        assert int(run_all(collatz_steps, tf.constant(n))) == steps

    def tri(n):  # tensor bounds: fori_loop becomes a while_loop
        return tf.fori_loop(tf.constant(0), n, lambda i, acc: acc + i, tf.constant(0))

    assert int(run_all(tri, tf.constant(10))) == 45
    g = tf.function(tri).get_concrete_function(tf.constant(10)).graph
    assert "while_loop" in str(g)


def test_while_loop_maximum_iterations():
    f = lambda x: tf.while_loop(lambda a: a < 1e9, lambda a: a * 2.0, x, maximum_iterations=5)
    assert float(run_all(f, tf.constant(1.0))) == 32.0


def test_scan_reverse_and_structured_xs():
    def f(a, b):
        def step(c, xs):
            return c * 0.5 + xs["a"] * xs["b"], (c, xs["a"] - c)
        return tf.lax.scan(step, tf.zeros([2]), {"a": a, "b": b}, reverse=True)

    rng = np.random.default_rng(0)
    a = tf.constant(rng.normal(size=(4, 2)).astype(F32))
    b = tf.constant(rng.normal(size=(4, 2)).astype(F32))
    final, (cs, ds) = run_all(f, a, b)
    # by hand: reverse order
    c = np.zeros(2, F32)
    an, bn = a.numpy(), b.numpy()
    want_cs = np.zeros((4, 2), F32)
    for k in range(3, -1, -1):
        want_cs[k] = c
        c = c * F32(0.5) + an[k] * bn[k]
    assert_close(final, c, rtol=1e-6)
    assert_close(cs, want_cs, rtol=1e-6)


def test_fori_loop_over_zero_iterations_returns_its_input():
    f = lambda x: tf.fori_loop(3, 3, lambda i, c: c * 100.0, x * 2.0)
    assert_close(run_all(f, tf.constant(np.array([1.0, 2.0], F32))), np.array([2.0, 4.0], F32))


# -- variables in control flow -------------------------------------------------------------------------------

def test_cond_inside_a_loop_writes_a_variable_that_later_iterations_read():
    v = tf.Variable(0.0)

    def f(x):
        def body(i, c):
            def bump():
                v.assign_add(1.0)
                return tf.constant(0.0)
            tf.cond(c > -1.0, bump, lambda: tf.constant(0.0))
            return c + v
        return tf.fori_loop(0, 3, body, x)

    for mode in ["eager"] + BACKENDS:
        v.assign(0.0)
        fn = f if mode == "eager" else tf.function(f, backend=mode)
        assert float(fn(tf.constant(0.0))) == 6.0, mode   # 1 + 2 + 3
        assert float(v.numpy()) == 3.0, mode


def test_while_condition_reads_a_variable_the_body_writes():
    v = tf.Variable(0.0)

    def f():
        def body(i):
            v.assign_add(1.0)
            return i + 1
        return tf.while_loop(lambda i: v < 5.0, body, [tf.constant(0)], maximum_iterations=50)[0]

    for mode in ["eager"] + BACKENDS:
        v.assign(0.0)
        fn = f if mode == "eager" else tf.function(f, backend=mode)
        assert int(fn()) == 5, mode
        assert float(v.numpy()) == 5.0, mode


def test_cond_branches_write_variables_only_when_taken():
    v = tf.Variable(0.0)

    @tf.function(backend="python")
    def f(x):
        def t():
            v.assign_add(x)
            return v.read_value()
        return tf.cond(x > 0, t, lambda: v * 1.0)

    assert float(f(tf.constant(2.0))) == 2.0
    assert float(f(tf.constant(-5.0))) == 2.0
    assert float(f(tf.constant(3.0))) == 5.0
    assert float(v.numpy()) == 5.0


# -- gradients -------------------------------------------------------------------------------------------------

def _loss(x, w):
    y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x * w), lambda: x * w * w)
    c = tf.fori_loop(0, 3, lambda i, c: c * w + tf.sin(c) * tf.cast(i, x.dtype), y)
    s, ys = tf.lax.scan(lambda acc, xx: (acc * w + xx, acc * xx), tf.zeros([], x.dtype), c)
    return s + tf.reduce_sum(ys * x)


def _grads(x, w):
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        loss = _loss(x, w)
    gx, gw = tape.gradient(loss, [x, w])
    return loss, gx, gw


def _fd(f, args, i, eps=1e-6):
    """Central finite differences of scalar f w.r.t. args[i] (float64 NumPy)."""
    base = [np.array(a, F64) for a in args]
    g = np.zeros_like(base[i])
    for idx in np.ndindex(*base[i].shape):
        hi = [a.copy() for a in base]
        lo = [a.copy() for a in base]
        hi[i][idx] += eps
        lo[i][idx] -= eps
        g[idx] = (float(f(*map(tf.constant, hi))) - float(f(*map(tf.constant, lo)))) / (2 * eps)
    return g


@pytest.mark.parametrize("xv", [[0.5, -0.2, 0.3], [-0.5, -0.2, 0.3]], ids=["true-branch", "false-branch"])
def test_gradients_through_cond_fori_loop_and_scan(xv):
    x, w = tf.constant(np.array(xv)), tf.constant(0.7, tf.float64)
    eager = _grads(x, w)
    fd_x = _fd(_loss, [x.numpy(), w.numpy()], 0)
    fd_w = _fd(_loss, [x.numpy(), w.numpy()], 1)
    assert_close(eager[1], fd_x, rtol=1e-6, atol=1e-8)
    assert_close(eager[2], fd_w, rtol=1e-6, atol=1e-8)
    for backend in BACKENDS:
        got = tf.function(_grads, backend=backend)(x, w)
        for g, e in zip(got, eager):
            assert_close(g, np_of(e), rtol=1e-10, atol=1e-12, msg=backend)


@pytest.mark.parametrize("xv,grads", [(1.5, (3 * 1.5 ** 2, 6 * 1.5)), (-1.5, (np.cos(-1.5), -np.sin(-1.5)))],
                         ids=["cube", "sin"])
def test_second_order_through_cond(xv, grads):
    def h(x):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = tf.cond(x > 0, lambda: x ** 3, lambda: tf.sin(x))
            g = t1.gradient(y, x)
        return g, t2.gradient(g, x)

    x = tf.constant(xv, tf.float64)
    for backend in BACKENDS:
        g1, g2 = tf.function(h, backend=backend)(x)
        np.testing.assert_allclose([float(g1), float(g2)], grads, rtol=1e-12)


def test_gradient_of_a_cond_that_reads_a_variable_in_one_branch():
    v = tf.Variable(np.float64(2.0))

    def f(x):
        with tf.GradientTape() as tape:
            y = tf.cond(x > 0, lambda: v * v * x, lambda: x)
        return tape.gradient(y, v)

    for backend in BACKENDS:
        fn = tf.function(f, backend=backend)
        assert float(fn(tf.constant(3.0, tf.float64))) == 12.0
        assert float(tf.convert_to_tensor(fn(tf.constant(-3.0, tf.float64)))) == 0.0


def test_while_loop_gradient_through_a_data_dependent_trip_count():
    # (tests/test_while_grad.py has the rest; TF 2.21 gives 16.0: 1 -> 2 -> 4 -> 8 -> 16)
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.while_loop(lambda a: a < 10.0, lambda a: a * 2.0, x)
        return tape.gradient(y, x)

    assert float(tf.function(f)(tf.constant(1.0))) == 16.0


# -- training loops in one compiled call --------------------------------------------------------------------

def _linreg_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64,)).astype(F32)
    y = (3.0 * x + 2.0 + 0.1 * rng.normal(size=64)).astype(F32)
    return x, y


def _linreg_fn(steps, lr, backend):
    W, b = tf.Variable(0.0), tf.Variable(0.0)
    count = tf.Variable(0, dtype=tf.int32)

    @tf.function(backend=backend)
    def train(x, y):
        def body(i, total):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(W * x + b - y))
            gw, gb = tape.gradient(loss, [W, b])
            W.assign_sub(lr * gw)
            b.assign_sub(lr * gb)
            count.assign_add(1)
            return total + loss
        return tf.fori_loop(0, steps, body, tf.constant(0.0))

    return train, W, b, count


def test_linear_regression_100k_steps_in_one_numba_call():
    x, y = _linreg_data()
    train, W, b, count = _linreg_fn(100_000, 0.01, "numba")
    total = train(tf.constant(x), tf.constant(y))
    assert train.get_concrete_function(tf.constant(x), tf.constant(y)).backend == "numba"
    # hand-written reference (float64 closed-form gradients of the mean squared error)
    xd, yd = x.astype(F64), y.astype(F64)
    n, sx, sxx, sxy, sy = len(xd), xd.sum(), (xd * xd).sum(), (xd * yd).sum(), yd.sum()
    syy = (yd * yd).sum()
    w_ref = b_ref = total_ref = 0.0
    for _ in range(100_000):
        total_ref += (w_ref * w_ref * sxx + 2 * w_ref * b_ref * sx + n * b_ref * b_ref
                      - 2 * w_ref * sxy - 2 * b_ref * sy + syy) / n
        gw = 2 * (w_ref * sxx + b_ref * sx - sxy) / n
        gb = 2 * (w_ref * sx + b_ref * n - sy) / n
        w_ref -= 0.01 * gw
        b_ref -= 0.01 * gb
    assert abs(float(W.numpy()) - w_ref) < 1e-3 and abs(float(b.numpy()) - b_ref) < 1e-3
    assert int(count.numpy()) == 100_000
    np.testing.assert_allclose(float(total), total_ref, rtol=1e-2)  # float32 running sum of 1e5 losses
    # a second call continues from the current values (variables by reference)
    train(tf.constant(x), tf.constant(y))
    assert int(count.numpy()) == 200_000 and train.trace_count == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_linear_regression_loop_matches_a_float32_numpy_loop_step_by_step(backend):
    x, y = _linreg_data()
    steps, lr = 150, 0.005  # not converged after 150 steps: every step counts
    train, W, b, count = _linreg_fn(steps, lr, backend)
    total = train(tf.constant(x), tf.constant(y))
    w_ref, b_ref, tot = F32(0), F32(0), F32(0)
    for _ in range(steps):
        r = w_ref * x + b_ref - y
        tot = F32(tot + np.mean(r * r))
        gw = np.mean(F32(2) * r * x)
        gb = np.mean(F32(2) * r)
        w_ref = F32(w_ref - F32(lr) * gw)
        b_ref = F32(b_ref - F32(lr) * gb)
    np.testing.assert_allclose([float(W.numpy()), float(b.numpy())], [w_ref, b_ref], rtol=1e-5)
    np.testing.assert_allclose(float(total), tot, rtol=1e-5)
    assert int(count.numpy()) == steps
    assert abs(w_ref - 3.0) > 0.1


def test_scan_body_with_tape_computes_per_step_gradients():
    def f(xs, w):
        def step(c, x):
            with tf.GradientTape() as tape:
                tape.watch(w)
                y = tf.sin(w * x) + c
            return c + 1.0, tape.gradient(y, w)
        return tf.lax.scan(step, tf.constant(0.0, tf.float64), xs)[1]

    xs = tf.constant(np.array([0.1, 0.5, 1.0]))
    w = tf.constant(0.3, tf.float64)
    out = run_all(f, xs, w, rtol=1e-12, atol=1e-14)
    assert_close(out, np.cos(0.3 * xs.numpy()) * xs.numpy(), rtol=1e-12)


# -- errors --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("body,exc,match", [
    (lambda c: tf.concat([c, c], 0), ValueError, r"changes shape \(1,\) -> \(2,\)"),
    (lambda c: tf.cast(c, tf.float64), TypeError, "changes dtype float32 -> float64"),
    (lambda c: tf.reduce_sum(c), ValueError, r"changes shape \(1,\) -> \(\)"),
], ids=["shape", "dtype", "rank"])
@pytest.mark.parametrize("loop", ["fori_loop", "while_loop", "scan"])
def test_loop_carry_changing_shape_or_dtype_raises(loop, body, exc, match):
    def f(x):
        if loop == "fori_loop":
            return tf.fori_loop(0, 3, lambda i, c: body(c), x)
        if loop == "while_loop":
            return tf.while_loop(lambda c: tf.reduce_sum(c) < 3.0, body, x)
        return tf.lax.scan(lambda c, _: (body(c), c), x, length=2)

    with pytest.raises(exc, match=match):
        tf.function(f)(tf.constant([1.0]))


def test_cond_branch_mismatches_raise():
    x = tf.constant(1.0)
    with pytest.raises(TypeError, match="dtype float32 in true_fn and float64 in false_fn"):
        tf.function(lambda x: tf.cond(x > 0, lambda: x, lambda: tf.cast(x, tf.float64)))(x)
    with pytest.raises(ValueError, match="same structure"):
        tf.function(lambda x: tf.cond(x > 0, lambda: (x, x), lambda: x))(x)
    with pytest.raises(TypeError, match="scalar bool"):
        tf.function(lambda x: tf.cond(x, lambda: x, lambda: x))(x)
    with pytest.raises(TypeError, match="give both"):
        tf.cond(True, lambda: 1)


def test_while_cond_must_return_a_scalar_bool():
    with pytest.raises(TypeError, match="scalar bool"):
        tf.function(lambda x: tf.while_loop(lambda a: a, lambda a: a, x))(tf.constant([1.0, 2.0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_scan_stacking_outputs_of_unknown_dims(backend):
    def f(xs):
        return tf.lax.scan(lambda c, x: (c + tf.reduce_sum(x), x * c), tf.constant(1.0), xs)

    for steps, widths in [(3, (2, 5)), (0, (4,))]:  # the length must be known, the other dims need not
        g = tf.function(f, input_signature=[tf.TensorSpec([steps, None])], backend=backend)
        for w in widths:
            xs = tf.constant(np.ones((steps, w), F32))
            c, ys = g(xs)
            want_c, want_ys = f(xs) if steps else (tf.constant(1.0), np.zeros((0, 0), F32))
            assert_close(c, np_of(want_c))
            assert_close(ys, np_of(want_ys))
        assert g.trace_count == 1
    # a length known only when it runs (wave 25): the trip count is xs' first dimension then
    g = tf.function(f, input_signature=[tf.TensorSpec([None, 2])], backend=backend)
    for steps in (3, 1):
        xs = tf.constant(np.arange(steps * 2, dtype=F32).reshape(steps, 2))
        c, ys = g(xs)
        want_c, want_ys = f(xs)
        assert_close(c, np_of(want_c))
        assert_close(ys, np_of(want_ys))
    assert g.trace_count == 1


def test_print_inside_loops_and_branches_runs_every_iteration(capsys):
    def f(x):
        def body(i, c):
            tf.print("step", i, c)
            return c * 2.0

        def big():
            tf.print("big", y)
            return y
        y = tf.fori_loop(0, 3, body, x)
        return tf.cond(y > 10.0, big, lambda: y)

    f(tf.constant(1.5))
    f(tf.constant(0.5))
    eager = capsys.readouterr().err  # tf.print writes to stderr, numbers as TF's (3, not 3.0)
    assert eager == "step 0 1.5\nstep 1 3\nstep 2 6\nbig 12\nstep 0 0.5\nstep 1 1\nstep 2 2\n"
    for backend in BACKENDS:
        g = tf.function(f, backend=backend)
        g(tf.constant(1.5))
        g(tf.constant(0.5))
        assert capsys.readouterr().err == eager, backend
