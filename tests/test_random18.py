"""tf.random additions of wave 18b: split / fold_in / full-range stateless integers / create_rng_state
against TF 2.21's numbers (TF's Philox, bit for bit, eager and traced), and gamma / poisson /
stateless_gamma / stateless_poisson / stateless_categorical, which are not TF's numbers, against
their exact distributions (goodness-of-fit tests a wrong distribution cannot pass)."""
import numpy as np
import pytest

import tapeflow as tf


def _both(fn):
    return [fn(), tf.function(fn)()]


def test_split_fold_in_and_full_range_ints_are_tfs():
    for got in _both(lambda: tf.random.split((1, 2))):
        # TF 2.21: tf.random.split((1, 2)) -> int32 [[1105988140, 1738052849], [-335576002, 370444179]]
        assert got.dtype == tf.int32
        np.testing.assert_array_equal(got.numpy(), [[1105988140, 1738052849], [-335576002, 370444179]])
    got = tf.random.split(tf.constant([3, 4], tf.int64), 3)
    np.testing.assert_array_equal(got.numpy(), [   # TF 2.21
        [-2882898006462487541, 4520458231610095266], [-3428664559879909945, 8685440493091131194],
        [-6881996267145200744, 351138900906496178]])
    for got in _both(lambda: tf.random.fold_in((1, 2), 7)):
        np.testing.assert_array_equal(got.numpy(), [1105988140, 7])          # TF 2.21
    got = tf.random.fold_in(tf.constant([5, 6], tf.int64), tf.constant(9, tf.int64))
    np.testing.assert_array_equal(got.numpy(), [-8166752306318964373, 9])  # TF 2.21
    got = tf.random.stateless_uniform([3], (1, 2), minval=None, maxval=None, dtype=tf.int64)
    np.testing.assert_array_equal(got.numpy(), [7464880146280614444, 1591045637757961278,
                                                -1057468755545501549])      # TF 2.21
    with pytest.raises(ValueError, match="both None"):                       # TF 2.21: ValueError
        tf.random.stateless_uniform([3], (1, 2), minval=None, maxval=5, dtype=tf.int32)


def test_create_rng_state():
    # TF 2.21: [5, 0, 0], [3, 64, 0] for 2**70 + 3, ThreeFry [5, 0]
    np.testing.assert_array_equal(tf.random.create_rng_state(5, "philox").numpy(), [5, 0, 0])
    np.testing.assert_array_equal(tf.random.create_rng_state(2 ** 70 + 3, "philox").numpy(), [3, 64, 0])
    np.testing.assert_array_equal(tf.random.create_rng_state(5, "threefry").numpy(), [5, 0])
    assert tf.random.create_rng_state(5, "philox").dtype == tf.int64


def _chi2_ok(counts, probs, n):
    # chi-square over bins with expected >= 5; the 99.99th percentile of chi2(df) < df + 6 sqrt(2 df) + 20
    exp = probs * n
    keep = exp >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    e = np.append(exp[keep], exp[~keep].sum())
    if e[-1] < 5:
        obs, e = obs[:-1], e[:-1]
    stat = float(np.sum((obs - e) ** 2 / e))
    df = len(e) - 1
    return stat < df + 6 * np.sqrt(2 * df) + 20, stat, df


@pytest.mark.parametrize("lam", [0.7, 4.0, 9.99, 10.0, 23.5, 300.0])
@pytest.mark.parametrize("stateless", [False, True])
def test_poisson_fits_the_pmf(lam, stateless):
    n = 20000
    x = (tf.random.stateless_poisson([n], (7, int(lam * 10)), lam) if stateless else
         tf.random.poisson([n], lam, seed=int(lam * 10))).numpy().astype(np.int64)
    k = np.arange(int(lam + 12 * np.sqrt(lam) + 20))
    from math import lgamma
    pmf = np.exp(k * np.log(lam) - lam - np.array([lgamma(v + 1) for v in k]))
    ok, stat, df = _chi2_ok(np.bincount(x, minlength=len(k))[:len(k)].astype(float), pmf, n)
    assert ok, (stat, df)


