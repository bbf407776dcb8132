"""The matmul kernel's BLAS thread policy (tapeflow/util/threads.py): values unchanged,
tiny GEMMs single-threaded, larger ones on the thread count timed per shape, the user's
environment and intra-op setting respected."""
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.util import threads

pytest.importorskip("threadpoolctl")


def _run(code, **env):
    import os
    e = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, check=True).stdout


def test_small_gemm_runs_on_one_blas_thread_and_values_match_numpy():
    out = _run(
        "import numpy as np, tapeflow as tf\n"
        "from tapeflow.util import threads\n"
        "from threadpoolctl import threadpool_info\n"
        "a = np.random.default_rng(0).standard_normal((64, 40)).astype(np.float32)\n"
        "b = np.random.default_rng(1).standard_normal((40, 100)).astype(np.float32)\n"
        "r = tf.matmul(a, b).numpy()\n"
        "assert np.array_equal(r, np.matmul(a, b))\n"
        "blas = [i for i in threadpool_info() if i['internal_api'] == 'openblas']\n"
        "print(threads.blas_threads(), blas[0]['num_threads'] if blas else None)\n")
    tf_set, lib = out.split()
    if lib == "None":
        pytest.skip("NumPy is not linked against OpenBLAS here")
    assert tf_set == "1" and lib == "1"


@pytest.mark.parametrize("env, want", [({"TAPEFLOW_BLAS_THREADS": "default"}, "None None"),
                                       ({"OPENBLAS_NUM_THREADS": "1"}, "None 1"),
                                       ({"OPENBLAS_NUM_THREADS": "2"}, "1 2")])
def test_blas_pool_from_the_environment_is_the_cap(env, want):
    """TAPEFLOW_BLAS_THREADS=default leaves BLAS alone; OPENBLAS_NUM_THREADS sizes the pool
    (one thread: nothing to choose, BLAS is left alone; two: a small GEMM gets one)."""
    out = _run("import numpy as np, tapeflow as tf\n"
               "from tapeflow.util import threads\n"
               "tf.matmul(np.ones((4, 4), np.float32), np.ones((4, 4), np.float32))\n"
               "print(threads.blas_threads(), threads._STATE['many'] if threads._STATE['set'] else None)\n",
               **env)
    assert out.strip() == want


@pytest.mark.parametrize("shape", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((600, 300), (300, 200))])
def test_kernel_values_and_out_buffer(shape):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape[0]), rng.standard_normal(shape[1])
    out = np.empty(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1]))
    r = threads.matmul(a, b, out=out)
    assert r is out
    np.testing.assert_allclose(r, np.matmul(a, b), rtol=1e-12)

    @tf.function
    def f(x, y):
        return tf.matmul(x, y) * 1.0
    np.testing.assert_allclose(f(a, b).numpy(), np.matmul(a, b), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64, np.bool_])
@pytest.mark.parametrize("shape", [((5, 1), (1, 7)), ((3, 4, 1), (1, 6)), ((1, 4, 1), (3, 1, 5)),
                                   ((4, 1), (2, 1, 3))])
