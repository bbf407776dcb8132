"""py_function/numpy_function inside tf.function with a bare-dtype Tout: TF 2.21 gives the
output an unknown shape (TensorSpec(shape=<unknown>)) and calls the function on every call,
never while tracing. Checked against what TF printed for the same programs."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf


def test_bare_dtype_tout_runs_the_function_per_call_not_while_tracing(capsys):
    @tf.py_function(Tout=tf.float32)
    def py_plus(x, y):
        print("Executing eagerly.")
        return x + y

    @tf.function
    def wrapper(x, y):
        print("Tracing.")
        return py_plus(x, y)
    assert wrapper(tf.constant(1.0), tf.constant(2.0)).numpy() == np.float32(3.0)
    assert wrapper(tf.constant(1.0), tf.constant(2.0)).numpy() == np.float32(3.0)
    # TF 2.21 prints exactly this for the two calls
    assert capsys.readouterr().out == "Tracing.\nExecuting eagerly.\nExecuting eagerly.\n"
    # one trace serves any output shape the function returns
    np.testing.assert_array_equal(wrapper(tf.constant([1., 2.]), tf.constant([3., 4.])).numpy(), [4., 6.])
    cf = wrapper.get_concrete_function(tf.constant(1.0), tf.constant(2.0))
    assert "Output Type:\n  TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)" in str(cf)


def test_the_unknown_shape_is_visible_and_ops_on_it_say_what_to_do():
    seen = {}
    v = tf.Variable(0.)

    @tf.function
    def f(x):
        y = tf.numpy_function(lambda a: a + 1, [x], tf.float32)
        seen["shape"], seen["rank"] = str(y.shape), y.shape.rank
        return y
    f(tf.constant(1.))
    assert seen == {"shape": "<unknown>", "rank": None}  # TF: TensorShape(None)

    def unknown(x):
        return tf.numpy_function(lambda a: a + 1, [x], tf.float32)
    bad = [lambda x: unknown(x) * 2.0,
           lambda x: v.assign(unknown(x)),
           lambda x: tf.cond(x > 0, lambda: unknown(x), lambda: x)]
    for use in bad:
        with pytest.raises(tf.errors.InvalidArgumentError, match="unknown shape.*TensorSpec"):
            tf.function(use)(tf.constant(1.))
