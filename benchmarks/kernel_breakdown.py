"""Where a compiled training step's time goes, kernel by kernel (issue 14's profiles).

Every kernel the step's generated code calls (GEMMs, fused native loops, NumPy ops) is
timed where it runs: inside the step, after the kernels before it, with the caches they
leave (a fused loop costs ~1.5x its isolated time there). The step is a benchmark's own,
past its tier-up: ``dqn`` (benchmarks/workloads/dqn.py, raw ops + hand Adam or Keras
Dense/MSE/Adam; one compiled function) or ``td3`` (benchmarks/workloads/td3.py, a cycle of
a critic iteration and a critic + actor iteration: two compiled functions). Per kernel:
the operation, its operand shapes (a GEMM's layout: T marks an operand passed transposed)
and, for a GEMM, the BLAS threads it ran on; then the sums per kind and what is left of
the step's time outside the kernels (the generated code's own Python). Per-kernel
minimums are what the kernel costs undisturbed; medians show the load.

Then each distinct GEMM alone, on the step's own operands, on one BLAS thread and on all
(alternating, fastest of ``calls``), and the **GEMM floor**: the step's GEMMs at their
alone minimums (the faster of one and all threads), summed with their counts. It is what the step would cost if
nothing but its GEMMs ran, each at its undisturbed speed: a step cannot get faster than
that without fewer or faster GEMMs. Times on a shared machine are noisy: compare rows of
one run.

    PYTHONPATH=$PWD python benchmarks/kernel_breakdown.py td3 --case 256-256
    PYTHONPATH=$PWD python benchmarks/kernel_breakdown.py dqn --style keras
"""
from __future__ import annotations

import collections
import os
import sys
import time
import types

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.common import array_gemm_label  # noqa: E402


def hot_functions(step, expect):
    """The ``expect`` ConcreteFunctions one call of ``step`` runs, in call order, stepped
    past their tier-up (and once more: the first call of the tiered code)."""
    from tapeflow.compiler.function import ConcreteFunction

    seen = []
    run = ConcreteFunction.run

    def spy(self, arrays):  # the calls before the tier-up pass here
        if self not in seen:
            seen.append(self)
        return run(self, arrays)

    ConcreteFunction.run = spy
    try:
        step()
    finally:
        ConcreteFunction.run = run
    if len(seen) != expect:
        raise RuntimeError(f"the step ran {len(seen)} compiled functions, expected {expect}")
    while not all(cf.hot for cf in seen):
        step()
    step()
    return seen


def _label(eqn, args):
    name = eqn.prim.name
    arrays = [a for a in args if isinstance(a, (np.ndarray, np.generic))]
    if name == "matmul":
        # (the python backend calls the GEMM kernel as matmul(a, b[, planned result buffer]))
        return f"GEMM {array_gemm_label(*arrays[:2])}"
    shapes = " ".join("x".join(map(str, a.shape)) or "()" for a in arrays)  # () a scalar
    if name == "fused_elementwise":
        return f"fused loop ({len(eqn.params['graph'].eqns)} ops) over {shapes}"
    return f"{name} {shapes}"


def _kind(label):
    return "GEMM" if label.startswith("GEMM") else "fused loops" if label.startswith("fused") else "other ops"


def _timed_copy(fn, tag, times, labels, operands, blas):
    """``fn`` (generated code) with every kernel it calls timed into ``times[key]``."""
    src = fn.__tapeflow_source__
    eqn_at = fn.__tapeflow_eqn_at__
    # each kernel global of the generated code -> the equation whose line calls it
    where = {}
    for ln, line in enumerate(src.splitlines(), 1):
        if ln in eqn_at and "(" in line and " = " in line:
            where.setdefault(line.split(" = ", 1)[1].split("(", 1)[0].strip(), eqn_at[ln])
    glb = fn.__globals__
    pc = time.perf_counter

    def timed(k, f):
        key = (tag, k)
        acc = times.setdefault(key, [])
        is_gemm = where[k].prim.name == "matmul"

        def w(*a, **kw):
            t0 = pc()
            r = f(*a, **kw)
            acc.append(pc() - t0)
            if key not in labels:
                labels[key] = _label(where[k], a) + (
                    f", {blas.blas_threads() or 'default'} BLAS thread(s)" if is_gemm else "")
                if is_gemm:   # (buffer or None, a, b), as gemm_threads runs it
                    operands.setdefault(labels[key].split(",")[0], (a[2] if len(a) > 2 else None, a[0], a[1]))
            return r
        return w

    ns = dict(glb)
    ns.update({k: timed(k, glb[k]) for k in where})
    return types.FunctionType(fn.__code__, ns, fn.__name__, fn.__defaults__, fn.__closure__)


