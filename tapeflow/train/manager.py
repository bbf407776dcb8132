"""``CheckpointManager``: numbered checkpoints in a directory with retention,
and the directory's state file (``<directory>/checkpoint``, JSON).

Retention keeps the union of:

* the latest ``max_to_keep`` checkpoints (None: all);
* the ``best_k`` checkpoints by the ``metric`` passed to ``save`` (``mode``
  ``'max'`` or ``'min'``; checkpoints saved without a metric do not compete);
* one checkpoint every ``keep_checkpoint_every_n_hours`` (TF's rule: a
  checkpoint about to be deleted is kept for good if at least that long has
  passed since the last one so kept);
* checkpoints saved with ``keep=True``.

Nothing outside that union is deleted, and nothing is deleted before the new
checkpoint and then the state file are durably written (each atomically), so
a crash at any point leaves ``latest_checkpoint`` pointing at a complete,
loadable checkpoint.

Directory hygiene: on start and after each save the manager removes what
dead writers left behind (``storage.clean_dead_files``: temp files, data
files no index refers to) and its own numbered checkpoints
(``<checkpoint_name>-N``) that the state file no longer lists -- retention
removes a checkpoint from the state first, so a writer killed before deleting
its files leaves them there. Files of a live writer (another process saving
into the same directory) are never touched; the rule deciding that a writer
is dead is in ``storage``. A state file that exists but cannot be parsed is a
``CheckpointError``: starting over would forget (and then overwrite) the
checkpoints it lists.
"""
from __future__ import annotations

import json
import os
import time

import numpy as np

from . import storage
from .storage import INDEX_FORMAT, CheckpointError, CorruptCheckpointError

__all__ = ["CheckpointManager", "latest_checkpoint", "get_checkpoint_state"]

STATE_FILE = "checkpoint"


def _state_path(directory, latest_filename=None):
    return os.path.join(directory, latest_filename or STATE_FILE)


def _read_state(directory, latest_filename=None):
    """The parsed state file, None when there is none; CheckpointError naming it when malformed."""
    p = _state_path(directory, latest_filename)
    try:
        with open(p, "rb") as f:
            raw = f.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as e:
        raise CheckpointError(f"{p}: the checkpoint state file cannot be read ({e.strerror or e})") from None
    try:
        st = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        st = None
    fix = (f"; delete {p!r} to start the directory's list over (its checkpoints stay loadable "
           "by their prefix)")
    if not isinstance(st, dict) or st.get("format") != INDEX_FORMAT:
        raise CorruptCheckpointError(f"{p}: not a tapeflow checkpoint state file (corrupted, truncated or "
                                     f"of another format){fix}")
    for field in ("last_preserved_time", "last_step"):
        if st.get(field) is not None and (not isinstance(st[field], (int, float)) or isinstance(st[field], bool)):
            raise CorruptCheckpointError(f"{p}: malformed state file: {field!r} must be a number, got "
                                         f"{st[field]!r:.40}{fix}")
    entries = st.get("checkpoints")
    if not isinstance(entries, list):
        raise CorruptCheckpointError(f"{p}: malformed state file: 'checkpoints' must be an array{fix}")
    for i, e in enumerate(entries):
        name = e.get("name") if isinstance(e, dict) else None
        if (not isinstance(name, str) or os.path.basename(name) != name or name in ("", ".", "..")
                or "\0" in name):
            raise CorruptCheckpointError(f"{p}: malformed state file: checkpoint entry {i} ({e!r:.80}) must be "
                                         f"an object whose 'name' is a file name in the directory{fix}")
        for field in ("time", "metric", "step"):
            if field in e and (not isinstance(e[field], (int, float)) or isinstance(e[field], bool)):
                raise CorruptCheckpointError(f"{p}: malformed state file: checkpoint {name!r}: {field!r} must "
                                             f"be a number, got {e[field]!r:.40}{fix}")
    return st


