"""SavedModels of string ops and lookup tables (core/serializable.py's registry): each
tf.strings family, static tables and Keras' lookup layers inside a saved function give the
same values after loading (in this process and in a fresh one), the serialized graph reads
back equal (graph_equal), and what cannot be saved (a MutableHashTable, a py_function, a
callable standardize) is refused at save time with a clear error. A file naming a function
outside the registry is a SerializedGraphError, never an import.

TF 2.21 saves and restores every one of these, a MutableHashTable included (its entries are
a resource saved with the variables); values below are TF 2.21's (``# TF 2.21``)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ir import serialize as S
from tapeflow.ir.serialize import SerializedGraphError, UnserializableError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
St = tf.strings


class Families(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([3], tf.string)])
    def f(self, x):
        return dict(lower=St.lower(x), upper=St.upper(x, encoding="utf-8"), strip=St.strip(x),
                    length=St.length(x, unit="UTF8_CHAR"), substr=St.substr(x, 1, 3),
                    rr=St.regex_replace(x, r"[0-9]+", "#"), fm=St.regex_full_match(x, r".*o.*"),
                    join=St.join([x, x], separator="|"), rj=St.reduce_join(x, separator=","),
                    split=St.split(x[0]), bsplit=St.bytes_split(x[2]),
                    hf=St.to_hash_bucket_fast(x, 100), hs=St.to_hash_bucket_strong(x, 100, [1, 2]),
                    ud=St.unicode_decode(x[1], "UTF-8"), ue=St.unicode_encode(tf.constant([72, 105]), "UTF-8"),
                    tr=St.unicode_transcode(x, "UTF-8", "UTF-16-BE"),
                    num=St.to_number(St.regex_replace(x[2:], "[a-z]", "")), asstr=St.as_string(St.length(x)),
                    fmt=St.format("a{}b", [St.length(x)]))


X3 = ["Hello World ", " ÄbC", "x1y22"]
# TF 2.21: the same module saved, loaded and called on X3 (tf.saved_model.save/load)
TF_FAMILIES = {
    "lower": [b"hello world ", b" \xc3\x84bc", b"x1y22"], "upper": [b"HELLO WORLD ", b" \xc3\x84BC", b"X1Y22"],
    "strip": [b"Hello World", b"\xc3\x84bC", b"x1y22"], "length": [12, 4, 5],
    "substr": [b"ell", b"\xc3\x84b", b"1y2"], "rr": [b"Hello World ", b" \xc3\x84bC", b"x#y#"],
    "fm": [True, False, False], "join": [b"Hello World |Hello World ", b" \xc3\x84bC| \xc3\x84bC", b"x1y22|x1y22"],
    "rj": b"Hello World , \xc3\x84bC,x1y22", "split": [b"Hello", b"World"], "bsplit": [b"x", b"1", b"y", b"2", b"2"],
    "hf": [50, 90, 82], "hs": [15, 18, 19], "ud": [32, 196, 98, 67], "ue": b"Hi",
    "tr": [b"\x00H\x00e\x00l\x00l\x00o\x00 \x00W\x00o\x00r\x00l\x00d\x00 ", b"\x00 \x00\xc4\x00b\x00C",
           b"\x00x\x001\x00y\x002\x002"],
    "num": [122.0], "asstr": [b"12", b"5", b"5"], "fmt": b"a[12 5 5]b"}


def _values(out):
    return {k: np.asarray(v.numpy()).tolist() for k, v in out.items()} if isinstance(out, dict) else \
        [np.asarray(v.numpy()).tolist() for v in (out if isinstance(out, (tuple, list)) else [out])]


def _saved(m, tmp_path, name="m"):
    path = str(tmp_path / name)
    tf.saved_model.save(m, path)
    return path, tf.saved_model.load(path)


def _golden(cf):
    """graph_equal(load(dump(g)), g) for the traced and the optimized graph."""
    for g in (cf.raw_graph, cf.graph):
        t = S.Tables(variable_ref=id, variable_of=None)
        text = json.dumps(S.graph_to_json(g, t, "test"), allow_nan=False)
        back = S.graph_from_json(json.loads(text), S.Tables(arrays=t.arrays), "test")
        assert S.graph_equal(back, g, explain=True) == ""
        assert str(back) == str(g)


def test_every_string_family_saves_and_loads_with_tf_values(tmp_path):
    m = Families()
    x = tf.constant(X3)
    before = _values(m.f(x))
    assert before == TF_FAMILIES
    _golden(m.f.get_concrete_function(x))
    path, loaded = _saved(m, tmp_path)
    assert _values(loaded.f(x)) == before
    # a fresh process: the registry's modules are imported by the loader, not by the program
    script = textwrap.dedent(f"""
        import json, numpy as np, tapeflow as tf
        m = tf.saved_model.load({path!r})
        out = m.f(tf.constant({X3!r}))
        print(json.dumps({{k: repr(np.asarray(v.numpy()).tolist()) for k, v in out.items()}}))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == {k: repr(v) for k, v in before.items()}


