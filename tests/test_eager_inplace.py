"""Eager in-place epilogues: Dense's bias add and relu write into the GEMM's fresh result
when nothing records (core.primitive.donate / _bind2_into). Same bits as the ordinary
path in every mode; a tape, a trace or the profiler never sees a donated buffer."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras
from tapeflow.core import primitive as P


def _dense(act, units=150, batch=64, seed=0):
    rs = np.random.default_rng(seed)
    layer = keras.layers.Dense(units, activation=act)
    x = tf.constant(rs.standard_normal((batch, 64)).astype(np.float32))
    layer(x)
    layer.bias.assign(rs.standard_normal(units).astype(np.float32))
    return layer, x


@pytest.fixture
def into_calls(monkeypatch):
    calls = []
    real = P._bind2_into

    def spy(p, a, b, params, st):
        t = real(p, a, b, params, st)
        calls.append((p.name, t is not None and t._v is a._v))
        return t

    monkeypatch.setattr(P, "_bind2_into", spy)
    return calls


@pytest.mark.parametrize("act", ["relu", None, "tanh"])
def test_dense_epilogue_in_place_has_the_ordinary_paths_bits(act, into_calls):
    layer, x = _dense(act)
    layer(x)                                     # (the rules of the signatures, cached)
    into_calls.clear()
    eager = layer(x).numpy()
    w, b = layer.kernel.numpy(), layer.bias.numpy()
    ref = x.numpy() @ w + b
    if act == "relu":
        ref = np.maximum(ref, np.float32(0))
    elif act == "tanh":
        ref = np.tanh(ref)
    # the bias add (and relu) ran in place on the GEMM's buffer
    assert into_calls == [("add", True)] + ([("maximum", True)] if act == "relu" else [])
    with tf.GradientTape():                      # recorded: the ordinary path, no donation
        taped = layer(x).numpy()
    traced = tf.function(layer)(x).numpy()
    assert len(into_calls) == 1 + (act == "relu")
    for got in (eager, taped, traced):
        assert got.tobytes() == eager.tobytes()
    np.testing.assert_allclose(eager, ref, rtol=1e-5, atol=1e-5)


def test_small_results_are_not_donated(into_calls):
    layer, x = _dense("relu", units=8, batch=4)
    layer(x)
    layer(x)
    assert into_calls == []


def test_a_donated_tensor_is_written_only_where_the_result_fits_its_buffer():
    rs = np.random.default_rng(1)
    a0 = rs.standard_normal((128, 128)).astype(np.float32)
    big = tf.constant(rs.standard_normal((2, 128, 128)).astype(np.float32))
    a = tf.constant(a0.copy())
    a + big                                      # (the signatures' rules, cached)
    P.donate(a)
    r = a + big                                  # broadcasts to a bigger shape: a new buffer
    assert r.shape == (2, 128, 128) and a.numpy().tobytes() == a0.tobytes()
    i = tf.constant(np.ones((128, 128), np.int32))
    P.donate(i)
    f = i / 2                                    # int32 / int -> float64: a new buffer too
    assert f.dtype == tf.float64 and (i.numpy() == 1).all()
    c = tf.constant(a0.copy())
    P.donate(c)
    with tf.GradientTape() as tape:              # donated, then recorded: not written
        tape.watch(c)
        y = c * 2.0
    assert c.numpy().tobytes() == a0.tobytes()
    np.testing.assert_array_equal(tape.gradient(y, c).numpy(), np.full((128, 128), 2, np.float32))


def test_dense_gradients_unchanged_by_the_eager_in_place_forward():
    # a training step: the target network's forward (nothing recording) runs in place,
    # the online one under the tape does not; its gradients equal a fresh computation's
    layer, x = _dense("relu")
    target, _ = _dense("relu", seed=1)
    y = tf.reduce_sum(target(x), axis=1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.reduce_sum(layer(x), axis=1) - y))
    g = tape.gradient(loss, layer.trainable_variables)
    z = x.numpy() @ layer.kernel.numpy() + layer.bias.numpy()
    h = np.maximum(z, 0)
    d = 2 * (h.sum(1) - y.numpy()) / len(h)
    dz = np.where(z > 0, d[:, None], 0).astype(np.float32)
    np.testing.assert_allclose(g[0].numpy(), x.numpy().T @ dz, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(g[1].numpy(), dz.sum(0), rtol=1e-4, atol=1e-4)
