"""Wave 25: the ops wave 24 left differing under an input_signature's None batch (its NOT_YET list in
tests/test_dynamic_batch24.py) give eager's outcome with one trace for every batch size: bitcast,
keras.ops.nonzero, bincount with weights, dynamic_partition, strings.split/bytes_split of rank >= 2 and
tf.sets of dense tensors (which before raised inside every tapeflow.function). Eager is the reference
(tests/test_op_fuzz.py checks it against TF 2.21), plus TF's recorded values where noted."""
import numpy as np
import pytest

import tapeflow as tf


def _spec(x, none=(0,)):
    return tf.TensorSpec([None if i in none else d for i, d in enumerate(x.shape)], tf.as_dtype(x.dtype))


def _both(f, *args, none=(0,)):
    """f eagerly, and inside a tapeflow.function whose signature leaves the first argument's ``none`` dims None."""
    specs = [_spec(a, none if i == 0 else ()) for i, a in enumerate(args)]
    return f(*args), tf.function(f, input_signature=specs)(*args)


@pytest.mark.parametrize("x, to", [(np.arange(6, dtype=np.int64).reshape(2, 3) * 12345, tf.float16),
                                   (np.zeros(0, np.float32), tf.int32),
                                   (np.linspace(-2, 2, 6).astype(np.float16).reshape(2, 1, 3), tf.int16),
                                   (np.arange(8, dtype=np.int16).reshape(4, 2), tf.int32)])
def test_bitcast(x, to):
    # (before: the py_call reshaped to a static shape holding the None: TypeError)
    e, c = _both(lambda t: tf.bitcast(t, to), x)
    assert c.dtype == e.dtype and c.shape == e.shape
    np.testing.assert_array_equal(c.numpy().view(np.uint8), e.numpy().view(np.uint8))


def test_bitcast_of_an_unknown_last_dimension_is_checked_when_it_runs():
    f = tf.function(lambda t: tf.bitcast(t, tf.int32), input_signature=[tf.TensorSpec([2, None], tf.int16)])
    np.testing.assert_array_equal(f(np.ones((2, 2), np.int16)).numpy(), [65537, 65537])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot bitcast from 4 to 3"):
        f(np.ones((2, 3), np.int16))