def test_outer_product_gemm_is_bit_identical_to_matmul(shape, dtype):
    """k=1 runs as a broadcast multiply (one product per element): same bits, dtype and
    shape as np.matmul, with and without an out= buffer."""
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shape[0]) * 3).astype(dtype)
    b = (rng.standard_normal(shape[1]) * 3).astype(dtype)
    want = np.matmul(a, b)
    got = threads.matmul(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    out = np.empty_like(want)
    assert threads.matmul(a, b, out=out) is out and np.array_equal(out, want)


def _fake_proc(tmp_path, running, states):
    (tmp_path / "loadavg").write_text(f"1.20 0.90 0.50 {running}/180 4242\n")
    for i, (comm, state) in enumerate(states):
        d = tmp_path / "self" / "task" / str(100 + i)
        d.mkdir(parents=True)
        (d / "stat").write_text(f"{100 + i} ({comm}) {state} 1 100 100 0 -1 4194560\n")
    return str(tmp_path)


def test_runnable_threads_of_this_process_are_not_counted_as_other_load(tmp_path):
    # 4 runnable system-wide: our main thread and one spinning BLAS worker are 2 of them;
    # a comm holding ") R" must not fool the parser
    proc = _fake_proc(tmp_path, 4, [("python", "R"), ("openblas) R", "S"), ("python", "R"), ("x y", "S")])
    assert threads._runnable_others(proc) == 2
    assert threads._runnable_others(str(tmp_path / "missing")) is None


def test_a_second_blas_thread_only_while_no_other_process_runs(monkeypatch):
    """The decision follows other processes' runnable threads (smoothed over ~2 s), never
    our own: on 2 cores, two BLAS threads of ours keep running on a quiet machine, and one
    busy process beside us switches to one thread within two readings."""
    monkeypatch.setattr(threads, "_cores", lambda: 2)
    monkeypatch.setitem(threads._STATE, "load_at", -1.0)
    monkeypatch.setitem(threads._STATE, "others", None)
    t = 100.0
    seen = []
    for others in [0] * 100 + [1] * 3 + [0] * 3:   # a quiet minute and more, then a busy neighbour, then it ends
        t += 1.5
        seen.append(threads._machine_quiet(t, others))
        assert threads._machine_quiet(t + 0.5, 7) == seen[-1]   # re-read at most once a second
    assert all(seen[:100])
    assert not any(seen[101:103]) and all(seen[-2:])


# --- the per-shape choice (threads._gemm), with an injected clock -----------------------
@pytest.fixture
def policy(monkeypatch):
    """The policy on a fake 2-thread BLAS: thread counts are recorded, not set; the trial's
    clock says a call took ``cost[threads]`` seconds; the machine is quiet unless a test
    says otherwise."""
    sets, cost, reads = [], {1: 1e-4, 2: 1e-4}, []
    clock = [0.0, False]

    def timer():
        reads.append(threads._STATE["current"])
        clock[1] = not clock[1]
        if not clock[1]:
            clock[0] += cost[threads._STATE["current"]]
        return clock[0]

    def set_threads(n):
        sets.append(n)

    for k, v in {"set": set_threads, "many": 2, "current": None, "retrial_at": None,
                 "retrial_s": threads.RETRIAL_S,
                 "intra": tf.config.threading.get_intra_op_parallelism_threads}.items():
        monkeypatch.setitem(threads._STATE, k, v)
    monkeypatch.setattr(threads, "_CHOICE", {})
    monkeypatch.setattr(threads, "_timer", timer)
    monkeypatch.setattr(threads, "_now", lambda: 1000.0)
    monkeypatch.setattr(threads, "_machine_quiet", lambda now, others=None: True)
    tf.config.threading.set_intra_op_parallelism_threads(0)
    yield sets, cost, reads
    tf.config.threading.set_intra_op_parallelism_threads(0)


def _operands(m, k, n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32))


def test_decision_ignores_the_warm_up_pair_and_needs_the_margin():
    assert threads._decide([1.0, 1e-9, 100, 60, 100, 99, 101, 70], 2) == 2
    assert threads._decide([1.0, 1e-9, 100, 95, 100, 92, 100, 99], 2) == 1   # < 10% faster: one thread
    assert threads._decide([1e-9, 1.0, 100, 200, 100, 300, 100, 89], 4) == 4   # the best calls decide


@pytest.mark.parametrize("two_threads_cost, chosen", [(0.5e-4, 2), (0.95e-4, 1), (3e-4, 1)])
def test_each_shape_alternates_thread_counts_then_keeps_the_faster(policy, two_threads_cost, chosen):
    sets, cost, reads = policy
    cost[2] = two_threads_cost
    a, b = _operands(256, 64, 256)
    calls = 2 * (1 + threads.SAMPLES)
    for i in range(calls + 3):
        np.testing.assert_array_equal(threads.matmul(a, b), np.matmul(a, b))
    assert reads == [n for n in [1, 2] * (1 + threads.SAMPLES) for _ in (0, 1)]   # every trial call timed
    assert sets == [1, 2] * (1 + threads.SAMPLES) + ([] if chosen == 2 else [1])   # then set once
    assert list(threads.gemm_choices().values()) == [chosen]


def test_shapes_layouts_and_out_buffers_are_measured_apart(policy):
    sets, cost, reads = policy
    a, b = _operands(256, 64, 256)
    at, bt = np.asfortranarray(a), np.asfortranarray(b)  # transposed operands: other BLAS calls
    cost[2] = 0.5e-4
    for _ in range(2 * (1 + threads.SAMPLES)):
        threads.matmul(a, b)
    cost[2] = 2e-4
    for _ in range(2 * (1 + threads.SAMPLES)):
        threads.matmul(at, b)
        threads.matmul(a, bt, out=np.empty((256, 256), np.float32))
    choices = threads.gemm_choices()
    assert sorted(choices.values()) == [1, 1, 2] and len(choices) == 3
    sets.clear()
    for x in (at, a, at, at):
        threads.matmul(x, b)
    assert sets == [1, 2, 1]                       # switched only when the wanted count changes


