"""tf.train.experimental (TF 2.21): ``PythonState``, Python state saved in an object-based
checkpoint as one string (TF's key ``<path>/.ATTRIBUTES/py_state``). tapeflow's Checkpoint saves it
through the hook its lookup tables use (``_checkpoint_tensors``/``_restore_tensors``: trackable.collect
finds any object that has them), so no checkpoint code knows this class. The sharding policies
(``ShardableTensor``, ``ShardingCallback``, ``ShardByTaskPolicy``, ``MaxShardSizePolicy``: TF's sharded
checkpoint writer) are refused with their reason (``_unsupported.NAMES``): tapeflow writes one shard."""
from __future__ import annotations

import abc

import numpy as np

__all__ = ["PythonState"]

PYTHON_STATE = "py_state"


class PythonState(metaclass=abc.ABCMeta):
    """A mixin for Python state in a ``tf.train.Checkpoint``: ``serialize()`` returns a string
    (str or bytes), saved with the variables; ``deserialize(bytes)`` gets it back on restore (bytes,
    as TF 2.21 passes it)."""

    @abc.abstractmethod
    def serialize(self):
        """Callback to serialize the object. Returns a string."""

    @abc.abstractmethod
    def deserialize(self, string_value):
        """Callback to deserialize the object."""

    def _checkpoint_tensors(self):
        v = self.serialize()
        if hasattr(v, "numpy"):
            v = v.numpy()
        if isinstance(v, str):
            v = v.encode()
        if not isinstance(v, (bytes, np.bytes_)):
            raise TypeError(f"{type(self).__name__}.serialize() must return a string (str or bytes), got "
                            f"{type(v).__name__} (tf.train.experimental.PythonState)")
        a = np.empty((), object)
        a[()] = bytes(v)
        return {PYTHON_STATE: a}

    def _restore_tensors(self, tensors):
        a = tensors.get(PYTHON_STATE)
        if a is not None:
            self.deserialize(np.asarray(a, object).reshape(-1)[0])


from .._unsupported import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("train.experimental", "tapeflow.train.experimental")
