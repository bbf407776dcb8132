"""``keras.applications``: Keras 3's ImageNet architectures, built layer for layer as Keras builds
them (the same layer names, shapes and parameter counts) from tapeflow's layers: VGG16/VGG19,
ResNet50/101/152 and MobileNetV2. ``weights=None`` (random initialization) or the path of weights
saved by tapeflow; Keras' pretrained 'imagenet' weights are HDF5 downloads and are refused with the
reason (imagenet_utils.check_weights)."""
from __future__ import annotations

from . import imagenet_utils, mobilenet_v2, resnet, vgg16, vgg19  # noqa: F401
from .mobilenet_v2 import MobileNetV2  # noqa: F401
from .resnet import ResNet50, ResNet101, ResNet152  # noqa: F401
from .vgg16 import VGG16  # noqa: F401
from .vgg19 import VGG19  # noqa: F401

resnet50 = resnet

__all__ = ["VGG16", "VGG19", "ResNet50", "ResNet101", "ResNet152", "MobileNetV2", "imagenet_utils", "vgg16",
           "vgg19", "resnet", "resnet50", "mobilenet_v2"]