def _write_state(directory, entries, extra=None, latest_filename=None):
    st = {"format": INDEX_FORMAT, "version": 1,
          "latest": entries[-1]["name"] if entries else None,
          "checkpoints": entries}
    if extra:
        st.update(extra)
    storage.atomic_write_json(_state_path(directory, latest_filename), st)


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The directory's state (dict: ``latest``, ``checkpoints`` ...) or None."""
    return _read_state(os.fspath(checkpoint_dir), latest_filename)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """Path of the newest complete checkpoint recorded in ``checkpoint_dir``, or None."""
    d = os.fspath(checkpoint_dir)
    st = _read_state(d, latest_filename)
    if st is None:
        return None
    for e in reversed(st["checkpoints"]):
        p = os.path.join(d, e["name"])
        if storage.exists(p):
            return p
    return None


def _record_in_index(path):
    """Checkpoint.save: append ``path`` to its directory's state (no deletion)."""
    d, name = os.path.split(path)
    st = _read_state(d) or {"checkpoints": []}
    entries = [e for e in st["checkpoints"] if e["name"] != name and storage.exists(os.path.join(d, e["name"]))]
    entries.append({"name": name, "time": time.time()})
    extra = {k: v for k, v in st.items() if k not in ("format", "version", "latest", "checkpoints")}
    _write_state(d, entries, extra)


def _number(name, base):
    """N of ``base-N`` (else -1)."""
    head, _, tail = name.rpartition("-")
    return int(tail) if head == base and tail.isdigit() else -1


def _as_float(metric):
    if metric is None:
        return None
    try:
        v = float(np.asarray(metric.numpy() if hasattr(metric, "numpy") else metric))
    except (TypeError, ValueError):
        raise TypeError(f"CheckpointManager.save: metric must be a number, got {metric!r}") from None
    if v != v:
        return None  # NaN never counts as best
    return v


