"""``tf.lookup``: hash tables from keys to values (TF 2.21's API and errors).

* ``StaticHashTable`` / ``StaticVocabularyTable``: immutable once built from an initializer
  (``KeyValueTensorInitializer``, ``TextFileInitializer``). A lookup is one ``string_map``
  equation (core/primitives/strings.py) whose per-element function is a table object hashable
  by its contents (``_StaticLookup``, ``_VocabLookup``): the mechanism of Keras' lookup layers
  (keras/layers/lookup.py), so eager and traced lookups agree, and a lookup of known keys folds
  while tracing like any pure op on constants. ``StaticVocabularyTable``'s out-of-vocabulary
  bucket is TF's: ``size + Fingerprint64(as_string(key)) % num_oov_buckets`` (util/farmhash.py,
  the hash of ``tf.strings.to_hash_bucket_fast``); as TF, a vocabulary value equal to -1 (the
  inner table's default) counts as missing.
* ``experimental.MutableHashTable`` / ``DenseHashTable``: contents that change at run time, so
  every operation is a ``py_call`` (effect "io": never folded, merged or dropped, run in program
  order inside ``tapeflow.function``); the contents are a Python dict in insertion order, and a
  ``tf.train.Checkpoint`` saves them as TF names them (``<path>/.ATTRIBUTES/table-keys`` and
  ``table-values``). Static tables save nothing: they are rebuilt from their initializer, as TF.
  In a SavedModel a static table's lookup function is saved with its entries (its
  ``_serial_state``, core/serializable.py); a mutable table's ``py_call`` is refused (its
  ``_unserializable_reason``): its entries are Python state that changes at run time.

Key/value dtypes are the ones TF's kernels are registered for (a float key is TF's
NotFoundError); errors keep TF's classes and messages (duplicate keys, empty initializers,
missing files, wrong key dtypes).
"""
from __future__ import annotations

import os

import numpy as np

from .core import dtypes as _dt
from .core.aval import Aval
from .core.primitive import aval_of, bind
from .core.primitives.pycall import py_call_p
from .core.primitives.strings import ByContents, string_map_p
from .core.serializable import serializable
from .core.tensor import Tensor, convert_to_tensor
from .errors import FailedPreconditionError, InvalidArgumentError, NotFoundError, OutOfRangeError

__all__ = ["KeyValueTensorInitializer", "TextFileInitializer", "TextFileIndex", "StaticHashTable",
           "StaticVocabularyTable", "experimental"]

_OBJ = np.dtype(object)
_I64 = np.dtype(np.int64)

# TF 2.21: the (key, value) dtypes its kernels are registered for (the NotFoundError lists them)
_HASH_TABLE_DTYPES = {("int32", "float64"), ("int32", "float32"), ("int32", "int32"), ("int32", "string"),
                      ("int64", "float64"), ("int64", "float32"), ("int64", "int32"), ("int64", "int64"),
                      ("int64", "string"), ("string", "bool"), ("string", "float64"), ("string", "float32"),
                      ("string", "int32"), ("string", "int64"), ("string", "string")}
_MUTABLE_TABLE_DTYPES = {("int32", "float64"), ("int32", "float32"), ("int32", "int32"), ("int64", "float64"),
                         ("int64", "float32"), ("int64", "int32"), ("int64", "int64"), ("int64", "string"),
                         ("string", "bool"), ("string", "float64"), ("string", "float32"), ("string", "int32"),
                         ("string", "int64")}


def _npd(dt):
    """A dtype (tapeflow's, NumPy's, a name) as a NumPy dtype (object for strings)."""
    return _dt.as_dtype(dt).np


def _name(dt):
    return "string" if _npd(dt) == _OBJ else _npd(dt).name


def _check_kernel(kind, table, key_dtype, value_dtype):
    if (_name(key_dtype), _name(value_dtype)) not in table:
        raise NotFoundError(
            f"{kind}: no kernel for key_dtype={_name(key_dtype)}, value_dtype={_name(value_dtype)}; TF registers "
            "it for: " + ", ".join(f"{k}->{v}" for k, v in sorted(table)))


def _py(a):
    """A NumPy element -> the Python value a dict keys on (bytes, int, float, bool)."""
    return a.item() if isinstance(a, np.generic) else a


