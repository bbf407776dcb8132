"""Straight-line Python code generation.

Each equation becomes one line calling its primitive's NumPy kernel, e.g.::

    def compiled(a, b):
        c = _read_0._v
        d = matmul(a, c, out=_buf0)
        e = maximum(d, 0.0, out=_buf1)
        ...
        return [g]

The kernels come from the primitive table (``impl``/``impl_out``), never
from here; a primitive whose record has a ``lowerings["python"]`` entry (variable
reads and writes, control flow, print) is emitted by it instead:
``lowering(ctx, eqn, in_names, out_names) -> [lines]``, or None where the kernel's
call below serves (a transpose's inline view, not for a 0-d value). Buffers: the buffer plan
(passes/buffers.py) names slots; this backend allocates one array per slot
when it compiles a graph, and an intermediate with a static shape is written
into its slot's array with ``out=``. Values that escape (outputs, variable
writes) are always freshly allocated, so a caller never sees a buffer change
under it.

Generated source is registered in ``linecache`` (tracebacks show the line)
and removed from it when the compiled function is freed.
"""
from __future__ import annotations

import functools
import itertools
import linecache
import weakref

import numpy as np

from ...core import primitive as _prim
from ...core.primitives.effects import assign_variable_p
from ...core.tensor import _own_arrays, _place_owned
from ...ir.graph import Literal, Var, alias_roots, last_uses, subgraphs
from ...util import placement as _placement
from . import Backend, register_backend

NAME = "python"
_uid = itertools.count()


class Ctx:
    """Names and namespace for one generated module, and the buffer plan of
    the graph being emitted (``plan.copies``: writes that must copy)."""

    def __init__(self, plan=None):
        # (the module name NumPy's RuntimeWarnings are attributed to: tapeflow/__init__.py filters them)
        self.ns = {"np": np, "__name__": "tapeflow.compiled"}
        self.n = itertools.count()
        self.plan = plan
        self.arrays = {}  # Var -> the array of its planned slot (for lowerings: a fused loop's results)

    def buffer(self, v):
        """The array the plan gives value ``v``, an ``InPlace`` (``v`` overwrites that
        operand of its equation: a variable's own array), or None."""
        return self.arrays.get(v)

    def add(self, prefix, obj):
        name = f"_{prefix}{next(self.n)}"
        self.ns[name] = obj
        return name


def _lit(v):
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, float):
        r = repr(v)
        return r if r not in ("inf", "-inf", "nan") else f"float('{r}')"
    return repr(v)


def compile_graph(graph, plan=None, name="compiled"):
    """Graph -> Python function over NumPy arrays (returns a list of outputs)."""
    return build_function(Ctx(plan), graph, plan, name)


