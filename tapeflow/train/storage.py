"""On-disk format of a checkpoint, written atomically and read defensively.

A checkpoint with prefix ``P`` (``ckpts/ckpt-3``) is two files:

* ``P.data-<token>.safetensors``: the tensors, one per key, in the
  safetensors format (a JSON header and raw little-endian bytes: loading it
  cannot run code, unlike pickle). ``<token>`` is random per write, so
  rewriting a prefix never touches the file an existing index points to;
* ``P.json``: the index -- format tag and version, the data file's name and
  size, one entry per tensor (dtype, shape, byte offsets, CRC-32 of its
  bytes, the variable's name), the object graph (root names and types) and
  metadata (time, save counter, tapeflow version).

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
import secrets
import struct
import time
import zlib

import numpy as np

FORMAT = "tapeflow-checkpoint"
INDEX_FORMAT = "tapeflow-checkpoint-state"
VERSION = 1
_TMP_TAG = ".tmp-"


class CheckpointError(ValueError):
    """A checkpoint file cannot be used (missing, corrupted, foreign or mismatched)."""


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    pass


class CorruptCheckpointError(CheckpointError):
    pass


class CheckpointMismatchError(CheckpointError):
    """The checkpoint's values do not fit the variables (shape or dtype)."""


# -- atomic files ---------------------------------------------------------------------------------

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


def tmp_name(path):
    d, base = os.path.split(path)
    return os.path.join(d, f".{base}{_TMP_TAG}{os.getpid()}-{secrets.token_hex(4)}")


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
        os.remove(p)
    except OSError:
        pass


def clean_stale_temps(directory):
    """Remove temp files left by writers that died (their pid is gone)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for n in names:
        if not n.startswith(".") or _TMP_TAG not in n:
            continue
        try:
            pid = int(n.rsplit(_TMP_TAG, 1)[1].split("-")[0])
        except (ValueError, IndexError):
            continue
        if pid == os.getpid() or _alive(pid):
            continue
        _silent_remove(os.path.join(directory, n))


def clean_orphan_data(directory, min_age_s=60.0):
    """Remove ``P.data-*.safetensors`` files no index ``P.json`` refers to (left by a
    writer killed between its two renames, or before deleting the data it replaced).
    Only files older than ``min_age_s``, so a live writer's new data file is never touched."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    now = time.time()
    for n in names:
        if not n.endswith(".safetensors") or ".data-" not in n or n.startswith("."):
            continue
        prefix = n[:n.rfind(".data-")]
        ref = None
        try:
            with open(os.path.join(directory, prefix + ".json")) as f:
                ref = json.load(f).get("data_file")
        except (OSError, ValueError, AttributeError):
            pass
        if ref == n:
            continue
        p = os.path.join(directory, n)
        try:
            if now - os.path.getmtime(p) >= min_age_s:
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
    """Remove a checkpoint: its index first (the commit point), then its data."""
    ip = index_path(prefix)
    data = None
    try:
        with open(ip) as f:
            data = json.load(f).get("data_file")
    except (OSError, ValueError, AttributeError):
        pass
    _silent_remove(ip)
    if data and os.path.basename(data) == data:
        _silent_remove(os.path.join(os.path.dirname(prefix), data))


# -- writing -----------------------------------------------------------------------------------------

_DT_NAMES = {np.dtype(t).name for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32,
                                         np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_)}


def _contig(a):
    # (np.ascontiguousarray would turn 0-d arrays into 1-d ones)
    a = np.asarray(a)
    return a if a.flags.c_contiguous else np.array(a, order="C", copy=True)


def _crc(a):
    return zlib.crc32(_contig(a).reshape(-1).view(np.uint8)) & 0xFFFFFFFF


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
        if a.dtype.name not in _DT_NAMES:
            raise TypeError(f"checkpoint: variable {k!r} has dtype {a.dtype}, which cannot be saved")
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        tensors[k] = a
        e = {"dtype": a.dtype.name, "shape": list(a.shape), "crc32": _crc(a)}
        if variables_info and k in variables_info:
            e.update(variables_info[k])
        entries[k] = e
    data_name = f"{base}.data-{secrets.token_hex(4)}.safetensors"
    data_path = os.path.join(d, data_name)
    tmp = tmp_name(data_path)
    try:
        save_file(tensors, tmp, metadata={"format": FORMAT, "index": base + ".json"})
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, data_path)
    except BaseException:
        _silent_remove(tmp)
        raise
    size = os.path.getsize(data_path)
    header_len, header = _read_header(data_path)
    for k, e in entries.items():
        off = header[k]["data_offsets"]
        e["offsets"] = [8 + header_len + off[0], 8 + header_len + off[1]]
    old_data = None
    ip = index_path(prefix)
    if os.path.exists(ip):
        try:
            with open(ip) as f:
                old_data = json.load(f).get("data_file")
        except (OSError, ValueError, AttributeError):
            old_data = None
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
    if old_data and old_data != data_name and os.path.basename(old_data) == old_data:
        _silent_remove(os.path.join(d, old_data))
    return prefix


