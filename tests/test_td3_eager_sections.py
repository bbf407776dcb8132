"""benchmarks/td3_eager_sections.py (issue 14's accounting of the eager TD3 iteration):
its eager and compiled parts must compute the same thing (the benchmark's critic
target and gradients, the optimizer and soft updates on their own variables), each
part is timed once per round in both modes, the GEMM timers see the GEMMs of the parts
that have them and none of the others, and they are removed afterwards."""
from __future__ import annotations

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import td3_eager_sections as sec  # noqa: E402
from tapeflow.util import threads  # noqa: E402


def test_import_leaves_the_environment_alone():
    # TAPEFLOW_FUSE_AFTER is read at every compile: set at import, it changed the tier-up of
    # every later test in the process (the command line sets it, as the harness does)
    import importlib
    saved = os.environ.pop("TAPEFLOW_FUSE_AFTER", None)
    try:
        importlib.reload(sec)
        assert "TAPEFLOW_FUSE_AFTER" not in os.environ
    finally:
        os.environ.pop("TAPEFLOW_FUSE_AFTER", None)
        if saved is not None:
            os.environ["TAPEFLOW_FUSE_AFTER"] = saved


def test_sections_time_every_part_and_their_gemms():
    routes = {name: getattr(threads, name) for name in ("_gemm", "_skinny", "_outer")}
    # 256-256: its GEMMs reach util/threads' routes (the tiny case's stay below FLOOR_MACS)
    times, gemm_s, parts = sec.measure("256-256", rounds=3, warmup=2, gemms=True)
    assert {name: getattr(threads, name) for name in routes} == routes  # the timers are gone
    assert list(parts["eager"]) == ["target", "grad", "adam", "soft"]
    for mode in ("eager", "compiled"):
        for part in parts[mode]:
            assert len(times[(mode, part)]) == 3
        # the forward passes and the backward hold GEMMs; the optimizer and soft updates none
        assert gemm_s[(mode, "target")] > 0 and gemm_s[(mode, "grad")] > 0
        assert gemm_s[(mode, "adam")] == 0 and gemm_s[(mode, "soft")] == 0


def test_eager_and_compiled_parts_agree():
    _, _, parts = sec.measure("32-32", rounds=1, warmup=0)
    (fe, ae), (fc, ac) = parts["eager"]["target"], parts["compiled"]["target"]
    np.testing.assert_allclose(fe(*ae).numpy(), fc(*ac).numpy(), rtol=1e-5, atol=1e-6)
    (fe, ae), (fc, ac) = parts["eager"]["grad"], parts["compiled"]["grad"]
    for ge, gc in zip(fe(*ae), fc(*ac)):
        np.testing.assert_allclose(ge.numpy(), gc.numpy(), rtol=1e-4, atol=1e-6)
