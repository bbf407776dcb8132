"""tf.random.log_uniform/uniform_candidate_sampler and tf.nn.nce_loss/sampled_softmax_loss
(tapeflow/ops/candidate_sampling.py). The losses given sampled_values and the samplers' expected counts
for unique=False are deterministic: TF 2.21's numbers (tests/data/sampled_loss_tf.json, recorded by
tests/tf_reference/make_sampled_loss_reference.py). The unique draws are random: their invariants and
their distribution (TF's rejection process, drawn another way) are checked instead."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "tf_reference"))
import sampled_loss_cases as C  # noqa: E402

REF = json.loads((HERE / "data" / "sampled_loss_tf.json").read_text())


def test_losses_gradients_and_counts_are_tfs():
    got = C.losses(tf)
    for k, want in REF.items():
        if k == "hits":   # TF 2.21: row order, then label order; a label's LAST position among the samples
            assert got[k] == want, (got[k], want)
        elif k.endswith("/grad"):
            for g, w in zip(got[k], want):
                np.testing.assert_allclose(np.array(g), np.array(w), rtol=1e-5, atol=1e-6, err_msg=k)
        else:
            np.testing.assert_allclose(np.array(got[k]), np.array(want), rtol=1e-6, atol=1e-6, err_msg=k)


def test_losses_compiled_equal_eager():
    W, b, X, labels1, _ = C.inputs()
    for fn in (tf.nn.nce_loss, tf.nn.sampled_softmax_loss):
        eager = fn(W, b, labels1, X, 4, 10, sampled_values=C.sampled_values(tf, 1)).numpy()
        comp = tf.function(lambda: fn(W, b, labels1, X, 4, 10, sampled_values=C.sampled_values(tf, 1)))().numpy()
        np.testing.assert_allclose(comp, eager, rtol=1e-6)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("kind", ["log_uniform", "uniform"])
def test_unique_draws_are_distinct_and_their_counts_share_one_number_of_tries(kind, compiled):
    sampler = getattr(tf.random, f"{kind}_candidate_sampler")
    labels = tf.constant([[1, 2], [4, 0], [7, 3]], tf.int64)
    call = (lambda: sampler(labels, 2, 5, True, 10, seed=7))
    s, te, se = (tf.function(call) if compiled else call)()
    s = s.numpy()
    assert s.dtype == np.int64 and len(set(s.tolist())) == 5 and s.min() >= 0 and s.max() < 10
    k = np.arange(10.0)
    p = np.log((k + 2) / (k + 1)) / np.log(11.0) if kind == "log_uniform" else np.full(10, 0.1)
    # TF's expected count: -expm1(tries * log1p(-p)), tries the draws it took (p * 5 when none repeated)
    tries = np.log1p(-se.numpy().astype(np.float64)) / np.log1p(-p[s])
    tries = np.where(np.isclose(se.numpy(), p[s] * 5, rtol=1e-6), 5.0, tries)
    assert np.allclose(tries, tries[0], rtol=1e-4) and tries[0] >= 5 - 1e-6
    want_true = np.where(np.isclose(tries[0], 5.0), p[labels.numpy()] * 5, -np.expm1(tries[0] * np.log1p(-p[labels.numpy()])))
    np.testing.assert_allclose(te.numpy(), want_true, rtol=1e-4)


def test_unique_inclusion_frequencies_follow_the_expected_counts():
    # sampling without replacement as TF's rejection loop does: how often each class is among the 3 drawn
    labels = tf.constant([[0]], tf.int64)
    counts, expected = np.zeros(10), np.zeros(10)
    for i in range(1500):
        s, _, se = tf.random.log_uniform_candidate_sampler(labels, 1, 3, True, 10, seed=None)
        counts[s.numpy()] += 1
    k = np.arange(10.0)
    p = np.log((k + 2) / (k + 1)) / np.log(11.0)
    # the inclusion probability of sequential sampling without replacement, by simulation in NumPy
    rng = np.random.default_rng(0)
    for _ in range(20000):
        expected[rng.choice(10, 3, replace=False, p=p / p.sum())] += 1
    np.testing.assert_allclose(counts / 1500, expected / 20000, atol=0.05)


def test_accidental_hits_traced_equal_eager():
    tc, s = tf.constant([[1, 2], [4, 0], [7, 4]], tf.int64), tf.constant([4, 0, 9, 2, 4], tf.int64)
    eager = [h.numpy().tolist() for h in tf.nn.compute_accidental_hits(tc, s, 2)]
    comp = [h.numpy().tolist() for h in tf.function(lambda a, b: tf.nn.compute_accidental_hits(a, b, 2))(tc, s)]
    assert comp == eager == REF["hits"][:3]
    with pytest.raises(tf.errors.InvalidArgumentError, match="true_candidates must be a batch_size \\* num_true matrix"):
        tf.nn.compute_accidental_hits(tc, s, 3)


def test_bad_inputs_say_what():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"true_classes must be a matrix"):   # TF 2.21's text
        tf.random.log_uniform_candidate_sampler(tf.constant([1, 2], tf.int64), 2, 3, True, 10)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Sampler's range is too small"):   # TF 2.21's text
        tf.random.uniform_candidate_sampler(tf.constant([[1]], tf.int64), 1, 11, True, 10)
