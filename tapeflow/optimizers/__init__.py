"""tapeflow.optimizers (also ``tapeflow.keras.optimizers``): first-order
optimizers with Keras' API and update rules, learning-rate schedules, and
PyTorch's L-BFGS (``LBFGS``, ``lbfgs_minimize``)."""
from . import schedules  # noqa: F401
from .base import Optimizer  # noqa: F401
from .first_order import SGD, Adam, AdamW, RMSprop, Adagrad, Nadam, Adamax, Adadelta, Lion  # noqa: F401
from .lbfgs import LBFGS, lbfgs_minimize, LBFGSResult  # noqa: F401
from .loss_scale import LossScaleOptimizer  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Nadam", "Adamax", "Adadelta", "Lion", "LBFGS",
           "lbfgs_minimize", "LBFGSResult", "LossScaleOptimizer",
           "schedules", "get", "serialize", "deserialize", "legacy"]

_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad, "nadam": Nadam,
            "adamax": Adamax, "adadelta": Adadelta, "lion": Lion}


def get(identifier, **kwargs):
    """An optimizer from a name ("adam"), a config dict, or an Optimizer."""
    if isinstance(identifier, (Optimizer, LossScaleOptimizer)):    # (the latter wraps an Optimizer)
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        if cls is None:
            raise ValueError(f"unknown optimizer {identifier!r}; known: {sorted(_BY_NAME)}")
        return cls(**kwargs)
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise ValueError(f"cannot interpret {identifier!r} as an optimizer")


def serialize(optimizer):
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config):
    if config.get("class_name") == "LossScaleOptimizer":     # (its config holds the inner optimizer's)
        return LossScaleOptimizer.from_config(config.get("config", {}))
    cls = _BY_NAME.get(config["class_name"].lower())
    if cls is None:
        raise ValueError(f"unknown optimizer class {config['class_name']!r}")
    return cls.from_config(config.get("config", {}))


class legacy:  # noqa: N801  (tf.keras.optimizers.legacy.Adam etc. map to the same classes)
    Optimizer = Optimizer
    SGD = SGD
    Adam = Adam
    RMSprop = RMSprop
    Adagrad = Adagrad


# wave 20 (api20): Keras 3's Ftrl and Lamb
from .first_order import Adafactor, Ftrl, Lamb  # noqa: E402
__all__ += ["Adafactor", "Ftrl", "Lamb"]
_BY_NAME.update(adafactor=Adafactor, ftrl=Ftrl, lamb=Lamb)
legacy.Ftrl = Ftrl   # (tf.optimizers.legacy.Ftrl, as legacy's other names: the same class; wave 25)

# wave 21 (keras21): Keras 3's Muon and ScheduleFreeAdamW
from .keras3 import Muon, ScheduleFreeAdamW, MultiOptimizer, OptimizerMap  # noqa: E402
__all__ += ["Muon", "ScheduleFreeAdamW", "MultiOptimizer", "OptimizerMap"]
_BY_NAME.update(muon=Muon, schedulefreeadamw=ScheduleFreeAdamW, multioptimizer=MultiOptimizer)
