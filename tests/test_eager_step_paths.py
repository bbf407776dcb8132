"""The eager training step's shortened paths (wave 16, the Keras DQN step): bind's
three-operand path, the dense record's array backward for 2-D and batched kernels,
the optimizer's constants table and its one pass over the pairs. Each is compared
with the general path it shortens (values, bits, tape records, errors)."""
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.autodiff import tape as tape_mod
from tapeflow.core import primitive as prim
from tapeflow.core.primitive import READ_VARIABLE, bind
from tapeflow.core.primitives import dense as dense_mod
from tapeflow.core.primitives.dense import dense_p
from tapeflow.optimizers import base as opt_base


def _bits(a):
    a = np.asarray(a)
    return a.dtype.str, a.shape, a.tobytes()


def _xwb(seed=0, batch=6, n_in=5, units=4):
    rs = np.random.default_rng(seed)
    x = tf.constant(rs.standard_normal((batch, n_in)).astype(np.float32))
    w = tf.Variable(rs.standard_normal((n_in, units)).astype(np.float32), name="w")
    b = tf.Variable(rs.standard_normal(units).astype(np.float32), name="b")
    return x, w, b


def _three_operand_cases():
    x, w, b = _xwb()
    vx = tf.Variable(x.numpy(), name="vx")
    c = tf.constant(np.array([[True, False, True, False]] * 6))
    v1 = tf.Variable(np.ones((6, 4), np.float32), name="v1")
    v2 = tf.Variable(np.full((6, 4), 2.0, np.float32), name="v2")
    sel = prim.REGISTRY["select"]
    return [("dense x w b", dense_p, [x, w, b], {"activation": "relu"}),
            ("dense vx w b", dense_p, [vx, w, b], {"activation": "linear"}),
            ("select c v1 v2", sel, [c, v1, v2], {}),
            ("select c v2 v1", sel, [c, v2, v1], {})]


@pytest.mark.parametrize("case", range(4))
def test_three_operand_bind_reads_variables_in_order_and_records_like_the_general_path(case):
    """bind's unrolled three-operand path: variables are read in operand order, each read is
    one tape node before the op's, the op's node holds the reads, and a second call (the
    cached signature: the fast path) records exactly what the first (eager_apply) did."""
    _, p, args, params = _three_operand_cases()[case]
    records = []
    for _ in range(2):
        with tf.GradientTape() as tape:
            out = bind(p, *args, **params)
        nodes = tape._nodes
        records.append([(n[0].name, [a.name if isinstance(a, tf.Variable) else "t" for a in n[1]])
                        for n in nodes])
        reads = [n for n in nodes if n[0] is READ_VARIABLE]
        op = [n for n in nodes if n[0] is p]
        assert len(op) == 1 and nodes[-1] is op[0]
        it = iter([n[3] for n in reads])
        for a, got in zip(args, op[0][1]):
            assert got is (next(it) if isinstance(a, tf.Variable) else a)
        assert [n[1][0] for n in reads] == [a for a in args if isinstance(a, tf.Variable)]
        vals = [a.numpy() for a in args]
        if p is dense_p:
            ref = vals[0] @ vals[1] + vals[2]
            ref = np.maximum(ref, 0) if params["activation"] == "relu" else ref
            np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6, atol=1e-6)
        else:
            assert np.array_equal(out.numpy(), np.where(vals[0], vals[1], vals[2]))
    assert records[0] == records[1]


def test_three_operand_bind_with_a_python_scalar_or_array_takes_the_general_path():
    """An operand that is neither a tensor nor a variable (a Python float, a NumPy array)
    leaves the unrolled path: the generic loop or eager_apply, with their results."""
    sel = prim.REGISTRY["select"]
    c = tf.constant(np.array([True, False, True]))
    a = tf.constant(np.array([1.0, 2.0, 3.0], np.float32))
    for _ in range(2):
        r1 = bind(sel, c, a, 0.5)
        r2 = bind(sel, c, np.array([9.0, 8.0, 7.0], np.float32), a)
    assert r1.numpy().tolist() == [1.0, 0.5, 3.0]
    assert r2.numpy().tolist() == [9.0, 2.0, 7.0]


