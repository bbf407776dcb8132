"""Keras 3.15 (TF 2.21): keras.layers.ContrastLimitedAdaptiveHistogramEqualization on a few images
(float32 0-255 with symmetric padding to whole tiles, [0, 1] value range, no clipping, uint8),
for tests/test_keras21_layers.py.

    .venv-peers/bin/python tests/tf_reference/make_keras21_clahe_reference.py
"""
from __future__ import annotations

import json
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "keras21_clahe_reference.npz")
CASES = [("img", {}), ("img", {"clip_limit": 2.0, "tile_grid_size": [3, 2]}),
         ("img", {"clip_limit": 0, "tile_grid_size": [4, 4]}),
         ("img01", {"value_range": [0, 1], "tile_grid_size": [2, 5]}), ("img8", {"tile_grid_size": [4, 4]})]


def inputs():
    rng = np.random.default_rng(4)
    img = (rng.random((2, 13, 10, 2)) ** 2 * 255).astype(np.float32)
    img8 = rng.integers(0, 256, (16, 16, 3)).astype(np.uint8)
    return {"img": img, "img01": img / np.float32(255.0), "img8": img8}


def main():
    import keras
    data = inputs()
    out = {f"out{i}": np.asarray(keras.layers.ContrastLimitedAdaptiveHistogramEqualization(**kw)(data[k]))
           for i, (k, kw) in enumerate(CASES)}
    np.savez_compressed(OUT, cases=json.dumps(CASES), **out)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
