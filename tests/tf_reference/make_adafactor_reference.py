"""TF 2.21's weights after adafactor_program.py's five steps, per configuration, for
tests/test_adafactor.py. Run with the peers venv:
    python tests/tf_reference/make_adafactor_reference.py
It writes tests/data/adafactor_tf.json."""
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import adafactor_program as P  # noqa: E402

out = {name: P.run(tf, name) for name in P.CONFIGS}
(HERE.parent / "data" / "adafactor_tf.json").write_text(json.dumps(out))
