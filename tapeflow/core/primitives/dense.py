"""dense: ``activation(x @ w + b)``, a Keras Dense layer's eager call as one op.

A composite record: its kernel, shape rule and gradient rules are those of
matmul, add and relu (maximum with the literal 0) called in that order, so
every value and every gradient has the bits the three primitives give. What it
saves is per-op work in eager code: one bind and, under a GradientTape, one
recorded node instead of three (and one backward step instead of three), and
the bias add and relu run in place on the GEMM's fresh result, recorded or not
(the backward needs only the output: see ``_dense_vjp_np``).

Only the eager interpretation uses it (keras.layers.Dense on a rank-2 input):
a traced Dense emits matmul, add and the activation, which the compiler's
passes fuse and lower on their own. The gradient rule is written in tapeflow
ops, so outer tapes, persistent tapes, jacobians and higher-order gradients
record and differentiate it like any other rule.
"""
from __future__ import annotations

import numpy as np

from ..aval import fmt_shape
from ...errors import InvalidArgumentError
from ..primitive import Primitive, _PY_AVAL
from . import _rules as R
from . import elementwise as E
from . import linalg as L
from ...util import threads as _threads

#: the activations the record computes itself (others: Dense applies them to its "linear" result)
ACTIVATIONS = ("linear", "relu")
_RELU_NEED = (True, False)  # relu's rule differentiates its input, not the literal 0


def _dense_kernel(x, w, *b, activation):
    out = L.matmul_p.impl(x, w)  # a fresh array: the epilogue writes into it
    if b:
        if _bias_relu(out, b[0], activation == "relu"):
            return out
        E.add_p.impl_out(out, out, b[0])
    if activation == "relu":
        E.maximum_p.impl_out(out, out, 0)
    return out


#: the native loops (the forward epilogue, the backward's relu and bias gradients) once
#: compiled (a list: empty until then)
_LOOPS = []


def _loops():
    """(bias_relu, relu_grad_bias, bias_add, relu_grad_bias_into), compiled once; None
    while numba is not imported (``_rules.native_loops``: only speed depends on it,
    never values)."""
    return R.native_loops(_LOOPS, _build_loops)


def _build_loops(numba):
    # one array written (h's rows in turn, b read): LLVM vectorizes the row loop;
    # cache=True: compiled once per machine
    @numba.njit(cache=True, nogil=True)
    def bias_relu(h, b):
        for i in range(h.shape[0]):
            row = h[i]
            for j in range(row.shape[0]):
                v = row[j] + b[j]
                row[j] = v if v > 0 or v != v else 0.0

    # the column sums in NumPy's order, as _rules._column_sums adds them (from +0.0, one
    # row after another; an (m, 1) array, summed pairwise by NumPy, is not taken here).
    # The select's zero is gb's first element once cleared (+0.0 in the arrays' dtype; the
    # caller passes n >= 2 columns): with the literal 0.0 (a float64) the select was a
    # float64, converted at the store and widened into the sum, and LLVM kept the row loop
    # scalar: 200x150 float32 10.6 us, 4.6 with the typed zero (200x100: 6.4 and 3.2;
    # float64 8.4 either way). The same bits: each sum still rounds once in the dtype
    @numba.njit(cache=True, nogil=True)
    def relu_grad_bias(g, h, out, gb):
        for j in range(gb.shape[0]):
            gb[j] = 0.0
        zero = gb[0]
        for i in range(g.shape[0]):
            gr, hr, orow = g[i], h[i], out[i]
            for j in range(gb.shape[0]):
                v = gr[j] if hr[j] > 0 else zero
                orow[j] = v
                gb[j] += v

    # a linear layer's bias add in place: NumPy's broadcasting add runs its inner loop
    # over one row (an output layer's 200x4 float32: 1.9 us against the loop's 0.7;
    # 200x150: 5.9 against 2.3)
    @numba.njit(cache=True, nogil=True)
    def bias_add(h, b):
        for i in range(h.shape[0]):
            row = h[i]
            for j in range(row.shape[0]):
                row[j] = row[j] + b[j]

    # relu_grad_bias writing relu's gradient over g (the lean walk's own cotangent:
    # vjp_np_into), not into a new array: its own loop, as an output passed as another
    # name for an input fails LLVM's overlap check and runs the scalar loop
    @numba.njit(cache=True, nogil=True)
    def relu_grad_bias_into(g, h, gb):
        for j in range(gb.shape[0]):
            gb[j] = 0.0
        zero = gb[0]
        for i in range(g.shape[0]):
            gr, hr = g[i], h[i]
            for j in range(gb.shape[0]):
                v = gr[j] if hr[j] > 0 else zero
                gr[j] = v
                gb[j] += v

    return bias_relu, relu_grad_bias, bias_add, relu_grad_bias_into


def _bias_relu(h, b, relu=True):
    """relu(h + b) (``relu``; else h + b) written over ``h`` in one native pass, where
    NumPy makes two (the broadcasting add, then maximum against zeros): 200x150 float32
    3.2 us against 16.5, 256x256 5.0 against 25 (min of many, quiet; the add alone:
    ``_build_loops``). The same bits: each element's sum rounds once in the dtype (numba
    keeps float32 + float32 in float32, and without fastmath nothing is contracted), and
    the select is np.maximum's (a NaN sum is kept, with its sign and payload; -0.0 and
    ties give +0.0). True when done; False (the caller's NumPy form) for another dtype
    or layout, a bias that is not one row of h's dtype, or while numba is not imported
    (``_loops``)."""
    dt = h.dtype
    if dt not in R.NATIVE_FLOATS or b.__class__ is not np.ndarray or b.dtype != dt or b.ndim != 1 \
            or h.ndim != 2 or b.shape[0] != h.shape[1] or not h.flags.c_contiguous:
        return False
    loops = _LOOPS[0] if _LOOPS else _loops()  # (the compiled loops: no call once there)
    if loops is None:
        return False
    loops[0 if relu else 2](h, b)
    return True


