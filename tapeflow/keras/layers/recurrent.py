"""Recurrent layers with Keras 3's API and weights (as in TF 2.21's bundled Keras 3):
``SimpleRNN``, ``LSTM``, ``GRU``, the cells ``SimpleRNNCell``/``LSTMCell``/``GRUCell``,
the generic ``RNN(cell)`` (a list of cells is a ``StackedRNNCells``) and ``Masking``.

Weights have Keras 3's names, shapes and order (``kernel``, ``recurrent_kernel``, ``bias``;
gates i, f, c, o for the LSTM, z, r, h for the GRU; the GRU's ``reset_after=True`` bias is
(2, 3 * units): input bias then recurrent bias), so ``set_weights(tf_model.get_weights())``
gives TF's outputs (tests/test_keras_recurrent.py, against tests/data/rnn_tf_reference.npz).

The time loop. A step is Keras' (implementation 2): ``x_t @ kernel + bias``, the recurrent
product ``h @ recurrent_kernel`` and the gates' elementwise math. Projecting the whole sequence
before the loop (one GEMM over batch * time rows) did not pay: measured with 40-300 interleaved
pairs (LSTM fwd+bwd, T=50, load average ~7), eagerly +0.6 ms of 16.5 ms (B=16, 32 units) and
+290 ms of 600 ms (B=256, 128 units: the (time, batch, 4 * units) projection's transposes,
slices and their gradients' stacking), compiled within noise (+0.5 ms of 8.9; -7 ms of 190).

* eagerly the steps are a Python loop of tapeflow ops (one GradientTape node per op, as any
  eager code);
* inside ``tapeflow.function`` (and so ``model.fit``'s compiled step) the steps are one
  ``scan`` equation (``ir/control_flow.py``): the body is traced once, whatever the sequence
  length, and the gradient is scan's (a forward scan restacking the carries, a reverse scan of
  the body's vjp). ``unroll=True`` (Keras' flag) traces the Python loop instead: one copy of the
  body per step. Measured on this 2-core host (LSTM(32), batch 16, 8 features; trace + compile
  of a training step, first call): T=50 scan 0.5 s vs unrolled 1.9 s, T=200 scan 0.5 s vs
  unrolled 8.6 s; see the commit message for the steady-state numbers.

Masking (Keras 3's ``backend.rnn``): at a masked step the states keep their previous values
and the output repeats the previous step's output (zeros before the first unmasked step), or
zeros with ``zero_output_for_mask=True``. Dropout masks (``dropout``, ``recurrent_dropout``,
training only) are drawn once per call and reused at every step, as Keras does; with a
``recurrent_dropout`` the LSTM and GRU draw one mask per gate (Keras' implementation 1).
``stateful=True`` is refused with a clear error (tapeflow keeps no state across calls).
"""
from __future__ import annotations

import numpy as np

from ...core.aval import fmt_shape
from ...core.primitive import aval_of
from ...core.state import STATE
from ...core.tensor import Tensor, convert_to_tensor
from ...ir import control_flow as CF
from ...ops import array_ops as A
from ...ops import math_ops as M
from ...ops import nn_ops as N
from ...util import nest
from .. import activations as _acts
from .. import initializers as _inits
from .. import regularizers as _regs
from ..engine import Layer, InputSpec
from .core import SeedStream

__all__ = ["SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells", "RNN", "SimpleRNN", "LSTM", "GRU", "Masking",
           "Wrapper", "Bidirectional", "TimeDistributed"]


def _rate(where, name, value):
    # Keras 3 clips the rates into [0, 1] (LSTM(3, dropout=1.5) builds); so does tapeflow
    return min(1.0, max(0.0, float(value)))


