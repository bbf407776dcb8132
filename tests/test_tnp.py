"""tf.experimental.numpy (tapeflow.experimental.numpy) against TF 2.21's recorded outputs
(tests/data/tnp_tf_reference.json, made by tests/tf_reference/make_tnp_reference.py): values,
dtypes, shapes and error classes of ~330 expressions in three modes (no switch, the switch, the
switch with prefer_float32), each also run compiled (tapeflow.function) against eager; gradients
through tnp functions; the NumPy interop of the tf_numpy guide."""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

import tapeflow as tf
import tapeflow.experimental.numpy as tnp
from tapeflow.experimental.numpy import _set_numpy_behavior

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "tnp_tf_reference.json")))
MODES = {"off": (False, False), "on": (True, False), "f32": (True, True), "all": (True, False, "all"),
         "safe": (True, False, "safe")}

# Where TF 2.21 raises from a defect of its own and tapeflow gives NumPy's answer (docs/differences.md):
# the expected value is NumPy's.
NUMPY_INSTEAD = {
    "tnp.var(a, ddof=1)": lambda ns: np.var(ns["a"].numpy(), ddof=1),
    "tnp.expand_dims(v, (0, 2)).shape": lambda ns: (1, 3, 1),
    "tnp.concatenate([i, a], axis=None)": lambda ns: np.concatenate([ns["i"].numpy(), ns["a"].numpy()], axis=None),
    "tnp.pad(i, 1)": lambda ns: np.pad(ns["i"].numpy(), 1),
    "tnp.pad(v, [[1, 2]])": lambda ns: np.pad(ns["v"].numpy(), [[1, 2]]),
    "tnp.size(x3, 1)": lambda ns: 3,
    "x3.transpose(1, 0, 2).shape": lambda ns: (3, 2, 4),
    # TF's "all"/"safe" modes promote arithmetic only; tapeflow's hook promotes every op that adopts
    # operands, comparisons included (docs/differences.md)
    "tf.constant([1., 2.], tf.float32) < tf.constant([2, 1], tf.int8)": lambda ns: np.array([True, False]),
}


@pytest.fixture
def mode(request):
    yield
    _set_numpy_behavior(False, False)


def _ns():
    ns = {"tnp": tnp, "np": np, "tf": tf}
    exec(REF["setup"], ns)
    return ns


def _check(got, want, expr):
    if "error" in want:
        raise AssertionError(f"{expr}: TF raises {want['error']}, tapeflow gave {got!r}")
    if "seq" in want:
        assert isinstance(got, (tuple, list)), expr
        assert len(got) == len(want["seq"]), expr
        for g, w in zip(got, want["seq"]):
            _check(g, w, expr)
        return
    if "shape_value" in want:
        assert list(got) == want["shape_value"], expr
        return
    if "dtype_value" in want:
        assert np.dtype(tf.as_dtype(got).as_numpy_dtype if isinstance(got, tf.DType) else got).name == \
            want["dtype_value"], expr
        return
    if "py" in want:
        g = got.numpy() if isinstance(got, tf.Tensor) else got
        if isinstance(want["py"], bool):
            assert bool(g) is want["py"], expr
        elif want["py"] == "nan":
            assert math.isnan(g), expr
        else:
            assert float(g) == pytest.approx(want["py"], rel=1e-6), expr
        return
    if want.get("ndarray"):   # NumPy's function fell back to NumPy (TF's method refused its arguments)
        assert isinstance(got, np.ndarray), f"{expr}: {type(got)}"
        g = got
    else:
        assert isinstance(got, tf.Tensor), f"{expr}: {type(got)}"
        g = got.numpy()
    assert g.dtype.name == want["dtype"], f"{expr}: dtype {g.dtype.name}, TF {want['dtype']}"
    assert list(g.shape) == want["shape"], f"{expr}: shape {g.shape}, TF {want['shape']}"
    w = np.array([float(x) if isinstance(x, str) else x for x in want["values"]], dtype=g.dtype).reshape(g.shape)
    if g.dtype.kind == "f":
        tol = 1e-5 if g.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True, err_msg=expr)
    else:
        np.testing.assert_array_equal(g, w, err_msg=expr)


def _error_matches(e, want):
    names = {c.__name__ for c in type(e).__mro__}
    if want["error"] == "TypeError" and "PromoMode" in want["message"]:   # TF's text, word for word
        assert str(e).startswith(want["message"][:150]), (str(e), want["message"])
    return want["error"] in names


CASES = [(m, r["expr"], r["out"]) for m in MODES for r in REF["modes"][m]]


