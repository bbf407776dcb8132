"""keras.optimizers: the optimizers of ``tapeflow.optimizers``."""
from ...optimizers import (Optimizer, SGD, Adam, AdamW, RMSprop, Adagrad, Nadam, Adamax, Adadelta, Lion,  # noqa: F401
                           Ftrl, Lamb, LBFGS, lbfgs_minimize,
                           LBFGSResult, get, serialize, deserialize, legacy)
from . import schedules  # noqa: F401
