"""``keras.dtype_policies`` (TF 2.21's tf.keras has it): Keras 3's dtype policies. ``DTypePolicy`` is
keras.mixed_precision's (the same class, as in Keras), ``FloatDTypePolicy`` its deprecated subclass;
``get``/``serialize``/``deserialize`` as Keras 3.15's. The quantized policies (int8/int4/float8,
GPTQ/AWQ) and ``DTypePolicyMap`` (their per-layer map) exist and raise UnsupportedFeatureError."""
from __future__ import annotations

from .._unsupported import unsupported_class
from .mixed_precision import DTypePolicy, global_policy


class FloatDTypePolicy(DTypePolicy):
    """Keras 3's deprecated name of a float policy: a DTypePolicy (repr and behaviour), serialized
    under its own class name."""


_BY_NAME = {"DTypePolicy": DTypePolicy, "FloatDTypePolicy": FloatDTypePolicy}
_WHAT = ("Keras' quantized dtype policies (int8/int4/float8 layers, GPTQ/AWQ: tapeflow's layers have no "
         "quantized kernels)")
for _n in ("AWQDTypePolicy", "DTypePolicyMap", "GPTQDTypePolicy", "Int4DTypePolicy", "QuantizedDTypePolicy",
           "QuantizedFloat8DTypePolicy"):
    globals()[_n] = unsupported_class(f"keras.dtype_policies.{_n}", _WHAT)
del _n


def serialize(dtype_policy):
    return {"module": "keras", "class_name": type(dtype_policy).__name__,
            "config": dtype_policy.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    name = config.get("class_name")
    cls = (custom_objects or {}).get(name) or _BY_NAME.get(name)
    if cls is None:
        raise ValueError(f"Unknown dtype policy class {name!r} (known: {', '.join(sorted(_BY_NAME))})")
    return cls.from_config(config.get("config", {}))


def get(identifier):
    """None: the global policy; a policy: itself; a name: ``DTypePolicy(name)``; a serialized dict:
    ``deserialize``; anything else Keras' ValueError."""
    if identifier is None:
        return global_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return DTypePolicy(identifier)
    raise ValueError("Cannot interpret `dtype` argument. Expected a string or an instance of DTypePolicy. "
                     f"Received: dtype={identifier}")


__all__ = ["AWQDTypePolicy", "DTypePolicy", "DTypePolicyMap", "FloatDTypePolicy", "GPTQDTypePolicy",
           "Int4DTypePolicy", "QuantizedDTypePolicy", "QuantizedFloat8DTypePolicy", "deserialize", "get",
           "serialize"]