def _read_header(path):
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) < 8:
            raise CorruptCheckpointError(f"{path}: not a safetensors file (only {len(raw)} bytes)")
        n = struct.unpack("<Q", raw)[0]
        if n > 100_000_000:
            raise CorruptCheckpointError(f"{path}: not a safetensors file (header length {n})")
        h = f.read(n)
    if len(h) < n:
        raise CorruptCheckpointError(f"{path}: truncated inside the safetensors header")
    try:
        header = json.loads(h)
    except ValueError:
        raise CorruptCheckpointError(f"{path}: corrupted safetensors header (not JSON)") from None
    header.pop("__metadata__", None)
    return n, header


# -- reading -----------------------------------------------------------------------------------------

def read_index(prefix):
    """The parsed ``P.json``, validated; raises CheckpointError naming the file."""
    ip = index_path(prefix)
    try:
        with open(ip, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise CheckpointNotFoundError(_not_found_msg(prefix)) from None
    except IsADirectoryError:
        raise CheckpointNotFoundError(_not_found_msg(prefix)) from None
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise CorruptCheckpointError(
            f"{ip}: not a valid tapeflow checkpoint index (not JSON: the file is truncated, corrupted or "
            "of another format)") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        got = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise CheckpointError(f"{ip}: not a tapeflow checkpoint (format {got!r}, expected {FORMAT!r})")
    if not isinstance(meta.get("version"), int) or meta["version"] > VERSION:
        raise CheckpointError(f"{ip}: checkpoint format version {meta.get('version')!r} is not supported "
                              f"by this tapeflow (reads up to {VERSION}); upgrade tapeflow")
    if not isinstance(meta.get("tensors"), dict) or not isinstance(meta.get("data_file"), str):
        raise CorruptCheckpointError(f"{ip}: checkpoint index lacks its tensor table")
    return meta


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
    prefix = normalize_prefix(path)
    if not os.path.exists(index_path(prefix)) and path.endswith(".safetensors") and os.path.exists(path):
        return _read_plain_safetensors(path)
    meta = read_index(prefix)
    ip = index_path(prefix)
    data_name = meta["data_file"]
    if os.path.basename(data_name) != data_name:
        raise CorruptCheckpointError(f"{ip}: invalid data file name {data_name!r}")
    dp = os.path.join(os.path.dirname(prefix), data_name)
    entries = meta["tensors"]
    try:
        size = os.path.getsize(dp)
    except OSError:
        raise CheckpointNotFoundError(f"{ip}: its data file {dp!r} is missing") from None
    expected = meta.get("data_size")
    if isinstance(expected, int) and size != expected:
        if size < expected:
            cut = [k for k, e in entries.items() if e.get("offsets", [0, 0])[1] > size]
            cut.sort(key=lambda k: entries[k]["offsets"][0])
            what = (f"variable {cut[0]!r}" + (f" and {len(cut) - 1} more" if len(cut) > 1 else "") +
                    " cut off") if cut else "header cut off"
            raise CorruptCheckpointError(f"{dp}: truncated ({size} of {expected} bytes; {what})")
        raise CorruptCheckpointError(f"{dp}: size {size} bytes, the index {ip} says {expected}; the file "
                                     "was modified or replaced")
    try:
        f = safe_open(dp, framework="numpy")
    except Exception as e:
        raise CorruptCheckpointError(f"{dp}: not a readable safetensors file ({e})") from None
    arrays = {}
    with f:
        keys = set(f.keys())
        missing = [k for k in entries if k not in keys]
        extra = [k for k in keys if k not in entries]
        if missing or extra:
            raise CorruptCheckpointError(
                f"{dp}: does not match its index {ip} (" +
                (f"missing variable {missing[0]!r}" if missing else f"unexpected variable {extra[0]!r}") + ")")
        for k, e in entries.items():
            try:
                a = f.get_tensor(k)
            except Exception as err:
                raise CorruptCheckpointError(f"{dp}: cannot read variable {k!r} ({err})") from None
            if a.dtype.name != e.get("dtype") or list(a.shape) != list(e.get("shape", ())):
                raise CorruptCheckpointError(
                    f"{dp}: variable {k!r} is {a.dtype.name}{list(a.shape)} in the data file but "
                    f"{e.get('dtype')}{e.get('shape')} in the index")
            crc = e.get("crc32")
            if crc is not None and _crc(a) != crc:
                raise CorruptCheckpointError(f"{dp}: variable {k!r} is corrupted (checksum mismatch)")
            arrays[k] = a
    return arrays, meta, prefix


def _read_plain_safetensors(path):
    """A bare .safetensors file (no tapeflow index): keys are taken as-is."""
    from safetensors import safe_open
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
