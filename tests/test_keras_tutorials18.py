"""Wave 18: what TF's tutorials (site/en/tutorials, run by benchmarks/tf_guides.py) showed
tapeflow printing otherwise than TF 2.21: symbolic shapes with unknown non-batch dims, and a
model named ''."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers


def _summary(model):
    lines = []
    model.summary(print_fn=lines.append)
    return "\n".join(lines)


def test_model_named_empty_string_keeps_it():
    # tutorials/customization/custom_layers: ResnetIdentityBlock calls super().__init__(name='')
    class Block(tf.keras.Model):
        def __init__(self):
            super().__init__(name="")
            self.d = L.Dense(2)

        def call(self, x):
            return self.d(x)

    m = Block()
    assert m.name == ""            # TF 2.21: ''
    m(tf.zeros([1, 3]))
    assert repr(m) == "<Block name=, built=True>"   # TF 2.21: <Block name=, built=True>
    assert _summary(m).splitlines()[0] == 'Model: ""'   # TF 2.21: Model: ""
    assert L.Dense(2, name="").name == ""           # TF 2.21: ''


def test_functional_unknown_spatial_dims_stay_unknown():
    i = tf.keras.Input((None, None, 3))
    o = L.Conv2D(2, 3, padding="same")(i)
    assert tuple(o.shape) == (None, None, None, 2)   # TF 2.21: (None, None, None, 2)
    # a valid-padded strided conv: the probe with unknown sides as 1 raised (window > input)
    o2 = L.Conv2D(2, 3, strides=2)(o)
    assert tuple(o2.shape) == (None, None, None, 2)  # TF 2.21: (None, None, None, 2)
    g = L.GlobalAveragePooling2D()(o2)
    assert tuple(g.shape) == (None, 2)               # TF 2.21: (None, 2)
    m = tf.keras.Model(i, g)
    x = np.random.default_rng(0).standard_normal((2, 9, 7, 3)).astype(np.float32)
    assert m(x).shape == (2, 2)


def test_sequential_unknown_time_dim():
    s = tf.keras.Sequential([L.Dense(3, input_shape=(None, 4)), L.LSTM(2, return_sequences=True),
                             L.Flatten()])
    # TF 2.21: (None, None) [(None, None, 3), (None, None, 2), (None, None)]
    assert tuple(s.output_shape) == (None, None)
    assert [tuple(l.output.shape) for l in s.layers] == [(None, None, 3), (None, None, 2), (None, None)]
    assert s(np.ones((2, 5, 4), np.float32)).shape == (2, 10)


def test_sequential_summary_shows_unknown_dims():
    # tutorials/customization/custom_layers, my_seq.summary()
    # a fresh session as the tutorial's: layer names carry a process-wide counter, and a longer
    # name (batch_normalization_3, after other tests in the worker) wraps the summary's row
    tf.keras.backend.clear_session()
    seq = tf.keras.Sequential([L.Conv2D(1, (1, 1), input_shape=(None, None, 3)), L.BatchNormalization(),
                               L.Conv2D(2, 1, padding="same")])
    seq(tf.zeros([1, 2, 3, 3]))
    rows = [ln for ln in _summary(seq).splitlines() if "(Conv2D)" in ln or "batch_normalization " in ln]
    # TF 2.21: every row's Output Shape is (None, None, None, C)
    assert len(rows) == 3
    assert all("(None, None, None, " in r for r in rows), rows
    assert "(None, None, None, 2)" in rows[-1]


def test_known_dims_unchanged():
    i = tf.keras.Input((8, 6, 3))
    o = L.Conv2D(4, 3, strides=2)(i)
    assert tuple(o.shape) == (None, 3, 2, 4)         # TF 2.21: (None, 3, 2, 4)
    s = tf.keras.Sequential([L.Dense(3, input_shape=(4,))])
    assert tuple(s.output_shape) == (None, 3)


def test_weights_from_an_unknown_dim_is_a_clear_error():
    # TF 2.21: ValueError "Shapes used to initialize variables must be fully-defined (no `None`
    # dimensions). Received: shape=(None, 3) for variable path='dense/kernel'"
    with pytest.raises(ValueError, match=r"shape \(None, None\).*unknown \(None\) dimensions"):
        L.Dense(3)(tf.keras.Input((None,)))
