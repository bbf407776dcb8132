"""The lean eager backward (issue 14): tape.gradient on NumPy arrays with each
primitive's vjp_np when nothing records the gradient computation.

Its gradients must be bit-identical to the general path's (vjp rules in
tapeflow ops): every test here computes both, in the same process, and compares
dtype, shape and bits; and it must be taken exactly when no tape, trace or
profiler would see the backward ops."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.autodiff import tape as T
from tapeflow.core import primitive as P

from conftest import assert_close


@pytest.fixture
def walks(monkeypatch):
    """The interpretation each backward() ran with, in order ("lean"/"general")."""
    seen = []
    orig = T.backward

    def spy(nodes, targets, seeds, sources, rules=T._TENSOR_RULES):
        seen.append("lean" if isinstance(rules, T._ArrayRules) else "general")
        return orig(nodes, targets, seeds, sources, rules)

    monkeypatch.setattr(T, "backward", spy)
    return seen


def _bits(g):
    if g is None:
        return None
    v = np.asarray(g.numpy())
    return v.dtype, v.shape, v.tobytes()


@contextlib.contextmanager
def walk(general):
    """``general=True``: tape.gradient takes the general (Tensor) walk, as when something records."""
    orig = T._lean_seeds
    if general:
        T._lean_seeds = lambda targets, seeds: None
    try:
        yield
    finally:
        T._lean_seeds = orig


def _grads(fn, sources, general, **kw):
    """fn() under a tape watching ``sources``; the gradient w.r.t. them."""
    with walk(general):
        with tf.GradientTape(**kw) as tape:
            tape.watch(sources)
            y = fn()
        return tape.gradient(y, sources)


def same_grads(fn, sources, walks=None, **kw):
    """Lean and general gradients of fn() w.r.t. sources: bit-identical. Returns lean's."""
    lean = _grads(fn, sources, False, **kw)
    if walks is not None:
        assert walks[-1] == "lean"
    general = _grads(fn, sources, True, **kw)
    assert len(lean) == len(general)
    for a, b in zip(lean, general):
        assert _bits(a) == _bits(b)
        if a is not None:
            assert a.dtype == b.dtype
    return lean


def rs(seed=0):
    return np.random.default_rng(seed)


DTYPES = [np.float32, np.float64]


def const(shape, dtype, seed=0, positive=False, ties=False):
    r = rs(seed)
    v = r.uniform(0.5, 2.0, shape) if positive else r.standard_normal(shape)
    if ties:
        v = np.round(v)  # repeated values: max/min ties, relu at 0
    return tf.constant(np.asarray(v, dtype))


# -- elementwise, with broadcasting ---------------------------------------------------------

BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "maximum": tf.maximum, "minimum": tf.minimum,
}
SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)), ((), (5,)), ((4,), ())]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_ops_with_broadcasting(op, shapes, dtype, walks):
    a = const(shapes[0], dtype, 1, positive=op == "div", ties=op in ("maximum", "minimum"))
    b = const(shapes[1], dtype, 2, positive=op == "div", ties=op in ("maximum", "minimum"))
    same_grads(lambda: tf.reduce_sum(BINARY[op](a, b) * BINARY[op](b, a)), [a, b], walks)


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_ops_with_python_scalars(op, walks):
    a = const((3, 4), np.float32, 3, positive=True, ties=True)
    zero = 1 if op == "div" else 0  # (relu-like ties at 0 for maximum/minimum)
    same_grads(lambda: tf.reduce_sum(BINARY[op](a, 2.0) + BINARY[op](1.5, a) + BINARY[op](a, zero)), [a], walks)


