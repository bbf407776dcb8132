"""Dense's eager call as one op (core/primitives/dense.py): the bits of matmul, add and
relu bound one after the other, one tape node, gradients equal to the three nodes' in
the lean backward and the general one, under nested and persistent tapes, jacobians and
higher-order gradients."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras
from tapeflow.core.primitive import READ_VARIABLE

from conftest import check_grads


def _dense(act, units=150, batch=64, seed=0, use_bias=True, dtype=np.float32):
    rs = np.random.default_rng(seed)
    layer = keras.layers.Dense(units, activation=act, use_bias=use_bias, dtype=dtype)
    x = tf.constant(rs.standard_normal((batch, 64)).astype(dtype))
    layer(x)
    if use_bias:
        layer.bias.assign(rs.standard_normal(units).astype(dtype))
    return layer, x


def _ops(layer, x):
    """The layer's math as the three ops (what a traced Dense binds)."""
    out = x @ layer.kernel
    if layer.use_bias:
        out = out + layer.bias
    act = layer.activation
    return out if act is keras.activations.linear else act(out)


def _bits(t):
    return np.asarray(t).tobytes()


@pytest.mark.parametrize("use_bias", [True, False])
@pytest.mark.parametrize("act", ["relu", None, "tanh"])
def test_forward_has_the_ops_bits_in_every_mode(act, use_bias):
    layer, x = _dense(act, use_bias=use_bias)
    eager = layer(x).numpy()
    with tf.GradientTape():
        taped = layer(x).numpy()
    traced = tf.function(layer)(x).numpy()
    ops = _ops(layer, x).numpy()
    for got in (taped, traced, ops):
        assert _bits(got) == _bits(eager)
    ref = x.numpy() @ layer.kernel.numpy() + (layer.bias.numpy() if use_bias else 0)
    ref = {"relu": np.maximum(ref, 0), "tanh": np.tanh(ref)}.get(act, ref)
    np.testing.assert_allclose(eager, ref, rtol=1e-5, atol=1e-5)


def test_one_tape_node_per_layer_and_the_trace_keeps_the_ops():
    layer, x = _dense("relu")
    with tf.GradientTape() as tape:
        layer(x)
    assert [n[0].name for n in tape._nodes if n[0] is not READ_VARIABLE] == ["dense"]
    graph = tf.function(layer).get_concrete_function(x).raw_graph
    names = [e.prim.name for e in graph.eqns]
    assert "dense" not in names and "matmul" in names and "maximum" in names


def _edge_layer():
    # pre-activations exactly 0, -0.0, NaN and inf: relu's gradient there comes from the
    # output (out > 0 exactly where the pre-activation is), which must give the same bits
    layer, x = _dense("relu", units=6, batch=5)
    w = np.zeros((64, 6), np.float32)
    w[0] = [1, -1, 0, 1, 1, 2]
    layer.kernel.assign(w)
    layer.bias.assign(np.array([0, 0, -0.0, np.nan, np.inf, -1], np.float32))
    xv = np.zeros((5, 64), np.float32)
    xv[:, 0] = [0, 1, -1, 0.5, -0.0]
    return layer, tf.constant(xv)


@pytest.mark.parametrize("case", ["random", "edges"])
def test_gradients_have_the_three_nodes_bits(case):
    layer, x = _dense("relu") if case == "random" else _edge_layer()
    seed = np.random.default_rng(3).standard_normal(layer(x).shape).astype(np.float32)
    got, want = [], []
    for f, out in ((layer, got), (lambda x: _ops(layer, x), want)):
        # lean backward (nothing records it), the general one (a persistent tape inside
        # its context records it), and the input's gradient alone
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        out += tape.gradient(y, [x] + layer.trainable_variables, output_gradients=tf.constant(seed))
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = f(x)
            out += tape.gradient(y, [x] + layer.trainable_variables, output_gradients=tf.constant(seed))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        out.append(tape.gradient(y, x, output_gradients=tf.constant(seed)))
    assert len(got) == len(want) == 7
    for g, w in zip(got, want):
        assert _bits(g) == _bits(w)


def test_one_source_at_a_time_has_the_ops_bits():
    # the rule computes only what the sources need (need=): each alone, as the three nodes
    layer, x = _dense("relu")
    for src in layer.trainable_variables:
        gs = []
        for f in (layer, lambda x: _ops(layer, x)):
            with tf.GradientTape() as tape:
                y = tf.reduce_sum(tf.square(f(x)))
            gs.append(tape.gradient(y, src))
        assert _bits(gs[0]) == _bits(gs[1])


