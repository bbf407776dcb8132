"""tf.TensorArray as one tensor buffer of shape (size, *element_shape).

TF2 code accumulates per-step values in a TensorArray inside loops. Here the
array is a namedtuple holding one buffer tensor, so it is an ordinary loop
variable of ``while_loop`` / AutoGraph loops (nest flattens it to its buffer)
and every method is a composition of existing ops: ``write`` is a
``tensor_scatter_nd_update`` that returns a new array (TF's functional style:
``ta = ta.write(i, x)``), ``stack`` returns the buffer.

``dynamic_size=True`` grows the buffer eagerly (a list); inside
``tapeflow.function`` with an element_shape (wave 25) the buffer grows by rows
of zeros to each index written past its end (``_DynamicTensorArray``), and
AutoGraph loops carry it with its first dimension as a shape invariant; without
an element_shape a loop carrying it refuses. A fixed size known only when the
function runs (``tf.shape(x)[0]`` of an input_signature's None batch, wave 25)
gives a buffer of that many rows, its first dimension None.
"""
from __future__ import annotations

import collections

import numpy as np

from ..core import dtypes as _dt
from ..core.primitive import aval_of
from ..core.state import STATE
from ..core.tensor import Tensor, convert_to_tensor
from ..errors import InvalidArgumentTypeError, OutOfRangeError  # (TF's classes; also IndexError, TypeError)
from . import array_ops as A
from . import math_ops as M


def _scatter_by_writes(self, indices, value, name=None):
    """``scatter`` of the arrays whose ``write`` grows them (eager lists, traced dynamic_size buffers): one
    write per index, in order."""
    out = self
    for i, v in zip(np.asarray(indices).ravel(), A.unstack(convert_to_tensor(value))):
        out = out.write(int(i), v)
    return out


class _TensorArray(collections.namedtuple("TensorArray", ["buffer"])):
    __slots__ = ()

    @property
    def dtype(self):
        return self.buffer.dtype

    @property
    def element_shape(self):
        return tuple(self.buffer.shape[1:])

    def size(self, name=None):
        n = self.buffer.shape[0]
        return convert_to_tensor(np.int32(n)) if n is not None else A.shape(self.buffer)[0]

    def _check_index(self, i, what):
        n = self.buffer.shape[0]
        if isinstance(i, (int, np.integer)) and n is not None and not 0 <= int(i) < n:
            raise OutOfRangeError(f"TensorArray.{what}: index {int(i)} is out of range for a TensorArray of size "
                             f"{self.buffer.shape[0]}" + ("" if STATE.trace is None else
                                                           " (inside tapeflow.function the size is fixed)"))

    def read(self, index, name=None):
        self._check_index(index, "read")
        return A.gather(self.buffer, index)

    def write(self, index, value, name=None):
        value = value if isinstance(value, Tensor) else convert_to_tensor(value, self.dtype)
        if value.dtype != self.dtype:
            raise InvalidArgumentTypeError(f"TensorArray.write: value has dtype {value.dtype.name}, the array holds "
                            f"{self.dtype.name}")
        if tuple(value.shape) != self.element_shape:
            raise ValueError(f"TensorArray.write: value has shape {tuple(value.shape)}, the array's elements "
                             f"have shape {self.element_shape}")
        self._check_index(index, "write")
        idx = A.reshape(M.cast(index, np.int32) if isinstance(index, Tensor) else np.int32(index), (1, 1))
        return _TensorArray(A._scatter_update_unique(self.buffer, idx, A.expand_dims(value, 0)))

    def stack(self, name=None):
        return A.identity(self.buffer)

    def gather(self, indices, name=None):
        return A.gather(self.buffer, indices)

    def concat(self, name=None):
        s = self.buffer.shape
        return A.reshape(self.buffer, (-1,) + tuple(s[2:])) if len(s) > 1 else self.buffer

    def unstack(self, value, name=None):
        value = value if isinstance(value, Tensor) else convert_to_tensor(value, self.dtype)
        return _TensorArray(M.cast(value, self.dtype) if value.dtype != self.dtype else value)

    def scatter(self, indices, value, name=None):
        idx = A.reshape(convert_to_tensor(indices, np.int32), (-1, 1))
        return _TensorArray(A.tensor_scatter_nd_update(self.buffer, idx, value))

    def close(self, name=None):
        return None

    def __repr__(self):
        return f"<TensorArray: size={self.buffer.shape[0]}, element_shape={self.element_shape}, dtype={self.dtype.name}>"


class _DynamicTensorArray(_TensorArray):
    """``dynamic_size=True`` inside ``tapeflow.function`` with a known element shape: the buffer grows to the
    index written (rows of zeros appended, as TF's TensorList grows), so it is carried through loops with its
    first dimension free (AutoGraph passes the loop that shape invariant). Each write past the end copies
    the buffer (O(n^2) over n writes; TF grows in place)."""
    __slots__ = ()

    def write(self, index, value, name=None):
        n = self.buffer.shape[0]
        elem = list(self.buffer.shape[1:])
        dt = aval_of(self.buffer).dtype
        if isinstance(index, (int, np.integer)) and n is not None:
            if int(index) < 0:
                raise OutOfRangeError(f"TensorArray.write: index {int(index)} is negative")
            need = max(0, int(index) + 1 - n)
            buf = self.buffer if not need else A.concat([self.buffer, A.zeros([need] + elem, dt)], 0)
        else:
            i = M.cast(index, np.int32)
            need = M.maximum(i + 1 - A.shape(self.buffer)[0], 0)
            buf = A.concat([self.buffer, A.zeros([need] + elem, dt)], 0)
        return _DynamicTensorArray(_TensorArray(buf).write(index, value).buffer)

    scatter = _scatter_by_writes


