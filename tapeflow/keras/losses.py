"""Losses (Keras): functions give one loss per sample (a mean/sum over the
last axis); classes apply ``sample_weight`` and a reduction:
``"sum_over_batch_size"`` (default, also ``"auto"``: sum / number of
elements), ``"sum"`` or ``"none"``.

As Keras, functions and classes align ranks that differ by a trailing size-1
axis, so that ``y_true`` of shape (batch,) against ``y_pred`` of shape
(batch, 1) is not broadcast to (batch, batch); probabilities are clipped to [eps, 1 - eps] (eps = 1e-7)
in the non-logit cross-entropies.
"""
from __future__ import annotations

import numpy as np

from ..core.aval import fmt_shape
from ..core.primitive import aval_of
from ..core.tensor import Tensor, TensorShape, Variable, convert_to_tensor
from ..ops import array_ops as A
from ..ops import math_ops as M
from ..ops import nn_ops as N
from . import backend
from ._config import from_config, to_config

__all__ = ["Loss", "LossFunctionWrapper", "Reduction", "MeanSquaredError", "MeanAbsoluteError", "Huber",
           "BinaryCrossentropy", "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "LogCosh",
           "mean_squared_error", "mean_absolute_error", "huber", "binary_crossentropy",
           "categorical_crossentropy", "sparse_categorical_crossentropy", "log_cosh", "mse", "MSE", "mae", "MAE",
           "KLDivergence", "CosineSimilarity", "Hinge", "SquaredHinge", "CategoricalHinge", "Poisson",
           "kl_divergence", "kld", "KLD", "kullback_leibler_divergence", "cosine_similarity", "hinge",
           "squared_hinge", "categorical_hinge", "poisson", "logcosh", "MeanAbsolutePercentageError",
           "MeanSquaredLogarithmicError", "mean_absolute_percentage_error", "mean_squared_logarithmic_error", "mape",
           "MAPE", "msle", "MSLE", "BinaryFocalCrossentropy", "CategoricalFocalCrossentropy", "Dice", "Tversky",
           "binary_focal_crossentropy", "categorical_focal_crossentropy", "dice", "tversky", "CTC", "ctc", "get",
           "serialize",
           "deserialize", "Circle", "circle", "CategoricalGeneralizedCrossEntropy",
           "categorical_generalized_cross_entropy"]


class Reduction:
    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
    MEAN = "mean"  # Keras 3's name for sum_over_batch_size
    MEAN_WITH_SAMPLE_WEIGHT = "mean_with_sample_weight"  # sum / sum of the sample weights

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE, cls.MEAN, cls.MEAN_WITH_SAMPLE_WEIGHT)

    @classmethod
    def validate(cls, key):
        # Keras 3 (TF 2.21): reduction=None means no reduction (the per-sample losses), not the
        # default; mapping it to "auto" silently returned the batch mean (sweep18).
        if key is None:
            key = cls.NONE
        key = str(key).lower()
        if key not in cls.all():
            raise ValueError(f"invalid loss reduction {key!r}; expected one of {cls.all()}")
        return key


def _tensor(x):
    if isinstance(x, Variable):
        return x.read_value()
    if isinstance(x, Tensor):
        return x
    return convert_to_tensor(np.asarray(x, dtype=np.float32) if isinstance(x, float) else x)


def _prep(y_true, y_pred):
    if y_pred.__class__ is Tensor and y_true.__class__ is Tensor:
        a, b = y_true._v, y_pred._v
        # two eager tensors of one dtype and rank (a training step's loss): nothing to convert
        if a is not None and b is not None and a.dtype is b.dtype and a.ndim == b.ndim:
            return y_true, y_pred
    y_pred = _tensor(y_pred)
    if isinstance(y_true, (np.ndarray, list, tuple, float, int)) and not isinstance(y_true, Tensor):
        y_true = convert_to_tensor(np.asarray(y_true, dtype=aval_of(y_pred).dtype))
    y_true = _tensor(y_true)
    if aval_of(y_true).dtype != aval_of(y_pred).dtype:
        y_true = M.cast(y_true, aval_of(y_pred).dtype)
    return _squeeze_or_expand(y_true, y_pred)


def _same_shape(loss, y_true, y_pred):
    """(y_true, y_pred), checked to have one shape (after _prep aligned their ranks), as
    Keras 3's cross-entropies check: broadcasting would pair every label with every prediction."""
    st, sp = aval_of(y_true).shape, aval_of(y_pred).shape
    if not TensorShape(st).is_compatible_with(sp):
        raise ValueError(f"{loss}: y_true {fmt_shape(st)} and y_pred {fmt_shape(sp)} must have the same shape")
    return y_true, y_pred