class _Cell(SeedStream, Layer):
    """What the three cells share: weights, dropout masks, the per-step math.

    A step is ``step(project(x_t, input masks), states, recurrent masks)``: ``project`` maps a
    step's input (batch, in) to the gates' input part (batch, n_gates * units), so the RNN layer
    draws the dropout masks once per call and hands them to every step."""

    n_gates = 1

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 **kwargs):
        kwargs.pop("implementation", None)
        super().__init__(**kwargs)
        cls = type(self).__name__
        if isinstance(units, (bool, np.bool_)) or not isinstance(units, (int, np.integer)) or units <= 0:
            # TF 2.21's message (ValueError)
            raise ValueError(f"{cls}: Received an invalid value for argument `units`, expected a positive "
                             f"integer, got {units!r}.")
        self.units = int(units)
        self.activation = _acts.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _inits.get(kernel_initializer)
        self.recurrent_initializer = _inits.get(recurrent_initializer)
        self.bias_initializer = _inits.get(bias_initializer)
        self.kernel_regularizer = _regs.get(kernel_regularizer)
        self.recurrent_regularizer = _regs.get(recurrent_regularizer)
        self.bias_regularizer = _regs.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.recurrent_constraint = recurrent_constraint
        self.bias_constraint = bias_constraint
        self.dropout = _rate(cls, "dropout", dropout)
        self.recurrent_dropout = _rate(cls, "recurrent_dropout", recurrent_dropout)
        self._set_seed(seed)

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def _bias_shape(self):
        return (self.n_gates * self.units,)

    def _bias_init(self):
        return self.bias_initializer

    def build(self, input_shape):
        last = input_shape[-1]
        if last is None:
            raise ValueError(f"{type(self).__name__}: the last dimension of the inputs must be known, got "
                             f"shape {fmt_shape(input_shape)}")
        n = self.n_gates * self.units
        self.kernel = self.add_weight("kernel", shape=(int(last), n), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", shape=(self.units, n),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=self._bias_shape(), initializer=self._bias_init(),
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        else:
            self.bias = None
        self.built = True

    # -- dropout -------------------------------------------------------------------------
    def _n_masks(self):
        # Keras 3: a recurrent_dropout switches the LSTM/GRU to implementation 1, one mask per gate
        return self.n_gates if self.recurrent_dropout > 0 and self.n_gates > 1 else 1

    def _draw(self, like, rate):
        gen = self._generator()
        ones = A.ones_like(like)
        if rate >= 1:
            return [A.zeros_like(like) for _ in range(self._n_masks())]
        return [N.dropout(ones, rate, rng=gen) for _ in range(self._n_masks())]

    def dropout_masks(self, x0, h0, training):
        """(input masks or None, recurrent masks or None) for one call: each a list of
        ``_n_masks()`` tensors shaped like one step's input / state."""
        if not training:
            return None, None
        dp = self._draw(x0, self.dropout) if self.dropout > 0 else None
        rdp = self._draw(h0, self.recurrent_dropout) if self.recurrent_dropout > 0 else None
        return dp, rdp

    # -- the input projection --------------------------------------------------------------
    def _input_bias(self):
        return self.bias

    def project(self, x, dp):
        """One step's input (batch, in) -> (batch, n_gates * units): the input kernel's product
        (with the step's input dropout masks) plus the input bias."""
        if dp is None:
            out = x @ self.kernel
        elif len(dp) == 1:
            out = (x * dp[0]) @ self.kernel
        else:
            ks = A.split(self.kernel, len(dp), axis=1)
            out = A.concat([(x * m) @ k for m, k in zip(dp, ks)], -1)
        b = self._input_bias()
        return out if b is None else out + b

    # -- Keras 3's cell API ----------------------------------------------------------------
    def get_initial_state(self, batch_size=None):
        sizes = self.state_size if isinstance(self.state_size, (list, tuple)) else [self.state_size]
        return [A.zeros((batch_size, s), self.dtype) for s in sizes]

    def call(self, inputs, states, training=None):
        single = not isinstance(states, (list, tuple))
        states = [states] if single else list(states)
        dp, rdp = self.dropout_masks(inputs, states[0], training)
        out, new = self.step(self.project(inputs, dp), states, rdp)
        return out, (new[0] if single else new)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(units=self.units, activation=_acts.serialize(self.activation), use_bias=self.use_bias,
                   kernel_initializer=_inits.serialize(self.kernel_initializer),
                   recurrent_initializer=_inits.serialize(self.recurrent_initializer),
                   bias_initializer=_inits.serialize(self.bias_initializer),
                   kernel_regularizer=_regs.serialize(self.kernel_regularizer),
                   recurrent_regularizer=_regs.serialize(self.recurrent_regularizer),
                   bias_regularizer=_regs.serialize(self.bias_regularizer),
                   kernel_constraint=self.kernel_constraint, recurrent_constraint=self.recurrent_constraint,
                   bias_constraint=self.bias_constraint, dropout=self.dropout,
                   recurrent_dropout=self.recurrent_dropout, seed=self.seed)
        return cfg


def _gate_products(h, rk, rdp, n):
    """h @ recurrent_kernel as n gate blocks; with recurrent dropout masks (one per gate)
    each block uses its own masked h (Keras' implementation 1)."""
    if rdp is None:
        return A.split(h @ rk, n, axis=1) if n > 1 else [h @ rk]
    if len(rdp) == 1:
        return A.split((h * rdp[0]) @ rk, n, axis=1) if n > 1 else [(h * rdp[0]) @ rk]
    return [(h * m) @ k for m, k in zip(rdp, A.split(rk, n, axis=1))]


class SimpleRNNCell(_Cell):
    """``h = activation(x @ kernel + bias + h @ recurrent_kernel)``."""

    n_gates = 1

    def step(self, xw, states, rdp):
        h = states[0]
        out = xw + _gate_products(h, self.recurrent_kernel, rdp, 1)[0]
        out = self.activation(out)
        return out, [out]


class LSTMCell(_Cell):
    """Gates i, f, c, o (Keras' order); ``unit_forget_bias`` initializes the forget gate's
    bias to ones (the other gates' with ``bias_initializer``)."""

    n_gates = 4

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer, **kwargs)
        self.recurrent_activation = _acts.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_init(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        u, init = self.units, self.bias_initializer

        def forget_ones(shape, dtype=None):
            dt = np.dtype(getattr(dtype, "as_numpy_dtype", dtype) or self.dtype)

            def part(n):
                v = init((n,), dtype=dtype)
                return np.asarray(v.numpy() if hasattr(v, "numpy") else v, dt)
            return np.concatenate([part(u), np.ones(u, dt), part(2 * u)])
        return forget_ones

    def _recurrent_products(self, h, rdp):
        """h's four gate products (ConvLSTMCell's are convolutions)."""
        return _gate_products(h, self.recurrent_kernel, rdp, 4)

    def step(self, xw, states, rdp):
        h, c = states
        xi, xf, xc, xo = A.split(xw, 4, axis=-1)
        ri, rf, rc, ro = self._recurrent_products(h, rdp)
        ra = self.recurrent_activation
        i = ra(xi + ri)
        f = ra(xf + rf)
        c = f * c + i * self.activation(xc + rc)
        o = ra(xo + ro)
        h = o * self.activation(c)
        return h, [h, c]

    def get_initial_state(self, batch_size=None):
        return [A.zeros((batch_size, self.units), self.dtype), A.zeros((batch_size, self.units), self.dtype)]

    def get_config(self):
        cfg = super().get_config()
        cfg.update(recurrent_activation=_acts.serialize(self.recurrent_activation),
                   unit_forget_bias=self.unit_forget_bias)
        return cfg


class GRUCell(_Cell):
    """Gates z, r, h (Keras' order). ``reset_after=True`` (Keras 3's default, cuDNN's form):
    the reset gate multiplies the recurrent product ``h @ recurrent_kernel_h + recurrent_bias_h``;
    the bias is (2, 3 * units), the input bias then the recurrent one. ``reset_after=False``:
    the reset gate multiplies h before the product; one bias (3 * units,)."""

    n_gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 reset_after=True, **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer, **kwargs)
        self.recurrent_activation = _acts.get(recurrent_activation)
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _input_bias(self):
        if self.bias is None or not self.reset_after:
            return self.bias
        return self.bias[0]

    def step(self, xw, states, rdp):
        h = states[0]
        u = self.units
        xz, xr, xh = A.split(xw, 3, axis=1)
        rk = self.recurrent_kernel
        ra = self.recurrent_activation
        if self.reset_after:
            rz, rr, rh = _gate_products(h, rk, rdp, 3)
            if self.bias is not None:
                rb = self.bias[1]
                rz, rr, rh = rz + rb[:u], rr + rb[u:2 * u], rh + rb[2 * u:]
            z = ra(xz + rz)
            r = ra(xr + rr)
            hh = self.activation(xh + r * rh)
        else:
            if rdp is None:
                hz = hr = hh_in = h
            elif len(rdp) == 1:
                hz = hr = hh_in = h * rdp[0]
            else:
                hz, hr, hh_in = (h * m for m in rdp)
            if hz is hr:
                rz, rr = A.split(hz @ rk[:, :2 * u], 2, axis=1)
            else:
                rz, rr = hz @ rk[:, :u], hr @ rk[:, u:2 * u]
            z = ra(xz + rz)
            r = ra(xr + rr)
            hh = self.activation(xh + (r * hh_in) @ rk[:, 2 * u:])
        h = z * h + (1.0 - z) * hh
        return h, [h]

    def get_config(self):
        cfg = super().get_config()
        cfg.update(recurrent_activation=_acts.serialize(self.recurrent_activation), reset_after=self.reset_after)
        return cfg


