"""The matmul kernel's BLAS thread policy (tapeflow/util/threads.py): values unchanged,
tiny GEMMs single-threaded, larger ones on the thread count timed per shape, the user's
environment and intra-op setting respected."""
import json
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


@pytest.fixture
def readings(monkeypatch):
    """A fresh process's load readings on 2 cores, with an injected clock, CPU-time counters
    (``cpu``: [seconds used by every process, by ours]) and runnable-thread looks (``looks``:
    what successive looks see, the last one repeated)."""
    monkeypatch.setattr(threads, "_cores", lambda: 2)
    for k, v in {"load_at": -1.0, "others": None, "mark": None, "looked": False, "quiet": False}.items():
        monkeypatch.setitem(threads._STATE, k, v)
    now, cpu, looks = [100.0], [0.0, 0.0], []
    monkeypatch.setattr(threads, "_now", lambda: now[0])
    monkeypatch.setattr(threads, "_cpu_used", lambda proc="/proc": tuple(cpu))
    monkeypatch.setattr(threads, "_runnable_others",
                        lambda proc="/proc": looks.pop(0) if len(looks) > 1 else looks[0])
    monkeypatch.setattr(threads.time, "sleep", lambda s: None)
    return now, cpu, looks


def _run_for(now, cpu, seconds, ours, others):
    """``seconds`` pass with our process using ``ours`` cores and the others ``others``."""
    now[0] += seconds
    cpu[0] += (ours + others) * seconds
    cpu[1] += ours * seconds


def test_a_thread_seen_runnable_in_one_look_does_not_stop_the_second_blas_thread(readings):
    """A kernel thread (kdamond), a tool's I/O thread or one of ours counted by the load
    average but seen asleep a moment later (the look reads /proc/loadavg, then our
    threads): one look at the first reading saw another runnable thread. Before, that one
    look was the first reading and set one thread for two readings (the whole timed
    window of a short benchmark); now the first reading is the median of LOOKS looks, and
    the next ones are other processes' CPU time, which a blip barely moves."""
    now, cpu, looks = readings
    looks[:] = [1, 0]
    seen = [threads.machine_quiet()]
    for _ in range(5):
        _run_for(now, cpu, 1.2, ours=2.0, others=0.01)   # our two threads, a kernel thread's ticks
        seen.append(threads.machine_quiet())
    assert all(seen)


def test_a_look_that_always_counts_a_thread_of_ours_is_replaced_by_cpu_time(readings):
    """The race at its worst: every look counts a thread of ours as another process's
    (runnable in /proc/loadavg, asleep in /proc/self/task). The first reading says busy;
    the first measured interval (CPU time, no looks) replaces it."""
    now, cpu, looks = readings
    looks[:] = [1]
    assert threads.machine_quiet() is False
    _run_for(now, cpu, 1.2, ours=1.0, others=0.0)
    assert threads.machine_quiet() is True
    for _ in range(10):
        _run_for(now, cpu, 1.2, ours=2.0, others=0.0)
        assert threads.machine_quiet() is True


@pytest.mark.parametrize("neighbour, quiet", [(1.0, False), (0.67, False), (0.3, True)])
def test_cpu_time_of_other_processes_decides(readings, neighbour, quiet):
    """A busy neighbour gets a whole core beside our one thread and ~2/3 of one beside two
    (3 runnable threads on 2 cores): one thread within two readings, from a quiet first
    look. Our own CPU time, however much, is never counted."""
    now, cpu, looks = readings
    looks[:] = [0]
    assert threads.machine_quiet() is True
    seen = []
    for _ in range(4):
        _run_for(now, cpu, 1.2, ours=2.0 - neighbour, others=neighbour)
        seen.append(threads.machine_quiet())
    assert seen[1:] == [quiet] * 3


def test_cpu_used_reads_proc_stat(tmp_path, monkeypatch):
    monkeypatch.setattr(threads, "_own_cpu", lambda: 1.5)
    (tmp_path / "stat").write_text("cpu  300 20 80 9000 5 1 2 7 0 0\ncpu0 150 10 40 4500 2 0 1 3 0 0\n")
    # user + nice + system ticks: idle, iowait, irq, softirq and steal time are no process's
    assert threads._cpu_used(str(tmp_path)) == (400 / threads._TICK, 1.5)
    assert threads._cpu_used(str(tmp_path / "missing")) is None


