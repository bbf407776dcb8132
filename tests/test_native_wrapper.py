"""The native kernel's Python caller and its column sums: input arrays go to the kernel
as the caller holds them (it flattens them itself, and an array that is not C-ordered
or not writable gets a specialization that copies it), NumPy scalars as they are and
0-d arrays unboxed; widened column sums add each value into its column's float64 total
in row order. Checked against the reference interpreter and an explicit float64 sum."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.compiler.backends import numba_backend
from tapeflow.ir.interpreter import eval_graph

pytest.importorskip("numba")

F32 = np.float32


def _f(x, y, s):
    # no multiply feeds an add: the loop's values have the interpreter's bits
    h = tf.maximum(x - y, 0.0) * s
    return h, tf.reduce_sum(h, axis=0)


def _column_sums(h):
    """Each column's float32 values added in row order into a float64 total."""
    acc = np.zeros(h.shape[1], np.float64)
    for row in h:
        acc += row.astype(np.float64)
    return acc.astype(F32)


def _graph(shape):
    args = [tf.constant(np.ones(shape, F32)), tf.constant(np.ones(shape, F32)), tf.constant(F32(1))]
    return tf.function(_f, backend="interpreter").get_concrete_function(*args).graph


def test_kernel_takes_arrays_in_their_shapes_whatever_their_layout():
    graph = _graph((40, 24))
    run = numba_backend.try_compile(graph, "wrapped", required=True)
    # the caller passes input arrays on (no reshape per call); the kernel flattens them
    assert run.__tapeflow_wrapper__.split("_kernel(")[1].startswith("a0, a1, (a2 if a2.__class__ is ")
    rs = np.random.default_rng(0)
    x = rs.standard_normal((40, 24)).astype(F32)
    y = rs.standard_normal((40, 24)).astype(F32)
    readonly = x.copy()
    readonly.flags.writeable = False
    layouts = {"C": (x, y), "transposed view": (np.ascontiguousarray(x.T).T, y),
               "Fortran": (x, np.asfortranarray(y)), "read-only": (readonly, y)}
    for what, (a, b) in layouts.items():
        assert np.array_equal(a, x) and np.array_equal(b, y)
        for s in (F32(1.5), np.array(1.5, F32)):
            got = run(a, b, s)
            want = eval_graph(graph, [x, y, np.asarray(s)])
            np.testing.assert_array_equal(got[0], want[0], err_msg=what)
            np.testing.assert_array_equal(got[1], _column_sums(want[0]), err_msg=what)
            assert got[0].shape == (40, 24) and got[1].shape == (24,)
    # the inputs are read, never written
    np.testing.assert_array_equal(x, readonly)


def test_widened_column_sums_add_in_row_order_in_float64():
    """Values whose float32 running sum would lose them: a large first row, then rows of
    small values. A float32 accumulator (or NumPy's pairwise sum) gives other bits."""
    graph = _graph((64, 16))
    run = numba_backend.try_compile(graph, "colsums", required=True)
    x = np.full((64, 16), 1e-4, F32)
    x[0] = 3e4
    x[1:, ::3] = np.linspace(1e-3, 2.0, 63, dtype=F32)[:, None]
    y = np.zeros((64, 16), F32)
    got = run(x, y, F32(1.0))
    want = _column_sums(x)
    np.testing.assert_array_equal(got[1], want)
    assert not np.array_equal(want, np.add.reduce(x, axis=0, dtype=F32))  # the case tells them apart
