"""Keras 3's Muon and ScheduleFreeAdamW (TF 2.21's ``tf.keras.optimizers``), operation for
operation as Keras 3.15 writes them (``keras/src/optimizers/muon.py``, ``schedule_free_adamw.py``),
so their iterates match Keras' to float32 rounding (tests/test_keras21_optimizers.py, against
tests/data/keras21_optimizers_reference.json). Both are on the op path (``_update_step``): Muon's
Newton-Schulz iteration is matrix products and ScheduleFreeAdamW reads two slots and the variable
in a non-elementwise order, outside the fused rules' vocabulary."""
from __future__ import annotations

import re

import numpy as np

from ..ops import array_ops as A
from ..ops import math_ops as M
from .base import Optimizer

__all__ = ["Muon", "ScheduleFreeAdamW", "OptimizerMap", "MultiOptimizer"]


def _path(var):
    """Keras' ``variable.path`` ("dense/kernel") for a Keras layer's variable, else its name."""
    return getattr(var, "path", None) or var.name.split(":")[0]


def _swap_last(x):
    nd = len(x.shape)
    return A.transpose(x, list(range(nd - 2)) + [nd - 1, nd - 2])


class Muon(Optimizer):
    """Muon (Jordan et al. 2024; Keras 3's, with Moonlight's RMS matching): a rank-2 variable's
    update is its (Nesterov) momentum orthogonalised by ``ns_steps`` quintic Newton-Schulz
    iterations ``X <- a X + (b A + c A A) X`` with ``A = X X^T`` (X the momentum over its
    Frobenius norm + 1e-7, transposed while taller than wide), scaled by
    ``sqrt(max(rows, cols)) * rms_rate``::

        m = momentum m + g;   u = NS(g + momentum m) (nesterov) or NS(m);   w -= lr * u * scale

    Every other variable -- not rank 2, a name with "embedding" (``exclude_embeddings``) or
    matching a regex of ``exclude_layers`` -- takes Keras' AdamW step with
    ``learning_rate * adam_lr_ratio``. Decoupled weight decay ``w -= w * wd * lr`` uses
    ``weight_decay`` for Muon variables and ``adam_weight_decay`` for AdamW ones (Keras 3's
    ``_apply_weight_decay``), before the update. Keras matches names against ``variable.path``
    (``"dense/kernel"``): so here, for a Keras layer's variables; a bare Variable's name otherwise."""

    def __init__(self, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999, adam_weight_decay=0.004, epsilon=1e-7,
                 weight_decay=0.004, clipnorm=None, clipvalue=None, global_clipnorm=None, name="muon",
                 exclude_layers=None, exclude_embeddings=True, muon_a=3.4445, muon_b=-4.7750, muon_c=2.0315,
                 adam_lr_ratio=1, momentum=0.95, ns_steps=5, nesterov=True, rms_rate=0.2, **kwargs):
        # the base class's decay is off: Muon picks the rate per variable (_update_step)
        super().__init__(name, learning_rate=learning_rate, weight_decay=None, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        self.muon_weight_decay = None if weight_decay is None else float(weight_decay)
        self.adam_weight_decay = None if adam_weight_decay is None else float(adam_weight_decay)
        self.adam_beta_1, self.adam_beta_2, self.epsilon = float(adam_beta_1), float(adam_beta_2), float(epsilon)
        self.muon_a, self.muon_b, self.muon_c = float(muon_a), float(muon_b), float(muon_c)
        self.adam_lr_ratio, self.momentum = adam_lr_ratio, float(momentum)
        self.ns_steps, self.nesterov = int(ns_steps), bool(nesterov)
        self.exclude_embeddings = bool(exclude_embeddings)
        self.exclude_layers = list(exclude_layers or [])
        self.rms_rate = rms_rate

    def _should_use_adamw(self, var):
        if len(var.shape) != 2:
            return True
        name = _path(var)
        if self.exclude_embeddings and "embedding" in name.lower():
            return True
        return any(re.search(k, name) for k in self.exclude_layers)

    def _create_slots(self, var):
        self.add_slot(var, "momentum")
        if self._should_use_adamw(var):
            self.add_slot(var, "velocity")

    def zeropower_via_newtonschulz5(self, x, steps):
        shape = x.shape
        if len(shape) < 2:
            raise ValueError(f"Expected gradient or momentum to have at least 2 dimensions. Received: "
                             f"shape={tuple(shape)}")
        a, b, c = self.muon_a, self.muon_b, self.muon_c
        tall = shape[-2] > shape[-1]
        if tall:
            x = _swap_last(x)
        x = x / (M.sqrt(M.reduce_sum(M.square(x), axis=[-2, -1], keepdims=True)) + 1e-7)
        for _ in range(steps):
            ta = M.matmul(x, _swap_last(x))
            tb = b * ta + M.matmul(c * ta, ta)
            x = a * x + M.matmul(tb, x)
        return _swap_last(x) if tall else x

    def _update_step(self, grad, var, lr):
        adamw = self._should_use_adamw(var)
        wd = self.adam_weight_decay if adamw else self.muon_weight_decay
        if wd is not None and self._use_weight_decay(var):
            w = var.read_value()
            var.assign(w - w * M.cast(wd, var.dtype) * lr)
        g = M.cast(grad, var.dtype)
        m_slot = self.get_slot(var, "momentum")
        if adamw:
            self._adamw(g, var, lr * M.cast(self.adam_lr_ratio, var.dtype), m_slot, self.get_slot(var, "velocity"))
            return
        m = m_slot.read_value()
        m = m + (g + m * (self.momentum - 1))
        m_slot.assign(m)
        u = self.zeropower_via_newtonschulz5(g + self.momentum * m if self.nesterov else m, self.ns_steps)
        step = lr * u
        if self.rms_rate is not None:
            step = step * (np.sqrt(np.float32(max(var.shape[0], var.shape[1]))) * self.rms_rate)
        var.assign(var.read_value() - step)

    def _adamw(self, g, var, lr, m_slot, v_slot):
        t = M.cast(self.iterations + 1, var.dtype)
        b1p = M.pow(M.cast(self.adam_beta_1, var.dtype), t)
        b2p = M.pow(M.cast(self.adam_beta_2, var.dtype), t)
        alpha = lr * M.sqrt(1 - b2p) / (1 - b1p)
        m = m_slot.read_value()
        m = m + (g - m) * (1 - self.adam_beta_1)
        v = v_slot.read_value()
        v = v + (M.square(g) - v) * (1 - self.adam_beta_2)
        m_slot.assign(m)
        v_slot.assign(v)
        var.assign(var.read_value() - (m * alpha) / (M.sqrt(v) + self.epsilon))

    def get_config(self):
        cfg = super().get_config()
        cfg.update(weight_decay=self.muon_weight_decay, adam_beta_1=self.adam_beta_1, adam_beta_2=self.adam_beta_2,
                   epsilon=self.epsilon, exclude_layers=self.exclude_layers, muon_a=self.muon_a, muon_b=self.muon_b,
                   muon_c=self.muon_c, adam_lr_ratio=self.adam_lr_ratio, momentum=self.momentum,
                   ns_steps=self.ns_steps, nesterov=self.nesterov, exclude_embeddings=self.exclude_embeddings,
                   adam_weight_decay=self.adam_weight_decay, rms_rate=self.rms_rate)
        return cfg


class ScheduleFreeAdamW(Optimizer):
    """Schedule-free AdamW (Defazio et al. 2024; Keras 3's): no learning-rate schedule needed. The
    slot ``momentum`` is the base sequence z (initialised to the variable), the variable holds the
    interpolation y; x, the averaged iterate, is recovered from them each step::

        v += (g^2 - v)(1 - b2);   z -= lr g / (sqrt(v / (1 - b2^t)) + eps)
        x = (y - (1 - b1) z) / b1;   x = (1 - 1/t) x + z / t;   y = (1 - b1) z + b1 x

    Note x is recovered with the *updated* z: Keras 3.15 reads ``momentum.value`` before its
    ``assign_sub`` but the TF backend's value is the live variable, so its iterates use the new z
    (the paper's recovery uses the old one; with the old one the iterates differ from Keras' by
    ~5e-4 after 5 steps at lr 0.0025, measured). TF 2.21's Keras is the spec: so here. With
    ``warmup_steps``, ``lr *= min(t / warmup_steps, 1)``. Weight decay (optional) is the base
    class's decoupled ``w -= w * wd * lr`` before the step, as Keras."""

    def __init__(self, learning_rate=0.0025, beta_1=0.9, beta_2=0.999, epsilon=1e-8, warmup_steps=0,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None, name="schedule_free_adamw",
                 **kwargs):
        super().__init__(name, learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self.warmup_steps = int(warmup_steps)

    def _create_slots(self, var):
        # Keras: the momentum starts as a copy of the variable (the base sequence z_0 = x_0)
        self.add_slot(var, "momentum", initializer=np.array(var._v, copy=True))
        self.add_slot(var, "velocity")

    def _update_step(self, grad, var, lr):
        d = var.dtype
        g = M.cast(grad, d)
        t = M.cast(self.iterations + 1, d)
        b1, b2, eps = (M.cast(v, d) for v in (self.beta_1, self.beta_2, self.epsilon))
        if self.warmup_steps > 0:
            lr = lr * M.minimum(t / M.cast(self.warmup_steps, d), 1.0)
        z_slot, v_slot = self.get_slot(var, "momentum"), self.get_slot(var, "velocity")
        z_old = z_slot.read_value()
        v = v_slot.read_value()
        v = v + (M.square(g) - v) * (1 - b2)
        v_slot.assign(v)
        denom = M.sqrt(v / (1 - M.pow(b2, t))) + eps
        z = z_old - (lr * g) / denom   # (z_old only here: see the docstring)
        z_slot.assign(z)
        weight = 1.0 / t
        x_old = (var.read_value() - (1 - b1) * z) / b1
        x_new = (1 - weight) * x_old + weight * z
        var.assign((1 - b1) * z + b1 * x_new)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon, warmup_steps=self.warmup_steps)
        return cfg


class OptimizerMap:
    """Keras 3's OptimizerMap: variable paths (exact, else ``re.fullmatch`` patterns) -> optimizers,
    with a default for the rest; calling it on a variable gives that variable's optimizer."""

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError(f"default_optimizer must be a Keras Optimizer instance. Received: {default_optimizer}")
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"optimizer_map must be a dictionary. Received: {optimizer_map}")
        self._default_optimizer = default_optimizer
        self._optimizer_map = dict(optimizer_map or {})

    @property
    def default_optimizer(self):
        return self._default_optimizer

    def __getitem__(self, key):
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [p for p in self._optimizer_map if re.fullmatch(p, key)]
        if len(matching) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}.")
        return self._optimizer_map[matching[0]] if matching else self._default_optimizer

    def __setitem__(self, key, optimizer):
        from .loss_scale import LossScaleOptimizer
        if key in self._optimizer_map:
            raise ValueError(f"'{key}' already exists in the OptimizerMap with value {self._optimizer_map[key]}. "
                             "Please make sure to not use duplicated keys.")
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key}")
        if isinstance(optimizer, LossScaleOptimizer):
            raise ValueError("optimizer cannot be LossScaleOptimizer.")
        if isinstance(optimizer, MultiOptimizer):
            raise ValueError("optimizer cannot be MultiOptimizer.")
        if not isinstance(optimizer, Optimizer):
            raise ValueError(f"optimizer must be a Keras Optimizer instance. Received: {optimizer}")
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __contains__(self, key):
        return key in self._optimizer_map

    def __call__(self, variable):
        return self[_path(variable)]

    def get_config(self):
        from . import serialize
        return {"default_optimizer": serialize(self._default_optimizer),
                "optimizer_map": {k: serialize(v) for k, v in self._optimizer_map.items()}}

    @classmethod
    def from_config(cls, config):
        from . import deserialize
        return cls(deserialize(config["default_optimizer"]),
                   {k: deserialize(v) for k, v in config["optimizer_map"].items()})