def _relu_grad_bias(g, out, into=False):
    """(relu's gradient, the bias gradient) from the cotangent ``g`` and the layer's
    output in one native pass: ``g`` where ``out > 0`` (else +0.0) into a new array (over
    ``g`` itself with ``into``: the lean walk owns it), and its column sums, where NumPy
    makes two passes (the select, then the reduce): 200x150 float32 4.6 us against ~20
    (the loop alone; 10.6 until its zero was typed: ``_build_loops``). The same bits: the
    select is relu's rule (elementwise._relu_grad), and the sums add in NumPy's order
    (``_loops``; tested against np.add.reduce, -0.0 and NaN included). None (the two
    rules' NumPy forms) for another dtype, shape or layout, a single column, or no
    numba."""
    dt = out.dtype
    if g.__class__ is not np.ndarray or g.shape != out.shape or g.dtype != dt or dt not in R.NATIVE_FLOATS \
            or out.ndim != 2 or out.shape[1] < 2 or not (g.flags.c_contiguous and out.flags.c_contiguous):
        return None
    loops = _LOOPS[0] if _LOOPS else _loops()
    if loops is None:
        return None
    gb = np.empty(out.shape[1], dt)
    if into:
        if not g.flags.writeable:
            return None
        loops[3](g, out, gb)
        return g, gb
    gr = np.empty(out.shape, dt)
    loops[1](g, out, gr, gb)
    return gr, gb


def _dense_abstract(x, w, *b, activation):
    if activation not in ACTIVATIONS:
        raise ValueError(f"dense: activation must be one of {ACTIVATIONS}, got {activation!r}")
    # the three records' rules in turn: the same errors as the ops the layer would bind
    h = L.matmul_p.abstract(x, w)
    out = E.add_p.abstract(h, *b) if b else h
    if activation == "relu":
        out = E.maximum_p.abstract(out, _PY_AVAL[int])
    if x.ndim != 2 or out.shape != h.shape or out.dtype != h.dtype:
        # the epilogue runs in the GEMM's buffer: a bias that broadcasts it to another
        # shape or dtype is not a Dense layer's (which binds matmul and add for it)
        raise InvalidArgumentError(
            f"dense: expects x (batch, in), w (in, units) and b (units,) of one dtype, got "
            f"{', '.join(f'{fmt_shape(a.shape)} {a.dtype}' for a in (x, w) + b)}")
    return out


def _dense_vjp(g, out, x, w, *b, activation):
    # relu's rule with its output for its input: out > 0 exactly where the pre-activation
    # is (a NaN stays NaN and is not > 0; -0.0 and ties at 0 become 0 or -0.0, not > 0)
    if activation == "relu":
        g = E.maximum_p.vjp(g, out, out, 0)[0]
    gb = E.add_p.vjp(g, out, out, b[0])[1] if b else None
    gx, gw = L.matmul_p.vjp(g, out, x, w)
    return (gx, gw, gb) if b else (gx, gw)


def _make_vjp_np(into):
    """The record's ``vjp_np`` (``into`` False) and ``vjp_np_into`` (True: the walk's own
    cotangent, a GEMM's fresh input gradient from the layer above; relu's gradient is
    written over it, not into a new (batch, units) array, which the step would write
    cold: DQN eager step, 200x100 and 200x150 float32 a step). Two functions, not one
    calling the other: a backward step is one frame here."""

    def vjp_np(need, g, out, x, w, *b, activation):
        # the rules' array forms, in the order the tape would run them for the three nodes
        gb = None
        if activation == "relu":
            both = _relu_grad_bias(g, out, into) if b and need[2] else None
            if both is None:
                g = E.maximum_p.vjp_np(_RELU_NEED, g, out, out, 0)[0]
            else:
                g, gb = both
        if gb is None and b and need[2]:
            gb = E.add_p.vjp_np((False, True), g, out, out, b[0])[1]
        gx = gw = None
        if w.ndim == 2:
            # matmul's vjp_np for a 2-D x (the rule) and w: the same products of the same
            # views (.T is the 2-D swapaxes), which have the operands' shapes (nothing to
            # unbroadcast)
            mm = _threads.matmul
            if need[0]:
                gx = mm(g, w.T)
            if need[1]:
                gw = mm(x.T, g)
        elif need[0] or need[1]:
            gx, gw = L.matmul_p.vjp_np(need, g, out, x, w)
        return (gx, gw, gb) if b else (gx, gw)

    vjp_np.__name__ = vjp_np.__qualname__ = "_dense_vjp_np_into" if into else "_dense_vjp_np"
    return vjp_np


_dense_vjp_np = _make_vjp_np(False)
_dense_vjp_np_into = _make_vjp_np(True)


dense_p = Primitive("dense", _dense_kernel, _dense_abstract, _dense_vjp, vjp_np=_dense_vjp_np,
                    vjp_np_into=_dense_vjp_np_into, aliases=False,
                    doc="activation(x @ w + b) for activation 'linear' or 'relu': Dense's eager call, one op")
