"""Ops added or fixed by the wave-17 sweep of tf.nn / tf.math against TF 2.21
(tests/tf_reference/sweep_nn17.py): gradients against finite differences, and TF's
gradients at the edges. Their forward values and errors are in the bad-input table
(tests/bad_input_cases.py, block 'branch sweepnn17'), against TF in every mode."""
import numpy as np

import tapeflow as tf
from conftest import check_grads

rng = np.random.default_rng(17)


def test_batch_normalization_gradients():
    x = rng.standard_normal((4, 3))
    m, o, s = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)
    v = rng.uniform(0.5, 2.0, 3)
    check_grads(lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 1e-3), [x, m, v, o, s])
    check_grads(lambda x, m, v: tf.nn.batch_normalization(x, m, v, None, None, 1e-3), [x, m, v])


def test_bias_add_nchw_gradients():
    x, b = rng.standard_normal((2, 3, 2, 2)), rng.standard_normal(3)
    check_grads(lambda x, b: tf.nn.bias_add(x, b, data_format="NCHW"), [x, b])
    # the bias gradient sums over N, H, W
    xt, bt = tf.constant(x), tf.constant(b)
    with tf.GradientTape() as t:
        t.watch(bt)
        y = tf.reduce_sum(tf.nn.bias_add(xt, bt, data_format="NCHW"))
    np.testing.assert_allclose(t.gradient(y, bt).numpy(), [8.0, 8.0, 8.0])


def test_embedding_lookup_max_norm_gradient():
    p = rng.standard_normal((5, 3)) * 2
    ids = np.array([[0, 4], [1, 1]], np.int32)
    check_grads(lambda p: tf.nn.embedding_lookup(p, tf.constant(ids), max_norm=1.0), [p], order=1)


def test_xdivy_xlog1py_gradients():
    x, y = rng.uniform(0.5, 2.0, 4), rng.uniform(0.5, 2.0, 4)
    check_grads(tf.math.xdivy, [x, y])
    check_grads(tf.math.xlog1py, [x, y])


def test_xdivy_xlog1py_gradients_at_zero_are_tfs():
    for f, xs, ys, gx, gy in [
        # TF 2.21: [0.0, 0.0, 0.25] [0.0, 0.0, -0.125]
        (tf.math.xdivy, [0.0, 0.0, 2.0], [0.0, 2.0, 4.0], [0.0, 0.0, 0.25], [0.0, 0.0, -0.125]),
        # TF 2.21: [0.0, 0.0, 0.6931471824645996] [0.0, 0.0, 1.0]
        (tf.math.xlog1py, [0.0, 0.0, 2.0], [-1.0, 1.0, 1.0], [0.0, 0.0, 0.6931472], [0.0, 0.0, 1.0]),
    ]:
        x, y = tf.constant(xs), tf.constant(ys)
        with tf.GradientTape(persistent=True) as t:
            t.watch([x, y])
            z = f(x, y)
        np.testing.assert_allclose(t.gradient(z, x).numpy(), gx, rtol=1e-6)
        np.testing.assert_allclose(t.gradient(z, y).numpy(), gy, rtol=1e-6)


def test_in_top_k_eager_and_compiled_agree():
    t = tf.constant(np.array([0, 2, 1, 5], np.int32))
    p = tf.constant(np.array([[1.0, 3.0, 2.0], [0.0, 1.0, 5.0], [1.0, 1.0, 1.0], [1.0, 2.0, 3.0]], np.float32))
    want = [False, True, True, False]   # TF 2.21 (k=2; ties at the boundary count; id 5 is out of range)
    assert tf.math.in_top_k(t, p, 2).numpy().tolist() == want
    assert tf.function(lambda t, p: tf.nn.in_top_k(t, p, 2))(t, p).numpy().tolist() == want


def test_tensor_scatter_nd_update_repeated_index_last_wins():
    C = tf.constant
    cases = [  # (tensor, indices, updates, TF 2.21's result)
        (C([1., 1., 1.]), C([[0], [0]]), C([5., 6.]), [6.0, 1.0, 1.0]),
        (C([1, 1, 1]), C([[0], [0], [0]]), C([5, 6, 7]), [7, 1, 1]),   # (the sum 18 before)
        (C(np.zeros((3, 2), np.float32)), C([[2], [0], [2]]), C([[1., 2.], [3., 4.], [5., 6.]]),
         [[3.0, 4.0], [0.0, 0.0], [5.0, 6.0]]),
        (C(np.zeros((2, 2), np.int32)), C([[1, 1], [0, 1], [1, 1]]), C([1, 2, 3]), [[0, 2], [0, 3]]),
        (C(np.zeros((2, 2), np.float32)), C([[[1, 1], [0, 1]], [[1, 1], [1, 1]]]), C([[1., 2.], [3., 4.]]),
         [[0.0, 2.0], [0.0, 4.0]]),
        (C([1., 1., 1.]), C([[2], [0]]), C([5., 6.]), [6.0, 1.0, 5.0]),
    ]
    f = tf.function(lambda t, i, u: tf.tensor_scatter_nd_update(t, i, u))
    for t, i, u, want in cases:
        assert tf.tensor_scatter_nd_update(t, i, u).numpy().tolist() == want
        assert f(t, i, u).numpy().tolist() == want


