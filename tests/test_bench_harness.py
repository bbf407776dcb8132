"""Tests of the benchmark harness (benchmarks/).

* a smoke test: benchmarks/run.py on tiny workloads with tapeflow's venv only
  (--no-peers: CI never installs PyTorch/JAX/TensorFlow), checking that the
  Markdown table and the JSON file are produced;
* numerical agreement of every implementation with the float64 NumPy
  reference on tiny sizes: the NumPy and tapeflow rows always (an exception
  fails like a wrong answer), the PyTorch/JAX/TensorFlow rows only where that
  framework is importable here or the peers venv exists (then they run there,
  through benchmarks/agreement.py); they skip only without a peers venv.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import agreement, peers_env, report, rounds  # noqa: E402
from benchmarks.common import TIMING, Bench, compare, plan_rounds, time_block, warm_up  # noqa: E402
from benchmarks.workloads import get_workload  # noqa: E402

AGREEMENT_WORKLOADS = ["dispatch", "linreg", "dqn", "td3", "autoencoder", "lbfgs", "convnet"]
PEER_MODULES = {"torch": "torch", "jax": "jax", "tensorflow": "tensorflow"}


def test_harness_smoke_no_peers(tmp_path):
    out = tmp_path / "results"
    out.mkdir()
    # figures of another mode in the results file are dropped, not merged into this run's table
    (out / "latest.json").write_text(json.dumps({"workloads": {"autoencoder": {"mode": "quick", "cases": []}}}))
    cmd = [sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--tiny", "--no-peers",
           "--only", "dispatch,linreg", "--out", str(out), "--no-chart"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "| NumPy |" in p.stdout
    res = json.loads((out / "latest.json").read_text())
    assert set(res["workloads"]) == {"dispatch", "linreg"}
    assert "dropping autoencoder" in p.stdout
    assert res["machine"]["cores"] >= 1
    assert res["settings"]["mode"] == "tiny"
    for name in ("dispatch", "linreg"):
        (case,) = res["workloads"][name]["cases"]
        rows = {r["impl"]: r for r in case["rows"]}
        np_row = rows["numpy"]
        assert np_row["status"] == "ok", np_row
        assert np_row["timing"]["median"] > 0
        assert np_row["check"]["ok"], np_row["check"]
        assert np_row["vs_numpy"] == pytest.approx(1.0)
        # peers were not run: reported, not missing
        peer_rows = [r for r in case["rows"] if r["framework"] in ("torch", "jax", "tensorflow")]
        assert peer_rows and all(r["status"] == "unavailable" for r in peer_rows)
        # every tapeflow row is there and ran
        tf_rows = [r for r in case["rows"] if r["framework"] == "tapeflow"]
        assert tf_rows
        for r in tf_rows:
            assert r["status"] == "ok", r
    md = (out / "README_table.md").read_text()
    assert "### dispatch / chain100" in md and "### linreg / gd" in md
    assert "µs/op (median)" in md and "unavailable: peers not run" in md
    assert (out / "logs").is_dir()


def test_only_rejects_unknown_workload(tmp_path):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--only", "nope",
                        "--no-peers", "--out", str(tmp_path)], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert p.returncode != 0 and "unknown workload" in p.stderr


def test_compare_and_measure():
    ref = {"a": np.array([1.0, -2.0, 4.0]), "b": np.array(3.0)}
    c = compare({"a": np.array([1.0, -2.0, 4.001], np.float32), "b": 3.0}, ref, 1e-3)
    assert c["ok"] and c["max_abs"] == pytest.approx(1e-3, rel=1e-3)
    assert c["max_rel"] == pytest.approx(2.5e-4, rel=1e-2)
    bad = compare({"a": np.array([1.0, -2.0, 5.0])}, ref, 1e-3)
    assert not bad["ok"] and bad["missing"] == ["b"]
    n = {"calls": 0}

    def step():
        n["calls"] += 1
        return n["calls"]

    bench = Bench(step=step, units=10)
    w = warm_up(bench, TIMING["tiny"])
    assert n["calls"] >= 1 + TIMING["tiny"]["warmup_calls"] and w["per_call_s"] > 0 and w["first_call_s"] > 0
    before = n["calls"]
    b = time_block(bench, 7)
    assert n["calls"] == before + 7 and b["s"] > 0 and b["cpu_s"] >= 0
    # a bench of fixed blocks (chunks of a run) is never called outside its timed blocks
    fixed = Bench(step=step, calls=1)
    assert warm_up(fixed, TIMING["tiny"]) == {"first_call_s": None, "per_call_s": None}
    assert n["calls"] == before + 7


def test_plan_rounds_fits_the_budget():
    cfg = dict(rounds=9, min_rounds=3, block_s=0.04, budget_s=8.0)
    n, calls = plan_rounds({"fast": 1e-5, "mid": 0.01}, cfg)
    assert n == 9 and calls == {"fast": 4000, "mid": 4}
    # a slow implementation gets fewer calls per block first, then everyone fewer rounds
    n, calls = plan_rounds({"fast": 1e-5, "slow": 2.0}, cfg)
    assert calls == {"fast": 4000, "slow": 1} and n == 4
    n, _ = plan_rounds({"slow": 100.0}, cfg)
    assert n == cfg["min_rounds"]
    # a case's own round count is kept
    n, calls = plan_rounds({"slow": 2.0}, cfg, rounds=10)
    assert n == 10 and calls == {"slow": 1}


def test_rotation_order():
    orders = [rounds.rotation(2, r) for r in range(4)]
    assert orders == [[0, 1], [1, 0], [1, 0], [0, 1]]  # AB BA BA AB
    orders = [rounds.rotation(3, r) for r in range(6)]
    assert orders[:2] == [[0, 1, 2], [2, 1, 0]]
    for pos in range(3):  # everyone runs in every position
        assert {o[pos] for o in orders} == {0, 1, 2}
    for a in range(3):  # and right after every other
        assert {o[i] for o in orders for i in range(1, 3) if o[i - 1] == a} == {0, 1, 2} - {a}
    assert rounds.rotation(1, 5) == [0] and rounds.rotation(0, 1) == []


def test_report_ratios_and_table():
    def row(impl, fw, med, status="ok"):
        r = {"impl": impl, "framework": fw, "label": impl, "status": status}
        if status == "ok":
            r["timing"] = {"median": med, "min": med * 0.9, "max": med * 1.1, "n": 5}
        else:
            r["error"] = "AttributeError: no"
        return r

    case = {"name": "c", "title": "t", "unit": "step", "display": "us", "flops_per_unit": 2e3,
            "columns": [["GFLOP/s", "gflops", "{:.1f}"]],
            "rows": [row("numpy", "numpy", 10e-6), row("torch", "torch", 20e-6), row("jax", "jax", 5e-6),
                     row("tf", "tapeflow", 0, "unavailable")]}
    report.annotate_case(case, {"peak_gflops_numpy": 100.0})
    rows = {r["impl"]: r for r in case["rows"]}
    assert case["fastest_peer"]["impl"] == "jax"
    assert rows["torch"]["vs_fastest_peer"] == pytest.approx(4.0)
    assert rows["torch"]["vs_numpy"] == pytest.approx(2.0)
    assert rows["numpy"]["metrics"]["gflops"] == pytest.approx(0.2)
    md = report.case_table(case)
    assert "| numpy | numpy | 10.0 | 9.00 – 11.0 | 2.00× | 1.00× | 0.2 |" in md
    assert "unavailable: AttributeError: no" in md


def test_ratios_are_medians_of_per_round_ratios():
    def row(impl, fw, per_round, series="s1"):
        t = rounds.round_timing({"s": per_round, "cpu_s": per_round, "calls": 2}, series)
        return {"impl": impl, "framework": fw, "label": impl, "status": "ok", "timing": t}

    # the host slows down in rounds 2 and 3 for everyone: the per-round ratios see through it
    case = {"name": "c", "rows": [row("numpy", "numpy", [1.0, 3.0, 3.0, 1.0, None]),
                                  row("tf", "tapeflow", [0.5, 1.5, 1.5, 0.5, 0.6]),
                                  row("jax", "jax", [2.0, 6.0, 6.0, 2.0, 2.0]),
                                  row("old", "torch", [2.5, 2.5, 2.5, 2.5, 2.5], series="another run")],
            "ratio_of_sums": True}
    report.annotate_case(case)
    rows = {r["impl"]: r for r in case["rows"]}
    assert rows["numpy"]["timing"]["median"] == 2.0 and rows["numpy"]["timing"]["blocks"] == 4
    assert case["fastest_peer"]["impl"] == "jax"
    tf = rows["tf"]
    assert tf["vs_fastest_peer"] == pytest.approx(0.25) and tf["vs_fastest_peer_rounds"] == pytest.approx([0.25, 0.3])
    assert tf["vs_numpy"] == pytest.approx(0.5) and tf["vs_numpy_rounds"] == pytest.approx([0.5, 0.5])
    # a row from another series (run) is compared by its median alone, and gets no range
    assert rows["old"]["vs_fastest_peer"] == pytest.approx(2.5 / 2.0) and rows["old"]["vs_fastest_peer_rounds"] is None
    # ratio of the totals: every timed block, 2 calls each
    assert tf["metrics"]["total_s"] == pytest.approx(2 * 4.6)
    assert tf["metrics"]["ratio_of_sums"] == pytest.approx(4.6 / 18.0)
    md = report.case_table(dict(case, columns=[]))
    assert "| 0.25× (0.25–0.3) | 0.50× |" in md



def test_quiet_rounds_view():
    def row(impl, fw, per_round):
        t = rounds.round_timing({"s": per_round, "cpu_s": per_round, "calls": 1}, "s1")
        return {"impl": impl, "framework": fw, "label": impl, "status": "ok", "timing": t}

    # rounds 2, 4 and 6 ran in slow host phases (probe 1.16-1.6x the least): the peer's time moved there
    case = {"name": "c", "host_probe_s": [400e-6, 640e-6, 420e-6, 650e-6, 455e-6, 465e-6],
            "rows": [row("tf", "tapeflow", [1.0] * 6),
                     row("pt", "torch", [2.0, 1.25, 2.0, 1.25, 2.0, 1.25])]}
    report.annotate_case(case)
    assert case["quiet_rounds"] == [0, 2, 4]  # 465 us is past 1.15 x 400
    tf = next(r for r in case["rows"] if r["impl"] == "tf")
    assert tf["vs_fastest_peer"] == pytest.approx(0.65)  # median of 0.5, 0.8, 0.5, 0.8, 0.5, 0.8
    assert tf["vs_fastest_peer_quiet"] == pytest.approx(0.5)  # rounds 1, 3 and 5 alone
    md = report.workload_markdown("w", {"cases": [case], "mode": "quick", "threads": 2})
    assert "the 3 quiet rounds (host probe within 1.15× its least: rounds 1, 3, 5) give × fastest peer tf 0.50×" in md
    # no view when it would say nothing new: all rounds quiet, or fewer than 3 quiet ones
    assert report.quiet_rounds({"host_probe_s": [400e-6, 410e-6, 420e-6]}) is None
    assert report.quiet_rounds({"host_probe_s": [400e-6, 700e-6, 420e-6, 800e-6]}) is None
    assert report.quiet_rounds({"host_probe_s": [None, None]}) is None

# --- workers and rounds, with fake workers ---------------------------------------------
# A worker speaking worker.py's protocol: each request's reply from a plan in its argv:
# {"s": seconds per round, "crash_at": round it exits in, "hang_at": round it never answers,
#  "spin": spin a thread while idle, "fail_at": round whose block raises}.
FAKE_WORKER = r"""
import json, os, sys, threading, time
plan = json.loads(sys.argv[1])
out = os.fdopen(int(sys.argv[sys.argv.index("--reply-fd") + 1]), "w", buffering=1)
if plan.get("spin"):
    threading.Thread(target=lambda: [None for _ in iter(int, 1)], daemon=True).start()
