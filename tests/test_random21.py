"""Wave 21's random ops against TF 2.21 (tests/data/random21_tf.json, made by
tests/tf_reference/make_random21_reference.py): index_shuffle / random_index_shuffle, stateless_shuffle and
stateless_binomial bit for bit; stateless_parameterized_truncated_normal in distribution; the candidate
samplers; the tf.random.experimental namespace."""
import json
import math
import os

import numpy as np
import pytest

import tapeflow as tf

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "random21_tf.json")))


def _arr(d):
    return np.array(d["values"], dtype=d["dtype"]).reshape(d["shape"])


@pytest.mark.parametrize("rec", REF["index_shuffle"], ids=lambda r: f"{r['max_index']}-{r['dtype']}")
def test_index_shuffle_is_tfs(rec):
    dt = rec["dtype"]
    seed = np.array(rec["seed"], np.int64 if dt == "int64" else np.int32)
    got = tf.random.experimental.index_shuffle(tf.constant(np.array(rec["index"], dt)), seed,
                                               tf.constant(np.array(rec["max_index"], dt)))
    want = _arr(rec["out"])
    assert got.dtype == dt and tuple(got.shape) == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("rec", REF["random_index_shuffle"], ids=lambda r: f"{r['max_index']}-{r['rounds']}")
def test_random_index_shuffle_is_tfs(rec):
    got = tf.random_index_shuffle(tf.constant(rec["index"]), tf.constant(rec["seed"]), tf.constant(rec["max_index"]),
                                  rounds=rec["rounds"])
    np.testing.assert_array_equal(got.numpy(), _arr(rec["out"]))


def test_index_shuffle_is_a_permutation_and_traces():
    for top in (0, 1, 9, 1000, 70000):
        idx = np.arange(top + 1, dtype=np.int64)
        perm = tf.random.experimental.index_shuffle(idx, [3, 4], np.int64(top)).numpy()
        np.testing.assert_array_equal(np.sort(perm), idx)
    f = tf.function(lambda i: tf.random.experimental.index_shuffle(i, [5, 8], 9))
    np.testing.assert_array_equal(f(tf.range(10)).numpy(), [3, 8, 0, 1, 2, 7, 6, 9, 4, 5])   # TF 2.21 (its doc)


@pytest.mark.parametrize("name", ["index_shuffle_index_above_max", "index_shuffle_batched_seed",
                                  "index_shuffle_float", "random_index_shuffle_seed"])
def test_index_shuffle_errors_are_tfs(name):
    cls, msg = REF["errors"][name]
    calls = {"index_shuffle_index_above_max": lambda: tf.random.experimental.index_shuffle(tf.constant([3]), [1, 2], 0),
             "index_shuffle_batched_seed": lambda: tf.random.experimental.index_shuffle(tf.constant([5, 6, 7]),
                                                                                        [[1, 2], [3, 4], [5, 6]], 10),
             "index_shuffle_float": lambda: tf.random.experimental.index_shuffle(tf.constant(3.0), [1, 2], 10.0),
             "random_index_shuffle_seed": lambda: tf.random_index_shuffle(tf.constant(3), tf.constant([1, 2]),
                                                                          tf.constant(10))}
    with pytest.raises(getattr(tf.errors, cls)) as e:
        calls[name]()
    core = msg.split("}} ")[-1].split(" [Op:")[0]
    assert core in str(e.value)
    with pytest.raises(tf.errors.InvalidArgumentError, match="even and at least 4"):
        tf.random_index_shuffle(3, tf.constant([1, 2, 3]), 10, rounds=5)   # (TF: undefined behaviour, reads past)


@pytest.mark.parametrize("rec", REF["stateless_shuffle"], ids=lambda r: str(r["shape"]))
def test_stateless_shuffle_is_tfs(rec):
    v = tf.reshape(tf.range(int(np.prod(rec["shape"]))), rec["shape"])
    np.testing.assert_array_equal(tf.random.experimental.stateless_shuffle(v, seed=rec["seed"]).numpy(),
                                  _arr(rec["out"]))


