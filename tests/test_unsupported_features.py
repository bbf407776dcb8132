"""Out-of-scope TF namespaces (issue 11, item 9) fail with an error naming the feature."""
import pytest

import tapeflow as tf
from tapeflow._unsupported import FEATURES, UnsupportedFeatureError


@pytest.mark.parametrize("ns, attr, words", [
    ("lite", "TFLiteConverter", "TensorFlow Lite"),
    ("queue", "FIFOQueue", "TF1's input queues"),
])
def test_use_names_the_feature(ns, attr, words):
    with pytest.raises(NotImplementedError, match=rf"tf\.{ns}\.{attr}: .*{words}.*out of scope"):
        getattr(getattr(tf, ns), attr)


@pytest.mark.parametrize("name, words", [("qint8", "quantized"), ("variant", "variant")])
def test_top_level_names(name, words):
    with pytest.raises(NotImplementedError, match=rf"tf\.{name}: .*{words}"):
        getattr(tf, name)
    assert not hasattr(tf, name)


def test_probes_see_a_missing_attribute():
    # hasattr/getattr-with-default must keep working on these namespaces (feature detection)
    assert not hasattr(tf.lite, "TFLiteConverter")
    assert getattr(tf.lite, "TFLiteConverter", None) is None
    assert issubclass(UnsupportedFeatureError, AttributeError)


def test_real_typos_stay_attribute_errors():
    assert "lite" in FEATURES
    with pytest.raises(AttributeError, match="no attribute 'lookpu'") as info:
        tf.lookpu
    assert not isinstance(info.value, NotImplementedError)


@pytest.mark.parametrize("get, words", [
    (lambda: tf.dtypes.qint8, "quantized dtypes"),
    (lambda: tf.train.AdamOptimizer, "TF1's optimizers; use tapeflow.keras.optimizers.Adam"),
    (lambda: tf.train.GradientDescentOptimizer, "keras.optimizers.SGD"),
    (lambda: tf.Session, "TF1's API"),
    (lambda: tf.placeholder, "placeholders"),
])
def test_names_inside_tf2_namespaces_name_the_feature(get, words):
    # TF's r1 eager guide reaches tf.train.AdamOptimizer
    with pytest.raises(NotImplementedError, match=words):
        get()
    with pytest.raises(AttributeError, match="no attribute 'Foo'"):
        tf.train.Foo


def test_tf_experimental_has_numpy_and_says_the_rest_is_out_of_scope():
    # TF's tf_numpy guide starts with `import tensorflow.experimental.numpy as tnp` (wave 19: implemented)
    import tapeflow.experimental.numpy as tnp
    assert tf.experimental.numpy is tnp
    # (wave 25: tf.experimental.dtensor is a namespace, as tf.dtensor, whose every name says so)
    with pytest.raises(NotImplementedError, match="tf.experimental.dtensor.Mesh: .*DTensor.*out of scope"):
        tf.experimental.dtensor.Mesh
