"""Checkpoint inspection as TF 2.21 prints it (tbl20): tf.train.list_variables and
load_checkpoint(...).get_variable_to_shape_map()/get_variable_to_dtype_map()/get_tensor()
give TF's keys, in the order TF's C++ reader hands them out, with the
_CHECKPOINTABLE_OBJECT_GRAPH entry holding TF's bytes. TF's outputs of the same programs
(tests/tf_reference/checkpoint_inspection_programs.py) are recorded by
tests/tf_reference/make_checkpoint_inspection_reference.py in
tests/data/checkpoint_inspection_tf.json."""
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.train import tf_format

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "tf_reference"))
import checkpoint_inspection_programs as P  # noqa: E402

REF = json.loads((HERE / "data" / "checkpoint_inspection_tf.json").read_text())
GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"


@pytest.mark.parametrize("name", sorted(P.PROGRAMS))
def test_programs_read_back_as_tf(tmp_path, name):
    path = P.PROGRAMS[name](tf, str(tmp_path))
    ref = REF["programs"][name]
    assert [[k, s] for k, s in tf.train.list_variables(path)] == ref["list_variables"]
    r = tf.train.load_checkpoint(path)
    shapes, dtypes = r.get_variable_to_shape_map(), r.get_variable_to_dtype_map()
    assert list(shapes) == ref["order"] and list(dtypes) == ref["dtype_order"]
    assert shapes == ref["shapes"]
    assert {k: d.name for k, d in dtypes.items()} == ref["dtypes"]
    assert r.get_tensor(GRAPH).hex() == ref["object_graph"]


@pytest.mark.parametrize("n", P.ORDER_SIZES)
def test_reader_order_is_tfs(n):
    keys = [f"v/{s}/.ATTRIBUTES/VARIABLE_VALUE" for s in P.order_names(n)] + [GRAPH]
    srt = sorted(keys)
    assert tf_format.reader_order(keys) == [srt[i] for i in REF["orders"][str(n)]]


def test_reader_order_of_written_checkpoint(tmp_path):
    # the reader hands out a real checkpoint's keys in TF's order (a size past a rehash)
    path = P.order_case(tf, str(tmp_path), 60)
    order = list(tf.train.load_checkpoint(path).get_variable_to_dtype_map())
    srt = sorted(order)
    assert order == [srt[i] for i in REF["orders"]["60"]]


def test_std_hash_is_libstdcxx():
    # std::hash<std::string>{}(s) printed by a C++ program built with this machine's g++
    # (libstdc++, x86-64): empty, a tail only, one 8-byte word, a word and a tail, a TF key
    assert tf_format.std_hash(b"") == 6142509188972423790
    assert tf_format.std_hash(b"a") == 4993892634952068459
    assert tf_format.std_hash(b"abcdefgh") == 8664279048047335611
    assert tf_format.std_hash(b"abcdefghij") == 18042067762304121004
    assert tf_format.std_hash(b"variables/0/.ATTRIBUTES/VARIABLE_VALUE") == 14711531085004973989


