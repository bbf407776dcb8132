"""keras.preprocessing: TF 2.21's aliases of keras.utils' dataset makers, and its ``image`` and
``sequence`` sub-namespaces (the same functions, not copies)."""
from ..utils import image_dataset_from_directory, text_dataset_from_directory, timeseries_dataset_from_array  # noqa: F401,E501
from . import image, sequence  # noqa: F401

__all__ = ["image", "sequence", "image_dataset_from_directory", "text_dataset_from_directory",
           "timeseries_dataset_from_array"]
