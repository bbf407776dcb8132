"""tf.data.experimental.dense_to_sparse_batch (Dataset.sparse_batch) and make_batched_features_dataset
(wave 21, seqex21). Expected values: TF 2.21's on the same programs (literals, '# TF 2.21')."""
from __future__ import annotations

import pytest

import tapeflow as tf


def _sp(x):
    return x.indices.numpy().tolist(), x.values.numpy().tolist(), x.dense_shape.numpy().tolist()


def _rows():
    return tf.data.Dataset.from_tensor_slices([[1, 2, 0], [3, 0, 0], [4, 5, 6]]).map(
        lambda x: x[:tf.reduce_sum(tf.cast(x > 0, tf.int32))])


def test_dense_to_sparse_batch_matches_tf():
    b = _rows().apply(tf.data.experimental.dense_to_sparse_batch(2, [4]))
    assert repr(b.element_spec) == "SparseTensorSpec(TensorShape([None, 4]), tf.int32)"   # TF 2.21
    # TF 2.21: ([[0, 0], [0, 1], [1, 0]], [1, 2, 3], [2, 4]), ([[0, 0], [0, 1], [0, 2]], [4, 5, 6], [1, 4])
    assert [_sp(x) for x in b] == [([[0, 0], [0, 1], [1, 0]], [1, 2, 3], [2, 4]),
                                   ([[0, 0], [0, 1], [0, 2]], [4, 5, 6], [1, 4])]
    b2 = tf.data.Dataset.range(5).map(lambda i: tf.fill([i % 3, 2], tf.cast(i, tf.float32))).apply(
        tf.data.experimental.dense_to_sparse_batch(3, [None, 2]))
    assert repr(b2.element_spec) == "SparseTensorSpec(TensorShape([None, None, 2]), tf.float32)"   # TF 2.21
    # TF 2.21: an unknown dim is the batch's largest; every value is kept (zeros too)
    assert [_sp(x) for x in b2] == [
        ([[1, 0, 0], [1, 0, 1], [2, 0, 0], [2, 0, 1], [2, 1, 0], [2, 1, 1]], [1.0, 1.0, 2.0, 2.0, 2.0, 2.0], [3, 2, 2]),
        ([[1, 0, 0], [1, 0, 1]], [4.0, 4.0], [2, 1, 2])]
    # TF 2.21: scalars, and strings
    assert [_sp(x) for x in tf.data.Dataset.range(3).sparse_batch(2, [])] == [([[0], [1]], [0, 1], [2]),
                                                                              ([[0]], [2], [1])]
    assert [_sp(x) for x in tf.data.Dataset.from_tensor_slices([["a", "b"], ["c", "d"]]).sparse_batch(2, [3])] == \
        [([[0, 0], [0, 1], [1, 0], [1, 1]], [b"a", b"b", b"c", b"d"], [2, 3])]


def test_dense_to_sparse_batch_errors_match_tf():
    # TF 2.21: DataLossError / InvalidArgumentError, raised by the iterator
    with pytest.raises(tf.errors.DataLossError, match=r"Input element had shape \(\[2\]\) that is larger than the "
                                                      r"row shape \(\[1\]\)"):
        list(_rows().apply(tf.data.experimental.dense_to_sparse_batch(2, [1])))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"incompatible with the row shape \(\[4,1\]\)"):
        list(_rows().apply(tf.data.experimental.dense_to_sparse_batch(2, [4, 1])))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Batch size must be greater than zero"):
        _rows().sparse_batch(0, [4])


def _write(tmp_path):
    F = tf.train
    for fi in range(2):
        with tf.io.TFRecordWriter(str(tmp_path / f"f{fi}.tfrecord")) as w:
            for i in range(5):
                w.write(F.Example(features=F.Features(feature={
                    "x": F.Feature(float_list=F.FloatList(value=[fi * 10 + i, 0.5])),
                    "y": F.Feature(int64_list=F.Int64List(value=[i % 2])),
                    "t": F.Feature(bytes_list=F.BytesList(value=[b"a"] * (i % 3)))})).SerializeToString())
    return {"x": tf.io.FixedLenFeature([2], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64),
            "t": tf.io.VarLenFeature(tf.string)}


