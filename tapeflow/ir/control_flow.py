"""Control flow: cond, while_loop, fori_loop, scan.

Eagerly (or with a concrete predicate / static trip count where it matters)
these are plain Python control flow. While tracing, each function argument
is traced into a sub-graph and one equation (``cond``, ``while_loop`` or
``scan``) holds the sub-graphs in its params; outer tensors the functions
close over become extra operands.

Gradients: ``cond`` differentiates the taken branch; ``scan`` (and so
``fori_loop`` with Python-int bounds) differentiates through every
iteration (the forward carries are recomputed once and stacked, then a
reverse scan runs the body's vjp). ``while_loop`` (a data-dependent trip
count) differentiates through ``while_loop_grad``, one equation that re-runs
the loop keeping the carries in a list and runs the body's vjp over it in
reverse (first order only).

Gradient rules re-run the sub-graph under a tape without its variable
writes and prints; a branch or loop body that draws random numbers or reads
a variable after writing it is differentiated with the values of that
re-run (documented limitation).
"""
from __future__ import annotations

import numpy as np

from ..core.aval import Aval, fmt_shape
from ..core.dtypes import differentiable as _differentiable
from ..core.primitive import Primitive, bind, aval_of
from ..core.primitives import elementwise as E
from ..core.state import STATE
from ..core.tensor import Tensor, Variable, convert_to_tensor
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from ..util import nest
from . import interpreter
from .graph import Graph, Literal, Var, alias_roots
from .tracer import Trace, Tracer, _unknown_rank

# ---------------------------------------------------------------------------------------------
# tracing helpers
# ---------------------------------------------------------------------------------------------


def _trace_sub(fn, in_avals, kind, local_vars=()):
    """Trace ``fn(*tracers)`` in a sub-trace. Returns (graph, captures, out_tree, trace)."""
    parent = STATE.trace
    sub = Trace(parent=parent, kind=kind, local_vars=local_vars)
    with sub:
        args = [sub.new_input(a) for a in in_avals]
        out = fn(*args)
    flat = nest.flatten(out)
    if kind == "branch":  # a branch may return None (both must, there: cond checks)
        flat = [o for o in flat if o is not None]
    for o in flat:
        if not isinstance(o, (Tensor, float, int, bool, np.ndarray, np.generic)):
            raise TypeError(f"{kind} function returned a {type(o).__name__}; return tensors (or nested "
                            "lists/tuples/dicts of them)")
        if isinstance(o, Tracer) and o.aval.shape is None:
            raise _unknown_rank(f"{kind}: a returned value", o)
    n_in = len(sub.inputs)
    graph = sub.finish(flat)
    caps = [outer for outer, _ in sub.captures]
    return graph, caps, out, sub, n_in


def _trace_loop(fn, in_avals, kind, local_vars=()):
    """Trace a loop body; if it writes a variable whose read was hoisted out of
    the loop, trace again with that variable read inside (each iteration must
    see the previous iteration's write)."""
    local_vars = set(local_vars)
    g, caps, out, sub, n_in = _trace_sub(fn, in_avals, kind, local_vars)
    bad = sub.hoisted & sub.written
    if bad:
        g, caps, out, sub, n_in = _trace_sub(fn, in_avals, kind, local_vars | bad)
    return g, caps, out, sub, n_in


def _flat_avals(tree):
    return [aval_of(x) if not isinstance(x, Variable) else x.aval for x in nest.flatten(tree)]


def _as_tensor_leaves(tree):
    return nest.map_structure(lambda x: x.read_value() if isinstance(x, Variable) else
                              (x if isinstance(x, Tensor) else convert_to_tensor(x)), tree)


def _concrete(x):
    return not isinstance(x, Tracer)


# ---------------------------------------------------------------------------------------------
# re-running a graph under a tape (for gradient rules of control flow)
# ---------------------------------------------------------------------------------------------

def _bind_eqn(e, vals):
    return bind(e.prim, *vals, **e.params)


def _replay_eqn(e, vals):
    # a re-run for a gradient: the writes and prints already happened in the forward run
    if e.prim.effect in ("write", "io"):
        return ()
    return bind(e.prim, *vals, **e.params)


def inline_graph(graph, args, replay=False):
    """Evaluate ``graph`` by binding each equation (so it is traced/recorded).
    replay=True skips variable writes and prints (used when re-running for a vjp)."""
    return interpreter.evaluate(graph, list(args), _replay_eqn if replay else _bind_eqn)


def _fresh_identity(x):
    # a new tensor object recorded as x + 0 (removed by the simplify pass), so a
    # tape can watch it separately while outer tapes still connect it to x
    if _differentiable(aval_of(x).dtype):
        return E.add(x, 0.0)
    return x


