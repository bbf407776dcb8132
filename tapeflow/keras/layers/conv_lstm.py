"""Keras 3's convolutional LSTMs (Shi et al. 2015): ConvLSTM1D/2D/3D over (batch, time, spatial...,
channels). The cell is the LSTM's (gates i, f, c, o, ``unit_forget_bias``, the same activations)
with the two products turned into convolutions: the input's with the layer's strides, padding and
dilation, the state's always stride 1 and 'same' padding, so the state keeps the input
convolution's output size. The time loop, masking, ``go_backwards`` and ``return_state`` are the
generic ``RNN``'s (a Python loop eagerly, one ``scan`` traced); dropout masks are drawn once per
call, shaped like a step's input / state, one per gate with ``recurrent_dropout`` (as LSTMCell)."""
from __future__ import annotations

from ...core.aval import fmt_shape
from ...core.primitive import aval_of
from ...ops import array_ops as A
from ...ops import math_ops as M
from ...ops import nn_ops as N
from ...core.primitives import conv as P
from .. import regularizers as _regs
from ..engine import InputSpec
from .conv import _data_format, _padding, _tuple
from .recurrent import LSTMCell, RNN, _BASE_KW, _RNN_KW

__all__ = ["ConvLSTMCell", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"]


def _conv(x, w, rank, strides, padding, dilations):
    """The rank-N convolution of channels-last ``x`` with ``w`` (TF's padding name)."""
    if rank == 1:
        return N.conv1d(x, w, strides, padding, dilations=dilations)
    if rank == 2:
        return N.conv2d(x, w, strides, padding, dilations=dilations)
    return N.conv3d(x, w, strides, padding, dilations=dilations)


class ConvLSTMCell(LSTMCell):
    """One ConvLSTM step over (batch, spatial..., channels); ``rank`` spatial axes."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 **kwargs):
        super().__init__(filters, **kwargs)
        cls = type(self).__name__
        self.rank = int(rank)
        self.filters = self.units
        self.kernel_size = _tuple(cls, "kernel_size", kernel_size, self.rank)
        self.strides = _tuple(cls, "strides", strides, self.rank)
        self.dilation_rate = _tuple(cls, "dilation_rate", dilation_rate, self.rank)
        self.padding = _padding(cls, padding)
        self.data_format = _data_format(cls, data_format)

    def build(self, input_shape):
        cls = type(self).__name__
        input_shape = tuple(input_shape)
        spatial, c = input_shape[1:-1], input_shape[-1]
        if len(spatial) != self.rank or None in spatial:
            raise ValueError(f"{cls}: ConvLSTM layers only support static input shapes for the spatial dimension. "
                             f"Received invalid input shape: input_shape={fmt_shape(input_shape)}")
        if c is None:
            raise ValueError(f"{cls}: the channel dimension of the inputs (last axis) should be defined. Found "
                             f"None. Full input shape received: input_shape={fmt_shape(input_shape)}")
        f4 = 4 * self.units
        self.kernel = self.add_weight("kernel", shape=self.kernel_size + (int(c), f4),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", shape=self.kernel_size + (self.units, f4),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = self.add_weight("bias", shape=(f4,), initializer=self._bias_init(),
                                    regularizer=self.bias_regularizer, constraint=self.bias_constraint) \
            if self.use_bias else None
        self.built = True

    def out_spatial(self, spatial):
        """The input convolution's output size (the state's spatial shape)."""
        out = []
        for n, k, s, d in zip(spatial, self.kernel_size, self.strides, self.dilation_rate):
            if self.padding == "same":
                out.append(-(-n // s))
            else:
                out.append(P.out_size(n, k, s, d, 0, 0))
        return tuple(out)

    def zero_states(self, x0):
        """Zero (h, c) for a step input ``x0`` (batch, spatial..., channels)."""
        spatial = tuple(aval_of(x0).shape[1:-1])
        # a zero-filter convolution gives zeros of the state's shape with the batch of x0 (known or not)
        like = _conv(x0[..., :1], A.zeros(self.kernel_size + (1, self.units), aval_of(x0).dtype), self.rank,
                     self.strides, self.padding.upper(), self.dilation_rate)
        assert tuple(aval_of(like).shape[1:-1]) == self.out_spatial(spatial)
        return [like, A.zeros_like(like)]

    def project(self, x, dp):
        pad = self.padding.upper()
        if dp is None or len(dp) == 1:
            if dp is not None:
                x = x * dp[0]
            out = _conv(x, self.kernel, self.rank, self.strides, pad, self.dilation_rate)
        else:   # one input mask per gate
            ks = A.split(self.kernel, 4, axis=-1)
            out = A.concat([_conv(x * m, k, self.rank, self.strides, pad, self.dilation_rate)
                            for m, k in zip(dp, ks)], -1)
        return out if self.bias is None else out + self.bias

    def _recurrent_products(self, h, rdp):
        """The state's four gate convolutions (stride 1, 'same'); LSTMCell.step does the rest."""
        one = (1,) * self.rank
        if rdp is None or len(rdp) == 1:
            hh = h if rdp is None else h * rdp[0]
            return A.split(_conv(hh, self.recurrent_kernel, self.rank, one, "SAME", one), 4, axis=-1)
        return [_conv(h * m, k, self.rank, one, "SAME", one)
                for m, k in zip(rdp, A.split(self.recurrent_kernel, 4, axis=-1))]

    def get_initial_state(self, batch_size=None):
        raise NotImplementedError("ConvLSTMCell.get_initial_state: the state's shape depends on the input's spatial "
                                  "size; the ConvLSTM layers make their zero states from the input")

    def get_config(self):
        cfg = super().get_config()
        cfg.pop("units", None)
        cfg.update(rank=self.rank, filters=self.filters, kernel_size=self.kernel_size, strides=self.strides,
                   padding=self.padding, data_format=self.data_format, dilation_rate=self.dilation_rate)
        return cfg


