"""The autoencoder's time breakdown helper (benchmarks/workloads/autoencoder.py, issue 14's
note): it must time the graph tapeflow's compiled step runs, with each GEMM named by the
operand layout the BLAS call gets (a transposed operand is a view passed as a flag)."""
from __future__ import annotations

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.workloads import autoencoder  # noqa: E402


def test_breakdown_names_the_five_gemms_of_the_step_with_their_layouts():
    text = autoencoder.breakdown("tapeflow", reps=1, batch=48)
    gemms = re.findall(r"GEMM (\d+x\d+ @ \d+x\d+ [NT][NT])", text)
    # forward x@W0, h@W2; backward g2@W2^T (NT), h^T@g2 and x^T@g1 (TN): no copies of a transpose
    assert gemms == ["48x784 @ 784x200 NN", "48x200 @ 200x784 NN", "48x784 @ 784x200 NT",
                     "200x48 @ 48x784 TN", "784x48 @ 48x200 TN"], text
    assert re.search(r"compiled step [\d.]+ ms", text) and "the rest of the step" in text, text
    assert "side by side, 1 BLAS thread each" in text and "as tapeflow runs them" in text, text


def test_spread_times_each_step_and_counts_its_page_faults():
    text = autoencoder.spread("tapeflow", steps=4, batch=48)
    m = re.search(r"4 compiled steps, batch 48: min ([\d.]+) ms, median ([\d.]+) .*faults per step: median \d+", text)
    assert m and float(m.group(1)) <= float(m.group(2)), text
    assert len(re.search(r"steps \(ms\): (.*)", text).group(1).split()) == 4, text
