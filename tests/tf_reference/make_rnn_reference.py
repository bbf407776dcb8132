"""Reference weights and outputs of TF 2.21's (Keras 3.15) recurrent layers, for
tests/test_keras_recurrent.py (which loads tests/data/rnn_tf_reference.npz, builds the
same model in tapeflow, sets TF's weights with set_weights and compares the outputs).

Run with real TensorFlow (the peers venv), from the repository root:

    .venv-peers/bin/python tests/tf_reference/make_rnn_reference.py

Each case is a Sequential model: a list of (layer class, kwargs) stored as JSON under
``<name>/spec``, its input ``<name>/x``, its weights ``<name>/w<k>`` (TF's get_weights order,
random values so that every weight matters, including the LSTM's forget bias) and its outputs
``<name>/y<k>`` (several with return_state).
"""
from __future__ import annotations

import json
import os

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "rnn_tf_reference.npz")

X = ("float", (2, 5, 3))
IDS = ("ids", (3, 6))

CASES = {
    "simple": ([("SimpleRNN", dict(units=4))], X),
    "simple_seq_relu": ([("SimpleRNN", dict(units=4, activation="relu", return_sequences=True))], X),
    "simple_state_back": ([("SimpleRNN", dict(units=3, return_state=True, go_backwards=True,
                                              return_sequences=True))], X),
    "simple_nobias": ([("SimpleRNN", dict(units=4, use_bias=False))], X),
    "lstm": ([("LSTM", dict(units=4))], X),
    "lstm_seq": ([("LSTM", dict(units=4, return_sequences=True))], X),
    "lstm_state": ([("LSTM", dict(units=3, return_state=True))], X),
    "lstm_back_seq": ([("LSTM", dict(units=4, go_backwards=True, return_sequences=True))], X),
    "lstm_nobias_act": ([("LSTM", dict(units=4, use_bias=False, activation="relu",
                                       recurrent_activation="hard_sigmoid"))], X),
    "gru": ([("GRU", dict(units=4))], X),
    "gru_seq_state": ([("GRU", dict(units=4, return_sequences=True, return_state=True))], X),
    "gru_before": ([("GRU", dict(units=4, reset_after=False, return_sequences=True))], X),
    "gru_back": ([("GRU", dict(units=3, go_backwards=True))], X),
    "gru_nobias": ([("GRU", dict(units=4, use_bias=False))], X),
    "stacked": ([("LSTM", dict(units=4, return_sequences=True)), ("GRU", dict(units=3))], X),
    # masking: ids with trailing and leading zeros, a fully padded row
    "emb_lstm": ([("Embedding", dict(input_dim=7, output_dim=3, mask_zero=True)), ("LSTM", dict(units=4))], IDS),
    "emb_lstm_seq": ([("Embedding", dict(input_dim=7, output_dim=3, mask_zero=True)),
                      ("LSTM", dict(units=4, return_sequences=True))], IDS),
    "emb_gru_back_seq": ([("Embedding", dict(input_dim=7, output_dim=3, mask_zero=True)),
                          ("GRU", dict(units=3, return_sequences=True, go_backwards=True))], IDS),
    "emb_simple_state": ([("Embedding", dict(input_dim=7, output_dim=3, mask_zero=True)),
                          ("SimpleRNN", dict(units=3, return_sequences=True, return_state=True))], IDS),
    "emb_stacked": ([("Embedding", dict(input_dim=7, output_dim=3, mask_zero=True)),
                     ("LSTM", dict(units=4, return_sequences=True)), ("GRU", dict(units=3))], IDS),
    "masking_gru": ([("Masking", dict(mask_value=0.0)), ("GRU", dict(units=4, return_sequences=True))], X),
    "masking_lstm": ([("Masking", dict(mask_value=0.0)), ("LSTM", dict(units=4))], X),
    "masking_only": ([("Masking", dict(mask_value=0.0))], X),
    "emb_dense_seq": ([("Embedding", dict(input_dim=7, output_dim=3, mask_zero=True)),
                       ("Dense", dict(units=2)), ("SimpleRNN", dict(units=3))], IDS),
    # wrappers: a nested layer is {"__layer__": [class, kwargs]}
    "bi_lstm": ([("Bidirectional", dict(layer={"__layer__": ["LSTM", dict(units=3)]}))], X),
    "bi_gru_seq_sum": ([("Bidirectional", dict(layer={"__layer__": ["GRU", dict(units=3, return_sequences=True)]},
                                                merge_mode="sum"))], X),
    "bi_simple_seq_ave": ([("Bidirectional", dict(layer={"__layer__": ["SimpleRNN", dict(units=2, return_sequences=True)]},
                                                   merge_mode="ave"))], X),
    "bi_lstm_mul": ([("Bidirectional", dict(layer={"__layer__": ["LSTM", dict(units=2)]}, merge_mode="mul"))], X),
    "bi_gru_none": ([("Bidirectional", dict(layer={"__layer__": ["GRU", dict(units=2, return_sequences=True)]},
                                             merge_mode=None))], X),
    "bi_lstm_state": ([("Bidirectional", dict(layer={"__layer__": ["LSTM", dict(units=2, return_state=True)]}))], X),
    "emb_bi_lstm_seq": ([("Embedding", dict(input_dim=7, output_dim=3, mask_zero=True)),
                         ("Bidirectional", dict(layer={"__layer__": ["LSTM", dict(units=2, return_sequences=True)]})),
                         ("GRU", dict(units=2))], IDS),
    "emb_bi_gru": ([("Embedding", dict(input_dim=7, output_dim=3, mask_zero=True)),
                    ("Bidirectional", dict(layer={"__layer__": ["GRU", dict(units=2)]}))], IDS),
    "td_dense": ([("TimeDistributed", dict(layer={"__layer__": ["Dense", dict(units=2, activation="tanh")]})),
                  ("LSTM", dict(units=2))], X),
    "emb_td_dense_lstm": ([("Embedding", dict(input_dim=7, output_dim=3, mask_zero=True)),
                           ("TimeDistributed", dict(layer={"__layer__": ["Dense", dict(units=2)]})),
                           ("LSTM", dict(units=2, return_sequences=True))], IDS),
    # a list of cells (Keras wraps it in StackedRNNCells); with return_state the states come per cell
    "rnn_cells": ([("RNN", dict(cell={"__cells__": [["LSTMCell", dict(units=3)], ["GRUCell", dict(units=2)],
                                                     ["SimpleRNNCell", dict(units=4)]]},
                                return_sequences=True, return_state=True))], X),
    "rnn_cells_back": ([("RNN", dict(cell={"__cells__": [["GRUCell", dict(units=3, reset_after=False)],
                                                          ["LSTMCell", dict(units=2)]]}, go_backwards=True))], X),
    "emb_rnn_cells": ([("Embedding", dict(input_dim=7, output_dim=3, mask_zero=True)),
                       ("RNN", dict(cell={"__cells__": [["SimpleRNNCell", dict(units=3)], ["LSTMCell", dict(units=2)]]},
                                    return_sequences=True))], IDS),
}


