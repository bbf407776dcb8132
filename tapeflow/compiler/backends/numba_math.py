"""Scalar math for the native kernels that LLVM can vectorize.

numba lowers ``np.exp`` on a scalar to a call of libm's ``expf``: without
Intel's SVML (which this llvmlite build does not support: its LLVM lacks the
SVML patch, so installing the runtime library would change nothing) such a
call stops the loop from being vectorized, and a sigmoid over 10,000 x 784
activations costs ~4x what the same loop costs with the inline exp below.

``simd_exp(x)``: exp of a float32 written in plain arithmetic (no calls), so
the loop around it becomes AVX2 code: ``x = n ln2 + r`` (Cody-Waite, ln2 in
two parts so ``r`` is exact), ``e^r`` by Cephes' degree-6 minimax polynomial
on ``|r| <= ln2/2``, and ``2^n`` made from exponent bits in two factors, so
results in the subnormal range (x down to -103.97) come out right too.
Measured error: at most 1 ulp over [-110, 95] (NumPy's float32 exp: 2 ulp);
x > 88.7228 gives inf, x < -103.97 (or -inf) gives 0, NaN stays NaN, as
``np.exp``. Other dtypes (float64) use ``np.exp``.

``simd_tanh(x)``: tanh of a float32 the same way (Cephes' tanhf over
``simd_exp``), at most 1.3 ulp; other dtypes use ``np.tanh``. tanh's record
names it as its scalar form, as exp's names ``simd_exp``.

The generated kernel modules import this module's names (``KERNEL_IMPORTS``)
and carry ``SOURCE_HASH`` in their text, so numba's on-disk cache of a kernel
is dropped when this file changes.
"""
from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["simd_exp", "simd_tanh"]


def simd_exp(x):
    """exp(x); in a numba kernel, the vectorizable form for float32."""
    return np.exp(x)


def simd_tanh(x):
    """tanh(x); in a numba kernel, the vectorizable form for float32."""
    return np.tanh(x)


def _register():
    from llvmlite import ir
    from numba import njit, types
    from numba.extending import intrinsic, overload

    @intrinsic
    def _bits_to_f32(typingctx, x):
        # the float32 whose bit pattern is the low 32 bits of the integer x
        if not isinstance(x, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            v = args[0]
            if x.bitwidth > 32:
                v = builder.trunc(v, ir.IntType(32))
            return builder.bitcast(v, ir.FloatType())
        return types.float32(x), codegen

    f32 = np.float32

    # No fastmath here: the polynomial's order of evaluation is part of its accuracy.
    # LLVM inlines it into the loop (numba's IR-level inline='always' is not needed, and warns)
    @njit(error_model="numpy")
    def _exp_f32(x):
        xc = min(max(x, f32(-104.0)), f32(88.75))   # keeps n within the two-factor scale's range
        n = np.floor(xc * f32(1.4426950408889634) + f32(0.5))
        r = xc - n * f32(0.693359375)                # ln2 = 0.693359375 - 2.12194440e-4, first part exact
        r = r - n * f32(-2.12194440e-4)
        p = f32(1.9875691500e-4)
        p = p * r + f32(1.3981999507e-3)
        p = p * r + f32(8.3334519073e-3)
        p = p * r + f32(4.1665795894e-2)
        p = p * r + f32(1.6666665459e-1)
        p = p * r + f32(5.0000001201e-1)
        p = p * r * r + r + f32(1.0)
        ni = np.int32(n)
        h = ni >> 1                                  # 2^n = 2^h * 2^(n-h): each factor a normal float
        y = p * _bits_to_f32((h + 127) << 23) * _bits_to_f32((ni - h + 127) << 23)
        # past float32's largest exp: inf; below half the smallest subnormal: 0; NaN stays NaN
        y = f32(np.inf) if x > f32(88.72283935546875) else y
        y = f32(0.0) if x < f32(-103.97208404541016) else y
        return x if x != x else y

    @overload(simd_exp)
    def _simd_exp(x):
        if x == types.float32:
            return lambda x: _exp_f32(x)
        return lambda x: np.exp(x)

    # tanh of float32 as libm's tanhf is a call per element (15 ns: TD3's target-policy
    # smoothing, two tanh over a 256x6 batch, spent 46 us in them), and the call keeps
    # the loop scalar. Cephes' tanhf: an odd polynomial below |x| = 0.625, else
    # 1 - 2 / (exp(2|x|) + 1) with the sign of x (no cancellation there: the result is
    # at least 0.55); both are computed and one chosen, so the loop vectorizes.
    # Measured error: at most 1.3 ulp (NumPy's float32 tanh: 1.4); inf gives +-1, NaN
    # stays NaN, and +-0 is returned as it is (the polynomial would turn -0 into +0).
    @njit(error_model="numpy")
    def _tanh_f32(x):
        ax = abs(x)
        z = x * x
        p = f32(-5.70498872745e-3)
        p = p * z + f32(2.06390887954e-2)
        p = p * z - f32(5.37397155531e-2)
        p = p * z + f32(1.33314422036e-1)
        p = p * z - f32(3.33332819422e-1)
        small = p * z * x + x
        big = f32(1.0) - f32(2.0) / (_exp_f32(f32(2.0) * ax) + f32(1.0))
        big = big if x >= f32(0.0) else -big
        y = small if ax < f32(0.625) else big
        return x if x != x or x == f32(0.0) else y

    @overload(simd_tanh)
    def _simd_tanh(x):
        if x == types.float32:
            return lambda x: _tanh_f32(x)
        return lambda x: np.tanh(x)


_register()

with open(__file__, "rb") as _f:
    SOURCE_HASH = hashlib.sha1(_f.read()).hexdigest()[:12]

#: the line every generated kernel module starts with (names used by the records' scalar forms)
KERNEL_IMPORTS = f"from tapeflow.compiler.backends.numba_math import simd_exp, simd_tanh  # numba_math {SOURCE_HASH}"