def test_guide_print_checkpoint(tmp_path):
    # migrating_checkpoints.ipynb cells 0 and 2; TF 2.21 prints exactly this
    def print_checkpoint(save_path):
        reader = tf.train.load_checkpoint(save_path)
        shapes = reader.get_variable_to_shape_map()
        dtypes = reader.get_variable_to_dtype_map()
        out = [f"Checkpoint at '{os.path.basename(save_path)}':"]
        for key in shapes:
            out.append(f"  (key='{key}', shape={shapes[key]}, dtype={dtypes[key].name}, "
                       f"value={reader.get_tensor(key)})")
        return "\n".join(out)
    text = print_checkpoint(P.guide_cell2(tf, str(tmp_path)))
    assert text == (
        "Checkpoint at 'tf2-ckpt-1':\n"
        "  (key='variables/2/.ATTRIBUTES/VARIABLE_VALUE', shape=[], dtype=float32, value=7.0)\n"
        "  (key='variables/1/.ATTRIBUTES/VARIABLE_VALUE', shape=[], dtype=float32, value=6.0)\n"
        "  (key='variables/0/.ATTRIBUTES/VARIABLE_VALUE', shape=[], dtype=float32, value=5.0)\n"
        "  (key='save_counter/.ATTRIBUTES/VARIABLE_VALUE', shape=[], dtype=int64, value=1)\n"
        "  (key='_CHECKPOINTABLE_OBJECT_GRAPH', shape=[], dtype=string, value="
        "b\"\\n%\\n\\r\\x08\\x01\\x12\\tvariables\\n\\x10\\x08\\x02\\x12\\x0csave_counter*\\x02\\x08\\x01\\n\\x19"
        "\\n\\x05\\x08\\x03\\x12\\x010\\n\\x05\\x08\\x04\\x12\\x011\\n\\x05\\x08\\x05\\x12\\x012*\\x02\\x08\\x01"
        "\\nM\\x12G\\n\\x0eVARIABLE_VALUE\\x12\\x0csave_counter\\x1a'save_counter/.ATTRIBUTES/VARIABLE_VALUE"
        "*\\x02\\x08\\x01\\nA\\x12;\\n\\x0eVARIABLE_VALUE\\x12\\x01a\\x1a&variables/0/.ATTRIBUTES/VARIABLE_VALUE"
        "*\\x02\\x08\\x01\\nA\\x12;\\n\\x0eVARIABLE_VALUE\\x12\\x01b\\x1a&variables/1/.ATTRIBUTES/VARIABLE_VALUE"
        "*\\x02\\x08\\x01\\nH\\x12B\\n\\x0eVARIABLE_VALUE\\x12\\x08scoped/c\\x1a&variables/2/.ATTRIBUTES/"
        "VARIABLE_VALUE*\\x02\\x08\\x01\")")


def test_object_graph_entry_reads_like_a_tensor(tmp_path):
    path = tf.train.Checkpoint(v=tf.Variable(1.0)).write(str(tmp_path / "w"))
    r = tf.train.load_checkpoint(path)
    # TF 2.21: get_tensor gives bytes; has_tensor and load_variable know the key
    assert isinstance(r.get_tensor(GRAPH), bytes) and r.has_tensor(GRAPH)
    assert tf.train.load_variable(path, GRAPH) == r.get_tensor(GRAPH)
    # write() has no save counter: TF 2.21 lists [object graph, v]
    assert tf.train.list_variables(path) == [(GRAPH, []), ("v/.ATTRIBUTES/VARIABLE_VALUE", [])]
    assert r.get_tensor("v") == 1.0      # tapeflow's short key still reads


def test_name_scope_names_variables_as_tf():
    # TF 2.21: tf.Variable inside tf.name_scope gets the scope's prefix; Keras 3 weights do not
    with tf.name_scope("s"):
        v = tf.Variable(1.0, name="x")
        with tf.name_scope("t"):
            w = tf.Variable(1.0)
        u = tf.Variable(1.0, name="a/b")
        d = tf.keras.layers.Dense(2, name="dense")   # (named: the counter depends on earlier tests)
        d.build((None, 3))
    with tf.name_scope("abs/"):
        a = tf.Variable(1.0)
    with tf.name_scope(""):
        q = tf.Variable(1.0, name="q")
    assert (v.name, w.name, u.name, a.name, q.name) == ("s/x:0", "s/t/Variable:0", "s/a/b:0", "abs/Variable:0", "q:0")
    assert (d.kernel.name, d.kernel.path) == ("kernel", "dense/kernel")
    assert tf.Variable(1.0, name="x").name == "x:0"     # the scope is closed


def test_malformed_index_fields_of_the_object_graph(tmp_path):
    v = tf.Variable(2.0)
    path = tf.train.Checkpoint(listed=[v], mapped={"one": v}).write(str(tmp_path / "a"))
    index = path + ".json"
    meta = json.loads(open(index).read())
    meta["tf_children"] = "not a list"      # ignored: the children come in their keys' order
    open(index, "w").write(json.dumps(meta))
    assert tf.train.load_checkpoint(path).get_tensor(GRAPH)
    meta["aliases"] = {"mapped/one": 5}
    open(index, "w").write(json.dumps(meta))
    with pytest.raises(tf.train.CorruptCheckpointError, match="'aliases' must map keys to saved keys"):
        tf.train.load_checkpoint(path).get_tensor(GRAPH)
