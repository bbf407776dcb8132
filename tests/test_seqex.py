"""tf.train.SequenceExample / FeatureList / FeatureLists, tf.io.parse_(single_)sequence_example,
FixedLenSequenceFeature and SparseFeature in parse_example, decode_json_example (wave 21, seqex21).

Expected bytes, values and errors: TF 2.21's, recorded by tests/tf_reference/make_seqex_reference.py
into tests/data/seqex_tf_reference.json (no TF needed here)."""
from __future__ import annotations

import base64
import json
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_reference"))
import seqex_builders as _b  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "seqex_tf_reference.json")) as _f:
    REF = json.load(_f)
b64 = base64.b64decode


def feature(kind, values):
    return _b.feature(tf, kind, values)


def message(spec):
    return _b.message(tf, spec)


def spec(d):
    return _b.spec(tf, d)


def values(t):
    a = np.asarray(t.numpy())
    if a.dtype == object:
        return [base64.b64encode(x).decode() for x in a.ravel()]
    if a.dtype.kind == "f":
        return [repr(float(x)) for x in a.ravel()]
    return [int(x) for x in a.ravel()]


def check(t, want, where):
    if want["t"] == "sparse":
        assert isinstance(t, tf.SparseTensor), where
        assert t.indices.numpy().tolist() == want["indices"], where
        assert values(t.values) == want["values"], where
        assert t.dense_shape.numpy().tolist() == want["dense_shape"], where
        assert t.indices.dtype == tf.int64 and t.dense_shape.dtype == tf.int64, where
    elif want["t"] == "ragged":
        assert isinstance(t, tf.RaggedTensor), where
        assert values(t.flat_values) == want["flat_values"], where
        assert [s.numpy().tolist() for s in t.nested_row_splits] == want["splits"], where
        # TF 2.21: int32 (RaggedFeature's default row_splits_dtype); tapeflow's RaggedTensors keep int64
        # row_splits (docs/differences.md)
        assert want["splits_dtype"] == "int32" and t.row_splits.dtype == tf.int64, where
    else:
        assert isinstance(t, tf.Tensor), where
        assert list(t.shape) == want["shape"], where
        assert values(t) == want["values"], where
    assert t.dtype.name == want["dtype"], where


def serialized(ser):
    msgs = [b64(m["bytes"]) for m in REF["messages"]]
    one = (lambda i: msgs[i] if isinstance(i, int) else b64(i["b64"]))
    return one(ser) if not isinstance(ser, list) else tf.constant([one(i) for i in ser], tf.string)


# ---- the messages ------------------------------------------------------------------------------

@pytest.mark.parametrize("i", range(len(REF["messages"])))
def test_sequence_example_bytes_equal_tfs(i):
    m = REF["messages"][i]
    se = message(m["spec"])
    assert se.SerializeToString() == b64(m["bytes"])   # TF 2.21, deterministic=True
    back = tf.train.SequenceExample.FromString(b64(m["bytes"]))
    assert back == se and back.SerializeToString() == b64(m["bytes"])
    # the text format: TF prints a map in its hash table's order, tapeflow in insertion order; the
    # same when each map has one key
    if all(len(m["spec"].get(p, {})) <= 1 for p in ("context", "feature_lists")):
        assert str(se) == m["text"]


