"""The C allocator's thresholds for NumPy's buffers (glibc only), set once at import.

Every eager op returns a fresh array, and a training step allocates and frees
the same few megabytes in the same order each time. With glibc's default
dynamic thresholds that memory goes back to the kernel after each step: when the
step's temporaries are freed, the free space at the top of the heap exceeds the
trim threshold (twice the mmap threshold, which glibc raises only as far as the
largest array freed so far) and the heap is trimmed, so the next step's arrays
fault their pages in again, one minor page fault (a zeroed page) per 4 KiB. An
eager TD3-256 iteration took ~160 of them; at ~3 us each on this VM that was
0.4-0.7 ms of an ~8 ms iteration (same process, the thresholds switched between
steps, interleaved; thread CPU time, one BLAS thread).

Here the thresholds are set to the values glibc's own dynamic rule ends at on a
64-bit machine, once it has freed one 32 MiB block: arrays below 32 MiB come
from the heap (``M_MMAP_THRESHOLD``) and the heap keeps up to 64 MiB of free
space at its top (``M_TRIM_THRESHOLD``) instead of returning it. Fixed values
also stop the dynamic rule itself. The cost is that up to 64 MiB of freed
memory per malloc arena may stay in the process, as it would in a program that
has freed a 32 MiB array once; larger arrays are still mapped and unmapped.

Left alone: a C library other than glibc, the thresholds set by the user
(``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_`` or a
``glibc.malloc`` tunable in ``GLIBC_TUNABLES``), and
``TAPEFLOW_MALLOC=default`` in the environment. The setting is process-wide,
like glibc's own adjustment: other code in the process sees it too.
"""
from __future__ import annotations

import os

#: glibc's mallopt parameter numbers (malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: glibc's ceiling for its dynamic mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX:
#: 4 MiB * sizeof(long)); its dynamic trim threshold is twice the mmap threshold
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD

#: what tune() did: "tuned", or why it did nothing
STATUS = "not run"


def _user_set():
    env = os.environ
    if env.get("TAPEFLOW_MALLOC", "").lower() == "default":
        return "TAPEFLOW_MALLOC=default"
    for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
        if name in env:
            return f"{name} is set"
    if "glibc.malloc." in env.get("GLIBC_TUNABLES", ""):
        return "GLIBC_TUNABLES sets glibc.malloc"
    return None


def tune():
    """Set the thresholds (see the module doc); returns STATUS."""
    global STATUS
    why = _user_set()
    if why is None:
        try:
            os.confstr("CS_GNU_LIBC_VERSION")   # raises (ValueError, OSError) off glibc
            import ctypes
            mallopt = ctypes.CDLL("libc.so.6").mallopt
        except (ValueError, OSError, AttributeError, ImportError):
            why = "not glibc"
        else:
            # (mallopt returns 1 on success)
            ok = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
            ok = mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and ok
            why = "tuned" if ok else "mallopt refused"
    STATUS = why
    return why


tune()
