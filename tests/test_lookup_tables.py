"""tf.lookup (tapeflow/lookup.py) against TF 2.21's results (tests/data/lookup_tables_tf.json,
written by tests/tf_reference/make_lookup_tables_reference.py): static tables over every key/value
dtype pair, StaticVocabularyTable's OOV buckets, text-file initializers, mutable tables, errors,
eager and inside tapeflow.function, Dataset.map, and checkpoints of mutable tables."""
import json
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import errors

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "lookup_tables_tf.json")) as _f:
    TF = json.load(_f)

W, L = tf.lookup.TextFileIndex.WHOLE_LINE, tf.lookup.TextFileIndex.LINE_NUMBER
_CLASSES = {"InvalidArgumentError": errors.InvalidArgumentError, "NotFoundError": errors.NotFoundError,
            "FailedPreconditionError": errors.FailedPreconditionError, "TypeError": TypeError,
            "ValueError": ValueError, "AttributeError": AttributeError}


def dec(e):
    """A value the generator encoded -> a NumPy array."""
    if e["dtype"] == "string":
        a = np.empty(len(e["v"]), object)
        a[:] = [s.encode("latin-1") for s in e["v"]]
        return a.reshape(e["shape"])
    return np.asarray(e["v"], e["dtype"]).reshape(e["shape"])


def same(got, want):
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    if want.dtype == object:
        assert got.tolist() == want.tolist()
    else:
        np.testing.assert_array_equal(got, want)


def both(f, *args):
    """f's result eagerly and inside tapeflow.function (they must agree)."""
    eager = f(*args)
    compiled = tf.function(f)(*args)
    return eager, compiled


# -- StaticHashTable ---------------------------------------------------------------------------------
KEYS = {"string": ["a", "bb", "", "ü"], "int32": [3, -1, 7, 0], "int64": [3, -1, 7, 2**40]}
QUERY = {"string": ["bb", "zz", "", "ü", "a"], "int32": [7, 5, -1, 3, 0], "int64": [2**40, 5, -1, 3, 7]}
VALUES = {"int32": [1, 2, 3, 4], "int64": [10, -20, 30, 2**33], "float32": [0.5, -1.5, 2.25, 1e30],
          "float64": [0.1, -0.2, 1e-300, 3.0], "string": ["x", "yy", "", "z"], "bool": [True, False, True, False]}
DEFAULT = {"int32": -1, "int64": -1, "float32": -1.0, "float64": 0.25, "string": "UNK", "bool": False}


@pytest.mark.parametrize("pair", sorted(TF["static"]))
def test_static_hash_table_dtype_pairs(pair):
    kd, vd = pair.split("->")
    want = TF["static"][pair]
    init = tf.lookup.KeyValueTensorInitializer(tf.constant(KEYS[kd], getattr(tf, kd)),
                                               tf.constant(VALUES[vd], getattr(tf, vd)))
    if "raises" in want:     # TF 2.21: NotFoundError, no kernel for this pair
        with pytest.raises(errors.NotFoundError, match="no kernel"):
            tf.lookup.StaticHashTable(init, DEFAULT[vd])
        return
    t = tf.lookup.StaticHashTable(init, DEFAULT[vd])
    q = tf.constant(QUERY[kd], getattr(tf, kd))
    for got in both(t.lookup, q):
        same(got, dec(want["value"]))
    same(t[q], dec(want["value"]))


def test_static_table_api():
    init = tf.lookup.KeyValueTensorInitializer(tf.constant(["a", "b", "c"]), tf.constant([1, 2, 3], tf.int64))
    t = tf.lookup.StaticHashTable(init, default_value=-1)
    assert (t.key_dtype, t.value_dtype, t.name) == (tf.string, tf.int64, None)   # TF 2.21: name None eagerly
    assert (init.key_dtype, init.value_dtype) == (tf.string, tf.int64)
    same(t.size(), np.array(3, np.int64))
    same(t.default_value, np.array(-1, np.int64))
    k, v = t.export()
    assert sorted(zip(k.numpy().tolist(), v.numpy().tolist())) == [(b"a", 1), (b"b", 2), (b"c", 3)]
    # TF 2.21: the result has the keys' shape
    same(t.lookup(tf.constant([["a", "z"], ["c", "b"]])), np.array([[1, -1], [3, 2]], np.int64))
    same(t.lookup(tf.constant([], tf.string)), np.zeros(0, np.int64))
    # Python ints give TF's int32 values (TF 2.21: KeyValueTensorInitializer([..], [1, 2]) is int32)
    t32 = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [7]), -1)
    same(t32.lookup(tf.constant(["a", "q"])), np.array([7, -1], np.int32))
    # key_dtype/value_dtype convert Python lists and a range (TF's text tutorial passes one)
    tr = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["x", "y"], range(2), key_dtype=tf.string,
                                                                       value_dtype=tf.int64), -1)
    same(tr.lookup(tf.constant(["y"])), np.array([1], np.int64))


