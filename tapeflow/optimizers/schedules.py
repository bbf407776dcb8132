"""Learning-rate schedules (``keras.optimizers.schedules``).

A schedule maps the optimizer's step counter (the int64 ``iterations``
variable, or any integer/tensor) to a float32 learning rate with tapeflow ops
only, so it runs inside ``tapeflow.function`` from the variable's current
value, with no retracing as the step advances.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.primitive import aval_of
from ..core.tensor import Tensor, Variable, constant, convert_to_tensor
from ..ops import math_ops as M

__all__ = ["LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay", "CosineDecay",
           "InverseTimeDecay", "PolynomialDecay", "serialize", "deserialize"]


def _step_tensor(step):
    if isinstance(step, Tensor):
        return step
    return convert_to_tensor(np.asarray(step))


def _as_float(step):
    s = _step_tensor(step)
    return M.cast(s, np.float32) if aval_of(s).dtype != np.float32 else s


class LearningRateSchedule:
    """Base class: ``__call__(step) -> float32 scalar tensor``."""

    def __call__(self, step):
        raise NotImplementedError

    def get_config(self):
        raise NotImplementedError

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _decay_steps(schedule, decay_steps):
    """``decay_steps``, checked: the rate divides by it, so 0 would make every rate nan
    or 0 without a word (TF raises here too, for every decaying schedule)."""
    if decay_steps <= 0:
        raise ValueError(f"{schedule}: decay_steps must be > 0 (the steps over which the rate decays), "
                         f"got {decay_steps}")
    return decay_steps


class _RateDecay(LearningRateSchedule):
    """ExponentialDecay's and InverseTimeDecay's shared arguments and progress
    ``step / decay_steps`` (floored with ``staircase``); each applies its own decay."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None):
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_steps = _decay_steps(type(self).__name__, decay_steps)
        self.decay_rate = float(decay_rate)
        self.staircase = bool(staircase)
        self.name = name

    def _progress(self, step):
        p = M.divide(_as_float(step), float(self.decay_steps))
        return M.floor(p) if self.staircase else p

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class ExponentialDecay(_RateDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (floored
    exponent with ``staircase``)."""

    def __call__(self, step):
        return M.multiply(M.pow(constant(np.float32(self.decay_rate)), self._progress(step)),
                          self.initial_learning_rate)


class InverseTimeDecay(_RateDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)`` (floored
    ``step / decay_steps`` with ``staircase``)."""

    def __call__(self, step):
        return M.divide(self.initial_learning_rate, M.add(M.multiply(self._progress(step), self.decay_rate), 1.0))


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while step <= boundaries[0], ``values[i]`` while
    boundaries[i-1] < step <= boundaries[i], ``values[-1]`` after (as TF)."""

    def __init__(self, boundaries, values, name=None):
        if len(boundaries) != len(values) - 1:
            raise ValueError(f"PiecewiseConstantDecay: needs len(values) == len(boundaries) + 1, got "
                             f"{len(values)} values and {len(boundaries)} boundaries")
        self.boundaries = list(boundaries)
        self.values = [float(v) for v in values]
        self.name = name

    def __call__(self, step):
        s = _step_tensor(step)
        if any(isinstance(b, float) for b in self.boundaries) or aval_of(s).dtype.kind == "f":
            s = _as_float(s)
            bounds = [float(b) for b in self.boundaries]
        else:
            bounds = [int(b) for b in self.boundaries]
            if aval_of(s).dtype != np.int64:
                s = M.cast(s, np.int64)
        r = constant(np.float32(self.values[-1]))
        for b, v in zip(reversed(bounds), reversed(self.values[:-1])):
            r = M.where(M.less_equal(s, b), constant(np.float32(v)), r)
        return r

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine decay from ``initial_learning_rate`` (or, after a linear warmup
    of ``warmup_steps``, from ``warmup_target``) to ``alpha`` times it over
    ``decay_steps``, then constant (Keras 2.13 semantics)."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name=None, warmup_target=None,
                 warmup_steps=0):
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_steps = _decay_steps("CosineDecay", decay_steps)
        self.alpha = float(alpha)
        self.name = name
        self.warmup_target = None if warmup_target is None else float(warmup_target)
        self.warmup_steps = warmup_steps

    def _decay(self, step, decay_from):
        frac = M.divide(step, float(self.decay_steps))
        cosine = M.multiply(M.add(M.cos(M.multiply(frac, math.pi)), 1.0), 0.5)
        decayed = M.add(M.multiply(cosine, 1.0 - self.alpha), self.alpha)
        return M.multiply(decayed, decay_from)

    def __call__(self, step):
        s = _as_float(step)
        if self.warmup_target is None:
            return self._decay(M.minimum(s, float(self.decay_steps)), self.initial_learning_rate)
        s = M.minimum(s, float(self.decay_steps + self.warmup_steps))
        ws = float(max(self.warmup_steps, 1))
        warm = M.add(M.multiply(M.divide(s, ws), self.warmup_target - self.initial_learning_rate),
                     self.initial_learning_rate)
        dec = self._decay(M.subtract(s, float(self.warmup_steps)), self.warmup_target)
        return M.where(M.less(s, float(self.warmup_steps)), warm, dec)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}


class PolynomialDecay(LearningRateSchedule):
    """``(lr0 - end) * (1 - step / decay_steps) ** power + end`` (step capped at
    decay_steps; with ``cycle`` decay_steps grows to the next multiple)."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                 name=None):
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_steps = _decay_steps("PolynomialDecay", decay_steps)
        self.end_learning_rate = float(end_learning_rate)
        self.power = float(power)
        self.cycle = bool(cycle)
        self.name = name

    def __call__(self, step):
        s = _as_float(step)
        ds = float(self.decay_steps)
        if self.cycle:
            mult = M.where(M.equal(s, 0.0), constant(np.float32(1.0)), M.ceil(M.divide(s, ds)))
            dsteps = M.multiply(mult, ds)
        else:
            dsteps = constant(np.float32(ds))
            s = M.minimum(s, ds)
        p = M.divide(s, dsteps)
        return M.add(M.multiply(M.pow(M.subtract(1.0, p), self.power),
                                self.initial_learning_rate - self.end_learning_rate), self.end_learning_rate)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power, "cycle": self.cycle,
                "name": self.name}


