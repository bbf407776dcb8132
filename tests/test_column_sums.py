"""The bias gradient's native column sums (core/primitives/_rules._column_sums), used by
every array-level gradient that sums a cotangent over the batch (add's, sub's, ... of a
broadcast bias): NumPy's np.add.reduce bits, and its own declines."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.primitives import _rules


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(256, 256), (37, 29), (1, 1500), (600, 2), (3, 4097), (5000, 3),
                                   (200, 4), (16, 4), (32, 8), (64, 2), (8, 8)])
def test_column_sums_have_numpys_bits(dtype, shape):
    import numba  # noqa: F401  (the loop runs once numba is imported)
    rs = np.random.default_rng(5)
    g = (rs.standard_normal(shape) * 10.0 ** rs.integers(-4, 5, shape)).astype(dtype)
    if shape[1] > 2 and shape[0] > 1:
        g[:, 0] = -0.0           # NumPy's sum starts at +0.0: a column of -0.0 sums to +0.0
        g[0, 1] = np.nan
        g[:, 2] = np.inf
        g[-1, 2] = -np.inf       # inf + -inf: NaN
    with np.errstate(invalid="ignore"):
        want = np.add.reduce(g, axis=(0,), keepdims=True)
    assert _rules._column_sums(g) is not None
    for target in ((shape[1],), (1, shape[1])):
        with np.errstate(invalid="ignore"):
            got = _rules.unbroadcast_np(g, target)
        assert got.shape == target
        assert got.tobytes() == want.tobytes()


def test_column_sums_decline_and_numpy_keeps_those():
    rs = np.random.default_rng(6)
    col = rs.standard_normal((4096, 1)).astype(np.float32)     # NumPy sums it pairwise
    assert _rules._column_sums(col) is None
    assert _rules._column_sums(rs.standard_normal((64, 40)).T.astype(np.float32)) is None  # F-ordered
    assert _rules._column_sums(np.ones((64, 40), np.float16)) is None
    f = rs.standard_normal((40, 64)).T                           # strided: the reduce's bits still
    assert _rules.unbroadcast_np(f, (40,)).tobytes() == np.add.reduce(f, axis=0).tobytes()


def test_bias_gradient_through_the_lean_walk_matches_the_general_one():
    # x @ w + b as three ops (the traced Dense's and TD3's raw layers): the lean walk's
    # bias gradient (the loop) equals the general walk's (reduce_sum bound as an op)
    rs = np.random.default_rng(7)
    x = tf.constant(rs.standard_normal((300, 64)).astype(np.float32))
    w = tf.Variable(rs.standard_normal((64, 50)).astype(np.float32))
    b = tf.Variable(rs.standard_normal(50).astype(np.float32))

    def loss():
        return tf.reduce_sum(tf.nn.relu(x @ w + b) ** 2)

    with tf.GradientTape() as tape:
        lean_loss = loss()
    lean = tape.gradient(lean_loss, [w, b])
    with tf.GradientTape() as outer:             # an outer tape records: the general path
        with tf.GradientTape() as tape:
            general_loss = loss()
        general = tape.gradient(general_loss, [w, b])
    for a, c in zip(lean, general):
        assert a.numpy().tobytes() == c.numpy().tobytes()
    np.testing.assert_allclose(lean[1].numpy(), (2 * np.maximum(x.numpy() @ w.numpy() + b.numpy(), 0)).sum(0),
                               rtol=1e-4)


@pytest.mark.parametrize("shape, loop", [((200, 4), True), ((16, 4), True), ((8, 8), True), ((7, 9), False),
                                         ((200, 1), False)])
def test_narrow_bias_gradients_take_the_loop_from_64_elements(monkeypatch, shape, loop):
    # an output layer's bias gradient ((200, 4): NumPy's reduce 3.9 us, the loop 1.7): the
    # loop from COLUMN_SUMS_MIN elements on, NumPy's reduce below it and for one column
    import numba  # noqa: F401
    calls = []
    real = _rules._column_sums

    def recorded(g):
        s = real(g)
        if s is not None:
            calls.append(g.shape)
        return s

    monkeypatch.setattr(_rules, "_column_sums", recorded)
    g = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    got = _rules.unbroadcast_np(g, (shape[1],))
    assert got.tobytes() == np.add.reduce(g, axis=0).tobytes()
    assert (calls == [shape]) == loop
