"""Eager Variable writes (assign / assign_add / assign_sub): the fast path that calls
assign_variable's kernel directly and takes an expression's fresh array without a
copy must keep every write's semantics: values are snapshots, a variable never
shares memory anyone can write, errors are TF's, tapes and traces see the same."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.tensor import _UnreadVariable


def test_a_soft_update_takes_the_expression_and_later_writes_leave_it_alone():
    p = tf.Variable(np.full(4, 2.0, np.float32))
    tp = tf.Variable(np.zeros(4, np.float32))
    before = tp.read_value()
    tp.assign(0.25 * p + 0.75 * tp)
    np.testing.assert_array_equal(tp.numpy(), np.full(4, 0.5, np.float32))
    np.testing.assert_array_equal(before.numpy(), np.zeros(4, np.float32))  # a read is a snapshot
    t = p * 3.0
    tp.assign(t)
    tp.assign_add(tf.ones(4))
    p.assign_sub(tf.ones(4))
    np.testing.assert_array_equal(t.numpy(), np.full(4, 6.0, np.float32))
    np.testing.assert_array_equal(tp.numpy(), np.full(4, 7.0, np.float32))
    np.testing.assert_array_equal(p.numpy(), np.ones(4, np.float32))


def test_a_variable_never_shares_memory_someone_can_write():
    v = tf.Variable(np.zeros(3, np.float32))
    user = np.ones(3, np.float32)
    v.assign(user)                        # a NumPy array: copied
    user[0] = 9.0
    c = tf.constant(np.full(3, 2.0, np.float32))
    view = c.numpy()
    v2 = tf.Variable(np.zeros(3, np.float32))
    v2.assign(c)                          # a tensor whose array is viewed elsewhere: copied
    w = tf.Variable(np.full(3, 5.0, np.float32))
    v3 = tf.Variable(np.zeros(3, np.float32))
    v3.assign(w)                          # another variable's value: copied
    w.assign_add(tf.ones(3))
    np.testing.assert_array_equal(v.numpy(), np.ones(3, np.float32))
    assert not np.shares_memory(v2._v, view)
    np.testing.assert_array_equal(v3.numpy(), np.full(3, 5.0, np.float32))
    # numpy() of a variable is a copy: writing it changes nothing
    v.numpy()[...] = 7.0
    np.testing.assert_array_equal(v.numpy(), np.ones(3, np.float32))


def test_eager_writes_keep_tf_errors():
    v = tf.Variable(np.zeros((2, 3), np.float32), name="w")
    # TF 2.21's text and classes: ValueError for assign, InvalidArgumentError for assign_add
    with pytest.raises(ValueError, match=r"^Cannot assign value to variable ' w:0': Shape mismatch.The variable "
                                         r"shape \(2, 3\), and the assigned value shape \(3,\) are incompatible.$"):
        v.assign(tf.ones(3))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"w.assign_add: value has shape \(3,\), variable has "
                                                             r"\(2, 3\)"):
        v.assign_add(tf.ones(3))
    with pytest.raises(TypeError, match=r"w.assign_sub: value has dtype float64, variable has float32"):
        v.assign_sub(tf.constant(np.ones((2, 3))))
    b = tf.Variable(np.array([True, False]))
    with pytest.raises(Exception, match="add"):
        b.assign_add(tf.constant(np.array([True, True])))
    np.testing.assert_array_equal(v.numpy(), np.zeros((2, 3), np.float32))


def test_eager_writes_return_what_tf_returns():
    v = tf.Variable(np.float32(1.0))
    for r in (v.assign(2.0), v.assign_add(1.0), v.assign_sub(tf.constant(np.float32(0.5)))):
        assert isinstance(r, _UnreadVariable)
    assert float(v.numpy()) == 2.5
    assert v.assign_add(1.0, read_value=False) is None
    with tf.GradientTape():
        assert v.assign(0.0) is v
        assert v.assign_add(1.0) is v
    assert float(v.numpy()) == 1.0


def test_writes_under_a_tape_and_in_a_function_agree_with_eager():
    def step(v, x):
        v.assign_add(x * 2.0)
        v.assign_sub(x)
        v.assign(v * 0.5 + x)
        return v.read_value()

    x = tf.constant(np.arange(3, dtype=np.float32))
    outs = []
    for mode in ("eager", "tape", "function"):
        v = tf.Variable(np.ones(3, np.float32))
        if mode == "tape":
            with tf.GradientTape():
                outs.append(step(v, x).numpy())
        elif mode == "function":
            outs.append(tf.function(step)(v, x).numpy())
        else:
            outs.append(step(v, x).numpy())
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])
