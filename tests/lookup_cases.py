"""Keras 3's lookup and text layers (StringLookup, IntegerLookup, Hashing, HashedCrossing,
TextVectorization): expressions whose result must be TF 2.21's. ``run(tf)`` evaluates every case
with either framework; tests/tf_reference/make_lookup_reference.py records TF's results into
tests/data/lookup_tf.json and tests/test_lookup.py compares tapeflow's. ``L`` is tf.keras.layers,
``C`` tf.constant; each case is one expression (a layer built, maybe adapted, then called, or
its vocabulary/config read)."""

V = "['a', 'b', 'c', 'd']"
DATA = "[['a', 'b', 'c'], ['b', 'c', 'c'], ['c', 'e', 'a']]"

CASES = [
    # -- StringLookup: given vocabulary
    f"L.StringLookup(vocabulary={V})(C([['a', 'c', 'd'], ['d', 'z', 'b']]))",
    f"L.StringLookup(vocabulary={V})(C('c'))",
    f"L.StringLookup(vocabulary={V})(C([], tf.string))",
    f"L.StringLookup(vocabulary={V}, mask_token='')(C([['a', '', 'z']]))",
    f"L.StringLookup(vocabulary={V}, num_oov_indices=0)(C(['a', 'd']))",
    f"L.StringLookup(vocabulary={V}, num_oov_indices=0)(C(['a', 'z']))",
    f"L.StringLookup(vocabulary={V}, num_oov_indices=3)(C(['a', 'x', 'y', 'z', 'qq', 'd']))",
    f"L.StringLookup(vocabulary={V}, num_oov_indices=3, mask_token='')(C(['a', 'x', '', 'z', 'qq']))",
    f"L.StringLookup(vocabulary={V}).get_vocabulary()",
    f"L.StringLookup(vocabulary={V}, mask_token='[MASK]', num_oov_indices=2).get_vocabulary()",
    f"L.StringLookup(vocabulary={V}, mask_token='[MASK]', num_oov_indices=2).get_vocabulary(False)",
    f"L.StringLookup(vocabulary={V}, mask_token='[MASK]').vocabulary_size()",
    f"L.StringLookup(vocabulary={V}, mask_token='[MASK]', output_mode='multi_hot').get_vocabulary()",
    f"L.StringLookup(vocabulary=['[UNK]', 'a', 'b']).get_vocabulary()",
    f"L.StringLookup(vocabulary=['', '[UNK]', 'a', 'b'], mask_token='').get_vocabulary()",
    f"L.StringLookup(vocabulary={V}, output_mode='one_hot')(C(['a', 'z', 'd']))",
    f"L.StringLookup(vocabulary={V}, output_mode='one_hot')(C([['a'], ['d']]))",
    f"L.StringLookup(vocabulary={V}, output_mode='one_hot')(C('b'))",
    f"L.StringLookup(vocabulary={V}, output_mode='multi_hot')(C([['a', 'a', 'z'], ['d', 'c', 'd']]))",
    f"L.StringLookup(vocabulary={V}, output_mode='multi_hot')(C(['a', 'c']))",
    f"L.StringLookup(vocabulary={V}, output_mode='count')(C([['a', 'a', 'z'], ['d', 'c', 'd']]))",
    f"L.StringLookup(vocabulary={V}, output_mode='count', mask_token='')(C([['a', '', 'z'], ['', 'c', 'd']]))",
    f"L.StringLookup(vocabulary={V}, output_mode='multi_hot', max_tokens=8, pad_to_max_tokens=True)"
    "(C([['a', 'z'], ['d', 'd']]))",
    f"L.StringLookup(vocabulary={V}, output_mode='tf_idf', idf_weights=[0.5, 1.0, 1.5, 2.0])"
    "(C([['a', 'a', 'z'], ['d', 'c', 'd']]))",
    f"L.StringLookup(vocabulary={V}, invert=True)(C([[1, 0, 4], [2, 9, 3]]))",
    f"L.StringLookup(vocabulary={V}, invert=True, mask_token='[M]')(C([[1, 0, 5], [2, 9, 3]]))",
    f"L.StringLookup(vocabulary={V}, invert=True).get_vocabulary()",
    f"L.StringLookup(vocabulary=C({V}))(C(['b']))",
    f"L.StringLookup(vocabulary={V})([['a', 'c'], ['q', 'b']])",
    f"L.StringLookup(vocabulary={V})('d')",
    f"L.StringLookup(vocabulary={V})(np.array(['b', 'a']))",
    "L.IntegerLookup(vocabulary=[3, 4])([[3, 5]])",
    "L.Hashing(num_bins=3)(['A', 'B'])",
    "L.TextVectorization(vocabulary=['x', 'y'])(['y x', 'x'])",
    # -- StringLookup: adapted (frequency, then ties: the token sort order high to low)
    f"adapted(L.StringLookup(), {DATA}).get_vocabulary()",
    f"adapted(L.StringLookup(), {DATA})(C([['c', 'a', 'q']]))",
    f"adapted(L.StringLookup(max_tokens=3), {DATA}).get_vocabulary()",
    f"adapted(L.StringLookup(mask_token='', num_oov_indices=2), {DATA}).get_vocabulary()",
    "adapted(L.StringLookup(), ['x', 'y', 'z', 'y']).get_vocabulary()",
    "adapted(L.StringLookup(), ['x', '[UNK]', 'z', 'x']).get_vocabulary()",
    "adapted(L.StringLookup(), tf.data.Dataset.from_tensor_slices(['b', 'a', 'b', 'c']).batch(2))"
    ".get_vocabulary()",
    f"adapted(L.StringLookup(output_mode='tf_idf'), {DATA})(C([['a', 'c', 'c', 'q']]))",
    f"adapted(L.StringLookup(output_mode='count', pad_to_max_tokens=True, max_tokens=6), {DATA})"
    "(C([['a', 'c', 'c', 'q']]))",
    f"adapted(L.StringLookup(output_mode='multi_hot'), {DATA}).vocabulary_size()",
    # -- StringLookup: configs
    f"cfg(L.StringLookup(vocabulary={V}, mask_token='', name='sl'))",
    f"cfg(L.IntegerLookup(vocabulary=[5, 7], name='il'))",
    f"cfg(adapted(L.StringLookup(name='sa'), {DATA}))",
    f"L.StringLookup.from_config(L.StringLookup(vocabulary={V}).get_config())(C(['d', 'q']))",
    # -- StringLookup: errors
    "L.StringLookup(max_tokens=1)",
    "L.StringLookup(pad_to_max_tokens=True)",
    "L.StringLookup(num_oov_indices=-1)",
    "L.StringLookup(output_mode='bad')",
    "L.StringLookup(invert=True, output_mode='count')",
    "L.StringLookup(idf_weights=[1.0], vocabulary=['a'])",
    f"L.StringLookup(vocabulary={V}, output_mode='tf_idf')",
    "L.StringLookup(vocabulary=['a', 'b', 'a'])",
    "L.StringLookup(vocabulary=['a', '', 'b'], mask_token='')",
    "L.StringLookup(vocabulary=['a', '[UNK]'], invert=True)",
    "L.StringLookup(vocabulary=[])",
    f"L.StringLookup(vocabulary={V}, max_tokens=3)",
    "L.StringLookup(output_mode='multi_hot')(C(['a']))",
    f"adapted(L.StringLookup(vocabulary={V}), ['a'])",
    "L.StringLookup(vocabulary=['a'], salt=3, num_oov_indices=2)(C(['a', 'zz']))",
    # -- IntegerLookup
    "L.IntegerLookup(vocabulary=[12, 36, 1138, 42])(C([[12, 1138, 42], [42, 1000, 36]]))",
    "L.IntegerLookup(vocabulary=[12, 36, 1138, 42], mask_token=0)(C([[12, 0, 5]]))",
    "L.IntegerLookup(vocabulary=[12, 36], num_oov_indices=3)(C([12, 4, 5, 7, -1, 36]))",
    "L.IntegerLookup(vocabulary=[12, 36], num_oov_indices=3, oov_method='farmhash')(C([12, 4, 5, 7, -1]))",
    "L.IntegerLookup(vocabulary=[12, 36], num_oov_indices=3, mask_token=0)(C([12, 4, 0, 7, -1]))",
    "L.IntegerLookup(vocabulary=[12, 36, 1138, 42])(C([12, 42], tf.int32))",
    "L.IntegerLookup(vocabulary=[12, 36, 1138, 42]).get_vocabulary()",
    "L.IntegerLookup(vocabulary=[12, 36], mask_token=0).get_vocabulary()",
    "L.IntegerLookup(vocabulary=[12, 36, 1138, 42], output_mode='one_hot')(C([12, 99, 42]))",
    "L.IntegerLookup(vocabulary=[12, 36, 1138, 42], output_mode='multi_hot')(C([[12, 99], [42, 42]]))",
    "L.IntegerLookup(vocabulary=[12, 36, 1138, 42], output_mode='count')(C([[12, 12, 99], [42, 36, 42]]))",
    "L.IntegerLookup(vocabulary=[12, 36, 1138, 42], invert=True)(C([[1, 3, 0], [4, 2, 7]]))",
    "adapted(L.IntegerLookup(), [[12, 1138, 42], [42, 1000, 36], [36, 7, 42]]).get_vocabulary()",
    "adapted(L.IntegerLookup(max_tokens=3), [[12, 1138, 42], [42, 1000, 36], [36, 7, 42]]).get_vocabulary()",
    "adapted(L.IntegerLookup(), np.array([3, -1, 3, 5, -1, 9, 9])).get_vocabulary()",
    "adapted(L.IntegerLookup(mask_token=0), [1, 0, 0, 2, 2, 2]).get_vocabulary()",
    "adapted(L.IntegerLookup(output_mode='tf_idf'), [[1, 2], [2, 3], [2, 2]])(C([[1, 2, 2, 4]]))",
    "L.IntegerLookup(vocabulary=[1, 2], num_oov_indices=0)(C([1, 5]))",
    "L.IntegerLookup(max_tokens=0)",
    "L.IntegerLookup(vocabulary_dtype='int32')",
    "L.IntegerLookup(num_oov_indices=-2)",
    "L.IntegerLookup(vocabulary=[1], salt=3, num_oov_indices=2)",
    "L.IntegerLookup(vocabulary=[1, 2])(C(['a']))",
    # -- Hashing
    "L.Hashing(num_bins=3)(C([['A'], ['B'], ['C'], ['D'], ['E']]))",
    "L.Hashing(num_bins=3, mask_value='')(C([['A'], ['B'], [''], ['C'], ['D']]))",
    "L.Hashing(num_bins=3)(C([[1], [21], [311], [-4]]))",
    "L.Hashing(num_bins=4)(C([1.5, 2.0]))",
    "L.Hashing(num_bins=3, output_mode='one_hot')(C(['A', 'B', 'C']))",
    "L.Hashing(num_bins=3, output_mode='multi_hot')(C([['A', 'B'], ['C', 'C']]))",
    "L.Hashing(num_bins=3, output_mode='count')(C([['A', 'B'], ['C', 'C']]))",
    "L.Hashing(num_bins=3)(C('A'))",
    "L.Hashing(num_bins=3, salt=133)(C([['A'], ['B'], ['C']]))",
    "L.Hashing(num_bins=3, salt=[133, 137])(C([['A'], ['B'], ['C']]))",
    "L.Hashing(num_bins=1000)(C(['', 'x' * 100, 'tapeflow']))",
    "cfg(L.Hashing(num_bins=5, mask_value='', name='h'))",
    "L.Hashing(num_bins=0)",
    "L.Hashing(num_bins=None)",
    "L.Hashing(num_bins=3, output_mode='tf_idf')",
    "L.Hashing(num_bins=3, salt='x')",
    # -- HashedCrossing
    "L.HashedCrossing(num_bins=5)((C(['A', 'B', 'A', 'B', 'A']), C([101, 101, 101, 102, 102])))",
    "L.HashedCrossing(num_bins=5)((C('A'), C(101)))",
    "L.HashedCrossing(num_bins=5, output_mode='one_hot')((C(['A', 'B']), C([101, 101])))",
    "L.HashedCrossing(num_bins=7)((C([['x'], ['y']]), C([[1], [2]])))",
    "cfg(L.HashedCrossing(num_bins=5, name='hc'))",
    "L.HashedCrossing(num_bins=5)(C(['A']))",
    "L.HashedCrossing(num_bins=5)((C(['A']), C(['B']), C(['C'])))",
    "L.HashedCrossing(num_bins=5, output_mode='count')",
    # -- TextVectorization
    "adapted(L.TextVectorization(), ['The cat sat.', 'the dog SAT on the mat!', 'A cat'])"
    ".get_vocabulary()",
    "adapted(L.TextVectorization(), ['The cat sat.', 'the dog SAT on the mat!', 'A cat'])"
    "(C(['the cat sat on a hat', 'dog']))",
    "adapted(L.TextVectorization(output_sequence_length=4), ['The cat sat.', 'the dog sat on the mat'])"
    "(C(['the cat sat on the mat mat', 'dog']))",
    "adapted(L.TextVectorization(max_tokens=4), ['The cat sat.', 'the dog sat on the mat'])"
    ".get_vocabulary()",
    "adapted(L.TextVectorization(ngrams=2), ['a b c', 'a b'])(C(['a b c d']))",
    "adapted(L.TextVectorization(ngrams=2), ['a b c', 'a b']).get_vocabulary()",
    "adapted(L.TextVectorization(ngrams=(1, 3)), ['a b c']).get_vocabulary()",
    "adapted(L.TextVectorization(split='character'), ['abca', 'Bd']).get_vocabulary()",
    "adapted(L.TextVectorization(standardize='lower'), ['A, b.', 'a b']).get_vocabulary()",
    "adapted(L.TextVectorization(standardize='strip_punctuation'), ['A, b.', 'a b']).get_vocabulary()",
    "adapted(L.TextVectorization(standardize=None), ['A, b.', 'a b']).get_vocabulary()",
    "adapted(L.TextVectorization(output_mode='multi_hot'), ['a b c', 'a b', 'a'])(C(['a c z', 'b b']))",
    "adapted(L.TextVectorization(output_mode='count'), ['a b c', 'a b', 'a'])(C(['a c z z', 'b b']))",
    "adapted(L.TextVectorization(output_mode='tf_idf'), ['a b c', 'a b', 'a'])(C(['a c z z', 'b b']))",
    "adapted(L.TextVectorization(output_mode='multi_hot', max_tokens=6, pad_to_max_tokens=True),"
    " ['a b c', 'a b'])(C(['a c z']))",
    "L.TextVectorization(vocabulary=['x', 'y'])(C(['y x w', 'x']))",
    "L.TextVectorization(vocabulary=['x', 'y'])(C([['y x w'], ['x']]))",
    "L.TextVectorization(vocabulary=['x', 'y'], output_sequence_length=2)(C(['y x w', 'x']))",
    "L.TextVectorization(vocabulary=['x', 'y']).get_vocabulary()",
    "L.TextVectorization(vocabulary=['x', 'y']).vocabulary_size()",
    "L.TextVectorization(vocabulary=['x', 'y'], output_mode='multi_hot')(C(['y x w', 'x']))",
    "L.TextVectorization(vocabulary=['x', 'y'], split=None)(C([['y'], ['q']]))",
    "cfg(L.TextVectorization(max_tokens=10, output_sequence_length=3, name='tv'))",
    "adapted(L.TextVectorization(), tf.data.Dataset.from_tensor_slices(['b a', 'b c', 'b']).batch(2))"
    ".get_vocabulary()",
    "L.TextVectorization(output_mode='bad')",
    "L.TextVectorization(split='bad')",
    "L.TextVectorization(standardize='bad')",
    "L.TextVectorization(ngrams=0)",
    "L.TextVectorization(output_sequence_length=3, output_mode='count')",
    "L.TextVectorization(vocabulary=['x'], output_sequence_length=2)(C([['a b'], ['c d']]))",
    "L.TextVectorization(vocabulary=['x'])(C([[['a']]]))",
]


