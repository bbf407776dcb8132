"""``tapeflow.profiler``: ``profile()`` (exported as ``tapeflow.profile``) --
per-op kernel/dispatch times, compiled calls, tracing and retraces, a verdict,
a terminal table and a Chrome trace. See ``profile.py``."""
from . import experimental  # noqa: F401  (tf.profiler.experimental)
from .profile import Profile, profile  # noqa: F401

__all__ = ["Profile", "experimental", "profile"]