class MultiOptimizer(Optimizer):
    """Keras 3's MultiOptimizer: each variable is updated by the optimizer ``optimizer_map`` (an
    OptimizerMap, or any callable ``variable -> Optimizer``) gives it, in one ``apply_gradients``;
    the sub-optimizers keep their own slots, learning rates and iterations (``optimizers``), and
    this one counts the combined steps. ``learning_rate`` is refused, as Keras does."""

    def __init__(self, optimizer_map, loss_scale_factor=None, name=None):
        if not callable(optimizer_map):
            raise TypeError(f"optimizer_map must be an OptimizerMap or a callable variable -> Optimizer. Received: "
                            f"{optimizer_map}")
        super().__init__(name or "multi_optimizer", learning_rate=0.0)
        self._optimizer_map = optimizer_map
        self.loss_scale_factor = loss_scale_factor
        self._inner_optimizers = []
        self._var_to_opt = {}

    @property
    def optimizers(self):
        return self._inner_optimizers

    @property
    def learning_rate(self):
        raise AttributeError("Learning rate cannot be accessed on a MultiOptimizer. Access the learning rate on the "
                             "individual sub-optimizers instead.")

    @learning_rate.setter
    def learning_rate(self, value):
        raise AttributeError("Learning rate cannot be set on a MultiOptimizer. Set the learning rate on the "
                             "individual sub-optimizers instead.")

    def _optimizer_for(self, var):
        from .loss_scale import LossScaleOptimizer
        opt = self._var_to_opt.get(id(var))
        if opt is not None:
            return opt
        opt = self._optimizer_map(var)
        if isinstance(opt, LossScaleOptimizer):
            raise ValueError("LossScaleOptimizer cannot be used inside an MultiOptimizer.")
        if isinstance(opt, MultiOptimizer):
            raise ValueError("MultiOptimizer cannot be used inside an MultiOptimizer.")
        if not isinstance(opt, Optimizer):
            raise ValueError(f"Optimizer for variable {var.name} is not an Optimizer instance.")
        if all(opt is not o for o in self._inner_optimizers):
            self._inner_optimizers.append(opt)
        self._var_to_opt[id(var)] = opt
        return opt

    def build(self, var_list):
        groups = {}
        for v in var_list:
            groups.setdefault(id(self._optimizer_for(v)), []).append(v)
        for opt in self._inner_optimizers:
            if id(opt) in groups:
                opt.build(groups[id(opt)])

    def apply_gradients(self, grads_and_vars, name=None, **kwargs):
        pairs = list(grads_and_vars)
        groups = {}
        for g, v in pairs:
            groups.setdefault(id(self._optimizer_for(v)), []).append((g, v))
        for opt in self._inner_optimizers:
            if id(opt) in groups:
                opt.apply_gradients(groups[id(opt)], **kwargs)
        self.iterations.assign_add(1, read_value=False)
        return self.iterations

    def finalize_variable_values(self, var_list):
        for v in var_list:
            opt = self._var_to_opt.get(id(v))
            if opt is not None:
                opt.finalize_variable_values([v])

    @property
    def use_ema(self):
        return any(getattr(o, "use_ema", False) for o in self._inner_optimizers)

    @use_ema.setter
    def use_ema(self, value):   # (the base class's __init__ sets it; the sub-optimizers decide)
        pass

    @property
    def variables(self):
        from .base import _VarList
        out = [self.iterations]
        for opt in self._inner_optimizers:
            out.extend(opt.variables)
        return _VarList(out)

    def _walk_children(self):
        return [("iterations", self.iterations),
                ("optimizers", {str(i): opt for i, opt in enumerate(self._inner_optimizers)})]

    def get_config(self):
        if not isinstance(self._optimizer_map, OptimizerMap):
            raise TypeError("MultiOptimizer.get_config: a callable optimizer_map cannot be serialized; use an "
                            "OptimizerMap")
        return {"optimizer_map": self._optimizer_map.get_config(), "loss_scale_factor": self.loss_scale_factor,
                "name": self.name}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["optimizer_map"] = OptimizerMap.from_config(config["optimizer_map"])
        return cls(**config)
