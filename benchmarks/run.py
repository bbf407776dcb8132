#!/usr/bin/env python3
"""tapeflow's benchmark harness: tapeflow vs hand-written NumPy, PyTorch, JAX
and TensorFlow on the same workloads, in one run.

    make bench                    # full run (creates .venv-peers on first use)
    make bench QUICK=1            # short version (a few minutes)
    python benchmarks/run.py --only dispatch          # one workload
    python benchmarks/run.py --only dispatch --no-peers   # tapeflow's venv only

Each implementation runs in a worker process of its own: NumPy and tapeflow
with this interpreter (tapeflow's .venv), PyTorch/JAX/TensorFlow with the
peers venv's (.venv-peers), so the peers are never imported here. All of a
workload's workers live at once; they build and warm up in turn, then time
one block each per round, in interleaved rounds (rounds.py), so that every
round's ratio compares neighbours in time on a host whose speed drifts. Results:
benchmarks/results/latest.json (every figure + the machine), README_table.md
(Markdown tables), latest.png (bar chart, drawn in the peers venv), logs/.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import peers_env, report, rounds  # noqa: E402
from benchmarks.common import TIMING, plan_rounds  # noqa: E402
from benchmarks.workloads import get_workload, names as workload_names  # noqa: E402

DEFAULT_OUT = os.path.join(HERE, "results")
README = os.path.join(ROOT, "README.md")
BEGIN, END = "<!-- BENCH-TABLE -->", "<!-- /BENCH-TABLE -->"


def update_readme(markdown, path=README):
    """Replace the README's benchmark section (between the BENCH-TABLE markers)
    with the tables of a full run, atomically."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        return f"README not updated: {e}"
    if BEGIN not in text:
        return f"README not updated: no {BEGIN} marker"
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1] if END in rest else ""
    body = markdown.replace("## Benchmarks:", "### Benchmarks:", 1)
    new = f"{head}{BEGIN}\n{body.strip()}\n{END}{tail}"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(new)
    os.replace(tmp, path)
    return f"README.md: benchmark tables updated ({len(body.splitlines())} lines)"


FRAMEWORK_ORDER = ["numpy", "tapeflow", "torch", "jax", "tensorflow"]
PEERS = ("torch", "jax", "tensorflow")
FULL_ONLY = {"gridworld", "shared_machine"}  # run in quick/tiny mode only when named with --only
WORKER_TIMEOUT = {"tiny": 300, "quick": 900, "full": 3000}
#: an idle worker taking more than this share of a CPU while it waits is reported (it competes with the one timed)
IDLE_CPU_WARN = 0.05


def say(msg=""):
    print(msg, flush=True)


def machine_description(threads: int) -> dict:
    d = {"platform": platform.platform(), "machine": platform.machine(), "python": platform.python_version(),
         "cores": os.cpu_count(), "threads_used": threads}
    try:
        d["cpus_available"] = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
        for line in info.splitlines():
            if line.startswith("model name"):
                d["cpu_model"] = line.split(":", 1)[1].strip()
                break
        flags = next((ln.split(":", 1)[1].split() for ln in info.splitlines() if ln.startswith("flags")), [])
        d["simd"] = [f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "avx_vnni") if f in flags]
    except OSError:
        d["cpu_model"] = platform.processor() or "?"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            if k.strip() in ("Model name", "CPU family", "Model", "Hypervisor vendor", "L2 cache", "L3 cache",
                             "CPU max MHz", "Thread(s) per core"):
                d.setdefault("lscpu", {})[k.strip()] = v.strip()
        if d.get("cpu_model") in (None, "?") and "Model name" in d.get("lscpu", {}):
            d["cpu_model"] = d["lscpu"]["Model name"]
    except Exception:
        pass
    try:
        with open("/proc/meminfo") as f:
            kb = int(next(ln for ln in f if ln.startswith("MemTotal")).split()[1])
        d["mem_gib"] = kb / 2**20
    except Exception:
        pass
    return d


