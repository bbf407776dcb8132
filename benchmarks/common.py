"""Shared pieces of the benchmark harness.

This module only needs NumPy and the standard library: it is imported by the
orchestrator (``run.py``, tapeflow's ``.venv``) and by the workers, some of
which run in the peers venv (``.venv-peers``: PyTorch, JAX, TensorFlow).
No deep-learning framework is imported here.
"""
from __future__ import annotations

import hashlib
import math
import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

SEED = 1234

FRAMEWORKS = ("numpy", "tapeflow", "torch", "jax", "tensorflow")
PEERS = ("torch", "jax", "tensorflow")
FRAMEWORK_LABELS = {
    "numpy": "NumPy (hand-written)",
    "tapeflow": "tapeflow",
    "torch": "PyTorch",
    "jax": "JAX",
    "tensorflow": "TensorFlow",
}

# Timing protocol per mode. Every implementation of a case lives in its own
# worker process at once; after each has built, checked and warmed up (one at a
# time), they time one block each per round, in a rotating order, while the
# others wait blocked on their stdin (run.py, rounds.py). A block is enough calls
# to last at least `block_s` seconds (sized from the warm-up); `rounds` rounds,
# cut (never below `min_rounds`) so that no implementation is timed for much
# more than `budget_s` seconds in all (a slow one first gets fewer calls per
# block, down to one). Many short blocks in many rounds rather than a few long
# ones: a round's ratio compares neighbours in time, and the host has slow phases
# lasting minutes.
TIMING = {
    "tiny": dict(rounds=3, min_rounds=2, block_s=0.002, warmup_s=0.0, warmup_calls=1, budget_s=2.0),
    "quick": dict(rounds=9, min_rounds=3, block_s=0.04, warmup_s=0.1, warmup_calls=2, budget_s=8.0),
    "full": dict(rounds=11, min_rounds=3, block_s=0.3, warmup_s=0.5, warmup_calls=3, budget_s=40.0),
}


class Unavailable(Exception):
    """Raised by an implementation that cannot run here (missing API, ...)."""


@dataclass
class Bench:
    """What an implementation's builder returns.

    step:   one timed call; it performs `units` units of work (ops, steps, ...).
    sync:   called on the last result of a block (block_until_ready, ...).
    check:  runs from a fresh state (before any timed call) and returns a dict
            of arrays comparable with the workload's reference.
    metrics: extra figures to report (filled by the builder or by `finish`).
    finish: optional callable run after timing, returning more metrics.
    """

    step: Callable[[], Any]
    units: float = 1.0
    sync: Callable[[Any], Any] | None = None
    check: Callable[[], dict] | None = None
    metrics: dict = field(default_factory=dict)
    finish: Callable[[], dict] | None = None
    note: str = ""
    reference: dict | None = None  # replaces the workload's reference for this row (prefer Impl.reference_variant)
    calls: int | None = None  # fixed calls per block, and no warm-up: every call is timed (td3_mujoco's chunks)


@dataclass
class Impl:
    """One implementation of a workload in one framework."""

    name: str  # unique in the workload, e.g. "torch_eager"
    framework: str  # one of FRAMEWORKS
    label: str  # what the table shows
    build: Callable[[dict, dict], Bench]  # build(case, data) -> Bench
    modes: tuple = ("tiny", "quick", "full")
    cases: tuple | None = None  # restrict to these case names
    runner: Callable | None = None  # custom run(case, data, mode) -> result dict (no timing protocol)
    reference_variant: str | None = None  # checked against reference(case, data, variant=...)


def to_np(x) -> np.ndarray:
    """Any framework's tensor (or a Python scalar) to a NumPy array."""
    if isinstance(x, np.ndarray):
        return x
    for attr in ("detach",):  # torch
        if hasattr(x, attr) and hasattr(x, "cpu"):
            return x.detach().cpu().numpy()
    if hasattr(x, "numpy"):
        try:
            return np.asarray(x.numpy())
        except Exception:
            pass
    return np.asarray(x)


def compare(out: dict, ref: dict, tol: float | dict) -> dict:
    """Max abs diff and max rel diff of every array in `ref` against `out`.

    rel = max|out - ref| / max|ref| (normalised by the array's scale, so that
    entries near zero do not blow it up). ok when rel <= tol for every key.
    """
    worst_abs, worst_rel, per_key, ok, missing = 0.0, 0.0, {}, True, []
    for key, r in ref.items():
        if key not in out:
            missing.append(key)
            ok = False
            continue
        o = np.asarray(to_np(out[key]), dtype=np.float64)
        r = np.asarray(r, dtype=np.float64)
        if o.shape != r.shape:
            if o.size == r.size:
                o = o.reshape(r.shape)
            else:
                per_key[key] = {"error": f"shape {o.shape} != reference {r.shape}"}
                ok = False
                continue
        if not np.all(np.isfinite(o)):
            per_key[key] = {"error": "non-finite values"}
            ok = False
            continue
        d = float(np.max(np.abs(o - r))) if r.size else 0.0
        scale = float(np.max(np.abs(r))) if r.size else 0.0
        rel = d / scale if scale > 0 else d
        t = tol.get(key, tol.get("*", 1e-4)) if isinstance(tol, dict) else tol
        k_ok = rel <= t
        ok = ok and k_ok
        per_key[key] = {"max_abs": d, "max_rel": rel, "tol": t, "ok": k_ok}
        worst_abs, worst_rel = max(worst_abs, d), max(worst_rel, rel)
    res = {"max_abs": worst_abs, "max_rel": worst_rel, "ok": ok, "per_key": per_key}
    if missing:
        res["missing"] = missing
    return res