def _shown(k):
    return k.decode("utf-8", "replace") if isinstance(k, bytes) else k


def _concrete(what, x):
    """An initializer's keys/values must be known values (TF builds them in an init scope)."""
    from .ir.tracer import Tracer
    if isinstance(x, Tracer):
        raise ValueError(f"{what}: the keys and values of a table initializer must be known values, not a "
                         "traced tensor; build the table outside tapeflow.function (as a module attribute) "
                         "and look it up inside")
    return x


def _keys_arg(table, keys):
    """The keys of a lookup as a tensor (or a Ragged/SparseTensor, whose values are looked up).
    TF requires a tensor here (a Python list is an AttributeError in TF); tapeflow converts one.
    The dtype must be the table's: TF's TypeError."""
    from .sparse import SparseTensor
    from .ragged.ragged_tensor import RaggedTensor
    if isinstance(keys, (SparseTensor, RaggedTensor)):
        dt = _npd(keys.values.dtype if isinstance(keys, SparseTensor) else keys.flat_values.dtype)
    else:
        if not isinstance(keys, Tensor):
            keys = convert_to_tensor(keys, dtype=table._key_dtype)
        dt = aval_of(keys).dtype
    if dt != _npd(table._key_dtype):
        raise TypeError(f"Dtype of argument `keys` must be {_dt.as_dtype(table._key_dtype)}, "
                        f"received: {_dt.as_dtype(dt)}")
    return keys


def _map_values(keys, f):
    """``f`` on a dense tensor of keys; on a SparseTensor's/RaggedTensor's values (TF's rule)."""
    from .sparse import SparseTensor
    from .ragged.ragged_tensor import RaggedTensor
    if isinstance(keys, SparseTensor):
        return SparseTensor(keys.indices, f(keys.values), keys.dense_shape)
    if isinstance(keys, RaggedTensor):
        return keys.with_flat_values(f(keys.flat_values))
    return f(keys)


# -- initializers --------------------------------------------------------------------------------

class _KeyValueDtypes:
    """``key_dtype`` and ``value_dtype``, as TF's tables and their initializers both have them."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = _dt.as_dtype(key_dtype)
        self._value_dtype = _dt.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype


class TableInitializerBase(_KeyValueDtypes):
    """What a static table is built from: ``key_dtype``, ``value_dtype`` and ``_load()``, which
    gives the (keys, values) NumPy arrays."""

    def _load(self):
        raise NotImplementedError


class KeyValueTensorInitializer(TableInitializerBase):
    """The table's entries from ``keys`` and ``values`` tensors (or Python lists, converted
    with ``key_dtype`` / ``value_dtype``)."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        self._keys = convert_to_tensor(_concrete("KeyValueTensorInitializer", keys), dtype=key_dtype)
        self._values = convert_to_tensor(_concrete("KeyValueTensorInitializer", values), dtype=value_dtype)
        self._name = name if name is not None else "key_value_init"
        super().__init__(aval_of(self._keys).dtype, aval_of(self._values).dtype)

    def _load(self):
        k, v = np.asarray(self._keys.numpy()), np.asarray(self._values.numpy())
        if k.shape != v.shape[:k.ndim] or (v.ndim != k.ndim):
            # TF 2.21: InvalidArgumentError "Expected shape [2] for value, got [3]"
            raise InvalidArgumentError(f"Expected shape {list(k.shape)} for value, got {list(v.shape)}")
        if k.size == 0:
            raise InvalidArgumentError("keys and values cannot be empty tensors.")
        return k.reshape(-1), v.reshape(-1)


