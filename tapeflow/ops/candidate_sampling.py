"""Candidate sampling (wave 20): ``tf.random.log_uniform_candidate_sampler`` / ``uniform_candidate_sampler``
and the sampled losses ``tf.nn.nce_loss`` / ``tf.nn.sampled_softmax_loss`` built on them, as TF 2.21 defines
them. All are compositions of tapeflow ops (random draws from the seeded generators), so they run eagerly
and inside ``tapeflow.function`` alike and the losses differentiate.

TF samples ``unique`` candidates by rejection: iid draws from the class distribution P until
``num_sampled`` distinct classes came up, ``num_tries`` draws in all, and reports each class's expected
count as ``-expm1(num_tries * log1p(-p))`` (``p * num_sampled`` when no draw repeated). A rejection loop's
length depends on the draws, so here the same process is drawn in two traceable steps: the distinct
classes in selection order by Gumbel top-k (top-k of log P + Gumbel noise is sequential sampling without
replacement, the order of first appearance), then the number of repeated draws before each new class,
geometric with the mass already chosen (``floor(log U / log m)``). Same joint distribution of (samples,
num_tries) as TF's loop; other random numbers (tapeflow's generators are not TF's kernels'), so samples
and counts are TF's in distribution, not bit for bit (docs/differences.md). The class probabilities (one
formula, gathered for any ids) and Gumbel top-k cost O(range_max) per call where TF's loop costs
O(num_sampled)."""
from __future__ import annotations

import numpy as np

from ..core.primitive import aval_of
from ..core.tensor import convert_to_tensor
from . import array_ops as A
from . import math_ops as M
from . import nn_ops as N
from .random_ops import _gen_for

__all__ = ["log_uniform_candidate_sampler", "uniform_candidate_sampler", "compute_accidental_hits", "nce_loss",
           "sampled_softmax_loss"]


def _class_probabilities(kind, range_max):
    """P(k) for k in [0, range_max), float64: TF's LogUniformSampler's log((k + 2) / (k + 1)) /
    log(range_max + 1), or 1 / range_max."""
    if kind == "log_uniform":
        k = np.arange(range_max, dtype=np.float64)
        return np.log((k + 2.0) / (k + 1.0)) / np.log(range_max + 1.0)
    return np.full(range_max, 1.0 / range_max)


def _check(op, true_classes, num_true, num_sampled, unique, range_max):
    tc = M.cast(convert_to_tensor(true_classes), np.int64)
    shape = tuple(aval_of(tc).shape)
    from ..errors import InvalidArgumentError
    if len(shape) != 2 or shape[1] != num_true:   # (TF 2.21: InvalidArgumentError "true_classes must be a matrix")
        raise InvalidArgumentError(f"{op}: true_classes must be a matrix of shape [batch_size, num_true={num_true}], "
                                   f"got shape {shape}")
    if unique and num_sampled > range_max:   # (TF 2.21: InvalidArgumentError "Sampler's range is too small.")
        raise InvalidArgumentError(f"{op}: Sampler's range is too small (num_sampled={num_sampled} unique "
                                   f"candidates from range_max={range_max})")
    return tc


def _sample(op, kind, true_classes, num_true, num_sampled, unique, range_max, seed):
    num_true, num_sampled, range_max = int(num_true), int(num_sampled), int(range_max)
    tc = _check(op, true_classes, num_true, num_sampled, unique, range_max)
    gen = _gen_for(seed)

    p_all = _class_probabilities(kind, range_max)

    def prob(ids):
        return A.gather(p_all, ids)

    if not unique:
        u = gen.uniform([num_sampled], dtype=np.float64)
        if kind == "log_uniform":   # TF: exp(u * log(range_max + 1)) - 1, truncated
            s = M.cast(M.floor(M.exp(u * np.log(range_max + 1.0))), np.int64) - 1
        else:
            s = M.cast(M.floor(u * range_max), np.int64)
        s = M.minimum(M.maximum(s, np.int64(0)), np.int64(range_max - 1))
        num_tries = None
    else:
        gumbel = -M.log(-M.log(gen.uniform([range_max], minval=np.finfo(np.float64).tiny, maxval=1.0,
                                           dtype=np.float64)))
        _, order = A.top_k(np.log(p_all) + gumbel, num_sampled)
        s = M.cast(order, np.int64)
        chosen = M.cumsum(prob(s), exclusive=True)   # the mass already drawn before each new class
        v = gen.uniform([num_sampled], minval=np.finfo(np.float64).tiny, maxval=1.0, dtype=np.float64)
        repeats = M.where(chosen > 0.0, M.floor(M.log(v) / M.log(M.maximum(chosen, 1e-300))), 0.0)
        num_tries = num_sampled + M.reduce_sum(repeats)

    def expected(ids):
        p = prob(ids)
        if num_tries is None:
            return M.cast(p * num_sampled, np.float32)
        return M.cast(M.where(M.equal(num_tries, float(num_sampled)), p * num_sampled,
                              -M.expm1(num_tries * M.log1p(-p))), np.float32)
    return M.stop_gradient(s), M.stop_gradient(expected(tc)), M.stop_gradient(expected(s))


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """TF's ``tf.random.log_uniform_candidate_sampler``: ``(sampled_candidates, true_expected_count,
    sampled_expected_count)`` under Zipf's law P(k) = log((k+2)/(k+1)) / log(range_max+1)."""
    return _sample("log_uniform_candidate_sampler", "log_uniform", true_classes, num_true, num_sampled, unique,
                   range_max, seed)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """TF's ``tf.random.uniform_candidate_sampler``: candidates uniform over [0, range_max)."""
    return _sample("uniform_candidate_sampler", "uniform", true_classes, num_true, num_sampled, unique, range_max,
                   seed)


