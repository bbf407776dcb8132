"""TF 2.21's tf.linalg.LinearOperator* on the cases of linop_cases.py (float32 and float64): every public
method's value, the types of derived operators, the hints, and the error class + message of bad inputs,
for tests/test_linear_operator.py. Run with the peers venv:
    python tests/tf_reference/make_linop_reference.py
It writes tests/data/linop_tf.json."""
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.get_logger().setLevel("ERROR")   # TF warns on every default (dense) implementation
sys.path.insert(0, str(Path(__file__).resolve().parent))
from linop_cases import operators, evaluate, bad  # noqa: E402

if __name__ == "__main__":
    out = {"values": {}, "bad": {}}
    for dt in (np.float32, np.float64):
        for k, make in operators(tf.linalg, tf, dt).items():
            out["values"][f"{k}/{np.dtype(dt).name}"] = evaluate(make(), dt)
    for k, f in bad(tf.linalg, tf).items():
        try:
            f()
            out["bad"][k] = {"error": None}
        except Exception as e:   # noqa: BLE001
            msg = e.message if isinstance(e, tf.errors.OpError) else str(e)
            out["bad"][k] = {"error": type(e).__name__, "message": msg}
    Path(__file__).resolve().parent.parent.joinpath("data", "linop_tf.json").write_text(json.dumps(out, indent=0))
