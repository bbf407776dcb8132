"""tf.signal cases (wave 21), shared by the TF 2.21 generator
(tests/tf_reference/make_signal_reference.py -> tests/data/signal21_tf_reference.npz) and
tests/test_signal21.py. Each case: (name, program, inputs, differentiable input indices).
``program(tf, *inputs)`` uses only TF's public API, so it runs unchanged under TF and tapeflow;
inputs are NumPy arrays from a fixed seed (complex ones as complex64)."""
import numpy as np

_R = np.random.default_rng(2121)


def _f(*shape):
    return _R.standard_normal(shape).astype(np.float32)


def _c(*shape):
    return (_R.standard_normal(shape) + 1j * _R.standard_normal(shape)).astype(np.complex64)


SIG = _f(2, 37)          # a batch of two short signals
SIG64 = _f(50).astype(np.float64)
Z5, Z23, Z234 = _c(5), _c(2, 3), _c(2, 3, 4)
X5, X23, X234 = _f(5), _f(2, 3), _f(2, 3, 4)
SPEC = _c(2, 6, 9)       # a [batch, frames, fft_length // 2 + 1] spectrogram (fft_length 16)
LOGMEL = _f(3, 4, 10)
MDCT = _f(2, 5, 8)

CASES = [
    # FFTs: complex <-> complex, real <-> complex; fft_length crops and pads
    ("fft", lambda tf, z: tf.signal.fft(z), [Z5], [0]),
    ("ifft", lambda tf, z: tf.signal.ifft(z), [Z5], [0]),
    ("fft2d", lambda tf, z: tf.signal.fft2d(z), [Z23], [0]),
    ("ifft2d", lambda tf, z: tf.signal.ifft2d(z), [Z234], [0]),
    ("fft3d", lambda tf, z: tf.signal.fft3d(z), [Z234], [0]),
    ("ifft3d", lambda tf, z: tf.signal.ifft3d(z), [Z234], [0]),
    ("fft_c128", lambda tf, z: tf.signal.fft(tf.cast(z, tf.complex128)), [Z5], [0]),
    ("rfft", lambda tf, x: tf.signal.rfft(x), [X5], [0]),
    ("rfft_pad8", lambda tf, x: tf.signal.rfft(x, [8]), [X5], [0]),
    ("rfft_f64", lambda tf, x: tf.signal.rfft(x), [SIG64], [0]),
    ("irfft", lambda tf, z: tf.signal.irfft(z), [Z5], [0]),
    ("irfft_len9", lambda tf, z: tf.signal.irfft(z, [9]), [Z5], [0]),
    ("irfft_len12", lambda tf, z: tf.signal.irfft(z, [12]), [Z5], [0]),
    ("rfft2d", lambda tf, x: tf.signal.rfft2d(x), [X234], [0]),
    ("rfft2d_len", lambda tf, x: tf.signal.rfft2d(x, [3, 6]), [X23], [0]),
    ("irfft2d", lambda tf, z: tf.signal.irfft2d(z), [Z234], [0]),
    ("rfft3d", lambda tf, x: tf.signal.rfft3d(x), [X234], [0]),
    ("irfft3d", lambda tf, z: tf.signal.irfft3d(z, [2, 3, 6]), [Z234], [0]),
    ("fftshift", lambda tf, x: tf.signal.fftshift(x), [X234], [0]),
    ("ifftshift_axes", lambda tf, x: tf.signal.ifftshift(x, axes=[0, 2]), [X234], [0]),
    # framing
    ("frame", lambda tf, x: tf.signal.frame(x, 8, 5), [SIG], [0]),
    ("frame_pad_end", lambda tf, x: tf.signal.frame(x, 8, 5, pad_end=True, pad_value=0.5), [SIG], [0]),
    ("frame_axis0", lambda tf, x: tf.signal.frame(x, 3, 2, axis=0), [X234], [0]),
    ("overlap_and_add", lambda tf, x: tf.signal.overlap_and_add(x, 3), [SIG.reshape(2, 37, 1)[:, :36].reshape(2, 6, 6)], [0]),
    ("overlap_and_add_step_eq", lambda tf, x: tf.signal.overlap_and_add(x, 4), [X234], [0]),
    ("overlap_and_add_step5", lambda tf, x: tf.signal.overlap_and_add(x, 5), [X234], [0]),
    # windows
    ("hann", lambda tf: tf.signal.hann_window(10), [], []),
    ("hann_symmetric", lambda tf: tf.signal.hann_window(9, periodic=False), [], []),
    ("hann_odd_periodic", lambda tf: tf.signal.hann_window(7), [], []),
    ("hann_1", lambda tf: tf.signal.hann_window(1), [], []),
    ("hamming", lambda tf: tf.signal.hamming_window(11, dtype=tf.float64), [], []),
    ("kaiser", lambda tf: tf.signal.kaiser_window(12, beta=6.), [], []),
    ("kaiser_odd", lambda tf: tf.signal.kaiser_window(7), [], []),
    ("kbd", lambda tf: tf.signal.kaiser_bessel_derived_window(12, beta=4.), [], []),
    ("vorbis", lambda tf: tf.signal.vorbis_window(8), [], []),
    # spectral transforms
    ("stft", lambda tf, x: tf.signal.stft(x, 16, 4), [SIG], [0]),
    ("stft_fft20_pad_end", lambda tf, x: tf.signal.stft(x, 12, 5, fft_length=20, pad_end=True), [SIG], [0]),
    ("stft_no_window", lambda tf, x: tf.signal.stft(x, 8, 8, window_fn=None), [SIG], [0]),
    ("inverse_stft", lambda tf, s: tf.signal.inverse_stft(s, 16, 4), [SPEC], [0]),
    ("inverse_stft_crop", lambda tf, s: tf.signal.inverse_stft(s, 12, 4, fft_length=16), [SPEC], [0]),
    ("inverse_stft_pad", lambda tf, s: tf.signal.inverse_stft(s, 20, 5, fft_length=16), [SPEC], [0]),
    ("stft_roundtrip", lambda tf, x: tf.signal.inverse_stft(
        tf.signal.stft(x, 16, 4), 16, 4, window_fn=tf.signal.inverse_stft_window_fn(4)), [SIG], [0]),
    ("inverse_stft_window_fn", lambda tf: tf.signal.inverse_stft_window_fn(3)(10, tf.float32), [], []),
    ("mel_matrix", lambda tf: tf.signal.linear_to_mel_weight_matrix(8, 17, 16000, 100., 7000.), [], []),
    ("mel_matrix_default", lambda tf: tf.signal.linear_to_mel_weight_matrix(), [], []),
    ("mfccs", lambda tf, x: tf.signal.mfccs_from_log_mel_spectrograms(x), [LOGMEL], [0]),
    ("dct1", lambda tf, x: tf.signal.dct(x, type=1), [LOGMEL], [0]),
    ("dct2", lambda tf, x: tf.signal.dct(x), [LOGMEL], [0]),
    ("dct2_ortho", lambda tf, x: tf.signal.dct(x, norm="ortho"), [LOGMEL], [0]),
    ("dct3", lambda tf, x: tf.signal.dct(x, type=3), [LOGMEL], [0]),
    ("dct3_ortho", lambda tf, x: tf.signal.dct(x, type=3, norm="ortho"), [LOGMEL], [0]),
    ("dct4", lambda tf, x: tf.signal.dct(x, type=4), [LOGMEL], [0]),
    ("dct4_ortho_n12", lambda tf, x: tf.signal.dct(x, type=4, n=12, norm="ortho"), [LOGMEL], [0]),
    ("dct2_n6", lambda tf, x: tf.signal.dct(x, n=6), [LOGMEL], [0]),
    ("idct2", lambda tf, x: tf.signal.idct(x), [LOGMEL], [0]),
    ("idct2_ortho", lambda tf, x: tf.signal.idct(x, norm="ortho"), [LOGMEL], [0]),
    ("idct1", lambda tf, x: tf.signal.idct(x, type=1), [LOGMEL], [0]),
    ("idct4", lambda tf, x: tf.signal.idct(x, type=4), [LOGMEL], [0]),
    ("mdct", lambda tf, x: tf.signal.mdct(x, 8), [SIG], [0]),
    ("mdct_ortho_pad_end", lambda tf, x: tf.signal.mdct(x, 12, pad_end=True, norm="ortho"), [SIG], [0]),
    ("mdct_no_window", lambda tf, x: tf.signal.mdct(x, 8, window_fn=None), [SIG], [0]),
    ("inverse_mdct", lambda tf, x: tf.signal.inverse_mdct(x), [MDCT], [0]),
    ("inverse_mdct_ortho", lambda tf, x: tf.signal.inverse_mdct(x, norm="ortho"), [MDCT], [0]),
    ("mdct_roundtrip", lambda tf, x: tf.signal.inverse_mdct(tf.signal.mdct(x, 8)), [SIG], [0]),
    # an MFCC pipeline as TF's guide writes it
    ("mfcc_pipeline", lambda tf, x: tf.signal.mfccs_from_log_mel_spectrograms(tf.math.log(tf.tensordot(
        tf.abs(tf.signal.stft(x, 16, 4)), tf.signal.linear_to_mel_weight_matrix(6, 9, 8000, 50., 3000.), 1) + 1e-6)),
     [SIG], [0]),
]


def cotangent(out):
    """A fixed weight for the scalar loss sum(re(out) * w) (complex outputs: + im(out) * w2)."""
    r = np.random.default_rng(7)
    w = r.standard_normal(out.shape)
    w2 = r.standard_normal(out.shape)
    return w, w2


def loss(tf, out, w, w2):
    """The same scalar loss under TF and tapeflow: real outputs sum(out * w), complex ones
    sum(real(out) * w + imag(out) * w2)."""
    if out.dtype.is_complex:
        rd = out.dtype.real_dtype
        return tf.reduce_sum(tf.math.real(out) * tf.constant(w, rd)) + \
            tf.reduce_sum(tf.math.imag(out) * tf.constant(w2, rd))
    return tf.reduce_sum(out * tf.constant(w, out.dtype))