def graph_vjp(graph, args, cts, replay=True):
    """Cotangents of ``graph``'s inputs, given input values and output cotangents.
    Non-float inputs get None; unconnected float inputs get zeros."""
    from ..autodiff.tape import GradientTape
    xs = [_fresh_identity(a) for a in args]
    with GradientTape(persistent=False, watch_accessed_variables=False) as tape:
        for x in xs:
            if _differentiable(aval_of(x).dtype):
                tape.watch(x)
        outs = inline_graph(graph, xs, replay=replay)
    pairs = [(o, c) for o, c in zip(outs, cts) if isinstance(o, Tensor) and c is not None
             and _differentiable(aval_of(o).dtype)]
    srcs = [x for x in xs if _differentiable(aval_of(x).dtype)]
    if not pairs or not srcs:
        g = {}
    else:
        gl = tape.gradient([o for o, _ in pairs], srcs, output_gradients=[c for _, c in pairs],
                           unconnected_gradients="zero")
        g = {id(s): v for s, v in zip(srcs, gl)}
    return [g.get(id(x)) if _differentiable(aval_of(x).dtype) else None for x in xs]


def _zeros_like(x):
    # a bool operand (a mask scanned over, as the recurrent layers' masks) has no cotangent but the scan
    # still carries a slot for it: its zero is False (a Python 0 does not combine with bool, as in TF)
    zero = False if np.dtype(aval_of(x).dtype) == np.bool_ else 0
    return E.bind(E.select_p, True, zero, x)


# ---------------------------------------------------------------------------------------------
# cond
# ---------------------------------------------------------------------------------------------

def _cond_interpret(apply, pred, *operands, branches):
    return tuple(interpreter.evaluate(branches[1 if bool(pred) else 0], list(operands), apply))


def _cond_impl(*vals, **params):
    return _cond_interpret(interpreter.apply_eqn, *vals, **params)


def _cond_abstract(pred, *operands, branches):
    return tuple(v.aval for v in branches[1].outputs)


def _cond_vjp(cts, outs, pred, *operands, branches):
    fg, tg = branches
    float_idx = [i for i, o in enumerate(operands) if _differentiable(aval_of(o).dtype)]
    if not float_idx:
        return (None,) * (1 + len(operands))

    def branch_grads(g):
        def fn():
            gs = graph_vjp(g, list(operands), list(cts))
            return [gs[i] if gs[i] is not None else _zeros_like(operands[i]) for i in float_idx]
        return fn

    res = cond(pred, branch_grads(tg), branch_grads(fg))
    out = [None] * len(operands)
    for i, r in zip(float_idx, res):
        out[i] = r
    return (None,) + tuple(out)


def _cond_alias_map(eqn):
    """Output m may share memory with operand j only where some branch returns its input
    j (or a view of it). Why: a cond output aliasing every operand kept the buffer planner
    from writing a variable in place when a branch merely reads its new value (TD3's
    actor update reads the critic's new weights; the cond returns the actor loss)."""
    out = [set() for _ in eqn.outputs]
    for g in eqn.params["branches"]:
        roots = alias_roots(g.eqns)
        pos = {v: j + 1 for j, v in enumerate(g.inputs)}  # (operand 0 is the predicate)
        for m, v in enumerate(g.outputs):
            if isinstance(v, Var):
                out[m].update(pos[r] for r in roots.get(v, (v,)) if r in pos)
    return [tuple(sorted(x)) for x in out]


