"""Environments for tapeflow's reinforcement-learning examples (imports gymnasium)."""

from tapeflow.rl.envs.gridworld import (
    ACTIONS,
    MODES,
    STATIC_BOARD,
    Gridworld,
    generate_boards,
    is_valid_board,
    play_greedy,
    win_rate,
)

__all__ = [
    "Gridworld",
    "generate_boards",
    "is_valid_board",
    "play_greedy",
    "win_rate",
    "ACTIONS",
    "MODES",
    "STATIC_BOARD",
]
