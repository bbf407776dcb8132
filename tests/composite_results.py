"""Helpers for tests of ops whose results are composite tensors (SparseTensor, RaggedTensor)."""
import tapeflow as tf


def sparse_parts(r):
    """A SparseTensor's indices, values, values' dtype name and dense shape, as lists."""
    return (r.indices.numpy().tolist(), r.values.numpy().tolist(), r.values.dtype.name,
            r.dense_shape.numpy().tolist())


def eager_equals_compiled(fn, *args):
    """fn's result eagerly and inside tapeflow.function (components as lists), asserted equal."""
    def flat(r):
        if isinstance(r, tf.SparseTensor):
            return sparse_parts(r)
        if isinstance(r, tf.RaggedTensor):
            return (r.to_list(), r.dtype.name)
        if isinstance(r, (tuple, list)):
            return tuple(flat(x) for x in r)
        return (r.numpy().tolist(), r.dtype.name)
    e = flat(fn(*args))
    c = flat(tf.function(fn)(*args))
    assert e == c
    return e
