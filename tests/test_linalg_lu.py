"""tf.linalg.lu, lu_reconstruct, lu_solve, lu_matrix_inverse against TF 2.21 (tests/data/lu_tf.json,
recorded by tests/tf_reference/make_lu_reference.py), eagerly and compiled; gradients against finite
differences (TF 2.21 has none for Lu: a LookupError)."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "tf_reference"))
from lu_cases import cases, rhs_of  # noqa: E402

REF = json.loads((HERE / "data" / "lu_tf.json").read_text())
CASES = cases()


def _all(x, rhs):
    lu, p = tf.linalg.lu(x)
    return lu, p, tf.linalg.lu_reconstruct(lu, p), tf.linalg.lu_solve(lu, p, rhs), tf.linalg.lu_matrix_inverse(lu, p)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("key", sorted(k for k in REF if "error" not in REF[k]))
def test_values_are_tfs(key, compiled):
    name, dt = key.split("/")
    a = CASES[name]
    x, rhs = tf.constant(a, getattr(tf, dt)), tf.constant(rhs_of(a), getattr(tf, dt))
    lu, p, rec, sol, inv = (tf.function(_all) if compiled else _all)(x, rhs)
    want = REF[key]
    # the factors are TF's bits (the same pivots and operations, one rank-1 update per column); the
    # solves go through tapeflow's triangular solves: TF's to rounding
    np.testing.assert_array_equal(lu.numpy(), np.array(want["lu"], dt))
    assert p.dtype == tf.int32 and p.numpy().tolist() == want["p"]
    tol = 1e-5 if dt == "float32" else 1e-12
    for got, w in ((rec, want["rec"]), (sol, want["sol"]), (inv, want["inv"])):
        np.testing.assert_allclose(got.numpy(), np.array(w), rtol=tol, atol=tol)


@pytest.mark.parametrize("compiled", [False, True])
def test_singular_and_bad_inputs_raise_tfs_errors(compiled):
    lu = tf.function(tf.linalg.lu) if compiled else tf.linalg.lu
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible"):   # TF 2.21's text
        lu(tf.constant(CASES["singular"], tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input matrix must be square"):
        lu(tf.ones((2, 3)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input tensor must have rank >= 2, got 1"):
        lu(tf.ones(3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'T' of int32"):
        lu(tf.constant([[1, 2], [3, 4]]))
    assert tf.linalg.lu(tf.constant(CASES["a3"]), output_idx_type=tf.int64)[1].dtype == tf.int64


def test_gradients_match_finite_differences():
    a = CASES["batch"][0]
    w = np.arange(16).reshape(4, 4) % 5 + 1.0

    def f(x):
        lu_, _ = tf.linalg.lu(x)
        return tf.reduce_sum(lu_ * lu_ * w) + tf.reduce_sum(tf.linalg.lu_matrix_inverse(*tf.linalg.lu(x)))
    x = tf.constant(a)
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    g = t.gradient(y, x).numpy()
    eps, fd = 1e-6, np.zeros_like(a)
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        fd[i] = (float(f(tf.constant(a + d))) - float(f(tf.constant(a - d)))) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)
