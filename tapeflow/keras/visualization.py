"""``keras.visualization`` (TF 2.21's tf.keras has it): Keras 3's drawing and plotting of boxes,
masks and image galleries (OpenCV and Matplotlib). Not dependencies of tapeflow: every name exists
and raises UnsupportedFeatureError when called; tf.image.draw_bounding_boxes is implemented."""
from __future__ import annotations

from .._unsupported import unsupported_function

_WHAT = ("Keras' visualization helpers (they draw with OpenCV and plot with Matplotlib, not dependencies of "
         "tapeflow); tf.image.draw_bounding_boxes draws boxes on a batch of images")
_FUNCTIONS = ("draw_bounding_boxes", "draw_segmentation_masks", "plot_bounding_box_gallery", "plot_image_gallery",
              "plot_segmentation_mask_gallery")
for _n in _FUNCTIONS:
    globals()[_n] = unsupported_function(f"keras.visualization.{_n}", _WHAT)
del _n
__all__ = list(_FUNCTIONS)
