"""TF 2.21's bytes and parses of ``tf.train.SequenceExample`` (and the parsing features added with it:
``FixedLenSequenceFeature``, ``SparseFeature``, ``decode_json_example``), for tests/test_seqex.py,
which compares tapeflow against tests/data/seqex_tf_reference.json.

Run with real TensorFlow (the peers venv), from the repository root:

    .venv-peers/bin/python tests/tf_reference/make_seqex_reference.py

Messages are serialized with ``deterministic=True`` (map keys in TF's deterministic order: what
tapeflow writes). Each parse case names its serialized inputs (message indices or literal bytes),
its feature specs (a JSON form, decoded by ``spec()`` here and in the test) and TF's result: the
output structure (dense / sparse / ragged tensors with dtypes, shapes and values) or the error
class and message (the ``{{function_node ...}}`` prefix and ``[Op:...]`` suffix dropped).
"""
from __future__ import annotations

import base64
import json
import math
import os

import sys

import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seqex_builders as _b  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "seqex_tf_reference.json")
b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731

# a feature: [kind, values] with kind in int64/float/bytes/none (bytes values are str here, utf-8)
MESSAGES = [
    {},
    {"context": {}},
    {"feature_lists": {}},
    {"context": {"len": ["int64", [3]]}, "feature_lists": {"tok": [["int64", [1, 2]], ["int64", [3, 4]]]}},
    {"context": {"len": ["int64", [3]], "name": ["bytes", ["ab"]], "w0": ["float", [0.25, -1.5]]},
     "feature_lists": {"tok": [["int64", [1, 2]], ["int64", [3, 4]]],
                       "w": [["float", [0.5]], ["float", [1.5]], ["float", [2.5]]],
                       "v": [["int64", [1]], ["int64", [2, 3]], ["int64", []]],
                       "rv": [["int64", [5, 6]], ["int64", []], ["int64", [7]]],
                       "words": [["bytes", ["a", "bb"]], ["bytes", ["héllo", ""]]],
                       "mix": [["int64", [1]], ["float", [1.0]]], "odd": [["int64", [1, 2]], ["int64", [3]]],
                       "empty": [], "nonef": [["none", None]]}},
    {"context": {"len": ["int64", [1]]},
     "feature_lists": {"tok": [["int64", [9, 8]]], "w": [["float", [7.0]]], "v": [["int64", [4, 5, 6]]],
                       "rv": [["int64", [1]], ["int64", [2]]], "words": [["bytes", ["z", "y"]]]}},
    {"feature_lists": {"eb": [["bytes", []]], "ef": [], "e": [["int64", [2**63 - 1, -2**63]]]}},
]


def feature(kind, values):
    return _b.feature(tf, kind, values)


def message(spec):
    return _b.message(tf, spec)


def spec(d):
    return _b.spec(tf, d)


def enc_values(t):
    a = t.numpy()
    if t.dtype == tf.string:
        return [b64(x) for x in a.ravel()]
    if t.dtype.is_floating:
        return [repr(float(x)) for x in a.ravel()]
    return [int(x) for x in a.ravel()]


def enc(t):
    if isinstance(t, tf.SparseTensor):
        return {"t": "sparse", "dtype": t.dtype.name, "indices": t.indices.numpy().tolist(),
                "values": enc_values(t.values), "dense_shape": t.dense_shape.numpy().tolist()}
    if isinstance(t, tf.RaggedTensor):
        return {"t": "ragged", "dtype": t.dtype.name, "flat_values": enc_values(t.flat_values),
                "splits": [s.numpy().tolist() for s in t.nested_row_splits],
                "splits_dtype": t.row_splits.dtype.name}
    return {"t": "dense", "dtype": t.dtype.name, "shape": t.shape.as_list(), "values": enc_values(t)}


def error(e):
    m = str(e)
    if m.startswith("{{"):
        m = m.split("}} ", 1)[1]
    m = m.split(" [Op:")[0]
    return {"error": type(e).__name__, "message": m[:300]}


_ctx = {"len": ["fixed", "int64", []], "name": ["var", "string"], "d": ["fixed", "float32", [2], [1, 2]],
        "w0": ["fixed", "float32", [2]]}
_seq = {"tok": ["seq", "int64", [2], False, None], "w": ["seq", "float32", [], False, None],
        "v": ["var", "int64"], "m": ["seq", "int64", [], True, None], "r": ["ragged", "int64", "rv"],
        "words": ["seq", "string", [2], True, None]}
