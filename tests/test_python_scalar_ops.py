"""The python backend runs arithmetic on 0-d float32/float64 values as Python operators
on NumPy scalars (the records' lowerings["python"]): the same bits and dtypes as the
kernels (an optimizer's bias-correction chain), anything else through the kernel."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf


def _chain(b1t, b2t, lr):
    b1 = b1t * 0.9
    b2 = b2t * 0.999
    step = lr / (1.0 - b1)
    sc2 = tf.sqrt(1.0 - b2)
    return step, sc2, -(step - sc2) + b1 * 3, b1 / b2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scalar_chain_inline_matches_eager_bits(dtype):
    args = [tf.constant(np.array(v, dtype)) for v in (0.9 ** 7, 0.999 ** 7, 3e-4)]
    want = [t.numpy() for t in _chain(*args)]
    f = tf.function(_chain, backend="python")
    got = [t.numpy() for t in f(*args)]
    src = f.get_concrete_function(*args).compiled.__tapeflow_source__
    assert " * 0.9" in src and "1.0 - " in src and " / " in src, src
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == dtype
        np.testing.assert_array_equal(g, w)
    # and again on the NumPy scalars the first call's results are (a variable's next value)
    got2 = [t.numpy() for t in f(*[tf.constant(np.asarray(x)) for x in want[:3]])]
    want2 = [t.numpy() for t in _chain(*[tf.constant(np.asarray(x)) for x in want[:3]])]
    for g, w in zip(got2, want2):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_other_dtypes_and_arrays_call_the_kernel(dtype):
    def f(a, b):
        return a * b + a, a / b
    a, b = tf.constant(np.array(3, dtype)), tf.constant(np.array(2, dtype))
    want = [t.numpy() for t in f(a, b)]
    fn = tf.function(f, backend="python")
    got = [t.numpy() for t in fn(a, b)]
    src = fn.get_concrete_function(a, b).compiled.__tapeflow_source__
    assert " * " not in src and " / " not in src, src
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_division_by_zero_gives_inf_as_the_kernel():
    def f(a, b):
        return a / b, -a / b
    a, b = tf.constant(np.float32(1.0)), tf.constant(np.float32(0.0))
    with np.errstate(divide="ignore"):
        got = [t.numpy() for t in tf.function(f, backend="python")(a, b)]
    assert got[0] == np.inf and got[1] == -np.inf and got[0].dtype == np.float32
