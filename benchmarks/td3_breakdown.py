"""Where a TD3 learning step's wall time goes, tapeflow compiled / eager or PyTorch.

Runs the real training loop (tapeflow.rl.trainer.train, as the td3_mujoco
benchmark does) with timers wrapped around its parts: the action
(select_action; compiled: the actor's compiled code inside it), env.step,
the replay add, the minibatch sample, the update call (compiled: the
Function's call path and its compiled code; critic-only iterations apart from
the policy-update ones) and, by difference, the loop's own Python. With
``--faults`` minor page faults (getrusage minflt) are counted per part. The
garbage collector's passes are timed by generation (they run inside the parts).
The exploration noise + clip, inline in the loop, is timed alone beside it.

    PYTHONPATH=$PWD python benchmarks/td3_breakdown.py                  # tapeflow compiled
    PYTHONPATH=$PWD python benchmarks/td3_breakdown.py --eager
    PYTHONPATH=$PWD .venv-peers/bin/python benchmarks/td3_breakdown.py --torch --threads 2 [--fused-adam]

Timers cost ~0.1 us each: the parts sum to slightly more than an untimed step.
getrusage costs ~0.5 us warm but several times that right after the update
(two per timed part, ten per step), and that time lands in "loop rest", hence
--faults is off by default. On a busy host compare runs taken side by side only.
"""
from __future__ import annotations

import argparse
import collections
import gc
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_clock = time.perf_counter


def _faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


class Parts:
    """Per part: total seconds, minor faults, and per-call times (their count and median)."""

    def __init__(self, faults=False):
        self.faults = faults
        self.s = collections.defaultdict(float)
        self.flt = collections.defaultdict(int)
        self.each = collections.defaultdict(list)
        self.on = False
        self.action_dim = None

    def wrap(self, name, fn, faults=True):
        faults = faults and self.faults

        def timed(*args, **kwargs):
            if not self.on:
                return fn(*args, **kwargs)
            f0 = _faults() if faults else 0
            t0 = _clock()
            r = fn(*args, **kwargs)
            dt = _clock() - t0
            if faults:
                self.flt[name] += _faults() - f0
            self.s[name] += dt
            self.each[name].append(dt)
            return r
        return timed

    def gc_timer(self):
        """A gc.callbacks hook: the garbage collector's passes while timing, per generation
        (they run inside whichever part allocated, so they are a share of the parts, not a part)."""
        t0 = [0.0]

        def hook(phase, info):
            if not self.on:
                return
            if phase == "start":
                t0[0] = _clock()
            else:
                self.each[f"  (gc gen {info['generation']}, inside the parts)"].append(_clock() - t0[0])
        return hook


def run(framework, steps, start, threads, seed=0, env="HalfCheetah-v5", faults=False, fused_adam=False):
    from tapeflow.rl import trainer
    parts = Parts(faults)
    real_make_env, real_buffer = trainer.make_env, trainer.ReplayBuffer

    made = []

    def make_env(env_id, render_mode=None):
        env = real_make_env(env_id, render_mode)
        if not made:  # the first env made is the training env (the second evaluates)
            step = parts.wrap("env.step", env.step)
            count = [0]

            def counted(action):
                count[0] += 1
                r = step(action)
                # the timers start after the random phase's last step: at the learning phase's first action
                parts.on = parts.on or count[0] == start
                return r
            env.step = counted
        made.append(env)
        return env

    class Buffer(real_buffer):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.add = parts.wrap("replay.add", self.add)
            self.sample = parts.wrap("replay.sample", self.sample)

    def factory(state_dim, action_dim, max_action):
        parts.action_dim = action_dim
        if framework == "torch":
            import torch
            torch.set_num_threads(threads)
            from benchmarks.td3_torch import TorchTD3
            agent = TorchTD3(state_dim, action_dim, max_action, seed, fused_adam=fused_adam)
            update = agent.train
            agent.train = parts.wrap("train", lambda rb: _split_torch(agent, update, rb, parts))
        else:
            agent = trainer.make_agent("td3", state_dim, action_dim, max_action, seed, framework == "compiled")
            update = agent.train
            if agent.compiled:  # jit_compile=True: the traces hold their final (fused) code from construction
                agent._train_call = parts.wrap("  update call (Function)", agent._train_call, faults=False)
                cf, acf = agent.train_fn, agent.act_fn
                crit = parts.wrap("  update code, critic-only it.", cf.compiled, faults=False)
                pol = parts.wrap("  update code, policy it.", cf.compiled, faults=False)
                # total_it is read before the call increments it
                cf.compiled = lambda *a: (pol if (int(agent.total_it._v) + 1) % agent.policy_freq == 0
                                          else crit)(*a)
                acf.compiled = parts.wrap("  actor code", acf.compiled, faults=False)
            agent.train = parts.wrap("train", update)
        agent.select_action = parts.wrap("select_action", agent.select_action)
        return agent

    trainer.make_env, trainer.ReplayBuffer = make_env, Buffer
    gc_hook = parts.gc_timer()
    gc.callbacks.append(gc_hook)
    cfg = trainer.TrainConfig(env=env, steps=start + steps, start_steps=start,
                              eval_freq=10 ** 9, eval_episodes=1, seed=seed)
    try:
        res, _ = trainer.train(cfg, eager=framework == "eager", progress=False, logdir="", ckpt_dir="",
                               agent_factory=factory)
    finally:
        trainer.make_env, trainer.ReplayBuffer = real_make_env, real_buffer
        gc.callbacks.remove(gc_hook)
    return res, parts


