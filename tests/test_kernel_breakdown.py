"""benchmarks/kernel_breakdown.py (issue 14's kernel profiles) on the td3 workload's cycle:
both compiled functions' kernels are timed, each call site once per cycle, and the GEMM
floor sums every GEMM of the cycle at its alone speed."""
from __future__ import annotations

import os
import re
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import kernel_breakdown as kb  # noqa: E402


def test_td3_cycle_times_every_kernel_of_both_functions(monkeypatch):
    cfs = []
    hot = kb.hot_functions
    monkeypatch.setattr(kb, "hot_functions", lambda step, expect: cfs.extend(hot(step, expect)) or cfs)
    title, step = kb.td3_cycle("32-32")
    text = kb.breakdown(title, step, 2, calls=2)
    head, alone = text.split("each GEMM alone")
    # the kernels the two generated functions call: one timed row per call site
    assert len(cfs) == 2, text
    sites = 0
    for cf in cfs:
        fn = cf.compiled
        lines = fn.__tapeflow_source__.splitlines()
        sites += sum(1 for ln in fn.__tapeflow_eqn_at__ if "(" in lines[ln - 1] and " = " in lines[ln - 1])
    rows = re.findall(r"^\s+[\d.]+\s+[\d.]+\s+(?!all )(\S.*)$", head, re.M)
    assert len(rows) == sites, text
    m = re.search(r"; (\d+) kernel calls per step", head)
    assert m and int(m.group(1)) == sites, text
    gemms = Counter(re.findall(r"GEMM (\d+x\d+ @ \d+x\d+ [NT][NT])", head))
    # a critic iteration and a critic + actor iteration: the critics' three layers forward,
    # twice (target and online), and their gradients; the actor's on top
    assert sum(gemms.values()) >= 30, text
    assert f"all {sum(gemms.values())} GEMM" in head, text
    assert Counter(re.findall(r"GEMM (\d+x\d+ @ \d+x\d+ [NT][NT])", alone)) == Counter(set(gemms)), text
    floor = re.search(r"GEMM floor: (\d+) us per step \((\d+) GEMMs", alone)
    assert floor and int(floor.group(2)) == sum(gemms.values()), text
    # each GEMM at its alone minimum (one thread or all), times its count in the cycle
    best = {lab: min(float(t1), float(tn))
            for t1, tn, lab in re.findall(r"^\s+([\d.]+)\s+([\d.]+)\s+GEMM (.*)$", alone, re.M)}
    want = sum(best[lab] * n for lab, n in gemms.items())
    assert abs(int(floor.group(1)) - want) <= 1 + 0.05 * sum(gemms.values()), text
