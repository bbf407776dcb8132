"""``tapeflow.summary``: TensorBoard summaries with TF 2's API.

::

    writer = tf.summary.create_file_writer("logs/run1")
    with writer.as_default(step=0):
        for step in range(1000):
            loss = train_step(x, y)
            tf.summary.scalar("losses/td_loss", loss, step=step)
    writer.flush()

Functions write to the default writer (``writer.as_default()`` /
``writer.set_as_default()``) at ``step`` or else the default step
(``summary.experimental.set_step``, or ``as_default(step=...)``); they return
True when something was written, False when there is no default writer or
recording is off (``record_if`` / ``record_every_n_steps``). Values may be
tapeflow tensors or Variables, NumPy values or Python numbers.

Inside a ``tapeflow.function`` values are symbolic while tracing and the
Python body does not run on later calls, so summary calls there raise an
error saying so: return the value from the function and log it outside.

``graph(fn_or_graph)`` and ``trace_on()`` / ``trace_export(name, step)`` put
the traced graphs of ``tapeflow.function``s in TensorBoard's Graphs tab
(``trace_on(profiler=True)`` also profiles the code in between with
``tapeflow.profile`` and writes its Chrome trace and report).
"""
from __future__ import annotations

import contextlib
import os

import numpy as np

from ..core.state import STATE
from ..core.tensor import Tensor, Variable
from . import writer as _w
from .writer import NoopSummaryWriter, SummaryWriter

__all__ = ["create_file_writer", "create_noop_writer", "SummaryWriter", "scalar", "histogram", "text", "image", "audio",
           "write", "graph", "trace_on", "trace_export", "trace_off", "flush", "record_if",
           "should_record_summaries", "record_every_n_steps", "experimental"]

_DEFAULT: list = []         # as_default() writer stack (innermost last)
_BASE = [None]              # set_as_default() writer
_STEP = [None]              # default step (int, Tensor or Variable)
_RECORD: list = []          # record_if conditions (innermost last)


# -- writers -------------------------------------------------------------------------------------

def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None,
                       experimental_trackable=False, experimental_mesh=None):
    """A writer appending to a new event file in ``logdir`` (created if needed).
    ``max_queue`` (default 10) events are buffered at most; everything is
    flushed every ``flush_millis`` (default 120000), on ``flush()`` and ``close()``."""
    if logdir is None:
        return NoopSummaryWriter()
    return SummaryWriter(os.fspath(logdir), max_queue=max_queue, flush_millis=flush_millis,
                         filename_suffix=filename_suffix, name=name)


def create_noop_writer():
    return NoopSummaryWriter()


class _AsDefault:
    def __init__(self, writer, step):
        self.writer = writer
        self.step = step

    def __enter__(self):
        _DEFAULT.append(self.writer)
        self._old_step = _STEP[0]
        if self.step is not None:
            _STEP[0] = self.step
        return self.writer

    def __exit__(self, *exc):
        for i in range(len(_DEFAULT) - 1, -1, -1):
            if _DEFAULT[i] is self.writer:
                del _DEFAULT[i]
                break
        if self.step is not None:
            _STEP[0] = self._old_step
        try:
            self.writer.flush()
        except Exception:
            pass
        return False


def _set_default(writer, step):
    # the base default (outside every as_default() block)
    _BASE[0] = writer
    if step is not None:
        _STEP[0] = step


def _pop_writer(writer):
    _DEFAULT[:] = [w for w in _DEFAULT if w is not writer]
    if _BASE[0] is writer:
        _BASE[0] = None


def _default_writer():
    for w in reversed(_DEFAULT):
        if not w.closed:
            return w
    b = _BASE[0]
    return b if b is not None and not b.closed else None


def flush(writer=None, name=None):
    """Flush ``writer`` (default: the default writer)."""
    w = writer if writer is not None else _default_writer()
    if w is not None:
        w.flush()


# -- steps and recording conditions -------------------------------------------------------------------

def _set_step(step):
    """Default step for summaries written without ``step=`` (an int, Tensor or Variable)."""
    _STEP[0] = step


def _get_step():
    return _STEP[0]


def _step_value(step, what):
    if step is None:
        step = _STEP[0]
    if step is None:
        raise ValueError(f"tapeflow.summary.{what}: no step set; pass step=..., use writer.as_default(step=...), "
                         "or call tapeflow.summary.experimental.set_step(step)")
    if isinstance(step, Tensor):
        if STATE.trace is not None:
            raise _in_trace(what)
        step = step.numpy()
    try:
        return int(np.asarray(step))
    except (TypeError, ValueError):
        raise TypeError(f"tapeflow.summary.{what}: step must be an integer, got {step!r}") from None


