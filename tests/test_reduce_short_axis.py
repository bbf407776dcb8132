"""reduce_max / reduce_min over a short last axis (a DQN's max over its actions) run as a
chain of column ufuncs: the same values as NumPy's reduce, NaN, signed zeros and integer
dtypes included, eagerly and compiled."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.primitives.reductions import SHORT_LAST_AXIS


def _input(dtype, k):
    rs = np.random.default_rng(k)
    x = (rs.standard_normal((6, k)) * 5).astype(dtype)
    if np.dtype(dtype).kind == "f" and k >= 3:
        x[1, 2] = np.nan
        x[2, :] = 0.0
        x[2, 1] = -0.0
        x[3, 0] = -np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("k", [2, 3, 4, SHORT_LAST_AXIS, SHORT_LAST_AXIS + 1])
@pytest.mark.parametrize("op,ref", [(tf.reduce_max, np.maximum), (tf.reduce_min, np.minimum)])
def test_short_last_axis_matches_numpy(dtype, k, op, ref):
    x = _input(dtype, k)
    want = ref.reduce(x, axis=1)
    f = tf.function(lambda a: op(a, axis=1))
    for got in (op(tf.constant(x), axis=1).numpy(), f(tf.constant(x)).numpy()):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got.astype(float)), np.signbit(want.astype(float)))
