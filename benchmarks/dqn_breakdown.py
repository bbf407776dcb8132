"""Where a compiled DQN train step's time goes (issue 14's compiled DQN bar).

The dqn workload's compiled step (raw ops + hand Adam, or Keras Dense/MSE/Adam) through
benchmarks/kernel_breakdown.py: every kernel timed inside the step, the sums per kind,
each GEMM alone on one and all BLAS threads, and the GEMM floor.

    PYTHONPATH=$PWD python benchmarks/dqn_breakdown.py --style keras
"""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import kernel_breakdown as kb  # noqa: E402


def breakdown(style="keras", calls=200, batch=200, threads=0):
    """The text of the breakdown of ``calls`` steps; ``threads``: the intra-op count to
    set (0: tapeflow's own per-GEMM choice)."""
    title, step = kb.dqn_step(style, batch)
    return kb.breakdown(title, step, 1, calls, threads)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="where a compiled DQN train step's time goes")
    ap.add_argument("--style", default="keras", choices=["keras", "raw"])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads (0: tapeflow's choice)")
    a = ap.parse_args()
    print(breakdown(a.style, a.calls, a.batch, a.threads))
