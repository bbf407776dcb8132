"""Traced signatures as TF 2.21 prints them, and ``TensorSpec(None)`` (unknown rank) in
``get_concrete_function``. The expected strings were printed by real TF 2.21 (.venv-peers)
for the same functions."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf


def test_tensor_spec_repr_is_tfs():
    assert repr(tf.TensorSpec([None, 3], tf.float32, name="inp")) == \
        "TensorSpec(shape=(None, 3), dtype=tf.float32, name='inp')"
    assert repr(tf.TensorSpec(None)) == "TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)"
    assert str(tf.TensorSpec([])) == "TensorSpec(shape=(), dtype=tf.float32, name=None)"
    assert repr(tf.TensorSpec([2], tf.int32)) == "TensorSpec(shape=(2,), dtype=tf.int32, name=None)"


def test_concrete_function_text_with_nested_arguments_and_outputs():
    @tf.function
    def g(x, y):
        return {"s": x + y[0], "t": (x, 3)}
    cf = g.get_concrete_function(tf.constant([1., 2.]), [tf.constant(1.), tf.constant(2.)])
    assert str(cf) == """ConcreteFunction Input Parameters:
  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=tf.float32, name=None)
  y (POSITIONAL_OR_KEYWORD): List[TensorSpec(shape=(), dtype=tf.float32, name=None), \
TensorSpec(shape=(), dtype=tf.float32, name=None)]
Output Type:
  Dict[['s', TensorSpec(shape=(2,), dtype=tf.float32, name=None)], ['t', \
Tuple[TensorSpec(shape=(2,), dtype=tf.float32, name=None), TensorSpec(shape=(), dtype=tf.int32, name=None)]]]
Captures:
  None"""


def test_captured_variable_and_no_output():
    v = tf.Variable(1.)

    @tf.function
    def h(x):
        v.assign_add(tf.reduce_sum(x))
    cf = h.get_concrete_function(tf.TensorSpec([None, 3], tf.float32))
    assert cf.pretty_printed_signature() == f"""Input Parameters:
  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)
Output Type:
  Literal[None]
Captures:
  {id(v)}: TensorSpec(shape=(), dtype=tf.resource, name=None)"""


def test_pretty_printed_concrete_signatures_lists_every_trace():
    @tf.function
    def double(a):
        return a + a
    double(tf.constant(1))
    double(tf.constant(1.1))
    sig = "Input Parameters:\n  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.{0}, name=None)\n" \
          "Output Type:\n  TensorSpec(shape=(), dtype=tf.{0}, name=None)\nCaptures:\n  None"
    assert double.pretty_printed_concrete_signatures() == sig.format("int32") + "\n\n" + sig.format("float32")


def test_unknown_rank_spec_traces_per_rank_and_binds_python_values_as_tf():
    traces = []

    @tf.function
    def pow(a, b):
        traces.append(a.shape.rank)
        return a ** b
    square = pow.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
    assert str(square) == """ConcreteFunction Input Parameters:
  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)
  b (POSITIONAL_OR_KEYWORD): Literal[2]
Output Type:
  TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)
Captures:
  None"""
    assert float(square(tf.constant(10.0))) == 100.0
    np.testing.assert_array_equal(square(tf.constant([[2., 3.]])).numpy(), [[4., 9.]])
    np.testing.assert_array_equal(square(a=tf.constant([1., 2., 3.])).numpy(), [1., 4., 9.])
    np.testing.assert_array_equal(square(tf.constant([5., 6.]), b=2).numpy(), [25., 36.])
    assert traces == [0, 2, 1]  # one trace per rank; the rank-1 trace serves every length
    # TF: a Python value other than the bound one, or another dtype, does not bind
    with pytest.raises(TypeError, match="Literal\\[2\\]"):
        square(tf.constant(10.0), b=3)
    with pytest.raises(TypeError, match="float32"):
        square(tf.constant(10))


def test_concrete_function_call_binds_python_values_as_tf():
    # TF 2.21: cf(x, 3) for a trace with b=2 is "TypeError: Binding inputs to tf.function failed
    # due to `Can not cast 3 to Literal[2]`"; leaving a traced Python value out is allowed
    @tf.function
    def f(a, b=2, c=3):
        return a * b * c
    cf = f.get_concrete_function(tf.constant(1.), 2)
    for call in (lambda: cf(tf.constant(3.)), lambda: cf(tf.constant(3.), 2), lambda: cf(tf.constant(3.), b=2),
                 lambda: cf(tf.constant(3.), c=3)):
        assert float(call()) == 18.0
    for call in (lambda: cf(tf.constant(3.), 3), lambda: cf(tf.constant(3.), b=3),
                 lambda: cf(tf.constant(3.), 2, 5), lambda: cf(tf.constant(3.), c=4)):
        with pytest.raises(TypeError, match="traced with Literal"):
            call()

    class M(tf.Module):
        @tf.function
        def g(self, x, d=None):
            return x * 2.0
    m = M()
    cg = m.g.get_concrete_function(tf.constant(1.), d={"k": 1})
    assert float(cg(tf.constant(2.), d={"k": 1})) == 4.0
    with pytest.raises(TypeError, match="argument 'd' is 2"):
        cg(tf.constant(2.), d={"k": 2})


def test_input_signature_concrete_function_text_names_the_specs():
    # TF 2.21 prints the input_signature's specs; the cache key of such a trace is not a
    # structure of the call, and str() raised IndexError on it (TD3's compiled update)
    @tf.function(input_signature=[tf.TensorSpec((2,), tf.float32), tf.TensorSpec((None, 3), tf.int32)])
    def f(x, y):
        return x * 2
    cf = f.get_concrete_function()
    assert str(cf) == """ConcreteFunction Input Parameters:
  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=tf.float32, name=None)
  y (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None, 3), dtype=tf.int32, name=None)
Output Type:
  TensorSpec(shape=(2,), dtype=tf.float32, name=None)
Captures:
  None"""
    # the concrete function still takes its tensors (the texts' key does not bind Python values)
    out = cf(tf.constant([1., 2.]), tf.zeros((4, 3), tf.int32))
    np.testing.assert_array_equal(out.numpy(), [2., 4.])


def test_structured_input_signature_and_outputs_in_tfs_form():
    # TF 2.21: ((TensorSpec(shape=(None, 2), dtype=tf.float32, name='x'),), {}) and the outputs'
    # structure (TF gives its graph's symbolic tensors; tapeflow a TensorSpec for each)
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def f(x):
        return tf.reduce_sum(x, axis=1)

    cf = f.get_concrete_function()
    (spec,), kwargs = cf.structured_input_signature
    assert kwargs == {} and spec == tf.TensorSpec([None, 2], tf.float32) and spec.name == "x"
    assert cf.structured_outputs.shape == (None,) and cf.structured_outputs.dtype == tf.float32

    @tf.function
    def g(x, y=2):
        return x * y, {"a": x}

    c = g.get_concrete_function(tf.TensorSpec([3]))
    assert c.structured_input_signature == ((tf.TensorSpec([3], tf.float32, name="x"), 2), {})
    out, d = c.structured_outputs
    assert out.shape == (3,) and d["a"].shape == (3,)