class TextFileIndex:
    """What a line gives a ``TextFileInitializer``: ``WHOLE_LINE`` (-2), ``LINE_NUMBER`` (-1),
    or a column index >= 0 of the line split on the delimiter."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


class TextFileInitializer(TableInitializerBase):
    """The table's entries from a text file, one per line (TF's InitializeTableFromTextFile:
    the file is read when the table is built)."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index, vocab_size=None,
                 delimiter="\t", name=None, value_index_offset=0):
        if isinstance(filename, Tensor):
            filename = filename.numpy()
        if isinstance(filename, bytes):
            filename = filename.decode("utf-8")
        if not filename:
            raise ValueError("`filename` argument required for tf.lookup.TextFileInitializer")
        key_dtype, value_dtype = _dt.as_dtype(key_dtype), _dt.as_dtype(value_dtype)
        kd, vd = _npd(key_dtype), _npd(value_dtype)
        # TF 2.21's checks, messages verbatim
        if key_index < -2:
            raise ValueError(f"`key_index` should be >= -2, received: {key_index}.")
        if key_index == TextFileIndex.LINE_NUMBER and kd != _I64:
            raise ValueError(f"`key_dtype` must be int64 if `key_index` is {TextFileIndex.LINE_NUMBER}, "
                             f"received: {key_dtype}")
        if key_index == TextFileIndex.WHOLE_LINE and kd.kind not in "iu" and kd != _OBJ:
            raise ValueError("`key_dtype` should be either integer or string for `key_index` "
                             f"{TextFileIndex.WHOLE_LINE}, received: {key_dtype}")
        if value_index < -2:
            raise ValueError(f"`value_index` should be >= -2, received: {value_index}")
        if value_index == TextFileIndex.LINE_NUMBER and vd != _I64:
            raise ValueError(f"`value_dtype` must be int64 for `value_index` {TextFileIndex.LINE_NUMBER}, "
                             f"received: {value_dtype}")
        if value_index == TextFileIndex.WHOLE_LINE and vd.kind not in "iu" and vd != _OBJ:
            raise ValueError("`value_dtype` should be either integer or string for `value_index` "
                             f"{TextFileIndex.WHOLE_LINE}, received: {value_dtype}")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received: {vocab_size}")
        self._filename = os.fspath(filename)
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size, self._delimiter, self._offset = vocab_size, delimiter, value_index_offset
        self._name = name
        super().__init__(key_dtype, value_dtype)

    def _field(self, line, n, index, dtype, fields):
        if index == TextFileIndex.LINE_NUMBER:
            return n
        text = line if index == TextFileIndex.WHOLE_LINE else fields[index]
        if dtype == _OBJ:
            return text
        try:
            if dtype.kind in "iu":
                v = int(text)
                if not np.iinfo(dtype).min <= v <= np.iinfo(dtype).max:
                    raise ValueError
                return v
            return float(text)
        except ValueError:
            raise InvalidArgumentError(f"Field {text.decode('utf-8', 'replace')} in line {n} is not a valid "
                                       f"{_name(dtype)}.") from None

    def _load(self):
        path = self._filename
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise NotFoundError(f"{path}; No such file or directory") from None
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in lines]   # TF strips a CR (TF 2.21)
        if self._vocab_size is not None:
            if len(lines) < self._vocab_size:
                raise InvalidArgumentError(f"Invalid vocab_size in {path}: expected {self._vocab_size} but got "
                                           f"{len(lines)}")
            lines = lines[:self._vocab_size]
        kd, vd = _npd(self._key_dtype), _npd(self._value_dtype)
        need = max(self._key_index, self._value_index) + 1
        delim = self._delimiter.encode() if isinstance(self._delimiter, str) else self._delimiter
        keys, values = [], []
        for n, line in enumerate(lines):
            if not line:
                # TF 2.21: "empty line found at position 3" (the byte offset after the empty line)
                pos = sum(len(x) + 1 for x in lines[:n]) + 1
                raise InvalidArgumentError(f"Invalid content in {path}: empty line found at position {pos}.")
            fields = line.split(delim) if need > 0 else None
            if need > 0 and len(fields) < need:
                raise InvalidArgumentError(f"Invalid number of columns in {path} line {n} "
                                           f"({line.decode('utf-8', 'replace')}) : expected at least {need} got "
                                           f"{len(fields)}")
            keys.append(self._field(line, n, self._key_index, kd, fields))
            v = self._field(line, n, self._value_index, vd, fields)
            if self._offset and self._value_index == TextFileIndex.LINE_NUMBER:
                v += self._offset
            values.append(v)
        return _array(keys, kd), _array(values, vd)


