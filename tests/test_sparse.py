"""tf.SparseTensor and tf.sparse against TF 2.21 (tests/data/sparse_reference.json, recorded by
tests/tf_reference/make_sparse_reference.py from tests/sparse_cases.py), eagerly and inside
tf.function; gradients with respect to the values against finite differences; TF's errors."""
import json
import os

import numpy as np
import pytest

import tapeflow as tf
from conftest import check_grads
from sparse_cases import cases, describe

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "sparse_reference.json")))
CASES = cases(tf)


def _close(got, want, where):
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), (where, got, want)
        for k in want:
            _close(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, f"{where}[{i}]")
    elif isinstance(want, float) or isinstance(got, float):
        assert got == pytest.approx(want, rel=1e-5, abs=1e-6), (where, got, want)
    else:
        assert got == want, (where, got, want)


def _components(x):
    """A result as tensors a tf.function can return (SparseTensors as their three parts)."""
    if isinstance(x, tf.SparseTensor):
        return ("sparse", x.indices, x.values, x.dense_shape)
    if isinstance(x, (list, tuple)):
        return [_components(v) for v in x]
    return x


def _rebuild(x):
    if isinstance(x, tuple) and x and x[0] == "sparse":
        return tf.SparseTensor(*x[1:])
    if isinstance(x, (list, tuple)):
        return [_rebuild(v) for v in x]
    return x


@pytest.mark.parametrize("mode", ["eager", "compiled"])
@pytest.mark.parametrize("name", sorted(REF))
def test_matches_tf(name, mode):
    fn = CASES[name]
    if mode == "eager":
        got = fn()
    else:
        got = _rebuild(tf.function(lambda: _components(fn()))())
    _close(describe(tf, got), REF[name], name)


def test_repr_is_tfs():
    st = tf.sparse.SparseTensor(indices=[[0, 3], [2, 4]], values=[10, 20], dense_shape=[3, 10])
    assert repr(st) == ("SparseTensor(indices=tf.Tensor(\n[[0 3]\n [2 4]], shape=(2, 2), dtype=int64), "
                        "values=tf.Tensor([10 20], shape=(2,), dtype=int32), "
                        "dense_shape=tf.Tensor([ 3 10], shape=(2,), dtype=int64))")
    assert st.shape == (3, 10) and st.dtype == tf.int32


def test_gradients_through_values():
    idx, shape = [[0, 1], [1, 0], [2, 2]], [3, 3]
    rng = np.random.default_rng(0)
    d = rng.standard_normal((3, 2))
    check_grads(lambda v, d: tf.sparse.sparse_dense_matmul(tf.SparseTensor(idx, v, shape), d),
                [rng.standard_normal(3), d])
    check_grads(lambda v: tf.sparse.to_dense(tf.SparseTensor(idx, v, shape)) ** 2, [rng.standard_normal(3)])
    check_grads(lambda v: tf.sparse.softmax(tf.SparseTensor([[0, 0], [0, 2], [1, 1]], v, [2, 3])).values,
                [rng.standard_normal(3)])
    check_grads(lambda v: tf.sparse.reduce_sum(tf.SparseTensor(idx, v, shape), axis=1) ** 2, [rng.standard_normal(3)])


def test_traced_from_dense_and_where():
    # tf.where(cond) and from_dense trace: their row count depends on the data
    @tf.function
    def f(x):
        sp = tf.sparse.from_dense(x)
        return tf.sparse.to_dense(tf.sparse.add(sp, sp)), tf.where(x > 0), tf.sparse.reduce_max(sp, axis=0)
    dense, idx, mx = f(tf.constant([[1., 0.], [0., -3.]]))
    np.testing.assert_array_equal(dense.numpy(), [[2., 0.], [0., -6.]])
    assert idx.dtype == tf.int64 and idx.numpy().tolist() == [[0, 0]]
    np.testing.assert_array_equal(mx.numpy(), [1., -3.])
    dense, idx, _ = f(tf.constant([[1., 2.], [3., 0.]]))
    assert idx.numpy().tolist() == [[0, 0], [0, 1], [1, 0]]


