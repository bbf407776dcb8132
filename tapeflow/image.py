"""tapeflow.image: the part of TF's ``tf.image`` that is arithmetic on float images.

Images are ``[..., height, width, channels]`` (NHWC, as TF). Every function composes
existing ops, so it traces into compiled code and has gradients of every order -- unlike
TF, where ``adjust_contrast`` is one kernel with no gradient (``LookupError: gradient
registry has no entry for: AdjustContrastv2``; see docs/differences.md).
Flips take any dtype; for the arithmetic ones integer images (TF converts uint8 to float
and back, saturating) are not supported: they raise a TypeError that says to cast first.
"""
from __future__ import annotations

from .core.tensor import Tensor, convert_to_tensor
from .errors import InvalidArgumentError
from .ops import array_ops as _A
from .ops import math_ops as _M

__all__ = ["adjust_contrast", "adjust_brightness", "flip_left_right", "flip_up_down"]


def _image(fn, images, min_rank, any_dtype=False):
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.shape.rank < min_rank:
        raise InvalidArgumentError(f"tf.image.{fn}: images must be at least {min_rank}-D "
                                   f"([..., height, width, channels]), got shape {x.shape}")
    if not x.dtype.is_floating and not any_dtype:
        raise TypeError(f"tf.image.{fn}: images of dtype {x.dtype.name} are not supported; cast them to "
                        f"a float dtype first (tf.cast(images, tf.float32) / 255.0 for uint8 pixels)")
    return x


def adjust_contrast(images, contrast_factor, name=None):
    """``(x - mean) * contrast_factor + mean``, the mean of each channel over height and width
    (TF's definition)."""
    x = _image("adjust_contrast", images, 3)
    mean = _M.reduce_mean(x, axis=[-3, -2], keepdims=True)
    factor = _M.cast(contrast_factor, x.dtype)
    return _M.add(_M.multiply(_M.subtract(x, mean), factor), mean)


def adjust_brightness(image, delta):
    """``image + delta``."""
    x = _image("adjust_brightness", image, 0)
    return _M.add(x, _M.cast(delta, x.dtype))


def flip_left_right(image):
    """Reverses the width axis (``[..., height, width, channels]``)."""
    return _A.reverse(_image("flip_left_right", image, 3, any_dtype=True), [-2])  # (a flip: any dtype, as TF)


def flip_up_down(image):
    """Reverses the height axis."""
    return _A.reverse(_image("flip_up_down", image, 3, any_dtype=True), [-3])
