"""tf.linalg.logm (wave 22) against TF 2.21 (tests/data/logm22_tf.npz and logm22_tf_errors.json, recorded by
tests/tf_reference/make_logm_reference.py): values, TF's errors (complex matrices only), eager == compiled,
gradients against finite differences (TF 2.21 registers none), and the eigenvector-conditioning guard."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "tf_reference"))
from make_logm_reference import cases, bad  # noqa: E402

REF = np.load(HERE / "data" / "logm22_tf.npz")
ERR = json.loads((HERE / "data" / "logm22_tf_errors.json").read_text())
CASES = cases()


@pytest.mark.parametrize("key", sorted(CASES))
def test_values_are_tfs(key):
    got = tf.linalg.logm(tf.constant(CASES[key]))
    want = REF[key]
    assert got.dtype.as_numpy_dtype == want.dtype and tuple(got.shape) == want.shape
    # eig-based vs TF's Schur-based: float rounding times the eigenvectors' condition (small here)
    tol = 2e-5 if want.dtype == np.complex64 else 1e-11
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max(initial=0))))


@pytest.mark.parametrize("key", sorted(ERR))
def test_errors_are_tfs(key):
    want = ERR[key]
    for f in (tf.linalg.logm, tf.function(tf.linalg.logm)):
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            f(tf.constant(bad()[key]))
        first = want["message"].split("\n")[0]
        core = first.split("}}")[-1].split(" [Op:")[0].strip().rstrip(".")
        assert core in str(info.value), (key, str(info.value), core)


def test_compiled_equals_eager():
    x = tf.constant(CASES["batch_2x3"])
    np.testing.assert_array_equal(tf.function(tf.linalg.logm)(x).numpy(), tf.linalg.logm(x).numpy())


def test_expm_of_logm_is_the_matrix():
    a = CASES["complex128_4"]
    l = tf.linalg.logm(tf.constant(a)).numpy()
    # (tapeflow's expm is real-only: a Taylor series in NumPy, enough for |l| ~ 2)
    e, term = np.eye(4, dtype=complex), np.eye(4, dtype=complex)
    for k in range(1, 60):
        term = term @ l / k
        e = e + term
    np.testing.assert_allclose(e, a, atol=1e-11)


def test_gradient_matches_finite_differences():
    a0 = CASES["batch_2x3"]
    r = np.random.RandomState(1)
    w1, w2 = r.randn(*a0.shape), r.randn(*a0.shape)

    def loss(a):
        y = tf.linalg.logm(a)
        return tf.reduce_sum(tf.math.real(y) * w1 + tf.math.imag(y) * w2)
    a = tf.constant(a0)
    with tf.GradientTape() as t:
        t.watch(a)
        y = loss(a)
    g = t.gradient(y, a).numpy()
    eps = 1e-6
    for part in (1.0, 1j):
        d = r.randn(*a0.shape) * part
        num = (float(loss(tf.constant(a0 + eps * d))) - float(loss(tf.constant(a0 - eps * d)))) / (2 * eps)
        ana = float(np.sum(np.real(np.conj(g) * d)))
        assert abs(ana - num) <= 1e-6 * (1 + abs(num)), (ana, num)


def test_defective_and_singular_matrices_give_nans():
    # TF 2.21: logm([[1, 1], [0, 1]]) = [[0, 1], [0, 0]] (Schur); the eigenvectors of a Jordan block are
    # dependent, so tapeflow's eig-based form says NaN rather than a wrong zero matrix (docs/differences.md)
    jordan = tf.linalg.logm(tf.constant(np.array([[1, 1], [0, 1]], np.complex64))).numpy()
    assert np.isnan(jordan).all()
    # TF 2.21: NaNs for a zero matrix; only the bad matrix of a batch
    out = tf.linalg.logm(tf.constant(np.stack([np.zeros((2, 2)), np.diag([2.0, 3.0])]).astype(np.complex128)))
    assert np.isnan(out.numpy()[0]).all()
    np.testing.assert_allclose(out.numpy()[1], np.diag(np.log([2.0, 3.0])), atol=1e-15)
