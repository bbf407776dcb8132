"""Keras 3's InceptionResNetV2 (Szegedy et al. 2016): the InceptionV3 stem, mixed_5b, ten block35,
mixed_6a, twenty block17, mixed_7a, ten block8 residual inception blocks (each adds its scaled
branches' 1x1 projection to its input: Keras' ``CustomScaleLayer``), conv_7b. Built in Keras' order
with Keras' names (automatic where Keras gives none), so names, shapes and parameter counts are Keras'."""
from __future__ import annotations

from ...ops import math_ops as M
from .. import layers
from ..engine import Layer
from . import imagenet_utils
from ._common import finish, image_input, top


def conv2d_bn(x, filters, kernel_size, strides=1, padding="same", activation="relu", use_bias=False, name=None):
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding, use_bias=use_bias, name=name)(x)
    if not use_bias:
        x = layers.BatchNormalization(axis=3, scale=False, name=None if name is None else f"{name}_bn")(x)
    if activation is not None:
        x = layers.Activation(activation, name=None if name is None else f"{name}_ac")(x)
    return x


class CustomScaleLayer(Layer):
    """Keras' residual of the blocks: ``inputs[0] + inputs[1] * scale``."""

    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def get_config(self):
        config = super().get_config()
        config.update({"scale": self.scale})
        return config

    def call(self, inputs):
        return M.add(inputs[0], M.multiply(inputs[1], self.scale))


# the branches of each block type: [[(filters, kernel), ...] per branch]
_BLOCKS = {
    "block35": [[(32, 1)], [(32, 1), (32, 3)], [(32, 1), (48, 3), (64, 3)]],
    "block17": [[(192, 1)], [(128, 1), (160, [1, 7]), (192, [7, 1])]],
    "block8": [[(192, 1)], [(192, 1), (224, [1, 3]), (256, [3, 1])]],
}


def inception_resnet_block(x, scale, block_type, block_idx, activation="relu"):
    if block_type not in _BLOCKS:
        raise ValueError('Unknown Inception-ResNet block type. Expects "block35", "block17" or "block8", but got: '
                         f"{block_type}")
    branches = []
    for chain in _BLOCKS[block_type]:
        b = x
        for filters, kernel in chain:
            b = conv2d_bn(b, filters, kernel)
        branches.append(b)
    block_name = f"{block_type}_{block_idx}"
    mixed = layers.Concatenate(axis=3, name=f"{block_name}_mixed")(branches)
    up = conv2d_bn(mixed, x.shape[3], 1, activation=None, use_bias=True, name=f"{block_name}_conv")
    x = CustomScaleLayer(scale)([x, up])
    if activation is not None:
        x = layers.Activation(activation, name=f"{block_name}_ac")(x)
    return x


def InceptionResNetV2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                      classes=1000, classifier_activation="softmax", name="inception_resnet_v2"):
    imagenet_utils.check_weights(weights, include_top, classes)
    shape = imagenet_utils.obtain_input_shape(input_shape, 299, 75, include_top, weights)
    img = image_input(input_tensor, shape)
    x = conv2d_bn(img, 32, 3, strides=2, padding="valid")
    x = conv2d_bn(x, 32, 3, padding="valid")
    x = conv2d_bn(x, 64, 3)
    x = layers.MaxPooling2D(3, strides=2)(x)
    x = conv2d_bn(x, 80, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, padding="valid")
    x = layers.MaxPooling2D(3, strides=2)(x)
    b0 = conv2d_bn(x, 96, 1)
    b1 = conv2d_bn(conv2d_bn(x, 48, 1), 64, 5)
    b2 = conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1), 96, 3), 96, 3)
    bp = conv2d_bn(layers.AveragePooling2D(3, strides=1, padding="same")(x), 64, 1)
    x = layers.Concatenate(axis=3, name="mixed_5b")([b0, b1, b2, bp])
    for block_idx in range(1, 11):
        x = inception_resnet_block(x, scale=0.17, block_type="block35", block_idx=block_idx)
    b0 = conv2d_bn(x, 384, 3, strides=2, padding="valid")
    b1 = conv2d_bn(conv2d_bn(conv2d_bn(x, 256, 1), 256, 3), 384, 3, strides=2, padding="valid")
    bp = layers.MaxPooling2D(3, strides=2, padding="valid")(x)
    x = layers.Concatenate(axis=3, name="mixed_6a")([b0, b1, bp])
    for block_idx in range(1, 21):
        x = inception_resnet_block(x, scale=0.1, block_type="block17", block_idx=block_idx)
    b0 = conv2d_bn(conv2d_bn(x, 256, 1), 384, 3, strides=2, padding="valid")
    b1 = conv2d_bn(conv2d_bn(x, 256, 1), 288, 3, strides=2, padding="valid")
    b2 = conv2d_bn(conv2d_bn(conv2d_bn(x, 256, 1), 288, 3), 320, 3, strides=2, padding="valid")
    bp = layers.MaxPooling2D(3, strides=2, padding="valid")(x)
    x = layers.Concatenate(axis=3, name="mixed_7a")([b0, b1, b2, bp])
    for block_idx in range(1, 10):
        x = inception_resnet_block(x, scale=0.2, block_type="block8", block_idx=block_idx)
    x = inception_resnet_block(x, scale=1.0, activation=None, block_type="block8", block_idx=10)
    x = conv2d_bn(x, 1536, 1, name="conv_7b")
    x = top(x, include_top, pooling, classes, classifier_activation, weights, named_pools=False)
    return finish(img, x, name, weights)


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
