"""Keras 3.15's keras.layers.STFTSpectrogram and keras.initializers.STFT (STFTInitializer, stft) on the cases
below, for tests/test_keras_stft22.py. Each case is ``program(keras) -> array`` using Keras' public API only,
so it runs under Keras (peers venv) and tapeflow.keras alike. Run with the peers venv:
    python tests/tf_reference/make_keras_stft_reference.py
It writes tests/data/keras_stft22_reference.npz and keras_stft22_errors.json."""
import json
import os
from pathlib import Path

import numpy as np

_R = np.random.RandomState(2215)
SIG = _R.randn(2, 160, 2).astype(np.float32)          # [batch, time, channels]
SIG_CF = np.ascontiguousarray(SIG.transpose(0, 2, 1))  # channels_first
WIN = _R.rand(24).astype(np.float32) + 0.5


def _init(side, window, scaling, periodic, shape, dtype="float32"):
    return lambda k: k.initializers.STFT(side, window, scaling, periodic)(shape, dtype=dtype)


def _layer(x, **kw):
    return lambda k: k.layers.STFTSpectrogram(**kw)(x)


CASES = {
    "init_real_hann_density": _init("real", "hann", "density", False, (32, 1, 17)),
    "init_imag_hann_density": _init("imag", "hann", "density", False, (32, 1, 17)),
    "init_real_hamming_spectrum_periodic": _init("real", "hamming", "spectrum", True, (20, 1, 17)),
    "init_imag_blackman_none": _init("imag", "blackman", None, False, (25, 1, 13)),
    "init_real_boxcar": _init("real", "boxcar", "density", False, (16, 1, 9)),
    "init_real_bartlett_periodic": _init("real", "bartlett", "density", True, (15, 1, 9)),
    "init_imag_triang_even": _init("imag", "triang", "spectrum", False, (12, 1, 9)),
    "init_imag_triang_odd_periodic": _init("imag", "triang", "spectrum", True, (12, 1, 9)),
    "init_real_nuttall": _init("real", "nuttall", "density", False, (18, 1, 10)),
    "init_real_blackmanharris": _init("real", "blackmanharris", "density", True, (18, 1, 10)),
    "init_real_flattop": _init("real", "flattop", "spectrum", False, (18, 1, 10)),
    "init_real_cosine_alias": _init("real", "halfcosine", "density", False, (18, 1, 10)),
    "init_real_no_window": _init("real", None, "density", False, (16, 1, 9)),
    "init_imag_array_window": _init("imag", WIN, "density", False, (24, 1, 17)),
    "init_real_float64": _init("real", "hann", "density", False, (32, 1, 17), "float64"),
    "init_real_hann_one": _init("real", "han", "density", False, (1, 1, 3)),
    "layer_log_default": _layer(SIG, frame_length=32, frame_step=16),
    "layer_magnitude_same": _layer(SIG, mode="magnitude", frame_length=30, frame_step=10, padding="same"),
    "layer_psd": _layer(SIG, mode="psd", frame_length=24, fft_length=32, frame_step=8),
    "layer_real_expand": _layer(SIG, mode="real", frame_length=16, expand_dims=True),
    "layer_imag": _layer(SIG, mode="imag", frame_length=16, window="hamming", periodic=True),
    "layer_angle": _layer(SIG, mode="angle", frame_length=16, scaling="spectrum"),
    "layer_stft": _layer(SIG, mode="stft", frame_length=20, frame_step=5, fft_length=32),
    "layer_stft_expand": _layer(SIG, mode="stft", frame_length=20, frame_step=5, expand_dims=True),
    "layer_cf_log": _layer(SIG_CF, frame_length=32, frame_step=16, data_format="channels_first"),
    "layer_cf_stft_expand": _layer(SIG_CF, mode="stft", frame_length=16, data_format="channels_first",
                                   expand_dims=True, padding="same"),
    "layer_no_window_f64": _layer(SIG.astype(np.float64), mode="magnitude", frame_length=16, window=None,
                                  dtype="float64"),
}

BAD = {
    "bad_mode": lambda k: k.layers.STFTSpectrogram(mode="power"),
    "frame_step_too_big": lambda k: k.layers.STFTSpectrogram(frame_length=16, frame_step=17),
    "fft_length_too_small": lambda k: k.layers.STFTSpectrogram(frame_length=16, fft_length=8),
    "bad_padding": lambda k: k.layers.STFTSpectrogram(padding="causal"),
    "bad_scaling": lambda k: k.layers.STFTSpectrogram(scaling="l2"),
    "bad_window": lambda k: k.layers.STFTSpectrogram(window="hanning"),
    "int_input": lambda k: k.layers.STFTSpectrogram(frame_length=4)(np.ones((1, 8, 1), np.int32)),
    "rank2_input": lambda k: k.layers.STFTSpectrogram(frame_length=4)(np.ones((8, 1), np.float32)),
    "init_bad_side": lambda k: k.initializers.STFT("both"),
    "init_bad_window_shape": lambda k: k.initializers.STFT("real", np.ones(5))((4, 1, 3)),
}

CONFIG_KW = dict(mode="psd", frame_length=24, frame_step=8, fft_length=32, window="hamming", periodic=True,
                 scaling="spectrum", padding="same", expand_dims=True)


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras
    here = Path(__file__).resolve().parent.parent / "data"
    out = {k: np.asarray(f(keras)) for k, f in CASES.items()}
    errs = {}
    for k, f in BAD.items():
        try:
            f(keras)
            errs[k] = {"error": None}
        except Exception as e:   # noqa: BLE001
            errs[k] = {"error": type(e).__name__, "message": str(e)}
    cfg = keras.layers.STFTSpectrogram(**CONFIG_KW).get_config()
    errs["_config"] = {k: v for k, v in cfg.items() if k not in ("dtype",)}
    errs["_init_config"] = keras.initializers.STFT("imag", "hamming", "spectrum", True).get_config()
    np.savez(here / "keras_stft22_reference.npz", **out)
    (here / "keras_stft22_errors.json").write_text(json.dumps(errs, indent=0, default=str))
