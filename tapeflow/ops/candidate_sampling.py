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

__all__ = ["log_uniform_candidate_sampler", "uniform_candidate_sampler", "fixed_unigram_candidate_sampler",
           "learned_unigram_candidate_sampler", "all_candidate_sampler", "compute_accidental_hits", "nce_loss",
           "sampled_softmax_loss"]


def _class_probabilities(kind, range_max):
    """P(k) for k in [0, range_max), float64: TF's LogUniformSampler's log((k + 2) / (k + 1)) /
    log(range_max + 1), or 1 / range_max; ``kind`` an array: those weights, normalized (the unigram samplers)."""
    if isinstance(kind, np.ndarray):
        return kind / kind.sum()
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

    if not unique and isinstance(kind, np.ndarray):
        # inversion: the number of CDF steps at or below u (a weight-0 class is never drawn)
        u = gen.uniform([num_sampled], dtype=np.float64)
        cdf = np.cumsum(p_all)
        s = M.reduce_sum(M.cast(M.less_equal(cdf[None, :], A.expand_dims(u, 1)), np.int64), axis=1)
        s = M.minimum(s, np.int64(np.nonzero(p_all)[0][-1]))     # (u above a rounded cdf[-1]: the last class drawn)
        num_tries = None
    elif not unique:
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


def _unigram_weights(op, range_max, vocab_file, distortion, num_reserved_ids, num_shards, shard, unigrams):
    """TF's FixedUnigramSampler's weights: 0 for this shard's reserved ids, then w ** distortion for each unigram
    (or the last comma-separated field of each line of ``vocab_file``) whose word id falls in this shard; the
    word ids continue from the number of weights so far, as TF's kernel counts them."""
    from ..errors import InvalidArgumentError, NotFoundError
    unigrams = list(unigrams) if unigrams is not None else []
    if vocab_file and unigrams:       # TF 2.21's texts
        raise InvalidArgumentError(f"{op}: Must only provide one of vocab_file and unigrams.")
    if not vocab_file and not unigrams:
        raise InvalidArgumentError(f"{op}: Must provide either vocab_file or unigrams.")
    num_shards, shard = int(num_shards), int(shard)
    weights = [0.0 for i in range(int(num_reserved_ids)) if i % num_shards == shard]
    if vocab_file:
        try:
            with open(vocab_file, encoding="utf-8") as f:
                lines = [ln for ln in f.read().splitlines() if ln]    # (TF's ReadLine; an empty line splits to nothing)
        except FileNotFoundError:
            raise NotFoundError(None, None, f"{vocab_file}; No such file or directory") from None
        values = []
        for line in lines:
            cols = line.split(",")
            try:
                values.append(float(cols[-1]))
            except ValueError:
                raise InvalidArgumentError(f"{op}: Wrong vocabulary format at line: {line.rstrip()}") from None
    else:
        values = [float(v) for v in unigrams]
    word_id = len(weights)
    for v in values:
        if word_id % num_shards == shard:
            weights.append(float(np.float32(v) ** np.float32(distortion)))   # (TF: std::pow on floats)
        word_id += 1
    if len(weights) != int(range_max):
        raise InvalidArgumentError(f"{op}: range is {int(range_max)} must be equal to weights size  {len(weights)}")
    return np.asarray(weights, np.float64)


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, vocab_file="",
                                    distortion=1.0, num_reserved_ids=0, num_shards=1, shard=0, unigrams=(), seed=None,
                                    name=None):
    """TF's ``tf.random.fixed_unigram_candidate_sampler``: candidates drawn with probability proportional to
    ``unigrams`` (or a vocabulary file's last column) raised to ``distortion``; ``num_reserved_ids`` leading ids
    of weight 0; ``num_shards``/``shard``: this shard's part of the ids only (TF's layout)."""
    op = "fixed_unigram_candidate_sampler"
    _check(op, true_classes, int(num_true), int(num_sampled), unique, int(range_max))
    w = _unigram_weights(op, range_max, vocab_file, distortion, num_reserved_ids, num_shards, shard, unigrams)
    return _sample(op, w, true_classes, num_true, num_sampled, unique, range_max, seed)


