"""Wave 22 (api22): tf.sparse.bincount/mask/cross/cross_hashed/sampled_addmm: values, dtypes, shapes
and errors against TF 2.21's (the literals below were printed by TF 2.21 CPU on the same inputs),
eager == inside tapeflow.function, and gradients where the op has them."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

from composite_results import eager_equals_compiled as _both, sparse_parts as _sp


SP = tf.SparseTensor([[0, 0], [0, 2], [1, 1], [2, 3]], [1, 3, 3, 7], [4, 5])


# -- tf.sparse.bincount -------------------------------------------------------------------------------

@pytest.mark.parametrize("make,kw,want", [
    # TF 2.21: tf.sparse.bincount(...) -> (indices, values, values dtype, dense_shape)
    (lambda: SP, {}, ([[1], [3], [7]], [1, 2, 1], "int32", [8])),
    (lambda: SP, dict(axis=-1), ([[0, 1], [0, 3], [1, 3], [2, 7]], [1, 1, 1, 1], "int32", [4, 8])),
    (lambda: SP, dict(axis=-1, maxlength=4, minlength=2), ([[0, 1], [0, 3], [1, 3]], [1, 1, 1], "int32", [4, 4])),
    (lambda: tf.SparseTensor([[0, 0, 0], [1, 0, 3]], [4, 4], [2, 2, 5]), dict(axis=-1),
     ([[0, 4], [1, 4]], [1, 1], "int32", [2, 5])),
    (lambda: tf.SparseTensor([[1, 0], [0, 0]], [1, 2], [2, 5]), dict(axis=-1), ([[0, 2], [1, 1]], [1, 1], "int32", [2, 3])),
    (lambda: tf.constant([[1, 2, 2], [5, 0, 1]]), {}, ([[0], [1], [2], [5]], [1, 2, 2, 1], "int32", [6])),
    (lambda: tf.constant([[1, 2, 2], [5, 0, 1]]), dict(axis=-1),
     ([[0, 1], [0, 2], [1, 0], [1, 1], [1, 5]], [1, 2, 1, 1, 1], "int32", [2, 6])),
    (lambda: tf.constant([1, 2, 2, 5]), dict(minlength=10), ([[1], [2], [5]], [1, 2, 1], "int32", [10])),
    (lambda: tf.constant([1, 2, 2, 5]), dict(maxlength=3), ([[1], [2]], [1, 2], "int32", [3])),
    (lambda: tf.constant([1, 2, 2, 5]), dict(minlength=6, maxlength=3), ([[1], [2]], [1, 2], "int32", [3])),
    (lambda: tf.constant([1, 2]), dict(maxlength=10), ([[1], [2]], [1, 1], "int32", [10])),
    (lambda: tf.constant([1, 2, 3, 3]), dict(maxlength=3), ([[1], [2]], [1, 1], "int32", [3])),
    (lambda: tf.constant([1, 2]), dict(maxlength=0), ([], [], "int32", [0])),
    (lambda: tf.constant([1, 2, 2, 5]), dict(minlength=-1), ([[1], [2], [5]], [1, 2, 1], "int32", [6])),
    (lambda: tf.constant([1, 2, 2, 5]), dict(binary_output=True), ([[1], [2], [5]], [1, 1, 1], "int32", [6])),
    (lambda: tf.constant([1, 2], tf.int64), {}, ([[1], [2]], [1, 1], "int64", [3])),
    (lambda: tf.constant([], tf.int32), {}, ([], [], "int32", [1])),
    (lambda: tf.zeros([3, 0], tf.int32), dict(axis=-1), ([], [], "int32", [3, 1])),
    (lambda: tf.constant(3), {}, ([[3]], [1], "int32", [4])),
    (lambda: tf.zeros([2, 2, 2], tf.int32), {}, ([[0]], [8], "int32", [1])),
    (lambda: tf.ragged.constant([[1, 2, 2], [], [5]]), {}, ([[1], [2], [5]], [1, 2, 1], "int32", [6])),
    (lambda: tf.ragged.constant([[1, 2, 2], [], [5]]), dict(axis=-1),
     ([[0, 1], [0, 2], [2, 5]], [1, 2, 1], "int32", [3, 6])),
    # (axis 0 of a rank-3 ragged tensor: TF counts its .values, a ragged matrix, by row)
    (lambda: tf.ragged.constant([[[1, 2], [2]], [[5]]]), {}, ([[0, 1], [0, 2], [1, 2], [2, 5]], [1, 1, 1, 1], "int32",
                                                              [3, 6])),
    (lambda: tf.ragged.constant([[1, 2, 2], [], [5]]), dict(axis=-1, binary_output=True, maxlength=4),
     ([[0, 1], [0, 2]], [1, 1], "int32", [3, 4])),
    (lambda: tf.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0, np.int32), [3, 5]), {}, ([], [], "int32", [1])),
])
def test_sparse_bincount_vs_tf(make, kw, want):
    assert _sp(tf.sparse.bincount(make(), **kw)) == want


def test_sparse_bincount_weights_vs_tf():
    # TF 2.21: weights sum per bin (zero weights still make an entry); the values take their dtype
    r = tf.sparse.bincount(tf.constant([1, 2, 2, 5]), weights=tf.constant([.5, 1., 2., 3.]))
    assert _sp(r) == ([[1], [2], [5]], [0.5, 3.0, 3.0], "float32", [6])
    r = tf.sparse.bincount(tf.constant([[1, 2, 2], [5, 0, 1]]), weights=tf.constant([[1., 2., 0.], [0., 0., 1.]]),
                           axis=-1)
    assert _sp(r) == ([[0, 1], [0, 2], [1, 0], [1, 1], [1, 5]], [1.0, 2.0, 0.0, 1.0, 0.0], "float32", [2, 6])
    assert _sp(tf.sparse.bincount(tf.constant([1, 2, 2]), weights=tf.constant([1, 2, 3]))) == \
        ([[1], [2]], [1, 5], "int32", [3])
    assert _sp(tf.sparse.bincount(tf.constant([1, 2, 2]), weights=tf.constant([1, 2, 3], tf.float64)))[2] == "float64"
    assert _sp(tf.sparse.bincount(tf.constant([1, 2], tf.int64), weights=tf.constant([1., 2.])))[2] == "float32"
    w = tf.SparseTensor(SP.indices, [1., 2., 3., 4.], [4, 5])
    assert _sp(tf.sparse.bincount(SP, weights=w)) == ([[1], [3], [7]], [1.0, 5.0, 4.0], "float32", [8])
    r = tf.sparse.bincount(tf.ragged.constant([[1, 2, 2], [], [5]]), axis=-1,
                           weights=tf.ragged.constant([[1., 2., 3.], [], [4.]]))
    assert _sp(r) == ([[0, 1], [0, 2], [2, 5]], [1.0, 5.0, 4.0], "float32", [3, 6])


@pytest.mark.parametrize("call,err,needle", [
    (lambda: tf.sparse.bincount(tf.constant([1, -2, 2])), InvalidArgumentError, "must all be non-negative"),
    (lambda: tf.sparse.bincount(tf.constant([1., 2.])), InvalidArgumentError, "int32, int64"),
    (lambda: tf.sparse.bincount(tf.constant([1, 2], tf.int16)), InvalidArgumentError, "int32, int64"),
    (lambda: tf.sparse.bincount(tf.constant([1, 2]), weights=tf.constant(["a", "b"])), InvalidArgumentError,
     "output_type"),
    (lambda: tf.sparse.bincount(tf.constant([1, 2]), weights=tf.constant([1., 2.]), binary_output=True),
     ValueError, "mutually exclusive"),
    (lambda: tf.sparse.bincount(tf.constant([[1, 2]]), axis=1), ValueError, "Only 0 and -1"),
    (lambda: tf.sparse.bincount(tf.zeros([2, 2, 2], tf.int32), axis=-1), InvalidArgumentError, "1 or 2-dimensional"),
    (lambda: tf.sparse.bincount(tf.constant([1, 2, 2]), weights=tf.constant([1., 2.])), InvalidArgumentError,
     "same shape"),
    (lambda: tf.sparse.bincount(tf.constant([1, 2]), maxlength=-5), InvalidArgumentError, "at least minimum -1"),
    (lambda: tf.sparse.bincount(SP, weights=tf.constant([1., 2., 3., 4.])), ValueError, "must be a SparseTensor"),
    (lambda: tf.sparse.bincount(tf.ragged.constant([[1], [2]]), weights=tf.constant([1., 2.])), ValueError,
     "must be a RaggedTensor"),
    (lambda: tf.sparse.bincount(tf.ragged.constant([[1, 2, 2], [], [5]]),
                                weights=tf.ragged.constant([[1., 2.], [3.], [4.]])), InvalidArgumentError,
     "same row splits"),
    (lambda: tf.sparse.bincount(tf.SparseTensor([[0], [3]], [4, 4], [5]),
                                weights=tf.SparseTensor([[0], [2]], [1., 1.], [5])), InvalidArgumentError,
     "same indices"),
])
def test_sparse_bincount_errors_as_tf(call, err, needle):
    with pytest.raises(err, match=needle):
        call()


def test_sparse_bincount_traced():
    x = tf.constant([[1, 2, 2], [5, 0, 1]])
    assert _both(lambda v: tf.sparse.bincount(v, axis=-1), x) == \
        ([[0, 1], [0, 2], [1, 0], [1, 1], [1, 5]], [1, 2, 1, 1, 1], "int32", [2, 6])
    f = tf.function(lambda v, w: tf.sparse.bincount(v, weights=w, minlength=8))
    assert _sp(f(tf.constant([1, 2, 2, 5]), tf.constant([.5, 1., 2., 3.]))) == \
        ([[1], [2], [5]], [0.5, 3.0, 3.0], "float32", [8])
    # other values, other length: the same trace (the length is data, as TF's output shape)
    assert _sp(f(tf.constant([9, 0, 0, 1]), tf.constant([1., 1., 1., 1.]))) == \
        ([[0], [1], [9]], [2.0, 1.0, 1.0], "float32", [10])
    assert _both(lambda v: tf.sparse.bincount(v, axis=-1), SP)[3] == [4, 8]
    with pytest.raises(InvalidArgumentError, match="must all be non-negative"):
        f(tf.constant([1, -2, 2, 5]), tf.constant([.5, 1., 2., 3.]))


def test_sparse_bincount_random_vs_numpy():
    rng = np.random.default_rng(0)
    for _ in range(20):
        v = rng.integers(0, 30, size=(4, 7)).astype(np.int64)
        w = rng.normal(size=(4, 7))
        r = tf.sparse.bincount(tf.constant(v), weights=tf.constant(w), axis=-1)
        dense = np.zeros((4, v.max() + 1))
        for i in range(4):
            np.add.at(dense[i], v[i], w[i])
        occupied = np.zeros_like(dense, bool)
        for i in range(4):
            occupied[i, v[i]] = True
        assert r.indices.numpy().tolist() == np.argwhere(occupied).tolist()
        np.testing.assert_allclose(r.values.numpy(), dense[occupied], rtol=1e-12)


# -- tf.sparse.mask -----------------------------------------------------------------------------------

def _slices():
    return tf.IndexedSlices(tf.constant([[1., 2], [3, 4], [5, 6], [7, 8]]), tf.constant([12, 26, 37, 45]),
                            tf.constant([50, 2]))


def test_sparse_mask_vs_tf():
    r = tf.sparse.mask(_slices(), [12, 45])          # TF 2.21: values [[3,4],[5,6]], indices [26, 37]
    assert r.values.numpy().tolist() == [[3.0, 4.0], [5.0, 6.0]] and r.indices.numpy().tolist() == [26, 37]
    assert r.indices.dtype.name == "int32" and r.dense_shape.numpy().tolist() == [50, 2]
    # an index past the largest mask index (0 as well: the search's pad must not match it)
    r = tf.sparse.mask(tf.IndexedSlices(tf.constant([1., 2., 3.]), tf.constant([0, 5, 9])), [3])
    assert r.indices.numpy().tolist() == [0, 5, 9] and r.values.numpy().tolist() == [1., 2., 3.]   # TF 2.21
    r = tf.sparse.mask(tf.IndexedSlices(tf.constant([1., 2., 3.]), tf.constant([0, 5, 9])), [-1])
    assert r.indices.numpy().tolist() == [0, 5, 9]          # (ListDiff: -1 is in no index)
    r = tf.sparse.mask(_slices(), tf.constant([], tf.int32))
    assert r.indices.numpy().tolist() == [12, 26, 37, 45]
    r = tf.sparse.mask(tf.IndexedSlices(tf.constant([1., 2, 3]), tf.constant([4, 4, 5])), [5])
    assert r.values.numpy().tolist() == [1.0, 2.0] and r.indices.numpy().tolist() == [4, 4] and r.dense_shape is None
    r = tf.sparse.mask(tf.IndexedSlices(tf.constant([1., 2, 3]), tf.constant([4, 4, 5], tf.int64)),
                       tf.constant([4], tf.int64))
    assert r.indices.numpy().tolist() == [5] and r.indices.dtype.name == "int64"
    with pytest.raises(InvalidArgumentError, match="expected to be a int32"):
        tf.sparse.mask(_slices(), tf.constant([12], tf.int64))
    with pytest.raises(InvalidArgumentError, match="1D vector"):
        tf.sparse.mask(_slices(), [[12]])
    with pytest.raises(TypeError):
        tf.sparse.mask(_slices(), [12.])


def test_sparse_mask_traced_and_gradient():
    f = lambda v, i, m: (lambda r: (r.values, r.indices))(tf.sparse.mask(tf.IndexedSlices(v, i), m))  # noqa: E731
    got = _both(f, tf.constant([[1., 2], [3, 4], [5, 6]]), tf.constant([3, 1, 3]), tf.constant([3]))
    assert got == (([[3.0, 4.0]], "float32"), ([1], "int32"))
    x = tf.Variable([[1., 2], [3, 4], [5, 6], [7, 8]])
    with tf.GradientTape() as t:
        r = tf.sparse.mask(tf.IndexedSlices(x * 2., tf.constant([12, 26, 37, 45]), tf.constant([50, 2])), [26])
        loss = tf.reduce_sum(r.values * tf.constant([[1., 2], [3, 4], [5, 6]]))
    # TF 2.21: [[2, 4], [0, 0], [6, 8], [10, 12]]
    assert tf.convert_to_tensor(t.gradient(loss, x)).numpy().tolist() == [[2., 4.], [0., 0.], [6., 8.], [10., 12.]]


# -- tf.sparse.sampled_addmm --------------------------------------------------------------------------

_IND = tf.constant([0, 0, 1, 1], shape=[2, 2])
_M1 = tf.constant([1, 2, 3, 4, 5, 6], shape=[2, 3], dtype=tf.float32)
_M2 = tf.constant([7, 8, 9, 10, 11, 12], shape=[3, 2], dtype=tf.float32)


def test_sampled_addmm_vs_tf():
    i, v, s = tf.sparse.sampled_addmm(_IND, tf.constant([0.5, 0.3]), tf.constant([2, 2]), _M1, _M2,
                                      alpha=0.75, beta=0.25)
    assert i.numpy().tolist() == [[0, 0], [1, 1]] and s.numpy().tolist() == [2, 2] and s.dtype.name == "int32"
    np.testing.assert_array_equal(v.numpy(), np.array([43.625, 115.575], np.float32))   # TF 2.21's bits
    _, v, _ = tf.sparse.sampled_addmm(
        tf.constant([0, 1, 1, 0, 0, 0, 1, 0], shape=[2, 2, 2]), tf.constant([3, 5, 2, 7], shape=[2, 2], dtype=tf.float32),
        [2, 2], tf.constant(np.arange(1, 13), shape=[2, 2, 3], dtype=tf.float32),
        tf.constant(np.arange(13, 25), shape=[2, 3, 2], dtype=tf.float32), alpha=0.75, beta=0.25)
    assert v.numpy().tolist() == [[75.75, 173.0], [381.5, 524.5]]
    _, v, _ = tf.sparse.sampled_addmm(_IND, 1.0, [2, 2], _M1, _M2)
    assert v.numpy().tolist() == [59.0, 155.0]
    with pytest.raises(ValueError, match="does not match output shape"):
        tf.sparse.sampled_addmm(_IND, [0.5, 0.3], [3, 2], _M1, _M2)
    with pytest.raises(ValueError, match="requested dtype float64"):
        tf.sparse.sampled_addmm(_IND, tf.constant([0.5, 0.3]), [2, 2], _M1, _M2, output_type=tf.float64)
    with pytest.raises(ValueError, match="requested dtype int32"):
        tf.sparse.sampled_addmm(_IND, [0.5, 0.3], tf.constant([2, 2], tf.int64), _M1, _M2)


def test_sampled_addmm_traced_and_gradient():
    f = lambda i, v, a, b: tf.sparse.sampled_addmm(i, v, [2, 2], a, b, alpha=0.75, beta=0.25)  # noqa: E731
    got = _both(f, _IND, tf.constant([0.5, 0.3]), _M1, _M2)
    assert got[1][0] == np.array([43.625, 115.575], np.float32).tolist()
    with pytest.raises(ValueError, match="does not match output shape"):
        tf.function(lambda i, v, a, b: tf.sparse.sampled_addmm(i, v, [3, 2], a, b))(_IND, [0.5, 0.3], _M1, _M2)
    y1, y2, v = tf.Variable(_M1), tf.Variable(_M2), tf.Variable([0.5, 0.3])
    with tf.GradientTape() as t:
        r = tf.sparse.sampled_addmm(_IND, v, [2, 2], y1, y2, alpha=0.75, beta=0.25)
        loss = tf.reduce_sum(r[1] * tf.constant([1., 2.]))
    g = [tf.convert_to_tensor(x).numpy().tolist() for x in t.gradient(loss, [y1, y2, v])]
    # TF 2.21's gradients
    assert g == [[[5.25, 6.75, 8.25], [12.0, 15.0, 18.0]], [[0.75, 6.0], [1.5, 7.5], [2.25, 9.0]], [0.25, 0.5]]


# -- tf.sparse.cross / cross_hashed, tf.ragged.cross / cross_hashed -------------------------------------

_A = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["a", "b", "c"], [2, 2])
_B = tf.SparseTensor([[0, 0], [1, 0]], ["d", "e"], [2, 1])
_C = tf.constant([["f"], ["g"]])
_IA = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], tf.constant([1, -2, 3], tf.int64), [2, 2])
_IDX3 = [[0, 0], [1, 0], [1, 1]]


@pytest.mark.parametrize("call,want", [
    # TF 2.21's values: sparse inputs' features first, then dense ones'
    (lambda: tf.sparse.cross([_A, _B, _C]), [b"a_X_d_X_f", b"b_X_e_X_g", b"c_X_e_X_g"]),
    (lambda: tf.sparse.cross([_C, _A, _B]), [b"a_X_d_X_f", b"b_X_e_X_g", b"c_X_e_X_g"]),
    (lambda: tf.sparse.cross([_A, _B], separator="--"), [b"a--d", b"b--e", b"c--e"]),
    (lambda: tf.sparse.cross([_IA, _B]), [b"1_X_d", b"-2_X_e", b"3_X_e"]),
    (lambda: tf.sparse.cross([_A]), [b"a", b"b", b"c"]),
    (lambda: tf.sparse.cross_hashed([_A, _B, _C]), [5684865645872741371, 1392610987527938559, 6629649657679214674]),
    (lambda: tf.sparse.cross_hashed([_C, _A, _B]), [5684865645872741371, 1392610987527938559, 6629649657679214674]),
    (lambda: tf.sparse.cross_hashed([_A, _B, _C], num_buckets=100), [78, 66, 74]),
    (lambda: tf.sparse.cross_hashed([_A, _B, _C], num_buckets=100, hash_key=7), [92, 29, 14]),
    (lambda: tf.sparse.cross_hashed([_IA, _B]), [8731989417520980377, 1814032924315845545, 8498098340703857781]),
    (lambda: tf.sparse.cross_hashed([_IA]), [5199413699614396413, 5590782307785592952, 1424184489956106035]),
    (lambda: tf.sparse.cross_hashed([_A]), [3550520439517529108, 5701958020731327761, 5287514571041673476]),
])
def test_sparse_cross_vs_tf(call, want):
    r = call()
    assert r.indices.numpy().tolist() == _IDX3 and r.values.numpy().tolist() == want
    assert r.dense_shape.numpy().tolist() == [2, 2]
    assert r.values.dtype.name == ("string" if isinstance(want[0], bytes) else "int64")


def test_sparse_cross_edges_vs_tf():
    r = tf.sparse.cross([tf.SparseTensor([[1, 0]], ["x"], [3, 2]), tf.constant([["p", "q"], ["r", "s"], ["t", "u"]])])
    assert _sp(r) == ([[1, 0], [1, 1]], [b"x_X_r", b"x_X_s"], "string", [3, 2])
    assert _sp(tf.sparse.cross([])) == ([], [], "string", [0, 0])
    r = tf.sparse.cross([tf.constant([[-1.5], [2.7]]), _B])         # numbers truncate to int64, as TF
    assert r.values.numpy().tolist() == [b"d_X_-1", b"e_X_2"]
    r = tf.sparse.cross([tf.constant([[True], [False]]), _B])
    assert r.values.numpy().tolist() == [b"d_X_1", b"e_X_0"]
    r = tf.sparse.cross_hashed([tf.constant([[-1.5], [2.7]]), _B])
    assert r.values.numpy().tolist() == [1740980549285507978, 9210349463531149545]
    r = tf.sparse.cross_hashed([tf.constant([[1, 2], [3, 4]]), _C])
    assert r.values.numpy().tolist() == [3419707899628603438, 5631942681933062373, 2002218558235025077,
                                         7728112326983042960]
    r = tf.sparse.cross([tf.constant([["é"], ["ß"]]), _B])
    assert r.values.numpy().tolist() == [b"d_X_\xc3\xa9", b"e_X_\xc3\x9f"]


@pytest.mark.parametrize("call,err,needle", [
    (lambda: tf.sparse.cross([_A, tf.constant([["p"], ["q"], ["r"]])]), InvalidArgumentError,
     "Expected batch size 2 got 3 at dense tensor 0"),
    (lambda: tf.sparse.cross([_A, tf.constant([[["p"]], [["q"]]])]), InvalidArgumentError,
     "Dense inputs should be a matrix"),
    (lambda: tf.sparse.cross([tf.SparseTensor([[0]], ["a"], [2]), _B]), InvalidArgumentError, "Expected D2 of index"),
    (lambda: tf.sparse.cross(_A), TypeError, "Inputs must be a list"),
    (lambda: tf.sparse.cross([_A, [["p"], ["q"]]]), TypeError, "All inputs must be"),
    (lambda: tf.sparse.cross_hashed([_A, _B], num_buckets=-1), InvalidArgumentError, "at least minimum 0"),
    (lambda: tf.sparse.cross_hashed([_A, _B], hash_key=2 ** 63 + 5), OverflowError, "too big"),
])
def test_sparse_cross_errors_as_tf(call, err, needle):
    with pytest.raises(err, match=needle):
        call()


def test_cross_traced():
    assert _both(lambda a, b: tf.sparse.cross([a, b, _C]), _A, _B)[1] == [b"a_X_d_X_f", b"b_X_e_X_g", b"c_X_e_X_g"]
    assert _both(lambda a, b: tf.sparse.cross_hashed([a, b, _C], num_buckets=100), _A, _B)[1] == [78, 66, 74]
    with pytest.raises(InvalidArgumentError, match="batch"):
        tf.function(lambda a, c: tf.sparse.cross([a, c]))(_A, tf.constant([["p"], ["q"], ["r"]]))


def test_fingerprint_cat64_against_tf_docs():
    # TF's sparse.cross_hashed doc: FingerprintCat64(Fingerprint64("f"), FingerprintCat64(...)); the
    # 3-input value above (5684865645872741371) is that fold starting at the default key
    from tapeflow._feature_cross import DEFAULT_HASH_KEY, fingerprint_cat64
    from tapeflow.util.farmhash import fingerprint64 as fp
    h = DEFAULT_HASH_KEY
    for s in (b"a", b"d", b"f"):
        h = fingerprint_cat64(h, fp(s))
    assert h % (2 ** 63 - 1) == 5684865645872741371




def test_gradients_against_finite_differences():
    from conftest import check_grads
    rng = np.random.default_rng(3)
    idx = np.array([[0, 1], [1, 0], [2, 2], [0, 0]], np.int64)
    # sampled_addmm: differentiable in values, mat1 and mat2 (twice: a product of two linear maps)
    check_grads(lambda v, a, b: tf.sparse.sampled_addmm(tf.constant(idx), v, [3, 3], a, b, alpha=0.7, beta=1.3,
                                                        output_type=tf.float64)[1],
                [rng.normal(size=4), rng.normal(size=(3, 5)), rng.normal(size=(5, 3))])
    # bincount's weights (TF 2.21 registers no gradient for its count ops: tape.gradient raises
    # LookupError there; the sums are linear in the weights, so tapeflow differentiates them)
    ids = tf.constant([[1, 2, 2], [5, 0, 1]])
    check_grads(lambda w: tf.sparse.bincount(ids, weights=w, axis=-1).values, [rng.normal(size=(2, 3))])
    # mask's values (a boolean_mask of the rows)
    check_grads(lambda v: tf.sparse.mask(tf.IndexedSlices(v, tf.constant([3, 1, 3, 7])), [1]).values,
                [rng.normal(size=(4, 2))])


def test_cross_hashed_key_zero_is_the_default_as_tf():
    one = tf.SparseTensor([[0, 0]], ["a"], [1, 1])
    # TF 2.21: tf.sparse.cross_hashed takes `hash_key or default`, so 0 is the default key ...
    assert tf.sparse.cross_hashed([one], hash_key=0).values.numpy().tolist() == [3550520439517529108]
    # ... and tf.ragged.cross_hashed uses 0 as given
    assert tf.ragged.cross_hashed([tf.ragged.constant([["a"]])], hash_key=0).to_list() == [[6392349563203753680]]


def test_cross_hashed_mixed_columns_vs_tf():
    # TF 2.21: strings, negative int64s and a dense int column in one fold (the vectorized kernel's
    # uint64 products wrap as TF's C++ ones)
    r = tf.sparse.cross_hashed([_A, _IA, tf.constant([[7], [8]], tf.int64)])
    assert r.values.numpy().tolist() == [7817179432388635857, 8030753535530953758, 6495920968166134782,
                                         6718045129635634396, 3647167175590040347]
    assert r.indices.numpy().tolist() == [[0, 0], [1, 0], [1, 1], [1, 2], [1, 3]]
    r = tf.ragged.cross_hashed([tf.ragged.constant([[], ["x"]]), tf.ragged.constant([[1], [2, 3]])])
    assert r.to_list() == [[], [3987325992395097374, 8761168886905583153]]