def _mean_last(x):
    v = x._v if x.__class__ is Tensor else None
    return M.reduce_mean(x, -1) if len(v.shape if v is not None else aval_of(x).shape) else x


# -- per-sample loss functions ----------------------------------------------------------------------

def mean_squared_error(y_true, y_pred):
    """mean((y_pred - y_true)**2, axis=-1)."""
    y_true, y_pred = _prep(y_true, y_pred)
    return _mean_last(M.squared_difference(y_pred, y_true))


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _prep(y_true, y_pred)
    return _mean_last(M.abs(M.subtract(y_pred, y_true)))


def huber(y_true, y_pred, delta=1.0):
    """mean over the last axis of 0.5 e^2 (|e| <= delta) or delta |e| - 0.5 delta^2."""
    y_true, y_pred = _prep(y_true, y_pred)
    delta = float(delta)
    err = M.subtract(y_pred, y_true)
    a = M.abs(err)
    quad = M.multiply(M.square(err), 0.5)
    lin = M.subtract(M.multiply(a, delta), 0.5 * delta * delta)
    return _mean_last(M.where(M.less_equal(a, delta), quad, lin))


def log_cosh(y_true, y_pred):
    y_true, y_pred = _prep(y_true, y_pred)
    x = M.subtract(y_pred, y_true)
    return _mean_last(M.subtract(M.add(x, M.softplus(M.multiply(x, -2.0))), float(np.log(2.0))))


def _clipped_bce(y_true, y_pred):
    """-(y log p + (1 - y) log(1 - p)) per element, p = y_pred clipped to [eps, 1 - eps]: Keras 3's
    form; the clip alone keeps the logs finite (Keras 2 also added eps inside each log, which
    moved the loss in its 7th digit: 0.6289225 against TF 2.21's 0.62892276)."""
    eps = backend.epsilon()
    p = M.clip_by_value(y_pred, eps, 1.0 - eps)
    ce = M.add(M.multiply(y_true, M.log(p)), M.multiply(M.subtract(1.0, y_true), M.log(M.subtract(1.0, p))))
    return M.negative(ce)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """mean over ``axis`` of -(y log p + (1 - y) log(1 - p)); with
    ``from_logits`` the stable sigmoid form."""
    y_true, y_pred = _same_shape("binary_crossentropy", *_prep(y_true, y_pred))
    if label_smoothing:
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), 0.5 * label_smoothing)
    if from_logits:
        ce = N.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        ce = _clipped_bce(y_true, y_pred)
    return M.reduce_mean(ce, axis) if len(aval_of(ce).shape) else ce


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """-sum(y_true * log(p), axis) with p = y_pred / sum(y_pred) clipped to [eps, 1-eps],
    or log_softmax(y_pred) with ``from_logits``."""
    y_true, y_pred = _same_shape("categorical_crossentropy", *_prep(y_true, y_pred))
    if label_smoothing:
        n = aval_of(y_pred).shape[axis]
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), label_smoothing / float(n))
    if from_logits:
        return N.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred, axis=axis)
    eps = backend.epsilon()
    p = M.divide(y_pred, M.reduce_sum(y_pred, axis, keepdims=True))
    p = M.clip_by_value(p, eps, 1.0 - eps)
    return M.negative(M.reduce_sum(M.multiply(y_true, M.log(p)), axis))


def _class_ids(y_true, pred_rank):
    """Integer class ids of shape (batch,) from labels (batch,) or (batch, 1)."""
    y_true = _tensor(y_true) if isinstance(y_true, Tensor) else convert_to_tensor(np.asarray(y_true))
    if len(aval_of(y_true).shape) == pred_rank and aval_of(y_true).shape[-1] == 1:
        y_true = A.squeeze(y_true, -1)
    if aval_of(y_true).dtype.kind not in "iu":
        y_true = M.cast(y_true, np.int64)
    return y_true


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1, ignore_class=None):
    """Cross-entropy with integer class ids ``y_true`` of shape (batch,) or (batch, 1)."""
    y_pred = _tensor(y_pred)
    pr = len(aval_of(y_pred).shape)
    y_true = _class_ids(y_true, pr)
    if axis not in (-1, pr - 1):
        raise NotImplementedError("sparse_categorical_crossentropy: only axis=-1 is supported")
    if from_logits:
        logits = y_pred
    else:
        eps = backend.epsilon()
        logits = M.log(M.clip_by_value(y_pred, eps, 1.0 - eps))
    if ignore_class is not None:
        valid = M.not_equal(y_true, ignore_class)
        safe = M.where(valid, y_true, M.multiply(y_true, 0))
        ce = N.sparse_softmax_cross_entropy_with_logits(labels=safe, logits=logits)
        return M.where(valid, ce, M.multiply(ce, 0.0))
    return N.sparse_softmax_cross_entropy_with_logits(labels=y_true, logits=logits)


