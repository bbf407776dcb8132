"""``tapeflow.train.Checkpoint``: save and restore every variable reachable
from a set of objects, with TF's deferred restoration.

::

    ckpt = tf.train.Checkpoint(model=model, optimizer=opt, step=step_var)
    path = ckpt.save("ckpts/ckpt")          # ckpts/ckpt-1, ckpts/ckpt-2, ...
    status = ckpt.restore(path)             # or tf.train.latest_checkpoint("ckpts")
    status.assert_consumed()

Keys are attribute paths (see ``trackable``). ``restore`` verifies the whole
file, then checks every variable that exists now against the saved shape and
dtype, and only then assigns them all (all or nothing). Saved values whose
variables do not exist yet -- an unbuilt Keras model, an optimizer before its
first step -- stay pending and are assigned the moment those variables are
created (through ``tapeflow.module.TRACKING_HOOKS`` and the Variable creation
hook: the roots are re-walked when a variable that could match appears).

Values are assigned by replacing ``Variable._v`` with an owned copy, which is
what compiled functions read on every call, so restoring between calls of a
``tapeflow.function`` takes effect at the next call (also when the variables
are created while a function is being traced).
"""
from __future__ import annotations

import os
import weakref

import numpy as np

from ..core import dtypes as _dt
from ..core.state import STATE
from ..errors import NotFoundError
from ..core.tensor import Tensor, Variable, _CREATION_HOOKS
from . import storage, tf_format
from .storage import CheckpointError, CheckpointMismatchError
from .trackable import collect
from ..module import wrap_list, _is_trackable, _track

__all__ = ["Checkpoint", "CheckpointLoadStatus", "CheckpointReader", "save_weights", "load_weights"]

_SAVE_COUNTER = "save_counter"


def _no_trace(what):
    if STATE.trace is not None:
        raise RuntimeError(f"tapeflow.train.Checkpoint.{what} was called inside a tapeflow.function while "
                           "tracing; call it outside the compiled function (between steps)")


def _assign_now(var, arr):
    """Replace the variable's buffer with an owned copy (works during tracing too)."""
    var._v = np.array(arr, dtype=var._v.dtype, copy=True)


def _mismatch(var, arr):
    """None if ``arr`` fits ``var``, else a description."""
    v = var._v
    if v.dtype != arr.dtype:
        return f"dtype {arr.dtype.name} in the checkpoint, {v.dtype.name} in the variable"
    if v.shape != arr.shape:
        return f"shape {list(arr.shape)} in the checkpoint, {list(v.shape)} in the variable"
    return None


def _mismatch_error(path, problems):
    lines = [f"  {key!r} (variable {var._name}): {why}" for key, var, why in problems]
    return CheckpointMismatchError(
        f"checkpoint {path!r} does not fit the objects it is restored into; nothing was assigned:\n" +
        "\n".join(lines))


# -- deferred restoration ----------------------------------------------------------------------

class _Pending:
    """Saved values waiting for their variables: roots (weakly where possible) and arrays."""

    def __init__(self, ckpt, path, arrays, status):
        self.path = path
        self.arrays = arrays            # key -> ndarray (not yet assigned)
        self.status = weakref.ref(status)
        self.ckpt = weakref.ref(ckpt)
        self._roots = {}
        for name, obj in ckpt._roots.items():
            try:
                self._roots[name] = weakref.ref(obj)
            except TypeError:
                self._roots[name] = (lambda o: (lambda: o))(obj)  # lists/dicts: held strongly
        self.sigs = {(a.shape, a.dtype.str) for a in arrays.values()}
        self.candidates = []            # weakrefs to matching-signature variables not yet found

    def roots(self):
        c = self.ckpt()
        if c is not None:
            # the checkpoint's roots now: one set after restore() (``ckpt.listed = []``)
            # can receive pending values too, as in TF
            return dict(c._roots)
        out = {}
        for name, r in self._roots.items():
            o = r()
            if o is None:
                return None  # a root died: nothing to restore into any more
            out[name] = o
        return out

    def match(self):
        """Assign pending values whose variables exist now. Returns the live
        ``{key: variable}`` map, or None when a root died."""
        roots = self.roots()
        if roots is None:
            return None
        live = collect(roots)
        c = self.ckpt()
        if c is not None and c._save_counter is not None and _SAVE_COUNTER not in live:
            live[_SAVE_COUNTER] = c._save_counter
        hits = [(k, live[k]) for k in self.arrays if k in live]
        if not hits:
            return live
        problems = [(k, v, why) for k, v in hits if (why := _mismatch(v, self.arrays[k])) is not None]
        if problems:
            for k, _, _ in problems:
                self.arrays.pop(k, None)
            raise _mismatch_error(self.path, problems)
        st = self.status()
        for k, v in hits:
            _assign_now(v, self.arrays.pop(k))
            if st is not None:
                st._matched[k] = v
        self.sigs = {(a.shape, a.dtype.str) for a in self.arrays.values()}
        return live


