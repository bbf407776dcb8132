"""Event-file writer and summary protobufs (tensorboardX's record writer and protos).

Events go straight into tensorboardX's ``EventsWriter`` (TFRecord framing,
CRCs); this writer flushes when ``max_queue`` events are outstanding, when
``flush_millis`` have passed (a daemon timer thread), on ``flush()``,
``close()`` and at interpreter exit. Unlike tensorboardX's asynchronous
``FileWriter``, ``flush()`` guarantees everything written so far is in the
file, so a reader started right after sees it.

Summary encodings (all readable by TensorBoard and its ``EventAccumulator``):
scalars as ``simple_value``; histograms as ``HistogramProto`` (``buckets``
equal-width buckets over [min, max], 30 by default as TF); text and images as
TF 2 tensor summaries (plugins ``text`` and ``images``: a string tensor
``[width, height, png_0, png_1, ...]``), so TensorBoard shows an image
summary's samples under one tag.
"""
from __future__ import annotations

import atexit
import itertools
import os
import struct
import threading
import time
import weakref
import zlib

import numpy as np

from ..util.extras import require

# TensorBoard event files are written with tensorboardX (the optional [summary] extra)
require("tensorboardX", "summary", "tapeflow.summary (TensorBoard event files)")
from tensorboardX.event_file_writer import EventsWriter  # noqa: E402
from tensorboardX.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2  # noqa: E402

_counter = itertools.count()
_OPEN = weakref.WeakSet()


class SummaryWriter:
    """Writes summaries to an event file in ``logdir`` (see ``create_file_writer``)."""

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None):
        self._logdir = os.fspath(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        self._max_queue = 10 if max_queue is None else max(1, int(max_queue))
        self._flush_s = (120_000 if flush_millis is None else float(flush_millis)) / 1000.0
        suffix = f".{os.getpid()}.{next(_counter)}" + (filename_suffix if filename_suffix is not None else ".v2")
        self._ew = EventsWriter(os.path.join(self._logdir, "events"), suffix)
        self._ew.flush()
        self._lock = threading.Lock()
        self._outstanding = 0
        self._closed = False
        self.name = name
        self._wake = threading.Event()
        self._timer = threading.Thread(target=_flush_loop, args=(weakref.ref(self), self._wake, self._flush_s),
                                       daemon=True, name=f"tapeflow-summary-flush-{os.path.basename(self._logdir)}")
        self._timer.start()
        _OPEN.add(self)

    @property
    def logdir(self):
        return self._logdir

    @property
    def file_path(self):
        """The event file this writer appends to."""
        return self._ew._file_name

    # -- events ------------------------------------------------------------------------------------
    def add_event(self, event):
        with self._lock:
            if self._closed:
                raise RuntimeError(f"summary writer for {self._logdir!r} is closed")
            if not event.wall_time:
                event.wall_time = time.time()
            self._ew.write_event(event)
            self._outstanding += 1
            if self._outstanding >= self._max_queue:
                self._ew.flush()
                self._outstanding = 0

    def add_summary(self, summary, step):
        self.add_event(event_pb2.Event(summary=summary, step=int(step), wall_time=time.time()))

    def add_graph_def(self, graph_def, step=None):
        ev = event_pb2.Event(graph_def=graph_def.SerializeToString(), wall_time=time.time())
        if step is not None:
            ev.step = int(step)
        self.add_event(ev)

    def flush(self):
        with self._lock:
            if not self._closed:
                self._ew.flush()
                self._outstanding = 0

    def _timed_flush(self):
        with self._lock:
            if not self._closed and self._outstanding:
                self._ew.flush()
                self._outstanding = 0

    def close(self):
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._ew.close()
        self._wake.set()
        from . import _pop_writer
        _pop_writer(self)

    @property
    def closed(self):
        return self._closed

    def init(self):
        return None

    # -- defaults ------------------------------------------------------------------------------------
    def as_default(self, step=None):
        """Context manager: summaries inside go to this writer (and use ``step``
        if given, restoring the previous default step after)."""
        from . import _AsDefault
        return _AsDefault(self, step)

    def set_as_default(self, step=None):
        """Make this the default writer from now on (and set the default step)."""
        from . import _set_default
        _set_default(self, step)

    def __enter__(self):
        self._ctx = self.as_default()
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)
        return False

    def __repr__(self):
        return f"<tapeflow.summary.SummaryWriter {self._logdir!r}{' (closed)' if self._closed else ''}>"


class NoopSummaryWriter(SummaryWriter):
    """A writer that records nothing (``create_noop_writer``)."""

    def __init__(self):  # noqa: D401  (no file)
        self._closed = False
        self._logdir = None
        self.name = None

    def add_event(self, event):
        return None

    def flush(self):
        return None

    def close(self):
        self._closed = True

    @property
    def file_path(self):
        return None


def _flush_loop(ref, wake, period):
    while not wake.wait(period):
        w = ref()
        if w is None or w._closed:
            return
        try:
            w._timed_flush()
        except Exception:
            return
        del w


@atexit.register
def _flush_all():
    for w in list(_OPEN):
        try:
            w.flush()
        except Exception:
            pass


# -- protobufs --------------------------------------------------------------------------------------

def _metadata(plugin, description=None, content=b""):
    md = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(
        plugin_name=plugin, content=content))
    if description:
        md.summary_description = description
    return md


def scalar_summary(tag, value, description=None):
    v = summary_pb2.Summary.Value(tag=tag, simple_value=float(value))
    if description:
        v.metadata.CopyFrom(_metadata("scalars", description))
    return summary_pb2.Summary(value=[v])