# -- the layer ------------------------------------------------------------------------------------

def _sizes(state_size):
    return list(state_size) if isinstance(state_size, (list, tuple)) else [state_size]


class StackedRNNCells(Layer):
    """Keras 3's stack of cells run as one: each step feeds a cell's output to the next cell.
    ``state_size`` is the list of the cells' state sizes (nested, as Keras); ``RNN`` carries the
    states flat and regroups them per cell for ``return_state``, as Keras returns them."""

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
                raise ValueError(f"StackedRNNCells: all cells must have a `call` method and a `state_size` "
                                 f"attribute, got {cell!r}")
        self.cells = list(cells)

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    @property
    def output_size(self):
        last = self.cells[-1]
        return getattr(last, "output_size", None) or _sizes(last.state_size)[0]

    def _counts(self):
        return [len(_sizes(c.state_size)) for c in self.cells]

    def nest(self, flat):
        """Flat states -> one list per cell (Keras' structure for ``return_state``)."""
        out, i = [], 0
        for n in self._counts():
            out.append(list(flat[i:i + n]))
            i += n
        return out

    def build(self, input_shape):
        shape = tuple(input_shape)
        for cell in self.cells:
            if not cell.built:
                cell._build_input_shape = shape
                cell.build(shape)
                cell.built = True
            shape = (shape[0], getattr(cell, "output_size", None) or _sizes(cell.state_size)[0])
        self.built = True

    def get_initial_state(self, batch_size=None):
        return [c.get_initial_state(batch_size) if hasattr(c, "get_initial_state")
                else [A.zeros((batch_size, d), self.dtype) for d in _sizes(c.state_size)] for c in self.cells]

    def dropout_masks(self, x0, flat_states, training):
        """Per cell, the masks its fast step takes (drawn once per sequence, as a lone cell's):
        a cell's input is shaped like the previous cell's first state."""
        masks, like = [], x0
        for cell, st in zip(self.cells, self.nest(flat_states)):
            masks.append(cell.dropout_masks(like, st[0], training) if isinstance(cell, _Cell) else (None, None))
            like = st[0]
        return masks

    def step_flat(self, x, flat_states, masks, training=None):
        """One time step on flat states: (output, new flat states)."""
        new = []
        for cell, st, (dp, rdp) in zip(self.cells, self.nest(flat_states), masks):
            if isinstance(cell, _Cell):
                x, ns = cell.step(cell.project(x, dp), st, rdp)
            else:
                x, ns = cell(x, st, training=training) if "training" in _call_args(cell) else cell(x, st)
            new.extend(ns if isinstance(ns, (list, tuple)) else [ns])
        return x, new

    def call(self, inputs, states, training=None):
        # Keras' structure: one entry per cell, a list or (a single state) a tensor
        flat, shapes = [], []
        for cell_states in states:
            single = not isinstance(cell_states, (list, tuple))
            shapes.append(single)
            flat.extend([cell_states] if single else cell_states)
        masks = self.dropout_masks(inputs, flat, training)
        out, new = self.step_flat(inputs, flat, masks, training)
        nested = [ns[0] if single else ns for ns, single in zip(self.nest(new), shapes)]
        return out, nested

    def get_config(self):
        from ..saving import serialize_keras_object
        cfg = super().get_config()
        cfg["cells"] = [serialize_keras_object(c) for c in self.cells]
        return cfg

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ..saving import deserialize_keras_object
        config = dict(config)
        cells = [deserialize_keras_object(c, custom_objects) if isinstance(c, dict) else c
                 for c in config.pop("cells")]
        return cls(cells, **config)