def loadavg():
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def busy_warning(before, after, machine):
    """A warning when other processes competed for the CPUs during a workload."""
    cores = machine.get("cpus_available") or machine.get("cores") or 1
    # our own workers add about `threads` to the load; more than that is someone else
    own = machine.get("threads_used", 1)
    worst = max((x[0] for x in (before, after) if x), default=0.0)
    if worst > own + 0.5 * cores:
        return (f"WARNING: the machine was busy (1-min load average up to {worst:.1f} on {cores} CPUs, "
                f"this run's workers account for about {own}): timings are noisy (multi-threaded PyTorch "
                f"most of all; see --omp-passive, --threads)")
    return ""


def worker_env(threads, omp_passive):
    from benchmarks.common import thread_env

    env = dict(os.environ)
    env.update(thread_env(threads, omp_passive))
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def start_worker(python, tag, workload, framework, args, log_dir, impls=None, reference=None):
    """A worker process serving `impls` of `framework` for `workload` (none: the host probe)."""
    cmd = [python, os.path.join(HERE, "worker.py"), "--framework", framework, "--mode", args.mode,
           "--threads", str(args.threads)]
    if workload:
        cmd += ["--workload", workload]
    if impls:
        cmd += ["--impls", ",".join(impls)]
    if reference:
        cmd += ["--reference", reference]
    log_path = os.path.join(log_dir, f"{workload or 'probe'}-{tag}.log")
    open(log_path, "w").close()
    return rounds.Worker(tag, cmd, worker_env(args.threads, args.omp_passive), ROOT, log_path,
                         echo=lambda line: print(line, end="", flush=True))


def stub_rows(wl, framework, mode, why, impls=None, case_names=None):
    rows = []
    for case in wl.cases(mode):
        if case_names is not None and case["name"] not in case_names:
            continue
        for impl in wl.IMPLS:
            if impl.framework == framework and mode in impl.modes and (impl.cases is None or case["name"] in impl.cases) \
                    and (impls is None or impl.name in impls):
                rows.append({"impl": impl.name, "framework": framework, "label": impl.label, "case": case["name"],
                             "status": "unavailable", "error": why})
    return rows


def run_case(wl, case, live, args, probe, say):
    """One case: each worker builds, checks and warms up its implementations in turn, then
    the rounds (rounds.py); returns (rows, extras by framework, host probe per round)."""
    mode, cfg = args.mode, dict(TIMING[args.mode])
    if getattr(args, "rounds", None):
        cfg["rounds"] = cfg["min_rounds"] = args.rounds
    rows, slots, built = [], [], []
    for w in live:
        expected = stub_rows(wl, w.framework, mode, "", impls=w.impls, case_names={case["name"]})
        if not expected:
            continue
        try:
            rep = w.request({"cmd": "case", "case": case["name"]}, WORKER_TIMEOUT[mode])
            w.settle()  # its threads quiet before the next one warms up (and sizes its blocks)
        except rounds.WorkerDied as exc:
            say(f"  [{w.tag}] worker failed: {exc}")
            rows += [dict(r, error=str(exc)) for r in expected]
            continue
        if "error" in rep:
            rows += [dict(r, error=rep["error"], traceback=rep.get("traceback")) for r in expected]
            continue
        built.append(w)
        for row in rep["rows"]:
            if row.get("status") == "ok" and "timing" not in row:  # timed in the rounds below
                slots.append({"worker": w, "impl": row["impl"], "row": row, "calls": row.get("calls")})
            else:
                rows.append(row)
    per_call = {i: sl["row"]["per_call_s"] for i, sl in enumerate(slots) if sl["calls"] is None}
    n, calls = plan_rounds(per_call, cfg, case.get("rounds"))
    for i, sl in enumerate(slots):
        if sl["calls"] is None:
            sl["calls"] = calls[i]
            predicted = per_call[i] * calls[i] * sl["row"].get("units_per_call", 1.0)
            sl["timeout"] = max(rounds.MIN_BLOCK_TIMEOUT_S, rounds.BLOCK_TIMEOUT_FACTOR * predicted)
        else:  # fixed blocks (chunks of a run): no prediction, the worker's own limit
            sl["timeout"] = WORKER_TIMEOUT[mode]
    probes = []
    if slots:
        say(f"  {case['name']}: {n} rounds of {len(slots)} implementations "
            f"({', '.join('%s x%d' % (sl['impl'], sl['calls']) for sl in slots)})")
        probes = rounds.run_rounds(slots, n, probe, say=say)
    series = _dt.datetime.now().isoformat(timespec="seconds")
    for sl in slots:
        row = sl["row"]
        timing = (rounds.round_timing(sl, series, row.pop("first_call_s", None), row.pop("units_per_call", 1.0))
                  if any(s is not None for s in sl["s"]) else None)
        if sl.get("error"):  # a stub row: its median would not be over the same rounds as the others'
            done = sum(s is not None for s in sl["s"])
            row.update(status="unavailable", error=f"{sl['error']} (after {done} of {n} rounds)")
            if sl.get("traceback"):
                row["traceback"] = sl["traceback"]
            if timing:
                row["partial_timing"] = timing
        else:
            row["timing"] = timing
        rows.append(row)
    extras, with_extras = {}, set()
    for w in built:
        if w.dead:
            continue
        first = w.framework not in with_extras  # one worker per framework measures its extras
        with_extras.add(w.framework)
        try:
            rep = w.request({"cmd": "end", "extras": first}, WORKER_TIMEOUT[mode])
            w.settle()
        except rounds.WorkerDied as exc:
            say(f"  [{w.tag}] worker failed at the end of {case['name']}: {exc}")
            continue
        for impl, m in (rep.get("metrics") or {}).items():
            for row in rows:
                if row["impl"] == impl and row.get("status") == "ok":
                    row.setdefault("metrics", {}).update(m)
        if rep.get("extras"):
            extras[w.framework] = rep["extras"]
    disp = case.get("display", "us")
    k, sym = report.scale(disp), report.UNIT_SYMBOL.get(disp, disp)
    for row in rows:
        if row.get("status") == "ok" and "timing" in row:
            t = row["timing"]
            say(f"    {row['label']}: median {report.fmt_num(t['median'] * k)} {sym}/{case.get('unit', 'call')} "
                f"(min {report.fmt_num(t['min'] * k)}, max {report.fmt_num(t['max'] * k)}; {t.get('blocks', 1)}x"
                f"{t.get('calls_per_block', 1)} calls)")
    return rows, extras, probes