class DatasetInitializer(TableInitializerBase):
    """``tf.data.experimental.DatasetInitializer``: the table's entries from a dataset of
    (key, value) scalar pairs, read when the table is built (TF 2.21's checks and messages)."""

    def __init__(self, dataset):
        spec = dataset.element_spec
        pre = ("Datasets used to initialize lookup tables must produce elements in the form (key, value), where "
               "the keys and values are scalar tensors. However, the given dataset produces ")
        if len(spec) != 2:
            raise ValueError(f"{pre}{len(spec)} components instead of two (key, value) components. Full dataset "
                             f"element spec: {spec}.")
        for what, s in (("key", spec[0]), ("value", spec[1])):
            rank = len(s.shape)
            if rank != 0:
                raise ValueError(f"{pre}non-scalar {what} Tensors of rank {rank}.")
        self._dataset = dataset
        self._expected = None       # table_from_dataset's vocab_size: the count TF asserts
        super().__init__(spec[0].dtype, spec[1].dtype)

    def _load(self):
        keys, values = [], []
        for k, v in self._dataset.as_numpy_iterator():
            keys.append(k)
            values.append(v)
        if self._expected is not None and len(keys) < self._expected:
            raise FailedPreconditionError(f"Input dataset was expected to contain {self._expected} elements but "
                                          f"contained only {len(keys)} elements.")
        if not keys:
            raise OutOfRangeError("end of iterator")    # TF 2.21's message for an empty dataset
        return _array(keys, _npd(self._key_dtype)), _array(values, _npd(self._value_dtype))


def table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None, default_value=None, hasher_spec=None,
                       key_dtype=_dt.string, name=None):
    """``tf.data.experimental.table_from_dataset``: a StaticHashTable of a dataset's (key, value)
    pairs (its first ``vocab_size``), or with ``num_oov_buckets`` a vocabulary table whose other keys
    hash into buckets after its values (TF's IdTableWithHashBuckets: the FarmHash buckets of
    StaticVocabularyTable)."""
    _fast_hash_only(hasher_spec)
    init = DatasetInitializer(dataset if vocab_size is None else dataset.take(vocab_size))
    init._expected = vocab_size
    if num_oov_buckets:
        lookup_dtype = key_dtype if _npd(key_dtype).kind in "iu" and _npd(init.key_dtype).kind in "iu" else None
        return StaticVocabularyTable(init, num_oov_buckets, lookup_key_dtype=lookup_dtype, name=name)
    # TF 2.21 builds the table with default_value None: its lookups give -1 for a missing key
    return StaticHashTable(init, -1 if default_value is None else default_value, name=name)


def index_table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None, default_value=-1,
                             hasher_spec=None, key_dtype=_dt.string, name=None):
    """``tf.data.experimental.index_table_from_dataset``: each key of a dataset of keys -> its
    position (int64), as ``table_from_dataset`` of ``dataset.enumerate()`` swapped."""
    return table_from_dataset(dataset.enumerate().map(lambda i, k: (k, i)), num_oov_buckets, vocab_size,
                              default_value, hasher_spec, key_dtype, name)


def _fast_hash_only(hasher_spec):
    if hasher_spec is not None and getattr(hasher_spec, "hasher", None) != "fasthash":
        raise NotImplementedError("table_from_dataset: tapeflow hashes out-of-vocabulary keys with TF's "
                                  "FastHashSpec (FarmHash) only; pass hasher_spec=None")


def _array(items, dtype):
    a = np.empty(len(items), dtype)
    a[:] = items
    return a


# -- static tables -------------------------------------------------------------------------------

def _build_dict(keys, values):
    """{key: value} of an initializer's arrays; a key given twice with different values is TF's
    FailedPreconditionError (the same value twice is accepted, as TF)."""
    table = {}
    for k, v in zip(keys.tolist(), values.tolist()):
        old = table.setdefault(k, v)
        if old != v and not (old != old and v != v):
            raise FailedPreconditionError(f"HashTable has different value for same key. Key {_shown(k)} has "
                                          f"{_shown(old)} and trying to add value {_shown(v)}")
    return table


@serializable("lookup.static_hash_table")
class _StaticLookup(ByContents):
    """key -> value or the default: string_map's per-element function, hashable by contents."""

    __name__ = "table_lookup"

    def __init__(self, table, default):
        self.table, self.default = table, default
        self._keyed((tuple((k, _nan_key(v)) for k, v in table.items()), _nan_key(default)))

    def __call__(self, x):
        return self.table.get(_py(x), self.default)

    def map_list(self, items):
        get, d = self.table.get, self.default
        return [get(x, d) for x in items]

    def __repr__(self):
        return f"table_lookup({len(self.table)} keys)"

    # a SavedModel holds the entries (TF restores a static table from its initializer's
    # saved keys and values, or its vocabulary asset: the same entries)
    def _serial_state(self):
        return [list(self.table), list(self.table.values()), self.default]

    @classmethod
    def _from_serial_state(cls, state):
        keys, values, default = state
        return cls(dict(zip(keys, values, strict=True)), default)