@pytest.mark.parametrize("mode", ["eager", "compiled"])
@pytest.mark.parametrize("build,needle", [
    # TF 2.21: SparseToDense's InvalidArgumentErrors
    (lambda: tf.SparseTensor([[1, 0], [0, 1]], [1., 2.], [2, 2]), "out of order"),
    (lambda: tf.SparseTensor([[0, 0], [0, 0]], [1., 2.], [2, 2]), "repeated"),
    (lambda: tf.SparseTensor([[0, 0], [0, 5]], [1., 2.], [2, 2]), "out of bounds"),
])
def test_to_dense_checks_indices(build, needle, mode):
    fn = (lambda: tf.sparse.to_dense(build())) if mode == "eager" else tf.function(lambda: tf.sparse.to_dense(build()))
    # compiled: the run-time Assert, or the scatter's own bounds error when that op runs first
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=needle if mode == "eager" else f"assertion failed|{needle}"):
        fn()
    if needle != "out of bounds":
        # validate_indices=False skips the order check, as TF
        assert tf.sparse.to_dense(build(), validate_indices=False).shape == (2, 2)


@pytest.mark.parametrize("fn,err,needle", [
    (lambda: tf.SparseTensor([[0, 0], [0, 1]], [1., 2., 3.], [2, 2]), ValueError, "Dimensions 2 and 3"),
    (lambda: tf.SparseTensor([[0, 0], [0, 1]], [1., 2.], [2, 2, 2]), ValueError, "Dimensions 2 and 3"),
    (lambda: tf.sparse.sparse_dense_matmul(tf.SparseTensor([[0, 0]], [1.], [2, 3]), tf.ones([2, 2])),
     tf.errors.InvalidArgumentError, "inner dimensions"),
    (lambda: tf.sparse.add(tf.SparseTensor([[0, 0]], [1.], [2, 2]), tf.SparseTensor([[0, 0]], [1], [2, 2])),
     TypeError, "cast one"),
    (lambda: tf.sparse.concat(0, [tf.SparseTensor([[0, 0]], [1.], [2, 2]), tf.SparseTensor([[0, 0]], [1.], [2, 3])]),
     tf.errors.InvalidArgumentError, "expand_nonconcat_dims"),
    (lambda: tf.sparse.to_dense(tf.ones([2])), TypeError, "expected a SparseTensor"),
])
def test_bad_inputs(fn, err, needle):
    with pytest.raises(err, match=needle):
        fn()


def test_datasets_of_sparse_tensors():
    # the sparse_tensor guide's cells: TF 2.21 slices a SparseTensor into its rows, batches rows into
    # a SparseTensor of the largest shape, unbatches back, and maps functions over them
    sp = tf.sparse.SparseTensor([(0, 0), (0, 1), (0, 2), (4, 3), (5, 0), (5, 1)], [1] * 6, (6, 4))
    ds = tf.data.Dataset.from_tensor_slices(sp)

    def show(e):
        return e.dense_shape.numpy().tolist(), e.indices.numpy().tolist(), e.values.numpy().tolist()
    rows = [show(e) for e in ds]
    assert rows == [([4], [[0], [1], [2]], [1, 1, 1]), ([4], [], []), ([4], [], []), ([4], [], []),
                    ([4], [[3]], [1]), ([4], [[0], [1]], [1, 1])]
    batched = ds.batch(2)
    assert [show(e) for e in batched] == [([2, 4], [[0, 0], [0, 1], [0, 2]], [1, 1, 1]), ([2, 4], [], []),
                                          ([2, 4], [[0, 3], [1, 0], [1, 1]], [1, 1, 1])]
    assert [show(e) for e in batched.unbatch()] == rows
    assert [show(e)[2] for e in ds.map(lambda x: x * 2)] == [[2, 2, 2], [], [], [], [2], [2, 2]]
    # TF 2.21: SparseTensorSpec(TensorShape([4]), tf.int32) SparseTensorSpec(TensorShape([None, 4]), tf.int32)
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([4]), tf.int32)"
    assert repr(batched.element_spec) == "SparseTensorSpec(TensorShape([None, 4]), tf.int32)"