def histogram_summary(tag, values, buckets=None, description=None):
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    k = 30 if buckets is None else int(buckets)
    if k < 1:
        raise ValueError(f"histogram {tag!r}: buckets must be >= 1, got {buckets}")
    h = summary_pb2.HistogramProto()
    if values.size == 0:
        h.num = 0
    else:
        finite = values[np.isfinite(values)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        counts, edges = np.histogram(np.clip(finite, lo, hi), bins=k, range=(lo, hi))
        h.min = float(finite.min()) if finite.size else 0.0
        h.max = float(finite.max()) if finite.size else 0.0
        h.num = float(values.size)
        h.sum = float(finite.sum())
        h.sum_squares = float(np.dot(finite, finite))
        h.bucket_limit.extend(float(e) for e in edges[1:])
        h.bucket.extend(float(c) for c in counts)
    v = summary_pb2.Summary.Value(tag=tag, histo=h)
    if description:
        v.metadata.CopyFrom(_metadata("histograms", description))
    return summary_pb2.Summary(value=[v])


def _string_tensor(strings, shape):
    return tensor_pb2.TensorProto(
        dtype=types_pb2.DT_STRING, string_val=list(strings),
        tensor_shape=tensor_shape_pb2.TensorShapeProto(
            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=int(d)) for d in shape]))


def text_summary(tag, data, description=None):
    arr = np.asarray(data)
    if arr.dtype.kind not in "USO":
        raise TypeError(f"text {tag!r}: expected a string (or array of strings), got {arr.dtype}")
    flat = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in arr.reshape(-1).tolist()]
    from tensorboardX.proto.plugin_text_pb2 import TextPluginData
    md = _metadata("text", description, TextPluginData(version=0).SerializeToString())
    v = summary_pb2.Summary.Value(tag=tag, metadata=md, tensor=_string_tensor(flat, arr.shape))
    return summary_pb2.Summary(value=[v])


def image_summary(tag, images, max_outputs=3, description=None):
    """``images``: (N, H, W, C) with C in {1, 3, 4}, float in [0, 1] or uint8."""
    a = np.asarray(images)
    if a.ndim == 3:
        a = a[None]
    if a.ndim != 4 or a.shape[-1] not in (1, 3, 4):
        raise ValueError(f"image {tag!r}: expected shape (N, height, width, channels) with channels 1, 3 or 4, "
                         f"got {a.shape}")
    if a.dtype != np.uint8:
        if a.dtype.kind == "f":
            a = np.clip(np.nan_to_num(a, nan=0.0) * 255.0 + 0.5, 0, 255).astype(np.uint8)
        elif a.dtype.kind in "iub":
            a = np.clip(a, 0, 255).astype(np.uint8)
        else:
            raise TypeError(f"image {tag!r}: unsupported dtype {a.dtype}")
    a = a[:max(0, int(max_outputs))]
    h, w = a.shape[1], a.shape[2]
    pngs = [encode_png(img) for img in a]
    md = _metadata("images", description)
    v = summary_pb2.Summary.Value(tag=tag, metadata=md,
                                  tensor=_string_tensor([str(w).encode(), str(h).encode()] + pngs,
                                                        (2 + len(pngs),)))
    return summary_pb2.Summary(value=[v])


_NP_TO_DT = {np.dtype(np.float32): types_pb2.DT_FLOAT, np.dtype(np.float64): types_pb2.DT_DOUBLE,
             np.dtype(np.int32): types_pb2.DT_INT32, np.dtype(np.int64): types_pb2.DT_INT64,
             np.dtype(np.bool_): types_pb2.DT_BOOL, np.dtype(np.float16): types_pb2.DT_HALF,
             np.dtype(np.uint8): types_pb2.DT_UINT8, np.dtype(np.int8): types_pb2.DT_INT8,
             np.dtype(np.int16): types_pb2.DT_INT16, np.dtype(np.uint16): types_pb2.DT_UINT16,
             np.dtype(np.uint32): 22, np.dtype(np.uint64): 23}  # (types.proto; tensorboardX lacks the names)


def tensor_summary(tag, data, metadata=None):
    """A generic tensor summary (``tapeflow.summary.write``)."""
    arr = np.asarray(data)
    shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=int(d))
                                                   for d in arr.shape])
    if arr.dtype.kind in "USO":
        t = _string_tensor([s.encode() if isinstance(s, str) else bytes(s) for s in arr.reshape(-1).tolist()],
                           arr.shape)
    else:
        dt = _NP_TO_DT.get(arr.dtype)
        if dt is None:
            arr = arr.astype(np.float32)
            dt = types_pb2.DT_FLOAT
        t = tensor_pb2.TensorProto(dtype=dt, tensor_shape=shape,
                                   tensor_content=np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"))
                                   .tobytes())
    v = summary_pb2.Summary.Value(tag=tag, tensor=t)
    if metadata is not None:
        if isinstance(metadata, bytes):
            v.metadata.ParseFromString(metadata)
        elif isinstance(metadata, summary_pb2.SummaryMetadata):
            v.metadata.CopyFrom(metadata)
        else:
            v.metadata.ParseFromString(metadata.SerializeToString())
    return summary_pb2.Summary(value=[v])


# -- PNG ----------------------------------------------------------------------------------------------

def _chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def encode_png(img):
    """(H, W, C) uint8 with C in {1, 3, 4} -> PNG bytes (no dependencies)."""
    img = np.ascontiguousarray(img, dtype=np.uint8)
    h, w, c = img.shape
    color = {1: 0, 3: 2, 4: 6}[c]
    raw = np.zeros((h, 1 + w * c), np.uint8)  # filter byte 0 per row
    raw[:, 1:] = img.reshape(h, w * c)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0)) +
            _chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + _chunk(b"IEND", b""))
