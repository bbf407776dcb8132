"""Keras 3's shared pieces of the ImageNet models: the input-shape rules, the weights argument,
``preprocess_input``'s three modes, and ``decode_predictions`` (whose class index is a download)."""
from __future__ import annotations

import os
import warnings

import numpy as np

from ...core.primitive import aval_of
from ...core.tensor import Tensor, convert_to_tensor
from ...ops import array_ops as A
from ...ops import math_ops as M
from .. import activations
from .. import backend


def check_weights(weights, include_top, classes):
    """Keras' checks of ``weights``/``classes``; pretrained ImageNet weights are refused with the
    reason (Keras downloads .h5 files; tapeflow reads neither HDF5 nor the network here)."""
    # a path: a file, or a tapeflow checkpoint prefix (its .json index beside the data)
    if not (weights in {"imagenet", None} or os.path.exists(str(weights)) or os.path.exists(f"{weights}.json")):
        raise ValueError("The `weights` argument should be either `None` (random initialization), 'imagenet' "
                         "(pre-training on ImageNet), or the path to the weights file to be loaded.  Received: "
                         f"weights={weights}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError("If using `weights='imagenet'` with `include_top=True`, `classes` should be 1000.  "
                         f"Received classes={classes}")
    if weights == "imagenet":
        raise NotImplementedError(
            "weights='imagenet': Keras downloads the pretrained weights as HDF5 (.h5) files, which tapeflow "
            "does not read (and tests run without a network). Build the model with weights=None, then load "
            "weights saved by tapeflow (model.load_weights(path)), or pass that path as `weights`")


def obtain_input_shape(input_shape, default_size, min_size, require_flatten, weights=None):
    """Keras' obtain_input_shape for channels_last images."""
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        if input_shape[-1] not in {1, 3}:
            warnings.warn("This model usually expects 1 or 3 input channels. However, it was passed an "
                          f"input_shape with {input_shape[-1]} input channels.", stacklevel=3)
        default_shape = (default_size, default_size, input_shape[-1])
    else:
        default_shape = (default_size, default_size, 3)
    if input_shape:
        input_shape = tuple(input_shape)
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        if (input_shape[0] is not None and input_shape[0] < min_size) or \
                (input_shape[1] is not None and input_shape[1] < min_size):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: "
                             f"input_shape={input_shape}")
    else:
        input_shape = default_shape if require_flatten else (None, None, 3)
    if require_flatten and None in input_shape:
        raise ValueError("If `include_top` is True, you should specify a static `input_shape`. Received: "
                         f"input_shape={input_shape}")
    return input_shape


def validate_activation(classifier_activation, weights):
    if weights is None:
        return
    if activations.get(classifier_activation) not in {activations.get("softmax"), activations.get(None)}:
        raise ValueError("Only `None` and `softmax` activations are allowed for the `classifier_activation` "
                         "argument when using pretrained weights, with `include_top=True`; Received: "
                         f"classifier_activation={classifier_activation}")


def correct_pad(inputs, kernel_size):
    """The ((top, bottom), (left, right)) padding a strided 'valid' conv needs to act as 'same'."""
    size = tuple(inputs.shape)[1:3]
    k = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    c = (k[0] // 2, k[1] // 2)
    return ((c[0] - adjust[0], c[0]), (c[1] - adjust[1], c[1]))


_MEAN_CAFFE = (103.939, 116.779, 123.68)
_TORCH = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))


def preprocess_input(x, data_format=None, mode="caffe"):
    """Keras' preprocess_input: 'tf' scales to [-1, 1]; 'torch' to [0, 1] then ImageNet's mean
    and std per channel; 'caffe' (default) RGB -> BGR then the BGR means subtracted. NumPy input
    gives NumPy (a float copy of an int array; a float array is modified in place, as Keras)."""
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}")
    if data_format not in (None, "channels_last"):
        raise ValueError(f"data_format={data_format!r}: tapeflow's images are channels_last")
    if isinstance(x, np.ndarray):
        if not issubclass(x.dtype.type, np.floating):
            x = x.astype(backend.floatx(), copy=False)
        if mode == "tf":
            x /= 127.5
            x -= 1.0
            return x
        if mode == "torch":
            x /= 255.0
            mean, std = _TORCH
        else:
            x = x[..., ::-1]
            mean, std = _MEAN_CAFFE, None
        for c in range(3):
            x[..., c] -= mean[c]
            if std is not None:
                x[..., c] /= std[c]
        return x
    t = x if isinstance(x, Tensor) or hasattr(x, "aval") else convert_to_tensor(x)
    if aval_of(t).dtype.kind != "f":
        t = M.cast(t, backend.floatx())
    dt = aval_of(t).dtype
    if mode == "tf":
        return t / M.cast(127.5, dt) - M.cast(1.0, dt)
    if mode == "torch":
        mean, std = _TORCH
        return (t / M.cast(255.0, dt) - np.array(mean, dt)) / np.array(std, dt)
    return A.reverse(t, [-1]) - np.array(_MEAN_CAFFE, dt)


def decode_predictions(preds, top=5):
    raise NotImplementedError("decode_predictions needs ImageNet's class index (imagenet_class_index.json), "
                              "which Keras downloads; tapeflow has no network access for it here")
