"""keras.preprocessing.image: Keras' single-image helpers (aliases of keras.utils')."""
from .._image_utils import array_to_img, img_to_array, load_img, save_img, smart_resize  # noqa: F401

__all__ = ["array_to_img", "img_to_array", "load_img", "save_img", "smart_resize"]