def test_a_forked_child_starts_its_readings_anew(readings):
    now, cpu, looks = readings
    looks[:] = [0]
    threads.machine_quiet()
    threads._forget_readings()    # as os.register_at_fork calls it in the child
    assert threads._STATE["mark"] is None and threads._STATE["others"] is None


def test_machine_quiet_reads_the_modules_clock(monkeypatch):
    """machine_quiet() (tapeflow's parallel loops ask it) keeps time by the same injectable
    clock as the GEMM policy: a busy reading holds until a second of that clock passed."""
    monkeypatch.setattr(threads, "_cores", lambda: 2)
    monkeypatch.setitem(threads._STATE, "load_at", -1.0)
    monkeypatch.setitem(threads._STATE, "others", None)
    now, others = [50.0], [3]
    monkeypatch.setattr(threads, "_now", lambda: now[0])
    monkeypatch.setattr(threads, "_reading", lambda now: others[0])
    assert threads.machine_quiet() is False
    others[0] = 0
    now[0] += 0.5
    assert threads.machine_quiet() is False        # within the second: the busy reading holds
    for _ in range(10):                            # the smoothed count decays past the limit
        now[0] += 1.5
        threads.machine_quiet()
    assert threads.machine_quiet() is True


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
        "a, b = (rng.standard_normal(s).astype(np.float32) for s in ((256, 40), (40, 256)))\n"
        "threads.matmul(a, b)\n"
        "threads._CHOICE.update({k: threads._STATE['many'] for k in threads._CHOICE})\n"
        "tf.config.threading.set_intra_op_parallelism_threads(1)\n"
        "got = threads.matmul(a, b)\n"
        "with threadpool_limits(1, 'blas'):\n"
        "    want = np.matmul(a, b)\n"
        "print(np.array_equal(got, want), threads.blas_threads())\n")
    assert out.split() == ["True", "1"]


# --- the per-shape choice (threads._gemm), with an injected clock -----------------------
_REAL_QUIET_AFTER = threads._quiet_after


@pytest.fixture
def policy(monkeypatch, tmp_path):
    """The policy on a fake 2-thread BLAS with its cache in ``tmp_path``: thread counts are
    recorded, not set; the trial's clock says a call took ``cost[threads]`` seconds; the
    machine is quiet unless a test says otherwise."""
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

    monkeypatch.setenv("TAPEFLOW_CACHE_DIR", str(tmp_path))
    # load_at -inf: every call asks the (patched) _machine_quiet, never a cached reading
    for k, v in {"set": set_threads, "many": 2, "current": None, "blas": "fake openblas threads=2",
                 "load_at": float("-inf"),
                 "intra": tf.config.threading.get_intra_op_parallelism_threads}.items():
        monkeypatch.setitem(threads._STATE, k, v)
    monkeypatch.setattr(threads, "_CHOICE", {})
    monkeypatch.setattr(threads, "_ONE_ONCE", set())
    monkeypatch.setattr(threads, "_DISK", None)
    monkeypatch.setattr(threads, "_timer", timer)
    monkeypatch.setattr(threads, "_now", lambda: 1000.0)
    monkeypatch.setattr(threads, "_machine_quiet", lambda now, others=None: True)
    monkeypatch.setattr(threads, "_quiet_after", lambda: True)
    tf.config.threading.set_intra_op_parallelism_threads(0)
    yield sets, cost, reads
    tf.config.threading.set_intra_op_parallelism_threads(0)


def _operands(m, k, n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32))


def _new_process(monkeypatch):
    """Forget what this process decided and read, as a fresh process on the same machine."""
    monkeypatch.setattr(threads, "_CHOICE", {})
    monkeypatch.setattr(threads, "_ONE_ONCE", set())
    monkeypatch.setattr(threads, "_DISK", None)
    monkeypatch.setitem(threads._STATE, "current", None)


def _cache_file(tmp_path):
    return json.loads((tmp_path / "blas_threads.json").read_text())


TRIAL = [1, 2] * (1 + threads.SAMPLES)


def test_decision_ignores_the_warm_up_pair_and_needs_the_margin():
    assert threads._decide([1.0, 1e-9, 100, 60, 100, 99, 101, 70], 2) == 2
    assert threads._decide([1.0, 1e-9, 100, 95, 100, 92, 100, 99], 2) == 1   # < 10% faster: one thread
    assert threads._decide([1e-9, 1.0, 100, 200, 100, 300, 100, 89], 4) == 4   # the best calls decide