def test_nonzero():
    x = np.array([[[0, 1, 2]], [[3, 0, 4]]], np.int8)
    for f in (tf.keras.ops.nonzero, tf.experimental.numpy.nonzero):
        e, c = _both(f, x)
        assert len(c) == 3
        for a, b in zip(e, c):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_bincount_with_weights():
    x, w = np.array([1, 5, 1, 3], np.int32), np.array([0.5, 1.5, 2.0, 4.0], np.float32)
    e, c = _both(lambda t, v: tf.math.bincount(t, weights=v), x, w)
    assert c.dtype == e.dtype
    np.testing.assert_array_equal(c.numpy(), e.numpy())
    np.testing.assert_array_equal(c.numpy(), [0, 2.5, 0, 4, 0, 1.5])
    f = tf.function(lambda t, v: tf.math.bincount(t, weights=v),
                    input_signature=[tf.TensorSpec([None], tf.int32), tf.TensorSpec([4], tf.float32)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="weights must have arr's shape"):
        f(x[:3], w)

    def grad(t, v):
        with tf.GradientTape() as g:
            g.watch(v)
            y = tf.reduce_sum(tf.math.bincount(t, weights=v) * tf.range(6, dtype=tf.float32))
        return g.gradient(y, v)
    e, c = grad(tf.constant(x), tf.constant(w)), tf.function(grad, input_signature=[
        tf.TensorSpec([None], tf.int32), tf.TensorSpec([4], tf.float32)])(x, w)
    assert (e is None) == (c is None)
    if e is not None:
        np.testing.assert_allclose(c.numpy(), e.numpy())


def test_dynamic_partition():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    p = np.array([1, 0, 1, 1], np.int32)
    e, c = _both(lambda t, q: tf.dynamic_partition(t, q, 2), x, p)
    for a, b in zip(e, c):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    e, c = _both(lambda t, q: tf.dynamic_partition(t, q, 2)[1], np.zeros(0, np.float16), np.zeros(0, np.int32))
    assert c.shape == e.shape == (0,) and c.dtype == e.dtype
    spec = [tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([4], tf.int32)]
    f = tf.function(lambda t, q: tf.dynamic_partition(t, q, 2), input_signature=spec)
    with pytest.raises(tf.errors.InvalidArgumentError, match="data.shape must start with partitions.shape"):
        f(x[:3], p)

    def grad(t, q):
        with tf.GradientTape() as g:
            g.watch(t)
            a, b = tf.dynamic_partition(t, q, 2)
            y = tf.reduce_sum(a * a) + 3.0 * tf.reduce_sum(b)
        return g.gradient(y, t)
    np.testing.assert_allclose(tf.function(grad, input_signature=spec)(x, p).numpy(),
                               grad(tf.constant(x), tf.constant(p)).numpy())


@pytest.mark.parametrize("x, f", [(np.array([[1.5, -2.25, 3.0], [4.0, 0.5, -1.0]], np.float32),
                                   lambda t: tf.strings.split(tf.strings.as_string(t), ".")),
                                  (np.array([[[-4, 3], [2, 1]], [[5, -6], [7, 8]]], np.int8),
                                   lambda t: tf.strings.bytes_split(tf.strings.as_string(t))),
                                  (np.zeros((2, 0), np.int16),
                                   lambda t: tf.strings.split(tf.strings.as_string(t), "-"))])
def test_string_splits_of_rank_two_and_more(x, f):
    # (before: from_uniform_row_length divided the unknown count of values: TypeError; rows of 0 raised)
    e, c = _both(f, x)
    assert c.shape.as_list()[1:] == e.shape.as_list()[1:]
    assert c.flat_values.numpy().tolist() == e.flat_values.numpy().tolist()
    for a, b in zip(e.nested_row_splits, c.nested_row_splits):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("spec, shape", [([None, 3, 2], [2, 3, 2, None]), ([2, None, 2], [2, None, 2, None]),
                                         ([2, 3, None], [2, 3, None, None]), ([None, None, None], None)])
def test_string_split_of_unknown_inner_dimensions(spec, shape):
    """An inner None (not only the batch): its rows have the run-time length. TF 2.21 returns the shapes
    given (an inner None stays None in the returned RaggedTensor's shape)."""
    x = np.array([[[1, -2], [3, 4], [5, 6]], [[7, 8], [9, -10], [0, 1]]], np.int32)
    f = lambda t: tf.strings.split(tf.strings.as_string(t), "-")
    e, c = f(x), tf.function(f, input_signature=[tf.TensorSpec(spec, tf.int32)])(x)
    if shape is not None:
        assert c.shape.as_list() == shape
    assert c.flat_values.numpy().tolist() == e.flat_values.numpy().tolist()
    for a, b in zip(e.nested_row_splits, c.nested_row_splits):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    x0 = np.zeros((2, 0, 3), np.int32)
    e, c = f(x0), tf.function(f, input_signature=[tf.TensorSpec([2, None, None], tf.int32)])(x0)
    for a, b in zip(e.nested_row_splits, c.nested_row_splits):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_from_uniform_row_length_traced():
    f = tf.function(lambda v: tf.RaggedTensor.from_uniform_row_length(v, 2).row_lengths(),
                    input_signature=[tf.TensorSpec([None], tf.int32)])
    np.testing.assert_array_equal(f(np.arange(6, dtype=np.int32)).numpy(), [2, 2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="5 values do not make rows of 2"):
        f(np.arange(5, dtype=np.int32))


_SETS = {"intersection": tf.sets.intersection, "union": tf.sets.union, "difference": tf.sets.difference,
         "b - a": lambda a, b: tf.sets.difference(a, b, aminusb=False)}


@pytest.mark.parametrize("op", sorted(_SETS))
@pytest.mark.parametrize("sa, sb", [((2, 3), (2, 2)), ((0, 3), (0, 2)), ((2, 3, 4), (2, 3, 2)), ((3, 0), (3, 2)),
                                    ((3, 2), (3, 0)), ((1, 5), (1, 5))])
def test_sets_of_dense_tensors(op, sa, sb):
    rng = np.random.default_rng(sum(sa) * 7 + sum(sb))
    a, b = rng.integers(-2, 3, sa).astype(np.int16), rng.integers(-2, 3, sb).astype(np.int16)
    e = _SETS[op](a, b)
    for none_b in (False, True):
        c = tf.function(_SETS[op], input_signature=[_spec(a), _spec(b, (0,) if none_b else ())])(a, b)
        for x, y in ((e.indices, c.indices), (e.values, c.values), (e.dense_shape, c.dense_shape)):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_sets_match_tf_and_check_the_batch_shapes():
    a = np.array([[1, 2, 2], [3, 4, 5]], np.int32)
    b = np.array([[2, 1], [5, 9]], np.int32)
    spec = [tf.TensorSpec([None, 3], tf.int32), tf.TensorSpec([None, 2], tf.int32)]
    # TF 2.21's indices, values and dense_shape
    want = {tf.sets.intersection: ([[0, 0], [0, 1], [1, 0]], [1, 2, 5], [2, 2]),
            tf.sets.union: ([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [1, 3]], [1, 2, 3, 4, 5, 9], [2, 4]),
            tf.sets.difference: ([[1, 0], [1, 1]], [3, 4], [2, 2])}
    for op, (i, v, s) in want.items():
        r = tf.function(op, input_signature=spec)(a, b)
        assert r.indices.numpy().tolist() == i and r.values.numpy().tolist() == v
        assert r.dense_shape.numpy().tolist() == s
    # TF 2.21: InvalidArgumentError "Mismatched shapes [2] vs [1]" eagerly (tapeflow's eager raised nothing)
    # and in a tf.function when it runs
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Mismatched shapes \[2\] vs \[1\]"):
        tf.sets.intersection(a, b[:1])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Mismatched shapes \[2\] vs \[1\]"):
        tf.function(tf.sets.intersection, input_signature=spec)(a, b[:1])


# --- wave 24's refusals that TF runs: masks from the run-time positions --------------------------------

def _compare(f, args, nones, grad=True, rtol=0):
    """f eagerly and traced with the (argument, axis) pairs ``nones`` None: value, dtype, shape and, for a
    float first argument, the gradient of sum(f(...)^2) to every argument. Values equal, or within rtol
    where the traced form sums in another order."""
    specs = [tf.TensorSpec([None if (i, k) in nones else d for k, d in enumerate(a.shape)], tf.as_dtype(a.dtype))
             for i, a in enumerate(args)]
    e, c = f(*[tf.constant(a) for a in args]), tf.function(f, input_signature=specs)(*args)
    assert e.dtype == c.dtype and e.shape == c.shape
    np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=rtol, atol=rtol)
    if grad and args[0].dtype.kind == "f":
        def g(*ts):
            with tf.GradientTape() as tape:
                tape.watch(ts)
                y = tf.reduce_sum(f(*ts) ** 2)
            return tape.gradient(y, ts)
        for a, b in zip(g(*[tf.constant(a) for a in args]), tf.function(g, input_signature=specs)(*args)):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (0, 3), (3, 0), (2, 3, 4)])
