"""Keras 3's Xception (Chollet 2017): an entry flow of strided separable-convolution blocks with 1x1
convolution shortcuts, eight 728-channel middle blocks with identity shortcuts, an exit flow to
2048 channels. Layer for layer as Keras builds it (names, shapes, parameter counts; the shortcut
convolutions, their batch norms and the adds keep Keras' automatic names)."""
from __future__ import annotations

from .. import layers
from . import imagenet_utils
from ._common import finish, image_input, top


def _sep(x, filters, name, act_name=None):
    """(ReLU named ``act_name``,) separable 3x3 convolution ``name``, batch norm ``name_bn``."""
    if act_name is not None:
        x = layers.Activation("relu", name=act_name)(x)
    x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False, name=name)(x)
    return layers.BatchNormalization(axis=-1, name=f"{name}_bn")(x)


def _shortcut(x, filters):
    r = layers.Conv2D(filters, (1, 1), strides=(2, 2), padding="same", use_bias=False)(x)
    return layers.BatchNormalization(axis=-1)(r)


def Xception(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
             classifier_activation="softmax", name="xception"):
    imagenet_utils.check_weights(weights, include_top, classes)
    shape = imagenet_utils.obtain_input_shape(input_shape, 299, 71, include_top, weights)
    img = image_input(input_tensor, shape)
    x = layers.Conv2D(32, (3, 3), strides=(2, 2), use_bias=False, name="block1_conv1")(img)
    x = layers.BatchNormalization(axis=-1, name="block1_conv1_bn")(x)
    x = layers.Activation("relu", name="block1_conv1_act")(x)
    x = layers.Conv2D(64, (3, 3), use_bias=False, name="block1_conv2")(x)
    x = layers.BatchNormalization(axis=-1, name="block1_conv2_bn")(x)
    x = layers.Activation("relu", name="block1_conv2_act")(x)
    # entry flow: block 2 starts without a ReLU (the one before is block1's), its second is named
    # block2_sepconv2_act, as Keras names it
    residual = _shortcut(x, 128)
    x = _sep(x, 128, "block2_sepconv1")
    x = _sep(x, 128, "block2_sepconv2", "block2_sepconv2_act")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name="block2_pool")(x)
    x = layers.add([x, residual])
    for block, filters in ((3, 256), (4, 728)):
        residual = _shortcut(x, filters)
        x = _sep(x, filters, f"block{block}_sepconv1", f"block{block}_sepconv1_act")
        x = _sep(x, filters, f"block{block}_sepconv2", f"block{block}_sepconv2_act")
        x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name=f"block{block}_pool")(x)
        x = layers.add([x, residual])
    for i in range(8):                      # middle flow
        residual, prefix = x, f"block{i + 5}"
        for j in (1, 2, 3):
            x = _sep(x, 728, f"{prefix}_sepconv{j}", f"{prefix}_sepconv{j}_act")
        x = layers.add([x, residual])
    residual = _shortcut(x, 1024)           # exit flow
    x = _sep(x, 728, "block13_sepconv1", "block13_sepconv1_act")
    x = _sep(x, 1024, "block13_sepconv2", "block13_sepconv2_act")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name="block13_pool")(x)
    x = layers.add([x, residual])
    x = _sep(x, 1536, "block14_sepconv1")
    x = layers.Activation("relu", name="block14_sepconv1_act")(x)
    x = _sep(x, 2048, "block14_sepconv2")
    x = layers.Activation("relu", name="block14_sepconv2_act")(x)
    x = top(x, include_top, pooling, classes, classifier_activation, weights, named_pools=False)
    return finish(img, x, name, weights)


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