@contextlib.contextmanager
def record_if(condition):
    """Record summaries inside only when ``condition`` (a bool, a boolean
    tensor, or a callable returning one, evaluated at each summary call) holds."""
    _RECORD.append(condition)
    try:
        yield
    finally:
        _RECORD.pop()


def should_record_summaries():
    if _default_writer() is None:
        return False
    if not _RECORD:
        return True
    c = _RECORD[-1]
    if callable(c) and not isinstance(c, Tensor):
        c = c()
    if isinstance(c, Tensor):
        c = c.numpy()
    return bool(np.asarray(c))


def record_every_n_steps(n, step=None):
    """``record_if`` that holds when the step (``step`` or the default step)
    is a multiple of ``n``."""
    n = int(n)
    if n < 1:
        raise ValueError("record_every_n_steps: n must be >= 1")
    return record_if(lambda: _step_value(step, "record_every_n_steps") % n == 0)


# -- values ----------------------------------------------------------------------------------------------

def _in_trace(what):
    return RuntimeError(
        f"tapeflow.summary.{what} was called inside a tapeflow.function: values are symbolic while tracing "
        "and this Python call would not run on later calls. Return the value from the function and log it "
        "outside (loss = train_step(...); tapeflow.summary.scalar('loss', loss, step=step)).")


def _value(x, what):
    if STATE.trace is not None:
        raise _in_trace(what)
    if isinstance(x, Variable):
        return np.asarray(x.numpy())
    if isinstance(x, Tensor):
        if x._v is None:
            raise _in_trace(what)
        return np.asarray(x.numpy())
    if isinstance(x, (list, tuple)) and any(isinstance(e, Tensor) for e in x):
        return np.asarray([_value(e, what) for e in x])
    return np.asarray(x)


def _prepare(what, step):
    """(writer, step) or None when nothing is to be written."""
    if STATE.trace is not None:
        raise _in_trace(what)
    w = _default_writer()
    if w is None:
        return None
    if not should_record_summaries():
        return None
    return w, _step_value(step, what)


def scalar(name, data, step=None, description=None):
    """Log a scalar (a number, 0-d or one-element tensor/array)."""
    pw = _prepare("scalar", step)
    if pw is None:
        return False
    v = _value(data, "scalar")
    if v.size != 1:
        raise ValueError(f"tapeflow.summary.scalar {name!r}: expected one value, got shape {v.shape}")
    if v.dtype.kind not in "biuf":
        raise TypeError(f"tapeflow.summary.scalar {name!r}: expected a number, got {v.dtype}")
    w, s = pw
    w.add_summary(_w.scalar_summary(name, float(v.reshape(())), description), s)
    return True


def histogram(name, data, step=None, buckets=None, description=None):
    """Log the distribution of ``data``'s values (``buckets`` equal-width buckets, default 30)."""
    pw = _prepare("histogram", step)
    if pw is None:
        return False
    v = _value(data, "histogram")
    if v.dtype.kind not in "biuf":
        raise TypeError(f"tapeflow.summary.histogram {name!r}: expected numbers, got {v.dtype}")
    w, s = pw
    w.add_summary(_w.histogram_summary(name, v, buckets, description), s)
    return True


def text(name, data, step=None, description=None):
    """Log a string (or an array of strings; Markdown in TensorBoard)."""
    pw = _prepare("text", step)
    if pw is None:
        return False
    v = data if isinstance(data, (str, bytes)) else _value(data, "text")
    w, s = pw
    w.add_summary(_w.text_summary(name, np.asarray(v), description), s)
    return True


def image(name, data, step=None, max_outputs=3, description=None):
    """Log up to ``max_outputs`` images from ``data`` (N, H, W, C), C in {1, 3, 4},
    float in [0, 1] or uint8."""
    pw = _prepare("image", step)
    if pw is None:
        return False
    v = _value(data, "image")
    w, s = pw
    w.add_summary(_w.image_summary(name, v, max_outputs, description), s)
    return True


