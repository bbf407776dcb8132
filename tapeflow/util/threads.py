"""BLAS threads per GEMM: measured per shape on the machine it runs on.

OpenBLAS splits a GEMM over all cores and its threads spin at a barrier until
every part is done. When another process holds a core, the part scheduled on
it waits for a time slice, and the whole GEMM waits with it: on 2 cores beside
one busy process a 64x150 @ 150x100 product went from 35 us to 13 ms (the book
Gridworld preset: 14 s quiet, 54 s beside a busy loop). A second thread gains
at most 2x, and only on GEMMs large enough to amortise the split; it can lose
hundreds of times. Where it starts to pay depends on the CPU, the BLAS kernels
and the shape, not on the multiply-add count alone: on a 2-core Haswell two
threads won from 16M-100M multiply-adds, on a 2-core AMD EPYC from ~1M, and
there 256x17 @ 17x256 (1.1M) still lost (36 vs 42 us) while 256x23 @ 23x256
(1.5M) won by 1.2x. No constant is right on both, so each GEMM shape is timed:

* below ``FLOOR_MACS`` multiply-adds a GEMM runs on one thread, unmeasured
  (OpenBLAS itself runs GEMMs of up to 262,144 multiply-adds on one thread);
  from ``CEIL_MACS`` up on all threads, unmeasured (while the machine is quiet):
  there two threads won on every machine measured, and a one-thread trial
  call would cost tens of milliseconds;
* while another process keeps the cores busy (below), every GEMM runs on one
  thread and nothing is measured;
* else the first ``2 * (1 + SAMPLES)`` calls of each shape (operand shapes,
  strides, dtypes: a transposed operand is a different BLAS call) alternate
  one and all threads, each timed with ``perf_counter``; the first pair warms
  up, then the shape keeps all threads only if their fastest call beats the
  fastest one-thread call by ``MARGIN`` (a tie goes to one thread: it cannot
  collapse on a shared machine and leaves the other core to the rest of the
  step). The calls are the program's own, in place: what a second thread
  costs there (waking a sleeping BLAS worker, a core held by numba's OpenMP
  workers after a parallel loop) is in the timing. All shapes are timed
  again ``RETRIAL_S`` seconds after the first trial, then at doubling
  intervals up to ``RETRIAL_MAX_S``: a trial spoilt by a burst of load (which
  makes two threads look slow) is corrected, and a long run follows the
  machine's conditions.

Spare core means: the runnable threads of *other* processes, averaged over the
last seconds, are fewer than ``cores - 1.5`` (our own running thread takes one
core). On Linux this is /proc/loadavg's count of runnable threads minus this
process's own runnable threads (/proc/self/task), read at most once a second.
The 1-minute load average cannot be used for this: it counts our own BLAS
threads, so two threads running on a quiet 2-core machine lift it past the
limit and switch themselves off a minute later (and on again once it decayed: a
long training run flipped between one and two threads), and it still shows a
process that ended a minute ago. Other platforms fall back to the load average
(all threads while it is below ``cores - 0.5``).

Results: OpenBLAS's threaded sgemm/dgemm do not round like its one-thread
path. Both are deterministic, but the partition into per-thread blocks changes
which micro-kernel computes an element, so a 256x17 @ 17x256 float32 product
differs in the last bits in about 6% of its elements between one and two
threads (0.3.31, Haswell kernels on AMD EPYC). Of 37 shapes checked (TD3,
DQN, autoencoder and square ones, every operand layout), every float32 shape
with all three sides >= 17 differed (those with a side of 1-9 did not), and two
float64 ones. So the thread choice, and with it the
last bits of a result, can change with the machine's load and with the
per-shape timings. Bit-reproducible runs set one thread:
``tf.config.threading.set_intra_op_parallelism_threads(1)`` or
``OPENBLAS_NUM_THREADS=1``.

The user's settings: ``tf.config.threading``'s intra-op count, when set, is
the most threads a GEMM gets (capped at BLAS's pool): 1 means every GEMM on one
thread; from 2 shapes are timed as above between one and that many threads, and
the count holds whatever the load, as in TF (and as for tapeflow's parallel
loops). ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` size BLAS's pool, which
is the most threads a GEMM gets, as in OpenBLAS itself (1: BLAS is left alone).
``TAPEFLOW_BLAS_THREADS=default`` in the environment, no threadpoolctl (``pip
install "tapeflow[threads]"``) or a NumPy not built on OpenBLAS: matmul is plain
``np.matmul`` and BLAS is left alone. The thread count is switched only when
the wanted count changes (~0.7 us). Note that the setting is process-wide:
NumPy matmuls outside tapeflow also see it.
"""
from __future__ import annotations