class Tables(tf.Module):
    def __init__(self):
        super().__init__()
        kv = tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([1, 2], tf.int64))
        self.t = tf.lookup.StaticHashTable(kv, -1)
        self.v = tf.lookup.StaticVocabularyTable(
            tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([0, 1], tf.int64)), 3)
        self.i2s = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant([3, 7], tf.int64), ["three", "seven"]), "none")
        self.f = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            ["x"], tf.constant([0.5], tf.float32)), float("nan"))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.int64)])
    def look(self, x, i):
        return self.t.lookup(x), self.v.lookup(x), self.i2s.lookup(i), self.f.lookup(x)


def test_static_tables_save_their_entries(tmp_path):
    m = Tables()
    x, i = tf.constant(["a", "b", "zz", "q", "x"]), tf.constant([7, 0, 3], tf.int64)
    before = _values(m.look(x, i))
    # TF 2.21: [1, 2, -1, -1] and [0, 1, 3, 4] for ["a", "b", "zz", "q"]
    assert before[0][:4] == [1, 2, -1, -1] and before[1][:4] == [0, 1, 3, 4]
    assert before[2] == [b"seven", b"none", b"three"]
    _golden(m.look.get_concrete_function(x, i))
    path, loaded = _saved(m, tmp_path)
    after = _values(loaded.look(x, i))
    np.testing.assert_equal(after, before)     # the NaN default too
    assert np.isnan(after[3][0]) and after[3][4] == 0.5


class KerasText(tf.Module):
    def __init__(self):
        super().__init__()
        L = tf.keras.layers
        self.sl = L.StringLookup(vocabulary=["a", "b", "c"])
        self.inv = L.StringLookup(vocabulary=["a", "b", "c"], invert=True)
        self.il = L.IntegerLookup(vocabulary=[10, 20], num_oov_indices=2)
        self.h = L.Hashing(num_bins=7)
        self.hs = L.Hashing(num_bins=5, salt=[3, 4], mask_value="")
        self.tv = L.TextVectorization(max_tokens=10, output_sequence_length=4)
        self.tv.adapt(["the cat sat", "the dog ran far away"])
        self.mh = L.TextVectorization(output_mode="multi_hot", vocabulary=["dog", "cat"])
        self.nosplit = L.TextVectorization(split=None, vocabulary=["the dog", "c b zz"])
        self.hc = L.HashedCrossing(num_bins=5)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.int64)])
    def f(self, x, n):
        return (self.sl(x), self.inv(self.sl(x)), self.il(n), self.h(x), self.hs(x), self.tv(x), self.mh(x),
                self.nosplit(x), self.hc((x, n)))


def test_keras_lookup_layers_and_text_vectorization_save(tmp_path):
    m = KerasText()
    x, n = tf.constant(["a", "the dog", "c b zz"]), tf.constant([20, 5, 6], tf.int64)
    before = _values(m.f(x, n))
    # TF 2.21 (the same layers saved and loaded): StringLookup [1, 0, 0], inverted
    # [a, [UNK], [UNK]], Hashing(7) [5, 1, 3], TextVectorization [[1,0,0,0],[2,6,0,0],[1,1,1,0]]
    assert before[0] == [1, 0, 0] and before[1] == [b"a", b"[UNK]", b"[UNK]"] and before[3] == [5, 1, 3]
    assert before[5] == [[1, 0, 0, 0], [2, 6, 0, 0], [1, 1, 1, 0]]
    assert before[8] == [0, 0, 3]   # TF 2.21: HashedCrossing(5)((x, n))
    _golden(m.f.get_concrete_function(x, n))
    path, loaded = _saved(m, tmp_path)
    assert _values(loaded.f(x, n)) == before


def test_a_mutable_table_is_refused_saying_why(tmp_path):
    class Mut(tf.Module):
        def __init__(self):
            super().__init__()
            self.t = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def f(self, x):
            return self.t.lookup(x)
    m = Mut()
    m.f(tf.constant(["a"]))
    # TF 2.21 saves it (a resource); tapeflow refuses: its entries are Python state
    with pytest.raises(UnserializableError, match=r"function 'f': op 'py_call': a MutableHashTable's 'lookup' "
                                                  r"cannot be saved.*tf.train.Checkpoint"):
        tf.saved_model.save(m, str(tmp_path / "mut"))
    assert os.listdir(tmp_path) == []


def test_user_python_stays_unserializable(tmp_path):
    class U(tf.Module):
        def __init__(self):
            super().__init__()
            self.tv = tf.keras.layers.TextVectorization(standardize=lambda s: tf.strings.lower(s),
                                                        vocabulary=["a"])

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def f(self, x):
            return self.tv(x)

        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def p(self, x):
            return tf.numpy_function(lambda a: a * 2, [x], tf.float32)
    u = U()
    with pytest.raises(UnserializableError, match=r"op 'py_call' holds a builtins.function \(Python code\) "
                                                  r"'.*U.__init__.<locals>.<lambda>' in its param 'fn'"):
        tf.saved_model.save(u, str(tmp_path / "u"))
    del u.tv, U.f
    with pytest.raises(UnserializableError, match=r"'p': op 'py_call' holds a builtins.function \(Python code\)"):
        tf.saved_model.save(u, str(tmp_path / "u"))


