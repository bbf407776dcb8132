"""Keras 3's ResNet50/101/152 (He et al. 2015, v1): a 7x7 stem, then stacks of bottleneck blocks
(1x1, 3x3, 1x1 convolutions with batch normalization; the stride on the first 1x1, as Keras)."""
from __future__ import annotations

from .. import layers
from . import imagenet_utils
from ._common import finish, image_input, top


def residual_block_v1(x, filters, kernel_size=3, stride=1, conv_shortcut=True, name=None):
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x)
        shortcut = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.Conv2D(filters, kernel_size, padding="same", name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_3_bn")(x)
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def stack_residual_blocks_v1(x, filters, blocks, stride1=2, name=None):
    x = residual_block_v1(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = residual_block_v1(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def ResNet(stack_fn, preact, use_bias, include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
           pooling=None, classes=1000, classifier_activation="softmax", name="resnet", weights_name=None):
    imagenet_utils.check_weights(weights, include_top, classes)
    shape = imagenet_utils.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    img = image_input(input_tensor, shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img)
    x = layers.Conv2D(64, 7, strides=2, use_bias=use_bias, name="conv1_conv")(x)
    if not preact:
        x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name="conv1_bn")(x)
        x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = stack_fn(x)
    if preact:
        x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name="post_bn")(x)
        x = layers.Activation("relu", name="post_relu")(x)
    x = top(x, include_top, pooling, classes, classifier_activation, weights)
    return finish(img, x, name, weights)


def _resnet(depths, name, **kw):
    def stack_fn(x):
        x = stack_residual_blocks_v1(x, 64, depths[0], stride1=1, name="conv2")
        x = stack_residual_blocks_v1(x, 128, depths[1], name="conv3")
        x = stack_residual_blocks_v1(x, 256, depths[2], name="conv4")
        return stack_residual_blocks_v1(x, 512, depths[3], name="conv5")
    return ResNet(stack_fn, preact=False, use_bias=True, name=name, **kw)


def ResNet50(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
             classifier_activation="softmax", name="resnet50"):
    return _resnet((3, 4, 6, 3), name, include_top=include_top, weights=weights, input_tensor=input_tensor,
                   input_shape=input_shape, pooling=pooling, classes=classes,
                   classifier_activation=classifier_activation)


def ResNet101(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
              classes=1000, classifier_activation="softmax", name="resnet101"):
    return _resnet((3, 4, 23, 3), name, include_top=include_top, weights=weights, input_tensor=input_tensor,
                   input_shape=input_shape, pooling=pooling, classes=classes,
                   classifier_activation=classifier_activation)


def ResNet152(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
              classes=1000, classifier_activation="softmax", name="resnet152"):
    return _resnet((3, 8, 36, 3), name, include_top=include_top, weights=weights, input_tensor=input_tensor,
                   input_shape=input_shape, pooling=pooling, classes=classes,
                   classifier_activation=classifier_activation)


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


decode_predictions = imagenet_utils.decode_predictions
