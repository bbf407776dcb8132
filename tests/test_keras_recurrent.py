"""Keras recurrent layers (SimpleRNN, LSTM, GRU, RNN(cell)) and masking, against TF 2.21's
numbers (tests/data/rnn_tf_reference.npz, made by tests/tf_reference/make_rnn_reference.py)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import tapeflow as tf
from conftest import check_grads
from test_layers import _fd_check

keras = tf.keras
L = keras.layers

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "rnn_tf_reference.npz"))
CASES = sorted({k.split("/")[0] for k in REF.files} - {"loss_mask", "merge"})
UNMASKED = [c for c in CASES if not c.startswith(("emb_", "masking_"))]


def _build(cls, kw):
    """L.<cls>(**kw); a nested {"__layer__": [cls, kwargs]} (a wrapped layer) built first, and
    {"__cells__": [[cls, kwargs], ...]} a list of cells."""
    def arg(v):
        if isinstance(v, dict) and "__layer__" in v:
            return _build(*v["__layer__"])
        if isinstance(v, dict) and "__cells__" in v:
            return [_build(*c) for c in v["__cells__"]]
        return v
    return getattr(L, cls)(**{k: arg(v) for k, v in kw.items()})


def _model(name):
    spec = json.loads(str(REF[f"{name}/spec"]))
    x = REF[f"{name}/x"]
    m = keras.Sequential([_build(cls, kw) for cls, kw in spec])
    m(x)
    ws = [REF[f"{name}/w{k}"] for k in range(64) if f"{name}/w{k}" in REF.files]
    m.set_weights(ws)
    ys = [REF[f"{name}/y{k}"] for k in range(8) if f"{name}/y{k}" in REF.files]
    return m, x, ys


def _outs(y):
    return [np.asarray(v) for v in tf.nest.flatten(y)]


@pytest.mark.parametrize("name", UNMASKED)
@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_matches_tf_with_tf_weights(name, mode):
    m, x, ys = _model(name)
    got = _outs(m(x) if mode == "eager" else tf.function(lambda v: m(v))(tf.constant(x)))
    assert len(got) == len(ys)
    for g, want in zip(got, ys):
        assert g.shape == want.shape and g.dtype == np.float32
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


def test_weights_names_shapes_and_order_are_keras_3s():
    # TF 2.21: lstm/lstm_cell/kernel (5, 12), .../recurrent_kernel (3, 12), .../bias (12,)
    for layer, shapes in [(L.LSTM(3), [(5, 12), (3, 12), (12,)]), (L.GRU(3), [(5, 9), (3, 9), (2, 9)]),
                          (L.GRU(3, reset_after=False), [(5, 9), (3, 9), (9,)]),
                          (L.SimpleRNN(3), [(5, 3), (3, 3), (3,)]), (L.LSTM(3, use_bias=False), [(5, 12), (3, 12)])]:
        layer(np.zeros((2, 4, 5), np.float32))
        assert [w.name for w in layer.weights] == ["kernel", "recurrent_kernel", "bias"][:len(shapes)]
        assert [tuple(w.shape) for w in layer.weights] == shapes


def test_default_initializers():
    lstm = L.LSTM(3)
    lstm(np.zeros((1, 2, 4), np.float32))
    b = lstm.cell.bias.numpy()
    np.testing.assert_array_equal(b, np.r_[np.zeros(3), np.ones(3), np.zeros(6)])    # unit_forget_bias
    rk = lstm.cell.recurrent_kernel.numpy()
    np.testing.assert_allclose(rk @ rk.T, np.eye(3), atol=1e-5)                         # orthogonal rows
    b = L.LSTM(3, unit_forget_bias=False)
    b(np.zeros((1, 2, 4), np.float32))
    assert not b.cell.bias.numpy().any()
    g = L.GRU(2)
    g(np.zeros((1, 2, 4), np.float32))
    assert not g.cell.bias.numpy().any() and g.units == 2 and g.reset_after


@pytest.mark.parametrize("cls,kw", [(L.SimpleRNN, {}), (L.LSTM, {}), (L.GRU, {}), (L.GRU, {"reset_after": False}),
                                    (L.LSTM, {"return_sequences": True, "go_backwards": True})])
def test_gradients_match_finite_differences(cls, kw):
    layer = cls(2, dtype="float64", **kw)
    x = np.random.default_rng(0).normal(size=(2, 3, 2))
    _fd_check(layer, x)
    # second order, w.r.t. the input
    check_grads(lambda v: layer(v), [x], order=2, rtol=1e-4)


@pytest.mark.parametrize("cls", [L.SimpleRNN, L.LSTM, L.GRU])
@pytest.mark.parametrize("unroll", [False, True])
def test_compiled_values_and_gradients_match_eager(cls, unroll):
    layer = cls(3, return_sequences=True, unroll=unroll)
    x = tf.constant(np.random.default_rng(1).normal(size=(2, 4, 3)).astype(np.float32))

    def loss_grads(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            loss = tf.reduce_sum(tf.square(layer(v)))
        return [loss] + tape.gradient(loss, [v] + layer.trainable_weights)
    eager = loss_grads(x)
    comp = tf.function(loss_grads)(x)
    for a, b in zip(eager, comp):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5, atol=1e-6)


def test_traced_loop_is_one_scan_unless_unrolled():
    x = tf.constant(np.zeros((2, 30, 3), np.float32))
    for unroll in (False, True):
        layer = L.GRU(2, unroll=unroll)
        text = str(tf.function(lambda v: layer(v)).get_concrete_function(x).raw_graph)
        if unroll:
            assert "scan" not in text
        else:
            assert "scan" in text


def test_initial_state_and_return_state_round_trip():
    m, x, ys = _model("lstm_state")
    layer = m.layers[0]
    out, h, c = layer(x)
    # two halves with the state passed on give the whole sequence's result
    _, h1, c1 = layer(x[:, :2])
    out2, h2, c2 = layer(x[:, 2:], initial_state=[h1, c1])
    np.testing.assert_allclose(np.asarray(out2), np.asarray(out), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(c2), np.asarray(c), rtol=1e-5, atol=1e-6)
    comp = tf.function(lambda a, s0, s1: layer(a, initial_state=[s0, s1]))(tf.constant(x[:, 2:]), h1, c1)
    np.testing.assert_allclose(np.asarray(comp[2]), np.asarray(c), rtol=1e-5, atol=1e-6)


def test_rnn_wrapper_with_cells_equals_the_layer():
    m, x, ys = _model("gru_seq_state")
    rnn = L.RNN(L.GRUCell(4), return_sequences=True, return_state=True)
    rnn(x)
    rnn.set_weights(m.get_weights())
    for a, b in zip(_outs(rnn(x)), ys):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # a cell called on one step, as Keras 3's cell API: (output, new states)
    cell = rnn.cell
    out, st = cell(x[:, 0], [np.zeros((2, 4), np.float32)])
    assert tuple(out.shape) == (2, 4) and len(st) == 1


def test_custom_cell_in_rnn():
    class MinimalCell(L.Layer):
        def __init__(self, units, **kw):
            super().__init__(**kw)
            self.units = units
            self.state_size = units

        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(input_shape[-1], self.units), name="kernel")
            self.built = True

        def call(self, inputs, states):
            out = tf.matmul(inputs, self.kernel) + states[0] * 0.5
            return out, [out]
    x = np.random.default_rng(2).normal(size=(2, 3, 4)).astype(np.float32)
    layer = L.RNN(MinimalCell(2), return_sequences=True)
    y = np.asarray(layer(x))
    k = layer.cell.kernel.numpy()
    h = np.zeros((2, 2), np.float32)
    want = []
    for t in range(3):
        h = x[:, t] @ k + h * 0.5
        want.append(h)
    np.testing.assert_allclose(y, np.stack(want, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(tf.function(lambda v: layer(v))(tf.constant(x))), y, rtol=1e-5, atol=1e-6)


def test_dropout_only_in_training_and_one_mask_per_call():
    x = np.ones((64, 5, 8), np.float32)
    layer = L.SimpleRNN(4, dropout=0.5, recurrent_dropout=0.3, seed=3, return_sequences=True)
    a = np.asarray(layer(x))
    np.testing.assert_array_equal(np.asarray(layer(x)), a)                # inference: no dropout
    np.testing.assert_array_equal(np.asarray(layer(x, training=False)), a)
    b = np.asarray(layer(x, training=True))
    assert not np.allclose(a, b)
    # the input mask is the same at every step: with a zero recurrent kernel and no recurrent
    # dropout each step's output is the same function of the (masked) same input
    d = L.SimpleRNN(4, dropout=0.5, seed=4, return_sequences=True, recurrent_initializer="zeros")
    y = np.asarray(d(x, training=True))
    for t in range(1, 5):
        np.testing.assert_array_equal(y[:, t], y[:, 0])
    # LSTM/GRU with recurrent_dropout: per-gate masks, still trainable under a tape
    for cls in (L.LSTM, L.GRU):
        layer = cls(3, dropout=0.2, recurrent_dropout=0.2, seed=5)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(x[:4], training=True))
        gs = tape.gradient(loss, layer.trainable_weights)
        assert all(g is not None and np.isfinite(np.asarray(g)).all() for g in gs)


def test_fit_learns_a_sequence_task():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 6, 2)).astype(np.float32)
    y = x[:, :, 0].sum(1, keepdims=True).astype(np.float32)         # needs memory over the steps
    tf.random.set_seed(0)
    for layer in (L.LSTM(8), L.GRU(8), L.SimpleRNN(8)):
        m = keras.Sequential([keras.Input((6, 2)), layer, L.Dense(1)])
        m.compile(optimizer=keras.optimizers.Adam(0.02), loss="mse")
        h = m.fit(x, y, epochs=15, batch_size=16, verbose=0)
        assert h.history["loss"][-1] < 0.3 * h.history["loss"][0]


def test_config_round_trip_and_save(tmp_path):
    m = keras.Sequential([keras.Input((4, 3)), L.LSTM(5, return_sequences=True, go_backwards=True),
                          L.GRU(2, reset_after=False), L.Dense(1)])
    x = np.random.default_rng(3).normal(size=(2, 4, 3)).astype(np.float32)
    y = np.asarray(m(x))
    cfg = m.layers[0].get_config()
    assert cfg["units"] == 5 and cfg["go_backwards"] and cfg["unit_forget_bias"] and cfg["recurrent_activation"]
    # TF 2.21's keys (LSTM(4).get_config())
    assert sorted(L.LSTM(4).get_config()) == [
        'activation', 'activity_regularizer', 'bias_constraint', 'bias_initializer', 'bias_regularizer', 'dropout',
        'dtype', 'go_backwards', 'kernel_constraint', 'kernel_initializer', 'kernel_regularizer', 'name',
        'recurrent_activation', 'recurrent_constraint', 'recurrent_dropout', 'recurrent_initializer',
        'recurrent_regularizer', 'return_sequences', 'return_state', 'seed', 'stateful', 'trainable',
        'unit_forget_bias', 'units', 'unroll', 'use_bias', 'zero_output_for_mask']
    clone = L.LSTM.from_config(cfg)
    assert clone.units == 5 and clone.go_backwards
    path = str(tmp_path / "m.keras")
    m.save(path)
    m2 = keras.models.load_model(path)
    np.testing.assert_allclose(np.asarray(m2(x)), y, rtol=1e-6)


def test_bad_inputs_and_arguments():
    # TF 2.21: ValueError "Input 0 ... is incompatible with the layer: expected ndim=3, found ndim=2"
    for bad in (np.zeros((2, 5), np.float32), np.zeros((2, 3, 4, 5), np.float32)):
        with pytest.raises(ValueError, match="expected ndim=3"):
            L.LSTM(3)(bad)
    # TF 2.21: ValueError "Received an invalid value for argument `units`, expected a positive integer"
    for units in (0, -1, 2.5, "3"):
        with pytest.raises(ValueError, match="expected a positive integer"):
            L.GRU(units)
    with pytest.raises(NotImplementedError, match="stateful=True"):
        L.LSTM(3, stateful=True)
    layer = L.SimpleRNN(2)
    layer(np.zeros((1, 3, 4), np.float32))
    with pytest.raises(ValueError, match="axis -1 of the input to have size 4"):
        layer(np.zeros((1, 3, 5), np.float32))
    with pytest.raises(ValueError, match="0 timesteps"):
        L.SimpleRNN(2)(np.zeros((1, 0, 4), np.float32))
    with pytest.raises(ValueError, match="expected 2 initial state"):
        L.LSTM(2)(np.zeros((1, 3, 4), np.float32), initial_state=[np.zeros((1, 2), np.float32)])


# -- masking -------------------------------------------------------------------------------------------

MASKED = [c for c in CASES if c.startswith(("emb_", "masking_"))]


def _functional(name):
    spec = json.loads(str(REF[f"{name}/spec"]))
    x = REF[f"{name}/x"]
    inp = keras.Input(x.shape[1:], dtype=x.dtype.name)
    h = inp
    for cls, kw in spec:
        h = _build(cls, kw)(h)
    m = keras.Model(inp, h)
    m.set_weights([REF[f"{name}/w{k}"] for k in range(64) if f"{name}/w{k}" in REF.files])
    return m


@pytest.mark.parametrize("name", MASKED)
@pytest.mark.parametrize("kind", ["sequential", "functional"])
@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_masks_propagate_to_recurrent_layers_as_in_tf(name, kind, mode):
    m, x, ys = _model(name)
    if kind == "functional":
        m = _functional(name)
    got = _outs(m(x) if mode == "eager" else tf.function(lambda v: m(v))(tf.constant(x)))
    assert len(got) == len(ys)
    for g, want in zip(got, ys):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


def test_masked_steps_repeat_the_previous_output_and_keep_the_state():
    # TF 2.21 (Keras 3 backend.rnn): a masked step's output is the previous step's output (zeros
    # before the first unmasked step), its states are carried unchanged
    m, x, ys = _model("emb_simple_state")
    seq, state = ys
    ids = x
    assert (ids[1, :2] == 0).all() and ids[1, 3] == 0 and (ids[2] == 0).all()
    np.testing.assert_array_equal(seq[1, :2], 0)
    np.testing.assert_array_equal(seq[1, 3], seq[1, 2])
    np.testing.assert_array_equal(seq[2], 0)
    np.testing.assert_array_equal(state[2], 0)
    layer = m.layers[1]
    emb = np.asarray(m.layers[0](ids))
    mask = ids != 0
    out = _outs(layer(emb, mask=mask))
    np.testing.assert_allclose(out[0], seq, rtol=1e-5, atol=1e-6)
    # zero_output_for_mask: zeros at the masked steps instead, the same final state
    z = L.SimpleRNN(3, return_sequences=True, return_state=True, zero_output_for_mask=True)
    z(emb)
    z.set_weights(layer.get_weights())
    zs, zst = _outs(z(emb, mask=mask))
    np.testing.assert_array_equal(zs[~mask], 0)
    np.testing.assert_allclose(zs[mask], seq[mask], rtol=1e-6)
    np.testing.assert_allclose(zst, state, rtol=1e-5, atol=1e-6)


def test_masking_layer_values_and_mask():
    # TF 2.21: Masking(0.0) on x with x[0, 1] = 0: the output zeroes step (0, 1), mask [[T, F, T], [T, T, T]]
    x = np.ones((2, 3, 2), np.float32)
    x[0, 1] = 0
    x[1, 2, 0] = 0           # one zero feature: not masked
    m = L.Masking(0.0)
    np.testing.assert_array_equal(np.asarray(m(x)), x)
    np.testing.assert_array_equal(np.asarray(m.compute_mask(x)), [[True, False, True], [True, True, True]])
    x2 = x.copy()
    x2[1, 0] = 5.0
    np.testing.assert_array_equal(np.asarray(L.Masking(5.0)(x2))[1, 0], 0)


def test_mask_dropped_by_a_layer_without_masking_support_warns():
    m = keras.Sequential([keras.Input((4,), dtype="int32"), L.Embedding(5, 2, mask_zero=True), L.Flatten()])
    with pytest.warns(UserWarning, match="does not support masking"):
        m(np.array([[1, 2, 0, 0]]))


def test_masked_gradients_match_finite_differences_and_fit_learns():
    x = np.random.default_rng(4).normal(size=(2, 4, 2))
    x[0, 2:] = 0
    x[1, 0] = 0
    for cls in (L.LSTM, L.GRU):
        layer = cls(2, dtype="float64", return_sequences=True)
        mask = tf.constant(np.any(x != 0, -1))

        class Masked(L.Layer):
            def call(self, v):
                return layer(v, mask=mask)
        wrapper = Masked(dtype="float64")
        wrapper.layer = layer
        _fd_check(wrapper, x)
    # a padded-sequence task: the target is the sum of the real ids' values
    rng = np.random.default_rng(5)
    ids = rng.integers(1, 6, size=(96, 7))
    lens = rng.integers(2, 8, size=96)
    for i, n in enumerate(lens):
        ids[i, n:] = 0
    y = (ids / 5.0).sum(1, keepdims=True).astype(np.float32)
    tf.random.set_seed(1)
    m = keras.Sequential([keras.Input((7,), dtype="int32"), L.Embedding(6, 4, mask_zero=True), L.GRU(8),
                          L.Dense(1)])
    m.compile(optimizer=keras.optimizers.Adam(0.03), loss="mse")
    h = m.fit(ids, y, epochs=12, batch_size=32, verbose=0)
    assert h.history["loss"][-1] < 0.2 * h.history["loss"][0]


@pytest.mark.parametrize("kind", ["sequential", "functional"])
def test_loss_and_metrics_weigh_the_output_mask_as_tf(kind):
    # TF 2.21 (Keras 3's apply_mask): the loss is the mean over the unmasked (batch, time) entries,
    # `metrics` ("mae") too, ignoring sample weights; `weighted_metrics` ("mse") weigh both
    ids, y, sw = REF["loss_mask/ids"], REF["loss_mask/y"], REF["loss_mask/sw"]
    if kind == "functional":
        inp = keras.Input((5,), dtype="int32")
        m = keras.Model(inp, L.Dense(1)(L.LSTM(3, return_sequences=True)(L.Embedding(6, 2, mask_zero=True)(inp))))
    else:
        m = keras.Sequential([keras.Input((5,), dtype="int32"), L.Embedding(6, 2, mask_zero=True),
                              L.LSTM(3, return_sequences=True), L.Dense(1)])
    m.set_weights([REF[f"loss_mask/w{k}"] for k in range(6)])
    m.compile(loss="mse", metrics=["mae"], weighted_metrics=["mse"])
    r1 = m.evaluate(ids, y, batch_size=4, verbose=0, return_dict=True)
    r2 = m.evaluate(ids, y, sample_weight=sw, batch_size=4, verbose=0, return_dict=True)
    np.testing.assert_allclose([r1["loss"], r1["mae"], r1["mse"]], REF["loss_mask/r1"], rtol=1e-5)
    np.testing.assert_allclose([r2["loss"], r2["mae"], r2["mse"]], REF["loss_mask/r2"], rtol=1e-5)
    # eager train_step sees the same mask
    m.compile(loss="mse", metrics=["mae"], weighted_metrics=["mse"], run_eagerly=True)
    r3 = m.evaluate(ids, y, batch_size=4, verbose=0, return_dict=True)
    np.testing.assert_allclose([r3["loss"], r3["mae"], r3["mse"]], REF["loss_mask/r1"], rtol=1e-5)


# -- wrappers -------------------------------------------------------------------------------------------

def test_bidirectional_structure_gradients_and_errors(tmp_path):
    lstm = L.LSTM(2, name="enc", return_sequences=True)
    bi = L.Bidirectional(lstm)
    x = np.random.default_rng(6).normal(size=(2, 3, 2))
    y = bi(x.astype(np.float32))
    assert tuple(y.shape) == (2, 3, 4)
    assert (bi.forward_layer.name, bi.backward_layer.name) == ("forward_enc", "backward_enc")
    assert bi.backward_layer.go_backwards and not bi.forward_layer.go_backwards
    assert bi.backward_layer.zero_output_for_mask          # Keras 3 forces it with return_sequences
    # the forward layer's weights first, then the backward layer's; fresh weights for each copy
    assert [w.name for w in bi.weights] == ["kernel", "recurrent_kernel", "bias"] * 2
    assert not np.array_equal(bi.weights[0].numpy(), bi.weights[3].numpy())
    # weights= sets both halves after the build
    ws = bi.get_weights()
    bi2 = L.Bidirectional(L.LSTM(2, return_sequences=True), weights=ws)
    np.testing.assert_array_equal(np.asarray(bi2(x.astype(np.float32))), np.asarray(y))
    # gradients (float64) against finite differences
    _fd_check(L.Bidirectional(L.GRU(2, dtype="float64"), merge_mode="mul", dtype="float64"), x)
    # saved and loaded
    m = keras.Sequential([keras.Input((3, 2)), L.Bidirectional(L.GRU(2), merge_mode="sum"),
                          L.Dense(1)])
    want = np.asarray(m(x.astype(np.float32)))
    m.save(str(tmp_path / "bi.keras"))
    np.testing.assert_allclose(np.asarray(keras.models.load_model(str(tmp_path / "bi.keras"))(x.astype(np.float32))),
                               want, rtol=1e-6)
    # TF 2.21's ValueErrors
    with pytest.raises(ValueError, match="Invalid merge mode"):
        L.Bidirectional(L.LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="keras.layers.Layer"):
        L.Bidirectional(lambda v: v)
    with pytest.raises(ValueError, match="different `go_backwards`"):
        L.Bidirectional(L.LSTM(2), backward_layer=L.LSTM(2))
    with pytest.raises(ValueError, match="return_sequences"):
        L.Bidirectional(L.LSTM(2), backward_layer=L.LSTM(2, go_backwards=True, return_sequences=True))


def test_time_distributed_runs_the_layer_per_step():
    x = np.random.default_rng(7).normal(size=(2, 4, 3)).astype(np.float32)
    d = L.Dense(2)
    td = L.TimeDistributed(d)
    y = np.asarray(td(x))
    np.testing.assert_allclose(y, x @ d.kernel.numpy() + d.bias.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(tf.function(lambda v: td(v))(tf.constant(x))), y, rtol=1e-6)
    # training reaches the wrapped layer
    drop = L.TimeDistributed(L.Dropout(0.5, seed=1))
    np.testing.assert_array_equal(np.asarray(drop(x)), x)
    assert (np.asarray(drop(x, training=True)) == 0).any()
    with pytest.raises(ValueError, match="ndim=3|min_ndim=3"):
        td(x[:, 0])


@pytest.mark.parametrize("name", ["Add", "Multiply", "Concatenate", "Maximum", "Add_unmasked_b", "Concatenate_unmasked_b",
                                  "Multiply_unmasked_b", "Minimum_unmasked_b"])
def test_masks_meet_at_merge_layers_as_in_tf(name):
    # TF 2.21: merges OR their inputs' masks (None if one input has none); Concatenate widens the
    # masks to the inputs' shapes (an unmasked input counts as all True) and any()s the last axis
    a, b = REF["merge/a"], REF["merge/b"]
    ia, ib = keras.Input((5,), dtype="int32"), keras.Input((5,), dtype="int32")
    ea = L.Embedding(7, 3, mask_zero=True)(ia)
    eb = L.Embedding(7, 3, mask_zero="unmasked" not in name)(ib)
    m = keras.Model([ia, ib], L.LSTM(2, return_sequences=True)(getattr(L, name.split("_")[0])()([ea, eb])))
    m.set_weights([REF[f"merge/{name}/w{k}"] for k in range(5)])
    want = REF[f"merge/{name}/y"]
    np.testing.assert_allclose(np.asarray(m([a, b])), want, rtol=1e-5, atol=1e-6)
    got = tf.function(lambda u, v: m([u, v]))(tf.constant(a), tf.constant(b))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_a_call_gets_its_arg_masks_as_keras_3():
    # Keras 3 fills `<arg>_mask` parameters from the tensors' masks (MultiHeadAttention's value_mask);
    # TF 2.21 for this program: [[1.3, 1.4], [1.6, 1.7]] (unmasked: [[1.15, 1.25], [1.15, 1.25]])
    class Pair(L.Layer):
        def call(self, query, value, value_mask=None):
            if value_mask is None:
                return tf.reduce_mean(value, 1) + tf.reduce_mean(query, 1)
            m = tf.cast(value_mask, value.dtype)[..., None]
            return tf.reduce_sum(value * m, 1) / tf.reduce_sum(m, 1) + tf.reduce_mean(query, 1)
    iq, iv = keras.Input((3,), dtype="int32"), keras.Input((4,), dtype="int32")
    table = L.Embedding(5, 2, mask_zero=True)
    m = keras.Model([iq, iv], Pair()(L.Embedding(5, 2, embeddings_initializer="ones")(iq), table(iv)))
    table.set_weights([np.arange(10, dtype=np.float32).reshape(5, 2) / 10])
    q, v = np.array([[1, 2, 3], [1, 1, 1]]), np.array([[1, 2, 0, 0], [3, 0, 0, 0]])
    np.testing.assert_allclose(np.asarray(m([q, v])), [[1.3, 1.4], [1.6, 1.7]], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tf.function(lambda a, b: m([a, b]))(tf.constant(q), tf.constant(v))),
                               [[1.3, 1.4], [1.6, 1.7]], rtol=1e-6)


def test_stacked_rnn_cells_structure_as_keras():
    # TF 2.21: state_size [[3, 3], 2, 4], output_size 4; weights kernel, recurrent_kernel, bias per
    # cell in order; a direct call takes and returns one entry per cell (a list, or a lone tensor)
    cells = [L.LSTMCell(3), L.GRUCell(2), L.SimpleRNNCell(4)]
    st = L.StackedRNNCells(cells)
    assert st.state_size == [[3, 3], 2, 4] and st.output_size == 4
    rnn = L.RNN(cells, return_state=True)
    out = rnn(np.ones((2, 5, 3), np.float32))
    assert [np.shape(o) for o in tf.nest.flatten(out)] == [(2, 4), (2, 3), (2, 3), (2, 2), (2, 4)]
    assert [len(s) for s in out[1:]] == [2, 1, 1]
    assert [w.name for w in rnn.weights] == ["kernel", "recurrent_kernel", "bias"] * 3
    x = np.ones((2, 3), np.float32)
    o, s = st(x, [[np.zeros((2, 3), np.float32)] * 2, np.zeros((2, 2), np.float32), np.zeros((2, 4), np.float32)])
    assert o.shape == (2, 4) and len(s[0]) == 2 and s[1].shape == (2, 2) and s[2].shape == (2, 4)
    # the config round trip keeps the cells (load_model needs it)
    again = L.RNN.from_config(rnn.get_config())
    assert isinstance(again.cell, L.StackedRNNCells) and [type(c).__name__ for c in again.cell.cells] == \
        ["LSTMCell", "GRUCell", "SimpleRNNCell"]
    again(np.ones((2, 5, 3), np.float32))
    again.set_weights(rnn.get_weights())
    for a, b in zip(tf.nest.flatten(again(np.ones((2, 5, 3), np.float32))), tf.nest.flatten(out)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_stacked_cells_dropout_masks_once_per_sequence():
    # each cell's dropout mask is drawn once per call, as a lone cell's (Keras 3): with dropout 0.5
    # and all-ones inputs, every step of the first cell sees the same dropped features, so a
    # SimpleRNN stack with zero recurrent kernels gives the same output at every step
    cells = [L.SimpleRNNCell(3, dropout=0.5, seed=1), L.SimpleRNNCell(2, dropout=0.5, seed=2)]
    rnn = L.RNN(cells, return_sequences=True)
    x = np.ones((4, 6, 5), np.float32)
    rnn(x)
    rnn.set_weights([w if w.ndim != 2 or i % 3 != 1 else np.zeros_like(w)
                     for i, w in enumerate(rnn.get_weights())])
    y = np.asarray(rnn(x, training=True))
    np.testing.assert_allclose(y, np.repeat(y[:, :1], 6, axis=1), rtol=1e-6)
    assert not np.allclose(y, np.asarray(rnn(x, training=False)))


def test_conv_lstm_trains_traces_and_has_fd_gradients():
    # outputs against TF 2.21 are in test_keras_layer_reference (tests/layer_cases.py: convlstm*)
    from conftest import check_grads
    rng = np.random.default_rng(3)
    layer = L.ConvLSTM2D(2, 2, padding="same", return_sequences=True, dtype="float64")
    x = rng.standard_normal((2, 3, 4, 3, 2))
    layer(x)
    check_grads(lambda v: layer(v), [x], order=1)
    inp = keras.Input((3, 4, 3, 2))                      # unknown batch: the zero states follow it
    out = L.GlobalAveragePooling2D()(L.ConvLSTM2D(3, 2, padding="same")(inp))
    m = keras.Model(inp, L.Dense(1)(out))
    assert m.output_shape == (None, 1)
    m.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    xs = rng.standard_normal((16, 3, 4, 3, 2)).astype(np.float32)
    ys = xs.mean(axis=(1, 2, 3, 4))[:, None]
    first = m.evaluate(xs, ys, verbose=0)
    m.fit(xs, ys, epochs=20, batch_size=8, verbose=0)
    assert m.evaluate(xs, ys, verbose=0) < 0.5 * first
    with pytest.raises(ValueError, match="expected ndim=5"):
        L.ConvLSTM2D(3, 2)(np.ones((2, 4, 5, 6), np.float32))
