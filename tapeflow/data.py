"""tapeflow.data: a minimal in-memory ``tf.data.Dataset``.

TF2 training loops iterate datasets (``for x, y in ds.shuffle(1000).batch(32)``),
so a port needs the in-memory part of tf.data: datasets made from tensors and
the transformations stacked on them. Each transformation is a small class with
a Python generator; elements are tapeflow Tensors in the nested structure
(tuple, dict, namedtuple) they were given in, exactly as TF yields them.

What differs from TF (see "Differences from TensorFlow" in the README):

* ``map``/``filter`` functions run eagerly, once per element (TF traces them
  into a graph); the element spec of a mapped dataset is read off its first
  element, so ``element_spec`` of a ``map`` costs one call of the function.
* ``shuffle`` uses TF's buffer algorithm (fill ``buffer_size`` elements, emit a
  random one, refill), but its own random stream: a seeded shuffle is
  reproducible within tapeflow, not equal to TF's order.
* File readers (TFRecordDataset, TextLineDataset, FixedLengthRecordDataset,
  list_files) raise NotImplementedError naming the feature.
"""
from __future__ import annotations

import itertools

import numpy as np

from .core.tensor import Tensor, convert_to_tensor
from .util import nest

#: ``tf.data.AUTOTUNE``: accepted wherever TF takes a buffer size or parallelism
AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def _spec_of(element):
    from .compiler.function import TensorSpec
    return nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype), element)


def _as_tensors(structure):
    """Convert a nested structure's leaves to Tensors. A Python list is a leaf
    (converted to one tensor), as in TF; tuples and dicts are structure."""
    if isinstance(structure, dict):
        return type(structure)((k, _as_tensors(v)) for k, v in structure.items())
    if isinstance(structure, tuple):
        vals = [_as_tensors(v) for v in structure]
        return type(structure)(*vals) if hasattr(structure, "_fields") else tuple(vals)
    return structure if isinstance(structure, Tensor) else convert_to_tensor(structure)


def _int_arg(name, value, allow_negative=False):
    v = value.numpy() if isinstance(value, Tensor) else value
    if isinstance(v, np.ndarray):
        v = v.item() if v.shape == () else v
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
        raise TypeError(f"Dataset.{name}: expected a Python int or an integer scalar tensor, got {value!r}")
    v = int(v)
    if v < 0 and not allow_negative:
        raise ValueError(f"Dataset.{name}: expected a non-negative count, got {v}")
    return v


def _apply(fn, element):
    # TF unpacks tuple elements into positional arguments; dicts and tensors are passed whole
    return fn(*element) if isinstance(element, tuple) and not hasattr(element, "_fields") else fn(element)