@pytest.mark.parametrize("act", ["relu", None])
def test_second_order_through_nested_tapes_matches_the_ops(act):
    layer, x = _dense(act, units=7, batch=4, dtype=np.float64)
    x = tf.constant(np.random.default_rng(1).standard_normal((4, 64)))
    res = []
    for f in (layer, lambda x: _ops(layer, x)):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.square(f(x)))
            gx, gk = inner.gradient(y, [x, layer.kernel])
            z = tf.reduce_sum(gx * gx) + tf.reduce_sum(gk)
        res.append([gx, gk] + outer.gradient(z, [x] + layer.trainable_variables))
    for a, b in zip(*res):
        assert _bits(a) == _bits(b)


def test_jacobians_match_the_ops():
    layer, x = _dense("relu", units=3, batch=2, dtype=np.float64)
    res = []
    for f in (layer, lambda x: _ops(layer, x)):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = f(x)
        res.append([tape.jacobian(y, layer.kernel), tape.batch_jacobian(y, x)])
    for a, b in zip(*res):
        assert _bits(a) == _bits(b)


@pytest.mark.parametrize("act", ["relu", "linear"])
def test_layer_gradients_against_finite_differences(act):
    rs = np.random.default_rng(5)
    layer = keras.layers.Dense(5, activation=act, dtype="float64")
    x = rs.standard_normal((3, 4))
    layer(tf.constant(x))
    w0, b0 = rs.standard_normal((4, 5)), rs.standard_normal(5)
    assert np.abs(x @ w0 + b0).min() > 1e-3  # (away from relu's kink)
    layer.kernel.assign(w0)
    layer.bias.assign(b0)
    check_grads(lambda x: layer(x), [x], order=2)  # the input's, first and second order
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.sin(layer(tf.constant(x))))
    gk, gb = tape.gradient(y, [layer.kernel, layer.bias])
    eps = 1e-6
    for var, g in ((layer.kernel, gk), (layer.bias, gb)):
        v0 = var.numpy()
        num = np.zeros_like(v0)
        for i in np.ndindex(v0.shape):
            d = np.zeros_like(v0)
            d[i] = eps
            var.assign(v0 + d)
            up = float(tf.reduce_sum(tf.sin(layer(tf.constant(x)))))
            var.assign(v0 - d)
            down = float(tf.reduce_sum(tf.sin(layer(tf.constant(x)))))
            num[i] = (up - down) / (2 * eps)
        var.assign(v0)
        np.testing.assert_allclose(g.numpy(), num, rtol=1e-6, atol=1e-8)


def test_a_snapshot_read_before_the_call_keeps_its_value_and_the_optimizer_step_is_unchanged():
    # the epilogue writes only the GEMM's fresh result: the kernel, the bias and the input
    # keep their bits, and a training step through the layer equals the ops' step
    layer, x = _dense("relu")
    other, _ = _dense("relu")
    other.set_weights(layer.get_weights())
    kept = [x.numpy().copy(), layer.kernel.numpy().copy(), layer.bias.numpy().copy()]
    losses = []
    for lay, f in ((layer, layer), (other, lambda x: _ops(other, x))):
        opt = keras.optimizers.Adam(1e-2)
        for _ in range(3):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(f(x) - 1.0))
            opt.apply_gradients(zip(tape.gradient(loss, lay.trainable_variables), lay.trainable_variables))
            losses.append(float(loss))
        if lay is layer:
            assert _bits(x.numpy()) == _bits(kept[0])
    assert losses[:3] == losses[3:]
    for a, b in zip(layer.get_weights(), other.get_weights()):
        assert _bits(a) == _bits(b)