class _ConvLSTM(RNN):
    """ConvLSTM1D/2D/3D: an RNN over a ConvLSTMCell, with the cell's arguments flat (as Keras)."""

    rank = 2

    def __init__(self, filters, kernel_size, **kwargs):
        rnn_kw = {k: kwargs.pop(k) for k in _RNN_KW if k in kwargs}
        base_kw = {k: kwargs.pop(k) for k in _BASE_KW if k in kwargs}
        cell = ConvLSTMCell(self.rank, filters, kernel_size, dtype=base_kw.get("dtype"),
                            trainable=base_kw.get("trainable", True), **kwargs)
        super().__init__(cell, **rnn_kw, **base_kw)
        self.input_spec = InputSpec(ndim=self.rank + 3)

    def build(self, input_shape):
        if isinstance(input_shape, list):
            input_shape = input_shape[0]
        if len(input_shape) != self.rank + 3:
            raise ValueError(f"{type(self).__name__}: expected ndim={self.rank + 3} (batch, time, spatial..., "
                             f"channels), found ndim={len(input_shape)}. Full shape received: "
                             f"{fmt_shape(tuple(input_shape))}")
        super().build(input_shape)
        self.input_spec = InputSpec(ndim=self.rank + 3, axes={-1: input_shape[-1]})

    def compute_output_shape(self, input_shape):
        b, t = input_shape[0], input_shape[1]
        state = (b,) + self.cell.out_spatial(tuple(input_shape[2:-1])) + (self.cell.filters,)
        out = (b, t) + state[1:] if self.return_sequences else state
        return (out, state, state) if self.return_state else out

    def get_config(self):
        cfg = super().get_config()
        cfg.pop("cell", None)
        cell_cfg = self.cell.get_config()
        for k in ("name", "trainable", "dtype", "rank"):
            cell_cfg.pop(k, None)
        cfg.update(cell_cfg)
        cfg["activity_regularizer"] = _regs.serialize(self.__dict__.get("activity_regularizer"))
        return cfg


class ConvLSTM1D(_ConvLSTM):
    """Keras 3's ConvLSTM1D over (batch, time, steps, channels)."""
    rank = 1


class ConvLSTM2D(_ConvLSTM):
    """Keras 3's ConvLSTM2D over (batch, time, rows, cols, channels)."""
    rank = 2


class ConvLSTM3D(_ConvLSTM):
    """Keras 3's ConvLSTM3D over (batch, time, depth, rows, cols, channels)."""
    rank = 3


for _n in ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "activation",
           "recurrent_activation", "use_bias", "kernel_initializer", "recurrent_initializer", "bias_initializer",
           "unit_forget_bias", "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
           "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout", "seed",
           "kernel", "recurrent_kernel", "bias"):
    setattr(_ConvLSTM, _n, property(lambda self, n=_n: getattr(self.cell, n), doc=f"the cell's ``{_n}``"))
del _n
