"""tf.bitwise and the &, |, ^, ~ operators on integer tensors, against TF 2.21's values (literals,
recorded with the peers venv), eager == compiled (incl. the fused tier's scalar forms)."""
import numpy as np
import pytest

import tapeflow as tf

A = np.array([5, -3, 12, 0, 2 ** 31 - 1], np.int32)
B = np.array([3, 1, 10, -1, 1], np.int32)
# TF 2.21 on A, B
WANT = {"bitwise_and": [1, 1, 8, 0, 1], "bitwise_or": [7, -3, 14, -1, 2147483647],
        "bitwise_xor": [6, -4, 6, -1, 2147483646], "left_shift": [40, -6, 12288, 0, -2],
        "right_shift": [0, -2, 0, 0, 1073741823]}


@pytest.mark.parametrize("op", sorted(WANT))
def test_values_match_tf(op):
    f = getattr(tf.bitwise, op)
    r = f(tf.constant(A), tf.constant(B))
    assert r.dtype == tf.int32 and r.numpy().tolist() == WANT[op]
    g = tf.function(lambda a, b: f(a, b) + 0)
    for _ in range(3):
        assert g(tf.constant(A), tf.constant(B)).numpy().tolist() == WANT[op]


def test_invert_and_dtypes():
    # TF 2.21: invert of A; uint8 wraps; int8 shifts wrap and clamp
    assert tf.bitwise.invert(tf.constant(A)).numpy().tolist() == [-6, 2, -13, -1, -2147483648]
    assert tf.bitwise.invert(tf.constant([0, 5], tf.uint8)).numpy().tolist() == [255, 250]
    for dt, want in ((tf.int8, [1, -56, 56]), (tf.int16, [1, 200, 56]), (tf.int64, [1, 200, 56]),
                     (tf.uint8, [1, 200, 56])):
        r = tf.bitwise.left_shift(tf.constant([1, 100, 7], dt), tf.constant([0, 1, 3], dt))
        assert r.dtype == dt and r.numpy().tolist() == want
    # Python ints: int32 (TF 2.21: bitwise_and(6, 3) is an int32 2)
    r = tf.bitwise.bitwise_and(6, 3)
    assert r.dtype == tf.int32 and int(r.numpy()) == 2
    assert tf.bitwise.bitwise_or(tf.constant([[1], [2]]), tf.constant([4, 8])).numpy().tolist() == [[5, 9], [6, 10]]


def test_shifts_clamp_as_tf():
    # TF 2.21 clamps the shift to [0, bits - 1]
    ls = tf.bitwise.left_shift(tf.constant([1, 1, 1, -8, 5]), tf.constant([31, 32, 40, 1, -1]))
    assert ls.numpy().tolist() == [-2147483648, -2147483648, -2147483648, -16, 5]
    rs = tf.bitwise.right_shift(tf.constant([-8, 8, -1, 8, 5]), tf.constant([1, 32, 40, 33, -1]))
    assert rs.numpy().tolist() == [-4, 0, -1, 0, 5]
    assert tf.bitwise.left_shift(tf.constant([1, 255], tf.uint8), tf.constant([8, 9], tf.uint8)).numpy().tolist() == [128, 128]
    assert tf.bitwise.right_shift(tf.constant([255, 255], tf.uint8), tf.constant([8, 200], tf.uint8)).numpy().tolist() == [1, 1]
    assert tf.bitwise.right_shift(tf.constant([-128, 127], tf.int8), tf.constant([8, 100], tf.int8)).numpy().tolist() == [-1, 0]
    assert int(tf.bitwise.left_shift(1, 40).numpy()) == -2147483648   # two Python ints: int32, clamped at 31
    f = tf.function(lambda a, b: tf.bitwise.left_shift(a, b) * 1, jit_compile=True)
    for _ in range(3):
        r = f(tf.constant([1, 1, 1, -8, 5] * 50), tf.constant([31, 32, 40, 1, -1] * 50))
    assert r.numpy().tolist()[:5] == [-2147483648, -2147483648, -2147483648, -16, 5]


def test_operators():
    x, y = tf.constant([6, 5]), tf.constant([3, 1])
    # TF 2.21: & | ^ ~ on int tensors are bitwise; on bools logical; << and >> are TypeErrors
    assert (x & y).numpy().tolist() == [2, 1] and (x | y).numpy().tolist() == [7, 5]
    assert (x ^ y).numpy().tolist() == [5, 4] and (~x).numpy().tolist() == [-7, -6]
    assert (x & 3).numpy().tolist() == [2, 1] and (3 & x).numpy().tolist() == [2, 1]
    bx, by = tf.constant([True, False]), tf.constant([True, True])
    assert (bx & by).numpy().tolist() == [True, False] and (bx | by).numpy().tolist() == [True, True]
    assert (bx ^ by).numpy().tolist() == [False, True] and (~bx).numpy().tolist() == [False, True]
    with pytest.raises(TypeError):
        x << y
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant([1.0]) & tf.constant([1.0])
    # the fused tier's scalar forms (np.bitwise_* from the ufuncs) give the kernels' values
    f = tf.function(lambda a, b: ((a & b) | (a ^ 7)) + (~b), jit_compile=True)
    a = np.arange(-300, 300, dtype=np.int32)
    b = (a * 7919) % 257
    for _ in range(3):
        r = f(tf.constant(a), tf.constant(b))
    np.testing.assert_array_equal(r.numpy(), ((a & b) | (a ^ 7)) + (~b))


def test_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="bitwise_and"):
        tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([1.0]))      # TF: InvalidArgumentError
    with pytest.raises(tf.errors.InvalidArgumentError, match="invert"):
        tf.bitwise.invert(tf.constant([True]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="bitwise_and"):
        tf.bitwise.bitwise_and(tf.constant([1]), tf.constant([1], tf.int64))
    assert tf.bitwise.bitwise_and.__module__ == "tapeflow.bitwise"
