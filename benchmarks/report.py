"""Markdown tables from the harness's results (standard library only)."""
from __future__ import annotations

import math

FRAMEWORK_ORDER = ["numpy", "tapeflow", "torch", "jax", "tensorflow"]
PEERS = ("torch", "jax", "tensorflow")
#: a round counts as quiet when its host probe is within this factor of the case's least probe.
#: The probe (two 256^3 sgemms) reads 383-400 us on an idle 2-core host here and 400-800 us in the
#: host's slow phases, which slow each framework's step by a different factor, so a ratio taken in
#: one is not a quiet-machine reading: 1.15 keeps the idle-host rounds and drops the slow-phase ones.
QUIET_PROBE = 1.15
UNIT_SYMBOL = {"us": "µs", "ms": "ms", "s": "s"}


def fmt_num(v: float) -> str:
    if v is None or not isinstance(v, (int, float)) or not math.isfinite(v):
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def scale(display: str) -> float:
    return {"us": 1e6, "ms": 1e3, "s": 1.0}.get(display, 1.0)


def annotate_case(case: dict, machine: dict | None = None) -> dict:
    """Adds ratios (to the fastest peer, to NumPy) and derived metrics."""
    rows = case["rows"]
    ok = [r for r in rows if r.get("status") == "ok" and r.get("timing")]
    peers = [r for r in ok if r["framework"] in PEERS]
    nps = [r for r in ok if r["framework"] == "numpy"]
    fastest_peer = min(peers, key=lambda r: r["timing"]["median"]) if peers else None
    numpy_ref = min(nps, key=lambda r: r["timing"]["median"]) if nps else None
    case["fastest_peer"] = (
        {"impl": fastest_peer["impl"], "label": fastest_peer["label"], "median_s": fastest_peer["timing"]["median"]}
        if fastest_peer else None)
    case["numpy"] = (
        {"impl": numpy_ref["impl"], "label": numpy_ref["label"], "median_s": numpy_ref["timing"]["median"]}
        if numpy_ref else None)
    peak = (machine or {}).get("peak_gflops_numpy")
    best = (machine or {}).get("peak_gflops_best")
    quiet = quiet_rounds(case)
    if quiet:
        case["quiet_rounds"] = quiet
    for r in ok:
        med = r["timing"]["median"]
        for key, ref in (("vs_fastest_peer", fastest_peer), ("vs_numpy", numpy_ref)):
            r[key], r[key + "_rounds"] = _vs(r["timing"], ref["timing"]) if ref else (None, None)
        if quiet and fastest_peer and _same_series(r["timing"], fastest_peer["timing"]):
            r["vs_fastest_peer_quiet"] = _vs(r["timing"], fastest_peer["timing"], quiet)[0]
        m = r.setdefault("metrics", {})
        if case.get("ratio_of_sums") and "total_s" in r["timing"]:  # a run cut in chunks: its timed total
            m["total_s"] = r["timing"]["total_s"]
            if fastest_peer and _same_series(r["timing"], fastest_peer["timing"]):
                m["ratio_of_sums"] = r["timing"]["total_s"] / fastest_peer["timing"]["total_s"]
        if case.get("flops_per_unit"):
            m["gflops"] = case["flops_per_unit"] / med / 1e9
            if peak:
                m["pct_peak"] = 100.0 * m["gflops"] / peak
            if best:
                m["pct_best_peak"] = 100.0 * m["gflops"] / best
    return case


def _same_series(a: dict, b: dict) -> bool:
    return bool(a.get("series")) and a.get("series") == b.get("series") and len(a["rounds"]) == len(b["rounds"])


def quiet_rounds(case: dict):
    """Indices of the rounds whose host probe is within QUIET_PROBE of the case's least, or
    None when that view says nothing new: no probes, every round quiet, or fewer than 3 quiet
    rounds (too few for a median). The issues' bars are for a quiet machine; this view
    shows the ratios the host's slow phases did not touch, beside the all-rounds median."""
    probes = case.get("host_probe_s") or []
    valid = [p for p in probes if p]
    if not valid:
        return None
    quiet = [i for i, p in enumerate(probes) if p and p <= QUIET_PROBE * min(valid)]
    return quiet if 3 <= len(quiet) < len(probes) else None


