"""Keras' ``{"class_name", "config"}`` form, shared by initializers,
regularizers, constraints and losses; the base class of the configurable objects and
the get/serialize/deserialize trio of a kind of them."""
from __future__ import annotations


def to_config(obj):
    """The serialized form of a configurable object (one with get_config)."""
    return {"class_name": type(obj).__name__, "config": obj.get_config()}


def from_config(config, by_name, kind, get):
    """Rebuild from a ``{"class_name", "config"}`` dict (class looked up
    lower-cased in ``by_name``); anything else goes to ``get``."""
    if isinstance(config, dict):
        cls = by_name.get(config["class_name"].lower())
        if cls is None:
            raise ValueError(f"unknown {kind} class {config['class_name']!r}")
        return cls.from_config(config.get("config", {}))
    return get(config)


class Configurable:
    """An object Keras rebuilds from ``get_config()`` (initializers, regularizers, constraints)."""

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


def lookup(kind, base, by_name):
    """``(get, serialize, deserialize)`` for objects of class ``base`` known by the lower-case
    names in ``by_name``: ``get`` takes None, an instance, a name, a config dict or any
    callable (used as it is, as Keras does)."""
    def get(identifier):
        if identifier is None or isinstance(identifier, base):
            return identifier
        if isinstance(identifier, str):
            cls = by_name.get(identifier.lower())
            if cls is None:
                raise ValueError(f"Could not interpret {kind} identifier: {identifier!r}; known names: "
                                 f"{', '.join(sorted(by_name))}")
            return cls()
        if isinstance(identifier, dict):
            return deserialize(identifier)
        if callable(identifier):
            return identifier
        raise ValueError(f"Could not interpret {kind} identifier: {identifier!r}")

    def serialize(obj):
        return to_config(obj) if isinstance(obj, base) else obj

    def deserialize(config):
        return from_config(config, by_name, kind, get)
    return get, serialize, deserialize
