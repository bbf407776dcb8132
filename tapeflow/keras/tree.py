"""``keras.tree``: Keras 3's nested-structure utilities over lists, tuples, namedtuples and dicts
(dicts in sorted-key order, None a leaf), on tapeflow's ``util.nest``."""
from __future__ import annotations

from ..util import nest

__all__ = ["MAP_TO_NONE", "assert_same_paths", "assert_same_structure", "flatten", "flatten_with_path", "is_nested",
           "lists_to_tuples", "map_shape_structure", "map_structure", "map_structure_up_to", "pack_sequence_as",
           "traverse"]

#: returned by a ``traverse`` function to replace a subtree with None
MAP_TO_NONE = object()

is_nested = nest.is_nested
flatten = nest.flatten
pack_sequence_as = nest.pack_sequence_as


def _children(x):
    """(key, child) pairs of a nested value, in flattening order."""
    if isinstance(x, dict):
        return [(k, x[k]) for k in sorted(x, key=nest._sort_key)]
    return list(enumerate(x))


def flatten_with_path(structure):
    """[(path, leaf)]: the path is the tuple of keys/indices leading to the leaf."""
    out = []

    def walk(x, path):
        if nest.is_nested(x):
            for k, v in _children(x):
                walk(v, path + (k,))
        else:
            out.append((path, x))
    walk(structure, ())
    return out


def map_structure(func, *structures, none_is_leaf=True):
    return nest.map_structure(func, *structures)


def assert_same_structure(a, b, check_types=None):
    """ValueError where ``a`` and ``b`` differ in structure (and container type, as Keras 3)."""
    def walk(x, y):
        if nest.is_nested(x):
            kind = dict if isinstance(x, dict) else list if isinstance(x, list) else tuple
            if not isinstance(y, kind) or (kind is tuple and type(x) is not type(y)):
                raise ValueError(f"Expected an instance of {type(x).__name__}, got {y!r}.")
            kx, ky = [k for k, _ in _children(x)], [k for k, _ in _children(y)]
            if kx != ky:
                raise ValueError(f"The two structures don't have the same nested structure: {x!r} and {y!r}")
            for (_, u), (_, v) in zip(_children(x), _children(y)):
                walk(u, v)
        elif nest.is_nested(y):
            raise ValueError(f"Expected a leaf, got {y!r}.")
    walk(a, b)


def assert_same_paths(a, b):
    pa, pb = {p for p, _ in flatten_with_path(a)}, {p for p, _ in flatten_with_path(b)}
    if pa != pb:
        raise ValueError(f"`a` and `b` don't have the same paths: {sorted(pa ^ pb, key=str)}")


def lists_to_tuples(structure):
    if isinstance(structure, dict):
        return type(structure)((k, lists_to_tuples(v)) for k, v in structure.items())
    if isinstance(structure, (list, tuple)):
        vals = [lists_to_tuples(v) for v in structure]
        return type(structure)(*vals) if nest._is_namedtuple(structure) else tuple(vals)
    return structure


def _is_shape(x):
    return isinstance(x, (list, tuple)) and all(d is None or isinstance(d, int) for d in x)


def map_shape_structure(func, structure):
    """map_structure with shapes (tuples/lists of ints and None) as leaves."""
    if _is_shape(structure):
        return func(structure)
    if isinstance(structure, dict):
        return type(structure)((k, map_shape_structure(func, v)) for k, v in structure.items())
    if isinstance(structure, (list, tuple)):
        vals = [map_shape_structure(func, v) for v in structure]
        return type(structure)(*vals) if nest._is_namedtuple(structure) else type(structure)(vals)
    return func(structure)


def map_structure_up_to(shallow_structure, func, *structures):
    """func applied at ``shallow_structure``'s leaves to the matching parts of ``structures``."""
    parts = [nest.flatten_up_to(shallow_structure, s) for s in structures]
    return nest.pack_sequence_as(shallow_structure, [func(*xs) for xs in zip(*parts)])


def traverse(func, structure, top_down=True):
    """Visit every node: ``func(node)`` returning None keeps (and, top-down, descends into) the
    node, MAP_TO_NONE replaces it with None, any other value replaces it."""
    def visit(x):
        if top_down:
            r = func(x)
            if r is MAP_TO_NONE:
                return None
            if r is not None:
                return r
        if nest.is_nested(x):
            if isinstance(x, dict):
                y = type(x)((k, visit(v)) for k, v in x.items())
            else:
                vals = [visit(v) for v in x]
                y = type(x)(*vals) if nest._is_namedtuple(x) else type(x)(vals)
        else:
            y = x
        if not top_down:
            r = func(y)
            if r is MAP_TO_NONE:
                return None
            if r is not None:
                return r
        return y
    return visit(structure)
