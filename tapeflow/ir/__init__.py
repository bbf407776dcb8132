"""The graph IR: typed, A-normal form, printable (see graph.py for the text form)."""
from .graph import Graph, Var, Literal, Eqn  # noqa: F401
