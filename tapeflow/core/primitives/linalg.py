"""matmul (batched, broadcasting batch dims) and einsum."""
from __future__ import annotations

import numpy as np

from ..aval import Aval, fmt_shape
from ...errors import InvalidArgumentError, InvalidArgumentTypeError
from ..primitive import Primitive, bind, aval_of
from . import _rules
from . import elementwise as E
from . import reductions as R
from . import shape as S
from ...util import threads as _threads


def _swap(x):
    n = len(aval_of(x).shape)
    return S.transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def _matmul_abstract(a, b):
    if a.ndim < 2 or b.ndim < 2:
        raise InvalidArgumentError(f"matmul: both operands need rank >= 2, got {fmt_shape(a.shape)} @ {fmt_shape(b.shape)}; "
                         "reshape vectors to (1, n) / (n, 1) or use tapeflow.tensordot")
    d = _rules.result_dtype("matmul", [a, b])
    if _rules._kind(d) not in "fiuc":
        raise InvalidArgumentTypeError(f"matmul: expects numeric tensors, got {d.name}")
    k1, k2 = a.shape[-1], b.shape[-2]
    if k1 is not None and k2 is not None and k1 != k2:
        raise InvalidArgumentError(f"matmul: inner dimensions differ: {fmt_shape(a.shape)} @ {fmt_shape(b.shape)}")
    try:
        batch = _rules.broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise InvalidArgumentError(f"matmul: batch dimensions are not broadcastable: {fmt_shape(a.shape)} @ "
                         f"{fmt_shape(b.shape)}") from None
    return Aval(batch + (a.shape[-2], b.shape[-1]), d)


def _matmul_vjp(g, out, a, b):
    # (complex: the adjoints g @ b^H and a^H @ g, TF's convention; E._cj is b itself for real b)
    ga = None if E._is_const(a) else E.unbroadcast(matmul(g, _swap(E._cj(b))), aval_of(a).shape)
    gb = None if E._is_const(b) else E.unbroadcast(matmul(_swap(E._cj(a)), g), aval_of(b).shape)
    return ga, gb


def _matmul_vjp_np(need, g, out, a, b):
    # _swap's transpose is the view .swapaxes makes; the matmul kernel is _threads.matmul
    if g.dtype.kind == "c":
        a, b = E._cj_np(a), E._cj_np(b)
    ga = E.unbroadcast_np(_threads.matmul(g, b.swapaxes(-1, -2)), a.shape) if need[0] else None
    gb = E.unbroadcast_np(_threads.matmul(a.swapaxes(-1, -2), g), b.shape) if need[1] else None
    return ga, gb


def matmul(a, b):
    return bind(matmul_p, a, b)


# The kernel picks BLAS threads per GEMM shape, timed on the machine it runs on
# (util/threads.py): where a second thread pays depends on the CPU, and GEMMs on
# many threads collapse on a shared machine.
def _matmul_python(ctx, e, ins, outs):
    """The python backend's line: the GEMM kernel called directly with its planned output,
    ``matmul(a, b, buf)``, where the default line went through ``impl_out``'s lambda and an ``out=``
    keyword (~0.1 us a GEMM: a compiled act() makes three). Same kernel, same bits."""
    buf = ctx.buffer(e.outputs[0])
    k = ctx.add("mm", _threads.matmul)
    if isinstance(buf, np.ndarray):
        return [f"{outs[0]} = {k}({ins[0]}, {ins[1]}, {ctx.add('buf', buf)})"]
    return [f"{outs[0]} = {k}({ins[0]}, {ins[1]})"]


matmul_p = Primitive("matmul", _threads.matmul, _matmul_abstract, _matmul_vjp, vjp_np=_matmul_vjp_np, aliases=False,
                     numpy_operands="adopt", complex=True,
                     impl_out=lambda out, a, b: _threads.matmul(a, b, out=out),
                     lowerings={"python": _matmul_python})