def fingerprint(data: dict) -> str:
    h = hashlib.sha1()
    for k in sorted(data):
        v = data[k]
        if isinstance(v, np.ndarray):
            h.update(k.encode())
            h.update(str(v.dtype).encode())
            h.update(np.ascontiguousarray(v).tobytes())
    return h.hexdigest()[:12]


def stats(samples: list[float]) -> dict:
    a = np.asarray(samples, dtype=np.float64)
    return {
        "median": float(np.median(a)),
        "min": float(a.min()),
        "max": float(a.max()),
        "q1": float(np.percentile(a, 25)),
        "q3": float(np.percentile(a, 75)),
        "n": int(a.size),
    }


def _noop(_):
    return None


def warm_up(bench: Bench, cfg: dict) -> dict:
    """The first call (compile time, reported apart), then at least `warmup_calls`
    calls and `warmup_s` seconds, in synchronised mini-blocks of 1, 2, 4, ... calls;
    returns the first call's time and the seconds per call of the fastest mini-block,
    which sizes the timed blocks: a host in a slow phase during the warm-up would
    otherwise leave an implementation with blocks of one call for the whole run.
    A bench with fixed `calls` is not called at all: each of its calls is work that
    must be timed (a chunk of a training run)."""
    if bench.calls is not None:
        return {"first_call_s": None, "per_call_s": None}
    step, sync = bench.step, bench.sync or _noop
    t0 = time.perf_counter()
    sync(step())
    first = time.perf_counter() - t0
    n_warm, k, best, start = 0, 1, math.inf, time.perf_counter()
    cap = max(cfg["warmup_s"] * 4, 3 * first)
    while True:
        t0 = time.perf_counter()
        for _ in range(k):
            r = step()
        sync(r)
        dt = time.perf_counter() - t0
        n_warm, best = n_warm + k, min(best, dt / k)
        el = time.perf_counter() - start
        if (n_warm >= cfg["warmup_calls"] and el >= cfg["warmup_s"]) or el > cap:
            break
        if dt < cfg["warmup_s"] / 8:
            k *= 2
    return {"first_call_s": first, "per_call_s": best}


def time_block(bench: Bench, calls: int) -> dict:
    """One timed block: `calls` calls, synchronised at the end; wall seconds per unit
    of work, and the process's CPU seconds per unit (all its threads: compared with
    the wall time it shows threads at work, or another process taking the CPUs)."""
    step, sync = bench.step, bench.sync or _noop
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(calls):
        r = step()
    sync(r)
    n = calls * float(bench.units)
    return {"s": (time.perf_counter() - t0) / n, "cpu_s": (time.process_time() - c0) / n}