@pytest.mark.parametrize("mode_name,expr,want", CASES, ids=[f"{m}:{e}" for m, e, _ in CASES])
def test_tnp_matches_tf(mode, mode_name, expr, want):
    _set_numpy_behavior(*MODES[mode_name])
    ns = _ns()
    if expr in NUMPY_INSTEAD:
        got = eval(expr, ns)
        want_np = NUMPY_INSTEAD[expr](ns)
        np.testing.assert_array_equal(np.asarray(got).shape, np.asarray(want_np).shape)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want_np), rtol=1e-12)
        return
    if "error" in want:
        with pytest.raises(Exception) as info:
            eval(expr, ns)
        assert _error_matches(info.value, want), f"{expr}: tapeflow raised {type(info.value).__name__}, " \
                                                 f"TF {want['error']}"
        return
    _check(eval(expr, ns), want, expr)


# expressions whose result is not a tensor (Python values, shapes, dtypes) or whose inputs must be
# concrete (gcd/lcm compute on values; tolist) are compared eagerly only
_EAGER_ONLY = ("tolist", "int(", ".shape", "tnp.shape", "tnp.ndim", "tnp.size", "result_type", "promote_types",
               "finfo", "iinfo", "issubdtype", "isscalar", "iscomplexobj", "gcd", "lcm", "hasattr", "signbit",
               "array_equal(i, j)", ".ndim", "tf.Variable")
_ARGS = ("a", "b", "i", "j", "f", "m", "v", "bo", "x3", "n")


@pytest.mark.parametrize("mode_name,expr,want",
                         [c for c in CASES if "error" not in c[2] and c[1] not in NUMPY_INSTEAD
                          and not any(s in c[1] for s in _EAGER_ONLY) and not c[1].startswith("np.")],
                         ids=[f"{m}:{e}" for m, e, w in CASES if "error" not in w and e not in NUMPY_INSTEAD
                              and not any(s in e for s in _EAGER_ONLY) and not e.startswith("np.")])
def test_tnp_compiled_equals_eager(mode, mode_name, expr, want):
    """The same expression traced with the setup tensors as arguments gives eager's values."""
    _set_numpy_behavior(*MODES[mode_name])
    ns = _ns()
    eager = eval(expr, ns)

    @tf.function
    def f(*args):
        local = dict(ns)
        local.update(zip(_ARGS, args))
        return eval(expr, local)
    got = f(*[ns[k] for k in _ARGS])
    for g, e in zip(tf.nest.flatten(got), tf.nest.flatten(eager)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, expr
        np.testing.assert_array_equal(g, e, err_msg=expr)


def test_ndarray_is_tensor_and_methods_need_the_switch(mode):
    assert tnp.ndarray is tf.Tensor
    x = tnp.ones([2, 3])
    with pytest.raises(AttributeError, match="enable_numpy_behavior"):
        x.ravel()
    assert not hasattr(x, "clip")
    tnp.experimental_enable_numpy_behavior()
    assert x.ravel().shape == (6,) and hasattr(x, "clip")
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        x.nonsense


def test_numpy_interop(mode):
    """The guide's cells: NumPy functions take tensors (__array__), tnp functions take arrays."""
    tnp.experimental_enable_numpy_behavior()
    s = np.sum(tnp.ones([2, 3]))
    assert isinstance(s, np.float64) and s == 6.0  # TF 2.21: numpy.float64 6.0
    t = tnp.sum(np.ones([2, 3]))
    assert isinstance(t, tf.Tensor) and t.dtype == tf.float64
    x = tnp.ones([2]) + np.ones([2])
    assert str(x) == "tf.Tensor([2. 2.], shape=(2,), dtype=float64)"  # TF 2.21's text
    with pytest.raises(TypeError):
        tnp.arange(6)[1] = -1   # TF 2.21: TypeError (no mutation)


def test_gradients_through_tnp(mode):
    """tnp functions are tapeflow ops: tapes differentiate them, eagerly and compiled, as finite
    differences say."""
    tnp.experimental_enable_numpy_behavior()
    w = tnp.asarray([[0.5, -1.0], [2.0, 0.25]])
    x = tnp.asarray([[1.0, 2.0], [3.0, -1.0]])

    def loss(w):
        y = tnp.maximum(tnp.matmul(x, w) + 0.1, 0)
        return tnp.sum(tnp.square(y)) + tnp.mean(tnp.tanh(w)) + tnp.sum(tnp.cumsum(w, axis=1) * tnp.flip(w))

    def grad(w):
        with tf.GradientTape() as tape:
            tape.watch(w)
            out = loss(w)
        return tape.gradient(out, w)
    g = grad(w).numpy()
    eps = 1e-6
    fd = np.zeros_like(g)
    for idx in np.ndindex(*g.shape):
        d = np.zeros(g.shape)
        d[idx] = eps
        fd[idx] = (loss(w + d).numpy() - loss(w - d).numpy()) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tf.function(grad)(w).numpy(), g, rtol=1e-12)


