"""TF 2.21's tf.linalg.logm on the matrices of LOGM_CASES (tests/test_logm22.py): values, and the error
class + message of bad inputs. Run with the peers venv:
    python tests/tf_reference/make_logm_reference.py
It writes tests/data/logm22_tf.npz (values) and tests/data/logm22_tf_errors.json."""
import json
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def cases():
    r = np.random.RandomState(22)
    c = lambda *s: r.randn(*s) + 1j * r.randn(*s)   # noqa: E731
    spd = r.randn(4, 4)
    return {
        "complex128_4": c(4, 4) + 3 * np.eye(4),
        "complex64_4": (c(4, 4) + 3 * np.eye(4)).astype(np.complex64),
        "batch_2x3": c(2, 3, 3) + 2 * np.eye(3),
        "real_as_complex": np.array([[2, 1, 0.5], [0.3, 3, 1], [0.2, 0.1, 1.5]], np.complex128),
        "spd": (spd @ spd.T + np.eye(4)).astype(np.complex128),
        "negative_eigenvalue": np.array([[-1, 0], [0, 2]], np.complex128),
        "rotation": np.array([[0, -1], [1, 0]], np.complex128),
        "one_by_one": np.array([[2 - 1j]], np.complex64),
        "empty": np.zeros((0, 0), np.complex64),
    }


def bad():
    return {
        "float64": np.eye(2),
        "float32": np.eye(2, dtype=np.float32),
        "rank1": np.ones(3, np.complex64),
        "not_square": np.ones((2, 3), np.complex64),
    }


if __name__ == "__main__":
    import tensorflow as tf
    here = Path(__file__).resolve().parent.parent / "data"
    np.savez(here / "logm22_tf.npz", **{k: tf.linalg.logm(v).numpy() for k, v in cases().items()})
    errs = {}
    for k, v in bad().items():
        try:
            tf.linalg.logm(v)
            errs[k] = {"error": None}
        except Exception as e:   # noqa: BLE001
            errs[k] = {"error": type(e).__name__, "message": e.message if hasattr(e, "message") else str(e)}
    (here / "logm22_tf_errors.json").write_text(json.dumps(errs, indent=0))
