"""Many Gridworld boards stepped at once in NumPy (same rules as Gridworld).

The single ``Gridworld`` is the gymnasium-compatible reference; this class
runs ``n`` independent games in lock step with array ops, so collecting
experience costs a few microseconds per step for all boards together rather
than per board. Finished games restart on a fresh board automatically; the
observation *after the move* of a finished game is returned separately as
``final_obs`` (that is the s' a replay buffer needs).
"""
from __future__ import annotations

import numpy as np

from .gridworld import (MODES, N_SQUARES, OBS_DIM, REWARD_GOAL, REWARD_PIT, REWARD_STEP, _NEXT_NP,
                        generate_boards)


class GridworldVec:
    """``n`` games. Boards are (n, 4) flat squares of (Player, Goal, Pit, Wall)."""

    def __init__(self, n, mode="random", noise=0.01, max_steps=None, seed=None):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self.n, self.mode, self.noise, self.max_steps = int(n), mode, float(noise), max_steps
        self.rng = np.random.default_rng(seed)
        self.boards = np.zeros((self.n, 4), np.int64)
        self.steps = np.zeros(self.n, np.int64)
        self._rows = np.arange(self.n)
        self._pool = np.zeros((0, 4), np.int64)

    def _new_boards(self, k):
        # boards come from a pre-drawn pool (drawing in bulk is ~100x cheaper per board)
        if self._pool.shape[0] < k:
            self._pool = np.concatenate([self._pool, generate_boards(max(4096, k), self.mode, self.rng)])
        out, self._pool = self._pool[:k], self._pool[k:]
        return out

    def observe(self, boards=None):
        """(k, 4) boards -> (k, 64) float32 one-hot planes (+ uniform noise)."""
        b = self.boards if boards is None else boards
        k = b.shape[0]
        obs = np.zeros((k, OBS_DIM), np.float32) if not self.noise else \
            self.rng.random((k, OBS_DIM), dtype=np.float32) * np.float32(self.noise)
        rows = np.arange(k)[:, None]
        obs[rows, b + np.arange(4) * N_SQUARES] += 1.0
        return obs

    def reset(self):
        self.boards[:] = self._new_boards(self.n)
        self.steps[:] = 0
        return self.observe()

    def step(self, actions):
        """actions (n,) ints in 0..3 -> (obs, rewards, terminated, truncated, final_obs).

        obs: (n, 64) observations to act on next (fresh boards where a game ended);
        final_obs: (n, 64) observations right after this move (s' for learning)."""
        a = np.asarray(actions)
        if a.shape != (self.n,):
            raise ValueError(f"GridworldVec.step: expected {self.n} actions, got shape {a.shape}")
        b = self.boards
        p = b[:, 0]
        nxt = _NEXT_NP[a, p]
        nxt = np.where(nxt == b[:, 3], p, nxt)  # the wall blocks; edges already stay
        b[:, 0] = nxt
        self.steps += 1
        pit = nxt == b[:, 2]
        goal = nxt == b[:, 1]
        rewards = np.where(pit, np.float32(REWARD_PIT), np.where(goal, np.float32(REWARD_GOAL),
                                                                  np.float32(REWARD_STEP))).astype(np.float32)
        terminated = pit | goal
        truncated = ~terminated & (self.steps >= self.max_steps) if self.max_steps else np.zeros(self.n, bool)
        final_obs = self.observe()
        done = terminated | truncated
        if done.any():
            idx = np.flatnonzero(done)
            b[idx] = self._new_boards(idx.size)
            self.steps[idx] = 0
            obs = final_obs.copy()
            obs[idx] = self.observe(b[idx])
        else:
            obs = final_obs
        return obs, rewards, terminated, truncated, final_obs