def build_function(ctx, graph, plan, name):
    names = {}
    counter = itertools.count()

    def nm(v):
        if isinstance(v, Literal):
            return _lit(v.val)
        n = names.get(v)
        if n is None:
            n = names[v] = f"v{next(counter)}"
        return n

    for v, val in graph.consts:
        names[v] = ctx.add("c", val)
    args = [nm(v) for v in graph.inputs]
    lines = [f"def {name}({', '.join(args)}):"]
    eqn_at = {}
    ins_of = {}   # each equation's operand expressions (names, literals), for operands_for_traceback
    buffers = plan.buffers if plan is not None else {}
    # this backend owns its buffers: one array per slot of the plan
    arrays = _slot_arrays(plan.slots) if plan is not None else []
    ctx.arrays = {v: arrays[s.index] for v, s in buffers.items()}
    if plan is not None:
        ctx.arrays.update(plan.inplace)
        # variables written in place: first, per call, an array of their own (_own_arrays,
        # one call for all of them); at the first call, their arrays placed apart within a
        # page (_place_owned)
        if plan.owned:
            pl = ctx.add("place", list(plan.owned))
            lines.append(f"    if {pl}: _place_owned({pl})")
            lines.append(f"    _own_arrays({ctx.add('owned', tuple(plan.owned))})")
            ctx.ns["_own_arrays"] = _own_arrays
            ctx.ns["_place_owned"] = _place_owned
    dead = _dead_before_calls(graph)
    for i, e in enumerate(graph.eqns):
        if i in dead:
            lines.append("    " + " = ".join(nm(v) for v in dead[i]) + " = None")
        ins = [nm(v) for v in e.inputs]
        outs = [nm(v) for v in e.outputs]
        start = len(lines) + 1
        slot = buffers.get(e.outputs[0]) if e.outputs else None
        lines.extend("    " + ln for ln in emit_eqn(ctx, e, ins, outs, None if slot is None else arrays[slot.index]))
        for ln in range(start, len(lines) + 1):
            eqn_at[ln] = e
        ins_of[e] = ins
    outs = ", ".join(nm(v) for v in graph.outputs)
    lines.append(f"    return [{outs}]")
    src = "\n".join(lines) + "\n"
    filename = f"<tapeflow-compiled-{name}-{next(_uid)}>"
    # register the source so tracebacks show the generated line
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    code = compile(src, filename, "exec")
    exec(code, ctx.ns)
    fn = ctx.ns[name]
    fn.__tapeflow_source__ = src
    fn.__tapeflow_eqn_at__ = eqn_at
    fn.__tapeflow_ins_of__ = ins_of
    fn.__tapeflow_filename__ = filename
    # 16 KB of source per trace would otherwise stay in linecache for good
    weakref.finalize(fn, linecache.cache.pop, filename, None)
    return fn


def _dead_before_calls(graph):
    """{index of an effectful equation holding sub-graphs: the values to clear just before it}: the
    values that may hold a variable's array (a read, a view of one, a value written into
    a variable), defined earlier, used by nothing from that equation on, not returned.

    Why: a branch or loop body that updates a variable in place first checks, by its
    reference count, that nothing but the variable holds its array (``_own_arrays``), and
    copies it otherwise. The enclosing function's locals live until it returns: TD3's
    target-network reads, used for the target Q before the cond, made the actor branch's
    soft updates copy all their arrays every call. Cleared, only real holders (a user's
    snapshot) remain. Graphs without sub-graphs get no extra line."""
    eqns = graph.eqns
    # (only sub-graphs with an effect can write a variable: a fused loop's group is pure)
    calls = [i for i, e in enumerate(eqns) if e.effect is not None and subgraphs(e)]
    if not calls:
        return {}
    roots = alias_roots(eqns)
    holders = set()  # roots that may be a variable's array
    for e in eqns:
        if e.prim is _prim.READ_VARIABLE:
            holders.update(e.outputs)
        elif e.prim is assign_variable_p and isinstance(e.inputs[0], Var):
            holders.update(roots.get(e.inputs[0], (e.inputs[0],)))
    last = last_uses(eqns, {})  # per value itself (its aliases are what ``roots`` is for)
    returned = {v for v in graph.outputs if isinstance(v, Var)}
    out, done, defined = {}, set(), []
    c = 0
    for i, e in enumerate(eqns):
        if c < len(calls) and calls[c] == i:
            c += 1
            vs = [v for v in defined if v not in done and v not in returned and last.get(v, -1) < i
                  and any(r in holders for r in roots.get(v, (v,)))]
            if vs:
                out[i] = vs
                done.update(vs)
        defined.extend(e.outputs)
    return out


#: Slot k's data starts ``k * SLOT_STAGGER`` bytes (mod 4 KiB) into a page (util/placement.py,
#: which also places the arrays of variables that compiled code updates in place). Arrays of a
#: few pages from malloc start 16 bytes apart within the page (or all at the same offset,
#: when mmapped); a fused loop streaming through several of them then has its loads and
#: stores collide in the CPU's 4 KiB address aliasing check (store-to-load forwarding
#: compares the low 12 bits first). Measured on TD3 256's fused loops (2-core EPYC, each
#: kernel alone with its step's arguments, min of 40): 567 us as allocated, 514 us with
#: every array moved to a different offset. 448 = 7 cache lines: a slot's neighbours
#: land far apart, and 64-byte alignment keeps the vector loads aligned. A plan's slots
#: of 2 MiB or more in all lie in one buffer of transparent huge pages (placement.slab:
#: TD3's ~10 MB of slots in 4 KiB pages cost it TLB walks, 400-300 ~70 us per cycle,
#: 256-256 ~100 us on a busy host and none measurable on a quieter one).
SLOT_STAGGER = _placement.STAGGER


