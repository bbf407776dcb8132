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
from tapeflow.core.tensor import _own_array, _own_arrays, _sole_array
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


def test_own_arrays_keeps_exactly_the_arrays_own_array_keeps():
    """_own_arrays (compiled code's one call per call for all its in-place variables)
    must copy exactly where _own_array would, array by array, and leave every holder
    its old values."""
    def case(kind):
        v = tf.Variable(np.zeros((128, 64), np.float32))
        held = None
        if kind == "sole":
            v._v = np.ones((128, 64), np.float32)
        elif kind == "held":
            v._v = held = np.ones((128, 64), np.float32)
        elif kind == "placed":
            v._v = placement.copy(np.ones((128, 64), np.float32))
        elif kind == "placed+view":
            v._v = placement.copy(np.ones((128, 64), np.float32))
            held = v._v[:2]
        elif kind == "placed+buffer":
            v._v = placement.copy(np.ones((128, 64), np.float32))
            held = v._v.base
        elif kind == "shared buffer":
            base = np.ones(2 * 128 * 64, np.float32)
            v._v, held = base[:8192].reshape(128, 64), base[8192:].reshape(128, 64)
            del base
        elif kind == "fortran":
            v._v = np.asfortranarray(np.ones((128, 64), np.float32))
        elif kind == "read-only":
            v._v = np.ones((128, 64), np.float32)
            v._v.flags.writeable = False
        elif kind == "bytes base":
            v._v = np.frombuffer(np.ones((128, 64), np.float32).tobytes(), np.float32).reshape(128, 64)
        return v, held

    kinds = ["sole", "held", "placed", "placed+view", "placed+buffer", "shared buffer", "fortran",
             "read-only", "bytes base"]
    expect_kept = {"sole", "placed"}
    made = [case(k) for k in kinds]
    snapshots = [None if held is None else held.copy() for _, held in made]
    # what _own_array would do, without doing it
    would_keep = [_sole_array(v) and v._v.flags.c_contiguous and v._v.flags.writeable for v, _ in made]
    assert {k for k, keep in zip(kinds, would_keep) if keep} == expect_kept
    before = [id(v._v) for v, _ in made]
    _own_arrays(tuple(v for v, _ in made))
    for k, (v, held), snap, was, keep in zip(kinds, made, snapshots, before, would_keep):
        assert (id(v._v) == was) == keep, k
        assert v._v.flags.c_contiguous and v._v.flags.writeable, k
        np.testing.assert_array_equal(v._v, 1.0, err_msg=k)
        v._v[...] = 7.0
        if held is not None:
            np.testing.assert_array_equal(held, snap, err_msg=k)
    # two variables holding one array: the first gets a copy, the second keeps it
    a, b = tf.Variable(np.zeros(4, np.float32)), tf.Variable(np.zeros(4, np.float32))
    a._v = b._v = np.ones(1000, np.float32)
    shared = id(b._v)
    _own_arrays((a, b))
    assert id(a._v) != shared and id(b._v) == shared
    # and a kept array stays kept on the next call (the compiled code calls it every time)
    again = id(b._v)
    _own_arrays((a, b))
    assert id(b._v) == again
