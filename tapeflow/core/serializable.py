"""The callables a serialized graph may name: an explicit registry, so that loading a
SavedModel never imports or runs code the file chooses.

A primitive's param may be a Python callable: the per-element function of the string
primitives (``tapeflow/strings.py``'s ``_lower``, a lookup table object, a hash), or a
``py_call``'s function. Such a param has a serialized form only when its function or class
opted in here under a stable name:

* ``@serializable("strings.lower")`` on a module-level function: saved as its name;
* ``@serializable("lookup.static")`` on a class whose instances give their data as
  ``_serial_state()`` (a JSON-able value: lists, dicts, bytes, numbers; ir/serialize.py's
  param encoder writes it) and are rebuilt by the classmethod ``_from_serial_state(state)``.

``ir/serialize.py`` writes ``{"$fn": name, "state": ...}`` and reads it back through
``find(name)`` only: an unknown name is an error, never an import. The modules that register
callables are listed in ``_PROVIDERS`` (a fixed list, imported on the first lookup) so that a
load does not depend on which of them the loading program happened to import. Anything not
registered (a user's py_function body, a lambda) stays unserializable.
"""
from __future__ import annotations

import importlib

#: name -> function or class
_BY_NAME = {}
#: function -> name (by identity: module-level functions), class -> name
_FUNCTIONS = {}
_CLASSES = {}

#: the modules whose import registers serializable callables (fixed: never taken from a file)
_PROVIDERS = ("tapeflow.strings", "tapeflow.lookup", "tapeflow.keras.layers.lookup")
_loaded = False


def serializable(name):
    """Registers a function or class under ``name`` (unique, stable across versions: a saved
    file refers to it)."""
    def register(obj):
        old = _BY_NAME.get(name)
        if old is not None and old is not obj and getattr(old, "__qualname__", None) != obj.__qualname__:
            raise ValueError(f"serializable name {name!r} is taken by {old!r}")
        _BY_NAME[name] = obj
        if isinstance(obj, type):
            if not (hasattr(obj, "_serial_state") and hasattr(obj, "_from_serial_state")):
                raise TypeError(f"@serializable class {obj.__qualname__} needs _serial_state() and "
                                "_from_serial_state(state)")
            _CLASSES[obj] = name
        else:
            _FUNCTIONS[id(obj)] = (name, obj)
        return obj
    return register


def name_of(fn):
    """(name, state) of a registered callable; None when ``fn`` has no serialized form."""
    cls = _CLASSES.get(type(fn))
    if cls is not None:
        return cls, fn._serial_state()
    hit = _FUNCTIONS.get(id(fn))
    if hit is not None and hit[1] is fn:
        return hit[0], None
    return None


def find(name):
    """The function or class registered as ``name``; KeyError when there is none."""
    global _loaded
    if name not in _BY_NAME and not _loaded:
        _loaded = True
        for m in _PROVIDERS:
            importlib.import_module(m)
    return _BY_NAME[name]


def rebuild(obj, state):
    """The callable ``find`` gave, with its saved ``state`` (a class's instance)."""
    return obj._from_serial_state(state) if isinstance(obj, type) else obj