_PENDING: list = []        # _Pending records with values left
_HOOKED = [False]
_BUSY = [False]
_MAX_RECHECKS = 8


def _on_variable(var):
    """Creation hook: the variable is not attached anywhere yet; re-walk if it could match."""
    _run_pending(var, created=True)


def _on_tracked(owner, name, var):
    _run_pending(var, created=False)


def _run_pending(var, created):
    if _BUSY[0] or not _PENDING:
        return
    sig = (var._v.shape, var._v.dtype.str) if var._v is not None else None
    _BUSY[0] = True
    try:
        for p in list(_PENDING):
            # a variable attached to a Module/layer/optimizer (tracking hook) always triggers a
            # re-walk (so a wrongly shaped one is reported now); a bare creation only if its
            # shape and dtype match a pending value
            fits = not created or sig in p.sigs
            p.candidates = [(r, n) for r, n in p.candidates if r() is not None and n < _MAX_RECHECKS]
            if not fits and not p.candidates:
                continue
            live = p.match()
            if live is None or not p.arrays:
                _drop(p)
                continue
            found = {id(v) for v in live.values()}
            if fits and created and id(var) not in found:
                p.candidates.append((weakref.ref(var), 0))
            p.candidates = [(r, n + 1) for r, n in p.candidates if id(r()) not in found]
    finally:
        _BUSY[0] = False


def _drop(p):
    try:
        _PENDING.remove(p)
    except ValueError:
        pass
    if not _PENDING and _HOOKED[0]:
        _HOOKED[0] = False
        try:
            _CREATION_HOOKS.remove(_on_variable)
        except ValueError:
            pass
        th = _tracking_hooks()
        if th is not None:
            try:
                th.remove(_on_tracked)
            except ValueError:
                pass


def _tracking_hooks():
    try:
        from ..module import TRACKING_HOOKS
    except Exception:
        return None
    return TRACKING_HOOKS


def _register(p):
    _PENDING.append(p)
    if not _HOOKED[0]:
        _HOOKED[0] = True
        _CREATION_HOOKS.append(_on_variable)
        th = _tracking_hooks()
        if th is not None:
            th.append(_on_tracked)


def _check_pending():
    """Re-walk every pending restoration now (status checks call this)."""
    if _BUSY[0]:
        return
    _BUSY[0] = True
    try:
        for p in list(_PENDING):
            if p.match() is None or not p.arrays:
                _drop(p)
    finally:
        _BUSY[0] = False


# -- status ----------------------------------------------------------------------------------------

