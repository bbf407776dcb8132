"""Nested structures (lists, tuples, namedtuples, dicts) as TF's tf.nest:
dicts flatten in sorted-key order; None is a leaf."""
from __future__ import annotations


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def is_nested(x):
    return isinstance(x, (list, tuple, dict))


def flatten(x):
    out = []
    _flatten(x, out)
    return out


def _flatten(x, out):
    if isinstance(x, dict):
        for k in sorted(x, key=_sort_key):
            _flatten(x[k], out)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _flatten(v, out)
    else:
        out.append(x)


def _sort_key(k):
    return (type(k).__name__, k) if not isinstance(k, (int, float)) else ("", k)


def pack_sequence_as(structure, flat):
    it = iter(flat)
    r = _pack(structure, it)
    rest = list(it)
    if rest:
        raise ValueError(f"pack_sequence_as: {len(rest)} values left over")
    return r


def _pack(s, it):
    if isinstance(s, dict):
        vals = {k: _pack(s[k], it) for k in sorted(s, key=_sort_key)}
        return type(s)((k, vals[k]) for k in s) if type(s) is not dict else {k: vals[k] for k in s}
    if _is_namedtuple(s):
        return type(s)(*[_pack(v, it) for v in s])
    if isinstance(s, (list, tuple)):
        return type(s)(_pack(v, it) for v in s)
    return next(it)


def flatten_up_to(shallow, x):
    """``x``'s parts at ``shallow``'s leaves (``shallow``'s structure must be a prefix of
    ``x``'s: e.g. output_types ``(tf.int32, tf.float32)`` and shapes ``((), (None,))``)."""
    if isinstance(shallow, dict):
        if not isinstance(x, dict) or set(x) != set(shallow):
            raise ValueError(f"The two structures don't have the same keys: {x!r} and {shallow!r}")
        return [v for k in sorted(shallow, key=_sort_key) for v in flatten_up_to(shallow[k], x[k])]
    if isinstance(shallow, (list, tuple)):
        if not isinstance(x, (list, tuple)):
            raise ValueError(f"The two structures don't have the same nested structure: {x!r} is not a "
                             f"sequence like {shallow!r}")
        if len(x) != len(shallow):
            raise ValueError(f"The two structures don't have the same sequence length. Input structure has "
                             f"length {len(x)}, while shallow structure has length {len(shallow)}.")
        return [v for a, b in zip(shallow, x) for v in flatten_up_to(a, b)]
    return [x]


def map_structure(fn, *structures):
    flats = [flatten(s) for s in structures]
    if len({len(f) for f in flats}) > 1:
        raise ValueError("map_structure: structures differ in size")
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)])


def _desc(x):
    return f"type={type(x).__name__} str={x}"


def _dots(x):
    """x with its leaves drawn as '.' (TF's 'Entire first structure' lines)."""
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_dots(v)}" for k, v in x.items()) + "}"
    if _is_namedtuple(x):
        return f"{type(x).__name__}(" + ", ".join(f"{f}={_dots(v)}" for f, v in zip(x._fields, x)) + ")"
    if isinstance(x, list):
        return "[" + ", ".join(_dots(v) for v in x) + "]"
    if isinstance(x, tuple):
        return "(" + ", ".join(_dots(v) for v in x) + (",)" if len(x) == 1 else ")")
    return "."


