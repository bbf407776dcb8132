"""Keras 3's InceptionV3 (Szegedy et al. 2015): a convolution stem, then the inception modules
mixed0-mixed10 (1x1 / factorized 5x5 and 7x7 / double 3x3 / pooled branches concatenated; mixed3
and mixed8 reduce the grid). Every convolution is Keras' ``conv2d_bn`` (conv without bias, batch norm
without scale, ReLU), unnamed, so Keras' automatic names; built in Keras' order, so the names, shapes
and parameter counts are Keras'."""
from __future__ import annotations

from .. import layers
from . import imagenet_utils
from ._common import finish, image_input, top


def conv2d_bn(x, filters, num_row, num_col, padding="same", strides=(1, 1), name=None):
    x = layers.Conv2D(filters, (num_row, num_col), strides=strides, padding=padding, use_bias=False,
                      name=None if name is None else f"{name}_conv")(x)
    x = layers.BatchNormalization(axis=3, scale=False, name=None if name is None else f"{name}_bn")(x)
    return layers.Activation("relu", name=name)(x)


def _chain(x, specs):
    """conv2d_bn applied in turn: each spec (filters, rows, cols[, kwargs])."""
    for spec in specs:
        x = conv2d_bn(x, *spec[:3], **(spec[3] if len(spec) > 3 else {}))
    return x


def _pool_branch(x, filters):
    return conv2d_bn(layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x), filters, 1, 1)


def _mixed_35(x, pool_filters, name):
    """mixed0-2 (35x35): 1x1 | 1x1 -> 5x5 | 1x1 -> 3x3 -> 3x3 | avg pool -> 1x1."""
    b1 = conv2d_bn(x, 64, 1, 1)
    b5 = _chain(x, [(48, 1, 1), (64, 5, 5)])
    b3 = _chain(x, [(64, 1, 1), (96, 3, 3), (96, 3, 3)])
    return layers.concatenate([b1, b5, b3, _pool_branch(x, pool_filters)], axis=3, name=name)


def _mixed_17(x, c, name):
    """mixed4-7 (17x17): 1x1 | 1x1 -> 1x7 -> 7x1 | 1x1 -> (7x1, 1x7) x 2 | avg pool -> 1x1."""
    b1 = conv2d_bn(x, 192, 1, 1)
    b7 = _chain(x, [(c, 1, 1), (c, 1, 7), (192, 7, 1)])
    b7d = _chain(x, [(c, 1, 1), (c, 7, 1), (c, 1, 7), (c, 7, 1), (192, 1, 7)])
    return layers.concatenate([b1, b7, b7d, _pool_branch(x, 192)], axis=3, name=name)


def _mixed_8(x, i):
    """mixed9/10 (8x8): 1x1 | 1x1 -> (1x3, 3x1) | 1x1 -> 3x3 -> (1x3, 3x1) | avg pool -> 1x1."""
    b1 = conv2d_bn(x, 320, 1, 1)
    b3 = conv2d_bn(x, 384, 1, 1)
    b3 = layers.concatenate([conv2d_bn(b3, 384, 1, 3), conv2d_bn(b3, 384, 3, 1)], axis=3, name=f"mixed9_{i}")
    b3d = _chain(x, [(448, 1, 1), (384, 3, 3)])
    b3d = layers.concatenate([conv2d_bn(b3d, 384, 1, 3), conv2d_bn(b3d, 384, 3, 1)], axis=3)
    return layers.concatenate([b1, b3, b3d, _pool_branch(x, 192)], axis=3, name=f"mixed{9 + i}")


def InceptionV3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="inception_v3"):
    imagenet_utils.check_weights(weights, include_top, classes)
    shape = imagenet_utils.obtain_input_shape(input_shape, 299, 75, include_top, weights)
    img = image_input(input_tensor, shape)
    valid = {"padding": "valid"}
    x = _chain(img, [(32, 3, 3, {"strides": (2, 2), "padding": "valid"}), (32, 3, 3, valid), (64, 3, 3)])
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = _chain(x, [(80, 1, 1, valid), (192, 3, 3, valid)])
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = _mixed_35(x, 32, "mixed0")
    x = _mixed_35(x, 64, "mixed1")
    x = _mixed_35(x, 64, "mixed2")
    # mixed3: the grid 35 -> 17
    b3 = conv2d_bn(x, 384, 3, 3, strides=(2, 2), padding="valid")
    b3d = _chain(x, [(64, 1, 1), (96, 3, 3), (96, 3, 3, {"strides": (2, 2), "padding": "valid"})])
    x = layers.concatenate([b3, b3d, layers.MaxPooling2D((3, 3), strides=(2, 2))(x)], axis=3, name="mixed3")
    x = _mixed_17(x, 128, "mixed4")
    x = _mixed_17(x, 160, "mixed5")
    x = _mixed_17(x, 160, "mixed6")
    x = _mixed_17(x, 192, "mixed7")
    # mixed8: the grid 17 -> 8
    b3 = _chain(x, [(192, 1, 1), (320, 3, 3, {"strides": (2, 2), "padding": "valid"})])
    b7 = _chain(x, [(192, 1, 1), (192, 1, 7), (192, 7, 1), (192, 3, 3, {"strides": (2, 2), "padding": "valid"})])
    x = layers.concatenate([b3, b7, layers.MaxPooling2D((3, 3), strides=(2, 2))(x)], axis=3, name="mixed8")
    x = _mixed_8(x, 0)
    x = _mixed_8(x, 1)
    x = top(x, include_top, pooling, classes, classifier_activation, weights, named_pools=False)
    return finish(img, x, name, weights)


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
