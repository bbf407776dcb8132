"""CIFAR's python batches (a pickled dict per batch: ``data`` (n, 3072) uint8, labels lists), read
with NumPy's globals only (``_files.load_pickle``), as Keras 3.15's ``cifar.load_batch``."""
from __future__ import annotations

import numpy as np

from . import _files


def load_batch(fpath, label_key="labels"):
    d = {k.decode("utf8"): v for k, v in _files.load_pickle(fpath, encoding="bytes").items()}
    data = d["data"]
    return data.reshape(data.shape[0], 3, 32, 32), d[label_key]


def to_keras_layout(x_train, y_train, x_test, y_test):
    """Labels as (n, 1) columns; images channels_last (tapeflow's only image data format)."""
    return ((x_train.transpose(0, 2, 3, 1), np.reshape(y_train, (len(y_train), 1))),
            (x_test.transpose(0, 2, 3, 1), np.reshape(y_test, (len(y_test), 1))))
