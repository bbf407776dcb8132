"""``tf.train.ExponentialMovingAverage``: shadow variables that follow a moving average of others.

TF 2.21's rules: ``apply(var_list)`` makes, on a variable's first apply, a non-trainable shadow
variable named ``<var>/<name>:0`` holding the variable's current value (created in ``init_scope``:
once, eagerly, also when the first apply is inside ``tapeflow.function``), then updates every
shadow ``shadow -= (shadow - var) * (1 - decay)``. With ``num_updates`` the decay is
``min(decay, (1 + num_updates) / (10 + num_updates))`` (the warm-up of TF's docs). The decay is a
float32 tensor as in TF (``1 - decay`` is rounded to float32, then cast to the variable's dtype).
``zero_debias`` only changes averages of plain tensors in TF, which eager TF refuses; for
variables it has no effect, here as there.
"""
from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor, Variable, convert_to_tensor
from ..ops import math_ops as _M
from ..ops.context_ops import init_scope


class ExponentialMovingAverage:
    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages = {}   # id(var) -> (var, shadow): the var is held so its id stays its own

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        """Create the shadows of variables seen for the first time, then update every shadow.
        Returns None (TF 2.21's eager apply returns None)."""
        var_list = [] if var_list is None else list(var_list)   # TF 2 eager: no global trainable collection
        for v in var_list:
            if not isinstance(v, Variable):
                # TF 2.21's TypeError
                raise TypeError("tf.train.ExponentialMovingAverage does not support non-Variable tensors when eager "
                                "execution is enabled.")
        for v in var_list:
            if v.dtype.name not in ("float16", "float32", "float64"):
                raise TypeError(f"The variables must be half, float, or double: {v.name}")
            if id(v) not in self._averages:
                with init_scope():
                    base = v.name[:-2] if v.name.endswith(":0") else v.name
                    shadow = Variable(np.array(v.numpy()), trainable=False, name=f"{base}/{self._name}")
                self._averages[id(v)] = (v, shadow)
        decay = convert_to_tensor(np.float32(self._decay))
        if self._num_updates is not None:
            n = _M.cast(convert_to_tensor(self._num_updates), np.float32)
            decay = _M.minimum(decay, (1.0 + n) / (10.0 + n))
        for v in var_list:
            shadow = self._averages[id(v)][1]
            rate = _M.cast(_M.subtract(np.float32(1.0), decay), v.dtype)
            shadow.assign_sub((shadow - v) * rate)
        return None

    def average(self, var):
        """The shadow variable of ``var``, or None before ``apply([var])``."""
        entry = self._averages.get(id(var))
        return entry[1] if entry is not None and entry[0] is var else None

    def average_name(self, var):
        shadow = self.average(var)
        if shadow is not None:
            return shadow.name[:-2] if shadow.name.endswith(":0") else shadow.name
        base = var.name[:-2] if var.name.endswith(":0") else var.name
        return f"{base}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None):
        """{name of the shadow: variable} for restoring averages into the variables (TF1's Saver
        idiom; TF 2 restores through a Checkpoint of the shadows)."""
        out = {}
        for v, _ in self._averages.values():
            if moving_avg_variables is None or any(v is m for m in moving_avg_variables):
                out[self.average_name(v)] = v
        return out
