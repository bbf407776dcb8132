"""Keras 3.15's (TF 2.21's) keras.datasets loaders on the tiny files of tests/dataset25_cases.py,
for tests/test_keras25_datasets.py (wave 25). Keras' get_file would re-download a file whose hash
is not the real dataset's, so each loader's get_file is pointed at the written file here.

    cd /tmp && /work/main/.venv-peers/bin/python /work/wt/keras25/tests/tf_reference/make_keras25_datasets_reference.py

Writes tests/data/keras25_datasets_tf.json."""
import importlib
import json
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import tensorflow as tf  # noqa: E402,F401

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from dataset25_cases import CASES, WRITERS, describe  # noqa: E402

out = {}
with tempfile.TemporaryDirectory() as d:
    for name, write in WRITERS.items():
        write(d)
    for name, kw in CASES:
        mod = importlib.import_module(f"keras.src.datasets.{name}")

        def fake_get_file(fname=None, origin=None, **k):
            return os.path.join(d, fname)
        mod.get_file = fake_get_file
        try:
            res = {"value": describe(getattr(tf.keras.datasets, name).load_data(**kw))}
        except Exception as e:  # noqa: BLE001
            res = {"error": type(e).__name__, "message": str(e)}
        out[f"{name}|{json.dumps(kw, sort_keys=True)}"] = res
    for name in ("imdb", "reuters"):
        getattr(tf.keras.datasets, name)  # the word index
        mod = importlib.import_module(f"keras.src.datasets.{name}")
        out[f"{name}|word_index"] = getattr(tf.keras.datasets, name).get_word_index()
    out["reuters|label_names"] = list(tf.keras.datasets.reuters.get_label_names())
with open(os.path.join(os.path.dirname(HERE), "data", "keras25_datasets_tf.json"), "w") as f:
    json.dump(out, f, sort_keys=True)
print(len(out), "cases")