@pytest.mark.parametrize("which", ["rows", "cols", "both"])
def test_matrix_masks_of_an_unknown_size(shape, which):
    x = np.random.default_rng(len(shape) * 10 + shape[-1]).standard_normal(shape).astype(np.float32)
    r = len(shape)
    nones = {"rows": {(0, r - 2)}, "cols": {(0, r - 1)}, "both": {(0, r - 2), (0, r - 1)}}[which]
    for lo, up in [(0, 0), (1, 0), (-1, 1), (-1, -1)]:
        _compare(lambda t: tf.linalg.band_part(t, lo, up), [x], nones)
    _compare(tf.linalg.diag_part, [x], nones)
    _compare(tf.linalg.trace, [x], nones)
    d = np.arange(np.prod(shape[:-2] + (min(shape[-2:]),)), dtype=np.float32).reshape(shape[:-2] + (min(shape[-2:]),))
    _compare(tf.linalg.set_diag, [x, d], nones)
    _compare(tf.linalg.set_diag, [x, d], nones | {(1, r - 2)})
    _compare(tf.linalg.diag, [x], {(0, r - 1)})


def test_matrix_masks_of_bools_and_non_finite_entries():
    b = np.array([[True, False], [False, True], [True, True]])
    _compare(tf.linalg.diag_part, [b], {(0, 0)})
    _compare(lambda t: tf.linalg.band_part(t, 0, 0), [b], {(0, 0)})
    _compare(tf.linalg.diag, [b], {(0, 1)})
    _compare(tf.linalg.set_diag, [b, np.array([False, False])], {(0, 0)})
    # (the off-diagonal inf/NaN are selected away, not multiplied by zero)
    x = np.array([[np.inf, 1], [2, np.nan], [3, 4]], np.float32)
    _compare(tf.linalg.diag_part, [x], {(0, 0)}, grad=False)
    _compare(tf.linalg.set_diag, [x, np.array([1, np.inf], np.float32)], {(0, 0)}, grad=False)
    _compare(tf.linalg.diag, [np.array([np.inf, 2], np.float32)], {(0, 0)}, grad=False)