def build_layer(layers, cls, kw):
    """layers.<cls>(**kw), a nested {"__layer__": [cls, kwargs]} built first, {"__cells__": [[cls,
    kwargs], ...]} a list of cells (tests do the same)."""
    def arg(v):
        if isinstance(v, dict) and "__layer__" in v:
            return build_layer(layers, *v["__layer__"])
        if isinstance(v, dict) and "__cells__" in v:
            return [build_layer(layers, *c) for c in v["__cells__"]]
        return v
    return getattr(layers, cls)(**{k: arg(v) for k, v in kw.items()})


def make_input(kind, shape, rng):
    if kind == "ids":
        ids = rng.integers(1, 7, size=shape).astype(np.int32)
        ids[0, 4:] = 0            # trailing padding
        ids[1, :2] = 0            # leading padding
        ids[1, 3] = 0             # a hole
        ids[2, :] = 0             # all padded
        return ids
    x = rng.normal(size=shape).astype(np.float32)
    x[0, 3:] = 0.0                # Masking cases: padded steps
    x[1, 1] = 0.0
    return x


def loss_mask_case():
    """Keras 3 weighs a masked model output's loss and MeanMetricWrapper metrics by the mask
    (losses.loss.apply_mask): evaluate() of Embedding(mask_zero) -> LSTM(return_sequences) -> Dense."""
    rng = np.random.default_rng(7)
    ids = rng.integers(1, 6, size=(4, 5)).astype(np.int32)
    ids[0, 3:] = 0
    ids[1, :1] = 0
    ids[3, :] = 0
    y = rng.normal(size=(4, 5, 1)).astype(np.float32)
    sw = np.tile(np.array([1.0, 2.0, 0.5, 1.0], np.float32)[:, None], (1, 5))
    L = tf.keras.layers
    inp = tf.keras.Input((5,), dtype="int32")
    m = tf.keras.Model(inp, L.Dense(1)(L.LSTM(3, return_sequences=True)(L.Embedding(6, 2, mask_zero=True)(inp))))
    ws = [rng.uniform(-0.8, 0.8, size=w.shape).astype(np.float32) for w in m.get_weights()]
    m.set_weights(ws)
    m.compile(loss="mse", metrics=["mae"], weighted_metrics=["mse"])
    r1 = m.evaluate(ids, y, batch_size=4, verbose=0, return_dict=True)
    r2 = m.evaluate(ids, y, sample_weight=sw, batch_size=4, verbose=0, return_dict=True)
    print("loss_mask", r1, r2)
    out = {"loss_mask/ids": ids, "loss_mask/y": y, "loss_mask/sw": sw,
           "loss_mask/r1": np.array([r1["loss"], r1["mae"], r1["mse"]]),
           "loss_mask/r2": np.array([r2["loss"], r2["mae"], r2["mse"]])}
    for k, w in enumerate(ws):
        out[f"loss_mask/w{k}"] = w
    return out


