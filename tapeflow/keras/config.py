"""``keras.config``: Keras 3's global settings that apply to tapeflow (float type, epsilon, image
data format, logging); the others are accepted as Keras' no-ops where they are (flash attention,
traceback filtering) and refused where they would change behaviour tapeflow does not have."""
from __future__ import annotations

import os as _os
import warnings as _warnings

from .backend import (backend, epsilon, floatx, image_data_format, set_epsilon, set_floatx,  # noqa: F401
                      set_image_data_format)

__all__ = ["backend", "epsilon", "floatx", "set_epsilon", "set_floatx", "image_data_format",
           "set_image_data_format", "enable_interactive_logging", "disable_interactive_logging",
           "is_interactive_logging_enabled", "enable_unsafe_deserialization", "enable_traceback_filtering",
           "disable_traceback_filtering", "is_traceback_filtering_enabled", "enable_flash_attention",
           "disable_flash_attention", "is_flash_attention_enabled", "dtype_policy", "set_dtype_policy",
           "is_nnx_enabled", "set_backend", "max_epochs", "set_max_epochs", "max_steps_per_epoch",
           "set_max_steps_per_epoch"]

_STATE = {"interactive_logging": True, "traceback_filtering": True, "flash_attention": None}


# Keras 3's debugging caps on fit (epochs) and on fit/evaluate/predict (steps per epoch); Keras reads
# KERAS_MAX_EPOCHS / KERAS_MAX_STEPS_PER_EPOCH at import, so does tapeflow
_CAPS = {"epochs": int(_os.environ["KERAS_MAX_EPOCHS"]) if "KERAS_MAX_EPOCHS" in _os.environ else None,
         "steps": int(_os.environ["KERAS_MAX_STEPS_PER_EPOCH"]) if "KERAS_MAX_STEPS_PER_EPOCH" in _os.environ
         else None}


def set_max_epochs(max_epochs):
    """Cap the epochs of every ``fit`` (None: no cap); fit warns "Limiting epochs to N", as Keras."""
    _CAPS["epochs"] = max_epochs


def max_epochs():
    return _CAPS["epochs"]


def set_max_steps_per_epoch(max_steps_per_epoch):
    """Cap the steps of each epoch of ``fit`` and of ``evaluate``/``predict`` (None: no cap): a smaller
    cap than the ``steps_per_epoch``/``steps`` given (or none given) replaces it, with Keras' warning
    "Limiting steps_per_epoch to N"; as a ``steps_per_epoch`` would, one iterator then runs across
    fit's epochs."""
    _CAPS["steps"] = max_steps_per_epoch


def max_steps_per_epoch():
    return _CAPS["steps"]


def _capped_epochs(epochs):
    """fit's epochs under ``max_epochs`` (Keras' TF trainer: a smaller cap wins, with a warning)."""
    cap = _CAPS["epochs"]
    if cap and cap < epochs:
        _warnings.warn("Limiting epochs to %d" % cap, stacklevel=3)
        return cap
    return epochs


def _capped_steps(steps):
    """The steps of an epoch under ``max_steps_per_epoch`` (Keras' EpochIterator: the cap replaces
    no steps or more steps, with a warning)."""
    cap = _CAPS["steps"]
    if cap and (not steps or cap < steps):
        _warnings.warn("Limiting steps_per_epoch to %d" % cap, stacklevel=3)
        return cap
    return steps


def is_nnx_enabled():
    """Flax NNX is a JAX backend feature: off, as on TF's Keras."""
    return False


_OTHER_BACKENDS = ("jax", "torch", "numpy", "openvino")


def set_backend(backend):
    """Keras 3 reloads itself on another backend. tapeflow is TF's API only: "tensorflow" is what it
    runs already (a no-op); Keras' other backends are refused by name, any other name is Keras'
    ValueError."""
    if backend == "tensorflow":
        return
    from .._unsupported import UnsupportedFeatureError
    if backend in _OTHER_BACKENDS:
        raise UnsupportedFeatureError(
            f"keras.config.set_backend({backend!r}): tapeflow implements TF's Keras only (its backend is "
            "'tensorflow'); Keras' other backends (JAX, PyTorch, NumPy, OpenVINO) are out of scope")
    raise ValueError(f"keras.config.set_backend({backend!r}): unknown backend. Available backends are "
                     "('tensorflow', 'jax', 'torch', 'numpy' and 'openvino'); tapeflow runs 'tensorflow'")


def enable_interactive_logging():
    _STATE["interactive_logging"] = True


def disable_interactive_logging():
    _STATE["interactive_logging"] = False


def is_interactive_logging_enabled():
    return _STATE["interactive_logging"]


def enable_unsafe_deserialization():
    """Keras' switch for loading Lambda layers' bytecode: tapeflow's saved models hold no code."""


def enable_traceback_filtering():
    _STATE["traceback_filtering"] = True


def disable_traceback_filtering():
    _STATE["traceback_filtering"] = False


def is_traceback_filtering_enabled():
    return _STATE["traceback_filtering"]


def enable_flash_attention():
    _STATE["flash_attention"] = True


def disable_flash_attention():
    _STATE["flash_attention"] = False


def is_flash_attention_enabled():
    return _STATE["flash_attention"]


# Keras 3's keras.config.dtype_policy / set_dtype_policy are keras.mixed_precision's global policy
from .mixed_precision import dtype_policy, set_dtype_policy  # noqa: E402,F401