class CheckpointLoadStatus:
    """What a ``restore``/``read`` matched; TF's assertions.

    * ``assert_consumed()``: every value in the checkpoint was assigned to a
      variable, and every variable of the restored objects had a value;
    * ``assert_existing_objects_matched()``: every variable that exists now
      had a value (values for objects not created yet may still be pending);
    * ``assert_nontrivial_match()``: at least one variable was restored;
    * ``expect_partial()``: declare that a partial restore is intended.
    """

    def __init__(self, ckpt, path, keys):
        self._ckpt = ckpt
        self.path = path
        self._keys = list(keys)
        self._matched = {}
        self._pending = None
        self._partial = False

    @property
    def pending_keys(self):
        return sorted(self._pending.arrays) if self._pending is not None else []

    @property
    def restored_keys(self):
        return sorted(self._matched)

    def _unmatched_live(self):
        live = self._ckpt._live()
        keys = set(self._keys)
        matched = {id(v) for v in self._matched.values()}  # also those restored through an alias
        return sorted(k for k, v in live.items() if k not in keys and id(v) not in matched and k != _SAVE_COUNTER)

    def assert_consumed(self):
        _check_pending()
        pend = self.pending_keys
        if pend:
            raise AssertionError(
                f"checkpoint {self.path!r}: {len(pend)} saved value(s) were not matched to any variable "
                f"(objects not created yet, or renamed): {', '.join(pend[:10])}" + (" ..." if len(pend) > 10 else ""))
        un = self._unmatched_live()
        if un:
            raise AssertionError(
                f"checkpoint {self.path!r}: {len(un)} variable(s) of the restored objects have no value in "
                f"the checkpoint: {', '.join(un[:10])}" + (" ..." if len(un) > 10 else ""))
        return self

    def assert_existing_objects_matched(self):
        _check_pending()
        un = self._unmatched_live()
        if un:
            raise AssertionError(
                f"checkpoint {self.path!r}: {len(un)} existing variable(s) have no value in the checkpoint: "
                f"{', '.join(un[:10])}" + (" ..." if len(un) > 10 else ""))
        return self

    def assert_nontrivial_match(self):
        _check_pending()
        if not any(k != _SAVE_COUNTER for k in self._matched):
            raise AssertionError(f"checkpoint {self.path!r}: nothing was restored (no key matched)")
        return self

    def expect_partial(self):
        self._partial = True
        return self

    def run_restore_ops(self, session=None):
        return None

    def initialize_or_restore(self, session=None):
        return None

    def __repr__(self):
        return (f"<CheckpointLoadStatus {self.path!r}: {len(self._matched)} restored, "
                f"{len(self.pending_keys)} pending>")


class InitializationOnlyStatus:
    """``restore(None)``: nothing to restore (variables keep their initial values)."""

    path = None

    def assert_consumed(self):
        raise AssertionError("no checkpoint was given to restore (path None)")

    assert_existing_objects_matched = assert_consumed
    assert_nontrivial_match = assert_consumed

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        return None

    def initialize_or_restore(self, session=None):
        return None


def _read_aliases(meta, path, arrays):
    aliases = meta.get("aliases", {})
    if not (isinstance(aliases, dict) and all(isinstance(k, str) and isinstance(v, str) and v in arrays
                                              for k, v in aliases.items())):
        raise storage.CorruptCheckpointError(
            f"{path}: malformed checkpoint index: 'aliases' must map keys to saved keys, got {aliases!r:.200}")
    return aliases


# -- reading a checkpoint without objects ----------------------------------------------------------

#: what TF appends to a variable's path to make its checkpoint key
TF_KEY_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
#: between an object's path and the name of a tensor it saves itself (TF's table-keys)
TABLE_KEY_INFIX = "/.ATTRIBUTES/"


def tf_key(k):
    """TF's checkpoint key of a stored key: a variable's path + TF_KEY_SUFFIX; a key an object
    saved itself (``t/.ATTRIBUTES/table-keys``) is TF's already."""
    return k if TABLE_KEY_INFIX in k else k + TF_KEY_SUFFIX


