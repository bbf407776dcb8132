"""keras.callbacks.ProgbarLogger, RemoteMonitor (wave 21) as Keras 3.15 defines them."""
from __future__ import annotations

import http.server
import json
import socket
import threading
import urllib.parse

import numpy as np
import pytest

import tapeflow as tf


def _model():
    m = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    m.compile(optimizer="sgd", loss="mse")
    return m


_X = np.arange(16, dtype=np.float32).reshape(8, 2) / 10
_Y = np.ones((8, 1), np.float32)


def test_progbar_logger_in_fit(capsys):
    """Keras 3: 'Epoch i/N' then a bar over the epoch's steps ending at steps/steps with the logs;
    fit's own summary line is left out when a ProgbarLogger is given."""
    _model().fit(_X, _Y, batch_size=2, epochs=2, verbose=1, callbacks=[tf.keras.callbacks.ProgbarLogger()])
    out = capsys.readouterr().out
    assert out.count("Epoch 1/2") == 1 and out.count("Epoch 2/2") == 1, out
    assert "4/4 [" in out and "loss:" in out, out
    assert " - loss: " not in out.split("Epoch 1/2")[0]      # nothing before the first epoch
    assert not any(line.startswith("Epoch 1/2 - ") for line in out.splitlines()), out   # (fit's own line)


def test_progbar_logger_evaluate_predict_and_silent(capsys):
    m = _model()
    m.evaluate(_X, _Y, batch_size=4, verbose=1, callbacks=[tf.keras.callbacks.ProgbarLogger()])
    out = capsys.readouterr().out
    assert "2/2 [" in out and "loss:" in out, out
    m.predict(_X, batch_size=4, callbacks=[tf.keras.callbacks.ProgbarLogger()])
    assert "2/2 [" in capsys.readouterr().out
    m.fit(_X, _Y, batch_size=4, epochs=1, verbose=0, callbacks=[tf.keras.callbacks.ProgbarLogger()])
    assert capsys.readouterr().out == ""


class _Sink(http.server.BaseHTTPRequestHandler):
    got = []

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Sink.got.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *a):
        pass


@pytest.mark.parametrize("as_json", [False, True])
def test_remote_monitor_posts_each_epoch(as_json):
    srv = http.server.HTTPServer(("127.0.0.1", 0), _Sink)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    _Sink.got = []
    try:
        cb = tf.keras.callbacks.RemoteMonitor(root=f"http://127.0.0.1:{srv.server_port}", send_as_json=as_json)
        _model().fit(_X, _Y, batch_size=4, epochs=2, verbose=0, callbacks=[cb])
    finally:
        srv.shutdown()
        srv.server_close()
    assert len(_Sink.got) == 2
    path, ctype, body = _Sink.got[1]
    assert path == "/publish/epoch/end/"
    if as_json:
        assert ctype == "application/json"
        sent = json.loads(body)
    else:
        assert ctype == "application/x-www-form-urlencoded"
        sent = json.loads(urllib.parse.parse_qs(body.decode())["data"][0])
    assert sent["epoch"] == 1 and isinstance(sent["loss"], float)


def test_remote_monitor_unreachable_warns_and_training_goes_on():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                      # nothing listens there now: connection refused
    cb = tf.keras.callbacks.RemoteMonitor(root=f"http://127.0.0.1:{port}")
    with pytest.warns(UserWarning, match="Could not reach RemoteMonitor root server"):
        h = _model().fit(_X, _Y, batch_size=4, epochs=2, verbose=0, callbacks=[cb])
    assert len(h.history["loss"]) == 2


def _ema_model(**kw):
    m = tf.keras.Sequential([tf.keras.layers.Dense(3), tf.keras.layers.Dense(1)])
    m.compile(optimizer=tf.keras.optimizers.Adam(0.05, use_ema=True, ema_momentum=0.8, **kw), loss="mse")
    return m


def _weights(m):
    return [w.numpy().copy() for w in m.trainable_variables]


def _averages(m):
    return [m.optimizer.get_slot(w, "average").numpy().copy() for w in m.trainable_variables]


def test_swap_ema_weights_in_evaluate_and_predict():
    tf.random.set_seed(0)
    m = _ema_model()
    m.fit(_X, _Y, batch_size=4, epochs=2, verbose=0)
    # (fit's end: Keras 3 leaves the weights at their averages: finalize_variable_values)
    np.testing.assert_array_equal(_weights(m)[0], _averages(m)[0])
    m.fit(_X, _Y, batch_size=4, epochs=1, verbose=0)     # one more step apart
    w, a = _weights(m), _averages(m)
    seen = []

    class Probe(tf.keras.callbacks.Callback):
        def on_test_batch_begin(self, batch, logs=None):
            seen.append(_weights(self.model))
        on_predict_batch_begin = on_test_batch_begin
    cb = tf.keras.callbacks.SwapEMAWeights()
    m.evaluate(_X, _Y, verbose=0, callbacks=[cb, Probe()])
    m.predict(_X, verbose=0, callbacks=[cb, Probe()])
    for s in seen:                                       # evaluate and predict saw the averages
        for x, y in zip(s, a):
            np.testing.assert_array_equal(x, y)
    for x, y in zip(_weights(m), w):                     # and the weights are back after each
        np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="use_ema=True"):
        _model().evaluate(_X, _Y, verbose=0, callbacks=[tf.keras.callbacks.SwapEMAWeights()])


def test_swap_ema_weights_on_epoch():
    tf.random.set_seed(0)
    m = _ema_model()
    ends = []

    class Probe(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            ends.append((_weights(self.model), _averages(self.model)))
    m.fit(_X, _Y, batch_size=4, epochs=3, verbose=0,
          callbacks=[tf.keras.callbacks.SwapEMAWeights(swap_on_epoch=True), Probe()])
    # after the swap of epoch 1's end the model holds the averages, the average slots the raw weights
    w1, a1 = ends[0]
    assert not np.array_equal(w1[0], a1[0])
    w3, a3 = ends[-1]
    np.testing.assert_array_equal(w3[0], a3[0])          # the last epoch: finalized to the averages
    for x, y in zip(_weights(m), w3):
        np.testing.assert_array_equal(x, y)


def test_use_ema_checks_and_config():
    with pytest.raises(ValueError, match="ema_momentum"):
        tf.keras.optimizers.SGD(use_ema=True, ema_momentum=1.5)
    with pytest.raises(ValueError, match="ema_overwrite_frequency"):
        tf.keras.optimizers.SGD(use_ema=True, ema_overwrite_frequency=0.5)
    cfg = tf.keras.optimizers.Adam(use_ema=True, ema_momentum=0.9, ema_overwrite_frequency=3).get_config()
    assert (cfg["use_ema"], cfg["ema_momentum"], cfg["ema_overwrite_frequency"]) == (True, 0.9, 3)
    again = tf.keras.optimizers.Adam.from_config(cfg)
    assert again.use_ema and again.ema_overwrite_frequency == 3
