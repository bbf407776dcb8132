"""Native tier: a whole graph lowered to one numba function with fused loops.

Applies to graphs made of elementwise ops, full reductions, variable
reads/writes, ``scan`` loops (``fori_loop`` with Python-int bounds) and
``while_loop`` loops (a tensor condition: ``fori_loop`` with tensor bounds,
AutoGraph's ``for i in tf.range(n)``), over
tensors that are scalars or share one shape per loop. That covers whole
training loops of small models (the 100,000-step linear regression) and
elementwise optimizer updates, the cases where per-op Python dispatch, not
arithmetic, is the cost. Anything else returns None and the Python backend
compiles the graph.

Every equation is lowered from its primitive's record only:

* ``fusion == "elementwise"`` with a scalar form in ``lowerings["numba"]`` (a
  format string over the operand names, ``{dt}`` the output dtype, or a
  callable ``(operand names, eqn) -> expression`` that raises
  NotImplementedError to decline); ufunc kernels derive theirs from the ufunc.
  An operand that is a block of a short contraction (``fusion.contraction_block``:
  outer_sum's) comes to the callable as a template over the contraction index ``{k}``;
* ``fusion == "reduction"`` with ``lowerings["numba"] = (ufunc, start)``, a fold
  in the output's dtype (integers stay exact; float32 sums accumulate in float64);
  or ``(ufunc, start, terms, along)``, a product's fold (matmul's row_dots and
  col_dots forms: ``_fold``), accumulated in the output's dtype as BLAS does;
* variable reads/writes, ``scan``, ``while_loop``, ``cond`` (AutoGraph's ``if``
  and break flags inside a loop) and scalar reshapes: lowerings this module
  attaches to those records (``_Structural``, which also
  names the params holding a control-flow op's sub-graphs).

Anything else declines the graph, and the python backend compiles it. A
failure while numba compiles (a TypingError) falls back to the python backend
too, with one debug line on the "tapeflow" logger.

Lowering:

* every array value is handled flattened (elementwise results do not
  depend on layout); scalars are numba scalars of the exact dtype, and
  literals are typed to their equation's dtype, so float32 math stays float32;
* equations are scheduled into *stages*: an elementwise equation runs in the
  first stage where all its inputs exist; a reduction's result exists only
  after its stage's loop. Each stage's equations become one ``for i in
  range(n)`` loop (one pass over memory, no temporaries for values used only
  inside it); scalar equations run between loops;
* Variables are SSA values inside the function: a read is the current
  binding, a write rebinds it; the wrapper passes variables in and stores the
  final values back (fresh arrays, so earlier snapshots stay intact).
* float32 sums accumulate in float64 (more accurate than NumPy's pairwise
  float32 sum, so results agree with the reference within float32 rounding);
  in a loop over rows (a bias row, column sums) each row's partial sum is
  float32 and rows add in float64, and column sums add each value into its
  column's float64 total in the inner loop (LLVM vectorizes it with float32
  and float64 lanes mixed).
* exp (and sigmoid) of float32 use ``numba_math.simd_exp``, tanh ``simd_tanh``: they vectorize.
* a loop over at least ``PARALLEL_MIN_ELEMENTS`` elements is split into chunks
  of rows (or elements) run by ``prange`` on ``loop_threads()`` threads; each
  chunk folds its reductions into its own partials, added in chunk order after
  the loop. The chunk count depends on the sizes only, so results are the same
  on every call and for any thread count (sums may differ from a serial loop's
  by rounding). Smaller loops (an optimizer step of a small model) stay serial.

The generated source is written to a cache directory and compiled with
``cache=True``: the machine code is reused across processes.
"""
from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys

import numpy as np

from ...core import primitive as _prim
from ...core.primitives.effects import assign_variable_p
from ...core.primitives.shape import reshape_p
from ...ir.control_flow import cond_p, scan_p, while_p
from ...ir.graph import Literal, Var
from ..passes.buffers import InPlace
from ..passes.fusion import broadcasts_in_loop, column_rows, contraction_block, trailing_row_size
from . import Backend, get_backend, register_backend
from ...util.cache import cache_dir

NAME = "numba"
log = logging.getLogger("tapeflow")


class Unsupported(Exception):
    pass


class InPlaceRefused(Unsupported):
    """Results that cannot be written over their input (``refused``: result Vars); the
    others of the same kernel may be."""

    def __init__(self, msg, refused):
        super().__init__(msg)
        self.refused = refused


class _Structural:
    """A lowering this module writes itself (it needs the generator's state),
    attached to the primitive's record: ``kind`` selects the code path;
    ``subgraphs`` names the params holding sub-graphs (their constants become
    kernel arguments, their variables the kernel's); ``loop``: a loop, which
    makes the native tier worth compiling on its own."""

    def __init__(self, kind, subgraphs=(), loop=False):
        self.kind, self.subgraphs, self.loop = kind, subgraphs, loop


_READ, _WRITE, _RESHAPE = (_Structural(k) for k in ("read", "write", "scalar_reshape"))
_SCAN = _Structural("counted_loop", subgraphs=("body",), loop=True)
_WHILE = _Structural("conditional_loop", subgraphs=("cond_graph", "body_graph"), loop=True)
_COND = _Structural("branch", subgraphs=("branches",))
_prim.READ_VARIABLE.lowerings[NAME] = _READ
assign_variable_p.lowerings[NAME] = _WRITE
scan_p.lowerings[NAME] = _SCAN
while_p.lowerings[NAME] = _WHILE
cond_p.lowerings[NAME] = _COND
# values are flat in the kernel: only a reshape between () and (1,) changes how one is held
reshape_p.lowerings[NAME] = _RESHAPE


def _structural(p):
    low = p.lowerings.get(NAME)
    return low.kind if isinstance(low, _Structural) else None


def _subgraphs(e):
    """The sub-graphs of a control-flow equation (none for other equations)."""
    low = e.prim.lowerings.get(NAME)
    if not isinstance(low, _Structural):
        return []
    subs = [e.params[k] for k in low.subgraphs]
    return [g for s in subs for g in (s if isinstance(s, (tuple, list)) else (s,))]


def _is_loop(p):
    low = p.lowerings.get(NAME)
    return isinstance(low, _Structural) and low.loop


def _scalar_form(p):
    """The record's scalar form of an elementwise primitive, or None."""
    low = p.lowerings.get(NAME)
    if p.fusion == "elementwise" and (isinstance(low, str) or callable(low)) and not isinstance(low, _Structural):
        return low
    return None


def _fold(p):
    """(ufunc, start[, terms, along]) of a reduction the record says numba may fold, or
    None. ``terms(operand refs, eqn)``: a fold of a product (a contraction block
    operand's ref a template over {k}) into several results, one expression each:
    ``along`` "rows", one sum per row and term (row_dots: (m, N) from an (m, k) loop),
    or "columns", one per column and term (col_dots: (k, N) from a (B, k) loop)."""
    low = p.lowerings.get(NAME)
    if p.fusion == "reduction" and isinstance(low, tuple) and isinstance(low[0], np.ufunc):
        return low
    return None


def _complex_eqn(e):
    """Whether an equation reads or makes a complex value. The scalar forms, folds and
    buffer dtypes of this backend are written for real numbers (a cast's ``{dt}({0})``
    would drop an imaginary part), so complex stays out of native code: such an equation
    never joins a fused loop, and a graph holding one is declined (its kernels run)."""
    for v in e.inputs:
        a = v.aval
        if a is not None and a.dtype.kind == "c":
            return True
    for v in e.outputs:
        if v.aval.dtype.kind == "c":
            return True
    return False


def _has_complex(graph):
    for e in graph.eqns:
        if _complex_eqn(e) or any(_has_complex(g) for g in _subgraphs(e)):
            return True
    return False


def can_lower_in_loop(e):
    """Can this equation run inside a native loop? (the fusion pass asks): an
    elementwise op with a scalar form, or a fold over all or leading axes; never
    one over complex values (``_complex_eqn``)."""
    if _complex_eqn(e):
        return False
    if _scalar_form(e.prim) is not None:
        return True
    return _fold(e.prim) is not None and not isinstance(e.inputs[0], Literal) and _loop_fold(e)


