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
* ``TextLineDataset`` yields each line as a tf.string scalar; ``experimental.CsvDataset`` and
  ``make_csv_dataset`` read numeric and string columns; ``TFRecordDataset`` yields each record of
  TFRecord files (tapeflow/io.py reads the framing). FixedLengthRecordDataset raises
  NotImplementedError naming the feature.
* ``interleave``/``flat_map``/``window``/``padded_batch``/``group_by_window``/``rebatch``/
  ``sample_from_datasets``/``choose_from_datasets`` follow TF's algorithms and element orders; a
  parallel interleave yields the sequential order. ``bucket_by_sequence_length``,
  ``rejection_resample``, ``counter``, ``experimental.make_csv_dataset`` and (wave 21)
  ``experimental.make_batched_features_dataset`` are TF's compositions; ``sparse_batch``
  (``experimental.dense_to_sparse_batch``) is TF's DenseToSparseBatchDataset.
* Random transformations (shuffle, random, sample_from_datasets, rejection_resample) draw
  tapeflow's own streams: seeded runs repeat, TF's numbers are not reproduced.
* ``save``/``load`` use tapeflow's own format (a JSON spec and an npz of the elements).
* ``Options`` (``with_options``/``options()``) are kept, type-checked and merged as TF's, and
  change nothing: there is no runtime to tune.
"""
from __future__ import annotations

import csv
import enum
import inspect
import itertools
import logging
import os

import numpy as np

from . import errors
from . import lookup as _lookup
from .core.tensor import Tensor, TensorShape, Variable, convert_to_tensor
from .type_spec import TypeSpec
from .util import nest
from .util.deprecation import deprecated_data_experimental as _deprecated

#: ``tf.data.AUTOTUNE``: accepted wherever TF takes a buffer size or parallelism
AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def _leaf_spec(t, drop=0):
    """A component's spec (a SparseTensor's is a SparseTensorSpec, an extension type's its Spec),
    less ``drop`` leading dims."""
    from .compiler.function import TensorSpec
    from .sparse import SparseTensor, SparseTensorSpec
    from .extension_type import ExtensionType, type_spec_from_value, spec_with_batch
    if isinstance(t, ExtensionType):
        s = type_spec_from_value(t)
        return spec_with_batch(s, -1) if drop else s
    if isinstance(t, SparseTensor):
        return SparseTensorSpec(tuple(t.shape)[drop:], t.dtype)
    if _is_ragged(t):   # (a slice of a ragged_rank-1 tensor is ragged_rank 0: TF's spec of its rows)
        from .ragged import RaggedTensorSpec
        return RaggedTensorSpec(tuple(t.shape)[drop:], t.dtype, t.ragged_rank - drop)
    return TensorSpec(tuple(t.shape)[drop:], t.dtype)


def _is_ragged(x):
    return type(x).__name__ == "RaggedTensor"


def _is_ragged_spec(s):
    return type(s).__name__ == "RaggedTensorSpec"


def _ragged_rows(parts, i):
    """Elements' component ``i`` (Tensors or RaggedTensors, rows of any length) as the rows of
    one RaggedTensor (TF's batch of a ragged component, and ragged_batch)."""
    from .ragged.ragged_tensor import RaggedTensor, _stack_rows
    if not isinstance(parts[0], RaggedTensor):
        inner = {tuple(p.shape)[1:] for p in parts}
        if len(inner) > 1 or any(p.shape.rank == 0 for p in parts):
            raise ValueError(f"Dataset.ragged_batch: component {i} has rows of shapes {sorted({tuple(p.shape) for p in parts})}: "
                             "tapeflow batches rows that differ in their first dimension only")
    return _stack_rows(list(parts), parts[0] if isinstance(parts[0], RaggedTensor) else None)


def _spec_of(element):
    return nest.map_structure(_leaf_spec, element)


def _as_tensors(structure):
    """Convert a nested structure's leaves to Tensors. A Python list is a leaf
    (converted to one tensor), as in TF; tuples and dicts are structure."""
    if isinstance(structure, dict):
        return type(structure)((k, _as_tensors(v)) for k, v in structure.items())
    if isinstance(structure, tuple):
        vals = [_as_tensors(v) for v in structure]
        return type(structure)(*vals) if hasattr(structure, "_fields") else tuple(vals)
    from .sparse import SparseTensor
    from .extension_type import ExtensionType
    return structure if isinstance(structure, (Tensor, SparseTensor, ExtensionType)) or _is_ragged(structure) else \
        convert_to_tensor(structure)


def _map_result(r):
    """A map function's result as TF's StructuredFunctionWrapper takes it: a returned list (a
    py_function's outputs, of different shapes and dtypes) is a tuple, not one stacked tensor."""
    return tuple(r) if r.__class__ is list else r


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


class _Seeded:
    """A dataset that draws random numbers: its stream is (seed, epoch), the epoch counting the
    iterations begun when it re-randomizes each iteration. OwnedIterator checkpoints save and
    restore these two numbers (the pipeline's only randomness) and replay. With no seed, one is
    drawn now from tapeflow's global generator, so tf.random.set_seed makes the run repeat."""

    unseeded_made = 0   # how many were made with no seed (OwnedIterator's replay watches it)

    def _init_seed(self, seed, rerandomize):
        if seed is None:
            _Seeded.unseeded_made += 1
            from .ops import random_ops
            seed = int(random_ops.get_global_generator()._gen.integers(0, 2**63 - 1))
        self._seed, self._epoch, self._rerandomize = int(seed), 0, bool(rerandomize)

    def _rng(self):
        # read when the iteration is made, not at its first element, so an iterator that notes
        # the epochs before making its iteration can replay it (OwnedIterator)
        rng = np.random.default_rng([self._seed, self._epoch])
        if self._rerandomize:
            self._epoch += 1
        return rng


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
        from .compiler.function import TensorSpec
        from .core import dtypes
        from .util.deprecation import warn_deprecated
        for arg, given in (("output_types", output_types), ("output_shapes", output_shapes)):
            if given is not None:   # TF 2.21's deprecated_args, in its order
                warn_deprecated("DatasetV2.from_generator", "tensorflow.python.data.ops.dataset_ops",
                                "Use output_signature instead", arg=arg)
        strict = output_signature is None
        if strict:
            if output_types is None:
                raise TypeError("To specify the output signature you need to provide either the "
                                "`output_signature` argument or the `output_types` argument.")
            types = nest.flatten(output_types)
            shapes = ([None] * len(types) if output_shapes is None
                      else nest.flatten_up_to(output_types, output_shapes))
            output_signature = nest.pack_sequence_as(
                output_types, [TensorSpec(None if s is None else tuple(s), dtypes.as_dtype(t))
                               for t, s in zip(types, shapes)])
        else:
            from .extension_type import ExtensionTypeSpec
            for spec in nest.flatten(output_signature):
                if not isinstance(spec, (TensorSpec, ExtensionTypeSpec)):
                    raise TypeError(f"Dataset.from_generator: output_signature must be a (nested) structure of "
                                    f"tf.TensorSpec, got {spec!r}")
        return _GeneratorDataset(generator, args or (), output_signature, output_types if strict else None)

    # -- transformations ---------------------------------------------------------------------

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        ds = _MapDataset(self, map_func)
        if num_parallel_calls is not None:
            ds._kind = "_ParallelMapDataset"
        return ds

    def flat_map(self, map_func, name=None):
        return _InterleaveDataset(self, map_func, 1, 1, "_FlatMapDataset")

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None):
        # Elements run in this process one at a time, so a parallel interleave yields the order of
        # the sequential one (TF's order with deterministic=True, its default).
        cycle = AUTOTUNE if cycle_length is None else _int_arg("interleave", cycle_length, allow_negative=True)
        block = 1 if block_length is None else _int_arg("interleave", block_length, allow_negative=True)
        if cycle == AUTOTUNE:
            cycle = _max_parallelism()
        if cycle <= 0:
            raise errors.InvalidArgumentError(None, None, "cycle_length must be greater than zero.")
        if block <= 0:
            raise errors.InvalidArgumentError(None, None, "block_length must be greater than zero.")
        kind = "_ParallelInterleaveDataset" if num_parallel_calls is not None else "_InterleaveDataset"
        return _InterleaveDataset(self, map_func, cycle, block, kind)

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        size = _int_arg("window", size, allow_negative=True)
        shift = size if shift is None else _int_arg("window", shift, allow_negative=True)
        stride = _int_arg("window", stride, allow_negative=True)
        for what, v in (("size", size), ("shift", shift), ("stride", stride)):
            if v <= 0:
                raise errors.InvalidArgumentError(None, None, f"Window {what} must be greater than zero.")
        return _WindowDataset(self, size, shift, stride, bool(drop_remainder))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False,
                     name=None):
        n = _int_arg("padded_batch", batch_size, allow_negative=True)
        if n <= 0:
            raise errors.InvalidArgumentError(None, None, "Batch size must be greater than zero.")
        return _PaddedBatchDataset(self, n, padded_shapes, padding_values, bool(drop_remainder))

    def filter(self, predicate, name=None):
        return _FilterDataset(self, predicate)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        ds = _BatchDataset(self, _int_arg("batch", batch_size), bool(drop_remainder))
        if num_parallel_calls is not None:
            ds._kind = "_ParallelBatchDataset"
        return ds

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=None, name=None):
        """Batches whose components of a non-static shape (and ragged ones) are RaggedTensors."""
        ds = _BatchDataset(self, _int_arg("ragged_batch", batch_size), bool(drop_remainder), ragged=True)
        ds._kind = "_DenseToRaggedDataset"
        return ds

    def sparse_batch(self, batch_size, row_shape, name=None):
        """Batches of a dataset of dense tensors as SparseTensors of dense shape
        ``[batch] + row_shape`` (an unknown dim: the batch's largest), every element's values kept."""
        return _SparseBatchDataset(self, _int_arg("sparse_batch", batch_size, allow_negative=True), row_shape)

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

    def with_options(self, options, name=None):
        """TF's options, kept and merged (the later call's set fields win); they change
        nothing here (see ``Options``)."""
        if not isinstance(options, Options):
            raise TypeError(f"Dataset.with_options: options must be a tf.data.Options, got "
                            f"{type(options).__name__} {options!r}")
        return _OptionsDataset(self, options)

    def options(self):
        """The options set upstream of this dataset (merged in the order they were set)."""
        merged = Options()
        for ds in _upstream(self):
            own = ds.__dict__.get("_own_options")
            if own is not None:
                merged = merged._merged(own)
        return merged

    def cache(self, filename="", name=None):
        if filename:
            raise NotImplementedError("Dataset.cache(filename): file-backed tf.data is not supported by "
                                      "tapeflow; use cache() (in memory) or no cache")
        return _CacheDataset(self)

    def concatenate(self, dataset, name=None):
        return _ConcatenateDataset(self, dataset)

    def scan(self, initial_state, scan_func, name=None):
        return _ScanDataset(self, initial_state, scan_func)

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None, name=None):
        if (window_size is None) == (window_size_func is None):
            raise ValueError("Either the `window_size` argument or the `window_size_func` argument must be "
                             "specified.")
        if window_size is not None:
            n = _int_arg("group_by_window", window_size, allow_negative=True)
            window_size_func = lambda key: n  # noqa: E731
        return _GroupByWindowDataset(self, key_func, reduce_func, window_size_func)

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                  padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False,
                                  no_padding=False, drop_remainder=False, name=None):
        return _bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                          padded_shapes, padding_values, pad_to_bucket_boundary, no_padding,
                                          drop_remainder)

    def unique(self, name=None):
        return _UniqueDataset(self)

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None):
        return _RandomDataset(seed, bool(rerandomize_each_iteration))

    @staticmethod
    def counter(start=0, step=1, dtype=None, name=None):
        # TF's own composition (a scan over an endless repeat), so its repr and cardinality are TF's too
        from .core import dtypes
        dt = dtypes.int64 if dtype is None else dtypes.as_dtype(dtype)
        start_t, step_t = convert_to_tensor(start, dtype=dt), convert_to_tensor(step, dtype=dt)
        return _TensorDataset(0).repeat().scan(start_t, lambda state, _: (state + step_t, state))

    def shard(self, num_shards, index, name=None):
        n = _int_arg("shard", num_shards, allow_negative=True)
        i = _int_arg("shard", index, allow_negative=True)
        if n <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Number of shards must be greater than zero (currently num_shards = {n}).")
        if not 0 <= i < n:
            raise errors.InvalidArgumentError(
                None, None, f"Index must be between 0 and {n - 1} (currently index = {i}).")
        return _ShardDataset(self, n, i)

    def rebatch(self, batch_sizes, drop_remainder=False, name=None):
        return _RebatchDataset(self, batch_sizes, bool(drop_remainder))

    def take_while(self, predicate, name=None):
        return _TakeWhileDataset(self, predicate)

    def ignore_errors(self, log_warning=False, name=None):
        return _IgnoreErrorsDataset(self, bool(log_warning))

    def apply(self, transformation_func):
        ds = transformation_func(self)
        if not isinstance(ds, Dataset):
            raise TypeError(f"`transformation_func` must return a `tf.data.Dataset` object. Got {type(ds)}.")
        return ds

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        datasets = _check_interleave_inputs(datasets)
        if not isinstance(weights, Dataset):
            w = ([1.0 / len(datasets)] * len(datasets) if weights is None else
                 np.asarray(weights.numpy() if isinstance(weights, Tensor) else weights, np.float64).ravel().tolist())
            if len(w) != len(datasets):
                raise ValueError(f"Invalid `weights`. `weights` should have the same length as `datasets` but got "
                                 f"`len(weights)={len(w)}` vs. `len(datasets)={len(datasets)}`.")
            # TF: a dataset of weight <= 0 is never drawn, so it is left out; one left: it alone
            kept = [(d, x) for d, x in zip(datasets, w) if x > 0]
            if not kept:
                return datasets[0].take(0)
            if len(kept) == 1:
                return kept[0][0]
            datasets, weights = [d for d, _ in kept], [x for _, x in kept]
        selector = _WeightedChoiceDataset(len(datasets), weights, seed,
                                          bool(rerandomize_each_iteration) or seed is None)
        return _DirectedInterleaveDataset(selector, datasets, bool(stop_on_empty_dataset))

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        datasets = _check_interleave_inputs(datasets)
        sp = choice_dataset._spec() if isinstance(choice_dataset, Dataset) else None
        if sp is None or nest.is_nested(sp) or sp.dtype.name != "int64" or sp.shape is None or tuple(sp.shape) != ():
            raise TypeError(f"Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar `tf.int64` "
                            f"tensors but are {sp!r}.")
        return _DirectedInterleaveDataset(choice_dataset, datasets, bool(stop_on_empty_dataset))

    def rejection_resample(self, class_func, target_dist, initial_dist=None, seed=None, name=None):
        return _rejection_resample(self, class_func, target_dist, initial_dist, seed)

    def save(self, path, compression=None, shard_func=None, checkpoint_args=None):
        _save(self, path, compression, checkpoint_args)

    @staticmethod
    def load(path, element_spec=None, compression=None, reader_func=None):
        return _LoadDataset(path, element_spec)

    def get_single_element(self, name=None):
        it = self._elements()
        el = next(it, _END)
        if el is _END:
            raise errors.InvalidArgumentError(None, None, "Dataset was empty.")
        if next(it, _END) is not _END:
            raise errors.InvalidArgumentError(None, None, "Dataset had more than one element.")
        return el

    # -- consumers --------------------------------------------------------------------------

    def __iter__(self):
        return OwnedIterator(self)

    def as_numpy_iterator(self):
        return NumpyIterator(self)

    def reduce(self, initial_state, reduce_func, name=None):
        state = _as_tensors(initial_state)
        for el in self._elements():
            state = _as_tensors(reduce_func(state, el))
        return state

    def cardinality(self):
        return convert_to_tensor(np.int64(self._cardinality()))

    def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None, name=None):
        """``Dataset.snapshot``: TF writes the elements under ``path`` on the first pass and reads them
        back on later ones (the same elements); tapeflow recomputes them each pass and writes
        nothing. The elements, their order and the cardinality are the dataset's."""
        return self

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

    def _pipeline(self):
        """This dataset and every dataset it reads from, in a fixed order."""
        out, todo = [], [self]
        while todo:
            d = todo.pop()
            out.append(d)
            for name in ("_source", "_a", "_b", "_datasets"):
                todo.extend(x for x in nest.flatten(getattr(d, name, None)) if isinstance(x, Dataset))
        return out