def run_workload(name, args, peer_python, peer_status, out_dir, log_dir, machine, previous=None):
    wl = get_workload(name)
    mode, threads = args.mode, args.threads
    frameworks = [f for f in FRAMEWORK_ORDER if not args.frameworks or f in args.frameworks]
    say(f"\n=== {name}: {getattr(wl, 'TITLE', '')} (mode {mode}, {threads} thread(s)) ===")
    load_before = loadavg()
    rows, envs, workers = [], {}, {}
    # the float64 references, once, in a process of their own (NumPy only)
    ref_path = os.path.join(out_dir, f"{name}-reference.npz")
    if os.path.exists(ref_path):
        os.remove(ref_path)
    rp = subprocess.run([sys.executable, os.path.join(HERE, "worker.py"), "--workload", name, "--framework", "numpy",
                         "--mode", mode, "--threads", str(threads), "--reference-out", ref_path],
                        capture_output=True, text=True, cwd=ROOT, timeout=WORKER_TIMEOUT[mode],
                        env=dict(os.environ, PYTHONPATH=ROOT))
    if rp.returncode != 0 or not os.path.exists(ref_path):
        say(f"  reference: failed ({(rp.stderr or rp.stdout).strip().splitlines()[-1:]}); workers compute their own")
        ref_path = None
    # every worker of the workload at once (one process per implementation, or per framework
    # with --one-process-per-framework): they import in parallel, then wait their turns
    live = []
    for fw in frameworks:
        impls = [i for i in wl.IMPLS if i.framework == fw and mode in i.modes]
        if not impls:
            continue
        if fw in PEERS:
            why = ("peers not run (--no-peers)" if args.no_peers else "peers venv not available"
                   if peer_python is None else None)
            if why is None and not peer_status.get(fw, {}).get("ok"):
                why = f"{fw} not installed in .venv-peers: {peer_status.get(fw, {}).get('error', 'probe failed')}"
            if why:
                rows += stub_rows(wl, fw, mode, why)
                continue
            python = peer_python
        else:
            python = sys.executable
        groups = [[i.name] for i in impls] if not args.one_process_per_framework else [[i.name for i in impls]]
        for group in groups:
            tag = fw if len(groups) == 1 else f"{fw}-{group[0]}"
            w = start_worker(python, tag, name, fw, args, log_dir, impls=group, reference=ref_path)
            w.framework, w.impls = fw, set(group)
            live.append(w)
    probe = start_worker(sys.executable, "probe", None, "numpy", args, log_dir)
    for w in live + [probe]:
        try:
            hello = w.hello(WORKER_TIMEOUT[mode])
        except rounds.WorkerDied as exc:
            say(f"  [{w.tag}] worker failed: {exc}")
            continue
        if w is not probe:
            workers[w.tag] = {"cpus": hello.get("cpus"), "log": os.path.relpath(w.log_path, ROOT)}
            if hello.get("env"):
                envs[w.framework] = hello["env"]
    for w in live:
        if w.dead:
            rows += stub_rows(wl, w.framework, mode, w.dead, impls=w.impls)
    live = [w for w in live if not w.dead]
    extras, probes = {}, {}
    try:
        for case in wl.cases(mode):
            case_rows, case_extras, probes[case["name"]] = run_case(wl, case, live, args, probe, say)
            rows += case_rows
            if case_extras:
                extras[case["name"]] = case_extras
    finally:
        for w in live + [probe]:
            summary = w.close()
            if w is not probe:
                workers.setdefault(w.tag, {}).update(summary)
                if summary.get("idle_wall_s") and summary["idle_cpu_s"] > IDLE_CPU_WARN * summary["idle_wall_s"]:
                    say(f"  [{w.tag}] WARNING: took {summary['idle_cpu_s']:.2f} s of CPU in "
                        f"{summary['idle_wall_s']:.1f} s idle: it slows the implementation timed meanwhile")
        peaks = [x.get("peak_rss_mib") or 0 for x in workers.values()]
        say(f"  {len(peaks)} workers at once, peak memory {sum(peaks) / 1024:.1f} GiB together")
    # machine peak (measured by the NumPy worker of the autoencoder workload)
    for cname, ex in extras.items():
        npx = ex.get("numpy") or {}
        if npx.get("peak_gflops"):
            machine["peak_gflops_numpy"] = npx["peak_gflops"]
            machine["peak_matmul"] = npx.get("peak_matmul")
            machine["peak_threads"] = threads
        best = max(((fw, e["peak_gflops"]) for fw, e in ex.items() if isinstance(e, dict) and e.get("peak_gflops")),
                   key=lambda t: t[1], default=None)
        if best:
            machine["peak_gflops_best"], machine["peak_best_framework"] = best[1], best[0]
    cases = []
    for case in wl.cases(mode):
        c = {k: v for k, v in case.items() if isinstance(v, (str, int, float, bool, list, dict, type(None)))}
        c["rows"] = [r for r in rows if r.get("case") == case["name"]]
        if not c["rows"]:
            continue
        if any(p is not None for p in probes.get(case["name"], [])):
            c["host_probe_s"] = probes[case["name"]]
        fps = {r.get("data_fingerprint") for r in c["rows"] if r.get("data_fingerprint")}
        if len(fps) > 1:
            c.setdefault("notes", []).append(f"WARNING: input data differed between workers ({sorted(fps)})")
        if case["name"] in extras:
            c["framework_extras"] = extras[case["name"]]
            peaks = [f"{fw} {ex['peak_gflops']:.0f}" for fw, ex in extras[case["name"]].items()
                     if isinstance(ex, dict) and ex.get("peak_gflops")]
            if peaks:
                what = next(iter(extras[case["name"]].values())).get("peak_matmul", "matmul")
                c.setdefault("notes", []).append(f"{what} matmul GFLOP/s per framework: {', '.join(peaks)}")
        cases.append(report.annotate_case(c, machine))
    load_after = loadavg()
    busy = busy_warning(load_before, load_after, machine)
    if busy:
        say(busy)
        for c in cases:
            c.setdefault("notes", []).append(busy)
    entry = {"title": getattr(wl, "TITLE", name), "mode": mode, "threads": threads,
             "loadavg_before": load_before, "loadavg_after": load_after,
             "timestamp": _dt.datetime.now().isoformat(timespec="seconds"),
             "framework_env": envs, "workers": workers, "cases": cases}
    if args.frameworks and previous:
        merge_frameworks(entry, previous, args.frameworks, machine)
    say("")
    say(report.workload_markdown(name, entry))
    return entry


