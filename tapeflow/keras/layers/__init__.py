"""keras.layers."""
from ..engine import Layer, InputSpec, InputLayer, Input  # noqa: F401
from .core import (Dense, Activation, Dropout, Flatten, Reshape, Lambda, Embedding, Concatenate, Add,  # noqa: F401
                   Subtract, Multiply, Average, Maximum, Minimum, ReLU, LeakyReLU, Softmax, ELU, GaussianNoise,
                   ThresholdedReLU,
                   concatenate, add, subtract, multiply, average, maximum, minimum)
from .normalization import (LayerNormalization, BatchNormalization, GroupNormalization,  # noqa: F401
                            RMSNormalization, UnitNormalization)
from .preprocessing import (PReLU, Permute, RepeatVector, Rescaling, Normalization,  # noqa: F401
                            CategoryEncoding, Discretization)
from .conv import (Conv1D, Conv2D, Conv2DTranspose, MaxPooling1D, MaxPooling2D, AveragePooling1D,  # noqa: F401
                   AveragePooling2D, GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalMaxPooling1D,
                   GlobalMaxPooling2D, ZeroPadding2D, UpSampling2D, Conv1DTranspose, DepthwiseConv2D,
                   SeparableConv2D)
MaxPool1D, MaxPool2D, AvgPool1D, AvgPool2D = MaxPooling1D, MaxPooling2D, AveragePooling1D, AveragePooling2D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D
GlobalAvgPool1D, GlobalMaxPool1D = GlobalAveragePooling1D, GlobalMaxPooling1D
Convolution1D, Convolution2D, Convolution2DTranspose = Conv1D, Conv2D, Conv2DTranspose
Convolution1DTranspose, SeparableConvolution2D = Conv1DTranspose, SeparableConv2D
from .attention import (EinsumDense, Dot, dot, Attention, AdditiveAttention, MultiHeadAttention)  # noqa: F401
from .reshaping import Cropping1D, Cropping2D, ZeroPadding1D, UpSampling1D, Identity  # noqa: F401
from .regularization import (ActivityRegularization, GaussianDropout, AlphaDropout, SpatialDropout1D,  # noqa: F401
                             SpatialDropout2D, SpatialDropout3D)
from .image_preprocessing import (Resizing, CenterCrop, RandomFlip, RandomCrop, RandomContrast,  # noqa: F401
                                  RandomBrightness, RandomRotation, RandomZoom, RandomTranslation)
from .recurrent import (SimpleRNNCell, LSTMCell, GRUCell, RNN, SimpleRNN, LSTM, GRU, Masking,  # noqa: F401
                        Wrapper, Bidirectional, TimeDistributed)


def __getattr__(name):
    # TFSMLayer loads SavedModels: built on first use, so importing the layers does not
    # import tapeflow.saved_model (and its checkpoint storage)
    if name == "TFSMLayer":
        from ...saved_model.keras_export import tfsm_layer_class
        cls = globals()["TFSMLayer"] = tfsm_layer_class()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
