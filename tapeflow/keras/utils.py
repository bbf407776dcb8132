"""keras.utils: ``soft_update`` (target networks), seeds, one-hot, ``pad_sequences``,
``timeseries_dataset_from_array``, ``PyDataset``/``Sequence`` (batches by index for ``fit``),
``normalize``, ``Progbar`` and Keras' small helpers."""
from __future__ import annotations

import numpy as np

from ..core.aval import fmt_shape
from ..core.state import STATE
from ..core.tensor import Tensor, Variable, convert_to_tensor
from ..ops import math_ops as M
from ..optimizers import rules as _rules
from ..optimizers.base import _put
from . import backend

from ._image_utils import (array_to_img, image_dataset_from_directory, img_to_array, load_img,  # noqa: F401
                           save_img)
from ._file_utils import get_file  # noqa: F401
from ._text_utils import text_dataset_from_directory  # noqa: F401
from ._audio_utils import audio_dataset_from_directory  # noqa: F401
from ._utils_config import Config  # noqa: F401
from .feature_space import FeatureSpace  # noqa: F401,E402  (wave 21)
from .saving import (custom_object_scope, deserialize_keras_object, get_custom_objects,  # noqa: F401
                     register_keras_serializable, serialize_keras_object)
from .saving import CustomObjectScope, get_registered_name, get_registered_object  # noqa: F401,E402
from . import _bounding_boxes as bounding_boxes  # noqa: F401,E402  (wave 24: keras.utils.bounding_boxes)
from . import _legacy_serialization as legacy  # noqa: F401,E402  (wave 24: keras.utils.legacy)

__all__ = ["soft_update", "hard_update", "set_random_seed", "to_categorical", "pad_sequences",
           "timeseries_dataset_from_array", "PyDataset", "Sequence", "normalize", "Progbar",
           "pack_x_y_sample_weight", "unpack_x_y_sample_weight", "split_dataset", "clear_session",
           "is_keras_tensor", "custom_object_scope",
           "deserialize_keras_object", "get_custom_objects", "register_keras_serializable",
           "serialize_keras_object", "load_img", "img_to_array", "array_to_img", "save_img",
           "image_dataset_from_directory", "get_file"]   # the last five: Keras also exports them from keras.utils


def _vars(x, what, tensors_ok=False):
    if isinstance(x, Variable):
        return [x]
    if hasattr(x, "weights") and not isinstance(x, (list, tuple)):
        return list(x.weights)          # a Keras layer/model: all weights (incl. BN statistics)
    if hasattr(x, "variables") and not isinstance(x, (list, tuple)):
        v = x.variables
        return list(v() if callable(v) else v)
    out = list(x)
    for i, v in enumerate(out):
        if not isinstance(v, Variable) and not (tensors_ok and isinstance(v, Tensor)):
            raise TypeError(f"soft_update: {what}[{i}] is a {type(v).__name__}, not a Variable")
    return out


def soft_update(target_vars, source_vars, tau):
    """Polyak averaging for target networks: ``target <- tau * source + (1 - tau) * target``
    for each pair of variables (``assign``, so it works inside a compiled step).

    Takes two lists of Variables (the sources may also be tensors), or two
    Keras models/layers (their ``weights``). ``tau`` is a Python float or a scalar tensor; ``tau=1``
    copies. Lists of different length or shapes raise a ValueError.
    """
    tv = _vars(target_vars, "target_vars")
    sv = _vars(source_vars, "source_vars", tensors_ok=True)
    if len(tv) != len(sv):
        raise ValueError(f"soft_update: {len(tv)} target variables but {len(sv)} source variables")
    for i, (t, s) in enumerate(zip(tv, sv)):
        a, b = t._v, s._v
        if b is None or a.shape != b.shape or a.dtype != b.dtype:  # (a symbolic source: its aval)
            _check_pair(i, t, s)
    if isinstance(tau, Tensor):
        keep = M.subtract(1.0, tau)
        for t, s in zip(tv, sv):
            t.assign(_rules.polyak(t.read_value(), _read(s), tau, keep))
        return
    tau = float(tau)
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"soft_update: tau must be in [0, 1], got {tau}")
    if tau == 1.0:
        for t, s in zip(tv, sv):
            t.assign(_read(s))
        return
    if STATE.unrecorded():
        _fused_soft_update(tv, sv, tau)
        return
    for t, s in zip(tv, sv):
        t.assign(_rules.polyak(t.read_value(), _read(s), tau, 1.0 - tau))


