"""keras.optimizers: the optimizers of ``tapeflow.optimizers``."""
from ...optimizers import (Optimizer, SGD, Adam, AdamW, RMSprop, Adagrad, LBFGS, lbfgs_minimize,  # noqa: F401
                           LBFGSResult, get, serialize, deserialize, legacy)
from . import schedules  # noqa: F401