#: the learned unigram samplers' counts, one table per sampler as TF's eager kernel cache keeps one kernel per
#: (num_true, num_sampled, unique, range_max, seed): every class starts at 1 and each true class seen adds 1
_LEARNED = {}


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """TF's ``tf.random.learned_unigram_candidate_sampler``: candidates drawn from the unigram distribution of
    the true classes this sampler has seen (counts starting at 1 for every class, so the first call is
    uniform); each call samples, then adds its true classes to the counts. The counts are state: a py_call when
    traced, run at every call (an effect), as TF's stateful kernel."""
    from ..compiler.function import TensorSpec
    from .script_ops import numpy_function
    op = "learned_unigram_candidate_sampler"
    num_true, num_sampled, range_max = int(num_true), int(num_sampled), int(range_max)
    tc = _check(op, true_classes, num_true, num_sampled, unique, range_max)
    key = (num_true, num_sampled, bool(unique), range_max, seed)
    gen = _gen_for(seed)
    tiny = np.finfo(np.float64).tiny
    g = gen.uniform([range_max], minval=tiny, maxval=1.0, dtype=np.float64)
    v = gen.uniform([num_sampled], minval=tiny, maxval=1.0, dtype=np.float64)

    def run(tc_, g_, v_):
        counts = _LEARNED.setdefault(key, np.ones(range_max, np.float64))
        p = counts / counts.sum()
        if unique:     # the same process as _sample's, in NumPy: Gumbel top-k, geometric repeats
            order = np.argsort(-(np.log(p) - np.log(-np.log(g_))), kind="stable")[:num_sampled]
            chosen = np.concatenate([[0.0], np.cumsum(p[order])[:-1]])
            with np.errstate(divide="ignore"):
                rep = np.where(chosen > 0, np.floor(np.log(v_) / np.log(np.maximum(chosen, 1e-300))), 0.0)
            tries = num_sampled + rep.sum()
            samples = order.astype(np.int64)
        else:
            samples = np.minimum(np.searchsorted(np.cumsum(p), v_, side="right"), range_max - 1).astype(np.int64)
            tries = None

        def expected(ids):
            q = p[np.clip(ids, 0, range_max - 1)] * ((ids >= 0) & (ids < range_max))
            if tries is None or tries == num_sampled:
                return (q * num_sampled).astype(np.float32)
            return (-np.expm1(tries * np.log1p(-q))).astype(np.float32)
        out = samples, expected(np.asarray(tc_)), expected(samples)
        np.add.at(counts, np.asarray(tc_).ravel()[(np.asarray(tc_).ravel() >= 0) &
                                                  (np.asarray(tc_).ravel() < range_max)], 1.0)
        return out
    batch = aval_of(tc).shape[0]
    s, te, se = numpy_function(run, [tc, g, v], [TensorSpec([num_sampled], "int64"),
                                                 TensorSpec([batch, num_true], "float32"),
                                                 TensorSpec([num_sampled], "float32")])
    return M.stop_gradient(s), M.stop_gradient(te), M.stop_gradient(se)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """TF's ``tf.random.all_candidate_sampler``: the candidates 0 .. num_sampled - 1 (every class, for
    testing), each with expected count 1, as the true classes'. Deterministic."""
    from ..errors import InvalidArgumentError
    tc = M.cast(convert_to_tensor(true_classes), np.int64)
    shape = tuple(aval_of(tc).shape)
    if len(shape) != 2 or shape[1] != int(num_true):    # TF 2.21: "true_classes must be a matrix"
        raise InvalidArgumentError(f"all_candidate_sampler: true_classes must be a matrix of shape [batch_size, "
                                   f"num_true={num_true}], got shape {shape}")
    n = int(num_sampled)
    return (convert_to_tensor(np.arange(n, dtype=np.int64)), M.cast(A.ones_like(tc), np.float32),
            convert_to_tensor(np.ones(n, np.float32)))


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
