"""tapeflow.nn: TF's nn namespace."""
from .ops.nn_ops import *  # noqa: F401,F403
from .ops.nn_ops import (relu, relu6, leaky_relu, elu, selu, gelu, swish, silu, softsign, sigmoid, tanh,  # noqa: F401
                         softplus, softmax, log_softmax, sigmoid_cross_entropy_with_logits,
                         softmax_cross_entropy_with_logits, sparse_softmax_cross_entropy_with_logits,
                         l2_loss, l2_normalize, bias_add, moments, dropout)
from .ops.array_ops import top_k  # noqa: F401,E402  (tf.nn.top_k and tf.math.top_k)
from .ops.nn_ops import (batch_normalization, embedding_lookup, in_top_k, sufficient_statistics,  # noqa: F401,E402
                         batch_norm_with_global_normalization, conv_transpose, pool, ctc_loss,
                         max_pool_with_argmax, embedding_lookup_sparse, safe_embedding_lookup_sparse,
                         ctc_greedy_decoder, collapse_repeated, ctc_unique_labels, ctc_beam_search_decoder,
                         dilation2d, erosion2d, fractional_max_pool, fractional_avg_pool,
                         depthwise_conv2d_backprop_filter, depthwise_conv2d_backprop_input,
                         atrous_conv2d_transpose, with_space_to_batch, isotonic_regression, approx_max_k,
                         approx_min_k)
from .ops.special_ops import log_poisson_loss, weighted_cross_entropy_with_logits  # noqa: F401,E402
from .ops.special_ops import space_to_batch_nd as space_to_batch  # noqa: F401,E402  (tf.nn.space_to_batch, TF 2)
from .ops.math_ops import zero_fraction  # noqa: F401,E402


class experimental:  # noqa: N801  (TF's namespace tf.nn.experimental)
    """tf.nn.experimental: dropout with a stateless seed, or a sampler of your own."""

    @staticmethod
    def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
        """TF's dropout with ``stateless_uniform(noise_shape, seed)`` draws: kept where the draw >=
        rate, scaled by 1 / (1 - rate) (TF's numbers: its stateless uniform is tapeflow's)."""
        from .ops.random_ops import stateless_uniform
        return experimental.general_dropout(x, rate, lambda shape, dtype: stateless_uniform(shape, seed, dtype=dtype),
                                            noise_shape=noise_shape)

    @staticmethod
    def general_dropout(x, rate, uniform_sampler, noise_shape=None, name=None):
        """Dropout drawing its uniforms from ``uniform_sampler(shape, dtype)``."""
        from .core.primitive import aval_of
        from .core.tensor import convert_to_tensor
        from .ops import array_ops as _A, math_ops as _M
        x = x if hasattr(x, "aval") else convert_to_tensor(x)
        if not 0 <= rate < 1:
            raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}")
        if aval_of(x).dtype.kind != "f":
            raise ValueError(f"`x.dtype` must be a floating point tensor as `x` will be scaled. Received: "
                             f"x_dtype={x.dtype}")
        if rate == 0:
            return x
        shape = tuple(x.shape) if noise_shape is None else tuple(noise_shape)
        u = uniform_sampler(shape=shape, dtype=x.dtype)
        scaled = _M.multiply(x, _M.cast(1.0 / (1.0 - rate), x.dtype))
        return _M.where(_M.greater_equal(u, _M.cast(rate, x.dtype)), scaled, _A.zeros_like(scaled))


from .ops.candidate_sampling import compute_accidental_hits, nce_loss, sampled_softmax_loss  # noqa: F401,E402
# (TF 2.21 exports these three under tf.nn too, the same functions as tf.random's)
from .ops.candidate_sampling import (fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler,  # noqa: F401,E402
                                    all_candidate_sampler)

# out-of-scope names (tapeflow/_unsupported.py NAMES) name their feature; any other missing name is an AttributeError
from ._unsupported import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("nn", "tapeflow.nn")
