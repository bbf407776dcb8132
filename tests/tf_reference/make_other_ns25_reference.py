"""Record TF 2.21's outcomes of tests/other_ns25_cases.py into tests/data/other_ns25.json.

    cd /tmp && /work/main/.venv-peers/bin/python <repo>/tests/tf_reference/make_other_ns25_reference.py
"""
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from other_ns25_cases import CASES, run_case  # noqa: E402


def main():
    out = {}
    for name, program, check in CASES:
        out[name] = run_case(tf, program)
    path = os.path.join(os.path.dirname(HERE), "data", "other_ns25.json")
    with open(path, "w") as f:
        json.dump({"tf_version": tf.__version__, "cases": out}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{len(out)} cases -> {path}")


if __name__ == "__main__":
    main()
