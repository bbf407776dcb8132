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

A compiled function's buffer slots (``slab``) are views of one buffer, placed as
above, which where it spans at least ``HUGE`` bytes starts on a ``HUGE`` boundary and is
rounded up to whole ``HUGE`` blocks, with the kernel asked for transparent huge pages
over it (Linux ``madvise(MADV_HUGEPAGE)``; ``enabled`` ``madvise`` or ``always`` in
/sys/kernel/mm/transparent_hugepage gives them, ``never`` ignores the advice). Why: a
TD3 cycle streams through ~10 MB of slots (40 of 256 KiB at 256-256) besides the
weights, about the 3072 4 KiB pages the second-level TLB maps, so its GEMMs and fused
loops walk page tables, the more so when another process shares the cores and evicts
the entries. Measured (2-core EPYC Zen 4 shared with another busy process; one process,
the same variables, the cycle's two functions traced again with 4 KiB-page and with
huge-page slots, the codes swapped per cycle, 300-400 interleaved pairs per run, both
trace orders, as the later trace ran ~50 us faster whatever its pages): per-pair
medians huge - 4 KiB, TD3 400-300 -184, -38, -77, -51, -68, -9 us (of 11-18 ms);
TD3 256-256 -41, -237, -196, -90 us at load average 2.4-3.3, and -28, +14, +29, +135 us
at 1.9 (of 6.5-12 ms): a gain where the TLB is under pressure, none measurable
otherwise. The values are the same (only where the buffers lie changes). Below
``HUGE`` bytes of slots, a huge page would be mostly unused memory: malloc's pages,
as before. (Variables' arrays are each their own buffer, ``_sole_array``; moving TD3
256's 24 large ones to huge pages as well measured -64, -73, +41, +6 us: not done.)
"""
from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import sys

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


#: a transparent huge page (x86-64, arm64 with 4 KiB base pages): slot buffers of at least
#: this many bytes are aligned to it and advised to the kernel as huge-page memory
HUGE = 2 << 20
#: madvise's advice for transparent huge pages (Linux asm-generic/mman-common.h)
_MADV_HUGEPAGE = 14
_MADVISE = []


def _madvise():
    """libc's madvise (Linux), else None; looked up once."""
    if not _MADVISE:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).madvise
                fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
                fn.restype = ctypes.c_int
            except (OSError, AttributeError):
                fn = None
        _MADVISE.append(fn)
    return _MADVISE[0]


def advise_huge(a):
    """Ask the kernel for transparent huge pages over array ``a``'s memory (its start and
    size multiples of ``HUGE``); True when the advice was taken. A refusal (THP off, an
    old kernel, no libc) leaves 4 KiB pages: only the speed differs."""
    fn = _madvise()
    return fn is not None and fn(a.ctypes.data, a.nbytes, _MADV_HUGEPAGE) == 0


def slab(specs):
    """Arrays of ``specs`` [(shape, dtype)], C-ordered and writable, array k's data
    starting ``k * STAGGER`` bytes (mod 4 KiB) into a page, as ``empty(.., index=k)``
    places them: views of one buffer, in huge pages where it spans ``HUGE`` bytes or
    more (module doc). Arrays below ``MIN_BYTES`` are malloc's, as ``empty``'s."""
    sizes = [int(np.prod(shape, dtype=np.int64)) * np.dtype(dt).itemsize for shape, dt in specs]
    big = [n >= MIN_BYTES for n in sizes]
    total = sum(n + PAGE for n, b in zip(sizes, big) if b)
    if total < HUGE:
        return [empty(shape, dt, index=k) for k, (shape, dt) in enumerate(specs)]
    total = -(-total // HUGE) * HUGE
    raw = np.empty(total + HUGE, np.uint8)
    buf = raw[(-raw.ctypes.data) % HUGE:][:total]
    advise_huge(buf)
    out, pos = [], 0
    for k, ((shape, dt), n, b) in enumerate(zip(specs, sizes, big)):
        if not b:
            out.append(np.empty(shape, dt))
            continue
        off = (k * STAGGER - (buf.ctypes.data + pos)) % PAGE
        out.append(buf[pos + off:pos + off + n].view(dt).reshape(shape))
        pos += off + n
    return out


def copy(a):
    """A placed, C-ordered copy of array ``a`` (same values, dtype and shape)."""
    out = empty(a.shape, a.dtype)
    np.copyto(out, a, casting="no")
    return out


def is_placed_size(a):
    """Whether an array of ``a``'s size is one that ``empty`` places."""
    return a.nbytes >= MIN_BYTES
