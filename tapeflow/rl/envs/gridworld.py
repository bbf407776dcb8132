"""Gridworld: the 4x4 game of chapter 3 of *Deep Reinforcement Learning in Action*.

The board holds four pieces: the Player ``P``, the Goal ``+``, the Pit ``-`` and
a Wall ``W``.  Positions are ``(row, col)`` with ``(0, 0)`` top-left; internally a
square is the flat index ``row * 4 + col`` (0..15).

Rules (same as the book's ``Gridworld.makeMove`` / ``reward``):

* actions ``0, 1, 2, 3`` = up, down, left, right (up is ``row - 1``);
* a move into the Wall or off the board leaves the Player where it is (the step
  still counts and costs -1); a move onto the Pit is allowed;
* reward ``-10`` on the Pit, ``+10`` on the Goal, ``-1`` otherwise; the episode
  terminates on the Pit or the Goal.  ``max_steps`` (default ``None``) adds a
  gymnasium truncation.

Board modes:

* ``"static"``: Player (0,3), Goal (0,0), Pit (0,1), Wall (1,1);
* ``"player"``: the static Goal/Pit/Wall, the Player uniformly at random, redrawn
  until valid (so uniform over the 13 free squares);
* ``"random"``: all four pieces uniformly at random, redrawn until valid (so
  uniform over all valid boards).

A board is *valid* when no two pieces share a square **and** the Player can reach
the Goal (breadth-first search avoiding Pit and Wall).  The book's own
``validateBoard`` only looks at corners and lets about 0.3% of random boards
through that cannot be won; those are rejected here.

Observation: four 4x4 one-hot planes in the order (Player, Goal, Pit, Wall),
flattened to 64 ``float32`` values (the book's ``board.render_np().reshape(1,64)``
without the batch axis), plus ``noise * U[0, 1)`` on every entry.  The book adds
``np.random.rand(1,64)/10.0`` in listing 3.3 and ``/100.0`` in listings 3.5-3.7
(experience replay + target network, the algorithm we reproduce), so the default
is ``noise=0.01``; use ``noise=0.0`` for evaluation.  When the Player stands on
the Pit or Goal both planes are set, as in the book.

Speed: :class:`Gridworld` is a plain :class:`gymnasium.Env` and is deliberately
*not* registered with ``gymnasium.make`` (which would wrap it in the order
enforcing / passive checker wrappers).  Construct it directly; ``step`` costs a
few microseconds.  The noise is drawn from ``self.np_random`` (gymnasium seeding),
so ``reset(seed=...)`` makes whole runs reproducible.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import gymnasium as gym
from gymnasium import spaces

__all__ = [
    "Gridworld",
    "MODES",
    "ACTIONS",
    "STATIC_BOARD",
    "is_valid_board",
    "generate_boards",
    "play_greedy",
    "win_rate",
]

SIZE = 4
N_SQUARES = SIZE * SIZE
OBS_DIM = 4 * N_SQUARES
MODES = ("static", "player", "random")
#: action index -> name, in the book's order (``action_set = {0:'u',1:'d',2:'l',3:'r'}``)
ACTIONS = ("up", "down", "left", "right")
_DELTAS = ((-1, 0), (1, 0), (0, -1), (0, 1))
#: (player, goal, pit, wall) of the static board, as (row, col)
STATIC_BOARD = ((0, 3), (0, 0), (0, 1), (1, 1))

REWARD_PIT = -10.0
REWARD_GOAL = 10.0
REWARD_STEP = -1.0


def _flat(rc: tuple[int, int]) -> int:
    return rc[0] * SIZE + rc[1]


def _rc(square: int) -> tuple[int, int]:
    return (square // SIZE, square % SIZE)


def _build_next() -> tuple[tuple[int, ...], ...]:
    """_NEXT[a][s]: square reached from s by action a, ignoring the wall (edges: stay)."""
    table = []
    for dr, dc in _DELTAS:
        row = []
        for s in range(N_SQUARES):
            r, c = _rc(s)
            nr, nc = r + dr, c + dc
            row.append(nr * SIZE + nc if 0 <= nr < SIZE and 0 <= nc < SIZE else s)
        table.append(tuple(row))
    return tuple(table)


_NEXT = _build_next()
_NEXT_NP = np.array(_NEXT, dtype=np.int64)  # (4, 16)
_STATIC_SQ = tuple(_flat(p) for p in STATIC_BOARD)  # (3, 0, 1, 5)

# ---------------------------------------------------------------------------
# Board validity.  A board is coded as p<<12 | g<<8 | pit<<4 | wall (16 bits);
# the table of all 65536 codes is computed once, vectorised, by a bitmask flood
# fill (bit s of a mask = square s).
# ---------------------------------------------------------------------------
_COL0 = 0x1111  # squares with col == 0
_COL3 = 0x8888  # squares with col == 3
_ALL = 0xFFFF


def _reachable_goal(p, g, pit, w):
    """Vectorised: can Player p reach Goal g avoiding pit and w?  (int64 arrays of squares)"""
    one = np.int64(1)
    free = _ALL & ~((one << pit) | (one << w))
    reach = (one << p) & free
    goal = one << g
    for _ in range(N_SQUARES):  # the frontier grows by >= 1 square per sweep
        grown = (
            reach
            | (reach >> 4)
            | ((reach << 4) & _ALL)
            | ((reach & ~_COL0) >> 1)
            | ((reach & ~_COL3) << 1)
        ) & free
        if np.array_equal(grown, reach):
            break
        reach = grown
    return (reach & goal) != 0


def _compute_valid_table() -> np.ndarray:
    code = np.arange(1 << 16, dtype=np.int64)
    p, g, pit, w = (code >> 12) & 15, (code >> 8) & 15, (code >> 4) & 15, code & 15
    distinct = (p != g) & (p != pit) & (p != w) & (g != pit) & (g != w) & (pit != w)
    return distinct & _reachable_goal(p, g, pit, w)


_VALID_NP: np.ndarray | None = None
_VALID_BYTES: bytes | None = None


def _valid_table() -> tuple[np.ndarray, bytes]:
    global _VALID_NP, _VALID_BYTES
    if _VALID_NP is None:
        table = _compute_valid_table()
        table.flags.writeable = False
        _VALID_NP, _VALID_BYTES = table, table.astype(np.uint8).tobytes()
    return _VALID_NP, _VALID_BYTES  # type: ignore[return-value]


def _code(p: int, g: int, pit: int, w: int) -> int:
    return (p << 12) | (g << 8) | (pit << 4) | w


def is_valid_board(player, goal, pit, wall) -> bool:
    """True when the four pieces (``(row, col)`` pairs or flat squares 0..15) are on
    distinct squares and the Player can reach the Goal avoiding Pit and Wall."""
    squares = [_as_square(x) for x in (player, goal, pit, wall)]
    return bool(_valid_table()[1][_code(*squares)])


def _as_square(x) -> int:
    if isinstance(x, (tuple, list, np.ndarray)) and np.ndim(x) == 1:
        if len(x) != 2:
            raise ValueError(f"a position is (row, col), got {x!r}")
        r, c = operator.index(x[0]), operator.index(x[1])
        if not (0 <= r < SIZE and 0 <= c < SIZE):
            raise ValueError(f"position {x!r} is off the {SIZE}x{SIZE} board")
        return r * SIZE + c
    s = operator.index(x)
    if not 0 <= s < N_SQUARES:
        raise ValueError(f"square {s} is off the board (0..{N_SQUARES - 1})")
    return s


def _parse_board(board) -> tuple[int, int, int, int]:
    if isinstance(board, Mapping):
        try:
            items = [board[k] for k in ("player", "goal", "pit", "wall")]
        except KeyError as e:
            raise ValueError(f"board dict needs keys player, goal, pit, wall; missing {e}") from None
    else:
        items = list(board)
        if len(items) != 4:
            raise ValueError(f"board needs 4 positions (player, goal, pit, wall), got {len(items)}")
    squares = tuple(_as_square(x) for x in items)
    if len(set(squares)) != 4:
        raise ValueError(f"board pieces overlap: {board!r}")
    return squares  # type: ignore[return-value]


def generate_boards(n: int, mode: str = "random", rng: np.random.Generator | int | None = None) -> np.ndarray:
    """Draw ``n`` valid boards at once.

    Returns an ``int64`` array of shape ``(n, 4)``: flat squares (``row * 4 + col``)
    of (Player, Goal, Pit, Wall).  Same distribution as :meth:`Gridworld.reset` in
    that ``mode`` (rejection sampling of uniform draws), not the same random stream.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be >= 0")
    rng = np.random.default_rng(rng)
    valid = _valid_table()[0]
    if mode == "static":
        return np.tile(np.array(_STATIC_SQ, dtype=np.int64), (n, 1))
    rest = _code(0, *_STATIC_SQ[1:])
    out = np.empty(0, dtype=np.int64)
    while out.size < n:
        m = max(16, int((n - out.size) * 1.6))
        if mode == "player":
            codes = (rng.integers(0, N_SQUARES, size=m, dtype=np.int64) << 12) | rest
        else:
            codes = rng.integers(0, 1 << 16, size=m, dtype=np.int64)
        out = np.concatenate([out, codes[valid[codes]]])
    codes = out[:n]
    return np.stack([(codes >> 12) & 15, (codes >> 8) & 15, (codes >> 4) & 15, codes & 15], axis=1)


