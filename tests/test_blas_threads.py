"""The matmul kernel's BLAS thread policy (tapeflow/util/threads.py): values unchanged,
tiny GEMMs single-threaded, the user's environment respected."""
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
        "a = np.random.default_rng(0).standard_normal((64, 150)).astype(np.float32)\n"
        "b = np.random.default_rng(1).standard_normal((150, 100)).astype(np.float32)\n"
        "r = tf.matmul(a, b).numpy()\n"
        "assert np.array_equal(r, np.matmul(a, b))\n"
        "blas = [i for i in threadpool_info() if i['internal_api'] == 'openblas']\n"
        "print(threads.blas_threads(), blas[0]['num_threads'] if blas else None)\n")
    tf_set, lib = out.split()
    if lib == "None":
        pytest.skip("NumPy is not linked against OpenBLAS here")
    assert tf_set == "1" and lib == "1"


@pytest.mark.parametrize("env", [{"OPENBLAS_NUM_THREADS": "2"}, {"TAPEFLOW_BLAS_THREADS": "default"}])
def test_users_choice_leaves_blas_alone(env):
    out = _run("import numpy as np, tapeflow as tf\n"
               "from tapeflow.util import threads\n"
               "tf.matmul(np.ones((4, 4), np.float32), np.ones((4, 4), np.float32))\n"
               "print(threads.blas_threads())\n", **env)
    assert out.strip() == "None"


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
