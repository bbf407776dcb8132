"""tapeflow.keras: layers, models, losses, optimizers with TF2 Keras' API,
written in tapeflow ops (so ``tapeflow.function`` can trace them)."""
from . import backend, initializers, activations, regularizers, losses, layers, optimizers, utils  # noqa: F401
from . import models, metrics, datasets, callbacks, saving, constraints  # noqa: F401
from . import ops  # noqa: F401  (Keras 3's backend-neutral ops)
from .engine import Input, InputSpec  # noqa: F401
from .models import Model, Sequential, clone_model  # noqa: F401

__all__ = ["backend", "initializers", "activations", "regularizers", "losses", "layers", "optimizers", "utils",
           "models", "metrics", "datasets", "callbacks", "saving", "constraints", "ops", "Input", "InputSpec", "Model",
           "Sequential", "clone_model"]
