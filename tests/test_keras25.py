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


# --- the names tapeflow refuses: they exist (import, subclass, isinstance) and raise when used ---------

REFUSED_CLASSES = [
    ("keras.layers.JaxLayer", "JAX"), ("keras.layers.FlaxLayer", "Flax"),
    ("keras.layers.TorchModuleWrapper", "PyTorch"),
    ("keras.callbacks.OrbaxCheckpoint", "ModelCheckpoint"), ("keras.export.ExportArchive", "model.export"),
    ("keras.wrappers.SKLearnClassifier", "scikit-learn"), ("keras.distribution.DeviceMesh", "tf.distribute"),
    ("keras.quantizers.Int8QuantizationConfig", "quantization"), ("keras.dtype_policies.DTypePolicyMap", "quantized"),
]
REFUSED_FUNCTIONS = [
    ("keras.utils.plot_model", "summary"), ("keras.utils.model_to_dot", "pydot"),
    ("keras.visualization.plot_image_gallery", "Matplotlib"), ("keras.distribution.list_devices", "JAX"),
    ("keras.quantizers.abs_max_quantize", "quantization"), ("keras.applications.NASNetLarge", "architecture"),
    ("keras.applications.MobileNetV3Small", "architecture"), ("keras.applications.efficientnet.EfficientNetB3",
                                                               "architecture"),
]


def _resolve(path):
    obj = tf
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("path, words", REFUSED_CLASSES)
def test_refused_classes_exist_and_raise(path, words):
    cls = _resolve(path)
    assert isinstance(cls, type) and cls.__name__ == path.rsplit(".", 1)[1]
    with pytest.raises(UnsupportedFeatureError, match=rf"tf\.{path}: tapeflow does not implement .*{words}"):
        cls()

    class Mine(cls):            # a program's subclass: defined fine, refused when made
        pass
    with pytest.raises(UnsupportedFeatureError):
        Mine()


@pytest.mark.parametrize("path, words", REFUSED_FUNCTIONS)
def test_refused_functions_exist_and_raise(path, words):
    fn = _resolve(path)
    assert callable(fn) and fn.__name__ == path.rsplit(".", 1)[1]
    with pytest.raises(UnsupportedFeatureError, match=rf"tf\.{path.replace('.efficientnet', '')}: .*{words}"):
        fn(weights=None)


def test_from_import_of_a_refused_name():
    # a module __getattr__ that raises would turn into a bare ImportError here ("cannot import name")
    from tapeflow.keras.layers import JaxLayer  # noqa: F401
    from tapeflow.keras.applications.nasnet import NASNetMobile  # noqa: F401
    from tapeflow.keras.utils import plot_model  # noqa: F401
    assert issubclass(tf.keras.layers.FlaxLayer, tf.keras.layers.JaxLayer)
    assert issubclass(tf.keras.layers.JaxLayer, tf.keras.layers.Layer)
    assert issubclass(tf.keras.callbacks.OrbaxCheckpoint, tf.keras.callbacks.Callback)


def test_keras_modules_have_tfs_names():
    """Every name of TF 2.21's tf.keras.<module> for the modules this wave filled (recorded in
    /work/briefs/keras_names.txt from tf.keras; listed here so the test needs no TF)."""
    want = {
        "quantizers": "AWQConfig AbsMaxQuantizer Float8QuantizationConfig GPTQConfig Int4QuantizationConfig "
                      "Int8QuantizationConfig QuantizationConfig Quantizer abs_max_quantize "
                      "abs_max_quantize_grouped_with_zero_point compute_float8_amax_history compute_float8_scale "
                      "deserialize fake_quant_with_min_max_vars get pack_int4 quantize_and_dequantize serialize "
                      "unpack_int4",
        "export": "ExportArchive",
        "dtype_policies": "AWQDTypePolicy DTypePolicy DTypePolicyMap FloatDTypePolicy GPTQDTypePolicy Int4DTypePolicy "
                          "QuantizedDTypePolicy QuantizedFloat8DTypePolicy deserialize get serialize",
        "visualization": "draw_bounding_boxes draw_segmentation_masks plot_bounding_box_gallery plot_image_gallery "
                         "plot_segmentation_mask_gallery",
        "wrappers": "SKLearnClassifier SKLearnRegressor SKLearnTransformer",
        "distribution": "DataParallel DeviceMesh LayoutMap ModelParallel TensorLayout distribute_tensor distribution "
                        "get_device_count initialize list_devices set_distribution",
        "applications": "ConvNeXtBase ConvNeXtLarge ConvNeXtSmall ConvNeXtTiny ConvNeXtXLarge DenseNet121 DenseNet169 "
                        "DenseNet201 EfficientNetB0 EfficientNetB1 EfficientNetB2 EfficientNetB3 EfficientNetB4 "
                        "EfficientNetB5 EfficientNetB6 EfficientNetB7 EfficientNetV2B0 EfficientNetV2B1 "
                        "EfficientNetV2B2 EfficientNetV2B3 EfficientNetV2L EfficientNetV2M EfficientNetV2S "
                        "InceptionResNetV2 InceptionV3 MobileNet MobileNetV2 MobileNetV3Large MobileNetV3Small "
                        "NASNetLarge NASNetMobile ResNet101 ResNet101V2 ResNet152 ResNet152V2 ResNet50 ResNet50V2 "
                        "VGG16 VGG19 Xception convnext densenet efficientnet efficientnet_v2 imagenet_utils "
                        "inception_resnet_v2 inception_v3 mobilenet mobilenet_v2 mobilenet_v3 nasnet resnet "
                        "resnet50 resnet_v2 vgg16 vgg19 xception",
        "config": "is_nnx_enabled max_epochs max_steps_per_epoch set_backend set_max_epochs set_max_steps_per_epoch",
        "backend": "backend get_uid image_data_format is_float_dtype is_int_dtype is_keras_tensor result_type "
                   "set_image_data_format standardize_dtype",
        "layers": "FlaxLayer JaxLayer TorchModuleWrapper", "callbacks": "OrbaxCheckpoint",
        "utils": "model_to_dot plot_model", "regularizers": "OrthogonalRegularizer orthogonal_regularizer",
        "preprocessing": "text_dataset_from_directory",
        "datasets": "boston_housing california_housing cifar10 cifar100 imdb reuters",
    }
    for mod, names in want.items():
        missing = [n for n in names.split() if n not in dir(getattr(K, mod))]
        assert not missing, (mod, missing)