#: the longest contraction written as a sum of outer products inside the loop that
#: consumes the product (``outer_sum_p``): each element costs K multiply-adds there
#: against one write and one read of an (m, n) temporary (plus BLAS's call, which packs
#: panels its micro-kernel barely uses at such K). Measured on a busy 2-core EPYC,
#: float32, a compiled (256, K) @ (K, 256) and relu's gradient select with its column
#: sums, the fused loop vs BLAS and the select loop (min of 400, interleaved): K=2
#: 23 vs 42 us, K=8 25-33 vs 42-57, K=12 40 vs 50, K=16 46-55 vs 54-56 (a tie),
#: K=24 107 vs 64, K=32 150 vs 76: the loop's cost grows ~3x faster with K than BLAS's
SHORT_K = 12


def _outer_sum_numba(ins, e):
    # the operands come as templates over the contraction index {k} (the numba backend
    # reads a (m, K) block at row*K + k and a (K, n) block at k*n + c). Summed in k order;
    # the kernel's fastmath 'contract' makes the pairs FMAs, so the last bits differ from
    # BLAS's (which blocks and orders the sum its own way), the same way on every call
    return " + ".join(f"{ins[0].format(k=k)} * {ins[1].format(k=k)}" for k in range(e.inputs[0].aval.shape[-1]))


# A (m, K) @ (K, n) product over a short contraction (K <= SHORT_K), as matmul's record
# writes it for a fused loop over (m, n): each element the K products of its row's K
# values and its column's. Exists only in optimized graphs (fusion.py makes it from
# matmul's elementwise form and puts the matmul back where no loop takes it), so it
# needs no vjp; its kernel is matmul's, for the reference interpreter.
outer_sum_p = Primitive("outer_sum", lambda a, b: np.matmul(a, b), _matmul_abstract, differentiable=False,
                        aliases=False, fusion="elementwise", lowerings={"numba": _outer_sum_numba},
                        doc="a product over a short contraction, in a fused loop (compiler-made)")


#: the most output columns a product (m, k) @ (k, N) computes as N row folds inside the
#: loop that makes its left operand (``row_dots_p``). Measured on a busy 2-core EPYC,
#: float32, a compiled relu(h + b) @ W with h (256, 256), the fused loop vs the bias-relu
#: loop and the product's kernel (gemm_kernels' dots for 4-7 columns, else BLAS; min of
#: 400, interleaved): N=2 12 vs 27 us, N=6 23 vs 29-40, N=10 32 vs 48, N=12 47 vs 56,
#: N=16 53 vs 44: N accumulators per row, against a kernel whose cost grows more slowly
FEW_N = 12


def _row_dots_abstract(a, bt):
    return _matmul_abstract(a, _swap_aval(bt))


def _swap_aval(x):
    return Aval(x.shape[:-2] + (x.shape[-1], x.shape[-2]), x.dtype)


def _dots_terms(ins, e):
    # row_dots' and col_dots' terms, one per output column j (N, the result's last axis):
    # the loop's element of the first operand times the second's block, which comes as a
    # template over {k}, here j (row_dots' (N, k) block of rows, col_dots' (B, N) of g)
    return [f"{ins[0]} * {ins[1].format(k=j)}" for j in range(e.outputs[0].aval.shape[-1])]


# A (m, k) @ (k, N) product with few output columns (N <= FEW_N), given b's transpose
# bt (N, k): as matmul's record writes it for the fused loop over a's (m, k) elements
# that makes a (a layer's bias add and relu), N dot products of each row, folded along
# the row (``(ufunc, start, terms)``: per row, one sum per output column of the terms).
# Exists only in optimized graphs, like outer_sum; its kernel is matmul's.
row_dots_p = Primitive("row_dots", lambda a, bt: np.matmul(a, bt.T), _row_dots_abstract, differentiable=False,
                       aliases=False, fusion="reduction", lowerings={"numba": (np.add, "zero", _dots_terms, "rows")},
                       doc="a product with few output columns, as row folds in a fused loop (compiler-made)")