class Iterator:
    """``tf.data.Iterator``: the base class of what ``iter(dataset)`` returns, for ``isinstance``
    checks (TF 2.21: ``isinstance(iter(ds), tf.data.Iterator)`` is True)."""


class IteratorSpec(TypeSpec):
    """``tf.data.IteratorSpec(element_spec)``: the type of an iterator over elements of ``element_spec``
    (TF 2.21's repr, equality and hash; ``value_type`` is the OwnedIterator)."""

    def __init__(self, element_spec):
        self._element_spec = element_spec

    @property
    def value_type(self):
        return OwnedIterator

    def is_compatible_with(self, other):
        return isinstance(other, IteratorSpec) and self == other

    def __eq__(self, other):
        return isinstance(other, IteratorSpec) and self._element_spec == other._element_spec

    def __hash__(self):
        return hash(("IteratorSpec", repr(self._element_spec)))

    def __repr__(self):
        return f"IteratorSpec({self._element_spec!r},)"


class Optional:
    """``tf.experimental.Optional`` (also ``tf.data.experimental.Optional``): a value of a given
    structure, or none. ``from_value``/``empty``, ``has_value()`` (a bool tensor), ``get_value()``
    (TF 2.21's InvalidArgumentError when empty), ``element_spec``."""

    def __init__(self, value, element_spec, _has=None):
        # _has: a traced bool tensor, for an Optional a traced iterator made (its value is zeros when empty)
        self._value, self._spec, self._has = value, element_spec, _has

    @staticmethod
    def from_value(value):
        v = _as_tensors(value)
        return Optional(v, _spec_of(v))

    @staticmethod
    def empty(element_spec):
        return Optional(None, element_spec)

    def has_value(self, name=None):
        if self._has is not None:
            return self._has
        return convert_to_tensor(self._value is not None)

    def get_value(self, name=None):
        if self._value is None and self._has is None:
            raise errors.InvalidArgumentError(None, None, "The given optional does not have a value.")
        return self._value

    @property
    def element_spec(self):
        return self._spec

    # tapeflow.function takes and returns an Optional as its has-value flag and its value's tensors
    # (compiler/function.py's composite protocol); an empty one's value travels as zeros of its spec
    # (None dims as 0), which get_value never gives: its flag says empty
    def _tf_components(self):
        has = self.has_value()
        if self._value is None:
            from .ops import array_ops as _A   # (zeros of each spec leaf)
            vals = [_A.zeros(tuple(0 if d is None else d for d in sp.shape), sp.dtype)
                    for sp in nest.flatten(self._spec)]
        else:
            vals = nest.flatten(self._value)
        return (has,) + tuple(vals)

    def _tf_static(self):
        return _SpecKey(self._spec)

    @classmethod
    def _tf_from_components(cls, static, components):
        has, vals = components[0], components[1:]
        value = nest.pack_sequence_as(static.spec, list(vals))
        from .ir.tracer import Tracer
        if not isinstance(has, Tracer):   # (eager: an empty one is empty again)
            return Optional(value if bool(has) else None, static.spec)
        return Optional(value, static.spec, _has=has)


class _SpecKey:
    """An Optional's element_spec as a hashable part of a trace's key (compared by its printed structure)."""
    __slots__ = ("spec", "_key")

    def __init__(self, spec):
        self.spec = spec
        self._key = nest.structure_key(spec, repr)

    def __eq__(self, other):
        return isinstance(other, _SpecKey) and self._key == other._key

    def __hash__(self):
        return hash(self._key)


class NumpyIterator:
    """What ``Dataset.as_numpy_iterator()`` returns (TF's ``tf.data.NumpyIterator``): the elements
    as NumPy values, made on demand; ``next()`` as well as ``next(it)``."""

    def __init__(self, dataset):
        self._it = dataset._elements()

    def __iter__(self):
        return self

    def __next__(self):
        return nest.map_structure(lambda t: t.numpy(), next(self._it))

    next = __next__

    def __repr__(self):
        return f"NumpyIterator(iterator=<{type(self._it).__name__} object at {id(self._it):#x}>)"


class OwnedIterator(Iterator):
    """What ``iter(dataset)`` returns (TF's ``OwnedIterator``): ``next()``, ``get_next()``,
    ``element_spec``, and a place in a ``tf.train.Checkpoint``.

    A checkpoint saves how many elements the iterator has given and, for each shuffle in the
    pipeline, the (seed, epoch) its iteration began with: the pipeline's only randomness. A
    restore puts those back and replays the pipeline to that point, so the elements after it are
    the ones the saved iterator would have given, in this process or a new one (TF saves each
    transformation's buffers instead; the elements are the same). The shuffles' seeds and epochs
    stay as restored: later iterations of the same dataset continue from them. Like TF, an
    iterator over ``from_generator`` cannot be saved: a Python generator cannot be rewound."""

    def __init__(self, dataset):
        from .core.state import STATE
        self._dataset = dataset
        # made while tracing (iter(ds) in the function's own code): pulled at trace time, so each call
        # of the compiled function starts a fresh iteration, as TF's does (the values are the trace's)
        self._made_in_trace = STATE.trace is not None
        self._shuffles = [d for d in dataset._pipeline() if isinstance(d, _Seeded)]
        self._start = [v for d in self._shuffles for v in (d._seed, d._epoch)]
        self._it = dataset._elements()
        self._count = 0
        self._state = None   # the Variable a checkpoint saves; made when one first walks this
        self._synced = None  # the state as this iterator last wrote it

    def __iter__(self):
        if self._traced():
            raise NotImplementedError(
                "a `for` loop over a tf.data iterator made outside tapeflow.function, inside it: tapeflow would "
                "unroll it at trace time; pull elements with next(it) / it.get_next_as_optional() in a "
                "`for _ in tf.range(n)` loop (each call of the compiled function pulls anew), or iterate the "
                "dataset itself")
        return self

    def _traced(self):
        """Whether a pull now is one of a traced function (an iterator made outside the trace, passed in or
        captured): it becomes a ``py_call`` that pulls on every run of the compiled function, as TF's
        IteratorGetNext op does, not at trace time (which would bake the first element into the graph)."""
        from .core.state import STATE
        return STATE.trace is not None and not getattr(self, "_made_in_trace", False)

    def _pull_op(self, optional):
        from .compiler.function import TensorSpec
        from .core.aval import Aval
        from .core.primitive import bind
        from .core.primitives.pycall import py_call_p
        spec = self.element_spec
        leaves = nest.flatten(spec)
        for leaf in leaves:
            if not isinstance(leaf, TensorSpec):
                raise NotImplementedError(f"next() of a tf.data iterator inside tapeflow.function: elements of "
                                          f"{type(leaf).__name__} are pulled eagerly only; call it outside the "
                                          "function and pass the element in")
        avals = [Aval(tuple(leaf.shape), leaf.dtype.np) for leaf in leaves]

        def pull():
            try:
                el = self._next_eager()
            except StopIteration:
                if not optional:
                    raise errors.OutOfRangeError(None, None, "End of sequence") from None
                # empty: zeros in the spec's shapes (an unknown dim 0); has_value() is False
                return [np.asarray(False)] + [np.zeros([0 if d is None else d for d in a.shape], a.dtype)
                                               for a in avals]
            values = [np.asarray(t.numpy() if isinstance(t, Tensor) else t) for t in nest.flatten(el)]
            return ([np.asarray(True)] if optional else []) + values
        outs = bind(py_call_p, fn=pull, out_avals=tuple(([Aval((), np.dtype(bool))] if optional else []) + avals),
                    name="Iterator.get_next_as_optional" if optional else "Iterator.get_next")
        if optional:
            return Optional(nest.pack_sequence_as(spec, list(outs[1:])), spec, _has=outs[0])
        return nest.pack_sequence_as(spec, list(outs))

    def __next__(self):
        if self._traced():
            return self._pull_op(optional=False)
        return self._next_eager()

    def _next_eager(self):
        if self._state is not None:
            state = self._state.numpy().tolist()
            if state != self._synced:
                self._replay(state)   # a checkpoint restore assigned it
        el = next(self._it)
        self._count += 1
        return el

    next = __next__   # (TF's iterator has it too: iter(ds).next())

    def get_next(self):
        try:
            return next(self)
        except StopIteration:
            raise errors.OutOfRangeError(None, None, "End of sequence") from None

    def get_next_as_optional(self):
        """The next element as an Optional, empty at the end (TF 2.21's Iterator method)."""
        if self._traced():
            return self._pull_op(optional=True)
        try:
            return Optional(next(self), self.element_spec)
        except StopIteration:
            return Optional.empty(self.element_spec)

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def _replay(self, state):
        position, start = state[0], state[1:]
        for k, d in enumerate(self._shuffles):
            d._seed, d._epoch = start[2 * k], start[2 * k + 1]
        self._start = start
        made = _Seeded.unseeded_made
        self._it = self._dataset._elements()
        for _ in range(position):
            if next(self._it, _END) is _END:
                break
        if _Seeded.unseeded_made != made:
            # a function in the pipeline (flat_map, interleave, group_by_window...) made a shuffle or
            # random dataset with no seed while replaying: its draws are new, so the elements after the
            # restore would not be the saved iterator's. Say so rather than go on with other elements.
            raise errors.FailedPreconditionError(
                None, None, "Checkpoint restore: a function in this pipeline makes an unseeded random dataset "
                            "(shuffle, Dataset.random, sample_from_datasets, rejection_resample) while it runs, so "
                            "the restored iterator cannot repeat the saved one's elements; give it a seed")
        self._count = position
        self._synced = [position] + start

    def _walk_children(self):
        # walked when a checkpoint saves or restores: the state is brought up to date here,
        # not on every element
        if any(isinstance(d, _GeneratorDataset) for d in self._dataset._pipeline()):
            raise errors.FailedPreconditionError(
                None, None, "Checkpoint: an iterator over Dataset.from_generator cannot be saved (a Python "
                            "generator cannot be rewound; TF refuses it too: 'PyFunc is stateful'); save the "
                            "generator's own state instead, or build the dataset from tensors")
        state = [self._count] + self._start
        if self._state is None:
            self._state = Variable(np.array(state, np.int64), trainable=False, name="iterator_state")
        elif self._synced != state:
            self._state.assign(np.array(state, np.int64))
        self._synced = state
        return [("ITERATOR_STATE", self._state)]