def test_static_lookup_of_ragged_and_sparse_keys():
    t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([1, 2], tf.int64)), -1)
    r = t.lookup(tf.ragged.constant([["a", "b"], ["zz"]]))
    assert r.to_list() == [[1, 2], [-1]]
    st = t.lookup(tf.sparse.SparseTensor([[0, 0], [1, 2]], tf.constant(["b", "q"]), [2, 3]))
    same(st.values, np.array([2, -1], np.int64))
    same(st.indices, np.array([[0, 0], [1, 2]], np.int64))


def test_static_lookup_traces_to_one_string_map_and_folds_known_keys():
    t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([1, 2], tf.int64)), -1)
    cf = tf.function(lambda x: t.lookup(x)).get_concrete_function(tf.constant(["a"]))
    text = str(cf.graph)
    assert text.count("string_map") == 1 and "table_lookup" in text
    # keys known while tracing: the lookup is a value of the trace (a static table never changes)
    f = tf.function(lambda: t.lookup(tf.constant(["b", "x"])))
    same(f(), np.array([2, -1], np.int64))
    assert "string_map" not in str(f.get_concrete_function().graph)


# -- StaticVocabularyTable ---------------------------------------------------------------------------
WORDS = np.empty(len(TF["vocab"]["words"]), object)
WORDS[:] = [w.encode("latin-1") for w in TF["vocab"]["words"]]


@pytest.mark.parametrize("n", [1, 3, 7, 1000])
def test_vocabulary_table_string_buckets(n):
    # TF 2.21: size + Fingerprint64(key) % n (the FarmHash of tf.strings.to_hash_bucket_fast)
    init = tf.lookup.KeyValueTensorInitializer(["emerson", "lake", "palmer"], tf.constant([0, 1, 2], tf.int64))
    t = tf.lookup.StaticVocabularyTable(init, n)
    same(t.size(), np.array(3 + n, np.int64))
    for got in both(t.lookup, tf.constant(WORDS)):
        same(got, dec(TF["vocab"]["tables"][f"string_{n}"]))


@pytest.mark.parametrize("n", [1, 5, 97])
def test_vocabulary_table_int64_buckets(n):
    # TF 2.21: an integer key hashes as its decimal text (as_string)
    init = tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20], tf.int64), tf.constant([0, 1], tf.int64))
    t = tf.lookup.StaticVocabularyTable(init, n)
    for got in both(t.lookup, tf.constant(TF["vocab"]["ints"], tf.int64)):
        same(got, dec(TF["vocab"]["tables"][f"int64_{n}"]))


def test_vocabulary_table_variants():
    tables = TF["vocab"]["tables"]
    iinit = tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20], tf.int64), tf.constant([0, 1], tf.int64))
    t32 = tf.lookup.StaticVocabularyTable(iinit, 5, lookup_key_dtype=tf.int32)
    assert t32.key_dtype == tf.int32
    for got in both(t32.lookup, tf.constant([10, 11, 12, -3, 20], tf.int32)):
        same(got, dec(tables["int32_lookup_5"]))
    none = tf.lookup.StaticVocabularyTable(None, 3)
    same(none.lookup(tf.constant(WORDS[:20])), dec(tables["no_init_3"]))
    same(none.size(), np.array(3, np.int64))
    # TF 2.21: a vocabulary id equal to -1 is taken for a missing key (its inner default)
    minus = tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([-1, 5], tf.int64))
    same(tf.lookup.StaticVocabularyTable(minus, 4).lookup(tf.constant(["a", "b", "c"])), dec(tables["minus_one_id"]))