def test_the_op_rejects_what_a_dense_layer_never_gives_it():
    from tapeflow.core.primitive import bind
    from tapeflow.core.primitives.dense import dense_p
    x = tf.constant(np.ones((2, 3), np.float32))
    w = tf.constant(np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match="dense: expects x"):
        bind(dense_p, x, w, tf.constant(np.ones((2, 1, 4), np.float32)), activation="relu")
    with pytest.raises(ValueError, match="activation must be one of"):
        bind(dense_p, x, w, activation="tanh")
    with pytest.raises(Exception, match="matmul: inner dimensions differ"):
        bind(dense_p, x, tf.constant(np.ones((4, 4), np.float32)), activation="linear")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bias_relu_loop_has_numpys_bits(dtype):
    """The forward epilogue's native loop (dense._bias_relu) against NumPy's add then
    maximum: NaN payloads and signs kept, -0.0 and exact-zero sums to +0.0, infinities,
    sums that round; a strided bias and a read-only one."""
    import numba  # noqa: F401  (the loop runs once numba is imported)
    from tapeflow.core.primitives.dense import _bias_relu
    rs = np.random.default_rng(7)
    h = rs.standard_normal((37, 29)).astype(dtype)
    b = rs.standard_normal(29).astype(dtype)
    nan = np.array([np.nan], dtype)
    neg_nan = -nan
    payload = np.frombuffer(bytes.fromhex("0100c07f") if dtype == np.float32 else bytes.fromhex("010000000000f87f"),
                            dtype)
    h[0, :6] = [-0.0, 0.0, 1.0, -1.0, np.inf, -np.inf]
    b[:6] = [-0.0, -0.0, -1.0, 1.0, -np.inf, 1.0]     # sums: -0.0, +0.0, 0, 0, NaN, -inf
    h[1, 6], h[2, 7], h[3, 8] = nan[0], neg_nan[0], payload[0]
    for bias in (b, rs.standard_normal(58).astype(dtype)[::2], b.copy()):
        bias.flags.writeable = bias is not b      # a read-only operand too
        with np.errstate(invalid="ignore"):   # inf + -inf: NaN, as the loop gives
            want = np.maximum(h + bias, np.zeros_like(h))
        got = h.copy()
        assert _bias_relu(got, bias)
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(200, 4), (37, 29), (1, 3)])
def test_linear_bias_add_loop_has_numpys_bits(dtype, shape):
    """The linear layer's bias add in place (dense._bias_relu with relu=False) against
    NumPy's broadcasting add: NaN payloads and signs, -0.0 + -0.0, inf + -inf, rounding
    sums; a strided bias and a read-only one."""
    import numba  # noqa: F401
    from tapeflow.core.primitives.dense import _bias_relu
    rs = np.random.default_rng(12)
    h = (rs.standard_normal(shape) * 10.0 ** rs.integers(-4, 5, shape)).astype(dtype)
    b = rs.standard_normal(shape[1]).astype(dtype)
    if shape[1] >= 3:
        h[0, :3] = [-0.0, np.inf, np.nan]
        b[:3] = [-0.0, -np.inf, 1.0]
        h[-1, 1] = -np.array([np.nan], dtype)[0]
    for bias in (b, rs.standard_normal(2 * shape[1]).astype(dtype)[::2]):
        bias.flags.writeable = False
        with np.errstate(invalid="ignore"):
            want = h + bias
        got = h.copy()
        assert _bias_relu(got, bias, relu=False)
        assert got.tobytes() == want.tobytes()


def test_a_linear_dense_layer_adds_its_bias_in_the_native_loop(monkeypatch):
    # the output layer's epilogue (Dense without activation) takes the loop, relu=False
    import numba  # noqa: F401
    from tapeflow.core.primitives import dense as D
    seen = []
    real = D._bias_relu
    monkeypatch.setattr(D, "_bias_relu", lambda h, b, relu=True: seen.append((h.shape, relu)) or real(h, b, relu))
    layer = keras.layers.Dense(4)
    x = np.random.default_rng(3).standard_normal((200, 100)).astype(np.float32)
    out = layer(tf.constant(x)).numpy()
    assert seen == [((200, 4), False)]
    want = np.matmul(x, layer.kernel.numpy()) + layer.bias.numpy()
    assert out.tobytes() == want.tobytes()


def test_bias_relu_declines_what_it_does_not_cover():
    from tapeflow.core.primitives.dense import _bias_relu
    h = np.ones((4, 3), np.float32)
    assert not _bias_relu(h, np.ones(3, np.float64))            # another dtype
    assert not _bias_relu(np.ones((4, 3), np.float16), np.ones(3, np.float16))
    assert not _bias_relu(np.ones((3, 4), np.float32).T, np.ones(3, np.float32))  # F-ordered h
    assert (h == 1).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(200, 150), (37, 29), (1, 5), (0, 4), (300, 2), (3, 4097)])
