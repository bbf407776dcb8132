"""Wave 25's keras names: keras.backend's dtype helpers and settings, keras.config's epoch/step caps
(as fit/evaluate/predict honour them), set_backend, is_nnx_enabled, regularizers'
OrthogonalRegularizer, preprocessing.text_dataset_from_directory, and the names tapeflow refuses
(they exist; using them raises UnsupportedFeatureError naming the feature). Expected values are
Keras 3.15's under TF 2.21 (tests/data/keras25_tf.json, tests/tf_reference/make_keras25_reference.py)."""
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf
from tapeflow._unsupported import UnsupportedFeatureError

REF = json.loads((Path(__file__).parent / "data" / "keras25_tf.json").read_text())
K = tf.keras
PY = {"py:int": int, "py:float": float, "py:bool": bool, "py:str": str}


def _outcome(f):
    try:
        return {"value": f()}
    except Exception as e:  # noqa: BLE001
        return {"error": type(e).__name__, "message": str(e)}


# --- keras.backend ------------------------------------------------------------------------------

def test_result_type_table():
    """Keras' lattice over every pair of 19 dtypes (bool, the ints, the floats, complex, Python's
    weak int/float/bool, None) and a few more: 380 outcomes, each Keras' (a name or a ValueError)."""
    bad = []
    for key, want in REF["result_type"].items():
        args = () if key == "()" else [None if a == "None" else PY.get(a, a) for a in key.split("|")]
        got = _outcome(lambda: K.backend.result_type(*args))
        if got.get("value") != want.get("value") or got.get("error") != want.get("error"):
            bad.append((key, got, want))
    assert not bad, bad[:5]
    assert len(REF["result_type"]) > 380


def _std_arg(a):
    if a == "None":
        return None
    if a.startswith("np:"):
        return getattr(np, a[3:])
    if a.startswith("npdtype:"):
        return np.dtype(a[8:])
    if a.startswith("tf:"):
        return getattr(tf, a[3:])
    return PY.get(a, a)


@pytest.mark.parametrize("fn", ["standardize_dtype", "is_float_dtype", "is_int_dtype"])
def test_dtype_predicates(fn):
    for key, want in REF[fn].items():
        got = _outcome(lambda: getattr(K.backend, fn)(_std_arg(key)))
        assert got == want, (key, got, want)
    assert K.utils.standardize_dtype is K.backend.standardize_dtype
    assert K.utils.is_keras_tensor is K.backend.is_keras_tensor


def test_get_uid_shares_the_layer_names():
    K.backend.clear_session()
    got = [K.backend.get_uid("dense"), K.backend.get_uid("dense"), K.backend.get_uid()]
    layer = K.layers.Dense(2)
    got += [K.backend.get_uid("dense"), layer.name, K.layers.Dense(2).name]
    assert got == REF["get_uid"]          # [1, 2, 1, 4, 'dense_2', 'dense_4']


def test_backend_settings():
    assert K.backend.backend() == K.config.backend() == REF["backend"] == "tensorflow"
    assert K.backend.image_data_format() == REF["image_data_format"] == "channels_last"
    K.backend.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="channels_last only"):
        K.backend.set_image_data_format("channels_first")
    assert K.backend.is_keras_tensor(K.Input((2,))) and not K.backend.is_keras_tensor(tf.constant(1.0))
    assert K.config.is_nnx_enabled() is REF["is_nnx_enabled"] is False


def test_set_backend():
    K.config.set_backend("tensorflow")           # what tapeflow runs: nothing to do
    with pytest.raises(UnsupportedFeatureError, match=r"set_backend\('jax'\): tapeflow implements TF's Keras only"):
        K.config.set_backend("jax")
    with pytest.raises(ValueError, match="unknown backend"):
        K.config.set_backend("pytorch")


# --- keras.config.set_max_epochs / set_max_steps_per_epoch ---------------------------------------