def _time_mask(mask, batch, steps):
    """A (batch, time) mask as a (time, batch, 1) bool tensor (or None)."""
    if mask is None:
        return None
    m = mask if aval_of(mask).dtype == np.bool_ else M.cast(mask, np.bool_)
    s = tuple(aval_of(m).shape)
    if len(s) != 2:
        raise ValueError(f"RNN: the mask must have shape (batch, timesteps), got {fmt_shape(s)}")
    return A.expand_dims(A.transpose(m, (1, 0)), 2)


class RNN(Layer):
    """Keras 3's ``RNN(cell)``: runs ``cell`` over the time axis of (batch, time, features)
    inputs. The cell is one of tapeflow's cells (SimpleRNNCell, LSTMCell, GRUCell); a custom
    cell (any layer with ``state_size`` and ``call(inputs, states)``) is stepped through its
    ``call`` (no hoisted projection)."""

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
            raise ValueError(f"RNN: the cell must have a `call` method and a `state_size` attribute, "
                             f"got {cell!r}")
        if stateful:
            raise NotImplementedError(
                f"{type(self).__name__}: stateful=True is not supported by tapeflow (it keeps no recurrent "
                "state across calls). Pass the last states back yourself: return_state=True, then "
                "layer(x, initial_state=states)")
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = False
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.supports_masking = True
        self.input_spec = InputSpec(ndim=3)

    def _state_sizes(self):
        """The flat list of state sizes (a StackedRNNCells' nested sizes flattened)."""
        return [d for s in _sizes(self.cell.state_size) for d in _sizes(s)]

    def build(self, input_shape):
        if isinstance(input_shape, list):   # (sequences, initial states...) given as a list
            input_shape = input_shape[0]
        if not self.cell.built:
            self.cell._build_input_shape = (input_shape[0],) + tuple(input_shape[2:])
            self.cell.build((input_shape[0],) + tuple(input_shape[2:]))
            self.cell.built = True
        self.input_spec = InputSpec(ndim=3, axes={-1: input_shape[-1]})
        self.built = True

    def compute_mask(self, inputs, mask=None):
        out = mask if self.return_sequences else None
        if self.return_state:
            states = [None] * len(self._state_sizes())
            return [out] + (self.cell.nest(states) if isinstance(self.cell, StackedRNNCells) else states)
        return out

    def compute_output_shape(self, input_shape):
        b, t = input_shape[0], input_shape[1]
        out = (b, t, self.cell.output_size) if self.return_sequences else (b, self.cell.output_size)
        if self.return_state:
            # a tuple, as Keras 3 returns (TF 2.21: ((2, 5, 4), (2, 4)) for return_sequences + return_state)
            states = [(b, s) for s in self._state_sizes()]
            return (out,) + tuple(self.cell.nest(states) if isinstance(self.cell, StackedRNNCells) else states)
        return out

    def call(self, inputs, mask=None, training=None, initial_state=None):
        cdt = self.cell.__dict__.get("_np_dtype") if isinstance(self.cell, Layer) else None
        if cdt is None or cdt == self._np_dtype or not isinstance(inputs, Tensor) \
                or aval_of(inputs).dtype.kind != "f":
            return self._run(inputs, mask, training, initial_state)
        # a cell of another dtype policy than the RNN's (RNN(LSTMCell(...), dtype="float64")): Keras 3 steps
        # the cell in its own compute dtype and casts the outputs and states to the RNN's
        out = self._run(M.cast(inputs, cdt), mask, training, initial_state)
        flat = [M.cast(t, self._np_dtype) if aval_of(t).dtype.kind == "f" else t for t in nest.flatten(out)]
        return nest.pack_sequence_as(out, flat)

    def _run(self, inputs, mask=None, training=None, initial_state=None):
        if isinstance(inputs, (list, tuple)):
            inputs, initial_state = inputs[0], list(inputs[1:]) or initial_state
        if aval_of(inputs).dtype.kind != "f":
            # integer or bool sequences are cast to the layer's dtype, as Keras 3 does (TF 2.21:
            # SimpleRNN on int32 input gives float32), like Dense
            inputs = M.cast(inputs, self.dtype)
        shape = tuple(aval_of(inputs).shape)
        steps = shape[1]
        if steps is None:
            raise ValueError(f"{type(self).__name__}: the number of timesteps must be known, got input shape "
                             f"{fmt_shape(shape)}")
        if steps == 0:
            # TF 2.21 fails inside its loop (a StridedSlice error); this says why
            raise ValueError(f"{type(self).__name__}: the input sequence has 0 timesteps (shape "
                             f"{fmt_shape(shape)}); an RNN needs at least one step")
        cell = self.cell
        batch = shape[0] if shape[0] is not None else A.shape(inputs)[0]
        if initial_state is None and hasattr(cell, "zero_states"):
            states = cell.zero_states(inputs[:, 0])     # a ConvLSTM's states: the conv's output shape
        elif initial_state is None:
            # (a None batch: [traced size, s] keeps s static, so the scan's states keep shape (?, s); a
            # stacked vector would hide it and the first step's (?, s) would not match (?, ?))
            states = [A.zeros((batch, s), inputs.dtype) for s in self._state_sizes()]
        else:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
            if isinstance(cell, StackedRNNCells):    # Keras' nested per-cell states, flattened
                states = [t for s in states for t in (s if isinstance(s, (list, tuple)) else [s])]
            if len(states) != len(self._state_sizes()):
                raise ValueError(f"{type(self).__name__}: expected {len(self._state_sizes())} initial state "
                                 f"tensor(s), got {len(states)}")
            states = [M.cast(s, inputs.dtype) if aval_of(s).dtype != aval_of(inputs).dtype else s
                      for s in (convert_to_tensor(s) for s in states)]
        fast = isinstance(cell, _Cell)
        if isinstance(cell, StackedRNNCells):
            masks = cell.dropout_masks(inputs[:, 0], states, training)
            xs, rdp = inputs, None

            def step(x_t, st, _):
                return cell.step_flat(x_t, list(st), masks, training)
        elif fast:
            dp, rdp = cell.dropout_masks(inputs[:, 0], states[0], training)
            xs = inputs

            def step(x_t, st, rdp_):
                return cell.step(cell.project(x_t, dp), st, rdp_)
        else:
            xs, rdp = inputs, None

            def step(x_t, st, _):
                # Keras 3 hands a cell its states as a list, a single state too
                out, new = cell(x_t, list(st), training=training) if "training" in _call_args(cell) \
                    else cell(x_t, list(st))
                return out, (list(new) if isinstance(new, (list, tuple)) else [new])
        xs = A.transpose(xs, (1, 0) + tuple(range(2, len(aval_of(xs).shape))))   # time-major
        tmask = _time_mask(mask, batch, steps)
        if self.go_backwards:
            xs = A.reverse(xs, [0])
            tmask = None if tmask is None else A.reverse(tmask, [0])
        last, outs, states = self._loop(step, xs, states, tmask, rdp, steps)
        if self.return_sequences:
            output = A.stack(outs, 1) if isinstance(outs, list) else \
                A.transpose(outs, (1, 0) + tuple(range(2, len(aval_of(outs).shape))))
        else:
            output = last
        if self.return_state:
            return [output] + (cell.nest(states) if isinstance(cell, StackedRNNCells) else list(states))
        return output

    def _loop(self, step, xs, states, tmask, rdp, steps):
        """Run ``step`` over time-major ``xs``: (last output, outputs, final states); outputs
        is a list (the Python loop) or a (time, batch, units) tensor (the scan)."""
        masked = tmask is not None
        zero_out = self.zero_output_for_mask

        def one(x_t, m_t, st, prev):
            out, new = step(x_t, st, rdp)
            if m_t is not None and len(aval_of(out).shape) > 2:     # (batch, 1) against conv states
                m_t = A.reshape(m_t, (-1,) + (1,) * (len(aval_of(out).shape) - 1))
            if m_t is not None:
                new = [M.where(m_t, n, s) for n, s in zip(new, st)]
                out = M.where(m_t, out, A.zeros_like(out) if zero_out else prev)
            return out, new

        if STATE.trace is None or self.unroll:
            xs_t = A.unstack(xs, steps, 0)
            ms = A.unstack(tmask, steps, 0) if masked else [None] * steps
            prev = self._zero_output(states) if masked and not zero_out else None
            outs = []
            st = states
            for x_t, m_t in zip(xs_t, ms):
                prev, st = one(x_t, m_t, st, prev)
                outs.append(prev)
            return prev, outs, st
        n = len(states)

        def body(carry, x):
            st, prev = list(carry[:n]), carry[n]
            x_t, m_t = (x[0], x[1]) if masked else (x, None)
            out, new = one(x_t, m_t, st, prev)
            return tuple(new) + (out,), out
        init = tuple(states) + (self._zero_output(states),)
        carry, ys = CF.scan(body, init, (xs, tmask) if masked else xs)
        return carry[n], ys, list(carry[:n])

    def _zero_output(self, states):
        """The output before the first step (what a masked first step emits): zeros of the
        cell's output size, which Keras defaults to the first state's."""
        out_size = getattr(self.cell, "output_size", None) or self._state_sizes()[0]
        b = aval_of(states[0]).shape[0]
        if out_size == self._state_sizes()[0]:
            return A.zeros_like(states[0])
        # (an input_signature's None batch: the state's run-time batch size)
        return A.zeros((b if b is not None else A.shape(states[0])[0], out_size), aval_of(states[0]).dtype)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(return_sequences=self.return_sequences, return_state=self.return_state,
                   go_backwards=self.go_backwards, stateful=self.stateful, unroll=self.unroll,
                   zero_output_for_mask=self.zero_output_for_mask)
        # Keras 3's RNN(cell) config carries the cell; without it from_config / load_model failed
        # ("missing 1 required positional argument: 'cell'", sweep18). SimpleRNN/LSTM/GRU flatten
        # their cell's arguments instead (_Recurrent.get_config drops this entry).
        from ..saving import serialize_keras_object
        cfg["cell"] = serialize_keras_object(self.cell)
        return cfg

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ..saving import deserialize_keras_object
        config = dict(config)
        cell = config.pop("cell", None)
        if isinstance(cell, dict):
            cell = deserialize_keras_object(cell, custom_objects)
        return cls(**config) if cell is None else cls(cell, **config)


