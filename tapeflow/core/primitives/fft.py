"""The discrete Fourier transforms (wave 21): one primitive, ``fft``, for tf.signal's twelve
(fft/ifft, rfft/irfft over the last 1, 2 or 3 axes).

One primitive with params rather than twelve: the twelve differ only in direction, in which
side is real, and in how many trailing axes they transform, and their vjps are each other
(the adjoint of a forward transform is N times the inverse one; of rfft, the inverse of its
zero-extended spectrum; of irfft, rfft weighted by the Hermitian multiplicities), so one rule
and one vjp written once cover all. No composition of real ops gives an FFT (a DFT as a
matmul would be O(N^2) and not NumPy's bits).

params: ``kind`` "fft" | "ifft" | "rfft" | "irfft"; ``ndims`` the trailing axes transformed;
``lengths`` the transform's lengths (a tuple of ``ndims`` ints): for fft/ifft the input's own,
for rfft the real signal's (the input is cropped or zero-padded to them, as TF's fft_length),
for irfft the real output's (the input's last axis is cropped or zero-padded to
``lengths[-1] // 2 + 1``, its other axes to ``lengths``).

Kernels: NumPy's pocketfft (NumPy >= 2 transforms complex64/float32 in single precision, as
TF's kernels; the last bits may differ from TF's own FFT). Gradients follow TF's convention for
complex values (see ``elementwise._cj``): a real loss's gradient is dL/dx + i dL/dy.
"""
from __future__ import annotations

import numpy as np

from ..aval import Aval, fmt_shape
from ..primitive import Primitive, bind, aval_of
from ...errors import InvalidArgumentError, InvalidArgumentTypeError
from . import elementwise as E
from . import indexing as I
from . import shape as S

_KINDS = ("fft", "ifft", "rfft", "irfft")
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {v: k for k, v in _COMPLEX_OF.items()}
_NAMES = {"fft": "FFT", "ifft": "IFFT", "rfft": "RFFT", "irfft": "IRFFT"}