class _TensorSliceDataset(Dataset):
    def __init__(self, tensors):
        self._struct = _as_tensors(tensors)
        flat = nest.flatten(self._struct)
        if not flat:
            raise ValueError("Dataset.from_tensor_slices: got an empty structure")
        from .extension_type import ExtensionType, batch_size, row
        lead = [batch_size(t) if isinstance(t, ExtensionType) else None for t in flat]
        for t, b in zip(flat, lead):
            if b is None and t.shape == ():
                raise ValueError(f"Dataset.from_tensor_slices: cannot slice a scalar ({t!r}); every component "
                                 "needs a leading dimension")
        lead = [t.shape[0] if b is None else b for t, b in zip(flat, lead)]
        n = lead[0]
        for m in lead[1:]:
            if m != n:
                raise ValueError(f"Dimensions {n} and {m} are not compatible")
        self._n = n
        from .sparse import SparseTensor
        #: a ragged component: batching this dataset's rows makes RaggedTensors again (TF's spec)
        self._has_ragged = any(_is_ragged(t) for t in flat)
        self._arrays = [t if isinstance(t, (SparseTensor, ExtensionType)) or _is_ragged(t) else t.numpy()
                        for t in flat]
        self._row = row

    def _elements(self):
        from .sparse import SparseTensor, _row
        from .extension_type import ExtensionType
        for i in range(self._n):
            yield nest.pack_sequence_as(self._struct, [
                _row(a, i) if isinstance(a, SparseTensor) else self._row(a, i) if isinstance(a, ExtensionType)
                else a[i] if _is_ragged(a) else Tensor(a[i]) for a in self._arrays])

    def _cardinality(self):
        return self._n

    def _spec(self):
        return nest.map_structure(lambda t: _leaf_spec(t, 1), self._struct)


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
    _kind = "_FlatMapDataset"  # TF builds from_generator as a flat_map over its args: its repr says so

    def __init__(self, generator, args, signature, output_types):
        self._gen, self._args, self._sig = generator, tuple(args), signature
        # output_types (TF's older form) converts strictly: a yielded 1.5 for tf.int32 is an error;
        # an output_signature casts as np.asarray does (1.5 -> 1), as TF's two paths do.
        self._types = output_types

    def _mismatch(self, el):
        expected = self._types if self._types is not None and nest.is_nested(self._types) else self._sig
        return errors.InvalidArgumentError(
            None, None, f"TypeError: `generator` yielded an element that did not match the expected structure. "
                        f"The expected structure was {expected!r}, but the yielded element was {el!r}.")

    def _convert(self, value, spec, el):
        from .extension_type import ExtensionTypeSpec
        if isinstance(spec, ExtensionTypeSpec):   # a value of that spec
            if not (isinstance(value, spec.value_type) and spec.is_compatible_with(value)):
                raise self._mismatch(el)
            return value
        dt = spec.dtype.np
        try:
            if self._types is not None and not isinstance(value, (np.ndarray, np.generic, Tensor)):
                t = convert_to_tensor(value, dtype=spec.dtype)
            else:
                t = Tensor(np.asarray(value.numpy() if isinstance(value, Tensor) else value, dtype=dt))
        except (TypeError, ValueError):
            raise self._mismatch(el) from None
        if spec.shape is not None and not TensorShape(spec.shape).is_compatible_with(t.shape):
            want = tuple(spec.shape)
            raise errors.InvalidArgumentError(
                None, None, f"TypeError: `generator` yielded an element of shape {tuple(t.shape)} where an "
                            f"element of shape {want} was expected.")
        return t

    def _elements(self):
        specs = nest.flatten(self._sig)
        for el in self._gen(*self._args):
            try:
                parts = nest.flatten_up_to(self._sig, el)
            except ValueError:
                raise self._mismatch(el) from None
            yield nest.pack_sequence_as(self._sig, [self._convert(p, s, el) for p, s in zip(parts, specs)])

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _spec(self):
        return self._sig


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
        fn = self._fn
        return _PerElement(self._source._elements(), lambda el: _as_tensors(_map_result(_apply(fn, el))))

    def _cardinality(self):
        return self._source._cardinality()

    def _spec(self):
        # TF traces the map function on the source's element spec: no element is read (a CSV
        # file that does not exist yet is only opened when iterated). A function that cannot be
        # traced (it calls .numpy(), or takes SparseTensors) gets its first element's spec.
        from .compiler.function import TensorSpec, function
        src = self._source._spec()
        if all(isinstance(s, TensorSpec) for s in nest.flatten(src)):
            fn = self._fn
            try:
                cf = function(lambda el: _as_tensors(_map_result(_apply(fn, el)))).get_concrete_function(src)
                return cf.structured_outputs
            except Exception:  # noqa: BLE001  (the spec from an element, below)
                pass
        return super()._spec()


class _FilterDataset(Dataset):
    def __init__(self, source, predicate):
        self._source, self._pred = source, predicate

    def _elements(self):
        return _PerElement(self._source._elements(), self._step)

    def _step(self, el):
        keep = _as_tensors(_apply(self._pred, el))
        if keep.dtype.name != "bool" or keep.shape != ():
            raise ValueError(f"Dataset.filter: the predicate must return a scalar bool tensor, got "
                             f"shape {keep.shape} dtype {keep.dtype.name}")
        return el if bool(keep.numpy()) else _SKIP

    def _cardinality(self):
        c = self._source._cardinality()
        return INFINITE_CARDINALITY if c == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _spec(self):
        return self._source._spec()


def _upstream(ds, seen=None):
    """The datasets ``ds`` is built from, sources first, then ``ds`` (found in its attributes)."""
    seen = set() if seen is None else seen
    if id(ds) in seen:
        return []
    seen.add(id(ds))
    out = []
    for v in ds.__dict__.values():
        for x in (v if isinstance(v, (list, tuple)) else (v,)):
            if isinstance(x, Dataset):
                out += _upstream(x, seen)
    return out + [ds]


def _stack(elements):
    """Stack a list of structurally equal elements along a new first axis."""
    from .sparse import SparseTensor, _stack_rows
    from .extension_type import ExtensionType, stack_rows
    flats = [nest.flatten(e) for e in elements]
    out = []
    for i, parts in enumerate(zip(*flats)):
        if isinstance(parts[0], SparseTensor):
            out.append(_stack_rows(parts))
            continue
        if isinstance(parts[0], ExtensionType):
            out.append(stack_rows(parts))
            continue
        shapes = {tuple(p.shape) for p in parts}
        if len(shapes) > 1:
            raise ValueError(f"Dataset.batch: cannot batch component {i} with different shapes "
                             f"{sorted(shapes)}; use padded_batch, or map the elements to one shape")
        # (a string scalar's .numpy() is bare bytes, which np.stack makes an 'S' array: that drops
        # trailing NUL bytes, and a serialized Example often ends in one; stack the object arrays)
        out.append(Tensor(np.stack([np.asarray(p.numpy(), object) if p.dtype.is_string else p.numpy()
                                    for p in parts])))
    return nest.pack_sequence_as(elements[0], out)


def _object_tensor(a):
    from .io import _string_tensor
    return _string_tensor(a)


def _shape_text(shape):
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


class _SparseBatchDataset(Dataset):
    """``sparse_batch`` / ``experimental.dense_to_sparse_batch``: TF's DenseToSparseBatchDataset: each
    element's every value at ``[position in batch] + its index``; the dense shape is ``row_shape``
    with unknown dims the batch's largest; an element larger than ``row_shape`` is TF's
    DataLossError, one of another rank its InvalidArgumentError."""

    _kind = "_DenseToSparseBatchDataset"

    def __init__(self, source, n, row_shape):
        if n <= 0:
            raise errors.InvalidArgumentError(None, None, "Batch size must be greater than zero.")
        shape = row_shape.as_list() if hasattr(row_shape, "as_list") else list(np.atleast_1d(row_shape)) \
            if np.ndim(row_shape) else ([] if row_shape is None or np.size(row_shape) == 0 else [row_shape])
        self._source, self._n = source, n
        self._row = [None if d is None or int(d) < 0 else int(d) for d in shape]

    def _elements(self):
        it = self._source._elements()
        while True:
            chunk = list(itertools.islice(it, self._n))
            if not chunk:
                return
            yield self._combine(chunk)

    def _combine(self, chunk):
        from .sparse import SparseTensor
        rank, idx, vals, dims = len(self._row), [], [], [0] * len(self._row)
        for b, e in enumerate(chunk):
            if not isinstance(e, Tensor):
                raise TypeError(f"Dataset.sparse_batch: elements must be single dense tensors, got "
                                f"{type(e).__name__}")
            a = np.asarray(e.numpy())
            if a.ndim != rank:
                raise errors.InvalidArgumentError(
                    None, None, f"Input element had shape ({_shape_text(a.shape)}) that is incompatible with the "
                                f"row shape ({_shape_text(self._row)}).")
            if any(w is not None and h > w for h, w in zip(a.shape, self._row)):
                raise errors.DataLossError(
                    None, None, f"Input element had shape ({_shape_text(a.shape)}) that is larger than the row "
                                f"shape ({_shape_text(self._row)}).")
            dims = [max(d, h) for d, h in zip(dims, a.shape)]
            pos = np.indices(a.shape).reshape(rank, a.size).T   # (row-major, the order of a.ravel())
            idx.append(np.concatenate([np.full((len(pos), 1), b), pos], 1))
            vals.append(a.ravel())
        shape = [len(chunk)] + [d if w is None else w for d, w in zip(dims, self._row)]
        values = np.concatenate(vals)
        return SparseTensor(np.concatenate(idx).astype(np.int64).reshape(-1, rank + 1),
                            _object_tensor(values) if values.dtype == object else Tensor(values),
                            np.array(shape, np.int64))

    def _cardinality(self):
        c = self._source._cardinality()
        return c if c < 0 else -(-c // self._n)

    def _spec(self):
        from .sparse import SparseTensorSpec
        sp = self._source._spec()
        return SparseTensorSpec([None] + self._row, sp.dtype)


class _BatchDataset(Dataset):
    def __init__(self, source, n, drop_remainder, ragged=False):
        if n <= 0:
            raise ValueError(f"Dataset.batch: batch_size must be positive, got {n}")
        self._source, self._n, self._drop = source, n, drop_remainder
        #: ragged_batch / dense_to_ragged_batch: components whose shape is not static batch ragged
        self._ragged = ragged
        self._ragged_parts = None   # per component: batched as a RaggedTensor (from the spec, once)

    def _which_ragged(self):
        """Which components batch into RaggedTensors: those of a RaggedTensorSpec (slices of a ragged
        tensor), and under ragged_batch those whose spec shape is not fully known. The spec is read
        only where a ragged source or ragged_batch asks (it may trace a map function)."""
        if self._ragged_parts is None:
            if self._ragged or any(getattr(d, "_has_ragged", False) for d in _upstream(self._source)):
                specs = nest.flatten(self._source._spec())
                self._ragged_parts = [_is_ragged_spec(sp) or (self._ragged and (
                    sp.shape is None or None in tuple(sp.shape))) for sp in specs]
            else:
                self._ragged_parts = []
        return self._ragged_parts

    def _elements(self):
        it = self._source._elements()
        while True:
            chunk = list(itertools.islice(it, self._n))
            if not chunk or (self._drop and len(chunk) < self._n):
                return
            yield self._combine(chunk)

    def _combine(self, chunk):
        which = self._which_ragged()
        if not which and not any(_is_ragged(x) for x in nest.flatten(chunk[0])):
            return _stack(chunk)
        flats = [nest.flatten(e) for e in chunk]
        out = []
        for i, parts in enumerate(zip(*flats)):
            if self._ragged and i < len(which) and not which[i] and len({tuple(p.shape) for p in parts}) > 1:
                # ragged_batch of rows whose spec looked static: a map function that could not be
                # traced has its first element's spec; rows of other lengths make it ragged, from
                # this batch on (a component keeps one kind)
                which[i] = True
            if (i < len(which) and which[i]) or _is_ragged(parts[0]):
                out.append(_ragged_rows(parts, i))
            else:
                out.append(_stack(list(parts)))
        return nest.pack_sequence_as(chunk[0], out)

    def _cardinality(self):
        c = self._source._cardinality()
        if c < 0:
            return c
        return c // self._n if self._drop else -(-c // self._n)

    def _spec(self):
        lead = self._n if self._drop else None
        from .extension_type import ExtensionTypeSpec, spec_with_batch
        which = iter(self._which_ragged())

        def batched(s):
            ragged = next(which, False)
            if isinstance(s, ExtensionTypeSpec):
                return spec_with_batch(s, lead)
            if _is_ragged_spec(s) or ragged:
                from .ragged import RaggedTensorSpec
                shape = tuple(s.shape)
                # (ragged_batch: the dims up to the last unknown one are ragged)
                rr = s.ragged_rank + 1 if _is_ragged_spec(s) else \
                    1 + max(i for i, d in enumerate(shape) if d is None)
                return RaggedTensorSpec((lead,) + shape, s.dtype, rr)
            return type(s)((lead,) + tuple(s.shape), s.dtype)
        return nest.map_structure(batched, self._source._spec())


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
        from .extension_type import ExtensionTypeSpec, spec_with_batch

        def unbatched(s):
            if isinstance(s, ExtensionTypeSpec):
                return spec_with_batch(s, -1)
            if _is_ragged_spec(s):
                from .ragged import RaggedTensorSpec
                return RaggedTensorSpec(tuple(s.shape)[1:], s.dtype, s.ragged_rank - 1)
            return type(s)(tuple(s.shape)[1:], s.dtype)
        return nest.map_structure(unbatched, self._source._spec())


class _ShuffleDataset(_Seeded, Dataset):
    def __init__(self, source, buffer_size, seed, reshuffle):
        if buffer_size == 0 or buffer_size < -1:
            raise ValueError(f"Dataset.shuffle: buffer_size must be positive (or AUTOTUNE), got {buffer_size}")
        self._source, self._size = source, buffer_size
        # Each new iteration reshuffles (TF's default) unless asked not to: the epoch joins the seed
        self._init_seed(seed, reshuffle)

    def _elements(self):
        return self._shuffled(self._rng())

    def _shuffled(self, rng):
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


def _max_parallelism():
    # TF's AUTOTUNE cycle length is port::MaxParallelism(): the cores this process may run on
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class _InterleaveDataset(Dataset):
    """interleave (and flat_map = interleave with cycle_length 1): TF's sequential algorithm. A
    cycle of ``cycle`` open datasets, made from consecutive input elements; each in turn gives up
    to ``block`` elements; an exhausted one frees its slot, which the next input element fills."""

    def __init__(self, source, fn, cycle, block, kind):
        self._source, self._fn, self._cycle, self._block, self._kind = source, fn, cycle, block, kind

    def _open(self, el):
        ds = _apply(self._fn, el)
        if not isinstance(ds, Dataset):
            raise TypeError(f"Dataset.{'flat_map' if self._kind == '_FlatMapDataset' else 'interleave'}: "
                            f"map_func must return a tf.data.Dataset, got {type(ds).__name__}")
        return ds._elements()

    def _elements(self):
        inputs = self._source._elements()
        slots = [None] * self._cycle
        n_open, i, taken, end_of_input = 0, 0, 0, False
        while not end_of_input or n_open:
            if slots[i] is not None:
                el = next(slots[i], _END)
                if el is not _END:
                    yield el
                    taken += 1
                    if taken == self._block:
                        taken, i = 0, (i + 1) % self._cycle
                    continue
                slots[i], n_open = None, n_open - 1
                taken, i = 0, (i + 1) % self._cycle
            elif not end_of_input:
                el = next(inputs, _END)
                if el is _END:
                    end_of_input = True
                else:
                    slots[i], n_open = self._open(el), n_open + 1
            else:
                taken, i = 0, (i + 1) % self._cycle

    def _cardinality(self):
        return UNKNOWN_CARDINALITY


_END = object()


class DatasetSpec(TypeSpec):
    """``tf.data.DatasetSpec``: the spec of an element that is itself a dataset (``window``)."""

    def __init__(self, element_spec, dataset_shape=()):
        self.element_spec, self.shape = element_spec, TensorShape(dataset_shape)

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r}, {self.shape!r})"

    def __eq__(self, other):
        return isinstance(other, DatasetSpec) and (self.element_spec, self.shape) == (other.element_spec, other.shape)

    def __hash__(self):
        return hash((repr(self.element_spec), self.shape))


