"""tapeflow.profile: verdicts on an overhead-bound toy step (many small eager
ops) and a compute-bound one (a few 1024x1024 float32 matmuls), compiled
calls and retraces, the table, the Chrome trace, and no cost when off."""
from __future__ import annotations

import json

import numpy as np
import pytest

import tapeflow as tf
import tapeflow.profiler  # noqa: F401  (tapeflow.profile)
from tapeflow.core.state import STATE


def _small_step_parts():
    rng = np.random.default_rng(0)
    w = tf.Variable(rng.standard_normal((8, 8)).astype(np.float32) * 0.1)
    x = tf.constant(rng.standard_normal((4, 8)).astype(np.float32))

    def train_step(x):
        with tf.GradientTape() as tape:
            h = x
            for _ in range(8):
                h = tf.tanh(h @ w) * 0.5 + h
            loss = tf.reduce_sum(h * h)
        g = tape.gradient(loss, w)
        w.assign_sub(0.001 * g)
        return loss
    return train_step, x


def test_profile_is_exported_as_tapeflow_profile():
    assert tf.profile is tf.profiler.profile


def test_overhead_bound_verdict_names_the_step_function():
    train_step, x = _small_step_parts()
    expected = [float(train_step(x)) for _ in range(3)]
    train_step, x = _small_step_parts()
    with tf.profile() as prof:
        got = [float(train_step(x)) for _ in range(3)]
        for _ in range(27):
            train_step(x)
    assert got == expected                                  # same results under the profiler
    assert STATE.profiler is None
    s = prof.summary()
    assert s["eager_ops"] > 1000 and s["compiled_calls"] == 0
    assert (s["dispatch_s"] + s["python_s"]) / s["total_s"] > 0.5
    ops = {name: calls for name, calls, _, _ in prof.op_table()}
    assert ops["tanh"] == 30 * 8 and ops["matmul"] >= 30 * 8
    v = prof.verdict()
    assert v.startswith("overhead-bound") and "wrap `train_step` in `tapeflow.function`" in v
    text = str(prof)
    assert "eager op" in text and "tanh" in text and "dispatch" in text and text.rstrip().endswith(v)


def test_compute_bound_verdict_on_big_matmuls():
    rng = np.random.default_rng(0)
    a = tf.constant(rng.standard_normal((1024, 1024)).astype(np.float32))
    b = tf.constant(rng.standard_normal((1024, 1024)).astype(np.float32))

    def step():
        c = a @ b
        return tf.matmul(c, b)

    with tf.profile() as prof:
        for _ in range(2):
            step()
    s = prof.summary()
    assert s["eager_ops"] == 4
    assert s["kernel_s"] / s["total_s"] > 0.8
    v = prof.verdict()
    assert v.startswith("compute-bound in matmul") and "will not help much" in v
    (name, calls, kernel, dispatch), = prof.op_table()
    assert (name, calls) == ("matmul", 4) and kernel > 50 * dispatch


def test_compiled_calls_traces_and_retraces_with_reasons():
    train_step, x = _small_step_parts()
    f = tf.function(train_step)
    with tf.profile() as prof:
        for _ in range(5):
            f(x)
        f(tf.constant(np.ones((6, 8), np.float32)))        # new shape: a retrace
    s = prof.summary()
    assert s["compiled_calls"] == 6 and s["eager_ops"] == 0
    assert prof.compiled["train_step"][0] == 6
    t = prof.traces["train_step"]
    assert t["traces"] == 2 and t["retraces"] == 1 and "(4, 8)" in t["reasons"][0] and "(6, 8)" in t["reasons"][0]
    assert t["trace_s"] > 0 and t["compile_s"] > 0
    assert s["tracing_s"] > s["compiled_s"]
    assert prof.verdict().startswith(("retrace-bound", "trace-bound"))
    assert "retrace: " in str(prof)


