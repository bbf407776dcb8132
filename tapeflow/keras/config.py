"""``keras.config``: Keras 3's global settings that apply to tapeflow (float type, epsilon, image
data format, logging); the others are accepted as Keras' no-ops where they are (flash attention,
traceback filtering) and refused where they would change behaviour tapeflow does not have."""
from __future__ import annotations

from .backend import epsilon, floatx, set_epsilon, set_floatx  # noqa: F401

__all__ = ["backend", "epsilon", "floatx", "set_epsilon", "set_floatx", "image_data_format",
           "set_image_data_format", "enable_interactive_logging", "disable_interactive_logging",
           "is_interactive_logging_enabled", "enable_unsafe_deserialization", "enable_traceback_filtering",
           "disable_traceback_filtering", "is_traceback_filtering_enabled", "enable_flash_attention",
           "disable_flash_attention", "is_flash_attention_enabled", "dtype_policy", "set_dtype_policy"]

_STATE = {"interactive_logging": True, "traceback_filtering": True, "flash_attention": None}


def backend():
    """The backend Keras runs on: tapeflow ports TF programs, so TF's answer."""
    return "tensorflow"


def image_data_format():
    return "channels_last"


def set_image_data_format(data_format):
    if str(data_format).lower() != "channels_last":
        raise ValueError(f"set_image_data_format({data_format!r}): tapeflow's layers are channels_last only; "
                         "transpose the images to (batch, ..., channels)")


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
