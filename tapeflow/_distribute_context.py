"""Where the running thread stands with tf.distribute: kept apart from the strategies
(``tapeflow/distribute/``) so that the modules asking (``ops/random_ops.py``'s Generator,
``ops/nn_ops.py``'s loss scaling, the optimizers' ``apply_gradients``) load only this small
module, and ``tapeflow.distribute`` itself loads on first use of ``tf.distribute``.

``CTX.stack`` holds ``(strategy, replica_context)`` pairs, innermost last: ``strategy.scope()``
pushes ``(strategy, None)`` (the cross-replica context), a replica of ``strategy.run`` starts
with ``(strategy, ReplicaContext)``. It is per thread, as TF's: ``strategy.run`` with N > 1
replicas runs each replica in a thread of its own (TF's MirroredStrategy does the same), one
thread at a time.

``RUNNING[0]`` is the number of multi-replica ``strategy.run`` calls under way in this process:
the optimizers' replica hook reads it (one list load) before asking anything thread-local, so
code that never runs replicas pays nothing more.
"""
from __future__ import annotations

import threading

RUNNING = [0]


class _Context(threading.local):
    def __init__(self):
        self.stack = []


CTX = _Context()


def current():
    """(strategy, replica_context) of the innermost scope or replica, or None outside both."""
    s = CTX.stack
    return s[-1] if s else None


def replica_context_of_run():
    """The ReplicaContext of the ``strategy.run`` replica this thread runs, or None."""
    s = CTX.stack
    return s[-1][1] if s else None
