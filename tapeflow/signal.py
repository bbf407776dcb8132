"""tf.signal (wave 21): the FFTs (one primitive, core/primitives/fft.py) and, composed of them
and of tapeflow ops, TF 2.21's spectral ops: frame, overlap_and_add, the windows, stft and
inverse_stft, mel weight matrices, MFCCs, the DCTs and MDCTs."""
from __future__ import annotations

import numpy as np

from .core.primitive import bind, aval_of
from .core.primitives import elementwise as _E
from .core.primitives.fft import fft_p as _fft_p
from .core.tensor import Tensor, convert_to_tensor
from .errors import InvalidArgumentError, InvalidArgumentTypeError
from .ops import array_ops as _A
from .ops import math_ops as _M


def _t(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _static_lengths(name, fft_length, ndims):
    """fft_length as a tuple of ints: it sets the result's shape, so it must be known when the
    op runs (a Python list, an array, a concrete tensor; inside tapeflow.function a constant)."""
    v = _A.get_static_value(fft_length)
    if v is None:
        raise InvalidArgumentTypeError(f"{name}: fft_length must be known when the op is built (a list of ints or "
                                       "a constant tensor); it sets the result's shape")
    v = np.asarray(v)
    if v.shape != (ndims,) or v.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{name}: fft_length must have shape [{ndims}] (ints), got {v.tolist()!r}")
    if (v < 0).any():   # TF 2.21's text
        i = int(np.argmax(v < 0))
        raise InvalidArgumentError(f"{name}: fft_length[{i}] must >= 0, but got: {int(v[i])}")
    return tuple(int(n) for n in v)


def _c2c(kind, ndims, name):
    def op(input, name=None):  # noqa: A002
        x = _t(input)
        shape = aval_of(x).shape
        if len(shape) < ndims:
            raise InvalidArgumentError(f"{op.__name__}: input must have rank of at least {ndims} but got: "
                                       f"{list(shape)}")
        lengths = tuple(shape[len(shape) - ndims:])
        if None in lengths:
            raise InvalidArgumentError(f"{op.__name__}: the transformed dims must be known, got {list(shape)}")
        return bind(_fft_p, x, kind=kind, ndims=ndims, lengths=lengths)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"tf.signal.{name}: the {'inverse ' if kind == 'ifft' else ''}discrete Fourier transform over "
                  f"the last {ndims} axes of a complex tensor" + (" (scaled by 1/N, as TF)" if kind == "ifft" else ""))
    return op


def _real(kind, ndims, name):
    def op(input_tensor, fft_length=None, name=None):
        x = _t(input_tensor)
        shape = aval_of(x).shape
        if len(shape) < ndims:
            if not shape:   # TF 2.21's ValueError for a scalar
                raise ValueError(f"Shape {tuple(shape)} must have rank at least {ndims}")
            raise InvalidArgumentError(f"{op.__name__}: input must have rank of at least {ndims} but got: "
                                       f"{list(shape)}")
        d = aval_of(x).dtype
        if kind == "rfft" and d not in _FLOATS or kind == "irfft" and d.kind != "c":
            want = "tf.float32 or tf.float64" if kind == "rfft" else "tf.complex64 or tf.complex128"
            raise ValueError(f"{_NAME[kind]} requires {want} inputs, got: {aval_of(x).dtype.name} tensor "
                             f"of shape {list(shape)} (TF 2.21's ValueError)")
        if fft_length is None:
            dims = tuple(shape[len(shape) - ndims:])
            if None in dims:
                raise InvalidArgumentError(f"{op.__name__}: the transformed dims must be known, got {list(shape)}")
            # TF: rfft's length is the input's; irfft's last is 2 * (n - 1), the even signal
            lengths = dims if kind == "rfft" else dims[:-1] + (max(2 * (dims[-1] - 1), 0),)
        else:
            lengths = _static_lengths(op.__name__, fft_length, ndims)
        return bind(_fft_p, x, kind=kind, ndims=ndims, lengths=lengths)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"tf.signal.{name} over the last {ndims} axes; fft_length (default: " +
                  ("the input's dims" if kind == "rfft" else "the input's, 2 * (n - 1) for the last") +
                  ") crops or zero-pads the " + ("input" if kind == "rfft" else "half spectrum") + ", as TF")
    return op


_NAME = {"rfft": "RFFT", "irfft": "IRFFT"}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