@pytest.mark.parametrize("alpha,beta", [(0.25, None), (1.0, 2.0), (3.7, None), (60.0, 0.5)])
@pytest.mark.parametrize("stateless", [False, True])
def test_gamma_fits_the_cdf(alpha, beta, stateless):
    n = 20000
    x = (tf.random.stateless_gamma([n], (3, 9), alpha, beta) if stateless else
         tf.random.gamma([n], alpha, beta, seed=11)).numpy().astype(np.float64)
    # probability-integral transform: igamma(alpha, beta x) is uniform for Gamma(alpha, rate beta)
    u = tf.math.igamma(tf.constant(alpha, tf.float64), tf.constant(x * (beta or 1.0))).numpy()
    ok, stat, df = _chi2_ok(np.histogram(u, bins=20, range=(0, 1))[0].astype(float), np.full(20, 0.05), n)
    assert ok, (stat, df)


def test_gamma_and_poisson_shapes_dtypes_and_traced_draws():
    x = tf.random.gamma([2], [1.0, 2.0, 3.0], beta=[[1.0], [2.0]], seed=3)
    assert x.shape == (2, 2, 3) and x.dtype == tf.float32 and (x.numpy() > 0).all()
    y = tf.random.poisson([4], [1.0, 20.0], dtype=tf.int64, seed=2)
    assert y.shape == (4, 2) and y.dtype == tf.int64
    assert tf.random.stateless_poisson([5], (1, 2), 3.0).dtype == tf.int32
    f = tf.function(lambda a: tf.random.gamma([3], a, seed=4))
    a, b = f(tf.constant(2.0)).numpy(), f(tf.constant(2.0)).numpy()
    assert not np.array_equal(a, b), "a traced random op draws fresh numbers on each call"
    s = tf.function(lambda: tf.random.stateless_gamma([4], (5, 6), 2.0))
    np.testing.assert_array_equal(s().numpy(), tf.random.stateless_gamma([4], (5, 6), 2.0).numpy())
    # the rate scales exactly (differentiable in beta)
    beta = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(beta)
        g = tf.random.stateless_gamma([3], (5, 6), 2.0, beta)
        total = tf.reduce_sum(g)
    np.testing.assert_allclose(tape.gradient(total, beta).numpy(), -g.numpy().sum() / 2.0, rtol=1e-5)


def test_stateless_categorical_frequencies_and_determinism():
    logits = tf.math.log(tf.constant([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]]))
    a = tf.random.stateless_categorical(logits, 20000, (4, 2))
    np.testing.assert_array_equal(a.numpy(), tf.function(
        lambda: tf.random.stateless_categorical(logits, 20000, (4, 2)))().numpy())
    assert a.dtype == tf.int64 and a.shape == (2, 20000)
    for row, p in zip(a.numpy(), ([0.2, 0.3, 0.5], [0.9, 0.05, 0.05])):
        ok, stat, df = _chi2_ok(np.bincount(row, minlength=3).astype(float), np.array(p), 20000)
        assert ok, (stat, df)


def test_gamma_sample_gradient_is_tfs_implicit_gradient():
    """Wave 22: gamma draws are differentiable in alpha as TF's (RandomGammaGrad: -dP/dalpha / density
    at the sample); they were stop_gradient'ed. The formula against TF 2.21's raw op, then the identity
    d E[x] / d alpha = 1 / beta over many draws, eagerly and compiled."""
    from tapeflow.ops.random_ops import _gamma_sample_grad
    a = np.array([0.3, 0.9, 1.0, 2.5, 7.0, 50.0, 0.05])
    x = np.array([0.01, 0.5, 1.3, 2.0, 9.5, 48.0, 1e-6])
    # TF 2.21: tf.raw_ops.RandomGammaGrad(alpha=a, sample=x) in float64
    want = [0.14920695356145883, 0.8696255848180521, 1.3365896776306756, 0.9534627029186169, 1.1884146844950567,
            0.9829997672601851, 0.000266353583143835]
    np.testing.assert_allclose(_gamma_sample_grad(tf.constant(a), tf.constant(x)).numpy(), want, rtol=1e-12)
    assert _gamma_sample_grad(tf.constant([2.0]), tf.constant([0.0])).numpy().tolist() == [0.0]   # (TF: 0)
    al, be = tf.Variable([0.5, 2.0, 9.0]), tf.constant([2.0, 1.0, 4.0])

    def mean_grad(alpha):
        with tf.GradientTape() as t:
            t.watch(alpha)
            m = tf.reduce_mean(tf.random.stateless_gamma([20000, 3], [1, 2], alpha=alpha, beta=be), axis=0)
        return t.gradient(m, alpha)
    g = mean_grad(al.read_value())
    np.testing.assert_allclose(g.numpy(), 1.0 / be.numpy(), rtol=0.02)
    np.testing.assert_allclose(tf.function(mean_grad)(al.read_value()).numpy(), g.numpy(), rtol=1e-5)
