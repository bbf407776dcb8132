"""``tapeflow.Module``: attribute-tracked containers of variables, and the one
variable walker that Module, Keras, optimizers and checkpoints use.

Tracking (``Module.__setattr__``)
    Assigning a Variable, a Module, or a list/tuple/dict holding them to an
    attribute of a Module is noticed: cached variable lists are invalidated,
    ``TRACKING_HOOKS`` are told about each Variable, and a sub-Module records
    the attribute it lives under (Keras names error paths with it). Nothing is
    registered up front, so a module can create its variables lazily (Keras
    layers build on their first call).

Bookkeeping policy (one declaration)
    A class lists the attributes that are internal state -- caches, flags, a
    layer's own-weight lists, an optimizer's slot tables -- in ``_bookkeeping``.
    Those attributes are set like any other (``self._cache = {}``), are never
    tracked and never walked. A subclass lists only its own names: they are
    merged with its bases' when the class is created.

Walking (``_Walk``)
    One traversal, in a deterministic order, with TF-like paths
    (``actor/l1/kernel``, ``layers/0/bias``, ``table/x``) and each Variable,
    object and container visited once (a variable reachable by two paths is
    reported under the first one met; cycles are safe). What an object's
    children are is the object's business: ``_walk_children()`` (Modules:
    attributes sorted by name; Keras layers: own weights first, then
    attributes in assignment order; optimizers: ``iterations``,
    ``learning_rate``, ``slots/<i>/<name>``); lists/tuples by index, dicts by
    key in insertion order; with ``plain=True`` other objects through their
    ``__dict__`` (an agent holding an actor, a critic and two optimizers).
    The callers differ only in which objects they descend into:

    * ``Module.variables`` / ``trainable_variables``: Modules that contribute
      variables (not optimizers: a model's variables are its weights);
    * ``Module.submodules``, Keras' ``_flatten_layers``: Modules / Layers;
    * ``walk_variables(obj)``: everything, plain objects included;
    * checkpoints (``tapeflow.train.trackable.collect``): everything but
      optimizers, which are walked last so their slots are keyed by the
      variable they belong to.

``TRACKING_HOOKS``: functions called with ``(owner, name, variable)`` when a
Variable is assigned as an attribute of a Module (``self.w = Variable(...)``;
also Variables inside a list/dict assigned as an attribute, with ``name`` like
``ws/0``), when a Keras layer creates a weight (``add_weight``; ``name`` is the
weight's name), and when an optimizer creates a variable (``iterations``,
``learning_rate``, a slot: ``slots/3/m``; see ``tapeflow.optimizers.Optimizer``).
Checkpoints subscribe to restore values into variables created after
``restore()`` was called (deferred restoration).
"""
from __future__ import annotations

import contextlib
import re
import types
import weakref

import numpy as np

from .core.tensor import Tensor, Variable, _CREATION_HOOKS

__all__ = ["Module", "ListWrapper", "walk_variables", "TRACKING_HOOKS", "camel_to_snake"]

#: callbacks ``hook(owner, name, variable)``; see the module docstring
TRACKING_HOOKS: list = []

# A global counter bumped whenever the set of variables reachable from some
# module may have changed (a Variable created, a trackable attribute set, a
# layer's trainable flag flipped). Walk results are cached against it.
_VERSION = [0]


def _bump(*_):
    _VERSION[0] += 1


_CREATION_HOOKS.append(_bump)


def _notify(owner, name, var):
    for h in tuple(TRACKING_HOOKS):
        h(owner, name, var)


def camel_to_snake(name):
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    s = re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()
    return s.replace("__", "_")


# -- the walker ----------------------------------------------------------------------------------

_CONTAINERS = (list, tuple, dict)

#: values that never hold variables
_LEAF_TYPES = (str, bytes, bytearray, int, float, complex, bool, type(None), np.ndarray, np.generic, type,
               types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
               types.GeneratorType, types.CodeType, types.FrameType, range, slice, frozenset, set,
               weakref.ref, weakref.WeakKeyDictionary, weakref.WeakValueDictionary, weakref.WeakSet,
               memoryview, np.random.Generator, np.random.RandomState, np.dtype, Tensor)

