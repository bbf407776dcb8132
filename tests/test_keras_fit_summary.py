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


# TF 2.21's model.summary() of an unbuilt Sequential (the text classification tutorial's): layers
# Keras 3 marks built at construction (no weights, no build) show 0 parameters, not "0 (unbuilt)"
UNBUILT_ROWS = [
    "│ embedding (Embedding)           │ ?                      │   0 (unbuilt) │",
    "│ dropout (Dropout)               │ ?                      │             0 │",
    "│ global_average_pooling1d        │ ?                      │             0 │",
    "│ dense (Dense)                   │ ?                      │   0 (unbuilt) │",
]


def test_unbuilt_summary_shows_layers_built_at_construction(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    keras.backend.clear_session()
    keras.Sequential([keras.layers.Embedding(10, 4), keras.layers.Dropout(0.2),
                      keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)]).summary()
    out = capsys.readouterr().out.splitlines()
    assert all(row in out for row in UNBUILT_ROWS), out


# TF 2.21 (Keras 3): layer.built right after construction, True for these and False otherwise
BUILT_AT_INIT = ["Activation", "ActivityRegularization", "AlphaDropout", "Dropout", "ELU", "GaussianDropout",
                 "GaussianNoise", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D",
                 "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D", "Identity", "LeakyReLU",
                 "Masking", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
                 "AveragePooling3D", "ReLU", "Reshape", "Softmax", "SpatialDropout1D", "SpatialDropout2D",
                 "SpatialDropout3D", "UnitNormalization"]
_ARGS = {"Dropout": (0.2,), "SpatialDropout1D": (0.2,), "SpatialDropout2D": (0.2,), "SpatialDropout3D": (0.2,),
         "GaussianNoise": (0.1,), "GaussianDropout": (0.1,), "AlphaDropout": (0.1,), "Activation": ("relu",),
         "Reshape": ((2,),), "Dense": (2,), "Embedding": (3, 2), "Rescaling": (1.0,), "Lambda": (lambda x: x,)}


def test_layers_built_at_construction_as_keras_3():
    for name in BUILT_AT_INIT + ["Flatten", "Dense", "Embedding", "Concatenate", "Add", "Rescaling", "Lambda",
                                 "LayerNormalization", "BatchNormalization"]:
        layer = getattr(keras.layers, name)(*_ARGS.get(name, ()))
        assert layer.built == (name in BUILT_AT_INIT), name
    # they still call correctly, and a subclass inherits the mark (Keras sets it in __init__)
    assert keras.layers.ReLU()(np.array([-1.0, 2.0], np.float32)).numpy().tolist() == [0.0, 2.0]

    class MyDropout(keras.layers.Dropout):
        pass

    class NoBuild(keras.layers.Layer):
        def call(self, x):
            return x
    assert MyDropout(0.1).built and not NoBuild().built
