"""keras.preprocessing.image: Keras' single-image helpers (aliases of keras.utils') and Keras 2's
``ImageDataGenerator`` with its iterators and transform helpers (Keras 3 keeps them as legacy; TF 2.21
exports them here)."""
from .._image_utils import array_to_img, img_to_array, load_img, save_img, smart_resize  # noqa: F401
from ._image_data_generator import (DirectoryIterator, ImageDataGenerator, Iterator,  # noqa: F401
                                    NumpyArrayIterator, apply_affine_transform, apply_brightness_shift,
                                    apply_channel_shift, random_brightness, random_channel_shift,
                                    random_rotation, random_shear, random_shift, random_zoom)

__all__ = ["array_to_img", "img_to_array", "load_img", "save_img", "smart_resize", "ImageDataGenerator",
           "Iterator", "NumpyArrayIterator", "DirectoryIterator", "apply_affine_transform",
           "apply_brightness_shift", "apply_channel_shift", "random_brightness", "random_channel_shift",
           "random_rotation", "random_shear", "random_shift", "random_zoom"]
