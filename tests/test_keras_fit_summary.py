"""Model.summary() prints Keras 3's table: the expected texts below are what TF 2.21 /
Keras 3.15 prints for the same models (non-terminal output, 80 columns)."""
import numpy as np

from tapeflow import keras

SEQ = """\
Model: "seq"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ hidden (Dense)                  │ (None, 4)              │            16 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ batch_normalization_long_name_… │ (None, 4)              │            16 │
│ (BatchNormalization)            │                        │               │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ out (Dense)                     │ (None, 1)              │             5 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 97 (392.00 B)
 Trainable params: 29 (116.00 B)
 Non-trainable params: 8 (32.00 B)
 Optimizer params: 60 (244.00 B)
"""

GRAPH = """\
Model: "graph"
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃ Layer (type)        ┃ Output Shape      ┃    Param # ┃ Connected to      ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│ x (InputLayer)      │ (None, 3)         │          0 │ -                 │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ a (Dense)           │ (None, 2)         │          8 │ x[0][0]           │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ b (Dense)           │ (None, 2)         │          8 │ x[0][0]           │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ cat (Concatenate)   │ (None, 4)         │          0 │ a[0][0], b[0][0]  │
└─────────────────────┴───────────────────┴────────────┴───────────────────┘
 Total params: 16 (64.00 B)
 Trainable params: 16 (64.00 B)
 Non-trainable params: 0 (0.00 B)
"""


def test_sequential_summary_as_keras_3(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu", name="hidden"),
                          keras.layers.BatchNormalization(name="batch_normalization_long_name_here"),
                          keras.layers.Dense(1, name="out")], name="seq")
    m.compile(optimizer="adam", loss="mse")
    m.fit(np.ones((4, 3)), np.ones((4, 1)), verbose=0)     # Adam's state shows as optimizer params
    m.summary()
    assert capsys.readouterr().out == SEQ


def test_functional_summary_with_connections_as_keras_3(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    i = keras.Input((3,), name="x")
    a = keras.layers.Dense(2, name="a")(i)
    b = keras.layers.Dense(2, name="b")(i)
    keras.Model(i, keras.layers.Concatenate(name="cat")([a, b]), name="graph").summary()
    assert capsys.readouterr().out == GRAPH
    lines = []
    keras.Model(i, a, name="chain").summary(print_fn=lines.append)
    assert "Connected to" not in lines[0] and "x (InputLayer)" in lines[0]
