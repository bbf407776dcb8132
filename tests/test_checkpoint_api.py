"""Checkpoint.write/read, list_variables/load_variable, the restore status
assertions (TF's rules for what raises when), containers and deferred restore."""
import numpy as np
import pytest

import tapeflow as tf


class Holder(tf.Module):
    def __init__(self):
        super().__init__()
        self.vs = [tf.Variable([1.0, 2.0]), tf.Variable(3.0)]
        self.d = {"a": tf.Variable(np.ones((2, 2), np.float32))}
        self.t = (tf.Variable(5, dtype=tf.int64),)


def _zero(h):
    for v in [*h.vs, h.d["a"], h.t[0]]:
        v.assign(tf.zeros_like(v))


def test_write_read_has_no_counter_and_restores_containers(tmp_path):
    h = Holder()
    ck = tf.train.Checkpoint(h=h)
    path = ck.write(str(tmp_path / "w"))
    assert path == str(tmp_path / "w")
    keys = [k for k, _ in tf.train.list_variables(path)]
    assert not any("save_counter" in k for k in keys)
    assert len(keys) == 5       # TF 2.21: the 4 variables and _CHECKPOINTABLE_OBJECT_GRAPH
    _zero(h)
    tf.train.Checkpoint(h=h).read(path).assert_consumed()
    np.testing.assert_array_equal(h.vs[0].numpy(), [1.0, 2.0])
    assert float(h.vs[1].numpy()) == 3.0
    np.testing.assert_array_equal(h.d["a"].numpy(), np.ones((2, 2)))
    assert int(h.t[0].numpy()) == 5


def test_list_and_load_variable(tmp_path):
    h = Holder()
    path = tf.train.Checkpoint(h=h).write(str(tmp_path / "w"))
    shapes = dict(tf.train.list_variables(path))
    assert shapes.pop("_CHECKPOINTABLE_OBJECT_GRAPH") == []     # TF 2.21: a scalar string
    for k, shape in shapes.items():
        a = tf.train.load_variable(path, k)
        assert list(a.shape) == shape
    assert sorted(map(tuple, shapes.values())) == [(), (), (2,), (2, 2)]
    with pytest.raises(KeyError, match="nope"):
        tf.train.load_variable(path, "nope")


def test_status_assertions(tmp_path):
    h = Holder()
    path = tf.train.Checkpoint(h=h).write(str(tmp_path / "w"))
    # more objects than the checkpoint has: existing objects unmatched -> both assertions raise
    extra = tf.Variable(1.0)
    st = tf.train.Checkpoint(h=Holder(), extra=extra).read(path)
    with pytest.raises(AssertionError):
        st.assert_existing_objects_matched()
    with pytest.raises(AssertionError):
        st.assert_consumed()
    # fewer objects than the checkpoint: everything live matched, values left over
    st = tf.train.Checkpoint(h=tf.Module()).read(path)
    st.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match="not matched"):
        st.assert_consumed()
    assert st.expect_partial() is st
    # restore(None): nothing to check against
    with pytest.raises(AssertionError):
        tf.train.Checkpoint(h=Holder()).restore(None).assert_consumed()


def test_deferred_restore_assigns_at_creation(tmp_path):
    h = Holder()
    path = tf.train.Checkpoint(h=h).write(str(tmp_path / "w"))
    late = tf.Module()
    st = tf.train.Checkpoint(h=late).read(path)
    assert st.pending_keys
    late.vs = [tf.Variable([0.0, 0.0]), tf.Variable(0.0)]
    late.d = {"a": tf.Variable(np.zeros((2, 2), np.float32))}
    late.t = (tf.Variable(0, dtype=tf.int64),)
    np.testing.assert_array_equal(late.vs[0].numpy(), [1.0, 2.0])
    assert int(late.t[0].numpy()) == 5
    st.assert_consumed()
