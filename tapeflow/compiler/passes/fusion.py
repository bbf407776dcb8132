"""Elementwise fusion (second tier, applied to hot functions).

Groups pure elementwise equations over one loop shape (an optimizer's update
of one parameter; bias + sigmoid, the squared error and their gradients over
a batch of activations) into a single ``fused_elementwise`` equation whose
kernel is one numba loop: one pass over memory instead of one NumPy call and
one temporary per op. Members may read scalars, *rows* (operands that
broadcast as a trailing suffix of the shape: a bias) and *columns* (one value
per row, broadcast along the last axis: (m, 1) against (m, n)), and reductions
of a member's value over all axes, over leading axes (a loss sum, a bias
gradient's column sums) or over the last axis (row sums: a product with one
output column; a softmax's row max and sum, read back as columns by a later
stage of the kernel) join the group and are folded in the same pass.

An equation whose record gives an elementwise form for its operands
(``lowerings["elementwise"]``: matmul over a contraction of length 1, an outer
product, is a column times a row; a product with few output columns is as many
row sums of products, folded in the loop that makes its left operand; one over a
short contraction is a sum of K outer products; their loops read the narrow
operands as blocks: ``contraction_block``) is a candidate as that form; where no
group takes it, it stays the op it was.

An equation is a candidate when its record's fusion class is "elementwise"
(or "reduction", over a member) and the backend running the fused loops can
lower it (``can_fuse``). Groups are grown one at a time, in program order
from the first candidate not yet tried: walking forward, a candidate of the
group's shape joins unless one of its inputs depends on the group through an
equation outside it (*tainted*: joining would make a cycle). Tainted
equations move after the fused equation, the others (which cannot depend on
the group) before it, in program order. Effects keep their order: a read or
write of a Variable after a tainted one of the same Variable is tainted too,
and any effect after a tainted effect of another kind (print, a loop with
effects). Groups smaller than ``MIN_OPS`` equations (unless one of them is a
reduction: ``_pays``) are left as they were (NumPy is as fast there, and
compiling costs), and so are groups over fewer than ``MIN_ELEMENTS`` elements
unless they chain ``MIN_OPS_SMALL`` elementwise ops (an Adam update of a bias);
so are groups the backend fails to compile. A group is cut to ``MAX_ARRAYS`` operands and results
(``_limit_arrays``): past that LLVM leaves the loop scalar. The cut drops whole independent
chains first (``_components``), so no chain's value crosses from one loop to the next.
"""
from __future__ import annotations

import numpy as np

from ...core.primitive import Primitive
from ...ir.graph import Eqn, Graph, Literal, Var

MIN_OPS = 3
MIN_ELEMENTS = 512
#: elementwise ops a group over fewer than MIN_ELEMENTS elements needs to pay: each op
#: NumPy runs costs a ufunc call (~3.5k instructions on a small array, callgrind), the
#: fused loop one kernel call (~15k: the wrapper plus numba's dispatch), so below about
#: 5 ops the NumPy calls are cheaper. Adam's update of a bias vector is 12 ops
MIN_OPS_SMALL = 6
#: arrays (operands and results, scalars not counted) one fused loop may touch
MAX_ARRAYS = 16


def _fused_impl(*vals, graph, kernel):
    return tuple(kernel(*vals))


def _fused_abstract(*avals, graph, kernel):
    return tuple(v.aval for v in graph.outputs)


def _bound(kernel, buffers):
    """``kernel`` writing its results into ``buffers`` (one array or None per result)
    when it can (the numba backend's ``run.bind``), else ``kernel``."""
    bind = getattr(kernel, "bind", None)
    return bind(list(buffers)) if bind is not None and any(b is not None for b in buffers) else kernel


def _fused_impl_out(outs, *vals, graph, kernel):
    return tuple(_bound(kernel, outs)(*vals))


# Exists only in optimized graphs (after gradients were taken), so it needs no vjp.
# The native kernel writes every output into a new array or into the planned buffer it
# is given (impl_out: the buffer planner gives a slot to each result that does not escape):
# no output is a view of an input. The one sharing is the plan's own InPlace (buffers.py):
# a result stored over an operand's array that nothing reads after the loop.
fused_elementwise_p = Primitive("fused_elementwise", _fused_impl, _fused_abstract, differentiable=False,
                                multiple_results=True, aliases=False, impl_out=_fused_impl_out,
                                doc="a chain of elementwise ops run as one native loop (compiler-made)")


