"""keras.utils names added in wave 21: get_source_inputs (and FeatureSpace, below)."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras


def test_get_source_inputs_as_keras():
    # Keras 3.15 (TF 2.21), the same graph: [a, b] for e and for a + b; [a] for a and c; 5 for 5
    a, b = K.Input((3,)), K.Input((3,), name="b")
    c = K.layers.Dense(2)(a)
    d = K.layers.Concatenate()([c, b, a])
    e = K.layers.Dense(1)(d)
    src = K.utils.get_source_inputs(e)
    assert len(src) == 2 and src[0] is a and src[1] is b
    assert K.utils.get_source_inputs(a) == [a] and K.utils.get_source_inputs(c)[0] is a
    assert K.utils.get_source_inputs(5) == 5
    s2 = K.utils.get_source_inputs(a + b)
    assert len(s2) == 2 and s2[0] is a and s2[1] is b
    m = K.Model(K.utils.get_source_inputs(e), e)        # the use Keras documents: rebuild a model
    out = m([np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)])
    assert tuple(out.shape) == (2, 1)
