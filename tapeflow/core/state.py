"""Global interpretation state read by ``bind``.

Kept in one tiny object so the eager fast path costs two attribute loads.
``trace`` is the active tracer (``tapeflow.ir.tracer.Trace``) or None;
``tapes`` is the tuple of GradientTapes currently recording (innermost last).
"""


class _State:
    __slots__ = ("trace", "tapes", "profiler")

    def __init__(self):
        self.trace = None
        self.tapes = ()
        self.profiler = None

    def unrecorded(self):
        """Eager with nothing recording the ops: no trace, no tape, no profiler. Code that
        may then work on arrays alone (the optimizers' fused updates, ``soft_update``)
        asks this one question, so a new way of recording cannot be missed by one of them."""
        return self.trace is None and not self.tapes and self.profiler is None


STATE = _State()

#: the open ``tf.name_scope`` strings, innermost last (``"outer/inner/"``): ops/context_ops.py
#: pushes and pops them; a Variable created inside one gets it as its name's prefix, as TF's
#: (``scoped/c:0``; a checkpoint's object graph records that name)
NAME_SCOPES: list = []