def _check_pair(i, t, s):
    if tuple(t.shape) != tuple(s.shape):
        raise ValueError(f"soft_update: variable {i}: target {t.name} has shape {fmt_shape(t.shape)}, "
                         f"source {s.name} has shape {fmt_shape(s.shape)}")
    if t.dtype != s.dtype:
        raise TypeError(f"soft_update: variable {i}: target {t.name} is {t.dtype.name}, source {s.name} "
                        f"is {s.dtype.name}")


def _fused_soft_update(tv, sv, tau):
    """The eager soft update with nothing recording: per pair, one pass of the rule's
    compiled loop (float32/float64; the rule on NumPy arrays for other float dtypes) into
    a fresh buffer that becomes the target's, as the optimizers' fused update stores its
    results (assign's semantics: the old buffer is replaced, never written, so earlier
    reads keep their values). The ops made two temporaries and a third pass. tau and
    1 - tau reach the loop as scalars of the dtype, as the ops convert the Python floats,
    so the bits are the op path's. Non-float targets, and targets whose class has its
    own ``assign``, take the op path (its errors, its writes)."""
    plans = {}
    for t, s in zip(tv, sv):
        w = t._v
        npd = w.dtype
        plan = plans.get(npd)
        if plan is None:
            fused = npd.kind == "f"
            plan = plans[npd] = (fused, _rules.kernel(_rules.polyak) if fused and npd.itemsize >= 4 else None,
                                 (npd.type(tau), npd.type(1.0 - tau)))
        fused, loop, c = plan
        if not fused or type(t).assign is not Variable.assign:
            t.assign(_rules.polyak(t.read_value(), _read(s), tau, 1.0 - tau))
            continue
        w, x = w.reshape(-1), s._v.reshape(-1)   # views (a copy for a non-contiguous source)
        if loop is not None:
            out = np.empty(w.shape[0], npd)
            loop(w, x, out, *c)
        else:
            out = _rules.polyak(w, x, *c)
        _put(t, out)


def _read(x):
    return x.read_value() if isinstance(x, Variable) else x


def hard_update(target_vars, source_vars):
    """Copy source values into target variables (``soft_update`` with tau=1)."""
    soft_update(target_vars, source_vars, 1.0)


def set_random_seed(seed):
    """Seed tapeflow's global random stream, Python's and NumPy's global RNGs."""
    import random as _pyrandom
    from ..ops import random_ops
    random_ops.set_seed(seed)
    _pyrandom.seed(seed)
    np.random.seed(seed)


