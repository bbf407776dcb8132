"""tapeflow.function's fast path (a signature seen before): plain Tensors / NumPy arrays and
Python scalars, positional or by keyword, reach the cached trace without the slow path's
signature walk, and never the trace of another signature."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf


def _no_slow_path(f):
    """From now on a call that leaves the fast path fails the test."""
    def slow(args, kwargs):
        raise AssertionError(f"slow path taken for args={args!r} kwargs={kwargs!r}")
    f._call_slow = slow


def test_python_scalars_take_the_fast_path_to_their_own_trace():
    def body(x, s):
        # 1, 1.0 and True are equal and hash alike: each must still get its own trace
        if isinstance(s, bool):
            return x * 10.0
        return x * (2.0 if isinstance(s, int) else 3.0) + (0.5 if s is None else 0.0)

    f = tf.function(body)
    x = tf.constant([1.0, 2.0])
    args = [1, 1.0, True, None]  # (a fifth trace would warn)
    for s in args:
        f(x, s)
    assert f.experimental_get_tracing_count() == len(args)
    _no_slow_path(f)
    for _ in range(2):
        for s in args:
            want = body(x, s).numpy()
            np.testing.assert_array_equal(f(x, s).numpy(), want, err_msg=repr(s))
            np.testing.assert_array_equal(f(x.numpy(), s).numpy(), want, err_msg=repr(s))
    assert f.experimental_get_tracing_count() == len(args)


def test_strings_and_keywords():
    def body(x, mode="a", scale=1.0):
        return x * scale if mode == "a" else x - scale

    f = tf.function(body)
    x = tf.constant([3.0])
    f(x, "a", scale=2.0)
    f(x, "a", 2.0)  # the same trace: a keyword for a positional parameter moves to its place
    f(x, "b", scale=2.0)
    f(x, mode="b", scale=4.0)
    assert f.experimental_get_tracing_count() == 3
    _no_slow_path(f)
    for call, want in [(lambda: f(x, "a", scale=2.0), 6.0), (lambda: f(x, "a", 2.0), 6.0),
                       (lambda: f(x, "b", scale=2.0), 1.0), (lambda: f(x, mode="b", scale=4.0), -1.0)]:
        assert float(call()[0]) == want
    assert f.experimental_get_tracing_count() == 3


def test_other_arguments_keep_the_slow_path():
    f = tf.function(lambda x, s: x * s)
    x = tf.constant([1.0])
    v = tf.Variable([2.0])
    assert float(f(x, np.float32(2.0))[0]) == 2.0  # a NumPy scalar: keyed by value, by the slow path
    assert float(f(x, v)[0]) == 2.0                 # a Variable: bound per call, by the slow path
    assert float(f(x, s=tf.constant([3.0]))[0]) == 3.0  # a tensor by keyword
    _no_slow_path(f)
    for call in (lambda: f(x, np.float32(2.0)), lambda: f(x, v), lambda: f(x, s=tf.constant([3.0]))):
        with pytest.raises(AssertionError, match="slow path taken"):
            call()


def test_input_signature_turns_a_python_number_into_an_input():
    f = tf.function(lambda x, s: x * s, input_signature=[tf.TensorSpec([None], tf.float32),
                                                          tf.TensorSpec([], tf.float32)])
    x = tf.constant([1.0, 2.0])
    for s in (2.0, 3.0, 2.0):  # a tensor input, not a constant of the trace: each call's value counts
        np.testing.assert_array_equal(f(x, s).numpy(), np.array([1.0, 2.0], np.float32) * s)
    assert f.experimental_get_tracing_count() == 1