def _call_args(layer):
    import inspect
    try:
        return inspect.signature(type(layer).call).parameters
    except (TypeError, ValueError):
        return {}


_RNN_KW = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll", "zero_output_for_mask")
_BASE_KW = ("name", "trainable", "dtype", "input_shape", "batch_input_shape", "batch_size", "input_dim",
            "activity_regularizer")


class _Recurrent(RNN):
    """SimpleRNN / LSTM / GRU: an RNN over its own cell, with the cell's arguments flat."""

    _cell_class = None

    def __init__(self, units, **kwargs):
        rnn_kw = {k: kwargs.pop(k) for k in _RNN_KW if k in kwargs}
        base_kw = {k: kwargs.pop(k) for k in _BASE_KW if k in kwargs}
        kwargs.pop("use_cudnn", None)
        cell = self._cell_class(units, dtype=base_kw.get("dtype"), trainable=base_kw.get("trainable", True),
                                **kwargs)
        super().__init__(cell, **rnn_kw, **base_kw)

    def get_config(self):
        cfg = super().get_config()
        cfg.pop("cell", None)
        cell_cfg = self.cell.get_config()
        for k in ("name", "trainable", "dtype"):
            cell_cfg.pop(k, None)
        cfg.update(cell_cfg)
        cfg["activity_regularizer"] = _regs.serialize(self.__dict__.get("activity_regularizer"))
        return cfg


