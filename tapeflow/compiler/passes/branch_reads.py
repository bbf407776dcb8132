"""Reads into branches (Graph -> Graph): a cond operand that is a read of a variable
the cond's branches write becomes a read at the start of each branch.

Why: the tracer hoists every read inside a branch to the enclosing trace (so tapes see
it and gradients flow through the cond; ir/tracer.py ``read_variable``), so a branch
that updates variables (TD3's delayed actor update: the actor's Adam step and three
soft target updates, 38 variables) gets their current values as inputs. Its own buffer
plan then has no read of those variables to write the new values over
(``buffers._plan_in_place``), and every update allocates a new array per call. With
the read inside, the branch's fused update loops write each variable's array in place.

Runs after autodiff (the tape has recorded its reads while tracing; this pass sees
the finished graph and changes no value). The move is made when:

* the cond writes the variable (else nothing is gained, and a branch holding only
  reads would look pure to the passes that move and merge pure equations);
* no equation between the read and the cond writes the variable or has an effect
  other than variable reads and writes (a Python callback may write it), so the
  branch reads the same value;
* the read's value, and every value that may share its memory (views, a cond output
  a branch passes it through to), is used by nothing after the cond and is not a graph
  output, and the cond takes no view of it as another operand (the read itself may be
  several operands: each becomes a read): once the branch writes
  the array in place, no holder of the old array is left to see it change. Earlier pure
  uses of the same read are fine; their values are computed before the cond.

When the read has no other use left it goes away. Ownership at call time: the branch
function makes each variable it updates in place its own first (``_own_arrays``: a
reference count); the python backend clears the enclosing function's dead locals
that may hold a variable's array before it calls a branch (python_backend
``_dead_before_calls``), so only a holder that really exists (a user's snapshot) makes it copy.
"""
from __future__ import annotations

from ...core.primitive import READ_VARIABLE
from ...ir.control_flow import cond_p
from ...ir.graph import Eqn, Graph, Var, alias_roots, last_uses, variable_effects
from ._util import rebuild


def reads_into_branches(graph: Graph) -> Graph:
    eqns = graph.eqns
    if not any(e.prim is cond_p for e in eqns):
        return graph
    roots = alias_roots(eqns)

    def roots_of(v):
        return roots.get(v, (v,))

    reads = {e.outputs[0]: i for i, e in enumerate(eqns) if e.prim is READ_VARIABLE}
    # per root: the index of the last equation using it (or a value sharing its memory)
    last = last_uses(eqns, roots)
    for v in graph.outputs:
        if isinstance(v, Var):
            for r in roots_of(v):
                last[r] = len(eqns)
    fx = [variable_effects(e) if e.effect is not None else None for e in eqns]
    new = list(eqns)
    changed = False
    for ci, c in enumerate(eqns):
        if c.prim is not cond_p or fx[ci] is None:
            continue
        writes = fx[ci].writes
        moved = {}  # operand index -> variable
        for j, v in enumerate(c.inputs):
            if j == 0 or v not in reads or j in moved:
                continue
            ri = reads[v]
            var = eqns[ri].params["var"]
            if id(var) not in writes or last.get(v, -1) > ci:
                continue
            # every operand holding the array is the read itself (two hoisted reads of one
            # variable that cse merged pass it twice), none a view of it
            if any(u is not v and v in roots_of(u) for u in c.inputs[1:] if isinstance(u, Var)):
                continue
            if any(fx[i] is not None and (fx[i].other or id(var) in fx[i].writes) for i in range(ri + 1, ci)):
                continue
            moved.update((k, var) for k, u in enumerate(c.inputs) if k and u is v)
        if not moved:
            continue
        branches = []
        for g in c.params["branches"]:
            heads = [Eqn(READ_VARIABLE, [], [g.inputs[j - 1]], {"var": var}, eqns[reads[c.inputs[j]]].src)
                     for j, var in moved.items()]
            variables = list(g.variables)
            known = {id(x) for x in variables}
            variables += [var for var in moved.values() if id(var) not in known and not known.add(id(var))]
            branches.append(Graph([x for k, x in enumerate(g.inputs) if k + 1 not in moved], g.consts,
                                  heads + list(g.eqns), g.outputs, variables))
        params = dict(c.params)
        params["branches"] = tuple(branches)
        new[ci] = rebuild(c, inputs=[v for j, v in enumerate(c.inputs) if j not in moved], params=params)
        changed = True
    if not changed:
        return graph
    # a read nothing uses any more goes (reads have no effect to keep)
    used = {v for e in new for v in e.inputs if isinstance(v, Var)} | set(graph.outputs)
    new = [e for e in new if not (e.prim is READ_VARIABLE and e.outputs[0] not in used)]
    return graph.copy(eqns=new)
