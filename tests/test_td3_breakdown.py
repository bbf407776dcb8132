"""benchmarks/td3_breakdown.py (issue 12's per-step table): its timers must see every part
of every learning step of the real loop -- one action, env step, replay add, sample and
update per step, the compiled code split into critic-only and policy-update iterations --
and none of the random start phase or the evaluation before it."""
from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

pytest.importorskip("gymnasium")
from benchmarks import td3_breakdown as bd  # noqa: E402


@pytest.mark.parametrize("framework, faults", [("compiled", True), ("eager", False)])
def test_breakdown_times_each_learning_step_once(framework, faults):
    steps = 9
    res, parts = bd.run(framework, steps, start=30, threads=1, env="Pendulum-v1", faults=faults)
    # page faults are counted only when asked (getrusage's cost would land in "loop rest")
    assert ("select_action" in parts.flt) == faults
    assert res.learn_steps == steps
    for name in ("select_action", "env.step", "train", "replay.sample"):
        assert len(parts.each[name]) == steps, name
    # the add of the step whose env.step armed the timers is counted too
    assert len(parts.each["replay.add"]) in (steps, steps + 1)
    top = sum(parts.s[n] for n in ("select_action", "env.step", "replay.add", "train"))
    assert 0 < top <= res.learn_s
    text = bd.table(res, parts, framework)
    assert "loop rest (by difference)" in text
    if framework == "compiled":
        crit, pol = parts.each["  update code, critic-only it."], parts.each["  update code, policy it."]
        assert len(crit) + len(pol) == steps and abs(len(crit) - len(pol)) <= 1
        assert len(parts.each["  update call (Function)"]) == steps
        assert len(parts.each["  actor code"]) == steps