class _GrowingTensorArray:
    """Eager dynamic_size arrays (and arrays whose element shape is not known
    yet): a Python list until the first stack/read needs a buffer."""

    def __init__(self, dtype, size, element_shape, dynamic_size):
        self._dtype = _dt.as_dtype(dtype)
        self._items = [None] * size
        self._element_shape = element_shape
        self._dynamic = dynamic_size

    dtype = property(lambda self: self._dtype)
    element_shape = property(lambda self: self._element_shape)

    def size(self, name=None):
        return convert_to_tensor(np.int32(len(self._items)))

    def write(self, index, value, name=None):
        i = int(index)
        value = value if isinstance(value, Tensor) else convert_to_tensor(value, self._dtype)
        if value.dtype != self._dtype:
            raise InvalidArgumentTypeError(f"TensorArray.write: value has dtype {value.dtype.name}, the array holds "
                            f"{self._dtype.name}")
        if self._element_shape is not None and tuple(value.shape) != tuple(self._element_shape):
            raise ValueError(f"TensorArray.write: value has shape {tuple(value.shape)}, the array's elements "
                             f"have shape {tuple(self._element_shape)}")
        if i < 0 or (i >= len(self._items) and not self._dynamic):
            raise OutOfRangeError(f"TensorArray.write: index {i} is out of range for a TensorArray of size "
                             f"{len(self._items)} (pass dynamic_size=True to grow it)")
        out = _GrowingTensorArray(self._dtype, 0, tuple(value.shape), self._dynamic)
        out._items = list(self._items) + [None] * max(0, i + 1 - len(self._items))
        out._items[i] = value
        return out

    def _filled(self):
        if self._element_shape is None:
            raise ValueError("TensorArray: nothing written yet and no element_shape given")
        zero = np.zeros(self._element_shape, self._dtype.np)
        return [zero if v is None else v for v in self._items]

    def read(self, index, name=None):
        return self._filled()[int(index)] if self._items[int(index)] is not None else \
            convert_to_tensor(self._filled()[int(index)])

    def stack(self, name=None):
        if not self._items:
            return convert_to_tensor(np.zeros((0,) + tuple(self._element_shape or ()), self._dtype.np))
        return A.stack(self._filled())

    def gather(self, indices, name=None):
        return A.gather(self.stack(), indices)

    def concat(self, name=None):
        return A.concat(self._filled(), 0)

    def unstack(self, value, name=None):
        value = value if isinstance(value, Tensor) else convert_to_tensor(value, self._dtype)
        return _TensorArray(M.cast(value, self._dtype) if value.dtype != self._dtype else value)

    scatter = _scatter_by_writes

    def close(self, name=None):
        return None


def TensorArray(dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None, handle=None,
                flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True, name=None):
    """tf.TensorArray (see the module docstring)."""
    shape = None if element_shape is None else tuple(int(d) for d in element_shape)
    if STATE.trace is not None and isinstance(size, Tensor) and size._v is None:
        # a size known when the function runs (tf.shape(x)[0] of a None batch): a buffer of that many rows
        if dynamic_size and shape is not None:
            return _DynamicTensorArray(A.zeros([size] + list(shape), _dt.as_dtype(dtype).np))
        if dynamic_size:
            raise ValueError("TensorArray: dynamic_size=True with a size known only when the function runs needs "
                             "an element_shape inside tapeflow.function")
        return _TensorArray(A.zeros([size] + list(shape), _dt.as_dtype(dtype).np)) if shape is not None \
            else _LazyTensorArray(dtype, size)
    n = 0 if size is None else int(size.numpy() if hasattr(size, "numpy") else size)
    if shape is not None and not dynamic_size:
        return _TensorArray(convert_to_tensor(np.zeros((n,) + shape, _dt.as_dtype(dtype).np)))
    if shape is not None and STATE.trace is not None:   # dynamic_size=True with a known element shape
        return _DynamicTensorArray(convert_to_tensor(np.zeros((n,) + shape, _dt.as_dtype(dtype).np)))
    if STATE.trace is not None and not dynamic_size and shape is None:
        return _LazyTensorArray(dtype, n)
    return _GrowingTensorArray(dtype, n, shape, bool(dynamic_size))


class _LazyTensorArray(_GrowingTensorArray):
    """A fixed-size array inside a traced function whose element shape comes
    from its first write: that write allocates the buffer."""

    def __init__(self, dtype, size):
        # (size: an int, or a traced scalar known when the function runs)
        super().__init__(dtype, size if isinstance(size, int) else 0, None, False)
        self._n = size

    def size(self, name=None):
        return convert_to_tensor(np.int32(self._n)) if isinstance(self._n, int) else M.cast(self._n, np.int32)

    def stack(self, name=None):
        if not isinstance(self._n, int):   # (rows of a run-time count, their shape unknown)
            raise ValueError("TensorArray: nothing written yet and no element_shape given")
        return super().stack(name)

    def write(self, index, value, name=None):
        value = value if isinstance(value, Tensor) else convert_to_tensor(value, self._dtype)
        buf = _TensorArray(A.zeros([self._n] + list(aval_of(value).shape), self._dtype.np))
        return buf.write(index, value)