def _emit_python(ctx, e, ins, outs):
    # generated code calls the kernel itself (it returns a list): the impl's functools.partial
    # with keyword params and its tuple() cost more than the rest of a small kernel's call.
    # A result with a planned slot is written into the slot's array: bound once, here, so
    # the call passes the buffer's flat view without allocating (a 256x256 float32 result
    # is 64 fresh pages per call when malloc hands it out by mmap)
    k = ctx.add("fk", _bound(e.params["kernel"], [ctx.buffer(o) for o in e.outputs]))
    return [f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {k}({', '.join(ins)})"]


fused_elementwise_p.lowerings["python"] = _emit_python


def has_fused(graph):
    return any(e.prim is fused_elementwise_p for e in graph.eqns)


def trailing_row_size(operand_shape, shape):
    """Element count of ``operand_shape`` when it broadcasts against ``shape`` as
    a trailing row (leading 1s dropped, the rest a suffix of ``shape``: a bias
    against a batch), else None."""
    s = tuple(operand_shape)
    while s and s[0] == 1:
        s = s[1:]
    if None in s or len(s) > len(shape) or (s and tuple(shape[len(shape) - len(s):]) != s):
        return None
    return int(np.prod(s))


def column_rows(operand_shape, shape):
    """Row count of ``operand_shape`` when it broadcasts against ``shape`` as a
    column: one value per row, repeated along the last axis ((256, 1) against
    (256, 256): an outer product's left factor), else None. Decided by the shape,
    not the element count: a (256, 1) column and a (256,) row have the same size
    against a (256, 256) loop and are read the other way round."""
    s = tuple(operand_shape)
    while len(s) > len(shape) and s[0] == 1:
        s = s[1:]
    if len(shape) < 2 or shape[-1] == 1 or None in s or len(s) != len(shape) or s[-1] != 1 \
            or s[:-1] != tuple(shape[:-1]) or int(np.prod(s)) == 1:
        return None
    return int(np.prod(s))


def contraction_block(operand_shape, shape):
    """How a loop over a matrix ``shape`` (m, n) reads the operand of a product over a
    short contraction of length K (``outer_sum``: its element (i, j) sums K products):
    ``("columns", K)`` for a (m, K) operand, K values per row (read at row * K + k);
    ``("rows", K)`` for a (K, n) one, K rows of the loop's width (read at k * n + j);
    else None. Requires 1 < K < n for columns and 1 < K < m for rows, so neither is the
    loop's shape, a row or a column, and no operand is both. No elementwise op has such
    an operand (its shape rule would reject the broadcast): only a product's form does."""
    s = tuple(operand_shape)
    if len(shape) != 2 or len(s) != 2 or None in s or None in shape:
        return None
    (m, n), (a, b) = shape, s
    if a == m and 1 < b < n:
        return "columns", b
    if b == n and 1 < a < m:
        return "rows", a
    return None


def broadcasts_in_loop(operand_shape, shape):
    """Whether a loop over ``shape`` can read the operand: the loop's own shape, a
    scalar, a trailing row, a column (``column_rows``), or a block of a short
    contraction (``contraction_block``)."""
    return tuple(operand_shape) in (tuple(shape), ()) or trailing_row_size(operand_shape, shape) is not None \
        or column_rows(operand_shape, shape) is not None or contraction_block(operand_shape, shape) is not None


def _loop_shape(e, can_fuse, made):
    """The loop shape ``e`` can join a group over, or None. ``made``: the values
    the group being grown has computed (a reduction joins only over one)."""
    if len(e.outputs) != 1 or e.effect is not None or not can_fuse(e):
        return None
    if e.prim.fusion == "reduction":
        x = e.inputs[0]
        # over a value the group made; a fold of a product (several operands: col_dots) over
        # any the loop reads, so a weight gradient x.T @ g joins the loop that reads x
        if not isinstance(x, Var) or (x not in made and (len(e.inputs) == 1 or not made)):
            return None
        s = x.aval.shape
        # a fold's other operands (row_dots' block of rows) are read in the loop too
        if not all(isinstance(v, Literal) or broadcasts_in_loop(v.aval.shape, s) for v in e.inputs[1:]):
            return None
    elif e.prim.fusion == "elementwise":
        s = e.outputs[0].aval.shape
        for v in e.inputs:
            if not isinstance(v, Literal) and not broadcasts_in_loop(v.aval.shape, s):
                return None
    else:
        return None
    if not s or None in s:
        # unknown dims (a batch of None): sizes are only known per call, so the loop is not
        # compiled; the python backend runs these ops with NumPy's broadcasting
        return None
    return s


def _pays(group, shape):
    """Whether fusing ``group`` (a loop over ``shape``) saves more than the native call
    costs. Below ``MIN_ELEMENTS`` elements the call's overhead dominates: ``MIN_OPS_SMALL``
    elementwise ops. Otherwise ``MIN_OPS`` elementwise ops, or fewer with a reduction
    of a member's value folded in. The
    backward of ``relu(x @ w + b)`` is ``select(mask, g, 0)`` and its column sums
    (the bias gradient): two ops, but fused they are one pass over the batch instead
    of a pass that writes the select's result and a second that reads it back (the
    DQN step has two of these, TD3's actor backward one). Two independent ops of one
    shape (two bias adds) share no memory traffic, so they stay NumPy calls. A group
    pays however short when a member's kernel is not a single ufunc and makes a new
    array (``aliases`` False; an identity or a cast may return its input): such a kernel
    makes several passes, or branches per element. The relu gradient
    ``select(mask, g, 0)`` feeding only a GEMM (TD3's actor update) costs NumPy two
    passes and a temporary in its bit-mask form, 29 us over 256x256 float32 (np.where
    with two array branches: 236 us), the fused loop 9 us; a sigmoid is three passes."""
    if int(np.prod(shape)) < MIN_ELEMENTS:
        return sum(e.prim.fusion == "elementwise" for e in group) >= MIN_OPS_SMALL
    return len(group) >= MIN_OPS or any(e.prim.fusion == "reduction" for e in group) \
        or any(not isinstance(e.prim.impl, np.ufunc) and not e.prim.aliases for e in group)


def _grow(eqns, seed, shape, can_fuse, tried):
    """Indices of the group grown from ``eqns[seed]`` over ``shape``, and of
    the equations after the seed that depend on it (tainted) or must stay
    after such an equation (effects), up to the last equation that could
    join (those after it keep their place after the fused one)."""
    def may_join(e):  # cheap necessary condition: an output, or a reduction's input, of the shape
        return (e.outputs and e.outputs[0].aval.shape == shape) or (
            e.prim.fusion == "reduction" and isinstance(e.inputs[0], Var) and e.inputs[0].aval.shape == shape)
    end = max(k for k in range(seed, len(eqns)) if may_join(eqns[k]))
    members, tainted = [], []
    made, bad = set(), set()       # values of members / of tainted equations
    var_tainted = set()            # id(Variable): a tainted read or write of it
    other_tainted = False          # a tainted effect other than a read or write
    for i in range(seed, end + 1):
        e = eqns[i]
        ins = [v for v in e.inputs if isinstance(v, Var)]
        eff = e.effect
        if eff in ("read", "write"):
            ordered = other_tainted or id(e.params["var"]) in var_tainted
        else:
            ordered = eff is not None and (other_tainted or bool(var_tainted))
        if not ordered and id(e) not in tried and not any(v in bad for v in ins) \
                and _loop_shape(e, can_fuse, made) == shape \
                and (members or e.prim.fusion == "elementwise"):
            members.append(i)
            made.update(e.outputs)
        elif ordered or any(v in made or v in bad for v in ins):
            tainted.append(i)
            bad.update(e.outputs)
            if eff in ("read", "write"):
                var_tainted.add(id(e.params["var"]))
            elif eff is not None:
                other_tainted = True
    return members, tainted


def _n_arrays(eqns, members, out_set):
    """Arrays the loop of ``members`` (indices into ``eqns``) reads or writes."""
    ids = {id(eqns[k]) for k in members}
    made = {o for k in members for o in eqns[k].outputs}
    ext = {v for k in members for v in eqns[k].inputs
           if isinstance(v, Var) and v not in made and v.aval.shape != ()}
    used_outside = {v for e in eqns if id(e) not in ids for v in e.inputs if isinstance(v, Var)}
    return len(ext) + sum(o in out_set or o in used_outside for o in made)


def _drop_detached(eqns, members, tainted, out_set, seed_too):
    """Members that read nothing the group makes and whose values only tainted
    equations use leave the group and move after it with the tainted ones: fused,
    the loop would write their value and a later loop read it back (Adam's
    ``0.9 * m``, which passes/sink.py placed next to its user, still lies within
    the forward pass's reach); after it they join their user's group. The seed
    leaves too when ``seed_too`` and another member stays: a start value seeding
    the group (``0.9 * m`` just before the relu-gradient selects of the layer
    whose Adam update uses it: TD3's update had nine such 256x256 values, each
    written by one loop and read back by another)."""
    made = {o for k in members for o in eqns[k].outputs}
    later = set(tainted)
    users = {}
    for k in range(members[0], max(later | set(members)) + 1):
        for v in eqns[k].inputs:
            if isinstance(v, Var) and v in made:
                users.setdefault(v, []).append(k)
    keep, dropped = [members[0]], []
    for k in members[1:] if not seed_too else members:
        e = eqns[k]
        # ... and only elementwise ops use it: a value a GEMM reads is written whichever loop
        # makes it (the relu-gradient select before the GEMM of its layer's backward)
        detached = not any(isinstance(v, Var) and v in made for v in e.inputs) \
            and not any(o in out_set for o in e.outputs) \
            and all(u in later and eqns[u].prim.fusion in ("elementwise", "reduction")
                    for o in e.outputs for u in users.get(o, [None]))
        if k != members[0]:
            (dropped if detached else keep).append(k)
        elif detached:
            keep, dropped = [], [k]
    if not keep:  # the seed alone: it stays
        return members, tainted
    return (keep, sorted(later | set(dropped))) if dropped else (members, tainted)


def _limit_arrays(eqns, members, tainted, out_set):
    """Drop the group's last members until its loop touches at most ``MAX_ARRAYS``
    arrays. A group grows over every chain of its shape, related or not (TD3's
    critic update put two relu-mask column sums and the Adam updates of two 256x256
    kernels in one loop: 14 operands, 10 results), and past about 18 arrays LLVM
    cannot prove the stores do not alias the loads within its runtime-check budget,
    so it leaves the whole loop scalar (no vsqrtps/vdivps: half the speed of two
    vectorized loops doing the same work). The dropped members depend on nothing
    after them in the group, so they move after the fused equation with the
    tainted ones (their users are tainted already) and seed the next group."""
    if len(members) < 2 or _n_arrays(eqns, members, out_set) <= MAX_ARRAYS:
        return members, tainted
    members = list(members)
    dropped = []
    # First whole chains, the last first: members that share no value (two parameters' Adam
    # updates) leave together, so no value of a chain is written by one loop and read back by
    # the next. Cutting the last members instead split TD3's second critic's Adam update: its
    # moments were updated in the first loop, written out (two fresh 256x256 arrays a call)
    # and read back by the second for the weight's update.
    comps = _components(eqns, members)
    while len(comps) > 1 and _n_arrays(eqns, members, out_set) > MAX_ARRAYS:
        last = comps.pop()
        dropped += last
        members = [k for k in members if k not in set(last)]
    # one chain past the limit: its last members
    while len(members) > 1 and _n_arrays(eqns, members, out_set) > MAX_ARRAYS:
        dropped.append(members.pop())
    return members, sorted(set(tainted) | set(dropped))


def _components(eqns, members):
    """``members`` (indices into ``eqns``, in program order) split into chains that share
    no value (one made by a member and read by another) and read no common operand of the
    loop's shape, each in program order; the chains ordered by their last member, the
    seed's chain first."""
    parent = {k: k for k in members}
    # the loop's shape: an elementwise member's result (a reduction's is smaller)
    # (None for a group of reductions alone: then no operand links chains)
    shape = next((eqns[k].outputs[0].aval.shape for k in members if eqns[k].prim.fusion == "elementwise"), None)

    def root(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    maker = {}
    for k in members:
        for v in eqns[k].inputs:
            if isinstance(v, Var) and v in maker:
                parent[root(k)] = root(maker[v])
            elif isinstance(v, Var) and v.aval.shape == shape:
                maker[v] = k   # read by several chains: one loop reads it once
        for o in eqns[k].outputs:
            maker[o] = k
    comps = {}
    for k in members:
        comps.setdefault(root(k), []).append(k)
    seed = root(members[0])
    return [comps[seed]] + sorted((c for r, c in comps.items() if r != seed), key=lambda c: c[-1])


def _elementwise_forms(eqns, can_fuse):
    """``eqns`` with each equation whose record says what elementwise ops (and folds) it
    is for its operands (``lowerings["elementwise"](eqn, new_var, producer)``: an outer product is
    a column times a row, a product with few output columns row folds of products)
    replaced by those equations, and {id(form equation): (original, its form)}."""
    forms, out, made = {}, [], {}
    for e in eqns:
        for o in e.outputs:
            made[o] = e
        form = e.prim.lowerings.get("elementwise")
        f = form(e, Var, made.get) if form is not None and e.effect is None else None
        if f and all(can_fuse(x) or x.prim.fusion not in ("elementwise", "reduction") for x in f):
            for x in f:
                forms[id(x)] = (e, f)
            out.extend(f)
        else:
            out.append(e)
    return out, forms


def _undo_unfused_forms(eqns, forms):
    """A form none of whose equations a loop took runs as the op it was, where its last
    equation stood (its operands are ready there): the outer product's own kernel writes
    its result at the speed of a store (NumPy's broadcasting multiply is 4x slower), and a
    GEMV reads its matrix once."""
    left = {}
    for x in eqns:
        if id(x) in forms:
            orig, f = forms[id(x)]
            left.setdefault(id(orig), set()).add(id(x))
    out = []
    for x in eqns:
        if id(x) in forms:
            orig, f = forms[id(x)]
            if len(left[id(orig)]) == len(f):  # every equation of the form is still here
                if x is f[-1]:
                    out.append(orig)
                continue
        out.append(x)
    return out


def fuse_elementwise(graph: Graph, compile_group, can_fuse=lambda e: True) -> Graph:
    """``compile_group(subgraph) -> kernel or None`` lowers one group;
    ``can_fuse(eqn)``: may this equation join a group."""
    eqns, forms = _elementwise_forms(graph.eqns, can_fuse)
    out_set = {v for v in graph.outputs if isinstance(v, Var)}
    tried = set()  # id(eqn): fused already, or in a group that was left unfused
    i = 0
    while i < len(eqns):
        e = eqns[i]
        shape = _loop_shape(e, can_fuse, ()) if id(e) not in tried else None
        if shape is None:
            i += 1
            continue
        members, tainted = _grow(eqns, i, shape, can_fuse, tried)
        members, tainted = _drop_detached(eqns, members, tainted, out_set, seed_too=True)
        members, tainted = _limit_arrays(eqns, members, tainted, out_set)
        # again: a value whose users the limit cut off is now detached too
        members, tainted = _drop_detached(eqns, members, tainted, out_set, seed_too=True)
        # a seed leaves only a group that pays without it (then fused: the loop ends, as every
        # such step tries a candidate for good); it seeds again after the fused equation, nearer
        # its users
        if members[0] != i and not _pays([eqns[k] for k in members], shape):
            members, tainted = [i] + members, sorted(set(tainted) - {i})
        group = [eqns[k] for k in members]
        tried.update(id(g) for g in group)
        fused = _fuse(group, eqns, out_set, compile_group) if _pays(group, shape) else None
        if fused is None:
            i += 1
            continue
        tried.add(id(fused))
        moved = set(members) | set(tainted)
        last = max(moved)
        eqns = (eqns[:i] + [x for k, x in enumerate(eqns[:last + 1]) if k >= i and k not in moved] + [fused]
                + [eqns[k] for k in tainted] + eqns[last + 1:])
        # eqns[:i] holds no candidate left to try; the equations moved before the
        # fused one may hold some
    if forms:
        eqns = _undo_unfused_forms(eqns, forms)
    return graph.copy(eqns=eqns)


def _fuse(group, eqns, out_set, compile_group):
    """The fused equation standing for ``group``, or None when it does not compile."""
    made = {o for e in group for o in e.outputs}
    members = {id(e) for e in group}
    used_outside = {v for e in eqns if id(e) not in members for v in e.inputs if isinstance(v, Var)}
    ext, seen = [], set()
    for e in group:
        for v in e.inputs:
            if isinstance(v, Var) and v not in made and v not in seen:
                seen.add(v)
                ext.append(v)
    outs = [o for e in group for o in e.outputs if o in out_set or o in used_outside]
    if not outs:
        return None
    sub = Graph(ext, [], group, outs)
    kernel = compile_group(sub)
    if kernel is None:
        return None
    return Eqn(fused_elementwise_p, ext, outs, {"graph": sub, "kernel": kernel}, group[-1].src)
