"""SGD, Adam, AdamW, RMSprop, Adagrad, Nadam, Adamax, Adadelta with Keras' update rules
(default; Nadam, Adamax and Adadelta have Keras 3's rules only).

Keras and PyTorch differ in where epsilon goes (and in their defaults).
``epsilon_mode="keras"`` (default) follows Keras exactly:

* Adam:    ``var -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)``
  (epsilon added to the *uncorrected* sqrt(v): Keras' "epsilon hat"),
* RMSprop: ``var -= lr * g / sqrt(v + eps)``,
* Adagrad: ``var -= lr * g / sqrt(acc + eps)``;

``epsilon_mode="torch"`` follows torch.optim:

* Adam:    ``var -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)``,
* RMSprop: ``var -= lr * g / (sqrt(v) + eps)`` (momentum buffer without lr),
* Adagrad: ``var -= lr * g / (sqrt(acc) + eps)``.

Pass PyTorch's hyperparameters too when porting (e.g. ``epsilon=1e-8``,
RMSprop ``rho=0.99``, Adagrad ``initial_accumulator_value=0``). SGD with
momentum: Keras keeps ``m = momentum*m - lr*g`` and PyTorch
``b = momentum*b + g``; with a constant learning rate both give the same
iterates (m = -lr*b), so there is no mode.

The rules themselves are in ``rules.py`` (one text for the op path and the
fused eager loops); the classes here say which slots and constants they take.
"""
from __future__ import annotations

import numpy as np

from ..core.state import STATE
from ..core.tensor import Tensor, Variable
from ..ops import array_ops as A
from ..ops import math_ops as M
from . import rules as _rules
from .base import Optimizer

__all__ = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Nadam", "Adamax", "Adadelta"]


def _check_mode(mode):
    if mode not in ("keras", "torch"):
        raise ValueError(f"epsilon_mode must be 'keras' or 'torch', got {mode!r}")
    return mode


class SGD(Optimizer):
    """Gradient descent with optional (Nesterov) momentum (Keras' rule):
    ``m = momentum*m - lr*g; var += m`` (Nesterov: ``var += momentum*m - lr*g``)."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name="SGD", **kwargs):
        super().__init__(name, learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        if not 0 <= momentum <= 1:
            raise ValueError(f"SGD: momentum must be in [0, 1], got {momentum}")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)

    def _create_slots(self, var):
        if self.momentum:
            self.add_slot(var, "momentum")

    _rule = staticmethod(_rules.sgd)

    def _rule_slots(self):
        return ("momentum" if self.momentum else None,)

    def _rule_args(self, var, lr):
        return lr, self.momentum, bool(self.momentum), self.nesterov

    def get_config(self):
        cfg = super().get_config()
        cfg.update(momentum=self.momentum, nesterov=self.nesterov)
        return cfg


class Adam(Optimizer):
    """Adam (Kingma & Ba) with Keras' epsilon placement by default (see the
    module docstring); ``amsgrad`` keeps the running max of v (slot ``vhat``)."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None, name="Adam",
                 epsilon_mode="keras", **kwargs):
        super().__init__(name, learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)
        self.amsgrad = bool(amsgrad)
        self.epsilon_mode = _check_mode(epsilon_mode)

    def _create_slots(self, var):
        self.add_slot(var, "m")
        self.add_slot(var, "v")
        if self.amsgrad:
            self.add_slot(var, "vhat")

    def _prepare_step(self):
        super()._prepare_step()
        if STATE.unrecorded():
            # eager with nothing recording (the fused update): the step number comes from
            # the variable's value in _factors, not from an op here (~2 us alone, ~5 in a
            # DQN step's update); a traced, taped or profiled step records the add here,
            # in the order it always had
            return
        self._step_cache["t"] = self.iterations + 1   # (the variable is read by the add)

    def _factors(self, var, lr):
        """(bias-corrected step size, sqrt(1 - b2^t)), computed once per step and
        dtype (in the variable's dtype, as Keras) by ``rules.adam_factors``: on Tensors
        for the op path, on NumPy values when ``lr`` is one (the fused update's plan;
        the same kernels, so the same bits, without a dispatch per scalar op)."""
        c = self._step_cache
        npd = var._v.dtype
        key = ("f", npd, isinstance(lr, Tensor))
        f = c.get(key)
        if f is None:
            t = c.get("t")
            if isinstance(lr, Tensor):
                if t is None:  # (eager, nothing recording: _prepare_step left it to here)
                    t = c["t"] = self.iterations + 1
                t = M.cast(t, npd)
            else:
                # iterations + 1 as the add op computes it (int64), then the dtype's value
                t = np.asarray(t._v if t is not None else self.iterations._v + 1).astype(npd)
            f = c[key] = _rules.adam_factors(t, lr, self.beta_1, self.beta_2, self.epsilon_mode == "keras")
        return f

    _rule = staticmethod(_rules.adam)

    def _rule_slots(self):
        return "m", "v", "vhat" if self.amsgrad else None

    def _rule_args(self, var, lr):
        alpha, s2 = self._factors(var, lr)
        return (alpha, s2, 1.0 - self.beta_1, self.beta_2, 1.0 - self.beta_2, self.epsilon,
                self.epsilon_mode == "keras", self.amsgrad)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon, amsgrad=self.amsgrad,
                   epsilon_mode=self.epsilon_mode)
        return cfg


