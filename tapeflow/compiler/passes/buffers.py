"""Buffer planning by liveness (an annotation for the python backend).

Walk the equations in order. An output gets a preallocated buffer when its
shape is fully known, its primitive has an ``out=`` kernel, and it does not
escape (is not a graph output and is not written into a Variable). When a
value's last use has passed, its buffer returns to a pool keyed by (shape,
dtype) and the next equation that needs such a buffer reuses it. An
equation never writes into a buffer one of its own inputs lives in (NumPy
ufuncs would allow it, matmul would not, so we never rely on it).

``copies``: variable writes whose value is not a fresh array owned by nobody
else (a view, an input, a constant, a buffer, a value written twice or also
returned); the backend copies those so a Variable always owns its array.
"""
from __future__ import annotations

import numpy as np

from ...core import primitive as _prim
from ...ir.graph import Graph, Literal, Var

#: primitives whose output may alias an input (NumPy returns views; einsum can, e.g. "ij->ji")
VIEW_PRIMS = {"reshape", "transpose", "broadcast_to", "getitem", "stop_gradient", "cast", "read_variable",
              "einsum"}
#: control flow: an output may be any operand passed through (a branch returning its
#: input, a loop that runs zero times), so it may alias every operand
PASS_THROUGH_PRIMS = {"cond", "while_loop", "scan"}


class BufferPlan:
    def __init__(self):
        self.buffers = {}   # Var -> ndarray
        self.copies = set()  # assign eqns that must copy
        self.n_buffers = 0
        self.bytes = 0

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

    for e in eqns:
        if e.prim.name in VIEW_PRIMS and e.prim is not _prim.READ_VARIABLE and e.inputs \
                and isinstance(e.inputs[0], Var):
            for o in e.outputs:
                roots[o] = frozenset(roots_of(e.inputs[0]))
        elif e.prim.name in PASS_THROUGH_PRIMS:
            rs = frozenset(r for v in e.inputs if isinstance(v, Var) for r in roots_of(v))
            for o in e.outputs:
                roots[o] = rs | {o}
    last_use = {}
    for i, e in enumerate(eqns):
        for v in e.inputs:
            if isinstance(v, Var):
                for r in roots_of(v):
                    last_use[r] = i
    n = len(eqns)
    escaping = set()
    written = {}
    for e in eqns:
        if e.prim.name == "assign_variable" and isinstance(e.inputs[0], Var):
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
        if e.prim.name == "assign_variable":
            v = e.inputs[0]
            if not isinstance(v, Var) or v not in fresh or written.get(v, 0) > 1 or v in outputs:
                plan.copies.add(e)
        elif (len(e.outputs) == 1 and not e.prim.multiple_results and e.prim.impl_out is not None
              and e.effect is None):
            o = e.outputs[0]
            if o not in escaping and all(d is not None for d in o.aval.shape) and o.aval.shape != () \
                    and o in last_use:
                key = (o.aval.shape, o.aval.dtype)
                ins = {id(held.get(r)) for v in e.inputs if isinstance(v, Var) for r in roots_of(v)}
                free = pool.get(key, [])
                buf = None
                for j, b in enumerate(free):
                    if id(b) not in ins:
                        buf = free.pop(j)
                        break
                if buf is None:
                    buf = np.empty(o.aval.shape, o.aval.dtype)
                    plan.n_buffers += 1
                    plan.bytes += buf.nbytes
                plan.buffers[o] = buf
                held[o] = buf
            else:
                fresh.add(o)
        elif e.prim.name not in VIEW_PRIMS and e.prim.name not in PASS_THROUGH_PRIMS \
                and e.effect is None and len(e.outputs) == 1:
            fresh.add(e.outputs[0])
        # release buffers whose root (and every view of it) is dead after this equation
        for v in e.inputs:
            if isinstance(v, Var):
                for r in roots_of(v):
                    if last_use.get(r) == i and r in held:
                        b = held.pop(r)
                        pool.setdefault((b.shape, b.dtype), []).append(b)
    return plan