def kl_divergence(y_true, y_pred):
    """sum over the last axis of y log(y / p), both clipped to [eps, 1] (Keras 3: a zero label
    adds eps log(eps / p), not 0; TF 2.21 gives the same)."""
    y_true, y_pred = _prep(y_true, y_pred)
    eps = backend.epsilon()
    t = M.clip_by_value(y_true, eps, 1.0)
    p = M.clip_by_value(y_pred, eps, 1.0)
    return M.reduce_sum(M.multiply(t, M.log(M.divide(t, p))), -1)


def cosine_similarity(y_true, y_pred, axis=-1):
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis): -1 for parallel vectors, 0 where
    either is a zero vector."""
    y_true, y_pred = _prep(y_true, y_pred)
    return M.negative(M.reduce_sum(M.multiply(backend.unit_normalize(y_true, axis, 1.0 / backend.epsilon()),
                                               backend.unit_normalize(y_pred, axis, 1.0 / backend.epsilon())), axis))


def _hinge_labels(y_true):
    # Keras 3: labels that are all 0 or 1 become -1/+1 (a data-dependent choice over the whole
    # batch; a where on the reduced test keeps it one graph in compiled code, where Keras uses cond)
    binary = M.reduce_all(M.logical_or(M.equal(y_true, 0.0), M.equal(y_true, 1.0)))
    return M.where(binary, M.subtract(M.multiply(y_true, 2.0), 1.0), y_true)


def hinge(y_true, y_pred):
    """mean over the last axis of max(1 - y_true * y_pred, 0), labels -1/+1 (0/1 converted)."""
    y_true, y_pred = _prep(y_true, y_pred)
    return _mean_last(M.maximum(M.subtract(1.0, M.multiply(_hinge_labels(y_true), y_pred)), 0.0))


def squared_hinge(y_true, y_pred):
    """mean over the last axis of max(1 - y_true * y_pred, 0)^2, labels -1/+1 (0/1 converted)."""
    y_true, y_pred = _prep(y_true, y_pred)
    return _mean_last(M.square(M.maximum(M.subtract(1.0, M.multiply(_hinge_labels(y_true), y_pred)), 0.0)))


def categorical_hinge(y_true, y_pred):
    """max(neg - pos + 1, 0) with pos = sum(y_true * y_pred), neg = max((1 - y_true) * y_pred)
    over the last axis."""
    y_true, y_pred = _prep(y_true, y_pred)
    pos = M.reduce_sum(M.multiply(y_true, y_pred), -1)
    neg = M.reduce_max(M.multiply(M.subtract(1.0, y_true), y_pred), -1)
    return M.maximum(M.add(M.subtract(neg, pos), 1.0), 0.0)


def poisson(y_true, y_pred):
    """mean over the last axis of y_pred - y_true * log(y_pred + eps)."""
    y_true, y_pred = _prep(y_true, y_pred)
    return _mean_last(M.subtract(y_pred, M.multiply(y_true, M.log(M.add(y_pred, backend.epsilon())))))


def mean_absolute_percentage_error(y_true, y_pred):
    """100 * mean over the last axis of |(y_true - y_pred) / max(|y_true|, eps)|."""
    y_true, y_pred = _prep(y_true, y_pred)
    diff = M.abs(M.divide(M.subtract(y_true, y_pred), M.maximum(M.abs(y_true), backend.epsilon())))
    return M.multiply(_mean_last(diff), 100.0)


def mean_squared_logarithmic_error(y_true, y_pred):
    """mean over the last axis of (log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1))^2."""
    y_true, y_pred = _prep(y_true, y_pred)
    eps = backend.epsilon()
    first = M.log(M.add(M.maximum(y_pred, eps), 1.0))
    second = M.log(M.add(M.maximum(y_true, eps), 1.0))
    return _mean_last(M.square(M.subtract(first, second)))


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
logcosh = log_cosh
kld = KLD = kullback_leibler_divergence = kl_divergence


# -- reduction ---------------------------------------------------------------------------------------

def _squeeze_or_expand(a, b):
    """Keras 3's squeeze_or_expand_to_same_rank: where one of (a, b) has one rank more and
    a trailing axis of size 1, a rank-1 other gets that axis too (labels (batch,) against
    predictions (batch, 1) give per-sample losses of shape (batch,)); else the size-1 axis
    is dropped. Without it (batch,) - (batch, 1) broadcasts to (batch, batch): a loss or
    metric that is silently wrong."""
    sa, sb = aval_of(a).shape, aval_of(b).shape
    ra, rb = len(sa), len(sb)
    if ra - rb == 1 and sa[-1] == 1:
        return (a, A.expand_dims(b, -1)) if rb == 1 else (A.squeeze(a, -1), b)
    if rb - ra == 1 and sb[-1] == 1:
        return (A.expand_dims(a, -1), b) if ra == 1 else (a, A.squeeze(b, -1))
    return a, b


def apply_mask(sample_weight, mask, dtype, reduction):
    """Keras 3's ``losses.loss.apply_mask``: a model output's mask (batch, time) as sample
    weights. For a mean (``sum_over_batch_size``) a valid entry weighs total / valid, so the mean
    over all entries is the mean over the valid ones (divide_no_nan: a fully masked batch gives 0);
    for a sum (and for metrics) the mask is 0/1. A given ``sample_weight`` is multiplied in."""
    if mask is None:
        return sample_weight
    m = mask if aval_of(mask).dtype == np.bool_ else M.cast(mask, np.bool_)
    if reduction in (Reduction.AUTO, Reduction.SUM_OVER_BATCH_SIZE, Reduction.MEAN):
        total = M.cast(A.size(m), dtype)
        valid = M.reduce_sum(M.cast(m, dtype))
        fm = M.where(m, M.divide_no_nan(total, valid), M.cast(0.0, dtype))
    else:
        fm = M.cast(m, dtype)
    if sample_weight is None:
        return fm
    sw = M.cast(convert_to_tensor(sample_weight), dtype)
    rm, rs = len(aval_of(fm).shape), len(aval_of(sw).shape)
    # Keras' squeeze_or_expand_to_same_rank
    if rs == rm + 1 and aval_of(sw).shape[-1] == 1:
        sw = A.squeeze(sw, -1)
    elif rm == rs + 1 and aval_of(fm).shape[-1] == 1:
        fm = A.squeeze(fm, -1)
    return M.multiply(sw, fm)


def compute_weighted_loss(losses, sample_weight=None, reduction="sum_over_batch_size"):
    reduction = Reduction.validate(reduction)
    if reduction in (Reduction.AUTO, Reduction.MEAN):
        reduction = Reduction.SUM_OVER_BATCH_SIZE
    losses = _tensor(losses)
    if sample_weight is not None:
        sw = sample_weight
        if not isinstance(sw, Tensor):
            sw = convert_to_tensor(np.asarray(sw, dtype=aval_of(losses).dtype))
        elif aval_of(sw).dtype != aval_of(losses).dtype:
            sw = M.cast(sw, aval_of(losses).dtype)
        rl, rs = len(aval_of(losses).shape), len(aval_of(sw).shape)
        if rs - rl == 1 and aval_of(sw).shape[-1] == 1:
            sw = A.squeeze(sw, -1)
        elif rl - rs == 1:
            sw = A.expand_dims(sw, -1)
        losses = M.multiply(losses, sw)
    if reduction == Reduction.NONE:
        return losses
    total = M.reduce_sum(losses)
    if reduction == Reduction.SUM:
        return total
    if reduction == Reduction.MEAN_WITH_SAMPLE_WEIGHT and sample_weight is not None:
        # Keras 3: divide by the sum of the weights broadcast to the losses' shape (0 when all are 0)
        wsum = M.reduce_sum(M.multiply(A.ones_like(losses), sw))
        return M.divide_no_nan(total, wsum)
    n = int(np.prod(aval_of(losses).shape)) if all(d is not None for d in aval_of(losses).shape) else None
    if n is None:
        return M.reduce_mean(losses)
    return M.divide(total, float(max(n, 1))) if n != 1 else total


# -- classes ------------------------------------------------------------------------------------------

class Loss:
    """Base class: override ``call(y_true, y_pred)`` (per-sample losses);
    ``__call__`` applies sample weights and the reduction."""

    def __init__(self, reduction="sum_over_batch_size", name=None):
        self.reduction = Reduction.validate(reduction)
        self.name = name or type(self).__name__

    def __call__(self, y_true, y_pred, sample_weight=None):
        losses = self.call(y_true, y_pred)
        return compute_weighted_loss(losses, sample_weight, self.reduction)

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def get_config(self):
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def ctc(y_true, y_pred):
    """Keras 3's ``ctc``: per example, ops.ctc_loss of the labels (padded with 0, the blank) and
    ``y_pred`` (batch, time, classes), every frame used, the label lengths counted from the nonzeros.
    Keras passes ``y_pred`` to tf.nn.ctc_loss as logits (its log_softmax applies to them), kept."""
    from .ops import ctc_loss
    y_pred = _tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    if y_true.shape.rank != 2:
        raise ValueError("Targets `y_true` are expected to be a tensor of shape `(batch_size, max_length)` in integer "
                         f"format. Received: y_true.shape={tuple(y_true.shape)}")   # Keras 3's texts
    if y_pred.shape.rank != 3:
        raise ValueError("Logits `y_pred` are expected to be a tensor of shape `(batch_size, max_length, "
                         f"num_classes)`. Received: y_pred.shape={tuple(y_pred.shape)}")
    b, t = tuple(y_pred.shape)[:2]
    label_length = M.cast(M.reduce_sum(M.cast(M.not_equal(y_true, M.cast(0, y_true.dtype)), "int32"), axis=-1),
                          "int32")
    return ctc_loss(y_true, y_pred, label_length, M.cast(A.fill([b], t), "int32"), mask_index=0)


class LossFunctionWrapper(Loss):
    def __init__(self, fn, reduction="sum_over_batch_size", name=None, **kwargs):
        super().__init__(reduction=reduction, name=name or getattr(fn, "__name__", None))
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        y_pred = _tensor(y_pred)
        if isinstance(y_true, Tensor):
            y_pred, y_true = _squeeze_or_expand(y_pred, y_true)
        elif not isinstance(y_true, Tensor) and self.fn is not sparse_categorical_crossentropy:
            y_true = convert_to_tensor(np.asarray(y_true, dtype=aval_of(y_pred).dtype))
            y_pred, y_true = _squeeze_or_expand(y_pred, y_true)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(self._fn_kwargs)
        return cfg


class MeanSquaredError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error"):
        super().__init__(mean_squared_error, reduction=reduction, name=name)

    def get_config(self):
        return Loss.get_config(self)


class MeanAbsoluteError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error"):
        super().__init__(mean_absolute_error, reduction=reduction, name=name)

    def get_config(self):
        return Loss.get_config(self)


class Huber(LossFunctionWrapper):
    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss"):
        super().__init__(huber, reduction=reduction, name=name, delta=delta)


class LogCosh(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="log_cosh"):
        super().__init__(log_cosh, reduction=reduction, name=name)

    def get_config(self):
        return Loss.get_config(self)


class _PlainLoss(LossFunctionWrapper):
    """A loss class over one function with no options: its config is Loss's (reduction, name)."""
    _fn = None

    def __init__(self, reduction="sum_over_batch_size", name=None):
        super().__init__(type(self)._fn, reduction=reduction, name=name or self._default_name)

    def get_config(self):
        return Loss.get_config(self)