UNARY = {
    "neg": lambda x: -x, "exp": tf.exp, "log": tf.math.log, "log1p": tf.math.log1p, "expm1": tf.math.expm1,
    "sin": tf.sin, "cos": tf.cos, "tan": tf.tan, "tanh": tf.tanh, "sqrt": tf.sqrt, "abs": tf.abs,
    "atan": tf.atan, "sigmoid": tf.sigmoid, "relu": tf.nn.relu, "square": tf.square,
    "sinh": tf.math.sinh, "cosh": tf.math.cosh, "asinh": tf.math.asinh,
    "asin": lambda x: tf.math.asin(x * 0.3), "acos": lambda x: tf.math.acos(x * 0.3),
    "atanh": lambda x: tf.math.atanh(x * 0.3), "acosh": lambda x: tf.math.acosh(x * x + 1.5),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_ops(op, dtype, walks):
    x = const((4, 5), dtype, 4, positive=op in ("log", "log1p", "sqrt"), ties=op in ("relu", "abs"))
    same_grads(lambda: tf.reduce_sum(UNARY[op](x) * const((4, 5), dtype, 5)), [x], walks)


def test_where_with_broadcast_condition(walks):
    x = const((3, 4), np.float32, 1)
    y = const((4,), np.float32, 2)
    c = tf.constant(rs(3).random((3, 1)) < 0.5)
    same_grads(lambda: tf.reduce_sum(tf.where(c, x, y) ** 2 + tf.where(c, 0.0, x)), [x, y], walks)


def test_cast_float_to_float_and_to_int():
    x = const((3,), np.float32, 1)
    g = same_grads(lambda: tf.reduce_sum(tf.cast(x, tf.float64) * 3.0)
                   + tf.cast(tf.reduce_sum(tf.cast(x * 10, tf.int32)), tf.float64), [x])
    assert g[0].dtype == tf.float32


# -- reductions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1])
@pytest.mark.parametrize("op", ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"])
def test_reductions(op, axis, keepdims, walks):
    x = const((2, 3, 4), np.float64, 6, ties=True)  # ties: max/min share the gradient
    f = getattr(tf, op)
    same_grads(lambda: tf.reduce_sum(f(x, axis=axis, keepdims=keepdims) * 1.7), [x], walks)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum(exclusive, reverse, walks):
    x = const((3, 4), np.float32, 7)
    w = const((3, 4), np.float32, 8)
    same_grads(lambda: tf.reduce_sum(tf.cumsum(x, axis=1, exclusive=exclusive, reverse=reverse) * w), [x], walks)


# -- shape ops, matmul, indexing ----------------------------------------------------------------

def test_reshape_transpose_broadcast_pad(walks):
    x = const((2, 3, 4), np.float32, 9)
    b = const((1, 4), np.float32, 10)
    w = const((4, 3, 2), np.float32, 11)

    def f():
        t = tf.transpose(x, [2, 1, 0]) * w
        r = tf.reshape(t, [6, 4]) + tf.broadcast_to(b, [6, 4])
        return tf.reduce_sum(tf.pad(r, [[1, 2], [0, 1]]) * 2.0)
    same_grads(f, [x, b], walks)


def test_concat_with_a_constant_operand(walks):
    x = const((2, 3), np.float32, 1)
    y = const((2, 2), np.float32, 2)
    w = const((2, 6), np.float32, 3)
    same_grads(lambda: tf.reduce_sum(tf.concat([x, [[1.0], [2.0]], y], axis=1) * w), [x, y], walks)


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
                                    ((2, 1, 3, 4), (5, 4, 2))], ids=str)
def test_matmul_batched_and_broadcast(shapes, walks):
    a = const(shapes[0], np.float32, 1)
    b = const(shapes[1], np.float32, 2)
    same_grads(lambda: tf.reduce_sum(tf.square(tf.matmul(a, b))), [a, b], walks)


def test_gather_with_repeats_slices_and_scatter(walks):
    x = const((5, 3), np.float32, 1)
    u = const((4,), np.float32, 2)

    def f():
        g = tf.gather(x, [0, 2, 2, 4])                  # getitem, repeated rows accumulate
        s = tf.scatter_nd([[1], [3], [1], [0]], u, [6])   # getitem_add
        return tf.reduce_sum(g[:, 1:] * 3.0) + tf.reduce_sum(s * s) + x[1, 2]
    same_grads(f, [x, u], walks)


# -- graph structure: reuse, accumulation, sources, seeds ------------------------------------------