@pytest.mark.parametrize("two_threads_cost, chosen", [(0.5e-4, 2), (0.95e-4, 1), (3e-4, 1)])
def test_first_call_times_a_scratch_product_then_runs_on_the_decision(policy, monkeypatch, tmp_path,
                                                                      two_threads_cost, chosen):
    """The trial alternates one and two threads on a scratch result; the program's own
    call, the first one included, runs on the decided count and never inside the trial.
    A one-thread verdict is kept only when a second trial RETRIAL_S later agrees."""
    sets, cost, reads = policy
    now = [1000.0]
    monkeypatch.setattr(threads, "_now", lambda: now[0])
    cost[2] = two_threads_cost
    a, b = _operands(256, 64, 256)
    out = np.full((256, 256), np.nan, np.float32)
    seen = []
    threads_timer = threads._timer
    threads._timer = lambda: (seen.append(np.isnan(out).all()), threads_timer())[1]
    r = threads.matmul(a, b, out=out)
    assert r is out and all(seen) and len(seen) == 2 * len(TRIAL)   # out untouched while timing
    np.testing.assert_array_equal(out, np.matmul(a, b))
    assert reads == [n for n in TRIAL for _ in (0, 1)]              # every trial call timed
    assert sets == TRIAL + ([] if chosen == 2 else [1])             # then the decided count
    for _ in range(3):
        np.testing.assert_array_equal(threads.matmul(a, b, out=out), np.matmul(a, b))
    assert len(reads) == 2 * len(TRIAL) and len(sets) == len(TRIAL) + (chosen == 1)
    if chosen == 1:                                # not kept yet: one thread until the second trial
        assert threads.gemm_choices() == {} and not (tmp_path / "blas_threads.json").exists()
        now[0] += threads.RETRIAL_S
        np.testing.assert_array_equal(threads.matmul(a, b, out=out), np.matmul(a, b))
        assert len(reads) == 4 * len(TRIAL)
    assert list(threads.gemm_choices().values()) == [chosen]
    assert list(_cache_file(tmp_path)[threads._fingerprint()].values()) == [chosen]
    now[0] += 1e6                                  # a decided shape is never timed again
    threads.matmul(a, b, out=out)
    assert len(reads) == 2 * len(TRIAL) * (1 + (chosen == 1))


def test_a_spoilt_trial_saying_one_thread_is_overruled_by_the_next(policy, monkeypatch, tmp_path):
    """Load the readings miss slows the two-thread calls of one trial: its one-thread
    verdict is not kept, and the next trial's two threads are."""
    sets, cost, reads = policy
    now = [1000.0]
    monkeypatch.setattr(threads, "_now", lambda: now[0])
    a, b = _operands(256, 64, 256)
    cost[2] = 3e-4
    threads.matmul(a, b)
    assert threads._STATE["current"] == 1 and threads.gemm_choices() == {}
    cost[2] = 0.5e-4
    now[0] += threads.RETRIAL_S
    threads.matmul(a, b)
    assert list(threads.gemm_choices().values()) == [2] and threads._STATE["current"] == 2
    assert list(_cache_file(tmp_path)[threads._fingerprint()].values()) == [2]


@pytest.mark.parametrize("looks, kept", [([1, 0, 0, 0, 0], True), ([0, 1, 1, 1, 0], False)])
def test_a_trial_is_spoilt_by_a_process_seen_in_most_looks_after_it(policy, monkeypatch, tmp_path, looks, kept):
    """After a trial, other processes' runnable threads are looked at LOOKS times: a
    thread seen in one look (a kernel thread's few milliseconds) does not spoil it; one
    seen in most does. Before, one look decided, and a spoilt trial kept its shape on
    one thread for RETRIAL_S (a short benchmark's whole timed window)."""
    sets, cost, reads = policy
    monkeypatch.setattr(threads, "_quiet_after", _REAL_QUIET_AFTER)
    monkeypatch.setattr(threads, "_cores", lambda: 2)
    monkeypatch.setattr(threads, "_runnable_others", lambda proc="/proc": looks.pop(0))
    monkeypatch.setattr(threads.time, "sleep", lambda s: None)
    cost[2] = 0.5e-4
    threads.matmul(*_operands(256, 64, 256))
    assert looks == []
    assert threads._STATE["current"] == (2 if kept else 1)
    assert list(threads.gemm_choices().values()) == ([2] if kept else [])
    assert (tmp_path / "blas_threads.json").exists() == kept