@pytest.mark.filterwarnings("ignore::tapeflow.compiler.function.RetracingWarning")
def test_retrace_bound_verdict_suggests_tensors_for_python_numbers():
    @tf.function
    def scale(x, k):
        return x * k

    x = tf.constant(np.ones(4, np.float32))
    with tf.profile() as prof:
        for k in range(6):
            scale(x, float(k))                               # a new Python float: retraces every call
    assert prof.traces["scale"]["retraces"] == 5
    v = prof.verdict()
    assert v.startswith("retrace-bound") and "`scale`" in v and "tensor" in v


def test_compiled_ops_breakdown_through_the_interpreter():
    rng = np.random.default_rng(0)
    w = tf.Variable(rng.standard_normal((64, 64)).astype(np.float32))

    @tf.function
    def f(x):
        return tf.reduce_sum(tf.tanh(x @ w))

    x = tf.constant(rng.standard_normal((32, 64)).astype(np.float32))
    expected = float(f(x))
    with tf.profile(compiled_ops=True) as prof:
        got = [float(f(x)) for _ in range(5)]
    assert got == [pytest.approx(expected, rel=1e-6)] * 5
    assert prof.cops["matmul"].calls == 5 and prof.cops["tanh"].calls == 5
    assert "ops inside compiled functions" in prof.report()


def test_chrome_trace_export(tmp_path):
    train_step, x = _small_step_parts()
    f = tf.function(train_step)
    with tf.profile() as prof:
        train_step(x)
        f(x)
    path = prof.export_chrome_trace(str(tmp_path / "trace.json"))
    data = json.load(open(path))
    evs = [e for e in data["traceEvents"] if e.get("ph") == "X"]
    cats = {e["cat"] for e in evs}
    assert {"op", "kernel", "compiled", "trace", "profile"} <= cats
    assert all(e["dur"] >= 0 and "ts" in e and "pid" in e and "tid" in e for e in evs)
    assert any(e["name"] == "train_step" and e["cat"] == "compiled" for e in evs)
    assert data["otherData"]["verdict"] == prof.verdict()


def test_decorator_accumulates_over_calls():
    train_step, x = _small_step_parts()

    @tf.profile()
    def run(n):
        for _ in range(n):
            train_step(x)

    run(2)
    run(3)
    assert run.profile.op_table()[0][1] > 0
    assert {n: c for n, c, _, _ in run.profile.op_table()}["tanh"] == 5 * 8
    assert "wrap `train_step`" in run.profile.verdict()
    assert STATE.profiler is None


def test_state_restored_after_errors_and_no_nesting():
    with pytest.raises(ValueError):
        with tf.profile():
            tf.reshape(tf.constant([1.0, 2.0, 3.0]), (2, 2))     # a kernel error inside
    assert STATE.profiler is None
    with tf.profile() as outer:
        with pytest.raises(RuntimeError, match="already active"):
            with tf.profile():
                pass
        assert STATE.profiler is outer
    assert STATE.profiler is None


def test_gradients_and_variables_correct_under_profiler():
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.profile():
        with tf.GradientTape() as t:
            y = tf.reduce_sum(v * v)
        g = t.gradient(y, v)
        v.assign_add(g)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_allclose(v.numpy(), [3.0, 6.0, 9.0])


def test_nothing_is_recorded_when_off():
    prof = tf.profile()
    x = tf.constant([1.0])
    _ = x + x
    tf.exp(x)
    assert prof.summary()["eager_ops"] == 0 and STATE.profiler is None
    assert prof.verdict().startswith("nothing to judge")


def test_ops_directly_in_the_block_or_decorated_body():
    x = tf.constant(np.ones((2, 2), np.float32))
    with tf.profile() as prof:
        for _ in range(300):
            x = tf.tanh(x) + 0.5      # (stays normal: subnormal floats make kernels slow)
    v = prof.verdict()
    assert v.startswith("overhead-bound") and "move the step into a function" in v

    @tf.profile()
    def loop(y):
        for _ in range(300):
            y = tf.tanh(y) + 0.5
        return y

    loop(x)
    assert "wrap `loop` in `tapeflow.function`" in loop.profile.verdict()
