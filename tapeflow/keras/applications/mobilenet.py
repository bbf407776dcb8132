"""Keras 3's MobileNet (v1, Howard et al. 2017): a 3x3 convolution, then 13 depthwise-separable
blocks (3x3 depthwise, 1x1 pointwise, each with batch norm and ReLU6; strided blocks pad bottom/right
and convolve 'valid'), widths scaled by ``alpha``; its top is a 1x1 convolution over the pooled
features. Layer for layer as Keras builds it (names, shapes, parameter counts)."""
from __future__ import annotations

from .. import layers
from . import imagenet_utils
from ._common import finish, image_input

# (pointwise filters, strides) of the 13 depthwise-separable blocks
_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1), (512, 1),
           (512, 1), (1024, 2), (1024, 1))


def _conv_block(inputs, filters, alpha, kernel=(3, 3), strides=(1, 1)):
    x = layers.Conv2D(int(filters * alpha), kernel, padding="same", use_bias=False, strides=strides,
                      name="conv1")(inputs)
    x = layers.BatchNormalization(axis=-1, name="conv1_bn")(x)
    return layers.ReLU(6.0, name="conv1_relu")(x)


def _depthwise_conv_block(inputs, pointwise_conv_filters, alpha, depth_multiplier=1, strides=1, block_id=1):
    x = inputs
    if strides != 1:
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
    x = layers.DepthwiseConv2D((3, 3), padding="same" if strides == 1 else "valid", depth_multiplier=depth_multiplier,
                               strides=strides, use_bias=False, name=f"conv_dw_{block_id}")(x)
    x = layers.BatchNormalization(axis=-1, name=f"conv_dw_{block_id}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = layers.Conv2D(int(pointwise_conv_filters * alpha), (1, 1), padding="same", use_bias=False, strides=(1, 1),
                      name=f"conv_pw_{block_id}")(x)
    x = layers.BatchNormalization(axis=-1, name=f"conv_pw_{block_id}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


def MobileNet(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=1e-3, include_top=True, weights="imagenet",
              input_tensor=None, pooling=None, classes=1000, classifier_activation="softmax", name=None):
    imagenet_utils.check_weights(weights, include_top, classes)
    if input_shape is None:
        default_size = 224
    else:
        rows, cols = input_shape[0], input_shape[1]
        default_size = rows if rows == cols and rows in (128, 160, 192, 224) else 224
    shape = imagenet_utils.obtain_input_shape(input_shape, default_size, 32, include_top, weights)
    rows = shape[0]
    img = image_input(input_tensor, shape)
    x = _conv_block(img, 32, alpha, strides=(2, 2))
    for block_id, (filters, stride) in enumerate(_BLOCKS, start=1):
        x = _depthwise_conv_block(x, filters, alpha, depth_multiplier, strides=stride, block_id=block_id)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    if name is None:
        name = f"mobilenet_{alpha:0.2f}_{rows}"
    return finish(img, x, name, weights)


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