class _VariantDataset(Dataset):
    """One window's component: a dataset over elements already read (TF's repr name)."""

    def __init__(self, elements, spec):
        self._list, self._spec_value = elements, spec

    def _elements(self):
        return iter(self._list)

    def _cardinality(self):
        return len(self._list)

    def _spec(self):
        return self._spec_value


class _WindowDataset(Dataset):
    """window(size, shift, stride): window k holds the elements at k*shift + j*stride, j < size.
    Windows start until the input runs out; the last ones are short unless drop_remainder. Each
    window is the element's structure with a dataset in place of each component."""

    def __init__(self, source, size, shift, stride, drop):
        self._source, self._size, self._shift, self._stride, self._drop = source, size, shift, stride, drop

    def _elements(self):
        it = self._source._elements()
        buf, first, exhausted = [], 0, False   # buf[0] is the input's element number `first`
        specs = None
        for start in itertools.count(0, self._shift):
            last = start + (self._size - 1) * self._stride
            while not exhausted and first + len(buf) <= last:
                el = next(it, _END)
                if el is _END:
                    exhausted = True
                else:
                    buf.append(el)
            picked = [buf[k - first] for k in range(start, last + 1, self._stride) if k < first + len(buf)]
            if not picked or (self._drop and len(picked) < self._size):
                return
            if specs is None:
                specs = nest.flatten(self._source._spec())
            cols = zip(*[nest.flatten(e) for e in picked])
            yield nest.pack_sequence_as(picked[0], [_VariantDataset(list(c), sp) for c, sp in zip(cols, specs)])
            drop = min(start + self._shift - first, len(buf))
            del buf[:drop]
            first += drop

    def _cardinality(self):
        c = self._source._cardinality()
        if c < 0:
            return c
        if not self._drop:
            return -(-c // self._shift)
        span = (self._size - 1) * self._stride
        return 0 if c <= span else (c - 1 - span) // self._shift + 1

    def _spec(self):
        return nest.map_structure(DatasetSpec, self._source._spec())


class _PaddedBatchDataset(_BatchDataset):
    """padded_batch: batch's chunks, each component padded to ``padded_shapes`` (None
    dimensions: the batch's largest) with ``padding_values`` (default 0), then stacked."""

    def __init__(self, source, n, padded_shapes, padding_values, drop):
        super().__init__(source, n, drop)
        specs = source._spec()
        flat = nest.flatten(specs)
        if padded_shapes is None:
            shapes = [None if sp.shape is None else (None,) * len(sp.shape) for sp in flat]
        else:
            shapes = [_padded_shape(s) for s in nest.flatten_up_to(specs, padded_shapes)]
        for sp, ps in zip(flat, shapes):
            if ps is None:
                raise ValueError(f"Dataset.padded_batch: a component of unknown rank ({sp!r}) needs its "
                                 f"padded_shapes")
            # Rank only: a mapped dataset's spec is its first element's (its function is not traced),
            # so its sizes are not known to hold for every element; the sizes are checked per batch.
            if sp.shape is not None and len(sp.shape) != len(ps):
                raise ValueError(f"The padded shape {tuple(-1 if d is None else d for d in ps)} is not compatible "
                                 f"with the shape {tuple(sp.shape)} of the corresponding input component.")
        if padding_values is None:
            values = [np.zeros((), sp.dtype.np) for sp in flat]
        else:
            given = ([padding_values] * len(flat) if not nest.is_nested(padding_values)
                     else nest.flatten_up_to(specs, padding_values))
            values = []
            for sp, v in zip(flat, given):
                t = v if isinstance(v, Tensor) else convert_to_tensor(v)
                if t.shape != ():
                    raise ValueError(f"Invalid `padding_values`: expected scalars, got shape {tuple(t.shape)}")
                if t.dtype != sp.dtype:
                    raise TypeError(f"Invalid `padding_values`. `padding_values` values type {t.dtype} does not "
                                    f"match type {sp.dtype} of the corresponding input component.")
                values.append(t.numpy())
        self._specs, self._shapes, self._values = specs, shapes, values

    def _combine(self, chunk):
        out = []
        for parts, ps, pv in zip(zip(*[nest.flatten(e) for e in chunk]), self._shapes, self._values):
            arrays = [p.numpy() for p in parts]
            if any(a.ndim != len(ps) for a in arrays):
                raise errors.InvalidArgumentError(
                    None, None, f"Dataset.padded_batch: elements of rank {sorted({a.ndim for a in arrays})} "
                                f"for a padded shape of rank {len(ps)}")
            target = tuple(max(a.shape[d] for a in arrays) if s is None else s for d, s in enumerate(ps))
            if any(a.shape[d] > target[d] for a in arrays for d in range(a.ndim)):
                raise errors.DataLossError(None, None,
                                           "Attempted to pad to a smaller size than the input element.")
            batch = np.full((len(arrays),) + target, pv, dtype=arrays[0].dtype)
            for k, a in enumerate(arrays):
                batch[(k,) + tuple(slice(0, d) for d in a.shape)] = a
            out.append(Tensor(batch))
        return nest.pack_sequence_as(chunk[0], out)

    def _spec(self):
        from .compiler.function import TensorSpec
        lead = self._n if self._drop else None
        return nest.pack_sequence_as(self._specs, [TensorSpec((lead,) + ps, sp.dtype) for sp, ps in
                                                   zip(nest.flatten(self._specs), self._shapes)])


def _padded_shape(s):
    """A padded_shapes entry (list, tuple, TensorShape or 1-D tensor; -1/None: the batch's largest)."""
    if isinstance(s, Tensor):
        s = s.numpy().tolist()
    if s is None:
        return None
    return tuple(None if d is None or int(d) == -1 else int(d) for d in s)


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


class _PerElement:
    """An iterator that applies ``step`` to each element of ``source`` and stays usable after
    ``step`` raises: as a TF iterator, where an error in one element's map is that GetNext's
    error and the next call goes on with the next element. ``ignore_errors`` relies on it; a
    Python generator cannot do this (an exception ends it). ``step`` returns ``_SKIP`` to drop
    an element (filter)."""

    __slots__ = ("source", "step")

    def __init__(self, source, step):
        self.source, self.step = source, step

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            out = self.step(next(self.source))
            if out is not _SKIP:
                return out


_SKIP = object()


def _can_continue(it):
    """Whether iterator ``it`` can give its next element after an error came out of it."""
    if isinstance(it, _PerElement):
        return _can_continue(it.source)
    if inspect.isgenerator(it):
        return inspect.getgeneratorstate(it) != inspect.GEN_CLOSED
    return type(it).__name__ == "list_iterator"   # (islice and the like: cannot tell, so no)


class _ScanDataset(Dataset):
    """scan: a state threaded through the elements; ``scan_func(state, element)`` returns
    (new_state, output). TF passes the element as one argument even when it is a tuple."""

    def __init__(self, source, initial_state, fn):
        self._source, self._fn, self._init = source, fn, _as_tensors(initial_state)

    def _elements(self):
        state = self._init
        want = [t.dtype for t in nest.flatten(state)]
        for el in self._source._elements():
            out = self._fn(state, el)
            if not isinstance(out, tuple) or len(out) != 2:
                got = _spec_of(_as_tensors(out)) if out is not None else None
                raise TypeError(f"Invalid `scan_func`. `scan_func` should return a pair consisting of new state and "
                                f"the output value but its return type is {got!r}.")
            new = _as_tensors(out[0])
            try:
                new_flat = nest.flatten_up_to(self._init, new)
            except (ValueError, TypeError):
                raise TypeError(f"Invalid `scan_func`. The element structure for the new state must match the "
                                f"initial state. Expected {_spec_of(self._init)!r}, got {_spec_of(new)!r}.") from None
            got = [t.dtype if isinstance(t, Tensor) else None for t in new_flat]
            if got != want:
                raise TypeError(f"Invalid `scan_func`. The element types for the new state must match the initial "
                                f"state. Expected {want[0] if len(want) == 1 else want!r}, got "
                                f"{got[0] if len(got) == 1 else got!r}.")
            state = nest.pack_sequence_as(self._init, new_flat)
            yield _as_tensors(out[1])

    def _cardinality(self):
        return self._source._cardinality()


class _GroupByWindowDataset(Dataset):
    """group_by_window: TF's algorithm. Elements go to the group of their key; when a group holds
    its window size (``window_size_func(key)``, asked per element) it is handed to ``reduce_func``
    as a dataset and the reduced dataset's elements are given. At the end of the input, the
    groups left are flushed in increasing key order (TF keeps them in an ordered map)."""

    def __init__(self, source, key_func, reduce_func, size_func):
        self._source, self._key_fn, self._reduce_fn, self._size_fn = source, key_func, reduce_func, size_func

    def _key(self, el):
        k = _apply(self._key_fn, el)
        if isinstance(k, Tensor):
            if k.dtype.name != "int64" or k.shape != ():
                raise ValueError(f"Dataset.group_by_window: key_func must return a scalar tf.int64 tensor, got "
                                 f"shape {tuple(k.shape)} dtype {k.dtype.name} (cast it: tf.cast(key, tf.int64))")
            return int(k.numpy())
        return int(convert_to_tensor(k, dtype="int64").numpy())

    def _reduce(self, key, elements):
        ds = self._reduce_fn(Tensor(np.int64(key)), _VariantDataset(elements, self._source._spec()))
        if not isinstance(ds, Dataset):
            raise TypeError(f"Invalid `reduce_func`. `reduce_func` must return a single `tf.data.Dataset` object "
                            f"but its return type is {ds!r}.")
        return ds

    def _elements(self):
        groups = {}
        it = self._source._elements()
        while True:
            flush = None
            for el in it:
                key = self._key(el)
                size = self._size_fn(Tensor(np.int64(key)))
                size = int(size.numpy()) if isinstance(size, Tensor) else int(size)
                if size <= 0:
                    raise errors.InvalidArgumentError(
                        None, None, f"Window size must be greater than zero, but got {size}.")
                groups.setdefault(key, []).append(el)
                if len(groups[key]) >= size:
                    flush = key
                    break
            if flush is None:
                if not groups:
                    return
                flush = min(groups)
            yield from self._reduce(flush, groups.pop(flush))._elements()

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _spec(self):
        # reduce_func on an empty group: a batch/padded_batch knows its spec without elements
        try:
            return self._reduce(0, [])._spec()
        except (ValueError, TypeError, errors.OpError):
            return super()._spec()


def _bucket_by_sequence_length(ds, length_fn, boundaries, batch_sizes, padded_shapes, padding_values,
                               pad_to_boundary, no_padding, drop):
    """TF's composition: group_by_window keyed by bucket, each group padded_batch'ed."""
    def ints(v):
        return [int(x) for x in (v.numpy().tolist() if isinstance(v, Tensor) else v)]
    boundaries, sizes = ints(boundaries), ints(batch_sizes)
    if len(sizes) != len(boundaries) + 1:
        raise ValueError(f"`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                         f"`len(bucket_batch_sizes)={len(sizes)}` and `len(bucket_boundaries)={len(boundaries)}`.")
    lo = [int(np.iinfo(np.int32).min)] + boundaries
    hi = boundaries + [int(np.iinfo(np.int32).max)]

    def key(*args):
        n = length_fn(*args)
        n = int(n.numpy()) if isinstance(n, Tensor) else int(n)
        # TF: the first bucket i with lo[i] <= n < hi[i] (boundaries need not be sorted)
        for i, (a, b) in enumerate(zip(lo, hi)):
            if a <= n < b:
                return np.int64(i)
        raise errors.InvalidArgumentError(None, None, f"bucket_by_sequence_length: element length {n} is in no "
                                                      f"bucket of bucket_boundaries {boundaries}")

    def batching(bucket, group, for_spec=False):
        b = int(bucket.numpy())
        if no_padding:
            return group.batch(sizes[b], drop_remainder=drop)
        filler = None
        if pad_to_boundary and not for_spec:
            if b >= len(sizes) - 1:
                raise errors.InvalidArgumentError(None, None, "When pad_to_bucket_boundary=True, elements must have "
                                                              "length < max(bucket_boundaries).")
            filler = boundaries[b] - 1
        spec = group._spec()
        if padded_shapes is None:
            # padded_batch's default (every dimension: the batch's largest); with pad_to_bucket_boundary
            # the dimensions the spec leaves unknown are the bucket's. (A mapped dataset's spec is its
            # first element's, so there the sizes are the batch's: see docs/differences.md.)
            given = [None if sp.shape is None else tuple(sp.shape) for sp in nest.flatten(spec)]
            base = [None if g is None else (None,) * len(g) for g in given]
        else:
            base = [_padded_shape(x) for x in nest.flatten_up_to(spec, padded_shapes)]
            given = base
        shapes = [None if bs is None else tuple(filler if d is None and (gs[k] is None) else d
                                                for k, d in enumerate(bs))
                  for bs, gs in zip(base, given)]
        shapes = nest.pack_sequence_as(spec, shapes) if nest.is_nested(spec) else shapes[0]
        return group.padded_batch(sizes[b], shapes, padding_values, drop_remainder=drop)

    gbw = _GroupByWindowDataset(ds, key, batching, lambda b: sizes[int(b.numpy())])
    # TF's spec: a batch of unknown size (the bucket's), the padded dimensions unknown (they are the bucket's)
    gbw._spec = lambda: batching(Tensor(np.int64(0)), _VariantDataset([], ds._spec()), for_spec=True)._spec()
    return gbw


class _UniqueDataset(Dataset):
    def __init__(self, source):
        flat = nest.flatten(source._spec())
        if len(flat) != 1:
            raise errors.InvalidArgumentError(None, None, "UniqueDataset only supports inputs with a single component.")
        if flat[0].dtype.name not in ("int32", "int64", "string"):
            raise TypeError(f"`tf.data.Dataset.unique` does not support type {flat[0].dtype!r} -- only `tf.int32`, "
                            f"`tf.int64`, and `tf.string` are supported.")
        self._source = source

    def _elements(self):
        seen = set()
        for el in self._source._elements():
            a = np.asarray(nest.flatten(el)[0].numpy())
            k = (a.shape, a.tobytes() if a.dtype.kind != "O" else tuple(a.reshape(-1).tolist()))
            if k not in seen:
                seen.add(k)
                yield el

    def _cardinality(self):
        c = self._source._cardinality()
        return INFINITE_CARDINALITY if c == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _spec(self):
        return self._source._spec()


class _RandomDataset(_Seeded, Dataset):
    """Dataset.random: endless int64 scalars uniform in [0, 2**32) (TF's range: it yields a
    Philox uint32). tapeflow's own stream: a seeded run repeats, but not TF's numbers. As TF,
    a seeded one gives the same numbers each iteration unless rerandomize_each_iteration; an
    unseeded one new numbers each iteration."""

    def __init__(self, seed, rerandomize):
        self._init_seed(seed, rerandomize or seed is None)

    def _elements(self):
        return self._draws(self._rng())

    @staticmethod
    def _draws(rng):
        while True:
            for v in rng.integers(0, 2**32, size=256, dtype=np.int64):
                yield Tensor(v)

    def _cardinality(self):
        return INFINITE_CARDINALITY

    def _spec(self):
        from .compiler.function import TensorSpec
        return TensorSpec((), np.int64)


class _ShardDataset(Dataset):
    def __init__(self, source, n, index):
        self._source, self._n, self._index = source, n, index

    def _elements(self):
        return itertools.islice(self._source._elements(), self._index, None, self._n)

    def _cardinality(self):
        c = self._source._cardinality()
        return c if c < 0 else c // self._n + (self._index < c % self._n)

    def _spec(self):
        return self._source._spec()


class _RebatchDataset(Dataset):
    """rebatch: the input batches' rows, cut again into batches of ``batch_sizes`` (cycled), rows
    of consecutive input batches joining (TF's RebatchDatasetV2)."""

    def __init__(self, source, batch_sizes, drop):
        spec = source._spec()
        if any(sp.shape is not None and len(sp.shape) == 0 for sp in nest.flatten(spec)):
            raise ValueError("Invalid `batch_sizes`. Expected dataset with rank of >= 1 but found a dataset with "
                             "scalar elements. Fix the issue by adding the `batch` transformation to the dataset.")
        sizes = batch_sizes.numpy() if isinstance(batch_sizes, Tensor) else batch_sizes
        sizes = [int(x) for x in np.atleast_1d(np.asarray(sizes)).tolist()]
        if not sizes or any(x < 0 for x in sizes):
            # (TF 2.21 hangs on a negative size)
            raise errors.InvalidArgumentError(None, None, f"Dataset.rebatch: batch_sizes must be a non-empty list of "
                                                          f"sizes >= 0, got {sizes}")
        self._source, self._sizes, self._drop, self._spec_in = source, sizes, drop, spec

    def _elements(self):
        sizes = itertools.cycle(self._sizes)
        size = next(sizes)
        parts, rows, struct = [], 0, None   # parts: per input batch, its flat components (rows not yet given)
        for el in self._source._elements():
            struct = el
            flat = [t.numpy() for t in nest.flatten(el)]
            parts.append(flat)
            rows += flat[0].shape[0]
            while rows >= size:
                cat = [np.concatenate([p[i] for p in parts]) for i in range(len(flat))]
                yield nest.pack_sequence_as(struct, [Tensor(c[:size]) for c in cat])
                parts, rows = [[c[size:] for c in cat]], rows - size
                size = next(sizes)
        if rows and not self._drop:
            n = len(parts[0])
            yield nest.pack_sequence_as(struct, [Tensor(np.concatenate([p[i] for p in parts])) for i in range(n)])

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _spec(self):
        from .compiler.function import TensorSpec
        lead = self._sizes[0] if self._drop and len(set(self._sizes)) == 1 else None
        return nest.map_structure(lambda s: TensorSpec((lead,) + tuple(s.shape)[1:], s.dtype), self._spec_in)


class _TakeWhileDataset(Dataset):
    def __init__(self, source, predicate):
        self._source, self._pred = source, predicate

    def _elements(self):
        for el in self._source._elements():
            keep = _as_tensors(_apply(self._pred, el))
            if not isinstance(keep, Tensor) or keep.dtype.name != "bool" or keep.shape != ():
                raise ValueError(f"Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor but its "
                                 f"return type is {_spec_of(keep)!r}.")
            if not bool(keep.numpy()):
                return
            yield el

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _spec(self):
        return self._source._spec()


class _IgnoreErrorsDataset(Dataset):
    """ignore_errors: an element whose making raised a tf.errors error (TF's runtime errors, e.g. a
    failed check_numerics in a map, an unparsable CSV record) is dropped and the input goes on.
    map, filter and CsvDataset records continue after an error (``_PerElement``); where the error
    ended a transformation that cannot continue (a batch that was filling, a generator), this
    raises saying so rather than end the dataset early."""

    def __init__(self, source, log_warning):
        self._source, self._log = source, log_warning

    def _elements(self):
        it = self._source._elements()
        while True:
            try:
                el = next(it)
            except StopIteration:
                return
            except errors.OpError as e:
                if not _can_continue(it):
                    raise errors.UnimplementedError(
                        None, None, f"Dataset.ignore_errors: the error ({type(e).__name__}: {e}) ended a "
                                    "transformation that cannot go on after an error in tapeflow (map, filter and "
                                    "CsvDataset can); put ignore_errors right after the map/filter/CsvDataset that "
                                    "raises") from e
                if self._log:
                    logging.getLogger("tapeflow").warning("Ignoring error: %s: %s", type(e).__name__, e)
                continue
            yield el

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _spec(self):
        return self._source._spec()


def _check_interleave_inputs(datasets):
    datasets = list(datasets)
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    for d in datasets:
        if not isinstance(d, Dataset):
            raise TypeError(f"Invalid `datasets`. Expected a list of `tf.data.Dataset`, got {type(d).__name__}")
    specs = [d._spec() for d in datasets]
    keys = [nest.structure_key(sp, lambda x: x.dtype.name) for sp in specs]
    if any(k != keys[0] for k in keys):
        listing = "\n".join(f"Dataset {i} element_spec={sp!r}." for i, sp in enumerate(specs))
        raise TypeError(f"Invalid `datasets`. `datasets` must have compatible element specs.\n {listing}")
    return datasets


def _merged_spec(specs):
    """The most specific spec that all of ``specs`` fit (TF: sizes that differ become None, ranks
    that differ an unknown shape)."""
    from .compiler.function import TensorSpec

    def merge(*parts):
        shapes = [None if p.shape is None else tuple(p.shape) for p in parts]
        if any(s is None for s in shapes) or len({len(s) for s in shapes}) > 1:
            return TensorSpec(None, parts[0].dtype)
        return TensorSpec(tuple(d[0] if len(set(d)) == 1 else None for d in zip(*shapes)), parts[0].dtype)
    flat = [nest.flatten(sp) for sp in specs]
    return nest.pack_sequence_as(specs[0], [merge(*parts) for parts in zip(*flat)])


class _WeightedChoiceDataset(_Seeded, Dataset):
    """sample_from_datasets' selector: endless int64 indices drawn with probabilities proportional
    to ``weights`` (a list, or a dataset giving one weight vector per draw, as TF takes)."""

    def __init__(self, n, weights, seed, rerandomize):
        self._n, self._weights = n, weights
        self._source = weights if isinstance(weights, Dataset) else None
        self._init_seed(seed, rerandomize)

    def _elements(self):
        return self._draws(self._rng())

    def _draws(self, rng):
        if self._source is None:
            p = np.asarray(self._weights, np.float64)
            p = p / p.sum()
            while True:
                for i in rng.choice(self._n, size=256, p=p):
                    yield Tensor(np.int64(i))
        for w in self._source._elements():
            p = np.clip(np.asarray(w.numpy(), np.float64).ravel(), 0.0, None)
            if p.shape != (self._n,) or not p.sum() > 0:
                raise errors.InvalidArgumentError(
                    None, None, f"sample_from_datasets: each element of the `weights` dataset must be {self._n} "
                                f"weights with a positive sum, got {w.numpy().tolist()}")
            yield Tensor(np.int64(rng.choice(self._n, p=p / p.sum())))

    def _cardinality(self):
        return INFINITE_CARDINALITY if self._source is None else self._source._cardinality()

    def _spec(self):
        from .compiler.function import TensorSpec
        return TensorSpec((), np.int64)


class _DirectedInterleaveDataset(Dataset):
    """sample_from_datasets / choose_from_datasets (TF's DirectedInterleave): each index from the
    selector names the dataset that gives the next element. An exhausted dataset ends the whole
    dataset with stop_on_empty_dataset; otherwise its later turns are skipped, and the dataset
    ends when all inputs (or the selector) are exhausted."""

    def __init__(self, selector, datasets, stop):
        self._source, self._datasets, self._stop = selector, tuple(datasets), stop

    def _elements(self):
        its = [d._elements() for d in self._datasets]
        live = len(its)
        for sel in self._source._elements():
            i = int(sel.numpy())
            if not 0 <= i < len(its):
                raise errors.InvalidArgumentError(None, None, f"Selector index out of range: {i} >= {len(its)}")
            if its[i] is None:
                continue
            el = next(its[i], _END)
            if el is _END:
                if self._stop:
                    return
                its[i], live = None, live - 1
                if not live:
                    return
                continue
            yield el

    def _cardinality(self):
        # TF 2.21 says infinite whenever one input is; it is not when the selector ends or an
        # empty input stops it, so those are unknown here
        cs = [d._cardinality() for d in self._datasets]
        if self._source._cardinality() != INFINITE_CARDINALITY or (self._stop and any(c >= 0 for c in cs)):
            return UNKNOWN_CARDINALITY
        return INFINITE_CARDINALITY if INFINITE_CARDINALITY in cs else UNKNOWN_CARDINALITY

    def _spec(self):
        return _merged_spec([d._spec() for d in self._datasets])


def _acceptance(initial, target):
    """TF's _calculate_acceptance_probs_with_mixing: draw the original data with probability m,
    the rejection-filtered data (class c kept with probability a_c) otherwise, so that the mixture
    has the target distribution."""
    ratio = target / (initial + np.finfo(np.float32).tiny)   # tiny: a class never seen
    lo, hi = ratio.min(), ratio.max()
    with np.errstate(invalid="ignore", divide="ignore"):
        a = (ratio - lo) / (hi - lo)
    return a, lo


def _weight_pair(m):
    p = float(m.numpy())
    return Tensor(np.array([p, 1.0 - p], np.float32))


def _rejection_resample(ds, class_func, target_dist, initial_dist, seed):
    """TF's composition: a mixture (sample_from_datasets, stop_on_empty_dataset) of the data as it
    is and the data thinned by rejection, both as (class, element) pairs. Without initial_dist the
    class distribution is estimated as TF does: counts from 10 per class, updated per batch of 32."""
    target = np.asarray(target_dist.numpy() if isinstance(target_dist, Tensor) else target_dist, np.float32)
    k = target.shape[0]

    def with_class(*el):
        return (class_func(*el), el[0] if len(el) == 1 else el)

    classes = ds.map(class_func)
    if initial_dist is not None:
        init = np.asarray(initial_dist.numpy() if isinstance(initial_dist, Tensor) else initial_dist, np.float32)
        accept, m = _acceptance(init, target)
        if m >= 1:    # TF: the data already has the target distribution
            return ds.map(with_class)
        accept_ds = _TensorDataset(Tensor(accept)).repeat()
        weights = [float(m), 1.0 - float(m)]
    else:
        def estimate(counts, c):
            counts = counts.numpy() + np.bincount(c.numpy().astype(np.int64), minlength=k).astype(np.int64)
            dist = (counts / counts.sum()).astype(np.float32)
            return counts, Tensor(np.tile(dist, (32, 1)))
        initial_ds = classes.batch(32).scan(np.full(k, 10, np.int64), estimate).unbatch()
        pairs = initial_ds.map(lambda d: tuple(Tensor(np.asarray(v, np.float32))
                                               for v in _acceptance(d.numpy(), target)))
        accept_ds = pairs.map(lambda a, m: a)
        weights = pairs.map(lambda a, m: _weight_pair(m))
        m = None
    uniform = Dataset.random(seed)

    def keep(a, el, r):
        c = int(_as_tensors(_apply(class_func, el)).numpy())
        return Tensor(np.bool_(r.numpy() / 2.0**32 < a.numpy()[c]))

    original = ds.map(with_class)
    filtered = (_ZipDataset((accept_ds, ds, uniform)).filter(keep)
                .map(lambda a, el, r: with_class(*(el if isinstance(el, tuple) else (el,)))))
    filtered._spec = original._spec   # (its first elements may all be rejected: the spec is the pairs')
    if m is not None and m <= 0:    # TF: no class is over-represented enough to need the original data
        return filtered
    return Dataset.sample_from_datasets([original, filtered], weights=weights,
                                        seed=None if seed is None else seed + 1, stop_on_empty_dataset=True)


for _cls in (_TensorSliceDataset, _TensorDataset, _RangeDataset, _MapDataset, _FilterDataset,
             _BatchDataset, _UnbatchDataset, _ShuffleDataset, _RepeatDataset, _TakeDataset, _SkipDataset,
             _CacheDataset, _ConcatenateDataset, _WindowDataset, _VariantDataset, _PaddedBatchDataset,
             _ScanDataset, _GroupByWindowDataset, _UniqueDataset, _RandomDataset, _ShardDataset, _RebatchDataset,
             _TakeWhileDataset, _IgnoreErrorsDataset, _WeightedChoiceDataset, _DirectedInterleaveDataset):
    _cls._kind = _cls.__name__


def _file_reader(feature):
    class _Unsupported:
        def __init__(self, *args, **kwargs):
            raise NotImplementedError(
                f"tf.data.{feature}: file-reading tf.data is not supported by tapeflow (in-memory datasets only). "
                "Read the files with NumPy/Python and use Dataset.from_tensor_slices.")
    _Unsupported.__name__ = feature
    return _Unsupported


FixedLengthRecordDataset = _file_reader("FixedLengthRecordDataset")


def _filenames(filenames):
    if isinstance(filenames, Tensor):
        filenames = filenames.numpy().tolist()
    return [os.fspath(f.decode() if isinstance(f, bytes) else f)
            for f in ([filenames] if isinstance(filenames, (str, bytes, os.PathLike)) else filenames)]


def _string_scalar(b):
    a = np.empty((), object)
    a[()] = b
    return Tensor(a)


class TextLineDataset(Dataset):
    """``tf.data.TextLineDataset``: each line of the files (one after the other) as a tf.string
    scalar, without its line end ("\n", and a "\r" before it, as TF); the files are opened when
    iterated (a missing one is TF's NotFoundError then)."""

    _kind = "TextLineDataset"

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        if compression_type:
            raise NotImplementedError(f"TextLineDataset: compression_type={compression_type!r} is not supported; "
                                      "decompress the files first")
        self._files = _filenames(filenames)

    def _elements(self):
        for path in self._files:
            try:
                f = open(path, "rb")
            except FileNotFoundError:
                raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
            with f:
                for line in f:
                    if line.endswith(b"\n"):
                        line = line[:-1]
                        if line.endswith(b"\r"):
                            line = line[:-1]
                    yield _string_scalar(line)

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _spec(self):
        from .compiler.function import TensorSpec
        from .core import dtypes
        return TensorSpec((), dtypes.string)


class CsvDataset(Dataset):
    """``tf.data.experimental.CsvDataset``: the records of CSV files, one tuple of scalars per
    line, typed by ``record_defaults`` (a value: its dtype, and what an empty or ``na_value``
    field becomes; a dtype: a required column). TF's parsing rules and error texts: fields are
    parsed in order, an int column refuses "2.5", a record with too few fields is an error, the
    files are opened when iterated. A string column (a str default, or tf.string) gives the
    field's text as bytes."""

    _kind = "CsvDatasetV2"

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None, header=False,
                 field_delim=",", use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None,
                 name=None):
        from .compiler.function import TensorSpec
        from .core import dtypes
        if compression_type:
            raise NotImplementedError(f"CsvDataset: compression_type={compression_type!r} is not supported; "
                                      "decompress the files first")
        self._files = _filenames(filenames)
        self._defaults, specs = [], []
        for i, d in enumerate(record_defaults):
            if isinstance(d, (list, tuple)) and len(d) == 1:   # TF1's [[0.0]] form
                d = d[0]
            if isinstance(d, (dtypes.DType, type, np.dtype)) and not isinstance(d, Tensor):
                t, value = dtypes.as_dtype(d), None
            else:
                tensor = d if isinstance(d, Tensor) else convert_to_tensor(d)
                t, value = tensor.dtype, tensor.numpy()
            if t.name not in ("float32", "float64", "int32", "int64", "string"):
                raise TypeError(f"CsvDataset: record_defaults[{i}] has dtype {t.name}; TF's CsvDataset takes "
                                "float32, float64, int32, int64 or string")
            self._defaults.append((t, value))
            specs.append(TensorSpec((), t))
        self._spec_value = tuple(specs)
        n = len(self._defaults)
        if select_cols is not None and exclude_cols is not None:
            raise errors.InvalidArgumentError(None, None, "select_cols should match output size")
        cols = select_cols if select_cols is not None else exclude_cols
        cols = None if cols is None else [int(c) for c in cols]
        if cols is not None and any(b <= a for a, b in zip(cols, cols[1:])):
            what = "select_cols" if select_cols is not None else "exclude_cols"
            raise errors.InvalidArgumentError(None, None, f"{what} should be strictly increasing indices")
        if select_cols is not None and len(cols) != n:
            raise errors.InvalidArgumentError(None, None, "select_cols should match output size")
        # (the excluded columns as a set once, not per line)
        if select_cols is not None:
            self._select, self._exclude = cols, None
        else:
            self._select, self._exclude = None, None if cols is None else set(cols)
        self._header, self._delim, self._quote, self._na = bool(header), field_delim, bool(use_quote_delim), na_value

    def _fields(self, line):
        if not self._quote:
            return line.split(self._delim)
        return next(csv.reader([line], delimiter=self._delim)) or [""]

    def _parse(self, k, text):
        t, value = self._defaults[k]
        v = _csv_field_value(k, text, t.np, value, self._na)
        return _string_scalar(v) if t.np.kind == "O" else Tensor(np.asarray(v, t.np))

    def _elements(self):
        # records are parsed per element, so an unparsable one is that element's error and
        # ignore_errors can skip it (TF's idiom for dirty CSV files)
        return _PerElement(self._records(), self._parse_record)

    def _parse_record(self, picked):
        n = len(self._defaults)
        out = [self._parse(k, x) for k, x in enumerate(picked[:n])]
        if len(picked) != n:
            raise errors.InvalidArgumentError(None, None, f"Expect {n} fields but have {len(picked)} in record ")
        return tuple(out)

    def _records(self):
        for path in self._files:
            try:
                f = open(path, newline="")
            except FileNotFoundError:
                raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
            with f:
                lines = iter(f)
                if self._header:
                    next(lines, None)
                for line in lines:
                    fields = self._fields(line.rstrip("\r\n"))
                    if self._select is not None:
                        picked = [fields[c] for c in self._select if c < len(fields)]
                    elif self._exclude is not None:
                        picked = [x for c, x in enumerate(fields) if c not in self._exclude]
                    else:
                        picked = fields
                    yield picked

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _spec(self):
        return self._spec_value


def _csv_field_value(k, text, np_dtype, default, na_value):
    """Field ``k`` of a CSV record as TF's CSV parsers read it (CsvDataset, tf.io.decode_csv): an
    empty or ``na_value`` field is the column's default (None: required), a string column keeps the
    text (bytes), numbers parse as C's strtol/strtod do, else TF's InvalidArgumentError."""
    if text == "" or text == na_value:
        if default is None:
            raise errors.InvalidArgumentError(None, None, f"Field {k} is required but missing in record!")
        return default
    if np_dtype.kind == "O":   # a string column: the field's text
        return text.encode()
    try:
        if "_" in text:   # Python's numeric literals allow 1_000; C's strtod/strtol, which TF uses, do not
            raise ValueError
        if np_dtype.kind == "i":
            v = int(text)
            info = np.iinfo(np_dtype)
            if not info.min <= v <= info.max:
                raise ValueError
        else:
            v = float(text)
    except ValueError:
        kind = np_dtype.name if np_dtype.kind == "i" else ("float" if np_dtype == np.float32 else "double")
        raise errors.InvalidArgumentError(None, None, f"Field {k} in record is not a valid {kind}: {text}") from None
    return v


def _csv_fields(line, delim, quote):
    return next(csv.reader([line], delimiter=delim)) if quote else line.split(delim)


def _infer_csv_type(text, na_value, prev):
    """TF's _infer_type: the narrowest of int32, int64, float32, float64, string that holds every
    value seen so far (an empty or na_value field says nothing)."""
    order = ("int32", "int64", "float32", "float64", "string")
    if text in ("", na_value):
        return prev
    for t in order[0 if prev is None else order.index(prev):]:
        try:
            if t in ("int32", "int64"):
                v = int(text)
                info = np.iinfo(t)
                if info.min <= v <= info.max:
                    return t
            elif t == "float32":
                with np.errstate(over="ignore"):
                    if np.float32(text) < np.inf:
                        return t
            elif t == "float64":
                if np.float64(text) < np.inf:
                    return t
        except ValueError:
            continue
    return "string"


def _read_files(files, read, reads, shuffle, shuffle_seed, shuffle_buffer_size, num_epochs):
    """TF's file-reading front of make_csv_dataset and make_batched_features_dataset: the files
    (shuffled), read one after another or ``reads`` interleaved, the records shuffled, repeated."""
    ds = Dataset.range(len(files))
    if shuffle:
        ds = ds.shuffle(len(files), shuffle_seed)
    ds = ds.flat_map(read) if reads == 1 else ds.interleave(read, cycle_length=reads)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    return ds


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False, num_rows_for_inference=100,
                     compression_type=None, ignore_errors=False, encoding="utf-8"):
    """``tf.data.experimental.make_csv_dataset``: batches of (OrderedDict of feature columns, label)
    read from CSV files, built as TF builds it: the files (sorted, or shuffled), read one after the
    other (``num_parallel_reads`` > 1: interleaved), shuffled and repeated, batched (the last batch
    dropped when ``num_epochs`` is None, as TF), turned into dicts. Column types are inferred from
    the first ``num_rows_for_inference`` rows as TF does (int32, int64, float32, float64, string)."""
    import glob
    if compression_type:
        raise NotImplementedError(f"make_csv_dataset: compression_type={compression_type!r} is not supported; "
                                  "decompress the files first")
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes, os.PathLike)) else list(file_pattern)
    files = []
    for pat in patterns:
        pat = os.fspath(pat.decode() if isinstance(pat, bytes) else pat)
        files.extend(glob.glob(pat))
    if not files:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    files = sorted(files)   # TF sorts them unless it shuffles them

    def rows(limit):
        n = 0
        for path in files:
            with open(path, newline="", encoding=encoding) as f:
                for k, line in enumerate(f):
                    if header and k == 0:
                        continue
                    if n >= limit:
                        return
                    n += 1
                    yield k + 1, _csv_fields(line.rstrip("\r\n"), field_delim, use_quote_delim)

    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is provided.")
        with open(files[0], newline="", encoding=encoding) as f:
            column_names = _csv_fields(f.readline().rstrip("\r\n"), field_delim, use_quote_delim)
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise ValueError("Cannot have duplicate column names.")
    if select_columns is not None:
        idx = []
        for c in select_columns:
            if isinstance(c, (int, np.integer)):
                if not 0 <= c < len(column_names):
                    raise ValueError(f"Column index {c} specified in `select_columns` should be >= 0 and less "
                                     f"than the number of columns {len(column_names)}.")
                idx.append(int(c))
            elif c in column_names:
                idx.append(column_names.index(c))
            else:
                raise ValueError(f"Column {c} specified in `select_columns` must be of one of the columns: "
                                 f"{dict.fromkeys(column_names).keys()}.")
        idx = sorted(idx)   # TF keeps the file's column order
    else:
        idx = list(range(len(column_names)))
    names = [column_names[i] for i in idx]
    if label_name is not None and label_name not in names:
        raise ValueError(f"`label_name` provided must be one of the columns: {names}. Received: {label_name}.")
    if column_defaults is None:
        types = [None] * len(column_names)
        for line_no, fields in rows(num_rows_for_inference):
            if len(fields) != len(column_names):
                raise ValueError(f"Problem inferring types: CSV row {line_no} has {len(fields)} number of fields. "
                                 f"Expected: {len(column_names)}.")
            for i in idx:
                types[i] = _infer_csv_type(fields[i], na_value, types[i])
        types = [types[i] or "string" for i in idx]
        column_defaults = [_string_scalar(b"") if t == "string" else np.zeros((), t) for t in types]
    elif len(column_defaults) != len(idx):
        raise ValueError(f"make_csv_dataset: {len(column_defaults)} column_defaults for {len(idx)} columns "
                         f"({names}); give one per selected column")
    reads = 1 if num_parallel_reads in (None, AUTOTUNE) else int(num_parallel_reads)

    def read(i):
        ds = CsvDataset(files[int(i)], column_defaults, header=header, field_delim=field_delim,
                        use_quote_delim=use_quote_delim, na_value=na_value,
                        select_cols=idx if select_columns is not None else None)
        return ds.ignore_errors() if ignore_errors else ds

    ds = _read_files(files, read, reads, shuffle, shuffle_seed, shuffle_buffer_size, num_epochs)
    ds = ds.batch(batch_size, drop_remainder=num_epochs is None)

    def to_dict(*cols):
        import collections
        features = collections.OrderedDict(zip(names, cols))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    from .compiler.function import TensorSpec
    lead = batch_size if ds._drop else None
    col_specs = [TensorSpec((lead,), sp.dtype) for sp in read(0)._spec()]
    out = ds.map(to_dict)
    out._spec = lambda: to_dict(*col_specs)   # (a map's spec would be its first batch's)
    out._kind = "_PrefetchDataset"   # (TF's last step; prefetch is a no-op here)
    return out