fft, ifft = _c2c("fft", 1, "fft"), _c2c("ifft", 1, "ifft")
fft2d, ifft2d = _c2c("fft", 2, "fft2d"), _c2c("ifft", 2, "ifft2d")
fft3d, ifft3d = _c2c("fft", 3, "fft3d"), _c2c("ifft", 3, "ifft3d")
rfft, irfft = _real("rfft", 1, "rfft"), _real("irfft", 1, "irfft")
rfft2d, irfft2d = _real("rfft", 2, "rfft2d"), _real("irfft", 2, "irfft2d")
rfft3d, irfft3d = _real("rfft", 3, "rfft3d"), _real("irfft", 3, "irfft3d")


# -- the N-d FFTs (wave 22): TF 2.21's signal.fftnd/ifftnd/rfftnd/irfftnd, composed on the fft primitive --
# The ``fft`` record transforms the trailing ``ndims`` axes with ``lengths``; ``axes`` anywhere else is a
# transpose that carries them to the end (in the given order: rfftnd halves the last one named) and back,
# so no new primitive is needed and the gradient is the tape's (transpose's vjp is the inverse permutation).
# TF 2.21 registers no CPU kernel for FFTND (NotFoundError on every call); its GPU kernel takes only
# successive trailing axes, ranks 1-3. tapeflow computes what TF's op doc describes (NumPy's fftn: any
# distinct axes, any rank), which equals TF's GPU kernel wherever that one runs (docs/differences.md).

_NORMS = ("backward", "forward", "ortho")


def _nd_axes(name, shape, axes):
    rank = len(shape)
    if axes is None:
        axes = list(range(rank))
    else:
        v = _A.get_static_value(axes)
        if v is None:
            raise InvalidArgumentTypeError(f"{name}: axes must be known when the op is built (a list of ints); "
                                           "they set the result's shape")
        v = np.asarray(v)
        if v.ndim > 1 or v.size and v.dtype.kind not in "iu":
            raise InvalidArgumentError(f"{name}: axes must be a list of ints, got {v.tolist()!r}")
        axes = [int(a) for a in v.reshape(-1)]
    if not axes:
        raise InvalidArgumentError(f"{name}: axes must name at least one axis of the input (shape {list(shape)})")
    if len(axes) > rank:   # TF 2.21's text
        raise InvalidArgumentError(f"{name}: Input must have rank of at least {len(axes)} but got: {list(shape)}")
    norm = []
    for a in axes:
        if not -rank <= a < rank:
            raise InvalidArgumentError(f"{name}: axis {a} is out of range for an input of rank {rank} "
                                       f"(shape {list(shape)})")
        norm.append(a % rank)
    if len(set(norm)) != len(norm):
        raise InvalidArgumentError(f"{name}: axes {axes} name an axis twice")
    return norm


def _nd(kind, name):
    real_in = kind == "rfft"

    def op(input_tensor, fft_length=None, axes=None, norm=None, name=None):
        x = _t(input_tensor)
        d = aval_of(x).dtype
        if kind == "rfft" and d not in _FLOATS or kind == "irfft" and d.kind != "c":
            want = "tf.float32 or tf.float64" if kind == "rfft" else "tf.complex64 or tf.complex128"
            raise ValueError(f"{_NAME[kind]} requires {want} inputs, got: {d.name} tensor of shape "
                             f"{list(aval_of(x).shape)} (TF 2.21's ValueError)")
        if kind in ("fft", "ifft") and d.kind != "c":
            raise InvalidArgumentTypeError(
                f"{op.__name__}: requires complex64 or complex128 inputs, got {d.name} {list(aval_of(x).shape)}"
                " (TF 2.21: InvalidArgumentError, Tcomplex); use tf.signal.rfftnd for a real signal, or "
                "tf.complex(x, tf.zeros_like(x))")
        if norm is None:
            norm = "backward"
        if norm not in _NORMS:   # (TF 2.21 silently leaves an unknown norm unscaled)
            raise ValueError(f"{op.__name__}: norm must be one of {list(_NORMS)}, got {norm!r}")
        shape = aval_of(x).shape
        ax = _nd_axes(op.__name__, shape, axes)
        dims = tuple(shape[a] for a in ax)
        if fft_length is None:
            if None in dims:
                raise InvalidArgumentError(f"{op.__name__}: the transformed dims must be known, got {list(shape)}")
            # TF: the input's dims; irfftnd's last is 2 * (n - 1), the even signal
            lengths = dims if kind != "irfft" else dims[:-1] + (max(2 * (dims[-1] - 1), 0),)
        else:
            lengths = _static_lengths(op.__name__, fft_length, len(ax))
        rank, k = len(shape), len(ax)
        perm = [a for a in range(rank) if a not in ax] + ax
        moved = perm != list(range(rank))
        if moved:
            x = _A.transpose(x, perm)
        if kind in ("fft", "ifft"):
            x = _fit_trailing(x, lengths)
        n = float(np.prod(lengths)) if lengths else 1.0
        # TF scales the (padded) input: forward by 1/n (1/sqrt(n) ortho) before a forward transform,
        # by n (sqrt(n)) before an inverse one, whose kernel divides by n
        scale = {"backward": 1.0, "forward": 1.0 / n if n else 1.0, "ortho": 1.0 / np.sqrt(n) if n else 1.0}[norm]
        if kind in ("ifft", "irfft") and norm != "backward":
            scale = n if norm == "forward" else float(np.sqrt(n))
        if scale != 1.0:
            x = _M.multiply(x, _M.cast(scale, aval_of(x).dtype))
        y = bind(_fft_p, x, kind=kind, ndims=k, lengths=tuple(lengths))
        if moved:
            y = _A.transpose(y, list(np.argsort(perm)))
        return y
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"tf.signal.{name} (TF 2.21's signature): the {'real ' if real_in else ''}"
                  f"{'inverse ' if kind in ('ifft', 'irfft') else ''}DFT over ``axes`` (default: all), each "
                  "cropped or zero-padded to ``fft_length`` (default: the input's dims" +
                  (", 2 * (n - 1) for the last" if kind == "irfft" else "") + "); ``norm`` backward (default), "
                  "forward or ortho, as NumPy's. Composed on the fft primitive (a transpose moves the axes last).")
    return op


