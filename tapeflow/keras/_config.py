"""Keras' ``{"class_name", "config"}`` form, shared by initializers,
regularizers and losses."""
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
