"""keras.optimizers.schedules: see ``tapeflow.optimizers.schedules``."""
from ...optimizers.schedules import *  # noqa: F401,F403
from ...optimizers.schedules import (LearningRateSchedule, ExponentialDecay, PiecewiseConstantDecay,  # noqa: F401
                                     CosineDecay, InverseTimeDecay, PolynomialDecay, serialize, deserialize)