def test_three_operand_bind_errors_are_the_general_paths():
    x, w, b = _xwb()
    bad = tf.Variable(np.ones(3, np.float32))
    for _ in range(2):
        with pytest.raises(Exception) as e:
            bind(dense_p, x, w, bad, activation="relu")
    assert "dense" in str(e.value) or "add" in str(e.value)


def _dense_grads(x, w, b, act, lean):
    with tf.GradientTape(persistent=not lean) as tape:
        tape.watch(x)
        out = bind(dense_p, x, w, b, activation=act)
        loss = tf.reduce_sum(out * out)
    if not lean:
        with tf.GradientTape():  # another tape recording: the general (Tensor) walk
            return [g.numpy() for g in tape.gradient(loss, [x, w, b])]
    return [g.numpy() for g in tape.gradient(loss, [x, w, b])]


@pytest.mark.parametrize("act", ["relu", "linear"])
def test_dense_array_backward_of_a_2d_kernel_has_the_general_walks_bits(act):
    x, w, b = _xwb(1, batch=40, n_in=9, units=7)
    lean = _dense_grads(x, w, b, act, True)
    general = _dense_grads(x, w, b, act, False)
    for got, ref in zip(lean, general):
        assert _bits(got) == _bits(ref)


def test_dense_array_backward_of_a_batched_kernel_unbroadcasts_like_matmul():
    """A kernel of rank 3 (bind(dense, x, w) with a stack of kernels) is no Dense layer's,
    but the record accepts it: its array backward takes matmul's rule, which sums the
    input gradient over the kernel's batch, as the general walk does."""
    rs = np.random.default_rng(2)
    x = tf.constant(rs.standard_normal((6, 5)).astype(np.float32))
    w = tf.Variable(rs.standard_normal((3, 5, 4)).astype(np.float32))
    b = tf.Variable(rs.standard_normal(4).astype(np.float32))
    lean = _dense_grads(x, w, b, "linear", True)
    general = _dense_grads(x, w, b, "linear", False)
    assert [g.shape for g in lean] == [(6, 5), (3, 5, 4), (4,)]
    for got, ref in zip(lean, general):
        assert _bits(got) == _bits(ref)
    ref_gx = (2 * (np.einsum("ij,bjk->bik", x.numpy(), w.numpy()) + b.numpy()) @ np.swapaxes(w.numpy(), 1, 2)).sum(0)
    np.testing.assert_allclose(lean[0], ref_gx, rtol=1e-4, atol=1e-4)


def test_dense_vjp_np_and_into_are_the_same_rule():
    """vjp_np_into writes relu's gradient over the cotangent and gives vjp_np's values."""
    pytest.importorskip("numba")  # (the native loop: without numba both take NumPy's forms)
    x, w, b = _xwb(3, batch=12, n_in=6, units=5)
    out = bind(dense_p, x, w, b, activation="relu").numpy()
    g = np.random.default_rng(4).standard_normal(out.shape).astype(np.float32)
    need = (True, True, True)
    ref = dense_mod._dense_vjp_np(need, g.copy(), out, x.numpy(), w.numpy(), b.numpy(), activation="relu")
    g2 = g.copy()
    got = dense_mod._dense_vjp_np_into(need, g2, out, x.numpy(), w.numpy(), b.numpy(), activation="relu")
    for a, r in zip(got, ref):
        assert _bits(a) == _bits(r)
    assert _bits(g2) == _bits(np.where(out > 0, g, np.float32(0)))  # written over


@pytest.mark.parametrize("t", [np.float32, np.float64, np.float16])
def test_scalar_table_gives_the_types_conversion_zeros_and_nan_apart(t):
    for x in (0.1, 1e-8, 0.999, -2.5, float("inf"), 0.0, -0.0, float("nan"), 0.1, -0.0, 0.0):
        got = opt_base._scalar(t, x)
        assert type(got) is t and _bits(got) == _bits(t(x))
    table = opt_base._SCALARS[t]
    assert 0.0 not in table and not any(k != k for k in table)  # zeros and NaN are never keys


