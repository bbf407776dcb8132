"""Big GEMMs as blocks that threads take one at a time.

OpenBLAS splits a GEMM evenly over its threads, and they meet at a barrier:
when another process, or the host (another VM), takes one core's time, the
part on that core waits for it and the whole product with it. On a shared
2-core machine the autoencoder's 10000x784 @ 784x200 took 20 ms on two
threads while quiet, 40 ms on one, and its two backward GEMMs 300 ms one after
the other on two threads beside a busy process (116 ms side by side on one
thread each). Hence the load guard (util/threads.py) that drops every GEMM to
one thread under load, and with it half the speed of a product that a second
thread would still speed up by a third. TF's thread pool instead splits a big
product into many tasks that idle threads take in turn: a slowed thread takes
fewer of them.

So does this module, for products where a split costs (almost) no extra work:
the product is cut into ``BLOCKS`` pieces along one axis, each a one-thread
BLAS call, and ``threads`` threads (the caller and pool workers that sleep
between products) take the pieces in turn. Where a piece waits for a core,
the other thread takes the rest: a busy core costs a share of the product,
never all of it. The axis:

* output rows (``M``): every piece re-reads (packs) the whole right operand;
* output columns (``N``): every piece re-reads the whole left operand;
* the contraction (``K``): pieces of both operands, each piece's product a
  partial result, the partials then added in piece order (the output is
  small: the weight gradient ``h.T @ g`` over a batch).

The axis whose split adds the least traffic is taken, and the split is made
only when that extra traffic is at most ``MAX_EXTRA`` of the elements the
product reads and writes anyway (``plan``). Measured on a 2-core AMD EPYC (the
one-thread CPU time of all pieces over that of the whole product): the
autoencoder's row splits 0.97-1.01 at 8 pieces, its ``K = 10,000`` weight
gradients 0.94-1.04 (their column or row splits: 1.1-1.9). A 2048^3 product
is not split (each of 8 row pieces would pack the whole 16 MB right operand
again): OpenBLAS's threads share that packing.

A thread takes the GIL between pieces (``np.matmul`` releases it while BLAS
runs): in a program where another thread runs Python meanwhile, each piece may
wait up to the interpreter's switch interval (5 ms) to hand back.

Results: the pieces and the order the partials are added in depend on the
shapes and BLAS's pool size only, never on the threads a call gets or the load,
so a product has the same bits on any number of threads, busy or quiet (the threaded OpenBLAS call it
replaces changes its last bits with its thread count). They differ from an
unsplit call in the last bits, as OpenBLAS's own threaded calls do.
"""
from __future__ import annotations

import itertools
import os
import threading

import numpy as np

#: the fewest pieces a product is cut into, and pieces per thread of BLAS's pool beyond
#: that: enough for two threads to even out a slowed one (a piece of the autoencoder's
#: GEMMs is ~5 ms of one core), few enough that each piece is a large BLAS call (16
#: K-pieces of its weight gradients cost 1.16-1.26x the work). On a many-core machine
#: the pieces multiply until their traffic outweighs the split, and OpenBLAS's own
#: threads run the product
BLOCKS = 8
PIECES_PER_THREAD = 2
#: the most extra memory traffic a split may add, as a fraction of the elements the
#: product reads and writes anyway (the autoencoder's K-splits: 25%)
MAX_EXTRA = 1 / 3


def plan(sa, sb, dtype_a, dtype_b, pool):
    """How a product of 2-D operands of shapes ``sa`` and ``sb`` is split on a machine
    whose BLAS pool has ``pool`` threads: ``(axis, pieces)``, axis 0 (output rows), 1
    (output columns) or 2 (the contraction), or None (not split: a batched product, a
    dtype BLAS does not run, a split adding too much traffic). Depends on these only,
    never on the load or the threads a call gets."""
    if len(sa) != 2 or len(sb) != 2 or dtype_a != dtype_b or dtype_a not in (np.float32, np.float64):
        return None
    (M, K), N = sa, sb[1]
    n = max(BLOCKS, PIECES_PER_THREAD * pool)
    if min(M, K, N) < 1:
        return None
    moved = M * K + K * N + M * N
    extra = {0: (n - 1) * K * N if M >= n else None,   # each piece packs the right operand again
             1: (n - 1) * M * K if N >= n else None,   # each piece packs the left operand again
             2: 2 * n * M * N if K >= n else None}     # partials written, then read to add them
    axis = min((a for a in extra if extra[a] is not None), key=lambda a: extra[a], default=None)
    if axis is None or extra[axis] > MAX_EXTRA * moved:
        return None
    return axis, n