def test_operator_promotion_compiled(mode):
    """The switch promotes Tensor operators with NumPy's rules in traced code as in eager."""
    tnp.experimental_enable_numpy_behavior()
    i = tnp.asarray([1, 2], tnp.int32)
    f = tnp.asarray([0.5, 1.5], tnp.float32)
    eager = i + f
    assert eager.dtype == tf.float64   # TF 2.21: int32 + float32 => float64
    np.testing.assert_array_equal(tf.function(lambda a, b: a + b)(i, f).numpy(), eager.numpy())
    _set_numpy_behavior(False)
    with pytest.raises(Exception):
        i + f   # TF's own rule again: dtypes must agree


def test_random(mode):
    tnp.random.seed(3)
    a = tnp.random.randn(2, 3)
    assert a.dtype == tf.float64 and a.shape == (2, 3)   # TF 2.21: float64
    tnp.random.seed(3)
    np.testing.assert_array_equal(tnp.random.randn(2, 3).numpy(), a.numpy())
    r = tnp.random.randint(0, 3, size=(100,))
    assert r.dtype == tf.int64 and 0 <= int(tnp.min(r)) and int(tnp.max(r)) < 3
    u = tnp.random.uniform(2.0, 3.0, size=(50,))
    assert u.dtype == tf.float64 and float(tnp.min(u)) >= 2.0 and float(tnp.max(u)) < 3.0
    assert tnp.random.rand(4).shape == (4,) and tnp.random.standard_normal((2,)).shape == (2,)


def test_vectorized_map_per_example_gradients(mode):
    """The tf_numpy guide's per-example gradients: tf.vectorized_map of a function holding a
    GradientTape, compiled; each slice's gradients equal a separate eager computation."""
    tnp.experimental_enable_numpy_behavior()
    w = tnp.asarray([[0.5, -1.0], [2.0, 0.25], [0.1, 0.3]], tnp.float32)
    xs = tnp.asarray([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0], [0.0, 1.0, -2.0], [3.0, 1.0, 1.0]], tnp.float32)

    def grads(x):
        with tf.GradientTape() as tape:
            tape.watch(w)
            loss = tnp.sum(tnp.square(tnp.matmul(tnp.expand_dims(x, 0), w)))
        return tape.gradient(loss, w), loss

    g, losses = tf.function(lambda xs: tf.vectorized_map(grads, xs))(xs)
    assert g.shape == (4, 3, 2) and losses.shape == (4,)
    for k in range(4):
        gk, lk = grads(xs[k])
        np.testing.assert_allclose(g[k].numpy(), gk.numpy(), rtol=1e-6)
        np.testing.assert_allclose(losses[k].numpy(), lk.numpy(), rtol=1e-6)
    # eager: the same loop
    g2, _ = tf.vectorized_map(grads, xs)
    np.testing.assert_allclose(g2.numpy(), g.numpy(), rtol=1e-6)


# TF 2.21 (the lattice rows of tapeflow/experimental/numpy.py for uint16/32/64, recorded with
# tf.uint* tensors of value 1; Python scalars on the left): (left, right dtype) -> result dtype, or
# TypeError (SAFE mode's risky promotions)
_UINT_LATTICE = {
    "all": [("int8", "uint32", "int64"), ("uint16", "int8", "int32"), ("uint64", "int8", "float64"),
            ("uint32", "float16", "float16"), ("uint16", "uint64", "uint64"), (1.5, "uint16", "float64"),
            (True, "uint64", "uint64"), (True, "uint8", TypeError), (3, "uint32", "uint32")],
    "safe": [("int8", "uint32", TypeError), ("uint16", "int32", "int32"), ("uint32", "int64", "int64"),
             ("uint64", "float64", TypeError), ("float32", "uint16", "float32"), (1.5, "uint32", TypeError),
             ("uint8", "uint64", "uint64")],
}


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("conv", ["all", "safe"])
def test_unsigned_promotion_lattice(mode, conv, compiled):
    _set_numpy_behavior(True, False, conv)
    for left, right, want in _UINT_LATTICE[conv]:
        a = left if not isinstance(left, str) else tf.constant(1, getattr(tf, left))
        b = tf.constant(1, getattr(tf, right))
        fn = (lambda x: a + x) if not compiled else tf.function(lambda x: a + x)
        if want is TypeError:
            with pytest.raises(TypeError, match=f"PromoMode.{conv.upper()}"):
                fn(b)
        else:
            assert fn(b).dtype.name == want, (conv, left, right)