def test_small_gemms_and_a_busy_machine_run_on_one_thread_unmeasured(policy, monkeypatch):
    sets, cost, reads = policy
    cost[2] = 1e-6
    a, b = _operands(64, 63, 64)                   # 258k multiply-adds: below the floor
    assert 64 * 63 * 64 < threads.FLOOR_MACS
    for _ in range(10):
        threads.matmul(a, b)
    monkeypatch.setattr(threads, "_machine_quiet", lambda now, others=None: False)
    a, b = _operands(256, 256, 256)
    for _ in range(10):
        threads.matmul(a, b)
    assert sets == [1] and reads == [] and threads._CHOICE == {}
    monkeypatch.setattr(threads, "_machine_quiet", lambda now, others=None: True)
    threads.matmul(a, b)                           # quiet again: the trial starts
    assert reads == [1, 1] and len(threads._CHOICE) == 1


def test_intra_op_setting_caps_the_threads_whatever_the_load(policy, monkeypatch):
    sets, cost, reads = policy
    a, b = _operands(256, 256, 256)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    threads.matmul(a, b)                           # one thread, untimed
    assert sets == [1] and reads == [] and threads._CHOICE == {}
    tf.config.threading.set_intra_op_parallelism_threads(8)
    monkeypatch.setattr(threads, "_machine_quiet", lambda now, others=None: False)
    cost[2] = 0.5e-4
    for _ in range(2 * (1 + threads.SAMPLES) + 1):
        threads.matmul(a, b)                       # timed between 1 and BLAS's 2, busy or not (as in TF)
    assert sets == [1] + [2, 1] * threads.SAMPLES + [2] and len(reads) == 4 * (1 + threads.SAMPLES)
    assert list(threads.gemm_choices().values()) == [2] and threads._STATE["current"] == 2
    threads.matmul(*_operands(8, 8, 8))            # tiny GEMMs stay on one
    assert threads._STATE["current"] == 1


def test_one_intra_op_thread_gives_one_thread_blas_bits():
    """OpenBLAS's threaded GEMM does not round like its one-thread GEMM (the per-thread
    blocks change which micro-kernel computes an element), so bit-reproducible runs set one
    intra-op thread: every product then is the one-thread product whatever the policy
    measured."""
    out = _run(
        "import numpy as np, tapeflow as tf\n"
        "from tapeflow.util import threads\n"
        "from threadpoolctl import threadpool_limits\n"
        "threads._machine_quiet = lambda now, others=None: True\n"   # as on an idle machine
        "rng = np.random.default_rng(0)\n"
        "a, b = (rng.standard_normal(s).astype(np.float32) for s in ((256, 23), (23, 256)))\n"
        "threads.matmul(a, b)\n"
        "threads._CHOICE.update({k: threads._STATE['many'] for k in threads._CHOICE})\n"
        "tf.config.threading.set_intra_op_parallelism_threads(1)\n"
        "got = threads.matmul(a, b)\n"
        "with threadpool_limits(1, 'blas'):\n"
        "    want = np.matmul(a, b)\n"
        "print(np.array_equal(got, want), threads.blas_threads())\n")
    assert out.split() == ["True", "1"]


def test_gemms_past_the_ceiling_run_on_all_threads_unmeasured_unless_busy(policy, monkeypatch):
    sets, cost, reads = policy
    monkeypatch.setattr(threads, "CEIL_MACS", 256 * 64 * 256)
    a, b = _operands(256, 64, 256)
    threads.matmul(a, b)
    monkeypatch.setattr(threads, "_machine_quiet", lambda now, others=None: False)
    threads.matmul(a, b)
    assert sets == [2, 1] and reads == [] and threads._CHOICE == {}


def test_all_shapes_are_timed_again_at_doubling_intervals(policy, monkeypatch):
    """A trial spoilt by a burst of load (two threads looked slow) is corrected later."""
    sets, cost, reads = policy
    now = [1000.0]
    monkeypatch.setattr(threads, "_now", lambda: now[0])
    a, b = _operands(256, 64, 256)
    trial = 2 * (1 + threads.SAMPLES)

    def run_trial(two_threads_cost):
        cost[2] = two_threads_cost
        reads.clear()
        for _ in range(trial):
            threads.matmul(a, b)
        assert len(reads) == 2 * trial
        return list(threads.gemm_choices().values())

    assert run_trial(3e-4) == [1]                  # spoilt: two threads looked slow
    now[0] += threads.RETRIAL_S - 0.1
    reads.clear()
    threads.matmul(a, b)
    assert reads == []                             # not yet
    now[0] += 0.2
    assert run_trial(0.5e-4) == [2]                # timed again: corrected
    for wait in (2 * threads.RETRIAL_S - 0.1, 0.2):
        now[0] += wait
        reads.clear()
        threads.matmul(a, b)
    assert reads == [1, 1]                         # the next trial, twice as late
    now[0] += 1e6
    threads.matmul(a, b)
    assert threads._STATE["retrial_s"] <= threads.RETRIAL_MAX_S