def _cuts(size, n):
    """Where ``n`` pieces of ``size`` start and end: piece ``i`` gets a share ``n + 1 - i``
    (the first 2/(n+3) of the work, the last 4/(n(n+3))), so the pieces taken last are
    short and a thread that was slowed holds the others up by a short piece at most (8
    pieces: the last is 4.5% of the product, an even split's 12.5%). The autoencoder's
    pieces cost the same work either way (one-thread CPU time, row and contraction
    splits: 0.95-1.0 of the even split's)."""
    total = n * (n + 3) // 2
    return [size * (i * (n + 1) - i * (i - 1) // 2) // total for i in range(n + 1)]


def _pieces(a, b, out, axis, n):
    """The (left, right, result) operand views of each piece, and the partials to add
    (K split), or None."""
    if axis == 0:
        c = _cuts(a.shape[0], n)
        return [(a[c[i]:c[i + 1]], b, out[c[i]:c[i + 1]]) for i in range(n)], None
    if axis == 1:
        c = _cuts(b.shape[1], n)
        return [(a, b[:, c[i]:c[i + 1]], out[:, c[i]:c[i + 1]]) for i in range(n)], None
    c = _cuts(a.shape[1], n)
    parts = np.empty((n,) + out.shape, out.dtype)
    return [(a[:, c[i]:c[i + 1]], b[c[i]:c[i + 1]], parts[i]) for i in range(n)], parts


class _Pool:
    """Worker threads that sleep between products; the caller works too. Each product's
    pieces are taken in turn from a shared counter (``next`` on an ``itertools.count``
    is atomic under the GIL; ``np.matmul`` releases the GIL while BLAS runs)."""

    def __init__(self):
        self.workers = []          # (wake, done) events of each worker thread
        self.lock = threading.Lock()
        self.job = None

    def _grow(self, n):
        while len(self.workers) < n:
            wake, done = threading.Event(), threading.Event()
            t = threading.Thread(target=self._serve, args=(wake, done), daemon=True,
                                 name=f"tapeflow-gemm-{len(self.workers)}")
            self.workers.append((wake, done))
            t.start()

    def _serve(self, wake, done):
        while True:
            wake.wait()
            wake.clear()
            self._take()
            done.set()

    def _take(self):
        pieces, taken, errors = self.job
        for k in iter(taken.__next__, None):
            if k >= len(pieces):
                return
            try:
                np.matmul(*pieces[k][:2], out=pieces[k][2])
            except BaseException as e:  # noqa: BLE001 - raised again in the caller
                errors.append(e)
                return

    def run(self, pieces, threads):
        """Every piece's product, on ``threads`` threads (on the caller's alone while
        another thread of the program runs a product here: the same pieces, the same bits)."""
        if not self.lock.acquire(blocking=False):
            for x, y, o in pieces:
                np.matmul(x, y, out=o)
            return
        try:
            helpers = self.workers[:threads - 1] if threads > 1 else []
            if len(helpers) < threads - 1:
                self._grow(threads - 1)
                helpers = self.workers[:threads - 1]
            errors = []
            self.job = (pieces, itertools.count(), errors)
            for wake, _ in helpers:
                wake.set()
            try:
                self._take()
            finally:
                for _, done in helpers:  # no piece may still be written once we return
                    done.wait()
                    done.clear()
                self.job = None
            if errors:
                raise errors[0]
        finally:
            self.lock.release()


_POOL = [_Pool()]


def _after_fork():
    # a forked child has none of the parent's threads: a new pool (its workers start on demand)
    _POOL[0] = _Pool()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def matmul(a, b, out, how, threads):
    """``a @ b`` (2-D) split as ``how = plan(...)`` says, its pieces on ``threads``
    threads; BLAS must be on one thread (the caller sets it)."""
    axis, n = how
    threads = min(threads, n)
    if out is None:
        out = np.empty((a.shape[0], b.shape[1]), np.result_type(a, b))
    pieces, parts = _pieces(a, b, out, axis, n)
    _POOL[0].run(pieces, threads)
    if parts is not None:
        np.sum(parts, axis=0, out=out)  # in piece order: the same bits on any thread count
    return out
