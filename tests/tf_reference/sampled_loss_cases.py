"""Inputs of tests/test_candidate_sampling.py and make_sampled_loss_reference.py (no TF import)."""
import numpy as np


def inputs():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(10, 4)).astype(np.float32)
    b = rng.normal(size=10).astype(np.float32)
    X = rng.normal(size=(3, 4)).astype(np.float32)
    labels1 = np.array([[1], [4], [7]], np.int64)
    labels2 = np.array([[1, 2], [4, 0], [7, 3]], np.int64)
    return W, b, X, labels1, labels2


def sampled_values(tf, num_true):
    # sampled ids 4 and 0 hit true classes (accidental hits); the expected counts are arbitrary positives
    true_exp = [[0.5], [0.25], [0.125]] if num_true == 1 else [[0.5, 0.3], [0.25, 0.9], [0.125, 0.2]]
    return (tf.constant([4, 0, 9, 2], tf.int64), tf.constant(true_exp), tf.constant([0.5, 0.75, 0.1, 0.2]))


def losses(tf):
    W, b, X, labels1, labels2 = inputs()
    out = {}
    for name, fn in (("nce", tf.nn.nce_loss), ("ssm", tf.nn.sampled_softmax_loss)):
        for rah in (True, False):
            out[f"{name}/1/{rah}"] = fn(W, b, labels1, X, 4, 10, sampled_values=sampled_values(tf, 1),
                                        remove_accidental_hits=rah).numpy().tolist()
            out[f"{name}/2/{rah}"] = fn(W, b, labels2, X, 4, 10, num_true=2, sampled_values=sampled_values(tf, 2),
                                        remove_accidental_hits=rah).numpy().tolist()
        Wv, bv = tf.Variable(W), tf.Variable(b)
        with tf.GradientTape() as t:
            loss = tf.reduce_sum(fn(Wv, bv, labels1, X, 4, 10, sampled_values=sampled_values(tf, 1)))
        gw, gb = t.gradient(loss, [Wv, bv])
        out[f"{name}/grad"] = [tf.convert_to_tensor(gw).numpy().tolist(), tf.convert_to_tensor(gb).numpy().tolist()]
    # duplicates among the samples (a unique=False draw): TF masks a hit at its last position only
    dup = (tf.constant([4, 0, 4, 2], tf.int64), tf.constant([[0.5, 0.3], [0.25, 0.9], [0.125, 0.2]]),
           tf.constant([0.5, 0.75, 0.5, 0.2]))
    for name, fn in (("nce", tf.nn.nce_loss), ("ssm", tf.nn.sampled_softmax_loss)):
        out[f"{name}/dup"] = fn(W, b, labels2, X, 4, 10, num_true=2, sampled_values=dup,
                                remove_accidental_hits=True).numpy().tolist()
    hits = tf.nn.compute_accidental_hits(tf.constant([[1, 2], [4, 0], [7, 4]], tf.int64),
                                         tf.constant([4, 0, 9, 2, 4], tf.int64), 2)
    out["hits"] = [h.numpy().tolist() for h in hits] + [[h.dtype.name for h in hits]]
    # unique=False: the expected counts are num_sampled * P(class), whatever was drawn
    for kind, fn in (("log_uniform", tf.random.log_uniform_candidate_sampler),
                     ("uniform", tf.random.uniform_candidate_sampler)):
        _, te, _ = fn(labels2, 2, 5, False, 10, seed=3)
        out[f"{kind}/true_expected"] = te.numpy().tolist()
    return out