def test_scalar_table_stays_bounded():
    t = np.float32
    for i in range(1, 600):
        opt_base._scalar(t, i * 0.37)
    assert len(opt_base._SCALARS[t]) <= 256


def _opt_pairs():
    v1 = tf.Variable(np.ones((2, 3), np.float32), name="a")
    v2 = tf.Variable(np.zeros(3, np.float32), name="c")
    return v1, v2


def test_apply_gradients_one_pass_converts_checks_and_builds_as_before():
    """The pass over the pairs notes new variables and unusual gradients; the checks then
    run in their order: a NumPy gradient is converted, a bad one named, a new variable built."""
    v1, v2 = _opt_pairs()
    opt = tf.keras.optimizers.Adam(0.1)
    opt.apply_gradients([(np.ones((2, 3), np.float32), v1), (tf.constant(np.ones(3, np.float32)), v2)])
    assert opt.iterations.numpy() == 1 and not np.array_equal(v1.numpy(), np.ones((2, 3)))
    # a gradient of the wrong shape after a usual one: the named error
    with pytest.raises(ValueError, match="gradient for a"):
        opt.apply_gradients([(tf.constant(np.ones(3, np.float32)), v2), (tf.constant(np.ones(3, np.float32)), v1)])
    # a float64 gradient is cast to the variable's float32 (as Keras 3); a bool one is named
    before = v1.numpy().copy()
    opt.apply_gradients([(tf.constant(np.ones((2, 3))), v1)])
    assert v1.dtype == tf.float32 and not np.array_equal(v1.numpy(), before)
    with pytest.raises(TypeError, match="has dtype bool"):
        opt.apply_gradients([(tf.constant(np.ones((2, 3), bool)), v1)])
    # a None gradient warns, then a new variable is built and updated
    v3 = tf.Variable(np.ones(2, np.float32), name="new")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        opt.apply_gradients([(None, v1), (tf.constant(np.ones(2, np.float32)), v3)])
    assert any("do not exist" in str(x.message) for x in w)
    assert opt.get_slot(v3, "m") is not None and v3.numpy()[0] != 1.0
    with pytest.raises(TypeError, match="expected \\(gradient, Variable\\) pairs"):
        opt.apply_gradients([(tf.constant(np.ones(3, np.float32)), v2), (np.ones(3), np.ones(3))])


def test_apply_gradients_returns_iterations_and_counts_each_step():
    v1, v2 = _opt_pairs()
    opt = tf.keras.optimizers.Adam(0.1)
    g = [tf.constant(np.ones((2, 3), np.float32)), tf.constant(np.ones(3, np.float32))]
    for i in range(3):
        it = opt.apply_gradients(zip(g, [v1, v2]))
        assert it is opt.iterations and int(it.numpy()) == i + 1
    assert opt._step_cache is None


def test_lean_walk_one_operand_nodes():
    """The forward sweep's one-operand branch: a chain of one-operand ops from a source,
    and one-operand ops on values no source reaches (never live), give the general walk's
    gradients."""
    v = tf.Variable(np.array([0.5, -1.0, 2.0], np.float32))
    c = tf.constant(np.array([1.0, 2.0, 3.0], np.float32))
    with tf.GradientTape(persistent=True) as tape:
        a = tf.exp(v)                 # one operand, live
        b = tf.reshape(a, [3, 1])     # one operand, live
        d = tf.exp(c)                 # one operand, not live
        e = tf.reduce_sum(b) * tf.reduce_sum(d)
    lean = tape.gradient(e, v).numpy()
    with tf.GradientTape():
        general = tape.gradient(e, v).numpy()
    assert _bits(lean) == _bits(general)
    np.testing.assert_allclose(lean, np.exp(v.numpy()) * np.exp(c.numpy()).sum(), rtol=1e-6)
    assert tape_mod._NEED1 == (True,)