def test_set_diag_checks_the_diagonal_length_when_it_runs():
    f = tf.function(tf.linalg.set_diag, input_signature=[tf.TensorSpec([None, 3], tf.float32),
                                                          tf.TensorSpec([None], tf.float32)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="set_diag: the diagonal"):
        f(np.ones((2, 3), np.float32), np.ones(3, np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="set_diag: the diagonal"):
        tf.linalg.set_diag(np.ones((2, 3), np.float32), np.ones(3, np.float32))


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize("shape, paddings", [((4,), [[2, 1]]), ((3, 3), [[1, 2], [0, 1]]),
                                             ((2, 3, 4), [[1, 1], [2, 0], [0, 3]])])
def test_mirror_pad_of_an_unknown_axis(mode, shape, paddings):
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    _compare(lambda t: tf.pad(t, paddings, mode=mode), [x], {(0, 0)})


def test_mirror_pad_too_short_at_run_time():
    f = tf.function(lambda t: tf.pad(t, [[2, 0]], mode="REFLECT"), input_signature=[tf.TensorSpec([None], tf.float32)])
    np.testing.assert_array_equal(f(np.arange(3, dtype=np.float32)).numpy(), [2, 1, 0, 1, 2])
    for n in (2, 0):
        for run in (f, lambda t: tf.pad(t, [[2, 0]], mode="REFLECT")):
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"REFLECT padding \(2, 0\) of axis 0"):
                run(np.arange(n, dtype=np.float32))


def test_concat_gradient_along_an_unknown_axis():
    # (concat's vjp sliced the cotangent at static offsets: None + int, a TypeError)
    _compare(lambda t: tf.concat([t, 2 * t, tf.ones([1, 2])], 0), [np.arange(6, dtype=np.float32).reshape(3, 2)],
             {(0, 0)})


@pytest.mark.parametrize("n", [0, 1, 7, 10])
@pytest.mark.parametrize("pad_end", [False, True])
def test_frame_of_an_unknown_length(n, pad_end):
    """(before: InvalidArgumentError 'the framed dim must be known'; TF runs it, the frame count None)"""
    x = np.random.default_rng(n).standard_normal((n,)).astype(np.float32)
    for fl, fs in [(3, 1), (4, 3), (0, 2), (5, 5)]:
        _compare(lambda t: tf.signal.frame(t, fl, fs, pad_end=pad_end, pad_value=2.5), [x], {(0, 0)}, grad=n > 0)
    x2 = np.random.default_rng(n).standard_normal((2, n, 3)).astype(np.float32)
    _compare(lambda t: tf.signal.frame(t, 4, 2, pad_end=pad_end, axis=1), [x2], {(0, 0), (0, 1)}, grad=n > 0)


@pytest.mark.parametrize("shape", [(0, 2), (3, 2), (4, 5), (2, 3, 4), (2, 0, 4)])
@pytest.mark.parametrize("step", [1, 3, 6])
def test_overlap_and_add_of_unknown_sizes(shape, step):
    # (a scatter-add: float sums in another order than the static path's reshape and reduce_sum)
    x = np.random.default_rng(step).standard_normal(shape).astype(np.float32)
    r = len(shape)
    for nones in [{(0, 0)}, {(0, r - 2)}, {(0, r - 1)}, {(0, i) for i in range(r)}]:
        _compare(lambda t: tf.signal.overlap_and_add(t, step), [x], nones, grad=x.size > 0, rtol=1e-6)


def test_stft_and_inverse_of_an_unknown_length():
    x = np.random.default_rng(9).standard_normal((2, 40)).astype(np.float32)
    _compare(lambda t: tf.abs(tf.signal.stft(t, 8, 4)), [x], {(0, 0), (0, 1)}, grad=False, rtol=1e-5)
    s = tf.signal.stft(x, 8, 4).numpy()
    _compare(lambda t: tf.signal.inverse_stft(t, 8, 4), [s], {(0, 0), (0, 1)}, grad=False, rtol=1e-5)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, [0, 1], [2, 0], [1, 2]])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_join_of_an_unknown_batch(axis, keepdims):
    """(before: a TypeError refusal; TF runs it) the rows' splits from the run-time shape"""
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    f = lambda t: tf.strings.reduce_join(tf.strings.as_string(t), axis=axis, keepdims=keepdims, separator="-")
    e = f(x)
    for spec in ([None, 3, 4], [2, None, 4], [2, 3, None]):
        c = tf.function(f, input_signature=[tf.TensorSpec(spec, tf.int32)])(x)
        assert c.shape == e.shape
        assert np.asarray(c.numpy(), object).tolist() == np.asarray(e.numpy(), object).tolist()


