"""``keras.mixed_precision`` as Keras 3 (TF 2.21) has it: dtype policies and the loss-scale optimizer.

A policy names two dtypes: the *compute* dtype (what a layer's inputs are cast to and what it
computes and returns) and the *variable* dtype (what its weights are stored in). 'mixed_float16'
is float16 compute over float32 variables, 'mixed_bfloat16' bfloat16 compute over float32 variables
(no loss scaling: bfloat16 has float32's exponent range, so gradients do not underflow; Keras 3
scales only under 'mixed_float16'); a plain dtype name ('float32', 'float64', 'float16', 'bfloat16')
is both. A layer takes one through ``dtype=`` (a policy, its name, or its serialized dict), else
the global policy (``set_global_policy``), else ``floatx()``.

How a layer under a mixed policy runs (``engine.Layer.__call__``): its floating inputs are cast
to the compute dtype (as every layer's are to its dtype), and for the duration of ``call`` each
of its own autocast weights is replaced, as the attribute ``call`` reads, by its value cast to
the compute dtype (``autocast_call``). Keras 3 does the same with an "autocast scope" that makes
every variable read return a cast value; tapeflow's variable reads are the eager hot path, so
the cast happens once per weight per call here instead, and a float32 layer pays nothing but a
flag test. The cast is an op on the tape, so gradients reach the float32 variables in float32.
Weights a layer updates by ``assign`` in ``call`` (BatchNormalization's moving statistics) are
made with ``autocast=False`` and kept float32, as Keras 3 does.

``LossScaleOptimizer`` is Keras 3's dynamic loss scaling: ``scale_loss`` multiplies the loss by
the current scale, ``apply_gradients`` divides the gradients by it and applies them with the
inner optimizer when they are all finite (then doubles the scale every ``dynamic_growth_steps``
finite steps), else skips the step and halves the scale. ``Model.compile`` wraps the optimizer
in one under a 'mixed_float16' global policy, and ``fit``'s ``train_step`` scales the loss.
"""
from __future__ import annotations

from ..core import dtypes as _dt
from ..core.tensor import Variable
from ..ops import math_ops as M
from ..optimizers.loss_scale import LossScaleOptimizer  # noqa: F401  (also keras.optimizers')
from . import backend

__all__ = ["DTypePolicy", "Policy", "global_policy", "set_global_policy", "dtype_policy", "set_dtype_policy",
           "LossScaleOptimizer"]

_MIXED = {"mixed_float16": ("float16", "float32"), "mixed_bfloat16": ("bfloat16", "float32")}


class DTypePolicy:
    """A dtype policy (Keras 3's ``DTypePolicy``; ``Policy`` is its old name): ``name``,
    ``compute_dtype`` and ``variable_dtype`` (dtype names, strings)."""

    def __init__(self, name=None):
        if name is None:
            name = global_policy().name
        if not isinstance(name, str):
            # TF 2.21: TypeError "'name' must be a string, such as 'mixed_float16'. Received: name=3 ..."
            raise TypeError(f"'name' must be a string, such as 'mixed_float16'. Received: name={name!r} "
                            f"(of type {type(name)})")
        self._name = name
        self._compute, self._variable = _parse(name)

    @property
    def name(self):
        return self._name

    @property
    def compute_dtype(self):
        return self._compute

    @property
    def variable_dtype(self):
        return self._variable

    @property
    def quantization_mode(self):
        return None

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __eq__(self, other):
        return type(other) is type(self) and other._name == self._name

    __hash__ = None     # (as Keras 3's: equal by name, so unhashable)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'

    __str__ = __repr__


Policy = DTypePolicy


def _parse(name):
    """(compute, variable) dtype names of a policy name; TF 2.21's ValueError for anything else."""
    if name in _MIXED:
        return _MIXED[name]
    if name == "bfloat16":
        return name, name
    try:
        d = _dt.as_dtype(name).name
    except (TypeError, ValueError, KeyError):
        d = None
    if d is None or d != name and not name.startswith("float"):
        # TF 2.21's message, word for word
        raise ValueError(f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid policies include "
                         "'mixed_float16', 'mixed_bfloat16', and the name of any float dtype such as 'float32'.")
    return d, d


#: the policy set by set_global_policy; None: floatx()'s (Keras 3's default)
_GLOBAL = [None]


def global_policy():
    """The policy new layers get when given no ``dtype``: the one ``set_global_policy`` set,
    else ``floatx()``'s."""
    p = _GLOBAL[0]
    return p if p is not None else DTypePolicy(backend.floatx())


def set_global_policy(policy):
    """Set the policy of the layers made from now on (layers made before keep theirs). As Keras
    3: ``floatx()`` does not change."""
    if isinstance(policy, str):
        policy = DTypePolicy(policy)
    elif not isinstance(policy, DTypePolicy):
        # TF 2.21: ValueError (None included; there is no "reset" value)
        raise ValueError("Invalid `policy` argument. Expected the string name of a policy (such as "
                         f"'mixed_float16') or a `DTypePolicy` instance. Received: policy={policy!r} "
                         f"(of type {type(policy)})")
    _GLOBAL[0] = policy


dtype_policy = global_policy
set_dtype_policy = set_global_policy


def as_policy(dtype):
    """A layer's ``dtype=`` argument as a policy: a DTypePolicy, its name, its serialized dict
    (``{'class_name': 'DTypePolicy', 'config': {'name': ...}}``), a dtype, or None (the global
    policy)."""
    if dtype is None:
        return global_policy()
    if isinstance(dtype, DTypePolicy):
        return dtype
    if isinstance(dtype, dict):
        name = dtype.get("config", {}).get("name") if "config" in dtype else dtype.get("name")
        if name is None:
            raise ValueError(f"cannot read a dtype policy from {dtype!r}")
        return DTypePolicy(name)
    if isinstance(dtype, str) and dtype in _MIXED:
        return DTypePolicy(dtype)
    return DTypePolicy(_dt.as_dtype(dtype).name)


def serialize(policy):
    """Keras 3's serialized form of a policy (``Layer.get_config()['dtype']`` under a mixed one)."""
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": policy.name},
            "registered_name": None}


def autocast_call(layer, inputs, rest, kwargs):
    """``layer.call`` with the autocast weights of the layer and of its sublayers of the same
    compute dtype read in that dtype (the module docstring): each such weight held as an
    attribute is swapped, in its layer's ``__dict__`` (no tracking hooks run), for its value cast
    to the compute dtype, and put back after. (Keras 3's autocast scope covers the sublayers'
    reads too: an RNN reads its cell's kernel without calling the cell. A sublayer of another
    compute dtype, e.g. a float32 output layer, keeps its own.) A sublayer called inside finds
    its weights swapped already and swaps nothing."""
    cdt = layer.__dict__["_np_dtype"]
    swapped = []
    try:
        for sub in layer._flatten_layers():
            d = sub.__dict__
            own = d.get("_own_weights")
            if not own or not d.get("_mixed") or d.get("_np_dtype") != cdt:
                continue
            keep = d.get("_no_autocast", ())
            ids = {id(w) for w in own if id(w) not in keep}
            for k, v in list(d.items()):
                if isinstance(v, Variable) and id(v) in ids and v.dtype.is_floating and v._v.dtype != cdt:
                    swapped.append((d, k, v))
                    d[k] = M.cast(v, cdt)
        return layer.call(inputs, *rest, **kwargs) if rest or kwargs else layer.call(inputs)
    finally:
        for d, k, v in swapped:
            d[k] = v
