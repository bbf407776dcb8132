"""tapeflow.keras: layers, models, losses, optimizers with TF2 Keras' API,
written in tapeflow ops (so ``tapeflow.function`` can trace them)."""
from . import backend, initializers, activations, regularizers, losses, layers, optimizers, utils  # noqa: F401
from . import models, metrics, datasets, callbacks, saving, constraints, preprocessing  # noqa: F401
from . import ops  # noqa: F401  (Keras 3's backend-neutral ops)
from .engine import Input, InputSpec  # noqa: F401
from .models import Model, Sequential, clone_model  # noqa: F401
from . import random, tree, config, applications, mixed_precision  # noqa: F401,E402
# wave 25: TF 2.21's tf.keras modules; dtype_policies works, the others' names refuse when used
from . import dtype_policies, distribution, export, quantizers, visualization, wrappers  # noqa: F401,E402
# Keras 3's top-level names for its base classes
from .engine import Layer, KerasTensor  # noqa: F401,E402
from .losses import Loss  # noqa: F401,E402
from .metrics import Metric  # noqa: F401,E402
from .optimizers import Optimizer  # noqa: F401,E402
from .initializers import Initializer  # noqa: F401,E402
from .regularizers import Regularizer  # noqa: F401,E402
from ..core.tensor import Variable  # noqa: F401,E402

__all__ = ["backend", "initializers", "activations", "regularizers", "losses", "layers", "optimizers", "utils",
           "models", "metrics", "datasets", "callbacks", "saving", "constraints", "preprocessing", "ops", "Input",
           "InputSpec", "Model", "Sequential", "clone_model", "random", "tree", "config", "applications",
           "mixed_precision", "dtype_policies", "distribution", "export", "quantizers", "visualization", "wrappers",
           "Layer", "KerasTensor", "Loss", "Metric", "Optimizer", "Initializer", "Regularizer", "Variable"]
