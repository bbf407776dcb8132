"""Python-backend lowerings of control flow, attached to the records of cond,
while_loop and scan: each sub-graph is optimized and compiled to its own
function; the equation becomes a Python if/while/for."""
from __future__ import annotations

import numpy as np

from ...ir.control_flow import _run_time_length, cond_p, scan_p, while_p
from .. import pipeline
from . import python_backend as PB


def _sub(ctx, g, name):
    g2, plan, _ = pipeline.optimize(g, name=name)
    fn = PB.compile_graph(g2, plan, name=name)
    return ctx.add("fn", fn)


def _cond(ctx, e, ins, outs):
    fg, tg = e.params["branches"]
    f = _sub(ctx, fg, "false_branch")
    t = _sub(ctx, tg, "true_branch")
    lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
    ops = ", ".join(ins[1:])
    if not outs:
        return [f"({t} if {ins[0]} else {f})({ops})"]
    return [f"{lhs} = ({t} if {ins[0]} else {f})({ops})"]


def _while(ctx, e, ins, outs):
    p = e.params
    n, nc = p["n_carry"], p["n_cond_caps"]
    c = _sub(ctx, p["cond_graph"], "while_cond")
    b = _sub(ctx, p["body_graph"], "while_body")
    carry, ccaps, bcaps = ins[:n], ins[n:n + nc], ins[n + nc:]
    cv = [f"_w{k}" for k in range(n)]
    lines = [f"{', '.join(cv)}{',' if n == 1 else ''} = {', '.join(carry)}{',' if n == 1 else ''}"]
    cargs = ", ".join(cv + ccaps)
    bargs = ", ".join(cv + bcaps)
    if p["max_iter"] is None:
        lines += [f"while {c}({cargs})[0]:",
                  f"    {', '.join(cv)}{',' if n == 1 else ''} = {b}({bargs})"]
    else:
        lines += [f"for _it in range({int(p['max_iter'])}):",
                  f"    if not {c}({cargs})[0]:",
                  "        break",
                  f"    {', '.join(cv)}{',' if n == 1 else ''} = {b}({bargs})"]
    if outs:
        lines.append(f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {', '.join(cv)}{',' if n == 1 else ''}")
    return lines


def _scan(ctx, e, ins, outs):
    p = e.params
    n, nx, L, start, rev = p["n_carry"], p["n_xs"], p["length"], p["start"], p["reverse"]
    body = p["body"]
    b = _sub(ctx, body, "scan_body")
    carry, xs, caps = ins[:n], ins[n:n + nx], ins[n + nx:]
    n_ys = len(body.outputs) - n
    cv = [f"_s{k}" for k in range(n)]
    yv = [f"_y{k}" for k in range(n_ys)]
    lines = []
    if L is None:   # xs' first dimension, known when it runs (a map_fn over a None batch)
        lines.append(f"_L = {ctx.add('scan_length', _run_time_length)}(({', '.join(xs)},))")
        L = "_L"
    if n:
        lines.append(f"{', '.join(cv)}{',' if n == 1 else ''} = {', '.join(carry)}{',' if n == 1 else ''}")
    lazy = []  # stacked outputs with a dim unknown at trace time: allocated at the first step
    for k, v in enumerate(body.outputs[n:]):
        dt = ctx.add("dt", v.aval.dtype)
        if None in v.aval.shape:
            lazy.append((k, dt, tuple(0 if d is None else d for d in v.aval.shape)))
            lines.append(f"{yv[k]} = None")
        else:
            lines.append(f"{yv[k]} = np.empty(({L},) + {tuple(v.aval.shape)!r}, {dt})")
    rng = f"range({L} - 1, -1, -1)" if rev else f"range({L})"
    ii = ctx.add("i32", np.int32)
    lines.append(f"for _k in {rng}:")
    args = [f"{ii}({start} + _k)"] + cv + [f"{x}[_k]" for x in xs] + caps
    res = [*cv, *[f"_t{k}" for k in range(n_ys)]]
    lines.append(f"    _r = {b}({', '.join(args)})")
    if n:
        lines.append(f"    {', '.join(cv)}{',' if n == 1 else ''} = _r[:{n}]" if n > 1 else f"    {cv[0]} = _r[0]")
    for k, dt, _ in lazy:
        lines.append(f"    if {yv[k]} is None:")
        lines.append(f"        {yv[k]} = np.empty(({L},) + np.shape(_r[{n + k}]), {dt})")
    for k in range(n_ys):
        lines.append(f"    {yv[k]}[_k] = _r[{n + k}]")
    for k, dt, empty_shape in lazy:  # zero steps: an empty stack
        lines.append(f"if {yv[k]} is None:")
        lines.append(f"    {yv[k]} = np.empty((0,) + {empty_shape!r}, {dt})")
    allv = cv + yv
    if outs:
        lines.append(f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {', '.join(allv)}{',' if len(allv) == 1 else ''}")
    return lines


cond_p.lowerings[PB.NAME] = _cond
while_p.lowerings[PB.NAME] = _while
scan_p.lowerings[PB.NAME] = _scan