def _in_lengths(kind, lengths):
    """The trailing dims the kernel reads from its input (after cropping or padding)."""
    if kind == "irfft":
        return tuple(lengths[:-1]) + (lengths[-1] // 2 + 1,)
    return tuple(lengths)


def _out_lengths(kind, lengths):
    if kind == "rfft":   # (TF 2.21: a length-0 rfft has no bins, not 0 // 2 + 1)
        return tuple(lengths[:-1]) + (lengths[-1] // 2 + 1 if lengths[-1] else 0,)
    return tuple(lengths)


def _axes(ndims):
    return tuple(range(-ndims, 0))


def _fft_kernel(x, kind, ndims, lengths):
    x = _fit_np(x, _in_lengths(kind, lengths))
    if x.size == 0 or 0 in lengths:   # (pocketfft refuses empty transforms; TF returns zeros)
        shape = x.shape[:x.ndim - ndims] + _out_lengths(kind, lengths)
        return np.zeros(shape, _REAL_OF[x.dtype] if kind == "irfft" else
                        _COMPLEX_OF.get(x.dtype, x.dtype))
    ax = _axes(ndims)
    if kind == "fft":
        return np.fft.fftn(x, axes=ax)
    if kind == "ifft":
        return np.fft.ifftn(x, axes=ax)
    if kind == "rfft":
        return np.fft.rfftn(x, axes=ax)
    return np.fft.irfftn(x, s=lengths, axes=ax)


def _fit_np(x, dims):
    """``x`` with its trailing axes cropped or zero-padded to ``dims``."""
    n = len(dims)
    have = x.shape[x.ndim - n:]
    if have == tuple(dims):
        return x
    x = x[(Ellipsis,) + tuple(slice(0, d) for d in dims)]
    pad = [(0, 0)] * (x.ndim - n) + [(0, d - h) for d, h in zip(dims, x.shape[x.ndim - n:])]
    return np.pad(x, pad) if any(b for _, b in pad) else x


def _fit(x, dims):
    """``_fit_np`` in tapeflow ops (a gather of the kept part, a pad), for the vjps."""
    shape = aval_of(x).shape
    n = len(dims)
    have = shape[len(shape) - n:]
    if tuple(have) == tuple(dims):
        return x
    if any(h > d for h, d in zip(have, dims)):
        x = I.getitem(x, (Ellipsis,) + tuple(slice(0, d) for d in dims))
        have = tuple(min(h, d) for h, d in zip(have, dims))
    if any(h < d for h, d in zip(have, dims)):
        pads = tuple((0, 0) for _ in range(len(shape) - n)) + tuple((0, d - h) for h, d in zip(have, dims))
        x = bind(S.pad_p, x, paddings=pads, constant_values=0)
    return x


def _fft_abstract(x, kind, ndims, lengths):
    name = _NAMES[kind] + ("" if ndims == 1 else f"{ndims}D")
    if kind == "rfft":
        if x.dtype not in _COMPLEX_OF:
            raise InvalidArgumentTypeError(f"{name}: requires float32 or float64 inputs, got {x.dtype.name} "
                                           f"{fmt_shape(x.shape)} (TF 2.21's ValueError); cast first, or use "
                                           "tf.signal.fft for complex signals")
        out = _COMPLEX_OF[x.dtype]
    else:
        if x.dtype.kind != "c":
            raise InvalidArgumentTypeError(
                f"{name}: requires complex64 or complex128 inputs, got {x.dtype.name} {fmt_shape(x.shape)}; "
                + ("use tf.signal.rfft for a real signal, or tf.complex(x, tf.zeros_like(x))" if kind != "irfft"
                   else "irfft inverts rfft's half spectrum"))
        out = _REAL_OF[x.dtype] if kind == "irfft" else x.dtype
    if x.ndim < ndims:
        raise InvalidArgumentError(f"{name}: input must have rank of at least {ndims} but got: {fmt_shape(x.shape)}")
    if len(lengths) != ndims or any(not isinstance(n, (int, np.integer)) or n < 0 for n in lengths):
        raise InvalidArgumentError(f"{name}: fft_length must be {ndims} non-negative ints, got {list(lengths)}")
    if kind in ("fft", "ifft") and tuple(x.shape[x.ndim - ndims:]) != tuple(lengths) \
            and None not in x.shape[x.ndim - ndims:]:
        raise InvalidArgumentError(f"{name}: lengths {list(lengths)} differ from the input's trailing dims "
                                   f"{fmt_shape(x.shape)}")
    return Aval(tuple(x.shape[:x.ndim - ndims]) + _out_lengths(kind, lengths), out)


def _size(lengths):
    return int(np.prod(lengths)) if lengths else 1


def _fft_vjp(g, out, x, kind, ndims, lengths):
    if E._is_const(x):
        return (None,)
    xshape = aval_of(x).shape
    have = tuple(xshape[len(xshape) - ndims:])
    n = _size(lengths)
    if kind == "fft":   # y = F x: the adjoint F^H = N * ifft
        gx = E.mul(bind(fft_p, g, kind="ifft", ndims=ndims, lengths=lengths), float(n))
    elif kind == "ifft":   # y = F^H x / N: the adjoint F / N
        gx = E.mul(bind(fft_p, g, kind="fft", ndims=ndims, lengths=lengths), 1.0 / n)
    elif kind == "rfft":
        # y = the first lengths[-1] // 2 + 1 bins of F x (x real): the adjoint is Re(F^H) of the
        # spectrum zero-extended to the full length, i.e. N * Re(ifft(g extended))
        full = _fit(g, lengths)
        gx = E.mul(bind(E.real_p, bind(fft_p, full, kind="ifft", ndims=ndims, lengths=lengths)), float(n))
    else:
        # y = irfft(x): each bin 0 < k < N/2 of the half spectrum stands for itself and its mirror
        # (a weight 2), bins 0 and N/2 (N even) for themselves; their imaginary parts are dropped by
        # the transform, and rfft(g) is real there, so the gradient is rfft(g) * weight / N
        last = lengths[-1]
        w = np.full(last // 2 + 1, 2.0)
        w[0] = 1.0
        if last % 2 == 0:
            w[-1] = 1.0
        spec = bind(fft_p, g, kind="rfft", ndims=ndims, lengths=lengths)
        gx = E.mul(spec, (w / n).astype(aval_of(spec).dtype))
    return (_fit(gx, have),)


fft_p = Primitive("fft", _fft_kernel, _fft_abstract, _fft_vjp, aliases=False, complex=True,
                  doc="kind fft|ifft|rfft|irfft over the last ndims axes; lengths: the transform's lengths "
                      "(rfft's real input, irfft's real output), as TF's fft_length")