#: top-level packages of machinery that references objects without owning them
_MACHINERY = frozenset({"threading", "logging", "io", "_io", "multiprocessing", "concurrent", "socket",
                        "subprocess", "queue", "functools", "asyncio"})

#: a list/tuple/dict longer than this whose first items hold nothing trackable is not
#: walked (a replay buffer of transitions would otherwise be scanned on every walk)
_LONG = 256
#: the walk is recursive: deeper object chains (a linked structure) are not followed
_MAX_DEPTH = 64


def _children(obj):
    """Ordered ``(name, value)`` pairs of an object: the one children protocol."""
    wc = getattr(type(obj), "_walk_children", None)
    if wc is not None:
        return wc(obj)
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in list(obj.items())]
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj)]
    d = getattr(obj, "__dict__", None)
    if not isinstance(d, dict):
        return []
    return [(k, v) for k, v in list(d.items()) if not k.startswith("__")]


def _plain_walkable(v):
    """Whether a non-Module, non-container object is walked through its ``__dict__``.

    tapeflow's own non-Module objects (compiled functions, graphs, tapes,
    losses, initializers, replay buffers, checkpoints) refer to variables and
    never own them: a compiled function holds its model's variables, which
    must be found (and named) through the model."""
    if isinstance(v, _LEAF_TYPES):
        return False
    t = type(v)
    if getattr(t, "_walk_children", None) is not None:
        return True
    mod = t.__module__ or ""
    if mod.startswith("tapeflow.") or mod.split(".", 1)[0] in _MACHINERY:
        return False
    return isinstance(getattr(v, "__dict__", None), dict)


def _may_hold(v):
    return isinstance(v, (Variable, Module) + _CONTAINERS) or _plain_walkable(v)


def _long_and_plain(seq):
    """A long list/tuple/dict whose first items hold nothing that can own variables."""
    if len(seq) <= _LONG:
        return False
    head = list(seq.values())[:16] if isinstance(seq, dict) else seq[:16]
    for x in head:
        if isinstance(x, (list, tuple)):
            if any(_may_hold(y) for y in x[:16]):
                return False
        elif isinstance(x, dict):
            if any(_may_hold(y) for y in list(x.values())[:16]):
                return False
        elif _may_hold(x):
            return False
    return True


def _always(_obj):
    return True


def _never(_obj):
    return False


class _Walk:
    """One traversal of an object graph (see the module docstring).

    Calling it on an object yields ``(path, value, trainable)`` for every
    Variable and every object (Module, or with ``plain`` a plain object) it
    meets, each once; ``descend(obj)`` says whether to walk into that object.
    ``trainable`` is False under a Module whose ``trainable`` is False.
    The same walk may be called on several roots: what one root reached is
    not reported again under the next (checkpoint roots, then optimizers).
    ``containers`` records the lists/dicts gone through with their lengths:
    a cached result is stale once one of them changed length.
    """

    __slots__ = ("plain", "descend", "seen", "containers")

    def __init__(self, plain=False, descend=_always):
        self.plain = plain
        self.descend = descend
        # id -> object: holding the objects keeps the ids of temporary containers
        # (an optimizer's slot table) from being reused during the walk
        self.seen = {}
        self.containers = []

    def __call__(self, obj, prefix="", trainable=True, depth=0):
        seen = self.seen
        seen[id(obj)] = obj
        if isinstance(obj, (list, dict)):
            self.containers.append((obj, len(obj)))
        for name, v in _children(obj):
            path = f"{prefix}/{name}" if prefix else str(name)
            if isinstance(v, Variable):
                if id(v) not in seen:
                    seen[id(v)] = v
                    yield path, v, trainable and v.trainable
            elif id(v) in seen or depth >= _MAX_DEPTH:
                continue
            elif isinstance(v, Module) or (self.plain and _plain_walkable(v)):
                t = trainable and getattr(v, "trainable", True) is not False
                seen[id(v)] = v
                yield path, v, t
                if self.descend(v):
                    yield from self(v, path, t, depth + 1)
            elif isinstance(v, _CONTAINERS) and not _long_and_plain(v):
                # (empty ones too: the walk records them, so appending to one later is seen)
                yield from self(v, path, trainable, depth + 1)


