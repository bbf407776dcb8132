"""tf.sparse cases shared by tests/tf_reference/make_sparse_reference.py (run under TF 2.21) and
tests/test_sparse.py (run under tapeflow): ``cases(tf)`` maps a name to a function of no arguments
whose result (a SparseTensor, a tensor, or a list of them) ``describe`` turns into plain lists."""
import numpy as np


def describe(tf, x):
    if isinstance(x, tf.SparseTensor):
        return {"indices": x.indices.numpy().tolist(), "values": x.values.numpy().tolist(),
                "dense_shape": x.dense_shape.numpy().tolist(), "dtype": x.dtype.name}
    if isinstance(x, (list, tuple)):
        return [describe(tf, v) for v in x]
    x = tf.convert_to_tensor(x)
    return {"value": x.numpy().tolist(), "dtype": x.dtype.name}


def cases(tf):
    S = tf.sparse.SparseTensor
    a = S([[0, 1], [1, 0]], [1., 2.], [2, 2])
    b = S([[0, 1], [1, 1]], [-1., 3.], [2, 2])
    big = S([[0, 3], [2, 4], [2, 9]], [15., 25., -5.], [3, 10])
    sp3 = S([[0, 1, 2], [1, 0, 0], [1, 2, 1]], [1., -2., 3.], [2, 3, 4])
    dense = np.arange(20, dtype=np.float32).reshape(10, 2)
    rows = np.array([[1., 2.], [3., 4.], [5., 6.]], np.float32)
    return {
        "from_dense": lambda: tf.sparse.from_dense([[1, 0, 0, 8], [0, 0, 0, 0], [0, 0, 3, 0]]),
        "from_dense_f": lambda: tf.sparse.from_dense(np.array([[0.5, 0], [0, -1.5]], np.float32)),
        "to_dense_default": lambda: tf.sparse.to_dense(big, default_value=-1.),
        "add": lambda: tf.sparse.add(a, b),
        "add_threshold": lambda: tf.sparse.add(a, b, threshold=2.5),
        "add_dense": lambda: tf.sparse.add(a, tf.ones([2, 2])),
        "matmul": lambda: tf.sparse.sparse_dense_matmul(big, dense),
        "matmul_adj_a": lambda: tf.sparse.sparse_dense_matmul(big, np.ones((3, 2), np.float32), adjoint_a=True),
        "matmul_adj_b": lambda: tf.sparse.sparse_dense_matmul(big, np.ones((2, 10), np.float32), adjoint_b=True),
        "matmul_dense_sparse": lambda: tf.sparse.sparse_dense_matmul(np.ones((2, 3), np.float32), big),
        "reduce_sum": lambda: tf.sparse.reduce_sum(big),
        "reduce_sum_ax1": lambda: tf.sparse.reduce_sum(big, axis=1),
        "reduce_sum_ax0_keep": lambda: tf.sparse.reduce_sum(big, axis=0, keepdims=True),
        "reduce_sum_3d": lambda: tf.sparse.reduce_sum(sp3, axis=[0, 2]),
        "reduce_max_ax1": lambda: tf.sparse.reduce_max(S([[0, 0], [0, 1], [2, 1]], [-1., -2., 4.], [3, 2]), axis=1),
        "reduce_max_neg": lambda: tf.sparse.reduce_max(tf.sparse.from_dense([-5, 0, -3])),
        "reorder": lambda: tf.sparse.reorder(S([[2, 4], [0, 3], [1, 1]], [25, 15, 5], [3, 10])),
        "reshape": lambda: tf.sparse.reshape(big, [-1, 5]),
        "reshape_3d": lambda: tf.sparse.reshape(sp3, [4, 6]),
        "transpose": lambda: tf.sparse.transpose(big),
        "transpose_perm": lambda: tf.sparse.transpose(sp3, [2, 0, 1]),
        "expand_dims": lambda: tf.sparse.expand_dims(big, 1),
        "expand_dims_neg": lambda: tf.sparse.expand_dims(big, -1),
        "slice": lambda: tf.sparse.slice(big, [1, 3], [5, 5]),
        "concat0": lambda: tf.sparse.concat(0, [a, b]),
        "concat1": lambda: tf.sparse.concat(1, [a, S([[1, 2]], [7.], [2, 3])]),
        "concat_expand": lambda: tf.sparse.concat(0, [a, big], expand_nonconcat_dims=True),
        "retain": lambda: tf.sparse.retain(big, [True, False, True]),
        "maximum": lambda: tf.sparse.maximum(a, b),
        "minimum": lambda: tf.sparse.minimum(a, b),
        "fill_empty_rows": lambda: tf.sparse.fill_empty_rows(S([[0, 1], [2, 0]], [1., 2.], [4, 2]), -1.),
        "softmax": lambda: tf.sparse.softmax(S([[0, 0], [0, 1], [2, 0]], [1., 2., 3.], [3, 2])),
        "mul_dense": lambda: a * tf.constant([[1.], [10.]]),
        "div_dense": lambda: big / 5.,
        "to_indicator": lambda: tf.sparse.to_indicator(S([[0, 0], [0, 1], [1, 0]], [1, 3, 2], [2, 2]), 4),
        "eye": lambda: tf.sparse.eye(2, 3),
        "split": lambda: tf.sparse.split(sp_input=S([[0, 1], [2, 0], [1, 3]], [1., 2., 3.], [3, 5]), num_split=2,
                                         axis=1),
        "map_values": lambda: tf.sparse.map_values(tf.multiply, big, big),
        "reset_shape": lambda: tf.sparse.reset_shape(big),
        "segment_sum": lambda: tf.sparse.segment_sum(rows, [0, 2, 1], [0, 0, 1]),
        "segment_mean": lambda: tf.sparse.segment_mean(rows, [0, 2, 1], [0, 0, 1]),
        "segment_sqrt_n": lambda: tf.sparse.segment_sqrt_n(rows, [0, 2, 1], [0, 0, 1]),
    }