def _from_cell(name):
    return property(lambda self: getattr(self.cell, name), doc=f"the cell's ``{name}``")


# Keras 3 reads the cell's hyperparameters and weights through the layer (lstm.units, lstm.kernel)
for _n in ("units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
           "recurrent_initializer", "bias_initializer", "kernel_regularizer", "recurrent_regularizer",
           "bias_regularizer", "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout",
           "recurrent_dropout", "unit_forget_bias", "reset_after", "seed", "kernel", "recurrent_kernel", "bias"):
    setattr(_Recurrent, _n, _from_cell(_n))
del _n


class SimpleRNN(_Recurrent):
    """Keras 3's SimpleRNN: ``h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)``."""
    _cell_class = SimpleRNNCell


class LSTM(_Recurrent):
    """Keras 3's LSTM (gates i, f, c, o; weights (in, 4u), (u, 4u), (4u,))."""
    _cell_class = LSTMCell


class GRU(_Recurrent):
    """Keras 3's GRU (gates z, r, h; ``reset_after=True`` by default: bias (2, 3u))."""
    _cell_class = GRUCell


class Masking(Layer):
    """Masks the time steps whose features all equal ``mask_value``: the output is the input
    with those steps zeroed (Keras 3 multiplies by the mask), and the mask
    (``any(inputs != mask_value, axis=-1)``) goes on to the next layers of a model."""
    _BUILT_AT_INIT = True   # as Keras 3 (engine.Layer)

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def _keep(self, inputs, keepdims):
        x = inputs
        if aval_of(x).dtype.kind in "iub":
            # Keras' not_equal promotes an integer input against the float mask_value (float32)
            x = M.cast(x, np.float32)
        return M.reduce_any(M.not_equal(x, self.mask_value), axis=-1, keepdims=keepdims)

    def compute_mask(self, inputs, mask=None):
        return self._keep(inputs, False)

    def call(self, inputs):
        return inputs * M.cast(self._keep(inputs, True), aval_of(inputs).dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        cfg = super().get_config()
        cfg["mask_value"] = self.mask_value
        return cfg


# -- wrappers ---------------------------------------------------------------------------------------

def _copy_layer(layer, **changes):
    """A fresh layer with ``layer``'s configuration (``changes`` applied): fresh weights, as
    Keras 3 makes a Bidirectional's two layers from the wrapped layer's config."""
    cfg = layer.get_config()
    cfg.update(changes)
    return type(layer).from_config(cfg)


_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


class Wrapper(Layer):
    """Keras' base of the layers that wrap another (Bidirectional, TimeDistributed): rebuilt from
    a config whose ``layer`` entry is the wrapped layer's (each subclass keeps the layer as it
    needs: TimeDistributed as ``layer``, Bidirectional as its forward and backward copies)."""

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ..saving import deserialize_keras_object
        config = dict(config)
        layer = config.pop("layer")
        if isinstance(layer, dict):
            layer = deserialize_keras_object(layer, custom_objects)
        return cls(layer, **config)


class Bidirectional(Wrapper):
    """Keras 3's ``Bidirectional(layer, merge_mode="concat")``: a forward copy of a recurrent
    layer (named ``forward_<name>``) and a backward one (``backward_<name>``, ``go_backwards``
    set), both made from its config; the backward outputs are flipped back into time order
    (return_sequences) and merged: ``concat`` (last axis), ``sum``, ``mul``, ``ave`` or None (the
    two outputs as a list). Weights: the forward layer's, then the backward layer's. With
    ``return_state`` the forward states follow the output, then the backward ones. As Keras 3, both
    layers output zeros at masked steps when they return sequences (zero_output_for_mask)."""

    _passes_mask = True

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `Bidirectional` layer with a `keras.layers.Layer` instance. "
                             f"Received: {layer!r}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(f"`backward_layer` need to be a `keras.layers.Layer` instance. Received: "
                             f"{backward_layer!r}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                             '{"sum", "mul", "ave", "concat", None}')
        super().__init__(**kwargs)
        base = layer.name[len("forward_"):] if layer.name.startswith("forward_") else layer.name
        self.forward_layer = _copy_layer(layer, name=f"forward_{base}")
        if backward_layer is None:
            bbase = layer.name[len("backward_"):] if layer.name.startswith("backward_") else layer.name
            self.backward_layer = _copy_layer(layer, name=f"backward_{bbase}", go_backwards=True)
        else:
            self.backward_layer = backward_layer
        f, b = self.forward_layer, self.backward_layer
        if f.go_backwards == b.go_backwards:
            raise ValueError("Forward layer and backward layer should have different `go_backwards` value. "
                             f"Received: forward_layer.go_backwards {f.go_backwards}, "
                             f"backward_layer.go_backwards={b.go_backwards}")
        for a in ("stateful", "return_sequences", "return_state"):
            if getattr(f, a) != getattr(b, a):
                raise ValueError(f'Forward layer and backward layer are expected to have the same value for '
                                 f'attribute "{a}", got "{getattr(f, a)}" for forward layer and '
                                 f'"{getattr(b, a)}" for backward layer')
        for lay in (f, b):
            if getattr(lay, "zero_output_for_mask", None) is not None:
                lay.zero_output_for_mask = lay.return_sequences
        self.merge_mode = merge_mode
        self.return_sequences = f.return_sequences
        self.return_state = f.return_state
        self.stateful = False
        self.input_spec = InputSpec(ndim=3)
        if weights:
            self._initial_weights = list(weights)   # set after build (Layer): forward half, backward half

    def build(self, input_shape):
        if isinstance(input_shape, list):
            input_shape = input_shape[0]
        for lay in (self.forward_layer, self.backward_layer):
            if not lay.built:
                lay._build_input_shape = tuple(input_shape)
                lay.build(tuple(input_shape))
                lay.built = True
        self.built = True

    def call(self, inputs, mask=None, training=None, initial_state=None):
        kw = {"training": training}
        if mask is not None:
            kw["mask"] = mask
        fs = bs = None
        if initial_state is not None:
            half = len(initial_state) // 2
            fs, bs = list(initial_state[:half]), list(initial_state[half:])
        y = self.forward_layer(inputs, initial_state=fs, **kw)
        y_rev = self.backward_layer(inputs, initial_state=bs, **kw)
        states = ()
        if self.return_state:
            states = tuple(y[1:]) + tuple(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = A.reverse(y_rev, [1])
        mode = self.merge_mode
        if mode == "concat":
            out = A.concat([y, y_rev], -1)
        elif mode == "sum":
            out = y + y_rev
        elif mode == "ave":
            out = (y + y_rev) / 2
        elif mode == "mul":
            out = y * y_rev
        else:
            out = [y, y_rev]
        if self.return_state:
            return (out if mode is None else [out]) + list(states)
        return out

    def compute_output_shape(self, input_shape):
        # Keras 3's rule: the forward layer's shape; concat doubles the last axis, None gives a
        # pair; states (forward then backward) follow. A custom backward_layer is not consulted.
        shape = self.forward_layer.compute_output_shape(tuple(input_shape))
        states = ()
        if self.return_state:
            shape, states = shape[0], tuple(shape[1:])
        shape = tuple(shape)
        if self.merge_mode == "concat":
            shape = shape[:-1] + (None if shape[-1] is None else shape[-1] * 2,)
        outs = (shape, shape) if self.merge_mode is None else (shape,)
        if self.return_state:
            return outs + states + states
        return outs if self.merge_mode is None else shape

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, list):
            mask = mask[0]
        if self.return_sequences:
            return [mask, mask] if not self.merge_mode else mask
        return [None, None] if not self.merge_mode else None

    def get_config(self):
        from ..saving import serialize_keras_object
        cfg = super().get_config()
        cfg.update(layer=serialize_keras_object(self.forward_layer), merge_mode=self.merge_mode)
        cfg["layer"]["config"]["name"] = cfg["layer"]["config"]["name"][len("forward_"):]
        # As Keras 3, always: without it a custom backward_layer (other units, cell) came back as
        # a copy of the forward one and load_model failed on the weight shapes (sweep18)
        cfg["backward_layer"] = serialize_keras_object(self.backward_layer)
        return cfg

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ..saving import deserialize_keras_object
        config = dict(config)
        if isinstance(config.get("backward_layer"), dict):
            config["backward_layer"] = deserialize_keras_object(config["backward_layer"], custom_objects)
        return super().from_config(config, custom_objects)


class TimeDistributed(Wrapper):
    """Keras 3's ``TimeDistributed(layer)``: ``layer`` applied to every time step of
    (batch, time, ...) inputs, one call per step (so a layer with per-call state, such as
    BatchNormalization in training, sees each step apart, as in Keras), stacked on axis 1."""

    _passes_mask = True

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `TimeDistributed` layer with a `keras.layers.Layer` instance. "
                             f"Received: {layer!r}")
        super().__init__(**kwargs)
        self.layer = layer
        self.input_spec = InputSpec(min_ndim=3)

    def build(self, input_shape):
        step = (input_shape[0],) + tuple(input_shape[2:])
        if not self.layer.built:
            self.layer._build_input_shape = step
            self.layer.build(step)
            self.layer.built = True
        self.built = True

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if len(input_shape) < 3:
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape` with at least 3 "
                             f"dimensions, received: {input_shape}")
        child = tuple(self.layer.compute_output_shape((input_shape[0],) + input_shape[2:]))
        return (child[0], input_shape[1]) + child[1:]

    def call(self, inputs, training=None, mask=None):
        shape = tuple(aval_of(inputs).shape)
        steps = shape[1]
        if steps is None:
            raise ValueError(f"TimeDistributed: the number of timesteps must be known, got input shape "
                             f"{fmt_shape(shape)}")
        from ..engine import _call_arg_info
        acc_training, acc_mask = _call_arg_info(type(self.layer))
        xs = A.unstack(inputs, steps, 1)
        ms = A.unstack(mask, steps, 1) if (mask is not None and acc_mask) else [None] * steps
        outs = []
        for x_t, m_t in zip(xs, ms):
            kw = {}
            if acc_training and training is not None:
                kw["training"] = training
            if m_t is not None:
                kw["mask"] = m_t
            outs.append(self.layer(x_t, **kw))
        return A.stack(outs, 1)

    def get_config(self):
        from ..saving import serialize_keras_object
        cfg = super().get_config()
        cfg["layer"] = serialize_keras_object(self.layer)
        return cfg