class KLDivergence(_PlainLoss):
    _fn, _default_name = staticmethod(kl_divergence), "kl_divergence"


class Hinge(_PlainLoss):
    _fn, _default_name = staticmethod(hinge), "hinge"


class SquaredHinge(_PlainLoss):
    _fn, _default_name = staticmethod(squared_hinge), "squared_hinge"


class CategoricalHinge(_PlainLoss):
    _fn, _default_name = staticmethod(categorical_hinge), "categorical_hinge"


class CTC(_PlainLoss):
    _fn, _default_name = staticmethod(ctc), "ctc"


class Poisson(_PlainLoss):
    _fn, _default_name = staticmethod(poisson), "poisson"


class MeanAbsolutePercentageError(_PlainLoss):
    _fn, _default_name = staticmethod(mean_absolute_percentage_error), "mean_absolute_percentage_error"


class MeanSquaredLogarithmicError(_PlainLoss):
    _fn, _default_name = staticmethod(mean_squared_logarithmic_error), "mean_squared_logarithmic_error"


class CosineSimilarity(LossFunctionWrapper):
    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity"):
        super().__init__(cosine_similarity, reduction=reduction, name=name, axis=axis)


class BinaryCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_crossentropy"):
        super().__init__(binary_crossentropy, reduction=reduction, name=name, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class CategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="categorical_crossentropy"):
        super().__init__(categorical_crossentropy, reduction=reduction, name=name, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy"):
        super().__init__(sparse_categorical_crossentropy, reduction=reduction, name=name,
                         from_logits=from_logits, ignore_class=ignore_class)

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def __call__(self, y_true, y_pred, sample_weight=None):
        ignore = self._fn_kwargs.get("ignore_class")
        if ignore is None or Reduction.validate(self.reduction) not in (Reduction.AUTO, Reduction.SUM_OVER_BATCH_SIZE,
                                                                            Reduction.MEAN):
            return super().__call__(y_true, y_pred, sample_weight)
        losses = self.call(y_true, y_pred)  # 0 where the label is ignore_class
        # As Keras 3: the mean is over the labels that count (each weighs total / valid); the mean
        # over all labels gave half TF's value when half of them were ignored
        yt = _class_ids(y_true, len(aval_of(losses).shape) + 1)
        valid = M.cast(M.not_equal(yt, ignore), aval_of(losses).dtype)
        n = float(max(int(np.prod(aval_of(losses).shape)), 1))
        scale = M.divide_no_nan(M.multiply(valid, n), M.reduce_sum(valid))
        sw = scale if sample_weight is None else M.multiply(
            M.cast(convert_to_tensor(sample_weight), aval_of(losses).dtype), scale)
        return compute_weighted_loss(losses, sw, self.reduction)


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                              label_smoothing=0.0, axis=-1):
    """Focal loss (Lin et al. 2017) on binary_crossentropy's terms: each weighted by
    (1 - p_t)^gamma, p_t the probability of the true label; with ``apply_class_balancing``
    also by alpha (positives) or 1 - alpha (negatives). Mean over ``axis``."""
    y_true, y_pred = _same_shape("binary_focal_crossentropy", *_prep(y_true, y_pred))
    if label_smoothing:
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), 0.5 * label_smoothing)
    if from_logits:
        y_pred = M.sigmoid(y_pred)
    bce = _clipped_bce(y_true, y_pred)
    p_t = M.add(M.multiply(y_true, y_pred), M.multiply(M.subtract(1.0, y_true), M.subtract(1.0, y_pred)))
    focal = M.multiply(M.pow(M.subtract(1.0, p_t), gamma), bce)
    if apply_class_balancing:
        focal = M.multiply(M.add(M.multiply(y_true, alpha), M.multiply(M.subtract(1.0, y_true), 1.0 - alpha)), focal)
    return M.reduce_mean(focal, axis) if len(aval_of(focal).shape) else focal


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                                   axis=-1):
    """Focal categorical crossentropy: -sum(alpha (1 - p)^gamma y log p) over ``axis``, p the
    normalized, clipped predictions (Keras 3)."""
    y_true, y_pred = _same_shape("categorical_focal_crossentropy", *_prep(y_true, y_pred))
    if label_smoothing:
        n = aval_of(y_pred).shape[axis]
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), label_smoothing / float(n))
    if from_logits:
        y_pred = N.softmax(y_pred, axis)
    eps = backend.epsilon()
    out = M.clip_by_value(M.divide(y_pred, M.reduce_sum(y_pred, axis, keepdims=True)), eps, 1.0 - eps)
    cce = M.multiply(M.negative(y_true), M.log(out))
    return M.reduce_sum(M.multiply(M.multiply(M.pow(M.subtract(1.0, out), gamma), alpha), cce), axis)