cond_p = Primitive("cond", _cond_impl, _cond_abstract, _cond_vjp, multiple_results=True,
                   interpret=_cond_interpret, alias_map=_cond_alias_map, doc="branches=(false_graph, true_graph); operands shared by both", strings=True)


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` if pred else ``false_fn()``; traced into one ``cond`` equation
    when pred is symbolic. Both branches must return the same structure, dtypes
    and shapes (a dim may differ: it becomes unknown)."""
    if true_fn is None or false_fn is None:
        raise TypeError("cond: give both true_fn and false_fn")
    if STATE.trace is None or _concrete(pred):
        return true_fn() if bool(pred) else false_fn()
    if aval_of(pred).shape not in ((), (1,)) or aval_of(pred).dtype != np.bool_:
        # (TF 2.21: ValueError from AutoGraph's `if`, InvalidArgumentError from tf.cond in a graph;
        # this class is both, and the TypeError it always was)
        raise InvalidArgumentTypeError(f"cond: pred must be a scalar bool tensor, got {aval_of(pred).str_short()}")
    raw = {}

    def stripped(fn, key):   # composites (extension types) go out as their components
        def run():
            raw[key] = out = fn()
            return nest.strip_composites(out)
        return run
    tg, t_caps, t_out, _, t_nin = _trace_sub(stripped(true_fn, "t"), [], "branch")
    fg, f_caps, f_out, _, f_nin = _trace_sub(stripped(false_fn, "f"), [], "branch")
    if nest.composite_statics(raw["t"]) != nest.composite_statics(raw["f"]):
        raise ValueError("cond: true_fn and false_fn return composite values (extension types) of different "
                         f"specs; both branches must return the same: {raw['t']!r} and {raw['f']!r}")
    t_flat, f_flat = nest.flatten(t_out), nest.flatten(f_out)
    if len(t_flat) != len(f_flat):
        # (TF 2.21: TypeError from AutoGraph's `if`, ValueError from tf.cond; this class is both)
        raise InvalidArgumentTypeError(f"cond: true_fn returns {len(t_flat)} values, false_fn {len(f_flat)}; both "
                                       "branches must return the same structure")
    for i, (a, b) in enumerate(zip(t_flat, f_flat)):
        if (a is None) != (b is None):  # (None where both branches return None: None, as eagerly and in TF)
            raise ValueError(f"cond: output {i} is None in {'true_fn' if a is None else 'false_fn'} only; both "
                             "branches must return the same structure")
    # the output avals must agree; Python scalars adopt the other branch's dtype
    tg, fg = _unify_outputs(tg, fg)
    # both branch graphs take all operands: true's captures, then false's
    operands = t_caps + f_caps
    tg = Graph(tg.inputs + [Var(c.aval) for c in f_caps], tg.consts, tg.eqns, tg.outputs, tg.variables)
    fg = Graph([Var(c.aval) for c in t_caps] + fg.inputs, fg.consts, fg.eqns, fg.outputs, fg.variables)
    outs = iter(bind(cond_p, _scalar(pred), *operands, branches=(fg, tg)))
    return nest.restore_composites(raw["t"], nest.pack_sequence_as(t_out, [None if a is None else next(outs)
                                                                          for a in t_flat]))


def _scalar(pred):
    from ..core.primitives.shape import reshape
    return pred if aval_of(pred).shape == () else reshape(pred, ())


def _unify_outputs(tg, fg):
    touts, fouts = list(tg.outputs), list(fg.outputs)
    tc, fc = list(tg.consts), list(fg.consts)
    for i, (a, b) in enumerate(zip(touts, fouts)):
        if isinstance(a, Literal) and isinstance(b, Literal):
            d = aval_of(a.val).dtype
            va, vb = Var(Aval((), d)), Var(Aval((), d))
            tc.append((va, np.asarray(a.val, d)))
            fc.append((vb, np.asarray(b.val, d)))
            touts[i], fouts[i] = va, vb
            continue
        if isinstance(a, Literal):
            v = Var(Aval((), b.aval.dtype))
            tc.append((v, np.asarray(a.val, b.aval.dtype)))
            touts[i] = a = v
        if isinstance(b, Literal):
            v = Var(Aval((), a.aval.dtype))
            fc.append((v, np.asarray(b.val, a.aval.dtype)))
            fouts[i] = b = v
        if a.aval.dtype != b.aval.dtype:
            raise TypeError(f"cond: output {i} has dtype {a.aval.dtype.name} in true_fn and "
                            f"{b.aval.dtype.name} in false_fn")
        if len(a.aval.shape) != len(b.aval.shape):
            raise ValueError(f"cond: output {i} has shape {fmt_shape(a.aval.shape)} in true_fn and "
                             f"{fmt_shape(b.aval.shape)} in false_fn")
        if a.aval.shape != b.aval.shape:
            shape = tuple(x if x == y else None for x, y in zip(a.aval.shape, b.aval.shape))
            a.aval = b.aval = Aval(shape, a.aval.dtype)
    return (Graph(tg.inputs, tc, tg.eqns, touts, tg.variables),
            Graph(fg.inputs, fc, fg.eqns, fouts, fg.variables))


# ---------------------------------------------------------------------------------------------
# while_loop
# ---------------------------------------------------------------------------------------------

def _while_interpret(apply, *operands, cond_graph, body_graph, n_carry, n_cond_caps, max_iter):
    carry = list(operands[:n_carry])
    ccaps = list(operands[n_carry:n_carry + n_cond_caps])
    bcaps = list(operands[n_carry + n_cond_caps:])
    it = 0
    while max_iter is None or it < max_iter:
        if not bool(interpreter.evaluate(cond_graph, carry + ccaps, apply)[0]):
            break
        carry = interpreter.evaluate(body_graph, carry + bcaps, apply)
        it += 1
    return tuple(carry)


def _while_impl(*vals, **params):
    return _while_interpret(interpreter.apply_eqn, *vals, **params)


def _while_abstract(*operands, cond_graph, body_graph, n_carry, n_cond_caps, max_iter):
    return tuple(v.aval for v in body_graph.outputs)


def _random_eqns(graph):
    """Does ``graph`` (or a sub-graph of it, at any depth: variable_effects walks them) draw random numbers?"""
    from .graph import variable_effects
    return any("random" in variable_effects(e).other for e in graph.eqns)


def _while_vjp(cts, outs, *operands, cond_graph, body_graph, n_carry, n_cond_caps, max_iter):
    """Reverse-mode through a traced while_loop (TF differentiates it; JAX's while_loop does not).
    Its trip count is known only when it runs, and a graph's arrays have static shapes, so the
    forward carries cannot be stacked by graph ops as scan's vjp stacks them: one equation,
    ``while_loop_grad``, re-runs the loop at run time keeping each step's input carry in a Python
    list, then runs the body's vjp graph (traced here, once) over that list in reverse. Time and
    memory are O(trip count), as TF's stacks of the forward values."""
    if _random_eqns(body_graph) or _random_eqns(cond_graph):
        raise NotImplementedError(
            "gradients through a tapeflow.while_loop whose body draws random numbers are not supported: the "
            "gradient re-runs the loop and would draw other numbers. Draw them before the loop and pass them "
            "in, or use tapeflow.scan with a fixed length.")
    if any(v.aval.shape != aval_of(o).shape for v, o in zip(body_graph.inputs[:n_carry], operands[:n_carry])):
        raise NotImplementedError(
            "gradients through a tapeflow.while_loop whose loop values change shape (shape_invariants with None "
            "dimensions) are not supported; grow a buffer of a fixed size (a TensorArray of the final size) or "
            "use tapeflow.scan")
    carry0 = list(operands[:n_carry])
    ccaps = list(operands[n_carry:n_carry + n_cond_caps])
    bcaps = list(operands[n_carry + n_cond_caps:])
    floats = [_differentiable(aval_of(c).dtype) for c in carry0]
    fcaps = [_differentiable(aval_of(c).dtype) for c in bcaps]
    if not any(floats):
        return (None,) * len(operands)
    ct = [c if c is not None else _zeros_like(o) for c, o in zip(cts, outs)]
    in_avals = [aval_of(c) for c in carry0] + [aval_of(c) for c in bcaps] + [aval_of(c) for c in carry0]

    def step_vjp(*vals):   # (carry_k, body captures, ct of carry_k+1) -> (ct of carry_k, ct of the captures)
        carry, caps, ctc = vals[:n_carry], vals[n_carry:n_carry + len(bcaps)], vals[n_carry + len(bcaps):]
        g = graph_vjp(body_graph, list(carry) + list(caps), list(ctc))
        # (a carry or capture without a gradient gets zeros: the equation's outputs are all arrays)
        return [x if x is not None else _zeros_like(v) for x, v in zip(g, list(carry) + list(caps))]
    vg, vcaps, _, _, _ = _trace_sub(step_vjp, in_avals, "loop")
    res = bind(while_grad_p, *carry0, *ccaps, *bcaps, *ct, *vcaps, cond_graph=cond_graph, body_graph=body_graph,
               vjp_graph=vg, n_carry=n_carry, n_cond_caps=n_cond_caps, n_body_caps=len(bcaps), max_iter=max_iter)
    g_carry, g_caps = res[:n_carry], res[n_carry:]
    return (tuple(g if f else None for g, f in zip(g_carry, floats)) + (None,) * n_cond_caps
            + tuple(g if f else None for g, f in zip(g_caps, fcaps)))


while_p = Primitive("while_loop", _while_impl, _while_abstract, _while_vjp, multiple_results=True,
                    interpret=_while_interpret, strings=True)


def _replay_apply(apply):
    """``apply`` for re-running a loop for its gradient: the writes and prints of the forward run
    already happened (as _replay_eqn), sub-graphs re-run the same way."""
    def run(e, vals):
        if e.prim.effect in ("write", "io"):
            return ()
        if e.prim.interpret is not None:
            return e.prim.interpret(run, *vals, **e.params)
        return apply(e, vals)
    return run


def _while_grad_interpret(apply, *operands, cond_graph, body_graph, vjp_graph, n_carry, n_cond_caps, n_body_caps,
                          max_iter):
    carry = list(operands[:n_carry])
    ccaps = list(operands[n_carry:n_carry + n_cond_caps])
    k = n_carry + n_cond_caps
    bcaps = list(operands[k:k + n_body_caps])
    ct = list(operands[k + n_body_caps:k + n_body_caps + n_carry])
    vcaps = list(operands[k + n_body_caps + n_carry:])
    replay = _replay_apply(apply)
    seen = []   # the input carry of every step, in order
    while max_iter is None or len(seen) < max_iter:
        if not bool(interpreter.evaluate(cond_graph, carry + ccaps, replay)[0]):
            break
        seen.append(carry)
        carry = interpreter.evaluate(body_graph, carry + bcaps, replay)
    ct_caps = None
    for c in reversed(seen):
        g = interpreter.evaluate(vjp_graph, c + bcaps + ct + vcaps, apply)
        ct = g[:n_carry]
        ct_caps = g[n_carry:] if ct_caps is None else [a + b for a, b in zip(ct_caps, g[n_carry:])]
    if ct_caps is None:   # the loop ran no step: the captures had no part in the result
        ct_caps = [np.zeros(np.shape(b), np.asarray(b).dtype) for b in bcaps]
    return tuple(np.asarray(x) for x in ct) + tuple(np.asarray(x) for x in ct_caps)


def _while_grad_impl(*vals, **params):
    return _while_grad_interpret(interpreter.apply_eqn, *vals, **params)


def _while_grad_abstract(*operands, cond_graph, body_graph, vjp_graph, n_carry, n_cond_caps, n_body_caps, max_iter):
    return tuple(v.aval for v in vjp_graph.outputs)


def _while_grad_vjp(*args, **kw):
    raise NotImplementedError(
        "second-order gradients through a tapeflow.while_loop with a data-dependent trip count are not supported; "
        "use tapeflow.scan (or fori_loop with Python-int bounds), which differentiates to any order.")


#: the gradient of a traced while_loop (see _while_vjp): a primitive because its work needs a stack
#: of the forward carries whose length is known only at run time, which graph arrays cannot hold
while_grad_p = Primitive("while_loop_grad", _while_grad_impl, _while_grad_abstract, _while_grad_vjp,
                         multiple_results=True, interpret=_while_grad_interpret, complex=True,
                         doc="the vjp of a while_loop: re-runs it, stacking the carries, then the body's vjp "
                             "in reverse")


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, maximum_iterations=None, name=None):
    """TF's signature: repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``."""
    single = not isinstance(loop_vars, (list, tuple))
    if STATE.trace is None:
        # a single tensor is one loop variable (as when traced); the result has
        # loop_vars' structure, as when traced
        lv0 = (loop_vars,) if single else loop_vars
        # Python numbers and NumPy values become tensors (as TF, and as when traced): a loop
        # that runs zero times, or a body that keeps Python ints, still returns tensors
        lv0 = nest.map_structure(lambda x: convert_to_tensor(x) if isinstance(
            x, (bool, int, float, np.ndarray, np.generic)) else x, lv0)
        lv = lv0
        it = 0
        while (maximum_iterations is None or it < maximum_iterations) and bool(cond(*lv)):
            lv = body(*lv)
            if not isinstance(lv, (list, tuple)):
                lv = (lv,)
            it += 1
        res = nest.pack_sequence_as(lv0, nest.flatten(lv))
        return res[0] if single else res
    lv = (loop_vars,) if single else loop_vars
    lv_raw = lv   # composites (extension types) are carried as their components
    lv = _as_tensor_leaves(nest.strip_composites(lv))
    in_avals = _flat_avals(lv)
    if shape_invariants is not None:
        in_avals = _relaxed(in_avals, lv, (shape_invariants,) if single else shape_invariants)
    tree = lv

    def cfn(*flat):
        r = cond(*nest.restore_composites(lv_raw, nest.pack_sequence_as(tree, list(flat))))
        return r

    def bfn(*flat):
        r = body(*nest.restore_composites(lv_raw, nest.pack_sequence_as(tree, list(flat))))
        if single and not isinstance(r, (list, tuple)):
            r = (r,)
        if nest.composite_statics(r) != nest.composite_statics(lv_raw):
            raise ValueError("while_loop: the body returns composite values (extension types) of other specs "
                             f"than the loop variables': {r!r}")
        return list(nest.flatten(nest.strip_composites(r)))

    # the body first: variables it writes must be read inside the cond graph (on every
    # test), not hoisted out of the loop as a value read once before it
    bg, b_caps, b_out, b_sub, _ = _trace_loop(bfn, in_avals, "loop")
    cg, c_caps, c_out, _, _ = _trace_loop(cfn, in_avals, "loop", local_vars=b_sub.written)
    if len(cg.outputs) != 1 or cg.outputs[0].aval.dtype != np.bool_ or cg.outputs[0].aval.shape not in ((), (1,)):
        raise InvalidArgumentTypeError("while_loop: cond must return a scalar bool tensor")  # (see cond's pred)
    try:
        _check_carry("while_loop body", in_avals, bg)
    except ValueError as e:
        raise ValueError(f"{e} (a loop value whose shape changes needs shape_invariants giving those "
                         "dimensions as None, as TF's)") from None
    outs = bind(while_p, *nest.flatten(lv), *c_caps, *b_caps, cond_graph=cg, body_graph=bg,
                n_carry=len(in_avals), n_cond_caps=len(c_caps),
                max_iter=None if maximum_iterations is None else int(maximum_iterations))
    res = nest.restore_composites(lv_raw, nest.pack_sequence_as(tree, list(outs)))
    return res[0] if single else res


def _relaxed(in_avals, lv, invariants):
    """The loop values' avals under TF's ``shape_invariants`` (one shape per loop value, ``loop_vars``'
    structure; a None dimension may change from one iteration to the next, a known one must be the loop
    value's own): the body is traced with these, so a value that grows along a None dimension (a concat
    onto an accumulator) keeps its aval."""
    from ..core.tensor import TensorShape
    flat = nest.flatten_up_to(lv, invariants) if isinstance(invariants, (list, tuple, dict)) else [invariants]
    if len(flat) != len(in_avals):
        raise ValueError(f"while_loop: shape_invariants has {len(flat)} entries for {len(in_avals)} loop values; "
                         "give one shape per loop value, in loop_vars' structure")
    out = []
    for i, (a, inv) in enumerate(zip(in_avals, flat)):
        if inv is None:
            out.append(a)
            continue
        dims = getattr(inv, "shape", inv)   # (a TypeSpec's shape)
        dims = TensorShape(dims)
        if dims.rank is None:
            raise ValueError(f"while_loop: shape_invariants entry {i} has an unknown rank; tapeflow's loop values "
                             f"keep their rank (loop value {i} is {fmt_shape(a.shape)})")
        dims = tuple(dims.as_list())
        if len(dims) != len(a.shape) or any(d is not None and d != e for d, e in zip(dims, a.shape)):
            raise ValueError(f"while_loop: loop value {i} of shape {fmt_shape(a.shape)} is not compatible with "
                             f"its shape invariant {fmt_shape(dims)}")
        out.append(Aval(dims, a.dtype))
    return out


def _check_carry(what, in_avals, g, n=None):
    outs = g.outputs if n is None else g.outputs[:n]
    if len(outs) != len(in_avals):
        raise ValueError(f"{what} returns {len(outs)} loop values, expected {len(in_avals)}")
    for i, (a, o) in enumerate(zip(in_avals, outs)):
        oa = aval_of(o.val) if isinstance(o, Literal) else o.aval
        if oa.dtype != a.dtype and not (isinstance(o, Literal)):
            raise TypeError(f"{what}: loop value {i} changes dtype {a.dtype.name} -> {oa.dtype.name}; "
                            "cast it inside the body")
        if not isinstance(o, Literal) and oa.shape != a.shape:
            raise ValueError(f"{what}: loop value {i} changes shape {fmt_shape(a.shape)} -> "
                             f"{fmt_shape(oa.shape)}; loop values must keep their shape")
    # Python scalars returned from the body become constants of the carry's dtype
    for i, (a, o) in enumerate(zip(in_avals, outs)):
        if isinstance(o, Literal):
            v = Var(Aval(a.shape, a.dtype))
            g.consts.append((v, np.asarray(o.val, a.dtype).reshape(a.shape) if a.shape == () else
                             np.full(a.shape, o.val, a.dtype)))
            g.outputs[i] = v


# ---------------------------------------------------------------------------------------------
# scan / fori_loop
# ---------------------------------------------------------------------------------------------

def _scan_interpret(apply, *operands, body, length, n_carry, n_xs, start, reverse):
    carry = list(operands[:n_carry])
    xs = operands[n_carry:n_carry + n_xs]
    caps = list(operands[n_carry + n_xs:])
    n_ys = len(body.outputs) - n_carry
    ys = None
    if length is None:
        length = _run_time_length(xs)
    order = range(length - 1, -1, -1) if reverse else range(length)
    for k in order:
        i = np.int32(start + k)
        out = interpreter.evaluate(body, [i] + carry + [x[k] for x in xs] + caps, apply)
        carry = out[:n_carry]
        if n_ys:
            if ys is None:
                ys = [np.empty((length,) + np.shape(y), np.asarray(y).dtype) for y in out[n_carry:]]
            for buf, y in zip(ys, out[n_carry:]):
                buf[k] = y
    if n_ys and ys is None:
        ys = [np.empty((0,) + tuple(0 if d is None else d for d in v.aval.shape), v.aval.dtype)
              for v in body.outputs[n_carry:]]
    return tuple(carry) + tuple(ys or ())


def _run_time_length(xs):
    """A scan's trip count when its xs' first dimension is known only when it runs (``length=None``: a
    map_fn over an input_signature's None batch): that dimension, the same for every x (TF's map_fn)."""
    lengths = {np.shape(x)[0] for x in xs}
    if len(lengths) != 1:
        raise InvalidArgumentError(f"scan: the tensors scanned over must have the same first dimension, got "
                                   f"{sorted(lengths)}")
    return lengths.pop()


def _scan_impl(*vals, **params):
    return _scan_interpret(interpreter.apply_eqn, *vals, **params)


def _scan_abstract(*operands, body, length, n_carry, n_xs, start, reverse):
    outs = [v.aval for v in body.outputs]
    return tuple(outs[:n_carry]) + tuple(Aval((length,) + a.shape, a.dtype) for a in outs[n_carry:])


def _scan_vjp(cts, outs, *operands, body, length, n_carry, n_xs, start, reverse):
    """Reverse-mode through a scan: recompute the input carry of every step
    (one forward scan that stacks them), then scan backwards running the
    body's vjp, carrying the carry cotangent and accumulating the cotangents
    of the loop-invariant operands."""
    carry0 = list(operands[:n_carry])
    xs = list(operands[n_carry:n_carry + n_xs])
    caps = list(operands[n_carry + n_xs:])
    n_ys = len(body.outputs) - n_carry
    ct_carry = [c if c is not None else _zeros_like(o) for c, o in zip(cts[:n_carry], outs[:n_carry])]
    ct_ys = [c if c is not None else _zeros_like(o) for c, o in zip(cts[n_carry:], outs[n_carry:])]

    # 1. stacked input carries: scan whose ys are the carries entering each step
    def fwd(i, carry, x):
        new = inline_graph(body, [i] + list(carry) + list(x) + caps, replay=True)
        return list(new[:n_carry]), list(carry)
    _, stacked = _scan_raw(fwd, carry0, xs, length, start, reverse)

    float_caps = [k for k, c in enumerate(caps) if _differentiable(aval_of(c).dtype)]
    float_carry = [k for k, c in enumerate(carry0) if _differentiable(aval_of(c).dtype)]

    # 2. backwards: carry (ct_carry, ct_caps accumulated)
    def bwd(i, state, x):
        ctc = list(state[:n_carry])
        acc = list(state[n_carry:])
        carry_in = x[:n_carry]
        x_in = x[n_carry:n_carry + n_xs]
        cty = x[n_carry + n_xs:]
        g = graph_vjp(body, [i] + list(carry_in) + list(x_in) + caps, list(ctc) + list(cty))
        g_carry = g[1:1 + n_carry]
        g_xs = g[1 + n_carry:1 + n_carry + n_xs]
        g_caps = g[1 + n_carry + n_xs:]
        new_ctc = [gc if gc is not None else _zeros_like(c) for gc, c in zip(g_carry, carry_in)]
        new_acc = [E.add(a, g_caps[k]) if g_caps[k] is not None else a for a, k in zip(acc, float_caps)]
        ys = [gx if gx is not None else _zeros_like(xx) for gx, xx in zip(g_xs, x_in)]
        return new_ctc + new_acc, ys

    init = ct_carry + [_zeros_like(caps[k]) for k in float_caps]
    seq = list(stacked) + xs + ct_ys
    final, g_xs = _scan_raw(bwd, init, seq, length, start, not reverse)
    g_carry0 = final[:n_carry]
    g_caps_acc = final[n_carry:]
    res = [None] * len(operands)
    for k in float_carry:
        res[k] = g_carry0[k]
    for j in range(n_xs):
        if _differentiable(aval_of(xs[j]).dtype):
            res[n_carry + j] = g_xs[j]
    for a, k in zip(g_caps_acc, float_caps):
        res[n_carry + n_xs + k] = a
    return tuple(res)


scan_p = Primitive("scan", _scan_impl, _scan_abstract, _scan_vjp, multiple_results=True,
                   interpret=_scan_interpret,
                   doc="body(i, *carry, *x_slices, *captures) -> (*carry, *y); stacks the ys", strings=True)


def _scan_raw(f, init, xs, length, start=0, reverse=False):
    """scan over flat lists: f(i, carry_list, x_list) -> (carry_list, y_list)."""
    init = [convert_to_tensor(c) if not isinstance(c, Tensor) else c for c in init]
    if STATE.trace is None:
        carry = list(init)
        ys_all = None
        if length is None:   # (a run-time length's scan differentiated eagerly: xs are arrays now)
            length = _run_time_length([a._v if isinstance(a, Tensor) else a for a in xs])
        order = range(length - 1, -1, -1) if reverse else range(length)
        for k in order:
            x = [a[k] for a in xs]
            carry, ys = f(np.int32(start + k), carry, x)
            carry = list(carry)
            if ys_all is None:
                ys_all = [[None] * length for _ in ys]
            for lst, y in zip(ys_all, ys):
                lst[k] = y
        from ..ops.array_ops import stack
        stacked = [stack(lst, 0) for lst in ys_all] if ys_all else []
        return carry, stacked
    in_avals = [Aval((), np.int32)] + [aval_of(c) for c in init] + \
               [Aval(aval_of(x).shape[1:], aval_of(x).dtype) for x in xs]
    n_carry = len(init)

    def fn(i, *rest):
        carry, x = list(rest[:n_carry]), list(rest[n_carry:])
        c, y = f(i, carry, x)
        return list(c) + list(y)

    g, caps, out, sub, n_in = _trace_loop(fn, in_avals, "loop")
    _check_carry("scan body", [aval_of(c) for c in init], g, n_carry)
    if length is None and not xs:
        raise ValueError("scan: a length known only when the function runs needs xs to scan over")
    outs = bind(scan_p, *init, *xs, *caps, body=g, length=None if length is None else int(length), n_carry=n_carry,
                n_xs=len(xs),
                start=int(start), reverse=bool(reverse))
    return list(outs[:n_carry]), list(outs[n_carry:])


def scan(f, init, xs=None, length=None, reverse=False):
    """JAX's scan: ``f(carry, x) -> (carry, y)``; returns (final carry, stacked ys).
    ``xs`` is a tensor or nested structure of tensors scanned along axis 0."""
    init_flat = nest.flatten(_as_tensor_leaves(init))
    xs_flat = [] if xs is None else nest.flatten(_as_tensor_leaves(xs))
    if length is None:
        if not xs_flat:
            raise ValueError("scan: give xs or length")
        length = aval_of(xs_flat[0]).shape[0]   # (None: an input_signature's None, known when it runs)
    y_tree = [None]

    def f_flat(i, carry, x):
        c = nest.pack_sequence_as(init, list(carry))
        xx = None if xs is None else nest.pack_sequence_as(xs, list(x))
        c2, y = f(c, xx)
        y_tree[0] = y
        return nest.flatten(_as_tensor_leaves(c2)), ([] if y is None else nest.flatten(_as_tensor_leaves(y)))

    carry, ys = _scan_raw(f_flat, init_flat, xs_flat, length, 0, reverse)
    c = nest.pack_sequence_as(init, carry)
    y = None if y_tree[0] is None else nest.pack_sequence_as(y_tree[0], ys)
    return c, y


def fori_loop(lower, upper, body_fun, init_val):
    """JAX's fori_loop: ``body_fun(i, val) -> val`` for i in [lower, upper).

    With Python-int bounds this is a scan with a fixed trip count
    (differentiable; compiled as one loop). With tensor bounds it is a
    while_loop (differentiable to first order: while_loop_grad)."""
    static = isinstance(lower, (int, np.integer)) and isinstance(upper, (int, np.integer))
    if STATE.trace is None:
        v = init_val
        for i in range(int(lower), int(upper)):
            v = body_fun(i, v)
        return v
    if static:
        n = max(0, int(upper) - int(lower))
        init_flat = nest.flatten(_as_tensor_leaves(init_val))

        def f(i, carry, x):
            v = nest.pack_sequence_as(init_val, list(carry))
            return nest.flatten(_as_tensor_leaves(body_fun(i, v))), []
        carry, _ = _scan_raw(f, init_flat, [], n, int(lower), False)
        return nest.pack_sequence_as(init_val, carry)
    # the index has the tensor bounds' dtype (an int64 n counts in int64, as eagerly
    # any integer bound works); a Python-int bound takes it
    dts = [aval_of(x).dtype for x in (lower, upper) if isinstance(x, Tensor)]
    dt = np.result_type(*dts) if dts else np.dtype(np.int32)
    lo, hi = ((x if aval_of(x).dtype == dt else bind(E.cast_p, x, dtype=dt)) if isinstance(x, Tensor)
              else convert_to_tensor(x, dt) for x in (lower, upper))
    res = while_loop(lambda i, v: E.bind(E.less_p, i, hi), lambda i, v: (E.add(i, 1), body_fun(i, v)),
                     (lo, init_val))
    return res[1]