_SAVE_SPEC, _SAVE_DATA = "dataset_spec.json", "elements.npz"


def _spec_to_json(sp):
    from .compiler.function import TensorSpec
    if isinstance(sp, dict):
        if not all(isinstance(k, str) for k in sp):
            raise TypeError(f"Dataset.save: dict keys must be strings to be saved, got {list(sp)}")
        return {"dict": [[k, _spec_to_json(v)] for k, v in sp.items()]}
    if isinstance(sp, tuple) and hasattr(sp, "_fields"):
        return {"namedtuple": type(sp).__name__, "fields": list(sp._fields), "items": [_spec_to_json(v) for v in sp]}
    if isinstance(sp, tuple):
        return {"tuple": [_spec_to_json(v) for v in sp]}
    if isinstance(sp, TensorSpec):
        return {"shape": None if sp.shape is None else [None if d is None else int(d) for d in sp.shape],
                "dtype": sp.dtype.name}
    raise NotImplementedError(f"Dataset.save: elements with a {type(sp).__name__} (e.g. window's nested datasets) "
                              "cannot be saved; flatten them first (flat_map/batch)")


def _spec_from_json(j):
    import collections
    from .compiler.function import TensorSpec
    from .core import dtypes
    if "dict" in j:
        return {k: _spec_from_json(v) for k, v in j["dict"]}
    if "namedtuple" in j:
        return collections.namedtuple(j["namedtuple"], j["fields"])(*[_spec_from_json(v) for v in j["items"]])
    if "tuple" in j:
        return tuple(_spec_from_json(v) for v in j["tuple"])
    return TensorSpec(None if j["shape"] is None else tuple(j["shape"]), dtypes.as_dtype(j["dtype"]))