def to_categorical(y, num_classes=None, dtype="float64"):
    """One-hot rows of class ids; float64 as Keras 3 gives it (`np.zeros` of the default dtype;
    Keras 3 has no `dtype` argument, tapeflow keeps Keras 2's)."""
    y = np.asarray(y, dtype=np.int64)
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.ravel()
    n = int(num_classes) if num_classes is not None else int(y.max()) + 1
    out = np.zeros((y.size, n), dtype=dtype)
    out[np.arange(y.size), y] = 1
    return out.reshape(shape + (n,))


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """Keras' pad_sequences: a (samples, maxlen, ...) array, each sequence cut ('pre' keeps its
    end, 'post' its start) and padded with ``value`` ('pre': before it, 'post': after it)."""
    if not hasattr(sequences, "__len__"):
        raise ValueError("pad_sequences: `sequences` must be iterable.")
    lengths, sample_shape = [], None
    for x in sequences:
        try:
            lengths.append(len(x))
        except TypeError as e:
            raise ValueError(f"pad_sequences: `sequences` must be a list of iterables. Found non-iterable: {x}") \
                from e
        if sample_shape is None and len(x):
            sample_shape = np.asarray(x).shape[1:]
    sample_shape = sample_shape or ()
    if maxlen is None:
        maxlen = int(np.max(lengths)) if lengths else 0
    # Keras 3: a string value needs dtype=object or a string dtype (dtype="str" pads text; sweep18)
    if isinstance(value, str) and dtype is not object and not np.issubdtype(np.dtype(dtype), np.str_):
        raise ValueError(f"pad_sequences: `dtype` {dtype} is not compatible with `value`'s type: {type(value)}")
    if truncating not in ("pre", "post"):
        raise ValueError(f'pad_sequences: Truncating type "{truncating}" not understood')
    if padding not in ("pre", "post"):
        raise ValueError(f'pad_sequences: Padding type "{padding}" not understood')
    out = np.full((len(sequences), maxlen) + tuple(sample_shape), value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s) or maxlen == 0:
            continue
        trunc = np.asarray(s[-maxlen:] if truncating == "pre" else s[:maxlen], dtype=dtype)
        if trunc.shape[1:] != tuple(sample_shape):
            raise ValueError(f"pad_sequences: shape of sample {trunc.shape[1:]} of sequence at position {i} is "
                             f"different from expected shape {tuple(sample_shape)}")
        if padding == "post":
            out[i, :len(trunc)] = trunc
        else:
            out[i, -len(trunc):] = trunc
    return out


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1, sampling_rate=1,
                                  batch_size=128, shuffle=False, seed=None, start_index=None, end_index=None):
    """Keras' sliding windows over ``data`` as a tf.data Dataset: window i is
    data[start + p_i + k * sampling_rate] for k < sequence_length, p_i = i * sequence_stride,
    with target targets[start + p_i]. ``shuffle`` shuffles the window starts with NumPy's
    RandomState(seed), as Keras does, then locally with tf.data's shuffle (whose draws are not
    TF's). Windows are gathered a batch at a time, so the data is not copied per window."""
    from .. import data as _data
    data = np.asarray(data.numpy() if isinstance(data, Tensor) else data)
    n = len(data)
    if start_index:
        if start_index < 0:
            raise ValueError(f"`start_index` must be 0 or greater. Received: start_index={start_index}")
        if start_index >= n:
            raise ValueError(f"`start_index` must be lower than the length of the data. Received: "
                             f"start_index={start_index}, for data of length {n}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError(f"`end_index` must be higher than `start_index`. Received: start_index={start_index}, "
                             f"and end_index={end_index}")
        if end_index >= n:
            raise ValueError(f"`end_index` must be lower than the length of the data. Received: "
                             f"end_index={end_index}, for data of length {n}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    for name, v in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if v <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={v}")
        if v >= n:
            raise ValueError(f"`{name}` must be lower than the length of the data. Received: {name}={v}, for data "
                             f"of length {n}")
    start = start_index or 0
    end = n if end_index is None else end_index
    num = end - start - (sequence_length - 1) * sampling_rate
    if targets is not None:
        targets = np.asarray(targets.numpy() if isinstance(targets, Tensor) else targets)
        num = min(num, len(targets))
    positions = np.arange(0, max(num, 0), sequence_stride, dtype=np.int32)
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(positions)
    window = np.arange(sequence_length, dtype=np.int64) * sampling_rate
    series = data[start:end]
    labels = None if targets is None else targets[start:end]

    def gather(p):
        p = np.asarray(p.numpy() if isinstance(p, Tensor) else p)
        x = series[p[..., None] + window]
        return x if labels is None else (x, labels[p])

    ds = _data.Dataset.from_tensor_slices(positions)
    if shuffle:
        ds = ds.shuffle(buffer_size=(batch_size or 128) * 8 if batch_size is not None else 1024, seed=seed)
    if batch_size is not None:
        ds = ds.batch(batch_size)
    return ds.map(lambda p: gather(p))