_b1 = {"len": ["fixed", "int64", [], 0]}
_bseq = {"tok": ["seq", "int64", [2], True, None], "v": ["var", "int64"], "r": ["ragged", "int64", "rv"],
         "words": ["seq", "string", [2], True, None], "w": ["seq", "float32", [], True, None]}

# (name, fn, serialized: list of message indices or {"b64": ...} / scalar index, context, sequence)
SEQ_CASES = [
    ("single_all", "single", 4, _ctx, _seq),
    ("single_ctx_only", "single", 3, {"len": ["fixed", "int64", []]}, None),
    ("single_seq_only", "single", 3, None, {"tok": ["seq", "int64", [2], False, None]}),
    ("single_empty_message", "single", 0, {"d": ["fixed", "float32", [2], [1, 2]], "name": ["var", "string"]},
     {"m": ["seq", "int64", [3], True, None], "v": ["var", "int64"], "r": ["ragged", "float32", "r"]}),
    ("single_extremes", "single", 6, None, {"e": ["seq", "int64", [], False, None], "ef": ["seq", "float32", [], False, None],
                                            "eb": ["seq", "string", [], False, None]}),
    ("single_empty_list_var", "single", 4, None, {"empty": ["var", "float32"], "nonef": ["var", "float32"]}),
    ("batch_two", "batch", [4, 5], _b1, _bseq),
    ("batch_with_empty", "batch", [4, 0, 5], _b1, _bseq),
    ("batch_scalar", "batch", 3, None, {"tok": ["seq", "int64", [2], False, None]}),
    ("batch_empty", "batch", [], _b1, {"tok": ["seq", "int64", [2], False, None], "v": ["var", "int64"]}),
    ("batch_ctx_var", "batch", [4, 5], {"name": ["var", "string"], "w0": ["fixed", "float32", [2], [0, 0]]}, None),
    ("single_ctx_ragged", "single", 4, {"rn": ["ragged", "string", "name"], "len": ["fixed", "int64", []]}, None),
    ("batch_ctx_ragged", "batch", [4, 0, 5], {"rl": ["ragged", "int64", "len"], "w0": ["var", "float32"]}, None),
    ("batch_seq_var_strings", "batch", [4, 5, 0], None, {"words": ["var", "string"], "nonef": ["var", "float32"]}),
    ("single_empty_list_dense", "single", 4, None, {"empty": ["seq", "float32", [2], False, None]}),
    ("err_batch_row_values", "batch", [5, 4], None, {"rv": ["seq", "int64", [], True, None]}),
    # errors
    ("err_nonef_dense", "single", 4, None, {"nonef": ["seq", "float32", [], False, None]}),
    ("err_missing_ctx", "single", 4, {"x": ["fixed", "int64", []]}, None),
    ("err_missing_seq", "single", 4, None, {"x": ["seq", "int64", [], False, None]}),
    ("err_ctx_dtype", "single", 4, {"len": ["fixed", "float32", []]}, None),
    ("err_ctx_dtype_var", "single", 4, {"len": ["var", "string"]}, None),
    ("err_seq_dtype", "single", 4, None, {"tok": ["seq", "float32", [2], False, None]}),
    ("err_seq_dtype_var", "single", 4, None, {"tok": ["var", "string"]}),
    ("err_seq_dtype_ragged", "single", 4, None, {"tok": ["ragged", "float32", "tok"]}),
    ("err_seq_mixed", "single", 4, None, {"mix": ["seq", "int64", [], False, None]}),
    ("err_seq_count", "single", 4, None, {"tok": ["seq", "int64", [3], False, None]}),
    ("err_seq_odd", "single", 4, None, {"odd": ["seq", "int64", [2], False, None]}),
    ("err_ctx_count", "single", 4, {"len": ["fixed", "int64", [2]]}, None),
    ("err_bad_bytes", "single", {"b64": b64(b"\xff\xff")}, {"len": ["fixed", "int64", []]}, None),
    ("err_bad_bytes2", "single", {"b64": b64(b"garbage!")}, {"len": ["fixed", "int64", []]}, None),
    ("err_nonscalar", "single", [4], {"len": ["fixed", "int64", []]}, None),
    ("err_seq_in_ctx", "single", 4, {"len": ["seq", "int64", [], False, None]}, None),
    ("err_none", "single", 4, None, None),
    ("err_int32", "single", 4, None, {"tok": ["seq", "int32", [2], False, None]}),
    ("err_seq_default", "single", 4, None, {"x": ["seq", "int64", [2], True, 7]}),
    ("err_seq_unknown_dim", "single", 4, None, {"tok": ["seq", "int64", [None], False, None]}),
    ("err_batch_missing_seq", "batch", [4, 5], None, {"x": ["seq", "int64", [], False, None]}),
    ("err_batch_second_bad", "batch", [4, {"b64": b64(b"\xff\xff")}], None, {"tok": ["seq", "int64", [2], False, None]}),
    ("err_batch_seq_dtype", "batch", [5, 4], None, {"words": ["seq", "int64", [2], False, None]}),
    ("err_batch_seq_count", "batch", [4], None, {"tok": ["seq", "int64", [3], False, None]}),
    ("err_batch_missing_ctx", "batch", [4, 5], {"x": ["fixed", "int64", []]}, None),
    ("err_ragged_sparse_same_key", "single", 4, None, {"v": ["var", "int64"], "r": ["ragged", "int64", "v"]}),
]


