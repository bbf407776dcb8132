"""keras.ops names added in wave 21 (tapeflow/keras/_ops_more.py) against Keras 3.15 on TF 2.21
(tests/data/keras21_ops_reference.json, made by tests/tf_reference/make_keras21_reference.py):
values, dtypes, shapes, error classes; eager == compiled; gradients vs finite differences."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import ops
from test_keras_ops import _check

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "keras21_ops_reference.json")))


def _ns():
    ns = {"ops": ops, "np": np}
    exec(REF["setup"], ns)
    return ns


def _np_nanquantile(ns, x, q, **kw):
    return np.nanquantile(ns[x].astype(np.float32), q, **kw).astype(np.float32)


# Keras 3.15 (TF backend) raises from a defect of its own; tapeflow gives NumPy's answer
# (docs/differences.md): the expected value is NumPy's
NUMPY_INSTEAD = {
    # Keras' map_fn declares a scalar output signature: a list of quantiles is a ValueError there
    "ops.nanquantile(n, [0.1, 0.75], axis=1)": lambda ns: _np_nanquantile(ns, "n", [0.1, 0.75], axis=1),
    # Keras' map_fn writes float32 into an int32 TensorArray
    "ops.nanquantile(vi, 0.5, axis=0)": lambda ns: _np_nanquantile(ns, "vi", 0.5, axis=0),
    # Keras' invert_permutation takes 1-D only: batches of matrices fail there
    "ops.lu_factor(lb)": lambda ns: _batched_lu_factor(ns["lb"]),
}


def _batched_lu_factor(a):
    """Each matrix's factors (ops.lu_factor(lb[0]), lb[1] are checked against Keras), stacked."""
    outs = [ops.lu_factor(m) for m in a]
    return np.stack([np.asarray(o[0]) for o in outs]), np.stack([np.asarray(o[1]) for o in outs])


CASES = [(r["expr"], r["out"]) for r in REF["cases"]]


@pytest.mark.parametrize("expr,want", CASES, ids=[e for e, _ in CASES])
def test_match_keras(expr, want):
    ns = _ns()
    if expr in NUMPY_INSTEAD:
        got = eval(expr, ns)
        w = NUMPY_INSTEAD[expr](ns)
        for g, x in zip(got if isinstance(got, (list, tuple)) else [got], w if isinstance(w, (list, tuple)) else [w]):
            assert np.asarray(g).shape == np.asarray(x).shape, expr
            assert np.asarray(g).dtype == np.asarray(x).dtype, expr
            np.testing.assert_allclose(np.asarray(g), np.asarray(x), rtol=1e-6, atol=1e-6)
        return
    if "error" in want:
        with pytest.raises(Exception) as info:
            eval(expr, ns)
        names = {c.__name__ for c in type(info.value).__mro__}
        assert want["error"] in names, f"{expr}: tapeflow raised {type(info.value).__name__}: {info.value}; " \
                                       f"Keras {want['error']}"
        return
    _check(eval(expr, ns), want, expr)


_ARRAYS = ("h", "hi", "n", "n64", "c1", "c2", "c3", "ci", "s", "u", "p1", "p2", "p3", "vw", "vi", "la", "lb", "img")
# window lengths are static: the window functions take Python ints, nothing to trace
_EAGER_ONLY = ("bartlett", "blackman", "hamming", "hanning", "kaiser", "T(")


