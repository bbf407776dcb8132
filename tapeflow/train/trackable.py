"""Which variables a checkpoint holds, and under which keys.

``collect(roots)`` walks the objects given to a ``Checkpoint`` (models,
layers, optimizers, plain Variables, user objects holding any of these,
lists/tuples/dicts of them) and returns ``{key: Variable}`` with TF-like keys:

* attribute paths joined by ``/``: ``policy/actor/l1/kernel``,
  ``agent/critics/0/bias`` (list index), ``nets/q/kernel`` (dict key);
* optimizer slots keyed by the variable they belong to, as TF does:
  ``q/layer_0/kernel/.OPTIMIZER_SLOT/optimizer/m`` -- so a checkpoint does not
  depend on the order in which an optimizer happened to create its slots;
* the optimizer's other variables (``iterations``, a learning-rate Variable)
  under the optimizer's path: ``optimizer/iterations``.

A variable reachable by several paths is stored once, under the first path
met; roots are walked in the order given, and optimizers after everything
else, so a model's weights are keyed by the model even when the optimizer
also holds references to them.

Walking follows the same protocol as ``tapeflow.module``: an object with a
``_walk_children()`` method (Modules, Keras layers) says what its children
are; other objects are walked through ``__dict__``. Compiled functions,
graphs, tapes and similar machinery are never descended into (they hold
references to variables, not ownership).
"""
from __future__ import annotations

import types
import weakref

import numpy as np

from ..core.tensor import Tensor, Variable

__all__ = ["collect", "is_optimizer", "slot_triples"]

_LEAF_TYPES = (str, bytes, bytearray, int, float, complex, bool, type(None), np.ndarray, np.generic, type,
               types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
               types.GeneratorType, types.CodeType, types.FrameType, range, slice, frozenset, set,
               weakref.ref, weakref.WeakKeyDictionary, weakref.WeakValueDictionary, weakref.WeakSet,
               memoryview, np.random.Generator, np.random.RandomState, np.dtype)

#: module prefixes of machinery never walked into (it references variables, it does not own them)
_SKIP_MODULES = ("tapeflow.compiler", "tapeflow.ir", "tapeflow.autodiff", "tapeflow.train",
                 "tapeflow.summary", "tapeflow.profiler", "threading", "logging", "io", "_io",
                 "multiprocessing", "concurrent", "socket", "subprocess", "queue", "functools")

#: long sequences whose first items hold nothing trackable are not walked (replay buffers of tuples)
_LONG = 256
_MAX_DEPTH = 64


def is_optimizer(obj):
    """Duck-typed: an object with ``apply_gradients`` and slot accessors."""
    t = type(obj)
    return callable(getattr(t, "apply_gradients", None)) and (
        callable(getattr(t, "get_slot", None)) or callable(getattr(t, "_checkpoint_slots", None)))


def slot_triples(opt, primaries):
    """``[(primary_variable, slot_name, slot_variable)]`` for an optimizer.

    Uses ``opt._checkpoint_slots()`` or ``opt.slots()`` when the optimizer
    provides it (an iterable of such triples), else TF's ``get_slot_names()`` /
    ``get_slot(var, name)`` over the candidate ``primaries``.
    """
    own = getattr(type(opt), "_checkpoint_slots", None)
    if callable(own):
        try:
            return [(p, str(n), s) for p, n, s in opt._checkpoint_slots()
                    if isinstance(p, Variable) and isinstance(s, Variable)]
        except Exception:
            pass
    slots = getattr(type(opt), "slots", None)
    if callable(slots):  # tapeflow.optimizers.Optimizer.slots(): (variable, slot_name, slot_variable)
        try:
            return [(p, str(n), s) for p, n, s in opt.slots()
                    if isinstance(p, Variable) and isinstance(s, Variable)]
        except Exception:
            pass
    get_names = getattr(opt, "get_slot_names", None)
    get_slot = getattr(opt, "get_slot", None)
    if not callable(get_slot):
        return []
    try:
        names = list(get_names()) if callable(get_names) else []
    except Exception:
        names = []
    out = []
    if not names:
        return out
    for p in primaries:
        for n in names:
            try:
                s = get_slot(p, n)
            except Exception:
                continue
            if isinstance(s, Variable) and s is not p:
                out.append((p, str(n), s))
    return out