def _save(ds, path, compression, checkpoint_args):
    """Dataset.save in tapeflow's own format (not TF's snapshot files): a directory holding
    ``dataset_spec.json`` (the element structure and specs) and ``elements.npz`` (each element's
    components, "element/component"), written to temporary names and renamed, so a reader never
    sees half a save. compression="GZIP" compresses the npz."""
    import json
    if checkpoint_args is not None:
        raise NotImplementedError("Dataset.save: checkpoint_args (resumable saves) are not supported by tapeflow; "
                                  "save without them")
    if compression not in (None, "", "GZIP", "NONE"):
        raise errors.InvalidArgumentError(None, None, f"Dataset.save: compression must be None or 'GZIP', "
                                                      f"got {compression!r}")
    spec_json = json.dumps(_spec_to_json(ds._spec()))
    arrays, n = {}, 0
    for n, el in enumerate(ds._elements(), 1):
        for j, t in enumerate(nest.flatten(el)):
            arrays[f"{n - 1}/{j}"] = t.numpy()
    os.makedirs(path, exist_ok=True)
    arrays["count"] = np.int64(n)
    tmp = os.path.join(path, _SAVE_DATA + ".tmp.npz")
    (np.savez_compressed if compression == "GZIP" else np.savez)(tmp, **arrays)
    os.replace(tmp, os.path.join(path, _SAVE_DATA))
    with open(os.path.join(path, _SAVE_SPEC + ".tmp"), "w") as f:
        f.write(spec_json)
    os.replace(os.path.join(path, _SAVE_SPEC + ".tmp"), os.path.join(path, _SAVE_SPEC))


