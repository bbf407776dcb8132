"""Graph-era context APIs that TF2 programs still call: ``executing_eagerly``,
``init_scope``, ``name_scope``, ``group`` and ``no_op``.

tapeflow orders every side effect inside a compiled function by program order
(variable writes are ordered equations), so TF's control-dependency tools have
nothing left to do: ``group`` and ``no_op`` return None in every mode (TF
returns None eagerly and an Operation in a graph, which a TF2 program can only
pass back to ``group``/``control_dependencies`` or return from a branch).
Names are not used by tapeflow's IR; ``name_scope`` keeps TF's nesting and
return value so code that reads the scope string works.
"""
from __future__ import annotations

import contextlib
import re

from ..core.state import NAME_SCOPES as _scopes, STATE
_VALID = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")


def executing_eagerly():
    """False while ``tapeflow.function`` traces, True otherwise (as TF)."""
    return STATE.trace is None


@contextlib.contextmanager
def init_scope():
    """Lift out of a function being traced: code inside runs eagerly, once, at
    trace time (TF's idiom for creating state on a first call). Active tapes
    keep recording, as in TF."""
    saved = STATE.trace
    STATE.trace = None
    try:
        yield
    finally:
        STATE.trace = saved


class name_scope:  # noqa: N801  (TF's spelling)
    """``with tf.name_scope("block") as scope:``: ``scope`` is ``"block/"``,
    nested scopes join with ``/`` (``"outer/inner/"``)."""

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"name_scope: name must be a string, got {type(name).__name__}")
        if name and not _VALID.match(name.rstrip("/")):
            raise ValueError(f"name_scope: '{name}' is not a valid scope name (letters, digits, '.', '_', '-', '/')")
        self._name = name

    @property
    def name(self):
        return self._name

    def __enter__(self):
        if not self._name:
            scope = ""
        elif self._name.endswith("/"):  # an absolute scope, as TF
            scope = self._name
        else:
            scope = (_scopes[-1] if _scopes else "") + self._name + "/"
        _scopes.append(scope)
        return scope

    def __exit__(self, *exc):
        _scopes.pop()
        return False


def current_name_scope():
    return _scopes[-1] if _scopes else ""


def group(*inputs, name=None):
    """Nothing to wait for: effects already run in program order (module docstring)."""
    return None


def no_op(name=None):
    return None


def inside_function():
    """True while ``tapeflow.function`` traces (TF: inside a graph being built)."""
    return STATE.trace is not None


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """A no-op scope: tapeflow runs effects in program order, eagerly and in functions, so the
    operations TF would order after ``control_inputs`` already are."""
    yield


def grad_pass_through(f):
    """``f`` whose gradient is the identity's (TF's straight-through estimator):
    x + stop_gradient(f(x) - x)."""
    from . import math_ops as M

    def wrapped(x):
        return M.add(x, M.stop_gradient(M.subtract(f(x), x)))
    return wrapped


def tuple_(tensors, control_inputs=None, name=None):
    """tf.tuple: the tensors, each through identity (TF's grouping; effects already run in
    program order). Exported as ``tapeflow.tuple``; named tuple_ here so that this module's
    code keeps Python's tuple."""
    from .array_ops import identity
    return [None if t is None else identity(t) for t in tensors]