#: the most columns of g a weight gradient x.T @ g folds inside the loop over x
#: (``col_dots_p``): each term's sums are read and written per element (a row of
#: accumulators in L1), so it pays for fewer columns than row_dots. Measured on a busy
#: 2-core EPYC, float32, the actor's backward over (256, 256) (outer_sum, relu's select,
#: the bias gradient) with dW = h.T @ g folded in vs run after it (gemm_kernels' rows
#: loop, BLAS from 8 columns; min of 400, interleaved): N=2 24 vs 38 us, N=4 40 vs 48,
#: N=6 40-51 vs 43-59, N=8 83 vs 80, N=12 110 vs 94
FEW_N_SUMS = 6


def _col_dots_abstract(x, g):
    return _matmul_abstract(_swap_aval(x), g)


# A weight gradient x.T @ g with g of few columns (1 < N <= FEW_N_SUMS), given x (B, k): as
# matmul's record writes it for a fused loop over x's elements (the relu gradient's loop,
# which reads x for its mask), N column sums of x times g's column, folded down the
# rows (``(ufunc, start, terms, "columns")``). Exists only in optimized graphs, like
# outer_sum; its kernel is matmul's.
col_dots_p = Primitive("col_dots", lambda x, g: np.matmul(x.T, g), _col_dots_abstract, differentiable=False,
                       aliases=False, fusion="reduction", lowerings={"numba": (np.add, "zero", _dots_terms, "columns")},
                       doc="a weight gradient with few columns, as column folds in a fused loop (compiler-made)")


def _matmul_elementwise(e, new_var, producer):
    """The elementwise equations a rank-2 float matmul equation is, or None. The fusion
    pass reads this: ``new_var(aval)`` makes an intermediate value, ``producer(v)`` is
    the equation that made ``v`` (None for an input). Four shapes:

    * (m, 1) @ (1, n), a contraction of length 1, is the multiply of a column by a row
      (the backward of a layer with one output unit: g @ W.T with W of shape (n, 1)).
      Every element is one product, rounded once: the kernel's bits (its ``_outer``
      path is that multiply). It joins the loop that consumes it (a relu gradient)
      instead of writing an (m, n) temporary.
    * (m, K) @ (K, n) with 1 < K <= SHORT_K, K below m and n (g @ W.T under an output
      layer of K units, an actor's 6 actions) is ``outer_sum``: K multiply-adds per
      element in the loop that consumes it (the relu gradient), no (m, n) temporary.
    * (m, k) @ (k, N) with N <= FEW_N output columns, N below m (a critic's Q = h @ w,
      an actor's 6 actions h @ W3) is ``row_dots`` of h and w's transpose, N row sums
      of products per row: it joins the loop that makes h (the bias add and relu before
      it), which then reads h once instead of writing it for a GEMM to read back.
    * x.T @ g with g of shape (B, 1) (that layer's weight gradient) is the column sums
      of x times g as a column, read along x's rows (not across them, as x.T's would
      be): it joins the loop that reads g (the relu gradient before it). With g of
      1 < N <= FEW_N_SUMS columns it is ``col_dots``: N such column sums, in the loop over x
      (the one that reads x for relu's mask).

    The sums' order is the loop's, not BLAS's: last bits may differ from eager's."""
    a, b = e.inputs
    sa, sb = getattr(a, "aval", None), getattr(b, "aval", None)
    if sa is None or sb is None or len(sa.shape) != 2 or len(sb.shape) != 2 or sa.dtype != sb.dtype \
            or sa.dtype.kind != "f" or None in sa.shape or None in sb.shape:
        return None
    Eqn = type(e)  # ir.graph's Eqn, as e is
    (m, k), n = sa.shape, sb.shape[1]
    if k == 1:
        return [Eqn(E.mul_p, [a, b], e.outputs, {}, e.src)]
    if k <= SHORT_K and k < m and k < n:
        return [Eqn(outer_sum_p, [a, b], e.outputs, {}, e.src)]
    if n > FEW_N or n >= m:
        return None
    made = producer(a)
    if made is not None and made.prim is S.transpose_p:
        x = made.inputs[0]                  # a == x.T: x is (k, m)
        if n > 1:
            return [Eqn(col_dots_p, [x, b], e.outputs, {}, e.src)] if n <= FEW_N_SUMS and n < m else None
        prod, sums = new_var(Aval((k, m), sa.dtype)), new_var(Aval((1, m), sa.dtype))
        return [Eqn(E.mul_p, [x, b], [prod], {}, e.src),
                Eqn(R.reduce_sum_p, [prod], [sums], {"axis": (0,), "keepdims": True}, e.src),
                Eqn(S.transpose_p, [sums], e.outputs, {"perm": (1, 0)}, e.src)]
    bt = new_var(Aval((n, k), sb.dtype))
    return [Eqn(S.transpose_p, [b], [bt], {"perm": (1, 0)}, e.src),
            Eqn(row_dots_p, [a, bt], e.outputs, {}, e.src)]


