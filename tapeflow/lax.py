"""tapeflow.lax: JAX-style control flow under JAX's names, for code written against
``jax.lax``: ``scan(f, init, xs)`` (``f(carry, x) -> (carry, y)``; returns the final carry
and the stacked ys), ``fori_loop``, ``while_loop``, ``cond``. ``tapeflow.scan`` is TF's
tf.scan (``fn(acc, x) -> acc``), as a ported TF program expects."""
from .ir.control_flow import scan, fori_loop, while_loop, cond  # noqa: F401

__all__ = ["scan", "fori_loop", "while_loop", "cond"]