def dice(y_true, y_pred, axis=None):
    """1 - 2 sum(y p) / (sum(y) + sum(p) + eps), summed over ``axis`` (None: everything)."""
    y_true, y_pred = _prep(y_true, y_pred)
    inter = M.reduce_sum(M.multiply(y_true, y_pred), axis)
    return M.subtract(1.0, M.divide(M.multiply(2.0, inter), M.add(M.add(M.reduce_sum(y_true, axis),
                                                                      M.reduce_sum(y_pred, axis)), backend.epsilon())))


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """1 - tp / (tp + alpha fp + beta fn + eps) with Keras 3's soft counts (its fp is
    sum((1 - p) y) and its fn sum(p (1 - y)), as it spells them)."""
    y_true, y_pred = _prep(y_true, y_pred)
    inter = M.reduce_sum(M.multiply(y_true, y_pred), axis)
    fp = M.reduce_sum(M.multiply(M.subtract(1.0, y_pred), y_true), axis)
    fn = M.reduce_sum(M.multiply(y_pred, M.subtract(1.0, y_true)), axis)
    return M.subtract(1.0, M.divide(inter, M.add(M.add(M.add(inter, M.multiply(fp, alpha)), M.multiply(fn, beta)),
                                                 backend.epsilon())))


class BinaryFocalCrossentropy(LossFunctionWrapper):
    def __init__(self, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                 axis=-1, reduction="sum_over_batch_size", name="binary_focal_crossentropy"):
        super().__init__(binary_focal_crossentropy, reduction=reduction, name=name,
                         apply_class_balancing=apply_class_balancing, alpha=alpha, gamma=gamma,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)


