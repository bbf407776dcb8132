"""keras.optimizers: the optimizers of ``tapeflow.optimizers``."""
from ...optimizers import (Optimizer, SGD, Adam, AdamW, RMSprop, Adagrad, Nadam, Adamax, Adadelta, Lion,  # noqa: F401
                           LBFGS, lbfgs_minimize, LossScaleOptimizer,
                           LBFGSResult, get, serialize, deserialize, legacy)
from . import schedules  # noqa: F401
from ...optimizers import Adafactor, Ftrl, Lamb  # noqa: F401,E402  (wave 20)
from ...optimizers import Muon, ScheduleFreeAdamW, MultiOptimizer, OptimizerMap  # noqa: F401,E402  (wave 21)
