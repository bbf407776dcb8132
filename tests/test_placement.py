"""util/placement: large arrays placed apart within a 4 KiB page (fused loops
streaming through several arrays at one page offset stall in the CPU's 4K
aliasing check). Placed arrays are views of a private buffer; ``_sole_array``
counts them as their tensor's own exactly when nothing else can reach the
memory, and compiled code moves its in-place variables' arrays to placed ones
at its first call, values unchanged."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.tensor import _own_array, _sole_array
from tapeflow.util import placement


def test_successive_arrays_start_stagger_bytes_apart_in_a_page():
    arrays = [placement.empty((128, 64), np.float32) for _ in range(5)]
    offsets = [a.ctypes.data % placement.PAGE for a in arrays]
    steps = {(b - a) % placement.PAGE for a, b in zip(offsets, offsets[1:])}
    assert steps == {placement.STAGGER}, offsets
    for a in arrays:
        assert a.shape == (128, 64) and a.dtype == np.float32 and a.ctypes.data % 64 == 0
        assert a.flags.c_contiguous and a.flags.writeable
    small = placement.empty((8, 8), np.float32)
    assert small.base is None   # below MIN_BYTES: malloc's array, no padding
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    c = placement.copy(x)
    assert c.base is not None and c.dtype == x.dtype
    np.testing.assert_array_equal(c, x)


def test_a_placed_array_is_its_tensors_own_until_something_else_holds_it():
    v = tf.Variable(np.zeros((128, 64), np.float32))
    v._v = placement.copy(np.ones((128, 64), np.float32))
    assert _sole_array(v)
    view = v._v[:2]                # another view of the same memory
    assert not _sole_array(v)
    del view
    assert _sole_array(v)
    raw = v._v.base                # the buffer itself, held by a name
    assert not _sole_array(v)
    del raw
    held = v._v                    # the array, held by a name
    assert not _sole_array(v)
    # _own_array then gives the variable a copy to write; the held array keeps its values
    own = _own_array(v)
    assert own is not held and own is v._v
    own[...] = 5.0
    np.testing.assert_array_equal(held, 1.0)


def test_a_view_of_a_shared_buffer_is_not_sole():
    base = np.zeros(2 * 128 * 64, np.float32)
    v = tf.Variable(np.zeros((128, 64), np.float32))
    v._v = base[:128 * 64].reshape(128, 64)
    del base                       # the other half's view is gone too: only v's view holds it
    assert _sole_array(v)
    base2 = np.zeros(2 * 128 * 64, np.float32)
    a, b = base2[:8192].reshape(128, 64), base2[8192:].reshape(128, 64)
    del base2
    v._v = a
    del a
    assert not _sole_array(v)      # b still reaches the buffer
    del b
    assert _sole_array(v)


def test_fused_in_place_updates_place_their_variables_at_the_first_call():
    """The fused tier (a GEMM keeps the graph in the python backend) updates p, m and v
    in place; its first call moves their arrays to placed copies."""
    pytest.importorskip("numba")
    rs = np.random.default_rng(0)
    init = [rs.standard_normal((128, 64)).astype(np.float32) for _ in range(3)]
    g = tf.constant(rs.standard_normal((128, 64)).astype(np.float32))

    def make():
        p, m, v = (tf.Variable(a.copy()) for a in init)

        def step(lr):
            m.assign(0.9 * m + 0.1 * g)
            v.assign(0.999 * v + 0.001 * g * g)
            p.assign_sub(lr * m / (tf.sqrt(tf.abs(v)) + 1e-7))
            return tf.reduce_sum(tf.matmul(g * lr, tf.transpose(g)))  # (a GEMM: the python backend)
        return (p, m, v), step

    (pe, me, ve), step_e = make()
    (pc, mc, vc), step_c = make()
    lr = tf.constant(np.float32(1e-2))
    f = tf.function(step_c, jit_compile=True)
    snapshot = pc.numpy()          # a user's read: the first call must not write over it
    before = snapshot.copy()
    for _ in range(3):
        step_e(lr)
        f(lr)
    np.testing.assert_array_equal(snapshot, before)
    for a, b in zip((pc, mc, vc), (pe, me, ve)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    cf = f.get_concrete_function(lr)
    assert cf.backend == "python+fused"
    assert "_place_owned" in cf.source()
    arrays = [x._v for x in (pc, mc, vc)]
    assert all(a.base is not None for a in arrays), "the variables' arrays were not placed"
    offsets = {a.ctypes.data % placement.PAGE for a in arrays}
    assert len(offsets) == 3, offsets
    # later calls keep (and update in place) the placed arrays (once nothing else holds them)
    ids = [a.ctypes.data for a in arrays]
    del arrays
    f(lr)
    assert [x._v.ctypes.data for x in (pc, mc, vc)] == ids
