"""A typed graph in A-normal form, with a text form like a jaxpr.

Every value is a ``Var`` with an abstract value (shape, dtype); every
operation is an ``Eqn``: one primitive applied to Vars or Literals, binding
new Vars. Equations are in program order; effectful ones (variable reads and
writes, random draws, prints) are executed in that order by every backend.

Text form::

    { lambda c:f32[64,4] ; a:f32[?,64] b:i32[?] .
      let d:f32[?,4] = matmul a c
          e:f32[?,4] = maximum d 0.0
          f:f32[] = read_variable[var=dense/bias]
          _ = assign_variable[var=step] g
      in (e,) }

``lambda`` lists the captured constants, then ``;`` the inputs. Dims are
integers or ``?`` (unknown), dtypes f32/f64/i32/i64/bool... Literals print as
their Python value. Params print in brackets; sub-graphs (cond branches, loop
bodies) print indented inside the params.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..core.aval import Aval


class Var:
    __slots__ = ("aval", "count")
    _counter = itertools.count()

    def __init__(self, aval):
        self.aval = aval
        self.count = next(Var._counter)

    def __repr__(self):
        return f"Var({self.count}:{self.aval.str_short()})"


class Literal:
    """An inline Python scalar (weakly typed unless it came from a 0-d array)."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return repr(self.val)


class Eqn:
    __slots__ = ("prim", "inputs", "outputs", "params", "src")

    def __init__(self, prim, inputs, outputs, params, src=None):
        self.prim = prim
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.params = params
        self.src = src  # (filename, lineno, function) of the user's line that made it

    @property
    def effect(self):
        # An op holding sub-graphs (cond, loops) has the effects of what it runs:
        # "control" when any sub-graph has one, whatever the op is called.
        e = self.prim.effect
        if e is None and self.params:
            for g in subgraphs(self):
                if g.has_effects():
                    return "control"
        return e

    def __repr__(self):
        return f"Eqn({self.prim.name})"


class VarEffects:
    """What an equation does to state, precisely enough to order it against variable
    reads and writes: ``reads``/``writes`` map id(Variable) -> Variable (for an equation
    holding sub-graphs: every read/write any of them does, at any depth), ``other``: the
    set of its other effects ("io", "random", an unknown one; "control" never appears)."""

    __slots__ = ("reads", "writes", "other")

    def __init__(self):
        self.reads, self.writes, self.other = {}, {}, set()

    @property
    def only_variables(self):
        """Touches variables (those named) and nothing else."""
        return not self.other


def variable_effects(eqn, _acc=None):
    """``eqn``'s ``VarEffects``. A primitive's own effect comes from its record: "read"
    and "write" name their Variable in params (``var=``, as bind requires); any other
    effect string is ``other``. The effects of sub-graphs (cond branches, loop bodies)
    are collected recursively, whatever the op holding them is called. The buffer
    planner treats a branch that only updates variables as touching exactly those
    (TD3's delayed actor update), not as an effect that may touch anything."""
    acc = VarEffects() if _acc is None else _acc
    e = eqn.prim.effect
    if e is not None:
        var = eqn.params.get("var")
        if e == "read" and var is not None:
            acc.reads[id(var)] = var
        elif e == "write" and var is not None:
            acc.writes[id(var)] = var
        else:
            acc.other.add(e)
    for g in subgraphs(eqn):
        for x in g.eqns:
            variable_effects(x, acc)
    return acc


def alias_roots(eqns, roots=None):
    """{Var: frozenset of the Vars whose memory it may share, itself included} for the
    outputs of ``eqns`` that may alias an input (absent: only itself), from the records:
    ``aliases`` and, where given, ``alias_map``. ``roots``: a dict to extend."""
    roots = {} if roots is None else roots
    for e in eqns:
        p = e.prim
        if not p.aliases:
            continue
        if p.alias_map is not None:
            per = p.alias_map(e)
        else:
            per = [range(len(e.inputs))] * len(e.outputs)
        for o, idx in zip(e.outputs, per):
            rs = {r for j in idx if isinstance(e.inputs[j], Var) for r in roots.get(e.inputs[j], (e.inputs[j],))}
            rs.add(o)
            roots[o] = frozenset(rs)
    return roots


def last_uses(eqns, roots):
    """{root Var: index of the last equation that uses it or a value that may share its
    memory} (``roots``: ``alias_roots``' map; a Var absent from it is its own root)."""
    last = {}
    for i, e in enumerate(eqns):
        for v in e.inputs:
            if isinstance(v, Var):
                for r in roots.get(v, (v,)):
                    last[r] = i
    return last


def subgraphs(eqn):
    out = []
    for v in eqn.params.values():
        if isinstance(v, Graph):
            out.append(v)
        elif isinstance(v, tuple) and v and all(isinstance(x, Graph) for x in v):
            out.extend(v)
    return out


