"""ModelCheckpoint and TensorBoard with Keras 3's rules (file names, when a file is
written, what is in it; TensorBoard's run layout and tags), read back from disk."""
import os

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import tapeflow as tf
from tapeflow import keras


def _data(n=24):
    r = np.random.default_rng(0)
    x = r.normal(size=(n, 3)).astype(np.float32)
    return x, x @ np.array([[1.0], [-2.0], [0.5]], np.float32)


def _model(metrics=("mae",)):
    tf.random.set_seed(0)
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    m.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=list(metrics))
    return m


def _forced(seq, key):
    # listed before the checkpoint callback: fixes the monitored sequence whatever training does
    return keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: logs.__setitem__(key, seq[epoch]))


def test_filepath_is_formatted_with_epoch_and_logs(tmp_path):
    x, y = _data()
    m = _model()
    path = str(tmp_path / "ck" / "m-{epoch:02d}-{val_loss:.2f}.keras")
    h = m.fit(x, y, epochs=3, verbose=0, validation_data=(x, y),
              callbacks=[keras.callbacks.ModelCheckpoint(path)])
    want = sorted(f"m-{e + 1:02d}-{v:.2f}.keras" for e, v in enumerate(h.history["val_loss"]))
    assert sorted(os.listdir(tmp_path / "ck")) == want
    last = keras.models.load_model(str(tmp_path / "ck" / want[-1]))
    for a, b in zip(last.get_weights(), m.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_save_best_only_keeps_the_best_epochs_model(tmp_path, capsys):
    x, y = _data()
    m = _model()
    snaps = []
    seq = [0.5, 0.3, 0.4, 0.35]
    rec = keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: snaps.append(m.get_weights()))
    path = str(tmp_path / "best.keras")
    ck = keras.callbacks.ModelCheckpoint(path, monitor="val_mae", save_best_only=True, verbose=1)
    m.fit(x, y, epochs=4, verbose=0, callbacks=[_forced(seq, "val_mae"), rec, ck])
    assert ck.best == 0.3 and ck.monitor_op is np.less    # mae goes down (the compiled metric says so)
    best = keras.models.load_model(path)
    for a, b in zip(best.get_weights(), snaps[1]):
        np.testing.assert_array_equal(a, b)
    out = capsys.readouterr().out
    # Keras 3's messages, word for word
    assert f"\nEpoch 1: val_mae improved from None to 0.50000, saving model to {path}" in out
    assert f"\nEpoch 2: val_mae improved from 0.50000 to 0.30000, saving model to {path}" in out
    assert "\nEpoch 3: val_mae did not improve from 0.30000" in out
    assert f"\nEpoch 2: finished saving model to {path}" in out


def test_mode_max_and_initial_value_threshold(tmp_path):
    x, y = _data()
    m = _model()
    path = str(tmp_path / "e{epoch}.keras")
    ck = keras.callbacks.ModelCheckpoint(path, monitor="score", mode="max", save_best_only=True,
                                         initial_value_threshold=0.6)
    m.fit(x, y, epochs=4, verbose=0, callbacks=[_forced([0.5, 0.7, 0.65, 0.9], "score"), ck])
    assert sorted(os.listdir(tmp_path)) == ["e2.keras", "e4.keras"]