def merge_frameworks(entry, old, frameworks, machine):
    """With --frameworks, keep the other frameworks' rows from the previous run."""
    old_cases = {c["name"]: c for c in old.get("cases", [])}
    for c in entry["cases"]:
        prev = old_cases.get(c["name"])
        if not prev:
            continue
        kept = [r for r in prev.get("rows", []) if r.get("framework") not in frameworks]
        if kept:
            c["rows"] = kept + c["rows"]
            c.setdefault("notes", []).append(
                f"rows of {', '.join(sorted({r['framework'] for r in kept}))} from the run of {old.get('timestamp')}")
            report.annotate_case(c, machine)
    for k in ("framework_env", "workers"):
        merged = dict(old.get(k) or {})
        merged.update(entry.get(k) or {})
        entry[k] = merged


def draw_chart(json_path, png_path, peer_python):
    """Bar chart via matplotlib: in the peers venv, or here if importable."""
    candidates = []
    if peer_python:
        candidates.append(peer_python)
    candidates.append(sys.executable)
    for py in candidates:
        p = subprocess.run([py, os.path.join(HERE, "plot.py"), json_path, png_path], capture_output=True,
                           text=True, timeout=300, env=dict(os.environ, MPLBACKEND="Agg"))
        if p.returncode == 0 and os.path.exists(png_path):
            return f"chart written: {os.path.relpath(png_path, ROOT)}"
        last = (p.stderr or p.stdout).strip().splitlines()[-1:] or [""]
        if "No module named 'matplotlib'" not in last[0]:
            return f"chart skipped: {last[0][:200]}"
    return "chart skipped: matplotlib is not available (it comes with the peers venv; run without --no-peers)"


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="short version (a few minutes)")
    g.add_argument("--tiny", action="store_true", help="tiny sizes, for the harness's own tests (seconds)")
    ap.add_argument("--only", action="append", default=[],
                    help=f"workload(s) to run, comma-separated or repeated: {', '.join(workload_names())}")
    ap.add_argument("--frameworks", default="", help="comma-separated subset of " + ",".join(FRAMEWORK_ORDER))
    ap.add_argument("--no-peers", action="store_true", help="do not use PyTorch/JAX/TensorFlow (no .venv-peers)")
    ap.add_argument("--no-install", action="store_true",
                    help="use .venv-peers only if it already exists; never pip install")
    ap.add_argument("--reinstall", action="store_true",
                    help="retry installing the peers venv even if the last attempt failed recently")
    ap.add_argument("--threads", type=int, default=None,
                    help="threads for every framework (default: all CPUs available to this process)")
    ap.add_argument("--omp-passive", action="store_true",
                    help="OMP_WAIT_POLICY=PASSIVE for every worker: OpenMP (PyTorch) threads sleep instead of "
                         "spinning; use it on a machine that other processes share")
    ap.add_argument("--one-process-per-framework", action="store_true",
                    help="run all of a framework's implementations of a workload in one worker (faster start, "
                         "but each row's timing then depends on the rows before it)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="interleaved rounds per case (default: the mode's, fewer where a slow implementation "
                         "would exceed its time budget; a case's own count, as td3_mujoco's chunks, is kept)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="results folder")
    ap.add_argument("--fresh", action="store_true", help="do not merge into the existing latest.json")
    ap.add_argument("--no-chart", action="store_true")
    args = ap.parse_args(argv)
    args.mode = "tiny" if args.tiny else ("quick" if args.quick else "full")
    only = [n.strip() for o in args.only for n in o.split(",") if n.strip()]
    known = workload_names()
    from benchmarks.workloads import ALIASES

    only = [ALIASES.get(n, n) for n in only]
    bad = [n for n in only if n not in known]
    if bad:
        ap.error(f"unknown workload(s) {bad}; known: {', '.join(known)}")
    args.only = list(dict.fromkeys(only))
    args.frameworks = [f for f in args.frameworks.split(",") if f]
    if args.threads is None:
        try:
            args.threads = len(os.sched_getaffinity(0))
        except AttributeError:
            args.threads = os.cpu_count() or 1
    return args


def main(argv=None):
    args = parse_args(argv)
    out_dir = os.path.abspath(args.out)
    log_dir = os.path.join(out_dir, "logs")
    os.makedirs(log_dir, exist_ok=True)
    work = args.only or [n for n in workload_names() if args.mode == "full" or n not in FULL_ONLY]
    skipped = [n for n in workload_names() if n not in work and not args.only]
    t_start = time.time()
    machine = machine_description(args.threads)
    say(f"tapeflow benchmarks: mode {args.mode}, {args.threads} thread(s), workloads: {', '.join(work)}")
    if skipped:
        say(f"(not run in {args.mode} mode: {', '.join(skipped)}; name them with --only to run them)")
    say(f"machine: {machine.get('cpu_model')}, {machine.get('cores')} cores, {machine.get('mem_gib', 0):.0f} GiB")
    machine["loadavg_start"] = loadavg()
    if machine["loadavg_start"] and machine["loadavg_start"][0] > 0.5 * (machine.get("cpus_available") or 1):
        say(f"note: load average {machine['loadavg_start'][0]:.1f} before starting: other processes are running, "
            f"timings will be noisier")

    peer_python, peer_report, peer_status = None, None, {}
    needs_peers = (not args.no_peers) and any(f in PEERS for f in (args.frameworks or FRAMEWORK_ORDER))
    if needs_peers:
        peer_report = peers_env.ensure(install=not args.no_install, say=lambda m: say(m), reinstall=args.reinstall,
                                       log_path=os.path.join(log_dir, "peers-install.log"))
        peer_python = peer_report.get("python")
        peer_status = peer_report.get("frameworks", {})
        if peer_python is None:
            say("peers: no peers venv; PyTorch/JAX/TensorFlow rows will be unavailable")
    else:
        say("peers: not used (--no-peers)")

    json_path = os.path.join(out_dir, "latest.json")
    results = {}
    if not args.fresh and os.path.exists(json_path):
        try:
            with open(json_path) as f:
                results = json.load(f)
        except ValueError:
            results = {}
    results.setdefault("workloads", {})
    # A results file holds one mode's figures: a full run must not carry quick rows (or the
    # reverse) into the README's table, so rows of another mode are dropped, not merged.
    other = sorted(k for k, e in results["workloads"].items() if e.get("mode") != args.mode)
    if other:
        say(f"dropping {', '.join(other)} from {os.path.relpath(json_path, ROOT)}: measured in another mode")
        for k in other:
            del results["workloads"][k]
    old_peak = (results.get("machine") or {}).get("peak_gflops_numpy")
    if old_peak and "autoencoder" not in work:
        for k in ("peak_gflops_numpy", "peak_matmul", "peak_threads", "peak_gflops_best", "peak_best_framework"):
            if k in results["machine"]:
                machine[k] = results["machine"][k]
    tmp = tempfile.mkdtemp(prefix="tapeflow-bench-")
    for name in work:
        entry = run_workload(name, args, peer_python, peer_status, tmp, log_dir, machine,
                             previous=results["workloads"].get(name))
        results["workloads"][name] = entry
        results["machine"] = machine
        results["generated"] = _dt.datetime.now().isoformat(timespec="seconds")
        results["settings"] = {"mode": args.mode, "threads": args.threads, "argv": sys.argv[1:],
                               "thread_env": __import__("benchmarks.common", fromlist=["thread_env"]).thread_env(
                                   args.threads, args.omp_passive),
                               "process_per_impl": not args.one_process_per_framework,
                               "rounds": args.rounds or TIMING[args.mode]["rounds"]}
        if peer_report is not None:
            results["peers"] = peer_report
        # keep workloads in the registry's order
        results["workloads"] = {k: results["workloads"][k] for k in workload_names() if k in results["workloads"]}
        with open(json_path, "w") as f:
            json.dump(results, f, indent=1, default=float)
        with open(os.path.join(out_dir, "README_table.md"), "w") as f:
            f.write(report.full_markdown(results))
    say(f"\nresults: {os.path.relpath(json_path, ROOT)}, {os.path.relpath(os.path.join(out_dir, 'README_table.md'), ROOT)}")
    if os.path.abspath(out_dir) == os.path.abspath(DEFAULT_OUT) and args.mode == "full":
        say(update_readme(report.full_markdown(results)))
    if not args.no_chart:
        say(draw_chart(json_path, os.path.join(out_dir, "latest.png"), peer_python))
    say(f"total {time.time() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
