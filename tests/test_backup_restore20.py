"""keras.callbacks.BackupAndRestore (wave 20): an interrupted fit resumes from its backup.
TF 2.21's behaviour (probed with the same programs) is noted with ``# TF 2.21:``."""
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 3)).astype(np.float32)
Y = RNG.normal(size=(40, 1)).astype(np.float32)


def make(optimizer=None):
    keras.utils.set_random_seed(1)
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"), keras.layers.Dense(1)])
    m.compile(optimizer or keras.optimizers.Adam(0.1), "mse")
    return m


class InterruptAtEpoch(keras.callbacks.Callback):
    def __init__(self, epoch):        # (no super().__init__(), as the guide's)
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.epoch:
            raise RuntimeError("Interruption")


class InterruptAtStep(keras.callbacks.Callback):
    def __init__(self, n):
        self.n, self.count = n, 0

    def on_train_batch_end(self, batch, logs=None):
        self.count += 1
        if self.count == self.n:
            raise RuntimeError("Interruption")


class Epochs(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_epoch_begin(self, epoch, logs=None):
        self.seen.append((epoch, int(self.model.optimizer.iterations.numpy())))


def reference(**fit):
    m = make()
    h = m.fit(X, Y, epochs=4, batch_size=10, shuffle=False, verbose=0, **fit)
    return m.get_weights(), h.history["loss"]


def test_resume_after_an_epoch_end_interruption(tmp_path):
    want_w, want_loss = reference()
    d = tmp_path / "backup"
    bk = keras.callbacks.BackupAndRestore(d)
    with pytest.raises(RuntimeError, match="Interruption"):
        make().fit(X, Y, epochs=4, batch_size=10, shuffle=False, verbose=0, callbacks=[bk, InterruptAtEpoch(1)])
    assert os.path.exists(d / "latest.json")
    m, ep = make(), Epochs()
    h = m.fit(X, Y, epochs=4, batch_size=10, shuffle=False, verbose=0, callbacks=[bk, ep])
    # TF 2.21: resumes at epoch 2 with the optimizer's iterations 8; the losses of epochs 2, 3 and
    # the final weights are the uninterrupted run's; History holds epochs [2, 3]
    assert ep.seen == [(2, 8), (3, 12)] and h.epoch == [2, 3]
    np.testing.assert_array_equal(h.history["loss"], want_loss[2:])
    for a, b in zip(want_w, m.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert not os.path.exists(d)        # TF 2.21: delete_checkpoint=True removes backup_dir at the end


def test_resume_mid_epoch_at_the_step(tmp_path):
    want_w, want_loss = reference()
    d = tmp_path / "backup"
    bk = keras.callbacks.BackupAndRestore(d, save_freq=3)
    with pytest.raises(RuntimeError):
        make().fit(X, Y, epochs=4, batch_size=10, shuffle=False, verbose=0, callbacks=[bk, InterruptAtStep(7)])
    m, ep = make(), Epochs()
    h = m.fit(X, Y, epochs=4, batch_size=10, shuffle=False, verbose=0, callbacks=[bk, ep])
    # backed up after step 6 (epoch 1, 2 of its 4 batches done): tapeflow resumes at that step
    # (TF 2.21 restarts epoch 1 from its first batch with those weights: 18 steps in all, not 16)
    assert ep.seen == [(1, 6), (2, 8), (3, 12)] and h.epoch == [1, 2, 3]
    assert int(m.optimizer.iterations.numpy()) == 16
    np.testing.assert_array_equal(h.history["loss"][1:], want_loss[2:])
    for a, b in zip(want_w, m.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_resume_with_steps_per_epoch_and_validation(tmp_path):
    """The guide's form: steps_per_epoch (one batch iterator across epochs), validation data."""
    kw = dict(epochs=4, batch_size=4, steps_per_epoch=3, shuffle=False, verbose=0, validation_data=(X, Y))
    m0 = make()
    want = m0.fit(X, Y, **kw).history
    d = tmp_path / "b"
    bk = keras.callbacks.BackupAndRestore(d, save_freq=2)
    with pytest.raises(RuntimeError):
        make().fit(X, Y, callbacks=[bk, InterruptAtStep(5)], **kw)
    m = make()
    h = m.fit(X, Y, callbacks=[bk], **kw)
    assert h.epoch == [1, 2, 3]
    np.testing.assert_allclose(h.history["val_loss"], want["val_loss"][1:], rtol=0, atol=0)
    for a, b in zip(m0.get_weights(), m.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_double_checkpoint_falls_back_to_the_previous_backup(tmp_path):
    d = tmp_path / "b"
    bk = keras.callbacks.BackupAndRestore(d, double_checkpoint=True, delete_checkpoint=False)
    with pytest.raises(RuntimeError):
        make().fit(X, Y, epochs=4, batch_size=10, shuffle=False, verbose=0, callbacks=[bk, InterruptAtEpoch(2)])
    assert sorted(p for p in os.listdir(d) if p.endswith(".json")) == ["latest.json", "previous.json"]
    # the newer backup (after epoch 2) is damaged: the other one (after epoch 1) is restored
    newer = max(("latest", "previous"), key=lambda n: os.path.getmtime(d / f"{n}.json"))
    data = [p for p in os.listdir(d) if p.startswith(newer + ".data")][0]
    with open(d / data, "r+b") as f:
        f.seek(-4, 2)
        f.write(b"\0\0\0\0")
    ep = Epochs()
    make().fit(X, Y, epochs=4, batch_size=10, shuffle=False, verbose=0,
               callbacks=[keras.callbacks.BackupAndRestore(d, double_checkpoint=True), ep])
    assert ep.seen[0] == (2, 8)


def test_a_damaged_single_backup_is_an_error_not_a_silent_restart(tmp_path):
    d = tmp_path / "b"
    bk = keras.callbacks.BackupAndRestore(d)
    with pytest.raises(RuntimeError):
        make().fit(X, Y, epochs=3, batch_size=10, verbose=0, callbacks=[bk, InterruptAtEpoch(0)])
    data = [p for p in os.listdir(d) if p.startswith("latest.data")][0]
    with open(d / data, "r+b") as f:
        f.truncate(20)
    with pytest.raises(tf.train.CheckpointError, match="latest"):
        make().fit(X, Y, epochs=3, batch_size=10, verbose=0, callbacks=[bk])


def test_backup_holds_the_loss_scale_optimizer_state(tmp_path):
    from tapeflow.keras import mixed_precision as mp
    d = tmp_path / "b"
    opt = mp.LossScaleOptimizer(keras.optimizers.SGD(0.01), initial_scale=64.0)
    m = make(opt)
    with pytest.raises(RuntimeError):
        m.fit(X, Y, epochs=3, batch_size=10, verbose=0,
              callbacks=[keras.callbacks.BackupAndRestore(d), InterruptAtEpoch(0)])
    opt.dynamic_scale.assign(np.float32(1.0))     # (changed after the backup: the restore undoes it)
    m2 = make(mp.LossScaleOptimizer(keras.optimizers.SGD(0.01), initial_scale=64.0))
    ep = Epochs()
    m2.fit(X, Y, epochs=2, batch_size=10, verbose=0, callbacks=[keras.callbacks.BackupAndRestore(d), ep])
    assert ep.seen == [(1, 4)] and float(m2.optimizer.dynamic_scale.numpy()) == 64.0


def test_arguments():
    # TF 2.21: ValueError "Empty `backup_dir` argument passed"
    with pytest.raises(ValueError, match="Empty `backup_dir` argument passed"):
        keras.callbacks.BackupAndRestore("")
    # TF 2.21: ValueError "Invalid value for argument `save_freq`. Received: save_freq=batch. ..."
    for bad in ("batch", 2.5):
        with pytest.raises(ValueError, match=f"Received: save_freq={bad}"):
            keras.callbacks.BackupAndRestore("/tmp/x", save_freq=bad)
