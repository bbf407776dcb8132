"""Where tapeflow keeps what it builds once per machine (numba kernels, BLAS thread
decisions): ``$TAPEFLOW_CACHE_DIR``, else ``$XDG_CACHE_HOME/tapeflow``, else
``~/.cache/tapeflow``. Read per call, so a changed environment takes effect."""
from __future__ import annotations

import os


def cache_dir():
    return os.environ.get("TAPEFLOW_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "tapeflow")