@serializable("lookup.static_vocabulary_table")
class _VocabLookup(ByContents):
    """StaticVocabularyTable's key -> id: the vocabulary's id, else ``size`` + the key's OOV
    bucket (FarmHash Fingerprint64 of its text, TF's string_to_hash_bucket_fast of as_string)."""

    __name__ = "vocab_table_lookup"

    def __init__(self, table, num_oov_buckets):
        self.table, self.n = table, num_oov_buckets
        self.size = len(table)
        self._keyed((tuple(table.items()), num_oov_buckets))

    def _bucket(self, x):
        from .util.farmhash import fingerprint64
        s = x if isinstance(x, bytes) else str(int(x)).encode()
        return self.size + fingerprint64(s) % self.n

    def __call__(self, x):
        i = self.table.get(_py(x), -1)
        # TF compares the inner table's result with its default (-1): a vocabulary id of -1 is OOV
        return i if i != -1 else self._bucket(x)

    def map_list(self, items):
        get, bucket = self.table.get, self._bucket
        return [i if (i := get(x, -1)) != -1 else bucket(x) for x in items]

    def __repr__(self):
        return f"vocab_table_lookup({self.size} keys, {self.n} oov buckets)"

    def _serial_state(self):
        return [list(self.table), list(self.table.values()), self.n]

    @classmethod
    def _from_serial_state(cls, state):
        keys, values, n = state
        return cls(dict(zip(keys, values, strict=True)), int(n))


def _nan_key(v):
    """A value as a table's identity holds it: NaN as one marker (nan != nan, and its hash is
    by object), so a table rebuilt from a SavedModel equals the saved one."""
    return ("nan",) if isinstance(v, float) and v != v else v


class LookupInterface(_KeyValueDtypes):
    """What every table has: its dtypes, ``name``, ``size``, ``lookup`` and ``table[keys]``."""

    @property
    def name(self):
        return self._table_name

    def __getitem__(self, keys):
        return self.lookup(keys)


class StaticHashTable(LookupInterface):
    """An immutable table built from an initializer; missing keys give ``default_value``."""

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        if not isinstance(initializer, TableInitializerBase):
            raise TypeError(f"StaticHashTable: initializer must be a tf.lookup initializer "
                            f"(KeyValueTensorInitializer, TextFileInitializer), got {type(initializer).__name__}")
        super().__init__(initializer.key_dtype, initializer.value_dtype)
        self._initializer = initializer
        self._default_value = convert_to_tensor(_concrete("StaticHashTable", default_value),
                                                dtype=self._value_dtype)
        if aval_of(self._default_value).shape != ():
            raise ValueError(f"Shapes {tuple(aval_of(self._default_value).shape)} and () are not compatible")
        _check_kernel("HashTableV2", _HASH_TABLE_DTYPES, self._key_dtype, self._value_dtype)
        self._table_name = None      # TF: None for a table made eagerly
        self._name = name or "hash_table"
        keys, values = initializer._load()
        self._keys, self._values = keys, values
        self._dict = _build_dict(keys, values)
        self._fn = _StaticLookup(self._dict, _py(np.asarray(self._default_value.numpy())[()]))

    @property
    def default_value(self):
        return self._default_value

    def size(self, name=None):
        return convert_to_tensor(np.int64(len(self._dict)))

    def lookup(self, keys, name=None):
        """The values of ``keys`` (any shape; a SparseTensor's or RaggedTensor's values)."""
        keys = _keys_arg(self, keys)
        out = _npd(self._value_dtype)
        return _map_values(keys, lambda k: bind(string_map_p, k, fn=self._fn, args=(), out=out))

    def export(self, name=None):
        """(keys, values) tensors of the table's entries (in the initializer's order; TF's order
        is its hash table's)."""
        ks = list(self._dict)
        return (convert_to_tensor(_array(ks, _npd(self._key_dtype))),
                convert_to_tensor(_array([self._dict[k] for k in ks], _npd(self._value_dtype))))

    def __repr__(self):
        return f"<tapeflow.lookup.StaticHashTable {_name(self._key_dtype)}->{_name(self._value_dtype)}, " \
               f"{len(self._dict)} entries>"


