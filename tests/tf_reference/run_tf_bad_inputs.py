"""Run the bad-input table (tests/bad_input_cases.py) under real TensorFlow and
write each case's outcome to tests/tf_reference/bad_inputs.json, which
tests/test_bad_inputs.py checks tapeflow against.

Run with the peers venv (TF is not a tapeflow dependency):
    .venv-peers/bin/python tests/tf_reference/run_tf_bad_inputs.py
Each case runs eagerly and in tf.function; both outcomes are recorded, the
eager one is the spec (tf.function reports some of the same errors as
TypeError/ValueError at trace time, which tapeflow's classes also are).
"""
import json
import math
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from bad_input_cases import CASES  # noqa: E402


def make(program):
    ns = {"tf": tf, "np": np}
    if "\n" not in program and program.lstrip().startswith("lambda"):
        return eval(program, ns)
    exec(program, ns)
    return ns["f"]


def encode_value(v):
    if isinstance(v, (list, tuple)):
        return {"kind": "list", "items": [encode_value(x) for x in v]}
    if isinstance(v, tf.Variable):
        v = v.read_value()
    a = np.asarray(v)
    flat = [x if not isinstance(x, float) or math.isfinite(x) else repr(x) for x in a.reshape(-1).tolist()]
    return {"kind": "value", "dtype": a.dtype.name, "shape": list(a.shape), "values": flat}


def outcome(fn, args):
    try:
        return encode_value(fn(*args))
    except Exception as e:  # noqa: BLE001  (recording what TF raises is the point)
        return {"kind": "raise", "cls": type(e).__name__,
                "tf_error": isinstance(e, tf.errors.OpError), "message": str(e)[:400]}


def main():
    """``--missing``: run only the cases the JSON lacks and keep the recorded ones (seconds
    instead of minutes when a branch adds a few cases; a rerun of everything is the default)."""
    path = os.path.join(HERE, "bad_inputs.json")
    out = {"tensorflow": tf.__version__, "cases": {}}
    if "--missing" in sys.argv[1:]:
        with open(path) as f:
            recorded = json.load(f)["cases"]
        names = {name for name, *_ in CASES}
        out["cases"] = {k: v for k, v in recorded.items() if k in names}
    for name, program, inputs, needle in CASES:
        if name in out["cases"]:
            continue
        args = [tf.constant(a) for a in inputs]
        eager = outcome(make(program), args)
        traced = outcome(tf.function(make(program)), args)
        out["cases"][name] = {"eager": eager, "function": traced}
        print(f"{name:40s} {eager.get('cls', eager['kind']):28s} {traced.get('cls', traced['kind'])}")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