class CategoricalFocalCrossentropy(LossFunctionWrapper):
    def __init__(self, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_focal_crossentropy"):
        super().__init__(categorical_focal_crossentropy, reduction=reduction, name=name, alpha=alpha, gamma=gamma,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)


class Dice(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None):
        super().__init__(dice, reduction=reduction, name=name, axis=axis)


class Tversky(LossFunctionWrapper):
    def __init__(self, alpha=0.5, beta=0.5, reduction="sum_over_batch_size", name="tversky", axis=None):
        super().__init__(tversky, reduction=reduction, name=name, alpha=alpha, beta=beta, axis=axis)


# -- wave 21 (keras21): Keras 3's Circle and CategoricalGeneralizedCrossEntropy --------------------

def _pos_neg_masks(query_labels, key_labels, remove_diagonal=True):
    """Keras 3's ``build_pos_neg_masks``: same-label pairs (minus the diagonal) and the rest."""
    q = A.reshape(query_labels, [-1, 1]) if len(aval_of(query_labels).shape) == 1 else query_labels
    k = A.reshape(key_labels, [-1, 1]) if len(aval_of(key_labels).shape) == 1 else key_labels
    pos = M.equal(q, A.transpose(k))
    neg = M.logical_not(pos)
    if remove_diagonal:
        nq, nk = int(np.prod(aval_of(q).shape)), int(np.prod(aval_of(k).shape))
        pos = M.logical_and(pos, convert_to_tensor(~np.eye(nq, nk, dtype=bool)))
    return pos, neg


def circle(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True, gamma=80, margin=0.4):
    """Circle loss (Sun et al. 2020), Keras 3's: per query, softplus of the logsumexp over its
    positive pairs of ``-gamma a_p (margin - d)`` plus that over its negatives of
    ``gamma a_n (1 - margin - d)``, with d the cosine distance ``max(1 - y_pred @ ref^T, 0)`` of
    L2-normalised embeddings and the self-paced weights ``a_p = max(margin + d, 0)``,
    ``a_n = max(1 + margin - d, 0)``. A query with no positive (or no negative) pair has a -inf
    logsumexp term: loss 0, which Circle's mean leaves out (Keras marks ``loss > 0`` as its mask)."""
    from . import ops as K
    y_pred = _tensor(y_pred)
    y_true = M.cast(convert_to_tensor(y_true), np.int32)
    ref = y_pred if ref_embeddings is None else _tensor(ref_embeddings)
    ref_labels = y_true if ref_labels is None else M.cast(convert_to_tensor(ref_labels), np.int32)
    dt = aval_of(y_pred).dtype
    d = M.maximum(1 - M.matmul(y_pred, A.transpose(ref)), M.cast(0.0, dt))
    pos, neg = _pos_neg_masks(y_true, ref_labels, remove_diagonal)
    pm, nm = M.cast(pos, dt), M.cast(neg, dt)
    zero = M.cast(0.0, dt)
    pos_w = M.maximum((margin + d) * pm, zero)
    neg_w = M.maximum((1 + margin - d) * nm, zero)
    pos_wd = -1 * gamma * pos_w * (margin - d)
    neg_wd = gamma * neg_w * ((1 - margin) - d)
    ninf = A.ones_like(d) * np.asarray(-np.inf, dt)
    p_loss = K.logsumexp(M.where(pos, pos_wd, ninf), axis=1)
    n_loss = K.logsumexp(M.where(neg, neg_wd, ninf), axis=1)
    return K.softplus(p_loss + n_loss)


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """Generalized cross entropy (Zhang & Sabuncu 2018), Keras 3's: ``(1 - p^q) / q`` with p the
    predicted probability of the true class (integer labels, shape (batch,) or (batch, 1))."""
    y_pred = _tensor(y_pred)
    labels = M.cast(convert_to_tensor(y_true), np.int32)
    if len(aval_of(labels).shape) == len(aval_of(y_pred).shape):
        labels = A.squeeze(labels, -1)
    oh = A.one_hot(labels, aval_of(y_pred).shape[-1], dtype=aval_of(y_pred).dtype)
    p = M.reduce_sum(y_pred * oh, axis=-1)
    return (1 - M.pow(p, q)) / q


class Circle(LossFunctionWrapper):
    def __init__(self, gamma=80.0, margin=0.4, remove_diagonal=True, reduction="sum_over_batch_size",
                 name="circle", dtype=None):
        super().__init__(circle, reduction=reduction, name=name, gamma=gamma, margin=margin,
                         remove_diagonal=remove_diagonal)
        self.gamma, self.margin, self.remove_diagonal = gamma, margin, remove_diagonal

    def call(self, y_true, y_pred):
        # labels (batch,) and embeddings (batch, dim): no squeeze/expand of one to the other
        return circle(y_true, y_pred, gamma=self.gamma, margin=self.margin, remove_diagonal=self.remove_diagonal)

    def __call__(self, y_true, y_pred, sample_weight=None):
        losses = self.call(y_true, y_pred)
        # Keras 3 sets the per-query losses' mask to loss > 0 (its Loss.__call__ then averages over
        # the queries with a loss, apply_mask's total / valid weights)
        sw = apply_mask(sample_weight, M.greater(losses, M.cast(0.0, aval_of(losses).dtype)), aval_of(losses).dtype,
                        self.reduction)
        return compute_weighted_loss(losses, sw, self.reduction)


class CategoricalGeneralizedCrossEntropy(LossFunctionWrapper):
    def __init__(self, q=0.5, reduction="sum_over_batch_size", name="categorical_generalized_cross_entropy",
                 dtype=None):
        if not 0 < q < 1:
            raise ValueError("q must be in the interval (0, 1)")
        super().__init__(categorical_generalized_cross_entropy, reduction=reduction, name=name, q=q)
        self.q = q

    def call(self, y_true, y_pred):
        return categorical_generalized_cross_entropy(y_true, y_pred, q=self.q)


_FUNCS = {"mean_squared_error": mean_squared_error, "mse": mean_squared_error,
          "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error, "huber": huber,
          "huber_loss": huber, "log_cosh": log_cosh, "logcosh": log_cosh, "binary_crossentropy": binary_crossentropy,
          "categorical_crossentropy": categorical_crossentropy,
          "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
          "kl_divergence": kl_divergence, "kld": kl_divergence, "kullback_leibler_divergence": kl_divergence,
          "cosine_similarity": cosine_similarity, "hinge": hinge, "squared_hinge": squared_hinge,
          "categorical_hinge": categorical_hinge, "poisson": poisson,
          "mean_absolute_percentage_error": mean_absolute_percentage_error, "mape": mean_absolute_percentage_error,
          "mean_squared_logarithmic_error": mean_squared_logarithmic_error, "msle": mean_squared_logarithmic_error,
          "binary_focal_crossentropy": binary_focal_crossentropy,
          "categorical_focal_crossentropy": categorical_focal_crossentropy, "dice": dice, "tversky": tversky,
          "ctc": ctc, "circle": circle}   # (Keras 3.15's get() does not know its GCE function's name)
_CLASSES = {c.__name__.lower(): c for c in (MeanSquaredError, MeanAbsoluteError, Huber, LogCosh, BinaryCrossentropy,
                                            CategoricalCrossentropy, SparseCategoricalCrossentropy, KLDivergence,
                                            CosineSimilarity, Hinge, SquaredHinge, CategoricalHinge, Poisson,
                                            MeanAbsolutePercentageError, MeanSquaredLogarithmicError,
                                            BinaryFocalCrossentropy, CategoricalFocalCrossentropy, Dice, Tversky, CTC,
                                            Circle, CategoricalGeneralizedCrossEntropy)}


def get(identifier):
    """A loss from a name (function names give functions, class names
    instances), a config dict, a Loss or a callable."""
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        if identifier in _FUNCS:
            return _FUNCS[identifier]
        if identifier in ("MSE", "MAE", "KLD", "MAPE", "MSLE"):
            return _FUNCS[identifier.lower()]
        for c in _CLASSES.values():
            if c.__name__ == identifier:
                return c()
        key = identifier.lower()
        if key in _FUNCS:
            return _FUNCS[key]
        if key in _CLASSES:
            return _CLASSES[key]()
        raise ValueError(f"unknown loss {identifier!r}; known: {sorted(set(_FUNCS) | set(_CLASSES))}")
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"cannot interpret {identifier!r} as a loss")


def serialize(loss):
    return to_config(loss) if isinstance(loss, Loss) else getattr(loss, "__name__", loss)


def deserialize(config):
    return from_config(config, _CLASSES, "loss", get)
