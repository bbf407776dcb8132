"""Keras 3's ResNet50V2/101V2/152V2 (He et al. 2016, pre-activation): the v1 stem without its batch
normalization, stacks of pre-activation bottleneck blocks (batch norm and ReLU before each
convolution; the stride on a stack's last block, its shortcut a 1x1 max pool), a final batch norm
and ReLU. Layer for layer as Keras builds them (names, shapes, parameter counts)."""
from __future__ import annotations

from .. import layers
from . import imagenet_utils
from .resnet import ResNet


def residual_block_v2(x, filters, kernel_size=3, stride=1, conv_shortcut=False, name=None):
    preact = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_preact_bn")(x)
    preact = layers.Activation("relu", name=f"{name}_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        # (unnamed, as Keras': its auto-name max_pooling2d, max_pooling2d_1, ...)
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return layers.Add(name=f"{name}_out")([shortcut, x])


def stack_residual_blocks_v2(x, filters, blocks, stride1=2, name=None):
    x = residual_block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for i in range(2, blocks):
        x = residual_block_v2(x, filters, name=f"{name}_block{i}")
    return residual_block_v2(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def _resnet_v2(depths, name, **kw):
    def stack_fn(x):
        x = stack_residual_blocks_v2(x, 64, depths[0], name="conv2")
        x = stack_residual_blocks_v2(x, 128, depths[1], name="conv3")
        x = stack_residual_blocks_v2(x, 256, depths[2], name="conv4")
        return stack_residual_blocks_v2(x, 512, depths[3], stride1=1, name="conv5")
    return ResNet(stack_fn, preact=True, use_bias=True, name=name, **kw)


def ResNet50V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
               classes=1000, classifier_activation="softmax", name="resnet50v2"):
    return _resnet_v2((3, 4, 6, 3), name, include_top=include_top, weights=weights, input_tensor=input_tensor,
                      input_shape=input_shape, pooling=pooling, classes=classes,
                      classifier_activation=classifier_activation)


def ResNet101V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="resnet101v2"):
    return _resnet_v2((3, 4, 23, 3), name, include_top=include_top, weights=weights, input_tensor=input_tensor,
                      input_shape=input_shape, pooling=pooling, classes=classes,
                      classifier_activation=classifier_activation)


def ResNet152V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="resnet152v2"):
    return _resnet_v2((3, 8, 36, 3), name, include_top=include_top, weights=weights, input_tensor=input_tensor,
                      input_shape=input_shape, pooling=pooling, classes=classes,
                      classifier_activation=classifier_activation)


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
