"""Per-step random draws taken from a NumPy Generator a block of steps at a time.

An RL loop draws a little noise every step: the exploration noise (6 normals
for HalfCheetah) and TD3's target policy noise (a (256, 6) float32 block).
Each Generator call costs far more than its values when it runs right after
the update, which has evicted NumPy's and the Generator's code and data from
the caches: in the TD3 HalfCheetah loop (2-core AMD EPYC, busy host, per step,
interleaved in one process) the exploration noise + clip took 40 us (mean)
drawn per step and 21 us from a block, the target noise 36 us and 25 us.

The values are the ones the per-step calls would give: a Generator's stream of
normals does not depend on how it is cut into calls (its 32-bit buffer is part
of its state), so ``normal(0, s, size=(k, n))`` holds the same rows as ``k``
calls of ``normal(0, s, size=n)``, and ``standard_normal`` likewise (both
tested). ``state`` is the Generator's state after the draws handed out so far
(not after the whole block), so a checkpoint taken mid-block resumes exactly.
"""
from __future__ import annotations

import numpy as np

__all__ = ["BlockDraws"]


class BlockDraws:
    """``draws()`` returns the next draw of shape ``shape`` from ``rng``, as the
    per-step call ``draw(rng, shape)`` would, but calls ``draw(rng, (block, *shape))``
    once per ``block`` steps. ``draw`` must consume the Generator's stream in order,
    element by element (``normal``, ``standard_normal``, ``random``), which
    makes a block equal to successive calls.

    The returned array is a row of the block: read it, do not keep writing to it.

    ``state`` gets and sets the Generator's state as of the draws handed out
    (setting it discards the rest of the block). ``bit_generator`` is the object
    itself, so code that saves and restores a plain Generator through
    ``g.bit_generator.state`` (the trainer's checkpoints) works unchanged.
    """

    def __init__(self, rng: np.random.Generator, draw, shape, block: int = 64):
        if block < 1:
            raise ValueError(f"BlockDraws: block must be >= 1, got {block}")
        self.rng = rng
        self._draw = draw
        self.shape = tuple(shape)
        self.block = int(block)
        self._buf = None
        self._next = self.block          # the next row of _buf to hand out; block: draw a new one
        self._start = None               # the Generator's state before _buf was drawn

    def __call__(self) -> np.ndarray:
        i = self._next
        if i == self.block:
            self._start = self.rng.bit_generator.state
            self._buf = self._draw(self.rng, (self.block, *self.shape))
            i = 0
        self._next = i + 1
        return self._buf[i]

    @property
    def drawn(self) -> int:
        """Rows of the current block handed out (``block`` when none is left)."""
        return self._next

    @property
    def bit_generator(self):
        return self

    @property
    def state(self) -> dict:
        if self._next == self.block:      # the block used up (or none drawn): the Generator is there
            return self.rng.bit_generator.state
        # the draws handed out, replayed from the block's start on a scratch Generator
        g = np.random.Generator(type(self.rng.bit_generator)())
        g.bit_generator.state = self._start
        self._draw(g, (self._next, *self.shape))
        return g.bit_generator.state

    @state.setter
    def state(self, state: dict) -> None:
        self.rng.bit_generator.state = state
        self._buf, self._next, self._start = None, self.block, None

    def __repr__(self) -> str:
        return f"BlockDraws(shape={self.shape}, block={self.block})"