class StaticVocabularyTable(LookupInterface):
    """Keys -> int64 ids: a vocabulary's ids, and ``num_oov_buckets`` hash buckets after them
    for the other keys (``size + Fingerprint64(key) % num_oov_buckets``)."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        if initializer is not None:
            lookup_key_dtype = _dt.as_dtype(initializer.key_dtype if lookup_key_dtype is None
                                            else lookup_key_dtype)
            kd = _npd(initializer.key_dtype)
            if kd not in (_I64, _OBJ):
                raise TypeError(f"Invalid `key_dtype`, expected one of (tf.int64, tf.string), but got "
                                f"{initializer.key_dtype}.")
            if (kd.kind in "iu") != (_npd(lookup_key_dtype).kind in "iu"):
                raise TypeError("Invalid `key_dtype`, expected %s but got %s." % (
                    "integer" if _npd(lookup_key_dtype).kind in "iu" else "non-integer", initializer.key_dtype))
            if _npd(initializer.value_dtype) != _I64:
                raise TypeError(f"Invalid `value_dtype`, expected {_dt.int64} but got "
                                f"{initializer.value_dtype}.")
            self._table = StaticHashTable(initializer, default_value=-1)
            self._initializer = initializer
            table = self._table._dict
        else:
            lookup_key_dtype = _dt.string
            self._table = None
            table = {}
        if _npd(lookup_key_dtype).kind not in "iu" and _npd(lookup_key_dtype) != _OBJ:
            raise TypeError(f"Invalid `key_dtype`, expected integer or string, got {lookup_key_dtype}")
        self._num_oov_buckets = int(num_oov_buckets)
        self._table_name = name.rstrip("/").split("/")[-1] if name else None
        super().__init__(lookup_key_dtype, _dt.int64)
        self._fn = _VocabLookup(table, self._num_oov_buckets)

    def size(self, name=None):
        return convert_to_tensor(np.int64(self._fn.size + self._num_oov_buckets))

    def lookup(self, keys, name=None):
        keys = _keys_arg(self, keys)
        cast = self._table is not None and _npd(self._table.key_dtype) == _I64 and \
            _npd(self._key_dtype) != _I64

        def look(k):
            if cast:
                from .ops.math_ops import cast as _cast
                k = _cast(k, _I64)
            return bind(string_map_p, k, fn=self._fn, args=(), out=_I64)
        return _map_values(keys, look)

    def __repr__(self):
        return f"<tapeflow.lookup.StaticVocabularyTable {self._fn.size} keys + {self._num_oov_buckets} oov buckets>"


# -- mutable tables ------------------------------------------------------------------------------

class _Call:
    """One operation of a mutable table as a py_call function: hashable by (table, op), so the
    compiled code's params compare equal across traces of the same table."""

    def __init__(self, table, op):
        self.table, self.op = table, op
        self.__name__ = f"{type(table).__name__}.{op}"
        # why a SavedModel refuses it (serialize.py's message): the entries change at run time
        self._unserializable_reason = (
            f"a {type(table).__name__}'s {op!r} cannot be saved in a SavedModel by tapeflow (TF saves the "
            "table as a resource with its entries): its entries change at run time and tapeflow keeps them "
            "in Python. Save the entries with tf.train.Checkpoint, or use a StaticHashTable built from "
            "table.export() in the saved function")

    def __call__(self, *values):
        return getattr(self.table, "_" + self.op)(*values)

    def __eq__(self, other):
        return type(other) is _Call and other.table is self.table and other.op == self.op

    def __hash__(self):
        return hash((id(self.table), self.op))

    def __repr__(self):
        return self.__name__