def test_tensor_used_many_times_and_intermediate_sources(walks):
    x = const((3,), np.float32, 1)

    def run(general):
        with walk(general):
            with tf.GradientTape() as tape:
                tape.watch(x)
                s = x + 1.0          # add passes its cotangent through to x
                y = s * s + s * x + tf.exp(s) + s
            return tape.gradient(y, [x, s, x])
    lean = run(False)
    assert walks[-1] == "lean"
    general = run(True)
    assert [_bits(g) for g in lean] == [_bits(g) for g in general]
    xv = x.numpy()
    sv = xv + 1
    assert_close(lean[1], 2 * sv + xv + np.exp(sv) + 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_square_gives_one_product_to_both_operands(dtype, walks):
    # x * x: the lean rule computes g * x once for both operands; the sum must have the
    # general path's bits (g*x + g*x) whatever else flows into x, non-finite values included
    x = tf.constant(np.array([[1.5, -0.0, np.inf], [np.nan, 3e-39, -2.25]], dtype))
    g = same_grads(lambda: tf.reduce_sum(tf.square(x) * 0.5 + x * x + tf.exp(x)), [x], walks)
    xv = x.numpy().astype(np.float64)
    finite = np.isfinite(xv)
    np.testing.assert_allclose(g[0].numpy()[finite], (3 * xv + np.exp(xv))[finite], rtol=1e-6)
    same_grads(lambda: tf.reduce_mean(x * x), [x], walks)  # the square alone: its own sum


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 1, 3)])
def test_a_full_reductions_scalar_cotangent_is_broadcast_read_only(shape, walks):
    # a loss's mean: its cotangent reaches reduce_sum as a NumPy scalar; the broadcast
    # view must carry its value, the general path's bits, and refuse writes
    x = const(shape, np.float32, 3)
    same_grads(lambda: tf.reduce_mean(tf.square(x - 0.25)) * 3.0, [x], walks)
    from tapeflow.core.primitives.reductions import reduce_sum_p
    (v,) = reduce_sum_p.vjp_np((True,), np.float32(2.5), None, np.zeros(shape, np.float32),
                               axis=tuple(range(len(shape))), keepdims=False)
    assert v.shape == shape and v.dtype == np.float32 and not v.flags.writeable
    np.testing.assert_array_equal(v, np.full(shape, 2.5, np.float32))


def test_in_place_accumulation_does_not_touch_returned_gradients():
    # the sum of s's three contributions is an array the walk owns; it flows on to x
    # through add, and x's own sum must not be added into it
    x = const((4,), np.float32, 2)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        s = x + 0.0
        y = tf.reduce_sum(s * 2.0 + s * 3.0 + s * 4.0 + x * 5.0)
    gs, gx = tape.gradient(y, [s, x])
    np.testing.assert_array_equal(gs.numpy(), np.full(4, 9.0, np.float32))
    np.testing.assert_array_equal(gx.numpy(), np.full(4, 14.0, np.float32))
    gs2, gx2 = tape.gradient(y, [s, x])  # again: nothing recorded was modified
    np.testing.assert_array_equal(gx2.numpy(), gx.numpy())


def test_unconnected_sources():
    x = const((3,), np.float32, 1)
    z = const((2,), np.float32, 2)
    for mode in ("none", "zero"):
        with tf.GradientTape() as tape:
            tape.watch([x, z])
            y = tf.reduce_sum(x * x)
        gx, gz = tape.gradient(y, [x, z], unconnected_gradients=mode)
        assert_close(gx, 2 * x.numpy())
        if mode == "none":
            assert gz is None
        else:
            np.testing.assert_array_equal(gz.numpy(), np.zeros(2, np.float32))


def test_variables_and_watched_constants(walks):
    v = tf.Variable(rs(1).standard_normal((3, 2)).astype(np.float32))
    c = const((2,), np.float32, 2)
    x = const((4, 3), np.float32, 3)
    g = same_grads(lambda: tf.reduce_mean(tf.nn.relu(tf.matmul(x, v) + c)), [v, c], walks)
    assert g[0].shape == (3, 2)


def test_output_gradients_several_targets_and_target_as_source(walks):
    x = const((3,), np.float32, 1)
    for general in (False, True):
        with walk(general):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y1 = x * 2.0
                y2 = tf.reduce_sum(x * x)
            a = tape.gradient([y1, y2, y1], x, output_gradients=[tf.constant([1.0, 2.0, 3.0]), None,
                                                                  tf.constant([0.5, 0.5, 0.5])])
            b = tape.gradient(y1, [x, y1])
        if not general:
            lean = (a, b)
            assert walks[-1] == "lean"
    assert _bits(lean[0]) == _bits(a)
    assert [_bits(g) for g in lean[1]] == [_bits(g) for g in b]
    np.testing.assert_array_equal(lean[1][1].numpy(), np.ones(3, np.float32))


