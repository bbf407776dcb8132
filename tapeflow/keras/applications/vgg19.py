"""Keras 3's VGG19: VGG16 with four convolutions in each of the last three blocks."""
from __future__ import annotations

from .vgg16 import _vgg, decode_predictions, preprocess_input  # noqa: F401

_BLOCKS19 = ((64, 2), (128, 2), (256, 4), (512, 4), (512, 4))


def VGG19(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
          classifier_activation="softmax", name="vgg19"):
    return _vgg(_BLOCKS19, name, include_top, weights, input_tensor, input_shape, pooling, classes,
                classifier_activation)
