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

from benchmarks import agreement, peers_env, report  # noqa: E402
from benchmarks.common import TIMING, Bench, compare, measure  # noqa: E402
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

    t = measure(Bench(step=step, units=10), "tiny")
    assert t["n"] == TIMING["tiny"]["blocks"] and t["median"] > 0 and t["min"] <= t["median"] <= t["max"]


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