def test_text_tutorial_vocab_layer():
    # TF's text tutorial (load_data/text.ipynb, cell 42): a Keras layer holding a vocabulary table
    class MyVocabTable(tf.keras.layers.Layer):
        def __init__(self, vocab):
            super().__init__()
            self.keys = [""] + vocab
            self.values = range(len(self.keys))
            self.init = tf.lookup.KeyValueTensorInitializer(self.keys, self.values, key_dtype=tf.string,
                                                            value_dtype=tf.int64)
            self.table = tf.lookup.StaticVocabularyTable(self.init, 1)

        def call(self, x):
            return self.table.lookup(x)

    layer = MyVocabTable(["a", "b", "c"])
    # TF 2.21: array([0, 1, 2, 3, 4, 4, 4, 4, 4, 4])
    same(layer(tf.constant([""] + list("abcdefghi"))), np.array([0, 1, 2, 3, 4, 4, 4, 4, 4, 4], np.int64))


# -- TextFileInitializer ------------------------------------------------------------------------------
TEXT_CASES = {
    "cols": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.string, 0, tf.int64, 1, delimiter=" "),
    "whole_line": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.int64, L),
    "vocab_size_2": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.int64, L, vocab_size=2),
    "vocab_size_5": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.int64, L, vocab_size=5),
    "offset_3": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.int64, L, value_index_offset=3),
    "int_keys": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.int64, L, tf.string, W),
    "bad_int": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.string, 0, tf.int64, 0, delimiter=" "),
    "few_columns": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.string, 0, tf.int64, 5, delimiter=" "),
    "dup": lambda P: tf.lookup.TextFileInitializer(P("dup"), tf.string, W, tf.int64, L),
    "blank": lambda P: tf.lookup.TextFileInitializer(P("blank"), tf.string, W, tf.int64, L),
    "nonl": lambda P: tf.lookup.TextFileInitializer(P("nonl"), tf.string, W, tf.int64, L),
    "crlf": lambda P: tf.lookup.TextFileInitializer(P("crlf"), tf.string, W, tf.int64, L),
    "float_values": lambda P: tf.lookup.TextFileInitializer(P("tab"), tf.string, 0, tf.float32, 1),
    "missing": lambda P: tf.lookup.TextFileInitializer(P("nope"), tf.string, W, tf.int64, L),
    "empty_name": lambda P: tf.lookup.TextFileInitializer("", tf.string, W, tf.int64, L),
    "key_line_int32": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.int32, L, tf.string, W),
    "value_line_string": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.string, L),
    "key_whole_float": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.float32, W, tf.int64, L),
    "key_index_-3": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.string, -3, tf.int64, L),
    "vocab_size_0": lambda P: tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.int64, L, vocab_size=0),
}


@pytest.mark.parametrize("name", sorted(TEXT_CASES))
def test_text_file_initializer(name, tmp_path):
    for k, v in TF["files"].items():
        (tmp_path / f"{k}.txt").write_bytes(v.encode("latin-1"))
    want = TF["text"][name]

    def build():
        init = TEXT_CASES[name](lambda k: str(tmp_path / f"{k}.txt"))
        default = "" if init.value_dtype == tf.string else (-1.0 if init.value_dtype == tf.float32 else -1)
        return tf.lookup.StaticHashTable(init, default)

    if "raises" in want:
        # TF's messages name its temporary directory: compare the text after it
        msg = want["msg"].split(".txt")[-1] if ".txt" in want["msg"] else want["msg"]
        with pytest.raises(_CLASSES[want["raises"]]) as info:
            build()
        assert msg in str(info.value), (str(info.value), msg)
        assert type(info.value).__name__ == want["raises"] or want["raises"] in ("TypeError", "ValueError")
        return
    k, v = build().export()
    order = np.argsort(k.numpy(), kind="stable")
    same(k.numpy()[order], dec(want["keys"]))
    same(v.numpy()[order], dec(want["values"]))


def test_text_file_vocabulary_table(tmp_path):
    (tmp_path / "vocab.txt").write_bytes(TF["files"]["vocab"].encode())
    init = tf.lookup.TextFileInitializer(str(tmp_path / "vocab.txt"), tf.string, W, tf.int64, L)
    t = tf.lookup.StaticVocabularyTable(init, 3)
    same(t.lookup(tf.constant(["lake 20", "king", "palmer 30", "tarkus"])), dec(TF["text"]["vocab_table"]))


