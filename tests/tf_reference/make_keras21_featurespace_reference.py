"""Keras 3.15 (TF 2.21): keras.utils.FeatureSpace on a small dict dataset (every built-in feature
kind but float_discretized: Keras 3.15 adapts its Discretization even with fixed bin_boundaries, a
ValueError there, and tapeflow's Discretization has no adapt; plus a cross), its encoded batch in
'concat' and 'dict' modes, for tests/test_keras21_utils.py.

    .venv-peers/bin/python tests/tf_reference/make_keras21_featurespace_reference.py
"""
from __future__ import annotations

import json
import os

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                   "keras21_featurespace_reference.json")

DATA = {
    "age": [23.0, 41.0, 35.0, 62.0, 19.0, 35.0, 50.0, 28.0],
    "city": ["paris", "lyon", "paris", "nice", "lyon", "paris", "brest", "nice"],
    "code": [3, 7, 3, 1, 7, 9, 3, 1],
    "income": [10.0, 25.0, 30.0, 12.0, 8.0, 40.0, 22.0, 18.0],
    "tag": ["x", "y", "z", "x", "w", "y", "x", "z"],
    "zip": [75001, 69002, 75001, 6000, 69002, 75015, 29200, 6000],
}
QUERY = {"age": [30.0, 70.0], "city": ["paris", "rome"], "code": [7, 42],
         "income": [15.0, 50.0], "tag": ["x", "q"], "zip": [75001, 12345]}


def spec(FS):
    return dict(features={
        "age": "float_normalized", "city": "string_categorical", "code": "integer_categorical",
        "income": FS.float_rescaled(scale=0.1, offset=-1.0), "tag": FS.string_hashed(num_bins=4),
        "zip": FS.integer_hashed(num_bins=5, output_mode="int")},
        crosses=[FS.cross(("city", "code"), crossing_dim=6)])


def main():
    import keras
    import numpy as np
    import tensorflow as tf
    FS = keras.utils.FeatureSpace
    out = {"keras": keras.__version__, "data": DATA, "query": QUERY}
    q = {k: np.array(v) for k, v in QUERY.items()}
    qc = {k: v for k, v in q.items() if k != "zip"}
    ds = tf.data.Dataset.from_tensor_slices({k: np.array(v) for k, v in DATA.items()})
    # concat: zip's int output cannot be concatenated -> leave it out of the concat space
    s = spec(FS)
    del s["features"]["zip"]
    fs = FS(**s, output_mode="concat")
    fs.adapt(ds)
    enc = fs(qc)
    out["concat"] = np.asarray(enc).tolist()
    out["encoded_shape"] = list(fs.get_encoded_features().shape)
    one = fs({k: v[0] for k, v in qc.items()})
    out["single"] = np.asarray(one).tolist()
    fs2 = FS(**spec(FS), output_mode="dict")
    fs2.adapt(ds)
    d = fs2(q)
    out["dict"] = {k: {"dtype": np.asarray(v).dtype.name, "values": np.asarray(v).tolist()} for k, v in d.items()}
    # errors
    errs = {}
    for name, fn in [("bad_output_mode", lambda: FS(features={"a": "float"}, output_mode="x")),
                     ("bad_feature", lambda: FS(features={"a": "floaty"})),
                     ("empty", lambda: FS(features={})),
                     ("not_adapted", lambda: FS(features={"a": "float_normalized"})({"a": np.array([1.0])})),
                     ("concat_int", lambda: FS(features={"z": FS.integer_hashed(4, output_mode="int")})
                      ({"z": np.array([1])})),
                     ("call_not_dict", lambda: FS(features={"a": "float"})(np.array([1.0])))]:
        try:
            fn()
            errs[name] = None
        except Exception as e:  # noqa: BLE001
            errs[name] = {"error": type(e).__name__, "message": str(e)[:200]}
    out["errors"] = errs
    with open(OUT, "w") as fh:
        json.dump(out, fh, indent=0)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
