"""keras.ops (tapeflow.keras.ops) against Keras 3.15 on TF 2.21 (tests/data/keras_ops_reference.json,
made by tests/tf_reference/make_keras_ops_reference.py): values, dtypes, shapes and error classes of
~275 expressions, eager and compiled; how many of Keras' op names tapeflow has; that a missing one
says so."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import ops

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "keras_ops_reference.json")))

# Keras 3.15 (TF backend) raises from a defect of its own; tapeflow gives NumPy's answer
# (docs/differences.md): the expected value is NumPy's
NUMPY_INSTEAD = {
    "ops.pad(i, 1)": lambda ns: np.pad(ns["i"], 1),
    "ops.meshgrid(v, d)": lambda ns: np.meshgrid(ns["v"].astype(np.float64), ns["d"]),
    "ops.sigmoid(i)": lambda ns: 1 / (1 + np.exp(-ns["i"].astype(np.float32))),
    "ops.add(bo, bo)": lambda ns: ns["bo"] | ns["bo"],
}
# looser tolerances where tapeflow's composition differs from TF's kernel in the last bits
# of float32 (transcendental compositions, accumulated sums)
TOL = 2e-5


def _ns():
    ns = {"ops": ops, "np": np}
    exec(REF["setup"], ns)
    return ns


def _check(got, want, expr):
    if "seq" in want:
        assert isinstance(got, (tuple, list)), f"{expr}: {type(got)}"
        assert len(got) == len(want["seq"]), expr
        for g, w in zip(got, want["seq"]):
            _check(g, w, expr)
        return
    if "shape_value" in want:
        assert list(got) == want["shape_value"], expr
        return
    if "str" in want:
        assert got == want["str"], expr
        return
    if "py" in want:
        g = got.numpy() if isinstance(got, tf.Tensor) else got
        if isinstance(want["py"], bool):
            assert bool(g) is want["py"], expr
        else:
            assert float(g) == pytest.approx(want["py"], rel=1e-6), expr
        return
    g = np.asarray(got)
    assert g.dtype.name == want["dtype"], f"{expr}: dtype {g.dtype.name}, Keras {want['dtype']}"
    assert list(g.shape) == want["shape"], f"{expr}: shape {g.shape}, Keras {want['shape']}"
    w = np.array([float(x) if isinstance(x, str) else x for x in want["values"]], dtype=g.dtype).reshape(g.shape)
    if g.dtype.kind == "f":
        tol = TOL if g.dtype != np.float64 else 1e-12
        tol = 2e-3 if g.dtype == np.float16 else tol
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True, err_msg=expr)
    else:
        np.testing.assert_array_equal(g, w, err_msg=expr)


CASES = [(r["expr"], r["out"]) for r in REF["cases"]]


@pytest.mark.parametrize("expr,want", CASES, ids=[e for e, _ in CASES])
def test_keras_ops_match_keras(expr, want):
    ns = _ns()
    if expr in NUMPY_INSTEAD:
        got = eval(expr, ns)
        w = NUMPY_INSTEAD[expr](ns)
        for g, x in zip(got if isinstance(got, (list, tuple)) else [got], w if isinstance(w, (list, tuple)) else [w]):
            assert np.asarray(g).shape == np.asarray(x).shape, expr
            np.testing.assert_allclose(np.asarray(g), np.asarray(x), rtol=1e-6)
        return
    if "error" in want:
        with pytest.raises(Exception) as info:
            eval(expr, ns)
        names = {c.__name__ for c in type(info.value).__mro__}
        assert want["error"] in names, f"{expr}: tapeflow raised {type(info.value).__name__}: {info.value}; " \
                                       f"Keras {want['error']}"
        return
    _check(eval(expr, ns), want, expr)


_EAGER_ONLY = ("ops.shape", "ops.dtype", "is_tensor", ".shape", "segment_", "ops.cond",
               "ops.while_loop", "ops.fori_loop", "ops.scan", "ops.map", "vectorized_map", "ops.switch",
               "associative_scan", "in_top_k", "bincount", "unravel_index", "np.zeros_like",
               "ops.gcd")


@pytest.mark.parametrize("expr,want", [c for c in CASES if "error" not in c[1] and c[0] not in NUMPY_INSTEAD
                                       and not any(s in c[0] for s in _EAGER_ONLY)],
                         ids=[e for e, w in CASES if "error" not in w and e not in NUMPY_INSTEAD
                              and not any(s in e for s in _EAGER_ONLY)])
def test_keras_ops_compiled_equals_eager(expr, want):
    """The expression traced with the setup arrays as tensor arguments: eager's values, bit for bit."""
    ns = _ns()
    names = ("a", "b", "i", "j", "d", "v", "m", "bo", "x4", "k4", "q", "ids", "data")
    eager = eval(expr, {**ns, **{k: tf.constant(ns[k]) for k in names}})

    @tf.function
    def f(*args):
        return eval(expr, {**ns, **dict(zip(names, args))})
    got = f(*[tf.constant(ns[k]) for k in names])
    for g, e in zip(tf.nest.flatten(got), tf.nest.flatten(eager)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, expr
        if g.dtype.kind == "f":
            # the fused tier's documented last-bit differences (its own exp/log/tanh forms)
            np.testing.assert_allclose(g, e, rtol=2e-6, atol=1e-7, err_msg=expr)
        else:
            np.testing.assert_array_equal(g, e, err_msg=expr)


def test_control_flow_compiled():
    """cond / while_loop / fori_loop / scan under tapeflow.function as eagerly."""
    def prog(x):
        y = ops.cond(ops.sum(x) > 0, lambda: x * 2.0, lambda: -x)
        n = ops.fori_loop(0, 3, lambda k, acc: acc + ops.cast(k, "float32"), ops.convert_to_tensor(0.0))
        w = ops.while_loop(lambda c: c < 20.0, lambda c: c * 3.0, ops.convert_to_tensor(1.0))
        c, ys = ops.scan(lambda c, t: (c + t, c * t), ops.convert_to_tensor(0.0), x)
        return y, n, w, c, ys
    x = tf.constant([1.0, -0.5, 2.0])
    for e, g in zip(prog(x), tf.function(prog)(x)):
        np.testing.assert_array_equal(np.asarray(e), np.asarray(g))
    assert float(prog(x)[2]) == 27.0  # 1 -> 3 -> 9 -> 27


def test_gradients_through_keras_ops():
    """Keras ops are tapeflow ops: the tape differentiates them (vs finite differences)."""
    x0 = np.array([[0.3, -1.2, 2.0], [1.5, 0.2, -0.7]])

    def loss(x):
        h = ops.gelu(ops.matmul(x, ops.transpose(x)))
        return ops.sum(ops.softmax(h, axis=-1) * ops.log_softmax(x[:, :2], axis=-1)) + ops.mean(ops.silu(x))
    x = tf.constant(x0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = loss(x)
    g = tape.gradient(out, x).numpy()
    fd = np.zeros_like(x0)
    for idx in np.ndindex(*x0.shape):
        dx = np.zeros_like(x0)
        dx[idx] = 1e-6
        fd[idx] = (float(loss(tf.constant(x0 + dx))) - float(loss(tf.constant(x0 - dx)))) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_coverage_and_missing_names():
    """Every name of Keras 3.15's ops either exists in tapeflow.keras.ops or raises a
    NotImplementedError naming it (never a bare AttributeError); most exist."""
    have = 0
    for name in REF["names"]:
        try:
            getattr(ops, name)
            have += 1
        except NotImplementedError as e:
            assert f"keras.ops.{name}" in str(e)
    # wave 19: 308 of Keras 3.15's 341 names (left: FFT/STFT, signal windows, CTC, eig, ...);
    # wave 20: ctc_loss, ctc_decode (greedy), sparsemax; wave 21: the FFT family, complex views, polar,
    # the windows (hamming, hanning, kaiser, bartlett, blackman) and eig (cplx21); histogram, nan-quantiles,
    # correlate, extract_sequences, fold/unfold, adaptive pooling, view, lu_factor, jvp, rearrange (keras21);
    # i0 (spec21): all 341
    assert have >= 341, have
    assert not hasattr(ops, "not_an_op") and hasattr(ops, "matmul")   # (the error is an AttributeError too)
    assert tf.keras.ops is ops
    with pytest.raises(NotImplementedError, match="keras.ops.nn.not_an_op"):
        ops.nn.not_an_op
    assert ops.nn.adaptive_max_pool is ops.adaptive_max_pool and ops.linalg.jvp is ops.jvp


def test_custom_layer_written_for_keras3_trains():
    """A custom layer in Keras 3's style (keras.ops only) inside a model that fit trains: its
    weights get gradients and the loss falls."""
    keras = tf.keras

    class GatedDense(keras.layers.Layer):
        def __init__(self, units):
            super().__init__()
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], 2 * self.units), initializer="glorot_uniform")
            self.b = self.add_weight(shape=(2 * self.units,), initializer="zeros")

        def call(self, x):
            h = ops.add(ops.matmul(x, self.w), self.b)
            a, g = ops.split(h, 2, axis=-1)
            return ops.multiply(a, ops.sigmoid(g))

    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x @ rng.normal(size=(4, 1))).astype(np.float32)
    model = keras.Sequential([keras.Input((4,)), GatedDense(8), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    hist = model.fit(x, y, epochs=15, batch_size=16, verbose=0)
    assert hist.history["loss"][-1] < 0.5 * hist.history["loss"][0]


import tapeflow.experimental.numpy as tnp  # noqa: E402

# compositions this wave wrote (not thin maps onto one op): each differentiated against central
# finite differences in float64, first order, and second order for the smooth ones
_X = np.array([[0.7, -1.3, 2.1], [-0.4, 1.6, 0.25]])
GRAD_FNS = {
    "tnp.logaddexp": lambda x: tnp.logaddexp(x, x[::-1]),
    "tnp.logaddexp2": lambda x: tnp.logaddexp2(x, 0.5 * x),
    "tnp.hypot": lambda x: tnp.hypot(x, x + 2.0),
    "tnp.cbrt": lambda x: tnp.cbrt(x),
    "tnp.sinc": lambda x: tnp.sinc(x),
    "tnp.log2": lambda x: tnp.log2(tnp.abs(x) + 0.1),
    "tnp.exp2": lambda x: tnp.exp2(x),
    "tnp.var": lambda x: tnp.var(x, axis=1),
    "tnp.std": lambda x: tnp.std(x),
    "tnp.average": lambda x: tnp.average(x, axis=1, weights=[1.0, 2.0, 3.0]),
    "tnp.cross": lambda x: tnp.cross(x, x[::-1]),
    "tnp.kron": lambda x: tnp.kron(x, x[:, :2]),
    "tnp.trace": lambda x: tnp.trace(tnp.matmul(x, tnp.transpose(x))),
    "tnp.diagonal": lambda x: tnp.diagonal(x, 1),
    "tnp.tril": lambda x: tnp.tril(x),
    "tnp.rot90": lambda x: tnp.rot90(x, 3) * tnp.arange(6.).reshape(3, 2),
    "tnp.polyval": lambda x: tnp.polyval(x[0], x[1]),
    "tnp.getitem": lambda x: x[(1, 0, 1), (2, 0, 0)],
    "ops.celu": lambda x: ops.celu(x),
    "ops.elu": lambda x: ops.elu(x),
    "ops.squareplus": lambda x: ops.squareplus(x),
    "ops.glu": lambda x: ops.glu(tnp.concatenate([x, x * 2.0], axis=1)),
    "ops.soft_shrink": lambda x: ops.soft_shrink(x),
    "ops.hard_silu": lambda x: ops.hard_silu(x),
    "ops.log_softmax_axes": lambda x: ops.log_softmax(x, axis=(0, 1)),
    "ops.layer_normalization": lambda x: ops.layer_normalization(x),
    "ops.rms_normalization": lambda x: ops.rms_normalization(x),
    "ops.dot_product_attention": lambda x: ops.dot_product_attention(*[tnp.reshape(x, (1, 2, 1, 3))] * 3,
                                                                     is_causal=True),
    "ops.quantile": lambda x: ops.quantile(x, [0.3, 0.8], axis=1),
    "ops.cdist": lambda x: ops.cdist(x, x[::-1] + 0.5),
    "ops.binary_crossentropy": lambda x: ops.binary_crossentropy(ops.sigmoid(x[::-1]), ops.sigmoid(x)),
    "ops.trapezoid": lambda x: ops.trapezoid(x, axis=1),
    "ops.nanmean": lambda x: ops.nanmean(x, axis=0),
}
SECOND_ORDER = ("tnp.logaddexp", "tnp.hypot", "tnp.var", "ops.celu", "ops.squareplus", "ops.layer_normalization",
                "ops.dot_product_attention")


def _fd(fn, x, eps=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        g[idx] = (float(fn(x + d)) - float(fn(x - d))) / (2 * eps)
    return g


def _grad(fn, x):
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = tf.reduce_sum(fn(x))
    return tape.gradient(out, x).numpy()


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
def test_composed_ops_gradients(name):
    fn = GRAD_FNS[name]
    loss = lambda x: tf.reduce_sum(fn(tf.constant(x))).numpy()  # noqa: E731
    np.testing.assert_allclose(_grad(fn, _X), _fd(loss, _X), rtol=1e-6, atol=1e-7, err_msg=name)
    if name in SECOND_ORDER:   # the gradient's own gradient (sum of the first gradient)
        first = lambda x: tf.constant(_grad(fn, x).sum())  # noqa: E731
        x = tf.constant(_X)
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                out = tf.reduce_sum(fn(x))
            g = tf.reduce_sum(inner.gradient(out, x))
        np.testing.assert_allclose(outer.gradient(g, x).numpy(), _fd(lambda v: float(first(v)), _X, 1e-5),
                                   rtol=1e-4, atol=1e-6, err_msg=name)


def test_result_type_is_keras():
    """Keras' result_type (the JAX-like lattice): Keras 3.15 gives these."""
    assert ops.result_type("int64", float) == np.float32       # Keras 3.15: float32
    assert ops.result_type("int32", "float32") == np.float32   # float32 (tnp: float64)
    assert ops.result_type("int8", "uint8") == np.int16        # int16
    assert ops.result_type(int, float) == np.float32           # float32
    assert ops.result_type(tf.constant([1]), 2.5) == np.float32