# -- MutableHashTable ---------------------------------------------------------------------------------
def _mutable_sequence(m, mv, mi, call):
    out = {}
    call(m.insert, tf.constant(["a", "b", "c"]), tf.constant([7, 8, 9], tf.int64))
    out["after_insert"] = call(m.lookup, tf.constant(["a", "f", "c"]))
    call(m.insert, tf.constant(["x", "x"]), tf.constant([1, 2], tf.int64))
    out["dup_last_wins"] = call(m.lookup, tf.constant(["x"]))
    call(m.remove, tf.constant(["c", "zz"]))
    out["after_remove"] = call(m.lookup, tf.constant(["a", "b", "c"]))
    out["size"] = call(m.size)
    out["dyn_default"] = call(lambda k, d: m.lookup(k, dynamic_default_values=d), tf.constant(["a", "q"]),
                              tf.constant([100, 200], tf.int64))
    call(mv.insert, tf.constant(["a"]), tf.constant([[1.0, 2.0]]))
    out["vector"] = call(mv.lookup, tf.constant(["a", "b"]))
    call(mi.insert, tf.constant([5, -5], tf.int64), tf.constant(["five", "minus"]))
    out["int_to_string"] = call(mi.lookup, tf.constant([-5, 0, 5], tf.int64))
    return out


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_mutable_hash_table_sequence(mode):
    MH = tf.lookup.experimental.MutableHashTable
    m, mv, mi = MH(tf.string, tf.int64, -1), MH(tf.string, tf.float32, [0.0, -1.0]), MH(tf.int64, tf.string, "?")
    call = (lambda f, *a: f(*a)) if mode == "eager" else (lambda f, *a: tf.function(f)(*a))
    out = _mutable_sequence(m, mv, mi, call)
    for k, v in TF["mutable"].items():
        if k == "size":
            same(out[k], np.array(v, np.int64))
        else:
            same(out[k], dec(v))
    k, v = m.export()
    assert sorted(zip(k.numpy().tolist(), v.numpy().tolist())) == [(b"a", 7), (b"b", 8), (b"x", 2)]
    kv, vv = mv.export()
    assert vv.shape == (1, 2) and kv.numpy().tolist() == [b"a"]


def test_mutable_table_in_a_function_reads_its_contents_at_run_time():
    m = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)

    @tf.function
    def get():
        return m.lookup(tf.constant(["a"])), m.size()

    @tf.function
    def put(k, v):
        m.insert(k, v)     # no result: the py_call's effect keeps it in the graph
        return m.size()

    same(get()[0], np.array([-1], np.int64))
    same(put(tf.constant(["a", "b"]), tf.constant([3, 4], tf.int64)), np.array(2, np.int64))
    got, n = get()     # the same trace, the new contents (the known keys were not folded)
    same(got, np.array([3], np.int64))
    same(n, np.array(2, np.int64))
    assert "py_call" in str(put.get_concrete_function(tf.constant(["a"]), tf.constant([1], tf.int64)).graph)


def test_dense_hash_table():
    d = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1, empty_key=0, deleted_key=-1)
    d.insert(tf.constant([1, 2], tf.int64), tf.constant([5, 6], tf.int64))
    same(d.lookup(tf.constant([1, 3], tf.int64)), np.array([5, -1], np.int64))   # TF 2.21: [5, -1]
    d.erase(tf.constant([1], tf.int64))
    same(d.size(), np.array(1, np.int64))                                          # TF 2.21: 1


# -- errors -------------------------------------------------------------------------------------------
def _init(keys, values):
    return tf.lookup.KeyValueTensorInitializer(keys, values)