def _children(obj):
    wc = getattr(obj, "_walk_children", None)
    if wc is not None and not isinstance(obj, type) and callable(wc):
        try:
            return list(wc())
        except Exception:
            pass
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in list(obj.items())]
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj)]
    d = getattr(obj, "__dict__", None)
    if not isinstance(d, dict):
        return []
    return [(k, v) for k, v in list(d.items()) if not (k.startswith("__") and k.endswith("__"))]


def _walkable(v):
    if isinstance(v, (Tensor,) + _LEAF_TYPES):
        return False
    if isinstance(v, (list, tuple, dict)):
        return True
    mod = type(v).__module__ or ""
    if mod.startswith(_SKIP_MODULES):
        return False
    return isinstance(getattr(v, "__dict__", None), dict) or hasattr(v, "_walk_children")


def _may_hold(v):
    return isinstance(v, Variable) or (_walkable(v) and not isinstance(v, (str, bytes)))


def _long_and_plain(seq):
    """A long list/tuple whose first items hold nothing that can own variables."""
    if len(seq) <= _LONG:
        return False
    head = seq[:16] if isinstance(seq, (list, tuple)) else list(seq.values())[:16]
    for x in head:
        if isinstance(x, Variable):
            return False
        if isinstance(x, (list, tuple)):
            if any(_may_hold(y) for y in x[:16]):
                return False
        elif _walkable(x) and not isinstance(x, dict):
            return False
        elif isinstance(x, dict) and any(_may_hold(y) for y in list(x.values())[:16]):
            return False
    return True


def _walk(obj, prefix, out, seen_vars, seen_objs, optimizers, depth, force=False):
    if depth > _MAX_DEPTH or (id(obj) in seen_objs and not force):
        return
    seen_objs.add(id(obj))
    if isinstance(obj, (list, tuple, dict)) and _long_and_plain(obj):
        return
    for name, v in _children(obj):
        path = f"{prefix}/{name}" if prefix else str(name)
        if isinstance(v, Variable):
            if id(v) not in seen_vars:
                seen_vars.add(id(v))
                out.append((path, v))
        elif _walkable(v):
            if is_optimizer(v):
                if id(v) not in seen_objs:
                    optimizers.append((path, v))
                    seen_objs.add(id(v))
            else:
                _walk(v, path, out, seen_vars, seen_objs, optimizers, depth + 1)


def collect(roots):
    """``{key: Variable}`` for an ordered mapping ``{root_name: object}``.

    A root named ``""`` contributes its children at the top level (the
    ``Checkpoint(model)`` / ``save_weights`` form). Raises ValueError when
    two different variables would get the same key.
    """
    out = []           # (path, var) in walk order
    seen_vars, seen_objs = set(), set()
    optimizers = []    # (path, optimizer), walked last
    # the objects given by name keep that name even when another root also holds them
    # (a compiled Keras model's .optimizer, a step counter kept on the agent)
    walk_roots = []
    for name, obj in roots.items():
        if isinstance(obj, Variable):
            if id(obj) not in seen_vars:
                seen_vars.add(id(obj))
                out.append((name or obj._name, obj))
        elif is_optimizer(obj):
            if id(obj) not in seen_objs:
                seen_objs.add(id(obj))
                optimizers.append((name, obj))
        elif _walkable(obj) and id(obj) not in seen_objs:
            seen_objs.add(id(obj))
            walk_roots.append((name, obj))
    for name, obj in walk_roots:
        _walk(obj, name, out, seen_vars, seen_objs, optimizers, 0, force=True)
    # optimizers: slots keyed by their variable, then the optimizer's own variables
    i = 0
    while i < len(optimizers):  # (an optimizer may hold another one: appended while walking)
        opt_path, opt = optimizers[i]
        i += 1
        primary_path = {id(v): p for p, v in out}
        primaries = [v for _, v in out]
        for p, slot_name, s in slot_triples(opt, primaries):
            if id(s) in seen_vars:
                continue
            pp = primary_path.get(id(p))
            if pp is None:
                continue  # slot of a variable not in this checkpoint: saved under the optimizer below
            seen_vars.add(id(s))
            out.append((f"{pp}/.OPTIMIZER_SLOT/{opt_path}/{slot_name}" if opt_path else
                        f"{pp}/.OPTIMIZER_SLOT/{slot_name}", s))
        _walk(opt, opt_path, out, seen_vars, seen_objs, optimizers, 0, force=True)
    result = {}
    for path, v in out:
        other = result.get(path)
        if other is not None and other is not v:
            raise ValueError(f"checkpoint: two different variables would be saved under the key {path!r} "
                             f"({other._name} and {v._name}); rename one of the attributes")
        result[path] = v
    return result