def _summary(r):
    import numpy as np
    if hasattr(r, "numpy") and hasattr(r, "dtype"):
        v = np.asarray(r.numpy())
        val = v.tolist()
        if v.dtype == object:
            val = _decode(val)
        elif v.dtype.kind == "f":
            val = np.round(v.astype(np.float64), 5).tolist()
        return {"dtype": r.dtype.name, "shape": list(v.shape), "value": val}
    if isinstance(r, (list, tuple)):
        return [_summary(x) for x in r]
    if isinstance(r, dict):
        return {k: _summary(v) for k, v in sorted(r.items())}
    if isinstance(r, (bytes, np.bytes_)):
        return r.decode()
    if isinstance(r, (np.integer,)):
        return int(r)
    if hasattr(r, "get_vocabulary") or hasattr(r, "get_config"):    # a layer (a constructor case)
        return "layer"
    return r


def _decode(v):
    if isinstance(v, list):
        return [_decode(x) for x in v]
    return v.decode() if isinstance(v, bytes) else v


def adapted(layer, data):
    layer.adapt(data)
    return layer


def cfg(layer):
    """The config minus the keys whose form is each framework's own (dtype policies)."""
    return {k: v for k, v in layer.get_config().items() if k not in ("dtype",)}


def run(tf):
    """{case: its summary (dtype/shape/value of a tensor, a list, a dict), or '!! Class: message'}."""
    import numpy as np  # noqa: F401  (the expressions may use it)
    env = dict(tf=tf, np=np, C=tf.constant, L=tf.keras.layers, adapted=adapted, cfg=cfg)
    out = {}
    for c in CASES:
        try:
            out[c] = _summary(eval(c, env))
        except Exception as e:  # noqa: BLE001 - the class is the expected outcome
            out[c] = "!! " + type(e).__name__ + ": " + str(e).split("\n")[0][:300]
    return out