_S = lambda: tf.lookup.StaticHashTable(_init(["a", "b"], tf.constant([1, 2], tf.int64)), -1)  # noqa: E731
_M = lambda: tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)  # noqa: E731
_D = lambda: tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, 0, -1)  # noqa: E731
ERRORS = {
    "static_int_keys": lambda: _S().lookup(tf.constant([1, 2])),
    "static_dup_keys": lambda: tf.lookup.StaticHashTable(_init(["a", "a"], [1, 2]), -1),
    "static_dup_same": lambda: tf.lookup.StaticHashTable(_init(["a", "a"], [1, 1]), -1).size(),
    "static_len_mismatch": lambda: tf.lookup.StaticHashTable(_init(["a", "b"], [1, 2, 3]), -1),
    "static_empty": lambda: tf.lookup.StaticHashTable(_init(tf.constant([], tf.string), tf.constant([], tf.int64)),
                                                      -1),
    "static_default_float": lambda: tf.lookup.StaticHashTable(_init(["a"], [1]), -1.5),
    "static_default_vector": lambda: tf.lookup.StaticHashTable(_init(["a"], tf.constant([1], tf.int64)),
                                                               tf.constant([-1], tf.int64)),
    "static_float_keys": lambda: tf.lookup.StaticHashTable(_init([1.5], [3]), -1),
    "vocab_zero_buckets": lambda: tf.lookup.StaticVocabularyTable(_init(["a"], tf.constant([0], tf.int64)), 0),
    "vocab_int32_keys": lambda: tf.lookup.StaticVocabularyTable(_init(tf.constant([1]), tf.constant([0], tf.int64)),
                                                                2),
    "vocab_int32_values": lambda: tf.lookup.StaticVocabularyTable(_init(["a"], tf.constant([0])), 2),
    "vocab_lookup_int": lambda: tf.lookup.StaticVocabularyTable(_init(["a"], tf.constant([0], tf.int64)), 2).lookup(
        tf.constant([1], tf.int64)),
    "mutable_lookup_int": lambda: _M().lookup(tf.constant([1])),
    "mutable_insert_shapes": lambda: _M().insert(tf.constant(["a", "b"]), tf.constant([1], tf.int64)),
    "mutable_insert_float": lambda: _M().insert(tf.constant(["a"]), tf.constant([1.5])),
    "mutable_remove_int": lambda: _M().remove(tf.constant([1])),
    "mutable_float_keys": lambda: tf.lookup.experimental.MutableHashTable(tf.float32, tf.float32, 0.0),
    "dense_empty_key": lambda: _D().insert(tf.constant([0], tf.int64), tf.constant([5], tf.int64)),
    "dense_deleted_key": lambda: _D().insert(tf.constant([-1], tf.int64), tf.constant([5], tf.int64)),
}
#: the part of TF's message tapeflow gives (TF's own text, past its kernel's node name); a NotFoundError
#: of a missing kernel is tapeflow's own wording (TF's lists its registered kernels)
_NEEDLE = {"static_float_keys": "no kernel", "mutable_float_keys": "no kernel",
           "static_default_float": "-1.5", "mutable_lookup_int": "Tensor conversion requested dtype string",
           "mutable_insert_float": "Tensor conversion requested dtype int64"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_tf(name):
    want = TF["errors"][name]
    if "value" in want:
        same(ERRORS[name](), dec(want["value"]))
        return
    with pytest.raises(_CLASSES[want["raises"]]) as info:
        ERRORS[name]()
    if want["raises"] not in ("TypeError", "ValueError"):    # (tapeflow's OpErrors also derive from those)
        assert type(info.value).__name__ == want["raises"]
    needle = _NEEDLE.get(name) or want["msg"].split("}} ")[-1]
    assert needle in str(info.value), (str(info.value), needle)


def test_static_lookup_wrong_dtype_same_error_when_traced():
    t = _S()
    for f in (t.lookup, tf.function(lambda x: t.lookup(x))):
        with pytest.raises(TypeError, match="Dtype of argument `keys` must be <dtype: 'string'>"):
            f(tf.constant([1, 2]))


def test_initializer_inside_a_function_is_refused_clearly():
    @tf.function
    def f(k):
        return tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(k, tf.constant([1])), -1)
    with pytest.raises(ValueError, match="must be known values"):
        f(tf.constant(["a"]))


# -- tf.data and checkpoints ------------------------------------------------------------------------------
def test_dataset_map_with_tables():
    t = _S()
    ds = tf.data.Dataset.from_tensor_slices(["a", "b", "zz"]).map(t.lookup)
    assert [int(x) for x in ds.as_numpy_iterator()] == [1, 2, -1]     # TF 2.21: [1, 2, -1]
    assert ds.element_spec == tf.TensorSpec((), tf.int64)
    v = tf.lookup.StaticVocabularyTable(_init(["a"], tf.constant([0], tf.int64)), 2)
    batched = tf.data.Dataset.from_tensor_slices(["a", "q", "a", "r"]).batch(2).map(v.lookup)
    assert [x.tolist() for x in batched.as_numpy_iterator()] == [[0, int(v.lookup(tf.constant(["q"]))[0])],
                                                                  [0, int(v.lookup(tf.constant(["r"]))[0])]]


class _Holder(tf.Module):
    def __init__(self):
        super().__init__()
        self.t = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
        self.v = tf.Variable(1.0)
        self.s = _S()
        self.nock = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, 0.0, checkpoint=False)


