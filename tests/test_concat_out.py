"""concat into a planned buffer (compiled code): the native column loop for two
C-ordered float matrices (a critic's concat(state, action)), NumPy's concatenate
into the buffer otherwise; the same values as eager in every case."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.primitives import shape as S
from tapeflow.util import gemm_kernels

pytest.importorskip("numba")


def _critic_input(s, a, w):
    x = tf.concat([s, a], axis=1)
    return tf.matmul(x, w), x * 2.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_two_matrices_joined_by_columns_take_the_native_loop(dtype, monkeypatch):
    calls = []
    real = gemm_kernels.kernels()

    def counted(a, b, out):
        calls.append(out.shape)
        return real[3](a, b, out)

    monkeypatch.setattr(gemm_kernels, "kernels", lambda: real[:3] + (counted,))
    rs = np.random.default_rng(0)
    w = tf.constant(rs.standard_normal((23, 8)).astype(dtype))
    f = tf.function(_critic_input)
    for seed in (1, 2):  # a second call with other values: nothing left from the first in the buffer
        rs = np.random.default_rng(seed)
        s = tf.constant(rs.standard_normal((64, 17)).astype(dtype))
        a = tf.constant(rs.standard_normal((64, 6)).astype(dtype))
        want = [t.numpy() for t in _critic_input(s, a, w)]
        got = [t.numpy() for t in f(s, a, w)]
        for g, x in zip(got, want):
            np.testing.assert_array_equal(g, x)
    assert calls == [(64, 23), (64, 23)]


@pytest.mark.parametrize("case", ["three", "rows", "int", "transposed", "mixed"])
def test_other_concats_go_through_numpy_into_the_buffer(case):
    rs = np.random.default_rng(3)
    m = rs.standard_normal((12, 5)).astype(np.float32)
    ops, axis = {
        "three": ([m, m[:, :2] * 3, m[:, 1:]], 1),
        "rows": ([m, m[:4] + 1], 0),
        "int": ([np.arange(60, dtype=np.int32).reshape(12, 5)] * 2, 1),
        "transposed": ([m, np.ascontiguousarray(m.T).T], 1),   # an F-ordered operand
        "mixed": ([m, m.astype(np.float64)], 1),
    }[case]

    def g(*xs):
        ts = list(xs)
        if case == "transposed":  # made inside, so the kernel sees the transposed view
            ts[1] = tf.transpose(tf.transpose(xs[1]) * 1.0)
        return tf.concat(ts, axis=axis) * 2

    args = [tf.constant(x) for x in ops]
    if case == "mixed":
        with pytest.raises(Exception):
            g(*args)
        return
    want = g(*args).numpy()
    got = tf.function(g)(*args).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_concat_record_has_a_buffer_kernel():
    out = np.full((3, 5), np.nan, np.float32)
    a, b = np.ones((3, 2), np.float32), np.zeros((3, 3), np.float32)
    assert S.concat_p.impl_out(out, a, b, axis=1) is out
    np.testing.assert_array_equal(out, np.concatenate([a, b], axis=1))
