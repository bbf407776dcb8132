"""TF 2.21's bytes for tf.train.Example protos, TFRecord files, serialize_tensor and decode_raw, for
tests/test_tfrecord.py (which compares tapeflow against tests/data/tfrecord_tf_reference.json).

Run with real TensorFlow (the peers venv), from the repository root:

    .venv-peers/bin/python tests/tf_reference/make_tfrecord_reference.py

Byte strings are stored base64-encoded. Examples are serialized with ``deterministic=True`` (map
keys sorted: what tapeflow writes); ``plain`` is TF's default serialization (upb's hash-map order)
for the record.
"""
from __future__ import annotations

import base64
import json
import os
import tempfile

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "tfrecord_tf_reference.json")
b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731

# each example: {key: (kind, values)}; kind in bytes/float/int64/none
EXAMPLES = [
    {},
    {"a": ("int64", [1, -2, 300, 2**63 - 1, -2**63, 0])},
    {"f": ("float", [1.5, -0.0, float("inf"), 3.4e38, 1e-45, 0.1])},
    {"s": ("bytes", [b"hi", b"", b"\x00\xff'\"\n", "héllo".encode()])},
    {"z": ("none", None), "e": ("int64", []), "ef": ("float", []), "eb": ("bytes", [])},
    {"label": ("int64", [7]), "image": ("bytes", [bytes(range(256)) * 3]), "w": ("float", [0.25, 0.5]),
     "name": ("bytes", [b"cat"]), "id": ("int64", list(range(-5, 200, 7)))},
]


def feature(kind, values):
    if kind == "none":
        return tf.train.Feature()
    if kind == "int64":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    if kind == "float":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def enc(v):
    if isinstance(v, bytes):
        return {"b64": b64(v)}
    if isinstance(v, float):
        return repr(v)
    return v


def main():
    out = {"examples": [], "tensors": [], "decode_raw": [], "files": {}, "parse": []}
    protos = []
    for spec in EXAMPLES:
        ex = tf.train.Example(features=tf.train.Features(feature={k: feature(*kv) for k, kv in spec.items()}))
        protos.append(ex)
        out["examples"].append({"spec": {k: [kind, None if vals is None else [enc(v) for v in vals]]
                                         for k, (kind, vals) in spec.items()},
                                "bytes": b64(ex.SerializeToString(deterministic=True)),
                                "plain": b64(ex.SerializeToString()), "text": str(ex)})
    tensors = [np.float32([[1, 2], [3, 4]]), np.int32(3), np.array([b"ab", b"c"], object), np.bool_(True),
               np.zeros((0, 3)), np.arange(6, dtype=np.int64).reshape(3, 2, 1), np.float16([1.5, -2]),
               np.uint8([0, 255, 7]), np.int8([-1, 2]), np.int16([-300]), np.uint16([65535]),
               np.uint32([4000000000]), np.uint64([2**64 - 1]), np.float64(np.nan), np.array(b"scalar", object),
               np.array([[b"", b"x" * 200]], object)]
    for a in tensors:
        t = tf.constant(a)
        out["tensors"].append({"dtype": t.dtype.name, "shape": list(a.shape),
                               "values": [b64(x) for x in a.ravel()] if a.dtype == object else
                               [repr(float(x)) if a.dtype.kind == "f" else int(x) for x in a.ravel()],
                               "bytes": b64(tf.io.serialize_tensor(t).numpy())})
    for data, dt, le in [([b"\x01\x00\x02\x00", b"\x03\x00\x04\x00"], tf.int16, True),
                         ([b"\x00\x01"], tf.int16, False), ([b"abc"], tf.uint8, True),
                         ([b"\x00\x00\x80?\x00\x00\x00@"], tf.float32, True), ([b"?\x80\x00\x00"], tf.float32, False),
                         ([b"\x01\x02\x03\x04\x05\x06\x07\x08"], tf.int64, False), ([b""], tf.float64, True)]:
        r = tf.io.decode_raw(tf.constant(data), dt, little_endian=le).numpy()
        out["decode_raw"].append({"data": [b64(d) for d in data], "dtype": dt.name, "little_endian": le,
                                  "shape": list(r.shape), "values": [repr(float(x)) for x in r.ravel()]})
    with tempfile.TemporaryDirectory() as d:
        recs = [p.SerializeToString(deterministic=True) for p in protos] + [b"", b"abc"]
        for name, opts in [("none", None), ("gzip", "GZIP"), ("zlib", "ZLIB")]:
            path = os.path.join(d, name)
            with tf.io.TFRecordWriter(path, options=opts) as w:
                for r in recs:
                    w.write(r)
            got = [t.numpy() for t in tf.data.TFRecordDataset(path, compression_type=opts or "")]
            assert got == recs
            out["files"][name] = b64(open(path, "rb").read())
        out["records"] = [b64(r) for r in recs]
    # parse_single_example on example 5 with FixedLen/VarLen features and defaults
    s = protos[5].SerializeToString(deterministic=True)
    feats = {"label": tf.io.FixedLenFeature([], tf.int64), "w": tf.io.FixedLenFeature([2], tf.float32),
             "name": tf.io.VarLenFeature(tf.string), "id": tf.io.VarLenFeature(tf.int64),
             "missing": tf.io.FixedLenFeature([2], tf.float32, default_value=[1.0, 2.0]),
             "w2": tf.io.FixedLenFeature([2, 1], tf.float32, default_value=[[0.0], [0.0]]),
             "nope": tf.io.VarLenFeature(tf.float32)}
    r = tf.io.parse_single_example(s, feats)
    out["parse_single"] = {k: (repr(v) if not isinstance(v, tf.SparseTensor) else
                               [v.indices.numpy().tolist(), repr(v.values.numpy().tolist()), v.dense_shape.numpy().tolist()])
                           for k, v in r.items()}
    json.dump(out, open(OUT, "w"), indent=1)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