_BY_NAME = {c.__name__: c for c in (ExponentialDecay, PiecewiseConstantDecay, CosineDecay, InverseTimeDecay,
                                    PolynomialDecay)}


def serialize(schedule):
    return {"class_name": type(schedule).__name__, "config": schedule.get_config()}


def deserialize(config):
    return _BY_NAME[config["class_name"]].from_config(config["config"])


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR, Loshchilov & Hutter; Keras 3's schedule): the first period
    lasts ``first_decay_steps``, each next one ``t_mul`` times longer, and restarts from ``m_mul`` times the
    previous peak; within a period the rate falls along a cosine to ``alpha`` times that peak."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0,
                 name="SGDRDecay"):
        self.initial_learning_rate = float(initial_learning_rate)
        self.first_decay_steps = first_decay_steps
        self.t_mul = float(t_mul)
        self.m_mul = float(m_mul)
        self.alpha = float(alpha)
        self.name = name

    def __call__(self, step):
        frac = M.divide(_as_float(step), float(self.first_decay_steps))
        if self.t_mul == 1.0:   # equal periods: the restart index is the whole part
            i_restart = M.floor(frac)
            frac = M.subtract(frac, i_restart)
        else:   # periods growing geometrically: i solves sum_{k<i} t_mul**k <= frac (Keras' closed form)
            t = self.t_mul
            i_restart = M.floor(M.divide(M.log(M.subtract(1.0, M.multiply(frac, 1.0 - t))), math.log(t)))
            t_i = M.pow(constant(np.float32(t)), i_restart)
            sum_r = M.divide(M.subtract(1.0, t_i), 1.0 - t)
            frac = M.divide(M.subtract(frac, sum_r), t_i)
        m_fac = M.pow(constant(np.float32(self.m_mul)), i_restart)
        cosine = M.multiply(M.multiply(m_fac, 0.5), M.add(M.cos(M.multiply(frac, math.pi)), 1.0))
        decayed = M.add(M.multiply(cosine, 1.0 - self.alpha), self.alpha)
        return M.multiply(decayed, self.initial_learning_rate)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "first_decay_steps": self.first_decay_steps,
                "t_mul": self.t_mul, "m_mul": self.m_mul, "alpha": self.alpha, "name": self.name}


__all__.append("CosineDecayRestarts")
_BY_NAME["CosineDecayRestarts"] = CosineDecayRestarts
