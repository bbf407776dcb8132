"""On-disk format of a checkpoint, written atomically and read defensively.

A checkpoint with prefix ``P`` (``ckpts/ckpt-3``) is two files:

* ``P.data-<token>.safetensors``: the tensors, one per key, in the
  safetensors format (a JSON header and raw little-endian bytes: loading it
  cannot run code, unlike pickle). ``<token>`` is random per write, so
  rewriting a prefix never touches the file an existing index points to;
* ``P.json``: the index -- format tag and version, the data file's name and
  size, one entry per tensor (dtype, shape, byte offsets, CRC-32 of its
  bytes, the variable's name), the object graph (root names and types) and
  metadata (time, save counter, tapeflow version). safetensors has no string or
  complex dtype: a string tensor is stored as its bytes (entry ``"strings"``: shape
  and lengths), a complex64/complex128 one as its (real, imag) float32/float64
  pairs, shape + [2] (entry ``"complex"``: the dtype to view them as; wave 22).

Each file is written to a temporary name in the same directory, flushed,
fsync'ed and renamed over the final name; the index is written last, so it is
the commit point: a crash at any moment leaves either the old checkpoint or
the new one, never a mix. ``read_checkpoint`` checks the index, the data
file's size (a truncation names the first variable cut off), the safetensors
header against the index and every tensor's CRC, and raises a
``CheckpointError`` naming the file and the variable before anything is
assigned.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import stat
import struct
import time
import zlib

import ml_dtypes
import numpy as np

from ..util.extras import require

# Checkpoints are this module's whole purpose: without safetensors, importing
# tapeflow.train fails at once, naming the extra, rather than at the first save.
require("safetensors", "checkpoint", "tapeflow.train (checkpoints)")

FORMAT = "tapeflow-checkpoint"
INDEX_FORMAT = "tapeflow-checkpoint-state"
VERSION = 1
_TMP_TAG = ".tmp-"

#: a file of unknown origin (no writer tag, or written on another host) is
#: taken as abandoned once it has not been modified for this long
STALE_AFTER_S = 600.0

#: an index larger than this is not a tapeflow index (refused before reading)
_MAX_INDEX_BYTES = 1 << 30


class CheckpointError(ValueError):
    """A checkpoint file cannot be used (missing, corrupted, foreign or mismatched)."""


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    pass


class CorruptCheckpointError(CheckpointError):
    pass


class CheckpointMismatchError(CheckpointError):
    """The checkpoint's values do not fit the variables (shape or dtype)."""


# -- writers and their files ------------------------------------------------------------------------
#
# Every file a writer creates before its commit point carries the writer's tag
# ``<pid>-<start>-<host>``: temp files and directories ``.<name>.tmp-<tag>-<rand>``
# and data files ``<prefix>.data-<tag>-<rand>.safetensors``. ``<start>`` is the
# process start time (/proc/<pid>/stat, clock ticks since boot; 0 where there is
# no /proc) and ``<host>`` 6 hex digits of the host name's CRC.
#
# The rule deciding that such a file is abandoned (``clean_dead_files``):
#   * tagged on this host: its writer is dead when no process has that pid, the
#     process is a zombie, or the pid now belongs to a process started at
#     another time (pid reuse). A live writer's files are never touched.
#   * tagged on another host (a shared filesystem), untagged (safetensors'
#     own ``.tmpXXXXXX`` files, older tapeflow versions): abandoned once not
#     modified for ``STALE_AFTER_S`` (a live writer keeps writing to its
#     temp file, so its mtime stays fresh).

_HOST = format(zlib.crc32(socket.gethostname().encode()) & 0xFFFFFF, "06x")
_HAS_PROC = os.path.isdir("/proc/self")
_TAG_RE = re.compile(r"(\d+)-(\d+)-([0-9a-f]{6})-[0-9a-f]{8}")
_DATA_RE = re.compile(r"(.+)\.data-([^/]+)\.safetensors")
# the tempfile crate's names: ".tmp" and 6 random alphanumerics, next to the target
_LIB_TMP_RE = re.compile(r"\.tmp[0-9A-Za-z]{6}")
_WRITER = [None, None]     # (pid, tag) of this process, recomputed after a fork