class MutableHashTable(LookupInterface):
    """A table whose entries change: ``insert``, ``remove``, ``lookup``, ``export``, ``size``.
    Values may be vectors (a default value of shape (n,) gives values of shape (n,)). Saved by a
    ``tf.train.Checkpoint`` when ``checkpoint=True`` (TF's default)."""

    _kernel = "MutableHashTableV2"

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable", checkpoint=True,
                 experimental_is_anonymous=False):
        key_dtype, value_dtype = _dt.as_dtype(key_dtype), _dt.as_dtype(value_dtype)
        self._default_value = convert_to_tensor(_concrete(type(self).__name__, default_value), dtype=value_dtype)
        super().__init__(key_dtype, value_dtype)
        _check_kernel(self._kernel, _MUTABLE_TABLE_DTYPES, key_dtype, value_dtype)
        self._value_shape = tuple(aval_of(self._default_value).shape)
        self._default_np = np.asarray(self._default_value.numpy())
        self._checkpoint = bool(checkpoint)
        self._name = name
        self._table_name = None
        self._dict = {}

    @property
    def default_value(self):
        return self._default_value

    def _call(self, op, inputs, out_avals):
        return bind(py_call_p, *inputs, fn=_Call(self, op), out_avals=tuple(out_avals),
                    name=f"{type(self).__name__}.{op}")

    def _converted(self, what, x, dtype):
        """TF converts keys/values to the table's dtypes: a tensor of another dtype is its
        ValueError 'Tensor conversion requested dtype ...'."""
        if isinstance(x, Tensor):
            have = aval_of(x).dtype
            if have != _npd(dtype):
                raise ValueError(f"{what}: Tensor conversion requested dtype {_name(dtype)} for Tensor with dtype "
                                 f"{_name(have)}")
            return x
        return convert_to_tensor(x, dtype=dtype)

    # -- the operations (through py_call) --------------------------------------------------------
    def size(self, name=None):
        return self._call("size", (), [Aval((), _I64)])[0]

    def lookup(self, keys, dynamic_default_values=None, name=None):
        """The values of ``keys``; missing keys give the default value (or, with
        ``dynamic_default_values``, the default given for that key)."""
        keys = self._converted("keys", keys, self._key_dtype)
        shape = tuple(aval_of(keys).shape) + self._value_shape
        inputs = (keys,)
        if dynamic_default_values is not None:
            inputs += (self._converted("dynamic_default_values", dynamic_default_values, self._value_dtype),)
        return self._call("lookup", inputs, [Aval(shape, _npd(self._value_dtype))])[0]

    def insert(self, keys, values, name=None):
        """Sets ``table[k] = v`` for each key (a key given twice: the last value wins, as TF)."""
        keys = self._converted("keys", keys, self._key_dtype)
        values = self._converted("values", values, self._value_dtype)
        self._call("insert", (keys, values), [])

    def remove(self, keys, name=None):
        """Removes ``keys`` (missing ones are ignored)."""
        if not isinstance(keys, Tensor):
            raise AttributeError(f"'{type(keys).__name__}' object has no attribute 'dtype'")   # TF 2.21
        if aval_of(keys).dtype != _npd(self._key_dtype):
            raise TypeError(f"Dtype of argument `keys` must be {self._key_dtype}, received: "
                            f"{_dt.as_dtype(aval_of(keys).dtype)}")
        self._call("remove", (keys,), [])

    def export(self, name=None):
        """(keys, values): the entries in insertion order (TF's order is its hash table's)."""
        return tuple(self._call("export", (), [Aval((None,), _npd(self._key_dtype)),
                                               Aval((None,) + self._value_shape, _npd(self._value_dtype))]))

    # -- their kernels (NumPy values in, NumPy values out) -----------------------------------------
    def _check_values(self, k, v):
        want = k.shape + self._value_shape
        if v.shape != want:
            raise InvalidArgumentError(f"Expected shape {list(want)} for value, got {list(v.shape)}")

    def _size(self):
        return np.int64(len(self._dict))

    def _lookup(self, k, dflt=None):
        k = np.asarray(k)
        shape = k.shape + self._value_shape
        if dflt is not None:
            dflt = np.asarray(dflt)
            if dflt.shape not in (self._value_shape, shape):
                raise InvalidArgumentError(f"dynamic_default_values must have the shape of default_value "
                                           f"{list(self._value_shape)} or of the result {list(shape)}, got "
                                           f"{list(dflt.shape)}")
        out = np.empty(shape, _npd(self._value_dtype))
        flat = out.reshape((-1,) + self._value_shape)
        get, d = self._dict.get, self._default_np
        per_key = dflt is not None and dflt.shape == shape
        dflat = dflt.reshape((-1,) + self._value_shape) if per_key else None
        for i, key in enumerate(k.reshape(-1).tolist()):
            v = get(key)
            flat[i] = v if v is not None else (dflat[i] if per_key else (dflt if dflt is not None else d))
        return out

    def _insert(self, k, v):
        k, v = np.asarray(k), np.asarray(v)
        self._check_values(k, v)
        vals = v.reshape((-1,) + self._value_shape)
        for i, key in enumerate(k.reshape(-1).tolist()):
            self._dict[key] = vals[i].copy() if self._value_shape else _py(vals[i])
        return ()

    def _remove(self, k):
        for key in np.asarray(k).reshape(-1).tolist():
            self._dict.pop(key, None)
        return ()

    def _export(self):
        ks = list(self._dict)
        vals = np.empty((len(ks),) + self._value_shape, _npd(self._value_dtype))
        for i, key in enumerate(ks):
            vals[i] = self._dict[key]
        return _array(ks, _npd(self._key_dtype)), vals

    # -- checkpoints: TF's keys <path>/.ATTRIBUTES/table-keys, table-values ----------------------
    def _walk_children(self):
        # the one children protocol (module._children): a table holds no variables, but having the
        # hook makes the checkpoint walk report it, so trackable.collect finds its tensors
        return []

    def _checkpoint_tensors(self):
        if not self._checkpoint:
            return {}
        keys, values = self._export()
        return {"table-keys": keys, "table-values": values}

    def _restore_tensors(self, tensors):
        """Imports the saved entries: they replace the table's contents (TF 2.21's
        LookupTableImport on a mutable table clears it first)."""
        keys, values = tensors.get("table-keys"), tensors.get("table-values")
        if keys is None or values is None:
            return
        self._dict.clear()
        self._insert(np.asarray(keys, _npd(self._key_dtype)) if _npd(self._key_dtype) != _OBJ
                     else keys, np.asarray(values).astype(_npd(self._value_dtype), copy=False))

    def __repr__(self):
        return f"<tapeflow.lookup.experimental.{type(self).__name__} {_name(self._key_dtype)}->" \
               f"{_name(self._value_dtype)}, {len(self._dict)} entries>"


