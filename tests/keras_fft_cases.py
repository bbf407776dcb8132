"""keras.ops' FFT family and complex views (wave 21), shared by
tests/tf_reference/make_keras_fft_reference.py (Keras 3 on TF 2.21 ->
tests/data/keras_fft21_reference.npz) and tests/test_signal21.py. ``program(ops, *inputs)``
uses Keras 3's public keras.ops API only."""
import numpy as np

_R = np.random.default_rng(321)
X = _R.standard_normal((2, 40)).astype(np.float32)
RE = _R.standard_normal((3, 8)).astype(np.float32)
IM = _R.standard_normal((3, 8)).astype(np.float32)
RI = np.stack([RE, IM], -1)

CASES = [
    ("fft", lambda ops, a, b: ops.fft((a, b)), [RE, IM]),
    ("fft2", lambda ops, a, b: ops.fft2((a, b)), [RE, IM]),
    ("ifft2", lambda ops, a, b: ops.ifft2((a, b)), [RE, IM]),
    ("rfft", lambda ops, x: ops.rfft(x), [X]),
    ("rfft16", lambda ops, x: ops.rfft(x, 16), [X]),
    ("irfft", lambda ops, a, b: ops.irfft((a, b)), [RE, IM]),
    ("irfft10", lambda ops, a, b: ops.irfft((a, b), 10), [RE, IM]),
    ("stft", lambda ops, x: ops.stft(x, 8, 4, 16), [X]),
    ("stft_hamming_uncentred", lambda ops, x: ops.stft(x, 10, 5, 16, window="hamming", center=False), [X]),
    ("stft_no_window", lambda ops, x: ops.stft(x, 8, 4, 8, window=None), [X]),
    ("istft", lambda ops, x: ops.istft(ops.stft(x, 8, 4, 16), 8, 4, 16), [X]),
    ("istft_length", lambda ops, x: ops.istft(ops.stft(x, 8, 4, 16), 8, 4, 16, length=30), [X]),
    ("istft_uncentred", lambda ops, x: ops.istft(ops.stft(x, 8, 4, 16, center=False), 8, 4, 16, center=False), [X]),
    ("view_as_complex", lambda ops, x: ops.view_as_complex(x), [RI]),
    ("view_as_real", lambda ops, x: ops.view_as_real(ops.view_as_complex(x)), [RI]),
    ("polar", lambda ops, a, b: ops.polar(a, b), [RE, IM]),
]
CASES += [
    ("hamming", lambda ops: ops.hamming(9), []),
    ("hanning", lambda ops: ops.hanning(10), []),
    ("kaiser", lambda ops: ops.kaiser(8, 5.0), []),
    ("bartlett", lambda ops: ops.bartlett(7), []),
    ("bartlett_even", lambda ops: ops.bartlett(6), []),
    ("blackman", lambda ops: ops.blackman(9), []),
    ("blackman_1", lambda ops: ops.blackman(1), []),
]
# (eig: eigenvalues only; the eigenvectors' phases are LAPACK's, not TF's)
CASES += [("eig_values", lambda ops, a: ops.eig(a)[0], [np.array([[1., 2., 0.], [-1., 3., 1.], [0.5, 0., 2.]], np.float32)])]

# keras.layers.MelSpectrogram: program(keras, x)
AUDIO = _R.standard_normal((2, 300)).astype(np.float32)
LAYER_CASES = [
    ("mel_db", lambda keras, x: keras.layers.MelSpectrogram(fft_length=64, sequence_stride=16, num_mel_bins=10,
                                                             sampling_rate=8000)(x), [AUDIO]),
    ("mel_power", lambda keras, x: keras.layers.MelSpectrogram(
        fft_length=64, sequence_stride=20, sequence_length=48, window="hamming", num_mel_bins=8, sampling_rate=16000,
        min_freq=50., max_freq=6000., power_to_db=False, mag_exp=1.0)(x), [AUDIO]),
    ("mel_top_db_ref", lambda keras, x: keras.layers.MelSpectrogram(
        fft_length=32, sequence_stride=8, num_mel_bins=6, sampling_rate=4000, top_db=20., ref_power=2.0)(x), [AUDIO]),
]
