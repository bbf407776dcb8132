"""Keras 3 (TF 2.21 backend) values of keras.ops' FFT family for tests/test_signal21.py (cases in
tests/keras_fft_cases.py). Run with the peers venv from the repository root:

    .venv-peers/bin/python tests/tf_reference/make_keras_fft_reference.py
"""
import os
import sys

import keras
import numpy as np
from keras import ops

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import keras_fft_cases as C  # noqa: E402

OUT = os.path.join(os.path.dirname(HERE), "data", "keras_fft21_reference.npz")


def main():
    data = {}
    for name, prog, inputs in C.CASES:
        out = prog(ops, *inputs)
        outs = out if isinstance(out, (tuple, list)) else [out]
        for i, o in enumerate(outs):
            data[f"{name}/{i}"] = np.asarray(o)
    for name, prog, inputs in C.LAYER_CASES:
        data[f"{name}/0"] = np.asarray(prog(keras, *inputs))
    np.savez_compressed(OUT, **data)
    print("wrote", OUT, len(data), "arrays")


if __name__ == "__main__":
    main()
