"""Elementwise primitives: kernels are NumPy ufuncs, shape rule is broadcasting.

Gradient rules are written in tapeflow ops (``bind``), so they are
differentiable themselves (higher-order gradients) and trace into graphs.
The hot ones also have an array form (``vjp_np``: the same kernels on NumPy
values) for the lean eager backward.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..aval import Aval
from ..primitive import Primitive, bind, aval_of
from . import _rules
from ._rules import shape_of, unbroadcast, unbroadcast_np, is_const as _is_const  # noqa: F401  (used by sibling modules as E.*)
from ...errors import InvalidArgumentError, InvalidArgumentTypeError


# -- registration helpers ------------------------------------------------------

def _ufunc_scalar_form(kernel, n):
    """The numba scalar form of a ufunc kernel, derived from the ufunc itself:
    numba implements NumPy's ufuncs on scalars with NumPy's semantics."""
    return f"np.{kernel.__name__}(" + ", ".join("{%d}" % i for i in range(n)) + ")"


def _elementwise_facts(kernel, n, numba, fresh=None):
    """Record fields every elementwise primitive shares: a ufunc returns a fresh
    array (never a view of an input), and it may fuse into a native loop.
    ``numba``: True derives the scalar form from the ufunc, a string/callable
    gives it, False leaves the op to its kernel (numba declines it). ``fresh``:
    the kernel always returns a new array (default: known for ufuncs only)."""
    if numba is True:
        numba = _ufunc_scalar_form(kernel, n) if isinstance(kernel, np.ufunc) else None
    fresh = isinstance(kernel, np.ufunc) if fresh is None else fresh
    return {"aliases": not fresh, "fusion": "elementwise",
            "lowerings": {"numba": numba} if numba else None}


def _unary(name, kernel, vjp=None, require="f", out_dtype=None, differentiable=True, doc="", numba=True, vjp_np=None,
           complex=False, abstract=None):
    p = Primitive(name, kernel, abstract or _rules.elementwise(name, out_dtype, require), vjp,
                  **_elementwise_facts(kernel, 1, numba), complex=complex,
                  differentiable=differentiable, doc=doc, vjp_np=vjp_np,
                  impl_out=(lambda out, x: kernel(x, out=out)) if isinstance(kernel, np.ufunc) else None)
    return p


def _binary(name, kernel, vjp=None, require=None, out_dtype=None, differentiable=True, doc="", numba=True, vjp_np=None,
            specialize=None, strings=False, complex=None):
    p = Primitive(name, kernel, _rules.elementwise(name, out_dtype, require), vjp, **_elementwise_facts(kernel, 2, numba),
                  differentiable=differentiable, doc=doc, vjp_np=vjp_np, specialize=specialize, numpy_operands="adopt",
                  strings=strings, complex=complex,
                  impl_out=(lambda out, x, y: kernel(x, y, out=out)) if isinstance(kernel, np.ufunc) else None)
    return p


# -- arithmetic ------------------------------------------------------------------

_SCALAR_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _scalar_operator(op):
    """The python backend's lowering of ``op`` (a Python operator: "+", or "-" alone for
    negation) on 0-d float32/float64 values of one dtype and weak Python literals: the
    operator inline, NumPy's scalar arithmetic (the ufunc's IEEE operation and type
    promotion, so the same bits and dtype) at ~0.13 us, where the kernel's ufunc call
    costs ~1 us for a NumPy scalar. An optimizer's bias-correction chain is such
    arithmetic (Adam: 6 ops per step). None otherwise: the kernel is called."""
    def emit(ctx, e, ins, outs):
        out = e.outputs[0].aval
        if len(outs) != 1 or out.shape != () or out.dtype not in _SCALAR_FLOATS:
            return None
        for v in e.inputs:
            if hasattr(v, "val"):              # an ir Literal
                if type(v.val) not in (float, int):
                    return None
            elif v.aval.shape != () or v.aval.dtype != out.dtype:
                return None
        expr = f"{op}{ins[0]}" if len(ins) == 1 else f"{ins[0]} {op} {ins[1]}"
        return [f"{outs[0]} = {expr}"]
    return emit


def add(a, b): return bind(add_p, a, b)
def sub(a, b): return bind(sub_p, a, b)
def mul(a, b): return bind(mul_p, a, b)
def div(a, b): return bind(div_p, a, b)
def neg(a): return bind(neg_p, a)


def _grads2(g, a, b, ga, gb):
    return (None if _is_const(a) or ga is None else unbroadcast(ga, shape_of(a)),
            None if _is_const(b) or gb is None else unbroadcast(gb, shape_of(b)))


def _grads2_np(need, a, b, ga, gb):
    # the array form of _grads2: ``need`` says which operands are differentiated
    # (the shape test first: most operands are not broadcast, and a call costs more)
    return (None if not need[0] else ga if ga.shape == a.shape else unbroadcast_np(ga, a.shape),
            None if not need[1] else gb if gb.shape == b.shape else unbroadcast_np(gb, b.shape))


#: a bias add (m, n) + (n,) takes the native loop from this many elements and 2 columns.
#: Measured (2-core EPYC, float32, a new result, min of 2000, NumPy vs the loop): 256x256
#: 16.6 vs 8.4 us, 256x400 22 vs 10.7, 200x150 7.6 vs 3.4, 256x6 3.5 vs 3.1, 64x64 2.9 vs
#: 1.9, 32x32 2.1 vs 1.6; one column (256x1) 1.5 vs 1.8: NumPy's contiguous loop there
_BIAS_ADD_MIN = 512
#: add's native loop once compiled (a list: empty until then)
_BIAS_ADD = []


def _add_specialize(a, b):
    """add's eager kernel for a signature (the record's ``specialize``): ``_bias_add_kernel``
    for a bias add, (m, n) + (n,) of one float dtype with n >= 2 and at least
    _BIAS_ADD_MIN elements; None (np.add) for every other signature, which so pays
    nothing for it."""
    sa, sb = a.shape, b.shape
    if len(sa) == 2 and len(sb) == 1 and sa[1] == sb[0] and sb[0] >= 2 and sa[0] * sa[1] >= _BIAS_ADD_MIN \
            and a.dtype == b.dtype and a.dtype in _rules.NATIVE_FLOATS:
        return _bias_add_kernel
    return None


def _bias_add_kernel(x, b):
    """np.add(x, b) for a bias add's signature: the native loop (``_bias_add``), or NumPy's
    add where it does not apply to these arrays (a strided x, numba not imported yet)."""
    r = _bias_add(x, b)
    return np.add(x, b) if r is None else r


def _bias_add(x, b):
    """x + b for a C-ordered (m, n >= 2) ``x`` and its row ``b`` (n,) of the same float
    dtype, into a new array by a native loop over x's rows, where NumPy's broadcasting
    add takes about twice as long (see _BIAS_ADD_MIN). The same bits: each element is one
    IEEE add in the dtype (numba keeps float32 + float32 in float32; no fastmath), x's
    element first, as NumPy's loop (a NaN sum keeps the first NaN's payload in both;
    tested). None (NumPy's form) for other dtypes, shapes or layouts, or while numba is
    not imported (``_rules.native_loops``: only speed depends on it, never values)."""
    dt = x.dtype
    if x.__class__ is not _ndarray or b.__class__ is not _ndarray or x.ndim != 2 or b.ndim != 1 \
            or dt not in _rules.NATIVE_FLOATS or b.dtype != dt or x.shape[1] != b.shape[0] \
            or x.shape[1] < 2 or not x.flags.c_contiguous or b.strides[0] != dt.itemsize:
        return None
    loops = _rules.native_loops(_BIAS_ADD, _build_bias_add)
    if loops is None:
        return None
    out = np.empty(x.shape, dt)
    loops(x, b, out)
    return out


def _build_bias_add(numba):
    # cache=True: compiled once per machine; rows in turn, LLVM vectorizes the inner loop
    @numba.njit(cache=True, nogil=True)
    def bias_add(x, b, out):
        for i in range(x.shape[0]):
            xr, orow = x[i], out[i]
            for j in range(b.shape[0]):
                orow[j] = xr[j] + b[j]

    return bias_add


_ndarray = np.ndarray
# strings: TF's Add concatenates string tensors (np.add does the same on object arrays of bytes)
add_p = _binary("add", np.add, lambda g, out, a, b: _grads2(g, a, b, g, g), require="fiuOc",
                vjp_np=lambda need, g, out, a, b: _grads2_np(need, a, b, g, g), specialize=_add_specialize,
                strings=True)
sub_p = _binary("sub", np.subtract, lambda g, out, a, b: _grads2(g, a, b, g, neg(g)), require="fiuc",
                vjp_np=lambda need, g, out, a, b: _grads2_np(need, a, b, g, np.negative(g) if need[1] else None),
                complex=True)


# -- complex numbers (wave 21) ------------------------------------------------------------------
# TF's gradient convention for complex z = x + iy: a real loss's gradient is dL/dx + i dL/dy, so a
# holomorphic op f has vjp ct * conj(f'(z)) (mul: g * conj(b); exp: g * conj(exp(z))). Linear ops
# with real coefficients (add, sum, reshape, gathers) need no conj. _cj / _cj_np conjugate a
# complex operand and return a real one as it is, so the real rules bind nothing more.

def _cj(v):
    if _is_const(v):
        return np.conj(v) if np.iscomplexobj(v) else v
    return bind(conj_p, v) if aval_of(v).dtype.kind == "c" else v


def _cj_np(v):
    # (on the lean backward's arrays: a class and a kind test, ~60 ns; np.iscomplexobj costs ~0.4 us)
    if v.__class__ is _ndarray:
        return np.conj(v) if v.dtype.kind == "c" else v
    return np.conj(v) if isinstance(v, (complex, np.complexfloating)) else v


def _mul_vjp_np(need, g, out, a, b):
    if g.dtype.kind == "c":   # TF's convention (see _cj): g * conj of the other operand
        return _grads2_np(need, a, b, np.multiply(g, _cj_np(b)) if need[0] else None,
                          np.multiply(g, _cj_np(a)) if need[1] else None)
    if a is b and need[0]:
        # square (x * x): both products are g * x, the same kernel on the same values, so
        # one is computed and given to both operands; the walk then adds it to itself,
        # as it adds vjp's two equal products (same bits, one pass and buffer fewer)
        ga = np.multiply(g, b)
        if ga.shape != a.shape:
            ga = unbroadcast_np(ga, a.shape)
        return ga, ga
    return _grads2_np(need, a, b, np.multiply(g, b) if need[0] else None, np.multiply(g, a) if need[1] else None)


# bool * bool is logical and, as TF (bool + bool is an error there, and here)
mul_p = _binary("mul", np.multiply,
                lambda g, out, a, b: _grads2(g, a, b, None if _is_const(a) else mul(g, _cj(b)),
                                             None if _is_const(b) else mul(g, _cj(a))), require="fiubc",
                vjp_np=_mul_vjp_np, complex=True)

#: TF's truediv: small integers divide in float32, int32/int64 in float64 (exact for every int32)
_TRUEDIV_FLOAT = {"int8": np.dtype(np.float32), "int16": np.dtype(np.float32), "uint8": np.dtype(np.float32),
                  "uint16": np.dtype(np.float32), "int32": np.dtype(np.float64), "int64": np.dtype(np.float64),
                  "uint32": np.dtype(np.float64), "uint64": np.dtype(np.float64)}


def _div_kernel(a, b, out=None):
    d = getattr(a, "dtype", None)
    if d is None or d.kind not in "iu":
        d = getattr(b, "dtype", None)
    if d is not None and d.kind in "iu":
        # a / b of integers: convert first (as TF), so int8 / int8 gives float32, not NumPy's float64
        f = _TRUEDIV_FLOAT[d.name]
        a = np.asarray(a, f)
        b = np.asarray(b, f)
    return np.true_divide(a, b, out=out) if out is not None else np.true_divide(a, b)


def _div_abstract(*avals):
    r = _div_rule(*avals)
    return Aval(r.shape, _TRUEDIV_FLOAT[r.dtype.name]) if r.dtype.kind in "iu" else r


def _div_numba(ins, eqn):
    # integer operands convert to float first (the kernel's rule); native loops
    # take only the float case
    for v in eqn.inputs:
        av = getattr(v, "aval", None)
        if av is not None and av.dtype.kind in "iu":
            raise NotImplementedError("div of integers (converted to float first)")
    return f"np.true_divide({ins[0]}, {ins[1]})"


_div_rule = _rules.elementwise("div", None, "fiuc")
div_p = Primitive("div", _div_kernel, _div_abstract, **_elementwise_facts(np.true_divide, 2, _div_numba, fresh=True),
                  numpy_operands="adopt",
                  # d(a/b)/db = -a/b^2 = -out/b: reuses the forward value
                  # (complex: conj(b) and conj(out), TF's convention; see _cj)
                  vjp=lambda g, out, a, b: _grads2(g, a, b, None if _is_const(a) else div(g, _cj(b)),
                                               None if _is_const(b) else neg(div(mul(g, _cj(out)), _cj(b)))),
                  vjp_np=lambda need, g, out, a, b: _grads2_np(
                      need, a, b, _div_kernel(g, _cj_np(b)) if need[0] else None,
                      np.negative(_div_kernel(np.multiply(g, _cj_np(out)), _cj_np(b))) if need[1] else None),
                  complex=True,
                  impl_out=lambda out, a, b: _div_kernel(a, b, out=out),
                  doc="true division (TF's truediv): integers are converted to float32 (8/16-bit) "
                      "or float64 (32/64-bit) first")
neg_p = _unary("neg", np.negative, lambda g, out, a: (neg(g),), require="fic",
               vjp_np=lambda need, g, out, a: (np.negative(g),), complex=True)
for _p, _op in ((add_p, "+"), (sub_p, "-"), (mul_p, "*"), (div_p, "/"), (neg_p, "-")):
    _p.lowerings["python"] = _scalar_operator(_op)


def _pow_vjp(g, out, x, y):
    gx = gy = None
    if not _is_const(x):
        # y * x^(y-1), computed directly (not out/x, which is 0/0 at x == 0)
        d = mul(y, bind(pow_p, x, (y - 1) if _is_const(y) else sub(y, 1)))
        if not _is_const(y) or np.any(np.asarray(y) == 0):
            # x^0 is constant, but 0 * 0^-1 is NaN at x == 0: the derivative is 0 there
            d = bind(select_p, bind(equal_p, y, 0), 0, d)
        gx = mul(g, _cj(d))   # (complex: the conjugate derivative, TF's convention; a no-op on reals)
    if not _is_const(y):
        # d/dy x^y = x^y log x; defined as 0 where x <= 0 (as TF) so the gradient of
        # e.g. 0**y at y > 0 is 0, not NaN from log(0) * 0. A complex base has a logarithm
        # everywhere but 0, so there the mask is x != 0 (TF's _PowGrad)
        if _is_const(x):  # a constant base (Python int 3): log needs a float of y's dtype
            x = np.asarray(x, aval_of(y).dtype)
        cplx = (np.asarray(x).dtype if _is_const(x) else aval_of(x).dtype).kind == "c"
        mask = bind(not_equal_p, x, 0) if cplx else bind(greater_p, x, 0)
        safe_log = bind(select_p, mask, bind(log_p, bind(select_p, mask, x, 1)), 0)
        gy = mul(g, _cj(mul(out, safe_log)))
    return _grads2(g, x, y, gx, gy)


def _pow_numba(ins, eqn):
    # the kernel raises for an integer tensor to a negative integer power; a native
    # loop would return 0. Lower integer powers only with a literal exponent >= 0.
    y = eqn.inputs[1]
    if eqn.outputs[0].aval.dtype.kind in "iu" and not (hasattr(y, "val") and y.val >= 0):
        raise NotImplementedError("pow of integers with a tensor or negative exponent")
    return f"np.power({ins[0]}, {ins[1]})"


def _pow_kernel(x, y):
    if getattr(y, "dtype", np.dtype(type(y))).kind in "iu" and np.any(np.less(y, 0)):
        # NumPy raises a bare ValueError here; TF raises InvalidArgument
        raise InvalidArgumentError(
            f"pow: integers to negative integer powers are not allowed (exponent {np.asarray(y).dtype} "
            f"{np.shape(y)} has negative entries); cast the base to float first: tapeflow.cast(x, tapeflow.float32)")
    out = np.power(x, y)   # (an ndarray or a NumPy scalar: both have a dtype)
    if out.dtype.kind == "c":
        zero = np.equal(x, 0)
        if zero.any():
            # TF 2.21's complex pow is exp(y log x): a zero base gives 0 for re(y) > 0, inf + nan i for
            # re(y) < 0 and nan + nan i for re(y) == 0 (0^0 too), where NumPy has 1 for 0^0 and nans else
            ry = np.real(np.broadcast_to(y, out.shape))
            at0 = np.where(ry > 0, 0, np.where(ry < 0, complex(np.inf, np.nan), complex(np.nan, np.nan)))
            out = np.where(np.broadcast_to(zero, out.shape), at0.astype(out.dtype), out)
            out = out[()] if out.ndim == 0 else out
    return out


pow_p = _binary("pow", _pow_kernel, _pow_vjp, require="fiuc", numba=_pow_numba, complex=True)


def _max_vjp(g, out, x, y):
    # Ties go to y: relu(x) = maximum(x, 0) then has gradient 0 at x == 0, as TF's relu.
    m = bind(greater_p, x, y)
    return _grads2(g, x, y, bind(select_p, m, g, 0), bind(select_p, m, 0, g))


def _atan2_vjp(g, out, y, x):
    # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2), TF's Atan2Grad; at (0, 0) that is 0/0 = NaN, as in TF
    dt = aval_of(out).dtype   # a Python-number operand takes the result's dtype (0-d Python math is float32)
    yv = np.asarray(y, dt) if _is_const(y) and not hasattr(y, "dtype") else y
    xv = np.asarray(x, dt) if _is_const(x) and not hasattr(x, "dtype") else x
    r2 = add(mul(xv, xv), mul(yv, yv))
    return _grads2(g, y, x, div(mul(g, xv), r2), div(neg(mul(g, yv)), r2))


# a primitive (no composition of atan and div is right in every quadrant and at x == 0): NumPy's
# arctan2 (float32 results within 1 ulp of TF's), the numba scalar form from the ufunc
atan2_p = _binary("atan2", np.arctan2, _atan2_vjp, require="f")


def _min_vjp(g, out, x, y):
    m = bind(less_p, x, y)
    return _grads2(g, x, y, bind(select_p, m, g, 0), bind(select_p, m, 0, g))


def _extremum_vjp_np(compare, into=False):
    """maximum's / minimum's vjp_np; ``into``: maximum's vjp_np_into (relu's gradient
    written over the incoming gradient the walk owns)."""
    relu = compare is np.greater  # maximum's rule: maximum(x, 0) is relu

    def rule(need, g, out, x, y):
        if relu and not need[1] and x.__class__ is np.ndarray and _is_zero_literal(y):
            ga = _relu_grad(g, x, into)
            if ga is not None:
                return ga, None
        m = compare(x, y)
        return _grads2_np(need, x, y, _select_kernel(m, g, 0) if need[0] else None,
                          _select_kernel(m, 0, g) if need[1] else None)
    return rule


def _relu_grad(g, x, into=False):
    """relu's gradient, maximum(x, 0)'s for x: ``g`` where ``x > 0``, +0.0 elsewhere, in
    one native pass (``_relu_kernels``) where the mask, its integer copy and the
    product (``_select_kernel``) made three: 200x150 float32 5.7 us instead of 12.7,
    256x256 12 instead of 24 (busy 2-core host, min of many). The same bits: the
    comparison is exact (a float32 or float64 against 0; NaN is not > 0) and each
    element is g's own bits or +0.0, as ``_keep_bits`` gives. ``into``: written over
    ``g`` (the lean backward owns it: vjp_np_into) by the loop's one-array form, which
    reads and stores each element of one buffer: 256x256 float32 after the GEMM that
    made g, 8-14 us against 14-24 for a new buffer (the two-array loop given g as its
    output ran ~20x slower: its operands overlap, so LLVM's vector form is skipped).
    None (the caller's NumPy
    path) for operands that are not same-shape, same-dtype float32/float64 writable
    C-ordered arrays, or while numba is not imported: a gradient never pays its import
    (~0.3-0.5 s in a fresh process); a training step's optimizer (its fused loops) has
    imported it, and this loop then loads in ~6 ms."""
    if g.__class__ is not np.ndarray or g.shape != x.shape or g.dtype is not x.dtype or x.dtype not in _rules.NATIVE_FLOATS:
        return None
    gf, xf = g.flags, x.flags
    if not (gf.c_contiguous and xf.c_contiguous and gf.writeable and xf.writeable):
        return None  # (a read-only or strided operand would be another compiled specialization)
    ks = _relu_kernels()
    if ks is None:
        return None
    if into:
        ks[1](g.reshape(-1), x.reshape(-1))
        return g
    out = np.empty(x.shape, x.dtype)
    ks[0](g.reshape(-1), x.reshape(-1), out.reshape(-1))
    return out


#: [(the loop, its in-place form, relu's forward loop)] once compiled
_RELU_KERNELS = []


def _relu_kernels():
    """relu's native loops (gradient, gradient in place, forward), compiled once; None
    while numba is not imported (see _relu_grad)."""
    return _rules.native_loops(_RELU_KERNELS, _build_relu_kernels)


def _build_relu_kernels(numba):
    # cache=True: compiled once per machine; a select, not arithmetic, so g's bits pass through
    @numba.njit(cache=True, nogil=True)
    def relu_grad(g, x, out):
        for i in range(out.shape[0]):
            out[i] = g[i] if x[i] > 0 else 0.0

    @numba.njit(cache=True, nogil=True)
    def relu_grad_into(g, x):
        for i in range(g.shape[0]):
            g[i] = g[i] if x[i] > 0 else 0.0

    # maximum(x, 0) as np.maximum computes it: x where x > 0 or x is NaN (its own bits,
    # sign and payload), else +0.0 (so -0.0 gives +0.0)
    @numba.njit(cache=True, nogil=True)
    def relu(x, out):
        for i in range(out.shape[0]):
            v = x[i]
            out[i] = v if v > 0 or v != v else 0.0

    return relu_grad, relu_grad_into, relu


#: below this many elements NumPy's array-scalar loop is as fast as the array-array one
_VECTOR_MIN = 1024
#: (shape, dtype) -> a read-only array of zeros, the literal 0 as an operand: a training
#: loop repeats a few activation shapes, and a fresh np.zeros each call cost as much
#: as the loop it speeds up on a busy machine. Bounded: only operands up to
#: _ZEROS_MAX_BYTES are cached, and the table is emptied past _ZEROS_MAX_SHAPES.
_ZEROS: dict = {}
_ZEROS_MAX_BYTES = 1 << 21
_ZEROS_MAX_SHAPES = 16


def _zeros_of(v):
    k = (v.shape, v.dtype)
    z = _ZEROS.get(k)
    if z is None:
        z = np.zeros(v.shape, v.dtype)
        if v.nbytes <= _ZEROS_MAX_BYTES:
            if len(_ZEROS) >= _ZEROS_MAX_SHAPES:
                _ZEROS.clear()
            z.flags.writeable = False  # (an operand only: no kernel ever writes into it)
            _ZEROS[k] = z
    return z


def _extremum_kernel(ufunc):
    """np.maximum / np.minimum. Against the literal 0 (relu: maximum(x, 0)) NumPy runs
    its array-scalar loop, which is not vectorized for these two ufuncs: on a 200x150
    float32 it cost 27 us, against 6 us for the same ufunc on x and an array of zeros.
    The zeros are the literal's value, in the operands' order, so every element (NaN,
    -0.0 ties) is the same."""
    relu = ufunc is np.maximum

    def kernel(x, y, out=None):
        # (the size test first: small operands, the common case in dispatch-bound code, pay one compare)
        if x.__class__ is np.ndarray:
            if x.size >= _VECTOR_MIN and x.dtype.kind == "f" and _is_zero_literal(y):
                if relu and out is None:
                    r = _relu_native(x)
                    if r is not None:
                        return r
                y = _zeros_of(x)
        elif y.__class__ is np.ndarray and y.size >= _VECTOR_MIN and y.dtype.kind == "f" and _is_zero_literal(x):
            x = _zeros_of(y)
        return ufunc(x, y) if out is None else ufunc(x, y, out=out)
    kernel.__name__ = ufunc.__name__
    return kernel


def _relu_native(x):
    """maximum(x, 0) for a new result in one native pass reading x alone (NumPy's
    array-array loop also reads the zeros): 256x256 float32 7.9 us against 10.3 alone,
    more in a training step, where the zeros' 256 KiB also compete for the cache. The
    bits of np.maximum(x, zeros) (NaN kept with its sign and payload, -0.0 -> +0.0; tested).
    None (NumPy's form) for other dtypes and layouts, with an ``out`` (a planned buffer
    may be x's own, and the two-array loop over one buffer runs scalar), or while numba
    is not imported (see _relu_grad)."""
    if x.dtype not in _rules.NATIVE_FLOATS or not x.flags.c_contiguous:
        return None
    ks = _relu_kernels()
    if ks is None:
        return None
    out = np.empty(x.shape, x.dtype)
    ks[2](x.reshape(-1), out.reshape(-1))
    return out


def _extremum(name, ufunc, vjp, compare):
    kernel = _extremum_kernel(ufunc)
    return Primitive(name, kernel, _rules.elementwise(name, None, "fiu"), vjp, vjp_np=_extremum_vjp_np(compare),
                     numpy_operands="adopt",
                     vjp_np_into=_extremum_vjp_np(compare, into=True) if compare is np.greater else None,
                     impl_out=lambda out, x, y: kernel(x, y, out=out),
                     **_elementwise_facts(kernel, 2, _ufunc_scalar_form(ufunc, 2), fresh=True))


maximum_p = _extremum("maximum", np.maximum, _max_vjp, np.greater)
minimum_p = _extremum("minimum", np.minimum, _min_vjp, np.less)


def _check_int_divisor(name, x, y):
    """TF raises on integer division by zero (NumPy returns 0 with a warning)."""
    if y.__class__ is int and y != 0:
        # a nonzero literal divisor (TD3's ``total_it % policy_freq``): one compare instead of
        # NumPy's equal + any, which cost ~7 us warm and 30-50 us in a training step's cold cache
        return
    if getattr(y, "dtype", np.dtype(type(y))).kind in "iu" and np.any(np.equal(y, 0)):
        raise InvalidArgumentError(
            f"{name}: integer division by zero (x: {np.shape(x)} {np.asarray(x).dtype}, y: {np.shape(y)} "
            f"{np.asarray(y).dtype} has zeros at {np.argwhere(np.equal(y, 0)).tolist()[:5]}); guard the "
            "divisor, e.g. tapeflow.maximum(y, 1), or divide in floating point")


def _floordiv_kernel(x, y):
    _check_int_divisor("floordiv", x, y)
    if _rules._kind(np.result_type(x, y)) == "f":
        # TF's float FloorDiv is floor(x / y): inf // -1.5 is -inf (np.floor_divide: nan) and
        # 1.0 // 0.1 is 10 (np.floor_divide, exact in fmod's way: 9)
        return np.floor(np.true_divide(x, y))
    return np.floor_divide(x, y)


def _mod_kernel(x, y):
    _check_int_divisor("mod", x, y)
    return np.mod(x, y)


# floordiv/mod stay on their kernels natively: integer division by zero raises
# there (as TF), where a native loop would divide silently.
floordiv_p = _binary("floordiv", _floordiv_kernel, require="fiu", differentiable=False, numba=False)
mod_p = _binary("mod", _mod_kernel, numba=False, vjp=lambda g, out, x, y: _grads2(
    g, x, y, g, None if _is_const(y) else neg(mul(g, bind(floor_p, div(x, y))))), require="fiu",
    doc="remainder with the divisor's sign (Python/TF floormod)")

# -- unary math ------------------------------------------------------------------------

# numba: simd_exp (compiler/backends/numba_math.py) is np.exp in a form LLVM vectorizes for float32
# (vjp_np: each rule with the ops' kernels called directly; div's is _div_kernel)
exp_p = _unary("exp", np.exp, lambda g, out, x: (mul(g, _cj(out)),), numba="simd_exp({0})",
               vjp_np=lambda need, g, out, x: (np.multiply(g, _cj_np(out)),), require="fc", complex=True)
log_p = _unary("log", np.log, lambda g, out, x: (div(g, _cj(x)),),
               vjp_np=lambda need, g, out, x: (_div_kernel(g, _cj_np(x)),), require="fc", complex=True)
log1p_p = _unary("log1p", np.log1p, lambda g, out, x: (div(g, add(x, 1)),),
                 vjp_np=lambda need, g, out, x: (_div_kernel(g, np.add(x, 1)),))
# expm1' = exp(x), as TF's gradient: out + 1 cancels where x is very negative (float32: 0 at x = -20, not 2e-9;
# 4e-4 relative off at -10)
expm1_p = _unary("expm1", np.expm1, lambda g, out, x: (mul(g, bind(exp_p, x)),),
                 vjp_np=lambda need, g, out, x: (np.multiply(g, np.exp(x)),))
# (sin, cos, tanh, sinh, cosh take complex too: their derivatives conjugated, TF's convention)
sin_p = _unary("sin", np.sin, lambda g, out, x: (mul(g, _cj(bind(cos_p, x))),),
               vjp_np=lambda need, g, out, x: (np.multiply(g, _cj_np(np.cos(x))),), require="fc", complex=True)
cos_p = _unary("cos", np.cos, lambda g, out, x: (neg(mul(g, _cj(bind(sin_p, x)))),),
               vjp_np=lambda need, g, out, x: (np.negative(np.multiply(g, _cj_np(np.sin(x)))),), require="fc",
               complex=True)
tan_p = _unary("tan", np.tan, lambda g, out, x: (mul(g, _cj(add(mul(out, out), 1))),),
               vjp_np=lambda need, g, out, x: (np.multiply(g, _cj_np(np.add(np.multiply(out, out), 1))),),
               require="fc", complex=True)
# numba: simd_tanh likewise (the ufunc's own form is a libm call per element: a scalar loop)
tanh_p = _unary("tanh", np.tanh, lambda g, out, x: (mul(g, _cj(sub(1, mul(out, out)))),), numba="simd_tanh({0})",
                vjp_np=lambda need, g, out, x: (np.multiply(g, _cj_np(np.subtract(1, np.multiply(out, out)))),),
                require="fc", complex=True)
# A zero cotangent gives a zero gradient even where sqrt(x) = 0 (0.5 / 0 is inf, and 0 * inf nan),
# as TF's SqrtGrad: tf.where(x > 0, tf.sqrt(x), 0) then has gradient 0 at x = 0, not nan
sqrt_p = _unary("sqrt", np.sqrt,
                lambda g, out, x: (bind(select_p, bind(equal_p, g, 0), 0, div(mul(g, 0.5), _cj(out))),),
                vjp_np=lambda need, g, out, x: (_sqrt_vjp_np(g, out),), require="fc", complex=True)


def _sqrt_vjp_np(g, out):
    q = _div_kernel(np.multiply(g, 0.5), _cj_np(out))
    return np.where(np.equal(g, 0), np.zeros((), q.dtype), q)
def _abs_abstract(x):
    if x.dtype.kind == "c":   # TF: abs of complex is its modulus, in the component dtype
        return Aval(x.shape, np.dtype(x.dtype.char.lower()))
    return _abs_rule(x)


def _abs_vjp(g, out, x):
    if aval_of(x).dtype.kind != "c":
        return (mul(g, bind(sign_p, x)),)
    # TF's ComplexAbsGrad: g * z / |z|, 0 where z = 0 (TF 2.21: grad of abs at 0j is 0j)
    c = aval_of(x).dtype
    unit = bind(select_p, bind(equal_p, out, 0), 0, div(x, bind(cast_p, out, dtype=c)))
    return (mul(bind(cast_p, g, dtype=c), unit),)


def _abs_vjp_np(need, g, out, x):
    if x.dtype.kind != "c":
        return (np.multiply(g, np.sign(x)),)
    unit = np.where(np.equal(out, 0), np.zeros((), x.dtype), _div_kernel(x, out.astype(x.dtype)))
    return (np.multiply(g.astype(x.dtype), unit),)


_abs_rule = _rules.elementwise("abs", None, "fi")
abs_p = _unary("abs", np.abs, _abs_vjp, abstract=_abs_abstract, vjp_np=_abs_vjp_np, complex=True)
atan_p = _unary("atan", np.arctan, lambda g, out, x: (div(g, add(mul(x, x), 1)),),
                vjp_np=lambda need, g, out, x: (_div_kernel(g, np.add(np.multiply(x, x), 1)),))

# The inverse and hyperbolic functions, with TF's gradient forms: asin/acos 1/sqrt(1 - x^2)
# (inf at |x| = 1, as TF), atanh 1/(1 - x^2), asinh/acosh 1/cosh(y), 1/sinh(y) of the output
# y (TF's AsinhGrad/AcoshGrad). Primitives rather than compositions: sinh through exp cancels
# for small x, asin through atan2 loses digits near 1.
asin_p = _unary("asin", np.arcsin, lambda g, out, x: (div(g, bind(sqrt_p, sub(1, mul(x, x)))),),
                vjp_np=lambda need, g, out, x: (_div_kernel(g, np.sqrt(np.subtract(1, np.multiply(x, x)))),))
acos_p = _unary("acos", np.arccos, lambda g, out, x: (neg(div(g, bind(sqrt_p, sub(1, mul(x, x))))),),
                vjp_np=lambda need, g, out, x: (np.negative(_div_kernel(g, np.sqrt(np.subtract(1, np.multiply(x, x))))),))
sinh_p = _unary("sinh", np.sinh, lambda g, out, x: (mul(g, _cj(bind(cosh_p, x))),),
                vjp_np=lambda need, g, out, x: (np.multiply(g, _cj_np(np.cosh(x))),), require="fc", complex=True)
cosh_p = _unary("cosh", np.cosh, lambda g, out, x: (mul(g, _cj(bind(sinh_p, x))),),
                vjp_np=lambda need, g, out, x: (np.multiply(g, _cj_np(np.sinh(x))),), require="fc", complex=True)
asinh_p = _unary("asinh", np.arcsinh, lambda g, out, x: (div(g, bind(cosh_p, out)),),
                 vjp_np=lambda need, g, out, x: (_div_kernel(g, np.cosh(out)),))
acosh_p = _unary("acosh", np.arccosh, lambda g, out, x: (div(g, bind(sinh_p, out)),),
                 vjp_np=lambda need, g, out, x: (_div_kernel(g, np.sinh(out)),))
atanh_p = _unary("atanh", np.arctanh, lambda g, out, x: (div(g, sub(1, mul(x, x))),),
                 vjp_np=lambda need, g, out, x: (_div_kernel(g, np.subtract(1, np.multiply(x, x))),))


def _sigmoid_kernel(x, out=None):
    # 1 / (1 + exp(-x)) keeps full relative precision in both tails (the form
    # 0.5 * (1 + tanh(x / 2)) cancels: sigmoid(-10) came out 1e-3 off in float32).
    # For x below about -88 (float32) exp(-x) overflows to inf and the result is
    # exactly 0, as TF's; the overflow is expected, so its warning is silenced.
    # Three in-place passes: this runs on big activations, where memory traffic is the cost.
    with np.errstate(over="ignore"):
        t = np.exp(np.negative(x))
    if isinstance(t, np.ndarray):
        t += 1
    else:
        t = t + 1
    return np.reciprocal(t, out=out) if out is not None else np.reciprocal(t)


sigmoid_p = Primitive("sigmoid", _sigmoid_kernel, _rules.elementwise("sigmoid", None, "fc"),
                      lambda g, out, x: (mul(g, _cj(mul(out, sub(1, out)))),),
                      vjp_np=lambda need, g, out, x: (np.multiply(g, _cj_np(np.multiply(out, np.subtract(1, out)))),),
                      complex=True,
                      **_elementwise_facts(
                          # the same form as the kernel above, in the output's dtype
                          _sigmoid_kernel, 1, "({dt}(1) / ({dt}(1) + simd_exp(-{0})))", fresh=True),
                      impl_out=lambda out, x: _sigmoid_kernel(x, out=out))

# Non-differentiable, listed explicitly: piecewise-constant functions (zero
# gradient almost everywhere) get no gradient rule, as in TF (None).
# TF's gradient of sign is zeros (its _SignGrad), not None (floor/round/ceil have none): a program
# that scales or adds it must get a tensor. An exact zero, never g * 0 (a NaN in g must not leak).
sign_p = _unary("sign", np.sign, lambda g, out, x: (bind(select_p, False, g, 0),), require="fi",
                vjp_np=lambda need, g, out, x: (np.zeros_like(g),))
floor_p = _unary("floor", np.floor, differentiable=False)
ceil_p = _unary("ceil", np.ceil, differentiable=False)
round_p = _unary("round", np.round, differentiable=False, doc="half to even, as TF")
isnan_p = _unary("isnan", np.isnan, out_dtype=np.dtype(bool), differentiable=False)
isfinite_p = _unary("isfinite", np.isfinite, out_dtype=np.dtype(bool), differentiable=False)
logical_not_p = _unary("logical_not", np.logical_not, require="b", differentiable=False)

# -- comparisons and logic (non-differentiable) ----------------------------------------------
_B = np.dtype(np.bool_)
equal_p = _binary("equal", np.equal, out_dtype=_B, differentiable=False, strings=True)
not_equal_p = _binary("not_equal", np.not_equal, out_dtype=_B, differentiable=False, strings=True)
less_p = _binary("less", np.less, out_dtype=_B, differentiable=False)
less_equal_p = _binary("less_equal", np.less_equal, out_dtype=_B, differentiable=False)
greater_p = _binary("greater", np.greater, out_dtype=_B, differentiable=False)
greater_equal_p = _binary("greater_equal", np.greater_equal, out_dtype=_B, differentiable=False)
logical_and_p = _binary("logical_and", np.logical_and, require="b", differentiable=False)
logical_or_p = _binary("logical_or", np.logical_or, require="b", differentiable=False)
logical_xor_p = _binary("logical_xor", np.logical_xor, require="b", differentiable=False)


# -- select (where) ---------------------------------------------------------------------------

def _select_abstract(c, x, y):
    if c.dtype != _B:
        raise InvalidArgumentTypeError(f"where: condition must be bool, got {c.dtype.name}; compare first, e.g. x > 0")
    d = _rules.result_dtype("where", [x, y])
    return Aval(_rules.broadcast_shapes("where", c.shape, x.shape, y.shape), d)


def _select_vjp(g, out, c, x, y):
    # The unselected branch gets an exact zero, never g * 0: a NaN or inf in g
    # must not leak into the other branch's gradient.
    gx = None if _is_const(x) else unbroadcast(bind(select_p, c, g, 0), shape_of(x))
    gy = None if _is_const(y) else unbroadcast(bind(select_p, c, 0, g), shape_of(y))
    return (None, gx, gy)


def _select_vjp_np(need, g, out, c, x, y):
    return (None, unbroadcast_np(_select_kernel(c, g, 0), x.shape) if need[1] else None,
            unbroadcast_np(_select_kernel(c, 0, g), y.shape) if need[2] else None)


_INT_OF = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64, np.dtype(np.float16): np.int16,
           _dt.BF16: np.int16}


def _is_zero_literal(v):
    return (v.__class__ is int or v.__class__ is float) and v == 0 and str(v)[0] != "-"


def _select_kernel(c, x, y):
    """where(c, x, y). The gradient rules of relu/maximum/minimum/where call it
    with one branch the literal 0, on big float arrays and random masks, where
    np.where branches per element and mispredicts (~20x slower than a multiply).
    There, multiply the value's bits, read as integers, by the mask as 0 or 1
    (``_keep_bits``): branchless, exact (an integer times 0 or 1), and bit-identical
    to np.where (+0.0 where unselected, the value's exact bits elsewhere, so a NaN
    or inf in the unselected branch still never leaks)."""
    if c.__class__ is np.ndarray and c.dtype.kind == "b":
        if _is_zero_literal(y) and x.__class__ is np.ndarray:
            it = _INT_OF.get(x.dtype)
            if it is not None:
                return _keep_bits(x, c, it)
        elif _is_zero_literal(x) and y.__class__ is np.ndarray:
            it = _INT_OF.get(y.dtype)
            if it is not None:
                return _keep_bits(y, np.logical_not(c), it)
    if x.__class__ in _WEAK and y.__class__ in _WEAK:
        # two Python scalars (a trace's inline literals, where(m, -1.0, 1.0)): the rule's weak dtype (float32,
        # int32); np.where would give float64/int64, and the arithmetic after it would round differently
        d = np.float32 if float in (x.__class__, y.__class__) else np.int32 if int in (x.__class__, y.__class__) \
            else np.bool_
        return np.where(c, d(x), d(y))
    return np.where(c, x, y)


_WEAK = (float, int, bool)


def _keep_bits(v, keep, it):
    """v where the bool mask ``keep`` is True, +0.0 elsewhere, as v's bits times 0/1.
    A mask of v's shape is converted to the integer type first and multiplied into in
    place (one pass each, no buffered casting); a broadcast one is widened inside the
    ufunc's loop. Measured on 256x256 float32 (busy 2-core box, min of many): 17 us,
    19 for the in-loop widening, 30 for an AND with a 0/-1 mask, 240 for np.where."""
    if keep.shape == v.shape and keep.__class__ is np.ndarray:  # (not NumPy's 0-d scalars)
        m = keep.astype(it)
        return np.multiply(v.view(it), m, out=m).view(v.dtype)
    return np.multiply(v.view(it), keep, dtype=it).view(v.dtype)


select_p = Primitive("select", _select_kernel, _select_abstract, _select_vjp, vjp_np=_select_vjp_np, **_elementwise_facts(
                         _select_kernel, 3, "({1} if {0} else {2})", fresh=True),
                     impl_out=None, doc="where(c, x, y) with broadcasting", strings=True)


# -- dtype conversion and gradient blocking ------------------------------------------------------

def _cast_kernel(x, dtype):
    if np.iscomplexobj(x) and np.dtype(dtype).kind != "c":
        x = np.real(x)   # TF 2.21: complex -> real casts keep the real part (NumPy's astype warns)
    return np.asarray(x).astype(dtype, copy=False) if not isinstance(x, np.generic) else x.astype(dtype)


def _cast_abstract(x, dtype):
    if (x.dtype.kind == "O") != (np.dtype(dtype).kind == "O"):   # TF's Cast kernel has no string conversions
        from ...errors import UnimplementedError
        name = lambda d: "string" if d.kind == "O" else d.name  # noqa: E731
        raise UnimplementedError(f"cast: Cast {name(x.dtype)} to {name(np.dtype(dtype))} is not supported; use "
                                 "tf.strings.to_number / tf.strings.as_string")
    return Aval(x.shape, dtype)


def _cast_vjp(g, out, x, dtype):
    # (complex <-> real: the cotangent cast back, its real part to a real operand: TF's convention)
    if _is_const(x) or _rules._kind(aval_of(x).dtype) not in "fc" or _rules._kind(np.dtype(dtype)) not in "fc":
        return (None,)  # no gradient through integer/bool conversions (as TF)
    return (bind(cast_p, g, dtype=aval_of(x).dtype),)


def _cast_vjp_np(need, g, out, x, dtype):
    if not need[0] or _rules._kind(x.dtype) not in "fc" or _rules._kind(np.dtype(dtype)) not in "fc":
        return (None,)
    return (_cast_kernel(g, x.dtype),)


# astype(copy=False) returns its input when the dtype already matches: it may alias
# strings: the rule raises TF's UnimplementedError for a string <-> number cast (string -> string
# never binds: tf.cast returns its input)
cast_p = Primitive("cast", _cast_kernel, _cast_abstract, _cast_vjp, vjp_np=_cast_vjp_np, fusion="elementwise",
                   lowerings={"numba": "{dt}({0})"}, strings=True)


def _identity(x):
    return x


stop_gradient_p = Primitive("stop_gradient", _identity, lambda x: Aval(x.shape, x.dtype), fusion="elementwise",
                            lowerings={"numba": "{0}"},
                            differentiable=False,
                            doc="identity whose output is never recorded: gradients stop here", strings=True)


# -- multiply_no_nan (branch ops18) ---------------------------------------------------------------------

def _mul_no_nan_kernel(x, y):
    with np.errstate(invalid="ignore"):          # inf * 0 is replaced by the 0 below
        return np.where(np.equal(y, 0), np.zeros((), np.result_type(x, y)), np.multiply(x, y))


def _mul_no_nan_vjp(g, out, x, y):
    # TF's MulNoNanGrad: mul_no_nan(g, y) for x and mul_no_nan(x, g) for y, so at y == 0 the
    # y-gradient is x * g (inf for x = inf), which no where-composition gives (0 or nan there):
    # the reason this is a primitive
    return _grads2(g, x, y, None if _is_const(x) else bind(mul_no_nan_p, g, y),
                   None if _is_const(y) else bind(mul_no_nan_p, x, g))


mul_no_nan_p = _binary("mul_no_nan", _mul_no_nan_kernel, _mul_no_nan_vjp, require="f",
                       numba="({dt}(0) if {1} == 0 else {0} * {1})",
                       doc="x * y, and 0 where y == 0 even if x is inf or nan (TF's MulNoNan)")


# -- bitwise (branch ops18): tf.bitwise, and the &, |, ^, ~ operators on integer tensors -------------------

def _shift_kernel(ufunc):
    def kernel(x, y):
        # TF's kernels clamp the shift to [0, bits - 1]: 1 << 40 in int32 is 1 << 31, a negative
        # shift is 0, and x >> 40 is x >> 31 (the sign, for signed x); NumPy's shifts past the
        # width are undefined in C and vary by platform
        x, y = np.asarray(x), np.asarray(y)
        dt = x.dtype                       # (the rule made both operands one dtype)
        bits = dt.itemsize * 8
        return ufunc(x.astype(dt, copy=False), np.clip(y, 0, bits - 1).astype(dt, copy=False))
    kernel.__name__ = ufunc.__name__
    return kernel


bitwise_and_p = _binary("bitwise_and", np.bitwise_and, require="iu", differentiable=False)
bitwise_or_p = _binary("bitwise_or", np.bitwise_or, require="iu", differentiable=False)
bitwise_xor_p = _binary("bitwise_xor", np.bitwise_xor, require="iu", differentiable=False)
invert_p = _unary("invert", np.invert, require="iu", differentiable=False)
# (no scalar form: a native loop's shift would not clamp; the fused tier runs the kernel)
left_shift_p = _binary("left_shift", _shift_kernel(np.left_shift), require="iu", differentiable=False, numba=False,
                       doc="x << clamp(y, 0, bits - 1), as TF's LeftShift")
right_shift_p = _binary("right_shift", _shift_kernel(np.right_shift), require="iu", differentiable=False, numba=False,
                        doc="x >> clamp(y, 0, bits - 1) (arithmetic for signed x), as TF's RightShift")


# -- complex numbers: parts and conjugate (wave 21) ------------------------------------------------
# Four primitives, since no composition of real ops builds or takes apart a complex value. Opaque
# (the fused tier and numba keep complex out) and fresh arrays (np.real would be a view).

_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}
_COMPLEX_OF = {v: k for k, v in _REAL_OF.items()}


def _complex_kernel(re, im):
    # a Python float (a float subclass: np.float64 too) is weak: the other operand's dtype, as the rule
    strong = [v.dtype for v in (re, im) if not isinstance(v, float) and hasattr(v, "dtype")]
    # (both weak: a NumPy float64 scalar, e.g. a float64 tensor's 0-d value, keeps float64 as the rule's
    # own dtype does; only Python floats are float32's)
    d = strong[0] if strong else max((v.dtype if isinstance(v, np.floating) else np.dtype(np.float32)
                                      for v in (re, im)), key=lambda t: t.itemsize)
    re, im = np.asarray(re), np.asarray(im)
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), _COMPLEX_OF[d])
    out.real = re   # (assigned, not re + 1j * im: 1j * inf would put a nan in the real part)
    out.imag = im
    return out


def _complex_abstract(re, im):
    # (a Python scalar takes its peer's dtype; two take their own: tf.complex(1, 2) is int32's error)
    strong = [a.dtype for a in (re, im) if not a.weak] or [re.dtype, im.dtype]
    d = strong[0]
    if d not in _COMPLEX_OF or strong[-1] != d:
        # TF 2.21's TypeError text (tf.complex(1, 2), float64 with float32)
        raise InvalidArgumentTypeError(
            f"complex: The `real` and `imag` components have incorrect types: {re.dtype.name} {im.dtype.name}. "
            "They must be consistent, and one of [tf.float32, tf.float64]")
    return Aval(_rules.broadcast_shapes("complex", re.shape, im.shape), _COMPLEX_OF[d])


def _part_abstract(name):
    def rule(z):
        if z.dtype.kind != "c":
            raise InvalidArgumentTypeError(f"{name}: expects a complex tensor, got {z.dtype.name} (tf.math.{name} "
                                           "of a real tensor is computed without this primitive)")
        return Aval(z.shape, z.dtype if name == "conj" else _REAL_OF[z.dtype])
    return rule


complex_p = Primitive(
    "complex", _complex_kernel, _complex_abstract,
    lambda g, out, re, im: (None if _is_const(re) else unbroadcast(bind(real_p, g), shape_of(re)),
                            None if _is_const(im) else unbroadcast(bind(imag_p, g), shape_of(im))),
    aliases=False, complex=True, doc="tf.complex(real, imag): float32 -> complex64, float64 -> complex128")
# real(z)'s cotangent g is g + 0i, imag(z)'s is 0 + gi (TF: d real(z) = dx, d imag(z) = dy)
real_p = Primitive("real", lambda z: np.real(z).copy(), _part_abstract("real"),
                   lambda g, out, z: (bind(cast_p, g, dtype=aval_of(z).dtype),), aliases=False, complex=True)
imag_p = Primitive("imag", lambda z: np.imag(z).copy(), _part_abstract("imag"),
                   lambda g, out, z: (bind(complex_p, 0.0, g),), aliases=False, complex=True)
conj_p = Primitive("conj", np.conj, _part_abstract("conj"), lambda g, out, z: (bind(conj_p, g),),
                   aliases=False, complex=True)
