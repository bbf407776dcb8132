"""The compiled DQN step's breakdown (benchmarks/dqn_breakdown.py, issue 14): it must time
the kernels of the code the step runs after its tier-up, every GEMM named with the layout
its BLAS call gets (a transposed operand is a view passed as a flag, never a copy)."""
from __future__ import annotations

import os
import re
import sys
from collections import Counter

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import dqn_breakdown  # noqa: E402


@pytest.mark.parametrize("style", ["raw", "keras"])
def test_breakdown_times_the_seven_gemms_and_the_fused_loops_of_the_step(style):
    text = dqn_breakdown.breakdown(style, calls=2, batch=32)
    step, alone = text.split("each GEMM alone")
    gemms = Counter(re.findall(r"GEMM (\d+x\d+ @ \d+x\d+ [NT][NT])", step))
    # target and online forward (NN, twice each), then the online backward: g @ W^T (NT)
    # and h^T @ g (TN) per layer, none for the input. The Q heads h @ W3 (4 columns) are
    # row folds in the loop that makes h, and g @ W3^T (a contraction of 4) and h^T @ g
    # (4 columns) run in the relu gradient's loop (matmul's row_dots, outer_sum and
    # col_dots forms): no GEMM call
    assert gemms == Counter({"32x64 @ 64x150 NN": 2, "32x150 @ 150x100 NN": 2, "32x100 @ 100x150 NT": 1,
                             "150x32 @ 32x100 TN": 1, "64x32 @ 32x150 TN": 1}), text
    loops = re.findall(r"fused loop \(\d+ ops\) over (.*)", step)
    assert any("4x100" in lp for lp in loops), text          # W3 (transposed) read in a loop
    # Adam's update of each of the six variables is one fused loop over the variable's shape
    adam = Counter(re.findall(r"fused loop \(1[23] ops\) over (\S+)", text))
    assert adam == Counter(["64x150", "150", "150x100", "100", "100x4", "4"]), text
    assert "all 7 GEMM" in text, text
    assert re.search(r"DQN step, batch 32: \d+ us best", text), text
    assert "outside the kernels" in text, text
    # then each distinct GEMM alone on one thread and on all
    assert Counter(re.findall(r"GEMM (\d+x\d+ @ \d+x\d+ [NT][NT])", alone)) == Counter(set(gemms)), text
