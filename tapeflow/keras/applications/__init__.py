"""``keras.applications``: Keras 3's ImageNet architectures, built layer for layer as Keras builds
them (the same layer names, shapes and parameter counts) from tapeflow's layers: VGG16/VGG19,
ResNet50/101/152, ResNet50V2/101V2/152V2, DenseNet121/169/201, InceptionV3,
InceptionResNetV2, Xception, MobileNet and MobileNetV2.
``weights=None`` (random initialization) or the path of weights saved by tapeflow; Keras' pretrained
'imagenet' weights are HDF5 downloads and are refused with the reason (imagenet_utils.check_weights).
TF's other architectures (EfficientNet, NASNet, ConvNeXt, MobileNetV3) exist
under their names and raise UnsupportedFeatureError when called (``_unbuilt``)."""
from __future__ import annotations

from . import densenet, imagenet_utils, mobilenet, mobilenet_v2, resnet, resnet_v2  # noqa: F401
from . import inception_resnet_v2, inception_v3, vgg16, vgg19, xception  # noqa: F401
from .densenet import DenseNet121, DenseNet169, DenseNet201  # noqa: F401
from .inception_resnet_v2 import InceptionResNetV2  # noqa: F401
from .inception_v3 import InceptionV3  # noqa: F401
from .mobilenet import MobileNet  # noqa: F401
from .mobilenet_v2 import MobileNetV2  # noqa: F401
from .resnet import ResNet50, ResNet101, ResNet152  # noqa: F401
from .resnet_v2 import ResNet50V2, ResNet101V2, ResNet152V2  # noqa: F401
from .vgg16 import VGG16  # noqa: F401
from .vgg19 import VGG19  # noqa: F401
from .xception import Xception  # noqa: F401
from . import _unbuilt

resnet50 = resnet

_builders, _modules = _unbuilt.build(__name__)
globals().update(_builders)
globals().update(_modules)

__all__ = sorted(["VGG16", "VGG19", "ResNet50", "ResNet101", "ResNet152", "ResNet50V2", "ResNet101V2",
                  "ResNet152V2", "DenseNet121", "DenseNet169", "DenseNet201", "MobileNet", "MobileNetV2",
                  "imagenet_utils", "vgg16", "vgg19", "resnet", "resnet50", "resnet_v2", "densenet", "mobilenet",
                  "mobilenet_v2", "Xception", "xception", "InceptionV3", "inception_v3",
                  "InceptionResNetV2", "inception_resnet_v2", *_builders, *_modules])
