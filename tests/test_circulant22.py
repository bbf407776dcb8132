"""tf.linalg.LinearOperatorCirculant/2D/3D (wave 22) against TF 2.21 (tests/data/circulant22_tf.json,
recorded by tests/tf_reference/make_circulant_reference.py on the cases of circulant_cases.py): every
public method's value, hints, derived types, TF's errors; eager == compiled; gradients with respect to the
spectrum against finite differences (complex: real and imaginary directions, TF's convention)."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "tf_reference"))
from circulant_cases import operators, evaluate, bad, _spectra  # noqa: E402

REF = json.loads((HERE / "data" / "circulant22_tf.json").read_text())
L = tf.linalg


def _arr(v):
    if isinstance(v, dict) and "re" in v:
        return np.asarray(v["re"]) + 1j * np.asarray(v["im"])
    return np.asarray(v, np.float64)


def _close(got, want, tol, where):
    if isinstance(want, dict) and "error" in want:   # TF refused: the same exception class
        assert isinstance(got, dict) and got.get("error") == want["error"], (where, got, want)
        return
    if isinstance(want, (str, bool)) or want is None or (isinstance(want, list) and want and
                                                          any(isinstance(w, (bool, type(None))) for w in want)):
        assert got == want, (where, got, want)
        return
    g, w = _arr(got), _arr(want)
    assert g.shape == w.shape, (where, g.shape, w.shape)
    scale = max(1.0, float(np.abs(w).max())) if w.size else 1.0
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale, err_msg=where)


@pytest.mark.parametrize("key", sorted(REF["values"]))
def test_every_method_matches_tf(key):
    op = operators(L, tf)[key]()
    got = evaluate(op)
    want = REF["values"][key]
    # single precision: pocketfft vs TF's ducc FFT round differently (a few float32 ulps of the scale)
    tol = 5e-5 if want["dtype"] in ("complex64", "float32") else 1e-9
    for k, w in want.items():
        _close(got[k], w, tol, f"{key} {k}")
    assert set(got) == set(want)


_OWN_WORDING = {"assert_hermitian_spectrum"}   # (TF 2.21's own check fails there: "cannot compute Less ... int32")


@pytest.mark.parametrize("case", sorted(REF["bad"]))
def test_bad_inputs_raise_tfs_errors(case):
    want = REF["bad"][case]
    cls = {"InvalidArgumentError": tf.errors.InvalidArgumentError, "ValueError": ValueError, "TypeError": TypeError,
           "NotImplementedError": NotImplementedError}[want["error"]]
    with pytest.raises(cls) as info:
        bad(L, tf)[case]()
    first = want["message"].split("\n")[0].strip().rstrip(".")
    if case not in _OWN_WORDING:
        assert first.split(" Received:")[0].split(" Found:")[0] in str(info.value), (case, str(info.value), first)


@pytest.mark.parametrize("name", ["c1_complex128", "c1_batch", "c2_batch128", "c3_complex128", "c1_hermitian_float64"])
def test_compiled_equals_eager(name):
    op = operators(L, tf)[name]()
    n = op.domain_dimension
    dt = op.dtype.as_numpy_dtype
    x = np.random.RandomState(1).randn(n, 3).astype(dt)

    def f(x):
        return op.matmul(x), op.solve(x, adjoint=True), op.log_abs_determinant(), op.to_dense()
    want = f(tf.constant(x))
    got = tf.function(f)(tf.constant(x))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def _loss(spectrum, cls, io, x, w):
    op = cls(spectrum, input_output_dtype=io)
    y = op.matmul(x) + op.solve(x, adjoint=True)
    r = tf.math.real(y) if y.dtype.is_complex else y
    i = tf.math.imag(y) if y.dtype.is_complex else tf.zeros_like(y)
    return tf.reduce_sum(r * w) + tf.reduce_sum(i * w[::-1]) + tf.reduce_sum(tf.math.real(op.determinant()) * 0.1) \
        + tf.reduce_sum(tf.math.real(op.log_abs_determinant()))


@pytest.mark.parametrize("depth, key, io", [(1, "c4", "complex128"), (2, "c23", "complex128"),
                                            (3, "c223", "complex128"), (1, "h", "float64")])
def test_gradients_match_finite_differences(depth, key, io):
    cls = (L.LinearOperatorCirculant, L.LinearOperatorCirculant2D, L.LinearOperatorCirculant3D)[depth - 1]
    s0 = _spectra()[key].astype(np.complex128)
    n = int(np.prod(s0.shape))
    r = np.random.RandomState(3)
    x = r.randn(n, 2) + (1j * r.randn(n, 2) if io == "complex128" else 0)
    w = r.randn(n, 2)
    xs = tf.constant(x.astype(io))
    s = tf.constant(s0)
    with tf.GradientTape() as t:
        t.watch(s)
        y = _loss(s, cls, io, xs, w)
    g = t.gradient(y, s).numpy()
    eps = 1e-6
    for part in (1.0, 1j):
        d = r.randn(*s0.shape) * part
        num = (float(_loss(tf.constant(s0 + eps * d), cls, io, xs, w)) -
               float(_loss(tf.constant(s0 - eps * d), cls, io, xs, w))) / (2 * eps)
        ana = float(np.sum(np.real(np.conj(g) * d)))
        assert abs(ana - num) <= 1e-6 * (1 + abs(num)), (ana, num)


def test_variable_spectrum_is_tracked_and_trained():
    v = tf.Variable(np.array([2.0, 1.0 + 1j, 3.0, 1.0 - 1j], np.complex64))
    op = L.LinearOperatorCirculant(v)
    assert list(op.trainable_variables) == [v]
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.abs(op.matvec(tf.ones(4, tf.complex64))))
    assert t.gradient(y, v) is not None
