"""Boston housing prices (StatLib): 506 samples of 13 attributes, the median value in k$.

``load_data(path="boston_housing.npz", test_split=0.2, seed=113)`` as Keras 3.15's: Keras'
``boston_housing.npz`` (``x``, ``y``), found as ``_files.keras_file`` says (Keras' cache
``~/.keras/datasets/boston_housing.npz`` first), shuffled by ``RandomState(seed)`` and split.
"""
from __future__ import annotations

import numpy as np

from . import _files

NAME = "boston_housing"
ORIGIN = _files.KERAS_ORIGIN + "boston_housing.npz"
FILE_HASH = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """``((x_train, y_train), (x_test, y_test))``: float64 (n, 13) and (n,)."""
    if not 0 <= test_split < 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split}. It must be between 0 and 1 (exclusive of 1).")
    p = _files.keras_file("boston_housing", NAME, [_files.Path(path).name], ORIGIN, FILE_HASH, path, given=path)
    with np.load(p, allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    return _files.shuffled_split(x, y, test_split, seed)


__all__ = ["load_data"]
