"""TF 2.21's tf.linalg.LinearOperatorCirculant/2D/3D on the cases of circulant_cases.py: every public
method's value, hints, derived types, and the error class + message of bad inputs, for
tests/test_circulant22.py. Run with the peers venv:
    python tests/tf_reference/make_circulant_reference.py
It writes tests/data/circulant22_tf.json."""
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

tf.get_logger().setLevel("ERROR")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from circulant_cases import operators, evaluate, bad  # noqa: E402

if __name__ == "__main__":
    out = {"values": {}, "bad": {}}
    for k, make in operators(tf.linalg, tf).items():
        out["values"][k] = evaluate(make())
    for k, f in bad(tf.linalg, tf).items():
        try:
            f()
            out["bad"][k] = {"error": None}
        except Exception as e:   # noqa: BLE001
            msg = e.message if isinstance(e, tf.errors.OpError) else str(e)
            out["bad"][k] = {"error": type(e).__name__, "message": msg}
    Path(__file__).resolve().parent.parent.joinpath("data", "circulant22_tf.json").write_text(
        json.dumps(out, indent=0))
