"""``keras.distribution`` (TF 2.21's tf.keras has it): Keras 3's device meshes, layouts and data/model
parallelism, which Keras runs on the JAX backend only. tapeflow runs on one machine's CPU: every name
exists and raises UnsupportedFeatureError when used; tf.distribute's one-machine strategies are
implemented."""
from __future__ import annotations

from .._unsupported import unsupported_class, unsupported_function

_WHAT = ("Keras' distribution API (device meshes and tensor layouts, which Keras implements for its JAX "
         "backend); use tf.distribute's strategies (MirroredStrategy, OneDeviceStrategy)")
_CLASSES = ("DataParallel", "DeviceMesh", "LayoutMap", "ModelParallel", "TensorLayout")
_FUNCTIONS = ("distribute_tensor", "distribution", "get_device_count", "initialize", "list_devices",
              "set_distribution")
for _n in _CLASSES:
    globals()[_n] = unsupported_class(f"keras.distribution.{_n}", _WHAT)
for _n in _FUNCTIONS:
    globals()[_n] = unsupported_function(f"keras.distribution.{_n}", _WHAT)
del _n
__all__ = sorted(_CLASSES + _FUNCTIONS)
