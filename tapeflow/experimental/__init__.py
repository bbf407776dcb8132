"""``tf.experimental``: TF's NumPy API ``tf.experimental.numpy`` (``tapeflow.experimental.numpy``);
``DynamicRaggedShape`` and ``RowPartition`` (tapeflow/ragged/dynamic_ragged_shape.py); the rest
(DTensor, extension types) is out of scope in tapeflow: those names raise an error that
says so, as the other out-of-scope namespaces do (``tapeflow._unsupported``)."""
from .._unsupported import UnsupportedFeatureError

_WHAT = "tf.experimental's DTensor and extension types"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "numpy":  # (a submodule: loaded on first use, as `import tapeflow.experimental.numpy` does)
        import importlib
        return importlib.import_module(".numpy", __name__)
    if name in ("DynamicRaggedShape", "RowPartition"):   # (tf.ragged's shapes: tapeflow/ragged/)
        from ..ragged import dynamic_ragged_shape
        return getattr(dynamic_ragged_shape, name)
    raise UnsupportedFeatureError(
        f"tf.experimental.{name}: tapeflow does not implement {_WHAT}; it is out of scope (see docs/differences.md, "
        "'Differences from TensorFlow')")
