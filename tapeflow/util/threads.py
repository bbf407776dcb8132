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
  call would cost tens of milliseconds. Those that ``split_gemm`` can cut into
  pieces at no extra work (the autoencoder's) run as one-thread pieces that
  all threads take in turn, busy machine or not: a slowed thread takes fewer;
* while another process keeps the cores busy (below), every GEMM runs on one
  thread and nothing is measured;
* else each GEMM shape (operand shapes, strides, dtypes: a transposed operand
  is a different BLAS call) is timed once per machine, on the first call that
  meets it: the product of the call's own operands is computed into a scratch
  result ``2 * (1 + SAMPLES)`` times, alternating one and all threads, each
  timed with ``perf_counter``; the first pair warms up, then the shape keeps
  all threads only if their fastest call beats the fastest one-thread call by
  ``MARGIN`` (a tie goes to one thread: it cannot collapse on a shared machine
  and leaves the other core to the rest of the step). Then the program's own
  call runs on the decided count: a trial never makes the program's results.
  A trial is kept only if the machine was quiet before it (the reading below)
  and after it (no other process runnable in most of a few looks right then,
  ``_runnable_now``: a single look saw a kernel thread in ~5% of looks, and
  each discarded trial kept its shape on one thread for ``RETRIAL_S``, a short
  benchmark's whole timed window); else it is discarded, the call runs on one
  thread and the shape is tried again ``RETRIAL_S`` later. A verdict of one
  thread is kept only when a second trial ``RETRIAL_S`` later says so too (the
  shape runs on one thread meanwhile): load the readings cannot see (another
  VM taking this one's CPU time, a burst shorter than a reading) slows the
  many-thread calls more than the one-thread ones, so a spoilt trial says "one
  thread"; on a busy host one trial in a fresh cache set a DQN layer's 200x150
  @ 150x100 (40 us on two threads, 71 on one) to one thread for good. A decided
  shape is not timed again.
* decisions are kept in ``blas_threads.json`` in ``$TAPEFLOW_CACHE_DIR`` (else
  ``$XDG_CACHE_HOME/tapeflow``, else ``~/.cache/tapeflow``), under a
  fingerprint of the machine (CPU model, cores we may run on, OpenBLAS
  version, kernels and pool size), read once per process at its first timed
  GEMM. A new decision is merged with the entries on disk and written to a
  temporary file renamed over the cache, so concurrent processes lose at most
  a decision, never the file. An unreadable, corrupt or unwritable cache is
  ignored (the shapes are timed again). Delete the file to time them anew,
  e.g. after changing the machine's BIOS or power settings.

Spare core means: other processes used fewer than ``cores - 1.5`` cores, on
average over the last seconds (our own running thread takes one core). On Linux
a reading, taken at most once a second, is the CPU time every process used
since the last one (/proc/stat's user, nice and system ticks) less this
process's own (``os.times``), over the wall time between; readings are averaged
with weights decaying over ``OTHERS_WINDOW_S``. A reading covers its whole
interval: a kernel thread that runs a few milliseconds barely moves it, while a
busy neighbour counts ~1 core (beside our one thread) or ~2/3 (beside two:
three runnable threads on two cores). Counting other processes' runnable
threads at one instant instead (/proc/loadavg's count less this process's
runnable threads) reads a quiet machine as busy too often: kdamond (a kernel
thread) or the tools' I/O threads were runnable in 5-8% of such looks (taken
between TD3 steps and at processes' first readings, on a shared machine), and
a thread of ours that /proc/loadavg counts but that is asleep when
/proc/self/task is read a moment later counts as another process's. When such
a look was a process's first reading, taken as it stood, it set one thread for
the first two readings: a short benchmark's whole timed window, every 256^3
GEMM at one-thread speed (an idle machine, five fresh TD3 processes: one first
look saw a thread, two busy readings, 8.2 ms per update; the others 5.7-7.4).
Only where no interval can tell, at the first reading (the first interval then
replaces it) and right after a trial, is the machine looked at: the median of
``LOOKS`` looks ``LOOK_GAP_S`` apart. A forked child
starts its readings anew. The 1-minute load average cannot be used for this:
it counts our own BLAS threads, so two threads running on a quiet 2-core
machine lift it past the limit and switch themselves off a minute later (and on
again once it decayed: a long training run flipped between one and two
threads), and it still shows a process that ended a minute ago. Other
platforms fall back to the load average (all threads while it is below
``cores - 0.5``).

Results: OpenBLAS's threaded sgemm/dgemm do not round like its one-thread
path. Both are deterministic, but the partition into per-thread blocks changes
which micro-kernel computes an element, so a 256x17 @ 17x256 float32 product
differs in the last bits in about 6% of its elements between one and two
threads (0.3.31, Haswell kernels on AMD EPYC). Of 37 shapes checked (TD3,
DQN, autoencoder and square ones, every operand layout), every float32 shape
with all three sides >= 17 differed (those with a side of 1-9 did not), and two
float64 ones. So the thread count decides the last bits of a result. While the
machine is quiet, a shape's count comes from the cache (or from its trial, run
before the program's first call of it), so runs with the same seed on the same
machine give identical results, the first run included. Under load GEMMs drop
to one thread (and a shape not yet decided stays on one), so results can change
in the last bits. Bit-reproducible runs under load too set one thread:
``tf.config.threading.set_intra_op_parallelism_threads(1)`` or
``OPENBLAS_NUM_THREADS=1``.

The user's settings: ``tf.config.threading``'s intra-op count, when set, is
the most threads a GEMM gets (capped at BLAS's pool): 1 means every GEMM on one
thread; from 2 shapes are timed as above between one and that many threads, and
the count holds whatever the load, as in TF (and as for tapeflow's parallel
loops); a trial taken under load then decides for this process only, it is not
written to the cache. ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` size
BLAS's pool, which is the most threads a GEMM gets, as in OpenBLAS itself (1:
BLAS is left alone).
``TAPEFLOW_BLAS_THREADS=default`` in the environment, no threadpoolctl (``pip
install "tapeflow[threads]"``) or a NumPy not built on OpenBLAS: matmul is plain
``np.matmul`` and BLAS is left alone. The thread count is switched only when
the wanted count changes (~0.7 us). Note that the setting is process-wide:
NumPy matmuls outside tapeflow also see it.

Why a GEMM got its threads: ``trace()`` records, per shape, thread count and
reason (cache, trial, busy, ...), the load readings with their raw inputs and
the trials; ``TAPEFLOW_BLAS_TRACE=FILE`` records a whole run into FILE, and
``trace_summary(FILE)`` sums a file up in a line (to compare runs).
"""
from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time

import numpy as np

from . import split_gemm
from ..core.dtypes import BF16 as _BF16
from .cache import cache_dir
from . import gemm_kernels as _gemm_kernels

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
#: seconds after a trial spoilt by load until the shape is tried again
RETRIAL_S = 4.0

#: seconds over which other processes' CPU use is averaged (a burst of a few hundred
#: milliseconds does not switch threads; a busy process does within ~2 s)
OTHERS_WINDOW_S = 2.0
#: looks at other processes' runnable threads where no interval can tell (a first
#: reading, right after a trial), and the seconds between them
LOOKS = 5
LOOK_GAP_S = 0.002

_STATE = {"set": None, "many": 1, "current": None, "load_at": -1.0, "others": None, "quiet": False,
          "mark": None, "looked": False,
          "intra": None, "blas": ""}
#: per GEMM key: the chosen thread count (int), or the monotonic time before which a
#: shape whose trial was spoilt by load, or said one thread once, is not tried again (float)
_CHOICE = {}
#: GEMM keys whose one kept trial said one thread (a second must say so before it is kept)
_ONE_ONCE = set()
#: this machine's decisions in the cache file, {text key: count}; None until first needed
_DISK = None
#: the trial's clock and the clock of the load readings (tests inject fake ones)
_timer = time.perf_counter
_now = time.monotonic
#: the record ``trace()`` keeps while on, else None
_TRACE = None


def _task_states(task_dir):
    """{tid: (comm, state letter)} of the threads under ``task_dir`` (a /proc/PID/task)."""
    got = {}
    for tid in os.listdir(task_dir):
        try:
            with open(f"{task_dir}/{tid}/stat") as f:
                st = f.read()
        except OSError:  # the thread ended meanwhile
            continue
        # "tid (comm) state ...": comm may itself hold ")" and spaces
        end = st.rindex(")")
        got[tid] = (st[st.index("(") + 1:end], st[end + 2])
    return got


def _runnable_others(proc="/proc"):
    """Runnable threads of other processes right now (Linux), or None where unknown."""
    try:
        with open(f"{proc}/loadavg") as f:
            running = int(f.read().split()[3].split("/")[0])
        states = _task_states(f"{proc}/self/task")
        own = sum(s == "R" for _, s in states.values())
        if _TRACE is not None:
            # our threads scanned again: one that changed state since the first scan shows a race
            _TRACE["raw"] = {"running": running, "own": own, "own_states": sorted(states.values()),
                             "own_again": sorted(_task_states(f"{proc}/self/task").values()),
                             "others_R": _others_runnable(proc)}
        return max(0, running - own)
    except (OSError, ValueError, IndexError):
        return None


def _others_runnable(proc="/proc"):
    """"pid/tid comm" of every runnable thread of other processes, scanned right after a
    reading (for the trace only: a scan of every task takes milliseconds)."""
    me = str(os.getpid())
    got = []
    for pid in os.listdir(proc):
        if pid.isdigit() and pid != me:
            try:
                states = _task_states(f"{proc}/{pid}/task")
            except OSError:  # the process ended meanwhile
                continue
            run = [f"{pid}/{tid} {c}" for tid, (c, st) in states.items() if st == "R"]
            if run:
                try:
                    with open(f"{proc}/{pid}/cmdline", "rb") as f:
                        kernel = not f.read(1)     # kernel threads have no command line
                except OSError:
                    kernel = False
                got += [r + (" [kernel]" if kernel else "") + (" [parent]" if int(pid) == os.getppid() else "")
                        for r in run]
    return got


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _controller():
    """(set_num_threads, pool size, description), or None to leave BLAS alone. The pool
    is what OPENBLAS_NUM_THREADS / OMP_NUM_THREADS asked for, else the core count."""
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
    n = max(1, int(lib.num_threads))
    # OpenBLAS's own openblas_set_num_threads (the ctypes function threadpoolctl's
    # set_num_threads looks up, affixes and all, on every call and then calls): a DQN
    # step switches between one and two threads four times, ~0.3 us of Python each
    setter = lib.set_num_threads
    symbol = getattr(lib, "_get_symbol", None)
    if symbol is not None:
        try:
            setter = symbol("openblas_set_num_threads") or setter
        except Exception:  # pragma: no cover - another threadpoolctl: its public method
            pass
    return setter, n, f"openblas {lib.version} {getattr(lib, 'architecture', '')} threads={n}"


#: /proc/stat's clock ticks per second
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_used(proc="/proc"):
    """(CPU seconds every process used since boot: /proc/stat's user, nice and system
    time over all cores; CPU seconds this process used), or None where unknown. Both
    count whole clock ticks (10 ms), enough over a reading's second or more."""
    try:
        with open(f"{proc}/stat") as f:
            head = f.readline().split()
        if head[0] != "cpu":
            return None
        used = (int(head[1]) + int(head[2]) + int(head[3])) / _TICK
    except (OSError, ValueError, IndexError):
        return None
    return used, _own_cpu()


def _own_cpu():
    t = os.times()
    return t.user + t.system


def _runnable_now():
    """Other processes' runnable threads right now, where no interval can tell (a first
    reading, right after a trial): the median of ``LOOKS`` looks ``LOOK_GAP_S`` apart, so
    that a kernel thread or a reader's race seen in one look does not decide (None where
    unknown)."""
    looks = []
    for i in range(LOOKS):
        if i:
            time.sleep(LOOK_GAP_S)
        looks.append(_runnable_others())
        if looks[-1] is None:
            return None
    return sorted(looks)[LOOKS // 2]


def _reading(now):
    """Cores other processes used since the last reading (their CPU time over the
    wall time between); at the first reading, which has no interval, their runnable
    threads (``_runnable_now``), marked as a first look. None where unknown."""
    st = _STATE
    cpu = _cpu_used()
    if cpu is None:
        return None
    prev, st["mark"] = st["mark"], (now, *cpu)
    if prev is None:
        others = _runnable_now()
        st["looked"] = others is not None
        return others
    t0, used0, own0 = prev
    # ticks are counted apart per core and for this process: the difference can dip below 0
    others = max(0.0, (cpu[0] - used0) - (cpu[1] - own0)) / max(now - t0, 1e-3)
    if _TRACE is not None:
        _TRACE["raw"] = {"used_s": round(cpu[0] - used0, 3), "own_s": round(cpu[1] - own0, 3),
                         "wall_s": round(now - t0, 3)}
    return others


def _machine_quiet(now, others=None):
    """Is a core spare for a second BLAS thread? ``now``: monotonic seconds; ``others``:
    a reading of other processes' load in cores (default: ``_reading(now)``)."""
    st = _STATE
    dt = now - st["load_at"]
    if dt > 1.0:
        st["load_at"] = now
        others = _reading(now) if others is None else others
        if others is None:
            try:
                load = os.getloadavg()[0]
            except OSError:  # no load average on this platform: assume shared
                load = float("inf")
            # our own running thread counts 1 in the load; a spare core means load < cores - 0.5
            st["quiet"] = load < _cores() - 0.5
            return st["quiet"]
        prev = st["others"]
        if prev is None or st["looked"]:
            # the first reading; or the first measured interval, which replaces the look the
            # first reading took (a look sees an instant, the interval all of it)
            st["looked"] = prev is None and st["looked"]
            st["others"] = others
        else:
            keep = math.exp(-dt / OTHERS_WINDOW_S)
            st["others"] = prev * keep + others * (1.0 - keep)
        st["quiet"] = st["others"] < _cores() - 1.5
        if _TRACE is not None:
            _TRACE["readings"].append(dict(_TRACE.pop("raw", {}), t=round(now - _TRACE["t0"], 4),
                                           others=others, smoothed=st["others"], quiet=st["quiet"]))
    return st["quiet"]


def _forget_readings():
    # a forked child's CPU time starts at 0: its first reading is a first look again
    _STATE.update(load_at=-1.0, others=None, mark=None, looked=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_readings)


def _quiet_after():
    """After a trial: does no other process run right now? The reading that let the
    trial start is up to a second old, so a process that started during the trial is
    seen here (in most of the looks of ``_runnable_now``: one look's kernel thread does
    not spoil the trial); without /proc, the load-average test."""
    others = _runnable_now()
    if others is None:
        return _machine_quiet(_now())
    return others < _cores() - 1.5


def machine_quiet():
    """Has the machine a core to spare for a second thread? (the test above, for
    tapeflow's own parallel loops)."""
    return _machine_quiet(_now())


def _init():
    from ..config import threading as tf_threading
    _STATE["intra"] = tf_threading.get_intra_op_parallelism_threads
    ctl = _controller()
    if ctl is None:
        _STATE["set"] = False
        return
    _STATE["set"], _STATE["many"], _STATE["blas"] = ctl


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


# --- the decisions' cache file ---------------------------------------------------------
def _cache_path():
    return os.path.join(cache_dir(), "blas_threads.json")


def _fingerprint():
    """What a decision holds for: the CPU model, the cores we may run on, the BLAS build
    and its pool (a decision timed on another CPU or BLAS kernel says nothing here)."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    if not model:
        import platform
        model = platform.processor() or platform.machine()
    return f"{model} | cores={_cores()} | {_STATE['blas']}"


def _read_cache(path):
    """The cache file's {fingerprint: {key: count}}; {} when absent, unreadable or corrupt
    (the cache only saves trials: it must never stop a program)."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _decisions():
    """This machine's decisions from the cache file, read once per process."""
    global _DISK
    if _DISK is None:
        mine = _read_cache(_cache_path()).get(_fingerprint())
        _DISK = {k: v for k, v in mine.items() if type(v) is int and v >= 1} if isinstance(mine, dict) else {}
    return _DISK


def _store(skey, n):
    """Record a decision: merged into the entries on disk (another process may have added
    some since we read them) and written to a temporary file renamed over the cache, so a
    reader never sees a partial file. Failures leave the decision in this process only."""
    _decisions()[skey] = n
    path = _cache_path()
    fp = _fingerprint()
    try:
        data = _read_cache(path)
        mine = data.get(fp)
        data[fp] = mine = mine if isinstance(mine, dict) else {}
        mine[skey] = n
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".blas_threads.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


# --- the per-shape choice ------------------------------------------------------------------
def _decide(times, many):
    """The thread count for a shape from its trial's timings: ``times`` alternate one
    thread, ``many`` threads, starting with one; the first pair is the warm-up."""
    one, more = min(times[2::2]), min(times[3::2])
    return many if more < MARGIN * one else 1


def _trial(a, b, out, many):
    """Time the product on one and on ``many`` threads into a scratch result, which is
    discarded: the program's own result comes from the decided count only."""
    scratch = None if out is None else np.empty_like(out)
    times = []
    for n in [1, many] * (1 + SAMPLES):
        _use(n)
        t0 = _timer()
        np.matmul(a, b, out=scratch)
        times.append(_timer() - t0)
    if _TRACE is not None:
        _TRACE["times"] = [round(t * 1e6, 1) for t in times]
    return _decide(times, many)


def _choose(key, a, b, out, many, quiet, forced, now):
    """The thread count for a GEMM key not decided in this process: from the cache file,
    else from a trial (kept if the machine was quiet before and after it, else 1 thread
    now and a new trial ``RETRIAL_S`` later; one thread is kept only when two kept trials
    say so; under the user's intra-op count a spoilt trial still decides for this
    process, as the count holds whatever the load)."""
    retry_at = _CHOICE.get(key)
    if retry_at is not None and now < retry_at:
        return _why(key, 1, "waits for a trial")
    sa, sb, sta, stb, _, _, no_out, _ = key
    skey = f"{sa}@{sb} strides={sta},{stb} {a.dtype.str},{b.dtype.str} out={not no_out} threads<={many}"
    n = _decisions().get(skey)
    why = "cache"
    if n is None:
        n = _trial(a, b, out, many)
        kept = quiet and _quiet_after()
        if _TRACE is not None:
            _TRACE["trials"].append({"key": skey, "t": round(now - _TRACE["t0"], 4), "times_us": _TRACE.pop("times"),
                                     "verdict": n, "quiet_before": quiet, "kept": kept,
                                     "after_look": _TRACE.pop("raw", None) if quiet else None})
        if kept:
            if n == 1 and key not in _ONE_ONCE:
                _ONE_ONCE.add(key)     # the first one-thread verdict: confirm it later
                _CHOICE[key] = now + RETRIAL_S
                return _why(key, 1, "trial said 1 once")
            _ONE_ONCE.discard(key)
            _store(skey, n)
            why = "trial"
        elif not forced:
            _CHOICE[key] = now + RETRIAL_S
            return _why(key, 1, "trial spoilt")
        else:
            why = "trial under intra-op count"
    _CHOICE[key] = n
    return _why(key, n, why)


def _gemm(a, b, out, sa, sb, macs):
    """np.matmul on the thread count this GEMM's shape wants (see module doc)."""
    st = _STATE
    if st["set"] is None:
        _init()
    if st["set"] is False:
        return np.matmul(a, b, out=out)
    want, many = st["intra"](), st["many"]
    if macs >= CEIL_MACS:
        how = split_gemm.plan(sa, sb, a.dtype, b.dtype, many)
        if how is not None:
            # pieces that threads take in turn, whatever the load (split_gemm's doc)
            if many > 1:
                _use(1)
            n = min(want, many) if want > 0 else many
            if _TRACE is not None:
                _note(sa, sb, n, "split")
            return split_gemm.matmul(a, b, out, how, n)
    if many == 1:
        if _TRACE is not None:
            _note(sa, sb, 1, "pool of 1")
        return _np_matmul(a, b, out)
    if want == 1:
        n, why = 1, "intra-op count 1"
    else:
        now = _now()
        # the load reading's fast path inline: this is every mid-size GEMM's path, and a call costs ~0.1 us
        quiet = st["quiet"] if now - st["load_at"] <= 1.0 else _machine_quiet(now)
        if want > 1:
            many = min(want, many)     # the user's count: no load guard, as in TF
        if not quiet and want < 1:
            n, why = 1, "busy"
        elif macs >= CEIL_MACS:
            n, why = many, "ceiling"
        else:
            # dtype.num, not the dtype: hashing a dtype costs ~0.5 us (a byte-swapped operand
            # shares its native twin's key; only the thread choice could be off, never a value)
            why = key = (sa, sb, a.strides, b.strides, a.dtype.num, b.dtype.num, out is None, many)
            n = _CHOICE.get(key)
            if type(n) is not int:
                n = _choose(key, a, b, out, many, quiet, want > 1, now)
    if n != st["current"]:
        _use(n)
    if _TRACE is not None:
        _note(sa, sb, n, why)
    # (positional out, the module's own reference: ~0.15 us less than np.matmul's
    # attribute lookup and keyword, on every mid-size GEMM)
    return _np_matmul(a, b, out)


_np_matmul = np.matmul


def _outer(a, b, out):
    """The outer product of a (m, 1) and a (1, n) matrix (into ``out`` where given). The
    native loop runs where the three share a float dtype (``out`` C-ordered, or a new
    array) and numba is imported: compiled code's planned buffers, and eager calls (an
    output layer's input gradient g @ W.T in the lean backward) once a training step's
    optimizer has imported it, so an eager call never pays numba's import. The loop
    (``gemm_kernels``' ``outer``): NumPy's broadcasting multiply of a (256, 1) by a (1, 256)
    float32 array costs 22 us (its inner loop is not the contiguous SIMD one), the loop
    5.5 us, about a write of the result; one product per element, bit-identical."""
    if a.ndim == 2 and b.ndim == 2 and a.dtype == b.dtype and a.dtype.kind == "f" and a.dtype.itemsize >= 4 \
            and (out.shape == (a.shape[0], b.shape[1]) and out.flags.c_contiguous and out.dtype == a.dtype
                 if out is not None else "numba" in sys.modules):
        ks = _gemm_kernels.kernels()
        if ks is not None:
            if out is None:
                out = np.empty((a.shape[0], b.shape[1]), a.dtype)
            # (m, 1) and (1, n) are contiguous whatever their strides: these are views
            ks[2](a.reshape(-1), b.reshape(-1), out)
            return out
    return np.multiply(a, b, out=out)


#: the native loops (gemm_kernels) take 2-D float GEMMs of at least this many
#: multiply-adds (below, the ~2 us of their call ate the gain: the DQN step's
#: 100x200 @ 200x4 TN took 8.7 us on BLAS, 10 us in the loop) ...
NATIVE_MACS = 1 << 17
#: ... with 4 to this many result columns: an output layer h @ W, its input gradient
#: g @ W.T and its weight gradient h.T @ g. At 8 columns BLAS's micro-kernel tile is
#: full: (256, 256) @ (256, 8) took 21-27 us on BLAS, 30-34 in the loop
NARROW = 7
#: ... and, for a C-order ``a`` (dot products), a contraction of at least this length:
#: shorter dots do not pay their reductions and the call ((256, k) @ (k, 6), BLAS vs
#: the loop alone, the call's ~1.5 us aside: k=64 7.7 vs 7.3 us, k=128 13.7 vs 9.7)
DOTS_K = 128


def _skinny(a, b, out):
    """The product by a native loop (gemm_kernels) for a narrow result, or None where
    BLAS does it: another dtype or layout, an ``out`` the loop cannot write, no numba.
    The choice depends on the shapes, the layouts and the dtype only, so a shape gets
    the same loop, and the same bits, eager and compiled. The loops run on the calling
    thread, BLAS's thread count left as it is (OpenBLAS's timed choice for such shapes
    was one thread anyway).

    Where BLAS is kept, measured (2-core AMD EPYC, float32, in TD3's update and alone,
    the loops vs BLAS on one and two threads): short contractions (x @ W1 with x of
    (256, 17 or 23); g @ W.T with W of (256, 6)) and the few rows of x.T @ g: the loop
    was as fast as one BLAS thread and slower than two (45-50 vs 33 us for x @ W1
    alone on an idle host), so where two threads are free BLAS is the faster;
    matrix-vector products (1-3 columns): as fast alone, 2-5 us slower in the update."""
    dt, dtb = a.dtype, b.dtype
    # float32 / float64 by number (NumPy makes equal dtypes that are not the same object:
    # a variable's value had one), in the machine's byte order
    num = dt.num
    if (num != 11 and num != 12) or dtb.num != num or not dt.isnative or not dtb.isnative:
        return None
    m, k = a.shape
    n = b.shape[1]
    # the loops work on blocks of four rows (of the result, or of its transpose) and
    # rows takes k four at a time
    if n < 4 or m < 4 or k < 4:
        return None
    if out is not None:
        fl, dto = out.flags, out.dtype
        if dto.num != num or not dto.isnative or not fl.c_contiguous or not fl.writeable or out.shape != (m, n):
            return None
    fa = a.flags
    if fa.c_contiguous and k >= DOTS_K:
        ks = _gemm_kernels.kernels()
        if ks is None:
            return None
        bt = b.T
        if not bt.flags.c_contiguous:
            bt = np.ascontiguousarray(bt)         # n rows of k: a small copy
        c = np.empty((m, n), dt) if out is None else out
        ks[0](a, bt, c)
        return c
    if fa.f_contiguous:
        ks = _gemm_kernels.kernels()
        if ks is None:
            return None
        # a.T is contiguous along m: a @ b = (b.T @ a.T).T, b.T's n rows against a.T's
        # rows; its n x m result is written into the caller's (m, n) one after
        ct = np.empty((n, m), dt)
        ks[1](b.T, a.T, ct)
        if out is None:
            return ct.T.copy()
        out[...] = ct.T
        return out
    return None


def matmul(a, b, out=None):
    """``np.matmul`` with the BLAS thread count chosen for this GEMM's shape (see module doc).

    2-D float products with 4-7 result columns run as native loops on the calling
    thread (``_skinny``, ``gemm_kernels``): BLAS packs such operands for a micro-kernel
    whose tiles they do not fill, and reaches a fraction of its peak there.

    A product over a contraction of length 1 (an outer product: the gradient of a
    layer with one output unit, ``g @ W.T`` with ``W`` of shape (n, 1)) is an
    elementwise multiply: every element is one product, which BLAS rounds the same
    way, and sgemm with k=1 is several times slower than the multiply (``_outer``)."""
    # every tiny GEMM (a compiled act()'s three) passes here: ~0.1 us of it is the
    # global np.matmul lookup and its out= keyword, hence _np_matmul(a, b, out)
    if a.dtype is _BF16:
        return _bf16_matmul(a, b, out)
    sa, sb = a.shape, b.shape
    if len(sa) >= 2 <= len(sb):
        k = sa[-1]
        if k == 1 and sb[-2] == 1:
            return _outer(a, b, out)
        macs = sa[-2] * k * sb[-1]
        if macs >= NATIVE_MACS and sb[-1] <= NARROW and len(sa) == 2 == len(sb):
            c = _skinny(a, b, out)
            if c is not None:
                return c
        if macs >= FLOOR_MACS:
            return _gemm(a, b, out, sa, sb, macs)
        if _STATE["current"] != 1:
            _one()
    return _np_matmul(a, b, out)


def _bf16_matmul(a, b, out):
    """bfloat16 products as TF's CPU kernel computes them: float32 operands, float32 sums,
    rounded to bfloat16 once (TF 2.21: [[1, 2**-8, 2**-8]] @ ones((3, 1)) is 1.0078125, where
    bfloat16 partial sums would give 1). ml_dtypes' own np.matmul returns float32."""
    c = matmul(a.astype(np.float32), b.astype(np.float32)).astype(_BF16)
    if out is None:
        return c
    out[...] = c
    return out


# --- the trace: what each GEMM ran on and why, and the load readings behind it -------------
def _why(key, n, why):
    """``n``, after noting why key's GEMM got it (tracing only)."""
    if _TRACE is not None:
        _TRACE["why"][key] = why
    return n


def _note(sa, sb, n, why):
    if type(why) is tuple:                 # a shape's key: why it got its count
        why = _TRACE["why"].get(why, "?")
    k = (f"{sa}@{sb}", n, why)
    calls = _TRACE["calls"]
    calls[k] = calls.get(k, 0) + 1


def trace(on=True):
    """Start recording (``on``; a running record starts anew) or stop; returns the record:
    ``calls`` {(shapes, threads, why): count} per GEMM from ``FLOOR_MACS`` up (why:
    split, pool of 1, intra-op count 1, busy (the load guard), ceiling, cache, trial,
    trial said 1 once, trial spoilt, waits for a trial, trial under intra-op count; the
    narrow native loops are not BLAS calls and not counted), ``readings`` (each load
    reading: its time, the CPU seconds behind it (all processes', ours, the wall time
    between) or, for a first reading's look, /proc/loadavg's runnable count, ours, our
    threads' states and the other processes' runnable threads scanned right after; the
    reading, the smoothed count and the verdict) and ``trials`` (times in us, verdict,
    quiet before, kept, the look after). Scanning
    every task at each reading costs milliseconds: a diagnosis tool, off by default.
    ``TAPEFLOW_BLAS_TRACE=FILE`` in the environment records from import and writes the
    record to FILE as JSON at exit."""
    global _TRACE
    old = _TRACE
    _TRACE = {"t0": _now(), "calls": {}, "why": {}, "readings": [], "trials": []} if on else None
    return _TRACE if on else old


def _dump_trace(path):
    rec = _TRACE or {}
    out = {"pid": os.getpid(), "calls": sorted([list(k) + [v] for k, v in rec.get("calls", {}).items()],
                                               key=lambda r: -r[-1]),
           "readings": rec.get("readings", []), "trials": rec.get("trials", [])}
    with open(path, "w") as f:
        json.dump(out, f, indent=1, default=str)


def trace_summary(path):
    """One line for a trace file: GEMM calls per thread count, the reasons for one thread,
    the load readings (busy ones, the first), the trials (kept of all)."""
    with open(path) as f:
        rec = json.load(f)
    per, why1 = {}, {}
    for shapes, n, why, count in rec["calls"]:
        per[n] = per.get(n, 0) + count
        if n == 1:
            why1[why] = why1.get(why, 0) + count
    rd = rec["readings"]
    first = f", first {rd[0]['others']:.2f}" if rd else ""
    return (f"{path}: calls per thread count {dict(sorted(per.items()))}, one thread for {why1}; "
            f"{len(rd)} readings, {sum(not r['quiet'] for r in rd)} busy{first}; "
            f"trials {sum(t['kept'] for t in rec['trials'])} kept of {len(rec['trials'])}")


if os.environ.get("TAPEFLOW_BLAS_TRACE"):
    import atexit
    trace()
    atexit.register(_dump_trace, os.environ["TAPEFLOW_BLAS_TRACE"])


def blas_threads():
    """The thread count tapeflow last set for BLAS, or None when it leaves BLAS alone."""
    return _STATE["current"] if _STATE["set"] else None


def gemm_choices():
    """{GEMM key: thread count} for the shapes measured so far (for profiles and tests)."""
    return {k: v for k, v in _CHOICE.items() if type(v) is int}
