"""tf.quantization: the fake-quantization ops of quantization-aware training (float in, float out).

TF's FakeQuantWithMinMax* kernels, composed of tapeflow ops in float32 as the kernels compute:
the range [min, max] is first *nudged* so that 0.0 is exactly representable (Nudge: scale =
(max - min) / (quant_max - quant_min), the zero point min's image rounded half away from zero and
clamped into [quant_min, quant_max]; quant_min is 1 with narrow_range, else 0, quant_max
2^num_bits - 1), the input clamped to the nudged range and rounded to the grid. The gradients
are TF's straight-through ones: the input's passes where nudged_min <= x <= nudged_max; min and
max (the *_vars forms) collect the cotangents of the inputs below and above the nudged range.

quantize_and_dequantize_v2 (TF's QuantizeAndDequantizeV4 kernel) and the deprecated
quantize_and_dequantize (V2 kernel), float32/float64 in and out: the range [min, max] (given, or the
input's own, per slice along ``axis``) sets the largest scale that maps it into the integer grid
keeping 0 at 0, the other side of the range moving onto the grid; values are clamped (given ranges),
scaled, rounded (half to even or half up) and scaled back, every step rounded in the input's dtype as
TF's. Gradients: _v2's passes where the given min <= x <= max (zeros for the bounds), the deprecated
op's passes straight through.

The ops on quantized dtypes (quantize, dequantize, quantized_concat, qint8...) stay refused:
NumPy computes on none of those dtypes."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .autodiff import custom_gradient
from .core.primitive import aval_of
from .core.tensor import Tensor, convert_to_tensor
from .errors import InvalidArgumentError, InvalidArgumentTypeError, NotFoundError
from .ops import array_ops as _A
from .ops import math_ops as _M

__all__ = ["fake_quant_with_min_max_args", "fake_quant_with_min_max_args_gradient",
           "fake_quant_with_min_max_vars", "fake_quant_with_min_max_vars_gradient",
           "fake_quant_with_min_max_vars_per_channel", "fake_quant_with_min_max_vars_per_channel_gradient",
           "quantize_and_dequantize", "quantize_and_dequantize_v2"]

_F32 = np.float32


def _inputs(op, inputs):
    x = inputs if isinstance(inputs, Tensor) else convert_to_tensor(np.asarray(inputs, _F32))
    if aval_of(x).dtype != _F32:   # (TF's kernels are float32 only)
        raise InvalidArgumentTypeError(f"{op}: inputs must be float32, got {aval_of(x).dtype.name}; cast first: "
                                       "tapeflow.cast(x, tapeflow.float32)")
    return x


def _quant_range(op, num_bits, narrow_range):
    if not 2 <= int(num_bits) <= 16:
        raise InvalidArgumentError(f"{op}: num_bits must be between 2 and 16, inclusive, got {num_bits}")
    return (1.0 if narrow_range else 0.0), float((1 << int(num_bits)) - 1)


def _nudge(mn, mx, qmin, qmax):
    """TF's Nudge on float32 tensors (scalars or per channel): (nudged_min, nudged_max, scale, inv_scale)."""
    span = _M.subtract(mx, mn)
    scale = _M.divide(span, _F32(qmax - qmin))
    # (the inverse recomputed, not 1 / scale: TF's comment, the reciprocal loses precision)
    inv_scale = _M.divide(_F32(qmax - qmin), span)
    zp = _M.subtract(_F32(qmin), _M.divide(mn, scale))
    # std::round: half away from zero (zp >= qmin >= 0 where it is used); x - floor(x) is exact
    fl = _M.floor(zp)
    rounded = _M.add(fl, _M.cast(_M.greater_equal(_M.subtract(zp, fl), _F32(0.5)), _F32))
    nzp = _M.where(_M.less(zp, _F32(qmin)), _F32(qmin), _M.where(_M.greater(zp, _F32(qmax)), _F32(qmax), rounded))
    return (_M.multiply(_M.subtract(_F32(qmin), nzp), scale), _M.multiply(_M.subtract(_F32(qmax), nzp), scale),
            scale, inv_scale)