class CheckpointReader:
    """``tf.train.load_checkpoint(path)``: a checkpoint's saved values by key (verified
    when opened). Keys are TF's, the variable's path + ``/.ATTRIBUTES/VARIABLE_VALUE``
    (``net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE``), so TF code that indexes the maps
    works; ``get_tensor``/``has_tensor`` accept tapeflow's short key (``net/l1/kernel``)
    too. As TF's, it also holds ``_CHECKPOINTABLE_OBJECT_GRAPH`` (a scalar string: the
    serialized object graph, rebuilt from the index: ``tf_format.object_graph``), and the
    shape and dtype maps list the keys in the order TF's C++ reader hands them out
    (``tf_format.reader_order``), so code that prints them prints what TF prints."""

    def __init__(self, path):
        self._arrays, self._meta, self.path = storage.read_checkpoint(path)
        self._order = None

    def _key(self, name):
        k = name[:-len(TF_KEY_SUFFIX)] if name.endswith(TF_KEY_SUFFIX) else name
        return k if k in self._arrays else None

    def _tf_keys(self):
        """[(TF key, stored key or None for the object graph)] in TF's reader order."""
        if self._order is None:
            back = {tf_key(k): k for k in self._arrays}
            back[tf_format.OBJECT_GRAPH_KEY] = None
            self._order = [(k, back[k]) for k in tf_format.reader_order(back)]
        return self._order

    def _object_graph(self):
        tensors = self._meta.get("tensors", {})
        variables = [(k, str(tensors.get(k, {}).get("name", "Variable"))) for k in self._arrays
                     if TABLE_KEY_INFIX not in k]
        tables = list(dict.fromkeys(k.split(TABLE_KEY_INFIX)[0] for k in self._arrays if TABLE_KEY_INFIX in k))
        children = self._meta.get("tf_children")
        if not isinstance(children, list):     # an older checkpoint: the roots in their keys' order
            children = []
        return tf_format.object_graph(variables, tables, [c for c in children if isinstance(c, str)],
                                      _read_aliases(self._meta, self.path, self._arrays))

    def get_variable_to_shape_map(self):
        return {k: [] if s is None else list(self._arrays[s].shape) for k, s in self._tf_keys()}

    def get_variable_to_dtype_map(self):
        return {k: _dt.string if s is None else _dt.as_dtype(self._arrays[s].dtype) for k, s in self._tf_keys()}

    def has_tensor(self, name):
        return name == tf_format.OBJECT_GRAPH_KEY or self._key(name) is not None

    def get_tensor(self, name):
        """The saved value (a NumPy array, as TF's reader returns; the object graph: bytes)."""
        if name == tf_format.OBJECT_GRAPH_KEY:
            return self._object_graph()
        k = self._key(name)
        if k is None:
            keys = sorted(self._arrays)
            raise NotFoundError(f"Key {name} not found in checkpoint {self.path!r}; it holds: "
                                f"{', '.join(keys[:20])}" + (" ..." if len(keys) > 20 else ""))
        return np.array(self._arrays[k], copy=True)

    def __repr__(self):
        return f"<tapeflow.train.CheckpointReader {self.path!r}: {len(self._arrays)} tensors>"


# -- Checkpoint ------------------------------------------------------------------------------------

def _check_value(name, value):
    """A value that can hold no variable is refused, as TF refuses non-trackables: saved, it
    would write nothing, and a restore would leave it as it is (Checkpoint(step=1) kept 5)."""
    if isinstance(value, (bool, int, float, complex, str, bytes, np.ndarray, np.generic)) or \
            (isinstance(value, Tensor) and not isinstance(value, Variable)):
        raise ValueError(f"Checkpoint: {name!r} is a {type(value).__name__} ({value!r:.60}), which a checkpoint "
                         "cannot save: it saves Variables and the objects that hold them; keep the value in a "
                         "Variable, e.g. tapeflow.Variable(0, dtype=tapeflow.int64)")


