"""tf.signal.fftnd/ifftnd/rfftnd/irfftnd and the raw tf.fftnd & co. (wave 22), composed on the
``fft`` primitive (a transpose carries ``axes`` last).

TF 2.21 registers no CPU kernel for FFTND (every call raises NotFoundError "no registered kernels"), so
no TF numbers exist on this machine; the reference is what TF's op doc and Python wrapper describe,
NumPy's fftn/ifftn/rfftn/irfftn with ``s=fft_length``, ``axes`` and ``norm`` (TF's GPU kernel computes
the same for successive trailing axes, the only ones it takes). Gradients against central differences
(complex inputs along real and imaginary directions, TF's convention), eager == compiled."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import errors

import signal_cases as C

_R = np.random.default_rng(2222)
Z = (_R.standard_normal((2, 3, 4, 5)) + 1j * _R.standard_normal((2, 3, 4, 5))).astype(np.complex64)
X = _R.standard_normal((2, 3, 4, 5)).astype(np.float32)
Z3 = (_R.standard_normal((3, 4, 6)) + 1j * _R.standard_normal((3, 4, 6))).astype(np.complex64)
X3 = _R.standard_normal((3, 4, 6)).astype(np.float32)

# (name, program(tf, x), input, NumPy reference(x))
CASES = [
    ("fftnd_all", lambda tf, z: tf.signal.fftnd(z), Z, lambda z: np.fft.fftn(z)),
    ("ifftnd_all", lambda tf, z: tf.signal.ifftnd(z), Z3, lambda z: np.fft.ifftn(z)),
    ("fftnd_trailing2", lambda tf, z: tf.signal.fftnd(z, axes=[-2, -1]), Z, lambda z: np.fft.fftn(z, axes=[-2, -1])),
    ("fftnd_axes_0_2", lambda tf, z: tf.signal.fftnd(z, axes=[0, 2]), Z, lambda z: np.fft.fftn(z, axes=[0, 2])),
    ("fftnd_crop_pad", lambda tf, z: tf.signal.fftnd(z, fft_length=[3, 7], axes=[-1, 1]), Z,
     lambda z: np.fft.fftn(z, s=[3, 7], axes=[-1, 1])),
    ("ifftnd_pad_forward", lambda tf, z: tf.signal.ifftnd(z, [5, 9], axes=[1, 2], norm="forward"), Z3,
     lambda z: np.fft.ifftn(z, s=[5, 9], axes=[1, 2], norm="forward")),
    ("fftnd_ortho", lambda tf, z: tf.signal.fftnd(z, axes=[1, 2], norm="ortho"), Z3,
     lambda z: np.fft.fftn(z, axes=[1, 2], norm="ortho")),
    ("fftnd_forward", lambda tf, z: tf.signal.fftnd(z, norm="forward"), Z3, lambda z: np.fft.fftn(z, norm="forward")),
    ("ifftnd_ortho_c128", lambda tf, z: tf.signal.ifftnd(tf.cast(z, tf.complex128), axes=[0, 1], norm="ortho"), Z3,
     lambda z: np.fft.ifftn(z.astype(np.complex128), axes=[0, 1], norm="ortho")),
    ("rfftnd_all", lambda tf, x: tf.signal.rfftnd(x), X3, lambda x: np.fft.rfftn(x)),
    ("rfftnd_axes_2_0_len", lambda tf, x: tf.signal.rfftnd(x, [6, 3], axes=[2, 0], norm="forward"), X,
     lambda x: np.fft.rfftn(x, s=[6, 3], axes=[2, 0], norm="forward")),
    ("rfftnd_4d", lambda tf, x: tf.signal.rfftnd(x, norm="ortho"), X, lambda x: np.fft.rfftn(x, norm="ortho")),
    ("irfftnd_all", lambda tf, z: tf.signal.irfftnd(z), Z3, lambda z: np.fft.irfftn(z)),
    ("irfftnd_axes_odd", lambda tf, z: tf.signal.irfftnd(z, [4, 9], axes=[1, 3], norm="ortho"), Z,
     lambda z: np.fft.irfftn(z, s=[4, 9], axes=[1, 3], norm="ortho")),
    ("irfftnd_forward_middle", lambda tf, z: tf.signal.irfftnd(z, axes=[0, 1], norm="forward"), Z3,
     lambda z: np.fft.irfftn(z, axes=[0, 1], norm="forward")),
    ("raw_fftnd", lambda tf, z: tf.fftnd(z, [4, 5], [2, 3]), Z, lambda z: np.fft.fftn(z, axes=[2, 3])),
    ("raw_irfftnd", lambda tf, z: tf.irfftnd(z, [3, 4, 10], [0, 1, 2], Treal=z.dtype.real_dtype), Z3, lambda z: np.fft.irfftn(z, s=[3, 4, 10])),
]
IDS = [c[0] for c in CASES]


def _run(prog, x, diff=True):
    x = tf.constant(x)
    with tf.GradientTape() as t:
        t.watch(x)
        out = prog(tf, x)
        w, w2 = C.cotangent(out.numpy())
        y = C.loss(tf, out, w, w2)
    return out, t.gradient(y, x)


@pytest.mark.parametrize("name, prog, x, ref", CASES, ids=IDS)
def test_values_are_numpys_fftn(name, prog, x, ref):
    out, _ = _run(prog, x)
    want = ref(x)
    single = out.dtype in (tf.complex64, tf.float32)
    # dtype: TF's (complex64 in, complex64 out; float32 <-> complex64), NumPy computes float32 in single
    assert out.dtype.as_numpy_dtype == (np.complex64 if want.dtype.kind == "c" else np.float32) or not single
    assert tuple(out.shape) == want.shape, name
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(out.numpy(), want, rtol=0, atol=(3e-6 if single else 1e-12) * scale, err_msg=name)


@pytest.mark.parametrize("name, prog, x, ref", CASES, ids=IDS)
def test_gradients_match_finite_differences(name, prog, x, ref):
    x64 = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    out, g = _run(prog, x64)
    w, w2 = C.cotangent(out.numpy())

    def value(v):
        return float(C.loss(tf, prog(tf, tf.constant(v)), w, w2).numpy())
    rng = np.random.default_rng(1)
    eps = 1e-6
    for part in ((1.0, 1j) if x64.dtype.kind == "c" else (1.0,)):
        d = rng.standard_normal(x64.shape) * part
        numeric = (value(x64 + eps * d) - value(x64 - eps * d)) / (2 * eps)
        analytic = float(np.sum(np.real(np.conj(g.numpy()) * d)))
        assert abs(analytic - numeric) <= 1e-6 * (1 + abs(numeric)), (name, analytic, numeric)


@pytest.mark.parametrize("backend, fuse", [("python", "0"), ("python", "1"), ("interpreter", "0")])
def test_compiled_equals_eager(backend, fuse, monkeypatch):
    monkeypatch.setenv("TAPEFLOW_FUSE_AFTER", fuse)
    for name, prog, x, _ in CASES:
        want_out, want_g = _run(prog, x)

        def f(v, prog=prog):
            with tf.GradientTape() as t:
                t.watch(v)
                out = prog(tf, v)
                w, w2 = C.cotangent(np.zeros(tuple(out.shape)))
                y = C.loss(tf, out, w, w2)
            return out, t.gradient(y, v)
        got_out, got_g = tf.function(f, backend=backend)(tf.constant(x))
        for g, w in ((got_out, want_out), (got_g, want_g)):
            assert g.dtype == w.dtype, name
            np.testing.assert_array_equal(g.numpy(), w.numpy(), err_msg=f"{name} {backend} fuse={fuse}")


def test_second_order_through_rfftnd():
    x0 = np.random.default_rng(3).standard_normal((3, 4))
    v = np.random.default_rng(4).standard_normal((3, 4))

    def inner(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.abs(tf.signal.rfftnd(x, [4, 6], axes=[1, 0])) ** 2 * tf.reduce_sum(x))
        return t.gradient(y, x)
    x = tf.constant(x0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        h = tf.reduce_sum(inner(x) * v)
    g2 = outer.gradient(h, x).numpy()
    d = np.random.default_rng(5).standard_normal((3, 4))
    eps = 1e-6
    num = (float(tf.reduce_sum(inner(tf.constant(x0 + eps * d)) * v)) -
           float(tf.reduce_sum(inner(tf.constant(x0 - eps * d)) * v))) / (2 * eps)
    assert abs(float(np.sum(g2 * d)) - num) < 1e-5 * (1 + abs(num))


def test_dtypes_and_defaults_follow_tf():
    # TF 2.21's wrapper: rfftnd float32 -> complex64, float64 -> complex128; irfftnd's default last
    # length 2 * (n - 1); axes default to every axis; the raw op's Tcomplex/Treal default to 64-bit pairs
    assert tf.signal.rfftnd(tf.constant(X3)).dtype is tf.complex64
    assert tf.signal.rfftnd(tf.constant(X3, tf.float64)).dtype is tf.complex128
    assert tf.signal.irfftnd(tf.constant(Z3)).shape == (3, 4, 10)
    assert tf.signal.irfftnd(tf.constant(Z3, tf.complex128)).dtype is tf.float64
    assert tf.rfftnd(tf.constant(X3), [4, 6], [1, 2]).dtype is tf.complex64
    assert tf.rfftnd(tf.constant(X3, tf.float64), [4, 6], [1, 2], Tcomplex=tf.complex128).dtype is tf.complex128
    # an empty input's transform is empty (TF's wrapper skips padding it; the kernel passes it through)
    assert tf.signal.fftnd(tf.zeros((0, 3), tf.complex64)).shape == (0, 3)


@pytest.mark.parametrize("fn, exc, needle", [
    # TF 2.21 (the wrapper, before the missing kernel): ValueError "RFFT requires tf.float32 or tf.float64 inputs"
    (lambda: tf.signal.rfftnd(tf.constant(Z3)), ValueError, "RFFT requires tf.float32 or tf.float64"),
    (lambda: tf.signal.irfftnd(tf.constant(X3)), ValueError, "IRFFT requires tf.complex64 or tf.complex128"),
    # TF 2.21: Tcomplex's allowed list (InvalidArgumentError)
    (lambda: tf.signal.fftnd(tf.constant(X3)), errors.InvalidArgumentError, "requires complex64 or complex128"),
    # TF's kernel text: "Input must have rank of at least 4 but got: [3, 4, 6]"
    (lambda: tf.signal.fftnd(tf.constant(Z3), axes=[0, 1, 2, 3]), errors.InvalidArgumentError,
     "rank of at least 4"),
    (lambda: tf.signal.fftnd(tf.constant(Z3), axes=[0, 3]), errors.InvalidArgumentError, "out of range"),
    (lambda: tf.signal.fftnd(tf.constant(Z3), axes=[1, -2]), errors.InvalidArgumentError, "twice"),
    (lambda: tf.signal.fftnd(tf.constant(Z3), axes=[]), errors.InvalidArgumentError, "at least one axis"),
    # TF's kernel texts: "fft_length must have shape [2]...", "fft_length[1] must >= 0, but got: -3"
    (lambda: tf.signal.fftnd(tf.constant(Z3), [4], axes=[0, 1]), errors.InvalidArgumentError,
     r"fft_length must have shape \[2\]"),
    (lambda: tf.signal.rfftnd(tf.constant(X3), [4, -3], axes=[0, 1]), errors.InvalidArgumentError,
     r"fft_length\[1\] must >= 0"),
    (lambda: tf.signal.fftnd(tf.constant(Z3), norm="unit"), ValueError, "norm must be one of"),
    (lambda: tf.rfftnd(tf.constant(X3, tf.float64), [4, 6], [1, 2]), errors.InvalidArgumentError, "Tcomplex"),
])
def test_bad_inputs(fn, exc, needle):
    with pytest.raises(exc, match=needle):
        fn()


def test_errors_are_the_same_compiled():
    f = tf.function(lambda z: tf.signal.fftnd(z, axes=[0, 3]))
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        f(tf.constant(Z3))
    g = tf.function(lambda z, a: tf.signal.fftnd(z, axes=a))
    with pytest.raises(TypeError, match="axes must be known"):
        g(tf.constant(Z3), tf.constant([0, 1]))
