"""tf.profiler.experimental: TF's start/stop session API, its errors, and what it writes."""
import json
import os

import pytest

import tapeflow as tf


def _files(d):
    return sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs)


def test_start_stop_writes_trace_and_report_under_plugins_profile(tmp_path):
    tf.profiler.experimental.start(str(tmp_path))
    x = tf.constant([1.0, 2.0])
    with tf.profiler.experimental.Trace("train", step_num=3):
        y = x * 2.0 + 1.0
    tf.profiler.experimental.stop()
    assert y.numpy().tolist() == [3.0, 5.0]
    files = _files(tmp_path)
    assert len(files) == 2 and all(f.startswith(os.path.join("plugins", "profile")) for f in files)
    trace = json.loads((tmp_path / next(f for f in files if f.endswith(".trace.json"))).read_text())
    names = {e["name"] for e in trace["traceEvents"]}
    assert {"mul", "add", "train"} <= names
    ev = next(e for e in trace["traceEvents"] if e["name"] == "train")
    assert ev["cat"] == "trace" and ev["args"] == {"step_num": "3"}


def test_errors_are_tfs(tmp_path):
    with pytest.raises(tf.errors.UnavailableError, match="No profiler is running"):
        tf.profiler.experimental.stop()
    tf.profiler.experimental.start(str(tmp_path))
    try:
        with pytest.raises(tf.errors.AlreadyExistsError, match="Another profiler is running"):
            tf.profiler.experimental.start(str(tmp_path))
    finally:
        tf.profiler.experimental.stop(save=False)
    assert _files(tmp_path) == []


def test_profile_context_manager_and_options(tmp_path):
    with tf.profiler.experimental.Profile(str(tmp_path), options=tf.profiler.experimental.ProfilerOptions()):
        tf.constant(1.0) + 1.0
    assert any(f.endswith(".profile.txt") for f in _files(tmp_path))
    with pytest.raises(TypeError, match="ProfilerOptions"):
        tf.profiler.experimental.start(str(tmp_path), options={"host_tracer_level": 2})
    # the failed start left no session behind
    with pytest.raises(tf.errors.UnavailableError):
        tf.profiler.experimental.stop()


def test_trace_outside_a_profiler_is_inert():
    with tf.profiler.experimental.Trace("step", step_num=1) as t:
        pass
    assert t.name == "step"