class Dataset:
    """Base class: subclasses define ``_elements()`` (a fresh generator per
    iteration) and ``_cardinality()``."""

    # -- sources ---------------------------------------------------------------------

    @staticmethod
    def from_tensor_slices(tensors, name=None):
        return _TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors, name=None):
        return _TensorDataset(tensors)

    @staticmethod
    def range(*args, output_type=None, name=None):
        return _RangeDataset(*args, output_type=output_type)

    @staticmethod
    def zip(*datasets, name=None):
        if len(datasets) == 1 and not isinstance(datasets[0], Dataset):
            datasets = datasets[0]  # TF's older form: zip((a, b)) / zip({"x": a})
        return _ZipDataset(datasets)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        return _GeneratorDataset(generator, args or ())

    # -- transformations ---------------------------------------------------------------------

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        return _MapDataset(self, map_func)

    def filter(self, predicate, name=None):
        return _FilterDataset(self, predicate)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        return _BatchDataset(self, _int_arg("batch", batch_size), bool(drop_remainder))

    def unbatch(self, name=None):
        return _UnbatchDataset(self)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        return _ShuffleDataset(self, _int_arg("shuffle", buffer_size, allow_negative=True), seed,
                               reshuffle_each_iteration)

    def repeat(self, count=None, name=None):
        return _RepeatDataset(self, -1 if count is None else _int_arg("repeat", count, allow_negative=True))

    def take(self, count, name=None):
        return _TakeDataset(self, _int_arg("take", count, allow_negative=True))

    def skip(self, count, name=None):
        return _SkipDataset(self, _int_arg("skip", count, allow_negative=True))

    def enumerate(self, start=0, name=None):
        return _ZipDataset((_RangeDataset(start, np.iinfo(np.int64).max), self), kind="_EnumerateDataset")

    def prefetch(self, buffer_size, name=None):
        if _int_arg("prefetch", buffer_size, allow_negative=True) < -1:
            raise ValueError(f"Dataset.prefetch: buffer_size must be >= 0, or -1 (AUTOTUNE), got {buffer_size}")
        return self  # elements are made on demand in this process; nothing to overlap

    def cache(self, filename="", name=None):
        if filename:
            raise NotImplementedError("Dataset.cache(filename): file-backed tf.data is not supported by "
                                      "tapeflow; use cache() (in memory) or no cache")
        return _CacheDataset(self)

    def concatenate(self, dataset, name=None):
        return _ConcatenateDataset(self, dataset)

    # -- consumers --------------------------------------------------------------------------

    def __iter__(self):
        return self._elements()

    def as_numpy_iterator(self):
        for el in self._elements():
            yield nest.map_structure(lambda t: t.numpy(), el)

    def reduce(self, initial_state, reduce_func, name=None):
        state = _as_tensors(initial_state)
        for el in self._elements():
            state = _as_tensors(reduce_func(state, el))
        return state

    def cardinality(self):
        return convert_to_tensor(np.int64(self._cardinality()))

    def __len__(self):
        n = self._cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True  # as TF: a dataset is truthy even when empty (len() would be 0)

    @property
    def element_spec(self):
        return self._spec()

    def _spec(self):
        for el in self._elements():
            return _spec_of(el)
        raise ValueError(f"{type(self).__name__}: the element spec of an empty mapped dataset is unknown")

    def __repr__(self):
        return f"<{getattr(self, '_kind', type(self).__name__)} element_spec={self.element_spec!r}>"


class _TensorSliceDataset(Dataset):
    def __init__(self, tensors):
        self._struct = _as_tensors(tensors)
        flat = nest.flatten(self._struct)
        if not flat:
            raise ValueError("Dataset.from_tensor_slices: got an empty structure")
        for t in flat:
            if t.shape == ():
                raise ValueError(f"Dataset.from_tensor_slices: cannot slice a scalar ({t!r}); every component "
                                 "needs a leading dimension")
        n = flat[0].shape[0]
        for t in flat[1:]:
            if t.shape[0] != n:
                raise ValueError(f"Dimensions {n} and {t.shape[0]} are not compatible")
        self._n = n
        self._arrays = [t.numpy() for t in flat]

    def _elements(self):
        for i in range(self._n):
            yield nest.pack_sequence_as(self._struct, [Tensor(a[i]) for a in self._arrays])

    def _cardinality(self):
        return self._n

    def _spec(self):
        from .compiler.function import TensorSpec
        return nest.map_structure(lambda t: TensorSpec(t.shape[1:], t.dtype), self._struct)


class _TensorDataset(Dataset):
    def __init__(self, tensors):
        self._struct = _as_tensors(tensors)

    def _elements(self):
        yield self._struct

    def _cardinality(self):
        return 1

    def _spec(self):
        return _spec_of(self._struct)


class _RangeDataset(Dataset):
    def __init__(self, *args, output_type=None):
        if not 1 <= len(args) <= 3:
            raise TypeError(f"Dataset.range takes 1 to 3 arguments (start, stop, step), got {len(args)}")
        self._r = range(*[_int_arg("range", a, allow_negative=True) for a in args])
        from .core import dtypes
        self._dtype = np.dtype(dtypes.as_dtype(output_type).np) if output_type is not None else np.dtype(np.int64)

    def _elements(self):
        dt = self._dtype.type
        for i in self._r:
            yield Tensor(dt(i))

    def _cardinality(self):
        return len(self._r)

    def _spec(self):
        from .compiler.function import TensorSpec
        return TensorSpec((), self._dtype)


class _GeneratorDataset(Dataset):
    def __init__(self, generator, args):
        self._gen, self._args = generator, tuple(args)

    def _elements(self):
        for el in self._gen(*self._args):
            yield _as_tensors(el)

    def _cardinality(self):
        return UNKNOWN_CARDINALITY