def test_checkpoint_saves_mutable_tables_as_tf(tmp_path):
    h = _Holder()
    h.t.insert(tf.constant(["p", "q", "ü"]), tf.constant([1, 2, 3], tf.int64))
    h.nock.insert(tf.constant([1], tf.int64), tf.constant([0.5]))
    path = tf.train.Checkpoint(m=h).save(str(tmp_path / "ck"))
    # TF 2.21 (list_variables of the same objects): the table's keys and values under
    # m/t/.ATTRIBUTES/table-keys and table-values; the static table saves nothing
    keys = dict(tf.train.list_variables(path))
    assert keys["m/t/.ATTRIBUTES/table-keys"] == [3] and keys["m/t/.ATTRIBUTES/table-values"] == [3]
    assert not any("/s/" in k or "nock" in k for k in keys)
    r = tf.train.load_checkpoint(path)
    assert r.get_tensor("m/t/.ATTRIBUTES/table-keys").tolist() == [b"p", b"q", "ü".encode()]
    assert r.get_variable_to_dtype_map()["m/t/.ATTRIBUTES/table-keys"] == tf.string
    h2 = _Holder()
    h2.t.insert(tf.constant(["zz"]), tf.constant([5], tf.int64))
    tf.train.Checkpoint(m=h2).restore(path).assert_consumed()
    # TF 2.21: the restored entries replace the table's (zz is gone)
    k, v = h2.t.export()
    assert sorted(zip(k.numpy().tolist(), v.numpy().tolist())) == [(b"p", 1), (b"q", 2), ("ü".encode(), 3)]
    same(h2.t.lookup(tf.constant(["q", "zz"])), np.array([2, -1], np.int64))
    same(h2.nock.size(), np.array(0, np.int64))


def test_checkpoint_string_tensor_is_verified(tmp_path):
    h = _Holder()
    h.t.insert(tf.constant(["abc"]), tf.constant([1], tf.int64))
    path = tf.train.Checkpoint(m=h).write(str(tmp_path / "ck"))
    idx = json.loads((tmp_path / "ck.json").read_text())
    idx["tensors"]["m/t/.ATTRIBUTES/table-keys"]["strings"]["lengths"] = [2]
    (tmp_path / "ck.json").write_text(json.dumps(idx))
    with pytest.raises(tf.train.CheckpointError, match="strings"):
        tf.train.load_checkpoint(path)


# -- tables built from datasets: tf.data.experimental.DatasetInitializer, table_from_dataset,
#    index_table_from_dataset (tests/tf_reference/lookup_dataset_programs.py) ----------------------
import sys  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "tf_reference"))
import lookup_dataset_programs  # noqa: E402

_CLASSES["OutOfRangeError"] = errors.OutOfRangeError


@pytest.mark.parametrize("name", sorted(lookup_dataset_programs.PROGRAMS))
def test_tables_from_datasets_as_tf(name):
    want, prog = TF["datasets"][name], lookup_dataset_programs.PROGRAMS[name]
    if "value" in want:
        same(prog(tf), dec(want["value"]))
        return
    with pytest.raises(_CLASSES[want["raises"]]) as info:
        prog(tf)
    assert type(info.value).__name__ == want["raises"]
    assert want["msg"].split("}} ")[-1] in str(info.value)


def test_dataset_table_looks_up_inside_a_function_and_a_map():
    ds = tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(["a", "b", "c"]), tf.data.Dataset.range(3)))
    t = tf.data.experimental.table_from_dataset(ds, num_oov_buckets=2)
    eager, compiled = both(t.lookup, tf.constant(["a", "z", "q", "hello"]))
    same(eager, np.array([0, 4, 4, 3]))     # TF 2.21 (the "table_oov" case)
    same(compiled, np.array([0, 4, 4, 3]))
    ids = tf.data.Dataset.from_tensor_slices(["c", "hello"]).map(t.lookup)
    assert [int(x) for x in ids.as_numpy_iterator()] == [2, 3]


def test_table_from_dataset_refuses_other_hashers():
    class Strong:
        hasher = "stronghash"
    with pytest.raises(NotImplementedError, match="FastHashSpec"):
        tf.data.experimental.table_from_dataset(
            tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(["a"]), tf.data.Dataset.range(1))),
            num_oov_buckets=1, hasher_spec=Strong())
