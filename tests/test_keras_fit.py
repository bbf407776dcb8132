"""fit's callbacks, History and validation_split against Keras 3 rules."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras


def _model():
    tf.random.set_seed(0)
    m = keras.Sequential([keras.layers.Dense(1, input_shape=(3,))])
    m.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    return m


def _data(n=40):
    r = np.random.default_rng(0)
    x = r.normal(size=(n, 3)).astype(np.float32)
    return x, x @ np.array([[1.0], [-2.0], [0.5]], np.float32)


def _forced(seq, key="val_loss"):
    # a user callback listed before EarlyStopping rewrites the epoch log, so the
    # monitored sequence is fixed whatever the training does
    return keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: logs.__setitem__(key, seq[epoch]))


# epochs run and stopped_epoch read off Keras 3 (TF 2.21) with the same LambdaCallback-driven toy
@pytest.mark.parametrize("seq,patience,min_delta,epochs_run", [
    ([1.0, 0.9, 0.95, 0.92, 0.5, 0.4], 2, 0, 4),      # stops at epoch 3 (0-based): 2 epochs without improvement
    ([1.0, 0.9, 0.95, 0.92, 0.5, 0.4], 3, 0, 6),      # the 0.5 at epoch 4 resets the wait
    ([1.0, 0.99, 0.98, 0.97, 0.96, 0.95], 1, 0.05, 2),  # improvements under min_delta do not count
    ([1.0, 1.0, 1.0], 0, 0, 2),                       # never stops at epoch 0, even with patience 0
])
def test_early_stopping_epoch(seq, patience, min_delta, epochs_run):
    m = _model()
    x, y = _data()
    es = keras.callbacks.EarlyStopping(monitor="val_loss", patience=patience, min_delta=min_delta)
    h = m.fit(x, y, epochs=len(seq), verbose=0, validation_data=(x, y), callbacks=[_forced(seq), es])
    assert h.epoch == list(range(epochs_run))
    assert h.history["val_loss"] == seq[:epochs_run]
    assert es.stopped_epoch == (epochs_run - 1 if epochs_run < len(seq) else 0)


def test_early_stopping_mode_max_and_restore_best_weights():
    m = _model()
    x, y = _data()
    snaps = []
    seq = [0.1, 0.9, 0.5, 0.4]
    rec = keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: snaps.append(m.get_weights()))
    es = keras.callbacks.EarlyStopping(monitor="val_acc", mode="max", patience=2, restore_best_weights=True)
    m.fit(x, y, epochs=4, verbose=0, callbacks=[_forced(seq, "val_acc"), rec, es])
    assert es.stopped_epoch == 3 and es.best_epoch == 1
    for w, b in zip(m.get_weights(), snaps[1]):
        np.testing.assert_array_equal(w, b)
    assert not np.array_equal(snaps[1][0], snaps[3][0])


def test_history_keys_and_hook_order():
    m = _model()
    x, y = _data(40)
    calls = []

    class Rec(keras.callbacks.Callback):
        def on_train_begin(self, logs=None): calls.append("train_begin")
        def on_epoch_begin(self, epoch, logs=None): calls.append(f"epoch_begin{epoch}")
        def on_train_batch_end(self, batch, logs=None): calls.append(f"batch{batch}")
        def on_epoch_end(self, epoch, logs=None):
            assert self.model is m
            calls.append(f"epoch_end{epoch}")
        def on_train_end(self, logs=None): calls.append("train_end")

    h = m.fit(x, y, epochs=2, batch_size=16, verbose=0, validation_split=0.2, callbacks=[Rec()])
    assert isinstance(h, keras.callbacks.History)
    assert sorted(h.history) == ["loss", "val_loss"]
    assert all(len(v) == 2 for v in h.history.values())
    # 32 training samples after the split -> 2 batches of 16
    assert calls == ["train_begin", "epoch_begin0", "batch0", "batch1", "epoch_end0",
                     "epoch_begin1", "batch0", "batch1", "epoch_end1", "train_end"]


def test_validation_split_is_the_last_fraction_before_shuffling():
    m = _model()
    x, y = _data(40)
    h = m.fit(x, y, epochs=1, verbose=0, validation_split=0.25, shuffle=True)
    # the validation loss is measured after the epoch's training: it is the loss on x[30:], not on
    # any other 10 samples
    np.testing.assert_allclose(h.history["val_loss"][0], m.evaluate(x[30:], y[30:], verbose=0), rtol=1e-6)
    assert not np.isclose(h.history["val_loss"][0], m.evaluate(x[:10], y[:10], verbose=0), rtol=1e-3)


def test_stop_training_from_a_callback():
    m = _model()
    x, y = _data()

    def stop(epoch, logs):
        m.stop_training = epoch == 1
    h = m.fit(x, y, epochs=5, verbose=0, callbacks=[keras.callbacks.LambdaCallback(on_epoch_end=stop)])
    assert h.epoch == [0, 1]


def test_callbacks_must_be_callback_instances():
    m = _model()
    x, y = _data()
    with pytest.raises(TypeError, match="Callback"):
        m.fit(x, y, epochs=1, verbose=0, callbacks=[lambda: None])


def test_monitor_direction_in_auto_mode_as_keras_3():
    # Keras 3 (MonitorCallback): losses go down, a compiled metric says its direction, anything else
    # is an error at the first epoch end asking for mode='min' or 'max'
    x, y = _data()
    m = _model()
    m.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae", "accuracy"])
    seen = {}
    for monitor in ("loss", "val_loss", "val_mae", "accuracy", "val_accuracy"):
        es = keras.callbacks.EarlyStopping(monitor=monitor, patience=10)
        m.fit(x, y, epochs=1, verbose=0, validation_data=(x, y), callbacks=[es])
        seen[monitor] = es.monitor_op
    assert seen == {"loss": np.less, "val_loss": np.less, "val_mae": np.less, "accuracy": np.greater,
                    "val_accuracy": np.greater}
    with pytest.raises(ValueError, match=r"monitor=val_acc, but Keras isn't able to automatically determine.*"
                                         r"Pass `mode='max'`"):
        m.fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.EarlyStopping(monitor="val_acc")])
    with pytest.warns(UserWarning, match="mode 'up' is unknown, fallback to auto mode"):
        keras.callbacks.EarlyStopping(mode="up")