def _doc():
    g = tf.function(lambda s: St.lower(s)).get_concrete_function(tf.constant(["A"])).raw_graph
    t = S.Tables()
    return json.loads(json.dumps(S.graph_to_json(g, t, "test"))), t


def _fn_params(d):
    """The ``$fn`` tags of a document (to edit them)."""
    if isinstance(d, dict):
        if "$fn" in d:
            yield d
        for v in d.values():
            yield from _fn_params(v)
    elif isinstance(d, list):
        for v in d:
            yield from _fn_params(v)


@pytest.mark.parametrize("edit, needle", [
    (lambda f: f.update({"$fn": "os.system"}), "function 'os.system', which this tapeflow does not have"),
    (lambda f: f.update({"$fn": "tapeflow.strings:_lower"}), "does not have"),
    (lambda f: f.update({"$fn": 3}), "malformed serialized graph: function name 3"),
    (lambda f: f.update({"$fn": "lookup.static_hash_table", "state": [[1], [], 0]}),
     "the state of function 'lookup.static_hash_table'"),
    (lambda f: f.update({"$fn": "keras.text_vectorization", "state": {"$dict": []}}),
     "the state of function 'keras.text_vectorization': KeyError"),
    (lambda f: f.update({"$fn": "strings.splitter", "state": {"$tuple": ["unicode_split", {"$tuple": [
        "ebcdic", "strict", 0]}]}}), "the state of function 'strings.splitter': InvalidArgumentError"),
])
def test_a_file_naming_an_unregistered_function_is_refused(edit, needle):
    doc, t = _doc()
    fns = list(_fn_params(doc))
    assert [f["$fn"] for f in fns] == ["strings.lower"]
    edit(fns[0])
    with pytest.raises(SerializedGraphError, match=needle):
        S.graph_from_json(doc, t, "test")


def test_bytes_and_string_arrays_round_trip_exactly():
    w = S._Writer(S.Tables(), "t")
    r = S._Reader(S.Tables(), "t")
    raw = bytes(range(256))
    a = np.empty((2, 2), object)
    a[:] = [[b"", raw], [b"\xff\x00", "é".encode()]]
    for v in (raw, a, (b"x", [b"y"])):
        back = r.value(json.loads(json.dumps(w.value(v, None))))
        assert S._Cmp().value(back, v, "v") == ""
    b = a.copy()
    b[1, 1] = b"e"
    assert "arrays differ" in S._Cmp().value(b, a, "v")    # a changed string constant is seen
    with pytest.raises(SerializedGraphError, match="above U\\+00FF"):
        r.value({"$bytes": "\u0100"})


def test_string_constants_and_a_string_signature(tmp_path):
    class C(tf.Module):
        def __init__(self):
            super().__init__()
            self.suffix = tf.constant(["!", "?", "."])

        @tf.function(input_signature=[tf.TensorSpec([3], tf.string)])
        def f(self, x):
            return tf.strings.join([x, self.suffix, tf.constant(["1", "2", "\xff"])])
    m = C()
    x = tf.constant(["a", "b", "c"])
    want = [b"a!1", b"b?2", b"c.\xc3\xbf"]
    assert m.f(x).numpy().tolist() == want
    path = str(tmp_path / "c")
    tf.saved_model.save(m, path, signatures=m.f)
    loaded = tf.saved_model.load(path)
    assert loaded.f(x).numpy().tolist() == want
    assert loaded.signatures["serving_default"](x=x)["output_0"].numpy().tolist() == want


def test_a_keras_text_model_exports(tmp_path):
    # the TF2 workflow: TextVectorization in the model, Model.export, load, serve raw strings
    tf.keras.utils.set_random_seed(1)
    tv = tf.keras.layers.TextVectorization(max_tokens=20, output_sequence_length=5)
    tv.adapt(["the cat sat on the mat", "the dog ate my homework"])
    inp = tf.keras.Input(shape=(1,), dtype="string")
    x = tf.keras.layers.Embedding(20, 4)(tv(inp))
    out = tf.keras.layers.Dense(1)(tf.keras.layers.GlobalAveragePooling1D()(x))
    model = tf.keras.Model(inp, out)
    data = tf.constant([["the cat"], ["my dog ate"], ["zebra"]])
    want = model(data).numpy()
    path = str(tmp_path / "text")
    model.export(path, verbose=False)
    loaded = tf.saved_model.load(path)
    np.testing.assert_array_equal(loaded.serve(data).numpy(), want)
    assert not np.array_equal(want[0], want[2])    # the vocabulary matters (an OOV row differs)