def _fit_trailing(x, dims):
    from .core.primitives.fft import _fit
    return _fit(x, dims)


fftnd, ifftnd = _nd("fft", "fftnd"), _nd("ifft", "ifftnd")
rfftnd, irfftnd = _nd("rfft", "rfftnd"), _nd("irfft", "irfftnd")


def _raw_nd(fn, name, attr=None):
    """tf.fftnd & co. (TF 2.21's raw ops, gen_spectral_ops): fft_length and axes required; rfftnd's
    Tcomplex / irfftnd's Treal must be the input's precision (TF's kernel: "Wrong types for ... FFT")."""
    opname = name

    def op(input, fft_length, axes, dtype=None):  # noqa: A002
        y = fn(input, fft_length, axes)
        if dtype is not None:
            from .core.dtypes import as_dtype
            if as_dtype(dtype).np != aval_of(y).dtype:
                raise InvalidArgumentError(f"{opname}: {attr}={as_dtype(dtype).name} does not match the input's "
                                           f"precision (Wrong types for {'forward' if attr == 'Tcomplex' else 'backward'}"
                                           f" real FFT: the result is {aval_of(y).dtype.name})")
        return y
    if attr is None:
        def raw(input, fft_length, axes, name=None):  # noqa: A002
            return op(input, fft_length, axes)
    elif attr == "Tcomplex":
        def raw(input, fft_length, axes, Tcomplex="complex64", name=None):  # noqa: A002,N803
            return op(input, fft_length, axes, Tcomplex)
    else:
        def raw(input, fft_length, axes, Treal="float32", name=None):  # noqa: A002,N803
            return op(input, fft_length, axes, Treal)
    raw.__name__ = raw.__qualname__ = name
    raw.__doc__ = f"tf.{name} (TF 2.21's raw op): tf.signal.{name} with fft_length and axes required"
    return raw


raw_fftnd, raw_ifftnd = _raw_nd(fftnd, "fftnd"), _raw_nd(ifftnd, "ifftnd")
raw_rfftnd, raw_irfftnd = _raw_nd(rfftnd, "rfftnd", "Tcomplex"), _raw_nd(irfftnd, "irfftnd", "Treal")


def _shift(x, axes, sign, name):
    x = _t(x)
    shape = aval_of(x).shape
    if axes is None:
        axes = list(range(len(shape)))
    elif isinstance(axes, (int, np.integer)):
        axes = [int(axes)]
    else:
        axes = [int(a) for a in _A.get_static_value(axes).reshape(-1)] if not isinstance(axes, (list, tuple)) \
            else [int(a) for a in axes]
    if not axes:
        return x
    shifts = []
    for a in axes:
        n = shape[a]
        if n is None:
            raise InvalidArgumentError(f"{name}: dim {a} of {list(shape)} must be known")
        shifts.append(n // 2 if sign > 0 else -(n // 2))
    return _A.roll(x, shifts, axes)


def fftshift(x, axes=None, name=None):
    """tf.signal.fftshift: the zero-frequency bin moved to the centre (a roll by n // 2 per axis)."""
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x, axes=None, name=None):
    """tf.signal.ifftshift: fftshift's inverse (a roll by -(n // 2) per axis)."""
    return _shift(x, axes, -1, "ifftshift")