class CheckpointManager:
    """Numbered checkpoints of one ``Checkpoint`` in ``directory``, with retention."""

    def __init__(self, checkpoint, directory, max_to_keep=5, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None,
                 best_k=None, mode="max", clock=None):
        if best_k is not None and best_k < 0:
            raise ValueError("CheckpointManager: best_k must be >= 0 or None")
        # 0 would delete each checkpoint as soon as it is written, best_k or not (one saved
        # without a metric does not compete), leaving nothing to resume from; TF refuses it too
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"CheckpointManager: max_to_keep must be a positive integer or None, got {max_to_keep} "
                             "(1 keeps the latest checkpoint, beside the best_k best ones)")
        if mode not in ("max", "min"):
            raise ValueError(f"CheckpointManager: mode must be 'max' or 'min', not {mode!r}")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("CheckpointManager: checkpoint_interval needs a step_counter")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._name = checkpoint_name
        self._step_counter = step_counter
        self._interval = checkpoint_interval
        self._init_fn = init_fn
        self._best_k = best_k
        self._mode = mode
        self._clock = clock or time.time
        os.makedirs(self._directory, exist_ok=True)
        st = _read_state(self._directory)
        self._entries = []
        self._last_preserved = None
        self._last_step = None
        if st is not None:
            self._entries = [e for e in st["checkpoints"]
                             if storage.exists(os.path.join(self._directory, e["name"]))]
            self._last_preserved = st.get("last_preserved_time")
            self._last_step = st.get("last_step")
        if self._last_preserved is None:
            self._last_preserved = self._clock()
        self.clean()

    # -- properties ---------------------------------------------------------------------------------
    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def checkpoint_interval(self):
        return self._interval

    def _path(self, e):
        return os.path.join(self._directory, e["name"])

    @property
    def latest_checkpoint(self):
        """The newest checkpoint's path (None before the first save)."""
        return self._path(self._entries[-1]) if self._entries else None

    @property
    def checkpoints(self):
        """Paths of the checkpoints kept, oldest first."""
        return [self._path(e) for e in self._entries]

    @property
    def best_checkpoints(self):
        """Paths of the checkpoints saved with a metric, best first."""
        return [self._path(e) for e in self._ranked()]

    @property
    def best_checkpoint(self):
        r = self._ranked()
        return self._path(r[0]) if r else None

    def metric_of(self, path):
        name = os.path.basename(os.fspath(path))
        for e in self._entries:
            if e["name"] == name:
                return e.get("metric")
        return None

    def _ranked(self):
        with_metric = [e for e in self._entries if e.get("metric") is not None]
        # best first; on ties the older checkpoint ranks first (stable sort)
        return sorted(with_metric, key=lambda e: -e["metric"] if self._mode == "max" else e["metric"])

    # -- saving ---------------------------------------------------------------------------------------
    def save(self, checkpoint_number=None, check_interval=True, metric=None, keep=False, options=None):
        """Write a new checkpoint and apply retention. Returns its path (None
        when skipped by ``checkpoint_interval``).

        ``metric``: the value ranked by ``best_k`` (e.g. validation return);
        ``keep``: never delete this checkpoint."""
        if self._interval is not None and check_interval:
            step = int(np.asarray(self._step_counter.numpy() if hasattr(self._step_counter, "numpy")
                                  else self._step_counter))
            if self._last_step is not None and step < self._last_step + self._interval:
                return None
        else:
            step = None
        m = _as_float(metric)
        counter = self._checkpoint.save_counter
        if checkpoint_number is None:
            # never reuse a number of a checkpoint this directory still has (a fresh,
            # unrestored Checkpoint starts its counter at 0)
            n = max([int(counter._v) + 1] + [_number(e["name"], self._name) + 1 for e in self._entries])
        else:
            n = int(np.asarray(checkpoint_number))
        counter._v = np.asarray(max(int(counter._v) + 1, n if checkpoint_number is None else 0),
                                dtype=counter._v.dtype)
        name = f"{self._name}-{n}"
        path = self._checkpoint.write(os.path.join(self._directory, name))
        now = self._clock()
        entry = {"name": name, "time": now}
        if m is not None:
            entry["metric"] = m
        if keep:
            entry["keep"] = True
        if self._step_counter is not None:
            step = int(np.asarray(self._step_counter.numpy() if hasattr(self._step_counter, "numpy")
                                  else self._step_counter))
            entry["step"] = step
            self._last_step = step
        self._entries = [e for e in self._entries if e["name"] != name] + [entry]
        doomed = self._sweep()
        extra = {"last_preserved_time": self._last_preserved, "mode": self._mode}
        if self._last_step is not None:
            extra["last_step"] = self._last_step
        _write_state(self._directory, self._entries, extra)  # the commit point for retention
        for e in doomed:
            storage.delete_checkpoint(self._path(e))
        self.clean()
        return path

    def clean(self):
        """Remove dead writers' leftovers and this manager's checkpoints that the
        state file no longer lists (see the module docstring). Runs on start and
        after each save; returns the names removed."""
        removed = storage.clean_dead_files(self._directory)
        st = _read_state(self._directory)
        listed = {e["name"] for e in self._entries} | {e["name"] for e in (st["checkpoints"] if st else ())}
        try:
            names = os.listdir(self._directory)
        except OSError:
            return removed
        for n in names:
            name = n[:-5]
            if n.endswith(".json") and _number(name, self._name) >= 0 and name not in listed:
                prefix = os.path.join(self._directory, name)
                if storage.is_abandoned(prefix):
                    storage.delete_checkpoint(prefix)
                    removed.append(name)
        return removed

    def _sweep(self):
        """Apply retention to ``self._entries``; returns the entries to delete."""
        n = len(self._entries)
        keep = set()
        if self._max_to_keep is None:
            keep.update(range(n))
        else:
            keep.update(range(max(0, n - self._max_to_keep), n))
        if self._best_k:
            ranked = self._ranked()[:self._best_k]
            ids = {id(e) for e in ranked}
            keep.update(i for i, e in enumerate(self._entries) if id(e) in ids)
        for i, e in enumerate(self._entries):
            if e.get("keep") or e.get("preserved"):
                keep.add(i)
        doomed = []
        kept = []
        for i, e in enumerate(self._entries):
            if i in keep:
                kept.append(e)
                continue
            if self._keep_hours is not None and e.get("time", 0) - self._last_preserved >= self._keep_hours * 3600:
                e["preserved"] = True
                self._last_preserved = e["time"]
                kept.append(e)
                continue
            doomed.append(e)
        self._entries = kept
        return doomed

    def restore_or_initialize(self):
        """Restore the latest checkpoint if there is one (returns its path),
        else call ``init_fn`` (returns None)."""
        p = self.latest_checkpoint
        if p is not None:
            self._checkpoint.restore(p)
            return p
        if self._init_fn is not None:
            self._init_fn()
        return None

    def sync(self):
        pass

    def __repr__(self):
        return f"<CheckpointManager {self._directory!r}: {len(self._entries)} checkpoint(s)>"

