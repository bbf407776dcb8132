"""TF 2.21's results of tests/unsigned_cases.py (uint8/16/32/64 ops), for tests/test_unsigned_dtypes.py.
Run with the peers venv: python tests/tf_reference/make_unsigned_reference.py"""
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from unsigned_cases import run  # noqa: E402

(HERE.parent / "data" / "unsigned_tf.json").write_text(json.dumps(run(tf), indent=1))
