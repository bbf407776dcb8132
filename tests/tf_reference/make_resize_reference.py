"""TF 2.21's tf.image.resize for the methods beyond bilinear/nearest (bicubic, area, lanczos3,
lanczos5, gaussian, mitchellcubic) and for antialias=True, on one seeded image and sizes that up-
and downsample, for tests/test_resize22.py. Run with the peers venv:
    python tests/tf_reference/make_resize_reference.py
It writes tests/data/resize22_tf.npz (the image and one array per case)."""
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from resize_cases import cases  # noqa: E402


if __name__ == "__main__":
    image = (np.random.default_rng(0).random((2, 5, 7, 3)) * 255).astype(np.float32)
    out = {"image": image, "uint8_image": image.astype(np.uint8)}
    for key, m, aa, size in cases():
        out[key] = tf.image.resize(image, size, method=m, antialias=aa).numpy()
        out["u8_" + key] = tf.image.resize(image.astype(np.uint8), size, method=m, antialias=aa).numpy()
    np.savez_compressed(Path(__file__).resolve().parent.parent / "data" / "resize22_tf.npz", **out)