class AdamW(Adam):
    """Adam with decoupled weight decay: ``var -= var * weight_decay * lr``
    before each Adam step (Keras' AdamW; torch.optim.AdamW's rule too)."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, clipnorm=None, clipvalue=None, global_clipnorm=None, name="AdamW",
                 epsilon_mode="keras", **kwargs):
        if weight_decay is None:
            raise ValueError("AdamW: weight_decay must be a number")
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                         amsgrad=amsgrad, weight_decay=weight_decay, clipnorm=clipnorm, clipvalue=clipvalue,
                         global_clipnorm=global_clipnorm, name=name, epsilon_mode=epsilon_mode, **kwargs)


class RMSprop(Optimizer):
    """RMSprop (Keras' rule by default): ``v = rho*v + (1-rho)*g^2``;
    ``centered`` subtracts the square of the mean gradient; with ``momentum``
    the step goes through a momentum buffer."""

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None, name="RMSprop",
                 epsilon_mode="keras", **kwargs):
        super().__init__(name, learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        self.rho = float(rho)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.centered = bool(centered)
        self.epsilon_mode = _check_mode(epsilon_mode)

    def _create_slots(self, var):
        self.add_slot(var, "velocity")
        if self.momentum:
            self.add_slot(var, "momentum")
        if self.centered:
            self.add_slot(var, "average_gradient")

    _rule = staticmethod(_rules.rmsprop)

    def _rule_slots(self):
        return "velocity", "average_gradient" if self.centered else None, "momentum" if self.momentum else None

    def _rule_args(self, var, lr):
        return (lr, self.rho, 1.0 - self.rho, self.momentum, self.epsilon, self.epsilon_mode == "keras",
                self.centered, bool(self.momentum))

    def get_config(self):
        cfg = super().get_config()
        cfg.update(rho=self.rho, momentum=self.momentum, epsilon=self.epsilon, centered=self.centered,
                   epsilon_mode=self.epsilon_mode)
        return cfg


class Adagrad(Optimizer):
    """Adagrad (Keras' rule by default): ``acc += g^2; var -= lr*g/sqrt(acc + eps)``."""

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name="Adagrad", epsilon_mode="keras",
                 **kwargs):
        super().__init__(name, learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.epsilon = float(epsilon)
        self.epsilon_mode = _check_mode(epsilon_mode)

    def _create_slots(self, var):
        self.add_slot(var, "accumulator", self.initial_accumulator_value)

    _rule = staticmethod(_rules.adagrad)

    def _rule_slots(self):
        return ("accumulator",)

    def _rule_args(self, var, lr):
        return lr, self.epsilon, self.epsilon_mode == "keras"

    def get_config(self):
        cfg = super().get_config()
        cfg.update(initial_accumulator_value=self.initial_accumulator_value, epsilon=self.epsilon,
                   epsilon_mode=self.epsilon_mode)
        return cfg


class _StepFactors(Optimizer):
    """What Nadam and Adamax share with Adam: per-step scalars from the step number
    t = iterations + 1, computed once per step and dtype, on Tensors (the op path) or on
    NumPy scalars (the fused update's plan)."""

    def _prepare_step(self):
        super()._prepare_step()
        if STATE.unrecorded():
            return      # (as Adam: the fused update reads the step from the variable's value)
        self._step_cache["t"] = self.iterations + 1

    def _step(self, npd, tensor):
        c = self._step_cache
        t = c.get("t")
        if tensor:
            if t is None:
                t = c["t"] = self.iterations + 1
            return M.cast(t, npd)
        return np.asarray(t._v if t is not None else self.iterations._v + 1).astype(npd)[()]

    def _factors(self, var, lr):
        c = self._step_cache
        npd = var._v.dtype
        key = ("f", npd, isinstance(lr, Tensor))
        f = c.get(key)
        if f is None:
            f = c[key] = self._compute_factors(self._step(npd, isinstance(lr, Tensor)), npd, isinstance(lr, Tensor))
        return f


class Nadam(_StepFactors):
    """Nadam (Dozat; Keras 3's rule, ``rules.nadam``): Adam with Nesterov momentum and the
    momentum schedule u_t = beta_1 (1 - 0.5 * 0.96^t), whose running product is the
    optimizer variable ``u_product`` (checkpointed with the slots ``momentum`` and
    ``velocity``)."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name="Nadam", **kwargs):
        super().__init__(name, learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)
        # made here, not in build: a first step inside tapeflow.function must not create it
        self._u_product = Variable(np.float32(1.0), trainable=False, name=f"{name}/u_product")
        self.__dict__["_u_new"] = None

    def _create_slots(self, var):
        self.add_slot(var, "momentum")
        self.add_slot(var, "velocity")

    def _compute_factors(self, t, npd, tensor):
        u = self._u_product.read_value() if tensor else self._u_product._v
        u = M.cast(u, npd) if tensor else np.asarray(u).astype(npd)[()]
        prod, f = _rules.nadam_factors(t, u, self.beta_1, self.beta_2)
        self.__dict__["_u_new"] = prod
        return f

    _rule = staticmethod(_rules.nadam)

    def _rule_slots(self):
        return "momentum", "velocity"

    def _rule_args(self, var, lr):
        return (*self._factors(var, lr), lr, self.epsilon)

    def apply_gradients(self, grads_and_vars, name=None, **kwargs):
        # the step's u_product (computed with the other factors) is written once, after the
        # variables: every variable's update reads the new product, as in Keras, where
        # _backend_update_step assigns it before the per-variable updates
        self.__dict__["_u_new"] = None
        out = super().apply_gradients(grads_and_vars, name=name, **kwargs)
        u = self.__dict__["_u_new"]
        if u is not None:
            self._u_product.assign(M.cast(u, np.float32) if isinstance(u, Tensor) else np.float32(u))
            self.__dict__["_u_new"] = None
        return out

    @property
    def variables(self):
        out = super().variables
        out.insert(1, self._u_product)
        return out

    def _walk_children(self):
        out = super()._walk_children()
        return out[:1] + [("u_product", self._u_product)] + out[1:]

    def get_config(self):
        cfg = super().get_config()
        cfg.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)
        return cfg


class Adamax(_StepFactors):
    """Adamax (Kingma & Ba's infinity-norm Adam; Keras 3's rule, ``rules.adamax``): slots
    ``momentum`` and ``norm`` (the decayed max of |g|)."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name="Adamax", **kwargs):
        super().__init__(name, learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)

    def _create_slots(self, var):
        self.add_slot(var, "momentum")
        self.add_slot(var, "norm")

    def _compute_factors(self, t, npd, tensor):
        # Keras: 1 - cast(beta_1)^t, in the variable's dtype
        b1 = M.cast(np.asarray(self.beta_1, npd), npd) if tensor else npd.type(self.beta_1)
        return 1.0 - _rules.power(b1, t)

    _rule = staticmethod(_rules.adamax)

    def _rule_slots(self):
        return "momentum", "norm"

    def _rule_args(self, var, lr):
        # (1 - beta_1 here is Python's, as in Keras' Adamax, unlike its Nadam)
        return lr, self._factors(var, lr), 1.0 - self.beta_1, self.beta_2, self.epsilon

    def get_config(self):
        cfg = super().get_config()
        cfg.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)
        return cfg


class Adadelta(Optimizer):
    """Adadelta (Zeiler; Keras 3's rule, ``rules.adadelta``): slots ``accumulated_grad`` and
    ``accumulated_delta_var``. Keras' default learning rate is 0.001 (the paper's rule is
    learning_rate=1.0)."""

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name="Adadelta", **kwargs):
        super().__init__(name, learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        self.rho = float(rho)
        self.epsilon = float(epsilon)

    def _create_slots(self, var):
        self.add_slot(var, "accumulated_grad")
        self.add_slot(var, "accumulated_delta_var")

    _rule = staticmethod(_rules.adadelta)

    def _rule_slots(self):
        return "accumulated_grad", "accumulated_delta_var"

    def _rule_args(self, var, lr):
        return lr, self.rho, 1.0 - self.rho, self.epsilon

    def get_config(self):
        cfg = super().get_config()
        cfg.update(rho=self.rho, epsilon=self.epsilon)
        return cfg


class Lion(Optimizer):
    """Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms"; Keras 3's rule,
    ``rules.lion``): the sign of an interpolated momentum, so every weight moves by exactly
    ``learning_rate`` a step; slot ``momentum``. Keras casts the betas to the variable's dtype
    before taking 1 - beta (1 - float32(0.9) = 0.100000024): so here."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name="Lion", **kwargs):
        if not 0.0 < float(beta_1) <= 1.0:
            raise ValueError(f"Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer degenerates "
                             f"to SignSGD. Received: beta_1={beta_1}.")
        super().__init__(name, learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)

    def _create_slots(self, var):
        self.add_slot(var, "momentum")

    _rule = staticmethod(_rules.lion)

    def _rule_slots(self):
        return ("momentum",)

    def _rule_args(self, var, lr):
        npd = np.dtype(var.dtype.as_numpy_dtype)
        b1, b2 = npd.type(self.beta_1), npd.type(self.beta_2)
        return lr, b1, npd.type(1) - b1, b2, npd.type(1) - b2

    def get_config(self):
        cfg = super().get_config()
        cfg.update(beta_1=self.beta_1, beta_2=self.beta_2)
        return cfg


class Ftrl(Optimizer):
    """Keras 3's FTRL-Proximal (TF 2.21): per coordinate, with ``n`` the accumulator and ``z`` the
    linear slot, ``p = -learning_rate_power``::

        n' = n + g^2;   z += (g + 2 l2_shrinkage w) - (n'^p - n^p) / lr * w
        w = (clip(z, -l1, l1) - z) / (n'^p / lr + 2 (l2 + beta / (2 lr)));   n = n'

    Written on the op path only (``_update_step``): ``n^p`` for any power is outside the rules'
    elementwise vocabulary, and FTRL is a sparse-features optimizer, not a hot one here."""

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name="ftrl", **kwargs):
        super().__init__(name, learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        # Keras 3's checks and texts (ValueError)
        for arg, value, sign in (("initial_accumulator_value", initial_accumulator_value, "positive"),
                                 ("learning_rate_power", learning_rate_power, "negative"),
                                 ("l1_regularization_strength", l1_regularization_strength, "positive"),
                                 ("l2_regularization_strength", l2_regularization_strength, "positive"),
                                 ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength,
                                  "positive")):
            if (value < 0.0) if sign == "positive" else (value > 0.0):
                raise ValueError(f"`{arg}` needs to be {sign} or zero. Received: {arg}={value}.")
        self.learning_rate_power = float(learning_rate_power)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.l1_regularization_strength = float(l1_regularization_strength)
        self.l2_regularization_strength = float(l2_regularization_strength)
        self.l2_shrinkage_regularization_strength = float(l2_shrinkage_regularization_strength)
        self.beta = float(beta)

    def _create_slots(self, var):
        self.add_slot(var, "accumulator", self.initial_accumulator_value)
        self.add_slot(var, "linear")

    def _update_step(self, grad, var, lr):
        # Keras 3's update_step, operation for operation (its rounding in the variable's dtype)
        accum, linear = self.get_slot(var, "accumulator"), self.get_slot(var, "linear")
        w, n = var.read_value(), accum.read_value()
        g = M.cast(grad, var.dtype)
        p = -self.learning_rate_power
        l2 = self.l2_regularization_strength + self.beta / (2.0 * lr)
        g_use = g + (2 * self.l2_shrinkage_regularization_strength) * w
        new_n = n + M.square(g)
        new_z = linear.read_value() + (g_use - (M.pow(new_n, p) - M.pow(n, p)) / lr * w)
        linear.assign(new_z)
        quadratic = M.pow(new_n, p) / lr + 2 * l2
        l1 = self.l1_regularization_strength
        var.assign((M.clip_by_value(new_z, -l1, l1) - new_z) / quadratic)
        accum.assign(new_n)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(learning_rate_power=self.learning_rate_power,
                   initial_accumulator_value=self.initial_accumulator_value,
                   l1_regularization_strength=self.l1_regularization_strength,
                   l2_regularization_strength=self.l2_regularization_strength,
                   l2_shrinkage_regularization_strength=self.l2_shrinkage_regularization_strength, beta=self.beta)
        return cfg


__all__.append("Ftrl")


class Lamb(Optimizer):
    """Keras 3's LAMB (TF 2.21): Adam's moments, then the update scaled per variable by the trust
    ratio ``||w|| / ||update||`` (1 when either norm is 0)::

        m += (g - m)(1 - b1);  v += (g^2 - v)(1 - b2)
        u = (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps);  w -= ratio * lr * u

    On the op path (``_update_step``): the norms are reductions over the whole variable, outside the
    rules' elementwise vocabulary."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name="lamb", **kwargs):
        super().__init__(name, learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)

    def _create_slots(self, var):
        self.add_slot(var, "momentum")
        self.add_slot(var, "velocity")

    def _update_step(self, grad, var, lr):
        # Keras 3's update_step, operation for operation (its rounding in the variable's dtype)
        m_slot, v_slot = self.get_slot(var, "momentum"), self.get_slot(var, "velocity")
        g = M.cast(grad, var.dtype)
        t = M.cast(self.iterations + 1, var.dtype)
        b1_power = M.pow(M.cast(self.beta_1, var.dtype), t)
        b2_power = M.pow(M.cast(self.beta_2, var.dtype), t)
        m = m_slot.read_value()
        v = v_slot.read_value()
        m = m + (g - m) * (1 - self.beta_1)
        v = v + (M.square(g) - v) * (1 - self.beta_2)
        m_slot.assign(m)
        v_slot.assign(v)
        update = (m / (1.0 - b1_power)) / (M.sqrt(v / (1.0 - b2_power)) + self.epsilon)
        w = var.read_value()
        w_norm = M.sqrt(M.reduce_sum(M.pow(w, 2)))
        g_norm = M.sqrt(M.reduce_sum(M.pow(update, 2)))
        one = M.cast(1.0, var.dtype)
        ratio = M.where(M.greater(w_norm, 0), M.where(M.greater(g_norm, 0), w_norm / g_norm, one), one)
        var.assign(w - ratio * lr * update)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)
        return cfg