def _loop_fold(e):
    """Does this reduction fold inside the loop over its input: over all axes
    (a scalar), over leading axes (per-column sums of a batch), or over the last
    axis of a matrix or more (per-row sums: a product with one output column)?"""
    nd = len(e.inputs[0].aval.shape)
    if len(_fold(e.prim)) > 2:               # a product's fold (the record's terms)
        return nd == 2
    axes = tuple(sorted(a % max(nd, 1) for a in e.params["axis"]))
    return bool(axes) and (axes == tuple(range(len(axes))) and (len(axes) < nd or not e.params["keepdims"])
                           or _row_fold(e))


def _row_fold(e):
    """Is this a reduction over the last axis only, of an input of rank 2 or more?"""
    nd = len(e.inputs[0].aval.shape)
    fold = _fold(e.prim)
    if len(fold) > 2:                        # a product's fold: the record says along what
        return nd == 2 and fold[3] == "rows"
    return nd >= 2 and tuple(a % nd for a in e.params["axis"]) == (nd - 1,)


#: A loop over at least this many elements runs in chunks on several threads (``prange``).
#: Threads pay once the loop's work dwarfs a fork and join (~5-10 us while numba's OpenMP
#: workers spin, tens of us to wake them): in isolation a 64k-element chain (bias add,
#: sigmoid, a sum: 60-250 us on one core) already saves tens of us, but inside a training
#: step the threads cost more (below). Loops of small and mid-sized models (the DQN/TD3
#: updates, up to a few 100k elements) stay serial.
#: Measured on a shared 2-core EPYC (kernel calls, min of 30-50): a 1M-element chain
#: 1.04 -> 0.45-0.53 ms on two threads; the 10k autoencoder's 10,000x784 and 10,000x196
#: passes 8.2 -> 5.5 ms and 2.7 -> 1.25 ms; one thread in a parallel kernel costs what
#: the serial kernel does (within 3%; kernel calls alone: inside the TD3 256 cycle on a 2-core
#: Zen 4, with 20 of its loops made parallel by a 32k threshold, one thread cost +845 us per
#: cycle, ~42 us per kernel, and two threads +4.8 to +12.9 ms). Inside a training step whose small loops sit
#: between GEMMs, the fork/join plus the OpenMP workers competing with the BLAS threads
#: cost more than they save: with 64k as the threshold the TD3 400-300 update's loops of
#: 77k-120k elements went parallel and its compiled step took 15.2 ms instead of 7.3 ms
#: serial (make bench quick, 2-core EPYC). 128k keeps them serial (the largest is 120k)
#: and keeps the autoencoder's 154k-element weight loops parallel (10k L-BFGS iteration
#: 0.122-0.131 s at 64k/128k, 0.148 s at 1M; run-to-run noise on this machine is ~10%).
PARALLEL_MIN_ELEMENTS = 1 << 17
#: Chunks are at least this big, and at most ``MAX_CHUNKS`` (enough to balance 2..64 threads).
MIN_CHUNK_ELEMENTS = 1 << 12
MAX_CHUNKS = 64
# numba's parallel=True also rewrites array expressions and NumPy calls into threaded loops;
# the kernels thread only the loops they split themselves
PRANGE_ONLY = {"comprehension": False, "reduction": False, "inplace_binop": False, "setitem": False,
                "numpy": False, "stencil": False, "fusion": False, "prange": True}