def test_make_batched_features_dataset_matches_tf(tmp_path):
    feats = _write(tmp_path)
    ds = tf.data.experimental.make_batched_features_dataset(str(tmp_path / "*.tfrecord"), 4, feats, shuffle=False,
                                                            num_epochs=1)
    got = [{k: (v.dense_shape.numpy().tolist() if isinstance(v, tf.SparseTensor) else v.numpy().tolist())
            for k, v in b.items()} for b in ds]
    # TF 2.21 (keys in parse_example's order: VarLen first)
    assert got == [{"t": [4, 2], "x": [[0.0, 0.5], [1.0, 0.5], [2.0, 0.5], [3.0, 0.5]], "y": [0, 1, 0, 1]},
                   {"t": [4, 2], "x": [[4.0, 0.5], [10.0, 0.5], [11.0, 0.5], [12.0, 0.5]], "y": [0, 0, 1, 0]},
                   {"t": [2, 1], "x": [[13.0, 0.5], [14.0, 0.5]], "y": [1, 0]}]
    assert [list(b) for b in ds][0] == ["t", "x", "y"]
    ds = tf.data.experimental.make_batched_features_dataset(
        [str(tmp_path / "f0.tfrecord"), str(tmp_path / "f1.tfrecord")], 3, feats, label_key="y", shuffle=False,
        num_epochs=1, drop_final_batch=True)
    # TF 2.21: [[0, .5], [1, .5], [2, .5]] [0, 1, 0]; [[3, .5], [4, .5], [10, .5]] [1, 0, 0]; [[11..13]] [1, 0, 1]
    assert [(b["x"].numpy()[:, 0].tolist(), lab.numpy().tolist()) for b, lab in ds] == [
        ([0.0, 1.0, 2.0], [0, 1, 0]), ([3.0, 4.0, 10.0], [1, 0, 0]), ([11.0, 12.0, 13.0], [1, 0, 1])]
    dense = {k: feats[k] for k in ("x", "y")}
    ds = tf.data.experimental.make_batched_features_dataset(str(tmp_path / "*.tfrecord"), 4, dense)
    # TF 2.21: {'x': TensorSpec(shape=(None, 2), ...), 'y': TensorSpec(shape=(None,), ...)}
    assert repr(ds.element_spec) == ("{'x': TensorSpec(shape=(None, 2), dtype=tf.float32, name=None), "
                                     "'y': TensorSpec(shape=(None,), dtype=tf.int64, name=None)}")
    # shuffled, two epochs: TF 2.21 gives 5 batches (20 records by 4); the order is tapeflow's stream
    ds = tf.data.experimental.make_batched_features_dataset(str(tmp_path / "*.tfrecord"), 4, dense, shuffle_seed=1,
                                                            num_epochs=2)
    xs = sorted(x for b in ds for x in b["x"].numpy()[:, 0].tolist())
    assert xs == sorted([float(fi * 10 + i) for fi in range(2) for i in range(5)] * 2)


def test_make_batched_features_dataset_errors_match_tf(tmp_path):
    feats = _write(tmp_path)
    with pytest.raises(ValueError, match=r"The `label_key` provided \(zz\) must be one of the `features` keys"):
        tf.data.experimental.make_batched_features_dataset(str(tmp_path / "*.tfrecord"), 4, feats, label_key="zz")
    with pytest.raises(tf.errors.InvalidArgumentError, match="No files matched pattern"):   # TF 2.21
        tf.data.experimental.make_batched_features_dataset(str(tmp_path / "none*.tfrecord"), 4, feats)


@pytest.mark.parametrize("name, words", [("service", "tf.data service"), ("SqlDataset", "SQL"),
                                         ("to_variant", "variant"), ("get_model_proto", "autotuning"),
                                         ("make_saveable_from_iterator", "Checkpoint")])
def test_data_experimental_out_of_scope_names_say_so(name, words):
    from tapeflow._unsupported import UnsupportedFeatureError
    with pytest.raises(UnsupportedFeatureError, match=rf"tf\.data\.experimental\.{name}: tapeflow does not "
                                                      rf"implement .*{words}"):
        getattr(tf.data.experimental, name)
    assert not hasattr(tf.data.experimental, name)
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'") as info:
        tf.data.experimental.NoSuchName   # noqa: B018  (a typo stays a plain AttributeError)
    assert not isinstance(info.value, NotImplementedError)
