"""Reinforcement learning utilities (the book's chapter-3 DQN on Gridworld).

Kept light: ``ReplayBuffer`` is pure NumPy; ``Gridworld`` (and the rest of
``tapeflow.rl.envs``) import gymnasium, so they are loaded on first access.
"""

from tapeflow.rl.replay import Batch, ReplayBuffer

_LAZY = {
    "Gridworld": "tapeflow.rl.envs",
    "win_rate": "tapeflow.rl.envs",
    "play_greedy": "tapeflow.rl.envs",
    "generate_boards": "tapeflow.rl.envs",
}

__all__ = ["ReplayBuffer", "Batch", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tapeflow.rl' has no attribute {name!r}")