def walk_variables(obj, prefix=""):
    """Yield ``(path, variable)`` for every Variable reachable from ``obj``.

    Walks Modules (including Keras layers and models), optimizers (iterations,
    learning rate, slots), lists/tuples/dicts and plain objects' ``__dict__``.
    Paths join attribute names, list indices and dict keys with ``/``. Each
    variable is reported once (the first path found wins); cycles are safe.
    """
    if isinstance(obj, Variable):
        yield (prefix or obj._name), obj
        return
    for path, v, _ in _Walk(plain=True)(obj, prefix):
        if isinstance(v, Variable):
            yield path, v


def _cache_valid(c):
    """A cached walk is valid while no trackable object was created or assigned
    anywhere (the version) and no list/dict it went through changed length."""
    if c is None or c[0] != _VERSION[0]:
        return False
    for cont, n in c[2]:
        if len(cont) != n:
            return False
    return True


def _contributes(m):
    return getattr(m, "_CONTRIBUTES_VARIABLES", True)


# -- Module --------------------------------------------------------------------------------------

class _NameScope(contextlib.AbstractContextManager):
    def __init__(self, name):
        self.name = name

    def __exit__(self, *exc):
        return False


def _is_trackable(v):
    return isinstance(v, (Variable, Module, _CONTAINERS))


class ListWrapper(list):
    """What a list becomes when it is assigned to an attribute of a ``tf.Module`` or a
    ``tf.train.Checkpoint``, as in TF 2.21 (its repr is ``ListWrapper([...])``). It is a
    list in every other way. A Variable or Module put into it later is tracked at once, as
    if assigned to an attribute: ``TRACKING_HOOKS`` hear of it under ``<attr>/<index>``, so a
    restore still pending for that key assigns a variable appended after ``restore()``."""

    __slots__ = ("_owner", "_attr")

    def __init__(self, items=(), owner=None, attr=""):
        super().__init__(items)
        # the owner is held weakly: the list is the owner's attribute (no cycle to keep alive)
        self._owner = None if owner is None else weakref.ref(owner)
        self._attr = attr

    def __repr__(self):
        return f"ListWrapper({list.__repr__(self)})"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        # copies and pickles are plain-list-like ListWrappers that belong to no owner
        return (ListWrapper, (list(self),))

    def _added(self):
        owner = None if self._owner is None else self._owner()
        if owner is not None:
            _track(owner, self._attr, self)

    def append(self, value):
        super().append(value)
        if _is_trackable(value):
            self._added()

    def extend(self, values):
        super().extend(values)
        self._added()

    def insert(self, index, value):
        super().insert(index, value)
        if _is_trackable(value):
            self._added()

    def __setitem__(self, index, value):
        super().__setitem__(index, value)
        self._added()

    def __iadd__(self, values):
        super().__iadd__(values)
        self._added()
        return self


def wrap_list(value, owner, attr):
    """A plain list assigned to ``owner.attr`` as TF stores it (a ListWrapper); anything else as is."""
    return ListWrapper(value, owner, attr) if type(value) is list else value


def _record_parent(child, parent, attr):
    pa = child.__dict__.get("_parent_attr")
    if pa is None:
        child.__dict__["_parent_attr"] = {id(parent): attr}
    else:
        pa.setdefault(id(parent), attr)