def _vs(t: dict, ref: dict, only=None):
    """(ratio, [min, max]) of a row's time to a reference row's. Rows timed in the same
    interleaved rounds: the median of the per-round ratios (each compares blocks timed
    seconds apart; `only`: of those rounds' alone) and their range; otherwise (a one-off
    run, a row kept from another run) the ratio of the medians, and no range."""
    if _same_series(t, ref):
        per = [a / b for i, (a, b) in enumerate(zip(t["rounds"], ref["rounds"]))
               if a is not None and b and (only is None or i in only)]
        if per:
            per.sort()
            n = len(per)
            return (per[n // 2] if n % 2 else 0.5 * (per[n // 2 - 1] + per[n // 2])), [per[0], per[-1]]
    return t["median"] / ref["median"], None


def _check_cell(r: dict) -> str:
    c = r.get("check")
    if not c:
        return "-"
    if "error" in c:
        return f"error: {c['error']}"
    tag = "ok" if c.get("ok") else "**MISMATCH**"
    return f"{tag} {c['max_abs']:.1g} / {c['max_rel']:.1g}"


def _ratio(v, spread=None) -> str:
    if v is None:
        return "-"
    cell = f"{v:.2f}×" if v < 100 else f"{v:,.0f}×"
    if spread and spread[0] != spread[1]:
        cell += f" ({fmt_num(spread[0])}–{fmt_num(spread[1])})"
    return cell


def _escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def case_table(case: dict) -> str:
    disp = case.get("display", "us")
    sym = UNIT_SYMBOL.get(disp, disp)
    unit = case.get("unit", "call")
    k = scale(disp)
    cols = case.get("columns", [])
    head = ["Implementation", "Framework", f"{sym}/{unit} (median)", "min – max", "× fastest peer", "× NumPy"]
    head += [c[0] for c in cols] + ["check: max abs / rel diff"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]

    def order(r):
        fw = r.get("framework")
        return FRAMEWORK_ORDER.index(fw) if fw in FRAMEWORK_ORDER else 99

    for r in sorted(case["rows"], key=order):
        label = r.get("label", r.get("impl"))
        fw = r.get("framework")
        if r.get("status") == "ok" and r.get("timing"):
            t = r["timing"]
            cells = [label, fw, fmt_num(t["median"] * k),
                     f"{fmt_num(t['min'] * k)} – {fmt_num(t['max'] * k)}" if t.get("n", 1) > 1 else "-",
                     _ratio(r.get("vs_fastest_peer"), r.get("vs_fastest_peer_rounds")),
                     _ratio(r.get("vs_numpy"), r.get("vs_numpy_rounds"))]
            m = r.get("metrics", {})
            for _, key, fmt in cols:
                v = m.get(key)
                cells.append(fmt.format(v) if isinstance(v, (int, float)) and math.isfinite(v) else (str(v) if v is not None else "-"))
            cells.append(_check_cell(r))
        else:
            err = r.get("error") or r.get("status", "unavailable")
            cells = [label, fw, f"unavailable: {_escape(str(err))[:160]}", "", "", ""] + [""] * len(cols) + [""]
        lines.append("| " + " | ".join(_escape(str(c)) for c in cells) + " |")
    return "\n".join(lines)


def workload_markdown(name: str, wl: dict, level: int = 3) -> str:
    out = []
    for case in wl.get("cases", []):
        h = "#" * level
        title = case.get("title", case["name"])
        out.append(f"{h} {name} / {case['name']}: {title}\n")
        if case.get("description"):
            out.append(case["description"] + "\n")
        out.append(case_table(case) + "\n")
        notes = []
        if case.get("fastest_peer"):
            notes.append(f"fastest peer: {case['fastest_peer']['label']}")
        notes.append(f"mode {wl.get('mode')}, {wl.get('threads')} thread(s)")
        probes = [p for p in case.get("host_probe_s") or [] if p is not None]
        if probes:
            notes.append(f"{len(probes)} interleaved rounds; host probe (two 256³ float32 GEMMs, min of 5) "
                         f"{min(probes) * 1e6:.0f}–{max(probes) * 1e6:.0f} µs over the rounds")
        quiet = case.get("quiet_rounds")
        tf_quiet = [r for r in case["rows"] if r.get("framework") == "tapeflow" and r.get("vs_fastest_peer_quiet")]
        if quiet and tf_quiet:
            nums = ", ".join(str(i + 1) for i in quiet)
            notes.append(f"the {len(quiet)} quiet rounds (host probe within {QUIET_PROBE:g}× its least: rounds {nums}) "
                         "give × fastest peer " + ", ".join(f"{r.get('label', r['impl'])} {r['vs_fastest_peer_quiet']:.2f}×"
                                                            for r in tf_quiet))
        if case.get("notes"):
            notes.extend(case["notes"])
        out.append("_" + "; ".join(notes) + "._\n")
    return "\n".join(out)


def machine_line(machine: dict) -> str:
    bits = [machine.get("cpu_model", "?"), f"{machine.get('cores', '?')} cores"]
    if machine.get("mem_gib"):
        bits.append(f"{machine['mem_gib']:.0f} GiB")
    if machine.get("peak_gflops_numpy"):
        bits.append(f"NumPy float32 matmul peak {machine['peak_gflops_numpy']:.0f} GFLOP/s "
                    f"({machine.get('peak_threads', '?')} thread(s))")
    if machine.get("peak_gflops_best"):
        bits.append(f"best float32 matmul of any framework {machine['peak_gflops_best']:.0f} GFLOP/s "
                    f"({machine.get('peak_best_framework')})")
    return ", ".join(bits)


def versions_line(results: dict) -> str:
    vers = {}
    for wl in results.get("workloads", {}).values():
        for fw, env in (wl.get("framework_env") or {}).items():
            for k in ("numpy", "tapeflow", "numba", "torch", "jax", "jaxlib", "optax", "tensorflow", "keras", "python"):
                if env.get(k):
                    vers.setdefault(k, set()).add(str(env[k]))
    return ", ".join(f"{k} {'/'.join(sorted(v))}" for k, v in vers.items())


def threads_line(results: dict) -> str:
    st = results.get("settings", {})
    n = st.get("threads", "?")
    return (f"{n} for every framework (OMP/OPENBLAS/MKL/NUMBA_NUM_THREADS={n}; torch.set_num_threads({n}) and "
            f"set_num_interop_threads({n}); TF intra-op and inter-op {n}; XLA_FLAGS="
            f"\"{st.get('thread_env', {}).get('XLA_FLAGS', '?')}\"; workers pinned to {n} CPU(s) when fewer than all"
            + ("; OMP_WAIT_POLICY=PASSIVE" if st.get("thread_env", {}).get("OMP_WAIT_POLICY") else "") + ")"
            + ("; one process per implementation" if st.get("process_per_impl") else
               "; one process per framework and workload"))


def full_markdown(results: dict) -> str:
    m = results.get("machine", {})
    out = ["## Benchmarks: tapeflow vs NumPy, PyTorch, JAX, TensorFlow\n",
           f"Generated by `make bench` (`benchmarks/run.py`) on {results.get('generated', '?')}.\n",
           f"Machine: {machine_line(m)}.\n",
           f"Versions: {versions_line(results)}.\n",
           f"Threads: {threads_line(results)}.\n",
           "Every implementation of a case runs in its own process, all at once; after each has built, "
           "checked and warmed up, they time one block each per round, in a rotating order, while the "
           "others wait. Times are medians over the rounds; min – max over them. × fastest peer: time "
           "divided by the fastest of PyTorch/JAX/TensorFlow, × NumPy: divided by the hand-written NumPy "
           "implementation, both the median of the per-round ratios (in brackets their range over the "
           "rounds). The host probe (two 256³ float32 GEMMs) opens every round: its range shows how "
           "the host's speed moved; where some rounds ran in a slow phase, the note under a table also gives "
           "tapeflow's ratios over the quiet rounds alone (probe within 1.15× its least). check: the implementation's answer against a float64 NumPy "
           "reference, before timing (rel = max abs diff / max abs reference).\n"]
    for name, wl in results.get("workloads", {}).items():
        out.append(workload_markdown(name, wl))
    return "\n".join(out)