# TF's names tapeflow leaves out say why
from ._unsupported import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("signal", "tapeflow.signal")


# -- framing and reconstruction ----------------------------------------------------------------------

def _static_int(name, what, v):
    s = _A.get_static_value(v)
    if s is None or np.ndim(s) != 0 or np.asarray(s).dtype.kind not in "iu":
        raise InvalidArgumentTypeError(f"{name}: {what} must be a scalar int known when the op is built, got {v!r}")
    return int(s)


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """tf.signal.frame: ``axis`` replaced by [num_frames, frame_length] windows taken every frame_step
    samples (a gather at static indices, so its gradient scatters back; run-time ones for an axis an
    input_signature leaves None); pad_end pads the end with pad_value so the last frames start inside
    the signal, as TF."""
    x = _t(signal)
    shape = aval_of(x).shape
    if not shape:
        raise ValueError("Shape () must have rank at least 1")
    fl = _static_int("frame", "frame_length", frame_length)
    fs = _static_int("frame", "frame_step", frame_step)
    ax = _static_int("frame", "axis", axis)
    if fs == 0 or fl < 0:   # (the frame count divides by the step: a ZeroDivisionError named no op)
        raise InvalidArgumentError(f"frame: frame_step must not be 0 and frame_length must be >= 0, got frame_length "
                                   f"{fl}, frame_step {fs} (TF: 'Integer division by zero' / 'Requires start <= limit')")
    if not -len(shape) <= ax < len(shape):
        raise InvalidArgumentError(f"frame: axis {ax} is out of range for a signal of rank {len(shape)}")
    ax %= len(shape)
    n = shape[ax]
    if n is None:
        return _traced_frame(x, ax, fl, fs, pad_end, pad_value)
    if pad_end:
        num = -(-n // fs)
        extra = max(0, fl + fs * (num - 1) - n)
        if extra:
            pads = [[0, 0]] * len(shape)
            pads[ax] = [0, extra]
            x = _A.pad(x, pads, constant_values=pad_value)
    else:
        num = max(0, 1 + (n - fl) // fs)
    idx = (np.arange(num)[:, None] * fs + np.arange(fl)[None, :]).astype(np.int32)
    return _A.gather(x, idx, axis=ax)


def _run_time_dims(x):
    """x's dims: ints where known, int64 scalars of its run-time shape where an input_signature left None."""
    shape = aval_of(x).shape
    st = _A.shape(x, out_type=np.int64) if None in shape else None
    return [st[d] if n is None else n for d, n in enumerate(shape)]


def _zeros(dims, dtype):
    d = np.dtype(dtype)
    if d.kind == "c":   # (a fill of run-time dims takes real dtypes)
        return _M.cast(_A.zeros(dims, np.float64), d)
    return _A.zeros(dims, d)


def _traced_frame(x, ax, fl, fs, pad_end, pad_value):
    """frame of an axis an input_signature leaves None: the frame count is a value, so the window starts
    are a range of it (the result's frame axis None), gathered as the static path does; pad_end appends
    a fill of the run-time padding length."""
    n = _A.shape(x, out_type=np.int64)[ax]
    if pad_end:
        num = -((-n) // fs)
        extra = _M.maximum(fl + fs * (num - 1) - n, np.int64(0))
        dims = _run_time_dims(x)
        dims[ax] = extra
        fill = _M.add(_zeros(dims, aval_of(x).dtype), _M.cast(pad_value, aval_of(x).dtype))
        x = _A.concat([x, fill], ax)
    else:
        num = _M.maximum(1 + (n - fl) // fs, np.int64(0))
    starts = _A.range(num, dtype=np.int64) * fs
    idx = _A.expand_dims(starts, 1) + np.arange(fl, dtype=np.int64)[None, :]
    return _A.gather(x, idx, axis=ax)


def _traced_overlap_and_add(x, step):
    """overlap_and_add of frames whose count or length an input_signature leaves None: entry j of frame f
    is added at f * step + j into zeros of the run-time length max(0, (frames - 1) * step + length), a
    scatter-add with the frame axes moved first (TF's reshapes need the sizes as numbers)."""
    r = len(aval_of(x).shape) - 2
    dims = _run_time_dims(x)
    frames, length = (_M.cast(d, np.int64) if isinstance(d, Tensor) else np.int64(d) for d in dims[-2:])
    out_len = _M.maximum(length + step * (frames - 1), np.int64(0))
    pos = _A.expand_dims(_A._axis_positions(x, -2) * step, 1) + _A.expand_dims(_A._axis_positions(x, -1), 0)
    moved = _A.transpose(x, [r, r + 1] + list(range(r)))
    out = _A.tensor_scatter_nd_add(_zeros([out_len] + dims[:-2], aval_of(x).dtype), _A.expand_dims(pos, -1),
                                   moved)
    return _A.transpose(out, list(range(1, r + 1)) + [0])


def overlap_and_add(signal, frame_step, name=None):
    """tf.signal.overlap_and_add: frames [..., frames, frame_length] added at frame_step hops into
    [..., (frames - 1) * frame_step + frame_length] (TF's pad, reshape and sum, ported; a size an
    input_signature leaves None: a scatter-add, _traced_overlap_and_add)."""
    x = _t(signal)
    shape = list(aval_of(x).shape)
    if len(shape) < 2:
        raise ValueError(f"Shape {tuple(shape)} must have rank at least 2")
    if isinstance(frame_step, Tensor) and not aval_of(frame_step).dtype.kind in "iu":
        raise ValueError(f"frame_step must be an integer. Got {aval_of(frame_step).dtype.name}")
    step = _static_int("overlap_and_add", "frame_step", frame_step)
    if step <= 0:   # (TF: "Paddings must be non-negative"; 0 divided by zero here)
        raise InvalidArgumentError(f"overlap_and_add: frame_step must be positive, got {step}")
    outer = shape[:-2]
    frames, length = shape[-2], shape[-1]
    if None in shape:   # (the reshapes below need the sizes: -1 for a None batch is ambiguous with 0 frames)
        return _traced_overlap_and_add(x, step)
    out_len = length + step * (frames - 1)
    if step == length:
        return _A.reshape(x, outer + [out_len])
    segs = -(-length // step)
    x = _A.pad(x, [[0, 0]] * len(outer) + [[0, segs], [0, segs * step - length]])
    x = _A.reshape(x, outer + [frames + segs, segs, step])
    r = len(outer)
    x = _A.transpose(x, list(range(r)) + [r + 1, r, r + 2])
    x = _A.reshape(x, outer + [(frames + segs) * segs, step])
    x = x[..., :(frames + segs - 1) * segs, :]
    x = _A.reshape(x, outer + [segs, frames + segs - 1, step])
    x = _M.reduce_sum(x, -3)
    x = _A.reshape(x, outer + [(frames + segs - 1) * step])
    return x[..., :out_len]


# -- windows -----------------------------------------------------------------------------------------
# Constants of a static length, computed in float64 with NumPy and rounded once to the dtype (TF
# computes them in the dtype, so the last bit may differ from TF's: float32 ulps, checked in tests)

def _window_args(name, window_length, dtype):
    from .core import dtypes as _dt
    d = _dt.as_dtype(dtype)
    if not d.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {d}")
    n = _A.get_static_value(window_length)
    if n is None or np.ndim(n) != 0:
        raise InvalidArgumentTypeError(f"{name}: window_length must be a scalar known when the op is built, got "
                                       f"{window_length!r}")
    if int(n) < 0:   # (an empty window here; TF's range raises)
        raise InvalidArgumentError(f"{name}: window_length must be >= 0, got {int(n)} (TF: 'Requires start <= limit "
                                   "when delta > 0')")
    return int(n), d


def _raised_cosine(name, window_length, periodic, dtype, a, b):
    n, d = _window_args(name, window_length, dtype)
    if n == 1:
        return _A.ones([1], dtype=d)
    p = bool(_A.get_static_value(periodic))
    denom = n + int(p) * (1 - n % 2) - 1   # (TF: L + periodic * even - 1)
    count = np.arange(n, dtype=np.float64)
    w = a - b * np.cos(2 * np.pi * count / denom) if n else np.zeros(0)
    return convert_to_tensor(w.astype(d.np))


def hann_window(window_length, periodic=True, dtype=np.float32, name=None):
    """tf.signal.hann_window: 0.5 - 0.5 cos(2 pi n / N'), N' = L (periodic, even L) or L - 1."""
    return _raised_cosine("hann_window", window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=np.float32, name=None):
    """tf.signal.hamming_window: 0.54 - 0.46 cos(2 pi n / N') (N' as hann_window's)."""
    return _raised_cosine("hamming_window", window_length, periodic, dtype, 0.54, 0.46)


def _kaiser_np(n, beta):
    if n == 1:
        return np.ones(1)
    half = (n - 1) / 2.0
    arg = np.arange(-half, half + 0.1, 1.0)[:n]
    num = beta * np.sqrt(np.maximum(0.0, 1.0 - (arg / half) ** 2))
    return np.i0(num) / np.i0(beta)


def kaiser_window(window_length, beta=12., dtype=np.float32, name=None):
    """tf.signal.kaiser_window: I0(beta sqrt(1 - (2n / (L - 1) - 1)^2)) / I0(beta)."""
    n, d = _window_args("kaiser_window", window_length, dtype)
    return convert_to_tensor(_kaiser_np(n, float(_A.get_static_value(beta))).astype(d.np))


def kaiser_bessel_derived_window(window_length, beta=12., dtype=np.float32, name=None):
    """tf.signal.kaiser_bessel_derived_window: the square roots of the Kaiser window's normalised
    cumulative sums, mirrored."""
    n, d = _window_args("kaiser_bessel_derived_window", window_length, dtype)
    k = _kaiser_np(n // 2 + 1, float(_A.get_static_value(beta)))
    c = np.cumsum(k)
    half = np.sqrt(c[:-1] / c[-1])
    return convert_to_tensor(np.concatenate([half, half[::-1]]).astype(d.np))


def vorbis_window(window_length, dtype=np.float32, name=None):
    """tf.signal.vorbis_window: sin(pi / 2 sin^2(pi (n + 0.5) / L))."""
    n, d = _window_args("vorbis_window", window_length, dtype)
    arg = np.arange(n, dtype=np.float64)
    return convert_to_tensor(np.sin(np.pi / 2.0 * np.sin(np.pi / max(n, 1) * (arg + 0.5)) ** 2).astype(d.np))


# -- short-time Fourier transforms ---------------------------------------------------------------------

def _enclosing_power_of_two(n):
    return int(2 ** np.ceil(np.log(n) / np.log(2.0)))


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window, pad_end=False, name=None):
    """tf.signal.stft: frames of the signal, windowed, through rfft (fft_length default: the
    smallest power of two >= frame_length) -> [..., frames, fft_length // 2 + 1] complex."""
    x = _t(signals)
    if not aval_of(x).shape:
        raise ValueError("Shape () must have rank at least 1")
    fl = _static_int("stft", "frame_length", frame_length)
    n = _enclosing_power_of_two(fl) if fft_length is None else _static_int("stft", "fft_length", fft_length)
    frames = frame(x, fl, frame_step, pad_end=pad_end)
    if window_fn is not None:
        frames = frames * window_fn(fl, dtype=aval_of(frames).dtype)
    return rfft(frames, [n])


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """tf.signal.inverse_stft_window_fn: the window that makes inverse_stft invert stft (the
    forward window over the overlap-added sum of its squares; 0 where that sum is 0)."""
    def inverse_stft_window_fn_inner(frame_length, dtype):
        step = _static_int("inverse_stft_window_fn", "frame_step", frame_step)
        fl = _static_int("inverse_stft_window_fn", "frame_length", frame_length)
        fwd = forward_window_fn(fl, dtype=dtype)
        denom = _M.square(fwd)
        overlaps = -(-fl // step)
        denom = _A.pad(denom, [(0, overlaps * step - fl)])
        denom = _A.reshape(denom, [overlaps, step])
        denom = _M.reduce_sum(denom, 0, keepdims=True)
        denom = _A.tile(denom, [overlaps, 1])
        denom = _A.reshape(denom, [overlaps * step])[:fl]
        return _M.where(_M.equal(denom, 0.0), _A.zeros_like(fwd), fwd / denom)
    return inverse_stft_window_fn_inner


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window, name=None):
    """tf.signal.inverse_stft: irfft of each frame, cropped or zero-padded to frame_length,
    windowed, overlap-added (pass window_fn=inverse_stft_window_fn(frame_step) to invert stft)."""
    s = _t(stfts)
    if len(aval_of(s).shape) < 2:
        raise ValueError(f"Shape {tuple(aval_of(s).shape)} must have rank at least 2")
    fl = _static_int("inverse_stft", "frame_length", frame_length)
    n = _enclosing_power_of_two(fl) if fft_length is None else _static_int("inverse_stft", "fft_length", fft_length)
    real = irfft(s, [n])
    have = aval_of(real).shape[-1]
    if have > fl:
        real = real[..., :fl]
    elif have < fl:
        real = _A.pad(real, [[0, 0]] * (len(aval_of(real).shape) - 1) + [[0, fl - have]])
    if window_fn is not None:
        real = real * window_fn(fl, dtype=aval_of(real).dtype)
    return overlap_and_add(real, frame_step)


# -- mel scale and MFCCs --------------------------------------------------------------------------------

_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(f):
    return _MEL_HIGH_FREQUENCY_Q * _M.log(1.0 + f / _MEL_BREAK_FREQUENCY_HERTZ)


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000, lower_edge_hertz=125.0,
                                upper_edge_hertz=3800.0, dtype=np.float32, name=None):
    """tf.signal.linear_to_mel_weight_matrix: [num_spectrogram_bins, num_mel_bins] triangular
    filters on the mel scale (TF's formula and validation, in ``dtype``; bin 0, DC, is zero)."""
    from .core import dtypes as _dt
    d = _dt.as_dtype(dtype)
    sr = _A.get_static_value(sample_rate) if isinstance(sample_rate, Tensor) else sample_rate
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError("lower_edge_hertz %.1f >= upper_edge_hertz %.1f" % (lower_edge_hertz, upper_edge_hertz))
    if sr is not None:
        if sr <= 0.0:
            raise ValueError(f"sample_rate must be positive. Got: {sr}")
        if upper_edge_hertz > sr / 2:
            raise ValueError("upper_edge_hertz must not be larger than the Nyquist frequency (sample_rate / 2). "
                             f"Got {upper_edge_hertz} for sample_rate: {sr}")
    if not d.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {d}")
    return _mel_matrix(num_mel_bins, num_spectrogram_bins, sample_rate if sr is None else sr, lower_edge_hertz,
                       upper_edge_hertz, d)


def _mel_matrix(num_mel_bins, num_spectrogram_bins, sample_rate, lower_edge_hertz, upper_edge_hertz, d):
    """TF's mel filter bank formula, unvalidated (keras.layers.MelSpectrogram computes it so too)."""
    sample_rate = _M.cast(sample_rate, d)
    zero = convert_to_tensor(0.0, d)
    lower = convert_to_tensor(lower_edge_hertz, d)
    upper = convert_to_tensor(upper_edge_hertz, d)
    linear = _A.linspace(zero, sample_rate / 2.0, num_spectrogram_bins)[1:]
    bins_mel = _A.expand_dims(_hertz_to_mel(linear), 1)
    edges = frame(_A.linspace(_hertz_to_mel(lower), _hertz_to_mel(upper), num_mel_bins + 2), 3, 1)
    lo, ce, up = (_A.reshape(t, [1, num_mel_bins]) for t in _A.split(edges, 3, axis=1))
    lower_slopes = (bins_mel - lo) / (ce - lo)
    upper_slopes = (up - bins_mel) / (up - ce)
    w = _M.maximum(zero, _M.minimum(lower_slopes, upper_slopes))
    return _A.pad(w, [[1, 0], [0, 0]])


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """tf.signal.mfccs_from_log_mel_spectrograms: an orthonormal-scaled DCT-II of the last axis
    (TF's: dct type 2 times rsqrt(2 * num_mel_bins))."""
    x = _t(log_mel_spectrograms)
    n = aval_of(x).shape[-1] if aval_of(x).shape else None
    if n == 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {x!r}")
    d2 = dct(x, type=2)
    return d2 * _M.rsqrt(_M.cast(n, aval_of(d2).dtype) * 2.0)


# -- discrete cosine transforms (TF's FFT formulations, ported) -----------------------------------------

def _validate_dct(x, dct_type, n, axis, norm):
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if dct_type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if dct_type == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        last = aval_of(x).shape[-1] if aval_of(x).shape else None
        if last is not None and last < 2:
            raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")


def _dct(x, type, n, norm):  # noqa: A002
    d = aval_of(x).dtype
    if n is not None:
        seq = aval_of(x).shape[-1]
        x = x[..., 0:n] if n <= seq else _A.pad(x, [[0, 0]] * (len(aval_of(x).shape) - 1) + [[0, n - seq]])
    m = aval_of(x).shape[-1]
    mf = float(m)
    if type == 1:
        return _M.real(rfft(_A.concat([x, x[..., -2:0:-1]], axis=-1)))
    if type == 2:
        k = np.arange(m, dtype=np.float64)
        scale = (2.0 * np.exp(-1j * k * np.pi * 0.5 / mf)).astype(_COMPLEX[d])
        out = _M.real(rfft(x, [2 * m])[..., :m] * scale)
        if norm == "ortho":
            n1 = 0.5 / np.sqrt(mf)
            w = np.full(m, n1 * np.sqrt(2.0))
            w[0] = n1
            out = out * w.astype(d)
        return out
    if type == 3:
        if norm == "ortho":
            n1 = np.sqrt(mf)
            w = np.full(m, n1 * np.sqrt(0.5))
            w[0] = n1
            x = x * w.astype(d)
        else:
            x = x * mf
        k = np.arange(m, dtype=np.float64)
        scale = (2.0 * np.exp(1j * k * np.pi * 0.5 / mf)).astype(_COMPLEX[d])
        return irfft(scale * _M.complex(x, _A.zeros_like(x)), [2 * m])[..., :m]
    out = _dct(x, 2, 2 * m, None)[..., 1::2]
    if norm == "ortho":
        out = out * (np.sqrt(0.5) / np.sqrt(mf))
    return out


_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128,
            np.dtype(np.float16): np.complex64}


def _dct_length(op, x):
    # the transform's length sets its twiddle factors and the rfft's size: a static number here
    if aval_of(x).shape and aval_of(x).shape[-1] is None:
        from .ops.array_ops import _RUNTIME_SIZE
        raise ValueError(f"{op}: the last axis of the input of shape {aval_of(x).shape} has {_RUNTIME_SIZE}")


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """tf.signal.dct: DCT types I-IV of the last axis (TF's rfft formulations; norm None or
    "ortho"; n crops or zero-pads first)."""
    x = _t(input)
    _validate_dct(x, type, n, axis, norm)
    _dct_length("dct", x)
    return _dct(x, type, n, norm)


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """tf.signal.idct: the inverse DCT (types 1-4 are 1, 3, 2, 4; unnormalized except "ortho", as TF)."""
    x = _t(input)
    _validate_dct(x, type, n, axis, norm)
    _dct_length("idct", x)
    return _dct(x, {1: 1, 2: 3, 3: 2, 4: 4}[type], n, norm)


def mdct(signals, frame_length, window_fn=vorbis_window, pad_end=False, norm=None, name=None):
    """tf.signal.mdct: frames of frame_length (a multiple of 4) at half-frame hops, windowed,
    folded and transformed by a DCT-IV -> [..., frames, frame_length // 2]."""
    x = _t(signals)
    if not aval_of(x).shape:
        raise ValueError("Shape () must have rank at least 1")
    fl = _static_int("mdct", "frame_length", frame_length)
    if fl % 4 != 0:
        raise ValueError("The frame length must be a multiple of 4.")
    frames = frame(x, fl, fl // 2, pad_end=pad_end)
    if window_fn is not None:
        frames = frames * window_fn(fl, dtype=aval_of(frames).dtype)
    else:
        frames = frames * (1.0 / np.sqrt(2))
    a, b, c, e = _A.split(frames, 4, axis=-1)
    first = -_A.reverse(c, [-1]) - e
    second = a - _A.reverse(b, [-1])
    return dct(_A.concat([first, second], axis=-1), type=4, norm=norm)


def inverse_mdct(mdcts, window_fn=vorbis_window, norm=None, name=None):
    """tf.signal.inverse_mdct: the DCT-IV back, unfolded, windowed and overlap-added (with the
    vorbis window and norm None/"ortho" it inverts mdct)."""
    x = _t(mdcts)
    if len(aval_of(x).shape) < 2:
        raise ValueError(f"Shape {tuple(aval_of(x).shape)} must have rank at least 2")
    half = aval_of(x).shape[-1]
    if norm is None:
        r = (0.5 / float(half)) * dct(x, type=4)
    elif norm == "ortho":
        r = dct(x, type=4, norm="ortho")
    else:
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
    p, q = _A.split(r, 2, axis=-1)
    real = _A.concat([q, -_A.reverse(q, [-1]), -_A.reverse(p, [-1]), -p], axis=-1)
    if window_fn is not None:
        real = real * window_fn(2 * half, dtype=aval_of(x).dtype)
    else:
        real = real * (1.0 / np.sqrt(2))
    return overlap_and_add(real, half)
