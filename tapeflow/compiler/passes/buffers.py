"""Buffer planning by liveness: slots, not arrays (the backend allocates).

Walk the equations in order. An output gets a buffer slot when its shape is
fully known, its primitive has an ``out=`` kernel (``impl_out``; for a primitive
with several results, ``impl_out(outs, ...)`` takes one buffer or None per
output: a fused loop), and it does not escape (is not a graph output and is not
written into a Variable). Outputs of one equation never share a slot. When a value's last
use has passed, its slot returns to a pool keyed by (shape, dtype) and the
next equation that needs such a slot reuses it. An equation never writes into
a slot one of its own inputs lives in (NumPy ufuncs would allow it, matmul
would not), with one exception: a fused loop's result may take the slot of an
operand that nothing reads after the loop (``InPlace``; the numba kernel stores
it over that operand after reading it, see ``_dead_operands``).

Aliasing comes from the records: an output of a primitive whose record says
``aliases`` (the default: views, identity ops, control flow passing an
operand through, any primitive that did not say otherwise) may share memory
with every one of its inputs (or those its record's ``alias_map`` names: a cond
output, only the operands some branch returns), so their slots stay held while it is live.

``copies``: variable writes whose value is not a fresh array owned by nobody
else (a possible alias, an input, a constant, a buffer, a value written twice
or also returned); the backend copies those so a Variable always owns its array.
A primitive with ``aliases=False`` returns new arrays, one per output (several
outputs never share memory either), so each of its outputs is fresh.
"""
from __future__ import annotations

from ...core.primitives.effects import assign_variable_p
from ...ir.graph import Graph, Var, alias_roots, last_uses, subgraphs, variable_effects


class Slot:
    """One buffer the backend allocates: its index in ``BufferPlan.slots``,
    shape (static) and dtype."""

    __slots__ = ("index", "shape", "dtype")

    def __init__(self, index, shape, dtype):
        self.index = index
        self.shape = shape
        self.dtype = dtype

    @property
    def nbytes(self):
        n = self.dtype.itemsize
        for d in self.shape:
            n *= d
        return n

    def __repr__(self):
        return f"<Slot {self.index}: {self.shape} {self.dtype}>"


