"""keras.layers."""
from ..engine import Layer, InputSpec, InputLayer, Input  # noqa: F401
from .core import (Dense, Activation, Dropout, Flatten, Reshape, Lambda, Embedding, Concatenate, Add,  # noqa: F401
                   Subtract, Multiply, Average, Maximum, Minimum, ReLU, LeakyReLU, Softmax, ELU, GaussianNoise,
                   concatenate, add, subtract, multiply, average, maximum, minimum)
from .normalization import LayerNormalization, BatchNormalization  # noqa: F401
from .preprocessing import PReLU, Permute, RepeatVector, Rescaling, Normalization  # noqa: F401
from .conv import (Conv1D, Conv2D, Conv2DTranspose, MaxPooling1D, MaxPooling2D, AveragePooling1D,  # noqa: F401
                   AveragePooling2D, GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalMaxPooling1D,
                   GlobalMaxPooling2D, ZeroPadding2D, UpSampling2D)
MaxPool1D, MaxPool2D, AvgPool1D, AvgPool2D = MaxPooling1D, MaxPooling2D, AveragePooling1D, AveragePooling2D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D
Convolution1D, Convolution2D, Convolution2DTranspose = Conv1D, Conv2D, Conv2DTranspose
from .recurrent import (SimpleRNNCell, LSTMCell, GRUCell, RNN, SimpleRNN, LSTM, GRU, Masking,  # noqa: F401
                        Bidirectional, TimeDistributed)