def _same_structure(a, b, check_types):
    if is_nested(a) != is_nested(b):
        seq, leaf = (a, b) if is_nested(a) else (b, a)
        raise ValueError(f'Substructure "{_desc(seq)}" is a sequence, while substructure "{_desc(leaf)}" is not')
    if not is_nested(a):
        return
    if check_types and type(a) is not type(b):
        raise TypeError(f"The two namedtuples don't have the same sequence type. First structure {_desc(a)} has "
                        f"type {type(a).__name__}, while second structure {_desc(b)} has type {type(b).__name__}")
    if isinstance(a, dict) and isinstance(b, dict):
        ka, kb = sorted(a, key=_sort_key), sorted(b, key=_sort_key)
        if ka != kb:
            raise ValueError(f"The two dictionaries don't have the same set of keys. First structure has keys "
                             f"{_desc(ka)}, while second structure has keys {_desc(kb)}")
        for k in ka:
            _same_structure(a[k], b[k], check_types)
        return
    if isinstance(a, dict) or isinstance(b, dict):   # (check_types=False: a dict against a sequence)
        a, b = (flatten_one(a), flatten_one(b))
    if len(a) != len(b):
        raise ValueError(f"The two structures don't have the same number of elements. First structure: "
                         f"{_desc(a)}. Second structure: {_desc(b)}")
    for u, v in zip(a, b):
        _same_structure(u, v, check_types)


def flatten_one(x):
    """x's children in flatten's order (a dict's values by sorted key)."""
    return [x[k] for k in sorted(x, key=_sort_key)] if isinstance(x, dict) else list(x)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """ValueError where the two structures nest differently (a sequence against a leaf, other lengths or
    dict keys); TypeError, with ``check_types``, where their container types differ. TF's messages."""
    try:
        _same_structure(nest1, nest2, check_types)
    except (ValueError, TypeError) as e:
        raise type(e)(f"The two structures don't have the same nested structure.\n\nFirst structure: "
                      f"{_desc(nest1)}\n\nSecond structure: {_desc(nest2)}\n\nMore specifically: {e}\n"
                      f"Entire first structure:\n{_dots(nest1)}\nEntire second structure:\n{_dots(nest2)}") from None


def structure_key(x, leaf_key):
    """A hashable description of a structure, with ``leaf_key`` applied to leaves."""
    if isinstance(x, dict):
        return ("dict", tuple((k, structure_key(x[k], leaf_key)) for k in sorted(x, key=_sort_key)))
    if _is_namedtuple(x):
        return (type(x), tuple(structure_key(v, leaf_key) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(structure_key(v, leaf_key) for v in x))
    return leaf_key(x)


# -- composite values (an ExtensionType, a SparseTensor) in control flow --------------------------------
# A composite is a leaf of the structures above. Control flow (cond's branch outputs, while_loop's
# loop variables) needs tensors, so it strips each composite to a tuple of its components
# (``_tf_components()``) and restores it afterwards from the original structure's composites
# (their ``_tf_static()`` and ``_tf_from_components``: compiler/function.py's protocol).

def _is_composite(x):
    return hasattr(type(x), "_tf_from_components")


def strip_composites(x):
    """``x`` with each composite replaced by a tuple of its components."""
    if _is_composite(x):
        return tuple(x._tf_components())
    if isinstance(x, dict):
        return type(x)((k, strip_composites(v)) for k, v in x.items())
    if _is_namedtuple(x):
        return type(x)(*[strip_composites(v) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(strip_composites(v) for v in x)
    return x


def composite_statics(x):
    """The static halves of ``x``'s composites, in order (two structures whose composites differ in
    spec cannot share a graph)."""
    out = []

    def walk(v):
        if _is_composite(v):
            out.append((type(v), v._tf_static()))
        elif isinstance(v, dict):
            for k in v:
                walk(v[k])
        elif isinstance(v, (list, tuple)):
            for e in v:
                walk(e)
    walk(x)
    return out


def restore_composites(template, x):
    """The inverse of strip_composites: ``x`` (stripped) with each composite of ``template`` rebuilt
    from the components at its place."""
    if _is_composite(template):
        return type(template)._tf_from_components(template._tf_static(), tuple(x))
    if isinstance(template, dict):
        return type(x)((k, restore_composites(template[k], v)) for k, v in x.items())
    if _is_namedtuple(template):
        return type(x)(*[restore_composites(t, v) for t, v in zip(template, x)])
    if isinstance(template, (list, tuple)):
        return type(x)(restore_composites(t, v) for t, v in zip(template, x))
    return x


def has_composites(x):
    return any(_is_composite(v) for v in flatten(x))
