"""Wave 22 (api22): tf.ragged.cross/cross_hashed/stack_dynamic_partitions, tf.ragged_fill_empty_rows
(and _grad): values, dtypes, shapes and errors against TF 2.21's (the literals below were printed by TF 2.21 CPU on the same inputs),
eager == inside tapeflow.function, and gradients where the op has them."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

from composite_results import eager_equals_compiled as _both, sparse_parts as _sp


_A = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["a", "b", "c"], [2, 2])
_B = tf.SparseTensor([[0, 0], [1, 0]], ["d", "e"], [2, 1])
_C = tf.constant([["f"], ["g"]])


_R1, _R2 = tf.ragged.constant([["a"], ["b", "c"]]), tf.ragged.constant([["d"], ["e"]])


@pytest.mark.parametrize("call,want", [
    # TF 2.21: ragged inputs keep their order
    (lambda: tf.ragged.cross([_R1, _R2, _C]), [[b"a_X_d_X_f"], [b"b_X_e_X_g", b"c_X_e_X_g"]]),
    (lambda: tf.ragged.cross([_C, _R1, _R2]), [[b"f_X_a_X_d"], [b"g_X_b_X_e", b"g_X_c_X_e"]]),
    (lambda: tf.ragged.cross([_C, _B, _R1]), [[b"f_X_d_X_a"], [b"g_X_e_X_b", b"g_X_e_X_c"]]),
    (lambda: tf.ragged.cross_hashed([_R1, _R2, _C]), [[5684865645872741371], [1392610987527938559, 6629649657679214674]]),
    (lambda: tf.ragged.cross_hashed([_C, _R1, _R2]), [[668872003551397823], [3831949739621884050, 2078151758956090773]]),
    (lambda: tf.ragged.cross_hashed([_R1, _R2, _C], num_buckets=100), [[78], [66, 74]]),
    (lambda: tf.ragged.cross_hashed([_R1, _R2, _C], num_buckets=100, hash_key=7), [[92], [29, 14]]),
    (lambda: tf.ragged.cross([tf.ragged.constant([[1, -2], []]), _R2]), [[b"1_X_d", b"-2_X_d"], []]),
    (lambda: tf.ragged.cross_hashed([tf.ragged.constant([[1, -2], []]), _R2]),
     [[8731989417520980377, 3336186047968960577], []]),
    (lambda: tf.ragged.cross([[["a"], ["b"]], _R1]), [[b"a_X_a"], [b"b_X_b", b"b_X_c"]]),
    (lambda: tf.ragged.cross_hashed([_R1], hash_key=2 ** 64 - 1), [[2741262347203640477],
                                                                 [6844236686185480983, 3131008316860942257]]),
    (lambda: tf.ragged.cross([]), []),
])
def test_ragged_cross_vs_tf(call, want):
    assert call().to_list() == want


def test_ragged_cross_traced():
    r1, r2 = tf.ragged.constant([["a"], ["b", "c"]]), tf.ragged.constant([["d"], ["e"]])
    assert _both(lambda x, y: tf.ragged.cross([x, y, _C]), r1, r2)[0] == [[b"a_X_d_X_f"], [b"b_X_e_X_g", b"c_X_e_X_g"]]
    assert _both(lambda x, y: tf.ragged.cross_hashed([x, y]), r1, r2)[1] == "int64"


@pytest.mark.parametrize("call,err,needle", [
    (lambda: tf.ragged.cross([tf.ragged.constant([[1.], [2.]]), _R2]), ValueError, "Unexpected dtype for inputs"),
    (lambda: tf.ragged.cross([tf.ragged.constant([[["a"]], [["b"]]])]), ValueError, "only supports inputs with rank=2"),
    (lambda: tf.ragged.cross([_R1, tf.constant([["a"], ["b"], ["c"]])]), InvalidArgumentError,
     "same batch dimension size"),
    (lambda: tf.ragged.cross([tf.constant(["a", "b"]), _R1]), InvalidArgumentError, "only supports inputs with rank=2"),
    (lambda: tf.ragged.cross_hashed([_R1], num_buckets=-1), InvalidArgumentError, "at least minimum 0"),
])
def test_ragged_cross_errors_as_tf(call, err, needle):
    with pytest.raises(err, match=needle):
        call()


# -- tf.ragged.stack_dynamic_partitions ----------------------------------------------------------------

@pytest.mark.parametrize("args,want", [
    # TF 2.21's values
    ((["a", "b", "c", "d", "e"], [3, 0, 2, 2, 3], 5), [[b"b"], [], [b"c", b"d"], [b"a", b"e"], []]),
    (([[1, 2], [3, 4], [5, 6]], [1, 0, 1], 3), [[[3, 4]], [[1, 2], [5, 6]], []]),
    (([[1, 2], [3, 4], [5, 6]], [[1, 0], [0, 0], [1, 2]], 3), [[2, 3, 4], [1, 5], [6]]),
    ((lambda: tf.ragged.constant([[1, 2], [3], [5, 6, 7]]), lambda: tf.ragged.constant([[1, 0], [0], [1, 2, 1]]), 3),
     [[2, 3], [1, 5, 7], [6]]),
    ((lambda: tf.ragged.constant([[1, 2], [3], [5, 6, 7]]), [1, 0, 1], 2), [[[3]], [[1, 2], [5, 6, 7]]]),
    (([1, 2], 1, 3), [[], [[1, 2]], []]),
    ((lambda: tf.zeros([0]), lambda: tf.zeros([0], tf.int32), 2), [[], []]),
])
def test_stack_dynamic_partitions_vs_tf(args, want):
    args = [a() if callable(a) else a for a in args]
    assert tf.ragged.stack_dynamic_partitions(*args).to_list() == want


def test_stack_dynamic_partitions_errors_and_traced():
    data = ["a", "b", "c", "d", "e"]
    with pytest.raises(InvalidArgumentError, match="less than num_partitions"):
        tf.ragged.stack_dynamic_partitions(data, [3, 0, 2, 2, 5], 5)
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        tf.ragged.stack_dynamic_partitions(data, [3, 0, -1, 2, 3], 5)
    with pytest.raises(ValueError, match="incompatible"):
        tf.ragged.stack_dynamic_partitions(data, [3, 0, 2], 5)
    with pytest.raises(ValueError, match="int32 or int64"):
        tf.ragged.stack_dynamic_partitions(data, [3., 0., 2., 2., 3.], 5)
    got = _both(lambda d, p: tf.ragged.stack_dynamic_partitions(d, p, 4), tf.constant([1., 2., 3., 4., 5.]),
                tf.constant([3, 0, 2, 2, 3]))
    assert got == ([[2.0], [], [3.0, 4.0], [1.0, 5.0]], "float32")
    with pytest.raises(InvalidArgumentError, match="less than num_partitions"):
        tf.function(lambda d, p: tf.ragged.stack_dynamic_partitions(d, p, 2))(tf.constant([1., 2.]), tf.constant([0, 5]))


# -- tf.ragged_fill_empty_rows / _grad -----------------------------------------------------------------

def _fill(ids, vals, n, d):
    r = tf.ragged_fill_empty_rows(tf.constant(ids, tf.int64), tf.constant(vals), tf.constant(n, tf.int64),
                                  tf.constant(d))
    return [x.numpy().tolist() for x in r]


def test_ragged_fill_empty_rows_vs_tf():
    # TF 2.21: (output_value_rowids, output_values, empty_row_indicator, reverse_index_map)
    assert _fill([0, 0, 2], [1., 2., 3.], 4, 9.) == [[0, 0, 1, 2, 3], [1., 2., 9., 3., 9.], [False, True, False, True],
                                                     [0, 1, 3]]
    assert _fill([2, 0, 0], [1., 2., 3.], 4, 9.) == [[0, 0, 1, 2, 3], [2., 3., 9., 1., 9.], [False, True, False, True],
                                                     [3, 0, 1]]
    assert _fill([], np.zeros(0, np.float32), 2, 9.) == [[0, 1], [9., 9.], [True, True], []]
    assert _fill([1], ["x"], 3, "z") == [[0, 1, 2], [b"z", b"x", b"z"], [True, False, True], [1]]
    r = tf.ragged_fill_empty_rows(tf.constant([], tf.int64), tf.constant([], tf.float32), tf.constant(0, tf.int64),
                                  tf.constant(9.))
    assert r.output_value_rowids.shape == (0, 1)          # TF 2.21's shape for no rows
    g = tf.ragged_fill_empty_rows_grad(tf.constant([0, 1, 3], tf.int64), tf.constant([1., 2., 3., 4., 5.]))
    assert g.d_values.numpy().tolist() == [1., 2., 4.] and float(g.d_default_value) == 8.0
    g = tf.ragged_fill_empty_rows_grad(tf.constant([0, 1], tf.int64), tf.constant([1, 2, 3]))
    assert g.d_values.numpy().tolist() == [1, 2] and int(g.d_default_value) == 3 and g.d_values.dtype.name == "int32"


@pytest.mark.parametrize("call,needle", [
    (lambda: tf.ragged_fill_empty_rows(tf.constant([0], tf.int32), tf.constant([1.]), tf.constant(2, tf.int64),
                                       tf.constant(9.)), "input #0"),
    (lambda: tf.ragged_fill_empty_rows(tf.constant([0], tf.int64), tf.constant([1.]), tf.constant(2, tf.int64),
                                       tf.constant(9)), "input #3"),
    (lambda: tf.ragged_fill_empty_rows(tf.constant([0, 5], tf.int64), tf.constant([1., 2.]), tf.constant(2, tf.int64),
                                       tf.constant(9.)), r"indices\(1, 0\) is invalid: 5 >= 2"),
    (lambda: tf.ragged_fill_empty_rows(tf.constant([0], tf.int64), tf.constant([[1., 2.]]), tf.constant(2, tf.int64),
                                       tf.constant(9.)), "values must be a vector"),
    (lambda: tf.ragged_fill_empty_rows(tf.constant([0], tf.int64), tf.constant([1.]), tf.constant(2, tf.int64),
                                       tf.constant([9.])), "default_value must be a scalar"),
    (lambda: tf.ragged_fill_empty_rows(tf.constant([0, 1], tf.int64), tf.constant([1.]), tf.constant(2, tf.int64),
                                       tf.constant(9.)), "must match the first dimension"),
    (lambda: tf.ragged_fill_empty_rows_grad(tf.constant([0, 7], tf.int64), tf.constant([1., 2.])),
     r"must be in \[0, 2\) but got 7"),
    (lambda: tf.ragged_fill_empty_rows_grad(tf.constant([0, 1], tf.int64), tf.constant([[1., 2.]])),
     "grad_values must be a vector"),
])
def test_ragged_fill_empty_rows_errors_as_tf(call, needle):
    with pytest.raises(InvalidArgumentError, match=needle):
        call()


def test_ragged_fill_empty_rows_traced_and_gradient():
    f = lambda i, v: tf.ragged_fill_empty_rows(i, v, tf.constant(4, tf.int64), tf.constant(9.))  # noqa: E731
    got = _both(lambda i, v: tuple(f(i, v)), tf.constant([2, 0, 0], tf.int64), tf.constant([1., 2., 3.]))
    assert got[1] == ([2., 3., 9., 1., 9.], "float32") and got[3] == ([3, 0, 1], "int64")
    x, d = tf.Variable([1., 2., 3.]), tf.Variable(9.)
    with tf.GradientTape() as t:
        o = tf.ragged_fill_empty_rows(tf.constant([0, 0, 2], tf.int64), x * 1., tf.constant(4, tf.int64), d * 1.)
        loss = tf.reduce_sum(o[1] * tf.constant([1., 2, 3, 4, 5]))
    gx, gd = t.gradient(loss, [x, d])
    # TF 2.21: d values [1, 2, 4]; d default = the filled slots' 3 + 5 (RaggedFillEmptyRowsGrad)
    assert gx.numpy().tolist() == [1., 2., 4.] and float(gd) == 8.0
