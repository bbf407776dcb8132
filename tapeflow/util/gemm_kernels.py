"""Native loops for the narrow GEMMs OpenBLAS runs far below its peak.

OpenBLAS packs both operands into panels and runs a micro-kernel over tiles of
the output; for a product with a side of a few elements the packing and the
partial tiles cost more than the multiply-adds. Measured on a 2-core AMD EPYC
(OpenBLAS 0.3.31, Haswell kernels), float32, one thread:
(256, 256) @ (256, 6) took 26-50 us (15-25 GFLOP/s) where its 393K
multiply-adds need ~9 us at the core's FMA peak. Two loops cover such shapes:

``dots(a, bt, c)``: ``c[i, n] = sum_k a[i, k] * bt[n, k]``, for few columns
    (``n`` small) and ``a``, ``bt`` contiguous along ``k``: each output is a dot
    product of two contiguous rows; four rows of ``a`` and two of ``bt`` at a time
    share their loads. The loop over ``k`` is vectorized as a reduction, which needs
    ``fastmath={'reassoc'}``: the sum is split into per-lane partial sums that are
    added at the end, in an order LLVM picks for the machine's vector width. So
    the last bits differ from BLAS's (whose blocking also changes them), and
    between CPUs of different vector widths; on one machine the result is
    deterministic and the same in every mode, since eager and compiled code call
    this one loop for the shape.

``rows(a, b, c)``: ``c[i, j] = sum_k a[i, k] * b[k, j]`` with ``b``'s rows
    contiguous: ``c``'s row is updated with four of ``b``'s rows at a time, the
    loop over ``j`` vectorized. It computes a weight gradient ``h.T @ g`` with few
    columns as its transpose ``g.T @ h``: few rows, ``h``'s rows contiguous. Only ``fastmath={'contract'}``: every element is
    one chain of fused multiply-adds in ``k`` order (the first product rounded
    alone, as BLAS's 0 + a*b), so its value does not depend on the blocking.

They work on blocks of four rows of ``c`` (the last block overlapping the one
before it when ``m`` is not a multiple of four: its rows get the same values
again), so both need ``m >= 4``; ``dots`` needs ``k >= 1`` and ``n >= 2``,
``rows`` ``k >= 4``.
Operands are floats of one dtype, accumulated in that dtype as BLAS does.

``outer(a, b, out)``: ``out[i, j] = a[i] * b[j]``, a product over a contraction of
    length 1 (``threads._outer``): one product per element, no fastmath, so the
    bits are the elementwise multiply's.

``columns(a, b, out)``: ``out = [a | b]`` for two C-ordered matrices of as many rows,
    the concat beside a GEMM's input (a critic's ``concat(state, action)``,
    ``shape.concat_p``'s planned-buffer kernel): (256, 17) and (256, 6) float32 took
    7.5-7.8 us in ``np.concatenate`` (allocation, then a strided copy per operand),
    3.2-3.9 us here, most of it the call.

numba is imported on the first call of :func:`kernels`, so programs without such
shapes never pay for it.
"""
from __future__ import annotations

#: [(dots, rows, outer, columns)] once looked up, or [None] without numba
_KERNELS = []


