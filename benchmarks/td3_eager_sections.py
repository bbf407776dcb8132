"""Where the td3 benchmark's eager iteration loses to the compiled one, part by part.

The td3 workload's iteration (benchmarks/workloads/td3.py, raw ops through
_tfapi) cut into its parts, each built twice on its own variables: run eagerly
and as a ``tapeflow.function`` (the harness's TAPEFLOW_FUSE_AFTER=2, so the
compiled parts run their fused code; the command line sets it unless set). The parts:

* ``target``: the critic target, no tape (target actor and both target critics,
  clip, concat, minimum);
* ``grad``: both critics' forward under a GradientTape and ``tape.gradient``
  (the lean array backward when eager);
* ``adam``: the critics' optimizer step (Keras Adam, or ``--hand-adam``);
* ``soft``: the soft target update of all three networks (36 ``assign``\\ s of
  ``tau * p + (1 - tau) * tp``).

A critic update is target + grad + adam; the policy iteration adds the actor's
gradient, its Adam step and soft. Each round times every part once, eager and
compiled one after the other, so the per-round differences compare neighbours in
time on a host whose speed drifts; min and median over the rounds are printed.
``--gemms`` also times the GEMMs inside each part (util/threads.py's ``_gemm``,
``_skinny`` and ``_outer``, the routes every 2-D product of at least FLOOR_MACS
takes, wrapped for the run): what is left is elementwise kernels plus Python.
The ``tiny`` case (hidden 32-32, batch 16) has negligible kernels: its eager
time is the dispatch cost of the same op sequence.

    PYTHONPATH=$PWD python benchmarks/td3_eager_sections.py 400-300 --gemms
    PYTHONPATH=$PWD python benchmarks/td3_eager_sections.py 32-32
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build(tf, W, data, optimizer):
    """The parts of one TD3 critic update and the soft update, on fresh variables."""
    from benchmarks.workloads._tfapi import constants, dense_mlp, variables

    actor_t = variables(tf, W.get(data, "actor"), "actor_t")
    actor = variables(tf, W.get(data, "actor"), "actor")
    q1, q2 = variables(tf, W.get(data, "q1_"), "q1_"), variables(tf, W.get(data, "q2_"), "q2_")
    q1_t, q2_t = variables(tf, W.get(data, "q1_"), "q1_t"), variables(tf, W.get(data, "q2_"), "q2_t")
    s, a, r, s2, nd, noise = constants(tf, [data[k] for k in W.BATCH_KEYS])
    # lr and tau far below the benchmark's: the parts repeat thousands of times on the
    # same batch, and the values must stay in the benchmark's range
    opt = optimizer(tf, W.get(data, "q1_") + W.get(data, "q2_"), lr=1e-9)
    tau = 1e-9

    def target(s2, noise, r, nd):
        noise = tf.clip_by_value(noise, -W.NOISE_CLIP, W.NOISE_CLIP)
        a2 = tf.clip_by_value(dense_mlp(tf, actor_t, s2, W.A_ACTS) + noise, -1.0, 1.0)
        x2 = tf.concat([s2, a2], axis=1)
        tq = tf.minimum(dense_mlp(tf, q1_t, x2, W.C_ACTS), dense_mlp(tf, q2_t, x2, W.C_ACTS))
        return r + nd * W.GAMMA * tq

    def grad(s, a, y):
        x = tf.concat([s, a], axis=1)
        with tf.GradientTape() as tape:
            e1 = dense_mlp(tf, q1, x, W.C_ACTS) - y
            e2 = dense_mlp(tf, q2, x, W.C_ACTS) - y
            loss = tf.reduce_mean(tf.square(e1)) + tf.reduce_mean(tf.square(e2))
        return tape.gradient(loss, q1 + q2)

    def adam(*grads):
        opt.apply(list(grads), q1 + q2)
        return 0

    def soft():
        for src, dst in ((actor, actor_t), (q1, q1_t), (q2, q2_t)):
            for p, tp in zip(src, dst):
                tp.assign(tau * p + (1.0 - tau) * tp)
        return 0

    y = target(s2, noise, r, nd)
    return {"target": (target, (s2, noise, r, nd)), "grad": (grad, (s, a, y)),
            "adam": (adam, tuple(grad(s, a, y))), "soft": (soft, ())}


def measure(case, rounds, warmup, hand_adam=False, gemms=False):
    """({(mode, part): [seconds per call]}, {(mode, part): GEMM seconds in all rounds}, the
    parts {mode: {part: (fn, args)}}); the GEMM timers are removed again before returning."""
    import tapeflow as tf
    from benchmarks.workloads import td3 as W
    from benchmarks.workloads._tfapi import HandAdam, KerasAdam

    cases = {c["name"]: c for c in W.cases("quick") + W.cases("tiny")}
    data = W.make_data(cases[case], 0)
    optimizer = HandAdam if hand_adam else KerasAdam
    eager, compiled = build(tf, W, data, optimizer), build(tf, W, data, optimizer)
    compiled = {part: (tf.function(fn), a) for part, (fn, a) in compiled.items()}
    runs = {}
    for part in eager:
        runs[("eager", part)] = eager[part]
        runs[("compiled", part)] = compiled[part]

    gemm_s = collections.defaultdict(float)
    now = [None]
    from tapeflow.util import threads
    routes = ("_gemm", "_skinny", "_outer")  # matmul calls them through the module's globals
    saved = {name: getattr(threads, name) for name in routes}

    def timed(fn):
        def call(*a):
            t0 = time.perf_counter()
            try:
                return fn(*a)
            finally:
                gemm_s[now[0]] += time.perf_counter() - t0
        return call

    times = collections.defaultdict(list)
    try:
        if gemms:
            for name in routes:
                setattr(threads, name, timed(saved[name]))
        for _ in range(warmup):
            for fn, a in runs.values():
                fn(*a)
        gemm_s.clear()
        for _ in range(rounds):
            for key, (fn, a) in runs.items():
                now[0] = key
                t0 = time.perf_counter()
                fn(*a)
                times[key].append(time.perf_counter() - t0)
    finally:
        for name in routes:
            setattr(threads, name, saved[name])
    return times, gemm_s, {"eager": eager, "compiled": compiled}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", nargs="?", default="400-300", help="400-300, 256-256 or 32-32 (tiny)")
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=150)
    ap.add_argument("--hand-adam", action="store_true", help="the hand-written Adam instead of Keras'")
    ap.add_argument("--gemms", action="store_true", help="time the GEMMs inside each part")
    args = ap.parse_args()
    # as the harness runs tapeflow (benchmarks/common.py). Set here, not at import: the
    # pipeline reads it at every call, so an import (the tests') would change the tier-up
    # of everything else the process compiles
    os.environ.setdefault("TAPEFLOW_FUSE_AFTER", "2")
    times, gemm_s, parts = measure(args.case, args.rounds, args.warmup, args.hand_adam, args.gemms)

    us = 1e6
    print(f"td3 {args.case}, {'hand' if args.hand_adam else 'Keras'} Adam, {args.rounds} rounds: "
          "us per part call (min / median; diff: eager - compiled per round)")
    for part in parts["eager"]:
        e, c = np.array(times[("eager", part)]), np.array(times[("compiled", part)])
        d = e - c
        line = (f"  {part:7s} eager {e.min() * us:8.1f} / {np.median(e) * us:8.1f}   compiled "
                f"{c.min() * us:8.1f} / {np.median(c) * us:8.1f}   diff {d.min() * us:8.1f} / {np.median(d) * us:8.1f}")
        if args.gemms:
            ge, gc_ = gemm_s[("eager", part)] / args.rounds, gemm_s[("compiled", part)] / args.rounds
            line += (f"   GEMMs (mean) eager {ge * us:7.1f} compiled {gc_ * us:7.1f}, rest (mean) eager "
                     f"{(e.mean() - ge) * us:7.1f} compiled {(c.mean() - gc_) * us:7.1f}")
        print(line)


if __name__ == "__main__":
    main()