def _no_contraction(product):
    """``product`` (>= 0 here) passed through max(., 0): the numba backend compiles with fastmath 'contract',
    which fuses a multiply feeding an add into one FMA, rounded once where TF (and eager) round twice, so a
    quantized value could land one step off. A max between them is no multiply, and it leaves the value as
    it is."""
    return _M.maximum(product, _F32(0.0))


def _fake_quant(x, nmin, nmax, scale, inv_scale):
    # TF's functor: clamp (min then max), shift by nudged_min, round half up on the grid of the zero point
    quant_zero = _M.floor(_M.add(_no_contraction(_M.multiply(_M.negative(nmin), inv_scale)), _F32(0.5)))
    clamped = _M.maximum(_M.minimum(x, nmax), nmin)
    shifted = _no_contraction(_M.multiply(_M.subtract(clamped, nmin), inv_scale))
    steps = _M.floor(_M.add(_M.subtract(shifted, quant_zero), _F32(0.5)))
    return _M.multiply(steps, scale)


def _inside(x, nmin, nmax):
    return _M.logical_and(_M.greater_equal(x, nmin), _M.less_equal(x, nmax))


def _args_nudged(op, inputs, mn, mx, num_bits, narrow_range):
    """The *_args ops' float32 inputs and their fixed range, checked and nudged."""
    x = _inputs(op, inputs)
    if not float(mn) < float(mx):
        raise InvalidArgumentError(f"{op}: min has to be smaller than max, was: {mn:g} >= {mx:g}")
    qmin, qmax = _quant_range(op, num_bits, narrow_range)
    return x, _nudge(convert_to_tensor(_F32(mn)), convert_to_tensor(_F32(mx)), qmin, qmax)


