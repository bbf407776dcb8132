"""keras.applications' architectures tapeflow does not build (wave 25): each builder exists under
TF 2.21's name and raises UnsupportedFeatureError naming it when called; their modules
(``keras.applications.nasnet``, ...) exist with that builder, ``decode_predictions`` and a working
``preprocess_input`` (Keras' mode for the family: identity, 'tf' or 'torch', checked against TF)."""
from __future__ import annotations

import sys
import types

from ..._unsupported import unsupported_function
from . import imagenet_utils

_WHAT = ("this keras.applications architecture (tapeflow builds VGG16/19, ResNet50/101/152, ResNet50V2/101V2/"
         "152V2, DenseNet121/169/201, InceptionV3, InceptionResNetV2, Xception, MobileNet and MobileNetV2 layer "
         "for layer as Keras; compose the others from keras.layers)")

# module -> (its builders, preprocess_input's mode: None is Keras' identity)
_MODULES = {
    "convnext": (("ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtSmall", "ConvNeXtTiny", "ConvNeXtXLarge"), None),
    "efficientnet": (tuple(f"EfficientNetB{i}" for i in range(8)), None),
    "efficientnet_v2": (("EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3",
                         "EfficientNetV2L", "EfficientNetV2M", "EfficientNetV2S"), None),
    "mobilenet_v3": ((), None),    # (TF's module has no builder; MobileNetV3Large/Small are top-level only)
    "nasnet": (("NASNetLarge", "NASNetMobile"), "tf"),
}
TOP_LEVEL_ONLY = ("MobileNetV3Large", "MobileNetV3Small")


def _preprocess(mode, module):
    if mode is None:
        def preprocess_input(x, data_format=None):
            """Keras' preprocess_input of this family: the identity (the model rescales its inputs)."""
            return x
    else:
        def preprocess_input(x, data_format=None):
            return imagenet_utils.preprocess_input(x, data_format=data_format, mode=mode)
        preprocess_input.__doc__ = f"Keras' preprocess_input of this family: mode {mode!r}."
    preprocess_input.__module__ = module
    return preprocess_input


def build(package):
    """The builders (name -> refusing function) and the modules, registered as submodules of ``package``."""
    builders, modules = {}, {}
    for mod_name, (names, mode) in _MODULES.items():
        full = f"{package}.{mod_name}"
        mod = types.ModuleType(full, f"keras.applications.{mod_name}: not built by tapeflow (see "
                                     "tapeflow/keras/applications/_unbuilt.py); preprocess_input works")
        for n in names:
            builders[n] = unsupported_function(f"keras.applications.{n}", _WHAT)
            setattr(mod, n, builders[n])
        mod.preprocess_input = _preprocess(mode, full)
        mod.decode_predictions = imagenet_utils.decode_predictions
        mod.__all__ = sorted([*names, "preprocess_input", "decode_predictions"])
        sys.modules[full] = mod
        modules[mod_name] = mod
    for n in TOP_LEVEL_ONLY:
        builders[n] = unsupported_function(f"keras.applications.{n}", _WHAT)
    return builders, modules
