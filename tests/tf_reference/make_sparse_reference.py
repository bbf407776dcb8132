"""Records TF 2.21's results of the tf.sparse cases in tests/sparse_cases.py for tests/test_sparse.py
(tests cannot import TF). Run with the peers venv from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_sparse_reference.py
Writes tests/data/sparse_reference.json: name -> describe(result) or {"error": class name}."""
import json
import os
import sys

import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from sparse_cases import cases, describe  # noqa: E402

res = {}
for name, fn in cases(tf).items():
    try:
        res[name] = describe(tf, fn())
    except Exception as e:  # noqa: BLE001  (the error class is the reference)
        res[name] = {"error": type(e).__name__}
with open(os.path.join(os.path.dirname(HERE), "data", "sparse_reference.json"), "w") as f:
    json.dump(res, f, indent=0, sort_keys=True)
print(len(res), "cases")