def audio(name, data, sample_rate, step=None, max_outputs=3, encoding=None, description=None):
    """Log up to ``max_outputs`` clips of ``data`` (k, frames, channels), floats in [-1, 1], as 16-bit WAV
    files (tf.audio.encode_wav's bytes, TF's): TensorBoard's audio summary (tensorboard's summary_v2:
    a (k, 2) string tensor of [wav, label] rows, plugin "audio", encoding WAV)."""
    if encoding not in (None, "wav"):
        raise ValueError(f"Unknown encoding: {encoding!r}")   # tensorboard's text
    pw = _prepare("audio", step)
    if pw is None:
        return False
    v = _value(data, "audio")
    if v.ndim != 3:
        raise ValueError(f"tapeflow.summary.audio {name!r}: data must have rank 3 (clips, frames, channels), "
                         f"got shape {v.shape}")
    if int(max_outputs) < 0:
        raise ValueError(f"tapeflow.summary.audio {name!r}: max_outputs must be >= 0, got {max_outputs}")
    from ..audio import encode_wav
    rate = int(np.asarray(sample_rate.numpy() if hasattr(sample_rate, "numpy") else sample_rate))
    rows = np.empty((min(len(v), int(max_outputs)), 2), object)
    for i, clip in enumerate(v[:int(max_outputs)]):
        rows[i] = [encode_wav(clip.astype(np.float32), rate).numpy(), b""]
    # AudioPluginData(version=0, encoding=WAV (11)): field 2 as a varint
    md = _w._metadata("audio", description, b"\x10\x0b")
    w, s = pw
    w.add_summary(_w.tensor_summary(name, rows, md), s)
    return True


def write(tag, tensor, step=None, metadata=None, name=None):
    """Log a raw tensor summary (``metadata``: a SummaryMetadata proto or its bytes)."""
    pw = _prepare("write", step)
    if pw is None:
        return False
    v = _value(tensor() if callable(tensor) else tensor, "write")
    w, s = pw
    w.add_summary(_w.tensor_summary(tag, v, metadata), s)
    return True


# -- graphs ---------------------------------------------------------------------------------------------

def graph(graph_data, step=None, name=None):
    """Write the graph(s) of a ConcreteFunction, a traced Function (all its
    traces), a tapeflow Graph, a list of these, or a GraphDef, for
    TensorBoard's Graphs tab. Returns True if written."""
    from ._graphdef import as_graph_list, to_graph_def
    if STATE.trace is not None:
        raise _in_trace("graph")
    w = _default_writer()
    if w is None or not should_record_summaries():
        return False
    gl = as_graph_list(graph_data, name)
    gd = gl if not isinstance(gl, list) else to_graph_def(gl)
    if step is None and _STEP[0] is None:
        step = 0
    w.add_graph_def(gd, _step_value(step, "graph"))
    return True


_TRACE = {"on": False, "graphs": [], "profile": None, "outdir": None}


def _record_graph(cf):
    _TRACE["graphs"].append((cf.name, cf.graph))


def trace_on(graph=True, profiler=False, profiler_outdir=None):
    """Start recording the graphs of ``tapeflow.function``s traced from now on
    (and, with ``profiler=True``, profiling with ``tapeflow.profile``) until
    ``trace_export`` / ``trace_off``."""
    from ..compiler.function import TRACE_LISTENERS
    if _TRACE["on"]:
        trace_off()
    _TRACE.update(on=True, graphs=[], outdir=profiler_outdir)
    if graph:
        TRACE_LISTENERS.append(_record_graph)
    if profiler:
        from ..profiler import profile
        p = profile()
        p.__enter__()
        _TRACE["profile"] = p


def trace_off():
    """Stop recording (without writing)."""
    from ..compiler.function import TRACE_LISTENERS
    while _record_graph in TRACE_LISTENERS:
        TRACE_LISTENERS.remove(_record_graph)
    p = _TRACE["profile"]
    if p is not None:
        p.__exit__(None, None, None)
    _TRACE.update(on=False, profile=None)


def trace_export(name, step=None, profiler_outdir=None):
    """Write the graphs recorded since ``trace_on`` (merged into one GraphDef,
    one name scope per function) and stop recording. With the profiler on,
    also writes ``<profiler_outdir or logdir>/<name>.trace.json`` (Chrome
    trace) and logs the profile report as text summary ``<name>/profile``."""
    from ._graphdef import to_graph_def
    graphs = list(_TRACE["graphs"])
    prof = _TRACE["profile"]
    outdir = profiler_outdir or _TRACE["outdir"]
    trace_off()
    w = _default_writer()
    if w is None:
        return False
    s = _step_value(step, "trace_export")
    if graphs:
        w.add_graph_def(to_graph_def(graphs), s)
    if prof is not None:
        d = outdir or w.logdir
        if d:
            os.makedirs(d, exist_ok=True)
            prof.export_chrome_trace(os.path.join(d, f"{name}.trace.json"))
        w.add_summary(_w.text_summary(f"{name}/profile", np.asarray("```\n" + prof.report() + "\n```")), s)
    w.flush()
    return True


# -- experimental namespace -------------------------------------------------------------------------------

class _Experimental:
    set_step = staticmethod(_set_step)
    get_step = staticmethod(_get_step)
    write_raw_pb = None

    @staticmethod
    @contextlib.contextmanager
    def summary_scope(name, default_name=None, values=None):
        tag = name or default_name
        yield tag, tag


experimental = _Experimental()