class _Count(K.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.train, self.test, self.predict, self.params_steps = [], 0, 0, None

    def on_train_begin(self, logs=None):
        self.params_steps = self.params.get("steps")

    def on_epoch_begin(self, epoch, logs=None):
        self.train.append(0)

    def on_train_batch_end(self, batch, logs=None):
        self.train[-1] += 1

    def on_test_batch_end(self, batch, logs=None):
        self.test += 1

    def on_predict_batch_end(self, batch, logs=None):
        self.predict += 1


@pytest.mark.parametrize("key", sorted(REF["caps"]))
def test_max_epochs_and_steps(key):
    me, ms, kw = key.split("|", 2)
    me, ms, kw = (None if me == "None" else int(me)), (None if ms == "None" else int(ms)), json.loads(kw)
    x = np.arange(60, dtype=np.float32).reshape(20, 3) / 60
    y = x.sum(1, keepdims=True)
    if "validation_data" in kw:
        kw["validation_data"] = (x, y)
    want = REF["caps"][key]
    try:
        K.config.set_max_epochs(me)
        K.config.set_max_steps_per_epoch(ms)
        m = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
        m.compile("sgd", "mse")
        c, ev = _Count(), _Count()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            h = m.fit(x, y, batch_size=4, verbose=0, callbacks=[c], **kw)
        n_pred = len(m.predict(x, batch_size=4, verbose=0, callbacks=[ev]))
        m.evaluate(x, y, batch_size=4, verbose=0, callbacks=[ev])
        got = {"epochs_run": len(h.history["loss"]), "train_batches": c.train, "val_batches": c.test,
               "params_steps": c.params_steps, "predict_len": n_pred, "predict_batches": ev.predict,
               "eval_batches": ev.test, "max_epochs": K.config.max_epochs(),
               "max_steps": K.config.max_steps_per_epoch(),
               "warnings": sorted({str(i.message) for i in w if "Limiting" in str(i.message)})}
    finally:
        K.config.set_max_epochs(None)
        K.config.set_max_steps_per_epoch(None)
    assert got == want


# --- regularizers.OrthogonalRegularizer -------------------------------------------------------------

@pytest.mark.parametrize("i", range(len(REF["ortho"])))
def test_orthogonal_regularizer_values(i):
    case = REF["ortho"][i]
    w = np.array(case["w"], case.get("w_dtype", "float32"))
    r = K.regularizers.OrthogonalRegularizer(factor=case["factor"], mode=case["mode"])
    assert r.get_config() == case["config"]
    if "error" in case:     # an int factor (TypeError) or float64 weights (InvalidArgumentError), as Keras
        exc = tf.errors.InvalidArgumentError if case["error"] == "InvalidArgumentError" else TypeError
        with pytest.raises(exc):
            r(tf.constant(w))
        return
    v = r(tf.constant(w))
    assert v.dtype.name == case["dtype"]
    np.testing.assert_allclose(float(v), case["value"], rtol=1e-6)
    # traced: the same value
    np.testing.assert_allclose(float(tf.function(r)(tf.constant(w))), case["value"], rtol=1e-6)


def test_orthogonal_regularizer_errors_and_serialization():
    R = K.regularizers
    errs = REF["ortho_errors"]
    with pytest.raises(ValueError) as info:
        R.OrthogonalRegularizer()(tf.zeros((2, 2, 2)))
    assert str(info.value) == errs["rank3"]["message"]
    for key, kw in (("mode", {"mode": "diag"}), ("factor", {"factor": -1.0}), ("factor_str", {"factor": "0.1"})):
        with pytest.raises(ValueError) as info:
            R.OrthogonalRegularizer(**kw)
        assert str(info.value) == errs[key]["message"]
    g = REF["ortho_get"]
    assert type(R.get("orthogonal_regularizer")).__name__ == g["name"]
    assert type(R.get("OrthogonalRegularizer")).__name__ == g["name_cls"]
    assert (R.orthogonal_regularizer is R.OrthogonalRegularizer) is g["alias"]
    s = R.serialize(R.OrthogonalRegularizer(0.2, "columns"))
    assert s["class_name"] == g["serialize"]["class_name"] and s["config"] == g["serialize"]["config"]
    back = R.deserialize(s)
    assert isinstance(back, R.OrthogonalRegularizer) and back.get_config() == s["config"]
    layer = K.layers.Dense(3, kernel_regularizer=R.OrthogonalRegularizer(0.1), kernel_initializer="ones")
    layer.build((None, 2))
    np.testing.assert_allclose([float(v) for v in layer.losses], REF["ortho_dense_loss"], rtol=1e-6)


def test_orthogonal_regularizer_trains():
    """A gradient flows through it (Dense's kernel penalty in fit)."""
    w = tf.Variable(np.random.RandomState(0).standard_normal((4, 3)).astype("float32"))
    with tf.GradientTape() as tape:
        loss = K.regularizers.OrthogonalRegularizer(1.0, "columns")(w)
    g = tape.gradient(loss, w)
    assert g is not None and np.all(np.isfinite(g.numpy())) and np.abs(g.numpy()).sum() > 0


# --- keras.preprocessing.text_dataset_from_directory ---------------------------------------------------

def test_preprocessing_text_dataset_from_directory_is_utils():
    # TF 2.21: keras.preprocessing.text_dataset_from_directory is keras.utils' function (the same object)
    assert K.preprocessing.text_dataset_from_directory is K.utils.text_dataset_from_directory
