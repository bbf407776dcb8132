"""tf.data with ragged elements (wave 20): from_tensor_slices of RaggedTensors, batch/unbatch of
ragged components, ragged_batch / experimental.dense_to_ragged_batch, map producing ragged values,
and tf.io.RaggedFeature in parse_example. Expected values: TF 2.21's (literals, '# TF 2.21')."""
from __future__ import annotations

import pytest

import tapeflow as tf

R = tf.ragged.constant


def features():
    return {"colors": R([[b"red", b"blue"], [b"orange"], [b"black", b"yellow"], [b"green"]]),
            "lengths": R([[7], [], [1, 3], [3, 5, 2]], dtype=tf.int64)}


def texts(ds):
    return [{k: repr(v) for k, v in e.items()} for e in ds]


def test_slices_batch_unbatch_of_ragged_components():
    ds = tf.data.Dataset.from_tensor_slices(features())
    # TF 2.21: {'colors': RaggedTensorSpec(TensorShape([None]), tf.string, 0, tf.int64), 'lengths': ...}
    assert repr(ds.element_spec) == ("{'colors': RaggedTensorSpec(TensorShape([None]), tf.string, 0, tf.int64), "
                                     "'lengths': RaggedTensorSpec(TensorShape([None]), tf.int64, 0, tf.int64)}")
    rows = list(ds)
    assert [e["colors"].numpy().tolist() for e in rows] == [[b"red", b"blue"], [b"orange"], [b"black", b"yellow"],
                                                             [b"green"]]
    assert repr(rows[1]["lengths"]) == "<tf.Tensor: shape=(0,), dtype=int64, numpy=array([], dtype=int64)>"
    b = ds.batch(2)
    assert repr(b.element_spec) == ("{'colors': RaggedTensorSpec(TensorShape([None, None]), tf.string, 1, tf.int64), "
                                    "'lengths': RaggedTensorSpec(TensorShape([None, None]), tf.int64, 1, tf.int64)}")
    assert texts(b) == [   # TF 2.21
        {"colors": "<tf.RaggedTensor [[b'red', b'blue'], [b'orange']]>", "lengths": "<tf.RaggedTensor [[7], []]>"},
        {"colors": "<tf.RaggedTensor [[b'black', b'yellow'], [b'green']]>",
         "lengths": "<tf.RaggedTensor [[1, 3], [3, 5, 2]]>"}]
    assert texts(ds.batch(3))[1] == {"colors": "<tf.RaggedTensor [[b'green']]>",
                                     "lengths": "<tf.RaggedTensor [[3, 5, 2]]>"}   # TF 2.21
    u = b.unbatch()
    assert repr(u.element_spec) == repr(ds.element_spec)   # TF 2.21: the slices' spec again
    assert [e["lengths"].numpy().tolist() for e in u] == [[7], [], [1, 3], [3, 5, 2]]
    r3 = tf.data.Dataset.from_tensor_slices(R([[[1, 2], [3]], [[4]]]))
    # TF 2.21: RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64) [[[1, 2], [3]], [[4]]]
    assert repr(r3.element_spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
    assert [repr(e) for e in r3] == ["<tf.RaggedTensor [[1, 2], [3]]>", "<tf.RaggedTensor [[4]]>"]


def test_ragged_batch_and_dense_to_ragged_batch():
    d = tf.data.Dataset.from_tensor_slices([1, 5, 3, 2, 8]).map(tf.range)
    want = ["<tf.RaggedTensor [[0], [0, 1, 2, 3, 4]]>", "<tf.RaggedTensor [[0, 1, 2], [0, 1]]>",
            "<tf.RaggedTensor [[0, 1, 2, 3, 4, 5, 6, 7]]>"]   # TF 2.21
    assert [repr(e) for e in d.apply(tf.data.experimental.dense_to_ragged_batch(2))] == want
    assert [repr(e) for e in d.ragged_batch(2, drop_remainder=True)] == want[:2]
    mixed = tf.data.Dataset.from_tensor_slices(([1, 5], [[1.0, 2.0], [3.0, 4.0]])).map(lambda n, v: (tf.range(n), v))
    (r, dense), = list(mixed.ragged_batch(2))
    assert repr(r) == "<tf.RaggedTensor [[0], [0, 1, 2, 3, 4]]>"   # TF 2.21: the static component stays dense
    assert isinstance(dense, tf.Tensor) and dense.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(ValueError, match="different shapes"):   # TF 2.21: an error (batch needs one shape)
        list(tf.data.Dataset.from_tensor_slices([1, 5]).map(tf.range).batch(2))


def test_map_producing_ragged_values():
    ds = tf.data.Dataset.from_tensor_slices(features())
    t = ds.map(lambda f: {"mean_length": tf.math.reduce_mean(f["lengths"]),
                          "length_ranges": tf.ragged.range(f["lengths"])})
    got = [(int(e["mean_length"].numpy()), repr(e["length_ranges"])) for e in t]
    assert got == [(7, "<tf.RaggedTensor [[0, 1, 2, 3, 4, 5, 6]]>"), (0, "<tf.RaggedTensor []>"),   # TF 2.21
                   (2, "<tf.RaggedTensor [[0], [0, 1, 2]]>"), (3, "<tf.RaggedTensor [[0, 1, 2], [0, 1, 2, 3, 4], [0, 1]]>")]


def test_ragged_feature_in_parse_example():
    def ex(d):
        f = {}
        for k, v in d.items():
            f[k] = (tf.train.Feature(bytes_list=tf.train.BytesList(value=v)) if v and isinstance(v[0], bytes) else
                    tf.train.Feature(float_list=tf.train.FloatList(value=v)) if k.startswith("f") else
                    tf.train.Feature(int64_list=tf.train.Int64List(value=v)))
        return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()
    batch = [ex({"colors": [b"red", b"blue"], "lengths": [7], "fx": [1.0]}),
             ex({"colors": [b"orange"], "lengths": [], "fx": [2.0]})]
    spec = {"lengths": tf.io.RaggedFeature(tf.int64), "colors": tf.io.RaggedFeature(tf.string),
            "fx": tf.io.FixedLenFeature([], tf.float32), "v": tf.io.VarLenFeature(tf.int64),
            "alias": tf.io.RaggedFeature(tf.int64, value_key="lengths")}
    out = tf.io.parse_example(batch, spec)
    assert list(out) == ["v", "fx", "lengths", "colors", "alias"]   # TF 2.21's order
    assert repr(out["lengths"]) == "<tf.RaggedTensor [[7], []]>"   # TF 2.21
    assert repr(out["colors"]) == "<tf.RaggedTensor [[b'red', b'blue'], [b'orange']]>"
    assert repr(out["alias"]) == "<tf.RaggedTensor [[7], []]>"
    one = tf.io.parse_single_example(batch[0], {"colors": tf.io.RaggedFeature(tf.string),
                                                "lengths": tf.io.RaggedFeature(tf.int64)})
    # TF 2.21: <tf.Tensor: shape=(1,), dtype=int64, numpy=array([7])>
    assert repr(one["lengths"]) == "<tf.Tensor: shape=(1,), dtype=int64, numpy=array([7])>"
    with pytest.raises(tf.errors.InvalidArgumentError, match="Data types don't match"):   # TF 2.21
        tf.io.parse_example(batch, {"colors": tf.io.RaggedFeature(tf.int64)})
    with pytest.raises(NotImplementedError, match="a RaggedFeature inside tapeflow.function"):
        tf.function(lambda b: tf.io.parse_example(b, {"lengths": tf.io.RaggedFeature(tf.int64)}))(
            tf.constant(batch))
    # the guide's pipeline over the parsed features
    ds = tf.data.Dataset.from_tensor_slices(out["colors"]).batch(2)
    assert [repr(e) for e in ds] == ["<tf.RaggedTensor [[b'red', b'blue'], [b'orange']]>"]


def test_text_format_merge_into_example():
    # the guide builds its Examples with google.protobuf.text_format.Merge(s, tf.train.Example())
    pbtext = pytest.importorskip("google.protobuf.text_format")
    s = r'''features {
      feature {key: "colors" value {bytes_list {value: ["red", "blue"]} } }
      feature {key: "f" value {float_list {value: [0.1, 2]} } }
      feature {key: "lengths" value {int64_list {value: [7]} } } }'''
    e = pbtext.Merge(s, tf.train.Example())
    # TF 2.21: SerializeToString(deterministic=True) of the same Merge into tf.train.Example()
    assert e.SerializeToString() == (b'\n>\n\x17\n\x06colors\x12\r\n\x0b\n\x03red\n\x04blue\n\x11\n\x01f\x12\x0c'
                                     b'\x12\n\n\x08\xcd\xcc\xcc=\x00\x00\x00@\n\x10\n\x07lengths\x12\x05\x1a\x03\n\x01\x07')
    assert list(e.features.feature["f"].float_list.value) == [0.10000000149011612, 2.0]   # TF 2.21 (float32)
    # Merge lets a later oneof member win (TF 2.21: bytes_list "a"); Parse refuses it
    e2 = pbtext.Merge('features { feature {key: "x" value {int64_list {value: 1} bytes_list {value: "a"}}}}',
                      tf.train.Example())
    assert e2.features.feature["x"].WhichOneof("kind") == "bytes_list"
    with pytest.raises(pbtext.ParseError, match='"bytes_list" is specified along with field "int64_list"'):  # TF 2.21
        pbtext.Parse('features { feature {key: "x" value {int64_list {value: 1} bytes_list {value: "a"}}}}',
                     tf.train.Example())
    with pytest.raises(pbtext.ParseError, match='has no field named "foo"'):   # TF 2.21
        pbtext.Merge("foo: 1", tf.train.Example())
    with pytest.raises(pbtext.ParseError, match="Couldn't parse integer"):   # TF 2.21
        pbtext.Merge('features { feature {key: "x" value {int64_list {value: ["a"]}}}}', tf.train.Example())
    with pytest.raises(TypeError, match="Expected an int, got a boolean"):   # a checked repeated append
        tf.train.Int64List().value.append(True)
    out = tf.io.parse_example([e.SerializeToString()], {"colors": tf.io.RaggedFeature(tf.string)})
    assert repr(out["colors"]) == "<tf.RaggedTensor [[b'red', b'blue']]>"