def test_save_weights_only(tmp_path):
    x, y = _data()
    m = _model()
    path = str(tmp_path / "w-{epoch}")
    m.fit(x, y, epochs=2, verbose=0, callbacks=[keras.callbacks.ModelCheckpoint(path, save_weights_only=True)])
    fresh = _model()
    fresh.load_weights(str(tmp_path / "w-2"))
    for a, b in zip(fresh.get_weights(), m.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert not any(n.endswith(".keras") for n in os.listdir(tmp_path))


def test_save_freq_in_batches(tmp_path):
    x, y = _data()
    m = _model()
    ck = keras.callbacks.ModelCheckpoint(str(tmp_path / "e{epoch}-b{batch}.keras"), save_freq=2)
    m.fit(x, y, epochs=2, batch_size=8, verbose=0, callbacks=[ck])      # 3 batches per epoch
    # batches seen: 2 -> save at epoch 1 batch 2; 4 -> epoch 2 batch 1; 6 -> epoch 2 batch 3
    assert sorted(os.listdir(tmp_path)) == ["e1-b2.keras", "e2-b1.keras", "e2-b3.keras"]


def test_checkpoint_argument_errors(tmp_path):
    with pytest.raises(ValueError, match=r"must end in `\.keras`.*Received: filepath=.*m\.txt"):
        keras.callbacks.ModelCheckpoint(str(tmp_path / "m.txt"))
    with pytest.raises(ValueError, match=r"must end in `\.keras`.*does not write HDF5"):
        keras.callbacks.ModelCheckpoint(str(tmp_path / "m.h5"))
    with pytest.raises(ValueError, match="Unrecognized save_freq: hourly"):
        keras.callbacks.ModelCheckpoint(str(tmp_path / "m.keras"), save_freq="hourly")
    x, y = _data()
    with pytest.raises(KeyError, match=r"Failed to format this callback filepath.*Reason: .*nope.*the logs hold"):
        _model().fit(x, y, epochs=1, verbose=0,
                     callbacks=[keras.callbacks.ModelCheckpoint(str(tmp_path / "{nope:.2f}.keras"))])
    with pytest.raises(ValueError, match="monitor=nope, but Keras isn't able to automatically determine"):
        _model().fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.ModelCheckpoint(
            str(tmp_path / "m.keras"), monitor="nope", save_best_only=True)])


def _read(d):
    acc = EventAccumulator(str(d), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    return acc


def _values(acc, tag):
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def test_tensorboard_layout_and_tags_as_keras(tmp_path):
    x, y = _data()
    m = _model()
    logdir = tmp_path / "tb"
    vx, vy = x[:8], y[:8]
    iters = []
    rec = keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: iters.append(int(m.optimizer.iterations)))
    h = m.fit(x, y, epochs=3, batch_size=8, verbose=0, validation_data=(vx, vy),
              callbacks=[rec, keras.callbacks.TensorBoard(str(logdir))])
    assert sorted(os.listdir(logdir)) == ["train", "validation"]
    train, val = _read(logdir / "train"), _read(logdir / "validation")
    assert sorted(train.Tags()["scalars"]) == ["epoch_learning_rate", "epoch_loss", "epoch_mae"]
    assert sorted(val.Tags()["scalars"]) == ["epoch_loss", "epoch_mae", "evaluation_loss_vs_iterations",
                                             "evaluation_mae_vs_iterations"]
    for tag, key in (("epoch_loss", "loss"), ("epoch_mae", "mae")):
        steps, vals = zip(*_values(train, tag))
        assert steps == (0, 1, 2)
        np.testing.assert_allclose(vals, h.history[key], rtol=1e-6)
        steps, vals = zip(*_values(val, tag))
        assert steps == (0, 1, 2)
        np.testing.assert_allclose(vals, h.history["val_" + key], rtol=1e-6)
    np.testing.assert_allclose([v for _, v in _values(train, "epoch_learning_rate")], [0.05] * 3, rtol=1e-6)
    steps, vals = zip(*_values(val, "evaluation_loss_vs_iterations"))
    assert list(steps) == iters == [3, 6, 9]
    np.testing.assert_allclose(vals, h.history["val_loss"], rtol=1e-6)


def test_tensorboard_batch_scalars_with_update_freq(tmp_path):
    x, y = _data()
    m = _model(metrics=())
    batch_logs = []
    rec = keras.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: batch_logs.append(logs["loss"]))
    m.fit(x, y, epochs=2, batch_size=8, verbose=0, callbacks=[rec, keras.callbacks.TensorBoard(
        str(tmp_path), update_freq=2)])
    steps, vals = zip(*_values(_read(tmp_path / "train"), "batch_loss"))
    assert steps == (2, 4, 6)
    np.testing.assert_allclose(vals, batch_logs[1::2], rtol=1e-6)
    with pytest.raises(ValueError, match="update_freq must be 'epoch', 'batch' or a positive integer"):
        keras.callbacks.TensorBoard(str(tmp_path), update_freq=0)