class InPlace:
    """Where a result goes: over operand ``index`` of its own equation (a fused loop),
    an array that nothing reads after it: a Variable's (``_plan_in_place``), or a
    planned slot's (``_dead_operands``; the result then holds that slot)."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"<InPlace: operand {self.index}>"


class BufferPlan:
    def __init__(self):
        self.buffers = {}   # Var -> Slot
        self.slots = []     # Slot, by index
        self.copies = set()  # assign eqns that must copy
        self.inplace = {}   # result Var -> InPlace: written over its variable's array
        self.owned = []     # Variables written in place: each call first makes their arrays their own

    @property
    def n_buffers(self):
        return len(self.slots)

    @property
    def bytes(self):
        return sum(s.nbytes for s in self.slots)

    def __repr__(self):
        return f"<BufferPlan: {self.n_buffers} buffers, {self.bytes} bytes, {len(self.copies)} copying writes>"


def plan_buffers(graph: Graph) -> BufferPlan:
    plan = BufferPlan()
    eqns = graph.eqns
    # Views alias their input's memory: track each value's root allocations, and
    # keep a buffer until the last use of its root or of any value that may alias it.
    roots = {}  # Var -> frozenset of root Vars it may alias (absent: only itself)

    def roots_of(v):
        return roots.get(v, (v,))

    alias_roots(eqns, roots)
    last_use = last_uses(eqns, roots)
    n = len(eqns)
    escaping = set()
    written = {}
    for e in eqns:
        if e.prim is assign_variable_p and isinstance(e.inputs[0], Var):
            v = e.inputs[0]
            written[v] = written.get(v, 0) + 1
    for v in list(graph.outputs) + list(written):
        if isinstance(v, Var):
            escaping.add(v)
            for r in roots_of(v):
                escaping.add(r)
                last_use[r] = n
    outputs = {v for v in graph.outputs if isinstance(v, Var)}
    fresh = set()  # values allocated by their producing eqn, owned by no one else
    pool = {}
    held = {}     # root Var -> buffer
    for i, e in enumerate(eqns):
        if e.prim is assign_variable_p:
            v = e.inputs[0]
            if not isinstance(v, Var) or v not in fresh or written.get(v, 0) > 1 or v in outputs:
                plan.copies.add(e)
        elif e.prim.impl_out is not None and e.effect is None \
                and (len(e.outputs) == 1 or e.prim.multiple_results):
            # each output on its own: a fused loop's result the next GEMM reads gets a slot
            # while the fused update's new parameter, written into a Variable, stays fresh
            ins = {held.get(r) for v in e.inputs if isinstance(v, Var) for r in roots_of(v)}
            over = _dead_operands(e, i, held, roots_of, last_use) if e.prim.multiple_results else {}
            for o in e.outputs:
                if o not in escaping and all(d is not None for d in o.aval.shape) \
                        and o.aval.shape != () and o in last_use:
                    key = (o.aval.shape, o.aval.dtype)
                    j = next((j for j, v in over.items() if (v.aval.shape, v.aval.dtype) == key), None)
                    if j is not None:
                        # over a dead operand's slot: its lines are in cache, just read
                        buf = held.pop(over.pop(j))
                        plan.inplace[o] = InPlace(j)
                        plan.buffers[o] = buf
                        held[o] = buf
                        continue
                    free = pool.get(key, [])
                    buf = None
                    for j, b in enumerate(free):
                        if b not in ins:
                            buf = free.pop(j)
                            break
                    if buf is None:
                        buf = Slot(len(plan.slots), o.aval.shape, o.aval.dtype)
                        plan.slots.append(buf)
                    plan.buffers[o] = buf
                    held[o] = buf
                elif not e.prim.aliases:
                    fresh.add(o)
        elif not e.prim.aliases and e.effect is None:
            # every output of a non-aliasing kernel is a new array of its own (a fused
            # optimizer update returns new m, v and parameter arrays): a variable may take it
            fresh.update(e.outputs)
        # release buffers whose root (and every view of it) is dead after this equation
        for v in e.inputs:
            if isinstance(v, Var):
                for r in roots_of(v):
                    if last_use.get(r) == i and r in held:
                        b = held.pop(r)
                        pool.setdefault((b.shape, b.dtype), []).append(b)
    _plan_in_place(eqns, roots_of, outputs, plan)
    return plan


def _dead_operands(e, i, held, roots_of, last_use):
    """{operand index: Var} of equation ``i``'s operands that its results may overwrite:
    each a value in a planned slot (the plan's own array, no view of another), read by
    no later equation and through this one operand only (so the kernel's arguments stay
    noalias: the result is that argument, not another one pointing at it).

    Why: a loop storing into a slot last touched many kernels ago first reads each
    line in from L3; the operand's lines were just read. TD3 256's full update (27
    such results, mostly relu and relu-gradient loops over GEMM results): its fused
    loops 1.21-1.49 -> 0.99-1.27 ms (medians of 150-200 calls, two runs, interleaved in
    one process, busy host). A relu-gradient loop alone after a cache flush: 28.6-36.3 -> 21.0 us."""
    count = {}
    for v in e.inputs:
        if isinstance(v, Var):
            for r in roots_of(v):
                count[r] = count.get(r, 0) + 1
    return {j: v for j, v in enumerate(e.inputs)
            if isinstance(v, Var) and v in held and roots_of(v) == (v,) and count[v] == 1
            and last_use.get(v) == i}


def _plan_in_place(eqns, roots_of, outputs, plan):
    """Results of a multi-result ``impl_out`` equation (a fused loop) that are a Variable's
    next value and may overwrite the variable's current array, read by that same equation
    (Adam's m, v and parameter, a soft-updated target). One assign semantics still holds,
    because nothing can see the old array change:

    * in the graph: ``o`` is assigned to ``var`` once; any other use of it is pure, and
      then no equation writes ``var`` again (those readers read the variable's array) and
      no effect other than a variable read or write follows the loop; the operand is a read of
      ``var`` with no write of ``var`` between it and that assign, and no read of it after
      the equation; every value that holds the old array (the reads of ``var`` since its
      last write, and views of them) is used by pure equations only, never after the
      equation, never as a graph output, and by the equation through that one operand only
      (the kernel reads and writes one argument: its arguments stay noalias);
    * at call time, outside the graph: the function first makes each such variable's array
      its own (``plan.owned``: a snapshot a user read earlier, or any other holder, gets
      the variable a copy to write instead; the backend does that).

    Same shape and dtype as the variable (an elementwise loop reads the operand at the
    element it writes)."""
    from ...core.primitive import READ_VARIABLE
    uses = {}      # root Var -> indices of the equations using it or a view of it
    for i, e in enumerate(eqns):
        for v in e.inputs:
            if isinstance(v, Var):
                for r in roots_of(v):
                    uses.setdefault(r, []).append(i)
    escaping = {r for v in outputs for r in roots_of(v)}
    reads = {}     # read's output Var -> (variable, index)
    touches = {}   # id(variable) -> indices of the equations that read or write it
    writes = {}    # id(variable) -> indices of the equations that write it
    nested = {}    # id(variable) -> indices of the conds/loops that read or write it
    opaque = []    # indices of effectful equations that may touch any variable
    for i, e in enumerate(eqns):
        if e.prim is READ_VARIABLE or e.prim is assign_variable_p:
            var = e.params["var"]
            touches.setdefault(id(var), []).append(i)
            if e.prim is READ_VARIABLE:
                reads[e.outputs[0]] = (var, i)
            else:
                writes.setdefault(id(var), []).append(i)
        elif e.effect is not None or subgraphs(e):
            # a cond or loop whose sub-graphs only read and write variables (TD3's delayed
            # actor update) touches exactly those, at its index; any other effect (io, an
            # unknown one, a random draw) may touch anything
            fx = variable_effects(e)
            if fx.other:
                opaque.append(i)
                continue
            for vid in fx.reads.keys() | fx.writes.keys():
                touches.setdefault(vid, []).append(i)
                nested.setdefault(vid, []).append(i)
            for vid in fx.writes:
                writes.setdefault(vid, []).append(i)
    opaque_set = set(opaque)
    done = set()
    for k, e in enumerate(eqns):
        if not (e.prim.multiple_results and e.prim.impl_out is not None and e.effect is None):
            continue
        for o in e.outputs:
            used = uses.get(o, [])
            assigns = [i for i in used if eqns[i].prim is assign_variable_p and eqns[i].inputs[0] is o]
            if len(assigns) != 1 or o in escaping:
                continue
            a = assigns[0]
            var = eqns[a].params["var"]
            # other readers of the new value (TD3's actor update reads the critic's new
            # weights in its GEMMs): they read the variable's array, so nothing may write the
            # variable again in this graph, and they must be pure (an assign of ``o`` to
            # another variable would share the array)
            # (a cond or loop touching only variables may read it too, as TD3's actor branch
            # reads the critic's new weights: its sub-graphs take it as an input, which their
            # own plans never overwrite and a variable write there copies)
            rest = [i for i in used if i != a]
            var_writes = writes.get(id(var), ())
            if rest and (any(eqns[i].effect is not None and (eqns[i].prim is assign_variable_p
                                                             or not subgraphs(eqns[i]) or i in opaque_set)
                             for i in rest)
                         or any(i > a for i in var_writes)
                         or any(i > k for i in opaque)):
                continue
            # a cond or loop touching ``var`` before its assign: the values it returns may hold
            # the variable's array without a read here to show it (a branch that writes the
            # variable, reads it back and returns the read), so the old array has holders
            # this plan cannot see
            if any(i < a for i in nested.get(id(var), ())):
                continue
            if id(var) in done or var._v.dtype != o.aval.dtype or var._v.shape != o.aval.shape \
                    or o.aval.shape == ():  # (a scalar is no array traffic to save)
                continue
            # the operand that is the variable's current array, and every value holding it
            cur = [j for j, v in enumerate(e.inputs) if reads.get(v, (None,))[0] is var]
            if len(cur) != 1:
                continue
            j = cur[0]
            first = reads[e.inputs[j]][1]
            acc = touches[id(var)]
            last_write = max((i for i in var_writes if i < k), default=-1)
            if any(first < i < a for i in var_writes) \
                    or any(k < i < a for i in acc) or any(last_write < i < a for i in opaque):
                continue
            held = {v for v, (w, i) in reads.items() if w is var and last_write < i < k}
            ok = all(v not in escaping and all(i <= k and (i == k or eqns[i].effect is None)
                                               for i in uses.get(v, ())) for v in held)
            ok = ok and sum(any(r in held for r in roots_of(v)) for v in e.inputs if isinstance(v, Var)) == 1
            if ok:
                plan.inplace[o] = InPlace(j)
                plan.owned.append(var)
                done.add(id(var))