def test_sequence_example_api():
    F = tf.train
    fl = F.FeatureList()
    fl.feature.add().int64_list.value.append(3)   # protobuf's repeated-message API
    fl.feature.append(F.Feature(float_list=F.FloatList(value=[1.5])))
    assert len(fl.feature) == 2 and fl.feature[1].WhichOneof("kind") == "float_list"
    # TF 2.21: 'feature {\n  int64_list {\n    value: 3\n  }\n}\nfeature {\n  float_list {\n    value: 1.5\n  }\n}\n'
    assert str(fl) == "feature {\n  int64_list {\n    value: 3\n  }\n}\nfeature {\n  float_list {\n    value: 1.5\n  }\n}\n"
    se = F.SequenceExample()
    assert not se.HasField("context") and str(se) == "" and se.SerializeToString() == b""
    se.feature_lists.feature_list["tok"].feature.add(int64_list=F.Int64List(value=[1, 2]))
    se.context.feature["n"].int64_list.value.append(1)
    assert se.HasField("context") and se.HasField("feature_lists")
    # TF 2.21: b'\n\x0b\n\t\n\x01n\x12\x04\x1a\x02\n\x01\x12\x0f\n\r\n\x03tok\x12\x06\n\x04\x1a\x02\n\x02...'
    back = F.SequenceExample.FromString(se.SerializeToString())
    assert back == se and back.feature_lists.feature_list["tok"].feature[0].int64_list.value == [1, 2]
    assert F.FeatureLists() == F.FeatureLists() and F.FeatureList() != F.FeatureLists()
    c = F.SequenceExample()
    c.CopyFrom(se)
    assert c == se
    # TF 2.21's errors (TypeError) for wrong members
    with pytest.raises(TypeError, match="expected Feature got int"):
        F.FeatureList(feature=[1])
    with pytest.raises(TypeError, match="expected Features got int"):
        F.SequenceExample(context=3)
    with pytest.raises(TypeError, match="expected FeatureList got list"):
        F.FeatureLists(feature_list={"a": [F.Feature()]})
    with pytest.raises(TypeError):
        fl.feature.append(3)
    from tapeflow.train.example import DecodeError
    with pytest.raises(DecodeError):
        F.SequenceExample.FromString(b"\xff\xff")


def test_sequence_example_text_format_merge():
    pytest.importorskip("google.protobuf")
    from google.protobuf import text_format
    m = REF["messages"][3]
    se = text_format.Parse(m["text"], tf.train.SequenceExample())
    assert se.SerializeToString() == b64(m["bytes"])


# ---- parse_single_sequence_example / parse_sequence_example ------------------------------------

def _run_seq(c):
    f = tf.io.parse_single_sequence_example if c["fn"] == "single" else tf.io.parse_sequence_example
    return f(serialized(c["serialized"]), context_features=spec(c["context"]), sequence_features=spec(c["sequence"]))


_ERR = {"InvalidArgumentError": tf.errors.InvalidArgumentError, "ValueError": ValueError, "TypeError": TypeError}


@pytest.mark.parametrize("c", REF["seq_cases"], ids=[c["name"] for c in REF["seq_cases"]])
def test_parse_sequence_example_matches_tf(c):
    if "error" in c:
        with pytest.raises(_ERR[c["error"]]) as e:
            _run_seq(c)
        assert str(e.value).startswith(c["message"].split("\n")[0][:120]), (str(e.value), c["message"])
        return
    out = _run_seq(c)
    assert isinstance(out, tuple) and len(out) == len(c["result"])
    for d, want, keys in zip(out, c["result"], c["keys"]):
        assert list(d) == keys   # TF 2.21's key order
        for k in keys:
            check(d[k], want[k], (c["name"], k))


