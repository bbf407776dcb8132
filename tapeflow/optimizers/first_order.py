"""SGD, Adam, AdamW, RMSprop, Adagrad with Keras' update rules (default).

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
"""
from __future__ import annotations

import numpy as np

from ..ops import math_ops as M
from .base import Optimizer, _put

__all__ = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]


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

    def _update_step(self, g, var, lr):
        step = M.multiply(g, lr)
        if self.momentum:
            m = self.get_slot(var, "momentum")
            new_m = M.subtract(M.multiply(m.read_value(), self.momentum), step)
            m.assign(new_m)
            if self.nesterov:
                var.assign_add(M.subtract(M.multiply(new_m, self.momentum), step))
            else:
                var.assign_add(new_m)
        else:
            var.assign_sub(step)

    def _fused_update(self, g, var, w, lr):
        # _update_step's arithmetic on arrays, in its order (same results, bit for bit)
        step = g * lr._v
        if self.momentum:
            m = self.get_slot(var, "momentum")
            new_m = m._v * self.momentum
            new_m -= step
            _put(m, new_m)
            if self.nesterov:
                d = new_m * self.momentum
                d -= step
                _put(var, np.add(w, d, out=d))
            else:
                _put(var, w + new_m)
        else:
            _put(var, np.subtract(w, step, out=step))

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
        self._step_cache["t"] = M.add(self.iterations.read_value(), 1)

    def _factors(self, var, lr):
        """(bias-corrected step size, sqrt(1 - b2^t)), computed once per step and
        dtype (in the variable's dtype, as Keras)."""
        c = self._step_cache
        key = ("f", var.dtype.name)
        f = c.get(key)
        if f is None:
            npd = np.dtype(var.dtype.as_numpy_dtype)
            t = M.cast(c["t"], npd)
            bc1 = M.subtract(1.0, M.pow(npd.type(self.beta_1), t))
            bc2 = M.subtract(1.0, M.pow(npd.type(self.beta_2), t))
            s2 = M.sqrt(bc2)
            if self.epsilon_mode == "keras":
                f = (M.divide(M.multiply(lr, s2), bc1), s2)
            else:
                f = (M.divide(lr, bc1), s2)
            c[key] = f
        return f

    def _update_step(self, g, var, lr):
        m = self.get_slot(var, "m")
        v = self.get_slot(var, "v")
        mv, vv = m.read_value(), v.read_value()
        if self.epsilon_mode == "keras":
            new_m = M.add(mv, M.multiply(M.subtract(g, mv), 1.0 - self.beta_1))
            new_v = M.add(vv, M.multiply(M.subtract(M.square(g), vv), 1.0 - self.beta_2))
        else:
            new_m = M.add(mv, M.multiply(M.subtract(g, mv), 1.0 - self.beta_1))
            new_v = M.add(M.multiply(vv, self.beta_2), M.multiply(M.square(g), 1.0 - self.beta_2))
        m.assign(new_m)
        v.assign(new_v)
        if self.amsgrad:
            vh = self.get_slot(var, "vhat")
            new_v = M.maximum(vh.read_value(), new_v)
            vh.assign(new_v)
        alpha, s2 = self._factors(var, lr)
        if self.epsilon_mode == "keras":
            var.assign_sub(M.divide(M.multiply(new_m, alpha), M.add(M.sqrt(new_v), self.epsilon)))
        else:
            denom = M.add(M.divide(M.sqrt(new_v), s2), self.epsilon)
            var.assign_sub(M.multiply(M.divide(new_m, denom), alpha))

    def _fused_update(self, g, var, w, lr):
        # _update_step's arithmetic on arrays, in its order (same results, bit for bit);
        # each temporary is fresh, so the in-place ufuncs touch no one else's buffer
        m = self.get_slot(var, "m")
        v = self.get_slot(var, "v")
        mv, vv = m._v, v._v
        new_m = np.subtract(g, mv)
        new_m *= 1.0 - self.beta_1
        new_m += mv
        if self.epsilon_mode == "keras":
            new_v = np.square(g)
            new_v -= vv
            new_v *= 1.0 - self.beta_2
            new_v += vv
        else:
            new_v = vv * self.beta_2
            new_v += np.square(g) * (1.0 - self.beta_2)
        _put(m, new_m)
        _put(v, new_v)
        if self.amsgrad:
            vh = self.get_slot(var, "vhat")
            new_v = np.maximum(vh._v, new_v)
            _put(vh, new_v)
        alpha, s2 = self._factors(var, lr)
        d = np.sqrt(new_v)
        if self.epsilon_mode == "keras":
            d += self.epsilon
            u = new_m * alpha._v
            u /= d
        else:
            d /= s2._v
            d += self.epsilon
            u = new_m / d
            u *= alpha._v
        _put(var, np.subtract(w, u, out=u))

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

    def _update_step(self, g, var, lr):
        rho = self.rho
        vel = self.get_slot(var, "velocity")
        new_v = M.add(M.multiply(vel.read_value(), rho), M.multiply(M.square(g), 1.0 - rho))
        vel.assign(new_v)
        if self.centered:
            ag = self.get_slot(var, "average_gradient")
            new_ag = M.add(M.multiply(ag.read_value(), rho), M.multiply(g, 1.0 - rho))
            ag.assign(new_ag)
            denom = M.subtract(new_v, M.square(new_ag))
        else:
            denom = new_v
        if self.epsilon_mode == "keras":
            inc = M.multiply(M.multiply(g, lr), M.rsqrt(M.add(denom, self.epsilon)))
            if self.momentum:
                mom = self.get_slot(var, "momentum")
                new_mom = M.add(M.multiply(mom.read_value(), self.momentum), inc)
                mom.assign(new_mom)
                var.assign_sub(new_mom)
            else:
                var.assign_sub(inc)
        else:
            q = M.divide(g, M.add(M.sqrt(denom), self.epsilon))
            if self.momentum:
                mom = self.get_slot(var, "momentum")
                new_mom = M.add(M.multiply(mom.read_value(), self.momentum), q)
                mom.assign(new_mom)
                var.assign_sub(M.multiply(new_mom, lr))
            else:
                var.assign_sub(M.multiply(q, lr))

    def _fused_update(self, g, var, w, lr):
        # _update_step's arithmetic on arrays, in its order (same results, bit for bit)
        rho = self.rho
        vel = self.get_slot(var, "velocity")
        new_v = vel._v * rho
        new_v += np.square(g) * (1.0 - rho)
        _put(vel, new_v)
        if self.centered:
            ag = self.get_slot(var, "average_gradient")
            new_ag = ag._v * rho
            new_ag += g * (1.0 - rho)
            _put(ag, new_ag)
            denom = new_v - np.square(new_ag)
        else:
            denom = new_v
        if self.epsilon_mode == "keras":
            r = denom + self.epsilon
            np.sqrt(r, out=r)
            np.divide(1.0, r, out=r)  # rsqrt is 1 / sqrt (math_ops.rsqrt)
            step = g * lr._v
            step *= r
        else:
            step = np.sqrt(denom)
            step += self.epsilon
            np.divide(g, step, out=step)
        if self.momentum:
            mom = self.get_slot(var, "momentum")
            new_mom = mom._v * self.momentum
            new_mom += step
            _put(mom, new_mom)
            step = new_mom
        if self.epsilon_mode != "keras":
            step = step * lr._v
        _put(var, w - step)

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

    def _update_step(self, g, var, lr):
        acc = self.get_slot(var, "accumulator")
        new_acc = M.add(acc.read_value(), M.square(g))
        acc.assign(new_acc)
        if self.epsilon_mode == "keras":
            var.assign_sub(M.divide(M.multiply(g, lr), M.sqrt(M.add(new_acc, self.epsilon))))
        else:
            var.assign_sub(M.multiply(M.divide(g, M.add(M.sqrt(new_acc), self.epsilon)), lr))

    def get_config(self):
        cfg = super().get_config()
        cfg.update(initial_accumulator_value=self.initial_accumulator_value, epsilon=self.epsilon,
                   epsilon_mode=self.epsilon_mode)
        return cfg