class Checkpoint:
    """Groups objects to save/restore: ``Checkpoint(model=..., optimizer=..., step=...)``.

    A positional ``root`` puts its children at the top level of the keys
    (``Checkpoint(model)`` saves ``layers/0/kernel``...). Attributes set on the
    checkpoint later are added too (``ckpt.model = model``).
    """

    def __init__(self, root=None, **kwargs):
        object.__setattr__(self, "_roots", {})
        object.__setattr__(self, "_save_counter", None)
        # the order TF tracks the children in (its keywords sorted, later attributes and the
        # save counter as they come): the order of the object graph TF's readers show
        object.__setattr__(self, "_tf_order", sorted(kwargs))
        if root is not None:
            self._roots[""] = root
        for k, v in kwargs.items():
            if k == _SAVE_COUNTER or k.startswith("_"):
                raise ValueError(f"Checkpoint: {k!r} is a reserved name")
            if v is None:
                raise ValueError(f"Checkpoint: {k!r} is None")
            _check_value(k, v)
            self._roots[k] = wrap_list(v, self, k)

    def __setattr__(self, name, value):
        if name.startswith("_") or name == _SAVE_COUNTER:
            raise AttributeError(f"Checkpoint: cannot set {name!r}")
        _check_value(name, value)
        # a list is stored as TF's ListWrapper: what is appended to it later is tracked
        # (a pending restore assigns it), as are the trackables in it now
        value = wrap_list(value, self, name)
        self._roots[name] = value
        if name not in self._tf_order:
            self._tf_order.append(name)
        if _is_trackable(value):
            _track(self, name, value)

    def __getattr__(self, name):
        roots = self.__dict__.get("_roots", {})
        if name in roots:
            return roots[name]
        raise AttributeError(name)

    @property
    def save_counter(self):
        """Number of ``save()`` calls (a Variable, saved in the checkpoint; created on first use)."""
        if self._save_counter is None:
            object.__setattr__(self, "_save_counter",
                               Variable(np.int64(0), trainable=False, name="save_counter"))
            self._tf_order.append(_SAVE_COUNTER)
        return self._save_counter

    def _live(self, tables=None):
        live = collect(self._roots, tables)
        if self._save_counter is not None:
            live.setdefault(_SAVE_COUNTER, self._save_counter)
        return live

    # -- writing -------------------------------------------------------------------------------------
    def write(self, file_prefix, options=None):
        """Save to exactly ``file_prefix`` (no numbering); returns the path."""
        _no_trace("write")
        tables = []
        live = self._live(tables)
        arrays = {k: np.asarray(v._v) for k, v in live.items()}
        info = {k: {"name": v._name, "trainable": bool(v.trainable)} for k, v in live.items()}
        # objects saving tensors of their own (a MutableHashTable's keys and values), under TF's
        # keys <path>/.ATTRIBUTES/<name> (a Variable's key is its path; readers add the suffix)
        for path, obj in tables:
            for name, a in obj._checkpoint_tensors().items():
                arrays[f"{path}{TABLE_KEY_INFIX}{name}"] = a
        objects = {name or "<root>": f"{type(o).__module__}.{type(o).__qualname__}"
                   for name, o in self._roots.items()}
        extra = {}
        if self._save_counter is not None:
            extra["save_counter"] = int(self._save_counter._v)
        aliases = self._aliases(live)
        if aliases:
            extra["aliases"] = aliases
        extra["tf_children"] = list(self._tf_order)     # for the readers' object graph (tf_format)
        return storage.write_checkpoint(os.fspath(file_prefix), arrays, info, objects, extra)

    def _aliases(self, live):
        """``{key: stored key}`` for variables that one root reaches under another key
        than the one they are stored under (``ckpt.listed = [v]; ckpt.mapped = {"one": v}``):
        TF restores through either path, so a later ``Checkpoint(mapped={"one": w})`` gets v's
        value. Within one root the walker's first path is the only one."""
        if len(self._roots) < 2:
            return {}
        stored = {id(v): k for k, v in live.items()}
        out = {}
        for name, root in self._roots.items():
            for k, v in collect({name: root}).items():
                if k not in live and id(v) in stored:
                    out[k] = stored[id(v)]
        return out

    def save(self, file_prefix, options=None):
        """Save to ``file_prefix-N`` with N = the incremented ``save_counter``, as TF 2.21:
        a new Checkpoint's first save is ``-1`` and replaces a ``-1`` an earlier run left
        there (numbering belongs to the object, not the directory; a CheckpointManager keeps
        its own numbering). Records it as the latest checkpoint of its directory. Returns the
        path."""
        _no_trace("save")
        from .manager import _record_in_index
        c = self.save_counter
        n = int(c._v) + 1
        c._v = np.asarray(n, dtype=c._v.dtype)
        path = self.write(f"{os.fspath(file_prefix)}-{n}")
        _record_in_index(path)
        return path

    # -- reading -------------------------------------------------------------------------------------
    def restore(self, save_path, options=None):
        """Restore from ``save_path`` (a prefix returned by save/write, or None).
        Returns a status; values for variables not created yet are assigned
        when they are created."""
        if save_path is None:
            return InitializationOnlyStatus()
        return self._restore(save_path)

    def read(self, save_path, options=None):
        """Restore from a path written by ``write`` (same as ``restore``)."""
        return self._restore(save_path)

    def _restore(self, save_path):
        _no_trace("restore")
        arrays, meta, path = storage.read_checkpoint(save_path)
        if _SAVE_COUNTER in arrays:
            self.save_counter  # noqa: B018  (create it so it is restored)
        tables = []
        live = self._live(tables)
        status = CheckpointLoadStatus(self, path, arrays.keys())
        for tpath, obj in tables:
            prefix = f"{tpath}{TABLE_KEY_INFIX}"
            mine = {k[len(prefix):]: a for k, a in arrays.items() if k.startswith(prefix)}
            if mine:
                obj._restore_tensors(mine)
                for k in mine:
                    status._matched[prefix + k] = obj
        aliases = _read_aliases(meta, path, arrays)
        # a live key found under another saved key (see _aliases): (live key, saved key)
        via = [(k, k) for k in arrays if k in live] + \
            [(k, a) for k, a in aliases.items() if k in live and k not in arrays]
        problems = [(k, live[k], why) for k, a in via if (why := _mismatch(live[k], arrays[a])) is not None]
        if problems:
            raise _mismatch_error(path, problems)
        for k, a in via:
            _assign_now(live[k], arrays[a])
            status._matched[a] = live[k]
        rest = {k: a for k, a in arrays.items() if k not in status._matched}
        # a newer restore of the same checkpoint object replaces older pending values
        for p in list(_PENDING):
            if p.ckpt() is self:
                _drop(p)
        if rest:
            p = _Pending(self, path, rest, status)
            status._pending = p
            _register(p)
        return status

    def __repr__(self):
        names = ", ".join(k or "<root>" for k in self._roots)
        return f"<tapeflow.train.Checkpoint ({names})>"