def test_relu_and_bias_gradient_loop_has_the_rules_bits(dtype, shape):
    """The backward's native pass (dense._relu_grad_bias) against relu's and add's rules
    as NumPy runs them (the select, then np.add.reduce over the batch): sums whose
    order shows in the last bits, a column of -0.0 (NumPy's sum starts from +0.0), NaN
    in the cotangent and in the output, outputs at exactly +-0."""
    import numba  # noqa: F401
    from tapeflow.core.primitives.dense import _relu_grad_bias
    rs = np.random.default_rng(11)
    g = (rs.standard_normal(shape) * 10.0 ** rs.integers(-4, 5, shape)).astype(dtype)
    out = np.maximum(rs.standard_normal(shape), 0).astype(dtype)
    if shape[0] > 2 and shape[1] > 2:
        out[:, 0], g[:, 0] = 1, -0.0
        out[0, 1], out[1, 1], out[2, 1] = np.nan, -0.0, 0.0
        g[1, 2] = np.nan
    got, gb = _relu_grad_bias(g, out)
    want = np.where(out > 0, g, dtype(0))
    assert got.tobytes() == want.tobytes()
    assert gb.tobytes() == np.add.reduce(want, axis=(0,), keepdims=True).reshape(shape[1]).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(200, 150), (37, 29), (300, 2)])
def test_relu_and_bias_gradient_written_over_the_cotangent_has_the_same_bits(dtype, shape):
    """vjp_np_into's loop (relu's gradient over g, which the lean walk owns) against the
    loop into a new array and NumPy's select and reduce: the same bits, g itself returned."""
    import numba  # noqa: F401
    from tapeflow.core.primitives.dense import _relu_grad_bias
    rs = np.random.default_rng(13)
    g = (rs.standard_normal(shape) * 10.0 ** rs.integers(-4, 5, shape)).astype(dtype)
    out = np.maximum(rs.standard_normal(shape), 0).astype(dtype)
    if shape[1] > 2:
        out[:, 0], g[:, 0] = 1, -0.0
        out[0, 1], out[1, 1], out[2, 1] = np.nan, -0.0, 0.0
        g[1, 2] = np.nan
    want, want_b = _relu_grad_bias(g, out)
    mine = g.copy()
    got, gb = _relu_grad_bias(mine, out, into=True)
    assert got is mine
    assert got.tobytes() == want.tobytes() == np.where(out > 0, g, dtype(0)).tobytes()
    assert gb.tobytes() == want_b.tobytes() == np.add.reduce(want, axis=(0,)).tobytes()
    ro = g.copy()
    ro.flags.writeable = False
    assert _relu_grad_bias(ro, out, into=True) is None       # declines: the NumPy forms run


def test_the_lean_walk_writes_hidden_layers_relu_gradient_over_its_cotangent(monkeypatch):
    """A Dense-relu stack's backward: each hidden layer's cotangent is the GEMM's fresh
    input gradient of the layer above, which only the walk holds, so relu's gradient is
    written over it (vjp_np_into); the gradients equal the general walk's bit for bit."""
    import numba  # noqa: F401
    from tapeflow.core.primitives import dense as D
    rs = np.random.default_rng(14)
    model = keras.Sequential([keras.layers.Dense(150, activation="relu"), keras.layers.Dense(100, activation="relu"),
                              keras.layers.Dense(4)])
    x = tf.constant(rs.standard_normal((200, 64)).astype(np.float32))
    model(x)
    into = []
    real = D._relu_grad_bias
    monkeypatch.setattr(D, "_relu_grad_bias", lambda g, o, i=False: into.append(i) or real(g, o, i))

    def loss():
        return tf.reduce_mean(tf.square(model(x)))

    with tf.GradientTape() as tape:
        value = loss()
    lean = tape.gradient(value, model.trainable_variables)
    assert into == [True, True]
    with tf.GradientTape() as outer:              # an outer tape records: the general walk
        with tf.GradientTape() as tape:
            value = loss()
        general = tape.gradient(value, model.trainable_variables)
    for a, b in zip(lean, general):
        assert a.numpy().tobytes() == b.numpy().tobytes()


def test_relu_and_bias_gradient_loop_declines_a_single_column():
    # NumPy sums an (m, 1) column pairwise, not row after row: the rules' forms keep it
    from tapeflow.core.primitives.dense import _relu_grad_bias
    assert _relu_grad_bias(np.ones((8, 1), np.float32), np.ones((8, 1), np.float32)) is None
    assert _relu_grad_bias(np.ones((8, 3), np.float32), np.ones((8, 3), np.float64)) is None
    assert _relu_grad_bias(np.ones((3, 8), np.float32).T, np.ones((8, 3), np.float32)) is None
