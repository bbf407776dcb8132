"""``tapeflow.Module``: attribute-tracked containers of variables, and the
generic variable walker that checkpoints use.

A Module finds its variables by walking its attributes: Variables, nested
Modules, and lists/tuples/dicts of them, as ``tf.Module`` does. Nothing is
registered up front, so a module can create its variables lazily (Keras
layers build on their first call).

``walk_variables(obj)`` walks any object graph -- Modules, Keras layers,
optimizers, lists/tuples/dicts, and plain user objects through their
``__dict__`` (an agent holding an actor, a critic and two optimizers) -- and
yields ``(path, variable)`` pairs with TF-like paths (``actor/l1/kernel``,
``layers/0/bias``). A variable reachable by two paths is reported once, under
the first path met.

``TRACKING_HOOKS``: functions called with ``(owner, name, variable)`` when a
Variable is assigned as an attribute of a Module (``self.w = Variable(...)``;
also Variables inside a list/dict assigned as an attribute, with ``name`` like
``ws/0``), when a Keras layer creates a weight (``add_weight``; ``name`` is the
weight's name), and when an optimizer creates a slot variable (``name`` is the
slot's path relative to the optimizer, e.g. ``slots/3/m``; see
``tapeflow.optimizers.Optimizer``). Checkpoints subscribe to restore values
into variables created after ``restore()`` was called (deferred restoration).
"""
from __future__ import annotations

import contextlib
import re
import types

import numpy as np

from .core.tensor import Tensor, Variable, _CREATION_HOOKS

__all__ = ["Module", "walk_variables", "TRACKING_HOOKS", "camel_to_snake"]

#: callbacks ``hook(owner, name, variable)``; see the module docstring
TRACKING_HOOKS: list = []

# A global counter bumped whenever the set of variables reachable from some
# module may have changed (a Variable created, a trackable attribute set, a
# layer's trainable flag flipped). Modules cache their variable lists against it.
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


_LEAF_TYPES = (str, bytes, int, float, complex, bool, type(None), np.ndarray, np.generic, type,
               types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
               types.GeneratorType, range, slice, frozenset, set)


def _is_container(v):
    return isinstance(v, (list, tuple, dict))


def _holds_trackable(v, depth=0):
    """Whether an attribute value is (or contains) a Variable or Module."""
    if isinstance(v, (Variable, Module)):
        return True
    if depth < 3 and _is_container(v):
        vals = v.values() if isinstance(v, dict) else v
        return any(_holds_trackable(x, depth + 1) for x in vals)
    return False


def _notify_container(owner, prefix, v, depth=0):
    if isinstance(v, Variable):
        _notify(owner, prefix, v)
    elif depth < 3 and _is_container(v):
        items = v.items() if isinstance(v, dict) else enumerate(v)
        for k, x in items:
            _notify_container(owner, f"{prefix}/{k}", x, depth + 1)


class _NameScope(contextlib.AbstractContextManager):
    def __init__(self, name):
        self.name = name

    def __exit__(self, *exc):
        return False


class Module:
    """Base class for objects that own variables (``tf.Module``).

    ``variables`` / ``trainable_variables`` / ``submodules`` are found by
    walking attributes (sorted by attribute name, as TF does). Subclasses need
    not call ``super().__init__()`` before setting attributes.
    """

    #: attributes the walkers never descend into (bookkeeping)
    _WALK_SKIP = frozenset({"_name", "_var_cache", "_parent_attr", "_scope_name"})
    #: whether ``variables`` of an enclosing module includes this module's variables
    #: (optimizers say False: a model's variables are its weights only)
    _CONTRIBUTES_VARIABLES = True

    def __init__(self, name=None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        object.__setattr__(self, "_name", name)

    # -- attribute tracking --------------------------------------------------------
    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if isinstance(value, Variable):
            _VERSION[0] += 1
            if TRACKING_HOOKS and not name.startswith("__"):
                _notify(self, name, value)
        elif isinstance(value, Module):
            _VERSION[0] += 1
            pa = value.__dict__.get("_parent_attr")
            if pa is None:
                object.__setattr__(value, "_parent_attr", {id(self): name})
            else:
                pa.setdefault(id(self), name)
        elif _is_container(value) and value and _holds_trackable(value):
            _VERSION[0] += 1
            if TRACKING_HOOKS:
                _notify_container(self, name, value)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for k, x in items:
                if isinstance(x, Module):
                    pa = x.__dict__.get("_parent_attr")
                    if pa is None:
                        object.__setattr__(x, "_parent_attr", {id(self): f"{name}/{k}"})
                    else:
                        pa.setdefault(id(self), f"{name}/{k}")

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
        """Ordered (name, value) pairs the walkers descend into."""
        d = self.__dict__
        skip = self._WALK_SKIP
        return [(k, d[k]) for k in sorted(d) if k not in skip]

    def _collect(self):
        """[(variable, effectively_trainable)] over this module's tree, cached."""
        return _cached_collect(self, getattr(self, "trainable", True) is not False)

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
        out, seen = [], {id(self)}

        def rec(obj, depth):
            for _, v in _children(obj):
                if isinstance(v, Module):
                    if id(v) not in seen:
                        seen.add(id(v))
                        out.append(v)
                        rec(v, depth + 1)
                elif _is_container(v) and depth < 50:
                    rec(v, depth + 1)
        rec(self, 0)
        return tuple(out)

    def _flatten(self, predicate=None):
        return [v for v in self.variables if predicate is None or predicate(v)]

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__qualname__} '{self.name}'>"