def merge_mask_cases():
    """Functional models where masks meet merge layers: Keras 3 ORs the masks (Add, Multiply...;
    None when an input has none) and Concatenate widens then any()s them. The two inputs are ids
    with different padding; the merged sequence feeds an LSTM(return_sequences)."""
    rng = np.random.default_rng(11)
    a = rng.integers(1, 7, size=(3, 5)).astype(np.int32)
    b = rng.integers(1, 7, size=(3, 5)).astype(np.int32)
    a[0, 3:] = 0
    b[0, 4:] = 0
    a[1, :2] = 0
    b[2, :] = 0
    a[2, 1] = 0
    L = tf.keras.layers
    out = {"merge/a": a, "merge/b": b}
    for name in ("Add", "Multiply", "Concatenate", "Maximum", "Add_unmasked_b", "Concatenate_unmasked_b",
                 "Multiply_unmasked_b", "Minimum_unmasked_b"):
        cls = name.split("_")[0]
        ia, ib = tf.keras.Input((5,), dtype="int32"), tf.keras.Input((5,), dtype="int32")
        ea = L.Embedding(7, 3, mask_zero=True)(ia)
        eb = L.Embedding(7, 3, mask_zero="unmasked" not in name)(ib)
        h = getattr(L, cls)()([ea, eb])
        m = tf.keras.Model([ia, ib], L.LSTM(2, return_sequences=True)(h))
        ws = [rng.uniform(-0.8, 0.8, size=w.shape).astype(np.float32) for w in m.get_weights()]
        m.set_weights(ws)
        out[f"merge/{name}/y"] = np.asarray(m([a, b]))
        for k, w in enumerate(ws):
            out[f"merge/{name}/w{k}"] = w
        print("merge", name, [w.shape for w in ws])
    return out


def main():
    rng = np.random.default_rng(1818)
    out = {}
    for name, (spec, (kind, shape)) in CASES.items():
        x = make_input(kind, shape, rng)
        layers = [build_layer(tf.keras.layers, cls, kw) for cls, kw in spec]
        inp = tf.keras.Input(shape[1:], dtype="int32" if kind == "ids" else "float32")
        h = inp
        for layer in layers:
            h = layer(h)
        model = tf.keras.Model(inp, h)
        ws = [rng.uniform(-0.8, 0.8, size=w.shape).astype(np.float32) for w in model.get_weights()]
        model.set_weights(ws)
        ys = model(x)
        ys = tf.nest.flatten(ys)     # a StackedRNNCells' states come as one list per cell
        out[f"{name}/spec"] = np.array(json.dumps(spec))
        out[f"{name}/x"] = x
        for k, w in enumerate(ws):
            out[f"{name}/w{k}"] = w
        for k, y in enumerate(ys):
            out[f"{name}/y{k}"] = np.asarray(y)
        print(name, [w.shape for w in ws], [np.shape(y) for y in ys])
    out.update(loss_mask_case())
    out.update(merge_mask_cases())
    np.savez_compressed(OUT, **out)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