import math
import os
import time

import numpy as np

#: GEMMs below this many multiply-adds run on one thread without being timed: two
#: threads never paid there (and OpenBLAS splits none up to 262,144 itself)
FLOOR_MACS = 1 << 18
#: GEMMs from this many multiply-adds up run on all threads without being timed (the
#: Haswell crossover was 16M-100M; the autoencoder's 10000x784x200 is 1.6G)
CEIL_MACS = 1 << 27
#: timed calls per thread count and shape, after one warm-up call of each
SAMPLES = 3
#: all threads are kept for a shape only when their best call takes less than this
#: fraction of the best one-thread call
MARGIN = 0.9

#: seconds from the first trial until all shapes are timed again; the interval then
#: doubles up to RETRIAL_MAX_S (a trial is ~8 calls per shape: a negligible share)
RETRIAL_S = 4.0
RETRIAL_MAX_S = 256.0

#: seconds over which other processes' runnable threads are averaged (a burst of
#: a few hundred milliseconds does not switch threads; a busy process does within ~2 s)
OTHERS_WINDOW_S = 2.0

_STATE = {"set": None, "many": 1, "current": None, "load_at": -1.0, "others": None, "quiet": False,
          "intra": None, "retrial_at": None, "retrial_s": RETRIAL_S}
#: per GEMM key: the chosen thread count (int), or the list of timings of its trial so far
_CHOICE = {}
#: the trial's clock and the clock of the re-trials (tests inject fake ones)
_timer = time.perf_counter
_now = time.monotonic


def _runnable_others(proc="/proc"):
    """Runnable threads of other processes right now (Linux), or None where unknown."""
    try:
        with open(f"{proc}/loadavg") as f:
            running = int(f.read().split()[3].split("/")[0])
        own = 0
        for tid in os.listdir(f"{proc}/self/task"):
            try:
                with open(f"{proc}/self/task/{tid}/stat") as f:
                    st = f.read()
            except OSError:  # the thread ended meanwhile
                continue
            # "tid (comm) state ...": comm may itself hold ")" and spaces
            own += st[st.rindex(")") + 2] == "R"
        return max(0, running - own)
    except (OSError, ValueError, IndexError):
        return None


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _controller():
    """(set_num_threads, pool size), or None to leave BLAS alone. The pool is what
    OPENBLAS_NUM_THREADS / OMP_NUM_THREADS asked for, else the core count."""
    if os.environ.get("TAPEFLOW_BLAS_THREADS", "").lower() == "default":
        return None
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    libs = ThreadpoolController().select(internal_api="openblas").lib_controllers
    if not libs:
        return None
    lib = libs[0]
    return lib.set_num_threads, max(1, int(lib.num_threads))


def _machine_quiet(now, others=None):
    """Is a core spare for a second BLAS thread? ``now``: monotonic seconds; ``others``:
    a reading of other processes' runnable threads (default: ``_runnable_others()``)."""
    st = _STATE
    dt = now - st["load_at"]
    if dt > 1.0:
        st["load_at"] = now
        others = _runnable_others() if others is None else others
        if others is None:
            try:
                load = os.getloadavg()[0]
            except OSError:  # no load average on this platform: assume shared
                load = float("inf")
            # our own running thread counts 1 in the load; a spare core means load < cores - 0.5
            st["quiet"] = load < _cores() - 0.5
            return st["quiet"]
        prev = st["others"]
        keep = 0.0 if prev is None else math.exp(-dt / OTHERS_WINDOW_S)
        st["others"] = others if prev is None else prev * keep + others * (1.0 - keep)
        st["quiet"] = st["others"] < _cores() - 1.5
    return st["quiet"]