def _children(obj):
    """Ordered (name, value) pairs of an object for the walkers."""
    wc = getattr(obj, "_walk_children", None)
    if wc is not None and not isinstance(obj, type):
        return wc()
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items()]
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj)]
    d = getattr(obj, "__dict__", None)
    if not isinstance(d, dict):
        return []
    return [(k, v) for k, v in list(d.items()) if not k.startswith("__")]


def _cache_valid(c):
    """A cached walk is valid while no trackable object was created or assigned
    anywhere (the version) and no list/dict it went through changed length."""
    if c is None or c[0] != _VERSION[0]:
        return False
    for cont, n in c[2]:
        if len(cont) != n:
            return False
    return True


def _cached_collect(mod, trainable):
    c = mod.__dict__.get("_var_cache")
    if _cache_valid(c):
        return c[1]
    out, conts = [], []
    _collect_into(mod, trainable, out, set(), set(), conts=conts)
    object.__setattr__(mod, "_var_cache", (_VERSION[0], out, conts))
    return out


def _collect_into(obj, trainable, out, seen_vars, seen_objs, depth=0, conts=None):
    """Variables of a module tree in walk order, with effective trainability:
    descends into Modules that contribute variables and into containers only."""
    if depth > 100:
        return
    if conts is not None and isinstance(obj, (list, dict)):
        conts.append((obj, len(obj)))
    for _, v in _children(obj):
        if isinstance(v, Variable):
            if id(v) not in seen_vars:
                seen_vars.add(id(v))
                out.append((v, trainable and v.trainable))
        elif isinstance(v, Module):
            if v._CONTRIBUTES_VARIABLES and id(v) not in seen_objs:
                seen_objs.add(id(v))
                _collect_into(v, trainable and getattr(v, "trainable", True) is not False,
                              out, seen_vars, seen_objs, depth + 1, conts)
        elif _is_container(v) and id(v) not in seen_objs:
            seen_objs.add(id(v))
            _collect_into(v, trainable, out, seen_vars, seen_objs, depth + 1, conts)


def _walkable(v):
    if isinstance(v, Tensor):
        return False
    if isinstance(v, _LEAF_TYPES) or callable(v) and not hasattr(v, "__dict__"):
        return False
    if isinstance(v, (Module, list, tuple, dict)):
        return True
    # tapeflow's own non-Module objects (tapeflow.function wrappers, losses,
    # initializers, random generators...) own no variables: a compiled function
    # refers to its model's variables, which must be found through the model
    if type(v).__module__.startswith("tapeflow."):
        return False
    return isinstance(getattr(v, "__dict__", None), dict)


def walk_variables(obj, prefix=""):
    """Yield ``(path, variable)`` for every Variable reachable from ``obj``.

    Walks Modules (including Keras layers and models), optimizers (iterations,
    learning rate, slots), lists/tuples/dicts and plain objects' ``__dict__``.
    Paths join attribute names, list indices and dict keys with ``/``. Each
    variable is reported once (the first path found wins); cycles are safe.
    """
    seen_vars, seen_objs = set(), set()
    if isinstance(obj, Variable):
        yield (prefix or obj._name), obj
        return
    yield from _walk(obj, prefix, seen_vars, seen_objs, 0)


def _walk(obj, prefix, seen_vars, seen_objs, depth):
    if depth > 64 or id(obj) in seen_objs:
        return
    seen_objs.add(id(obj))
    for name, v in _children(obj):
        path = f"{prefix}/{name}" if prefix else str(name)
        if isinstance(v, Variable):
            if id(v) not in seen_vars:
                seen_vars.add(id(v))
                yield path, v
        elif _walkable(v):
            yield from _walk(v, path, seen_vars, seen_objs, depth + 1)