def _hits(true_classes, sampled):
    """TF's ComputeAccidentalHits, as masks: for each (row, true label), whether the label was sampled and
    the position of its LAST occurrence among the samples (the kernel maps a sampled id to the last
    position it saw), shapes (batch, num_true)."""
    eq = M.equal(A.expand_dims(true_classes, -1), sampled)            # (batch, num_true, num_sampled)
    n = aval_of(sampled).shape[-1]
    last = (n - 1) - M.argmax(A.reverse(eq, [-1]), axis=-1)          # (its last True; any if none)
    return M.reduce_any(eq, axis=-1), last


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """TF's ``tf.nn.compute_accidental_hits``: ``(indices, ids, weights)``, one entry per (row, true label)
    that was sampled, in row then label order: the row (int32), the label's last position among the samples
    (int64) and float32's lowest (the weight to add to that sampled logit)."""
    from ..errors import InvalidArgumentError
    tc = M.cast(convert_to_tensor(true_classes), np.int64)
    shape = tuple(aval_of(tc).shape)
    if len(shape) != 2 or shape[1] != int(num_true):   # TF 2.21's text
        raise InvalidArgumentError("compute_accidental_hits: true_candidates must be a batch_size * num_true "
                                   f"matrix (got shape {shape}, num_true={num_true})")
    sampled = M.cast(convert_to_tensor(sampled_candidates), np.int64)
    hit, last = _hits(tc, sampled)
    rows = A.broadcast_to(A.expand_dims(np.arange(shape[0], dtype=np.int32), -1), shape)
    flat = A.reshape(hit, [-1])
    indices = A.boolean_mask(A.reshape(rows, [-1]), flat)
    ids = A.boolean_mask(A.reshape(last, [-1]), flat)
    lowest = np.full(flat.shape, -np.finfo(np.float32).max, np.float32)   # (masked as the rows: a run-time length)
    return indices, ids, A.boolean_mask(lowest, flat)


def _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
                    remove_accidental_hits, seed):
    """TF's ``_compute_sampled_logits``: the true classes' and the sampled classes' logits (less log Q, the
    log of their expected counts), the sampled ones that hit a true class pushed to float32's lowest, and the
    labels (1/num_true for each true column, 0 for the sampled)."""
    if isinstance(weights, (list, tuple)):
        weights = A.concat(list(weights), 0)
    w, b, x = convert_to_tensor(weights), convert_to_tensor(biases), convert_to_tensor(inputs)
    labels = M.cast(convert_to_tensor(labels), np.int64)
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True, num_classes, seed)
    sampled, true_expected, sampled_expected = (M.stop_gradient(convert_to_tensor(v)) for v in sampled_values)
    sampled = M.cast(sampled, np.int64)
    batch = aval_of(labels).shape[0]
    dim = aval_of(x).shape[-1]
    flat = A.reshape(labels, [-1])
    true_w = A.reshape(A.gather(w, flat), [batch, num_true, dim])
    true_b = A.reshape(A.gather(b, flat), [batch, num_true])
    true_logits = M.reduce_sum(A.expand_dims(x, 1) * true_w, -1) + true_b
    sampled_logits = M.matmul(x, A.gather(w, sampled), transpose_b=True) + A.gather(b, sampled)
    if remove_accidental_hits:
        # TF's compute_accidental_hits: a sampled id that is a true label is masked at its last position
        hit, last = _hits(labels, sampled)
        at = M.equal(A.expand_dims(last, -1), np.arange(aval_of(sampled).shape[-1], dtype=np.int64))
        hits = M.reduce_any(M.logical_and(A.expand_dims(hit, -1), at), axis=1)       # (batch, num_sampled)
        lowest = M.cast(-np.finfo(np.float32).max, sampled_logits.dtype)
        sampled_logits = sampled_logits + M.where(hits, lowest, A.zeros_like(sampled_logits))
    true_logits = true_logits - M.log(M.cast(true_expected, true_logits.dtype))
    sampled_logits = sampled_logits - M.log(M.cast(sampled_expected, sampled_logits.dtype))
    logits = A.concat([true_logits, sampled_logits], 1)
    out_labels = A.concat([A.ones_like(true_logits) / num_true, A.zeros_like(sampled_logits)], 1)
    return logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
             remove_accidental_hits=False, name="nce_loss"):
    """TF's ``tf.nn.nce_loss``: per example, the sum of the sigmoid cross-entropies of the true classes
    (label 1/num_true) and the sampled ones (label 0). Its negatives come from
    ``log_uniform_candidate_sampler(unique=True)`` unless ``sampled_values`` gives them."""
    logits, labels_ = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                      sampled_values, remove_accidental_hits, None)
    return M.reduce_sum(N.sigmoid_cross_entropy_with_logits(labels=labels_, logits=logits), 1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True, seed=None, name="sampled_softmax_loss"):
    """TF's ``tf.nn.sampled_softmax_loss``: the softmax cross-entropy over the true and the sampled classes
    (an estimate of the full softmax loss, for training; evaluate with the full one)."""
    logits, labels_ = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                      sampled_values, remove_accidental_hits, seed)
    return N.softmax_cross_entropy_with_logits(labels=M.stop_gradient(labels_), logits=logits)
