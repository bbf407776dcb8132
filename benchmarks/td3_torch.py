"""TD3 in PyTorch, written from the paper's description (Fujimoto, van Hoof and
Meger, ICML 2018, Algorithm 1 and its appendix), for the td3_mujoco benchmark.

The agent is PyTorch; everything around it is the loop tapeflow's own agent
runs in (tapeflow.rl.trainer.train: environment, random start phase,
exploration noise, evaluations, the same NumPy ReplayBuffer and the same
NumPy draws of the target policy noise), so the two timings differ only by
the agent's update and action selection.

Networks (the paper's appendix): actor 256-256 ReLU, tanh output scaled by
max_action; two critics 256-256 ReLU on concat(s, a); Adam 3e-4; batch 256;
discount 0.99; tau 0.005; target policy noise N(0, 0.2) clipped to +-0.5
(x max_action); policy and target updates every 2 critic updates.

    python benchmarks/td3_torch.py --env HalfCheetah-v5 --steps 45000 --start-steps 25000 --json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import types

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tapeflow.rl.draws import BlockDraws  # noqa: E402  (after the path insert)
from tapeflow.rl.td3 import NOISE_BLOCK, standard_normal_f32  # noqa: E402


def mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class TorchTD3:
    """Algorithm 1: clipped double-Q learning, target policy smoothing, delayed
    policy and target updates."""

    def __init__(self, state_dim, action_dim, max_action, seed=0, hidden=256, lr=3e-4, batch_size=256,
                 discount=0.99, tau=0.005, policy_noise=0.2, noise_clip=0.5, policy_freq=2, fused_adam=False):
        torch.manual_seed(seed)
        self.actor = mlp([state_dim, hidden, hidden, action_dim])
        self.q1 = mlp([state_dim + action_dim, hidden, hidden, 1])
        self.q2 = mlp([state_dim + action_dim, hidden, hidden, 1])
        self.actor_target, self.q1_target, self.q2_target = (
            mlp([state_dim, hidden, hidden, action_dim]), mlp([state_dim + action_dim, hidden, hidden, 1]),
            mlp([state_dim + action_dim, hidden, hidden, 1]))
        for net, target in self._pairs():
            target.load_state_dict(net.state_dict())
            target.requires_grad_(False)
        # the paper's code (and CleanRL's) uses Adam's defaults: on CPU the for-loop implementation;
        # fused_adam=True is PyTorch's fastest Adam (one kernel over all parameters), which the
        # benchmark runs as a second PyTorch row
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=lr, fused=fused_adam)
        self.critic_opt = torch.optim.Adam(list(self.q1.parameters()) + list(self.q2.parameters()), lr=lr,
                                           fused=fused_adam)
        self.max_action = max_action
        self.discount, self.tau = discount, tau
        self.policy_noise, self.noise_clip = policy_noise * max_action, noise_clip * max_action
        self.policy_freq = policy_freq
        self.total_it = 0
        self.config = types.SimpleNamespace(batch_size=batch_size)
        # N(0, 1) draws for the target policy noise, drawn as tapeflow's TD3 draws them (the same
        # values, a block of iterations per Generator call)
        self.rng = BlockDraws(np.random.default_rng([seed, 2]), standard_normal_f32,
                              (batch_size, action_dim), NOISE_BLOCK)
        self.actor_loss = torch.tensor(float("nan"))

    def _pairs(self):
        return ((self.actor, self.actor_target), (self.q1, self.q1_target), (self.q2, self.q2_target))

    def pi(self, net, state):
        return self.max_action * torch.tanh(net(state))

    def select_action(self, state):
        with torch.no_grad():
            s = torch.as_tensor(np.asarray(state, np.float32).reshape(1, -1))
            return self.pi(self.actor, s).numpy().reshape(-1)

    def train(self, replay_buffer):
        self.total_it += 1
        b = replay_buffer.sample(self.config.batch_size, replace=True)
        noise = torch.from_numpy(self.rng())
        state, action, next_state = (torch.from_numpy(x) for x in (b.states, b.actions, b.next_states))
        reward = torch.from_numpy(b.rewards).unsqueeze(1)
        not_done = torch.from_numpy(1.0 - b.dones).unsqueeze(1)
        with torch.no_grad():
            noise = (noise * self.policy_noise).clamp(-self.noise_clip, self.noise_clip)
            next_action = (self.pi(self.actor_target, next_state) + noise).clamp(-self.max_action, self.max_action)
            sa2 = torch.cat([next_state, next_action], 1)
            target_Q = reward + not_done * self.discount * torch.min(self.q1_target(sa2), self.q2_target(sa2))
        sa = torch.cat([state, action], 1)
        critic_loss = F.mse_loss(self.q1(sa), target_Q) + F.mse_loss(self.q2(sa), target_Q)
        self.critic_opt.zero_grad(set_to_none=True)
        critic_loss.backward()
        self.critic_opt.step()
        if self.total_it % self.policy_freq == 0:
            actor_loss = -self.q1(torch.cat([state, self.pi(self.actor, state)], 1)).mean()
            self.actor_opt.zero_grad(set_to_none=True)
            actor_loss.backward()
            self.actor_opt.step()
            with torch.no_grad():
                for net, target in self._pairs():
                    for p, tp in zip(net.parameters(), target.parameters()):
                        tp.mul_(1 - self.tau).add_(p, alpha=self.tau)
            self.actor_loss = actor_loss.detach()
        return critic_loss.detach(), self.actor_loss


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", default="HalfCheetah-v5")
    ap.add_argument("--steps", type=int, default=45_000)
    ap.add_argument("--start-steps", type=int, default=25_000)
    ap.add_argument("--eval-freq", type=int, default=5_000)
    ap.add_argument("--eval-episodes", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    from tapeflow.rl.trainer import TrainConfig, train
    cfg = TrainConfig(env=args.env, steps=args.steps, start_steps=args.start_steps, eval_freq=args.eval_freq,
                      eval_episodes=args.eval_episodes, seed=args.seed)
    res, _ = train(cfg, logdir="", ckpt_dir="", progress=False,
                   agent_factory=lambda s, a, m: TorchTD3(s, a, m, args.seed, batch_size=args.batch_size))
    print(f"final evaluation over {cfg.eval_episodes} episodes: {res.final_eval:.3f}")
    print(f"training wall time: {res.wall_s:.1f} s ({res.learn_steps:,} learning steps in {res.learn_s:.1f} s)")
    if args.json:
        print(json.dumps({"framework": "torch", "torch": torch.__version__, "threads": args.threads,
                          **res.as_dict()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
