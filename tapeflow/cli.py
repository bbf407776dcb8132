"""The ``tapeflow`` command line.

    tapeflow gridworld train [--preset default|book] [--mode random] [--seed 0] [--eager] ...
    tapeflow gridworld test  [--ckpt-dir checkpoints/gridworld] [--games 1000]
    tapeflow gridworld play  [--ckpt-dir checkpoints/gridworld] [--seed 0]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time


def _config(args):
    from .rl.dqn import PRESETS
    cfg = dataclasses.replace(PRESETS[args.preset])
    if args.mode:
        cfg.mode = args.mode
    if getattr(args, "episodes", None):
        cfg.episodes = args.episodes
    if getattr(args, "steps", None):
        cfg.train_steps = args.steps
    return cfg


def _save_config(ckpt_dir, cfg, seed):
    os.makedirs(ckpt_dir, exist_ok=True)
    tmp = os.path.join(ckpt_dir, "config.json.tmp")
    with open(tmp, "w") as f:
        json.dump({"config": dataclasses.asdict(cfg), "seed": seed}, f, indent=2)
    os.replace(tmp, os.path.join(ckpt_dir, "config.json"))


def _load_agent(ckpt_dir):
    from . import train as tftrain
    from .rl.dqn import DQNAgent, DQNConfig
    path = os.path.join(ckpt_dir, "config.json")
    if not os.path.exists(path):
        sys.exit(f"tapeflow: no trained agent in {ckpt_dir!r} (config.json missing); run "
                 "`tapeflow gridworld train` first or pass --ckpt-dir")
    with open(path) as f:
        meta = json.load(f)
    c = meta["config"]
    c["hidden"] = tuple(c["hidden"])
    cfg = DQNConfig(**c)
    agent = DQNAgent(cfg, seed=meta.get("seed", 0))
    latest = tftrain.latest_checkpoint(ckpt_dir)
    if latest is None:
        sys.exit(f"tapeflow: no checkpoint in {ckpt_dir!r}")
    tftrain.Checkpoint(agent=agent).restore(latest).expect_partial()
    return agent, cfg, latest


def cmd_train(args):
    from .rl.gridworld_dqn import train
    cfg = _config(args)
    if args.ckpt_dir:
        _save_config(args.ckpt_dir, cfg, args.seed)
    what = f"{cfg.train_steps:,} env steps on {cfg.n_envs} boards" if cfg.n_envs > 1 else f"{cfg.episodes:,} episodes"
    print(f"tapeflow gridworld: training a DQN ({args.preset} preset, mode {cfg.mode}, seed {args.seed}, "
          f"{'eager' if args.eager else 'compiled'}): {what}")
    res, agent = train(cfg, seed=args.seed, logdir=args.logdir, ckpt_dir=args.ckpt_dir, resume=args.resume,
                       eager=args.eager, progress=not args.no_progress, eval_games=args.games)
    if res.interrupted:
        print(f"interrupted: checkpoint saved to {res.checkpoint}")
    print(f"test win rate over {args.games} {cfg.mode} games: {res.win_rate * 100:.1f}%")
    print(f"training wall time: {res.wall_s:.1f} s ({res.env_steps:,} env steps, {res.episodes:,} episodes, "
          f"{res.updates:,} updates)")
    if args.json:
        print(json.dumps({"framework": "tapeflow", "preset": args.preset, "eager": args.eager, "seed": args.seed,
                          **res.as_dict()}))
    return 0


def cmd_test(args):
    from .rl.gridworld_dqn import evaluate
    agent, cfg, latest = _load_agent(args.ckpt_dir)
    t = time.perf_counter()
    wr = evaluate(agent, args.games, args.mode or cfg.mode, seed=args.seed)
    print(f"{latest}: win rate {wr * 100:.1f}% over {args.games} {args.mode or cfg.mode} games "
          f"({time.perf_counter() - t:.2f} s)")
    return 0


def cmd_play(args):
    from .rl.envs import Gridworld
    from .rl.envs.gridworld import ACTIONS
    agent, cfg, _ = _load_agent(args.ckpt_dir)
    env = Gridworld(mode=args.mode or cfg.mode, noise=0.0, render_mode="ansi")
    obs, _ = env.reset(seed=args.seed)
    print(env.render(), "\n")
    for move in range(1, args.max_moves + 1):
        a = agent.greedy(obs)
        obs, r, term, trunc, _ = env.step(a)
        print(f"move {move}: {ACTIONS[a]} (reward {r:+.0f})")
        print(env.render(), "\n")
        if args.delay:
            time.sleep(args.delay)
        if term:
            print("won!" if r > 0 else "fell into the pit.")
            return 0
    print(f"no goal within {args.max_moves} moves.")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tapeflow", description="tapeflow command line")
    sub = ap.add_subparsers(dest="group", required=True)
    g = sub.add_parser("gridworld", help="the Gridworld DQN (Deep RL in Action, ch. 3)")
    gs = g.add_subparsers(dest="cmd", required=True)
    t = gs.add_parser("train", help="train an agent, then test it on 1000 games")
    t.add_argument("--preset", choices=["default", "book"], default="default")
    t.add_argument("--mode", choices=["static", "player", "random"], default=None)
    t.add_argument("--episodes", type=int, default=None, help="episodes (book preset)")
    t.add_argument("--steps", type=int, default=None, help="env steps (default preset)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--eager", action="store_true", help="run the same code without compilation")
    t.add_argument("--logdir", default="runs/gridworld", help="TensorBoard summaries ('' to disable)")
    t.add_argument("--ckpt-dir", default="checkpoints/gridworld", help="checkpoints ('' to disable)")
    t.add_argument("--resume", action="store_true", help="continue from the latest checkpoint")
    t.add_argument("--games", type=int, default=1000, help="test games after training")
    t.add_argument("--no-progress", action="store_true")
    t.add_argument("--json", action="store_true", help="also print the result as one JSON line")
    t.set_defaults(fn=cmd_train)
    e = gs.add_parser("test", help="win rate of a saved agent")
    e.add_argument("--ckpt-dir", default="checkpoints/gridworld")
    e.add_argument("--games", type=int, default=1000)
    e.add_argument("--mode", choices=["static", "player", "random"], default=None)
    e.add_argument("--seed", type=int, default=12345)
    e.set_defaults(fn=cmd_test)
    p = gs.add_parser("play", help="show a game move by move")
    p.add_argument("--ckpt-dir", default="checkpoints/gridworld")
    p.add_argument("--mode", choices=["static", "player", "random"], default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-moves", type=int, default=15)
    p.add_argument("--delay", type=float, default=0.0)
    p.set_defaults(fn=cmd_play)
    args = ap.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