class Module:
    """Base class for objects that own variables (``tf.Module``).

    ``variables`` / ``trainable_variables`` / ``submodules`` are found by
    walking attributes (sorted by attribute name, as TF does). Subclasses need
    not call ``super().__init__()`` before setting attributes.
    """

    #: attributes that are internal state: neither tracked nor walked. A subclass
    #: lists only its own; ``__init_subclass__`` merges them with the bases'.
    _bookkeeping = frozenset({"_name", "_walk_cache", "_parent_attr"})
    #: whether ``variables`` of an enclosing module includes this module's variables
    #: (optimizers say False: a model's variables are its weights only)
    _CONTRIBUTES_VARIABLES = True
    #: a list attribute is stored as a ListWrapper (tf.Module's; Keras 3 layers keep lists)
    _WRAP_LISTS = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        merged = frozenset(cls.__dict__.get("_bookkeeping", ()))
        for base in cls.__mro__[1:]:
            merged |= base.__dict__.get("_bookkeeping", frozenset())
        cls._bookkeeping = merged

    def __init__(self, name=None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        self._name = name

    # -- attribute tracking --------------------------------------------------------
    def __setattr__(self, name, value):
        if name in type(self)._bookkeeping or name.startswith("__"):
            object.__setattr__(self, name, value)
            return
        old = self.__dict__.get(name)
        if type(self)._WRAP_LISTS:
            value = wrap_list(value, self, name)
        object.__setattr__(self, name, value)
        if _is_trackable(value):
            _track(self, name, value)
        elif old is not None and _is_trackable(old):
            _VERSION[0] += 1  # a variable, module or container was replaced by something else

    def __delattr__(self, name):
        object.__delattr__(self, name)
        _VERSION[0] += 1

    # -- naming --------------------------------------------------------------------
    @property
    def name(self):
        n = self.__dict__.get("_name")
        return n if n is not None else camel_to_snake(type(self).__name__)

    @property
    def name_scope(self):
        return _NameScope(self.name)

    @classmethod
    def with_name_scope(cls, method):
        return method

    # -- walking -------------------------------------------------------------------
    def _walk_children(self):
        """Ordered (name, value) pairs the walker descends into."""
        d = self.__dict__
        skip = type(self)._bookkeeping
        return [(k, d[k]) for k in sorted(d) if k not in skip and not k.startswith("__")]

    def _cached_walk(self, key, compute):
        """``compute()`` -> (result, walk), cached under ``key`` until the version
        moves or a container the walk went through changes length."""
        cache = self.__dict__.get("_walk_cache")
        if cache is None:
            cache = self._walk_cache = {}
        c = cache.get(key)
        if _cache_valid(c):
            return c[1]
        version = _VERSION[0]
        result, walk = compute()
        cache[key] = (version, result, walk.containers)
        return result

    def _collect(self):
        """[(variable, effectively_trainable)] over this module's tree, cached."""
        def compute():
            w = _Walk(descend=_contributes)
            root_trainable = getattr(self, "trainable", True) is not False
            return [(v, t) for _, v, t in w(self, trainable=root_trainable) if isinstance(v, Variable)], w
        return self._cached_walk("variables", compute)

    @property
    def variables(self):
        return tuple(v for v, _ in self._collect())

    @property
    def trainable_variables(self):
        return tuple(v for v, t in self._collect() if t)

    @property
    def non_trainable_variables(self):
        return tuple(v for v, t in self._collect() if not t)

    @property
    def submodules(self):
        return tuple(v for _, v, _ in _Walk()(self) if isinstance(v, Module))

    def _flatten(self, predicate=None):
        return [v for v in self.variables if predicate is None or predicate(v)]


def _track(owner, name, value):
    """A Variable, Module or container was assigned to ``owner.name``: invalidate
    cached walks, then tell the hooks about its variables and the sub-modules
    about the attribute they live under (in that order: a hook may walk)."""
    if isinstance(value, (Variable, Module)):
        found = [(name, value)]
    else:
        found = [(path, v) for path, v, _ in _Walk(descend=_never)(value, name)]
    # a list/dict counts even when it holds nothing yet: trackables appended to it
    # later must be found, and a cached walk does not know the new container
    if found or isinstance(value, (list, dict)):
        _VERSION[0] += 1
    for path, v in found:
        if isinstance(v, Variable):
            if TRACKING_HOOKS:
                _notify(owner, path, v)
        else:
            _record_parent(v, owner, path)