def test_dtype_policies():
    """keras.dtype_policies: DTypePolicy is keras.mixed_precision's class (TF 2.21: the same object),
    FloatDTypePolicy its subclass; get/serialize/deserialize as Keras 3.15 (values checked under TF)."""
    D = K.dtype_policies
    assert D.DTypePolicy is K.mixed_precision.DTypePolicy
    assert issubclass(D.FloatDTypePolicy, D.DTypePolicy) and D.FloatDTypePolicy is not D.DTypePolicy
    assert repr(D.get("float16")) == '<DTypePolicy "float16">' and D.get(None).name == "float32"
    p = D.FloatDTypePolicy("float16")
    assert repr(p) == '<DTypePolicy "float16">'
    assert D.serialize(p) == {"module": "keras", "class_name": "FloatDTypePolicy", "config": {"name": "float16"},
                              "registered_name": None}
    assert D.deserialize({"module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_bfloat16"},
                          "registered_name": None}).name == "mixed_bfloat16"
    assert D.get({"class_name": "DTypePolicy", "config": {"name": "float64"}}).name == "float64"
    with pytest.raises(ValueError, match="Cannot convert 'foo' to a mixed precision DTypePolicy"):
        D.get("foo")
    with pytest.raises(ValueError, match="Cannot interpret `dtype` argument. Expected a string or an instance of "
                                         "DTypePolicy. Received: dtype=3"):
        D.get(3)


def test_unbuilt_applications_preprocess_input():
    """The families tapeflow does not build keep Keras' preprocess_input (values from TF 2.21)."""
    x = np.array([[[[10.0, 128.0, 250.0]]]], np.float32)
    tf_mode = [-0.9215686321258545, 0.003921627998352051, 0.9607843160629272]
    want = {"convnext": [10.0, 128.0, 250.0], "efficientnet": [10.0, 128.0, 250.0],
            "efficientnet_v2": [10.0, 128.0, 250.0], "mobilenet_v3": [10.0, 128.0, 250.0],
            "densenet": [-1.9466564655303955, 0.20518219470977783, 2.552854299545288],
            "inception_resnet_v2": tf_mode, "inception_v3": tf_mode, "mobilenet": tf_mode, "nasnet": tf_mode,
            "resnet_v2": tf_mode, "xception": tf_mode}
    for mod, values in want.items():
        got = np.asarray(getattr(K.applications, mod).preprocess_input(x.copy())).ravel()
        np.testing.assert_allclose(got, values, rtol=1e-6, err_msg=mod)


def test_resnet_v2_and_mobilenet_forward():
    """The new builders run (their structure is checked against TF in tests/test_applications.py)."""
    x = np.random.default_rng(0).uniform(0, 255, (1, 32, 32, 3)).astype(np.float32)
    m = K.applications.ResNet50V2(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg")
    y = m(K.applications.resnet_v2.preprocess_input(x.copy()))
    assert y.shape == (1, 2048) and np.isfinite(y.numpy()).all()
    m = K.applications.MobileNet(weights=None, alpha=0.25, input_shape=(32, 32, 3), classes=5)
    y = m(K.applications.mobilenet.preprocess_input(x.copy())).numpy()
    assert y.shape == (1, 5) and np.allclose(y.sum(), 1.0, atol=1e-5)
