"""CIFAR-10: 50,000 training and 10,000 test 32x32 colour images of 10 classes.

``load_data()`` as Keras 3.15's: the python batches ``data_batch_1``..``5`` and ``test_batch`` of
``cifar-10-batches-py``, where Keras' ``get_file(..., extract=True)`` leaves them
(``~/.keras/datasets/cifar-10-batches-py-target/cifar-10-batches-py/``) or directly in a search
directory (``_files.keras_file``); uint8 images (n, 32, 32, 3), uint8 labels (n, 1).
"""
from __future__ import annotations

import os

import numpy as np

from . import _cifar, _files

NAME = "cifar10"
DIRNAME = "cifar-10-batches-py-target"
ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
FILE_HASH = "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"


def load_data():
    """``((x_train, y_train), (x_test, y_test))``."""
    path = _files.keras_file("cifar10", NAME, [f"{DIRNAME}/cifar-10-batches-py", "cifar-10-batches-py"], ORIGIN,
                             FILE_HASH, DIRNAME, extract=True)
    if path.name != "cifar-10-batches-py":      # get_file's extraction directory holds the archive's directory
        path = path / "cifar-10-batches-py"
    xs, ys = zip(*(_cifar.load_batch(os.path.join(path, f"data_batch_{i}")) for i in range(1, 6)))
    # Keras fills preallocated uint8 arrays: the labels (lists of ints) become uint8
    x_train = np.concatenate(xs).astype("uint8")
    y_train = np.concatenate([np.asarray(y) for y in ys]).astype("uint8")
    x_test, y_test = _cifar.load_batch(os.path.join(path, "test_batch"))
    return _cifar.to_keras_layout(x_train, y_train, np.asarray(x_test).astype(x_train.dtype),
                                  np.asarray(y_test).astype(y_train.dtype))


__all__ = ["load_data"]
