"""tapeflow.keras: layers, models, losses, optimizers with TF2 Keras' API,
written in tapeflow ops (so ``tapeflow.function`` can trace them)."""
from . import backend, initializers, activations, regularizers, losses, layers, optimizers, utils  # noqa: F401
from . import models, metrics, datasets, callbacks, saving, constraints, preprocessing  # noqa: F401
from .engine import Input, InputSpec  # noqa: F401
from .models import Model, Sequential, clone_model  # noqa: F401

__all__ = ["backend", "initializers", "activations", "regularizers", "losses", "layers", "optimizers", "utils",
           "models", "metrics", "datasets", "callbacks", "saving", "constraints", "preprocessing", "Input", "InputSpec", "Model",
           "Sequential", "clone_model"]