def test_stateless_shuffle_traced_and_differentiable():
    x = tf.constant(np.arange(12.0).reshape(6, 2))
    f = tf.function(lambda v: tf.random.experimental.stateless_shuffle(v, seed=[7, 3]))
    np.testing.assert_array_equal(f(x).numpy(), tf.random.experimental.stateless_shuffle(x, seed=[7, 3]).numpy())
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(tf.random.experimental.stateless_shuffle(x, [7, 3]) * np.arange(12.0).reshape(6, 2))
    g = t.gradient(y, x).numpy()
    np.testing.assert_array_equal(np.sort(g.ravel()), np.arange(12.0))     # each row's weight lands on its source
    assert tf.random.experimental.stateless_shuffle(tf.constant(3), seed=[7, 3]).numpy() == 3     # TF 2.21


@pytest.mark.parametrize("rec", REF["binomial"], ids=lambda r: f"{r['shape']}-{r['pdtype']}-{r['odtype']}")
def test_stateless_binomial_is_tfs(rec):
    p = tf.constant(np.array(rec["probs"], rec["pdtype"]))
    c = tf.constant(np.array(rec["counts"], rec["pdtype"]))
    got = tf.random.stateless_binomial(rec["shape"], rec["seed"], c, p, output_dtype=rec["odtype"])
    want = _arr(rec["out"])
    assert got.dtype == rec["odtype"] and tuple(got.shape) == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_stateless_binomial_traced_and_errors():
    f = tf.function(lambda c, p: tf.random.stateless_binomial([5], [1, 2], c, p))
    np.testing.assert_array_equal(f(tf.constant(10.0), tf.constant(0.3)).numpy(), [5, 5, 5, 4, 4])   # TF 2.21
    for name, call in (("binomial_shape_suffix", lambda: tf.random.stateless_binomial([5], [1, 2], [1.0, 2.0], 0.5)),
                       ("binomial_bad_seed", lambda: tf.random.stateless_binomial([5], [1, 2, 3], 1.0, 0.5))):
        cls, msg = REF["errors"][name]
        with pytest.raises(getattr(tf.errors, cls)):
            call()
    with pytest.raises(tf.errors.InvalidArgumentError):         # TF: NotFoundError (no int kernel)
        tf.random.stateless_binomial([5], [1, 2], 3, tf.constant(1))


def _truncnorm_moments(m, s, lo, hi):
    a, b = (lo - m) / s, (hi - m) / s
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)          # noqa: E731
    upper = lambda x: 0.5 * math.erfc(x / math.sqrt(2))                     # noqa: E731  (1 - Phi, no cancellation)
    xphi = lambda x: 0.0 if math.isinf(x) else x * phi(x)                   # noqa: E731
    z = upper(a) - upper(b)
    mean = m + s * (phi(a) - phi(b)) / z
    var = s * s * (1 + (xphi(a) - xphi(b)) / z - ((phi(a) - phi(b)) / z) ** 2)
    return mean, math.sqrt(var)


@pytest.mark.parametrize("m, s, lo, hi", [(1.0, 2.0, 3.0, 9.0), (0.0, 1.0, -2.0, 2.0), (0.0, 1.0, 8.0, np.inf),
                                          (5.0, 0.5, -np.inf, 4.0), (0.0, 3.0, -0.1, 0.1)])
def test_parameterized_truncated_normal_distribution(m, s, lo, hi):
    n = 100000
    x = tf.random.stateless_parameterized_truncated_normal([n], [1, 2], m, s, lo, hi).numpy().astype(np.float64)
    assert x.min() >= lo and x.max() <= hi
    mean, std = _truncnorm_moments(m, s, lo, hi)
    assert abs(x.mean() - mean) < 5 * std / math.sqrt(n)
    assert abs(x.std() / std - 1) < 0.02
    # the CDF against the exact one (Kolmogorov-Smirnov, 1.95 / sqrt(n): the 0.1% level)
    xs = np.sort(x)[::97]
    a, b = (lo - m) / s, (hi - m) / s
    upper = lambda v: 0.5 * math.erfc(v / math.sqrt(2))                     # noqa: E731
    exact = np.array([(upper(a) - upper((v - m) / s)) / (upper(a) - upper(b)) for v in xs])
    emp = (np.arange(x.size)[::97] + 0.5) / x.size
    assert np.abs(exact - emp).max() < 1.95 / math.sqrt(n) + 1e-4


