"""``tapeflow.profile``: where a training step's time goes, and what to do about it.

::

    with tapeflow.profile() as prof:
        for _ in range(100):
            train_step(x, y)
    print(prof)                              # table + verdict
    prof.export_chrome_trace("step.json")    # chrome://tracing or ui.perfetto.dev

    @tapeflow.profile()                      # or as a decorator: fn.profile is the Profile
    def train(n): ...

What is measured, while the profiler is on:

* eager ops (everything that reaches ``bind`` outside a trace): per op type,
  the number of calls, the time inside the NumPy kernel, and the rest of the
  op's time (argument conversion, tapes recording, wrapping) as *dispatch*;
* compiled calls (``ConcreteFunction.run``): per function, calls and time, as
  one unit -- or, with ``profile(compiled_ops=True)``, by running the traced
  graph through the reference interpreter one equation at a time with timing
  (per-op kernel times inside compiled code, at interpreter speed: the
  compiled code itself cannot be timed per op without slowing it);
* tracing: per function, traces, retraces with their reasons, and the time
  tracing, optimizing and compiling (reported by ``tapeflow.function``);
* *Python*: the wall time not accounted for above (the user's own code,
  NumPy outside tapeflow ops, data handling).

The profiler's own bookkeeping is measured and left out of every figure.

When no profiler is active the cost is one ``STATE.profiler is None`` test in
``eager_apply`` (the one eager path of ``bind``) and in ``ConcreteFunction.run``;
nothing else. The profiler never changes the primitive table: it passes a
timed kernel to ``eager_apply`` for the op it is timing.
"""
from __future__ import annotations

import functools
import json
import os
import sys
import threading
import time

from ..core import primitive as _prim
from ..core.state import STATE

_pc = time.perf_counter
_cpu = time.thread_time
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

__all__ = ["profile", "Profile"]

_RES = 64               # samples kept per (op, output shape) for the medians
_SITE_EVERY = 8          # ops per call-site sample (sites are estimates, totals are exact)
_SITE_MASK = _SITE_EVERY - 1


class _Res:
    """Timings of one op type at one output shape: count, sums, and the last
    64 samples (their median discounts stalls: preemption, GC pauses)."""
    __slots__ = ("n", "ksum", "dsum", "ks", "ds")

    def __init__(self):
        self.n = 0
        self.ksum = 0.0
        self.dsum = 0.0
        self.ks = []
        self.ds = []

    def add(self, k, d):
        i = self.n
        self.n = i + 1
        self.ksum += k
        self.dsum += d
        if i < _RES:
            self.ks.append(k)
            self.ds.append(d)
        else:
            j = i % _RES
            self.ks[j] = k
            self.ds[j] = d

    def robust(self):
        """(kernel, rest) totals with each sample's typical value (median), never above the sums."""
        return (min(self.ksum, self.n * _median(self.ks)), min(self.dsum, self.n * _median(self.ds)))


def _median(xs):
    if not xs:
        return 0.0
    ys = sorted(xs)
    m = len(ys) // 2
    return ys[m] if len(ys) % 2 else 0.5 * (ys[m - 1] + ys[m])


class _OpStat:
    __slots__ = ("calls", "window", "kernel", "res")

    def __init__(self):
        self.calls = 0
        self.window = 0.0
        self.kernel = 0.0
        self.res = {}          # output shape -> _Res

    def robust(self, wrap):
        """(kernel, dispatch) with stalls discounted and the timer's own cost removed."""
        k = d = 0.0
        for r in self.res.values():
            rk, rd = r.robust()
            k += rk
            d += max(0.0, rd - r.n * wrap)
        return k, d