def ex(**kw):
    return tf.train.Example(features=tf.train.Features(feature={k: feature(*kv) for k, kv in kw.items()})).SerializeToString()


EXAMPLES = [ex(a=["int64", [1, 2, 3, 4]], ix=["int64", [3, 0, 7]], val=["float", [1.5, 2.5, 3.5]], s=["bytes", ["x"]]),
            ex(), ex(a=["int64", [5, 6]], ix=["int64", [1]], val=["float", [9.0]]),
            ex(a=["int64", [1, 2, 3]], ix=["int64", [2, 2, -1]], val=["float", [1.0, 2.0, 3.0]]),
            ex(r=["int64", [0, 1]], c=["int64", [2, 0]], val=["float", [1.0, 2.0]]),
            ex(r=["int64", [1]], c=["int64", [1]], val=["float", [5.0]]),
            ex(ix=["int64", [1, 2]], val=["float", [1.0]]), ex(ix=["float", [1.0]], val=["float", [1.0]])]

# (name, fn, serialized (indices into EXAMPLES), features)
EX_CASES = [
    ("seqfeat_single", "single", 0, {"a": ["seq", "int64", [2], True, None]}),
    ("seqfeat_single_missing", "single", 1, {"a": ["seq", "int64", [2], True, None]}),
    ("seqfeat_single_scalar", "single", 0, {"a": ["seq", "int64", [], True, None]}),
    ("seqfeat_batch_default", "batch", [0, 1, 2], {"a": ["seq", "int64", [2], True, -1]}),
    ("seqfeat_batch_nodefault", "batch", [2, 1, 0], {"a": ["seq", "int64", [2], True, None],
                                                     "s": ["seq", "string", [], True, None]}),
    ("seqfeat_batch_mixed", "batch", [0, 2], {"a": ["seq", "int64", [], True, None], "ix": ["var", "int64"],
                                              "val": ["fixed", "float32", [1], [0.0]]}),
    ("seqfeat_batch_str_default", "batch", [0, 1, 0], {"s": ["seq", "string", [], True, "zz"]}),
    ("seqfeat_batch_float_default", "batch", [1, 3], {"val": ["seq", "float32", [], True, 0.5]}),
    ("seqfeat_err_noallow", "batch", [1], {"a": ["seq", "int64", [2], False, None]}),
    ("seqfeat_err_single_stride", "single", 3, {"a": ["seq", "int64", [2], True, None]}),
    ("seqfeat_err_batch_stride", "batch", [3], {"a": ["seq", "int64", [2], True, None]}),
    ("seqfeat_err_dtype", "batch", [0], {"a": ["seq", "float32", [2], True, None]}),
    ("sparse_single", "single", 0, {"sp": ["sparse", "float32", "ix", "val", 10, False]}),
    ("sparse_single_sorted", "single", 0, {"sp": ["sparse", "float32", "ix", "val", 10, True]}),
    ("sparse_single_dup_neg", "single", 3, {"sp": ["sparse", "float32", "ix", "val", 5, False]}),
    ("sparse_batch", "batch", [0, 2, 1], {"sp": ["sparse", "float32", "ix", "val", 10, False]}),
    ("sparse_batch_sorted", "batch", [0, 2], {"sp": ["sparse", "float32", "ix", "val", 10, True]}),
    ("sparse_2d", "batch", [4, 5], {"sp": ["sparse", "float32", ["r", "c"], "val", [2, 3], False]}),
    ("sparse_2d_single", "single", 4, {"sp": ["sparse", "float32", ["r", "c"], "val", [2, 3], False]}),
    ("sparse_with_var", "single", 0, {"sp": ["sparse", "float32", "ix", "val", 10, False], "ix": ["var", "int64"]}),
    ("sparse_missing", "single", 1, {"sp": ["sparse", "float32", "ix", "val", 10, False]}),
    ("sparse_err_mismatch", "single", 6, {"sp": ["sparse", "float32", "ix", "val", 5, False]}),
    ("sparse_err_index_float", "single", 7, {"sp": ["sparse", "float32", "ix", "val", 5, False]}),
    ("sparse_err_conflict", "single", 0, {"sp": ["sparse", "float32", "val", "val", 10, False]}),
]