def plan_rounds(per_call: dict, cfg: dict, rounds: int | None = None) -> tuple[int, dict]:
    """(rounds, {impl: calls per block}) for implementations taking `per_call[impl]`
    seconds a call, under the mode's `cfg`; `rounds` given (a case's own count) is
    kept as it is."""
    calls = {k: max(1, int(math.ceil(cfg["block_s"] / max(v, 1e-9)))) for k, v in per_call.items()}
    n = rounds or cfg["rounds"]

    def total(k):
        return per_call[k] * calls[k] * n

    for k in calls:  # a slow implementation gets fewer calls per block first
        while calls[k] > 1 and total(k) > cfg["budget_s"]:
            calls[k] = max(1, calls[k] // 2)
    if rounds is None:  # then fewer rounds, for everyone: rounds are shared
        while n > cfg["min_rounds"] and calls and max(total(k) for k in calls) > cfg["budget_s"]:
            n -= 1
    return n, calls


_PROBE_OPERANDS: dict = {}


def sgemm_pair_probe(n: int = 256, tries: int = 5) -> float:
    """The host probe: seconds for two n^3 float32 GEMMs back to back, min of `tries`.
    On the 2-core host of the README's runs: 384 µs idle, 450-570 µs in its busy
    phases; recorded once per round, so that a reader sees what state the host was in."""
    if n not in _PROBE_OPERANDS:
        r = np.random.default_rng(0)
        _PROBE_OPERANDS[n] = (r.random((n, n), dtype=np.float32), r.random((n, n), dtype=np.float32),
                              np.empty((n, n), np.float32))
    a, b, c = _PROBE_OPERANDS[n]
    np.matmul(a, b, out=c)  # the first call after an idle spell wakes BLAS's threads
    best = math.inf
    for _ in range(tries):
        t0 = time.perf_counter()
        np.matmul(a, b, out=c)
        np.matmul(b, a, out=c)
        best = min(best, time.perf_counter() - t0)
    return best


def short_error(exc: BaseException, limit: int = 300) -> str:
    msg = str(exc) if isinstance(exc, Unavailable) else f"{type(exc).__name__}: {exc}"
    msg = msg.strip().replace("\n", " ")
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


def format_tb(exc: BaseException, lines: int = 12) -> str:
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return "".join(tb)[-4000:]


def rng(seed: int = SEED) -> np.random.Generator:
    return np.random.default_rng(seed)


def glorot(rs: np.random.Generator, fan_in: int, fan_out: int) -> np.ndarray:
    lim = math.sqrt(6.0 / (fan_in + fan_out))
    return rs.uniform(-lim, lim, size=(fan_in, fan_out)).astype(np.float32)


def mlp_params(rs: np.random.Generator, sizes: list[int]) -> list[np.ndarray]:
    """[W0, b0, W1, b1, ...] float32, W of shape (in, out) (Keras layout),
    Glorot-uniform kernels and small uniform biases (not zero, so that the
    bias paths are exercised by the numerical checks)."""
    out = []
    for i, o in zip(sizes[:-1], sizes[1:]):
        out.append(glorot(rs, i, o))
        out.append(rs.uniform(-0.05, 0.05, size=(o,)).astype(np.float32))
    return out


def gemm_label(a, b, ta: bool = False, tb: bool = False) -> str:
    """'MxK @ KxN' of the product op(a) @ op(b) and its layout: T where an operand is
    used transposed (``ta``/``tb``, TF's transpose flags on the stored operands)."""
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    n = b.shape[0] if tb else b.shape[1]
    return f"{m}x{k} @ {k}x{n} {'T' if ta else 'N'}{'T' if tb else 'N'}"


def array_gemm_label(a, b) -> str:
    """``gemm_label`` of the NumPy operands of a matmul: an operand that is a transposed
    view (Fortran-ordered, not C) is what BLAS gets as a transpose flag."""
    ta = a.flags.f_contiguous and not a.flags.c_contiguous
    tb = b.flags.f_contiguous and not b.flags.c_contiguous
    return gemm_label(a.T if ta else a, b.T if tb else b, ta, tb)


def cpu_affinity(threads: int) -> list[int] | None:
    """Pin this process to `threads` CPUs when fewer than all are asked for.

    Pinning is the one thread limit every framework obeys (XLA:CPU, for one,
    ignores its intra-op flag for some kernels)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return None
    if threads < len(cpus):
        chosen = cpus[:threads]
        os.sched_setaffinity(0, chosen)
        return chosen
    return cpus


def thread_env(threads: int, omp_passive: bool = False) -> dict:
    """Environment variables set for every worker (before any import).

    omp_passive sets OMP_WAIT_POLICY=PASSIVE: OpenMP threads sleep instead of
    spinning between parallel regions. Without it, PyTorch with 2 threads on a
    2-CPU machine where another process holds one CPU was seen 37x slower
    (a Gridworld run: 322 s instead of 8.8 s); with it, 3.5 s."""
    n = str(threads)
    extra = {"OMP_WAIT_POLICY": "PASSIVE"} if omp_passive else {}
    return {
        **extra,
        "OMP_NUM_THREADS": n,
        "OPENBLAS_NUM_THREADS": n,
        "MKL_NUM_THREADS": n,
        "NUMBA_NUM_THREADS": n,
        "TF_NUM_INTRAOP_THREADS": n,
        "TF_NUM_INTEROP_THREADS": n,
        "XLA_FLAGS": (
            f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'} "
            f"intra_op_parallelism_threads={threads}"
        ),
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "TF_ENABLE_ONEDNN_OPTS": "1",
        "JAX_PLATFORMS": "cpu",
        "CUDA_VISIBLE_DEVICES": "",
        "PYTHONUNBUFFERED": "1",
        # tapeflow's second tier (elementwise fusion) compiles at a hot function's
        # 100th call; timings report the steady state, so let it happen in the warm-up
        "TAPEFLOW_FUSE_AFTER": "2",
        "PYTHONHASHSEED": "0",
    }


def fmt_time(seconds: float, display: str) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "-"
    if display == "us":
        v = seconds * 1e6
    elif display == "ms":
        v = seconds * 1e3
    else:
        v = seconds
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


UNIT_SYMBOL = {"us": "µs", "ms": "ms", "s": "s"}
