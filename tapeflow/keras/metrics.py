"""tapeflow.keras.metrics: streaming metrics with Keras' API.

A metric holds its running state in non-trainable Variables (``total`` and
``count``), so it is tracked by checkpoints and its ``update_state`` works
inside ``tapeflow.function`` (the updates are ``assign_add``s). Each metric
reduces a batch to per-sample values; ``Mean`` then keeps the weighted mean of
those values over everything seen since the last ``reset_state``, which is
how Keras defines every metric below (values checked against Keras 3 / TF 2.21).
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core.tensor import Variable, convert_to_tensor
from ..module import Module, camel_to_snake
from ..ops import array_ops as A
from ..ops import math_ops as M
from . import losses as _losses

__all__ = ["Metric", "Mean", "Sum", "MeanSquaredError", "MeanAbsoluteError", "Accuracy", "BinaryAccuracy",
           "CategoricalAccuracy", "SparseCategoricalAccuracy", "get", "for_compile"]


class Metric(Module):
    """Base class: subclasses implement ``update_state`` and ``result``."""

    def __init__(self, name=None, dtype=None):
        super().__init__(name=name or camel_to_snake(type(self).__name__))
        self._dtype = _dt.as_dtype(dtype or "float32")

    @property
    def dtype(self):
        return self._dtype

    def add_variable(self, name):
        return Variable(np.zeros((), self._dtype.np), trainable=False, name=f"{self.name}/{name}")

    def reset_state(self):
        for v in self.variables:
            v.assign(np.zeros(v.shape, v.dtype.np))

    reset_states = reset_state  # the TF 2.x spelling

    def __call__(self, *args, **kwargs):
        """Update with one batch and return the running result (as Keras)."""
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self._dtype.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


class Sum(Metric):
    """The (weighted) sum of every value seen."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name, dtype)
        self.total = self.add_variable("total")

    def update_state(self, values, sample_weight=None):
        values = M.cast(convert_to_tensor(values), self._dtype)
        if sample_weight is not None:
            values = M.multiply(values, _broadcast_weight(sample_weight, values, self._dtype))
        self.total.assign_add(M.reduce_sum(values))

    def result(self):
        return A.identity(self.total)


class Mean(Metric):
    """The (weighted) mean of every value seen: total / count, 0 before any update."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name, dtype)
        self.total = self.add_variable("total")
        self.count = self.add_variable("count")

    def update_state(self, values, sample_weight=None):
        values = M.cast(convert_to_tensor(values), self._dtype)
        if sample_weight is None:
            self.total.assign_add(M.reduce_sum(values))
            self.count.assign_add(M.cast(A.size(values), self._dtype))
            return
        w = _broadcast_weight(sample_weight, values, self._dtype)
        self.total.assign_add(M.reduce_sum(M.multiply(values, w)))
        self.count.assign_add(M.reduce_sum(M.multiply(A.ones_like(values), w)))

    def result(self):
        # 0 before the first update (Keras' divide_no_nan), not NaN
        safe = M.maximum(self.count, np.asarray(1e-30, self._dtype.np))
        return M.where(M.greater(self.count, 0.0), M.divide(self.total, safe), A.zeros_like(self.total))


def _broadcast_weight(sample_weight, values, dtype):
    """A per-sample weight of shape (batch,) applies to every value of its sample."""
    w = M.cast(convert_to_tensor(sample_weight), dtype)
    vr, wr = len(values.shape), len(w.shape)
    while wr < vr:
        w = A.expand_dims(w, -1)
        wr += 1
    return A.broadcast_to(w, values.shape)


class MeanMetricWrapper(Mean):
    """Mean of ``fn(y_true, y_pred)`` per sample (Keras' MeanMetricWrapper)."""

    def __init__(self, fn, name, dtype=None, **fn_kwargs):
        super().__init__(name, dtype)
        self._fn, self._fn_kwargs = fn, fn_kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self._fn(convert_to_tensor(y_true), convert_to_tensor(y_pred), **self._fn_kwargs),
                             sample_weight)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