def test_the_trace_says_why_each_gemm_got_its_threads(policy, monkeypatch):
    sets, cost, reads = policy
    now = [1000.0]
    monkeypatch.setattr(threads, "_now", lambda: now[0])
    rec = threads.trace()
    try:
        a, b = _operands(256, 64, 256)
        cost[2] = 0.5e-4
        threads.matmul(a, b)
        threads.matmul(a, b)
        _new_process(monkeypatch)
        threads.matmul(a, b)
        monkeypatch.setattr(threads, "_machine_quiet", lambda now, others=None: False)
        threads.matmul(a, b)
        threads.matmul(*_operands(8, 8, 8))                 # below FLOOR_MACS: not counted
        assert rec["calls"] == {("(256, 64)@(64, 256)", 2, "trial"): 2, ("(256, 64)@(64, 256)", 2, "cache"): 1,
                                ("(256, 64)@(64, 256)", 1, "busy"): 1}
        assert [(t["verdict"], t["kept"]) for t in rec["trials"]] == [(2, True)]
        assert len(rec["trials"][0]["times_us"]) == len(TRIAL)
    finally:
        assert threads.trace(False) is rec and threads._TRACE is None


def test_shapes_layouts_and_out_buffers_are_measured_apart(policy, monkeypatch):
    sets, cost, reads = policy
    now = [1000.0]
    monkeypatch.setattr(threads, "_now", lambda: now[0])
    a, b = _operands(256, 64, 256)
    at, bt = np.asfortranarray(a), np.asfortranarray(b)  # transposed operands: other BLAS calls
    cost[2] = 0.5e-4
    threads.matmul(a, b)
    cost[2] = 2e-4
    for _ in range(2):                             # (a one-thread verdict is kept at the second)
        threads.matmul(at, b)
        threads.matmul(a, bt, out=np.empty((256, 256), np.float32))
        now[0] += threads.RETRIAL_S
    choices = threads.gemm_choices()
    assert sorted(choices.values()) == [1, 1, 2] and len(choices) == 3
    sets.clear()
    for x in (at, a, at, at):
        threads.matmul(x, b)
    assert sets == [2, 1]                          # switched only when the wanted count changes


def test_a_decision_is_read_by_the_next_process_and_used_from_its_first_call(policy, monkeypatch, tmp_path):
    sets, cost, reads = policy
    cost[2] = 0.5e-4
    a, b = _operands(256, 64, 256)
    threads.matmul(a, b)
    (fp, entries), = _cache_file(tmp_path).items()
    assert fp == threads._fingerprint() and "fake openblas" in fp and list(entries.values()) == [2]
    _new_process(monkeypatch)
    reads.clear()
    sets.clear()
    np.testing.assert_array_equal(threads.matmul(a, b), np.matmul(a, b))
    assert reads == [] and sets == [2]             # no trial: run 1's decision from the first call
    monkeypatch.setitem(threads._STATE, "blas", "another openblas threads=2")   # another machine
    _new_process(monkeypatch)
    threads.matmul(a, b)
    assert len(reads) == 2 * len(TRIAL) and len(_cache_file(tmp_path)) == 2


def test_decisions_merge_with_entries_another_process_wrote(policy, tmp_path):
    sets, cost, reads = policy
    cost[2] = 0.5e-4
    a, b = _operands(256, 64, 256)
    threads.matmul(a, b)                           # this process read the cache (empty)
    data = _cache_file(tmp_path)
    data["other machine"] = {"k": 2}
    data[threads._fingerprint()]["another shape"] = 2
    (tmp_path / "blas_threads.json").write_text(json.dumps(data))
    threads.matmul(*_operands(256, 65, 256))
    data = _cache_file(tmp_path)
    assert data["other machine"] == {"k": 2} and len(data[threads._fingerprint()]) == 3


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"%s": [2]}', '{"%s": {"%s": "2"}}'])
def test_a_corrupt_cache_is_ignored_and_replaced(policy, monkeypatch, tmp_path, content):
    sets, cost, reads = policy
    cost[2] = 0.5e-4
    a, b = _operands(256, 64, 256)
    threads.matmul(a, b)
    skey, = _cache_file(tmp_path)[threads._fingerprint()]
    (tmp_path / "blas_threads.json").write_text(content.replace("%s", threads._fingerprint(), 1)
                                                .replace("%s", skey))
    _new_process(monkeypatch)
    reads.clear()
    np.testing.assert_array_equal(threads.matmul(a, b), np.matmul(a, b))
    assert len(reads) == 2 * len(TRIAL)            # the bad entry was not used: timed again
    assert _cache_file(tmp_path)[threads._fingerprint()] == {skey: 2}