def test_keras_dense_takes_sparse_batches():
    # the sparse_tensor guide: keras.Input(sparse=True) -> Dense; the model's output equals the
    # dense input's, in a call, predict (batches of rows) and fit
    x = tf.keras.Input(shape=(4,), sparse=True)
    model = tf.keras.Model(x, tf.keras.layers.Dense(4)(x))
    sp = tf.sparse.SparseTensor([(0, 0), (0, 1), (0, 2), (4, 3), (5, 0), (5, 1)], [1] * 6, (6, 4))
    dense = tf.sparse.to_dense(sp).numpy().astype(np.float32)
    want = model(dense).numpy()
    np.testing.assert_allclose(model(sp).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(model.predict(sp, batch_size=4, verbose=0), want, rtol=1e-6)
    model.compile(optimizer="sgd", loss="mse")
    losses = model.fit(sp, np.ones((6, 4), np.float32), epochs=3, batch_size=4, shuffle=False,
                       verbose=0).history["loss"]
    assert losses[2] < losses[0]


def test_tf_function_takes_and_returns_sparse_tensors_without_retracing():
    # TF passes a SparseTensor through tf.function as its components: calls with other entries
    # (and another entry count) of the same dtype and dense shape share one trace
    @tf.function
    def f(x, y):
        return tf.sparse.sparse_dense_matmul(x, y), tf.sparse.map_values(tf.multiply, x, 2)

    d = np.arange(30, dtype=np.int32).reshape(10, 3)
    a = tf.SparseTensor([[0, 3], [2, 4]], [15, 25], [3, 10])
    b = tf.SparseTensor([[0, 3], [1, 1], [2, 4]], [1, 2, 3], [3, 10])
    for sp in (a, b, a):
        prod, doubled = f(sp, d)
        np.testing.assert_array_equal(prod.numpy(), tf.sparse.to_dense(sp).numpy() @ d)
        assert isinstance(doubled, tf.SparseTensor)
        np.testing.assert_array_equal(doubled.values.numpy(), sp.values.numpy() * 2)
        assert doubled.dense_shape.numpy().tolist() == [3, 10]
    assert f.experimental_get_tracing_count() == 1
    f(tf.SparseTensor([[0, 0]], [1], [3, 7]), d[:7])        # another dense shape: a trace of its own
    assert f.experimental_get_tracing_count() == 2


def test_ragged_to_and_from_sparse_as_tf():
    # TF 2.21 (the ragged_tensor guide): to_sparse gives every flat value's coordinates and the
    # bounding shape; from_sparse reads the rows of a row-major 2-D SparseTensor; strings densify
    rt = tf.ragged.constant([[[1, 2], [3]], [], [[4]]])
    sp = rt.to_sparse()
    assert sp.indices.numpy().tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [2, 0, 0]]
    assert sp.values.numpy().tolist() == [1, 2, 3, 4] and sp.dense_shape.numpy().tolist() == [3, 2, 2]
    uni = tf.RaggedTensor.from_row_lengths(tf.ones([3, 2]), [1, 2]).to_sparse()   # a uniform inner dim
    assert uni.indices.numpy().tolist() == [[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 0, 1], [1, 1, 0], [1, 1, 1]]
    st = tf.SparseTensor([[0, 0], [2, 0], [2, 1]], ["a", "b", "c"], [3, 3])
    assert tf.RaggedTensor.from_sparse(st).to_list() == [[b"a"], [], [b"b", b"c"]]
    x = tf.ragged.constant([["John"], ["a", "big", "dog"], ["my", "cat"]]).to_sparse()
    y = tf.ragged.constant([["fell", "asleep"], ["barked"], ["is", "fuzzy"]]).to_sparse()
    dense = tf.sparse.to_dense(tf.sparse.concat(sp_inputs=[x, y], axis=1), "")
    assert dense.numpy().tolist() == [[b"John", b"", b"", b"fell", b"asleep"], [b"a", b"big", b"dog", b"barked", b""],
                                      [b"my", b"cat", b"", b"is", b"fuzzy"]]