class _LoadDataset(Dataset):
    """Dataset.load of a directory written by Dataset.save (tapeflow's format); the elements are
    read from the file as they are iterated."""

    _kind = "_LoadDataset"

    def __init__(self, path, element_spec):
        import json
        path = os.fspath(path)
        spec_file, data_file = os.path.join(path, _SAVE_SPEC), os.path.join(path, _SAVE_DATA)
        if not (os.path.exists(spec_file) and os.path.exists(data_file)):
            raise errors.NotFoundError(None, None, f"Dataset.load: no dataset saved by tapeflow's Dataset.save at "
                                                   f"{path} (expected {_SAVE_SPEC} and {_SAVE_DATA}); TF's snapshot "
                                                   "files are not read")
        with open(spec_file) as f:
            saved = _spec_from_json(json.load(f))
        self._spec_value = saved if element_spec is None else element_spec
        self._file = data_file
        with np.load(data_file) as z:
            self._n = int(z["count"])
        self._struct = saved

    def _elements(self):
        k = len(nest.flatten(self._struct))
        with np.load(self._file) as z:
            for i in range(self._n):
                yield nest.pack_sequence_as(self._struct, [Tensor(z[f"{i}/{j}"]) for j in range(k)])

    def _cardinality(self):
        return self._n

    def _spec(self):
        return self._spec_value


# -- tf.data.Options ----------------------------------------------------------------------------
# TF's options tune its C++ runtime (threads, graph rewrites, autotuning, sharding under a
# distribution strategy). tapeflow's datasets are Python generators run in order in this process:
# the options are kept, type-checked and merged as TF does (ported code sets them and reads them
# back), and change nothing about the elements.

class AutoShardPolicy(enum.IntEnum):
    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.IntEnum):
    WARN = 0
    IGNORE = 1
    FAIL = 2


class AutotuneAlgorithm(enum.IntEnum):
    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class _OptionsBase:
    """TF's OptionsBase: a fixed set of typed properties, None until set."""
    _FIELDS: dict = {}     # name -> (type, default); a type that is an _OptionsBase is a group
    _ALIASES: dict = {}

    def __init__(self):
        for k, (typ, default) in self._FIELDS.items():
            self.__dict__["_" + k] = typ() if _is_group(typ) else default

    def __getattr__(self, name):
        name = type(self)._ALIASES.get(name, name)
        if name in type(self)._FIELDS:
            return self.__dict__["_" + name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        name = self._ALIASES.get(name, name)
        if name not in self._FIELDS:
            # TF 2.21: AttributeError "Cannot set the property foo on Options."
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        typ = self._FIELDS[name][0]
        ok = value is None or (isinstance(value, typ) and not (typ is int and isinstance(value, bool)))
        if not ok or (_is_group(typ) and value is None):
            # TF 2.21: TypeError 'Property "deterministic" must be of type <class 'bool'>, got: 3 ...'
            raise TypeError(f'Property "{name}" must be of type {typ}, got: {value!r} (type: {type(value)})')
        self.__dict__["_" + name] = value

    def __eq__(self, other):
        if type(self) is not type(other):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self._FIELDS)

    __hash__ = None

    def _merged(self, other):
        """``self`` with the fields ``other`` sets (not None) taking precedence."""
        out = type(self)()
        for k, (typ, _) in self._FIELDS.items():
            a, b = getattr(self, k), getattr(other, k)
            if _is_group(typ):
                out.__dict__["_" + k] = a._merged(b)
            else:
                out.__dict__["_" + k] = a if b is None or b == self._FIELDS[k][1] and a is not None else b
        return out


def _is_group(typ):
    return isinstance(typ, type) and issubclass(typ, _OptionsBase)


class AutotuneOptions(_OptionsBase):
    _FIELDS = {"autotune_algorithm": (AutotuneAlgorithm, None), "cpu_budget": (int, None),
               "enabled": (bool, None), "initial_parallelism": (int, None), "min_parallelism": (int, None),
               "ram_budget": (int, None)}


class DistributeOptions(_OptionsBase):
    _FIELDS = {"auto_shard_policy": (AutoShardPolicy, AutoShardPolicy.AUTO), "num_devices": (int, None)}


class OptimizationOptions(_OptionsBase):
    _FIELDS = {k: (bool, None) for k in (
        "apply_default_optimizations", "filter_fusion", "filter_parallelization", "inject_prefetch",
        "map_and_batch_fusion", "map_and_filter_fusion", "map_fusion", "map_parallelization",
        "noop_elimination", "parallel_batch", "seq_interleave_prefetch", "shuffle_and_repeat_fusion")}


class ThreadingOptions(_OptionsBase):
    _FIELDS = {"max_intra_op_parallelism": (int, None), "private_threadpool_size": (int, None)}


class Options(_OptionsBase):
    """``tf.data.Options``: see the note above; ``Dataset.with_options`` / ``Dataset.options``."""
    _FIELDS = {"autotune": (AutotuneOptions, None), "dataset_name": (str, None), "deterministic": (bool, None),
               "experimental_distribute": (DistributeOptions, None),
               "experimental_external_state_policy": (ExternalStatePolicy, None),
               "experimental_optimization": (OptimizationOptions, None), "experimental_slack": (bool, None),
               "experimental_symbolic_checkpoint": (bool, None), "experimental_warm_start": (bool, None),
               "framework_type": (list, None), "threading": (ThreadingOptions, None)}
    _ALIASES = {"experimental_deterministic": "deterministic", "experimental_threading": "threading"}


class _OptionsDataset(Dataset):
    def __init__(self, source, options):
        self._source, self._own_options = source, options

    def _elements(self):
        return self._source._elements()

    def _cardinality(self):
        return self._source._cardinality()

    def _spec(self):
        return self._source._spec()


class _AssertCardinalityDataset(Dataset):
    """``tf.data.experimental.assert_cardinality(n)``: the source's elements, and TF's
    FailedPreconditionError when they turn out to be more or fewer than ``n``."""

    def __init__(self, source, expected):
        self._source, self._expected = source, _int_arg("assert_cardinality", expected, allow_negative=True)

    def _elements(self):
        n, want = 0, self._expected
        for el in self._source._elements():
            n += 1
            if 0 <= want < n:
                # TF 2.21: "Input dataset was expected to contain 4 elements but contained at least 5 elements."
                raise errors.FailedPreconditionError(
                    None, None, f"Input dataset was expected to contain {want} elements but contained at least "
                    f"{n} elements.")
            yield el
        if want != INFINITE_CARDINALITY and n < want:
            raise errors.FailedPreconditionError(
                None, None, f"Input dataset was expected to contain {want} elements but contained only {n} "
                "elements.")

    def _cardinality(self):
        return self._expected

    def _spec(self):
        return self._source._spec()


class _DatasetTFRecordWriter:
    """``tf.data.experimental.TFRecordWriter(filename, compression_type=None)``: ``write(dataset)``
    writes each scalar string element as one record (tf.io.TFRecordWriter's framing and zlib settings,
    so TF's bytes); returns None, as TF 2.21's eager write."""

    def __init__(self, filename, compression_type=None):
        self._filename, self._compression = filename, compression_type

    def write(self, dataset):
        from .compiler.function import TensorSpec as _Spec
        from .io import TFRecordWriter as _Writer
        if not isinstance(dataset, Dataset):
            # TF 2.21's TypeError and text
            raise TypeError(f"Invalid `dataset.` Expected a `tf.data.Dataset` object but got {type(dataset)}.")
        spec = dataset.element_spec
        if not (isinstance(spec, _Spec) and spec.dtype.is_string and tuple(spec.shape) == ()):
            shapes = getattr(spec, "shape", None)
            types = getattr(spec, "dtype", None)
            raise TypeError("Invalid `dataset`. Expected a`dataset` that produces scalar `tf.string` elements, but got "
                            f"a dataset which produces elements with shapes {shapes} and types {types!r}.")
        with _Writer(self._filename, self._compression or None) as w:
            for x in dataset:
                w.write(x)
        return None


class _Reducer:
    """``tf.data.experimental.Reducer(init_func, reduce_func, finalize_func)``: a group's state from
    its key, folded over its elements, then finalized (group_by_reducer's argument)."""

    def __init__(self, init_func, reduce_func, finalize_func):
        self.init_func, self.reduce_func, self.finalize_func = init_func, reduce_func, finalize_func