class _ZipDataset(Dataset):
    def __init__(self, datasets, kind="_ZipDataset"):
        self._datasets = datasets
        self._kind = kind
        for d in nest.flatten(datasets):
            if not isinstance(d, Dataset):
                raise TypeError(f"Dataset.zip: expected datasets, got {type(d).__name__}")

    def _elements(self):
        flat = nest.flatten(self._datasets)
        for els in zip(*[d._elements() for d in flat]):
            yield nest.pack_sequence_as(self._datasets, list(els))

    def _cardinality(self):
        cs = [d._cardinality() for d in nest.flatten(self._datasets)]
        finite = [c for c in cs if c >= 0]
        if finite:
            return min(finite)
        return UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in cs else INFINITE_CARDINALITY

    def _spec(self):
        return nest.pack_sequence_as(self._datasets, [d._spec() for d in nest.flatten(self._datasets)])


class _MapDataset(Dataset):
    def __init__(self, source, fn):
        self._source, self._fn = source, fn

    def _elements(self):
        for el in self._source._elements():
            yield _as_tensors(_apply(self._fn, el))

    def _cardinality(self):
        return self._source._cardinality()


class _FilterDataset(Dataset):
    def __init__(self, source, predicate):
        self._source, self._pred = source, predicate

    def _elements(self):
        for el in self._source._elements():
            keep = _as_tensors(_apply(self._pred, el))
            if keep.dtype.name != "bool" or keep.shape != ():
                raise ValueError(f"Dataset.filter: the predicate must return a scalar bool tensor, got "
                                 f"shape {keep.shape} dtype {keep.dtype.name}")
            if bool(keep.numpy()):
                yield el

    def _cardinality(self):
        c = self._source._cardinality()
        return INFINITE_CARDINALITY if c == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _spec(self):
        return self._source._spec()


def _stack(elements):
    """Stack a list of structurally equal elements along a new first axis."""
    flats = [nest.flatten(e) for e in elements]
    out = []
    for i, parts in enumerate(zip(*flats)):
        shapes = {tuple(p.shape) for p in parts}
        if len(shapes) > 1:
            raise ValueError(f"Dataset.batch: cannot batch component {i} with different shapes "
                             f"{sorted(shapes)}; pad them first (padded_batch is not supported) or map to one shape")
        out.append(Tensor(np.stack([p.numpy() for p in parts])))
    return nest.pack_sequence_as(elements[0], out)


class _BatchDataset(Dataset):
    def __init__(self, source, n, drop_remainder):
        if n <= 0:
            raise ValueError(f"Dataset.batch: batch_size must be positive, got {n}")
        self._source, self._n, self._drop = source, n, drop_remainder

    def _elements(self):
        it = self._source._elements()
        while True:
            chunk = list(itertools.islice(it, self._n))
            if not chunk or (self._drop and len(chunk) < self._n):
                return
            yield _stack(chunk)

    def _cardinality(self):
        c = self._source._cardinality()
        if c < 0:
            return c
        return c // self._n if self._drop else -(-c // self._n)

    def _spec(self):
        from .compiler.function import TensorSpec
        lead = self._n if self._drop else None
        return nest.map_structure(lambda s: TensorSpec((lead,) + tuple(s.shape), s.dtype), self._source._spec())


class _UnbatchDataset(Dataset):
    def __init__(self, source):
        self._source = source

    def _elements(self):
        for el in self._source._elements():
            yield from _TensorSliceDataset(el)._elements()

    def _cardinality(self):
        c = self._source._cardinality()
        return c if c == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _spec(self):
        from .compiler.function import TensorSpec
        return nest.map_structure(lambda s: TensorSpec(tuple(s.shape)[1:], s.dtype), self._source._spec())


class _ShuffleDataset(Dataset):
    def __init__(self, source, buffer_size, seed, reshuffle):
        if buffer_size == 0 or buffer_size < -1:
            raise ValueError(f"Dataset.shuffle: buffer_size must be positive (or AUTOTUNE), got {buffer_size}")
        self._source, self._size, self._reshuffle = source, buffer_size, reshuffle
        # With no seed, draw one now from tapeflow's global RNG, so tf.random.set_seed makes it reproducible
        if seed is None:
            from .ops import random_ops
            seed = int(random_ops.get_global_generator()._gen.integers(0, 2**63 - 1))
        self._seed = int(seed)
        self._epoch = 0

    def _elements(self):
        # Each new iteration reshuffles (TF's default) unless asked not to: the epoch number joins the seed
        rng = np.random.default_rng([self._seed, self._epoch])
        if self._reshuffle:
            self._epoch += 1
        size = self._size if self._size > 0 else 1024
        buf = []
        for el in self._source._elements():
            if len(buf) < size:
                buf.append(el)
                continue
            i = int(rng.integers(len(buf)))
            yield buf[i]
            buf[i] = el
        while buf:
            i = int(rng.integers(len(buf)))
            buf[i], buf[-1] = buf[-1], buf[i]
            yield buf.pop()

    def _cardinality(self):
        return self._source._cardinality()

    def _spec(self):
        return self._source._spec()


