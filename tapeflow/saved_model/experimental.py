"""tf.saved_model.experimental (TF 2.21): ``VariablePolicy`` as TF defines it (SaveOptions'
``experimental_variable_policy`` values; tapeflow saves one device's variables, so every policy
writes the same files). Fingerprints (TF's fingerprint.pb, hashes of a saved_model.pb) and
TrackableResource (TF's resource-handle base class) are refused with their reason
(``_unsupported.NAMES``): tapeflow's SavedModel is JSON + safetensors and has no resource handles."""
from __future__ import annotations

import enum

__all__ = ["VariablePolicy"]


class VariablePolicy(enum.Enum):
    """tf.saved_model.experimental.VariablePolicy: NONE, SAVE_VARIABLE_DEVICES,
    EXPAND_DISTRIBUTED_VARIABLES, with TF's ``from_obj`` (None, a policy, or its value's string)."""

    NONE = None
    SAVE_VARIABLE_DEVICES = "save_variable_devices"
    EXPAND_DISTRIBUTED_VARIABLES = "expand_distributed_variables"

    def _save_variable_devices(self):
        return self != VariablePolicy.NONE

    def _expand_distributed_variables(self):
        return self == VariablePolicy.EXPAND_DISTRIBUTED_VARIABLES

    @staticmethod
    def from_obj(obj):
        if obj is None:
            return VariablePolicy.NONE
        if isinstance(obj, VariablePolicy):
            return obj
        key = str(obj).lower()
        for policy in VariablePolicy:
            if key == policy.value:
                return policy
        raise ValueError(f"Received invalid VariablePolicy value: {obj}.")


from .._unsupported import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("saved_model.experimental", "tapeflow.saved_model.experimental")
