"""The C allocator's thresholds (tapeflow/core/memory.py): a step that allocates and
frees the same few megabytes again and again must not fault its pages in again
each time. Counted with getrusage's minor page faults in a fresh interpreter (the
thresholds are set at import; an earlier test's frees would change glibc's dynamic
ones)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")

_PROBE = """
import resource
import numpy as np
import tapeflow as tf
from tapeflow.core import memory

def step():
    # an eager step's pattern: sixteen 256 KiB temporaries made, written, all freed
    arrays = [np.empty(1 << 16, np.float32) for _ in range(16)]
    for a in arrays:
        a.fill(1)
    del arrays

step()
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    step()
print(memory.STATUS, '|', resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
"""


def _faults(**env):
    e = {k: v for k, v in os.environ.items() if k not in ("TAPEFLOW_MALLOC", "MALLOC_TRIM_THRESHOLD_",
                                                          "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES")}
    r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120,
                       env=dict(e, PYTHONPATH=ROOT, **env))
    assert r.returncode == 0, r.stdout + r.stderr
    status, n = r.stdout.strip().rsplit("|", 1)
    return status.strip(), int(n)


def _glibc():
    try:
        os.confstr("CS_GNU_LIBC_VERSION")
        return True
    except (ValueError, OSError):
        return False


@pytest.mark.skipif(not _glibc(), reason="glibc's malloc")
def test_repeated_step_allocations_fault_no_pages_in_again():
    status, n = _faults()
    assert status == "tuned"
    # 20 steps x 16 arrays x 64 pages = 20,480 pages: glibc's defaults fault most of them
    # in again (next test); a few faults are the interpreter's own
    assert n < 200, f"{n} minor page faults over 20 steps of the same allocations"


@pytest.mark.skipif(not _glibc(), reason="glibc's malloc")
def test_glibc_defaults_kept_when_asked_and_they_fault():
    """TAPEFLOW_MALLOC=default, or a threshold the user set, leaves glibc as it is; that the
    probe then faults shows the previous test can fail."""
    status, n = _faults(TAPEFLOW_MALLOC="default")
    assert status == "TAPEFLOW_MALLOC=default"
    assert n > 5000
    status, _ = _faults(MALLOC_TRIM_THRESHOLD_="1000000")
    assert status == "MALLOC_TRIM_THRESHOLD_ is set"
    status, _ = _faults(GLIBC_TUNABLES="glibc.malloc.mmap_threshold=1000000")
    assert status == "GLIBC_TUNABLES sets glibc.malloc"