def chunks(n, units, folds_columns):
    """How many prange chunks a loop over ``n`` elements, stepping over ``units``
    (rows, or elements in a flat loop), is split into; 0: it runs serially.
    Depends on the sizes only, never on the thread count, so a sum's rounding is
    the same on any machine load. Column sums keep one row of partials per chunk
    and add them after the loop: each chunk spans at least 8 rows so that adding
    the partials costs at most an eighth of the pass."""
    if n < PARALLEL_MIN_ELEMENTS:
        return 0
    k = min(MAX_CHUNKS, n // MIN_CHUNK_ELEMENTS, units // 8 if folds_columns else units)
    return k if k >= 2 else 0


#: Busy-wait of numba's OpenMP workers after a parallel loop, in libgomp's spin iterations
#: (~0.1-0.5 ms). Its default, 300,000 (several ms), keeps a core spinning while the GEMM
#: that follows a fused loop wants both: measured on 2 cores, a 10000x196x784 sgemm right
#: after a parallel kernel took ~6 ms longer than after a serial one, ~1 ms with this.
OPENMP_SPINCOUNT = "10000"


def short_openmp_spin():
    """Set libgomp's spin before numba loads its OpenMP pool (it reads the environment
    once, when loaded), unless the user chose a wait policy."""
    if not any(os.environ.get(v) for v in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")):
        os.environ["GOMP_SPINCOUNT"] = OPENMP_SPINCOUNT


def loop_threads():
    """Threads for the kernels' parallel loops. ``tf.config.threading``'s intra-op
    count when set: the user's choice, as in TF (capped at numba's pool,
    ``NUMBA_NUM_THREADS``). Else (0, the runtime's choice) the whole pool while the
    machine has a core to spare, one while another process keeps the cores busy, by
    the BLAS policy's measure (util/threads.py): a chunk waiting for a time slice
    holds up the whole loop."""
    from ...config import threading as tf_threading
    from ...util.threads import machine_quiet
    most = _numba().config.NUMBA_NUM_THREADS
    want = tf_threading.get_intra_op_parallelism_threads()
    if want > 0:
        return min(want, most)
    return most if most == 1 or machine_quiet() else 1


def _numba():
    try:
        import numba  # noqa: F401
        return numba
    except Exception:  # pragma: no cover - numba is pinned, but stay usable without it
        return None


def available():
    return _numba() is not None


def _cache_dir():
    d = os.path.join(cache_dir(), "numba")
    os.makedirs(d, exist_ok=True)
    return d


def _dtname(dt):
    return {"float32": "np.float32", "float64": "np.float64", "int32": "np.int32", "int64": "np.int64",
            "bool": "np.bool_"}.get(np.dtype(dt).name) or (_ for _ in ()).throw(Unsupported(f"dtype {dt}"))


def _is_scalar(v):
    return (v.aval if not isinstance(v, Literal) else None) is None or v.aval.shape == ()


def worthwhile(graph):
    """Use the native tier for loops, and for graphs with a long elementwise chain."""
    n_elem = 0
    for e in graph.eqns:
        if _is_loop(e.prim):
            return True
        if _scalar_form(e.prim) is not None and e.outputs and e.outputs[0].aval.shape != ():
            n_elem += 1
    return n_elem >= 6


def try_compile(graph, name, required=False):
    """A callable running ``graph`` natively, or None (declined). ``required``:
    raise NotImplementedError instead of declining. Compile failures raise
    ``CompileError`` (the caller falls back)."""
    if not required and not worthwhile(graph):
        return None
    if _has_complex(graph):
        if required:
            raise NotImplementedError("numba backend: complex values (complex64/128) run on the python backend")
        return None
    try:
        # lowering is plain Python: decide before paying numba's import (~0.2 s)
        gen = _Gen(graph)
        src, wrapper_info = gen.module()
    except Unsupported as e:
        if required:
            raise NotImplementedError(f"numba backend: {e}") from None
        return None
    nb = _numba()
    if nb is None:
        if required:
            from ...util.extras import missing_extra_error
            raise missing_extra_error("numba", "native", "backend='numba' (the native tier)")
        return None
    return _load(graph, src, wrapper_info, name)


def _load(graph, src, wrapper_info, name):
    """The wrapped kernel of generated module ``src`` (written to the cache directory once)."""
    from .numba_math import KERNEL_IMPORTS  # imports numba: only once a kernel will be compiled
    src = KERNEL_IMPORTS + "\n" + src
    key = hashlib.sha1(src.encode()).hexdigest()[:16]
    path = os.path.join(_cache_dir(), f"tf_{key}.py")
    if not os.path.exists(path):
        tmp = path + f".{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(src)
        os.replace(tmp, path)  # atomic: concurrent processes never see half a file
    modname = f"_tapeflow_numba_{key}"
    mod = sys.modules.get(modname)
    if mod is None:
        spec = importlib.util.spec_from_file_location(modname, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules[modname] = mod
    return _make_wrapper(mod.kernel, graph, wrapper_info, src, name)


class CompileError(Exception):
    """numba could not compile a lowered graph (a TypingError...)."""


def _numba_type(nb, shape, dtype, flat=True):
    """A kernel argument's numba type: a scalar, or a C array, flat unless ``flat`` is
    False (the kernel flattens it: ``_Gen.flatten``)."""
    t = nb.from_dtype(np.dtype(dtype))
    return t if shape == () else nb.types.Array(t, 1 if flat else len(shape), "C")


def _make_wrapper(kernel, graph, info, src, name):
    consts = [np.ascontiguousarray(val).reshape(-1) if np.ndim(val) else np.asarray(val)[()]
              for val in info["consts"]]
    variables = info["variables"]
    in_shapes = [v.aval.shape for v in graph.inputs]
    out_shapes = [(v.aval.shape if not isinstance(v, Literal) else ()) for v in graph.outputs]
    out_dtypes = [(v.aval.dtype if not isinstance(v, Literal) else np.asarray(v.val).dtype) for v in graph.outputs]
    var_shapes = [var._v.shape for var in variables]
    var_dtypes = [var._v.dtype for var in variables]
    # Compile now, for the argument types the wrapper passes (flat C arrays and
    # scalars), so a typing failure surfaces here, not at the user's first call.
    nb = _numba()
    if info.get("parallel"):
        short_openmp_spin()
    # result i is written into kernel argument out_params[i] (None: the kernel makes it);
    # params[j]: the first result written into argument j
    out_params = info["out_params"]
    params = [out_params.index(j) for j in range(1 + max((j for j in out_params if j is not None), default=-1))]
    # result i is written over input inplace[i] (a variable's own array: bind() below)
    inplace = info.get("inplace", {})
    sig = [_numba_type(nb, v.aval.shape, v.aval.dtype, flat=False) for v in graph.inputs]
    sig += [_numba_type(nb, np.shape(c), np.asarray(c).dtype) for c in consts]
    sig += [_numba_type(nb, s, d, flat=False) for s, d in zip(var_shapes, var_dtypes)]
    sig += [_numba_type(nb, out_shapes[i], out_dtypes[i]) for i in params]
    try:
        kernel.compile(tuple(sig))
    except Exception as e:  # numba's TypingError, LoweringError, ...
        raise CompileError(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None

    from numba.core.errors import NumbaError
    from numba.np.numpy_support import as_dtype
    fallback = []  # the python backend's function, once numba failed at a call

    def failed(e, args):
        # arguments of types not compiled above (read-only arrays...) that numba cannot
        # type: run the python backend from now on; no variable or buffer was written yet
        log.debug("tapeflow: numba failed on %r at call time (%s); using the python backend",
                  name, str(e).splitlines()[0] if str(e) else type(e).__name__)
        fallback.append(get_backend("python").lower(graph, None, _ident(name)))
        return fallback[0](*args)

    # an array result of the output's dtype is returned as numba made it (no np.asarray);
    # when the compiled result types are unknown, every result is converted (the safe default)
    cres = getattr(kernel, "overloads", {}).get(tuple(sig))
    ret_types = list(cres.signature.return_type.types) if cres is not None else []
    exact = [j is not None or i in inplace or (bool(ret_types) and isinstance(t := ret_types.pop(0), nb.types.Array)
                                               and t.ndim == 1 and as_dtype(t.dtype) == np.dtype(d))
             for i, (d, j) in enumerate(zip(out_dtypes, out_params))]
    ns = {"_kernel": kernel, "_asarray": np.asarray, "_empty": np.empty, "_fallback": fallback,
          "_failed": failed, "_NumbaError": NumbaError, "_set_threads": nb.set_num_threads,
          "_loop_threads": loop_threads}
    ns.update({f"_c{i}": c for i, c in enumerate(consts)})
    ns.update({f"_T{i}": np.dtype(v.aval.dtype).type for i, v in enumerate(graph.inputs) if v.aval.shape == ()})
    ns.update({f"_var{j}": var for j, var in enumerate(variables)})
    ns.update({f"_vs{j}": s for j, s in enumerate(var_shapes)})
    ns.update({f"_vd{j}": d for j, d in enumerate(var_dtypes)})
    ns.update({f"_s{i}": s for i, s in enumerate(out_shapes)})
    ns.update({f"_d{i}": d for i, d in enumerate(out_dtypes)})

    def bind(buffers):
        """A ``run`` writing result i into ``buffers[i]`` (an array of its shape and dtype,
        C-contiguous and writable: a planned buffer; None, or a result the kernel cannot
        write into, gets a new array per call). The buffers' flat views are made here, once.
        ``buffers[i]`` an ``InPlace(j)``: result i overwrites input j, a variable's array
        the caller made the variable's own or a slot nothing reads after this call (the
        buffer plan's promise); that needs a kernel of its own, compiled here (the
        result no argument but that input holds, so the kernel's arguments stay
        noalias). If it cannot be compiled, the result gets a new array per call."""
        want = {i: b.index for i, b in enumerate(buffers or ()) if isinstance(b, InPlace)}
        if want and want != inplace:
            try:
                gen = _Gen(graph, {graph.outputs[i]: graph.inputs[j] for i, j in want.items()})
                variant = _load(graph, *gen.module(), name)
            except InPlaceRefused as e:
                # the others still may: a fold's result (col_dots' sums, stored after the loop)
                # cannot overwrite its operand, the relu-gradient select beside it can (TD3's
                # actor backward: the refused one had left both fresh, 256x256 a call)
                log.debug("tapeflow: %r keeps some results out of place (%s)", name, e)
                if any(graph.outputs[i] not in e.refused for i in want):
                    return bind([None if isinstance(b, InPlace) and graph.outputs[i] in e.refused else b
                                 for i, b in enumerate(buffers)])
            except (Unsupported, CompileError) as e:
                log.debug("tapeflow: %r keeps its results out of place (%s)", name, e)
            else:
                return variant.bind(buffers)
        use = {}
        for j, i in enumerate(params):
            buf = buffers[i] if buffers is not None else None
            if isinstance(buf, np.ndarray) and buf.shape == out_shapes[i] and buf.dtype == out_dtypes[i] \
                    and buf.flags.c_contiguous and buf.flags.writeable:
                use[j] = buf
        wrapper = _wrapper_source(in_shapes, len(consts), var_shapes, out_shapes, exact, info.get("parallel"),
                                  out_params, params, set(use), inplace)
        bns = dict(ns)
        bns.update({f"_B{j}": buf for j, buf in use.items()})
        bns.update({f"_ob{j}": buf.reshape(-1) for j, buf in use.items()})
        exec(wrapper, bns)
        run = bns["run"]
        run.__tapeflow_source__ = src
        run.__tapeflow_wrapper__ = wrapper
        run.bind = bind
        return run

    return bind(None)


def _wrapper_source(in_shapes, n_consts, var_shapes, out_shapes, exact, parallel, out_params, params, bound,
                    inplace):
    """Source of ``run(a0, a1, ...)``, the Python function that calls a kernel: input and
    variable arrays go in as they are (the kernel flattens them: ``_Gen.flatten``), 0-d
    values as scalars (a NumPy scalar of the input's dtype, the usual case, as it is);
    results come back in their shapes, variables' new values into the variables.
    Straight-line code for these shapes, because the fused tier calls small kernels
    often (a DQN step 6 times, a TD3 iteration about 30): a generic loop over the
    arguments and results cost about as much as 13 NumPy calls on small arrays.
    ``exact[i]``: result i is an array of the output's dtype (used as it is).
    ``out_params[i]``: the kernel argument result i is written into (None: the kernel
    returns a new array); ``params[j]``: the result argument j holds; ``bound``: the
    arguments given a buffer (``_ob{j}`` flat, ``_B{j}`` returned in its shape), the
    others get a new array (``_empty``) per call. ``inplace[i]``: result i is input
    ``a{inplace[i]}``, which the kernel wrote over (it is neither an argument nor returned)."""
    args = [f"a{i}" for i in range(len(in_shapes))]
    # per call, a.reshape(-1) costs ~0.15 us and _asarray(a)[()] ~0.2 us (a TD3 cycle's 45
    # kernels made ~300 such calls: ~50 us of a 6.3 ms cycle); the scalar's type test ~0.02 us.
    # TD3 256-256 cycle, same process, 400 interleaved pairs: per-pair median -41 us (min -60 us)
    call = [a if s != () else f"({a} if {a}.__class__ is _T{i} else _asarray({a})[()])"
            for i, (a, s) in enumerate(zip(args, in_shapes))]
    call += [f"_c{i}" for i in range(n_consts)]
    call += [f"_var{j}._v" if s != () else f"_asarray(_var{j}._v)[()]" for j, s in enumerate(var_shapes)]
    call += [f"_ob{j}" if j in bound else (f"o{j}" if len(out_shapes[i]) == 1 else f"o{j}.reshape(-1)")
             for j, i in enumerate(params)]
    sig = ", ".join(args)
    lines = [f"def run({sig}):", "    if _fallback:", f"        return _fallback[0]({sig})"]
    if parallel:  # per call: the machine's load and the user's setting change
        lines.append("    _set_threads(_loop_threads())")
    # made in their shape, passed flat (a view): what is returned owns its memory, so a
    # variable assigned it may later be updated in place (core.tensor._own_array)
    lines += [f"    o{j} = _empty(_s{i}, _d{i})" for j, i in enumerate(params) if j not in bound]
    lines += ["    try:", f"        r = _kernel({', '.join(call)})", "    except _NumbaError as e:",
              f"        return _failed(e, ({sig}{',' if len(args) == 1 else ''}))"]
    n_out = sum(j is None and i not in inplace for i, j in enumerate(out_params))  # the results the kernel returns
    for j, s in enumerate(var_shapes):
        lines.append(f"    _var{j}._v = _asarray(r[{n_out + j}], _vd{j})" + (f".reshape(_vs{j})" if s != () else ""))
    outs = []
    k = 0  # the kernel's returned results, in order
    for i, s in enumerate(out_shapes):
        j = out_params[i]
        if i in inplace:
            outs.append(f"a{inplace[i]}")
            continue
        if j is not None:
            outs.append(f"_B{j}" if j in bound else f"o{j}")
            continue
        if s == ():
            outs.append(f"_asarray(r[{k}], _d{i})")
        elif not exact[i]:
            outs.append(f"_asarray(r[{k}], _d{i}).reshape(_s{i})")
        else:
            outs.append(f"r[{k}]" if len(s) == 1 else f"r[{k}].reshape(_s{i})")
        k += 1
    lines.append(f"    return [{', '.join(outs)}]")
    return "\n".join(lines) + "\n"


class _Gen:
    def __init__(self, graph, inplace=None):
        self.graph = graph
        self.inplace = inplace or {}  # result Var -> the input Var whose array it overwrites
        self._loc = {}
        self._blocks = {}        # in a loop: a contraction block's Var -> its read, a template over {k}
        self._loads = {}         # in a loop: an array read -> the temporary holding it this iteration
        self.n = 0
        self.var_order = []      # Variables, in first-use order
        self.var_index = {}
        self.parallel = False    # a loop was split into prange chunks
        self.out_params = {}     # top-level result Var -> the kernel argument it is written into

    def fresh(self, prefix="t"):
        self.n += 1
        return f"{prefix}{self.n}"

    def module(self):
        g = self.graph
        self._collect_vars(g)
        env = {}
        args = []
        prologue = []
        for v in g.inputs:
            env[v] = a = self.fresh("a")
            args.append(self.flatten(a, v.aval.shape, prologue))
        self.const_list = []
        for v, val in self._all_consts(g):
            if np.asarray(val).dtype.kind not in "fiub":   # (bfloat16's kind is "V": numba has no such type)
                raise Unsupported(f"a constant of dtype {np.asarray(val).dtype} (numba has float32/64, ints, bool)")
            env[v] = a = self.fresh("c")
            args.append(a)
            self.const_list.append(val)
        self.const_env = dict(env)
        var_names = {}
        for var in self.var_order:
            nm = self.fresh("var")
            var_names[id(var)] = nm
            args.append(self.flatten(nm, var._v.shape, prologue))
            _dtname(var._v.dtype)
        # an array result of a top-level loop is written into an array the caller passes
        # (a planned buffer, or a new array): the kernel allocates none of its results
        made = {o for e in g.eqns if _scalar_form(e.prim) is not None or _fold(e.prim) is not None
                for o in e.outputs}
        self.out_params = {}
        for v in g.outputs:
            if v in self.inplace:
                src = self.inplace[v]
                if v not in made or src.aval.shape != v.aval.shape or src.aval.dtype != v.aval.dtype:
                    raise Unsupported(f"{v} cannot overwrite {src}")
                self.out_params[v] = env[src]
            elif isinstance(v, Var) and v in made and v.aval.shape != () and v not in self.out_params:
                self.out_params[v] = nm = self.fresh("out")
                args.append(nm)
        body = prologue + self.emit_graph(g, env, var_names, indent=1)
        # results written into an argument are not returned: the caller holds them, and
        # numba boxes each returned array into a new ndarray object (~0.7 us apiece)
        outs = [self.ref(env, v, g.outputs) for v in g.outputs if v not in self.out_params]
        new = [v for v in self.out_params if v not in self.inplace]
        rets = outs + [var_names[id(var)] for var in self.var_order]
        # error_model="numpy": x / 0 is inf or nan, as in NumPy (Python's model raises)
        opts = "cache=True, fastmath={'reassoc', 'contract'}, nogil=True, error_model='numpy'"
        if self.parallel:
            # only the prange loops run in parallel: numba's other rewrites (array expressions,
            # np.full...) would thread small statements the chunks' design does not expect
            opts += f", parallel={PRANGE_ONLY!r}"
        # noalias (numba_noalias.py): the results passed in overlap no other argument
        opts += ", pipeline_class=NoAliasCompiler"
        lines = ["import numpy as np", "from numba import njit" + (", prange" if self.parallel else ""),
                 "from tapeflow.compiler.backends.numba_noalias import NoAliasCompiler", "",
                 f"@njit({opts})", f"def kernel({', '.join(args)}):"] + body
        lines.append(f"    return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
        outs_of = [new.index(v) if v in new else None for v in g.outputs]
        inplace = {i: g.inputs.index(self.inplace[v]) for i, v in enumerate(g.outputs) if v in self.inplace}
        return "\n".join(lines) + "\n", {"variables": list(self.var_order), "consts": self.const_list,
                                         "parallel": self.parallel, "out_params": outs_of, "inplace": inplace}

    @staticmethod
    def flatten(name, shape, prologue):
        """The parameter an input or variable array of ``shape`` comes in as, ``name``
        the flat array the kernel uses: an array of 2 or more dims arrives as the caller
        holds it, and the kernel flattens it (a view, free for the C array the kernel is
        compiled for: the wrapper's own ``reshape(-1)`` per argument cost ~0.15 us). One
        that is not C-contiguous (a transposed view) makes numba compile a specialization
        once, in which ``ascontiguousarray`` copies it, as ``reshape(-1)`` did."""
        if len(shape) < 2:
            return name
        prologue.append(f"    {name} = np.ascontiguousarray({name}_nd).reshape(-1)")
        return f"{name}_nd"

    def _all_consts(self, g):
        out = list(g.consts)
        for e in g.eqns:
            for sub in _subgraphs(e):
                out += self._all_consts(sub)
        return out

    def _collect_vars(self, g):
        for e in g.eqns:
            kind = _structural(e.prim)
            if kind in ("read", "write"):
                var = e.params["var"]
                if id(var) not in self.var_index:
                    self.var_index[id(var)] = len(self.var_order)
                    self.var_order.append(var)
            for sub in _subgraphs(e):
                self._collect_vars(sub)

    def lit(self, val, dtype):
        if isinstance(val, (bool, np.bool_)):
            return "True" if val else "False"
        if dtype.kind == "f":
            r = repr(float(val))
            if r in ("inf", "-inf", "nan"):
                r = f"np.{r.replace('-', '')}" if r != "-inf" else "-np.inf"
            return f"{_dtname(dtype)}({r})"
        info = np.iinfo(dtype)
        if not info.min <= int(val) <= info.max:
            # NumPy raises OverflowError here; a native cast would wrap it silently
            raise Unsupported(f"integer literal {val} out of range for {dtype}")
        return f"{_dtname(dtype)}({int(val)})"

    def ref(self, env, v, _outs=None):
        if isinstance(v, Literal):
            return self.lit(v.val, np.asarray(v.val).dtype if not isinstance(v.val, float) else np.dtype(np.float32))
        return env[v]

    # -- scheduling --------------------------------------------------------------------------------
    def emit_graph(self, g, env, var_names, indent):
        """Emit ``g``'s equations; env maps Vars to (scalar or flat-array) names."""
        pad = "    " * indent
        lines = []
        # stage of availability per value: values in env at entry are ready at stage 0
        ready = {v: 0 for v in env}
        var_stage = {id(var): 0 for var in self.var_order}
        stages = []  # list of (scalar_eqns, loop_eqns) per stage
        placed = []
        loop_stage = {}  # value computed in a stage's loops -> that stage

        def need(v):
            return 0 if isinstance(v, Literal) else ready[v]

        for e in g.eqns:
            p = e.prim
            name = p.name
            structural = _structural(p)
            if structural == "read":
                st = var_stage[id(e.params["var"])]
                kind = "scalar"
            elif structural == "write":
                # not before an earlier write or read of the variable (program order)
                st = max(need(e.inputs[0]), var_stage[id(e.params["var"])])
                kind = "scalar"
            elif _subgraphs(e):
                # control flow may read and write any variable: after every earlier access
                st = max([need(v) for v in e.inputs] + [max(var_stage.values(), default=0)])
                kind = "control"
            elif _scalar_form(p) is not None:
                out = e.outputs[0]
                shapes = {v.aval.shape for v in e.inputs if not isinstance(v, Literal)} - {()}
                if out.aval.shape == ():
                    kind = "scalar"
                else:
                    if None in out.aval.shape:
                        raise Unsupported("unknown dims")
                    if not all(broadcasts_in_loop(sh, out.aval.shape) for sh in shapes):
                        raise Unsupported(f"{name} broadcasting {shapes} -> {out.aval.shape}")
                    kind = ("loop", out.aval.shape)
                st = max([need(v) for v in e.inputs], default=0)
                if kind != "scalar" and any(isinstance(v, Var) and loop_stage.get(v) == st
                                            and v.aval.shape != out.aval.shape for v in e.inputs):
                    st += 1  # a row made by another loop of this stage: after that loop
            elif _fold(p) is not None and not isinstance(e.inputs[0], Literal) and None not in e.inputs[0].aval.shape:
                x = e.inputs[0]
                if _fold(p)[1] != "zero" and 0 in x.aval.shape:
                    raise Unsupported(f"{name} of an empty tensor (an error in NumPy)")
                if x.aval.shape == () and not e.params["keepdims"]:
                    kind, st = "scalar", need(x)
                elif _loop_fold(e):
                    kind = ("reduce", x.aval.shape)
                    st = need(x)
                else:
                    raise Unsupported(f"{name} over axes {e.params['axis']} of {x.aval.shape}")
            elif structural == "scalar_reshape" and e.inputs[0].aval.shape in ((), (1,)) \
                    and e.outputs[0].aval.shape in ((), (1,)):
                kind, st = "scalar", need(e.inputs[0])
            else:
                raise Unsupported(name)
            if kind == "scalar" or kind == "control":
                # scalar code placed before stage st's loop; a scalar computed from a
                # reduction of stage k is ready at k+1 already (need() says so). One that
                # uses a value computed in stage st's loops runs after them: loops see it
                # from stage st+1 on
                after = any(isinstance(v, Var) and loop_stage.get(v) == st for v in e.inputs)
                for o in e.outputs:
                    ready[o] = st + 1 if after else st
            elif kind[0] == "loop":
                for o in e.outputs:
                    ready[o] = st
                    loop_stage[o] = st
            else:
                for o in e.outputs:
                    ready[o] = st + 1
            if structural == "write":
                # later reads and writes go to the next stage: this write may be emitted
                # after the stage's loops, and reads are emitted before them
                var_stage[id(e.params["var"])] = st + 1
            if kind == "control":
                # its sub-graphs may write variables: everything after it waits for it
                for k in var_stage:
                    var_stage[k] = max(var_stage[k], st + 1)
                for o in e.outputs:
                    ready[o] = st + 1
            while len(stages) <= st:
                stages.append([])
            stages[st].append((e, kind))
            placed.append(e)
        # which loop-computed values are used outside their own loop
        used_outside = set()
        stage_of = {}
        for si, items in enumerate(stages):
            for e, kind in items:
                for o in e.outputs:
                    stage_of[o] = (si, kind)
        for si, items in enumerate(stages):
            for e, kind in items:
                for v in e.inputs:
                    if isinstance(v, Var) and v in stage_of:
                        s2, k2 = stage_of[v]
                        if isinstance(k2, tuple) and k2[0] == "loop" and (kind == "scalar" or kind == "control"
                                                                         or s2 != si or kind[1] != k2[1]):
                            used_outside.add(v)
        for v in g.outputs:
            if isinstance(v, Var):
                used_outside.add(v)
        if g is self.graph:
            self._check_inplace(stages, stage_of)
        for si, items in enumerate(stages):
            scal = [(e, k) for e, k in items if not isinstance(k, tuple)]
            loops = {}
            for e, k in items:
                if isinstance(k, tuple):
                    loops.setdefault(k[1], []).append(e)
            # scalar equations whose inputs exist now, then the loops, then the rest
            # (in program order; a scalar may use one computed just before it)
            pre, avail = [], set(env)
            for e, k in scal:
                if _structural(e.prim) == "read" or all(isinstance(v, Literal) or v in avail for v in e.inputs):
                    pre.append((e, k))
                    avail.update(e.outputs)
            for e, k in pre:
                lines += self.emit_scalar(e, k, env, var_names, pad)
            for shape, eqs in loops.items():
                lines += self.emit_loop(shape, eqs, env, used_outside, pad)
            for e, k in scal:
                if (e, k) not in pre:
                    lines += self.emit_scalar(e, k, env, var_names, pad)
        return lines

    def _check_inplace(self, stages, stage_of):
        """A result written over its input's array: that input may be read only by the
        loop that writes the result (at the element it writes: same shape), whose store
        comes last in each iteration (``emit_loop``); a read in another loop or in scalar
        code could come after the store and see the new value."""
        refused, why = set(), []
        for o, src in self.inplace.items():
            si, kind = stage_of.get(o, (None, None))
            if not isinstance(kind, tuple) or kind[0] != "loop" or src in self.graph.outputs:
                refused.add(o)
                why.append(f"{o} cannot overwrite {src}: not a loop's result, or {src} is returned")
                continue
            for sj, items in enumerate(stages):
                for e, k in items:
                    if src in e.inputs and (sj != si or not isinstance(k, tuple) or k[1] != kind[1]):
                        refused.add(o)
                        why.append(f"{o} cannot overwrite {src}: {e.prim.name} reads it elsewhere")
        if refused:
            raise InPlaceRefused("; ".join(dict.fromkeys(why)), refused)

    def emit_scalar(self, e, kind, env, var_names, pad):
        structural = _structural(e.prim)
        if structural == "read":
            # a snapshot: a later write rebinds the variable's name, never mutates it
            t = self.fresh("r")
            env[e.outputs[0]] = t
            return [f"{pad}{t} = {var_names[id(e.params['var'])]}"]
        if structural == "write":
            src = self.ref(env, e.inputs[0])
            nm = var_names[id(e.params["var"])]
            var = e.params["var"]
            if var._v.shape == ():
                return [f"{pad}{nm} = {_dtname(var._v.dtype)}({src})"]
            return [f"{pad}{nm} = {src}.copy()"]
        if structural == "counted_loop":
            return self.emit_scan(e, env, var_names, pad)
        if structural == "conditional_loop":
            return self.emit_while(e, env, var_names, pad)
        if structural == "branch":
            return self.emit_cond(e, env, var_names, pad)
        out = e.outputs[0]
        t = self.fresh()
        env[out] = t
        src = self.ref(env, e.inputs[0])
        if structural == "scalar_reshape":
            if e.inputs[0].aval.shape == out.aval.shape:
                return [f"{pad}{t} = {src}"]
            if out.aval.shape == ():  # (1,) -> (): the element
                return [f"{pad}{t} = {src}[0]"]
            # () -> (1,): a one-element array (a scalar is not an array to numba)
            return [f"{pad}{t} = np.empty(1, {_dtname(out.aval.dtype)})", f"{pad}{t}[0] = {src}"]
        if _fold(e.prim) is not None:  # a reduction of a scalar over no axes
            return [f"{pad}{t} = {src}"]
        return [f"{pad}{t} = {self.expr(e, env, None)}"]

    def expr(self, e, env, idx):
        dt = e.outputs[0].aval.dtype
        ins = []
        for v in e.inputs:
            if isinstance(v, Literal):
                # literals take the dtype of the op's tensor operands (weak typing)
                other = [x.aval.dtype for x in e.inputs if not isinstance(x, Literal)]
                ldt = other[0] if other else dt
                ins.append(self.lit(v.val, ldt if np.dtype(ldt).kind != "b" or isinstance(v.val, bool) else dt))
            else:
                r = env[v]
                if idx is not None and v.aval.shape != ():
                    r = f"{r}[{idx}]"
                ins.append(r)
        form = _scalar_form(e.prim)
        try:
            code = form.format(*ins, dt=_dtname(dt)) if isinstance(form, str) else form(ins, e)
        except NotImplementedError as ex:  # the record's form declines this equation
            raise Unsupported(f"{e.prim.name}: {ex}") from None
        # in the output's dtype: numba widens int32 + int32 to int64, float32 ** to float64
        return f"{_dtname(dt)}({code})"

    def emit_loop(self, shape, eqs, env, used_outside, pad):
        """One pass over ``shape``'s elements for ``eqs``. Operands of a trailing
        shape (a bias row) and reductions over leading axes (column sums) make
        it a loop over rows with an inner loop over the row's C elements (the
        one LLVM vectorizes); otherwise a flat loop. A big loop is split into
        ``_chunks`` parts run by ``prange`` (see ``PARALLEL_MIN_ELEMENTS``)."""
        n = int(np.prod(shape))
        # (an operand of the loop's size differs from its shape only by leading 1s: read at [i])
        ops = {v for e in eqs for v in e.inputs if isinstance(v, Var) and v.aval.shape not in ((), shape)
               and v not in self._loc and int(np.prod(v.aval.shape)) != n}
        # a column operand (one value per row, ``column_rows``) makes the loop run over rows
        # of the last axis, the column read at the row's index
        cols = {v for v in ops if column_rows(v.aval.shape, shape) is not None}
        # the blocks of a short contraction (outer_sum's (m, K) and (K, n) operands) are read
        # per row and per column too
        blocks = {v: contraction_block(v.aval.shape, shape) for v in ops - cols}
        blocks = {v: b for v, b in blocks.items() if b is not None}
        rows = {trailing_row_size(v.aval.shape, shape) for v in ops - cols - set(blocks)}
        rows.discard(1)  # one-element operands ((1, 1) against a batch) are read at [0]
        if cols or blocks:
            rows.add(shape[-1])
        row_folds = {e for e in eqs if _fold(e.prim) is not None and _row_fold(e)}
        column_folds = [e for e in eqs if _fold(e.prim) is not None and e.outputs[0].aval.shape != ()
                        and e not in row_folds]
        folds_columns = bool(column_folds)
        # a product's column folds (col_dots) keep one row of sums per term: rows of the loop's width
        rows |= {e.inputs[0].aval.shape[-1] if len(_fold(e.prim)) > 2 else int(np.prod(e.outputs[0].aval.shape))
                 for e in column_folds}
        if row_folds:
            # per-row sums: the inner loop runs along the last axis
            rows.add(shape[-1])
        if len(rows) > 1 or None in rows:
            raise Unsupported(f"a loop over {shape} with rows of sizes {sorted(map(str, rows))}")
        C = rows.pop() if rows else None
        units = n // C if C is not None else n      # what the loop (and its chunks) step over
        nch = chunks(n, units, folds_columns)
        setup, chunk = [], []                       # before the loop; inside each chunk (or the loop)
        cpad = pad + "    " if nch else pad         # the chunk body's indent
        i = self.fresh("i")
        c = self.fresh("c") if C is not None else None
        row = self.fresh("row") if C is not None else None
        inner = cpad + ("        " if C is not None else "    ")
        # a block's template over the contraction index {k} (the record's form fills it in);
        # unsigned in chunked loops, as the row index is
        u = (lambda x: f"np.uint64({x})") if nch else str
        self._blocks = {v: f"{env[v]}[{row} * {u(K)} + {u('{k}')}]" if kind == "columns"
                        else f"{env[v]}[{u('{k}')} * {u(C)} + {c}]" for v, (kind, K) in blocks.items()}
        body = []
        row_pre, row_post = [], []  # statements around the inner loop (nested loops only)
        accs = []  # (accumulator, output, its start value, fold function, per column)
        slots = {}  # accumulator of a product's column fold -> (term j, terms N): out[c * N + j]
        last = []  # stores over an input's array: after every read of it in the iteration
        for e in eqs:
            out = e.outputs[0]
            fold = _fold(e.prim)
            if fold is not None:
                ufunc, start = fold[:2]
                acc = self.fresh("acc")
                odt = out.aval.dtype
                fn = f"np.{ufunc.__name__}"
                val = self._loc_ref(env, e.inputs[0], i, c, C, row, cols)
                wide, narrow = self._fold_start(ufunc, start, odt), self._fold_start(ufunc, start, odt, widen=False)
                if e in row_folds:
                    # one accumulator per row and output column, in the output's dtype (a
                    # float32 dot product of a row, vectorized as BLAS's is), stored after the
                    # row's inner loop; a chunk holds whole rows, so the stores need no partials
                    arr = self.out_params.get(out)
                    if arr is None:
                        arr = self.fresh("arr")
                        setup.append(f"{pad}{arr} = np.empty({int(np.prod(out.aval.shape))}, {_dtname(odt)})")
                    terms = [val] if len(fold) == 2 else \
                        fold[2]([self._loc_ref(env, v, i, c, C, row, cols) for v in e.inputs], e)
                    for j, term in enumerate(terms):
                        a_j = acc if j == 0 else self.fresh("acc")
                        at = f"{row}" if len(terms) == 1 else f"{row} * {u(len(terms))} + {u(j)}"
                        row_pre.append(f"{cpad}    {a_j} = {narrow}")
                        body.append(f"{inner}{a_j} = {fn}({a_j}, {term})")
                        row_post.append(f"{cpad}    {arr}[{at}] = {a_j}")
                    env[out] = arr
                    continue
                if len(fold) > 2:
                    # a product's column folds (col_dots, a weight gradient x.T @ g): one row
                    # of sums per term, accumulated in the output's dtype as BLAS does (a
                    # float32 multiply-add chain per element, in row order), so the inner
                    # loop keeps one vector width
                    terms = fold[2]([self._loc_ref(env, v, i, c, C, row, cols) for v in e.inputs], e)
                    for j, term in enumerate(terms):
                        a_j = acc if j == 0 else self.fresh("acc")
                        chunk.append(f"{cpad}{a_j} = np.full({C}, {narrow})")
                        body.append(f"{inner}{a_j}[{c}] = {fn}({a_j}[{c}], {term})")
                        accs.append((a_j, out, narrow, fn, True))
                        slots[a_j] = (j, len(terms))
                    continue
                if out.aval.shape != () and wide != narrow:
                    # widened column sums: each value is added into its column's float64 total
                    # in the inner loop. (Adding a few rows in float32 first moved the 3rd
                    # L-BFGS loss of the batch-100 autoencoder 4e-5 from the float64 run: that
                    # loss amplifies gradient rounding.) Storing the row's float32 values and
                    # adding them in a second short loop per row (the AVX2-era form, kept the
                    # inner loop one float width) gives the same bits but costs a store and a
                    # reload per value: with AVX-512 (zmm float32 and float64 lanes mixed in
                    # one loop) the one-loop form measured 54 -> 39 us for TD3's 256x256 kernel
                    # of 4 bias-gradient sums, 57 -> 43 us for an Adam step with 2 (min of 500
                    # calls, 2-core EPYC Zen 4; AVX2 code, NUMBA_CPU_NAME=haswell, gained too:
                    # 38 -> 28 us, 57 -> 35 us). TD3 cycles, one process, interleaved pairs:
                    # 256-256 per-pair median -33 us (400 pairs), 400-300 -67 us (300 pairs)
                    chunk.append(f"{cpad}{acc} = np.full({C}, {wide})")
                    body.append(f"{inner}{acc}[{c}] = {fn}({acc}[{c}], np.float64({val}))")
                    accs.append((acc, out, wide, fn, True))
                    continue
                if out.aval.shape != ():
                    # one accumulator per column, in the output's dtype (max, min, integers: exact)
                    chunk.append(f"{cpad}{acc} = np.full({C}, {narrow})")
                    body.append(f"{inner}{acc}[{c}] = {fn}({acc}[{c}], {val})")
                    accs.append((acc, out, narrow, fn, True))
                    continue
                if C is not None and wide != narrow:
                    # a widened (float32 -> float64) sum: each row's partial sum in the
                    # output dtype (one vector width in the inner loop), rows added in float64
                    part = self.fresh("part")
                    row_pre.append(f"{cpad}    {part} = {narrow}")
                    body.append(f"{inner}{part} = {fn}({part}, {val})")
                    row_post.append(f"{cpad}    {acc} = {fn}({acc}, np.float64({part}))")
                else:
                    body.append(f"{inner}{acc} = {fn}({acc}, {val})")
                chunk.append(f"{cpad}{acc} = {wide}")
                accs.append((acc, out, wide, fn, False))
                continue
            t = self.fresh()
            code = self.expr_loop(e, env, i, c, C, row, cols, body, inner)
            body.append(f"{inner}{t} = {code}")
            self._loc[out] = t
            if out in used_outside:
                arr = self.out_params.get(out)
                if arr is None:
                    arr = self.fresh("arr")
                    setup.append(f"{pad}{arr} = np.empty({n}, {_dtname(out.aval.dtype)})")
                (last if out in self.inplace else body).append(f"{inner}{arr}[{i}] = {t}")
                env[out] = arr
            else:
                env[out] = None  # loop-local only
        if nch:
            ch, lo, hi = self.fresh("ch"), self.fresh("lo"), self.fresh("hi")
            span = f"range({lo}, {hi})"
        else:
            span = f"range({units})"
        if C is None:
            chunk.append(f"{cpad}for {i} in {span}:")
        else:
            # chunked: the row index is unsigned (above), so are the others (uint64 mixed with
            # int64 would make float64)
            uC = f"np.uint64({C})" if nch else str(C)
            chunk.append(f"{cpad}for {row} in {span}:")
            chunk += row_pre
            chunk.append(f"{cpad}    for {c} in range({uC}):")
            chunk.append(f"{inner}{i} = {row} * {uC} + {c}")
        chunk += body + last + row_post
        lines = setup
        totals = [acc for acc, *_ in accs]
        if not nch:
            lines += chunk
        else:
            # Each chunk folds its own part into a row of partials; the chunks' partials are then
            # combined in chunk order. The chunk count depends on the loop's size only, so a sum's
            # rounding is the same for any thread count and on every run (it may differ from the
            # one-pass serial loop's by rounding: the additions are grouped differently).
            parts = [self.fresh("parts") for _ in accs]
            for p_, (acc, out, start, fn, col) in zip(parts, accs):
                lines.append(f"{pad}{p_} = np.full({(nch, C) if col else nch}, {start})")
                chunk.append(f"{cpad}{p_}[{ch}{', :' if col else ''}] = {acc}")
            lines.append(f"{pad}for {ch} in prange({nch}):")
            # unsigned bounds: an index that may be negative (a range from a signed start) is
            # wrapped around at every access, and that check stops LLVM vectorizing the loop
            # (2-3x slower); a range from 0 (the serial loops) is known not to be
            lines.append(f"{cpad}{lo} = np.uint64({ch} * {units} // {nch})")
            lines.append(f"{cpad}{hi} = np.uint64(({ch} + 1) * {units} // {nch})")
            lines += chunk
            totals = [self.fresh("total") for _ in accs]
            for tot, p_, (acc, out, start, fn, col) in zip(totals, parts, accs):
                k = self.fresh("k")
                if col:
                    c2 = self.fresh("c")
                    lines += [f"{pad}{tot} = np.full({C}, {start})", f"{pad}for {k} in range({nch}):",
                              f"{pad}    for {c2} in range({C}):",
                              f"{pad}        {tot}[{c2}] = {fn}({tot}[{c2}], {p_}[{k}, {c2}])"]
                else:
                    lines += [f"{pad}{tot} = {start}", f"{pad}for {k} in range({nch}):",
                              f"{pad}    {tot} = {fn}({tot}, {p_}[{k}])"]
            self.parallel = True
        for tot, (acc, out, *_), in zip(totals, accs):
            t = self.fresh()
            if acc in slots:                 # one term's sums into its column of the (k, N) result
                (j, nt), c2 = slots[acc], self.fresh("c")
                arr = env.get(out) or self.out_params.get(out)
                if arr is None:
                    arr = self.fresh("arr")
                    lines.append(f"{pad}{arr} = np.empty({int(np.prod(out.aval.shape))}, {_dtname(out.aval.dtype)})")
                lines += [f"{pad}for {c2} in range({C}):", f"{pad}    {arr}[{c2} * {nt} + {j}] = {tot}[{c2}]"]
                env[out] = arr
                continue
            if out.aval.shape == ():
                lines.append(f"{pad}{t} = {_dtname(out.aval.dtype)}({tot})")
            elif out in self.out_params:  # column sums into the caller's array
                t, c2 = self.out_params[out], self.fresh("c")
                lines += [f"{pad}for {c2} in range({int(np.prod(out.aval.shape))}):",
                          f"{pad}    {t}[{c2}] = {_dtname(out.aval.dtype)}({tot}[{c2}])"]
            else:
                lines.append(f"{pad}{t} = {tot}.astype({_dtname(out.aval.dtype)})")
            env[out] = t
        self._loc, self._blocks, self._loads = {}, {}, {}
        return lines

    def _fold_start(self, ufunc, start, dtype, widen=True):
        """The accumulator's first value, in the output's dtype (integers stay
        exact: int64 above 2**53 must not pass through a float), except that
        float sums accumulate in float64 when ``widen`` (more accurate than
        NumPy's pairwise float32 sum, so results agree within float32 rounding)."""
        if start == "zero":
            if dtype.kind == "f":
                return "np.float64(0.0)" if widen else self.lit(0.0, dtype)
            return self.lit(ufunc.identity, dtype)
        if dtype.kind == "f":
            return self.lit(float("-inf") if start == "lowest" else float("inf"), dtype)
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return self.lit(info.min if start == "lowest" else info.max, dtype)
        raise Unsupported(f"fold start {start} for {dtype}")

    def _loc_ref(self, env, v, i, c=None, C=None, row=None, cols=()):
        if isinstance(v, Literal):
            return self.lit(v.val, np.dtype(np.float32) if isinstance(v.val, float) else np.asarray(v.val).dtype)
        if v in self._loc:
            return self._loc[v]
        if v.aval.shape == ():
            return env[v]
        if int(np.prod(v.aval.shape)) == 1:
            return f"{env[v]}[0]"
        if v in cols:
            # a column broadcast along the last axis; tested before rows: a (256, 1) column
            # has a (256,) row's size in a (256, 256) loop
            return f"{env[v]}[{row}]"
        if v in self._blocks:
            return self._blocks[v]
        if C is not None and int(np.prod(v.aval.shape)) == C:
            return f"{env[v]}[{c}]"  # a row broadcast over the loop's leading axes
        return f"{env[v]}[{i}]"

    def expr_loop(self, e, env, i, c=None, C=None, row=None, cols=(), body=None, inner=""):
        # like expr(), but array operands are read at [i] (rows at [c], columns at [row]) or
        # from the loop-local temporary. With ``body``, each array read is a statement of its
        # own first (once per element and array): a read inside a select's branch
        # ``(a[i] if m else b[i])`` is a branch LLVM keeps (it does not load speculatively),
        # and a random mask mispredicts it half the time: a 256x256 select of two arrays
        # took 300 us against 18 us with both loaded and the select a blend
        local_env = {}
        for v in e.inputs:
            if isinstance(v, Var):
                ref = self._loc_ref(env, v, i, c, C, row, cols)
                if body is not None and v.aval.shape != () and v not in self._loc and v not in self._blocks:
                    if ref not in self._loads:
                        self._loads[ref] = self.fresh("ld")
                        body.append(f"{inner}{self._loads[ref]} = {ref}")
                    ref = self._loads[ref]
                local_env[v] = ref
        tmp = dict(env)
        tmp.update(local_env)
        return self.expr(e, tmp, None)

    # -- loops -----------------------------------------------------------------------------------
    def _loop_carries(self, inputs, avals, env, pad):
        """Names holding a loop's carries, set from ``inputs``: scalars in the carry's
        dtype (numba must see one type on every iteration), arrays copied (with zero
        trips the result would otherwise be the caller's array)."""
        names, lines = [], []
        for v, a in zip(inputs, avals):
            c = self.fresh("carry")
            src = self.ref(env, v)
            lines.append(f"{pad}{c} = {_dtname(a.dtype)}({src})" if a.shape == () else f"{pad}{c} = {src}.copy()")
            names.append(c)
        return names, lines

    def _sub_env(self, g, names):
        """The environment of sub-graph ``g``, its inputs bound to ``names``."""
        env = dict(zip(g.inputs, names))
        for v, _ in g.consts:
            env[v] = self.const_env[v]  # hoisted to a kernel argument
        return env

    def _emit_sub(self, g, env, var_names, pad):
        saved, self._loc = self._loc, {}
        lines = self.emit_graph(g, env, var_names, indent=len(pad) // 4)
        self._loc = saved
        return lines

    def _carry_update(self, carry, outs, avals, env, pad):
        if not carry:
            return []
        # one tuple assignment: a body returning its inputs in another order (a swap;
        # AutoGraph carries the loop index's previous value) reads every old carry first
        rhs = [f"{_dtname(a.dtype)}({self.ref(env, o)})" if a.shape == () else self.ref(env, o)
               for o, a in zip(outs, avals)]
        comma = "," if len(carry) == 1 else ""
        return [f"{pad}{', '.join(carry)}{comma} = {', '.join(rhs)}{comma}"]

    def emit_scan(self, e, env, var_names, pad):
        p = e.params
        body = p["body"]
        n, nx = p["n_carry"], p["n_xs"]
        if nx or len(body.outputs) != n:
            raise Unsupported("scan with xs or stacked outputs")
        avals = [v.aval for v in body.inputs[1:1 + n]]
        carry, lines = self._loop_carries(e.inputs[:n], avals, env, pad)
        caps = [self.ref(env, v) for v in e.inputs[n:]]
        k, it = self.fresh("k"), self.fresh("it")
        order = f"range({p['length']} - 1, -1, -1)" if p["reverse"] else f"range({p['length']})"
        lines += [f"{pad}for {k} in {order}:", f"{pad}    {it} = np.int32({p['start']} + {k})"]
        benv = self._sub_env(body, [it] + carry + caps)
        lines += self._emit_sub(body, benv, var_names, pad + "    ")
        lines += self._carry_update(carry, body.outputs, avals, benv, pad + "    ")
        env.update(zip(e.outputs, carry))
        return lines

    def emit_while(self, e, env, var_names, pad):
        """``while cond(carry): carry = body(carry)`` as a native loop: the trip count
        (a tensor bound, a data-dependent test) is only known while it runs."""
        p = e.params
        cg, bg, n, nc = p["cond_graph"], p["body_graph"], p["n_carry"], p["n_cond_caps"]
        avals = [v.aval for v in bg.inputs[:n]]
        carry, lines = self._loop_carries(e.inputs[:n], avals, env, pad)
        ccaps = [self.ref(env, v) for v in e.inputs[n:n + nc]]
        bcaps = [self.ref(env, v) for v in e.inputs[n + nc:]]
        inner = pad + "    "
        if p["max_iter"] is None:
            lines.append(f"{pad}while True:")
        else:
            lines.append(f"{pad}for {self.fresh('it')} in range({int(p['max_iter'])}):")
        cenv = self._sub_env(cg, carry + ccaps)
        lines += self._emit_sub(cg, cenv, var_names, inner)
        test = cg.outputs[0]
        ref = self.ref(cenv, test)
        if not isinstance(test, Literal) and test.aval.shape == (1,):
            ref += "[0]"
        lines += [f"{inner}if not {ref}:", f"{inner}    break"]
        benv = self._sub_env(bg, carry + bcaps)
        lines += self._emit_sub(bg, benv, var_names, inner)
        lines += self._carry_update(carry, bg.outputs, avals, benv, inner)
        env.update(zip(e.outputs, carry))
        return lines


    def emit_cond(self, e, env, var_names, pad):
        """``if pred: outs = true_branch(ops) else: outs = false_branch(ops)``: AutoGraph's
        ``if`` (and its break/continue/return flags) inside a native loop."""
        fg, tg = e.params["branches"]
        avals = [o.aval for o in e.outputs]
        if any(None in a.shape for a in avals):
            raise Unsupported("cond output of unknown shape")
        ops = [self.ref(env, v) for v in e.inputs[1:]]
        outs = [self.fresh("o") for _ in e.outputs]
        lines = [f"{pad}if {self.ref(env, e.inputs[0])}:"]
        for g in (tg, fg):
            if g is fg:
                lines.append(f"{pad}else:")
            genv = self._sub_env(g, ops)
            block = self._emit_sub(g, genv, var_names, pad + "    ")
            block += self._carry_update(outs, g.outputs, avals, genv, pad + "    ")
            lines += block or [f"{pad}    pass"]
        env.update(zip(e.outputs, outs))
        return lines


def _ident(name):
    s = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return s if s and not s[0].isdigit() else "f_" + s


class NumbaBackend(Backend):
    """Whole graphs as one native function. Under 'auto' it takes only graphs
    where native loops pay (``worthwhile``) and declines the rest."""

    name = NAME
    extra = "native"
    requires = "numba"

    def available(self):
        return available()

    def lower(self, graph, plan, name, required=False):
        if not required and not worthwhile(graph):
            return None
        try:
            return try_compile(graph, name, required=required)
        except CompileError as e:
            log.debug("tapeflow: numba could not compile %r (%s); using the python backend", name, e)
            return None


register_backend(NumbaBackend())