class MeanSquaredError(MeanMetricWrapper):
    _direction = "down"

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(_losses.mean_squared_error, name, dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    _direction = "down"

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(_losses.mean_absolute_error, name, dtype)


def _as_float(x):
    return M.cast(x, "float32")


def _accuracy(y_true, y_pred):
    # exact equality after casting the prediction to the labels' dtype (as Keras); ranks
    # aligned as the losses do, else (batch,) against (batch, 1) compares every pair
    y_true, y_pred = _losses._squeeze_or_expand(y_true, y_pred)
    return _as_float(M.equal(y_true, M.cast(y_pred, y_true.dtype)))


def _binary_accuracy(y_true, y_pred, threshold=0.5):
    y_true, y_pred = _losses._squeeze_or_expand(y_true, y_pred)
    pred = M.cast(M.greater(y_pred, threshold), y_true.dtype)
    return _as_float(M.equal(y_true, pred))


def _categorical_accuracy(y_true, y_pred):
    return _as_float(M.equal(M.argmax(y_true, axis=-1), M.argmax(y_pred, axis=-1)))


def _sparse_categorical_accuracy(y_true, y_pred):
    # labels may come as (batch,) or (batch, 1), as Keras accepts both
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = A.squeeze(y_true, -1)
    if len(y_true.shape) != len(y_pred.shape) - 1:
        raise ValueError(f"SparseCategoricalAccuracy: labels of shape {tuple(y_true.shape)} do not match "
                         f"predictions of shape {tuple(y_pred.shape)}; give integer labels of shape "
                         f"{tuple(y_pred.shape)[:-1]} (or with a trailing 1)")
    pred = M.argmax(y_pred, axis=-1)
    return _as_float(M.equal(M.cast(y_true, pred.dtype), pred))


class Accuracy(MeanMetricWrapper):
    _direction = "up"

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(_accuracy, name, dtype)


class BinaryAccuracy(MeanMetricWrapper):
    _direction = "up"

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(_binary_accuracy, name, dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    _direction = "up"

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(_categorical_accuracy, name, dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    _direction = "up"

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(_sparse_categorical_accuracy, name, dtype)


_BY_NAME = {
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError, "mae": MeanAbsoluteError,
    "accuracy": Accuracy, "acc": Accuracy, "binary_accuracy": BinaryAccuracy,
    "categorical_accuracy": CategoricalAccuracy, "sparse_categorical_accuracy": SparseCategoricalAccuracy,
}


def get(identifier):
    """A metric from a Metric instance, a class or its Keras name."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, str):
        key = camel_to_snake(identifier) if identifier[:1].isupper() else identifier
        if key in _BY_NAME:
            return _BY_NAME[key]()
        raise ValueError(f"keras.metrics.get: unknown metric {identifier!r}; known: {sorted(_BY_NAME)}")
    raise TypeError(f"keras.metrics.get: expected a Metric, a Metric class or a name, got {identifier!r}")


def for_compile(identifier, y_true, y_pred):
    """The metric ``compile(metrics=[identifier])`` stands for, named as Keras 3
    names it in the logs: a string keeps its spelling (``"mae"``), an object its
    name, a function its ``__name__``. ``"accuracy"``/``"acc"`` become binary,
    sparse categorical or categorical accuracy from the shapes of the first
    batch (Keras' rule: one prediction column is binary; labels of lower rank, or
    one label column against several predictions, are sparse)."""
    if identifier is None:
        raise ValueError("compile(metrics=...): expected a metric, received `None`")
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, str):
        if identifier.lower() in ("accuracy", "acc"):
            yt, yp = tuple(y_true.shape), tuple(y_pred.shape)
            if yp and yp[-1] == 1:
                return BinaryAccuracy(name=identifier)
            if len(yt) < len(yp) or (yt and yt[-1] == 1 and yp[-1] > 1):
                return SparseCategoricalAccuracy(name=identifier)
            return CategoricalAccuracy(name=identifier)
        key = camel_to_snake(identifier) if identifier[:1].isupper() else identifier
        if key in _BY_NAME:
            return _BY_NAME[key](name=identifier)
        fn = _losses._FUNCS.get(key)
        if fn is not None:      # Keras also takes loss names as metrics: the mean of the per-sample loss
            return MeanMetricWrapper(fn, identifier)
        raise ValueError(f"Could not interpret metric identifier: {identifier} (known: "
                         f"{sorted(set(_BY_NAME) | set(_losses._FUNCS) | {'accuracy', 'acc'})})")
    if callable(identifier):
        return MeanMetricWrapper(identifier, getattr(identifier, "__name__", "metric"))
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")
