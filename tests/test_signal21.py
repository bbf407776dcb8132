"""tf.signal (wave 21) against TF 2.21 (tests/data/signal21_tf_reference.npz, made by
tests/tf_reference/make_signal_reference.py from tests/signal_cases.py): values and gradients,
eagerly and compiled (python, fused, interpreter), gradients also against finite differences;
the FFT kinds' rules and TF's errors."""
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import errors

import signal_cases as C

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "signal21_tf_reference.npz"))
IDS = [c[0] for c in C.CASES]


def _tol(name, dtype):
    # float32 FFTs: NumPy's pocketfft and TF's kernels round differently (a few float32 ulps of
    # the result's scale); windows are computed in float64 and rounded once (TF: in float32)
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return (2e-5, 2e-5) if single else (1e-10, 1e-10)


def _run(prog, inputs, diff):
    xs = [tf.constant(x) for x in inputs]
    with tf.GradientTape() as t:
        for i in diff:
            t.watch(xs[i])
        out = prog(tf, *xs)
        w, w2 = C.cotangent(out.numpy())
        y = C.loss(tf, out, w, w2)
    return out, (t.gradient(y, [xs[i] for i in diff]) if diff else [])


@pytest.mark.parametrize("name, prog, inputs, diff", C.CASES, ids=IDS)
def test_values_and_gradients_are_tfs(name, prog, inputs, diff):
    out, grads = _run(prog, inputs, diff)
    want = REF[f"{name}/out"]
    assert out.dtype == want.dtype and tuple(out.shape) == want.shape, name
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    rtol, atol = _tol(name, want.dtype)
    np.testing.assert_allclose(out.numpy(), want, rtol=rtol, atol=atol * scale, err_msg=name)
    if f"{name}/grad_error" in REF:   # TF 2.21 has no gradient here (rfft3d/irfft3d): differences below
        return
    for i, g in zip(diff, grads):
        gw = REF[f"{name}/grad{i}"]
        assert g.dtype == gw.dtype and tuple(g.shape) == gw.shape, name
        gs = max(1.0, float(np.max(np.abs(gw)))) if gw.size else 1.0
        np.testing.assert_allclose(g.numpy(), gw, rtol=rtol * 5, atol=atol * 5 * gs, err_msg=f"{name} grad{i}")


@pytest.mark.parametrize("backend, fuse", [("python", "0"), ("python", "1"), ("interpreter", "0")])
def test_compiled_equals_eager(backend, fuse, monkeypatch):
    monkeypatch.setenv("TAPEFLOW_FUSE_AFTER", fuse)
    for name, prog, inputs, diff in C.CASES:
        want_out, want_grads = _run(prog, inputs, diff)

        def f(*xs, prog=prog, diff=diff):
            with tf.GradientTape() as t:
                for i in diff:
                    t.watch(xs[i])
                out = prog(tf, *xs)
                w, w2 = C.cotangent(np.zeros(tuple(out.shape)))
                y = C.loss(tf, out, w, w2)
            return [out] + (t.gradient(y, [xs[i] for i in diff]) if diff else [])
        got = tf.function(f, backend=backend)(*[tf.constant(x) for x in inputs])
        for g, w in zip(got, [want_out] + list(want_grads)):
            assert g.dtype == w.dtype, name
            np.testing.assert_array_equal(g.numpy(), w.numpy(), err_msg=f"{name} {backend} fuse={fuse}")


def _fd_check(prog, inputs, i, eps=1e-6):
    """The tape's gradient of the case's loss w.r.t. input i, in double precision, against
    central differences along random real (and, for a complex input, imaginary) directions."""
    x64 = [x.astype(np.complex128 if x.dtype.kind == "c" else np.float64) for x in inputs]
    out, (g,) = _run(prog, x64, [i])
    w, w2 = C.cotangent(out.numpy())

    def value(xs):
        o = prog(tf, *[tf.constant(x) for x in xs])
        return float(C.loss(tf, o, w, w2).numpy())
    rng = np.random.default_rng(1)
    for part in ((1.0, 1j) if x64[i].dtype.kind == "c" else (1.0,)):
        d = rng.standard_normal(x64[i].shape) * part
        plus = [x + eps * d if k == i else x for k, x in enumerate(x64)]
        minus = [x - eps * d if k == i else x for k, x in enumerate(x64)]
        numeric = (value(plus) - value(minus)) / (2 * eps)
        analytic = float(np.sum(np.real(np.conj(g.numpy()) * d)))
        assert abs(analytic - numeric) <= 1e-6 * (1 + abs(numeric)), (analytic, numeric)


# programs whose constants are float32 by construction (windows of a float32 signal are float32 in
# the program itself): every case with inputs runs in double precision for the differences
FD_CASES = [c for c in C.CASES if c[3] and c[0] not in ("mfcc_pipeline",)]


@pytest.mark.parametrize("name, prog, inputs, diff", FD_CASES, ids=[c[0] for c in FD_CASES])
def test_gradients_match_finite_differences(name, prog, inputs, diff):
    _fd_check(prog, inputs, diff[0])