def test_a_seed_of_another_dtype_takes_the_general_path(walks):
    x = const((3,), np.float32, 1)
    seed = tf.constant(np.array([1.0, 2.0, 3.0]))  # float64 for a float32 target
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    g = tape.gradient(y, x, output_gradients=seed)
    assert walks == ["general"]
    assert_close(g, np.array([2.0, 4.0, 6.0]))


def test_custom_gradient_node_runs_its_rule_on_tensors(walks):
    @tf.custom_gradient
    def clip_grad(x):
        def grad(dy):
            return tf.clip_by_value(dy, -0.1, 0.1)
        return tf.identity(x), grad

    x = const((5,), np.float32, 1)
    g = same_grads(lambda: tf.reduce_sum(clip_grad(x * 3.0) * const((5,), np.float32, 2)), [x], walks)
    assert np.all(np.abs(g[0].numpy()) <= 0.3 + 1e-7)


def test_jacobian_matches_general_path():
    x = const((3,), np.float32, 1)
    out = []
    for general in (False, True):
        with walk(general):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y = tf.tanh(x) * x
            out.append(_bits(tape.jacobian(y, x)))
    assert out[0] == out[1]


# -- when the lean path applies -------------------------------------------------------------------

def test_keras_mlp_step_takes_the_lean_path(walks):
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(3)])
    s = const((6, 5), np.float32, 1)
    model(s)
    idx = tf.constant(np.array([0, 4, 7, 9, 12, 17], np.int64))
    y = const((6,), np.float32, 2)

    def loss():
        qa = tf.gather(tf.reshape(model(s), [-1]), idx)
        return tf.keras.losses.MSE(y, qa)
    g = same_grads(loss, model.trainable_variables, walks)
    assert [t.shape for t in g] == [v.shape for v in model.trainable_variables]


def test_nested_tapes_use_the_general_path_for_second_order(walks):
    x = tf.constant(2.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy = inner.gradient(y, x)     # the outer tape records this: general
    d2y = outer.gradient(dy, x)       # nothing records this one: lean
    assert walks == ["general", "lean"]
    assert float(dy) == 12.0 and float(d2y) == 12.0


def test_persistent_tape_inside_its_context_uses_the_general_path(walks):
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        g = tape.gradient(y, x)       # recorded by the same tape
        g2 = tape.gradient(g, x)
    assert walks == ["general", "general"]
    assert float(g) == 6.0 and float(g2) == 2.0
    g3 = tape.gradient(y, x)          # outside: nothing records
    assert walks[-1] == "lean" and float(g3) == 6.0


def test_gradient_inside_a_traced_function_uses_the_general_path(walks):
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(v * v)
        return tape.gradient(y, v)
    assert_close(step(), np.array([2.0, 4.0], np.float32))
    assert walks and set(walks) == {"general"}


def test_profiler_sees_the_general_path(walks):
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * x)
    with tf.profile():
        g = tape.gradient(y, x)
    assert walks == ["general"]
    assert_close(g, np.array([2.0, 4.0], np.float32))


def test_every_array_rule_is_beside_a_vjp():
    with_np = [p for p in P.REGISTRY.values() if p.vjp_np is not None]
    assert {"add", "mul", "matmul", "reduce_sum", "getitem", "read_variable"} <= {p.name for p in with_np}
    assert all(p.differentiable and p.vjp is not None for p in with_np)


