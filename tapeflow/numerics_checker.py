"""``tf.debugging.enable_check_numerics``: every op's floating-point outputs checked for NaN and Inf.

The checker is one more interpretation of ``bind`` (it takes the core's observer slot,
``STATE.profiler``, which the profiler uses the same way): eager ops reach ``eager_apply``,
which hands them to :meth:`NumericsChecker.eager`; a compiled function's call reaches
:meth:`NumericsChecker.run_compiled`, which evaluates its graph with the one evaluator
(``ir/interpreter.evaluate``), checking each equation's outputs (inside cond and loop bodies too,
through their ``interpret``). With the slot taken, the bind fast paths, the lean backward and the
optimizers' fused updates step aside (``STATE.unrecorded()``), so gradients and optimizer
updates are checked op by op, as TF checks them. The first op whose output holds a NaN or an
Inf raises ``InvalidArgumentError`` with TF 2.21's text: the op, the output's dtype and shape,
the counts of -Inf, +Inf and NaN elements, its inputs and, in a compiled function, the
function's name and the line that traced the op.

Where tapeflow differs (docs/differences.md): every op is checked, also those that only move
values (TF's callback lets ``Reshape``, ``Identity``, ``Gather``... of a non-finite value pass and
reports the next op that computes); a compiled function's ops report their input values (TF's
graph ops show symbolic tensors); the op names are tapeflow's primitives (``log``, ``div``), not
TF's kernels (``Log``, ``RealDiv``); and the message is not also printed to stderr.
"""
from __future__ import annotations

import numpy as np

from .core import primitive as _prim
from .core.state import STATE
from .errors import InvalidArgumentError

__all__ = ["enable_check_numerics", "disable_check_numerics", "NumericsChecker"]


def _array(x):
    """The array behind a Tensor or an array (NumPy scalars too: a 0-d ufunc result is one)."""
    v = getattr(x, "_v", x)
    return v if isinstance(v, np.ndarray) else np.asarray(v) if isinstance(v, np.generic) else None


def _bad(arr):
    """The text of a non-finite float array's counts and kind, or None if it is finite (or not float)."""
    if arr is None or arr.dtype.kind != "f" or np.isfinite(arr).all():
        return None
    inf = np.isinf(arr)
    counts = (("-Inf", int(np.count_nonzero(inf & (arr < 0)))), ("+Inf", int(np.count_nonzero(inf & (arr > 0)))),
              ("NaN", int(np.count_nonzero(np.isnan(arr)))))
    kinds = [k for k, n in counts if n]
    # (TF 2.21's CheckNumericsV2: "-Inf values", "-Inf and +Inf values", "-Inf, +Inf, and NaN values")
    kind = kinds[0] if len(kinds) == 1 else " and ".join(kinds) if len(kinds) == 2 else \
        f"{kinds[0]}, {kinds[1]}, and {kinds[2]}"
    lines = "".join(f"  # of {'+NaN' if k == 'NaN' else k} elements: {n}\n" for k, n in counts if n)
    return lines, kind


def _shown(values, like):
    """The inputs as TF prints them (Python scalars as tensors of the output's dtype, as converted)."""
    from .core.tensor import Tensor
    out = []
    for v in values:
        a = _array(v)
        if a is None:
            try:
                a = np.asarray(v, like.dtype) if isinstance(v, (bool, int, float)) else np.asarray(v)
            except Exception:  # noqa: BLE001 -- (a value with no array form: shown as it is)
                out.append(repr(v))
                continue
        out.append(str(Tensor(a)))
    return out


def _check(op, outs, inputs, graph=None, src=None):
    """TF's InvalidArgumentError for the first output of ``outs`` holding a NaN or an Inf, else None."""
    for slot, o in enumerate(outs):
        arr = _array(o)
        bad = _bad(arr)
        if bad is not None:
            return InvalidArgumentError(_message(op, slot, len(outs), arr, bad, inputs, graph, src))
    return None


def _message(op, slot, n_out, arr, bad, inputs, graph=None, src=None):
    from .core import dtypes as _dt
    where = "graph" if graph is not None else "eagerly-executing"
    lines, kind = bad
    msg = (f"\n\n!!! Detected Infinity or NaN in output {slot} of {where} op \"{op}\" (# of outputs: {n_out}) !!!\n"
           f"  dtype: {_dt.as_dtype(arr.dtype)}\n  shape: {tuple(arr.shape)}\n" + lines)
    shown = _shown(inputs, arr)
    if len(shown) > 1:
        msg += f"\n  Input tensors ({len(shown)}):\n" + "".join(f"         {i}: {s}\n" for i, s in enumerate(shown))
    elif shown:
        msg += f"\n  Input tensor: {shown[0]}\n"
    if graph is not None:
        msg += f"  Graph name: \"{graph}\"\n"
        if src is not None:
            from .ir.tracer import fmt_src
            msg += f"  Traced from: {fmt_src(src)}\n"
    return msg + f"\n : Tensor had {kind} values"


class NumericsChecker:
    """The observer that checks every op's floating-point outputs (see the module's text)."""

    def eager(self, p, args, params):
        st = STATE
        st.profiler = None      # (the op's own reads and conversions are part of it)
        try:
            out = _prim.eager_apply(p, args, params)
        finally:
            st.profiler = self
        if p.effect != "write":    # (a variable write has no output in TF; its value is checked when read)
            err = _check(p.name, out if isinstance(out, (tuple, list)) else (out,), args)
            if err is not None:
                raise err
        return out

    def run_compiled(self, cf, arrays):
        from .ir import interpreter as I
        g = cf.graph
        st = STATE
        st.profiler = None
        try:
            if len(arrays) != len(g.inputs):     # (a graph that takes its inputs otherwise: unchecked)
                return cf.run(arrays)
            return cf._pack(I.evaluate(g, list(arrays), _checking_apply(cf.name)))
        finally:
            st.profiler = self

    def on_trace(self, name, reasons, timings):
        pass


def _checking_apply(graph_name):
    def apply(e, vals):
        p = e.prim
        out = p.interpret(apply, *vals, **e.params) if p.interpret is not None else p.impl(*vals, **e.params)
        # Variable reads are not checked in graphs: the tracer hoists a read out of the cond branch
        # that uses it, so a NaN "no value yet" read only on the branch not taken (TD3's
        # last_actor_loss) would raise; a NaN a variable holds raises at the first op that uses it.
        if p.effect not in ("write", "read"):
            err = _check(p.name, out if p.multiple_results else (out,), vals, graph_name, getattr(e, "src", None))
            if err is not None:
                err._tapeflow_eqn = e
                raise err
        return out
    return apply


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """TF's ``tf.debugging.enable_check_numerics``: from now on, the first op (eager, inside a
    compiled function, or of a gradient) whose floating-point output holds a NaN or an Inf raises
    ``InvalidArgumentError`` naming it. Idempotent. Ops run slower while it is on: each output is
    scanned, fast paths step aside and compiled functions run through the reference interpreter.
    (The two limits shape TF's printed stack traces; tapeflow prints the tracing line instead.)"""
    cur = STATE.profiler
    if isinstance(cur, NumericsChecker):
        return
    if cur is not None:
        raise RuntimeError("tf.debugging.enable_check_numerics: a tapeflow.profile is active; check numerics "
                           "outside the profiled block (the two observe the same ops and do not nest)")
    STATE.profiler = NumericsChecker()


def disable_check_numerics():
    """TF's ``tf.debugging.disable_check_numerics``: back to unchecked ops (a no-op if not enabled)."""
    if isinstance(STATE.profiler, NumericsChecker):
        STATE.profiler = None