__all__.append("Lamb")


class Adafactor(Optimizer):
    """Keras 3's Adafactor (TF 2.21): second moments factored over a variable's last two axes (a row
    and a column mean, their outer product normalised by the rows' mean), unfactored below rank 2;
    the step relative to the variable's RMS and clipped by the update's own RMS::

        rho = min(lr, 1/sqrt(t));  alpha = max(eps_2, rms(w)) * rho;  b2 = 1 - t^decay
        g2 = g^2 + eps_1;  r = b2 r + (1-b2) mean(g2, -1);  c = b2 c + (1-b2) mean(g2, -2)
        v = (r / mean(r, -1))[..., None] * c[..., None, :]     (rank < 2: v = b2 v + (1-b2) g2)
        u = g / sqrt(v);  w -= alpha * u / max(1, rms(u) / clip_threshold)

    With ``relative_step`` and a constant learning rate Keras 3 first caps lr at 1/sqrt(t) as well,
    which rho's own min makes a no-op (kept: the same operations). On the op path
    (``_update_step``): the means and RMS are reductions, outside the fused rules."""

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3, clip_threshold=1.0,
                 relative_step=True, weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 name="adafactor", **kwargs):
        super().__init__(name, learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, **kwargs)
        self.beta_2_decay, self.epsilon_1, self.epsilon_2 = float(beta_2_decay), float(epsilon_1), float(epsilon_2)
        self.clip_threshold, self.relative_step = float(clip_threshold), bool(relative_step)

    def _create_slots(self, var):
        shape = tuple(var.shape)
        if len(shape) >= 2:   # (Keras 3 makes scalar placeholders below rank 2; nothing reads them)
            self.add_slot(var, "r", shape=shape[:-1])
            self.add_slot(var, "c", shape=shape[:-2] + shape[-1:])
        self.add_slot(var, "velocity")

    @staticmethod
    def _rms(x):
        return M.sqrt(M.reduce_mean(M.square(x)))

    def _update_step(self, grad, var, lr):
        # Keras 3's update_step, operation for operation (its rounding in the variable's dtype)
        dt = var.dtype
        lr = M.cast(lr, dt)
        g = M.cast(grad, dt)
        one = M.cast(1.0, dt)
        t = M.cast(self.iterations + 1, dt)
        if self._schedule is None and self.relative_step:
            lr = M.minimum(lr, 1 / M.sqrt(t))
        rho = M.minimum(lr, 1 / M.sqrt(t))
        w = var.read_value()
        alpha = M.maximum(M.cast(self.epsilon_2, dt), self._rms(w)) * rho
        g2 = M.square(g) + self.epsilon_1
        b2 = 1 - M.pow(t, M.cast(self.beta_2_decay, dt))
        v_slot = self.get_slot(var, "velocity")
        if len(tuple(var.shape)) >= 2:
            r_slot, c_slot = self.get_slot(var, "r"), self.get_slot(var, "c")
            r = b2 * r_slot.read_value() + (1 - b2) * M.reduce_mean(g2, axis=-1)
            c = b2 * c_slot.read_value() + (1 - b2) * M.reduce_mean(g2, axis=-2)
            r_slot.assign(r)
            c_slot.assign(c)
            v = A.expand_dims(r / M.reduce_mean(r, axis=-1, keepdims=True), -1) * A.expand_dims(c, -2)
        else:
            v = b2 * v_slot.read_value() + (1 - b2) * g2
        v_slot.assign(v)
        u = g / M.sqrt(v)
        u_hat = u / M.maximum(one, self._rms(u) / self.clip_threshold)
        var.assign(w - alpha * u_hat)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(beta_2_decay=self.beta_2_decay, epsilon_1=self.epsilon_1, epsilon_2=self.epsilon_2,
                   clip_threshold=self.clip_threshold, relative_step=self.relative_step)
        return cfg


__all__.append("Adafactor")
