"""keras.metrics: values read off Keras 3 / TF 2.21 for the same inputs."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import metrics


def val(t):
    return float(t.numpy())


def test_mean_weighted_and_reset():
    m = metrics.Mean()
    assert val(m.result()) == 0.0  # before any update: 0, not NaN
    m.update_state([1, 3, 5, 7])
    assert val(m.result()) == 4.0 and m.result().dtype == tf.float32
    m.update_state([1, 2], sample_weight=[1, 0])
    assert val(m.result()) == pytest.approx(3.4)
    m.reset_state()
    assert val(m.result()) == 0.0
    assert val(m(np.array([2., 4.]))) == 3.0
    assert m.name == "mean" and repr(m) == "<Mean name=mean>"
    assert m.get_config() == {"name": "mean", "dtype": "float32"}


def test_sum():
    s = metrics.Sum()
    s.update_state([1, 3, 5, 7])
    assert val(s.result()) == 16.0


@pytest.mark.parametrize("cls, y_true, y_pred, expected", [
    (metrics.Accuracy, [[1], [2], [3], [4]], [[0], [2], [3], [4]], 0.75),
    (metrics.BinaryAccuracy, [[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]], 0.75),
    (metrics.CategoricalAccuracy, [[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]], 0.5),
    (metrics.SparseCategoricalAccuracy, [[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]], 0.5),
    (metrics.SparseCategoricalAccuracy, [2, 1], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]], 0.5),
    (metrics.MeanSquaredError, [[0, 1], [0, 0]], [[1, 1], [0, 0]], 0.25),
    (metrics.MeanAbsoluteError, [[0, 1], [0, 0]], [[1, 1], [0, 0]], 0.25),
])
def test_values_match_keras(cls, y_true, y_pred, expected):
    m = cls()
    m.update_state(np.array(y_true, np.float32), np.array(y_pred, np.float32))
    assert val(m.result()) == pytest.approx(expected)


def test_sample_weight_weights_samples_not_values():
    m = metrics.MeanSquaredError()
    m.update_state([[0., 1.], [0., 0.]], [[1., 1.], [0., 0.]])
    m.update_state([[0., 1.], [0., 0.]], [[1., 1.], [0., 0.]], sample_weight=[1., 0.])
    assert val(m.result()) == pytest.approx(1 / 3)


def test_names_as_keras():
    assert [c().name for c in (metrics.SparseCategoricalAccuracy, metrics.BinaryAccuracy, metrics.CategoricalAccuracy,
                               metrics.Accuracy, metrics.Sum, metrics.MeanSquaredError, metrics.MeanAbsoluteError)] == [
        "sparse_categorical_accuracy", "binary_accuracy", "categorical_accuracy", "accuracy", "sum",
        "mean_squared_error", "mean_absolute_error"]


def test_update_inside_function_matches_eager():
    eager, compiled = metrics.SparseCategoricalAccuracy(), metrics.SparseCategoricalAccuracy()
    step = tf.function(lambda y, p: compiled.update_state(y, p))
    rng = np.random.default_rng(0)
    hits = []
    for _ in range(3):
        y = rng.integers(0, 4, size=8).astype(np.int64)
        p = rng.random((8, 4)).astype(np.float32)
        eager.update_state(y, p)
        step(tf.constant(y), tf.constant(p))
        hits += list(p.argmax(-1) == y)
    assert val(eager.result()) == val(compiled.result()) == pytest.approx(np.mean(hits))


def test_metric_state_is_checkpointed(tmp_path):
    m = metrics.Mean()
    m.update_state([2., 4.])
    ckpt = tf.train.Checkpoint(metric=m)
    path = ckpt.save(str(tmp_path / "m"))
    m.reset_state()
    ckpt.restore(path)
    assert val(m.result()) == 3.0
    assert all(not v.trainable for v in m.variables)


def test_bad_labels_name_the_metric():
    with pytest.raises(ValueError, match="SparseCategoricalAccuracy"):
        metrics.SparseCategoricalAccuracy().update_state(np.zeros((2, 3)), np.zeros((2, 3)))


def test_get():
    assert isinstance(metrics.get("accuracy"), metrics.Accuracy)
    assert isinstance(metrics.get("SparseCategoricalAccuracy"), metrics.SparseCategoricalAccuracy)
    with pytest.raises(ValueError, match="unknown metric"):
        metrics.get("nope")


def test_crossentropy_metrics_as_tf():
    # TF 2.21's values (keras.metrics.*Crossentropy: the mean of the loss function per sample)
    M = tf.keras.metrics
    yt = np.array([1, 2, 0])
    yp = np.array([[0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.7, 0.2, 0.1]], np.float32)

    def r(m, *a, **k):
        m.update_state(*a, **k)
        return float(m.result())

    np.testing.assert_allclose(r(M.SparseCategoricalCrossentropy(), yt, yp), 0.363548, rtol=1e-5)
    np.testing.assert_allclose(r(M.SparseCategoricalCrossentropy(from_logits=True), yt, yp), 0.769367, rtol=1e-5)
    np.testing.assert_allclose(r(M.SparseCategoricalCrossentropy(), yt, yp, sample_weight=[1., 0., 2.]), 0.312165,
                               rtol=1e-5)
    oh = np.eye(3)[yt]
    np.testing.assert_allclose(r(M.CategoricalCrossentropy(), oh, yp), 0.363548, rtol=1e-5)
    np.testing.assert_allclose(r(M.CategoricalCrossentropy(label_smoothing=0.1), oh, yp), 0.469712, rtol=1e-5)
    bt, bp = np.array([[1.], [0.], [1.]]), np.array([[0.9], [0.3], [0.4]], np.float32)
    np.testing.assert_allclose(r(M.BinaryCrossentropy(), bt, bp), 0.459442, rtol=1e-5)
    np.testing.assert_allclose(r(M.BinaryCrossentropy(from_logits=True), bt, bp), 0.569508, rtol=1e-5)
    np.testing.assert_allclose(r(M.BinaryCrossentropy(label_smoothing=0.2), bt, bp), 0.547411, rtol=1e-5)
    m = M.get("sparse_categorical_crossentropy")
    assert m.name == "sparse_categorical_crossentropy"
    assert sorted(m.get_config()) == ["axis", "dtype", "from_logits", "ignore_class", "name"]
