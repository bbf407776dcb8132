"""A fused loop some of whose planned in-place results the numba backend refuses (a
fold's result, such as col_dots' sums, is stored after the loop, not over the operand
it read) still writes its other planned results over their operands
(``numba_backend.InPlaceRefused``): TD3's actor backward (the relu-gradient select
over the 256x256 activation beside the col_dots of the action gradient) had both
results fresh, a 256x256 array a call. Values equal the reference interpreter's."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tapeflow.compiler.passes import buffers
from tapeflow.ir.interpreter import eval_graph

pytest.importorskip("numba")


def _td3_policy_iteration():
    from benchmarks.workloads import td3
    case = {"name": "64-64", "hidden": [64, 64], "batch": 64}
    b = td3._tf("tapeflow", "function")(case, td3.make_data(case, 0))
    cl = dict(zip(b.step.__code__.co_freevars, [c.cell_contents for c in b.step.__closure__]))
    it2 = cl["it2"]
    batch = cl["batch"]
    it2(*batch)
    cf = it2.get_concrete_function(*batch)
    cf._tier_up()
    assert cf.backend == "python+fused"
    return it2, cf, batch


def test_a_refused_in_place_result_leaves_the_others_in_place():
    it2, cf, batch = _td3_policy_iteration()
    g = cf.fused_graph
    plan = buffers.plan_buffers(g)
    ns = cf.compiled.__globals__
    src = cf.compiled.__tapeflow_source__
    mixed = 0
    for e in g.eqns:
        if e.prim.name != "fused_elementwise":
            continue
        planned = [o for o in e.outputs if o in plan.inplace]
        sub = e.params["graph"]
        folds = {x.outputs[0] for x in sub.eqns if x.prim.fusion == "reduction"}
        outer = {so: o for so, o in zip(sub.outputs, e.outputs)}
        refused = [o for so, o in outer.items() if so in folds and o in plan.inplace]
        if not refused or len(planned) == len(refused):
            continue
        mixed += 1
        # the kernel's Python caller: the results it writes over an operand are returned as that operand
        line = next(src.splitlines()[n - 1] for n, x in cf.compiled.__tapeflow_eqn_at__.items() if x is e)
        wrapper = ns[line.split("= ")[1].split("(")[0]].__tapeflow_wrapper__
        returned = wrapper.strip().splitlines()[-1]
        assert re.search(r"\ba\d+\b", returned), (wrapper, "no result was written in place")
    assert mixed, "no fused loop with a refused and another planned in-place result"
    # values: the fused graph in the reference interpreter equals the compiled call
    state = [v._v.copy() for v in _variables(g)]
    want = eval_graph(g, [np.asarray(x) for x in batch])
    got_vars = [v._v.copy() for v in _variables(g)]
    for v, s in zip(_variables(g), state):
        v._v = s.copy()
    got = cf.compiled(*[np.asarray(x) for x in batch])
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-6)
    for a, v in zip(got_vars, _variables(g)):
        np.testing.assert_allclose(a, v._v, rtol=1e-4, atol=1e-6)


def _variables(g):
    seen, out = set(), []
    for e in g.eqns:
        var = e.params.get("var")
        if var is not None and id(var) not in seen:
            seen.add(id(var))
            out.append(var)
    return out