def _proc_stat(pid):
    """(state, start time) of ``pid`` from /proc, or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces or ')'
    fields = raw[raw.rfind(b")") + 2:].split()
    return fields[0].decode(), int(fields[19])


def writer_tag():
    """This process's tag: ``<pid>-<start time>-<host>``."""
    pid = os.getpid()
    if _WRITER[0] != pid:
        st = _proc_stat(pid) if _HAS_PROC else None
        _WRITER[:] = [pid, f"{pid}-{st[1] if st else 0}-{_HOST}"]
    return _WRITER[1]


def _writer_alive(token):
    """True/False when the writer tagged in ``token`` is alive/dead; None when that cannot be known."""
    m = _TAG_RE.fullmatch(token or "")
    if m is None or m.group(3) != _HOST:
        return None
    pid, start = int(m.group(1)), int(m.group(2))
    if _HAS_PROC:
        st = _proc_stat(pid)
        return st is not None and st[0] not in ("Z", "X") and st[1] == start
    return _alive(pid)


def _abandoned(path, token, now, stale_after_s):
    alive = _writer_alive(token)
    if alive is not None:
        return not alive
    try:
        return now - os.lstat(path).st_mtime >= stale_after_s
    except OSError:
        return False


def _fsync_dir(d):
    try:
        fd = os.open(d or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_file(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def tmp_name(path):
    d, base = os.path.split(path)
    return os.path.join(d, f".{base}{_TMP_TAG}{writer_tag()}-{secrets.token_hex(4)}")


def atomic_write_bytes(path, data: bytes):
    """Write ``data`` to ``path`` atomically (temp file, fsync, rename, fsync dir)."""
    tmp = tmp_name(path)
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _silent_remove(tmp)
        raise
    _fsync_dir(os.path.dirname(path))


def atomic_write_json(path, obj):
    atomic_write_bytes(path, (json.dumps(obj, indent=1, sort_keys=False) + "\n").encode())


def _silent_remove(p):
    try:
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            os.remove(p)
    except OSError:
        pass


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _referenced_data(prefix):
    """The data file name ``prefix.json`` names, or None (missing or unreadable index)."""
    try:
        with open(index_path(prefix)) as f:
            ref = json.load(f).get("data_file")
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    return ref if isinstance(ref, str) else None


def clean_dead_files(directory, stale_after_s=STALE_AFTER_S):
    """Remove what dead writers left in ``directory``: temp files and
    directories (tapeflow's and safetensors' ``.tmpXXXXXX``) and data files no
    index refers to. The rule is in the comment above ``writer_tag``.
    Returns the names removed."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    now = time.time()
    removed = []
    for n in names:
        p = os.path.join(directory, n)
        if n.startswith(".") and (_TMP_TAG in n or _LIB_TMP_RE.fullmatch(n)):
            token = n.rsplit(_TMP_TAG, 1)[1] if _TMP_TAG in n else None
        else:
            m = _DATA_RE.fullmatch(n)
            if m is None or n.startswith(".") or _referenced_data(os.path.join(directory, m.group(1))) == n:
                continue
            # a data file whose index points elsewhere: its writer died between writing it
            # and committing the index, or after committing but before removing the old one
            token = m.group(2)
        if _abandoned(p, token, now, stale_after_s):
            _silent_remove(p)
            removed.append(n)
    return removed


def is_abandoned(prefix, stale_after_s=STALE_AFTER_S):
    """Whether the checkpoint ``prefix`` was written by a writer now dead (see
    ``writer_tag``); a checkpoint of unknown origin counts once its index is
    older than ``stale_after_s``."""
    ref = _referenced_data(prefix)
    m = _DATA_RE.fullmatch(ref or "")
    return _abandoned(index_path(prefix), m.group(2) if m else None, time.time(), stale_after_s)


# -- paths -------------------------------------------------------------------------------------------

def normalize_prefix(path):
    """Accept ``P``, ``P.json`` or ``P.data-xxxx.safetensors``; return ``P``."""
    path = os.fspath(path)
    if path.endswith(".json"):
        return path[:-5]
    if path.endswith(".safetensors"):
        base = path[:-len(".safetensors")]
        i = base.rfind(".data-")
        if i >= 0 and os.path.exists(base[:i] + ".json"):
            return base[:i]
    return path


def index_path(prefix):
    return prefix + ".json"


def exists(prefix):
    return os.path.exists(index_path(normalize_prefix(prefix)))


def delete_checkpoint(prefix):
    """Remove a checkpoint: its index first (the commit point), then its data
    (only a file named as this prefix's data: a hostile index cannot make it
    delete anything else)."""
    data = _referenced_data(prefix)
    _silent_remove(index_path(prefix))
    if data and _owns_data(prefix, data):
        _silent_remove(os.path.join(os.path.dirname(prefix), data))


def _owns_data(prefix, name):
    m = _DATA_RE.fullmatch(name)
    return m is not None and m.group(1) == os.path.basename(prefix) and os.path.basename(name) == name


# -- writing -----------------------------------------------------------------------------------------

# (bfloat16: ml_dtypes' dtype, safetensors' "BF16"; np.dtype("bfloat16") once ml_dtypes is imported)
_DT_NAMES = {np.dtype(t).name for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32,
                                         np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_,
                                         ml_dtypes.bfloat16)}


def _contig(a):
    # (np.ascontiguousarray would turn 0-d arrays into 1-d ones)
    a = np.asarray(a)
    return a if a.flags.c_contiguous else np.array(a, order="C", copy=True)


def _crc(a):
    return zlib.crc32(_contig(a).reshape(-1).view(np.uint8)) & 0xFFFFFFFF


def _encode_strings(k, a):
    """A string (object) array -> (its elements' bytes joined, a uint8 array; the index entry
    ``{"shape": ..., "lengths": [...]}`` that splits them again). safetensors has no string
    dtype; the bytes are checksummed like any tensor's."""
    items = a.reshape(-1).tolist()
    if not all(isinstance(x, bytes) for x in items):
        raise TypeError(f"checkpoint: variable {k!r} is an object array that is not all bytes (a string "
                        "tensor's elements); it cannot be saved")
    return np.frombuffer(b"".join(items), np.uint8).copy(), {"shape": list(a.shape),
                                                              "lengths": [len(x) for x in items]}


def _decode_strings(k, a, spec, where):
    shape, lengths = spec.get("shape") if isinstance(spec, dict) else None, \
        spec.get("lengths") if isinstance(spec, dict) else None
    if not (isinstance(shape, list) and all(_is_int(n) and n >= 0 for n in shape) and isinstance(lengths, list)
            and all(_is_int(n) and n >= 0 for n in lengths) and len(lengths) == int(np.prod(shape, dtype=object))
            and sum(lengths) == a.size and a.dtype == np.uint8):
        raise CorruptCheckpointError(f"{where}: malformed checkpoint index: variable {k!r}: its 'strings' entry "
                                     "does not describe its bytes")
    raw = a.tobytes()
    out = np.empty(len(lengths), object)
    pos = 0
    for i, n in enumerate(lengths):
        out[i] = raw[pos:pos + n]
        pos += n
    return out.reshape(shape)


_COMPLEX_PARTS = {"complex64": np.dtype(np.float32), "complex128": np.dtype(np.float64)}


def _encode_complex(a):
    """A complex64/complex128 array -> its (real, imag) float pairs, shape + [2] (a view of the same
    bytes: restored bit for bit). safetensors has no complex dtype; the index entry's ``"complex"``
    names the dtype to view the pairs as again."""
    # (a 0-d array cannot change its itemsize in a view: reshape it to 1-d first)
    return a.reshape(-1).view(_COMPLEX_PARTS[a.dtype.name]).reshape(a.shape + (2,)), a.dtype.name


def _decode_complex(k, a, name, where):
    part = _COMPLEX_PARTS.get(name) if isinstance(name, str) else None
    if part is None or a.dtype != part or a.ndim < 1 or a.shape[-1] != 2:
        raise CorruptCheckpointError(f"{where}: malformed checkpoint index: variable {k!r}: its 'complex' entry "
                                     f"{name!r} does not describe its {a.dtype.name}{list(a.shape)} pairs")
    return _contig(a).reshape(-1).view(np.dtype(name)).reshape(a.shape[:-1])


def write_checkpoint(prefix, arrays, variables_info=None, objects=None, extra=None):
    """Write ``{key: ndarray}`` under ``prefix`` atomically; returns ``prefix``.

    ``variables_info``: {key: {"name": ..., "trainable": ...}} (stored, informative);
    ``objects``: the object graph summary; ``extra``: more metadata (JSON-able).
    """
    from safetensors.numpy import save_file
    from .. import __version__

    prefix = os.fspath(prefix)
    d, base = os.path.split(prefix)
    if not base:
        raise ValueError(f"checkpoint path {prefix!r} names a directory; give a file prefix such as "
                         f"{os.path.join(prefix, 'ckpt')!r}")
    if d:
        os.makedirs(d, exist_ok=True)
    tensors = {}
    entries = {}
    for k, a in arrays.items():
        a = _contig(a)
        strings = cplx = None
        if a.dtype == object:   # a string tensor (a lookup table's keys): its bytes, their lengths
            a, strings = _encode_strings(k, a)
        elif a.dtype.name in _COMPLEX_PARTS:   # complex: its float pairs (wave 22)
            a, cplx = _encode_complex(a)
        if a.dtype.name not in _DT_NAMES:
            raise TypeError(f"checkpoint: variable {k!r} has dtype {a.dtype}, which cannot be saved")
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        tensors[k] = a
        e = {"dtype": a.dtype.name, "shape": list(a.shape), "crc32": _crc(a)}
        if strings is not None:
            e["strings"] = strings
        if cplx is not None:
            e["complex"] = cplx
        if variables_info and k in variables_info:
            e.update(variables_info[k])
        entries[k] = e
    data_name = f"{base}.data-{writer_tag()}-{secrets.token_hex(4)}.safetensors"
    data_path = os.path.join(d, data_name)
    # safetensors writes through a temp file of its own (".tmpXXXXXX", which says
    # nothing of its writer) next to the target: give it a directory named after
    # this writer, so whatever a kill leaves behind can be attributed and cleaned
    tmp_dir = tmp_name(data_path)
    os.mkdir(tmp_dir)
    try:
        inner = os.path.join(tmp_dir, "data.safetensors")
        save_file(tensors, inner, metadata={"format": FORMAT, "index": base + ".json"})
        _fsync_file(inner)
        os.replace(inner, data_path)
    except BaseException:
        _silent_remove(tmp_dir)
        raise
    _silent_remove(tmp_dir)
    size = os.path.getsize(data_path)
    header_len, header = _read_header(data_path)
    for k, e in entries.items():
        off = header[k]["data_offsets"]
        e["offsets"] = [8 + header_len + off[0], 8 + header_len + off[1]]
    ip = index_path(prefix)
    old_data = _referenced_data(prefix)
    meta = {"format": FORMAT, "version": VERSION, "data_file": data_name, "data_size": size,
            "time": time.time(), "tapeflow_version": __version__, "objects": objects or {},
            "tensors": entries}
    if extra:
        meta.update(extra)
    try:
        atomic_write_json(ip, meta)
    except BaseException:
        _silent_remove(data_path)
        raise
    if old_data and old_data != data_name and _owns_data(prefix, old_data):
        _silent_remove(os.path.join(d, old_data))
    return prefix


def _read_header(path):
    """``(length, {key: entry})`` of a safetensors file's JSON header, checked to be one."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            raw = f.read(8)
            if len(raw) < 8:
                raise CorruptCheckpointError(f"{path}: not a safetensors file (only {len(raw)} bytes)")
            n = struct.unpack("<Q", raw)[0]
            if n > min(100_000_000, size - 8):
                raise CorruptCheckpointError(f"{path}: not a safetensors file (header length {n} in a file "
                                             f"of {size} bytes)")
            h = f.read(n)
    except OSError as e:
        raise CorruptCheckpointError(f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        header = json.loads(h)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise CorruptCheckpointError(f"{path}: corrupted safetensors header (not JSON)") from None
    if not isinstance(header, dict):
        raise CorruptCheckpointError(f"{path}: corrupted safetensors header (a JSON {type(header).__name__}, "
                                     "not an object)")
    header.pop("__metadata__", None)
    return n, header


# -- reading -----------------------------------------------------------------------------------------

def _regular_file_size(path, what, missing):
    """Size of ``path``, which must be a regular file (following symlinks: a FIFO or a
    device would block or never end); ``missing()`` builds the error for an absent one."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise missing() from None
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{path}: {what} cannot be read ({getattr(e, 'strerror', None) or e})") from None
    if stat.S_ISDIR(st.st_mode):
        raise missing()
    if not stat.S_ISREG(st.st_mode):
        raise CorruptCheckpointError(f"{path}: {what} is not a regular file (a FIFO, socket or device)")
    return st.st_size


def read_index(prefix):
    """The parsed ``P.json``, validated; raises CheckpointError naming the file."""
    ip = index_path(prefix)
    size = _regular_file_size(ip, "the checkpoint index", lambda: CheckpointNotFoundError(_not_found_msg(prefix)))
    if size > _MAX_INDEX_BYTES:
        raise CorruptCheckpointError(f"{ip}: {size} bytes, larger than any tapeflow checkpoint index")
    try:
        with open(ip, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise CheckpointError(f"{ip}: the checkpoint index cannot be read ({e.strerror or e})") from None
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise CorruptCheckpointError(
            f"{ip}: not a valid tapeflow checkpoint index (not JSON: the file is truncated, corrupted or "
            "of another format)") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        got = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise CheckpointError(f"{ip}: not a tapeflow checkpoint (format {got!r}, expected {FORMAT!r})")
    v = meta.get("version")
    if not _is_int(v) or v < 1:
        raise CorruptCheckpointError(f"{ip}: malformed checkpoint index: version {v!r} is not a positive integer")
    if v > VERSION:
        raise CheckpointError(f"{ip}: checkpoint format version {v!r} is not supported "
                              f"by this tapeflow (reads up to {VERSION}); upgrade tapeflow")
    _validate_index(meta, prefix, ip)
    return meta


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _validate_index(meta, prefix, ip):
    """Every field ``read_checkpoint`` relies on, with its JSON type and range; checksums are
    mandatory (an index without them could not tell corrupted data from good)."""
    def bad(what, key=None):
        where = f"variable {key!r}: " if key is not None else ""
        return CorruptCheckpointError(f"{ip}: malformed checkpoint index: {where}{what}")

    if not isinstance(meta.get("tensors"), dict):
        raise bad(f"'tensors' must be an object (the tensor table), got {_jtype(meta.get('tensors'))}")
    data_file = meta.get("data_file")
    if not isinstance(data_file, str):
        raise bad(f"'data_file' must be a string, got {_jtype(data_file)}")
    if os.path.basename(data_file) != data_file or data_file in ("", ".", "..") or "\0" in data_file:
        raise bad(f"'data_file' {data_file!r} is not a file name in the index's directory")
    size = meta.get("data_size")
    if not _is_int(size) or size < 0:
        raise bad(f"'data_size' must be a non-negative integer, got {size!r}")
    for field, types in (("objects", dict), ("time", (int, float)), ("tapeflow_version", str),
                         ("save_counter", int)):
        if field in meta and (not isinstance(meta[field], types) or isinstance(meta[field], bool)):
            raise bad(f"{field!r} has the wrong type ({_jtype(meta[field])})")
    spans = []
    for k, e in meta["tensors"].items():
        if not isinstance(e, dict):
            raise bad(f"its entry must be an object, got {_jtype(e)}", k)
        dt = e.get("dtype")
        if not isinstance(dt, str) or dt not in _DT_NAMES:
            raise bad(f"dtype {dt!r} is not one tapeflow saves ({', '.join(sorted(_DT_NAMES))})", k)
        shape = e.get("shape")
        if not isinstance(shape, list) or not all(_is_int(n) and n >= 0 for n in shape):
            raise bad(f"shape must be a list of non-negative integers, got {shape!r}", k)
        off = e.get("offsets")
        if not (isinstance(off, list) and len(off) == 2 and all(_is_int(o) for o in off)):
            raise bad(f"offsets must be a list of two integers, got {off!r}", k)
        a, b = off
        if not 0 <= a <= b <= size:
            raise bad(f"offsets {off} lie outside the data file's {size} bytes", k)
        nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dt).itemsize
        if b - a != nbytes:
            raise bad(f"offsets {off} span {b - a} bytes, but {dt}{shape} needs {nbytes}", k)
        crc = e.get("crc32")
        if crc is None:
            raise bad("no checksum ('crc32'): the index was written by something else or edited; "
                      "its data cannot be verified", k)
        if not _is_int(crc) or not 0 <= crc < 2 ** 32:
            raise bad(f"checksum 'crc32' must be an integer in [0, 2**32), got {crc!r}", k)
        if a < b:
            spans.append((a, b, k))
    spans.sort()
    for (a0, b0, k0), (a1, b1, k1) in zip(spans, spans[1:]):
        if a1 < b0:
            raise bad(f"its bytes [{a1}, {b1}) overlap those of variable {k0!r} [{a0}, {b0})", k1)


def _jtype(x):
    """The JSON name of a parsed value's type, for messages."""
    if x is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
            dict: "an object"}.get(type(x), type(x).__name__)


def _not_found_msg(prefix):
    msg = f"checkpoint {prefix!r} not found (no {index_path(prefix)!r})"
    if os.path.isdir(prefix):
        msg += (f"; {prefix!r} is a directory: pass a checkpoint prefix, e.g. "
                "tapeflow.train.latest_checkpoint(directory)")
    else:
        d = os.path.dirname(prefix) or "."
        try:
            near = sorted(n[:-5] for n in os.listdir(d) if n.endswith(".json"))[-5:]
        except OSError:
            near = []
        if near:
            msg += f"; checkpoints in {d!r}: {', '.join(near)}"
    return msg


def read_checkpoint(path):
    """Load and verify a checkpoint; returns ``(arrays, meta, prefix)``.

    Every check runs before anything is returned, so a caller can validate
    against its variables and assign all or nothing."""
    from safetensors import safe_open

    path = os.fspath(path)
    if "\0" in path:
        raise CheckpointNotFoundError(f"checkpoint {path!r} not found (the path contains a NUL byte)")
    prefix = normalize_prefix(path)
    if not os.path.exists(index_path(prefix)) and path.endswith(".safetensors") and os.path.exists(path):
        return _read_plain_safetensors(path)
    meta = read_index(prefix)
    ip = index_path(prefix)
    dp = os.path.join(os.path.dirname(prefix), meta["data_file"])
    entries = meta["tensors"]
    size = _regular_file_size(dp, "the checkpoint's data file",
                              lambda: CheckpointNotFoundError(f"{ip}: its data file {dp!r} is missing"))
    expected = meta["data_size"]
    if size != expected:
        cut = sorted((k for k, e in entries.items() if e["offsets"][1] > size), key=lambda k: entries[k]["offsets"][0])
        if cut:
            more = f" and {len(cut) - 1} more" if len(cut) > 1 else ""
            raise CorruptCheckpointError(f"{dp}: truncated ({size} of {expected} bytes; variable {cut[0]!r}{more} "
                                         "cut off)")
        raise CorruptCheckpointError(f"{dp}: size {size} bytes, the index {ip} says {expected}; the file "
                                     "was modified or replaced")
    header_len, header = _read_header(dp)
    missing = [k for k in entries if k not in header]
    extra = [k for k in header if k not in entries]
    if missing or extra:
        raise CorruptCheckpointError(
            f"{dp}: does not match its index {ip} (" +
            (f"missing variable {missing[0]!r}" if missing else f"unexpected variable {extra[0]!r}") + ")")
    for k, e in entries.items():
        h = header[k]
        off = h.get("data_offsets") if isinstance(h, dict) else None
        at = [8 + header_len + o for o in off] if isinstance(off, list) and all(_is_int(o) for o in off) else None
        if at != e["offsets"]:
            raise CorruptCheckpointError(f"{dp}: variable {k!r} is at bytes {at} in the data file but at "
                                         f"{e['offsets']} in the index {ip}")
    try:
        f = safe_open(dp, framework="numpy")
    except Exception as e:  # the library's own error type for any malformed file
        raise CorruptCheckpointError(f"{dp}: not a readable safetensors file ({e})") from None
    arrays = {}
    with f:
        for k, e in entries.items():
            try:
                a = f.get_tensor(k)
            except Exception as err:
                raise CorruptCheckpointError(f"{dp}: cannot read variable {k!r} ({err})") from None
            if a.dtype.name != e["dtype"] or list(a.shape) != e["shape"]:
                raise CorruptCheckpointError(
                    f"{dp}: variable {k!r} is {a.dtype.name}{list(a.shape)} in the data file but "
                    f"{e['dtype']}{e['shape']} in the index")
            if _crc(a) != e["crc32"]:
                raise CorruptCheckpointError(f"{dp}: variable {k!r} is corrupted (checksum mismatch)")
            if "strings" in e:
                a = _decode_strings(k, a, e["strings"], ip)
            elif "complex" in e:
                a = _decode_complex(k, a, e["complex"], ip)
            arrays[k] = a
    return arrays, meta, prefix


def _read_plain_safetensors(path):
    """A bare .safetensors file (no tapeflow index): keys are taken as-is."""
    from safetensors import safe_open
    _regular_file_size(path, "the safetensors file", lambda: CheckpointNotFoundError(f"{path}: not found"))
    try:
        f = safe_open(path, framework="numpy")
    except Exception as e:
        raise CorruptCheckpointError(f"{path}: not a readable safetensors file ({e})") from None
    arrays = {}
    with f:
        for k in f.keys():
            try:
                arrays[k] = f.get_tensor(k)
            except Exception as err:
                raise CorruptCheckpointError(f"{path}: cannot read variable {k!r} ({err})") from None
    meta = {"format": FORMAT, "version": VERSION, "tensors": {}, "objects": {}, "plain": True}
    return arrays, meta, path


# -- Keras-style .npz weight archives ----------------------------------------------------------------

# deflate cannot expand data more than ~1032 times: a member claiming more is a zip bomb
_MAX_DEFLATE_RATIO = 1100


def read_npz_weights(path, variables=None):
    """The arrays of a ``.npz`` weights archive (``np.savez`` of ``w0, w1, ...``, as
    ``Model.save_weights(... .npz)`` writes), verified before anything is returned.

    Never unpickles (object arrays are refused), and checks each member's
    declared shape against its stored size before allocating. With
    ``variables`` (the model's ``weights``), also their count and shapes, so
    ``set_weights`` of the result cannot fail half-way. Every problem is a
    ``CheckpointError`` naming the file (and the weight)."""
    import zipfile

    path = os.fspath(path)
    _regular_file_size(path, "the weights archive", lambda: CheckpointNotFoundError(f"{path}: not found"))
    # the zip and .npy parsers' errors on a malformed file: bad CRC, truncated member,
    # unparsable header, unsupported compression or encryption
    bad_file = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError, NotImplementedError,
                KeyError, SyntaxError, TypeError, RuntimeError, zlib.error)
    arrays = []
    try:
        zf = zipfile.ZipFile(path)
    except bad_file as e:
        raise CorruptCheckpointError(f"{path}: not a readable .npz weights archive ({type(e).__name__}: {e})") \
            from None
    with zf:
        infos = {i.filename: i for i in zf.infolist()}
        keys = sorted((n[:-4] for n in infos if n.endswith(".npy")), key=lambda n: (len(n), n))
        want = [f"w{i}" for i in range(len(infos))]
        if keys != want:
            odd = sorted(set(infos) - {w + ".npy" for w in want})
            raise CorruptCheckpointError(f"{path}: not a weights archive: members must be w0.npy ... "
                                         f"w{len(infos) - 1}.npy, found {odd[:3]}")
        for k in want:
            try:
                arrays.append(_read_npy_member(zf, infos[k + ".npy"]))
            except bad_file as e:
                raise CorruptCheckpointError(f"{path}: weight {k!r} cannot be read ({type(e).__name__}: {e})") \
                    from None
            except CheckpointError as e:
                raise CorruptCheckpointError(f"{path}: weight {k!r} {e}") from None
    if variables is not None:
        vs = list(variables)
        if len(vs) != len(arrays):
            hint = " (it is not built yet: call it on a batch first)" if not vs else ""
            raise CheckpointMismatchError(f"{path}: holds {len(arrays)} weights, the model has {len(vs)}{hint}; "
                                          "nothing was assigned")
        for i, (v, a) in enumerate(zip(vs, arrays)):
            if tuple(a.shape) != tuple(v.shape):
                raise CheckpointMismatchError(
                    f"{path}: weight 'w{i}' has shape {list(a.shape)}, variable {v.name} has "
                    f"{list(v.shape)}; nothing was assigned")
    return arrays


def _read_npy_member(zf, info):
    """One ``.npy`` member, its declared size checked before anything is allocated."""
    fmt = np.lib.format
    if info.compress_size * _MAX_DEFLATE_RATIO + 1024 < info.file_size:
        raise CheckpointError(f"claims {info.file_size} bytes from {info.compress_size} compressed (not a real "
                              "archive)")
    with zf.open(info) as f:
        # (version 3.0 only adds utf-8 field names: never a numeric weight)
        read_header = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}.get(fmt.read_magic(f))
        if read_header is None:
            raise ValueError("unsupported .npy format version")
        shape, fortran, dtype = read_header(f, max_header_size=10000)
        if dtype.hasobject or dtype.kind not in "biuf":
            raise CheckpointError(f"has dtype {dtype}, not a numeric one (object arrays would need pickle, "
                                  "which is never loaded)")
        need = int(np.prod(shape, dtype=object)) * dtype.itemsize
        have = info.file_size - f.tell()
        if need != have:
            raise CheckpointError(f"declares {dtype}{list(shape)} ({need} bytes) but holds {have} bytes")
        a = np.frombuffer(f.read(need), dtype=dtype).reshape(shape, order="F" if fortran else "C")
    return np.array(a)      # owned and writeable