def test_parameterized_truncated_normal_tf_moments_shapes_and_errors():
    mom = REF["ptn_moments"]                                      # TF 2.21's own sample (100000 draws)
    x = tf.random.stateless_parameterized_truncated_normal([100000], [1, 2], 1.0, 2.0, 3.0, 9.0).numpy()
    assert abs(x.mean() - mom["mean"]) < 0.02 and abs(x.std() - mom["std"]) < 0.02
    assert x.dtype == np.float32
    a = tf.random.stateless_parameterized_truncated_normal([4, 3], [5, 6], [0.0, 10.0, -10.0], 1.0, [-1.0, 9.0, -11.0],
                                                           [1.0, 11.0, -9.0])
    assert tuple(a.shape) == (4, 3)
    v = a.numpy()
    assert (v[:, 0] >= -1).all() and (v[:, 1] >= 9).all() and (v[:, 2] <= -9).all()
    np.testing.assert_array_equal(v, tf.random.stateless_parameterized_truncated_normal(
        [4, 3], [5, 6], [0.0, 10.0, -10.0], 1.0, [-1.0, 9.0, -11.0], [1.0, 11.0, -9.0]).numpy())   # per seed
    for kw in ({"stddevs": -1.0}, {"minvals": 2.0, "maxvals": 1.0}):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid parameters"):    # TF 2.21's text
            tf.random.stateless_parameterized_truncated_normal([3], [1, 2], **kw)


# -- candidate samplers -----------------------------------------------------------------------------------------

TC = np.array([[1, 2]], np.int64)
UNI = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]


def test_fixed_unigram_expected_counts_are_tfs():
    # TF 2.21: no repeat among 5 unique draws (num_tries = 5): p * 5, with p = (k + 1) / 55
    s, te, se = tf.random.fixed_unigram_candidate_sampler(TC, 2, 5, True, 10, unigrams=UNI, seed=1)
    assert s.dtype == tf.int64 and te.dtype == tf.float32 and tuple(te.shape) == (1, 2)
    assert len(set(s.numpy().tolist())) == 5
    if np.isclose(te.numpy()[0, 0], 5 * 2 / 55):
        np.testing.assert_allclose(te.numpy(), [[0.1818181723356247, 0.27272728085517883]], rtol=1e-6)
    # non-unique, sharded, reserved ids, distortion (TF 2.21's values: expected counts are deterministic)
    s, te, se = tf.random.fixed_unigram_candidate_sampler(TC, 2, 5, False, 6, unigrams=UNI, num_shards=2, shard=1,
                                                          num_reserved_ids=2, distortion=0.5, seed=1)
    np.testing.assert_allclose(te.numpy(), [[0.4710817337036133, 0.8159374594688416]], rtol=1e-6)
    assert (s.numpy() >= 1).all() and (s.numpy() < 6).all()     # (id 0: this shard's reserved id, weight 0)