class DenseHashTable(MutableHashTable):
    """TF's open-addressing table, with its API (``empty_key``/``deleted_key`` may not be
    inserted; ``insert_or_assign``, ``erase``). tapeflow keeps a dict: ``export`` gives the
    entries, not TF's bucket array (whose size and layout are an implementation detail)."""

    _kernel = "MutableDenseHashTableV2"

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key, initial_num_buckets=None,
                 name="MutableDenseHashTable", checkpoint=True, experimental_is_anonymous=False):
        super().__init__(key_dtype, value_dtype, default_value, name=name, checkpoint=checkpoint)
        self._empty_key = convert_to_tensor(empty_key, dtype=self._key_dtype)
        self._deleted_key = convert_to_tensor(deleted_key, dtype=self._key_dtype)
        e, d = _py(np.asarray(self._empty_key.numpy())[()]), _py(np.asarray(self._deleted_key.numpy())[()])
        if e == d:
            raise InvalidArgumentError("Empty and deleted keys must have different values")
        self._special = (e, d)

    def _check_keys(self, k, verb):
        for key in np.asarray(k).reshape(-1).tolist():
            if key == self._special[0]:
                raise InvalidArgumentError(f"Using the empty_key as a table key is not allowed")
            if key == self._special[1]:
                raise InvalidArgumentError(f"Using the deleted_key as a table key is not allowed")

    def _insert(self, k, v):
        self._check_keys(k, "insert")
        return super()._insert(k, v)

    def _remove(self, k):
        self._check_keys(k, "erase")
        return super()._remove(k)

    def insert_or_assign(self, keys, values, name=None):
        return self.insert(keys, values, name)

    def erase(self, keys, name=None):
        keys = self._converted("keys", keys, self._key_dtype)
        self._call("remove", (keys,), [])

    remove = erase


class _Experimental:
    """``tf.lookup.experimental``."""
    MutableHashTable = MutableHashTable
    DenseHashTable = DenseHashTable

    def __repr__(self):
        return "<module 'tapeflow.lookup.experimental'>"


experimental = _Experimental()
