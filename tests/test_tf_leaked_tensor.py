"""A symbolic tensor that leaks out of a tf.function (TF's function guide): ``.numpy()`` on it
is an AttributeError (TF: "'SymbolicTensor' object has no attribute 'numpy'") whose text says
what happened, and using it in another function is a TypeError, as in TF 2.21."""
from __future__ import annotations

import pytest

import tapeflow as tf


def test_numpy_of_a_leaked_tensor_is_an_attribute_error_that_says_it_leaked():
    leaked = {}

    @tf.function
    def f(a):
        leaked["x"] = a + 1
        return a + 2
    assert int(f(tf.constant(1))) == 3
    with pytest.raises(AttributeError) as e:
        leaked["x"].numpy()
    msg = str(e.value)
    assert msg.startswith("'SymbolicTensor' object has no attribute 'numpy'")
    assert "escaped a finished tapeflow.function" in msg and "inside" not in msg

    @tf.function
    def g(b):
        return b + leaked["x"]
    with pytest.raises(TypeError):
        g(tf.constant(2))


def test_numpy_while_tracing_says_so():
    @tf.function
    def f(a):
        return a.numpy()
    with pytest.raises(AttributeError, match="inside tapeflow.function"):
        f(tf.constant(1))
