"""Keras 3's lookup and text layers (wave 19, lookup19): StringLookup, IntegerLookup, Hashing,
HashedCrossing, TextVectorization. Values, dtypes, vocabularies, configs and errors are TF
2.21's, recorded by tests/tf_reference/make_lookup_reference.py from tests/lookup_cases.py into
tests/data/lookup_tf.json; compiled (tapeflow.function) calls give the eager results and errors."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

L = tf.keras.layers


def _same(got, want):
    """A case's outcome as TF's: values/dtypes/shapes (floats to 1e-4), lists, configs; for an
    error the class, and the message's start unless TF's is Keras' wrapper line ('Exception
    encountered when calling ...', whose cause tapeflow's message names instead)."""
    if isinstance(want, str) and want.startswith("!! "):
        if not (isinstance(got, str) and got.startswith("!! ")):
            return False
        wc, wm = want[3:].split(": ", 1)
        gc, gm = got[3:].split(": ", 1)
        # a layer's auto-name counts the layers made before it in the process, which depends on
        # the tests a pytest-xdist worker ran first: compare 'string_lookup_50' as 'string_lookup_N'
        wm, gm = (re.sub(r"_\d+'", "_N'", m) for m in (wm, gm))
        return wc == gc and (wm.startswith("Exception encountered") or gm[:60] == wm[:60])
    if isinstance(want, dict) and "value" in want and want.get("dtype") == "float32":
        return isinstance(got, dict) and got["dtype"] == "float32" and got["shape"] == want["shape"] \
            and np.allclose(got["value"], want["value"], atol=1e-4)
    return got == want


def test_layers_match_tf():
    import lookup_cases
    want = json.loads((Path(__file__).parent / "data" / "lookup_tf.json").read_text())
    got = lookup_cases.run(tf)
    assert set(got) == set(want)
    bad = {c: (got[c], want[c]) for c in want if not _same(got[c], want[c])}
    assert not bad, bad


def _vocab_layer(**kw):
    return L.StringLookup(vocabulary=["a", "b", "c", "d"], **kw)


@pytest.mark.parametrize("backend", [None, "python", "interpreter"])
@pytest.mark.parametrize("kw", [{}, {"num_oov_indices": 3, "mask_token": ""}, {"output_mode": "count"},
                                {"output_mode": "multi_hot"}, {"output_mode": "one_hot"}])
def test_string_lookup_compiled_equals_eager(backend, kw):
    layer = _vocab_layer(**kw)
    f = tf.function(layer.__call__) if backend is None else tf.function(layer.__call__, backend=backend)
    for x in (tf.constant(["a", "", "zz", "d"]), tf.constant(["c", "q", "b", "b"])):
        want = layer(x)
        got = f(x)
        assert got.dtype == want.dtype and np.array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("backend", [None, "python"])
def test_invert_and_integer_lookup_compiled(backend):
    inv = _vocab_layer(invert=True)
    il = L.IntegerLookup(vocabulary=[12, 36, 1138], num_oov_indices=2)
    for layer, x in ((inv, tf.constant([[1, 0, 4], [2, 9, 3]])), (il, tf.constant([12, 5, 36, -7]))):
        f = tf.function(layer.__call__) if backend is None else tf.function(layer.__call__, backend=backend)
        want, got = layer(x), f(x)
        assert got.dtype == want.dtype and got.numpy().tolist() == want.numpy().tolist()


def test_oov_error_same_eager_and_compiled():
    layer = _vocab_layer(num_oov_indices=0)
    x = tf.constant(["a", "zz"])
    with pytest.raises(InvalidArgumentError, match="num_oov_indices=0.*'zz'"):
        layer(x)
    with pytest.raises(InvalidArgumentError, match="num_oov_indices=0.*'zz'"):
        tf.function(layer.__call__)(x)


def test_adapt_on_tapeflow_dataset_and_ragged():
    ds = tf.data.Dataset.from_tensor_slices(["b", "a", "b", "c", "c", "c"]).batch(4)
    layer = L.StringLookup()
    layer.adapt(ds)
    assert layer.get_vocabulary() == ["[UNK]", "c", "b", "a"]
    rt = tf.ragged.constant([["x", "y"], ["y"]])
    layer = L.StringLookup(output_mode="tf_idf")
    layer.adapt(rt)
    assert layer.get_vocabulary() == ["[UNK]", "y", "x"]
    # idf = log(1 + docs / (1 + doc_count)), the OOV slot the mean: y in 2 docs, x in 1
    idf = np.log(1 + 2 / np.array([3.0, 2.0]))
    np.testing.assert_allclose(layer.idf_weights, [idf.mean(), *idf], rtol=1e-6)


def test_config_round_trip():
    for layer in (_vocab_layer(mask_token="", num_oov_indices=2, output_mode="count"),
                  L.IntegerLookup(vocabulary=[3, 9], invert=True),
                  L.StringLookup(vocabulary=["a", "b"], output_mode="tf_idf", idf_weights=[0.5, 2.0])):
        cfg = layer.get_config()
        new = type(layer).from_config(json.loads(json.dumps(cfg)))
        assert new.get_config() == cfg and new.get_vocabulary() == layer.get_vocabulary()


def test_set_vocabulary_replaces_and_refuses_files():
    layer = L.StringLookup()
    layer.set_vocabulary(["p", "q"])
    assert layer(tf.constant(["q", "p", "r"])).numpy().tolist() == [2, 1, 0]
    with pytest.raises(ValueError, match="vocabulary file"):
        layer.set_vocabulary("/nonexistent/vocab.txt")


def test_text_vectorization_callables_ragged_and_config():
    def std(x):
        return tf.strings.regex_replace(tf.strings.lower(x), "[0-9]", "")

    def split(x):
        return tf.strings.split(x, sep="-")

    layer = L.TextVectorization(standardize=std, split=split, ragged=True)
    layer.adapt(["A1-b-b", "c-A"])
    assert layer.get_vocabulary() == ["", "[UNK]", "b", "a", "c"]
    out = layer(tf.constant(["b-a-q", "c"]))
    assert isinstance(out, tf.RaggedTensor) and out.to_list() == [[2, 3, 1], [4]]
    tv = L.TextVectorization(max_tokens=8, ngrams=2, output_sequence_length=5)
    tv.adapt(["x y z", "x y"])
    cfg = json.loads(json.dumps(tv.get_config()))
    new = L.TextVectorization.from_config(cfg)
    # an adapted vocabulary is not in the config (Keras keeps it as an asset): set it again
    new.set_vocabulary(tv.get_vocabulary())
    x = tf.constant(["x y z q", "z"])
    assert new(x).numpy().tolist() == tv(x).numpy().tolist()


@pytest.mark.parametrize("backend", [None, "python", "interpreter"])
@pytest.mark.parametrize("kw", [{}, {"output_sequence_length": 3}, {"output_mode": "multi_hot"},
                                {"output_mode": "tf_idf"}, {"output_mode": "one_hot"}, {"split": None}])
def test_text_vectorization_in_function(backend, kw):
    layer = L.TextVectorization(**kw)
    layer.adapt(["the cat sat", "the dog", "a cat"])
    f = tf.function(layer.__call__) if backend is None else tf.function(layer.__call__, backend=backend)
    for x in (tf.constant([["the cat sat on"], ["dog"]]), tf.constant(["a b c d e", "cat", ""])):
        if kw.get("split", "whitespace") is None and len(x.shape) == 1:
            x = tf.reshape(x, [-1, 1])
        want, got = layer(x), f(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    # the traced result's static shape is the declared one
    shapes = []

    def g(x):
        y = layer(x)
        shapes.append(tuple(y.shape))
        return y

    tf.function(g)(tf.constant([["the cat"], ["dog"]]))
    depth = layer.vocabulary_size()
    assert shapes == [{"output_sequence_length": (2, 3), "multi_hot": (2, depth), "tf_idf": (2, depth),
                       "one_hot": (2, None, depth), "split": (2, 1)}.get(
        next(iter(kw.values())) if "output_mode" in kw else next(iter(kw), None), (2, None))]
    # the trace holds no vocabulary: a new one is used by the next call ('int' mode: the
    # encodings' vocabulary size is frozen once called, as Keras')
    if not kw or "output_sequence_length" in kw:
        layer.adapt(["dog dog cat"])
        x = tf.constant([["dog cat"], ["zz"]])
        np.testing.assert_array_equal(f(x).numpy(), layer(x).numpy())


def test_text_vectorization_in_function_refusals():
    layer = L.TextVectorization(vocabulary=["x"], ragged=True)
    with pytest.raises(NotImplementedError, match="ragged=True"):
        tf.function(layer.__call__)(tf.constant(["x y"]))
    layer = L.TextVectorization(vocabulary=["x"])
    with pytest.raises(ValueError, match="last shape dimension must be 1"):
        tf.function(layer.__call__)(tf.constant([["x", "y"]]))


@pytest.mark.parametrize("backend", [None, "python"])
def test_hashing_compiled_equals_eager(backend):
    for layer, x in ((L.Hashing(num_bins=7, mask_value=""), tf.constant([["a"], [""], ["zz"]])),
                     (L.Hashing(num_bins=5, salt=[1, 2], output_mode="count"), tf.constant([[3, 4], [5, 5]])),
                     (L.HashedCrossing(num_bins=9), (tf.constant(["a", "b"]), tf.constant([1, -2])))):
        f = tf.function(layer.__call__) if backend is None else tf.function(layer.__call__, backend=backend)
        want, got = layer(x), f(x)
        assert got.dtype == want.dtype and got.numpy().tolist() == want.numpy().tolist()


def test_siphash_vectors():
    from tapeflow.util.siphash import siphash24
    # the SipHash paper's test vector: key 00..0f, message 00..0e
    k0 = int.from_bytes(bytes(range(8)), "little")
    k1 = int.from_bytes(bytes(range(8, 16)), "little")
    assert siphash24(k0, k1, bytes(range(15))) == 0xA129CA6149BE45E5
    # TF 2.21: tf.strings.to_hash_bucket_strong(s, 2**31 - 1, key=[133, 137])
    assert siphash24(133, 137, b"A") % (2 ** 31 - 1) == 719117595
    assert siphash24(133, 133, b"") % (2 ** 31 - 1) == 1817338569


@pytest.mark.parametrize("kw", [{}, {"num_oov_indices": 3, "mask_token": ""}, {"num_oov_indices": 0},
                                {"mask_token": "[M]", "output_mode": "count"}])
def test_whole_list_lookup_equals_per_element(kw):
    # string_map's map_list path (what every call takes) against the per-element function
    table = _vocab_layer(**kw)._table()
    items = [b"a", b"d", b"c"] + ([] if kw.get("num_oov_indices") == 0 else [b"", b"[M]", b"zz", b"q", b"x"])
    assert table.map_list(items) == [table(s) for s in items]
    il = L.IntegerLookup(vocabulary=[12, 36], num_oov_indices=3, mask_token=0)._table()
    assert il.map_list([12, 0, 5, -7, 36]) == [il(v) for v in [12, 0, 5, -7, 36]]


def test_text_model_predict_compiles():
    # the text tutorials' export model: TextVectorization in front of a model, predict compiled
    tv = L.TextVectorization(max_tokens=20, output_sequence_length=5)
    tv.adapt(["good movie", "bad movie", "great film"])
    inner = tf.keras.Sequential([L.Embedding(20, 4), L.GlobalAveragePooling1D(), L.Dense(1)])
    export = tf.keras.Sequential([tv, inner, L.Activation("sigmoid")])
    x = np.array(["good film", "bad", "great great movie"])
    got = export.predict(x, verbose=0)
    want = tf.sigmoid(inner(tv(tf.constant(x)))).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
