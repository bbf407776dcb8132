"""``keras.export`` (TF 2.21's tf.keras has it): ``ExportArchive``, Keras 3's builder of a TF
SavedModel of chosen endpoints. tapeflow's SavedModel is its own (JSON + safetensors): the name
exists and raises UnsupportedFeatureError when used; ``Model.export`` and ``tf.saved_model.save``
write tapeflow's SavedModel."""
from __future__ import annotations

from .._unsupported import unsupported_class

ExportArchive = unsupported_class(
    "keras.export.ExportArchive",
    "Keras' ExportArchive (endpoints of a TF SavedModel built by hand); use model.export(path) or "
    "tf.saved_model.save(obj, path) with tapeflow.function endpoints")
__all__ = ["ExportArchive"]
