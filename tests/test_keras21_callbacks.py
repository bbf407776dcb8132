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
