"""TF 2.21's tf.lookup results for tests/test_lookup_tables.py (tbl20): lookups over every
key/value dtype pair, StaticVocabularyTable's OOV buckets for strings and int64 keys,
TextFileInitializer's tables and errors, MutableHashTable sequences, and the errors of bad
arguments (class + message). Run with the peers venv:
    python tests/tf_reference/make_lookup_tables_reference.py
It writes tests/data/lookup_tables_tf.json."""
import json
import os
import random
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = {}


def enc(a):
    a = np.asarray(a)
    if a.dtype == object:
        return {"dtype": "string", "shape": list(a.shape), "v": [x.decode("latin-1") for x in a.reshape(-1)]}
    return {"dtype": a.dtype.name, "shape": list(a.shape), "v": a.reshape(-1).tolist()}


def err(f):
    try:
        r = f()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "msg": str(e).split(" [Op:")[0].split("{{function_node")[-1][-300:]}
    return {"value": enc(r.numpy() if hasattr(r, "numpy") else r)}


# -- StaticHashTable over the dtype pairs TF registers -----------------------------------------------
KEYS = {"string": ["a", "bb", "", "ü"], "int32": [3, -1, 7, 0], "int64": [3, -1, 7, 2**40]}
QUERY = {"string": ["bb", "zz", "", "ü", "a"], "int32": [7, 5, -1, 3, 0], "int64": [2**40, 5, -1, 3, 7]}
VALUES = {"int32": [1, 2, 3, 4], "int64": [10, -20, 30, 2**33], "float32": [0.5, -1.5, 2.25, 1e30],
          "float64": [0.1, -0.2, 1e-300, 3.0], "string": ["x", "yy", "", "z"], "bool": [True, False, True, False]}
DEFAULT = {"int32": -1, "int64": -1, "float32": -1.0, "float64": 0.25, "string": "UNK", "bool": False}
static = {}
for kd, keys in KEYS.items():
    for vd, vals in VALUES.items():
        name = f"{kd}->{vd}"
        init = tf.lookup.KeyValueTensorInitializer(tf.constant(keys, getattr(tf, kd)), tf.constant(vals, getattr(tf, vd)))
        q = tf.constant(QUERY[kd], getattr(tf, kd))
        static[name] = err(lambda: tf.lookup.StaticHashTable(init, DEFAULT[vd]).lookup(q))
OUT["static"] = static

# -- StaticVocabularyTable buckets -----------------------------------------------------------------
rng = random.Random(20)
words = ["", "a", "emerson", "lake", "palmer", "king", "crimson", "ü", "日本", "\x00", "a" * 100]
words += ["".join(rng.choice("abcxyz0123 ") for _ in range(rng.randrange(1, 12))) for _ in range(80)]
vocab = ["emerson", "lake", "palmer"]
init = tf.lookup.KeyValueTensorInitializer(vocab, tf.constant([0, 1, 2], tf.int64))
vt = {}
for n in (1, 3, 7, 1000):
    vt[f"string_{n}"] = enc(tf.lookup.StaticVocabularyTable(init, n).lookup(tf.constant(words)).numpy())
ints = [0, 1, -1, 10, 20, 2**31, -2**31, 2**63 - 1, -2**63, 123456789] + [rng.randrange(-10**12, 10**12) for _ in range(60)]
iinit = tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20], tf.int64), tf.constant([0, 1], tf.int64))
for n in (1, 5, 97):
    vt[f"int64_{n}"] = enc(tf.lookup.StaticVocabularyTable(iinit, n).lookup(tf.constant(ints, tf.int64)).numpy())
vt["int32_lookup_5"] = enc(tf.lookup.StaticVocabularyTable(iinit, 5, lookup_key_dtype=tf.int32).lookup(
    tf.constant([10, 11, 12, -3, 20], tf.int32)).numpy())
vt["no_init_3"] = enc(tf.lookup.StaticVocabularyTable(None, 3).lookup(tf.constant(words[:20])).numpy())
# a vocabulary id of -1 is OOV (TF compares with the inner table's default)
minus = tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([-1, 5], tf.int64))
vt["minus_one_id"] = enc(tf.lookup.StaticVocabularyTable(minus, 4).lookup(tf.constant(["a", "b", "c"])).numpy())
OUT["vocab"] = {"words": [w.encode().decode("latin-1") for w in words], "ints": ints, "tables": vt}

