"""Experience replay: a preallocated NumPy ring buffer.

Replaces the book's ``deque(maxlen=mem_size)`` of ``(s, a, r, s2, done)`` tuples
plus ``random.sample`` and five list comprehensions per minibatch: transitions
live in five preallocated arrays, the oldest is overwritten once the buffer is
full (FIFO, like the deque), and a minibatch is one index draw plus five
fancy-index gathers.

Actions are scalars (discrete: ``action_shape=()``, the default) or vectors
(continuous control: ``action_shape=(6,)``, ``action_dtype=np.float32``).
``save``/``load`` write and read the stored transitions, the write position
and the sampling generator's state, so a resumed run draws the same
minibatches as an uninterrupted one.

Index plans: an off-policy loop samples with replacement once per env step,
one add apart, and ``Generator.integers`` costs ~12 us per call warm (its
argument checks; the 256 draws take ~2 us) and ~40 us in a TD3 step, where it
runs right after the update has evicted its code and data. So when the
buffer's own generator draws with replacement and the size moved as on the
call before (grew by one, or stayed), the next ``PLAN`` calls' indices are
drawn in one call for the sizes that pattern predicts; a call whose size or
batch size differs drops the plan (and a loop that keeps breaking plans must
show a longer run of its pattern before the next). In the TD3 HalfCheetah
loop a sample took 107 us (mean; 78 median) against 171 (128) drawn per call
(busy 2-core host, the two interleaved in one process). The indices are the ones a call per sample
gives: ``integers(0, highs[:, None], size=(k, B))`` draws element after element
from the same stream as ``k`` calls ``integers(0, high, size=B)`` (tested), and
``save`` stores the generator's state as of the indices used, so ``self.rng``
itself may be up to one plan ahead.
"""

from __future__ import annotations

import json
import operator
import os
from typing import NamedTuple

import numpy as np

from .draws import BlockDraws

__all__ = ["ReplayBuffer", "Batch"]

#: sample calls whose indices one plan draws (module doc): ~8 us per call warm, drawn 32 at a time
PLAN = 32
#: plans only below this capacity: Generator.integers draws 32-bit words for ranges below 2**32
#: (the case the plan's equality with per-call draws is tested for)
PLAN_MAX_CAPACITY = 1 << 32


class Batch(NamedTuple):
    """A sampled minibatch (``B`` = batch size, ``obs_shape`` e.g. ``(64,)``)."""

    states: np.ndarray  #: (B, *obs_shape), obs dtype (float32)
    actions: np.ndarray  #: (B, *action_shape), action dtype (int64, or float32 for continuous actions)
    rewards: np.ndarray  #: (B,), float32
    next_states: np.ndarray  #: (B, *obs_shape), obs dtype
    dones: np.ndarray  #: (B,), float32, 1.0 where the episode ended at this transition