def test_an_unwritable_cache_keeps_the_decision_in_the_process(policy, monkeypatch, tmp_path):
    sets, cost, reads = policy
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("TAPEFLOW_CACHE_DIR", str(tmp_path / "file"))   # a file where a directory should be
    cost[2] = 0.5e-4
    a, b = _operands(256, 64, 256)
    threads.matmul(a, b)
    threads.matmul(a, b)
    assert list(threads.gemm_choices().values()) == [2] and len(reads) == 2 * len(TRIAL)


def test_the_cache_file_is_replaced_whole_or_not_at_all(policy, monkeypatch, tmp_path):
    """A failing write leaves the previous file as it was and no temporary file behind."""
    sets, cost, reads = policy
    cost[2] = 0.5e-4
    threads.matmul(*_operands(256, 64, 256))
    before = (tmp_path / "blas_threads.json").read_text()

    def fail(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(threads.os, "replace", fail)
    threads.matmul(*_operands(256, 65, 256))
    assert (tmp_path / "blas_threads.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blas_threads.json"]
    assert len(threads.gemm_choices()) == 2


def test_a_trial_spoilt_by_load_is_discarded_and_tried_again_later(policy, monkeypatch, tmp_path):
    """Another process ran during the trial: its timing is not recorded, this call runs on
    one thread, and the shape is timed again RETRIAL_S later; a decided shape is never
    timed again."""
    sets, cost, reads = policy
    now = [1000.0]
    monkeypatch.setattr(threads, "_now", lambda: now[0])
    monkeypatch.setattr(threads, "_quiet_after", lambda: False)
    cost[2] = 3e-4                                 # two threads looked slow under load
    a, b = _operands(256, 64, 256)
    threads.matmul(a, b)
    assert sets == TRIAL + [1] and threads.gemm_choices() == {}
    assert not (tmp_path / "blas_threads.json").exists()
    reads.clear()
    now[0] += threads.RETRIAL_S - 0.1
    threads.matmul(a, b)
    assert reads == [] and threads._STATE["current"] == 1   # not yet
    monkeypatch.setattr(threads, "_quiet_after", lambda: True)
    cost[2] = 0.5e-4
    now[0] += 0.2
    threads.matmul(a, b)
    assert len(reads) == 2 * len(TRIAL) and list(threads.gemm_choices().values()) == [2]
    assert list(_cache_file(tmp_path)[threads._fingerprint()].values()) == [2]
    now[0] += 1e6
    threads.matmul(a, b)
    assert len(reads) == 2 * len(TRIAL)


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
    threads.matmul(a, b)                           # quiet again: the trial runs
    assert len(reads) == 2 * len(TRIAL) and list(threads.gemm_choices().values()) == [2]


def test_intra_op_setting_caps_the_threads_whatever_the_load(policy, monkeypatch, tmp_path):
    """Under the user's count a trial runs busy or not (as in TF) and decides for this
    process, but a busy trial is not written to the cache."""
    sets, cost, reads = policy
    a, b = _operands(256, 256, 256)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    threads.matmul(a, b)                           # one thread, untimed
    assert sets == [1] and reads == [] and threads._CHOICE == {}
    tf.config.threading.set_intra_op_parallelism_threads(8)
    monkeypatch.setattr(threads, "_machine_quiet", lambda now, others=None: False)
    cost[2] = 0.5e-4
    threads.matmul(a, b)                           # timed between 1 and BLAS's 2
    threads.matmul(a, b)
    assert sets == [1] + [2, 1] * threads.SAMPLES + [2] and len(reads) == 2 * len(TRIAL)
    assert list(threads.gemm_choices().values()) == [2] and threads._STATE["current"] == 2
    assert not (tmp_path / "blas_threads.json").exists()
    threads.matmul(*_operands(8, 8, 8))            # tiny GEMMs stay on one
    assert threads._STATE["current"] == 1


def test_gemms_past_the_ceiling_run_on_all_threads_unmeasured_unless_busy(policy, monkeypatch):
    sets, cost, reads = policy
    monkeypatch.setattr(threads, "CEIL_MACS", 256 * 64 * 256)
    a, b = _operands(256, 64, 256)
    threads.matmul(a, b)
    monkeypatch.setattr(threads, "_machine_quiet", lambda now, others=None: False)
    threads.matmul(a, b)
    assert sets == [2, 1] and reads == [] and threads._CHOICE == {}


def test_cache_location_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TAPEFLOW_CACHE_DIR", str(tmp_path / "t"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert threads._cache_path() == str(tmp_path / "t" / "blas_threads.json")
    monkeypatch.delenv("TAPEFLOW_CACHE_DIR")
    assert threads._cache_path() == str(tmp_path / "x" / "tapeflow" / "blas_threads.json")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert threads._cache_path() == str(tmp_path / "h" / ".cache" / "tapeflow" / "blas_threads.json")


# --- real OpenBLAS, in fresh processes ------------------------------------------------------
_REAL = (
    "import numpy as np, tapeflow as tf\n"
    "from tapeflow.util import threads\n"
    "from threadpoolctl import threadpool_limits\n"
    "threads._machine_quiet = lambda now, others=None: True\n"   # as on an idle machine
    "threads._quiet_after = lambda: {after}\n"
    "clock, calls = [0.0], []\n"
    "def timer():\n"                                             # two threads look twice as fast
    "    calls.append(1)\n"
    "    clock[0] += 1e-4 / threads._STATE['current'] * (len(calls) % 2 == 0)\n"
    "    return clock[0]\n"
    "threads._timer = timer\n"
    "rng = np.random.default_rng(0)\n"
    "a, b = (rng.standard_normal(s).astype(np.float32) for s in ((256, 40), (40, 256)))\n"
    "got = [threads.matmul(a, b) for _ in range(2)]\n"
    "want = {{}}\n"
    "for n in (1, 2):\n"
    "    with threadpool_limits(n, 'blas'):\n"
    "        want[n] = np.matmul(a, b)\n"
    "same = np.array_equal(want[1], want[2])\n"                 # equal with some BLAS kernels
    "print(threads._STATE['many'], len(calls), *['any' if same and np.array_equal(g, want[1]) else"
    " next((n for n in (1, 2) if np.array_equal(g, want[n])), 0) for g in got])\n")


def test_a_run_traced_from_the_environment_writes_its_record_at_exit(tmp_path):
    path = tmp_path / "trace.json"
    many = _run("import numpy as np\n"
                "from tapeflow.util import threads\n"
                "a = np.ones((256, 256), np.float32)\n"
                "threads.matmul(a, a)\n"
                "print(threads._STATE['many'])\n", TAPEFLOW_BLAS_TRACE=str(path), TAPEFLOW_CACHE_DIR=str(tmp_path))
    if int(many) < 2:
        pytest.skip("needs a BLAS pool of 2 threads or more (one thread reads no load)")
    rec = json.loads(path.read_text())
    assert [c[0] for c in rec["calls"]] == ["(256, 256)@(256, 256)"] and rec["calls"][0][3] == 1
    assert len(rec["readings"]) == 1 and "own_states" in rec["readings"][0]
    line = threads.trace_summary(str(path))
    assert line.startswith(f"{path}: calls per thread count {{{rec['calls'][0][1]}: 1}}") and "1 readings" in line


def test_program_results_come_from_one_thread_or_the_decided_count(tmp_path):
    """With real OpenBLAS: a spoilt trial leaves the program's product on one thread; a
    kept one gives the decided count's product from the first call; and the next process
    reads the decision and gives the same bits without timing anything. Where 1- and
    2-thread sgemm differ in the last bits (the AVX2 EPYC hosts of earlier runs) the bits
    say which count ran; where they are equal (OpenBLAS's SkylakeX kernel on an AVX-512
    EPYC) the product reads "any" and only the timing counts and the kept decision are
    checked."""
    env = {"TAPEFLOW_CACHE_DIR": str(tmp_path)}
    many, *rest = _run(_REAL.format(after=False), **env).split()
    if many != "2":
        pytest.skip("needs a 2-thread OpenBLAS pool")

    def bits(n):
        return ["any", "any"] if rest[1:] == ["any", "any"] else [n, n]
    assert rest == [str(2 * len(TRIAL)), *bits("1")]   # timed twice (1 call each), both 1-thread bits
    assert _run(_REAL.format(after=True), **env).split() == ["2", str(2 * len(TRIAL)), *bits("2")]
    assert _run(_REAL.format(after=True), **env).split() == ["2", "0", *bits("2")]
    assert json.loads((tmp_path / "blas_threads.json").read_text())  # the decision was kept