class Graph:
    """inputs: Vars; consts: list of (Var, value) captured arrays; eqns; outputs:
    Vars or Literals. ``variables`` lists the tapeflow Variables read or written."""

    def __init__(self, inputs, consts, eqns, outputs, variables=()):
        self.inputs = list(inputs)
        self.consts = list(consts)
        self.eqns = list(eqns)
        self.outputs = list(outputs)
        self.variables = list(variables)

    def has_effects(self):
        # any effect but a read (an unknown one included) must keep its place
        return any(e.effect is not None and e.effect != "read" for e in self.eqns)

    def copy(self, eqns=None, outputs=None, consts=None):
        return Graph(self.inputs, self.consts if consts is None else consts,
                     self.eqns if eqns is None else eqns,
                     self.outputs if outputs is None else outputs, self.variables)

    def __str__(self):
        return pp_graph(self)

    def __repr__(self):
        return f"<Graph: {len(self.inputs)} inputs, {len(self.eqns)} eqns, {len(self.outputs)} outputs>"

    def as_graph_def(self, name="graph"):
        """A TensorBoard GraphDef of this graph (TF's FuncGraph.as_graph_def), for
        code that writes or inspects it; needs the summary extra."""
        from ..summary._graphdef import to_graph_def
        return to_graph_def([(name, self)])

    def to_dot(self, name="graph"):
        return to_dot(self, name)


# -- printing -----------------------------------------------------------------------------------

class _Names:
    def __init__(self):
        self.names = {}
        self.gen = _name_gen()

    def __call__(self, v):
        if isinstance(v, Literal):
            return _lit(v.val)
        n = self.names.get(v)
        if n is None:
            n = self.names[v] = next(self.gen)
        return n


def _name_gen():
    letters = "abcdefghijklmnopqrstuvwxyz"
    for n in itertools.count(1):
        for combo in itertools.product(letters, repeat=n):
            yield "".join(combo)


def _lit(val):
    if isinstance(val, (bool, np.bool_)):
        return str(bool(val))
    if isinstance(val, (float, np.floating)):
        return repr(float(val))
    if isinstance(val, (int, np.integer)):
        return str(int(val))
    return repr(val)


def _param_str(k, v, names, indent):
    from ..core.tensor import Variable
    if isinstance(v, Graph):
        return f"{k}=" + pp_graph(v, names, indent + 4).lstrip()
    if isinstance(v, tuple) and v and all(isinstance(x, Graph) for x in v):
        return f"{k}=(" + ", ".join(pp_graph(x, names, indent + 4).lstrip() for x in v) + ")"
    if isinstance(v, Variable):
        return f"{k}={v._name}"
    if isinstance(v, np.dtype):
        return f"{k}={v.name}"
    if isinstance(v, np.random.Generator):
        return f"{k}=<rng>"
    if k == "key" and isinstance(v, tuple):
        from ..core.primitives.indexing import _show
        return f"{k}={_show(v, [_Dummy()] * 16)}"
    return f"{k}={v!r}"


class _Dummy:
    shape = ("?",)
    dtype = "index"


def pp_graph(g, names=None, indent=0):
    names = names or _Names()
    pad = " " * indent
    consts = " ".join(f"{names(v)}:{v.aval.str_short()}" for v, _ in g.consts)
    ins = " ".join(f"{names(v)}:{v.aval.str_short()}" for v in g.inputs)
    lines = [f"{pad}{{ lambda {consts}{' ' if consts else ''};{' ' if ins else ''}{ins} ."]
    for i, e in enumerate(g.eqns):
        outs = " ".join(f"{names(v)}:{v.aval.str_short()}" for v in e.outputs) or "_"
        params = ""
        if e.params:
            params = "[" + " ".join(_param_str(k, v, names, indent + 6) for k, v in e.params.items()) + "]"
        args = " ".join(names(v) for v in e.inputs)
        head = "let " if i == 0 else "    "
        lines.append(f"{pad}  {head}{outs} = {e.prim.name}{params}{' ' if args else ''}{args}")
    outs = ", ".join(names(v) for v in g.outputs)
    lines.append(f"{pad}  in ({outs}{',' if len(g.outputs) == 1 else ''}) }}")
    return "\n".join(lines)


def to_dot(g, name="graph"):
    """Graphviz DOT for a graph: inputs, constants and equations as nodes."""
    names = _Names()
    # the name is quoted: function names like "<lambda>" are not DOT identifiers
    qname = '"' + str(name).replace("\\", "\\\\").replace('"', '\\"') + '"'
    lines = [f"digraph {qname} {{", "  rankdir=TB;", '  node [fontname="monospace", fontsize=10];']
    for v in g.inputs:
        lines.append(f'  {names(v)} [shape=invhouse, label="{names(v)}: {v.aval.str_short()}"];')
    for v, _ in g.consts:
        lines.append(f'  {names(v)} [shape=box, style=dashed, label="{names(v)}: {v.aval.str_short()}"];')
    for i, e in enumerate(g.eqns):
        node = f"eqn{i}"
        lines.append(f'  {node} [shape=ellipse, label="{e.prim.name}"];')
        for v in e.inputs:
            if isinstance(v, Var):
                lines.append(f"  {names(v)} -> {node};")
        for v in e.outputs:
            lines.append(f'  {names(v)} [shape=plaintext, label="{names(v)}: {v.aval.str_short()}"];')
            lines.append(f"  {node} -> {names(v)};")
    for v in g.outputs:
        if isinstance(v, Var):
            lines.append(f'  {names(v)} -> out;')
    lines.append('  out [shape=house, label="outputs"];')
    lines.append("}")
    return "\n".join(lines)