def test_parse_sequence_example_compiled_and_in_dataset_map(tmp_path):
    ser = serialized([4, 5])
    ctx = {"len": tf.io.FixedLenFeature([], tf.int64), "w0": tf.io.FixedLenFeature([2], tf.float32, default_value=[0, 0])}
    seq = {"tok": tf.io.FixedLenSequenceFeature([2], tf.int64),
           "words": tf.io.FixedLenSequenceFeature([2], tf.string, allow_missing=True)}
    eager = tf.io.parse_sequence_example(ser, context_features=ctx, sequence_features=seq)
    compiled = tf.function(lambda s: tf.io.parse_sequence_example(s, context_features=ctx, sequence_features=seq))(ser)
    for e, c in zip(eager, compiled):
        assert list(e) == list(c)
        for k in e:
            assert e[k].dtype == c[k].dtype and e[k].numpy().tolist() == c[k].numpy().tolist()
    one_eager = tf.io.parse_single_sequence_example(ser[0], context_features=ctx, sequence_features=seq)
    f = tf.function(lambda s: tf.io.parse_single_sequence_example(s, context_features=ctx, sequence_features=seq))
    one = f(ser[0])
    for e, c in zip(one_eager, one):
        for k in e:
            assert e[k].numpy().tolist() == c[k].numpy().tolist()
    # the same error compiled as eagerly
    bad = tf.constant(b"\xff\xff")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid protocol message input, example id: <unknown>"):
        f(bad)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid protocol message input"):
        tf.io.parse_single_sequence_example(bad, context_features=ctx, sequence_features=seq)
    # a VarLenFeature compiled: a clear error, not a wrong answer (eagerly and in Dataset.map it works)
    with pytest.raises(NotImplementedError, match="VarLenFeature"):
        tf.function(lambda s: tf.io.parse_single_sequence_example(
            s, sequence_features={"v": tf.io.VarLenFeature(tf.int64)})[1]["v"].values)(ser[0])
    # in Dataset.map over a TFRecord file: per element, eager == compiled; the spec is TF's
    p = str(tmp_path / "seq.tfrecord")
    with tf.io.TFRecordWriter(p) as w:
        for s in ser.numpy():
            w.write(s)
    ds = tf.data.TFRecordDataset(p).map(
        lambda r: tf.io.parse_single_sequence_example(r, context_features=ctx, sequence_features=seq))
    # TF 2.21: ({'len': TensorSpec(shape=(), dtype=tf.int64, name=None), 'w0': TensorSpec(shape=(2,), ...)},
    #           {'tok': TensorSpec(shape=(None, 2), dtype=tf.int64, name=None), 'words': TensorSpec(shape=(None, 2), ...)})
    assert repr(ds.element_spec[1]["tok"]) == "TensorSpec(shape=(None, 2), dtype=tf.int64, name=None)"
    els = list(ds)
    assert [e[1]["tok"].numpy().tolist() for e in els] == [[[1, 2], [3, 4]], [[9, 8]]]
    assert [e[0]["len"].numpy().tolist() for e in els] == [3, 1]
    var = list(tf.data.TFRecordDataset(p).map(lambda r: tf.io.parse_single_sequence_example(
        r, sequence_features={"v": tf.io.VarLenFeature(tf.int64)})[1]["v"]))
    assert [v.dense_shape.numpy().tolist() for v in var] == [[3, 2], [1, 3]]   # TF 2.21
    # padded_batch of the parsed steps, as a sequence pipeline does
    b = next(iter(ds.map(lambda c, s: s["tok"]).padded_batch(2)))
    assert b.numpy().tolist() == [[[1, 2], [3, 4]], [[9, 8], [0, 0]]]


def test_sequence_feature_reprs():
    # TF 2.21's reprs
    assert repr(tf.io.FixedLenSequenceFeature([2], tf.int64)) == \
        "FixedLenSequenceFeature(shape=[2], dtype=tf.int64, allow_missing=False, default_value=None)"
    assert repr(tf.io.SparseFeature("ix", "val", tf.float32, 10)) == \
        "SparseFeature(index_key='ix', value_key='val', dtype=tf.float32, size=10, already_sorted=False)"


# ---- FixedLenSequenceFeature and SparseFeature in parse_example / parse_single_example ------------

def _run_ex(c):
    ex = [b64(e) for e in REF["examples"]]
    x = ex[c["serialized"]] if isinstance(c["serialized"], int) else tf.constant([ex[i] for i in c["serialized"]])
    f = tf.io.parse_single_example if c["fn"] == "single" else tf.io.parse_example
    return f(x, spec(c["features"]))


@pytest.mark.parametrize("c", REF["ex_cases"], ids=[c["name"] for c in REF["ex_cases"]])
def test_parse_example_sequence_and_sparse_features_match_tf(c):
    if "error" in c:
        with pytest.raises(_ERR[c["error"]]) as e:
            _run_ex(c)
        assert str(e.value).startswith(c["message"][:120]), (str(e.value), c["message"])
        return
    out = _run_ex(c)
    assert list(out) == c["keys"]
    for k in c["keys"]:
        check(out[k], c["result"][k], (c["name"], k))


