"""tapeflow.nn: TF's nn namespace."""
from .ops.nn_ops import *  # noqa: F401,F403
from .ops.nn_ops import (relu, relu6, leaky_relu, elu, selu, gelu, swish, silu, softsign, sigmoid, tanh,  # noqa: F401
                         softplus, softmax, log_softmax, sigmoid_cross_entropy_with_logits,
                         softmax_cross_entropy_with_logits, sparse_softmax_cross_entropy_with_logits,
                         l2_loss, l2_normalize, bias_add, moments, dropout)
from .ops.array_ops import top_k  # noqa: F401,E402  (tf.nn.top_k and tf.math.top_k)
from .ops.nn_ops import batch_normalization, embedding_lookup, in_top_k  # noqa: F401,E402
from .ops.special_ops import log_poisson_loss, weighted_cross_entropy_with_logits  # noqa: F401,E402
from .ops.math_ops import zero_fraction  # noqa: F401,E402
