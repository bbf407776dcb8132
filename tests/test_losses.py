"""Keras losses against NumPy transcriptions of Keras' formulas."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras

K = keras.losses
EPS = 1e-7


def _r(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _sig(x):
    return 1 / (1 + np.exp(-x))


Y = _r((6, 3), 0)
P = _r((6, 3), 1)


def test_mse_mae_functions_are_per_sample():
    np.testing.assert_allclose(K.mean_squared_error(Y, P).numpy(), ((P - Y) ** 2).mean(-1), rtol=1e-6)
    np.testing.assert_allclose(K.mse(Y, P).numpy(), ((P - Y) ** 2).mean(-1), rtol=1e-6)
    np.testing.assert_allclose(K.MAE(Y, P).numpy(), np.abs(P - Y).mean(-1), rtol=1e-6)


@pytest.mark.parametrize("reduction,reduce", [
    ("sum_over_batch_size", lambda l: l.sum() / l.size), ("auto", lambda l: l.mean()),
    ("sum", np.sum), ("none", lambda l: l)])
def test_mse_class_reductions_and_sample_weight(reduction, reduce):
    per = ((P - Y) ** 2).mean(-1)
    np.testing.assert_allclose(K.MeanSquaredError(reduction=reduction)(Y, P).numpy(), reduce(per), rtol=1e-6)
    sw = np.arange(6, dtype=np.float32)
    np.testing.assert_allclose(K.MeanSquaredError(reduction=reduction)(Y, P, sample_weight=sw).numpy(),
                               reduce(per * sw), rtol=1e-6)
    np.testing.assert_allclose(K.MeanSquaredError(reduction=reduction)(Y, P, sample_weight=sw[:, None]).numpy(),
                               reduce(per * sw), rtol=1e-6)


def test_squeezes_trailing_unit_axis_like_keras():
    y = _r((8,), 3)
    p = _r((8, 1), 4)
    # (8,) vs (8, 1) must not broadcast to (8, 8)
    np.testing.assert_allclose(K.MeanSquaredError()(y, p).numpy(), ((p[:, 0] - y) ** 2).mean(), rtol=1e-6)
    np.testing.assert_allclose(K.Huber()(p, y).numpy(), K.Huber()(y, p[:, 0]).numpy(), rtol=1e-6)


def test_huber():
    for delta in (1.0, 0.5):
        e = np.abs(P - Y)
        ref = np.where(e <= delta, 0.5 * e ** 2, delta * e - 0.5 * delta ** 2).mean(-1)
        np.testing.assert_allclose(K.huber(Y, P, delta=delta).numpy(), ref, rtol=1e-6)
        np.testing.assert_allclose(K.Huber(delta)(Y, P).numpy(), ref.mean(), rtol=1e-6)


def test_binary_crossentropy_probs_and_logits():
    y = (np.random.default_rng(0).random((5, 4)) > 0.5).astype(np.float32)
    logits = _r((5, 4), 2) * 3
    p = _sig(logits).astype(np.float32)
    pc = np.clip(p, EPS, 1 - EPS)
    # Keras 3 (TF 2.21): the clip alone, no eps inside the logs (Keras 2's form)
    ref = -(y * np.log(pc) + (1 - y) * np.log(1 - pc)).mean(-1)
    np.testing.assert_allclose(K.binary_crossentropy(y, p).numpy(), ref, rtol=1e-6)
    # TF 2.21 prints 0.62892276 for this one; Keras 2's eps inside the logs gave 0.6289225
    yt = np.array([[0.2], [0.4], [0.6], [0.8]], np.float32)
    yp = np.array([1.5, 2.0, 2.0, 5.0], np.float32) / 6
    assert float(K.BinaryCrossentropy()(yt, yp)) == pytest.approx(0.62892276, rel=1e-7, abs=0)
    ref_l = (np.maximum(logits, 0) - logits * y + np.log1p(np.exp(-np.abs(logits)))).mean(-1)
    np.testing.assert_allclose(K.binary_crossentropy(y, logits, from_logits=True).numpy(), ref_l, rtol=1e-5)
    np.testing.assert_allclose(K.BinaryCrossentropy(from_logits=True)(y, logits).numpy(), ref_l.mean(), rtol=1e-5)
    ys = y * 0.8 + 0.1
    ref_s = (np.maximum(logits, 0) - logits * ys + np.log1p(np.exp(-np.abs(logits)))).mean(-1)
    np.testing.assert_allclose(K.BinaryCrossentropy(from_logits=True, label_smoothing=0.2)(y, logits).numpy(),
                               ref_s.mean(), rtol=1e-5)
    # saturated probabilities stay finite (clipping)
    assert np.isfinite(K.binary_crossentropy(np.ones((1, 2)), np.array([[0.0, 1.0]], np.float32)).numpy()).all()


def test_categorical_and_sparse_crossentropy():
    logits = _r((5, 4), 5) * 2
    labels = np.array([0, 3, 1, 1, 2])
    onehot = np.eye(4, dtype=np.float32)[labels]
    lsm = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    ref = -lsm[np.arange(5), labels]
    np.testing.assert_allclose(K.categorical_crossentropy(onehot, logits, from_logits=True).numpy(), ref,
                               rtol=1e-5)
    np.testing.assert_allclose(K.sparse_categorical_crossentropy(labels, logits, from_logits=True).numpy(), ref,
                               rtol=1e-5)
    probs = np.exp(lsm).astype(np.float32)
    np.testing.assert_allclose(K.categorical_crossentropy(onehot, probs).numpy(), ref, rtol=1e-4)
    np.testing.assert_allclose(K.sparse_categorical_crossentropy(labels, probs).numpy(), ref, rtol=1e-4)
    np.testing.assert_allclose(K.SparseCategoricalCrossentropy(from_logits=True)(labels[:, None], logits).numpy(),
                               ref.mean(), rtol=1e-5)
    np.testing.assert_allclose(K.CategoricalCrossentropy(from_logits=True, reduction="sum")(onehot, logits).numpy(),
                               ref.sum(), rtol=1e-5)


def test_loss_gradients():
    p = tf.Variable(P)
    with tf.GradientTape() as tape:
        loss = K.MeanSquaredError()(Y, p)
    np.testing.assert_allclose(tape.gradient(loss, p).numpy(), 2 * (P - Y) / P.size, rtol=1e-5)
    with tf.GradientTape() as tape:
        loss = K.Huber(delta=0.5)(Y, p)
    e = P - Y
    np.testing.assert_allclose(tape.gradient(loss, p).numpy(), np.clip(e, -0.5, 0.5) / P.size, rtol=1e-5,
                               atol=1e-7)


def test_get_and_custom_loss():
    assert K.get("mse") is K.mean_squared_error and K.get("MSE") is K.mean_squared_error
    assert isinstance(K.get("Huber"), K.Huber)
    assert K.get("huber") is K.huber
    with pytest.raises(ValueError):
        K.get("nope")

    class Cube(K.Loss):
        def call(self, y_true, y_pred):
            return tf.reduce_mean(tf.abs(y_pred - y_true) ** 3, axis=-1)
    np.testing.assert_allclose(Cube()(Y, P).numpy(), (np.abs(P - Y) ** 3).mean(), rtol=1e-5)
    with pytest.raises(ValueError, match="reduction"):
        K.MeanSquaredError(reduction="median")   # TF 2.21 accepts "mean" (Keras 3's sum_over_batch_size)


def test_compile_fit_predict_with_losses():
    tf.random.set_seed(0)
    x = np.random.default_rng(0).standard_normal((64, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    m = keras.Sequential([keras.layers.Dense(1, input_shape=(3,))])
    m.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    h = m.fit(x, y, batch_size=16, epochs=20, verbose=0)
    assert h.history["loss"][-1] < 0.01 * h.history["loss"][0]
    assert m.predict(x[:5]).shape == (5, 1)
    assert m.evaluate(x, y, verbose=0) < 1e-2
    assert isinstance(m.train_on_batch(x[:8], y[:8]), float)