def _slot_arrays(slots):
    """The arrays of a plan's buffer slots (C-ordered, writable), slot k's placed by
    ``k * SLOT_STAGGER``, in one huge-page buffer where they are large
    (``placement.slab``)."""
    return _placement.slab([(s.shape, s.dtype) for s in slots])


def emit_eqn(ctx, e, ins, outs, buf):
    p = e.prim
    low = p.lowerings.get(NAME)
    if low is not None:
        lines = low(ctx, e, ins, outs)
        if lines is not None:     # (None: this equation takes the kernel's call below)
            return lines
    lhs = ", ".join(outs) if outs else "_"
    if p.multiple_results and len(outs) == 1:
        lhs = outs[0] + ","
    if buf is not None and p.impl_out is not None and not p.multiple_results:
        b = ctx.add("buf", buf)
        if isinstance(p.impl, np.ufunc) and not e.params:
            k = ctx.add("u", p.impl)
            return [f"{lhs} = {k}({', '.join(ins)}, out={b})"]
        k = ctx.add("ko", functools.partial(p.impl_out, **e.params) if e.params else p.impl_out)
        return [f"{lhs} = {k}({b}, {', '.join(ins)})"]
    if e.params:
        k = ctx.add("k", functools.partial(p.impl, **e.params))
    else:
        k = ctx.add("k", p.impl)
    return [f"{lhs} = {k}({', '.join(ins)})"]


def eqn_for_traceback(fn, tb):
    """The equation whose generated line raised, from a traceback."""
    found = _failed_frame(fn, tb)
    return None if found is None else found[0]


def _failed_frame(fn, tb):
    fname = getattr(fn, "__tapeflow_filename__", None)
    found = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == fname:
            e = fn.__tapeflow_eqn_at__.get(tb.tb_lineno)
            if e is not None:
                found = (e, tb.tb_frame)
        tb = tb.tb_next
    return found


def operands_for_traceback(fn, tb):
    """(the equation whose generated line raised, the operand values it had), or None: the
    values are read from the generated function's frame, which the traceback keeps."""
    found = _failed_frame(fn, tb)
    if found is None:
        return None
    e, frame = found
    try:
        return e, [eval(x, frame.f_globals, frame.f_locals) for x in fn.__tapeflow_ins_of__[e]]  # noqa: S307
    except Exception:   # (a name already released: the caller keeps its own message)
        return None


# -- lowerings of the variable primitives (attached to their records) ----------------------------

def _emit_read(ctx, e, ins, outs):
    return [f"{outs[0]} = {ctx.add('var', e.params['var'])}._v"]


def _emit_assign(ctx, e, ins, outs):
    var = ctx.add("var", e.params["var"])
    # values produced fresh by this graph are handed over; others (views, inputs,
    # constants, shared buffers) are copied so the variable owns its array
    if ctx.plan is None or e in ctx.plan.copies:
        return [f"{var}._v = np.array({ins[0]}, dtype={var}._v.dtype, copy=True)"]
    return [f"{var}._v = {ins[0]}"]


_prim.READ_VARIABLE.lowerings[NAME] = _emit_read
assign_variable_p.lowerings[NAME] = _emit_assign


class PythonBackend(Backend):
    """Straight-line Python calling each record's kernel; never declines."""

    name = NAME

    def lower(self, graph, plan, name, required=False):
        return compile_graph(graph, plan, name=name)


register_backend(PythonBackend())

from . import control_flow_emitters  # noqa: E402,F401  (attaches cond/while/scan/print lowerings)
