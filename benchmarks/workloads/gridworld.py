"""gridworld: the book's Gridworld DQN end to end (train, then win rate).

PyTorch: benchmarks/gridworld_torch_book.py (the book's listing 3.7, on
tapeflow's Gridworld) in the peers venv; tapeflow: `tapeflow gridworld train
--preset book`. Both print their training wall time and win rate; the table
shows them (one run each: no blocks, no spread). Full mode runs the book's
5000 episodes; quick/tiny mode (only when named with --only) a few.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

from benchmarks.common import Impl

NAME = "gridworld"
TITLE = "Gridworld DQN end to end (book preset)"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = 0
COLUMNS = [["train wall (s)", "wall_s", "{:.1f}"], ["win rate", "win_rate", "{:.3f}"],
           ["episodes", "episodes", "{}"], ["total (s)", "process_s", "{:.1f}"]]


def cases(mode):
    episodes = {"full": None, "quick": 200, "tiny": 20}[mode]
    title = "book preset (5000 episodes)" if episodes is None else f"book preset cut to {episodes} episodes"
    return [{"name": "book", "title": title, "unit": "run", "display": "s", "episodes": episodes,
             "eval_games": None if mode == "full" else 100, "columns": COLUMNS}]


def make_data(case, seed):
    return {}


def _run(cmd, timeout, env=None):
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                       env=dict(os.environ, **(env or {})))
    return p, time.time() - t0


def parse_output(text: str) -> dict:
    """wall time and win rate from a JSON line, else from 'wall ... s' / 'win rate ...' text."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if "win_rate" in d or "wall_s" in d:
                return d
    out = {}
    m = re.findall(r"win[ _-]?rate[^:\n]*:\s*([0-9]*\.?[0-9]+)\s*(%?)", text, flags=re.I)
    if not m:
        m = re.findall(r"win[ _-]?rate\s*[=:]?\s*([0-9]*\.?[0-9]+)\s*(%?)", text, flags=re.I)
    if m:
        v, pct = m[-1]
        out["win_rate"] = float(v) / (100 if pct or float(v) > 1 else 1)
    m = re.findall(r"(?:wall|train(?:ing)?(?: time)?)\D{0,20}?([0-9]*\.?[0-9]+)\s*s\b", text, flags=re.I)
    if m:
        out["wall_s"] = float(m[-1])
    return out


def _result(d, process_s, cmd):
    if "wall_s" not in d:
        raise RuntimeError("no wall time in the output")
    metrics = {k: d[k] for k in ("wall_s", "win_rate", "episodes", "steps", "updates", "final_loss") if k in d}
    metrics["process_s"] = process_s
    return {"timing": {"median": float(d["wall_s"]), "min": float(d["wall_s"]), "max": float(d["wall_s"]),
                       "q1": float(d["wall_s"]), "q3": float(d["wall_s"]), "n": 1},
            "metrics": metrics, "command": " ".join(cmd)}


def _timeout(mode):
    return {"full": 2700, "quick": 600, "tiny": 240}[mode]


def run_torch(case, data, mode):
    threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    cmd = [sys.executable, os.path.join(ROOT, "benchmarks", "gridworld_torch_book.py"), "--seed", str(SEED),
           "--threads", str(threads)]
    if case["episodes"]:
        cmd += ["--episodes", str(case["episodes"])]
    if case["eval_games"]:
        cmd += ["--eval-games", str(case["eval_games"])]
    if not os.path.exists(cmd[1]):
        raise FileNotFoundError("benchmarks/gridworld_torch_book.py is not there yet")
    p, el = _run(cmd, _timeout(mode), {"PYTHONPATH": ROOT})
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or [""]
        raise RuntimeError(f"exit {p.returncode}: {tail[0][:200]}")
    d = parse_output(p.stdout)
    print(f"    PyTorch book run: {d}", flush=True)
    return _result(d, el, cmd)


def run_tapeflow(case, data, mode, flags=()):
    base = [sys.executable, "-c", "import sys; from tapeflow.cli import main; sys.exit(main())",
            "gridworld", "train", "--preset", "book", *flags]
    if case["episodes"]:
        base += ["--episodes", str(case["episodes"])]
    # like the PyTorch script: same seed, no checkpoints or summaries, one JSON line
    extra = ["--seed", str(SEED), "--json", "--no-progress", "--logdir", "", "--ckpt-dir", ""]
    if case["eval_games"]:
        extra += ["--games", str(case["eval_games"])]
    cmd = base + extra
    p, el = _run(cmd, _timeout(mode))
    if p.returncode == 2 and ("unrecognized arguments" in p.stderr or "invalid choice" in p.stderr):
        cmd = base  # an older/newer CLI without those options: the plain command
        p, el = _run(cmd, _timeout(mode))
    return _tapeflow_result(p, el, cmd, "book")


def _tapeflow_result(p, el, cmd, what):
    """Check a finished `tapeflow gridworld train` process and parse its report."""
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or [""]
        raise RuntimeError(f"`tapeflow {' '.join(cmd[3:6])}` ({what}) exit {p.returncode}: {tail[0][:200]}")
    d = parse_output(p.stdout + "\n" + p.stderr)
    print(f"    tapeflow {what} run: {d}", flush=True)
    return _result(d, el, ["tapeflow", *cmd[3:]])


def _selftest():  # pragma: no cover - a quick manual check of the parser
    t = "test win rate over 1000 random games: 89.1%\ntraining wall time: 87.8 s (1 env steps, 5,000 episodes)"
    return parse_output(t)


def run_tapeflow_eager(case, data, mode):
    return run_tapeflow(case, data, mode, flags=("--eager",))


def run_tapeflow_default(case, data, mode):
    """`make run`'s agent (the default preset: vectorized boards, Double DQN, Huber), for reference:
    a different algorithm from the book's, so its row is not a like-for-like comparison."""
    cmd = [sys.executable, "-c", "import sys; from tapeflow.cli import main; sys.exit(main())",
           "gridworld", "train", "--seed", str(SEED), "--json", "--no-progress", "--logdir", "", "--ckpt-dir", ""]
    if case["episodes"]:
        cmd += ["--steps", str(case["episodes"] * 8)]
    if case["eval_games"]:
        cmd += ["--games", str(case["eval_games"])]
    p, el = _run(cmd, _timeout(mode))
    return _tapeflow_result(p, el, cmd, "default-preset")


IMPLS = [
    Impl("tapeflow", "tapeflow", "tapeflow gridworld train --preset book", None, runner=run_tapeflow),
    Impl("tapeflow_eager", "tapeflow", "tapeflow gridworld train --preset book --eager", None,
         runner=run_tapeflow_eager),
    Impl("tapeflow_default", "tapeflow", "tapeflow gridworld train (default preset, `make run`)", None,
         runner=run_tapeflow_default),
    Impl("torch", "torch", "PyTorch (book listing 3.7)", None, runner=run_torch),
]
