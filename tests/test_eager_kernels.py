"""Kernels that take a faster route than the plain NumPy call on the eager hot
paths (core/primitives/elementwise.py) give the plain call's exact bits.

* ``_select_kernel``: the relu/maximum/minimum/where gradients call it with one
  branch the literal 0. It must give np.where's bits: the selected value's bits
  (NaN payloads, -0.0, inf included), +0.0 where unselected, never a leak of the
  unselected branch.
* maximum/minimum against the literal 0 (relu) run on an array of zeros: the
  same elements as np.maximum(x, 0), NaN and signed-zero ties included.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.primitives import elementwise as E
from tapeflow.core.primitives.elementwise import _select_kernel

SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.25, 1e-40]


def _bits(a):
    a = np.asarray(a)
    return a.view({2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shapes", [((7, 5), (7, 5)), ((7, 5), (5,)), ((1, 5), (7, 5)), ((), (3,)), ((), ())])
def test_zero_branch_forms_match_np_where_bit_for_bit(dtype, shapes):
    cshape, vshape = shapes
    rs = np.random.default_rng(0)
    c = rs.random(cshape) < 0.5
    if c.ndim == 0:
        c = np.asarray(True)
    v = rs.choice(np.array(SPECIAL, dtype), size=vshape)
    v = np.asarray(v, dtype)
    for args in [(c, v, 0), (c, 0, v), (c, v, 0.0), (c, 0.0, v)]:
        got = _select_kernel(*args)
        want = np.where(*args)
        assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape
        assert np.array_equal(_bits(got), _bits(want)), args


def test_unselected_nan_and_inf_never_leak_and_zero_is_positive():
    g = np.array([np.nan, np.inf, -np.inf, -0.0, 3.0], np.float32)
    c = np.array([False, False, False, False, True])
    out = _select_kernel(c, g, 0)
    assert np.array_equal(_bits(out), _bits(np.array([0, 0, 0, 0, 3.0], np.float32)))
    out = _select_kernel(~c, 0, g)
    assert np.array_equal(_bits(out), _bits(np.array([0, 0, 0, 0, 3.0], np.float32)))


def test_a_strided_operand_and_a_negative_zero_literal_take_np_where_semantics():
    g = np.arange(20, dtype=np.float32).reshape(4, 5)[:, ::2]  # not contiguous
    c = g > 4
    assert np.array_equal(_bits(_select_kernel(c, g, 0)), _bits(np.where(c, g, 0)))
    # -0.0 is not the +0.0 the integer forms produce: np.where handles it
    assert np.array_equal(_bits(_select_kernel(c, g, -0.0)), _bits(np.where(c, g, -0.0)))
    assert np.array_equal(_bits(_select_kernel(c, -0.0, g)), _bits(np.where(c, -0.0, g)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", ["maximum", "minimum"])
@pytest.mark.parametrize("zero", [0, 0.0, -0.0])
def test_extremum_against_the_zero_literal_matches_the_ufunc_bit_for_bit(dtype, name, zero):
    ufunc = getattr(np, name)
    kernel = getattr(E, name + "_p").impl
    rs = np.random.default_rng(1)
    for shape in [(64, 40), (3000,), (5,)]:  # above and below the size where the zeros are used
        x = rs.choice(np.array(SPECIAL, dtype), size=shape).astype(dtype)
        for args in [(x, zero), (zero, x), (x[..., ::2], zero)]:
            got, want = kernel(*args), ufunc(*args)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(_bits(got), _bits(want)), (shape, args[1] is zero)
        out = np.empty_like(x)  # the compiled tier's form: into a planned buffer
        assert getattr(E, name + "_p").impl_out(out, x, zero) is out
        assert np.array_equal(_bits(out), _bits(ufunc(x, zero)))


def test_relu_and_its_gradient_keep_tf_semantics_through_the_fast_kernels():
    x = np.array([[np.nan, -1.0, -0.0, 0.0, 2.0, np.inf, -np.inf] * 200], np.float32)
    t = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = tf.nn.relu(t)
    g = tape.gradient(y, t).numpy()
    assert np.array_equal(_bits(y.numpy()), _bits(np.maximum(x, 0)))
    # relu'(x) is 1 only where x > 0 (0 at the tie x == 0, as TF; NaN compares false)
    assert np.array_equal(_bits(g), _bits(np.where(x > 0, np.float32(1), np.float32(0))))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, ">i4", ">i8"])
def test_gather_bounds_check_catches_every_out_of_range_entry_in_one_pass(dtype):
    # the check reads signed indices as unsigned (a negative one is then too large);
    # every integer dtype and byte order must still reject -1 and dim, and accept 0 and dim-1
    from tapeflow.errors import InvalidArgumentIndexError
    params = tf.constant(np.arange(5, dtype=np.float32) * 10)
    ok = np.array([0, 4, 2], dtype=dtype)
    assert tf.gather(params, ok).numpy().tolist() == [0.0, 40.0, 20.0]
    bad = [[0, 5]] + ([[-1, 2], [3, -128]] if np.dtype(dtype).kind == "i" else [])
    for b in bad:
        with pytest.raises(InvalidArgumentIndexError, match="out of bounds"):
            tf.gather(params, np.array(b, dtype=dtype))


def test_the_cached_zero_operands_stay_zero_read_only_and_bounded():
    E._ZEROS.clear()
    x = np.random.default_rng(2).standard_normal((64, 40)).astype(np.float32)
    out = np.empty_like(x)
    E.maximum_p.impl_out(out, x, 0)
    E.maximum_p.impl(x, 0)
    (z,) = E._ZEROS.values()
    assert not z.flags.writeable and not z.any()
    for n in range(E._ZEROS_MAX_SHAPES + 3):  # many shapes: the table is emptied, never grows past its bound
        E.minimum_p.impl(np.ones((n + 2, 1024), np.float64), 0)
        assert len(E._ZEROS) <= E._ZEROS_MAX_SHAPES
    big = np.ones(E._ZEROS_MAX_BYTES // 4 + 1, np.float32)  # past the byte bound: fresh zeros, not kept
    E._ZEROS.clear()
    assert np.array_equal(E.maximum_p.impl(-big, 0), np.zeros_like(big)) and not E._ZEROS


def _special_matrix(rs, shape, dtype):
    x = rs.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    idx = rs.choice(flat.size, size=min(flat.size, 64), replace=False)
    flat[idx] = rs.choice(np.array(SPECIAL, dtype), size=idx.size)
    # NaNs with distinct payloads and signs: a sum of two NaNs keeps the first's payload
    u = np.uint32 if dtype == np.float32 else np.uint64
    nans = np.array([0x7FC00011, 0xFFC00022] if dtype == np.float32
                    else [0x7FF8000000000033, 0xFFF8000000000044], u).view(dtype)
    k = idx[:max(2, idx.size // 8)]
    flat[k] = np.resize(nans, k.size)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(256, 256), (200, 150), (32, 32), (256, 6)])
def test_bias_add_native_loop_matches_np_add_bit_for_bit(dtype, shape, monkeypatch):
    # add's kernel runs a new (m, n) + (n,) result by a native loop (_bias_add): NaN
    # payloads (both operands NaN: x's payload), -0.0 + 0.0, infinities as np.add
    import numba  # noqa: F401  (the loop is compiled once numba is imported)
    rs = np.random.default_rng(1)
    x = _special_matrix(rs, shape, dtype)
    b = _special_matrix(rs, (1, shape[1]), dtype)[0]
    x[0, 0] = b[0] = -0.0                     # -0.0 + -0.0 is -0.0 (a + 0.0 would make it +0.0)
    x[1, 1], b[1] = np.inf, -np.inf           # inf - inf: NaN
    assert E._bias_add(x, b) is not None      # the native loop ran (not NumPy's fallback)
    calls = []
    real = E._bias_add
    monkeypatch.setattr(E, "_bias_add", lambda x, b: calls.append(1) or real(x, b))
    tx, tb = tf.constant(x), tf.constant(b)
    with np.errstate(invalid="ignore"):
        want = np.add(x, b)
        got = E._bias_add_kernel(x, b)
        # the first call fills the rule cache (np.add); later ones take bind's fast path
        # with the kernel add's record specialized for the signature
        eager = [(tx + tb).numpy() for _ in range(3)]
        ops = tf.add(tx, tf.Variable(b)).numpy()
    assert len(calls) >= 4, "the eager bias add did not take the native loop"
    for r in [got, ops] + eager:
        assert r.dtype == want.dtype and r.shape == want.shape
        assert np.array_equal(_bits(r), _bits(want))


def test_bias_add_falls_back_to_numpy_where_the_loop_does_not_apply():
    import numba  # noqa: F401
    rs = np.random.default_rng(2)
    x = rs.standard_normal((64, 40)).astype(np.float32)
    b = rs.standard_normal(40).astype(np.float32)
    assert E._bias_add(x[:, ::2], b[::2]) is None         # strided rows
    assert E._bias_add(x, b[::-1].copy()[::-1]) is None   # a reversed (negative-stride) bias
    assert E._bias_add(x.astype(np.float16), b.astype(np.float16)) is None
    assert E._bias_add(x[:, :1].copy(), b[:1]) is None    # one column: NumPy's contiguous loop
    assert E._bias_add(x, b.astype(np.float64)) is None   # mixed dtypes: NumPy promotes
    for args in [(x[:, ::2], b[::2]), (x, b[::-1]), (x[:, :1].copy(), b[:1])]:
        assert np.array_equal(_bits(E._bias_add_kernel(*args)), _bits(np.add(*args)))
    # only a bias add's signature is specialized: every other add calls np.add as it is
    from tapeflow.core.aval import Aval
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    assert E._add_specialize(Aval((64, 40), f32), Aval((40,), f32)) is E._bias_add_kernel
    for sa, sb in [(((64, 40), f32), ((64, 40), f32)), (((40,), f32), ((64, 40), f32)), (((64, 1), f32), ((1,), f32)),
                   (((8, 8), f32), ((8,), f32)), (((64, 40), f32), ((40,), f64)), (((64, 40), np.dtype(np.int32)),
                                                                                    ((40,), np.dtype(np.int32)))]:
        assert E._add_specialize(Aval(*sa), Aval(*sb)) is None, (sa, sb)
    assert E.add_p.impl is np.add and not E.add_p.aliases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eager_outer_product_native_loop_matches_numpy_bit_for_bit(dtype, monkeypatch):
    # a (m, 1) @ (1, n) product (an output layer's input gradient g @ W.T in the lean
    # backward) takes gemm_kernels' outer loop with no out= once numba is imported
    import numba  # noqa: F401
    from tapeflow.util import gemm_kernels, threads
    calls = []
    real = gemm_kernels.kernels
    monkeypatch.setattr(gemm_kernels, "kernels", lambda: calls.append(1) or real())
    rs = np.random.default_rng(3)
    g = _special_matrix(rs, (256, 1), dtype)
    w = _special_matrix(rs, (256, 1), dtype)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        # the broadcasting multiply's bits, NaN payloads and -0.0 included (np.matmul's
        # own k=1 sum differs from it there: x * -0.0 is +0.0 in np.matmul)
        want = np.multiply(g, w.T)
        got = threads.matmul(g, w.T)
    assert calls, "the eager outer product did not take the native loop"
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(_bits(got), _bits(want))
    # through the lean backward: a one-unit output layer's input gradient
    x = tf.constant(rs.standard_normal((64, 32)).astype(dtype))
    v = tf.Variable(rs.standard_normal((32, 1)).astype(dtype))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.matmul(x, v) * 3.0)
    gx = tape.gradient(y, x).numpy()
    assert np.array_equal(_bits(gx), _bits(np.multiply(np.full((64, 1), 3.0, dtype), v.numpy().T)))