JSONS = [
    '{"features": {"feature": {"a": {"int64List": {"value": ["1", 2]}}, "b": {"floatList": {"value": [1.5]}}, '
    '"c": {"bytesList": {"value": ["aGk="]}}}}}',
    '{"features": {"feature": {"zz": {"int64List": {"value": [-1, "9223372036854775807"]}}, '
    '"a": {"floatList": {"value": ["NaN", "Infinity", "-Infinity", -0.0, 0.1, 3]}}}}}',
    '{"features": {"feature": {"e": {}, "f": {"bytesList": {"value": []}}, "g": {"int64List": {}}}}}',
    '{"features": {}}', '{"features": null}', '{}', '  {"features" : {"feature": {"b": {"int64_list": {"value": [1]}}}}} ',
    '{"features": {"feature": {"a": {"int64List": {"value": [1]}}}}, "features": {}}',
    '{"features": {"feature": {"a": {"int64List": {"value": ["1e3", 2e2]}}, "s": {"bytesList": {"value": ["", "AP8="]}}}}}',
    # errors
    '', '{bad', '[1]', '{"foo": 1}', '{"context": {}}',
    '{"features": {"feature": {"a": {"int64List": {"value": [1.5]}}}}}',
    '{"features": {"feature": {"a": {"int64List": {"value": [1]}, "floatList": {"value": [1]}}}}}',
    '{"features": {"feature": {"a": {"bytesList": {"value": ["!!"]}}}}}',
    '{"features": {"feature": {"a": {"int64List": {"value": [1]}}, "a": {"int64List": {"value": [2]}}}}}',
    '{"features": {"feature": {"a": {"int64List": {"value": [true]}}}}}',
    '{"features": {"feature": {"a": {"floatList": {"value": [1e40]}}}}}',
]


def run_seq(fn, ser, ctx, seq, names=None):
    s = (lambda i: messages[i] if isinstance(i, int) else base64.b64decode(i["b64"]))
    x = s(ser) if not isinstance(ser, list) else tf.constant([s(i) for i in ser], tf.string)
    f = tf.io.parse_single_sequence_example if fn == "single" else tf.io.parse_sequence_example
    try:
        r = f(x, context_features=spec(ctx), sequence_features=spec(seq))
    except Exception as e:  # noqa: BLE001
        return error(e)
    return {"result": [{k: enc(v) for k, v in d.items()} for d in r], "keys": [list(d) for d in r]}


def run_ex(fn, ser, feats):
    x = EXAMPLES[ser] if isinstance(ser, int) else tf.constant([EXAMPLES[i] for i in ser], tf.string)
    f = tf.io.parse_single_example if fn == "single" else tf.io.parse_example
    try:
        r = f(x, spec(feats))
    except Exception as e:  # noqa: BLE001
        return error(e)
    return {"result": {k: enc(v) for k, v in r.items()}, "keys": list(r)}


def main():
    global messages
    out = {"messages": [], "seq_cases": [], "examples": [b64(e) for e in EXAMPLES], "ex_cases": [], "json": []}
    protos = [message(m) for m in MESSAGES]
    messages = [p.SerializeToString(deterministic=True) for p in protos]
    for m, p, b in zip(MESSAGES, protos, messages):
        assert tf.train.SequenceExample.FromString(b) == p
        out["messages"].append({"spec": m, "bytes": b64(b), "text": str(p)})
    for name, fn, ser, ctx, seq in SEQ_CASES:
        out["seq_cases"].append({"name": name, "fn": fn, "serialized": ser, "context": ctx, "sequence": seq,
                                 **run_seq(fn, ser, ctx, seq)})
    for name, fn, ser, feats in EX_CASES:
        out["ex_cases"].append({"name": name, "fn": fn, "serialized": ser, "features": feats,
                                **run_ex(fn, ser, feats)})
    for j in JSONS:
        try:
            r = {"bytes": b64(tf.io.decode_json_example(j).numpy())}
        except Exception as e:  # noqa: BLE001
            r = error(e)
            r["message"] = " ".join(r["message"].split())   # (absl inserts random double spaces)
        out["json"].append({"json": j, **r})
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
    print("wrote", OUT, {k: len(v) for k, v in out.items()})


if __name__ == "__main__":
    main()