class ReplayBuffer:
    """Uniform experience replay over the last ``capacity`` transitions.

    Args:
        capacity: maximum number of transitions kept (the book: ``mem_size = 1000``).
        obs_shape: shape of one observation (default ``(64,)``).
        obs_dtype: storage dtype of states / next states (default ``float32``).
        action_dtype: storage dtype of actions (default ``int64``, ready for
            gathers / ``take_along_axis``; ``int32`` also fine; ``float32`` for
            continuous actions).
        action_shape: shape of one action: ``()`` (default, a discrete action
            index) or e.g. ``(6,)`` for a continuous action vector.
        seed: seed (or ``numpy.random.Generator``) of the buffer's own generator,
            used by :meth:`sample` when no ``rng`` is passed.

    Storage (public, read-only by convention): ``states (capacity, *obs_shape)``,
    ``actions (capacity, *action_shape)``, ``rewards (capacity,) float32``,
    ``next_states (capacity, *obs_shape)``, ``dones (capacity,) float32``; only the
    first ``len(self)`` rows are meaningful, in ring order (not oldest-first).
    """

    def __init__(
        self,
        capacity: int,
        obs_shape: int | tuple[int, ...] = (64,),
        obs_dtype=np.float32,
        action_dtype=np.int64,
        seed: int | np.random.Generator | None = None,
        action_shape: int | tuple[int, ...] = (),
    ):
        capacity = operator.index(capacity)
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        if isinstance(obs_shape, int):
            obs_shape = (obs_shape,)
        if isinstance(action_shape, int):
            action_shape = (action_shape,)
        self.capacity = capacity
        self.obs_shape = tuple(int(d) for d in obs_shape)
        self.action_shape = tuple(int(d) for d in action_shape)
        self.states = np.zeros((capacity, *self.obs_shape), dtype=obs_dtype)
        self.next_states = np.zeros((capacity, *self.obs_shape), dtype=obs_dtype)
        self.actions = np.zeros((capacity, *self.action_shape), dtype=action_dtype)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.dones = np.zeros(capacity, dtype=np.float32)
        self._pos = 0  # next row to write
        self._size = 0
        self.rng = np.random.default_rng(seed)
        self._plan = None  # (highs, BlockDraws of the (PLAN, B) indices) or None
        # the size at the last sample with replacement, its change from the one before, and for
        # how many calls in a row it changed so; a plan needs a run of _patience such calls
        self._last_n, self._last_growth, self._streak, self._patience = -1, None, 0, 2

    def __len__(self) -> int:
        return self._size

    @property
    def full(self) -> bool:
        return self._size == self.capacity

    def clear(self) -> None:
        """Forget all transitions (storage is kept)."""
        self._pos = 0
        self._size = 0

    def add(self, state, action, reward, next_state, done) -> None:
        """Store one transition; ``state``/``next_state`` of shape ``obs_shape`` (a
        leading batch axis of 1, as in the book's ``(1, 64)`` states, is accepted).
        When full, the oldest transition is overwritten."""
        i = self._pos
        self.states[i] = state
        self.actions[i] = action
        self.rewards[i] = reward
        self.next_states[i] = next_state
        self.dones[i] = done
        i += 1
        self._pos = 0 if i == self.capacity else i
        if self._size < self.capacity:
            self._size += 1

    def add_batch(self, states, actions, rewards, next_states, dones) -> None:
        """Store ``n`` transitions at once (arrays with leading axis ``n``), in order;
        equivalent to ``n`` calls of :meth:`add`."""
        states = np.asarray(states)
        n = states.shape[0]
        if states.shape[1:] != self.obs_shape:
            raise ValueError(f"states must have shape (n, *{self.obs_shape}), got {states.shape}")
        arrays = [states, np.asarray(actions), np.asarray(rewards), np.asarray(next_states), np.asarray(dones)]
        for a in arrays[1:]:
            if a.shape[:1] != (n,):
                raise ValueError(f"all arrays need leading axis {n}, got shape {a.shape}")
        if arrays[1].shape[1:] != self.action_shape:
            raise ValueError(f"actions must have shape (n, *{self.action_shape}), got {arrays[1].shape}")
        cap = self.capacity
        start = self._pos
        m = n
        if n > cap:  # the first n - cap would be overwritten anyway
            skip = n - cap
            arrays = [a[skip:] for a in arrays]
            start = (start + skip) % cap
            m = cap
        idx = (start + np.arange(m)) % cap
        for store, a in zip((self.states, self.actions, self.rewards, self.next_states, self.dones), arrays):
            store[idx] = a
        self._pos = (start + m) % cap
        self._size = min(self._size + n, self.capacity)

    def sample_indices(self, batch_size: int, rng: np.random.Generator | None = None, replace: bool = False) -> np.ndarray:
        """``batch_size`` row indices drawn uniformly from the stored transitions
        (without replacement by default, like the book's ``random.sample``)."""
        batch_size = operator.index(batch_size)
        n = self._size
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if n == 0:
            raise ValueError("cannot sample from an empty ReplayBuffer")
        if not replace and batch_size > n:
            raise ValueError(
                f"cannot sample {batch_size} transitions without replacement: only {n} stored"
            )
        if rng is None:
            if replace and self.capacity < PLAN_MAX_CAPACITY:
                return self._planned(batch_size, n)
            self._settle()
            rng = self.rng
        if replace:
            return rng.integers(0, n, size=batch_size)
        return rng.choice(n, size=batch_size, replace=False)

    def _planned(self, batch_size: int, n: int) -> np.ndarray:
        """Indices of one sample with replacement from the buffer's generator, from a plan
        (module doc) where the size follows the last calls' pattern."""
        growth, self._last_n = n - self._last_n, n
        self._streak = self._streak + 1 if growth == self._last_growth else 1
        self._last_growth = growth
        p = self._plan
        if p is not None:
            highs, draws = p
            used = draws.drawn
            if used < PLAN and highs[used] == n and draws.shape == (batch_size,):
                return draws()
            if used < PLAN:
                # the pattern broke mid-plan (e.g. several samples per add): ask for a longer
                # run of it before the next plan, so a loop it does not fit pays this rarely
                self._patience *= 2
            self._settle()
        if growth not in (0, 1) or self._streak < self._patience:
            return self.rng.integers(0, n, size=batch_size)
        highs = np.minimum(n + growth * np.arange(PLAN, dtype=np.int64), self.capacity)
        # k rows of the plan are the first k sizes' draws (BlockDraws replays a prefix for its state)
        draws = BlockDraws(self.rng, lambda g, size: g.integers(0, highs[:size[0], None], size=size),
                           (batch_size,), PLAN)
        self._plan = (highs, draws)
        return draws()

    def _rng_state(self) -> dict:
        """The generator's state as of the indices handed out (a plan draws ahead of them)."""
        return self.rng.bit_generator.state if self._plan is None else self._plan[1].state

    def _settle(self) -> None:
        """Drop the plan, the generator put back where the indices handed out leave it."""
        if self._plan is not None:
            state = self._rng_state()
            self._plan = None
            self.rng.bit_generator.state = state

    def sample(self, batch_size: int, rng: np.random.Generator | None = None, replace: bool = False) -> Batch:
        """A uniform minibatch as a :class:`Batch` of fresh arrays:
        ``states (B, *obs_shape)``, ``actions (B, *action_shape)``, ``rewards (B,) float32``,
        ``next_states (B, *obs_shape)``, ``dones (B,) float32``.

        Raises ``ValueError`` when the buffer is empty or, without replacement,
        when ``batch_size > len(self)``.
        """
        idx = self.sample_indices(batch_size, rng, replace)
        # take(axis=0), not fancy indexing: the same rows, ~2 us instead of ~5 us per
        # (256, 17) gather (indexing's general path costs more than take's row copy)
        return Batch(
            self.states.take(idx, axis=0),
            self.actions.take(idx, axis=0),
            self.rewards.take(idx),
            self.next_states.take(idx, axis=0),
            self.dones.take(idx),
        )

    _ARRAYS = ("states", "actions", "rewards", "next_states", "dones")

    def save(self, path: str) -> str:
        """Write the stored transitions, the write position and the sampling
        generator's state to ``path`` (a ``.npz``; written to a temporary file
        and renamed, so a kill never leaves a half-written buffer). Returns the path."""
        meta = {"capacity": self.capacity, "pos": self._pos, "size": self._size,
                "obs_shape": self.obs_shape, "action_shape": self.action_shape,
                "rng": self._rng_state()}
        n = self._size
        tmp = f"{path}.tmp.npz"   # np.savez appends .npz to names without it
        np.savez(tmp, meta=np.array(json.dumps(meta)),
                 **{k: getattr(self, k)[:n] for k in self._ARRAYS})
        os.replace(tmp, path)
        return path

    def load(self, path: str) -> "ReplayBuffer":
        """Restore what :meth:`save` wrote into this buffer, which must have the
        same capacity, shapes and dtypes (a ValueError says which differs)."""
        with np.load(path, allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            want = {"capacity": self.capacity, "obs_shape": list(self.obs_shape),
                    "action_shape": list(self.action_shape)}
            got = {k: meta[k] for k in want}
            if got != want:
                raise ValueError(f"ReplayBuffer.load({path!r}): the file holds a buffer with {got}, "
                                 f"this buffer has {want}; create the buffer with the saved settings")
            for k in self._ARRAYS:
                store, arr = getattr(self, k), f[k]
                if arr.dtype != store.dtype:
                    raise ValueError(f"ReplayBuffer.load({path!r}): {k} stored as {arr.dtype}, "
                                     f"this buffer holds {store.dtype}")
                store[:len(arr)] = arr
        self._pos, self._size = int(meta["pos"]), int(meta["size"])
        self._plan = None
        self.rng.bit_generator.state = meta["rng"]
        return self

    def __repr__(self) -> str:
        return (f"ReplayBuffer(capacity={self.capacity}, len={self._size}, obs_shape={self.obs_shape}, "
                f"action_shape={self.action_shape})")