def test_reduce_join_of_empty_and_two_unknown_dimensions():
    f = lambda t: tf.strings.reduce_join(tf.strings.as_string(t), axis=1)
    for x, spec in [(np.zeros((0, 3), np.int32), [None, 3]), (np.zeros((0, 3), np.int32), [0, None]),
                    (np.zeros((3, 0), np.int32), [None, 0])]:
        c = tf.function(f, input_signature=[tf.TensorSpec(spec, tf.int32)])(x)
        assert c.shape == f(x).shape and np.asarray(c.numpy(), object).tolist() == \
            np.asarray(f(x).numpy(), object).tolist()
    # two unknown dimensions left beside the joined one: the reshape back cannot name them; refused by name
    g = tf.function(lambda t: tf.strings.reduce_join(tf.strings.as_string(t), axis=2),
                    input_signature=[tf.TensorSpec([None, None, 4], tf.int32)])
    with pytest.raises(TypeError, match="reduce_join: .*known only when the function runs"):
        g(np.zeros((2, 3, 4), np.int32))


@pytest.mark.parametrize("m, n, k", [(5, 3, 2), (3, 5, 1), (4, 4, 2), (2, 3, 0)])
def test_lstsq_of_unknown_sizes(m, n, k):
    """(before: refused, 'which normal equations'): the rhs's rows give the matrix's; where m or n is still
    unknown a cond on m >= n picks the normal equations when it runs (TF's), gradients through it"""
    rng = np.random.default_rng(m * 10 + n)
    a, b = rng.standard_normal((m, n)), rng.standard_normal((m, k))
    for nones in [{(0, 0)}, {(0, 1)}, {(0, 0), (1, 0)}, {(0, 0), (0, 1), (1, 0)}, {(1, 0)}]:
        for l2 in (0.0, 0.5):
            _compare(lambda x, y: tf.linalg.lstsq(x, y, l2_regularizer=l2), [a, b], nones, rtol=1e-10)
    ab, bb = rng.standard_normal((2, m, n)), rng.standard_normal((2, m, 1))
    _compare(lambda x, y: tf.linalg.lstsq(x, y, l2_regularizer=0.25), [ab, bb], {(0, 0), (0, 1), (1, 1)},
             rtol=1e-10)


def test_lstsq_rows_checked_when_it_runs():
    f = tf.function(tf.linalg.lstsq, input_signature=[tf.TensorSpec([None, 3], tf.float64),
                                                      tf.TensorSpec([4, 1], tf.float64)])
    with pytest.raises(tf.errors.InvalidArgumentError):
        f(np.ones((5, 3)), np.ones((4, 1)))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_polygamma_of_an_order_the_trace_computes(dt):
    """(before: 'the order a must be known when the op runs' in every tapeflow.function taking the order as
    an argument; TF runs it) TF's identity through zeta, equal to the per-order series within rounding"""
    x = np.array([0.3, 1.7, 5.2, 0.05, 10.0, -1.5, 0.0, -2.0], dt)
    rtol = 3e-7 if dt == np.float32 else 1e-13
    for a in ([0, 1, 2, 3, 5, 0, 1, 2], [0.5, -1, 4, 7, 2, 3, 1, np.nan]):
        a = np.asarray(a, dt)
        e = tf.math.polygamma(a, x).numpy()
        for f in (tf.function(tf.math.polygamma),
                  tf.function(tf.math.polygamma, input_signature=[tf.TensorSpec([None], dt)] * 2)):
            np.testing.assert_allclose(f(a, x).numpy(), e, rtol=rtol, equal_nan=True)

        def grad(a, x):
            with tf.GradientTape() as t:
                t.watch(x)
                y = tf.reduce_sum(tf.math.polygamma(a, x))
            return t.gradient(y, x)
        np.testing.assert_allclose(tf.function(grad)(a, x).numpy(), grad(tf.constant(a), tf.constant(x)).numpy(),
                                   rtol=10 * rtol, equal_nan=True)