# -- TextFileInitializer -----------------------------------------------------------------------------
d = tempfile.mkdtemp()
FILES = {"vocab": b"emerson 10\nlake 20\npalmer 30\n", "dup": b"a\nb\na\n", "blank": b"a\n\nb\n", "nonl": b"a\nb",
         "crlf": b"a\r\nb\r\n", "tab": b"a\t1.5\nb\t2\n"}
for k, v in FILES.items():
    Path(d, k + ".txt").write_bytes(v)
P = lambda k: os.path.join(d, k + ".txt")  # noqa: E731
W, L = tf.lookup.TextFileIndex.WHOLE_LINE, tf.lookup.TextFileIndex.LINE_NUMBER


def exported(init, default):
    t = tf.lookup.StaticHashTable(init, default)
    k, v = t.export()
    order = np.argsort(k.numpy(), kind="stable")
    return {"keys": enc(k.numpy()[order]), "values": enc(v.numpy()[order])}


def text(label, f):
    try:
        OUT["text"][label] = f()
    except Exception as e:  # noqa: BLE001
        OUT["text"][label] = {"raises": type(e).__name__, "msg": str(e).split(" [Op:")[0].split("}}")[-1].strip()}


OUT["files"] = {k: v.decode("latin-1") for k, v in FILES.items()}
OUT["text"] = {}
text("cols", lambda: exported(tf.lookup.TextFileInitializer(P("vocab"), tf.string, 0, tf.int64, 1, delimiter=" "), -1))
text("whole_line", lambda: exported(tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.int64, L), -1))
text("vocab_size_2", lambda: exported(tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.int64, L,
                                                                     vocab_size=2), -1))
text("vocab_size_5", lambda: exported(tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.int64, L,
                                                                     vocab_size=5), -1))
text("offset_3", lambda: exported(tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.int64, L,
                                                                 value_index_offset=3), -1))
text("int_keys", lambda: exported(tf.lookup.TextFileInitializer(P("vocab"), tf.int64, L, tf.string, W), ""))
text("bad_int", lambda: exported(tf.lookup.TextFileInitializer(P("vocab"), tf.string, 0, tf.int64, 0,
                                                               delimiter=" "), -1))
text("few_columns", lambda: exported(tf.lookup.TextFileInitializer(P("vocab"), tf.string, 0, tf.int64, 5,
                                                                   delimiter=" "), -1))
text("dup", lambda: exported(tf.lookup.TextFileInitializer(P("dup"), tf.string, W, tf.int64, L), -1))
text("blank", lambda: exported(tf.lookup.TextFileInitializer(P("blank"), tf.string, W, tf.int64, L), -1))
text("nonl", lambda: exported(tf.lookup.TextFileInitializer(P("nonl"), tf.string, W, tf.int64, L), -1))
text("crlf", lambda: exported(tf.lookup.TextFileInitializer(P("crlf"), tf.string, W, tf.int64, L), -1))
text("float_values", lambda: exported(tf.lookup.TextFileInitializer(P("tab"), tf.string, 0, tf.float32, 1), -1.0))
text("vocab_table", lambda: enc(tf.lookup.StaticVocabularyTable(
    tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.int64, L), 3).lookup(
    tf.constant(["lake 20", "king", "palmer 30", "tarkus"])).numpy()))
text("missing", lambda: exported(tf.lookup.TextFileInitializer(os.path.join(d, "nope.txt"), tf.string, W,
                                                               tf.int64, L), -1))
text("empty_name", lambda: tf.lookup.TextFileInitializer("", tf.string, W, tf.int64, L))
text("key_line_int32", lambda: tf.lookup.TextFileInitializer(P("vocab"), tf.int32, L, tf.string, W))
text("value_line_string", lambda: tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.string, L))
text("key_whole_float", lambda: tf.lookup.TextFileInitializer(P("vocab"), tf.float32, W, tf.int64, L))
text("key_index_-3", lambda: tf.lookup.TextFileInitializer(P("vocab"), tf.string, -3, tf.int64, L))
text("vocab_size_0", lambda: tf.lookup.TextFileInitializer(P("vocab"), tf.string, W, tf.int64, L, vocab_size=0))