def test_fixed_len_sequence_feature_compiled_equals_eager():
    ex = [b64(e) for e in REF["examples"]]
    feats = {"a": tf.io.FixedLenSequenceFeature([2], tf.int64, allow_missing=True, default_value=-1)}
    x = tf.constant([ex[0], ex[1], ex[2]])
    eager = tf.io.parse_example(x, feats)["a"]
    compiled = tf.function(lambda s: tf.io.parse_example(s, feats)["a"])(x)
    # TF 2.21: [[[1, 2], [3, 4]], [[-1, -1], [-1, -1]], [[5, 6], [-1, -1]]]
    assert eager.numpy().tolist() == compiled.numpy().tolist() == [[[1, 2], [3, 4]], [[-1, -1], [-1, -1]],
                                                                   [[5, 6], [-1, -1]]]
    with pytest.raises(NotImplementedError, match="SparseFeature inside tapeflow.function"):
        tf.function(lambda s: tf.io.parse_example(s, {"sp": tf.io.SparseFeature("ix", "val", tf.float32, 10)})[
            "sp"].values)(x)


# ---- decode_json_example -------------------------------------------------------------------------

@pytest.mark.parametrize("c", REF["json"], ids=[str(i) for i in range(len(REF["json"]))])
def test_decode_json_example_matches_tf(c):
    if "error" in c:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Error while parsing JSON"):
            tf.io.decode_json_example(c["json"])
        return
    out = tf.io.decode_json_example(c["json"])
    assert out.dtype == tf.string and out.shape == ()
    assert out.numpy() == b64(c["bytes"])   # TF 2.21's bytes (unpacked repeated values, JSON order)


def test_decode_json_example_shapes_and_compiled():
    js = [c["json"] for c in REF["json"][:3]]
    want = [b64(c["bytes"]) for c in REF["json"][:3]]
    out = tf.io.decode_json_example(tf.constant([js[:2], js[1:]]))
    assert out.shape == (2, 2) and out.numpy().tolist() == [want[:2], want[1:]]
    assert tf.io.decode_json_example(tf.constant([], tf.string)).shape == (0,)   # TF 2.21
    f = tf.function(lambda s: tf.io.decode_json_example(s))
    assert f(tf.constant(js)).numpy().tolist() == want
    with pytest.raises(tf.errors.InvalidArgumentError, match="Error while parsing JSON"):
        f(tf.constant(["{bad"]))
    # the bytes parse to the Example the JSON describes
    ex = tf.train.Example.FromString(want[0])
    assert ex.features.feature["a"].int64_list.value == [1, 2] and ex.features.feature["c"].bytes_list.value == [b"hi"]
    with pytest.raises(TypeError):   # TF 2.21: TypeError (Cannot convert 3 to EagerTensor of dtype string)
        tf.io.decode_json_example(3)


def test_parse_sequence_example_after_batch_in_dataset_map_and_names(tmp_path):
    msgs = [b64(REF["messages"][i]["bytes"]) for i in (4, 5, 3)]
    p = str(tmp_path / "seq.tfrecord")
    with tf.io.TFRecordWriter(p) as w:
        for s in msgs:
            w.write(s)
    seq = {"tok": tf.io.FixedLenSequenceFeature([2], tf.int64)}
    ds = tf.data.TFRecordDataset(p).batch(2).map(
        lambda s: tf.io.parse_sequence_example(s, sequence_features=seq)[1:])
    # traced: the batch and the step count are unknown dimensions
    assert repr(ds.element_spec[0]["tok"]) == "TensorSpec(shape=(None, None, 2), dtype=tf.int64, name=None)"
    got = [(x["tok"].numpy().tolist(), n["tok"].numpy().tolist()) for x, n in ds]
    # (TF 2.21's padding and lengths, as in the batch cases of the reference)
    assert got == [([[[1, 2], [3, 4]], [[9, 8], [0, 0]]], [2, 1]), ([[[1, 2], [3, 4]]], [2])]
    # example_names name the example in TF's messages. TF 2.21: "Name: b, Feature list 'x' is required but ..."
    with pytest.raises(tf.errors.InvalidArgumentError, match="Name: a, Feature list 'x' is required"):
        tf.io.parse_sequence_example(tf.constant(msgs[:2]), example_names=["a", "b"],
                                     sequence_features={"x": tf.io.FixedLenSequenceFeature([], tf.int64)})
