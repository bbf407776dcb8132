"""Where a compiled DQN train step's time goes (issue 14's compiled DQN bar).

Every kernel the step's generated code calls (GEMMs, fused native loops, NumPy ops) is
timed where it runs: inside the step, after the kernels before it, with the caches they
leave (a fused loop costs ~1.5x its isolated time there). The step is the benchmark's
own (benchmarks/workloads/dqn.py: raw ops + hand Adam, or Keras Dense/MSE/Adam), past
its tier-up. Per kernel: the operation, its operand shapes (a GEMM's layout: T marks an
operand passed transposed) and, for a GEMM, the BLAS threads it ran on; then the sums
per kind and what is left of the step's time outside the kernels (the generated code's
own Python). Per-kernel minimums are what the kernel costs undisturbed; medians show the
load. Times on a shared machine are noisy: compare rows of one run.

    PYTHONPATH=$PWD python benchmarks/dqn_breakdown.py --style keras
"""
from __future__ import annotations

import os
import sys
import time
import types

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.common import array_gemm_label  # noqa: E402
from benchmarks.workloads import dqn  # noqa: E402


def _hot_step(style, batch):
    """(the benchmark's step callable, its ConcreteFunction past the tier-up)."""
    from tapeflow.compiler.function import ConcreteFunction

    case = next(c for c in dqn.cases("quick") if c["kind"] == "step")
    case = dict(case, batch=batch)
    bench = dqn._tf_step("tapeflow", style, "function")(case, dqn.make_data(case, 0))
    seen = []
    run = ConcreteFunction.run

    def spy(self, arrays):  # the calls before the tier-up pass here
        seen.append(self)
        return run(self, arrays)

    ConcreteFunction.run = spy
    try:
        bench.step()
    finally:
        ConcreteFunction.run = run
    cf = seen[-1]
    while not cf.hot:
        bench.step()
    bench.step()  # the first call of the tiered code
    return bench, cf


def _label(eqn, args):
    name = eqn.prim.name
    arrays = [a for a in args if isinstance(a, (np.ndarray, np.generic))]
    if name == "matmul":
        # (impl_out's first argument is the planned result buffer)
        return f"GEMM {array_gemm_label(*arrays[-2:])}"
    shapes = " ".join("x".join(map(str, a.shape)) or "()" for a in arrays)  # () a scalar
    if name == "fused_elementwise":
        return f"fused loop ({len(eqn.params['graph'].eqns)} ops) over {shapes}"
    return f"{name} {shapes}"


def _kind(label):
    return "GEMM" if label.startswith("GEMM") else "fused loops" if label.startswith("fused") else "other ops"


def breakdown(style="keras", calls=200, batch=200, threads=0):
    """The text of the breakdown of ``calls`` steps; ``threads``: the intra-op count to
    set (0: tapeflow's own per-GEMM choice)."""
    import tapeflow as tf
    from tapeflow.util import threads as blas

    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
    bench, cf = _hot_step(style, batch)
    fn = cf.compiled
    src = fn.__tapeflow_source__
    eqn_at = fn.__tapeflow_eqn_at__
    # each kernel global of the generated code -> the equation whose line calls it
    where = {}
    for ln, line in enumerate(src.splitlines(), 1):
        if ln in eqn_at and "(" in line and " = " in line:
            where.setdefault(line.split(" = ", 1)[1].split("(", 1)[0].strip(), eqn_at[ln])
    glb = fn.__globals__
    times = {k: [] for k in where}
    labels = {}
    operands = {}  # GEMM label -> the arguments of its kernel call (the planned buffer first)
    pc = time.perf_counter

    def timed(k, f):
        acc = times[k]

        def w(*a, **kw):
            t0 = pc()
            r = f(*a, **kw)
            acc.append(pc() - t0)
            if k not in labels:
                labels[k] = _label(where[k], a) + (
                    f", {blas.blas_threads() or 'default'} BLAS thread(s)" if where[k].prim.name == "matmul" else "")
                if where[k].prim.name == "matmul":
                    operands[labels[k].split(",")[0]] = a
            return r
        return w

    ns = dict(glb)
    ns.update({k: timed(k, glb[k]) for k in where})
    wrapped = types.FunctionType(fn.__code__, ns, fn.__name__, fn.__defaults__, fn.__closure__)
    captured = []

    def capture(*arrays):
        captured.append(arrays)
        return fn(*arrays)

    cf.compiled = capture
    try:
        bench.step()
    finally:
        cf.compiled = fn
    args = captured[0]
    step_t = []
    for _ in range(calls):  # the unwrapped step and the timed one, interleaved
        t0 = pc()
        fn(*args)
        step_t.append(pc() - t0)
        wrapped(*args)
    per = {k: (min(v), float(np.median(v))) for k, v in times.items() if v}
    lines = [f"tapeflow.function ({style}) DQN step, batch {batch}: {min(step_t) * 1e6:.0f} us best, "
             f"{np.median(step_t) * 1e6:.0f} us median of {calls}; {len(per)} kernel calls per step "
             f"(intra-op threads {threads or 'default'})",
             "   min us   median  kernel"]
    for k in sorted(per, key=lambda k: -per[k][1]):
        lines.append(f"  {per[k][0] * 1e6:7.1f}  {per[k][1] * 1e6:7.1f}  {labels[k]}")
    sums = {}
    for k, (lo, med) in per.items():
        s = sums.setdefault(_kind(labels[k]), [0.0, 0.0, 0])
        s[0] += lo
        s[1] += med
        s[2] += 1
    for kind in ("GEMM", "fused loops", "other ops"):
        if kind in sums:
            lo, med, n = sums[kind]
            lines.append(f"  {lo * 1e6:7.1f}  {med * 1e6:7.1f}  all {n} {kind}")
    med_all = sum(m for _, m in per.values())
    lines.append(f"  outside the kernels (generated Python): {max(0.0, np.median(step_t) - med_all) * 1e6:.0f} us "
                 "(median step - sum of kernel medians)")
    lines += _gemm_threads(operands, calls)
    return "\n".join(lines)


def _gemm_threads(operands, calls):
    """Each GEMM of the step alone, on the step's own operands, on one BLAS thread and on
    all (alternating, fastest of ``calls``): where a second thread pays, undisturbed."""
    from threadpoolctl import threadpool_limits

    most = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    lines = [f"  each GEMM alone (min us): 1 BLAS thread / {most}"]
    for label, (buf, a, b) in operands.items():
        best = {}
        for _ in range(calls):
            for n in (1, most):
                with threadpool_limits(n, user_api="blas"):
                    t0 = time.perf_counter()
                    np.matmul(a, b, out=buf)
                    t = time.perf_counter() - t0
                best[n] = min(best.get(n, t), t)
        lines.append(f"  {best[1] * 1e6:7.1f}  {best[most] * 1e6:7.1f}  {label}")
    return lines


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="where a compiled DQN train step's time goes")
    ap.add_argument("--style", default="keras", choices=["keras", "raw"])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads (0: tapeflow's choice)")
    a = ap.parse_args()
    print(breakdown(a.style, a.calls, a.batch, a.threads))
