"""tapeflow Graph -> TensorFlow ``GraphDef`` protobuf, for TensorBoard's Graphs tab.

One ``NodeDef`` per equation (``op`` = the primitive's name, ``input`` = the
producing nodes, ``attr``: ``T`` (output dtype), ``_output_shapes`` (unknown
dims as -1), the equation's parameters as strings, ``_src`` = the user's line
that made it). Inputs are ``Placeholder`` nodes, captured constants ``Const``
nodes, outputs ``Identity`` nodes, and each tapeflow Variable read or written
is one ``VarHandleOp`` node under ``variables/`` feeding its reads and writes.
Sub-graphs of ``cond``/``while_loop``/``scan`` appear nested under their
equation's name. Each function's nodes live under its own name scope, so
several functions can share one GraphDef.
"""
from __future__ import annotations

import numpy as np
from tensorboardX.proto import (attr_value_pb2, graph_pb2, node_def_pb2, tensor_shape_pb2, types_pb2,
                                versions_pb2)

from ..ir.graph import Graph, Literal, Var

_DT = {"float32": types_pb2.DT_FLOAT, "float64": types_pb2.DT_DOUBLE, "int32": types_pb2.DT_INT32,
       "int64": types_pb2.DT_INT64, "bool": types_pb2.DT_BOOL, "float16": types_pb2.DT_HALF,
       "uint8": types_pb2.DT_UINT8, "int8": types_pb2.DT_INT8, "int16": types_pb2.DT_INT16,
       "uint16": types_pb2.DT_UINT16, "uint32": 22, "uint64": 23}  # (types.proto DT_UINT32/64: tensorboardX's copy lacks them)


def _shape(aval):
    return tensor_shape_pb2.TensorShapeProto(dim=[
        tensor_shape_pb2.TensorShapeProto.Dim(size=-1 if d is None else int(d)) for d in aval.shape])


def _shapes_attr(avals):
    return attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(shape=[_shape(a) for a in avals]))


def _type_attr(aval):
    return attr_value_pb2.AttrValue(type=_DT.get(aval.dtype.name, types_pb2.DT_INVALID))


def _s(text):
    return attr_value_pb2.AttrValue(s=str(text)[:2000].encode("utf-8"))