class PyDataset:
    """Keras 3's PyDataset (Keras 2's ``Sequence``): ``__getitem__(i)`` returns batch i, ``__len__``
    the batches per epoch; ``fit``/``evaluate``/``predict`` take one as ``x`` and call
    ``on_epoch_end`` after each full pass. Batches are produced in the calling thread
    (``workers``/``use_multiprocessing`` are accepted and ignored)."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers, self._use_multiprocessing, self._max_queue_size = workers, use_multiprocessing, max_queue_size

    @property
    def workers(self):
        return self.__dict__.get("_workers", 1)

    @property
    def use_multiprocessing(self):
        return self.__dict__.get("_use_multiprocessing", False)

    @property
    def max_queue_size(self):
        return self.__dict__.get("_max_queue_size", 10)

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__}: implement __getitem__(index) to return batch `index`")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__}: implement __len__ (the number of batches) or "
                                  "num_batches")

    @property
    def num_batches(self):
        return len(self)

    def on_epoch_begin(self):
        pass

    def on_epoch_end(self):
        pass

    def __iter__(self):
        self.on_epoch_begin()
        for i in range(self.num_batches):
            yield self[i]
        self.on_epoch_end()

    def _cardinality(self):
        return self.num_batches


Sequence = PyDataset


def normalize(x, axis=-1, order=2):
    """Keras' normalize: x divided by its ``order``-norm along ``axis`` (a NumPy array stays NumPy,
    a zero norm leaves the row unchanged; a tensor divides by max(norm, 1e-7))."""
    if isinstance(x, np.ndarray):
        norm = np.atleast_1d(np.linalg.norm(x, order, axis))
        norm[norm == 0] = 1
        return x / np.expand_dims(norm, axis or -1)
    t = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if order == 2:
        return backend.unit_normalize(t, axis, 1e7)
    norm = M.reduce_sum(M.abs(t) ** order, axis=axis, keepdims=True) ** (1.0 / order)
    return t / M.maximum(norm, 1e-7)


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    if y is None:   # Keras 3: a lone x stays itself, a tuple/list of inputs is wrapped
        return x if not isinstance(x, (tuple, list)) else (x,)
    return (x, y) if sample_weight is None else (x, y, sample_weight)


def unpack_x_y_sample_weight(data):
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError(f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, found: "
                     f"{data}")


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None):
    """Splits arrays (or a tuple of arrays, or a finite Dataset) into two Datasets; sizes are
    fractions in (0, 1) or counts, one may be None (the rest)."""
    from .. import data as _data
    if isinstance(dataset, _data.Dataset):
        items = list(dataset.as_numpy_iterator())
        arrays = tuple(np.stack([it[i] for it in items]) for i in range(len(items[0]))) \
            if items and isinstance(items[0], tuple) else np.stack(items)
    else:
        arrays = tuple(np.asarray(a) for a in dataset) if isinstance(dataset, (tuple, list)) else np.asarray(dataset)
    n = len(arrays[0]) if isinstance(arrays, tuple) else len(arrays)
    if left_size is None and right_size is None:
        raise TypeError("split_dataset: at least one of `left_size` or `right_size` must be specified")

    def count(size):
        if size is None:
            return None
        if isinstance(size, float):
            if not 0 < size < 1:
                raise ValueError(f"split_dataset: a float size must be in (0, 1), got {size}")
            return int(round(size * n))
        if not 0 <= size <= n:
            raise ValueError(f"split_dataset: size {size} is out of range for {n} samples")
        return int(size)
    lc, rc = count(left_size), count(right_size)
    lc = n - rc if lc is None else lc
    rc = n - lc if rc is None else rc
    if lc + rc > n:
        raise ValueError(f"split_dataset: the sizes {lc} + {rc} exceed the {n} samples")
    idx = np.arange(n)
    if shuffle:
        np.random.default_rng(seed if seed is not None else np.random.randint(1e6)).shuffle(idx)

    def take(ix):
        sub = tuple(a[ix] for a in arrays) if isinstance(arrays, tuple) else arrays[ix]
        return _data.Dataset.from_tensor_slices(sub)
    return take(idx[:lc]), take(idx[lc:lc + rc])


def clear_session(free_memory=True):
    """Resets Keras' name counters (layer names start again at ``dense``, ``dense_1``...)."""
    backend.clear_session()