class Profile:
    """Collects timings while active (``with`` block or decorated calls)."""

    def __init__(self, compiled_ops=False, max_events=1_000_000, record_sites=True):
        self.compiled_ops = bool(compiled_ops)
        self.max_events = int(max_events)
        self.record_sites = bool(record_sites)
        self.ops = {}            # op name -> _OpStat (eager)
        self.cops = {}           # op name -> _OpStat (inside compiled functions, compiled_ops=True)
        self.compiled = {}       # function name -> [calls, seconds]
        self.traces = {}         # function name -> dict(traces, retraces, reasons, trace_s, optimize_s, compile_s)
        self.sites = {}          # (function, file, line) -> [ops, dispatch seconds, kernel seconds]
        self.events = []         # (name, cat, ts, dur, args) for the Chrome trace
        self.dropped_events = 0
        self.wall = 0.0
        self.cpu = 0.0           # CPU time of the profiling thread while active
        self._c_enter = 0.0
        self.self_time = 0.0     # the profiler's own bookkeeping (excluded)
        self.n_eager = 0
        self.n_compiled = 0
        self._depth = 0
        self._roots = []         # frames whose callees are "the step"
        self._t_enter = None
        self._t0 = None
        self._k = 0.0
        self._ks = 0.0
        self._timers = {}
        self._prev = None
        self._tids = {}
        self._cal = _calibration()

    # -- activation ------------------------------------------------------------------------------
    def __enter__(self):
        return self._start((sys._getframe(1), None))

    def __exit__(self, *exc):
        self._stop()
        return False

    def _start(self, root_frame):
        cur = STATE.profiler
        if cur is not None and cur is not self:
            raise RuntimeError("tapeflow.profile: another profiler or tf.debugging.enable_check_numerics is already "
                               "active (they observe the same ops and do not nest)")
        if self._depth == 0:
            self._c_enter = _cpu()
            self._t_enter = _pc()
            if self._t0 is None:
                self._t0 = self._t_enter
            STATE.profiler = self
        self._depth += 1
        self._roots.append(root_frame)
        return self

    def _stop(self):
        self._depth -= 1
        self._roots.pop()
        if self._depth == 0:
            STATE.profiler = None
            t = _pc()
            self.wall += t - self._t_enter
            self.cpu += _cpu() - self._c_enter
            self._event("profile", "profile", self._t_enter, t - self._t_enter, None)

    def __call__(self, fn):
        """Decorator: every call of ``fn`` is profiled into this Profile
        (available as ``fn.profile``)."""
        prof = self

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prof._start((sys._getframe(0), fn))
            try:
                return fn(*args, **kwargs)
            finally:
                prof._stop()
        wrapper.profile = self
        wrapper.report = self.report
        return wrapper

    @property
    def active(self):
        return STATE.profiler is self

    # -- hooks (called by the core when STATE.profiler is set) ------------------------------------
    def eager(self, p, args, params):
        """One eager op (``eager_apply`` hands it here): time it, and its kernel
        (passed to ``eager_apply`` for this call; the primitive is not touched)."""
        t_in = _pc()
        impl = p.impl
        timer = self._timers.get(p)
        if timer is None or timer.__wrapped__ is not impl:
            timer = self._timers[p] = self._make_timer(impl)
        st = STATE
        st.profiler = None  # the reads and conversions inside this op are part of it
        self._k = 0.0
        self._ks = 0.0
        out = None
        t0 = _pc()
        try:
            out = _prim.eager_apply(p, args, params, timer)
            return out
        finally:
            t1 = _pc()
            st.profiler = self
            window = t1 - t0
            k = self._k
            s = self.ops.get(p.name)
            if s is None:
                s = self.ops[p.name] = _OpStat()
            s.calls += 1
            s.window += window
            s.kernel += k
            v = getattr(out, "_v", None)
            shape = v.shape if v is not None else None
            r = s.res.get(shape)
            if r is None:
                r = s.res[shape] = _Res()
            r.add(k, window - k)
            self.n_eager += 1
            if self.record_sites and not self.n_eager & _SITE_MASK:
                # every 8th op: which function of the profiled block issued it (a stack walk)
                site = self._site(sys._getframe(2))
                ss = self.sites.get(site)
                if ss is None:
                    ss = self.sites[site] = [0, 0.0, 0.0]
                ss[0] += _SITE_EVERY
                ss[1] += _SITE_EVERY * max(0.0, window - k - self._cal["wrap"])
                ss[2] += _SITE_EVERY * k
            if len(self.events) < self.max_events - 1:
                self.events.append((p.name, "op", t0, window, None))
                if k:
                    self.events.append((p.name, "kernel", self._ks, k, None))
            else:
                self.dropped_events += 2
            self.self_time += (_pc() - t_in) - window

    def _make_timer(self, impl):
        prof = self

        def timed(*a, **kw):
            s = _pc()
            try:
                return impl(*a, **kw)
            finally:
                prof._k += _pc() - s
                prof._ks = s
        timed.__wrapped__ = impl
        return timed

    def run_compiled(self, cf, arrays):
        """One call of a compiled function (``ConcreteFunction.run``), timed as a unit
        (or per equation through the interpreter with ``compiled_ops=True``)."""
        t_in = _pc()
        st = STATE
        st.profiler = None
        t0 = _pc()
        try:
            if self.compiled_ops:
                return self._interpret(cf, arrays)
            return cf.run(arrays)
        finally:
            t1 = _pc()
            st.profiler = self
            c = self.compiled.get(cf.name)
            if c is None:
                c = self.compiled[cf.name] = [0, 0.0, {}]
            c[0] += 1
            c[1] += t1 - t0
            r = c[2].get(id(cf))
            if r is None:
                r = c[2][id(cf)] = _Res()
            r.add(t1 - t0, 0.0)
            self.n_compiled += 1
            self._event(cf.name, "compiled", t0, t1 - t0, None)
            self.self_time += (_pc() - t_in) - (t1 - t0)

    def _interpret(self, cf, arrays):
        """The graph through the shared evaluator, each top-level equation timed
        (a cond/loop as one op: timing its inner equations too would count them twice)."""
        from ..ir import interpreter as I
        g = cf.graph
        if len(arrays) != len(g.inputs):
            return cf.run(arrays)
        prof = self

        def timed_apply(e, vals):
            p = e.prim
            s = _pc()
            out = I.apply_eqn(e, vals)
            d = _pc() - s
            st = prof.cops.get(p.name)
            if st is None:
                st = prof.cops[p.name] = _OpStat()
            st.calls += 1
            st.kernel += d
            st.window += d
            if len(prof.events) < prof.max_events:
                prof.events.append((p.name, "compiled_op", s, d, {"function": cf.name}))
            else:
                prof.dropped_events += 1
            return out
        return cf._pack(I.evaluate(g, list(arrays), timed_apply))

    def on_trace(self, name, reasons, timings):
        """Called by tapeflow.function after each trace (reasons None for the first)."""
        t = self.traces.get(name)
        if t is None:
            t = self.traces[name] = {"traces": 0, "retraces": 0, "reasons": [], "trace_s": 0.0,
                                     "optimize_s": 0.0, "compile_s": 0.0}
        t["traces"] += 1
        if reasons is not None:
            t["retraces"] += 1
            t["reasons"].append("; ".join(reasons) if isinstance(reasons, (list, tuple)) else str(reasons))
        now = _pc()
        end = now
        for key in ("compile_s", "optimize_s", "trace_s"):
            d = float(timings.get(key, 0.0))
            t[key] += d
            self._event(f"{name}: {key[:-2]}", "trace", end - d, d, None)
            end -= d

    # -- helpers -------------------------------------------------------------------------------------
    def _event(self, name, cat, ts, dur, args):
        if len(self.events) < self.max_events:
            self.events.append((name, cat, ts, dur, args))
        else:
            self.dropped_events += 1

    def _site(self, f):
        """The function the profiled block called that issued this op: the
        step to compile. For a decorated function: the function it called, or
        the decorated function itself when it issues the ops directly."""
        roots = self._roots
        if not roots:
            return None
        root, fn = roots[-1]
        chain = []            # frames below the root, innermost first
        while f is not None and f is not root:
            chain.append(f)
            f = f.f_back
        if f is None:
            return ("<other thread or callback>", "", 0)
        if fn is not None and chain:
            chain.pop()       # the decorated function's own frame
        if chain:
            c = chain[-1].f_code
            if not c.co_filename.startswith(_PKG_DIR + os.sep):
                return (c.co_name, c.co_filename, c.co_firstlineno)
        # ops (or a model call) issued directly in the block / the decorated function's body
        if fn is not None:
            code = getattr(fn, "__code__", None)
            return (getattr(fn, "__name__", "<function>"), code.co_filename if code else "",
                    code.co_firstlineno if code else 0)
        return ("<with block>", root.f_code.co_filename, root.f_lineno)

    # -- results -------------------------------------------------------------------------------------
    def summary(self):
        """Totals in seconds. Op and compiled-call times count each call at the
        typical (median) time of its op and shape; the excess of the measured
        times over that -- the process descheduled, a GC pause -- is reported
        as ``stalls_s`` and kept out of the shares the verdict uses."""
        cal = self._cal
        kernel = dispatch = 0.0
        for st in self.ops.values():
            k, d = st.robust(cal["wrap"])
            kernel += k
            dispatch += d
        raw_k = sum(st.kernel for st in self.ops.values())
        windows = sum(st.window for st in self.ops.values())
        raw_d = max(0.0, windows - raw_k - self.n_eager * cal["wrap"])
        compiled = sum(r.robust()[0] for c in self.compiled.values() for r in c[2].values())
        raw_c = sum(c[1] for c in self.compiled.values())
        tracing = sum(t["trace_s"] + t["optimize_s"] + t["compile_s"] for t in self.traces.values())
        wall = self.wall + (_pc() - self._t_enter if self._depth else 0.0)
        hook_cost = (self.n_eager + self.n_compiled) * cal["call"]
        accounted = windows + self.self_time + hook_cost + raw_c + tracing
        residual = max(0.0, wall - accounted)
        stalls = max(0.0, raw_k - kernel) + max(0.0, raw_d - dispatch) + max(0.0, raw_c - compiled)
        # the profiling thread was off the CPU for wall - cpu (descheduled, I/O, sleeps); assuming that
        # is spread evenly over time, the residual's on-CPU part is the Python time, the rest "waiting"
        cpu = self.cpu + (_cpu() - self._c_enter if self._depth else 0.0)
        on_cpu = min(1.0, cpu / wall) if wall > 0 else 1.0
        python = residual * on_cpu
        waiting = residual - python
        total = kernel + dispatch + python + compiled + tracing  # the program's own time, stalls and profiler excluded
        return {"wall_s": wall, "total_s": total, "kernel_s": kernel, "dispatch_s": dispatch, "python_s": python,
                "compiled_s": compiled, "tracing_s": tracing, "stalls_s": stalls, "waiting_s": waiting,
                "cpu_s": cpu, "eager_ops": self.n_eager,
                "compiled_calls": self.n_compiled,
                "traces": sum(t["traces"] for t in self.traces.values()),
                "retraces": sum(t["retraces"] for t in self.traces.values()),
                "profiler_overhead_s": self.self_time + hook_cost + self.n_eager * cal["wrap"]}

    def op_table(self):
        """[(op, calls, kernel_s, dispatch_s)] for eager ops, by total time (stalls discounted)."""
        w = self._cal["wrap"]
        rows = [(n, st.calls) + st.robust(w) for n, st in self.ops.items()]
        rows.sort(key=lambda r: -(r[2] + r[3]))
        return rows

    def verdict(self):
        """One line a person can act on."""
        return _verdict(self)

    def report(self, max_ops=15):
        return _report(self, max_ops)

    __str__ = report

    def __repr__(self):
        s = self.summary()
        return (f"<tapeflow.profile: {s['total_s'] * 1e3:.1f} ms, {s['eager_ops']} eager ops, "
                f"{s['compiled_calls']} compiled calls>")

    def export_chrome_trace(self, path):
        """Write the events as Chrome trace JSON (chrome://tracing, ui.perfetto.dev). Returns path."""
        t0 = self._t0 or 0.0
        pid = os.getpid()
        tid = threading.get_ident() % 100000
        evs = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": "tapeflow"}},
               {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": "python"}}]
        for name, cat, ts, dur, args in self.events:
            e = {"name": name, "cat": cat, "ph": "X", "ts": round((ts - t0) * 1e6, 3),
                 "dur": round(dur * 1e6, 3), "pid": pid, "tid": tid}
            if args:
                e["args"] = args
            evs.append(e)
        data = {"traceEvents": evs, "displayTimeUnit": "ms",
                "otherData": {"summary": self.summary(), "verdict": self.verdict(),
                              "dropped_events": self.dropped_events}}
        d = os.path.dirname(os.fspath(path))
        if d:
            os.makedirs(d, exist_ok=True)
        tmp = os.fspath(path) + ".tmp"
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
        return path


def profile(compiled_ops=False, max_events=1_000_000, record_sites=True):
    """A profiler: ``with tapeflow.profile() as prof: ...`` or ``@tapeflow.profile()``.

    ``compiled_ops=True``: compiled functions run through the reference
    interpreter one equation at a time, so their kernels get per-op times
    (slower than the compiled code; the per-op split is what is wanted).
    ``max_events``: cap on Chrome-trace events kept (totals are always exact).
    """
    if callable(compiled_ops) and not isinstance(compiled_ops, bool):  # bare @tapeflow.profile
        return Profile()(compiled_ops)
    return Profile(compiled_ops=compiled_ops, max_events=max_events, record_sites=record_sites)


# -- calibration -----------------------------------------------------------------------------------------

_CAL = {}


def _calibration():
    """Per-op costs the profiler adds inside what it measures: the kernel
    timer wrapper ("wrap") and the hook call itself ("call")."""
    if _CAL:
        return _CAL
    n = 2000

    def noop(*a, **k):
        return None

    class _P:
        _k = 0.0
        _ks = 0.0
    holder = _P()

    def timed(*a, **kw):
        s = _pc()
        try:
            return noop(*a, **kw)
        finally:
            holder._k += _pc() - s
            holder._ks = s

    class _Hook:
        def eager(self, p, args, params):
            return None
    h = _Hook()
    best_wrap, best_call = float("inf"), float("inf")
    for _ in range(3):
        t = _pc()
        for _ in range(n):
            noop(1, 2)
        base = _pc() - t
        t = _pc()
        for _ in range(n):
            timed(1, 2)
        best_wrap = min(best_wrap, max(0.0, (_pc() - t - base) / n))
        t = _pc()
        for _ in range(n):
            h.eager(noop, (1, 2), None)
        best_call = min(best_call, (_pc() - t) / n)
    _CAL["wrap"] = best_wrap
    _CAL["call"] = best_call
    return _CAL


# -- verdict and report --------------------------------------------------------------------------------------

def _pct(x, total):
    return 100.0 * x / total if total > 0 else 0.0


def _fmt_t(s):
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def _top_site(prof):
    if not prof.sites:
        return None
    site, v = max(prof.sites.items(), key=lambda kv: kv[1][1] + kv[1][2])
    return site


def _verdict(prof):
    s = prof.summary()
    total = s["total_s"]
    if total <= 0 or (s["eager_ops"] == 0 and s["compiled_calls"] == 0 and s["traces"] == 0):
        return "nothing to judge: no tapeflow ops ran while profiling"
    v = _verdict_main(prof, s, total)
    off = s["stalls_s"] + s["waiting_s"]
    if s["wall_s"] > 0 and off / s["wall_s"] > 0.3:
        v += (f" (note: {_pct(off, s['wall_s']):.0f}% of the wall time was spent off the CPU -- waiting for I/O or "
              "sleeps, or the machine busy with other processes; that time is left out of the shares above)")
    return v


def _verdict_main(prof, s, total):
    kern, disp, py, comp, tr = s["kernel_s"], s["dispatch_s"], s["python_s"], s["compiled_s"], s["tracing_s"]
    overhead = disp + py
    # tracing
    if tr / total >= 0.3:
        name, t = max(prof.traces.items(), key=lambda kv: kv[1]["trace_s"] + kv[1]["optimize_s"] + kv[1]["compile_s"])
        if t["retraces"]:
            reason = t["reasons"][-1] if t["reasons"] else "signature changed"
            fix = ("pass it as a tensor (tapeflow.constant(...)) instead of a Python value" if "Python" in reason
                   else "give the function an input_signature with None for the dimension that varies")
            return (f"retrace-bound: {_pct(tr, total):.0f}% of the time is tracing and compiling; "
                    f"`{name}` was retraced {t['retraces']} time(s) (last: {reason}); to stop retracing, {fix}")
        return (f"trace-bound: {_pct(tr, total):.0f}% of the time is the first trace and compile of `{name}`; "
                "it is paid once, so profile more steps to see the steady state")
    if overhead / total >= 0.5:
        n_ops = s["eager_ops"]
        # Python time per eager op: small means it is the framework around the ops (tapes,
        # Variables, wrappers) that compiling removes too; large means the user's own code
        if n_ops and (disp >= 0.25 * overhead or py / n_ops < 25e-6):
            site = _top_site(prof)
            n = n_ops
            per_disp = (disp + py) / n * 1e6
            per_kern = kern / n * 1e6 if n else 0.0
            where = ""
            if site is not None and site[0] not in ("<with block>", "<other thread or callback>"):
                where = f"wrap `{site[0]}` in `tapeflow.function`"
            elif site is not None and site[0] == "<with block>":
                where = "move the step into a function and wrap it in `tapeflow.function`"
            else:
                where = "wrap the training step in `tapeflow.function`"
            return (f"overhead-bound: {_pct(overhead, total):.0f}% of the step is Python and op dispatch "
                    f"({n} eager ops, {per_disp:.1f} µs of overhead vs {per_kern:.1f} µs in kernels per op); "
                    f"{where}: compiled, the ops run back to back without per-op dispatch")
        return (f"Python-bound: {_pct(py, total):.0f}% of the time is your own Python code outside tapeflow ops "
                f"(data handling, NumPy, environment steps); tapeflow ops take {_pct(kern + comp + disp, total):.0f}%. "
                "Speed up that code, or move tensor work into a `tapeflow.function`")
    if (kern + comp) / total >= 0.5:
        rows = [(n, k) for n, _, k, _ in prof.op_table()] + [(n, st.kernel) for n, st in prof.cops.items()]
        if comp > kern and not prof.cops:
            name, c = max(prof.compiled.items(), key=lambda kv: kv[1][1])
            return (f"compute-bound in compiled code: {_pct(comp, total):.0f}% of the time is inside "
                    f"`{name}`; overhead is {_pct(overhead, total):.0f}%. For the per-op split run "
                    "tapeflow.profile(compiled_ops=True); to go faster, reduce the work (batch size, layer widths, "
                    "float32 instead of float64)")
        agg = {}
        for n, k in rows:
            agg[n] = agg.get(n, 0.0) + k
        top, tk = max(agg.items(), key=lambda kv: kv[1]) if agg else ("kernels", kern)
        share = _pct(tk, total)
        if comp > 0 and kern <= comp:
            hint = "it is already compiled; reduce the work (batch size, layer widths, float32 instead of float64)"
        else:
            hint = (f"a compiled function will not help much (dispatch overhead is only "
                    f"{_pct(overhead, total):.0f}% of the time); reduce the work in {top} instead (smaller "
                    "shapes, float32 instead of float64, fewer calls)")
        return (f"compute-bound in {top}: {_pct(kern + comp, total):.0f}% of the time is in kernels, "
                f"{share:.0f}% in {top}; {hint}")
    return (f"balanced: kernels {_pct(kern + comp, total):.0f}%, dispatch {_pct(disp, total):.0f}%, Python "
            f"{_pct(py, total):.0f}%, tracing {_pct(tr, total):.0f}%; compiling the step with `tapeflow.function` "
            "removes the dispatch share")


def _report(prof, max_ops=15):
    s = prof.summary()
    total = s["total_s"]
    lines = [f"tapeflow profile: {_fmt_t(total)} of program time ({_fmt_t(s['wall_s'])} wall, of which "
             f"{_fmt_t(s['profiler_overhead_s'])} profiler overhead, {_fmt_t(s['stalls_s'] + s['waiting_s'])} off-CPU), "
             f"{s['eager_ops']} eager ops, {s['compiled_calls']} compiled calls, {s['traces']} trace(s), "
             f"{s['retraces']} retrace(s)", ""]
    cats = [("kernels (eager ops)", s["kernel_s"]), ("dispatch (eager ops)", s["dispatch_s"]),
            ("compiled functions", s["compiled_s"]), ("tracing + compiling", s["tracing_s"]),
            ("Python (code, tapes)", s["python_s"])]
    lines.append(f"  {'where':<24}{'time':>12}{'share':>9}")
    for n, v in cats:
        lines.append(f"  {n:<24}{_fmt_t(v):>12}{_pct(v, total):>8.1f}%")
    if s["waiting_s"] > 0.01 * total:
        lines.append(f"  ({_fmt_t(s['waiting_s'])} off the CPU outside ops -- I/O, sleeps or other processes -- "
                     "left out of the shares)")
    if s["stalls_s"] > 0.01 * total:
        lines.append(f"  ({_fmt_t(s['stalls_s'])} of stalls -- ops or calls far slower than their typical time: "
                     "the process descheduled, GC pauses -- left out of the shares)")
    rows = prof.op_table()
    if rows:
        lines += ["", f"  {'eager op':<22}{'calls':>8}{'kernel':>12}{'dispatch':>12}{'kernel/call':>13}"
                      f"{'disp/call':>11}{'share':>8}"]
        for n, calls, k, d in rows[:max_ops]:
            lines.append(f"  {n:<22}{calls:>8}{_fmt_t(k):>12}{_fmt_t(d):>12}{_fmt_t(k / calls):>13}"
                         f"{_fmt_t(d / calls):>11}{_pct(k + d, total):>7.1f}%")
        if len(rows) > max_ops:
            rest = rows[max_ops:]
            lines.append(f"  {'(' + str(len(rest)) + ' more)':<22}{sum(r[1] for r in rest):>8}"
                         f"{_fmt_t(sum(r[2] for r in rest)):>12}{_fmt_t(sum(r[3] for r in rest)):>12}")
    if prof.compiled:
        lines += ["", f"  {'compiled function':<30}{'calls':>8}{'time':>12}{'per call':>12}{'share':>8}"]
        for n, (calls, t, _) in sorted(prof.compiled.items(), key=lambda kv: -kv[1][1]):
            lines.append(f"  {n:<30}{calls:>8}{_fmt_t(t):>12}{_fmt_t(t / calls):>12}{_pct(t, total):>7.1f}%")
    if prof.cops:
        lines += ["", "  ops inside compiled functions (reference interpreter, compiled_ops=True):",
                  f"  {'op':<22}{'calls':>8}{'time':>12}{'per call':>12}"]
        for n, st in sorted(prof.cops.items(), key=lambda kv: -kv[1].kernel)[:max_ops]:
            lines.append(f"  {n:<22}{st.calls:>8}{_fmt_t(st.kernel):>12}{_fmt_t(st.kernel / st.calls):>12}")
    if prof.traces:
        lines += ["", f"  {'traced function':<30}{'traces':>7}{'retraces':>9}{'trace':>11}{'optimize':>11}"
                      f"{'compile':>11}"]
        for n, t in prof.traces.items():
            lines.append(f"  {n:<30}{t['traces']:>7}{t['retraces']:>9}{_fmt_t(t['trace_s']):>11}"
                         f"{_fmt_t(t['optimize_s']):>11}{_fmt_t(t['compile_s']):>11}")
            for r in t["reasons"][-5:]:
                lines.append(f"      retrace: {r}")
    if prof.sites and len(prof.sites) > 1:
        lines += ["", "  eager ops by calling function (sampled):"]
        for (fn, file, line), (n, d, k) in sorted(prof.sites.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))[:5]:
            loc = f"{os.path.basename(file)}:{line}" if file else ""
            lines.append(f"    {fn:<28}{loc:<24}{n:>8} ops {_fmt_t(d):>11} dispatch {_fmt_t(k):>11} kernel")
    if prof.dropped_events:
        lines.append(f"\n  ({prof.dropped_events} trace events dropped beyond max_events={prof.max_events})")
    lines += ["", "verdict: " + prof.verdict()]
    return "\n".join(lines)
