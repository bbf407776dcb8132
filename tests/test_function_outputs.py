"""A compiled function's output structure (ConcreteFunction's generated packer): the
same nesting, container types, dict key order and non-tensor leaves as the traced
Python function returns, with every tensor leaf a fresh Tensor (as tf.function)."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import tapeflow as tf

Pair = collections.namedtuple("Pair", "first second")


class MyList(list):
    pass


def _assert_same(got, want, path="out"):
    assert type(got) is type(want), f"{path}: {type(got).__name__} != {type(want).__name__}"
    if isinstance(want, dict):
        assert list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            _assert_same(got[k], want[k], f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{path}[{i}]")
    elif isinstance(want, tf.Tensor):
        assert got.dtype == want.dtype and got.shape == want.shape, path
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=path)
    else:
        assert got == want, path


STRUCTURES = {
    "single": lambda x: x * 2.0,
    "tuple": lambda x: (x + 1.0, x * 2.0),
    "one-tuple": lambda x: (x + 1.0,),
    "list in tuple": lambda x: (tf.reduce_sum(x), [x * 2.0, x - 1.0, x * 3.0]),
    # keys out of sorted order: the values are taken in sorted-key order, the dict keeps its own
    "dict": lambda x: {"b": x + 1.0, "a": x * 2.0, "c": {"z": x, "y": x - 2.0}},
    "int keys": lambda x: {2: x + 1.0, 1: x * 2.0},
    "namedtuple": lambda x: Pair(x + 1.0, [x * 2.0, None]),
    "OrderedDict": lambda x: collections.OrderedDict([("q", x * 2.0), ("p", x + 1.0)]),
    "list subclass": lambda x: MyList([x + 1.0, x * 2.0]),
    "non-tensor leaves": lambda x: (x + 1.0, None, "label", [], {}, ()),
    "None": lambda x: None,
}


@pytest.mark.parametrize("name", list(STRUCTURES))
def test_compiled_outputs_have_the_python_structure(name):
    fn = STRUCTURES[name]
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    want = fn(x)
    f = tf.function(fn)
    for call in range(3):  # the trace's call, then the cached fast path
        got = f(x)
        _assert_same(got, want)


def test_each_call_returns_new_tensors():
    f = tf.function(lambda x: (x + 1.0, {"k": x * 2.0}))
    x = tf.constant([1.0, 2.0])
    a, b = f(x), f(x)
    assert a[0] is not b[0] and a[1]["k"] is not b[1]["k"]
    np.testing.assert_array_equal(a[0].numpy(), b[0].numpy())


def test_a_python_number_returned_comes_back_as_a_tensor():
    f = tf.function(lambda x: (x + 1.0, 3))
    out = f(tf.constant([1.0]))
    assert isinstance(out[1], tf.Tensor) and out[1].dtype == tf.int32 and int(out[1]) == 3
