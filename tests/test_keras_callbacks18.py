"""Callback hooks Keras 3 defines that tapeflow lacked: on_batch_begin/on_batch_end (what the
training batch hooks call by default), the predict batch hooks, stopping within an epoch, and
TerminateOnNaN. Expected values: what TF 2.21 printed for the same program."""
import numpy as np
import pytest

import tapeflow as tf

K = tf.keras


def _model():
    m = K.Sequential([K.Input((2,)), K.layers.Dense(1)])
    m.compile("sgd", "mse")
    return m


def test_batch_hooks_by_their_keras2_names_and_predict_hooks():
    class Hooks(K.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.train, self.predict = [], []

        def on_batch_end(self, batch, logs=None):
            self.train.append(batch)

        def on_predict_batch_end(self, batch, logs=None):
            self.predict.append(batch)

    x = np.ones((8, 2), np.float32)
    m, c = _model(), Hooks()
    m.fit(x, np.ones((8, 1), np.float32), batch_size=2, epochs=2, verbose=0, callbacks=[c])
    m.predict(x, batch_size=4, verbose=0, callbacks=[c])
    assert c.train == [0, 1, 2, 3, 0, 1, 2, 3] and c.predict == [0, 1]      # TF 2.21


def test_terminate_on_nan_stops_within_the_epoch(capsys):
    x, y = np.ones((8, 2), np.float32), np.ones((8, 1), np.float32)
    y[5] = np.nan
    m = _model()
    h = m.fit(x, y, batch_size=2, epochs=3, verbose=0, callbacks=[K.callbacks.TerminateOnNaN()], shuffle=False)
    assert len(h.history["loss"]) == 1 and np.isnan(h.history["loss"][0])   # TF 2.21: {'loss': [nan]}
    assert "Batch 2: Invalid loss, terminating training" in capsys.readouterr().out
    with pytest.raises(RuntimeError, match="NaN or Inf loss encountered at batch 0"):
        m.fit(x, y, batch_size=2, epochs=3, verbose=0, callbacks=[K.callbacks.TerminateOnNaN(raise_error=True)],
              shuffle=False)
