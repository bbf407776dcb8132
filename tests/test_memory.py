"""Nothing leaks: the resident set size (RSS, /proc/self/statm) stays flat over
100k calls of a compiled function, 10k traces of functions that are then
dropped, and repeated checkpoint save/restore cycles.

Each case runs in a fresh interpreter: in a process that has already freed
memory (earlier tests), a leak fills the free heap first and RSS hides it.
Each warms up first (caches, allocator arenas, first-call compilation), then
measures the growth over the loop. The bounds are generous next to what a
flat process shows (0-0.1 MB here) and tight next to a leak: 20 bytes per
call, 200 bytes per trace or 10 KB per checkpoint cycle exceed them."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="RSS is read from /proc/self/statm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MB = 1 << 20

_PRELUDE = """
import gc, os
import numpy as np
import tapeflow as tf

def rss():
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
"""


def _growth(body, *args):
    """Run ``body`` (which sets ``before`` and ``after`` with ``rss()``) in a fresh interpreter;
    returns the RSS growth in bytes."""
    code = _PRELUDE + textwrap.dedent(body) + "\nprint('GROWTH', after - before)\n"
    # glibc's own trimming (TAPEFLOW_MALLOC=default): the thresholds tapeflow sets keep up
    # to 64 MiB of freed memory in the process (core/memory.py), where a leak would hide
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT, TAPEFLOW_MALLOC="default"))
    assert r.returncode == 0, r.stdout + r.stderr
    return int(r.stdout.split("GROWTH")[-1])


def test_rss_flat_over_100k_compiled_calls():
    grown = _growth("""
    w = tf.Variable(np.ones((4, 4), np.float32))

    @tf.function
    def f(x):
        return tf.reduce_sum(tf.matmul(x, w) + 1.0)

    x = tf.constant(np.ones((2, 4), np.float32))
    for _ in range(2000):
        f(x)
    before = rss()
    for _ in range(100_000):
        out = f(x)
    after = rss()
    assert float(out) == 2 * 4 * 5.0
    assert f.experimental_get_tracing_count() == 1
    """)
    assert grown < 2 * MB, f"RSS grew {grown / MB:.2f} MB over 100k calls ({grown / 1e5:.0f} B per call)"


def test_rss_flat_over_10k_retraces():
    """A ``tf.function`` made, traced and dropped again and again (a function defined inside a
    loop): its graph, generated code and the code's source text must all be released."""
    grown = _growth("""
    x = tf.constant(np.ones((2, 4), np.float32))

    def body(x):
        return x + 1.0

    for _ in range(500):
        tf.function(body)(x)
    before = rss()
    for _ in range(10_000):
        out = tf.function(body)(x)
    after = rss()
    np.testing.assert_array_equal(out.numpy(), 2.0)
    """)
    assert grown < 2 * MB, f"RSS grew {grown / MB:.2f} MB over 10k traces ({grown / 1e4:.0f} B per trace)"


def test_rss_flat_over_checkpoint_save_restore_cycles(tmp_path):
    grown = _growth("""
    import sys
    import tapeflow.train

    d = sys.argv[1]
    v = tf.Variable(np.ones((256, 256), np.float32))
    step = tf.Variable(np.int64(0))
    ck = tf.train.Checkpoint(v=v, step=step)
    mgr = tf.train.CheckpointManager(ck, d, max_to_keep=2)

    def cycle(i):
        step.assign(i)
        v.assign(np.full((256, 256), i, np.float32))
        mgr.save()
        v.assign(np.zeros((256, 256), np.float32))
        ck.restore(mgr.latest_checkpoint).assert_consumed()

    for i in range(30):
        cycle(i)
    before = rss()
    for i in range(30, 130):
        cycle(i)
    after = rss()
    assert int(step.numpy()) == 129 and (v.numpy() == 129).all()
    assert len(os.listdir(d)) == 5        # the state file and two checkpoints: nothing piles up
    """, tmp_path)
    assert grown < 1 * MB, f"RSS grew {grown / MB:.2f} MB over 100 save/restore cycles"
