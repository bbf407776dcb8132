"""String primitives: the three shapes a tf.strings op takes, each with its per-element
function as a parameter (a module-level function of ``tapeflow/strings.py``, static and
hashable like an axis, printed by name in the IR, saved in a SavedModel by the name it
registered with ``core/serializable.py``).

* ``string_map(*xs, fn, args, out)``: elementwise with broadcasting; ``fn(*elements, *args)``
  gives one element of dtype ``out`` (length, substr, lower, regex_replace, to_number,
  as_string, join, hashes; Keras' lookup tables, over integer operands too). A function with a
  ``map_list(items)`` method (one operand, no args) maps the flat list in one call.
* ``string_split(x, fn, out)``: every element of a 1-D ``x`` becomes a list of items (split,
  bytes_split, unicode_split/decode): the results are (values, row_splits), a ragged tensor's
  parts; the number of values depends on the data (an unknown dim when traced, as unique's).
* ``string_join_rows(values, row_splits, fn, out)``: each row of a ragged tensor folds into one
  element (reduce_join, unicode_encode).

Three primitives, not one per TF op: TF's ops differ only in the per-element function, and
every fact of the record (no gradient, no aliasing, the shapes) is the same for each. None is
differentiable (TF registers no gradient for string ops), none fuses (object arrays: the numba
backend has no form for them, so it declines the graph, and the python backend runs the kernels).
"""
from __future__ import annotations

import numpy as np

from . import _rules
from ..aval import Aval, fmt_shape
from ..primitive import Primitive
from ...errors import InvalidArgumentError, InvalidArgumentTypeError


class ByContents:
    """A per-element function object that is a primitive's ``fn`` param (a lookup table): equal to
    another of its class with the same contents, ``_key``, so traces and eager's rule cache treat two
    tables of the same entries as one param. The hash is taken once (``_keyed``): a key holds every
    entry, and the param is hashed at each call."""

    def _keyed(self, key):
        self._key, self._hash = key, hash(key)

    def __eq__(self, other):
        return type(other) is type(self) and other._hash == self._hash and other._key == self._key

    def __hash__(self):
        return self._hash

_STRING = np.dtype(object)


def _map_kernel(*xs, fn, args, out):
    xs = [np.asarray(x) for x in xs]
    shape = np.broadcast_shapes(*[x.shape for x in xs])
    res = np.empty(shape, out if out is not _STRING else object)
    flat = res.reshape(-1)
    map_list = getattr(fn, "map_list", None)
    if map_list is not None and len(xs) == 1 and not args:
        # a per-element function that maps a whole list (the Keras lookup tables: one dict
        # comprehension, ~20x faster than a call per element on 100k strings)
        flat[:] = map_list(xs[0].reshape(-1).tolist())
        return res
    cols = [np.broadcast_to(x, shape).reshape(-1) for x in xs]
    for i in range(flat.size):
        flat[i] = fn(*[c[i] for c in cols], *args)
    return res


def _map_abstract(*xs, fn, args, out):
    shape = _rules.broadcast_shapes(getattr(fn, "__name__", "string_map"), *[x.shape for x in xs]) \
        if len(xs) > 1 else xs[0].shape
    return Aval(shape, out)


string_map_p = Primitive("string_map", _map_kernel, _map_abstract, differentiable=False, aliases=False,
                         strings=True, doc="fn(*elements, *args) per element (broadcast), dtype out")


def _split_kernel(x, fn, out):
    x = np.asarray(x)
    splits = np.zeros(x.shape[0] + 1, np.int64)
    items = []
    for i, s in enumerate(x):
        row = fn(s)
        items.extend(row)
        splits[i + 1] = splits[i] + len(row)
    if out is _STRING:
        vals = np.empty(len(items), object)
        vals[:] = items
    else:
        vals = np.asarray(items, out).reshape(-1)
    return vals, splits


def _split_abstract(x, fn, out):
    if len(x.shape) != 1:
        raise InvalidArgumentError(f"{fn.__name__}: expects a 1-D string tensor here, got shape "
                                   f"{fmt_shape(x.shape)}")
    if x.dtype != _STRING:
        raise InvalidArgumentTypeError(f"{fn.__name__}: expects a string tensor, got {x.dtype.name}")
    return Aval((None,), out), Aval((None if x.shape[0] is None else x.shape[0] + 1,), np.int64)


string_split_p = Primitive("string_split", _split_kernel, _split_abstract, differentiable=False, aliases=False,
                           multiple_results=True, strings=True,
                           doc="each element of a 1-D x -> fn(element), a list: (values, row_splits)")


def _join_rows_kernel(values, splits, fn, out):
    values = np.asarray(values)
    n = splits.shape[0] - 1
    res = np.empty(n, out if out is not _STRING else object)
    for i in range(n):
        res[i] = fn(values[splits[i]:splits[i + 1]])
    return res


def _join_rows_abstract(values, splits, fn, out):
    if len(splits.shape) != 1 or splits.dtype.kind not in "iu":
        raise InvalidArgumentTypeError(f"{fn.__name__}: row_splits must be a 1-D integer tensor, got "
                                       f"{splits.dtype.name} {fmt_shape(splits.shape)}")
    return Aval((None if splits.shape[0] is None else splits.shape[0] - 1,), out)


string_join_rows_p = Primitive("string_join_rows", _join_rows_kernel, _join_rows_abstract, differentiable=False,
                               aliases=False, strings=True,
                               doc="each row values[splits[i]:splits[i+1]] -> fn(row), one element of dtype out")
