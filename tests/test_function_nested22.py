"""A tapeflow.function called inside another one's trace (wave 22): traced as a function of its own once
per input signature, as TF 2.21 does, and inlined into the outer graph. Expected counts, side effects,
values and texts are TF 2.21's (noted)."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf


def test_inner_traced_once_per_signature_as_tf():
    log = []

    @tf.function
    def inner(x):
        log.append("inner")
        return x * 2

    @tf.function
    def outer(x):
        log.append("outer")
        return inner(x) + inner(x + 1)

    assert float(outer(tf.constant(1.0))) == 6.0
    # TF 2.21: the two calls of inner share its one trace (one Python side effect)
    assert (outer.experimental_get_tracing_count(), inner.experimental_get_tracing_count()) == (1, 1)
    assert log == ["outer", "inner"]
    assert float(outer(tf.constant(2.0))) == 10.0 and log == ["outer", "inner"]
    np.testing.assert_array_equal(outer(tf.constant([1.0, 2.0])).numpy(), [6.0, 10.0])
    assert (outer.experimental_get_tracing_count(), inner.experimental_get_tracing_count()) == (2, 2)
    # a direct call with a signature a nested call traced reuses that trace (TF 2.21: count stays 2)
    assert float(inner(tf.constant(3.0))) == 6.0 and inner.experimental_get_tracing_count() == 2
    assert log == ["outer", "inner", "outer", "inner"]
    # TF 2.21's text: the signatures the nested calls traced
    assert inner.pretty_printed_concrete_signatures() == (
        "Input Parameters:\n  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.float32, name=None)\n"
        "Output Type:\n  TensorSpec(shape=(), dtype=tf.float32, name=None)\nCaptures:\n  None\n\n"
        "Input Parameters:\n  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=tf.float32, name=None)\n"
        "Output Type:\n  TensorSpec(shape=(2,), dtype=tf.float32, name=None)\nCaptures:\n  None")

    @tf.function
    def outer2(x, k):
        log.append(f"outer2 {k}")
        return inner(x) * k
    log.clear()
    assert float(outer2(tf.constant(1.0), 2)) == 4.0 and float(outer2(tf.constant(1.0), 3)) == 6.0
    # TF 2.21: the outer retraces for its Python argument; the inner, same signature, does not
    assert outer2.experimental_get_tracing_count() == 2 and inner.experimental_get_tracing_count() == 2
    assert log == ["outer2 2", "outer2 3"]


def test_inner_python_arguments_key_its_traces():
    log = []

    @tf.function
    def inner_py(x, n):
        log.append(n)
        return x * n

    @tf.function
    def outer(x):
        return inner_py(x, 2) + inner_py(x, 3) + inner_py(x, 2)
    assert float(outer(tf.constant(1.0))) == 7.0
    assert inner_py.experimental_get_tracing_count() == 2 and log == [2, 3]    # TF 2.21


def test_inner_variables_captured_and_passed():
    v = tf.Variable(1.0)

    @tf.function
    def bump(x):
        v.assign_add(x)
        return v.read_value()

    @tf.function
    def outer(x):
        return bump(x) + bump(x)
    # TF 2.21: 5.0 then 9.0, v == 5.0, bump traced once
    assert float(outer(tf.constant(1.0))) == 5.0 and float(outer(tf.constant(1.0))) == 9.0
    assert float(v) == 5.0 and bump.experimental_get_tracing_count() == 1

    w = tf.Variable(3.0)

    @tf.function
    def scale(var, x):
        var.assign(var * 2)
        return var * x

    @tf.function
    def outer_var(x):
        return scale(w, x)
    # TF 2.21: 6.0, 12.0, w == 12.0, scale traced once
    assert [float(outer_var(tf.constant(1.0))) for _ in range(2)] == [6.0, 12.0]
    assert float(w) == 12.0 and scale.experimental_get_tracing_count() == 1


def test_gradients_through_inlined_inner():
    @tf.function
    def sq(x):
        return x * x

    @tf.function
    def grad_outer(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = sq(x) * 3
        return t.gradient(y, x)
    assert float(grad_outer(tf.constant(2.0))) == 12.0 and sq.experimental_get_tracing_count() == 1   # TF 2.21

    @tf.custom_gradient
    def halve_grad(x):
        return tf.identity(x), lambda dy: dy * 0.5

    @tf.function
    def inner_cg(x):
        return halve_grad(x) * 2

    @tf.function
    def outer_cg(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = inner_cg(x)
        return t.gradient(y, x)
    # TF 2.21: 1.0 (the custom gradient, which the inner graph does not hold: traced in place)
    assert float(outer_cg(tf.constant(2.0))) == 1.0


def test_inner_closing_over_outer_tensor_and_structures():
    @tf.function
    def outer_closure(x):
        y = x * 2

        @tf.function
        def inner(z):
            return z + y       # a symbolic tensor of the outer trace: traced in place
        return inner(x)
    assert float(outer_closure(tf.constant(1.0))) == 3.0          # TF 2.21: 3.0

    @tf.function
    def ret(x):
        return {"a": x, "b": (x * 2, 3)}

    @tf.function
    def outer_t(x):
        r = ret(x)
        return r["a"] + r["b"][0] + tf.cast(r["b"][1], tf.float32)
    assert float(outer_t(tf.constant(1.0))) == 6.0               # TF 2.21: 6.0


def test_inner_with_input_signature():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def sig_inner(x):
        return tf.reduce_sum(x)

    @tf.function
    def outer(x):
        return sig_inner(x)
    assert float(outer(tf.constant([1.0, 2.0]))) == 3.0 and float(outer(tf.constant([1.0, 2.0, 3.0]))) == 6.0
    # TF 2.21: one trace of the inner (its signature), two of the outer
    assert sig_inner.experimental_get_tracing_count() == 1 and outer.experimental_get_tracing_count() == 2


def test_inner_creating_variables_and_outer_graph_unchanged():
    class M(tf.Module):
        def __init__(self):
            self.v = None

        @tf.function
        def __call__(self, x):
            if self.v is None:
                self.v = tf.Variable(tf.ones_like(x))
            return self.v * x
    m = M()

    @tf.function
    def outer_m(x):
        return m(x) + 1
    assert float(outer_m(tf.constant(2.0))) == 3.0 and float(outer_m(tf.constant(3.0))) == 4.0   # TF 2.21

    # the outer graph holds the inner's equations, no call: the same graph as the inner written inline
    W = tf.Variable(np.eye(4, dtype=np.float32))

    @tf.function
    def layer(x):
        return tf.nn.relu(tf.matmul(x, W))

    @tf.function
    def nested(x):
        return layer(layer(x))

    @tf.function
    def flat(x):
        return tf.nn.relu(tf.matmul(tf.nn.relu(tf.matmul(x, W)), W))
    x = np.ones((2, 4), np.float32)
    a, b = nested.get_concrete_function(x), flat.get_concrete_function(x)
    assert [e.prim.name for e in a.graph.eqns] == [e.prim.name for e in b.graph.eqns]
    np.testing.assert_array_equal(nested(x).numpy(), flat(x).numpy())


def test_recursion():
    @tf.function
    def recursive_fn(n):
        if n > 0:
            return recursive_fn(n - 1)
        return 1
    # TF 2.21: StagingError (recursion on a tensor condition); tapeflow: Python's RecursionError, at once
    with pytest.raises(RecursionError):
        recursive_fn(tf.constant(5))

    @tf.function
    def rec_py(n):
        return 1 if n == 0 else rec_py(n - 1) + 1

    @tf.function
    def outer(x):
        return x * rec_py(3)
    # TF 2.21: 8, and rec_py traced once per Python value (3, 2, 1, 0)
    assert int(outer(tf.constant(2))) == 8 and rec_py.experimental_get_tracing_count() == 4
