"""BLAS threads per GEMM: the matmul kernel's guard against oversubscription.

OpenBLAS splits a GEMM over all cores and its threads spin at a barrier until
every part is done. When another process holds a core, the part scheduled on
it waits for a time slice, and the whole GEMM waits with it: on 2 cores beside
one busy process a 64x150 @ 150x100 product went from 35 us to 13 ms (the book
Gridworld preset: 14 s quiet, 54 s beside a busy loop). A second thread gains
at most 2x, and only on GEMMs large enough to amortise the split; it can lose
hundreds of times. So:

* below ``BIG_MACS`` multiply-adds a GEMM always runs on one thread;
* at or above it, all threads only while the machine has a core to spare,
  else one. Spare means: the runnable threads of *other* processes, averaged
  over the last seconds, are fewer than ``cores - 1.5`` (our own running
  thread takes one core). On Linux this is /proc/loadavg's count of runnable
  threads minus this process's own runnable threads (/proc/self/task), read
  at most once a second. The 1-minute load average cannot be used for this:
  it counts our own BLAS threads, so two threads running on a quiet 2-core
  machine lift it past the limit and switch themselves off a minute later
  (and on again once it decayed: a long training run flipped between one and
  two threads), and it still shows a process that ended a minute ago. Other
  platforms fall back to the load average (all threads while it is below
  ``cores - 0.5``).

The thread count is switched only when the wanted count changes, so a run of
same-sized GEMMs pays one shape product and a comparison per call.

The user's explicit choice wins: with ``OPENBLAS_NUM_THREADS``,
``OMP_NUM_THREADS`` or ``TAPEFLOW_BLAS_THREADS=default`` in the environment, or
without threadpoolctl (``pip install "tapeflow[threads]"``) or an OpenBLAS
build of NumPy, matmul is plain ``np.matmul`` and BLAS is left alone. Note that
the setting is process-wide: NumPy matmuls outside tapeflow also see it.
"""
from __future__ import annotations

import math
import os
import time

import numpy as np

# Crossover measured on a quiet 2-core Haswell (sgemm): 2 threads start to win
# between 16M and 100M multiply-adds; below that the split costs what it saves.
BIG_MACS = 1 << 24

#: seconds over which other processes' runnable threads are averaged (a burst of
#: a few hundred milliseconds does not switch threads; a busy process does within ~2 s)
OTHERS_WINDOW_S = 2.0

_STATE = {"set": None, "many": 1, "current": None, "load_at": -1.0, "others": None, "quiet": False}


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
    """(set_num_threads, default thread count), or None to leave BLAS alone."""
    if any(os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")):
        return None
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
    ctl = _controller()
    if ctl is None:
        _STATE["set"] = False
        return
    _STATE["set"], _STATE["many"] = ctl


def _want(macs):
    st = _STATE
    if st["set"] is None:
        _init()
    if st["set"] is False or st["many"] == 1:
        return None
    n = st["many"] if macs >= BIG_MACS and _machine_quiet(time.monotonic()) else 1
    if n != st["current"]:
        st["set"](n)
        st["current"] = n
    return n


def matmul(a, b, out=None):
    """``np.matmul`` with the BLAS thread count chosen for this GEMM's size (see module doc).

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
        if macs >= BIG_MACS or _STATE["current"] != 1:
            _want(macs)
    return np.matmul(a, b, out=out)


def blas_threads():
    """The thread count tapeflow last set for BLAS, or None when it leaves BLAS alone."""
    return _STATE["current"] if _STATE["set"] else None
