"""``tf.experimental``: TF's NumPy API ``tf.experimental.numpy`` (``tapeflow.experimental.numpy``),
extension types (``ExtensionType``, ``BatchableExtensionType``, their specs and the ``dispatch_for_*``
decorators: ``tapeflow/extension_type.py``), ``Optional`` (tf.data's: tapeflow/data.py), ``DynamicRaggedShape`` and ``RowPartition``
(tapeflow/ragged/dynamic_ragged_shape.py); DTensor, DLPack, TF-TRT,
StructuredTensor, the 8/4/2-bit dtypes and TF's async execution are out of scope in tapeflow: their names raise an
error that says what they are, as the other out-of-scope namespaces do (``tapeflow._unsupported``)."""
from ..extension_type import (ExtensionType, BatchableExtensionType, ExtensionTypeSpec,  # noqa: F401
                              BatchableExtensionTypeSpec, dispatch_for_api, dispatch_for_unary_elementwise_apis,
                              dispatch_for_binary_elementwise_apis, unregister_dispatch_for)



def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "numpy":  # (a submodule: loaded on first use, as `import tapeflow.experimental.numpy` does)
        import importlib
        return importlib.import_module(".numpy", __name__)
    if name in ("DynamicRaggedShape", "RowPartition"):   # (tf.ragged's shapes: tapeflow/ragged/)
        from ..ragged import dynamic_ragged_shape
        return getattr(dynamic_ragged_shape, name)
    if name == "Optional":   # (tf.data's Optional: tapeflow/data.py, loaded on first use)
        from ..data import Optional
        return Optional
    # out of scope (DTensor, DLPack, TF-TRT, StructuredTensor, the 8/4/2-bit dtypes, TF's async
    # execution, ...): each name says what it is and what to use (tapeflow/_unsupported.py)
    from .._unsupported import FEATURES, NAMES, UnsupportedNamespace, unsupported_name
    if f"experimental.{name}" in FEATURES:
        return UnsupportedNamespace(f"experimental.{name}")
    if f"experimental.{name}" in NAMES:
        raise unsupported_name(f"experimental.{name}")
    raise AttributeError(f"module 'tapeflow.experimental' has no attribute {name!r}")
