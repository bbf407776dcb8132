"""What the application builders share: the input, the top, the model and its weights."""
from __future__ import annotations

from .. import layers
from ..models import Model
from . import imagenet_utils


def image_input(input_tensor, input_shape):
    return layers.Input(shape=input_shape) if input_tensor is None else input_tensor


def top(x, include_top, pooling, classes, classifier_activation, weights, flatten=None, pool_name="avg_pool",
        named_pools=True):
    """Keras' heads: the classifier (``flatten`` layers first, VGG's; else a global average pooling named
    ``pool_name``) or the optional pooling (named avg_pool/max_pool as ResNet's, unnamed with
    ``named_pools=False`` as Inception's, Xception's and MobileNetV2's)."""
    if include_top:
        for layer in flatten or [layers.GlobalAveragePooling2D(name=pool_name)]:
            x = layer(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    named = flatten is None and named_pools
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name="avg_pool" if named else None)(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name="max_pool" if named else None)(x)
    return x


def finish(inputs, x, name, weights):
    model = Model(inputs, x, name=name)
    if weights is not None:
        model.load_weights(weights)
    return model
