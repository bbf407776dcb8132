"""Keras 3's ``LossScaleOptimizer`` (``keras.optimizers.LossScaleOptimizer``, also
``keras.mixed_precision.LossScaleOptimizer``): dynamic loss scaling for float16 training.
``tapeflow/keras/mixed_precision.py``'s docstring describes the rule and how ``fit`` uses it."""
from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor, Variable, convert_to_tensor
from ..module import Module
from ..ops import math_ops as M
from .base import Optimizer

__all__ = ["LossScaleOptimizer"]


class LossScaleOptimizer(Module):
    """Keras 3's ``LossScaleOptimizer(inner_optimizer, initial_scale=2**15, dynamic_growth_steps=2000)``
    (the module docstring has the rule). Its own state is two variables, ``step_counter`` (int64)
    and ``dynamic_scale`` (float32), made at the first ``apply_gradients`` (``build``), as Keras'."""

    _CONTRIBUTES_VARIABLES = False
    _bookkeeping = frozenset({"_built"})

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000, name=None, **kwargs):
        if not kwargs.pop("dynamic", True):
            # TF 2.21's ValueError, word for word
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, simply set "
                             "`loss_scale_factor` directly on the `inner_optimizer`.")
        defaults = {"weight_decay": None, "clipnorm": None, "global_clipnorm": None, "clipvalue": None,
                    "use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None,
                    "loss_scale_factor": None, "gradient_accumulation_steps": None}
        for k, default in defaults.items():
            if k in kwargs and kwargs.pop(k) != default:
                raise ValueError(f"LossScaleOptimizer does not support `{k}`. Instead, set `{k}` on the "
                                 "`inner_optimizer`.")
        if kwargs:
            raise ValueError(f"LossScaleOptimizer does not support arguments: `{'`, `'.join(kwargs)}`.")
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(f"LossScaleOptimizer: inner_optimizer must be a keras optimizer instance, got "
                            f"{type(inner_optimizer).__name__} {inner_optimizer!r}")
        name = name or "loss_scale_optimizer"
        super().__init__(name=name)
        self.inner_optimizer = inner_optimizer
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        self._built = False
        self.step_counter = None
        self.dynamic_scale = None

    def build(self, var_list=None):
        if self._built:
            return
        self.step_counter = Variable(np.int64(0), trainable=False, name=f"{self.name}/step_counter")
        self.dynamic_scale = Variable(np.float32(self.initial_scale), trainable=False,
                                      name=f"{self.name}/dynamic_scale")
        self._built = True
        if var_list is not None:
            self.inner_optimizer.build(list(var_list))

    @property
    def built(self):
        return self._built

    # the inner optimizer's state, as Keras 3 forwards it
    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    @property
    def iterations(self):
        return self.inner_optimizer.iterations

    @property
    def variables(self):
        own = [self.step_counter, self.dynamic_scale] if self._built else []
        return own + list(self.inner_optimizer.variables)

    def scale_loss(self, loss):
        """``loss`` times the current scale (the initial scale before the first step)."""
        scale = self.dynamic_scale if self._built else self.initial_scale
        if isinstance(scale, Variable):
            scale = scale.read_value()
        loss = loss if isinstance(loss, Tensor) else convert_to_tensor(loss)
        from ..core.primitive import aval_of
        d = aval_of(loss).dtype
        return M.multiply(loss, M.cast(scale, d) if d != np.float32 else scale) if isinstance(scale, Tensor) \
            else M.multiply(loss, np.asarray(scale, d))

    def check_finite(self, grads):
        """True (a bool scalar tensor) when every gradient is finite."""
        flags = [M.reduce_all(M.is_finite(g)) for g in grads if g is not None]
        if not flags:
            return convert_to_tensor(True)
        from ..ops import array_ops as A
        return M.reduce_all(A.stack(flags)) if len(flags) > 1 else flags[0]

    def apply_gradients(self, grads_and_vars, name=None, **kwargs):
        """Unscale the gradients and apply them with the inner optimizer if they are all finite
        (a step with an inf or NaN gradient is skipped: the variables, the inner optimizer's
        state and ``iterations`` are left as they were), then update the scale. Eagerly the
        test is a Python ``if``; traced, one ``cond``."""
        from ..ir.control_flow import cond
        pairs = list(grads_and_vars)
        self.build([v for _, v in pairs])
        grads = [g for g, _ in pairs]
        finite = self.check_finite(grads)

        def finite_step():
            scale = self.dynamic_scale.read_value()
            unscaled = [None if g is None else M.divide(_as_tensor(g, v), M.cast(scale, v.dtype.as_numpy_dtype)
                                                        if v.dtype != np.float32 else scale)
                        for g, v in pairs]
            self.inner_optimizer.apply_gradients(zip(unscaled, [v for _, v in pairs]), **kwargs)
            grow = M.equal(self.step_counter.read_value(), np.int64(self.dynamic_growth_steps - 1))

            def upscale():
                self.step_counter.assign(np.int64(0))
                self.dynamic_scale.assign(M.multiply(self.dynamic_scale.read_value(), np.float32(2.0)))
                return convert_to_tensor(np.int64(0))

            def increment():
                self.step_counter.assign_add(np.int64(1))
                return convert_to_tensor(np.int64(0))
            cond(grow, upscale, increment)
            return convert_to_tensor(np.int64(0))

        def skip_step():
            self.step_counter.assign(np.int64(0))
            self.dynamic_scale.assign(M.multiply(self.dynamic_scale.read_value(), np.float32(0.5)))
            return convert_to_tensor(np.int64(0))

        cond(finite, finite_step, skip_step)
        return self.iterations

    def apply(self, grads, trainable_variables=None):
        """Keras 3's form: ``apply_gradients(zip(grads, trainable_variables))``."""
        if trainable_variables is None:
            raise ValueError("LossScaleOptimizer.apply: give trainable_variables")
        return self.apply_gradients(zip(grads, trainable_variables))

    def minimize(self, loss, var_list, tape=None):
        """Scale ``loss`` (a no-argument callable or a tensor computed under ``tape``), take the
        gradients of the scaled loss and apply them (unscaled) with ``apply_gradients``."""
        from ..autodiff.tape import GradientTape
        if tape is None:
            if not callable(loss):
                raise ValueError("minimize: `tape` is required when a Tensor loss is passed")
            with GradientTape() as tape:
                scaled = self.scale_loss(loss())
        else:
            with tape:
                scaled = self.scale_loss(loss() if callable(loss) else loss)
        vl = list(var_list() if callable(var_list) else var_list)
        return self.apply_gradients(zip(tape.gradient(scaled, vl), vl))

    def get_config(self):
        from . import serialize
        return {"name": self.name, "inner_optimizer": serialize(self.inner_optimizer),
                "initial_scale": self.initial_scale, "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from . import deserialize
        config = dict(config)
        inner = deserialize(config.pop("inner_optimizer"))
        return cls(inner, **config)

    def _walk_children(self):
        out = [("inner_optimizer", self.inner_optimizer)]
        if self._built:
            out += [("step_counter", self.step_counter), ("dynamic_scale", self.dynamic_scale)]
        return out

    def __repr__(self):
        return f"<LossScaleOptimizer name={self.name} inner={self.inner_optimizer!r}>"


def _as_tensor(g, v):
    if isinstance(g, Tensor) and not isinstance(g, Variable):
        return g
    if isinstance(g, Variable):
        return g.read_value()
    return convert_to_tensor(np.asarray(g, v.dtype.as_numpy_dtype))