is_keras_tensor = backend.is_keras_tensor


class Progbar:
    """Keras' text progress bar: ``update(current, values)`` / ``add(n, values)``; values are
    (name, value) pairs averaged over the steps (``stateful_metrics`` shown as given)."""

    def __init__(self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None, unit_name="step"):
        import sys
        import time
        self.target, self.width, self.verbose, self.interval = target, width, verbose, interval
        self.stateful_metrics = set(stateful_metrics or ())
        self.unit_name = unit_name
        self._values, self._seen, self._start = {}, 0, time.time()
        self._out, self._time = sys.stdout, time.time

    def update(self, current, values=None, finalize=None):
        for k, v in values or ():
            v = float(np.asarray(v.numpy() if isinstance(v, Tensor) else v))
            if k in self.stateful_metrics:
                self._values[k] = [v, 1]
            else:
                step = max(current - self._seen, 1)
                tot = self._values.setdefault(k, [0.0, 0])
                tot[0] += v * step
                tot[1] += step
        self._seen = current
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        if self.verbose == 1 or (self.verbose == 2 and finalize):
            info = " - ".join(f"{k}: {s / max(c, 1):.4f}" for k, (s, c) in self._values.items())
            if self.target is not None:
                done = int(self.width * current / self.target) if self.target else self.width
                bar = "=" * max(done - 1, 0) + (">" if done < self.width else "=") + "." * (self.width - done)
                head = f"{current}/{self.target} [{bar}]"
            else:
                head = f"{current}/Unknown"
            if not _interactive_logging[0]:   # Keras 3: through the logging module (absl's logger, INFO)
                import logging
                logging.getLogger("absl").info(head + (" - " + info if info else ""))
                return
            self._out.write(("\r" if self.verbose == 1 else "") + head + (" - " + info if info else "")
                            + ("\n" if finalize else ""))
            self._out.flush()

    def add(self, n, values=None):
        self.update(self._seen + n, values)


def get_source_inputs(tensor):
    """keras.utils.get_source_inputs: the Input tensors a functional-API tensor was computed from,
    in order of first appearance, each once (a list; an Input gives ``[itself]``; a value that is
    not a KerasTensor is returned as given, as Keras does)."""
    from .engine import KerasTensor
    if not isinstance(tensor, KerasTensor):
        return tensor
    node = tensor._node
    if node is None or not node.parents:      # an Input (InputLayer's node has no parents)
        return [tensor]
    out = []
    for parent in node.parents:
        for x in get_source_inputs(parent):
            if all(x is not t for t in out):
                out.append(x)
    return out


# keras.utils' standardize_dtype is keras.backend's (Keras 3 exports the one function under both names)
standardize_dtype = backend.standardize_dtype


_interactive_logging = [True]


def enable_interactive_logging():
    """Keras' switch for its progress bars (printed to stdout when enabled, TF 2.21's default; through
    the ``logging`` module, logger "absl" at INFO, when disabled). tapeflow's Progbar (fit's progress)
    reads it; Model.summary prints either way (Keras logs it too when disabled)."""
    _interactive_logging[0] = True


def disable_interactive_logging():
    _interactive_logging[0] = False


def is_interactive_logging_enabled():
    return _interactive_logging[0]


# out-of-scope names (tapeflow/_unsupported.py NAMES) name their feature; any other missing name is an AttributeError
from .._unsupported import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("keras.utils", "tapeflow.keras.utils")

# wave 25: TF's names exist; calling them raises, naming the feature (pydot/Graphviz)
from .._unsupported import unsupported_function as _unsupported_function  # noqa: E402
plot_model = _unsupported_function("keras.utils.plot_model")
model_to_dot = _unsupported_function("keras.utils.model_to_dot")
