"""TF 2.21's values for custom_gradient2_programs.py (higher-order gradients through
tf.custom_gradient), eagerly and in tf.function, for tests/test_custom_gradient2.py. Run with
the peers venv:
    python tests/tf_reference/make_custom_gradient2_reference.py
It writes tests/data/custom_gradient2_tf.json: {name: {"eager": [...], "function": [...]}}, a
value None where TF's gradient is None; an entry {"error": "Class: message"} where TF raises."""
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import custom_gradient2_programs as P  # noqa: E402

out = {}
for name in P.PROGRAMS:
    out[name] = {}
    for mode, compiled in (("eager", False), ("function", True)):
        try:
            out[name][mode] = P.run(tf, name, compiled)
        except Exception as e:  # noqa: BLE001  (recorded: the test expects the same class)
            # (the message's last line: tf.function's traceback names this machine's paths)
            last = [ln.strip() for ln in str(e).splitlines() if ln.strip()][-1]
            out[name][mode] = {"error": f"{type(e).__name__}: {last[:300]}"}
        print(name, mode, out[name][mode])
(HERE.parent / "data" / "custom_gradient2_tf.json").write_text(json.dumps(out, indent=1))