matmul_p.lowerings["elementwise"] = _matmul_elementwise


def _parse(spec, n):
    if "..." in spec:
        raise InvalidArgumentError("einsum: '...' is not supported; spell the axes out")
    if "->" not in spec:
        raise InvalidArgumentError("einsum: give the output explicitly, e.g. 'ij,jk->ik'")
    ins, out = spec.replace(" ", "").split("->")
    ins = ins.split(",")
    if len(ins) != n:
        raise InvalidArgumentError(f"einsum: spec {spec!r} names {len(ins)} operands, got {n}")
    return ins, out


def _einsum_abstract(*ops, spec):
    ins, out = _parse(spec, len(ops))
    d = _rules.result_dtype("einsum", ops)
    sizes = {}
    for sub, a in zip(ins, ops):
        if len(sub) != a.ndim:
            raise InvalidArgumentError(f"einsum: operand {fmt_shape(a.shape)} has rank {a.ndim}, spec {sub!r} has {len(sub)}")
        for c, n in zip(sub, a.shape):
            if c in sizes and sizes[c] is not None and n is not None and sizes[c] != n:
                raise InvalidArgumentError(f"einsum: axis {c!r} has sizes {sizes[c]} and {n} in {spec!r}")
            if n is not None or c not in sizes:
                sizes[c] = n
    return Aval(tuple(sizes[c] for c in out), d)


def _einsum_vjp(g, out, *ops, spec):
    ins, outs = _parse(spec, len(ops))
    grads = []
    for i, (sub, x) in enumerate(zip(ins, ops)):
        if E._is_const(x):
            grads.append(None)
            continue
        if len(set(sub)) != len(sub):
            raise NotImplementedError(f"einsum gradient: repeated index in operand {sub!r} (a diagonal)")
        others = [(s, o) for j, (s, o) in enumerate(zip(ins, ops)) if j != i]
        avail = set(outs) | {c for s, _ in others for c in s}
        kept = "".join(c for c in sub if c in avail)
        gspec = ",".join([outs] + [s for s, _ in others]) + "->" + kept
        # (complex: the other operands conjugated, TF's convention; E._cj is o itself for real o)
        gi = bind(einsum_p, g, *[E._cj(o) for _, o in others], spec=gspec)
        if kept != sub:  # axes summed only within x: its gradient is constant along them
            xs = aval_of(x).shape
            gi = S.reshape(gi, tuple(xs[k] if c in kept else 1 for k, c in enumerate(sub)))
            gi = S.broadcast_like(gi, x)
        grads.append(gi)
    return tuple(grads)


# einsum may return a view of its operand ("ij->ji"): aliases stays True
einsum_p = Primitive("einsum", lambda *ops, spec: np.einsum(spec, *ops, optimize=len(ops) > 2),
                     _einsum_abstract, _einsum_vjp, complex=True)
