"""Records the structure of TF 2.21's keras.applications models (layer names, classes, output
shapes, parameter counts) for tests/test_applications.py. Run with the peers venv:
    .venv-peers/bin/python tests/tf_reference/make_applications_reference.py
Writes tests/data/applications_reference.json."""
import json
import os
import sys

import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from applications_cases import CASES, describe  # noqa: E402

out = {}
for name, (builder, kwargs) in CASES.items():
    tf.keras.backend.clear_session()
    out[name] = describe(getattr(tf.keras.applications, builder)(**kwargs))
    print(name, out[name]["params"], len(out[name]["layers"]))
with open(os.path.join(os.path.dirname(HERE), "data", "applications_reference.json"), "w") as f:
    json.dump(out, f, separators=(",", ":"))
