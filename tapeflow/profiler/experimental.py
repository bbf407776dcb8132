"""``tf.profiler.experimental``: TF's session-style profiler API over ``tapeflow.profile``.

TF 2.21 writes an XSpace protobuf (``<logdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb``)
for TensorBoard's profile plugin. tapeflow has no XSpace writer; it writes what its profiler
has, in the same place: a Chrome trace (``<host>.trace.json``, opens in chrome://tracing and
Perfetto) and the text report (``<host>.profile.txt``). The errors are TF's: a second
``start`` raises ``AlreadyExistsError``, a ``stop`` without a ``start`` ``UnavailableError``.
"""
from __future__ import annotations

import contextlib
import os
import socket
import time
from typing import NamedTuple

from ..core.state import STATE
from ..errors import AlreadyExistsError, UnavailableError
from .profile import Profile as _Profiler

__all__ = ["Profile", "ProfilerOptions", "Trace", "start", "stop"]

_SESSION = {"profile": None, "logdir": None}


class ProfilerOptions(NamedTuple):
    """Accepted for TF compatibility; tapeflow's profiler has one level of detail."""
    host_tracer_level: int = 2
    python_tracer_level: int = 0
    device_tracer_level: int = 1
    delay_ms: int | None = None


def start(logdir, options=None):
    """Start profiling everything tapeflow runs until ``stop()``; results go under ``logdir``."""
    if _SESSION["profile"] is not None:
        raise AlreadyExistsError(None, None, "Another profiler is running.")
    if options is not None and not isinstance(options, ProfilerOptions):
        raise TypeError(f"tf.profiler.experimental.start: options must be a ProfilerOptions, "
                        f"got {type(options).__name__}")
    p = _Profiler()
    p.__enter__()
    _SESSION.update(profile=p, logdir=os.fspath(logdir))


def stop(save=True):
    """Stop profiling and (with ``save``) write the trace and the report under the start's logdir."""
    p, logdir = _SESSION["profile"], _SESSION["logdir"]
    if p is None:
        raise UnavailableError(None, None, "Cannot export profiling results. No profiler is running.")
    _SESSION.update(profile=None, logdir=None)
    p.__exit__(None, None, None)
    if not save:
        return
    run = os.path.join(logdir, "plugins", "profile", time.strftime("%Y_%m_%d_%H_%M_%S"))
    os.makedirs(run, exist_ok=True)
    host = socket.gethostname() or "localhost"
    p.export_chrome_trace(os.path.join(run, f"{host}.trace.json"))
    with open(os.path.join(run, f"{host}.profile.txt"), "w") as f:
        f.write(p.report() + "\n")


@contextlib.contextmanager
def Profile(logdir, options=None):  # noqa: N802 -- TF's name
    """``with Profile(logdir):`` is ``start(logdir)`` ... ``stop()``. (tapeflow's own profiler
    class stays ``tapeflow.profiler.Profile``.)"""
    start(logdir, options)
    try:
        yield
    finally:
        stop()


class Trace:
    """``with Trace("train", step_num=step):`` marks a region: while a profiler is active it
    becomes one "trace" event (its keyword arguments as the event's args) in the Chrome trace;
    otherwise it costs two clock reads."""

    def __init__(self, name, **kwargs):
        self.name = name
        self.kwargs = kwargs
        self._t = None

    def __enter__(self):
        self._t = time.perf_counter()
        return self

    def __exit__(self, *exc):
        prof = STATE.profiler
        if prof is not None:
            prof._event(self.name, "trace", self._t, time.perf_counter() - self._t,
                        {k: str(v) for k, v in self.kwargs.items()} or None)
        return False


def __getattr__(name):   # client/server (TF's remote profiling): out of scope, by name (tapeflow/_unsupported.py)
    from .._unsupported import FEATURES, UnsupportedNamespace
    if f"profiler.experimental.{name}" in FEATURES:
        return UnsupportedNamespace(f"profiler.experimental.{name}")
    raise AttributeError(f"module 'tapeflow.profiler.experimental' has no attribute {name!r}")
