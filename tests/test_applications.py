"""keras.applications: each model's layers (names, classes, output shapes, parameter counts) equal
TF 2.21's (tests/data/applications_reference.json, recorded by
tests/tf_reference/make_applications_reference.py from tests/applications_cases.py); a forward
pass, preprocess_input's modes, and the weights argument's errors."""
import json
import os

import numpy as np
import pytest

import tapeflow as tf
from applications_cases import CASES, describe

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "applications_reference.json")))


@pytest.mark.parametrize("name", sorted(CASES))
def test_structure_is_tfs(name):
    builder, kwargs = CASES[name]
    tf.keras.backend.clear_session()
    got = describe(getattr(tf.keras.applications, builder)(**kwargs))
    want = REF[name]
    assert got["name"] == want["name"]
    for g, w in zip(got["layers"], want["layers"]):
        assert g == w, (name, g, w)
    assert len(got["layers"]) == len(want["layers"])
    assert (got["params"], got["trainable"]) == (want["params"], want["trainable"])


def test_forward_and_preprocess():
    m = tf.keras.applications.MobileNetV2(weights=None, alpha=0.35, input_shape=(32, 32, 3), include_top=False,
                                          pooling="avg")
    x = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype(np.float32)
    y = m(tf.keras.applications.mobilenet_v2.preprocess_input(x.copy()))
    assert y.shape == (2, 1280) and np.isfinite(y.numpy()).all()
    # Keras' modes: 'tf' to [-1, 1]; 'caffe' BGR minus the means; 'torch' ImageNet mean/std
    px = np.array([[[10.0, 20.0, 30.0]]], np.float32)
    np.testing.assert_allclose(tf.keras.applications.mobilenet_v2.preprocess_input(px.copy()),
                               px / 127.5 - 1.0, rtol=1e-6)
    np.testing.assert_allclose(tf.keras.applications.resnet50.preprocess_input(px.copy()),
                               [[[30 - 103.939, 20 - 116.779, 10 - 123.68]]], rtol=1e-5)
    np.testing.assert_allclose(tf.keras.applications.imagenet_utils.preprocess_input(px.copy(), mode="torch"),
                               [[[(10 / 255 - 0.485) / 0.229, (20 / 255 - 0.456) / 0.224,
                                  (30 / 255 - 0.406) / 0.225]]], rtol=1e-5)
    t = tf.keras.applications.vgg16.preprocess_input(tf.constant(px))        # tensors too, traced or not
    np.testing.assert_allclose(t.numpy(), [[[30 - 103.939, 20 - 116.779, 10 - 123.68]]], rtol=1e-5)


def test_weights_argument(tmp_path):
    with pytest.raises(NotImplementedError, match="HDF5"):
        tf.keras.applications.VGG16()                                # 'imagenet', the default
    with pytest.raises(ValueError, match="`classes` should be 1000"):
        tf.keras.applications.ResNet50(weights="imagenet", classes=10)
    with pytest.raises(ValueError, match="The `weights` argument should be either"):
        tf.keras.applications.ResNet50(weights=str(tmp_path / "missing.weights"))
    with pytest.raises(ValueError, match="static `input_shape`"):
        tf.keras.applications.VGG16(weights=None, input_shape=(None, None, 3))
    with pytest.raises(ValueError, match="at least 32x32"):
        tf.keras.applications.ResNet50(weights=None, include_top=False, input_shape=(16, 16, 3))
    # weights saved by tapeflow load through the argument
    m = tf.keras.applications.MobileNetV2(weights=None, alpha=0.35, input_shape=(32, 32, 3), include_top=False)
    path = str(tmp_path / "m.weights.h5")
    m.save_weights(path)
    m2 = tf.keras.applications.MobileNetV2(weights=path, alpha=0.35, input_shape=(32, 32, 3), include_top=False)
    for a, b in zip(m.get_weights(), m2.get_weights()):
        np.testing.assert_array_equal(a, b)