out.write(json.dumps({"pid": os.getpid(), "env": {}}) + "\n")
r = 0
for line in sys.stdin:
    req = json.loads(line)
    if req["cmd"] == "quit":
        break
    if req["cmd"] == "time":
        if r == plan.get("crash_at"):
            print("fake worker: crashing now", flush=True)
            os._exit(3)
        if r == plan.get("hang_at"):
            time.sleep(3600)
        rep = {"error": "ValueError: bad"} if r == plan.get("fail_at") else {"s": plan["s"][r], "cpu_s": 0.0}
        r += 1
    elif req["cmd"] == "case":
        rep = {"rows": [{"impl": i, "framework": plan["fw"], "label": i, "case": req["case"], "status": "ok",
                         "per_call_s": 1e-3, "first_call_s": 0.1, "units_per_call": 1.0} for i in plan["impls"]]}
    elif req["cmd"] == "end":
        rep = {"metrics": {i: {"finished": 1} for i in plan["impls"]}, "extras": {"peak": 1} if req["extras"] else None}
    else:
        rep = {"s": 1e-4}
    out.write(json.dumps(rep) + "\n")
    t_end = time.perf_counter() + plan.get("spin_after", 0.0)
    while time.perf_counter() < t_end:   # as a BLAS pool's threads spin after a block
        pass
    # spin_cpu_after: spin until that much CPU time is used (at most 0.45 s of wall time, under
    # settle's 0.5): a busy machine gives a wall-time spinner too little CPU to measure
    c_end, w_end = time.process_time() + plan.get("spin_cpu_after", 0.0), time.perf_counter() + 0.45
    while time.process_time() < c_end and time.perf_counter() < w_end:
        pass
