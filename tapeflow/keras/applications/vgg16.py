"""Keras 3's VGG16 (Simonyan & Zisserman 2014): five blocks of 3x3 convolutions and max pooling,
then Flatten and two 4096-unit layers."""
from __future__ import annotations

from .. import layers
from . import imagenet_utils
from ._common import finish, image_input, top

_BLOCKS16 = ((64, 2), (128, 2), (256, 3), (512, 3), (512, 3))


def _vgg(blocks, name, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation):
    imagenet_utils.check_weights(weights, include_top, classes)
    shape = imagenet_utils.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    img = image_input(input_tensor, shape)
    x = img
    for b, (filters, n) in enumerate(blocks, start=1):
        for i in range(1, n + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same", name=f"block{b}_conv{i}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{b}_pool")(x)
    head = [layers.Flatten(name="flatten"), layers.Dense(4096, activation="relu", name="fc1"),
            layers.Dense(4096, activation="relu", name="fc2")]
    x = top(x, include_top, pooling, classes, classifier_activation, weights, flatten=head)
    return finish(img, x, name, weights)


def VGG16(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
          classifier_activation="softmax", name="vgg16"):
    return _vgg(_BLOCKS16, name, include_top, weights, input_tensor, input_shape, pooling, classes,
                classifier_activation)


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


decode_predictions = imagenet_utils.decode_predictions