def test_fixed_unigram_frequencies_and_vocab_file(tmp_path):
    w = np.array(UNI, np.float64) ** 0.7
    p = w / w.sum()
    s = tf.random.fixed_unigram_candidate_sampler(TC, 2, 20000, False, 10, unigrams=UNI, distortion=0.7, seed=3)[0]
    freq = np.bincount(s.numpy(), minlength=10) / 20000
    np.testing.assert_allclose(freq, p, atol=4 * np.sqrt(p * (1 - p) / 20000).max())
    f = tmp_path / "vocab.txt"
    f.write_text("a,1\nb,2\nc,x,3\nd,4\n")
    s, te, se = tf.random.fixed_unigram_candidate_sampler(TC, 2, 3, True, 4, vocab_file=str(f), seed=1)
    assert sorted(set(s.numpy().tolist())) == sorted(s.numpy().tolist())
    f.write_text("a,1\nb,zz\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Wrong vocabulary format at line: b,zz"):   # TF 2.21
        tf.random.fixed_unigram_candidate_sampler(TC, 2, 1, True, 2, vocab_file=str(f))
    with pytest.raises(tf.errors.NotFoundError, match="No such file"):
        tf.random.fixed_unigram_candidate_sampler(TC, 2, 1, True, 2, vocab_file=str(tmp_path / "nope.txt"))
    for kw, needle in (({"unigrams": UNI}, "range is 9 must be equal to weights size  10"),
                       ({}, "Must provide either vocab_file or unigrams"),
                       ({"unigrams": UNI, "vocab_file": str(f)}, "Must only provide one of")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=needle):
            tf.random.fixed_unigram_candidate_sampler(TC, 2, 5, True, 9 if "range" in needle else 10, **kw)
    with pytest.raises(tf.errors.InvalidArgumentError, match="range is too small"):
        tf.random.fixed_unigram_candidate_sampler(TC, 2, 11, True, 10, unigrams=UNI)


def test_learned_unigram_learns_the_true_classes():
    tc = np.array([[3, 3]], np.int64)
    seed = 987654
    first = tf.random.learned_unigram_candidate_sampler(tc, 2, 2, False, 10, seed=seed)
    np.testing.assert_allclose(first[1].numpy(), [[0.2, 0.2]], rtol=1e-6)       # uniform: p = 1/10, 2 draws
    second = tf.random.learned_unigram_candidate_sampler(tc, 2, 2, False, 10, seed=seed)
    np.testing.assert_allclose(second[1].numpy(), [[2 * 3 / 12, 2 * 3 / 12]], rtol=1e-6)   # class 3 counted twice
    # TF 2.21, unique, first call: every class 1 - 0.9^6 (six tries)
    s, te, se = tf.random.learned_unigram_candidate_sampler(TC, 2, 5, True, 10, seed=424242)
    assert len(set(s.numpy().tolist())) == 5
    f = tf.function(lambda t: tf.random.learned_unigram_candidate_sampler(t, 2, 3, False, 10, seed=77)[1])
    np.testing.assert_allclose(f(TC).numpy(), [[0.3, 0.3]], rtol=1e-6)
    np.testing.assert_allclose(f(TC).numpy(), [[0.5, 0.5]], rtol=1e-6)           # the counts persist across calls


def test_all_candidate_sampler_is_tfs():
    s, te, se = tf.random.all_candidate_sampler(np.array([[1, 2], [3, 4]], np.int64), 2, 5, False, seed=1)
    np.testing.assert_array_equal(s.numpy(), np.arange(5))                      # TF 2.21
    np.testing.assert_array_equal(te.numpy(), np.ones((2, 2), np.float32))
    np.testing.assert_array_equal(se.numpy(), np.ones(5, np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="true_classes must be a matrix"):
        tf.random.all_candidate_sampler(np.array([1, 2], np.int64), 2, 3, True)


def test_experimental_namespace_is_tfs():
    # TF 2.21's dir(tf.random.experimental)
    for n in ["Algorithm", "Generator", "create_rng_state", "get_global_generator", "index_shuffle",
              "set_global_generator", "stateless_fold_in", "stateless_shuffle", "stateless_split"]:
        assert hasattr(tf.random.experimental, n), n
    assert tf.random.experimental.Generator is tf.random.Generator
    np.testing.assert_array_equal(tf.random.experimental.stateless_split([1, 2]).numpy(), tf.random.split([1, 2]).numpy())
    np.testing.assert_array_equal(tf.random.experimental.stateless_fold_in([1, 2], 3).numpy(),
                                  tf.random.fold_in([1, 2], 3).numpy())