"""


def _fake(tmp_path, tag, **plan):
    return rounds.Worker(tag, [sys.executable, "-c", FAKE_WORKER, json.dumps(plan)], dict(os.environ), str(tmp_path),
                         str(tmp_path / f"{tag}.log"))


def test_rounds_with_fake_workers(tmp_path):
    ws = {"a": _fake(tmp_path, "a", s=[1, 2, 3, 4]), "b": _fake(tmp_path, "b", s=[5, 6, 7, 8]),
          "crash": _fake(tmp_path, "crash", s=[9, 9, 9, 9], crash_at=1),
          "hang": _fake(tmp_path, "hang", s=[9, 9, 9, 9], hang_at=2),
          "fail": _fake(tmp_path, "fail", s=[9, 9, 9, 9], fail_at=0)}
    probe = _fake(tmp_path, "probe")
    for w in [*ws.values(), probe]:
        assert "pid" in w.hello(30)
    slots = [{"worker": w, "impl": k, "calls": 1, "timeout": 5.0} for k, w in ws.items()]
    probes = rounds.run_rounds(slots, 4, probe, say=lambda m: None)
    assert probes == [1e-4] * 4
    got = {sl["impl"]: sl for sl in slots}
    assert got["a"]["s"] == [1, 2, 3, 4] and got["b"]["s"] == [5, 6, 7, 8] and "error" not in got["a"]
    # a crash and a timeout end that worker's rounds, with the reason; the others go on
    assert got["crash"]["s"] == [9, None, None, None]
    assert "exited with code 3" in got["crash"]["error"] and "fake worker: crashing now" in got["crash"]["error"]
    assert got["hang"]["s"] == [9, 9, None, None] and "timed out after 5 s" in got["hang"]["error"]
    assert got["fail"]["s"] == [None] * 4 and got["fail"]["error"] == "ValueError: bad"
    t = rounds.round_timing(got["hang"], "x")
    assert t["blocks"] == 2 and t["rounds"] == [9, 9, None, None]
    for w in [*ws.values(), probe]:
        w.close()
    assert ws["hang"].proc.returncode is not None  # killed, not left behind


def test_idle_workers_take_no_cpu(tmp_path):
    """An idle worker blocks on its stdin: no CPU time while the others are timed. The
    measurement must see one that does not (a framework's threads spinning after a block)."""
    quiet, spinning = _fake(tmp_path, "quiet", s=[0, 0]), _fake(tmp_path, "spinning", s=[0, 0], spin=True)
    for w in (quiet, spinning):
        w.hello(30)
        w.request({"cmd": "time", "impl": "x", "calls": 1}, 30)
    import time
    time.sleep(1.0)
    for w in (quiet, spinning):
        w.request({"cmd": "time", "impl": "x", "calls": 1}, 30)
    q, s = quiet.close(), spinning.close()
    assert q["idle_wall_s"] >= 1.0 and s["idle_wall_s"] >= 1.0
    # (a busy host gives the spinning thread a share of a CPU only: a low bar for it)
    assert q["idle_cpu_s"] <= 0.03, q
    # (0.06 s of a spinning second under a load average of 5-6; the claim is that it is counted)
    assert s["idle_cpu_s"] > 0.03, s


def test_cpu_while_settling_is_not_idle_cpu(tmp_path):
    """A worker that spins for a while after each reply (OpenBLAS's threads) takes that CPU
    while ``settle`` waits for it, when no other block runs: it goes to settle_cpu_s, not
    to the idle CPU that the harness warns about."""
    import time
    # (spins for 0.15 s of CPU time, within 0.45 s of wall time: a wall-time spinner of 0.3 s got
    # only 0.07 s of CPU with six processes on the two cores; 0.2 s got 0.09 s under the suite's
    # two xdist workers alone)
    w = _fake(tmp_path, "spin_after", s=[0, 0], spin_cpu_after=0.15)
    w.hello(30)
    w.request({"cmd": "time", "impl": "x", "calls": 1}, 30)
    assert 0.1 <= w.settle() < rounds.SETTLE_MAX_S   # (its spin began at the reply, before settle)
    time.sleep(0.5)
    w.request({"cmd": "time", "impl": "x", "calls": 1}, 30)
    s = w.close()
    # the claim is where that CPU is counted, not how much the host lets the spinner have: with a
    # load average of 9 on the two cores it got 0.08 s of the 0.45 s window (a 0.1 bar failed CI
    # runs beside other jobs), so the bar is the idle bar's 0.03, which no spin-free settle reaches
    assert s["settle_cpu_s"] > 0.03, s
    assert s["idle_cpu_s"] <= 0.03 and s["idle_wall_s"] >= 0.5, s


def test_settle_waits_for_a_quiet_worker(tmp_path):
    quiet, spinning = _fake(tmp_path, "quiet", s=[0]), _fake(tmp_path, "spinning", s=[0], spin=True)
    for w in (quiet, spinning):
        w.hello(30)
    try:
        assert quiet.settle() < rounds.SETTLE_MAX_S
        assert spinning.settle() >= rounds.SETTLE_MAX_S
    finally:
        quiet.close()
        spinning.close()


def test_run_case_gives_stub_rows_for_failed_workers(tmp_path):
    """run.py's case: builds in turn, rounds, end; a worker that crashes in the rounds or
    dies before its turn leaves stub rows with the reason, the others are timed."""
    import types

    from benchmarks import run
    from benchmarks.common import Impl

    wl = types.SimpleNamespace(cases=lambda mode: [{"name": "c"}],
                               IMPLS=[Impl(n, fw, n.upper(), None) for n, fw in
                                      (("np", "numpy"), ("pt", "torch"), ("bad", "jax"), ("gone", "tensorflow"))])
    live = []
    for name, fw, plan in (("np", "numpy", {}), ("pt", "torch", {}), ("bad", "jax", {"crash_at": 1}),
                           ("gone", "tensorflow", {"crash_at": 0})):
        w = _fake(tmp_path, name, s=[1e-3 * (i + 1) for i in range(9)], fw=fw, impls=[name], **plan)
        w.framework, w.impls = fw, {name}
        w.hello(30)
        live.append(w)
    live[3].proc.kill()  # dies before its turn to build
    live[3].proc.wait()
    probe = _fake(tmp_path, "probe")
    probe.hello(30)
    args = types.SimpleNamespace(mode="tiny", threads=1)
    try:
        rows, extras, probes = run.run_case(wl, {"name": "c"}, live, args, probe, say=lambda m: None)
    finally:
        for w in live + [probe]:
            w.close()
    by = {r["impl"]: r for r in rows}
    n = TIMING["tiny"]["rounds"]
    assert len(probes) == n
    for ok in ("np", "pt"):
        assert by[ok]["status"] == "ok" and by[ok]["timing"]["blocks"] == n
        assert by[ok]["timing"]["rounds"] == pytest.approx([1e-3 * (i + 1) for i in range(n)])
        assert by[ok]["timing"]["calls_per_block"] == 2  # 2 ms blocks of 1 ms calls
        assert by[ok]["metrics"] == {"finished": 1}
    assert by["bad"]["status"] == "unavailable" and "exited with code 3" in by["bad"]["error"]
    assert f"(after 1 of {n} rounds)" in by["bad"]["error"] and by["bad"]["partial_timing"]["blocks"] == 1
    assert by["gone"]["status"] == "unavailable" and "exited" in by["gone"]["error"]
    assert set(extras) == {"numpy", "torch"}


# --- numerical agreement ------------------------------------------------------------
def _impl_params():
    out = []
    for name in AGREEMENT_WORKLOADS:
        wl = get_workload(name)
        for impl in wl.IMPLS:
            if "tiny" in impl.modes and impl.runner is None:
                out.append(pytest.param(name, impl.name, impl.framework, id=f"{name}-{impl.name}"))
    return out


_PEER_RESULTS = {}


def _peer_results(fw):
    """Agreement results of every ``fw`` implementation, computed once in the peers venv."""
    if fw not in _PEER_RESULTS:
        py = peers_env.venv_python()
        # (the stamp is written when an install completed: a venv being created is absent)
        if not os.path.exists(os.path.join(peers_env.VENV, peers_env.STAMP_NAME)):
            _PEER_RESULTS[fw] = None
        else:
            p = subprocess.run([py, os.path.join(ROOT, "benchmarks", "agreement.py"), fw, *AGREEMENT_WORKLOADS],
                               capture_output=True, text=True, timeout=600, cwd=ROOT,
                               env=dict(os.environ, JAX_PLATFORMS="cpu"))
            assert p.returncode == 0, p.stderr[-3000:]
            _PEER_RESULTS[fw] = json.loads(p.stdout.strip().splitlines()[-1])
    return _PEER_RESULTS[fw]


@pytest.mark.parametrize("workload,impl_name,fw", _impl_params())
def test_numerical_agreement(workload, impl_name, fw):
    if fw in PEER_MODULES and importlib.util.find_spec(PEER_MODULES[fw]) is None:
        results = _peer_results(fw)
        if results is None:
            pytest.skip(f"{fw} lives in the peers venv, and {peers_env.VENV} is not installed (make bench does it)")
        cases = results[f"{workload}/{impl_name}"]
        assert "error" not in cases, cases
    else:
        cases = agreement.check(workload, impl_name)   # any exception fails (tapeflow rows included)
    assert cases
    for c in cases:
        assert c["ok"], f"{impl_name} disagrees with the NumPy reference on {workload}/{c['case']}: {c['bad']}"


def test_update_readme_replaces_only_the_marked_section(tmp_path):
    from benchmarks.run import BEGIN, END, update_readme
    p = tmp_path / "README.md"
    p.write_text(f"intro\n{BEGIN}\nold table\n{END}\noutro\n")
    msg = update_readme("## Benchmarks: x\n\n| a |\n|---|\n", str(p))
    text = p.read_text()
    assert "updated" in msg and "old table" not in text
    assert text.startswith("intro\n") and text.endswith("outro\n") and "### Benchmarks: x" in text
    p.write_text("no markers here\n")
    assert "not updated" in update_readme("| a |", str(p))


class _CountingAgent:
    """Stands in for a TD3 agent in tapeflow.rl.trainer.train: counts its learning steps."""

    def __init__(self, action_dim, fail_at=None):
        self.action_dim, self.fail_at, self.trained = action_dim, fail_at, 0
        self.rng = np.random.default_rng(0)

    def select_action(self, state):
        return np.zeros(self.action_dim, np.float32)

    def train(self, replay_buffer):
        if self.trained == self.fail_at:
            raise ValueError("update failed")
        self.trained += 1
        return 0.0, 0.0


def test_td3_mujoco_chunks_advance_the_run_a_chunk_at_a_time():
    pytest.importorskip("gymnasium")
    from benchmarks.workloads import td3_mujoco

    case = td3_mujoco.cases("tiny")[0]
    agents = []

    def make(state_dim, action_dim, max_action, fail_at=None):
        agents.append(_CountingAgent(action_dim, fail_at))
        return agents[-1]

    run = td3_mujoco.ChunkedRun(case, make)
    run.start()  # the random start phase: no learning step yet
    assert agents[0].trained == 0
    for i in range(case["rounds"]):
        run.step()
        assert agents[0].trained == (i + 1) * case["chunk"]  # paused before the next one
    with pytest.raises(RuntimeError, match="has ended"):
        run.step()
    assert run.metrics()["timed_steps"] == case["rounds"] * case["chunk"]
    # a failure inside the training thread surfaces in the chunk that met it
    failing = td3_mujoco.ChunkedRun(case, lambda s, a, m: make(s, a, m, fail_at=case["chunk"] + 3))
    failing.start()
    failing.step()
    with pytest.raises(RuntimeError, match="the training run failed: ValueError: update failed"):
        failing.step()