def test_tensor_scatter_nd_update_repeated_index_gradients():
    # the overwritten update gets no gradient (finite differences agree; TF's rule gives it one)
    idx = tf.constant([[2], [0], [2]])
    check_grads(lambda t, u: tf.tensor_scatter_nd_update(t, idx, u), [rng.standard_normal((3, 2)),
                                                                        rng.standard_normal((3, 2))])


def test_scatter_updates_must_have_tfs_shape():
    C = tf.constant
    z23 = C(np.zeros((2, 3), np.float32))
    # TF 2.21: InvalidArgumentError for each ("The inner 1 dimensions of output.shape=[2,3] must match
    # the inner 1 dimensions of updates.shape=[1,2]", "Dimensions [0,1) of indices[shape=[2,1]] = 2
    # must match dimensions [0,1) of updates[shape=[1]] = 1"); scatter_nd broadcast [1.0] to [1, 1, 0]
    calls = [
        ("tensor_scatter_nd_add", lambda t, i, u: tf.tensor_scatter_nd_add(t, i, u), z23, C([[0]]), C([[1.0, 2.0]])),
        ("tensor_scatter_nd_add", lambda t, i, u: tf.tensor_scatter_nd_add(t, i, u), z23, C([[0]]), C([1.0])),
        ("tensor_scatter_nd_sub", lambda t, i, u: tf.tensor_scatter_nd_sub(t, i, u), z23, C([[0, 1]]), C([[1.0]])),
        ("tensor_scatter_nd_update", lambda t, i, u: tf.tensor_scatter_nd_update(t, i, u), z23, C([[0]]), C([[1.0]])),
        ("tensor_scatter_nd_update", lambda t, i, u: tf.tensor_scatter_nd_update(t, i, u), C([1., 1., 1.]),
         C([[0], [1]]), C([5.0])),
        ("scatter_nd", lambda t, i, u: tf.scatter_nd(i, u, [3]), z23, C([[0], [1]]), C([1.0])),
    ]
    for op, f, t, i, u in calls:
        for g in (f, tf.function(f)):
            try:
                g(t, i, u)
            except tf.errors.InvalidArgumentError as e:
                assert op in str(e) and "need updates of shape" in str(e), str(e)
            else:
                raise AssertionError(f"{op}: updates of shape {u.shape} accepted")
    # TF 2.21: [[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]]
    assert tf.scatter_nd(C([[0], [1]]), C([[1.0, 2.0], [3.0, 4.0]]), [3, 2]).numpy().tolist() == \
        [[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]]


def test_linspace_array_bounds_and_bad_num():
    C = tf.constant
    # TF 2.21: [[0.0, 1.0], [0.5, 2.0], [1.0, 3.0]] and, along axis -1, [[0.0, 0.5, 1.0], [1.0, 2.0, 3.0]]
    r = tf.linspace(C([0.0, 1.0]), C([1.0, 3.0]), 3)
    assert r.dtype == tf.float32 and r.numpy().tolist() == [[0.0, 1.0], [0.5, 2.0], [1.0, 3.0]]
    assert tf.linspace(C([0.0, 1.0]), C([1.0, 3.0]), 3, axis=-1).numpy().tolist() == [[0.0, 0.5, 1.0], [1.0, 2.0, 3.0]]
    # TF 2.21: InvalidArgumentError ("Requires start <= limit when delta > 0: 1/-1")
    for num in (-1, -2):
        try:
            tf.linspace(C(0.0), C(1.0), num)
        except tf.errors.InvalidArgumentError as e:
            assert "linspace" in str(e)
        else:
            raise AssertionError("linspace(num < 0) accepted")
    # TF 2.21: [2.0] and shape (0,)
    assert tf.linspace(C(2.0), C(5.0), 1).numpy().tolist() == [2.0]
    assert tf.linspace(C(2.0), C(5.0), 0).shape == (0,)