def kernels():
    """``(dots, rows, outer, columns)`` as numba loops, or None when numba is not installed."""
    if not _KERNELS:
        try:
            import numba
        except ImportError:
            _KERNELS.append(None)
            return None

        @numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})
        def dots(a, bt, c):
            m, kk = a.shape
            n = bt.shape[0]
            for i0 in range(0, m, 4):
                i = min(i0, m - 4)         # the last block overlaps the one before: same values
                for j0 in range(0, n, 2):
                    j = min(j0, n - 2)     # so does the last pair of columns for an odd n
                    # four rows by two columns: each load of a serves two sums, each of bt
                    # four (one column at a time: 20.9 us for (256, 256) @ (256, 6), this 15.3).
                    # Started from the first products, not from 0.0: a float literal would
                    # make the sums float64
                    v, w = bt[j, 0], bt[j + 1, 0]
                    x0, x1, x2, x3 = a[i, 0], a[i + 1, 0], a[i + 2, 0], a[i + 3, 0]
                    s0, s1, s2, s3 = x0 * v, x1 * v, x2 * v, x3 * v
                    t0, t1, t2, t3 = x0 * w, x1 * w, x2 * w, x3 * w
                    for k in range(1, kk):
                        v, w = bt[j, k], bt[j + 1, k]
                        x0, x1, x2, x3 = a[i, k], a[i + 1, k], a[i + 2, k], a[i + 3, k]
                        s0 += x0 * v
                        s1 += x1 * v
                        s2 += x2 * v
                        s3 += x3 * v
                        t0 += x0 * w
                        t1 += x1 * w
                        t2 += x2 * w
                        t3 += x3 * w
                    c[i, j], c[i + 1, j], c[i + 2, j], c[i + 3, j] = s0, s1, s2, s3
                    c[i, j + 1], c[i + 1, j + 1], c[i + 2, j + 1], c[i + 3, j + 1] = t0, t1, t2, t3

        @numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
        def rows(a, b, c):
            m, kk = a.shape
            n = b.shape[1]
            for i0 in range(0, m, 4):
                i = min(i0, m - 4)     # the last block overlaps the one before: same values
                # k in chunks of 4 (the first one starts the sums), then one of 2, then 1:
                # each c element is read and written once per chunk; 16 scalars of a are
                # held across the row. Left to right: the k-ordered multiply-add chain
                x00, x01, x02, x03 = a[i, 0], a[i, 1], a[i, 2], a[i, 3]
                x10, x11, x12, x13 = a[i + 1, 0], a[i + 1, 1], a[i + 1, 2], a[i + 1, 3]
                x20, x21, x22, x23 = a[i + 2, 0], a[i + 2, 1], a[i + 2, 2], a[i + 2, 3]
                x30, x31, x32, x33 = a[i + 3, 0], a[i + 3, 1], a[i + 3, 2], a[i + 3, 3]
                for j in range(n):
                    b0, b1, b2, b3 = b[0, j], b[1, j], b[2, j], b[3, j]
                    c[i, j] = x00 * b0 + x01 * b1 + x02 * b2 + x03 * b3
                    c[i + 1, j] = x10 * b0 + x11 * b1 + x12 * b2 + x13 * b3
                    c[i + 2, j] = x20 * b0 + x21 * b1 + x22 * b2 + x23 * b3
                    c[i + 3, j] = x30 * b0 + x31 * b1 + x32 * b2 + x33 * b3
                k4 = kk - kk % 4
                for k in range(4, k4, 4):
                    x00, x01, x02, x03 = a[i, k], a[i, k + 1], a[i, k + 2], a[i, k + 3]
                    x10, x11, x12, x13 = a[i + 1, k], a[i + 1, k + 1], a[i + 1, k + 2], a[i + 1, k + 3]
                    x20, x21, x22, x23 = a[i + 2, k], a[i + 2, k + 1], a[i + 2, k + 2], a[i + 2, k + 3]
                    x30, x31, x32, x33 = a[i + 3, k], a[i + 3, k + 1], a[i + 3, k + 2], a[i + 3, k + 3]
                    for j in range(n):
                        b0, b1, b2, b3 = b[k, j], b[k + 1, j], b[k + 2, j], b[k + 3, j]
                        c[i, j] = c[i, j] + x00 * b0 + x01 * b1 + x02 * b2 + x03 * b3
                        c[i + 1, j] = c[i + 1, j] + x10 * b0 + x11 * b1 + x12 * b2 + x13 * b3
                        c[i + 2, j] = c[i + 2, j] + x20 * b0 + x21 * b1 + x22 * b2 + x23 * b3
                        c[i + 3, j] = c[i + 3, j] + x30 * b0 + x31 * b1 + x32 * b2 + x33 * b3
                if kk - k4 >= 2:
                    k = k4
                    x00, x01, x10, x11 = a[i, k], a[i, k + 1], a[i + 1, k], a[i + 1, k + 1]
                    x20, x21, x30, x31 = a[i + 2, k], a[i + 2, k + 1], a[i + 3, k], a[i + 3, k + 1]
                    for j in range(n):
                        b0, b1 = b[k, j], b[k + 1, j]
                        c[i, j] = c[i, j] + x00 * b0 + x01 * b1
                        c[i + 1, j] = c[i + 1, j] + x10 * b0 + x11 * b1
                        c[i + 2, j] = c[i + 2, j] + x20 * b0 + x21 * b1
                        c[i + 3, j] = c[i + 3, j] + x30 * b0 + x31 * b1
                if kk % 2:
                    k = kk - 1
                    x0, x1, x2, x3 = a[i, k], a[i + 1, k], a[i + 2, k], a[i + 3, k]
                    for j in range(n):
                        bk = b[k, j]
                        c[i, j] += x0 * bk
                        c[i + 1, j] += x1 * bk
                        c[i + 2, j] += x2 * bk
                        c[i + 3, j] += x3 * bk

        @numba.njit(cache=True, nogil=True)
        def outer(a, b, out):
            for i in range(out.shape[0]):
                ai = a[i]
                for j in range(out.shape[1]):
                    out[i, j] = ai * b[j]

        @numba.njit(cache=True, nogil=True)
        def columns(a, b, out):
            na = a.shape[1]
            for i in range(out.shape[0]):
                for j in range(na):
                    out[i, j] = a[i, j]
                for j in range(b.shape[1]):
                    out[i, na + j] = b[i, j]

        _KERNELS.append((dots, rows, outer, columns))
    return _KERNELS[0]
