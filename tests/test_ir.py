"""The graph IR: its text form (golden strings written by hand from the format
documented in tapeflow/ir/graph.py), its Graphviz DOT form (parsed back with a
small DOT reader), and the reference interpreter on hand-built graphs."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.aval import Aval
from tapeflow.core.primitive import REGISTRY as P, aval_of
from tapeflow.ir.graph import Eqn, Graph, Literal, Var
from tapeflow.ir.interpreter import eval_graph

F32 = np.float32


def raw(fn, *args, **kw):
    """The traced (unoptimized) graph of fn for these arguments."""
    return tf.function(fn, backend="interpreter", **kw).get_concrete_function(*args).raw_graph


def zeros(*shape, dtype=F32):
    return tf.constant(np.zeros(shape, dtype))


# -- text form: golden strings ---------------------------------------------------------------------

def test_golden_matmul_maximum_reduce():
    def f(x, y):
        z = tf.matmul(x, y)
        return tf.reduce_sum(tf.maximum(z, 0.0), axis=1)

    expected = (
        "{ lambda ; a:f32[2,3] b:f32[3,4] .\n"
        "  let c:f32[2,4] = matmul a b\n"
        "      d:f32[2,4] = maximum c 0.0\n"
        "      e:f32[2] = reduce_sum[axis=(1,) keepdims=False] d\n"
        "  in (e,) }")
    assert str(raw(f, zeros(2, 3), zeros(3, 4))) == expected


def test_golden_constants_variables_unknown_dims_and_two_outputs():
    c = tf.constant(np.ones(4, F32))
    step = tf.Variable(0, name="step")
    w = tf.Variable(np.zeros(4, F32), name="w")

    def g(x, n):
        step.assign_add(n)
        h = x * c + w
        return h, step.read_value()

    sig = [tf.TensorSpec([None, 4], tf.float32), tf.TensorSpec([], tf.int32)]
    expected = (
        "{ lambda a:f32[4] ; b:f32[?,4] c:i32[] .\n"
        "  let d:i32[] = read_variable[var=step]\n"
        "      e:i32[] = add d c\n"
        "      _ = assign_variable[var=step] e\n"
        "      f:f32[?,4] = mul b a\n"
        "      g:f32[4] = read_variable[var=w]\n"
        "      h:f32[?,4] = add f g\n"
        "      i:i32[] = read_variable[var=step]\n"
        "  in (h, i) }")
    fn = tf.function(g, input_signature=sig, backend="interpreter")
    assert str(fn.get_concrete_function().raw_graph) == expected


def test_golden_cond_prints_branches_indented_in_params():
    def h(x):
        return tf.cond(x > 0.0, lambda: x * 2.0, lambda: -x)

    expected = (
        "{ lambda ; a:f32[] .\n"
        "  let b:bool[] = greater a 0.0\n"
        "      c:f32[] = cond[branches=({ lambda ; d:f32[] e:f32[] .\n"
        "            let f:f32[] = neg e\n"
        "            in (f,) }, { lambda ; g:f32[] h:f32[] .\n"
        "            let i:f32[] = mul g 2.0\n"
        "            in (i,) })] b a a\n"
        "  in (c,) }")
    assert str(raw(h, zeros())) == expected


def test_golden_while_loop_prints_cond_and_body_with_their_captures():
    def w(x, n, k):
        _, s = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * k), (tf.constant(0), x),
                             maximum_iterations=10)
        return s

    # operands: the n_carry loop variables, then the cond graph's captures (n_cond_caps),
    # then the body's; each sub-graph takes the carry followed by its own captures
    expected = (
        "{ lambda a:i32[] ; b:f32[2] c:i32[] d:f32[] .\n"
        "  let e:i32[] f:f32[2] = while_loop[cond_graph={ lambda ; g:i32[] h:f32[2] i:i32[] .\n"
        "            let j:bool[] = less g i\n"
        "            in (j,) } body_graph={ lambda ; k:i32[] l:f32[2] m:f32[] .\n"
        "            let n:i32[] = add k 1\n"
        "                o:f32[2] = mul l m\n"
        "            in (n, o) } n_carry=2 n_cond_caps=1 max_iter=10] a b c d\n"
        "  in (f,) }")
    assert str(raw(w, zeros(2), tf.constant(3), tf.constant(np.float32(2)))) == expected


def test_golden_scan_prints_its_body_with_index_carry_slices_and_captures():
    def sc(c0, xs, k):
        return tf.lax.scan(lambda c, x: (c + x * k, c), c0, xs)

    # operands: carry, scanned xs, captures; the body takes (index, carry, x slices,
    # captures) and returns (carry, y slices); outputs: final carry, stacked ys
    expected = (
        "{ lambda ; a:f32[2] b:f32[3,2] c:f32[] .\n"
        "  let d:f32[2] e:f32[3,2] = scan[body={ lambda ; f:i32[] g:f32[2] h:f32[2] i:f32[] .\n"
        "            let j:f32[2] = mul h i\n"
        "                k:f32[2] = add g j\n"
        "            in (k, g) } length=3 n_carry=1 n_xs=1 start=0 reverse=False] a b c\n"
        "  in (d, e) }")
    assert str(raw(sc, zeros(2), zeros(3, 2), tf.constant(np.float32(2)))) == expected


def test_golden_static_fori_loop_is_a_scan_without_xs():
    def fl(x):
        return tf.fori_loop(2, 6, lambda i, v: v + tf.cast(i, tf.float32), x)

    expected = (
        "{ lambda ; a:f32[2] .\n"
        "  let b:f32[2] = scan[body={ lambda ; c:i32[] d:f32[2] .\n"
        "            let e:f32[] = cast[dtype=float32] c\n"
        "                f:f32[2] = add d e\n"
        "            in (f,) } length=4 n_carry=1 n_xs=0 start=2 reverse=False] a\n"
        "  in (b,) }")
    assert str(raw(fl, zeros(2))) == expected


def test_golden_dtypes_and_cast():
    def k(i, m):
        return tf.cast(i, tf.float64) * 0.5, tf.logical_not(m)

    expected = (
        "{ lambda ; a:i64[3] b:bool[3] .\n"
        "  let c:f64[3] = cast[dtype=float64] a\n"
        "      d:f64[3] = mul c 0.5\n"
        "      e:bool[3] = logical_not b\n"
        "  in (d, e) }")
    assert str(raw(k, tf.constant(np.arange(3)), tf.constant(np.ones(3, bool)))) == expected


def test_golden_hand_built_graphs_without_inputs_or_equations():
    a = Var(Aval((2,), np.float64))
    assert str(Graph([a], [], [], [a])) == "{ lambda ; a:f64[2] .\n  in (a,) }"
    lit = Literal(2, aval_of(2))
    assert str(Graph([], [], [], [lit, lit])) == "{ lambda ; .\n  in (2, 2) }"
    b = Var(Aval((), np.bool_))
    c = Var(Aval((), np.float32))
    g = Graph([b], [], [Eqn(P["select"], [b, Literal(1.5, aval_of(1.5)), Literal(-1.0, aval_of(1.0))], [c], {})],
              [c])
    assert str(g) == "{ lambda ; a:bool[] .\n  let b:f32[] = select a 1.5 -1.0\n  in (b,) }"


def test_printing_names_past_z_use_two_letters():
    x = Var(Aval((), np.float32))
    vs, eqns, cur = [], [], x
    for _ in range(30):
        o = Var(Aval((), np.float32))
        eqns.append(Eqn(P["neg"], [cur], [o], {}))
        cur = o
    text = str(Graph([x], [], eqns, [cur]))
    names = re.findall(r"^\s+(?:let )?(\w+):", text, re.M)
    assert names[:3] == ["b", "c", "d"] and names[24] == "z" and names[25:27] == ["aa", "ab"]
    assert len(set(names)) == 30
    assert text.endswith("in (ae,) }")


def test_str_of_concrete_function_graph_is_the_optimized_graph():
    fn = tf.function(lambda x: x * 1.0 + 0.0, backend="python")
    cf = fn.get_concrete_function(zeros(2))
    # str(cf) is TF's signature text (tests/test_tf_signature_text.py); the graph prints as IR
    assert str(cf.graph) == "{ lambda ; a:f32[2] .\n  in (a,) }"
    assert "mul a 1.0" in str(cf.raw_graph)


# -- DOT ------------------------------------------------------------------------------------------

_TOKEN = re.compile(r'\s*(?:(->)|("(?:\\.|[^"\\])*")|([A-Za-z_][A-Za-z0-9_]*|-?[0-9.]+)|([{}\[\];=,]))')


def _tokens(text):
    pos, out = 0, []
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"DOT: bad token at {text[pos:pos + 20]!r}")
        out.append(next(g for g in m.groups() if g is not None))
        pos = m.end()
    return out


def parse_dot(text):
    """A small reader for the DOT subset: `digraph ID { stmts }` with node, edge and
    attribute statements. Returns (name, {node: attrs}, [(src, dst)])."""
    toks = _tokens(text)
    i = 0

    def take(expect=None):
        nonlocal i
        t = toks[i]
        if expect is not None and t != expect:
            raise ValueError(f"DOT: expected {expect!r}, got {t!r} at token {i}")
        i += 1
        return t

    def ident():
        t = take()
        if t in "{}[];=," or t == "->":
            raise ValueError(f"DOT: expected an identifier, got {t!r}")
        return t[1:-1].replace('\\"', '"') if t.startswith('"') else t

    def attrs():
        out = {}
        take("[")
        while toks[i] != "]":
            k = ident()
            take("=")
            out[k] = ident()
            if toks[i] in (",", ";"):
                take()
        take("]")
        return out

    take("digraph")
    name = ident()
    take("{")
    nodes, edges = {}, []
    while toks[i] != "}":
        first = ident()
        if toks[i] == "=":
            take("=")
            ident()
        elif first in ("node", "edge", "graph"):
            attrs()
        elif toks[i] == "->":
            chain = [first]
            while toks[i] == "->":
                take("->")
                chain.append(ident())
            if toks[i] == "[":
                attrs()
            edges += list(zip(chain, chain[1:]))
        else:
            a = attrs() if toks[i] == "[" else {}
            if first in nodes:
                raise ValueError(f"DOT: node {first!r} declared twice")
            nodes[first] = a
        take(";")
    take("}")
    if i != len(toks):
        raise ValueError("DOT: text after the graph")
    return name, nodes, edges


def _check_dot(graph, text, name):
    gname, nodes, edges = parse_dot(text)
    assert gname == name
    n_expected = (len(graph.inputs) + len(graph.consts) + len(graph.eqns)
                  + sum(len(e.outputs) for e in graph.eqns) + 1)  # + the outputs node
    assert len(nodes) == n_expected
    for a, b in edges:
        assert a in nodes and b in nodes, f"edge {a} -> {b} to an undeclared node"
    n_edges = sum(sum(isinstance(v, Var) for v in e.inputs) + len(e.outputs) for e in graph.eqns) \
        + sum(isinstance(v, Var) for v in graph.outputs)
    assert len(edges) == n_edges
    prims = sorted(a["label"] for k, a in nodes.items() if k.startswith("eqn"))
    assert prims == sorted(e.prim.name for e in graph.eqns)
    return nodes, edges


def test_dot_parses_as_a_digraph_with_one_node_per_value_and_equation():
    c = tf.constant(np.ones((3, 4), F32))

    def f(x, y):
        return tf.nn.relu(tf.matmul(x, c)) * y, tf.reduce_sum(y)

    fn = tf.function(f, backend="python")
    cf = fn.get_concrete_function(zeros(2, 3), zeros(2, 4))
    nodes, edges = _check_dot(cf.raw_graph, cf.graph_dot(optimized=False), "f")
    _check_dot(cf.graph, cf.graph_dot(), "f")
    assert fn.graph_dot(zeros(2, 3), zeros(2, 4)) == cf.graph_dot()
    # inputs and the captured constant are distinguishable by shape
    shapes = sorted(a["shape"] for a in nodes.values())
    assert shapes.count("invhouse") == 2 and shapes.count("box") == 1 and shapes.count("house") == 1
    assert ("a", "eqn0") in edges or ("b", "eqn0") in edges


def test_dot_of_a_lambda_with_control_flow_and_effects():
    v = tf.Variable(1.0, name="v")

    def body(x):
        v.assign_add(x)
        return tf.cond(x > 0.0, lambda: x * v, lambda: x)

    fn = tf.function(lambda x: body(x), backend="python")
    cf = fn.get_concrete_function(zeros())
    _check_dot(cf.raw_graph, cf.graph_dot(optimized=False), "<lambda>")
    with pytest.raises(ValueError):
        parse_dot("digraph <lambda> { }")  # the reader does reject what DOT rejects


# -- the reference interpreter on hand-built graphs --------------------------------------------------

def _v(shape, dtype=F32):
    return Var(Aval(shape, dtype))


def _lit(x):
    return Literal(x, aval_of(x))


def test_interpreter_straight_line_graph_with_constants_and_literals():
    x, y = _v((2, 3)), _v((3,))
    c = _v((3,))
    t1, t2, t3 = _v((2, 3)), _v((2, 3)), _v((2,))
    g = Graph([x, y], [(c, np.array([1.0, 2.0, 3.0], F32))], [
        Eqn(P["mul"], [x, c], [t1], {}),
        Eqn(P["add"], [t1, y], [t2], {}),
        Eqn(P["reduce_sum"], [t2], [t3], {"axis": (1,), "keepdims": False}),
    ], [t3, t1, _lit(7)])
    xv = np.arange(6, dtype=F32).reshape(2, 3)
    yv = np.array([0.5, -1.0, 2.0], F32)
    out = eval_graph(g, [xv, yv])
    np.testing.assert_allclose(out[0], np.sum(xv * [1, 2, 3] + yv, axis=1), rtol=1e-6)
    np.testing.assert_allclose(out[1], xv * [1, 2, 3])
    assert out[2] == 7
    with pytest.raises(ValueError, match="takes 2 inputs, got 1"):
        eval_graph(g, [xv])


def test_interpreter_variables_in_program_order():
    var = tf.Variable(np.float32(2.0), name="counter")
    r1, s, r2 = _v(()), _v(()), _v(())
    g = Graph([], [], [
        Eqn(P["read_variable"], [], [r1], {"var": var}),
        Eqn(P["mul"], [r1, _lit(3.0)], [s], {}),
        Eqn(P["assign_variable"], [s], [], {"var": var}),
        Eqn(P["read_variable"], [], [r2], {"var": var}),
    ], [r1, r2], variables=[var])
    assert g.has_effects()
    a, b = eval_graph(g, [])
    assert float(a) == 2.0 and float(b) == 6.0 and float(var.numpy()) == 6.0
    a, b = eval_graph(g, [])  # runs again from the current value
    assert float(a) == 6.0 and float(b) == 18.0


def test_interpreter_cond_and_scan_equations_built_by_hand():
    # cond: branches=(false_graph, true_graph), both take all operands
    fx, fo = _v(()), _v(())
    tx, to = _v(()), _v(())
    false_g = Graph([fx], [], [Eqn(P["neg"], [fx], [fo], {})], [fo])
    true_g = Graph([tx], [], [Eqn(P["mul"], [tx, _lit(10.0)], [to], {})], [to])
    p, x, out = _v((), np.bool_), _v(()), _v(())
    g = Graph([p, x], [], [Eqn(P["cond"], [p, x], [out], {"branches": (false_g, true_g)})], [out])
    assert float(eval_graph(g, [np.bool_(True), F32(2.0)])[0]) == 20.0
    assert float(eval_graph(g, [np.bool_(False), F32(2.0)])[0]) == -2.0
    assert g.eqns[0].effect is None
    # scan: body(i, carry, x_slice) -> (carry', y): running sum and i * x
    i, c, xs_ = _v((), np.int32), _v(()), _v(())
    c2, ic, y = _v(()), _v(()), _v(())
    body = Graph([i, c, xs_], [], [Eqn(P["add"], [c, xs_], [c2], {}),
                                   Eqn(P["cast"], [i], [ic], {"dtype": np.dtype(F32)}),
                                   Eqn(P["mul"], [ic, xs_], [y], {})], [c2, y])
    c0, xs, cf, ys = _v(()), _v((4,)), _v(()), _v((4,))
    g2 = Graph([c0, xs], [], [Eqn(P["scan"], [c0, xs], [cf, ys],
                                  {"body": body, "length": 4, "n_carry": 1, "n_xs": 1, "start": 0,
                                   "reverse": False})], [cf, ys])
    xv = np.array([1.0, 2.0, 3.0, 4.0], F32)
    total, stacked = eval_graph(g2, [F32(0.5), xv])
    assert float(total) == 10.5
    np.testing.assert_array_equal(stacked, np.arange(4) * xv)


def test_effect_of_control_flow_comes_from_its_subgraphs():
    var = tf.Variable(0.0)
    a, o = _v(()), _v(())
    writes = Graph([a], [], [Eqn(P["assign_variable"], [a], [], {"var": var})], [a])
    pure = Graph([a], [], [Eqn(P["neg"], [a], [o], {})], [o])
    p, x, out = _v((), np.bool_), _v(()), _v(())
    e = Eqn(P["cond"], [p, x], [out], {"branches": (pure, writes)})
    assert e.effect == "control"
    g = Graph([p, x], [], [e], [out])
    eval_graph(g, [np.bool_(False), F32(3.0)])
    assert float(var.numpy()) == 0.0
    eval_graph(g, [np.bool_(True), F32(3.0)])
    assert float(var.numpy()) == 3.0
    assert Eqn(P["cond"], [p, x], [out], {"branches": (pure, pure)}).effect is None


def test_interpreter_matches_eager_on_a_traced_graph():
    def f(x, w):
        h = tf.tanh(tf.matmul(x, w))
        return tf.reduce_mean(h * h, axis=0), tf.argmax(h, axis=1)

    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 3)).astype(F32)
    w = rng.normal(size=(3, 4)).astype(F32)
    g = raw(f, tf.constant(x), tf.constant(w))
    got = eval_graph(g, [x, w])
    want = f(tf.constant(x), tf.constant(w))
    np.testing.assert_allclose(got[0], want[0].numpy(), rtol=1e-6)
    np.testing.assert_array_equal(got[1], want[1].numpy())
