"""keras.layers."""
from ..engine import Layer, InputSpec, InputLayer, Input  # noqa: F401
from .core import (Dense, Activation, Dropout, Flatten, Reshape, Lambda, Embedding, Concatenate, Add,  # noqa: F401
                   Subtract, Multiply, Average, Maximum, Minimum, ReLU, LeakyReLU, Softmax, ELU, GaussianNoise,
                   ThresholdedReLU,
                   concatenate, add, subtract, multiply, average, maximum, minimum)
from .normalization import (LayerNormalization, BatchNormalization, GroupNormalization,  # noqa: F401
                            RMSNormalization, UnitNormalization, SpectralNormalization)
from .preprocessing import MelSpectrogram  # noqa: F401,E402  (wave 21)
from .preprocessing import STFTSpectrogram  # noqa: F401,E402  (wave 22)
from .preprocessing import (PReLU, Permute, RepeatVector, Rescaling, Normalization,  # noqa: F401
                            CategoryEncoding, Discretization)
from .conv import (Conv1D, Conv2D, Conv2DTranspose, MaxPooling1D, MaxPooling2D, AveragePooling1D,  # noqa: F401
                   AveragePooling2D, GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalMaxPooling1D,
                   GlobalMaxPooling2D, ZeroPadding2D, UpSampling2D, Conv1DTranspose, DepthwiseConv2D,
                   SeparableConv2D, Conv3D, Conv3DTranspose, MaxPooling3D, AveragePooling3D,
                   GlobalAveragePooling3D, GlobalMaxPooling3D, DepthwiseConv1D, SeparableConv1D,
                   AdaptiveAveragePooling1D, AdaptiveAveragePooling2D, AdaptiveAveragePooling3D,
                   AdaptiveMaxPooling1D, AdaptiveMaxPooling2D, AdaptiveMaxPooling3D)
MaxPool1D, MaxPool2D, AvgPool1D, AvgPool2D = MaxPooling1D, MaxPooling2D, AveragePooling1D, AveragePooling2D
MaxPool3D, AvgPool3D = MaxPooling3D, AveragePooling3D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D
GlobalAvgPool3D, GlobalMaxPool3D = GlobalAveragePooling3D, GlobalMaxPooling3D
Convolution3D, Convolution3DTranspose = Conv3D, Conv3DTranspose
GlobalAvgPool1D, GlobalMaxPool1D = GlobalAveragePooling1D, GlobalMaxPooling1D
Convolution1D, Convolution2D, Convolution2DTranspose = Conv1D, Conv2D, Conv2DTranspose
Convolution1DTranspose, SeparableConvolution2D = Conv1DTranspose, SeparableConv2D
SeparableConvolution1D = SeparableConv1D
from .attention import (EinsumDense, Dot, dot, Attention, AdditiveAttention, MultiHeadAttention,  # noqa: F401
                        GroupQueryAttention)
from .reshaping import (Cropping1D, Cropping2D, Cropping3D, ZeroPadding1D, ZeroPadding3D,  # noqa: F401
                        UpSampling1D, UpSampling3D, Identity)
from .regularization import (ActivityRegularization, GaussianDropout, AlphaDropout, SpatialDropout1D,  # noqa: F401
                             SpatialDropout2D, SpatialDropout3D)
from .image_preprocessing import (Resizing, CenterCrop, RandomFlip, RandomCrop, RandomContrast,  # noqa: F401
                                  RandomBrightness, RandomRotation, RandomZoom, RandomTranslation)
from .image_preprocessing import (RandomGrayscale, RandomHue, RandomSaturation,  # noqa: F401  (aug19)
                                  RandomColorDegeneration, RandomInvert, RandomPosterization, Solarization,
                                  RandomSharpness, AutoContrast, Equalization, RandomColorJitter,
                                  RandomErasing, RandomGaussianBlur, RandomShear, MixUp, CutMix, Pipeline,
                                  RandomHeight, RandomWidth, RandomPerspective, RandAugment,
                                  AugMix)
from .recurrent import (SimpleRNNCell, LSTMCell, GRUCell, StackedRNNCells, RNN, SimpleRNN,  # noqa: F401
                        LSTM, GRU, Masking, Wrapper, Bidirectional, TimeDistributed)
from .conv_lstm import ConvLSTMCell, ConvLSTM1D, ConvLSTM2D, ConvLSTM3D  # noqa: F401
from .lookup import (StringLookup, IntegerLookup, Hashing, HashedCrossing,  # noqa: F401  (lookup19)
                     TextVectorization)



def serialize(layer):
    """Keras 3's layer config dict ({"module", "class_name", "config", ...})."""
    from ..saving import serialize_keras_object
    return serialize_keras_object(layer)


def deserialize(config, custom_objects=None):
    """A layer from serialize()'s dict."""
    from ..saving import deserialize_keras_object
    return deserialize_keras_object(config, custom_objects)


def __getattr__(name):
    # TFSMLayer loads SavedModels: built on first use, so importing the layers does not
    # import tapeflow.saved_model (and its checkpoint storage)
    if name == "TFSMLayer":
        from ...saved_model.keras_export import tfsm_layer_class
        cls = globals()["TFSMLayer"] = tfsm_layer_class()
        return cls
    from ..._unsupported import NAMES, unsupported_name
    if f"keras.layers.{name}" in NAMES:   # other backends' wrappers (JaxLayer, ...): say so
        raise unsupported_name(f"keras.layers.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
from .core import ReversibleEmbedding  # noqa: F401,E402  (wave 21)
from .image_preprocessing import MaxNumBoundingBoxes, ContrastLimitedAdaptiveHistogramEqualization  # noqa: F401,E402,E501  (wave 21)
from .image_preprocessing import RandomElasticTransform  # noqa: F401,E402  (wave 24)

# wave 25: other Keras backends' wrappers exist under TF's names (importable, subclassable); making
# one raises UnsupportedFeatureError naming the feature
from ..._unsupported import unsupported_class as _unsupported_class  # noqa: E402
from ..engine import Layer as _Layer  # noqa: E402
JaxLayer = _unsupported_class("keras.layers.JaxLayer", base=_Layer)
FlaxLayer = _unsupported_class("keras.layers.FlaxLayer", base=JaxLayer)
TorchModuleWrapper = _unsupported_class("keras.layers.TorchModuleWrapper", base=_Layer)