def test_second_order_through_rfft_and_irfft():
    x0 = np.random.default_rng(3).standard_normal(7)

    def inner(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.abs(tf.signal.rfft(x, [10])) ** 2) * \
                tf.reduce_sum(tf.signal.irfft(tf.signal.rfft(x), [7]) * x)
        return t.gradient(y, x)
    v = np.random.default_rng(4).standard_normal(7)
    x = tf.constant(x0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        h = tf.reduce_sum(inner(x) * v)
    g2 = outer.gradient(h, x).numpy()
    d = np.random.default_rng(5).standard_normal(7)
    eps = 1e-6
    num = (float(tf.reduce_sum(inner(tf.constant(x0 + eps * d)) * v)) -
           float(tf.reduce_sum(inner(tf.constant(x0 - eps * d)) * v))) / (2 * eps)
    assert abs(float(np.sum(g2 * d)) - num) < 1e-5


def test_dtypes_follow_tf():
    x = tf.constant(C.X5)
    # TF 2.21: rfft float32 -> complex64, float64 -> complex128; irfft back
    assert tf.signal.rfft(x).dtype is tf.complex64
    assert tf.signal.rfft(tf.cast(x, tf.float64)).dtype is tf.complex128
    assert tf.signal.irfft(tf.signal.rfft(tf.cast(x, tf.float64))).dtype is tf.float64
    # TF 2.21: a length-0 rfft has no bins; an empty signal's rfft is empty
    assert tf.signal.rfft(tf.zeros((0,))).shape == (0,)
    assert tf.signal.fft(tf.zeros((0,), tf.complex64)).shape == (0,)
    assert tf.signal.irfft(tf.constant(C.Z5)).shape == (8,)   # default length 2 * (5 - 1)


@pytest.mark.parametrize("fn, exc, needle", [
    # TF 2.21: InvalidArgumentError "Value for attr 'Tcomplex' of float is not in the list of allowed values"
    (lambda: tf.signal.fft(tf.constant(C.X5)), errors.InvalidArgumentError, "FFT: requires complex64 or complex128"),
    # TF 2.21: ValueError "RFFT requires tf.float32 or tf.float64 inputs, got: ..."
    (lambda: tf.signal.rfft(tf.constant([1, 2])), ValueError, "RFFT requires tf.float32 or tf.float64"),
    (lambda: tf.signal.rfft(tf.constant(C.Z5)), ValueError, "RFFT requires tf.float32 or tf.float64"),
    (lambda: tf.signal.irfft(tf.constant(C.X5)), ValueError, "IRFFT requires tf.complex64 or tf.complex128"),
    # TF 2.21: InvalidArgumentError "Input must have rank of at least 2 but got: [5]"
    (lambda: tf.signal.fft2d(tf.constant(C.Z5)), errors.InvalidArgumentError, "rank of at least 2"),
    # TF 2.21: ValueError "Shape () must have rank at least 1"
    (lambda: tf.signal.rfft(tf.constant(1.0)), ValueError, "must have rank at least 1"),
    # TF 2.21: InvalidArgumentError "fft_length[0] must >= 0, but got: -1" / "fft_length must have shape [1]"
    (lambda: tf.signal.rfft(tf.constant(C.X5), [-1]), errors.InvalidArgumentError, r"fft_length\[0\] must >= 0"),
    (lambda: tf.signal.rfft(tf.constant(C.X5), [2, 3]), errors.InvalidArgumentError, r"fft_length must have shape \[1\]"),
    (lambda: tf.signal.mdct(tf.constant(C.SIG), 6), ValueError, "multiple of 4"),
    (lambda: tf.signal.dct(tf.constant(C.LOGMEL), type=5), ValueError, "Types I, II, III and IV"),
    (lambda: tf.signal.dct(tf.constant(C.LOGMEL), type=1, norm="ortho"), ValueError, "not supported for the Type-I"),
    (lambda: tf.signal.hann_window(4, dtype=tf.int32), ValueError, "dtype must be a floating point type"),
    (lambda: tf.signal.linear_to_mel_weight_matrix(upper_edge_hertz=5000.), ValueError, "Nyquist"),
])
def test_bad_inputs_raise_tfs_errors(fn, exc, needle):
    with pytest.raises(exc, match=needle):
        fn()


def test_fftnd_exists_since_wave_22():
    # (TF 2.21 has tf.signal.fftnd but no CPU kernel for it; tapeflow computes it: tests/test_fftnd22.py)
    assert callable(tf.signal.fftnd) and callable(tf.signal.rfftnd)


def test_fft_length_must_be_static_in_compiled_code():
    f = tf.function(lambda x, n: tf.signal.rfft(x, n))
    with pytest.raises(TypeError, match="fft_length must be known"):
        f(tf.constant(C.X5), tf.constant([4]))
    # a constant length works compiled too
    np.testing.assert_array_equal(tf.function(lambda x: tf.signal.rfft(x, tf.constant([4])))(
        tf.constant(C.X5)).numpy(), tf.signal.rfft(tf.constant(C.X5), [4]).numpy())


def test_a_numpy_float64_scalar_operand_keeps_the_gradient_float32():
    # (found by mdct's 1 / np.sqrt(2)): the tape recorded the np.float64 scalar, and mul's vjp on
    # arrays computed float32 * float64 in float64 (NumPy 2); the operand is weak, as a Python float
    x = tf.ones((2, 3))
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(x * np.float64(0.5))
    g = t.gradient(y, x)
    assert g.dtype is tf.float32 and np.array_equal(g.numpy(), np.full((2, 3), 0.5, np.float32))


# --- keras.ops' FFT family and complex views, against Keras 3 on TF 2.21 ------------------------------

import keras_fft_cases as KC  # noqa: E402

KREF = np.load(os.path.join(os.path.dirname(__file__), "data", "keras_fft21_reference.npz"))


@pytest.mark.parametrize("name, prog, inputs", KC.CASES, ids=[c[0] for c in KC.CASES])
def test_keras_ops_fft_family_is_keras(name, prog, inputs):
    from tapeflow.keras import ops
    out = prog(ops, *inputs)
    outs = out if isinstance(out, (tuple, list)) else [out]
    assert len(outs) == len([k for k in KREF.files if k.startswith(name + "/")])
    for i, o in enumerate(outs):
        want = KREF[f"{name}/{i}"]
        assert o.numpy().dtype == want.dtype and o.numpy().shape == want.shape, name
        np.testing.assert_allclose(o.numpy(), want, rtol=2e-5, atol=2e-5 * max(1.0, float(np.max(np.abs(want)))),
                                   err_msg=name)
    # traced: the same values
    traced = tf.function(lambda *a: prog(ops, *a))(*[tf.constant(x) for x in inputs])
    traced = traced if isinstance(traced, (tuple, list)) else [traced]
    for o, t in zip(outs, traced):
        np.testing.assert_array_equal(t.numpy(), o.numpy())


@pytest.mark.parametrize("name, prog, inputs", KC.LAYER_CASES, ids=[c[0] for c in KC.LAYER_CASES])
def test_keras_mel_spectrogram_is_keras(name, prog, inputs):
    out = prog(tf.keras, *inputs)
    want = KREF[f"{name}/0"]
    assert out.numpy().dtype == want.dtype and out.numpy().shape == want.shape
    np.testing.assert_allclose(out.numpy(), want, rtol=2e-5, atol=1e-4)
    traced = tf.function(lambda x: prog(tf.keras, x))(tf.constant(inputs[0]))
    np.testing.assert_allclose(traced.numpy(), out.numpy(), rtol=1e-6, atol=1e-5)


def test_keras_mel_spectrogram_config_round_trip():
    layer = tf.keras.layers.MelSpectrogram(fft_length=64, sequence_stride=16, num_mel_bins=10)
    again = tf.keras.layers.MelSpectrogram.from_config(layer.get_config())
    x = tf.constant(KC.AUDIO)
    np.testing.assert_array_equal(again(x).numpy(), layer(x).numpy())
    with pytest.raises(ValueError, match="must be greater than or equal to"):
        tf.keras.layers.MelSpectrogram(fft_length=16, sequence_length=32)


@pytest.mark.parametrize("fn, exc, needle", [
    (lambda ops: ops.stft(np.ones(20, np.int32), 8, 4, 16), TypeError, "Expected `float32` or `float64`"),
    (lambda ops: ops.stft(KC.X, 8, 4, 4), ValueError, "must equal or larger than `sequence_length`"),
    (lambda ops: ops.stft(KC.X, 8, 4, 16, window="blackman"), ValueError, "must be one of"),
    (lambda ops: ops.fft(KC.RE), ValueError, "tuple of two tensors"),
    (lambda ops: ops.fft((KC.RE, KC.IM[:2])), ValueError, "should have the same shape"),
    (lambda ops: ops.view_as_complex(KC.RE), ValueError, "must be size 2"),
])
def test_keras_ops_fft_errors_are_keras(fn, exc, needle):
    from tapeflow.keras import ops
    with pytest.raises(exc, match=needle):
        fn(ops)


def test_tnp_complex_parts():
    import tapeflow.experimental.numpy as tnp
    z = tnp.asarray(np.array([1 + 2j, 3], np.complex64))
    assert tnp.real(z).numpy().tolist() == [1.0, 3.0] and tnp.imag(z).numpy().tolist() == [2.0, 0.0]
    assert tnp.conj(z).numpy().tolist() == [1 - 2j, 3 + 0j]
    np.testing.assert_allclose(tnp.angle(z, deg=True).numpy(), np.angle(z.numpy(), deg=True), rtol=1e-6)
    assert tnp.iscomplex(z).numpy().tolist() == [True, False] and tnp.iscomplexobj(z)
    assert not tnp.iscomplexobj(tnp.asarray([1.0])) and tnp.isrealobj(tnp.asarray([1.0]))