def _split_torch(agent, update, rb, parts):
    """PyTorch's train() with the sample timed inside it (the wrapper on rb.sample) and
    the rest by iteration kind."""
    policy_it = (agent.total_it + 1) % agent.policy_freq == 0
    t0 = _clock()
    r = update(rb)
    parts.each["  update (torch), " + ("policy it." if policy_it else "critic-only it.")].append(_clock() - t0)
    return r


def noise_clip_time(action_dim, reps=2000):
    """The loop's exploration noise + clip, as trainer.train draws it (a block of steps
    per Generator call), run alone: warm, where the loop runs it after the update."""
    from tapeflow.rl.draws import BlockDraws
    from tapeflow.rl.trainer import EXPL_BLOCK
    rng = BlockDraws(np.random.default_rng(0), lambda g, size: g.normal(0, 0.1, size=size), (action_dim,),
                     EXPL_BLOCK)
    a = np.zeros(action_dim, np.float32)
    ts = []
    for _ in range(reps):
        t0 = _clock()
        (a + rng()).clip(-1.0, 1.0).astype(np.float32)
        ts.append(_clock() - t0)
    return np.mean(ts)


def table(res, parts, label):
    steps = res.learn_steps
    lines = [f"{label}: {steps} learning steps, {1e3 * res.learn_s / steps:.3f} ms/step (learn_s/learn_steps)",
             f"{'part':34s} {'us/step':>9s} {'median us':>10s} {'calls':>6s} {'minflt/step':>11s}"]
    top = 0.0
    for name in ["select_action", "  actor code", "env.step", "replay.add", "train", "replay.sample",
                 "  update call (Function)", "  update code, critic-only it.", "  update code, policy it.",
                 "  update (torch), critic-only it.", "  update (torch), policy it.",
                 *(f"  (gc gen {g}, inside the parts)" for g in range(3))]:
        each = parts.each.get(name)
        if not each:
            continue
        tot = parts.s[name] if name in parts.s else sum(each)
        if not name.startswith(" ") and name != "replay.sample":
            top += tot
        lines.append(f"{name:34s} {1e6 * tot / steps:9.1f} {1e6 * np.median(each):10.1f} {len(each):6d} "
                     f"{(parts.flt[name] / steps if name in parts.flt else float('nan')):11.2f}")
    lines.append(f"{'noise + clip (alone)':34s} {1e6 * noise_clip_time(parts.action_dim):9.1f}")
    lines.append(f"{'loop rest (by difference)':34s} {1e6 * (res.learn_s - top) / steps:9.1f}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--eager", action="store_true")
    g.add_argument("--torch", action="store_true")
    ap.add_argument("--steps", type=int, default=2000, help="learning steps (default 2000)")
    ap.add_argument("--start-steps", type=int, default=1000)
    ap.add_argument("--env", default="HalfCheetah-v5")
    ap.add_argument("--threads", type=int, default=2, help="PyTorch's intra-op threads")
    ap.add_argument("--faults", action="store_true", help="count minor page faults per part (getrusage)")
    ap.add_argument("--fused-adam", action="store_true", help="--torch: torch.optim.Adam(fused=True)")
    args = ap.parse_args(argv)
    fw = "torch" if args.torch else "eager" if args.eager else "compiled"
    res, parts = run(fw, args.steps, args.start_steps, args.threads, env=args.env, faults=args.faults,
                     fused_adam=args.fused_adam)
    print(table(res, parts, fw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