def breakdown(title, step, expect, calls=200, threads=0):
    """The text of the breakdown of ``calls`` steps of ``step`` (which runs ``expect``
    compiled functions); ``threads``: the intra-op count to set (0: tapeflow's own
    per-GEMM choice)."""
    import tapeflow as tf
    from tapeflow.util import threads as blas

    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
    cfs = hot_functions(step, expect)
    times, labels, operands = {}, {}, {}
    fns = [cf.compiled for cf in cfs]
    wrapped = [_timed_copy(fn, i, times, labels, operands, blas) for i, fn in enumerate(fns)]
    captured = [None] * len(cfs)

    def capture(i, fn):
        def c(*arrays):
            captured[i] = arrays
            return fn(*arrays)
        return c

    for i, cf in enumerate(cfs):
        cf.compiled = capture(i, fns[i])
    try:
        step()
    finally:
        for cf, fn in zip(cfs, fns):
            cf.compiled = fn
    pc = time.perf_counter
    step_t = []
    for _ in range(calls):  # the unwrapped step and the timed one, interleaved
        t0 = pc()
        for fn, args in zip(fns, captured):
            fn(*args)
        step_t.append(pc() - t0)
        for fn, args in zip(wrapped, captured):
            fn(*args)
    per = {k: (min(v), float(np.median(v)), len(v) / calls) for k, v in times.items() if v}
    lines = [f"{title}: {min(step_t) * 1e6:.0f} us best, {np.median(step_t) * 1e6:.0f} us median of {calls}; "
             f"{sum(n for _, _, n in per.values()):.0f} kernel calls per step (intra-op threads {threads or 'default'})",
             "   min us   median  kernel"]
    for k in sorted(per, key=lambda k: -per[k][1]):
        n = per[k][2]
        lines.append(f"  {per[k][0] * 1e6:7.1f}  {per[k][1] * 1e6:7.1f}  {labels[k]}" + (f" (x{n:g})" if n != 1 else ""))
    sums = {}
    for k, (lo, med, n) in per.items():
        s = sums.setdefault(_kind(labels[k]), [0.0, 0.0, 0.0])
        s[0] += lo * n
        s[1] += med * n
        s[2] += n
    for kind in ("GEMM", "fused loops", "other ops"):
        if kind in sums:
            lo, med, n = sums[kind]
            lines.append(f"  {lo * 1e6:7.1f}  {med * 1e6:7.1f}  all {n:g} {kind}")
    med_all = sum(m * n for _, m, n in per.values())
    lines.append(f"  outside the kernels (generated Python): {max(0.0, np.median(step_t) - med_all) * 1e6:.0f} us "
                 "(median step - sum of kernel medians)")
    counts = collections.Counter()
    for k, (_, _, n) in per.items():
        if _kind(labels[k]) == "GEMM":
            counts[labels[k].split(",")[0]] += n
    alone, text = gemm_threads(operands, calls)
    lines += text
    floor = sum(alone[label] * n for label, n in counts.items())
    lines.append(f"  GEMM floor: {floor * 1e6:.0f} us per step ({sum(counts.values()):g} GEMMs, each at its alone "
                 f"minimum, one thread or all); in the step: {sums['GEMM'][0] * 1e6:.0f} (sum of minimums), "
                 f"{sums['GEMM'][1] * 1e6:.0f} (sum of medians)" if counts else "  no GEMM")
    return "\n".join(lines)


def gemm_threads(operands, calls):
    """Each GEMM of the step alone, on the step's own operands, on one BLAS thread and on
    all (alternating, fastest of ``calls``): where a second thread pays, undisturbed.
    Returns ({label: fastest on either count}, the text lines)."""
    from threadpoolctl import threadpool_limits

    most = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    lines = [f"  each GEMM alone (min us): 1 BLAS thread / {most}"]
    alone = {}
    for label, (buf, a, b) in operands.items():
        best = {}
        for _ in range(calls):
            for n in (1, most):
                with threadpool_limits(n, user_api="blas"):
                    t0 = time.perf_counter()
                    np.matmul(a, b, out=buf)
                    t = time.perf_counter() - t0
                best[n] = min(best.get(n, t), t)
        alone[label] = min(best.values())  # on a busy machine one thread is the faster
        lines.append(f"  {best[1] * 1e6:7.1f}  {best[most] * 1e6:7.1f}  {label}")
    return alone, lines


def dqn_step(style="keras", batch=200):
    """(title, step) of the dqn workload's compiled train step."""
    from benchmarks.workloads import dqn

    case = next(c for c in dqn.cases("quick") if c["kind"] == "step")
    case = dict(case, batch=batch)
    bench = dqn._tf_step("tapeflow", style, "function")(case, dqn.make_data(case, 0))
    return f"tapeflow.function ({style}) DQN step, batch {batch}", bench.step


def td3_cycle(case_name="256-256", mode="quick"):
    """(title, cycle) of the td3 workload's compiled cycle (a critic iteration, then a
    critic + actor iteration: two compiled functions)."""
    from benchmarks.workloads import td3

    case = next(c for c in td3.cases(mode) + td3.cases("tiny") if c["name"] == case_name)
    bench = td3._tf("tapeflow", "function")(case, td3.make_data(case, 0))
    return f"tapeflow.function TD3 {case_name} cycle (2 iterations)", bench.step


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="where a compiled training step's time goes, kernel by kernel")
    ap.add_argument("workload", choices=["dqn", "td3"])
    ap.add_argument("--style", default="keras", choices=["keras", "raw"], help="dqn: the model's style")
    ap.add_argument("--batch", type=int, default=200, help="dqn: the batch")
    ap.add_argument("--case", default="256-256", help="td3: 256-256, 400-300 or 32-32")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads (0: tapeflow's choice)")
    a = ap.parse_args()
    # the benchmark's workers run tapeflow with the fused tier after two calls
    os.environ.setdefault("TAPEFLOW_FUSE_AFTER", "2")
    if a.workload == "dqn":
        title, step = dqn_step(a.style, a.batch)
        print(breakdown(title, step, 1, a.calls, a.threads))
    else:
        title, step = td3_cycle(a.case)
        print(breakdown(title, step, 2, a.calls, a.threads))