def _group_by_reducer(dataset, key_func, reducer):
    """One element per key: the reducer's finalized state. Computed when applied (one pass over the
    dataset, which must be finite), groups in order of their first element (TF's order is its hash
    map's, unspecified)."""
    states, order = {}, []
    for el in dataset._elements():
        args = el if isinstance(el, tuple) else (el,)
        key = int(np.asarray(convert_to_tensor(key_func(*args)).numpy()))
        if key not in states:
            order.append(key)
            states[key] = _as_tensors(reducer.init_func(convert_to_tensor(np.int64(key))))
        states[key] = _as_tensors(reducer.reduce_func(states[key], *args))
    outs = [_as_tensors(reducer.finalize_func(states[k])) for k in order]
    if not outs:
        raise ValueError("group_by_reducer of an empty dataset: no element gives the output structure")
    ds = Dataset.from_tensors(outs[0])
    for o in outs[1:]:
        ds = ds.concatenate(Dataset.from_tensors(o))
    return ds


def _pad_to_cardinality(dataset, cardinality, mask_key):
    spec = dataset.element_spec
    if not isinstance(spec, dict):
        raise ValueError("`pad_to_cardinality` requires its input dataset to be a dictionary.")
    n = dataset._cardinality()
    if n < 0:
        raise ValueError("The dataset passed into `pad_to_cardinality` must have a known cardinalty, but has "
                         f"cardinality {n}")
    if n > cardinality:
        raise ValueError("The dataset passed into `pad_to_cardinality` must have a cardinalty less than the target "
                         f"cardinality ({cardinality}), but has cardinality {n}")
    valid = dataset.map(lambda x: {**x, mask_key: convert_to_tensor(True)})
    if n == cardinality:
        return valid
    from .ops import array_ops as _A
    pad = {k: _A.zeros([d if d is not None else 0 for d in v.shape], v.dtype) for k, v in spec.items()}
    pad[mask_key] = convert_to_tensor(False)
    return valid.concatenate(Dataset.from_tensors(pad).repeat(cardinality - n))


def make_batched_features_dataset(file_pattern, batch_size, features, reader=None, label_key=None, reader_args=None,
                                  num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                                  prefetch_buffer_size=None, reader_num_threads=None, parser_num_threads=None,
                                  sloppy_ordering=False, drop_final_batch=False):
    """``tf.data.experimental.make_batched_features_dataset``: batches of parsed ``tf.train.Example`` s
    (a dict of ``features``, or ``(dict, label)`` with ``label_key``) from TFRecord files, built as
    TF builds it: the files (sorted, or shuffled), read one after the other (``reader_num_threads``
    > 1: interleaved), shuffled and repeated, batched, then ``io.parse_example`` per batch."""
    import glob
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes, os.PathLike)) else list(file_pattern)
    files = []
    for pat in patterns:
        pat = os.fspath(pat.decode() if isinstance(pat, bytes) else pat)
        files.extend(glob.glob(pat))
    if not files:   # TF 2.21: InvalidArgumentError (list_files' assertion)
        raise errors.InvalidArgumentError(None, None, f"No files matched pattern: {', '.join(map(str, patterns))}")
    files = sorted(files)   # TF sorts them unless it shuffles them
    if label_key is not None and label_key not in features:
        raise ValueError(f"The `label_key` provided ({label_key}) must be one of the `features` keys: "
                         f"{features.keys()}.")
    reader = TFRecordDataset if reader is None else reader
    reads = 1 if reader_num_threads in (None, AUTOTUNE) else int(reader_num_threads)

    def read(i):
        return reader(files[int(i)], *(reader_args or []))

    ds = _read_files(files, read, reads, shuffle, shuffle_seed, shuffle_buffer_size, num_epochs)
    ds = ds.batch(batch_size, drop_remainder=drop_final_batch)
    from .io import parse_example
    ds = ds.map(lambda x: parse_example(x, features))
    if label_key is not None:
        ds = ds.map(lambda d: ({k: v for k, v in d.items() if k != label_key}, d[label_key]))
    return ds


class _ExperimentalNamespace(type):
    """``tf.data.experimental`` is a class; its out-of-scope names (``_unsupported.NAMES``) say so when
    looked up, any other missing name is a plain AttributeError."""

    def __getattr__(cls, name):
        from ._unsupported import NAMES, unsupported_name
        if f"data.experimental.{name}" in NAMES:
            raise unsupported_name(f"data.experimental.{name}")
        raise AttributeError(f"type object 'experimental' has no attribute {name!r}")


class experimental(metaclass=_ExperimentalNamespace):  # noqa: N801  (tf.data.experimental namespace)
    # (@_deprecated: TF 2.21 logs its deprecation line on the first call of each of these; the
    # Dataset methods they point to are the same code here)
    TFRecordWriter = _DatasetTFRecordWriter
    Optional = Optional
    Reducer = _Reducer

    @staticmethod
    @_deprecated
    def get_next_as_optional(iterator):
        return iterator.get_next_as_optional()

    @staticmethod
    @_deprecated
    def snapshot(path, compression="AUTO", reader_func=None, shard_func=None):
        return lambda ds: ds.snapshot(path, compression, reader_func, shard_func)

    @staticmethod
    def group_by_reducer(key_func, reducer):
        return lambda ds: _group_by_reducer(ds, key_func, reducer)

    @staticmethod
    def pad_to_cardinality(cardinality, mask_key="valid"):
        """TF 2.21: dict elements gain ``mask_key`` (True), then zero elements (False) up to ``cardinality``."""
        return lambda ds: _pad_to_cardinality(ds, int(cardinality), mask_key)

    @staticmethod
    @_deprecated
    def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
        """``ds.map(lambda s: tf.io.parse_example(s, features))`` (TF 2.21's deprecation note's spelling)."""
        from .io import parse_example
        return lambda ds: ds.map(lambda s: parse_example(s, features))
    AUTOTUNE = AUTOTUNE
    AutotuneAlgorithm = AutotuneAlgorithm
    SHARD_HINT = -1   # TF 2.21: tf.data.experimental.SHARD_HINT == -1 (a placeholder for shard's num_shards)
    AutoShardPolicy = AutoShardPolicy
    ExternalStatePolicy = ExternalStatePolicy
    AutotuneOptions = AutotuneOptions
    DistributeOptions = DistributeOptions
    OptimizationOptions = OptimizationOptions
    ThreadingOptions = ThreadingOptions
    CsvDataset = CsvDataset
    # tables built from datasets (tapeflow/lookup.py; TF 2.21 keeps them here, not in tf.lookup)
    DatasetInitializer = _lookup.DatasetInitializer
    table_from_dataset = staticmethod(_lookup.table_from_dataset)
    index_table_from_dataset = staticmethod(_lookup.index_table_from_dataset)
    INFINITE_CARDINALITY = INFINITE_CARDINALITY
    UNKNOWN_CARDINALITY = UNKNOWN_CARDINALITY

    @staticmethod
    def cardinality(dataset):
        return dataset.cardinality()

    # the older spellings: transformations for Dataset.apply (TF 2.21 keeps them, deprecated)
    @staticmethod
    @_deprecated
    def scan(initial_state, scan_func):
        return lambda ds: ds.scan(initial_state, scan_func)

    @staticmethod
    @_deprecated
    def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
        return lambda ds: ds.group_by_window(key_func, reduce_func, window_size, window_size_func)

    @staticmethod
    @_deprecated
    def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=None,
                                  padding_values=None, pad_to_bucket_boundary=False, no_padding=False,
                                  drop_remainder=False):
        return lambda ds: ds.bucket_by_sequence_length(
            element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes, padding_values,
            pad_to_bucket_boundary, no_padding, drop_remainder)

    @staticmethod
    @_deprecated
    def unique():
        return lambda ds: ds.unique()

    @staticmethod
    @_deprecated
    def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=None):
        return lambda ds: ds.ragged_batch(batch_size, drop_remainder, row_splits_dtype)

    @staticmethod
    @_deprecated
    def dense_to_sparse_batch(batch_size, row_shape):
        return lambda ds: ds.sparse_batch(batch_size, row_shape)

    @staticmethod
    @_deprecated
    def take_while(predicate):
        return lambda ds: ds.take_while(predicate)

    @staticmethod
    @_deprecated
    def ignore_errors(log_warning=False):
        return lambda ds: ds.ignore_errors(log_warning)

    @staticmethod
    @_deprecated
    def get_single_element(dataset):
        return dataset.get_single_element()

    @staticmethod
    @_deprecated
    def Counter(start=0, step=1, dtype=None):  # noqa: N802 (TF's name)
        return Dataset.counter(start, step, dtype)

    @staticmethod
    @_deprecated
    def RandomDataset(seed=None):  # noqa: N802 (TF's name)
        return Dataset.random(seed)

    @staticmethod
    @_deprecated
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
        return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)

    @staticmethod
    @_deprecated
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)

    make_csv_dataset = staticmethod(make_csv_dataset)
    make_batched_features_dataset = staticmethod(make_batched_features_dataset)

    @staticmethod
    @_deprecated
    def save(dataset, path, compression=None, shard_func=None, checkpoint_args=None):
        dataset.save(path, compression, shard_func, checkpoint_args)

    @staticmethod
    @_deprecated
    def load(path, element_spec=None, compression=None, reader_func=None):
        return Dataset.load(path, element_spec, compression, reader_func)

    @staticmethod
    @_deprecated
    def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
        return lambda ds: ds.rejection_resample(class_func, target_dist, initial_dist, seed)

    # wave 20 (benchmarks/tf_api_surface.py): the rest of TF 2.21's transformations for Dataset.apply
    # that compose existing ones
    @staticmethod
    @_deprecated
    def shuffle_and_repeat(buffer_size, count=None, seed=None):
        # TF 2.21 gives ds.shuffle(buffer_size, seed).repeat(count)'s order (seed=7 over range(6), count=2)
        return lambda ds: ds.shuffle(buffer_size, seed=seed).repeat(count)

    @staticmethod
    def assert_cardinality(expected_cardinality):
        return lambda ds: _AssertCardinalityDataset(ds, expected_cardinality)

    @staticmethod
    @_deprecated
    def unbatch():
        return lambda ds: ds.unbatch()

    @staticmethod
    @_deprecated
    def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                      num_parallel_calls=None):
        return lambda ds: ds.map(map_func).batch(batch_size, drop_remainder=drop_remainder)

    @staticmethod
    @_deprecated
    def enumerate_dataset(start=0):
        return lambda ds: ds.enumerate(start)

    @staticmethod
    @_deprecated
    def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False, buffer_output_elements=None,
                            prefetch_input_elements=None):
        # elements are made in this process one at a time: the deterministic (sloppy=False) order
        return lambda ds: ds.interleave(map_func, cycle_length, block_length)

    @staticmethod
    def copy_to_device(target_device, source_device="/cpu:0"):
        return lambda ds: ds   # one device (the CPU): nothing to copy

    @staticmethod
    def prefetch_to_device(device, buffer_size=None):
        return lambda ds: ds.prefetch(AUTOTUNE if buffer_size is None else buffer_size)

    @staticmethod
    def enable_debug_mode():
        pass   # tapeflow's pipelines already run in Python, element by element, in order

    @staticmethod
    def get_structure(dataset_or_iterator):
        spec = getattr(dataset_or_iterator, "element_spec", None)
        if spec is None or not isinstance(dataset_or_iterator, (Dataset, Iterator)):
            # TF 2.21's TypeError message
            raise TypeError("Invalid `dataset_or_iterator`. `dataset_or_iterator` must be a `tf.data.Dataset` or "
                            f"tf.data.Iterator object, but got {type(dataset_or_iterator)}.")
        return spec

    @staticmethod
    def from_list(elements, name=None):
        elements = list(elements)
        if not elements:
            raise ValueError("Invalid `elements`. `elements` should not be empty. If you want an empty dataset, use "
                             "`tf.data.Dataset.range(0)`.")
        # the elements as rows: each component stacked (TF converts each element, then checks they match)
        flat = [nest.flatten(e) for e in elements]
        cols = [_as_tensors(list(c)) for c in zip(*flat)]
        return Dataset.from_tensor_slices(nest.pack_sequence_as(elements[0], cols))

    @staticmethod
    def at(dataset, index):
        i = int(index)
        n = dataset._cardinality()
        if i < 0 or (n >= 0 and i >= n):
            # TF 2.21: OutOfRangeError "Index out of range [0, 6):10"
            raise errors.OutOfRangeError(None, None, f"Index out of range [0, {n}):{i}")
        count = 0
        for el in dataset._elements():
            if count == i:
                return el
            count += 1
        raise errors.OutOfRangeError(None, None, f"Index out of range [0, {count}):{i}")


class TFRecordDataset(Dataset):
    """``tf.data.TFRecordDataset``: each record of TFRecord files (one after the other) as a tf.string
    scalar; ``compression_type`` '', 'GZIP' or 'ZLIB'; ``buffer_size`` and ``num_parallel_reads`` are
    accepted (a parallel read yields the sequential order). ``filenames``: a path, a list, a string
    tensor or a dataset of strings. Files are opened when iterated: a missing one is TF's
    NotFoundError, a corrupt record TF's DataLossError (tapeflow/io.py ``read_records``)."""

    _kind = "TFRecordDatasetV2"

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        from .io import _compression
        self._compression = _compression(compression_type)
        if isinstance(filenames, Dataset):
            filenames = [t.numpy() for t in filenames]
        self._files = _filenames(filenames)

    def _elements(self):
        from .io import read_records
        for path in self._files:
            for rec in read_records(path, self._compression):
                yield _string_scalar(rec)

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _spec(self):
        from .compiler.function import TensorSpec
        from .core import dtypes
        return TensorSpec((), dtypes.string)
