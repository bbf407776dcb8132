"""tf.train.CheckpointView / TrackableView (wave 21, seqex21): a saved checkpoint's object graph and a
live object's, and their matching. Expected values: TF 2.21's, run on the same program (literals)."""
from __future__ import annotations

import pytest

import tapeflow as tf


class M(tf.Module):
    # attributes assigned in name order: tapeflow's object graph lists a module's attributes by
    # name (TF: as assigned; docs/differences.md), so this program prints the same in both
    def __init__(self, extra=False):
        super().__init__()
        self.a = tf.Variable([1., 2.])
        self.b = tf.Module()
        self.b.w = tf.Variable(3)
        self.c = [tf.Variable(1.), tf.Variable(2.)]
        if extra:
            self.e = tf.Variable(0.)


def test_checkpoint_view_children_descendants_match_diff(tmp_path):
    ck = tf.train.Checkpoint(model=M(), step=tf.Variable(5))
    path = ck.save(str(tmp_path / "ckpt"))
    cv = tf.train.CheckpointView(path)
    # TF 2.21: {0: {'model': 1, 'step': 2, 'save_counter': 3}, 1: {'a': 4, 'b': 5, 'c': 6}, 2: {}, 3: {}, 4: {},
    #           5: {'w': 7}, 6: {'0': 8, '1': 9}, 7: {}, 8: {}, 9: {}}
    assert {n: cv.children(n) for n in cv.descendants()} == {
        0: {"model": 1, "step": 2, "save_counter": 3}, 1: {"a": 4, "b": 5, "c": 6}, 2: {}, 3: {}, 4: {},
        5: {"w": 7}, 6: {"0": 8, "1": 9}, 7: {}, 8: {}, 9: {}}
    assert cv.descendants() == list(range(10))
    assert list(cv.children(0)) == ["model", "step", "save_counter"]
    m = ck.model
    matched = cv.match(ck)
    assert sorted(matched) == list(range(10))
    assert matched[0] is ck and matched[1] is m and matched[5] is m.b and matched[7] is m.b.w and matched[9] is m.c[1]
    # a different object: TF 2.21: match ids [0, 1, 2, 4, 6, 8, 9], only in the checkpoint [3, 5, 7],
    # only in the object: the new variable (value 0.0)
    m2 = M(extra=True)
    del m2.b
    ck2 = tf.train.Checkpoint(model=m2, step=tf.Variable(1))
    both, only_ckpt, only_obj = cv.diff(ck2)
    assert sorted(both) == [0, 1, 2, 4, 6, 8, 9] and only_ckpt == [3, 5, 7]
    assert len(only_obj) == 1 and only_obj[0] is m2.e
    # matching from a module root: only the root matches (the checkpoint's root is the Checkpoint)
    assert list(cv.match(m2)) == [0]


def test_trackable_view(tmp_path):
    ck = tf.train.Checkpoint(model=M(), step=tf.Variable(5))
    ck.save(str(tmp_path / "ckpt"))
    tv = tf.train.TrackableView(ck)
    assert tv.root is ck
    assert list(tv.children(ck)) == ["model", "step", "save_counter"]    # TF 2.21
    assert len(tv.descendants()) == 10 and tv.descendants()[0] is ck      # TF 2.21: 10 objects, root first
    m2 = M(extra=True)
    del m2.b
    assert list(tf.train.TrackableView.children(m2)) == ["a", "c", "e"]  # TF 2.21
    assert tf.train.TrackableView.children(m2)["c"][1] is m2.c[1]


def test_checkpoint_view_missing_file(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):   # TF 2.21
        tf.train.CheckpointView(str(tmp_path / "nothing"))
