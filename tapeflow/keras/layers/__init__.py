"""keras.layers."""
from ..engine import Layer, InputSpec, InputLayer, Input  # noqa: F401
from .core import (Dense, Activation, Dropout, Flatten, Reshape, Lambda, Embedding, Concatenate, Add,  # noqa: F401
                   Subtract, Multiply, Average, Maximum, Minimum, ReLU, LeakyReLU, Softmax, ELU, GaussianNoise,
                   concatenate, add, subtract, multiply, average, maximum, minimum)
from .normalization import LayerNormalization, BatchNormalization  # noqa: F401
