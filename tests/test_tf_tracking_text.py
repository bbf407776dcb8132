"""TF 2.21's tracked list attributes (``ListWrapper``) and Module repr, checked against the
text and behaviour real TF 2.21 shows (recorded with .venv-peers; the literals below are
TF's output)."""
from __future__ import annotations

import copy

import numpy as np

import tapeflow as tf
from tapeflow.module import ListWrapper


def test_module_repr_is_pythons_default():
    # TF 2.21: tf.Module defines no __repr__ (`<__main__.A object at 0x7f...>`)
    class A(tf.Module):
        pass
    a = A(name="x")
    assert repr(a) == object.__repr__(a)
    assert repr(a).endswith(f"A object at {hex(id(a))}>")


def test_module_list_attribute_is_a_list_wrapper():
    m = tf.Module()
    m.l = [1]
    assert isinstance(m.l, list) and type(m.l) is ListWrapper
    assert repr(m.l) == "ListWrapper([1])" and str(m.l) == "ListWrapper([1])"  # TF's text
    m.l.append(2)
    assert m.l == [1, 2] and [1, 2] == m.l
    # TF: slices and sums are plain lists; copies stay ListWrappers
    assert type(m.l + [3]) is list and type(m.l[0:1]) is list
    assert repr(copy.deepcopy(m.l)) == "ListWrapper([1, 2])"
    m.t = (1, 2)
    assert type(m.t) is tuple


def test_keras_layer_keeps_lists_as_keras_3_does():
    layer = tf.keras.layers.Layer()
    layer.parts = [1, 2]
    assert type(layer.parts) is list and repr(layer.parts) == "[1, 2]"


def test_variables_appended_to_a_module_list_are_found():
    m = tf.Module()
    m.ws = []
    v = tf.Variable(1.0)
    m.ws.append(v)
    m.ws.extend([tf.Variable(2.0)])
    m.ws[0] = tf.Variable(3.0)
    assert [float(x.numpy()) for x in m.variables] == [3.0, 2.0]


def test_checkpoint_list_attribute_restores_an_appended_variable(tmp_path):
    # TF's checkpoint guide: a list set on the Checkpoint after restore() is a ListWrapper;
    # a variable appended to it is restored at once from the pending values
    save = tf.train.Checkpoint()
    save.listed = [tf.Variable(1.)]
    save.listed.append(tf.Variable(2.))
    path = save.save(str(tmp_path / "ck"))

    restore = tf.train.Checkpoint()
    v2 = tf.Variable(0.)
    restore.mapped = {"two": v2}  # not a saved key: nothing matches yet
    status = restore.restore(path)
    restore.listed = []
    assert repr(restore.listed) == "ListWrapper([])"
    v1 = tf.Variable(0.)
    assert v1.numpy() == 0.0
    restore.listed.append(v1)
    assert v1.numpy() == 1.0
    w = tf.Variable(0.)
    restore.listed.insert(1, w)
    assert w.numpy() == 2.0
    assert "listed/0" in status.restored_keys and "listed/1" in status.restored_keys


def test_checkpoint_list_given_at_construction_tracks_appends(tmp_path):
    save = tf.train.Checkpoint(ws=[tf.Variable(np.arange(3, dtype=np.float32))])
    path = save.save(str(tmp_path / "ck"))
    restore = tf.train.Checkpoint(ws=[])
    restore.restore(path)
    v = tf.Variable(np.zeros(3, np.float32))
    restore.ws.append(v)
    np.testing.assert_array_equal(v.numpy(), [0., 1., 2.])
