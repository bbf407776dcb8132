"""keras.layers.STFTSpectrogram and keras.initializers.STFT / STFTInitializer / stft (wave 22) against Keras
3.15 on TF 2.21 (tests/data/keras_stft22_reference.npz and keras_stft22_errors.json, recorded by
tests/tf_reference/make_keras_stft_reference.py): values for 16 kernels and 11 layer configurations, errors,
config round trip, eager == compiled, the kernels train."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "tf_reference"))
import make_keras_stft_reference as R  # noqa: E402

REF = np.load(HERE / "data" / "keras_stft22_reference.npz")
ERR = json.loads((HERE / "data" / "keras_stft22_errors.json").read_text())


@pytest.mark.parametrize("key", sorted(R.CASES))
def test_values_are_keras(key):
    got = np.asarray(R.CASES[key](keras))
    want = REF[key]
    assert got.dtype == want.dtype and got.shape == want.shape, (key, got.dtype, got.shape)
    # kernels: NumPy's float32 cos/sin vs TF's (an ulp); layers: the convolution's summation order and
    # the log/arctan2 of small magnitudes (float32, relative to the output's scale)
    tol = 1e-12 if want.dtype == np.float64 else (2e-6 if key.startswith("init") else 2e-4)
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=key)


@pytest.mark.parametrize("key", sorted(k for k in R.BAD))
def test_errors_are_keras(key):
    want = ERR[key]
    cls = {"ValueError": ValueError, "TypeError": TypeError}[want["error"]]
    with pytest.raises(cls) as info:
        R.BAD[key](keras)
    # (the layer engine words its own prefix: Keras' text is checked from where the two agree)
    core = {"int_input": "Invalid input type", "rank2_input": "expected ndim=3"}.get(key) or \
        want["message"].split("Received")[0].strip()
    assert core in want["message"] and core in str(info.value), (key, str(info.value), core)


def test_config_round_trip_and_names():
    layer = keras.layers.STFTSpectrogram(**R.CONFIG_KW)
    cfg = layer.get_config()
    for k, v in ERR["_config"].items():
        if k not in ("name", "trainable"):
            assert cfg[k] == v, k
    clone = keras.layers.STFTSpectrogram.from_config(cfg)
    x = R.SIG
    np.testing.assert_array_equal(clone(x).numpy(), layer(x).numpy())
    assert keras.initializers.STFT("imag", "hamming", "spectrum", True).get_config() == ERR["_init_config"]
    assert keras.initializers.STFTInitializer is keras.initializers.STFT is keras.initializers.stft
    assert isinstance(keras.initializers.get("stft"), keras.initializers.STFT)


def test_compiled_equals_eager_and_kernels_train():
    layer = keras.layers.STFTSpectrogram(mode="magnitude", frame_length=16, frame_step=8)
    x = tf.constant(R.SIG)
    want = layer(x)
    np.testing.assert_array_equal(tf.function(lambda v: layer(v))(x).numpy(), want.numpy())
    assert {w.name.split("/")[-1].split(":")[0] for w in layer.trainable_weights} == {"real_kernel", "imag_kernel"}
    with tf.GradientTape() as t:
        y = tf.reduce_sum(layer(x))
    grads = t.gradient(y, layer.trainable_weights)
    assert all(g is not None and np.isfinite(g.numpy()).all() for g in grads)


def test_windows_are_scipys_formulas():
    # SciPy 1.17 (peers venv): get_window('hann', 5) symmetric / periodic; 'triang' odd and even
    from tapeflow.keras.initializers import get_window
    np.testing.assert_allclose(get_window("hann", 5, False), [0, 0.5, 1, 0.5, 0], atol=1e-15)
    np.testing.assert_allclose(get_window("hann", 4, True), [0, 0.5, 1, 0.5], atol=1e-15)
    np.testing.assert_allclose(get_window("triang", 4, False), [0.25, 0.75, 0.75, 0.25])
    np.testing.assert_allclose(get_window("triang", 5, False), [1 / 3, 2 / 3, 1, 2 / 3, 1 / 3])
    with pytest.raises(ValueError, match="Invalid window name 'kaiser'"):
        get_window("kaiser", 4)
