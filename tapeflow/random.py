"""tapeflow.random: seeded random numbers (see ops/random_ops.py)."""
from .ops.random_ops import (Algorithm, Generator, set_seed, get_global_generator, set_global_generator,  # noqa: F401
                             normal, uniform, truncated_normal, categorical, shuffle,
                             stateless_normal, stateless_uniform, stateless_truncated_normal,
                             split, fold_in, create_rng_state, stateless_categorical,
                             gamma, poisson, stateless_gamma, stateless_poisson)
from .ops.candidate_sampling import (log_uniform_candidate_sampler, uniform_candidate_sampler,  # noqa: F401,E402
                                    fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler,
                                    all_candidate_sampler)
from . import _random_experimental as experimental  # noqa: F401,E402  (tf.random.experimental)
from .ops.random_binomial_ops import stateless_binomial, stateless_parameterized_truncated_normal  # noqa: F401,E402