# -- weights conveniences -----------------------------------------------------------------------------

def save_weights(model, filepath, overwrite=True, save_format=None, options=None):
    """Save ``model``'s variables (keys relative to the model) to ``filepath``
    (a prefix; ``filepath.json`` + a safetensors data file). Returns the path."""
    filepath = storage.normalize_prefix(os.fspath(filepath))
    if not overwrite and storage.exists(filepath):
        raise FileExistsError(f"save_weights: {filepath!r} exists and overwrite=False")
    return Checkpoint(model).write(filepath)


def load_weights(model, filepath, skip_mismatch=False, by_name=False, options=None):
    """Load weights saved by ``save_weights`` (or a Checkpoint of the model
    alone). An unbuilt model gets its weights when it is built. Returns the
    load status."""
    filepath = os.fspath(filepath)
    return Checkpoint(model).read(filepath)


__all__ += ["CheckpointError"]


class CheckpointOptions:
    """tf.train.CheckpointOptions (TF 2.21's arguments): accepted by save/restore/write/read and
    recorded; tapeflow writes one local file set synchronously, so none changes what is written."""

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False, experimental_sharding_callback=None,
                 experimental_skip_slot_variables=False):
        self.experimental_io_device = experimental_io_device
        self.experimental_enable_async_checkpoint = bool(experimental_enable_async_checkpoint)
        self.enable_async = bool(enable_async) or self.experimental_enable_async_checkpoint
        self.experimental_write_callbacks = experimental_write_callbacks
        self.experimental_sharding_callback = experimental_sharding_callback
        self.experimental_skip_slot_variables = bool(experimental_skip_slot_variables)