class _Builder:
    def __init__(self):
        self.nodes = []
        self.used = set()
        self.var_nodes = {}

    def unique(self, name):
        base, i = name, 1
        while name in self.used:
            name = f"{base}_{i}"
            i += 1
        self.used.add(name)
        return name

    def node(self, name, op, inputs=(), attrs=None):
        n = node_def_pb2.NodeDef(name=name, op=op, input=list(inputs))
        for k, v in (attrs or {}).items():
            n.attr[k].CopyFrom(v)
        self.nodes.append(n)
        return n

    def variable(self, var):
        n = self.var_nodes.get(id(var))
        if n is None:
            n = self.unique("variables/" + _clean(var._name))
            self.var_nodes[id(var)] = n
            v = var._v
            self.node(n, "VarHandleOp", attrs={
                "dtype": attr_value_pb2.AttrValue(type=_DT.get(v.dtype.name, types_pb2.DT_INVALID)),
                "shape": attr_value_pb2.AttrValue(shape=tensor_shape_pb2.TensorShapeProto(dim=[
                    tensor_shape_pb2.TensorShapeProto.Dim(size=int(d)) for d in v.shape])),
                "_output_shapes": attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(shape=[
                    tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=int(d))
                                                           for d in v.shape])])),
                "trainable": attr_value_pb2.AttrValue(b=bool(var.trainable))})
        return n

    def add_graph(self, g, scope, env=None):
        """Emit ``g``'s nodes under ``scope``; ``env`` maps its input Vars to
        outer node names (sub-graphs), else inputs become Placeholders."""
        from ..core.tensor import Variable
        names = {}
        for i, v in enumerate(g.inputs):
            if env is not None and i < len(env) and env[i] is not None:
                names[v] = env[i]
                continue
            n = self.unique(f"{scope}/input_{i}")
            self.node(n, "Placeholder", attrs={"dtype": _type_attr(v.aval), "shape": attr_value_pb2.AttrValue(
                shape=_shape(v.aval)), "_output_shapes": _shapes_attr([v.aval])})
            names[v] = n
        for i, (v, val) in enumerate(g.consts):
            n = self.unique(f"{scope}/const_{i}")
            attrs = {"dtype": _type_attr(v.aval), "_output_shapes": _shapes_attr([v.aval])}
            a = np.asarray(val)
            if a.size <= 16:
                attrs["value_repr"] = _s(np.array2string(a, threshold=16))
            self.node(n, "Const", attrs=attrs)
            names[v] = n
        for i, e in enumerate(g.eqns):
            n = self.unique(f"{scope}/{e.prim.name}_{i}")
            inputs, attrs = [], {}
            for j, v in enumerate(e.inputs):
                if isinstance(v, Literal):
                    attrs[f"literal_{j}"] = _s(repr(v.val))
                elif v in names:
                    inputs.append(names[v])
            sub = []
            for k, pv in (e.params or {}).items():
                if isinstance(pv, Variable):
                    inputs.insert(0, self.variable(pv))
                    attrs[k] = _s(pv._name)
                elif isinstance(pv, Graph):
                    sub.append((k, pv))
                elif isinstance(pv, tuple) and pv and all(isinstance(x, Graph) for x in pv):
                    sub.extend((f"{k}_{bi}", x) for bi, x in enumerate(pv))
                elif isinstance(pv, np.dtype):
                    attrs[k] = attr_value_pb2.AttrValue(type=_DT.get(pv.name, types_pb2.DT_INVALID))
                elif isinstance(pv, (bool, np.bool_)):
                    attrs[k] = attr_value_pb2.AttrValue(b=bool(pv))
                elif isinstance(pv, (int, np.integer)):
                    attrs[k] = attr_value_pb2.AttrValue(i=int(pv))
                elif isinstance(pv, (float, np.floating)):
                    attrs[k] = attr_value_pb2.AttrValue(f=float(pv))
                else:
                    attrs[k] = _s(repr(pv))
            if e.outputs:
                attrs["T"] = _type_attr(e.outputs[0].aval)
                attrs["_output_shapes"] = _shapes_attr([o.aval for o in e.outputs])
            if e.src:
                try:
                    f, line, fn = e.src
                    attrs["_src"] = _s(f"{f}:{line} ({fn})")
                except (TypeError, ValueError):
                    attrs["_src"] = _s(e.src)
            self.node(n, e.prim.name, inputs, attrs)
            for k, o in enumerate(e.outputs):
                names[o] = n if k == 0 else f"{n}:{k}"
            for k, sg in sub:
                # a sub-graph's inputs are fed by the equation's inputs, in order where they line up
                outer = [names.get(v) if isinstance(v, Var) else None for v in e.inputs]
                self.add_graph(sg, f"{n}/{k}", env=outer[-len(sg.inputs):] if len(outer) >= len(sg.inputs)
                               and sg.inputs else None)
        for i, v in enumerate(g.outputs):
            n = self.unique(f"{scope}/output_{i}")
            attrs = {"_output_shapes": _shapes_attr([v.aval])} if hasattr(v, "aval") else {}
            if isinstance(v, Literal):
                attrs["literal"] = _s(repr(v.val))
                self.node(n, "Const", attrs=attrs)
            else:
                attrs["T"] = _type_attr(v.aval)
                self.node(n, "Identity", [names[v]] if v in names else [], attrs)


def _clean(name):
    return "".join(c if c.isalnum() or c in "_-./" else "_" for c in str(name)).strip("/") or "var"


def to_graph_def(graphs):
    """``graphs``: list of ``(scope_name, Graph)``; returns a ``GraphDef``."""
    b = _Builder()
    for scope, g in graphs:
        b.add_graph(g, b.unique(_clean(scope)))
    gd = graph_pb2.GraphDef(node=b.nodes, versions=versions_pb2.VersionDef(producer=22))
    return gd


def as_graph_list(obj, name=None):
    """Accept a ConcreteFunction, a Function (all its traces), a Graph, or a list of these."""
    from ..compiler.function import ConcreteFunction, Function
    if isinstance(obj, (list, tuple)):
        out = []
        for o in obj:
            out.extend(as_graph_list(o))
        return out
    if isinstance(obj, ConcreteFunction):
        return [(name or obj.name, obj.graph)]
    if isinstance(obj, Function):
        cfs = list(obj._cache.values())
        if not cfs:
            raise ValueError(f"summary.graph: tapeflow.function {obj.__name__!r} has not been traced yet; call it "
                             "once, or pass fn.get_concrete_function(*example_args)")
        return [(name or obj.__name__, cf.graph) for cf in cfs]
    if isinstance(obj, Graph):
        return [(name or "graph", obj)]
    if isinstance(obj, graph_pb2.GraphDef):
        return obj
    raise TypeError(f"summary.graph: expected a tapeflow ConcreteFunction, Function or Graph, got "
                    f"{type(obj).__name__}")
