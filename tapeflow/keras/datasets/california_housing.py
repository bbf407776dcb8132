"""California housing (1990 census): 20,640 block groups, 8 features, the median house value.

``load_data(version="large", path="california_housing.npz", test_split=0.2, seed=113)`` as Keras
3.15's: ``version="small"`` keeps the first 600 samples; then a ``RandomState(seed)`` shuffle and
split. Files are found as ``_files.keras_file`` says.
"""
from __future__ import annotations

import numpy as np

from . import _files

NAME = "california_housing"
ORIGIN = _files.KERAS_ORIGIN + "california_housing.npz"
FILE_HASH = "1a2e3a52e0398de6463aebe6f4a8da34fb21fbb6b934cf88c3425e766f2a1a6f"


def load_data(version="large", path="california_housing.npz", test_split=0.2, seed=113):
    """``((x_train, y_train), (x_test, y_test))``: float32 (n, 8) and (n,)."""
    if not 0 <= test_split < 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split}. It must be between 0 and 1 (exclusive of 1).")
    p = _files.keras_file("california_housing", NAME, [_files.Path(path).name], ORIGIN, FILE_HASH, path,
                          given=path)
    with np.load(p, allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    if version == "small":
        x, y = x[:600], y[:600]
    elif version != "large":
        raise ValueError(f"Argument `version` must be one of 'small', 'large'. Received: version={version}")
    return _files.shuffled_split(x, y, test_split, seed)


__all__ = ["load_data"]
