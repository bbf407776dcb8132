"""TF 2.21's results of tests/ragged_fn_cases.py (RaggedTensors inside tf.function), for
tests/test_ragged_function.py. Run with the peers venv:
python tests/tf_reference/make_ragged_fn_reference.py"""
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from ragged_fn_cases import run  # noqa: E402

(HERE.parent / "data" / "ragged_fn_tf.json").write_text(json.dumps(run(tf), indent=1))