class Gridworld(gym.Env):
    """The book's 4x4 Gridworld as a lean :class:`gymnasium.Env` (see module docstring).

    Args:
        mode: ``"static"``, ``"player"`` or ``"random"`` board generation.
        noise: scale of the uniform ``U[0,1)`` noise added to every observation entry
            (book listings 3.5-3.7: ``1/100``); ``0.0`` gives exact one-hot planes.
        max_steps: truncate the episode (``truncated=True``) after this many steps;
            ``None`` (default) never truncates, like the book's game.
        render_mode: ``None``/``"ansi"`` (``render()`` returns the board text) or
            ``"human"`` (``render()`` prints it).

    ``reset(options={"board": ...})`` starts from a given board: a mapping with keys
    ``player, goal, pit, wall`` or a 4-sequence in that order, each a ``(row, col)``
    pair or a flat square; pieces must not overlap (winnability is not enforced for
    explicit boards).

    ``observation_space``: ``Box(0, 1 + noise, (64,), float32)``; ``action_space``:
    ``Discrete(4)``.  ``info`` from ``reset`` holds the four positions; ``step``
    returns an empty ``info`` (read :attr:`player` etc. instead).
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        mode: str = "static",
        noise: float = 0.01,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        noise = float(noise)
        if not (noise >= 0.0 and np.isfinite(noise)):
            raise ValueError(f"noise must be a finite number >= 0, got {noise}")
        if max_steps is not None:
            max_steps = operator.index(max_steps)
            if max_steps < 1:
                raise ValueError(f"max_steps must be >= 1 or None, got {max_steps}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}")
        self.mode = mode
        self.noise = noise
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(4)
        high = np.nextafter(np.float32(1.0 + noise), np.float32(np.inf))
        self.observation_space = spaces.Box(low=0.0, high=high, shape=(OBS_DIM,), dtype=np.float32)
        self._valid = _valid_table()[1]
        self._player = self._goal = self._pit = self._wall = -1
        self._steps = 0
        self._done = True  # step() before reset() is an error
        self._base = np.zeros(OBS_DIM, dtype=np.float32)  # goal / pit / wall planes

    # -- gymnasium API ------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start a new episode; returns ``(obs (64,) float32, info)``."""
        super().reset(seed=seed)
        rng = self.np_random  # creates an unseeded generator on first use; step() reads _np_random
        board = options.get("board") if options else None
        if board is not None:
            p, g, pit, w = _parse_board(board)
        elif self.mode == "static":
            p, g, pit, w = _STATIC_SQ
        else:
            valid = self._valid
            if self.mode == "player":
                _, g, pit, w = _STATIC_SQ
                rest = _code(0, g, pit, w)
                while True:
                    p = int(rng.integers(N_SQUARES))
                    if valid[(p << 12) | rest]:
                        break
            else:
                while True:
                    code = int(rng.integers(1 << 16))
                    if valid[code]:
                        break
                p, g, pit, w = code >> 12, (code >> 8) & 15, (code >> 4) & 15, code & 15
        self._player, self._goal, self._pit, self._wall = p, g, pit, w
        base = self._base
        base.fill(0.0)
        base[N_SQUARES + g] = 1.0
        base[2 * N_SQUARES + pit] = 1.0
        base[3 * N_SQUARES + w] = 1.0
        self._steps = 0
        self._done = False
        if self.render_mode == "human":
            self.render()
        return self._observe(), self._info()

    def step(self, action):
        """Move the Player; returns ``(obs, reward, terminated, truncated, info)``."""
        if self._done:
            raise RuntimeError(
                "Gridworld.step() called before reset() or after the episode ended; call reset()"
            )
        a = operator.index(action)
        if a < 0 or a > 3:
            raise ValueError(f"action must be 0..3 (up, down, left, right), got {a}")
        p = self._player
        nxt = _NEXT[a][p]
        if nxt == self._wall:
            nxt = p
        self._player = nxt
        self._steps += 1
        if nxt == self._pit:
            reward, terminated = REWARD_PIT, True
        elif nxt == self._goal:
            reward, terminated = REWARD_GOAL, True
        else:
            reward, terminated = REWARD_STEP, False
        truncated = (not terminated) and self.max_steps is not None and self._steps >= self.max_steps
        self._done = terminated or truncated
        if self.render_mode == "human":
            self.render()
        return self._observe(), reward, terminated, truncated, {}

    def render(self):
        """The board as text (rows of ``P + - W .`` separated by spaces).

        ``render_mode="human"`` prints it and returns ``None``; otherwise returns it.
        The Player is drawn on top when it stands on the Goal or Pit.
        """
        text = self.board_text()
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    # -- helpers ------------------------------------------------------------
    def _observe(self) -> np.ndarray:
        noise = self.noise
        if noise:
            obs = self._np_random.random(OBS_DIM, dtype=np.float32)
            obs *= noise
            obs += self._base
        else:
            obs = self._base.copy()
        obs[self._player] += 1.0
        return obs

    def _info(self) -> dict:
        return {"player": self.player, "goal": self.goal, "pit": self.pit, "wall": self.wall}

    def board_text(self) -> str:
        if self._player < 0:
            return "(no board: call reset())"
        grid = [["."] * SIZE for _ in range(SIZE)]
        for ch, sq in (("W", self._wall), ("-", self._pit), ("+", self._goal), ("P", self._player)):
            grid[sq // SIZE][sq % SIZE] = ch
        return "\n".join(" ".join(row) for row in grid)

    def __str__(self) -> str:
        return self.board_text()

    @property
    def player(self) -> tuple[int, int]:
        """Player position ``(row, col)``."""
        return _rc(self._player)

    @property
    def goal(self) -> tuple[int, int]:
        return _rc(self._goal)

    @property
    def pit(self) -> tuple[int, int]:
        return _rc(self._pit)

    @property
    def wall(self) -> tuple[int, int]:
        return _rc(self._wall)

    @property
    def steps(self) -> int:
        """Steps taken in the current episode."""
        return self._steps

    @property
    def board(self) -> tuple[int, int, int, int]:
        """Flat squares (``row*4+col``) of (Player, Goal, Pit, Wall)."""
        return (self._player, self._goal, self._pit, self._wall)

    generate_boards = staticmethod(generate_boards)


def _observe_batch(boards: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """(k, 4) flat squares -> (k, 64) float32 observations."""
    k = boards.shape[0]
    obs = np.zeros((k, OBS_DIM), dtype=np.float32)
    if noise:
        obs += rng.random((k, OBS_DIM), dtype=np.float32) * np.float32(noise)
    rows = np.arange(k)
    for plane in range(4):
        obs[rows, plane * N_SQUARES + boards[:, plane]] += 1.0
    return obs


def play_greedy(
    env: Gridworld,
    policy_fn: Callable[[np.ndarray], int],
    max_moves: int = 15,
    *,
    seed: int | None = None,
    options: dict | None = None,
) -> bool:
    """Play one game with ``policy_fn(obs (64,)) -> action``; True when the Goal is
    reached within ``max_moves`` moves (the book's ``test_model``; note its loop
    ``if (i > 15): break`` actually allows 16 moves -- pass ``max_moves=16`` for that).
    The env is reset with ``seed``/``options`` first."""
    obs, _ = env.reset(seed=seed, options=options)
    for _ in range(max_moves):
        obs, reward, terminated, truncated, _ = env.step(int(policy_fn(obs)))
        if terminated:
            return reward > 0
        if truncated:
            return False
    return False


def win_rate(
    policy_fn: Callable[[np.ndarray], Any],
    n_games: int = 1000,
    mode: str = "random",
    max_moves: int = 15,
    seed: int | None = 0,
    *,
    batched: bool = False,
    noise: float = 0.0,
) -> float:
    """Fraction of ``n_games`` fresh boards won by the greedy policy within ``max_moves``.

    Mirrors the book's ``test_model`` loop over 1000 ``mode="random"`` games, but
    without observation noise by default.  The boards come from
    :func:`generate_boards` with ``np.random.default_rng(seed)``, so the same seed
    gives the same games whatever the policy.

    ``batched=False``: ``policy_fn(obs (64,) float32) -> int``, one game at a time.
    ``batched=True``: ``policy_fn(obs (k, 64) float32) -> (k,) ints`` for the ``k``
    still-running games, all games advanced in lock step (much faster for a
    network; same result as unbatched when ``noise=0``).
    """
    n_games = operator.index(n_games)
    if n_games < 1:
        raise ValueError("n_games must be >= 1")
    rng = np.random.default_rng(seed)
    boards = generate_boards(n_games, mode, rng)
    if not batched:
        env = Gridworld(mode=mode, noise=noise)
        env.reset(seed=None if seed is None else int(rng.integers(2**31)))
        wins = 0
        for b in boards:
            wins += play_greedy(env, policy_fn, max_moves, options={"board": b})
        return wins / n_games
    boards = boards.copy()
    active = np.ones(n_games, dtype=bool)
    won = np.zeros(n_games, dtype=bool)
    for _ in range(max_moves):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        sub = boards[idx]
        acts = np.asarray(policy_fn(_observe_batch(sub, noise, rng))).reshape(-1)
        if acts.shape != (idx.size,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(
                f"batched policy_fn must return {idx.size} integer actions, got {acts.dtype} {acts.shape}"
            )
        if acts.size and (acts.min() < 0 or acts.max() > 3):
            raise ValueError("actions must be in 0..3")
        p = sub[:, 0]
        nxt = _NEXT_NP[acts, p]
        nxt = np.where(nxt == sub[:, 3], p, nxt)
        boards[idx, 0] = nxt
        hit_goal = nxt == sub[:, 1]
        won[idx[hit_goal]] = True
        active[idx[hit_goal | (nxt == sub[:, 2])]] = False
    return float(won.mean())
