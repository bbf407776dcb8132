"""TF 2.21's outputs of tests/tf_reference/image_data_generator_programs.py (Keras 3's legacy
ImageDataGenerator, SciPy's affine_transform) -> tests/data/image_data_generator_tf.npz, and the lines
they print -> its "printed" entry. Run with the peers venv from the repository root:

    .venv-peers/bin/python tests/tf_reference/make_image_data_generator_reference.py
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import image_data_generator_programs as P  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "image_data_generator_tf.npz")

arrays, printed = {}, []
for prog in P.PROGRAMS:
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()) as out:
        got = prog(tf, tmp)
    printed.append(out.getvalue())
    for k, v in got.items():
        arrays[f"{prog.__name__}/{k}"] = np.asarray(v)
arrays["printed"] = np.array(printed)
np.savez_compressed(OUT, **arrays)
print(f"{len(arrays)} arrays -> {OUT}")