@pytest.mark.parametrize("expr", [e for e, w in CASES if "error" not in w and not any(s in e for s in _EAGER_ONLY)])
def test_compiled_equals_eager(expr):
    """Traced with the setup arrays as tensor arguments: eager's values, bit for bit."""
    ns = _ns()
    eager = eval(expr, {**ns, **{k: tf.constant(ns[k]) for k in _ARRAYS}})

    @tf.function
    def f(*args):
        return eval(expr, {**ns, **dict(zip(_ARRAYS, args))})
    got = f(*[tf.constant(ns[k]) for k in _ARRAYS])
    for g, e in zip(tf.nest.flatten(got), tf.nest.flatten(eager)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, expr
        np.testing.assert_array_equal(g, e, err_msg=expr)


def test_compiled_jvp_and_adaptive():
    """jvp (a ForwardAccumulator: two tapes) and adaptive pooling inside tapeflow.function."""
    x = tf.constant(np.linspace(-1, 2, 6).astype(np.float32))
    t = tf.constant(np.arange(6, dtype=np.float32) / 3)

    def prog(x, t):
        y, jy = ops.jvp(lambda z: ops.sin(z) * ops.exp(z), (x,), (t,))
        p = ops.adaptive_max_pool(ops.reshape(x, (1, 6, 1)), 4)
        return y, jy, p
    for e, g in zip(prog(x, t), tf.function(prog)(x, t)):
        np.testing.assert_array_equal(np.asarray(e), np.asarray(g))


def _fd_check(fn, x0, eps=1e-6, rtol=1e-6, atol=1e-8):
    x = tf.constant(x0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    g = tape.gradient(y, x).numpy()
    fd = np.zeros_like(x0)
    for idx in np.ndindex(*x0.shape):
        d = np.zeros_like(x0)
        d[idx] = eps
        fd[idx] = (float(fn(tf.constant(x0 + d))) - float(fn(tf.constant(x0 - d)))) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=rtol, atol=atol)


_RNG = np.random.default_rng(21)
_W = {k: _RNG.standard_normal(k) for k in [(3,), (7,), (2, 3, 2, 3), (2, 12, 6), (2, 5, 7, 3), (2, 3, 5, 6)]}


@pytest.mark.parametrize("name,fn,shape", [
    ("nanquantile", lambda x: ops.sum(ops.nanquantile(ops.where(x > 1.2, np.nan, x), [0.3, 0.8], axis=1)
                                      * np.array([[1.], [-2.]])), (3, 5)),
    ("nanmedian", lambda x: ops.sum(ops.nanmedian(x, axis=0) * np.arange(1., 6.)), (4, 5)),
    ("correlate_same", lambda x: ops.sum(ops.correlate(x[:7], x[7:], mode="same") * _W[(7,)]), (10,)),
    ("correlate_full", lambda x: ops.sum(ops.correlate(x[:7], x[7:], mode="full") ** 2), (10,)),
    ("unfold", lambda x: ops.sum(ops.unfold(x, (2, 3), stride=(1, 2), padding=1) ** 2), (2, 3, 5, 6)),
    ("fold", lambda x: ops.sum(ops.fold(x, (5, 6), 2, stride=(2, 1), padding=(1, 0)) * _W[(2, 3, 5, 6)]),
     (2, 12, 15)),
    ("adaptive_average_pool", lambda x: ops.sum(ops.adaptive_average_pool(x, (3, 4)) ** 2), (2, 5, 7, 3)),
    ("adaptive_max_pool", lambda x: ops.sum(ops.adaptive_max_pool(x, (2, 3), data_format="channels_first")
                                            * _W[(2, 3, 2, 3)]), (2, 3, 5, 7)),
    ("extract_sequences", lambda x: ops.sum(ops.extract_sequences(x, 4, 3) ** 3), (2, 10)),
    ("rearrange", lambda x: ops.sum(ops.rearrange(x, "b (h h1) w c -> b h (w c h1)", h1=2)[:, :, :3] ** 2),
     (2, 4, 3, 2)),
])
def test_gradients_vs_finite_differences(name, fn, shape):
    x0 = np.random.default_rng(len(name)).standard_normal(shape)
    _fd_check(fn, x0)


def test_jvp_vs_finite_differences_and_aux():
    def f(x, y):
        return ops.tanh(ops.matmul(x, y)) * x
    x0, y0 = np.random.default_rng(1).standard_normal((2, 3, 3))
    tx, ty = np.random.default_rng(2).standard_normal((2, 3, 3))
    out, tan = ops.jvp(f, (tf.constant(x0), tf.constant(y0)), (tf.constant(tx), tf.constant(ty)))
    eps = 1e-6
    fd = (f(tf.constant(x0 + eps * tx), tf.constant(y0 + eps * ty)).numpy()
          - f(tf.constant(x0 - eps * tx), tf.constant(y0 - eps * ty)).numpy()) / (2 * eps)
    np.testing.assert_allclose(out.numpy(), f(tf.constant(x0), tf.constant(y0)).numpy())
    np.testing.assert_allclose(tan.numpy(), fd, rtol=1e-6, atol=1e-8)
    # nested outputs keep their structure; aux passes through; int tangents cast to the primal's dtype
    o, t, aux = ops.jvp(lambda z: ({"a": z * 2.0, "b": [ops.sum(z)]}, "aux"), (tf.constant([1.0, 2.0]),),
                        (np.array([3, 4]),), has_aux=True)
    assert aux == "aux"
    np.testing.assert_array_equal(t["a"].numpy(), [6.0, 8.0])
    assert float(t["b"][0]) == 7.0 and t["a"].dtype == tf.float32


def test_fold_is_unfolds_adjoint():
    """<unfold(x), c> == <x, fold(c)> for random x and c (fold is unfold's transpose)."""
    r = np.random.default_rng(5)
    for k, st, pd, dl in [(2, 1, 0, 1), ((2, 3), (2, 1), (1, 2), (1, 2)), (3, 2, 1, 1)]:
        x = r.standard_normal((2, 3, 6, 7))
        ux = ops.unfold(x, k, dilation=dl, padding=pd, stride=st)
        c = r.standard_normal(ux.shape)
        fc = ops.fold(c, (6, 7), k, dilation=dl, padding=pd, stride=st)
        np.testing.assert_allclose(float(np.sum(np.asarray(ux) * c)), float(np.sum(x * np.asarray(fc))), rtol=1e-10)


def test_nanquantile_matches_numpy_sweep():
    r = np.random.default_rng(7)
    x = r.standard_normal((4, 6, 5))
    x[r.random(x.shape) < 0.3] = np.nan
    x[0, :, 1] = np.nan
    for axis in (None, 0, 1, 2, (0, 2)):
        for method in ("linear", "lower", "higher", "nearest", "midpoint"):
            for q in (0.0, 0.37, 1.0, [0.1, 0.5, 0.9]):
                got = np.asarray(ops.nanquantile(x, q, axis=axis, method=method, keepdims=True))
                want = np.nanquantile(x, np.asarray(q, np.float32).astype(np.float64), axis=axis, method=method,
                                      keepdims=True)
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"{axis} {method} {q}")


@pytest.mark.parametrize("expr", [e for e, w in CASES if "error" in w and "T(" not in e])
def test_compiled_raises_as_eager(expr):
    """Bad inputs raise Keras' error class when traced too (the checks are on static shapes/args)."""
    ns = _ns()
    want = dict(CASES)[expr]["error"]
    if expr in NUMPY_INSTEAD:
        return

    @tf.function
    def f(*args):
        return eval(expr, {**ns, **dict(zip(_ARRAYS, args))})
    with pytest.raises(Exception) as info:
        f(*[tf.constant(ns[k]) for k in _ARRAYS])
    assert want in {c.__name__ for c in type(info.value).__mro__}, f"{expr}: {type(info.value).__name__}"
