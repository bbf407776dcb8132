"""Where a large array starts within a 4 KiB page.

Arrays of a few pages from malloc start 16 bytes apart within a page (one chunk of
n + 16 bytes after the other), or all at the same offset when mmapped. A fused loop
streaming through several of them (an Adam update reads and writes a weight, its two
moments and its target copy) then has its loads and stores collide in the CPU's
4 KiB address-aliasing check (store-to-load forwarding compares the low 12 bits
first), and stalls. So the arrays such loops stream through are placed
``STAGGER`` bytes apart (mod 4 KiB): planned buffer slots (by slot index) and the
arrays of variables that compiled code updates in place (by a running count).

Measured (2-core EPYC, each kernel alone with TD3 256's arguments, min of 1000):
the critics' fused Adam over their two 256x256 weights 45 us with its arrays 16
bytes apart as malloc placed them, 30 us placed; the actor's Adam + soft update
56 -> 47 us. Slots: TD3 256's fused loops 567 -> 514 us. Inside the TD3 256 cycle (where
the optimizer state mostly comes from memory, not cache, and that cost dominates) the
variables' placement saved less: the fused kernels' time per cycle -6 us (critic
iteration) and -14 us (policy iteration), medians of 200 interleaved pairs.

448 = 7 cache lines, coprime with the 64 lines of a page: consecutive arrays land
far apart and 64 of them take every line once; 64-byte alignment keeps vector
loads aligned. Small arrays (below ``MIN_BYTES``) are left to malloc: nothing to
gain, and no padding to pay.

A placed array is a view of a private byte buffer (``base`` is that buffer, which
nothing else refers to); ``core.tensor._sole_array`` counts such an array as its
tensor's own, as an array that owns its memory.
"""
from __future__ import annotations

import itertools

import numpy as np

STAGGER = 448
PAGE = 4096
MIN_BYTES = 4 * PAGE

_count = itertools.count()


def empty(shape, dtype, index=None):
    """A C-ordered, writable array of ``shape`` whose data starts ``index * STAGGER``
    bytes (mod 4 KiB) into a page; ``index`` None: the next of a running count."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if n < MIN_BYTES:
        return np.empty(shape, dtype)
    k = next(_count) if index is None else index
    raw = np.empty(n + PAGE, np.uint8)
    off = (k * STAGGER - raw.ctypes.data) % PAGE
    return raw[off:off + n].view(dtype).reshape(shape)


def copy(a):
    """A placed, C-ordered copy of array ``a`` (same values, dtype and shape)."""
    out = empty(a.shape, a.dtype)
    np.copyto(out, a, casting="no")
    return out


def is_placed_size(a):
    """Whether an array of ``a``'s size is one that ``empty`` places."""
    return a.nbytes >= MIN_BYTES