def machine_quiet():
    """Has the machine a core to spare for a second thread? (the test above, for
    tapeflow's own parallel loops)."""
    return _machine_quiet(time.monotonic())


def _init():
    from ..config import threading as tf_threading
    _STATE["intra"] = tf_threading.get_intra_op_parallelism_threads
    ctl = _controller()
    if ctl is None:
        _STATE["set"] = False
        return
    _STATE["set"], _STATE["many"] = ctl


def _one():
    """A GEMM below ``FLOOR_MACS``: one thread."""
    if _STATE["set"] is None:
        _init()
    if _STATE["set"] and _STATE["many"] > 1:
        _use(1)


def _use(n):
    if n != _STATE["current"]:
        _STATE["set"](n)
        _STATE["current"] = n


def _decide(times, many):
    """The thread count for a shape from its trial's timings: ``times`` alternate one
    thread, ``many`` threads, starting with one; the first pair is the warm-up."""
    one, more = min(times[2::2]), min(times[3::2])
    return many if more < MARGIN * one else 1


def _gemm(a, b, out, sa, sb, macs):
    """np.matmul on the thread count this GEMM's shape wants (see module doc)."""
    st = _STATE
    if st["set"] is None:
        _init()
    if st["set"] is False or st["many"] == 1:
        return np.matmul(a, b, out=out)
    want, many = st["intra"](), st["many"]
    if want == 1:
        _use(1)
        return np.matmul(a, b, out=out)
    now = _now()
    if want > 1:
        many = min(want, many)         # the user's count: no load guard, as in TF
    elif not _machine_quiet(now):
        _use(1)
        return np.matmul(a, b, out=out)
    if macs >= CEIL_MACS:
        _use(many)
        return np.matmul(a, b, out=out)
    if st["retrial_at"] is None:
        st["retrial_at"] = now + st["retrial_s"]
    elif now >= st["retrial_at"]:
        _CHOICE.clear()
        st["retrial_s"] = min(2 * st["retrial_s"], RETRIAL_MAX_S)
        st["retrial_at"] = now + st["retrial_s"]
    key = (sa, sb, a.strides, b.strides, a.dtype, b.dtype, out is None, many)
    choice = _CHOICE.get(key)
    if type(choice) is int:
        _use(choice)
        return np.matmul(a, b, out=out)
    if choice is None:
        choice = _CHOICE[key] = []
    _use(many if len(choice) % 2 else 1)
    t0 = _timer()
    r = np.matmul(a, b, out=out)
    choice.append(_timer() - t0)
    if len(choice) == 2 * (1 + SAMPLES):
        _CHOICE[key] = _decide(choice, many)
    return r


def matmul(a, b, out=None):
    """``np.matmul`` with the BLAS thread count chosen for this GEMM's shape (see module doc).

    A product over a contraction of length 1 (an outer product: the gradient of a
    layer with one output unit, ``g @ W.T`` with ``W`` of shape (n, 1)) is an
    elementwise multiply with broadcasting: every element is one product, which
    BLAS rounds the same way, and sgemm with k=1 is several times slower than the
    multiply."""
    sa, sb = a.shape, b.shape
    if len(sa) >= 2 and len(sb) >= 2:
        if sa[-1] == 1 and sb[-2] == 1:
            return np.multiply(a, b, out=out)
        macs = sa[-2] * sa[-1] * sb[-1]
        if macs >= FLOOR_MACS:
            return _gemm(a, b, out, sa, sb, macs)
        if _STATE["current"] != 1:
            _one()
    return np.matmul(a, b, out=out)


def blas_threads():
    """The thread count tapeflow last set for BLAS, or None when it leaves BLAS alone."""
    return _STATE["current"] if _STATE["set"] else None


def gemm_choices():
    """{GEMM key: thread count} for the shapes measured so far (for profiles and tests)."""
    return {k: v for k, v in _CHOICE.items() if type(v) is int}
