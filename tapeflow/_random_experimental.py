"""tapeflow.random.experimental: TF 2.21's tf.random.experimental namespace (the Generator API under its
older names, stateless_split/fold_in, index_shuffle, stateless_shuffle)."""
from .ops.random_ops import (Algorithm, Generator, create_rng_state, get_global_generator,  # noqa: F401
                             set_global_generator)
from .ops.random_ops import split as stateless_split, fold_in as stateless_fold_in  # noqa: F401
from .ops.random_shuffle_ops import index_shuffle, stateless_shuffle  # noqa: F401