def test_custom_gradient_of_another_dtype_has_the_general_paths_outcome(walks):
    # grad_fn returns float64 for a float32 input: the lean walk leaves it to the general path
    @tf.custom_gradient
    def f(x):
        return tf.identity(x), lambda dy: tf.cast(dy, tf.float64)

    x = const((3,), np.float32, 1)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(f(x) * 2.0)
    g = tape.gradient(y, x)
    assert walks == ["lean", "general"]
    assert g.dtype == tf.float64
    np.testing.assert_array_equal(g.numpy(), np.full(3, 2.0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_gradient_native_pass_has_the_select_bits(dtype, walks, monkeypatch):
    # maximum(x, 0)'s lean rule runs relu's gradient as one native pass (_relu_grad): the
    # bits of the general path's where(x > 0, g, 0) on inputs with ties at 0, -0.0, NaN
    # and inf in x, and NaN, inf and -0.0 in the cotangent (which must pass through)
    import numba  # noqa: F401  (the native pass runs once numba is imported: an optimizer imports it)
    from tapeflow.core.primitives import elementwise as E
    calls = []
    real = E._relu_grad
    monkeypatch.setattr(E, "_relu_grad", lambda g, x, *into: (calls.append(x.shape), real(g, x, *into))[1])
    r = rs(3)
    xv = np.round(r.standard_normal((40, 30))).astype(dtype)
    xv.flat[:6] = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-30]
    gv = r.standard_normal((40, 30)).astype(dtype)
    gv.flat[6:12] = [np.nan, np.inf, -np.inf, -0.0, 0.0, -1.0]
    gv.flat[:3] = [np.nan, -0.0, 5.0]
    x, seed = tf.constant(xv), tf.constant(gv)
    for f in (tf.nn.relu, lambda v: tf.maximum(v, 0.0)):
        for general in (False, True):
            with walk(general):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = f(x)
                g = tape.gradient(y, x, output_gradients=seed)
            if general:
                assert _bits(g) == lean
            else:
                lean = _bits(g)
    assert calls == [(40, 30), (40, 30)] and E._RELU_KERNELS[0] is not None
    want = np.where(xv > 0, gv, dtype(0))
    assert np.asarray(want).tobytes() == lean[2]
    # a broadcast cotangent (read-only, strided) takes the NumPy form: same bits
    same_grads(lambda: tf.reduce_sum(tf.nn.relu(x)), [x], walks)


@pytest.fixture
def into_calls(monkeypatch):
    """The relu gradients the lean walk wrote over their incoming gradient (vjp_np_into)."""
    import numba  # noqa: F401  (the native pass runs once numba is imported)
    from tapeflow.core.primitives import elementwise as E
    seen = []
    real = E._relu_grad

    def spy(g, x, into=False):
        if into:
            seen.append(g)
        return real(g, x, into)

    monkeypatch.setattr(E, "_relu_grad", spy)
    return seen


def _mlp(x, ws, bs, acts):
    h = x
    for w, b, act in zip(ws, bs, acts):
        h = tf.matmul(h, w) + b
        if act == "relu":
            h = tf.nn.relu(h)
    return h


@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_gradient_over_the_walks_own_cotangent_has_the_general_bits(dtype, walks, into_calls):
    # TD3's critic as raw ops: each relu's incoming gradient is a GEMM's fresh result that
    # only the walk holds, so its gradient is written over it; bits as the general path's
    # (and as the new-buffer form's: the same per-element choice); ties at 0 in x
    r = rs(7)
    x = tf.constant(np.round(r.standard_normal((32, 9)), 1).astype(dtype))
    ws = [tf.Variable(r.standard_normal(s).astype(dtype) * 0.3) for s in ((9, 16), (16, 16), (16, 1))]
    bs = [tf.Variable(np.zeros(s[1], dtype)) for s in ((9, 16), (16, 16), (16, 1))]
    fn = lambda: tf.reduce_mean(tf.square(_mlp(x, ws, bs, ["relu", "relu", None]) - 0.5))  # noqa: E731
    lean = same_grads(fn, ws + bs, walks)
    assert len(into_calls) == 2
    from tapeflow.core.primitives import elementwise as E
    E.maximum_p.vjp_np_into, keep = None, E.maximum_p.vjp_np_into
    try:
        fresh = _grads(fn, ws + bs, False)
    finally:
        E.maximum_p.vjp_np_into = keep
    assert len(into_calls) == 2 and [_bits(g) for g in fresh] == [_bits(g) for g in lean]


def test_relu_gradient_never_writes_an_array_someone_else_holds(walks, into_calls):
    r = rs(8)
    xv = r.standard_normal((16, 8)).astype(np.float32)
    x = tf.constant(xv)
    w = tf.Variable(r.standard_normal((8, 8)).astype(np.float32))
    # a seed the user holds, given straight to relu: read, never written
    seed = r.standard_normal((16, 8)).astype(np.float32)
    kept = seed.copy()
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.relu(x)
    g = tape.gradient(y, x, output_gradients=seed)
    np.testing.assert_array_equal(seed, kept)
    np.testing.assert_array_equal(g.numpy(), np.where(xv > 0, kept, 0))
    # one cotangent for two relus (add passes its gradient to both operands): the first
    # relu reached sees it shared and makes a new buffer, the second may take it
    before = len(into_calls)
    same_grads(lambda: tf.reduce_sum(tf.matmul(tf.nn.relu(x) + tf.nn.relu(x * 2.0), w)), [x], walks)
    assert len(into_calls) - before == 1
    # an intermediate tensor asked for as a source keeps its own gradient: a relu fed by
    # it does not write over it
    with tf.GradientTape() as tape:
        tape.watch(x)
        h = tf.matmul(x, w)
        y = tf.reduce_sum(tf.matmul(tf.nn.relu(h), w))
    gh, gx = tape.gradient(y, [h, x])
    g_out = np.ones((16, 8), np.float32) @ w.numpy().T
    np.testing.assert_allclose(gh.numpy(), np.where(h.numpy() > 0, g_out, 0), rtol=1e-6)
    np.testing.assert_allclose(gx.numpy(), gh.numpy() @ w.numpy().T, rtol=1e-5)


def test_persistent_and_nested_tapes_keep_their_paths_with_donation(walks, into_calls):
    r = rs(9)
    x = tf.constant(r.standard_normal((8, 4)).astype(np.float32))
    w = tf.Variable(r.standard_normal((4, 4)).astype(np.float32))
    fn = lambda: tf.reduce_sum(tf.matmul(tf.nn.relu(tf.matmul(x, w)), w))  # noqa: E731
    with tf.GradientTape(persistent=True) as tape:
        y = fn()
    g1 = tape.gradient(y, w)
    g2 = tape.gradient(y, w)   # the walk wrote over its own cotangents only: a second walk agrees
    assert _bits(g1) == _bits(g2) and walks == ["lean", "lean"] and len(into_calls) == 2
    # an outer tape records the inner gradient: the general path (no array is written)
    # and the second-order gradient through it
    def first_and_second_order():
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = fn()
            g = inner.gradient(y, w)
            z = tf.reduce_sum(g * g)
        return g, outer.gradient(z, w)

    g, gg = first_and_second_order()
    assert walks[2] == "general" and len(into_calls) == 2 and gg is not None
    with walk(True):
        g_ref, gg_ref = first_and_second_order()
    assert _bits(g) == _bits(g_ref) and _bits(gg) == _bits(gg_ref)


@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_forward_native_pass_has_numpys_maximum_bits(dtype, monkeypatch):
    # relu = maximum(x, 0) in one native pass over x (_relu_native) for a new result: the
    # bits of np.maximum(x, 0.0) -- NaN kept with its sign and payload, -0.0 -> +0.0, ties,
    # infinities -- eager, under a tape, and as the kernel with and without ``out``
    import numba  # noqa: F401  (the native pass runs once numba is imported)
    from tapeflow.core.primitives import elementwise as E
    calls = []
    real = E._relu_native
    monkeypatch.setattr(E, "_relu_native", lambda x: (calls.append(x.shape), real(x))[1])
    itype = np.uint32 if dtype == np.float32 else np.uint64
    xv = rs(4).standard_normal((50, 40)).astype(dtype)
    nan_neg = np.array(np.nan, dtype).view(itype) | np.array(-0.0, dtype).view(itype)
    payload = np.array(np.nan, dtype).view(itype) | itype(5)
    xv.flat[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-38, -1e-38, 3.0]
    xv.view(itype).flat[8:10] = [nan_neg, payload]
    want = np.maximum(xv, np.zeros_like(xv)).tobytes()
    assert np.maximum(xv, dtype(0)).tobytes() == want
    x = tf.constant(xv)
    assert tf.nn.relu(x).numpy().tobytes() == want
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.maximum(x, 0)
    assert y.numpy().tobytes() == want and tape.gradient(y, x) is not None
    assert calls == [(50, 40), (50, 40)]
    out = np.empty_like(xv)
    assert E.maximum_p.impl_out(out, xv, 0).tobytes() == want and len(calls) == 2   # (``out``: NumPy's form)
    # zero first: maximum(0, x) keeps NumPy's form (its -0.0 ties go the other way)
    assert tf.maximum(0.0, x).numpy().tobytes() == np.maximum(np.zeros_like(xv), xv).tobytes()
    assert len(calls) == 2