class _RepeatDataset(Dataset):
    def __init__(self, source, count):
        self._source, self._count = source, count

    def _elements(self):
        epochs = itertools.count() if self._count < 0 else range(self._count)
        for _ in epochs:
            empty = True
            for el in self._source._elements():
                empty = False
                yield el
            if empty:
                return  # an empty dataset repeated forever is still empty (as TF), not a hang

    def _cardinality(self):
        c = self._source._cardinality()
        if self._count < 0:
            return 0 if c == 0 else INFINITE_CARDINALITY
        return c * self._count if c >= 0 else c

    def _spec(self):
        return self._source._spec()


class _TakeDataset(Dataset):
    def __init__(self, source, count):
        self._source, self._count = source, count

    def _elements(self):
        it = self._source._elements()
        return it if self._count < 0 else itertools.islice(it, self._count)

    def _cardinality(self):
        c = self._source._cardinality()
        if self._count < 0:
            return c
        return self._count if c == INFINITE_CARDINALITY else (min(c, self._count) if c >= 0 else c)

    def _spec(self):
        return self._source._spec()


class _SkipDataset(Dataset):
    def __init__(self, source, count):
        self._source, self._count = source, count

    def _elements(self):
        it = self._source._elements()
        if self._count < 0:  # TF: skip(-1) skips the whole dataset
            for _ in it:
                pass
            return iter(())
        return itertools.islice(it, self._count, None)

    def _cardinality(self):
        c = self._source._cardinality()
        if c < 0:
            return c
        return 0 if self._count < 0 else max(c - self._count, 0)

    def _spec(self):
        return self._source._spec()


class _CacheDataset(Dataset):
    def __init__(self, source):
        self._source, self._cache = source, None

    def _elements(self):
        if self._cache is not None:
            yield from self._cache
            return
        seen = []
        for el in self._source._elements():
            seen.append(el)
            yield el
        self._cache = seen  # only a fully read pass is cached (as TF)

    def _cardinality(self):
        return self._source._cardinality()

    def _spec(self):
        return self._source._spec()


class _ConcatenateDataset(Dataset):
    def __init__(self, a, b):
        self._a, self._b = a, b

    def _elements(self):
        yield from self._a._elements()
        yield from self._b._elements()

    def _cardinality(self):
        ca, cb = self._a._cardinality(), self._b._cardinality()
        if INFINITE_CARDINALITY in (ca, cb):
            return INFINITE_CARDINALITY
        return ca + cb if ca >= 0 and cb >= 0 else UNKNOWN_CARDINALITY

    def _spec(self):
        return self._a._spec()


for _cls in (_TensorSliceDataset, _TensorDataset, _RangeDataset, _GeneratorDataset, _MapDataset, _FilterDataset,
             _BatchDataset, _UnbatchDataset, _ShuffleDataset, _RepeatDataset, _TakeDataset, _SkipDataset,
             _CacheDataset, _ConcatenateDataset):
    _cls._kind = _cls.__name__


def _file_reader(feature):
    class _Unsupported:
        def __init__(self, *args, **kwargs):
            raise NotImplementedError(
                f"tf.data.{feature}: file-reading tf.data is not supported by tapeflow (in-memory datasets only). "
                "Read the files with NumPy/Python and use Dataset.from_tensor_slices.")
    _Unsupported.__name__ = feature
    return _Unsupported


TFRecordDataset = _file_reader("TFRecordDataset")
TextLineDataset = _file_reader("TextLineDataset")
FixedLengthRecordDataset = _file_reader("FixedLengthRecordDataset")


class experimental:  # noqa: N801  (tf.data.experimental namespace)
    AUTOTUNE = AUTOTUNE
    INFINITE_CARDINALITY = INFINITE_CARDINALITY
    UNKNOWN_CARDINALITY = UNKNOWN_CARDINALITY

    @staticmethod
    def cardinality(dataset):
        return dataset.cardinality()