# -- MutableHashTable ---------------------------------------------------------------------------------
m = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
seq = {}
m.insert(tf.constant(["a", "b", "c"]), tf.constant([7, 8, 9], tf.int64))
seq["after_insert"] = enc(m.lookup(tf.constant(["a", "f", "c"])).numpy())
m.insert(tf.constant(["x", "x"]), tf.constant([1, 2], tf.int64))
seq["dup_last_wins"] = enc(m.lookup(tf.constant(["x"])).numpy())
m.remove(tf.constant(["c", "zz"]))
seq["after_remove"] = enc(m.lookup(tf.constant(["a", "b", "c"])).numpy())
seq["size"] = int(m.size().numpy())
seq["dyn_default"] = enc(m.lookup(tf.constant(["a", "q"]), dynamic_default_values=tf.constant([100, 200], tf.int64)).numpy())
mv = tf.lookup.experimental.MutableHashTable(tf.string, tf.float32, [0.0, -1.0])
mv.insert(["a"], [[1.0, 2.0]])
seq["vector"] = enc(mv.lookup(["a", "b"]).numpy())
mi = tf.lookup.experimental.MutableHashTable(tf.int64, tf.string, "?")
mi.insert(tf.constant([5, -5], tf.int64), ["five", "minus"])
seq["int_to_string"] = enc(mi.lookup(tf.constant([-5, 0, 5], tf.int64)).numpy())
OUT["mutable"] = seq

# -- errors of bad arguments ----------------------------------------------------------------------------
S = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([1, 2], tf.int64)), -1)
E = {}
E["static_int_keys"] = err(lambda: S.lookup(tf.constant([1, 2])))
E["static_dup_keys"] = err(lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "a"], [1, 2]), -1))
E["static_dup_same"] = err(lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "a"], [1, 1]), -1).size())
E["static_len_mismatch"] = err(lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2, 3]), -1))
E["static_empty"] = err(lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
    tf.constant([], tf.string), tf.constant([], tf.int64)), -1))
E["static_default_float"] = err(lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), -1.5))
E["static_default_vector"] = err(lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
    ["a"], tf.constant([1], tf.int64)), tf.constant([-1], tf.int64)))
E["static_float_keys"] = err(lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer([1.5], [3]), -1))
E["vocab_zero_buckets"] = err(lambda: tf.lookup.StaticVocabularyTable(S._initializer, 0))
E["vocab_int32_keys"] = err(lambda: tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
    tf.constant([1]), tf.constant([0], tf.int64)), 2))
E["vocab_int32_values"] = err(lambda: tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
    ["a"], tf.constant([0])), 2))
E["vocab_lookup_int"] = err(lambda: tf.lookup.StaticVocabularyTable(S._initializer, 2).lookup(tf.constant([1], tf.int64)))
E["mutable_lookup_int"] = err(lambda: m.lookup(tf.constant([1])))
E["mutable_insert_shapes"] = err(lambda: m.insert(tf.constant(["a", "b"]), tf.constant([1], tf.int64)))
E["mutable_insert_float"] = err(lambda: m.insert(tf.constant(["a"]), tf.constant([1.5])))
E["mutable_remove_int"] = err(lambda: m.remove(tf.constant([1])))
E["mutable_float_keys"] = err(lambda: tf.lookup.experimental.MutableHashTable(tf.float32, tf.float32, 0.0))
E["dense_empty_key"] = err(lambda: tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, 0, -1).insert(
    tf.constant([0], tf.int64), tf.constant([5], tf.int64)))
E["dense_deleted_key"] = err(lambda: tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, 0, -1).insert(
    tf.constant([-1], tf.int64), tf.constant([5], tf.int64)))
OUT["errors"] = E

# -- tables built from datasets (tf.data.experimental): lookup_dataset_programs.py ---------------------
import sys  # noqa: E402
sys.path.insert(0, str(HERE))
import lookup_dataset_programs  # noqa: E402
OUT["datasets"] = {name: err(lambda: f(tf)) for name, f in lookup_dataset_programs.PROGRAMS.items()}

(HERE.parent / "data" / "lookup_tables_tf.json").write_text(json.dumps(OUT, indent=1, ensure_ascii=True))
print("wrote", HERE.parent / "data" / "lookup_tables_tf.json")
