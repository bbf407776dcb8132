"""keras.preprocessing.sequence: ``pad_sequences`` (keras.utils')."""
from ..utils import pad_sequences  # noqa: F401

__all__ = ["pad_sequences"]
