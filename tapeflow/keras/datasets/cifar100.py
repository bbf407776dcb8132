"""CIFAR-100: 50,000 training and 10,000 test 32x32 colour images, 100 fine / 20 coarse classes.

``load_data(label_mode="fine")`` as Keras 3.15's: the python files ``train`` and ``test`` of
``cifar-100-python``, where Keras' ``get_file(..., extract=True)`` leaves them
(``~/.keras/datasets/cifar-100-python-target/cifar-100-python/``) or directly in a search directory
(``_files.keras_file``); uint8 images (n, 32, 32, 3), labels (n, 1) as the file stores them (int64).
"""
from __future__ import annotations

import os

from . import _cifar, _files

NAME = "cifar100"
DIRNAME = "cifar-100-python-target"
ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
FILE_HASH = "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"


def load_data(label_mode="fine"):
    """``((x_train, y_train), (x_test, y_test))``."""
    if label_mode not in ["fine", "coarse"]:
        raise ValueError(f'`label_mode` must be one of `"fine"`, `"coarse"`. Received: label_mode={label_mode}.')
    path = _files.keras_file("cifar100", NAME, [f"{DIRNAME}/cifar-100-python", "cifar-100-python"], ORIGIN,
                             FILE_HASH, DIRNAME, extract=True)
    if path.name != "cifar-100-python":      # get_file's extraction directory holds the archive's directory
        path = path / "cifar-100-python"
    x_train, y_train = _cifar.load_batch(os.path.join(path, "train"), label_key=f"{label_mode}_labels")
    x_test, y_test = _cifar.load_batch(os.path.join(path, "test"), label_key=f"{label_mode}_labels")
    return _cifar.to_keras_layout(x_train, y_train, x_test, y_test)


__all__ = ["load_data"]