def fake_quant_with_min_max_args(inputs, min=-6.0, max=6.0, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    """Fake-quantizes float32 ``inputs`` on the fixed range [min, max] (nudged so 0.0 is on the grid)."""
    x, (nmin, nmax, scale, inv) = _args_nudged("fake_quant_with_min_max_args", inputs, min, max, num_bits,
                                                narrow_range)

    @custom_gradient
    def fq(x):
        def grad(g):
            return _M.multiply(g, _M.cast(_inside(x, nmin, nmax), _F32))
        return _fake_quant(x, nmin, nmax, scale, inv), grad
    return fq(x)


def fake_quant_with_min_max_args_gradient(gradients, inputs, min=-6.0, max=6.0, num_bits=8,  # noqa: A002
                                          narrow_range=False, name=None):
    """The straight-through gradient of fake_quant_with_min_max_args: ``gradients`` where ``inputs``
    lies in the nudged range, else 0."""
    op = "fake_quant_with_min_max_args_gradient"
    x, (nmin, nmax, _, _) = _args_nudged(op, inputs, min, max, num_bits, narrow_range)
    return _M.multiply(_inputs(op, gradients), _M.cast(_inside(x, nmin, nmax), _F32))


def _vars_grads(g, x, nmin, nmax, axes):
    """TF's FakeQuantWithMinMaxVarsGradient: (d inputs, d min, d max); ``axes`` the axes min/max span."""
    below = _M.cast(_M.less(x, nmin), _F32)
    above = _M.cast(_M.greater(x, nmax), _F32)
    return (_M.multiply(g, _M.cast(_inside(x, nmin, nmax), _F32)),
            _M.reduce_sum(_M.multiply(g, below), axis=axes), _M.reduce_sum(_M.multiply(g, above), axis=axes))


def _min_max(op, mn, mx, shape):
    mn = mn if isinstance(mn, Tensor) else convert_to_tensor(np.asarray(mn, _F32))
    mx = mx if isinstance(mx, Tensor) else convert_to_tensor(np.asarray(mx, _F32))
    for what, v in (("min", mn), ("max", mx)):
        if aval_of(v).dtype != _F32:
            raise InvalidArgumentTypeError(f"{op}: {what} must be float32, got {aval_of(v).dtype.name}")
        if tuple(aval_of(v).shape) != shape:
            raise InvalidArgumentError(f"{op}: {what} must have shape {list(shape)}, got {list(aval_of(v).shape)}")
    return mn, mx


def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    """Fake-quantizes float32 ``inputs`` on [min, max] given as float32 scalar tensors (Variables in
    quantization-aware training), which get TF's gradients: the cotangents of the inputs below
    (min) and above (max) the nudged range."""
    op = "fake_quant_with_min_max_vars"
    x = _inputs(op, inputs)
    qmin, qmax = _quant_range(op, num_bits, narrow_range)
    mn, mx = _min_max(op, min, max, ())
    return _vars_op(x, mn, mx, qmin, qmax, None)


def fake_quant_with_min_max_vars_per_channel(inputs, min, max, num_bits=8, narrow_range=False,  # noqa: A002
                                             name=None):
    """fake_quant_with_min_max_vars with one range per channel: ``min``/``max`` of shape [d] for
    inputs of shape [..., d]."""
    op = "fake_quant_with_min_max_vars_per_channel"
    x = _inputs(op, inputs)
    shape = tuple(aval_of(x).shape)
    if not shape:
        raise InvalidArgumentError(f"{op}: inputs must have rank >= 1 (the last axis is the channel), got a scalar")
    qmin, qmax = _quant_range(op, num_bits, narrow_range)
    mn, mx = _min_max(op, min, max, (shape[-1],))
    return _vars_op(x, mn, mx, qmin, qmax, list(range(len(shape) - 1)))


def _vars_op(x, mn, mx, qmin, qmax, axes):
    @custom_gradient
    def fq(x, mn, mx):
        nmin, nmax, scale, inv = _nudge(mn, mx, qmin, qmax)

        def grad(g):
            return _vars_grads(g, x, nmin, nmax, axes)
        return _fake_quant(x, nmin, nmax, scale, inv), grad
    return fq(x, mn, mx)


def fake_quant_with_min_max_vars_gradient(gradients, inputs, min, max, num_bits=8,  # noqa: A002
                                          narrow_range=False, name=None):
    """(d inputs, d min, d max) of fake_quant_with_min_max_vars for the cotangent ``gradients``."""
    op = "fake_quant_with_min_max_vars_gradient"
    x = _inputs(op, inputs)
    qmin, qmax = _quant_range(op, num_bits, narrow_range)
    mn, mx = _min_max(op, min, max, ())
    nmin, nmax, _, _ = _nudge(mn, mx, qmin, qmax)
    return _vars_grads(_inputs(op, gradients), x, nmin, nmax, None)


def fake_quant_with_min_max_vars_per_channel_gradient(gradients, inputs, min, max, num_bits=8,  # noqa: A002
                                                      narrow_range=False, name=None):
    """(d inputs, d min, d max) of fake_quant_with_min_max_vars_per_channel."""
    op = "fake_quant_with_min_max_vars_per_channel_gradient"
    x = _inputs(op, inputs)
    shape = tuple(aval_of(x).shape)
    qmin, qmax = _quant_range(op, num_bits, narrow_range)
    mn, mx = _min_max(op, min, max, (shape[-1],) if shape else ())
    nmin, nmax, _, _ = _nudge(mn, mx, qmin, qmax)
    return _vars_grads(_inputs(op, gradients), x, nmin, nmax, list(range(len(shape) - 1)))


# -- quantize_and_dequantize (TF's QuantizeAndDequantizeV2 kernel) and _v2 (QuantizeAndDequantizeV4) --------

_QDQ_ROUND = ("HALF_TO_EVEN", "HALF_UP")


def _qdq_bound(op, v, dtype, what):
    if isinstance(v, Tensor):
        if aval_of(v).dtype != dtype:
            raise InvalidArgumentError(f"{op}: {what} must have the input's dtype {dtype.name}, got "
                                       f"{aval_of(v).dtype.name}; cast it: tapeflow.cast({what}, {dtype.name})")
        return v
    return convert_to_tensor(np.asarray(v, dtype))


def _qdq_checks(op, x, mn, mx, signed_input, num_bits, range_given, round_mode, axis):
    """TF 2.21's checks, in its order: the dtypes, round_mode, num_bits, the axis, then min/max."""
    dtype = aval_of(x).dtype
    if dtype in (np.float16, ml_dtypes.bfloat16):
        raise NotFoundError(f"{op}: TF 2.21 has no CPU kernel for {dtype.name} (float32 and float64 only); "
                            "cast the input to float32")
    if dtype not in (np.float32, np.float64):
        raise InvalidArgumentTypeError(f"{op}: input must be float32 or float64, got {dtype.name}")
    mn, mx = _qdq_bound(op, mn, dtype, "input_min"), _qdq_bound(op, mx, dtype, "input_max")
    if round_mode not in _QDQ_ROUND:
        raise InvalidArgumentError(f"{op}: round_mode must be 'HALF_TO_EVEN' or 'HALF_UP', got {round_mode!r}")
    num_bits = int(num_bits)
    if not 0 < num_bits < (62 if signed_input else 63):
        raise InvalidArgumentError(f"{op}: num_bits is out of range: {num_bits} with signed_input "
                                   f"{bool(signed_input)} (1 to {61 if signed_input else 62})")
    rank = len(aval_of(x).shape)
    if axis is not None:
        axis = int(axis)
        if axis < 0:   # (TF's wrapper: axis %= rank; None, not -1, means one range for the whole tensor)
            if rank == 0:
                raise InvalidArgumentError(f"{op}: axis {axis} of a scalar input; use axis=None")
            axis %= rank
        if axis >= rank:
            raise InvalidArgumentError(f"{op}: axis {axis} needs an input of rank at least {axis + 1}: "
                                       f"Shape must be at least rank {axis + 1} but is rank {rank}")
    if range_given:
        if axis is not None and len(aval_of(mn).shape) != 1:
            raise InvalidArgumentError(f"{op}: Shape must be rank 1 for input_min_tensor when the axis is "
                                       f"specified, got shape {list(aval_of(mn).shape)}")
        # TF 2.21 requires scalar bounds whenever range_given, also with an axis (where the bounds are
        # rank 1 by the check above): a per-axis given range always fails there, so it fails here.
        for what, v in (("input_min", mn), ("input_max", mx)):
            if aval_of(v).shape != ():
                raise InvalidArgumentError(f"{op}: {what} must be a scalar. (shape {list(aval_of(v).shape)}"
                                           + (", with axis: TF 2.21 supports no per-axis given range)"
                                              if axis is not None else ")"))
        from .core.primitive import bind
        from .core.primitives import assert_op as AS
        # a value check: raised when the op runs (eagerly now, traced on every call)
        bind(AS.assert_p, _M.less_equal(mn, mx), mn, mx,
             template=(f"{op}: Invalid range: input_min ", None, " > input_max ", None), summarize=3)
    return mn, mx, num_bits, axis


def _qdq_forward(x, mn, mx, signed_input, num_bits, range_given, round_mode, narrow_range, axis):
    """TF's QuantizeAndDequantize{One,Per}ScaleImpl in the input's dtype."""
    T = aval_of(x).dtype.type
    rank = len(aval_of(x).shape)
    if not range_given:
        # the range is the input's own (per slice along ``axis``). NaN: TF's Eigen min/max skip or keep a
        # NaN depending on where it sits in a vector packet; tapeflow's reductions propagate it (every
        # output NaN), see docs/differences.md
        red = None if axis is None else [a for a in range(rank) if a != axis]
        mn = _M.reduce_min(x, axis=red, keepdims=axis is not None)
        mx = _M.reduce_max(x, axis=red, keepdims=axis is not None)
    # the integer grid (TF's int64 bounds, converted to T as C++ converts them)
    half = 1 << (num_bits - 1)
    qmin = (-half + 1 if narrow_range else -half) if signed_input else 0
    qmax = half - 1 if signed_input else (1 << num_bits) - 1
    qmin_t, qmax_t, big = T(qmin), T(qmax), T(np.finfo(T).max)
    # ComputeQuantizationRange: the largest scale that maps [min, max] into [qmin, qmax] keeping 0 at 0;
    # a side whose bound has the wrong sign (or is 0) does not restrict (the dtype's max)
    s_min = _M.where(_M.greater(_M.multiply(qmin_t, mn), T(0)), _M.divide(qmin_t, mn), big)
    s_max = _M.where(_M.greater(_M.multiply(qmax_t, mx), T(0)), _M.divide(qmax_t, mx), big)
    from_min = _M.less(s_min, s_max)   # (ties take the max side, as TF)
    scale = _M.where(from_min, s_min, s_max)
    inv = _M.where(from_min, _M.divide(mn, qmin_t), _M.divide(mx, qmax_t))
    v = x
    if range_given:
        # the other side moved onto the grid; Eigen's cwiseMin(max).cwiseMax(min) as std::min/std::max
        # ((b < a) ? b : a): a NaN input stays NaN and the sign of a zero is kept as TF keeps it
        hi = _M.where(from_min, _M.multiply(qmax_t, inv), mx)
        lo = _M.where(from_min, mn, _M.multiply(qmin_t, inv))
        v = _M.where(_M.less(hi, v), hi, v)
        v = _M.where(_M.less(v, lo), lo, v)
    v = _M.multiply(v, scale)
    # Eigen's scalar_round_half_to_even_op (rint) or scalar_round_up_op (floor(v + 0.5) in T)
    v = _M.round(v) if round_mode == "HALF_TO_EVEN" else _round_half_up(v, T)
    return _M.multiply(v, inv)


def _round_half_up(v, T):
    """floor(v + 0.5) rounded in T, as TF's scalar_round_up_op, without adding to the product ``v``: the
    numba backend compiles with fastmath 'contract', which makes x * scale + 0.5 one FMA (rounded once,
    so a last bit off TF's). Only floor/compare/select touch ``v``; the sums use floor(v), never a product.
    With p the mantissa bits: below 2^(p-1), v + 0.5 is exact except at pred(0.5) (it rounds to 1.0,
    a tie to even), so the result is floor(v) + (v >= floor(v) + 0.5); from 2^(p-1) on v is an integer
    and v + 0.5 rounds as floor(v) + 0.5 does (an odd v below 2^p goes up by one, ties to even)."""
    f = _M.floor(v)
    small = _M.add(f, _M.cast(_M.greater_equal(v, _M.add(f, T(0.5))), T))
    small = _M.where(_M.equal(v, np.nextafter(T(0.5), T(0))), T(1), small)
    big = _M.floor(_M.add(f, T(0.5)))
    return _M.where(_M.less(_M.abs(v), T(2.0 ** (np.finfo(T).nmant))), small, big)


def _qdq_mask(op, x, mn, mx, axis):
    """QuantizeAndDequantizeV4Grad's mask: min <= x <= max for the op's *given* bounds (also when
    range_given is False: TF's gradient reads the bound inputs, not the range it used)."""
    shape = tuple(aval_of(x).shape)
    if axis is None:
        if aval_of(mn).shape != ():
            raise InvalidArgumentError(f"{op} gradient: input_min must be a scalar if axis is unspecified, "
                                       f"got shape {list(aval_of(mn).shape)}")
    else:
        for what, v in (("min", mn), ("max", mx)):
            n = aval_of(v).shape[0] if len(aval_of(v).shape) else None
            if n != shape[axis]:
                raise InvalidArgumentError(f"{op} gradient: {what} has incorrect size, expected {shape[axis]} "
                                           f"was {n}")
        bshape = [-1] + [1] * (len(shape) - axis - 1)
        mn, mx = _A.reshape(mn, bshape), _A.reshape(mx, bshape)
    return _M.logical_and(_M.greater_equal(x, mn), _M.less_equal(x, mx))


def _qdq(op, v4, input, input_min, input_max, signed_input, num_bits, range_given, round_mode,  # noqa: A002
         narrow_range, axis):
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    mn, mx, num_bits, axis = _qdq_checks(op, x, input_min, input_max, signed_input, num_bits, range_given,
                                         round_mode, axis)
    args = (bool(signed_input), num_bits, bool(range_given), round_mode, bool(narrow_range), axis)

    @custom_gradient
    def qdq(x, mn, mx):
        def grad(g):
            if not v4:   # the deprecated op's gradient passes straight through, none for the bounds
                return g, None, None
            keep = _qdq_mask(op, x, mn, mx, axis)
            return (_M.multiply(g, _M.cast(keep, aval_of(x).dtype)), _A.zeros_like(mn), _A.zeros_like(mx))
        return _qdq_forward(x, mn, mx, *args), grad
    return qdq(x, mn, mx)


def quantize_and_dequantize_v2(input, input_min, input_max, signed_input=True, num_bits=8,  # noqa: A002
                               range_given=False, round_mode="HALF_TO_EVEN", name=None, narrow_range=False,
                               axis=None):
    """Quantizes then dequantizes float32/float64 ``input`` (TF's QuantizeAndDequantizeV4 kernel).

    The range is [input_min, input_max] with ``range_given`` (scalars; the input is clamped to the
    adjusted range), else the input's own min/max (per slice along ``axis``). The scale is the largest
    that maps the range into the integer grid [-2^(b-1) (+1 with narrow_range), 2^(b-1) - 1]
    (signed) or [0, 2^b - 1] keeping 0 at 0: the more restrictive side sets it, the other side moves
    onto the grid. Values are scaled, rounded (``round_mode`` HALF_TO_EVEN or HALF_UP) and scaled back.
    The gradient passes where input_min <= input <= input_max (the given bounds, as TF), else 0; the
    bounds get zeros."""
    return _qdq("quantize_and_dequantize_v2", True, input, input_min, input_max, signed_input, num_bits,
                range_given, round_mode, narrow_range, axis)


def quantize_and_dequantize(input, input_min, input_max, signed_input=True, num_bits=8,  # noqa: A002
                            range_given=False, round_mode="HALF_TO_EVEN", name=None, narrow_range=False,
                            axis=None):
    """Deprecated in TF (use quantize_and_dequantize_v2): the same values (TF's QuantizeAndDequantizeV2
    kernel), with the gradient passing straight through (none for the bounds)."""
    return _qdq("quantize_and_dequantize", False, input, input_min, input_max, signed_input, num_bits,
                range_given, round_mode, narrow_range, axis)


_REFUSED = {"quantize", "dequantize", "quantized_concat"}


def __getattr__(name):
    if name == "experimental":   # (TF's SavedModel quantizer: tapeflow/_unsupported.py)
        from ._unsupported import UnsupportedNamespace
        return UnsupportedNamespace("quantization.experimental")
    if name in _REFUSED:
        from ._unsupported import UnsupportedFeatureError
        raise UnsupportedFeatureError(
            f"tf.quantization.{name}: tapeflow does not implement quantized dtypes (qint8, quint8, ...) or "
            "TF's quantize/dequantize kernels; the fake-quantization ops (fake_quant_with_min_max_*) and "
            "quantize_and_dequantize_v2 (float in, float out) are here")
    raise AttributeError(f"module 'tapeflow.quantization' has no attribute {name!r}")
