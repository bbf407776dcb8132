"""The serialized IR (tapeflow/ir/serialize.py): golden round trips
``graph_from_json(json(graph_to_json(g))) == g`` over traced graphs of every kind the
compiler meets (control flow, scans, random draws with their generator state, Philox
streams, variables read and assigned, getitem keys, literals, non-finite constants), both
as traced and after the passes; the loaded graph runs to the same bits; malformed input
and unserializable params raise clear errors."""
from __future__ import annotations

import json

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ir import serialize as S
from tapeflow.ir.interpreter import eval_graph

F32 = np.float32


def _tables():
    table, back = {}, {}

    def ref(v):
        if id(v) not in table:
            table[id(v)] = len(table)
            back[table[id(v)]] = v
        return table[id(v)]
    return S.Tables(variable_ref=ref, variable_of=lambda r: back[r])


def roundtrip(g):
    t = _tables()
    text = json.dumps(S.graph_to_json(g, t, "test"), allow_nan=False)  # real JSON: no NaN literals
    t2 = S.Tables(variable_of=t.variable_of, arrays=t.arrays, rngs=json.loads(json.dumps(t.rngs)))
    return S.graph_from_json(json.loads(text), t2, "test")


def check(fn, *args, **kw):
    cf = tf.function(fn, **kw).get_concrete_function(*args)
    for g in (cf.raw_graph, cf.graph):
        back = roundtrip(g)
        assert S.graph_equal(back, g, explain=True) == ""
        if " at 0x" not in str(g):  # the printed text too (a Philox stream prints its address)
            assert str(back) == str(g)
    return cf


x4 = tf.constant(np.arange(4, dtype=F32) - 1.5)
m23 = tf.constant(np.arange(6, dtype=F32).reshape(2, 3))


def test_straight_line_literals_reductions_and_casts():
    def f(x, m):
        y = tf.reduce_sum(tf.nn.relu(x * 2.0 + 1), axis=0, keepdims=True)
        z = tf.cast(tf.matmul(m, tf.transpose(m)), tf.float64)
        return y, z, tf.argmax(m, axis=1, output_type=tf.int64), tf.shape(m, out_type=tf.int64)
    check(f, x4, m23)


def test_control_flow_cond_while_fori_and_scan():
    def f(x):
        y = tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * 2.0, lambda: -x)
        i, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + y), (0, tf.zeros_like(x)),
                               maximum_iterations=10)
        s = tf.scan(lambda a, e: a + e, x, initializer=0.0, reverse=True)
        return tf.lax.fori_loop(0, 4, lambda j, c: c * 1.5, acc) + s
    check(f, x4)


def test_a_while_loop_gradient_whose_passes_made_two_graphs_of_one_body():
    # the optimized graph's while_loop and while_loop_grad hold two graphs a pass made from the one
    # body they shared: they share its values, and the reader keeps each graph's values its own
    # (before: "value #7 is defined twice" at load). (Not check(): the loaded sibling graphs have
    # values of their own, so the printed names differ from the shared ones.)
    W = tf.constant(np.eye(3) * 0.5)

    def f(h0, n):
        with tf.GradientTape() as t:
            t.watch(h0)
            _, h = tf.while_loop(lambda i, h: i < n, lambda i, h: (i + 1, tf.tanh(tf.linalg.matvec(W, h) + 1.0)),
                                 (tf.constant(0), h0))
            y = tf.reduce_sum(h * h)
        return t.gradient(y, h0)
    cf = tf.function(f).get_concrete_function(tf.constant(np.ones(3)), tf.constant(2))
    assert any(e.prim.name == "while_loop_grad" for e in cf.graph.eqns)
    for g in (cf.raw_graph, cf.graph):
        back = roundtrip(g)
        assert S.graph_equal(back, g, explain=True) == ""
        args = [np.ones(3), np.array(2, np.int32)]
        np.testing.assert_array_equal(eval_graph(back, args)[0], eval_graph(g, args)[0])


def test_numpy_float64_constants_keep_their_type():
    # np.float64 is a Python float: written as one, it was read back as a weak Python scalar (a
    # float32 graph then computes float32 * float where it had float32 * float64: NumPy 2's float64)
    from tapeflow.experimental.numpy import _set_numpy_behavior
    import tapeflow.experimental.numpy as tnp
    _set_numpy_behavior(True, False)
    try:
        g = tf.function(lambda: tnp.sqrt(4)).get_concrete_function().raw_graph
    finally:
        _set_numpy_behavior(False, False)
    assert [type(v) for _, v in g.consts] == [np.float64]
    back = roundtrip(g)
    assert S.graph_equal(back, g, explain=True) == ""
    assert [type(v) for _, v in back.consts] == [np.float64]


def test_autograph_if_and_for_over_a_tensor():
    def f(x):
        t = tf.constant(0.0)
        for e in x:
            if e > 0.0:
                t += e
            else:
                t -= e * e
        return t
    check(f, x4)


def test_variables_read_and_assigned_in_loops_and_branches():
    v = tf.Variable(np.ones(4, F32), name="v")
    n = tf.Variable(0, name="n")

    def f(x):
        for _ in tf.range(3):
            v.assign_add(x)
            n.assign_add(1)
        if tf.reduce_sum(x) > 0.0:
            v.assign(v * 0.5)
        return v.read_value() + tf.cast(n, tf.float32)
    cf = check(f, x4)
    g = roundtrip(cf.raw_graph)
    assert {id(u) for u in g.variables} == {id(v), id(n)}


def test_random_ops_keep_their_generator_state():
    tf.random.set_seed(7)

    def f(x):
        return x + tf.random.normal([4]) + tf.cast(tf.random.uniform([4], 0, 10, dtype=tf.int32), tf.float32)
    cf = tf.function(f).get_concrete_function(x4)
    back = roundtrip(cf.raw_graph)
    assert S.graph_equal(back, cf.raw_graph, explain=True) == ""
    # the loaded graph draws the numbers the original draws next (the same state)
    want = eval_graph(cf.raw_graph, [x4._v])[0]
    got = eval_graph(back, [x4._v])[0]
    np.testing.assert_array_equal(got, want)


def test_philox_generator_streams_and_stateless_ops():
    g = tf.random.Generator.from_seed(3)

    def f(x):
        return x + g.normal([4]) + tf.random.stateless_uniform([4], seed=[1, 2])
    check(f, x4)


def test_getitem_keys_slices_and_gathers():
    def f(m, i):
        return m[1:, ::2], m[..., None, -1], m[:, i], tf.gather(m, [1, 0], axis=1)
    check(f, m23, tf.constant(2))


def test_non_finite_and_integer_constants():
    c = tf.constant(np.array([np.nan, np.inf, -np.inf, 0.0], F32))

    def f(x):
        return tf.where(tf.math.is_nan(c), x, c) + float("inf"), tf.constant(np.int64(3)) + 1
    check(f, x4)


def test_input_signature_with_unknown_dims_and_segments():
    sig = [tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.int32)]

    def f(x, ids):
        return tf.math.unsorted_segment_sum(x, ids, 3), tf.unique(ids)[0]
    check(f, input_signature=sig)
    check(lambda x: tf.boolean_mask(x, x > 0.0), x4)


def test_keras_model_forward_and_train_step_graphs():
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(1)])
    model.build((None, 4))
    opt = tf.keras.optimizers.Adam(0.01)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    check(step, tf.ones([2, 4]), tf.ones([2, 1]))


def test_loaded_graph_runs_to_the_same_bits_on_the_compiled_backend():
    from tapeflow.compiler import pipeline

    def f(x, m):
        return tf.tanh(tf.matmul(m, tf.reshape(x[:3], (3, 1)))) * 3.0 + tf.reduce_mean(x)
    cf = tf.function(f).get_concrete_function(x4, m23)
    back = roundtrip(cf.raw_graph)
    graph, plan, _ = pipeline.optimize(back, name="f")
    compiled, _ = pipeline.compile(graph, plan, name="f")
    got = compiled(x4._v, m23._v)
    want = cf.compiled(x4._v, m23._v)
    assert [a.tobytes() for a in got] == [a.tobytes() for a in want]


def test_py_function_param_is_refused_naming_the_op_and_function():
    def f(x):
        return tf.numpy_function(lambda a: a * 2, [x], tf.float32)
    g = tf.function(f).get_concrete_function(x4).raw_graph
    with pytest.raises(S.UnserializableError, match=r"my_fn: op 'py_call'.*param 'fn'.*Python code"):
        S.graph_to_json(g, _tables(), "my_fn")


@pytest.mark.parametrize("mutate, needle", [
    (lambda d: d.update(format="other"), "not a serialized tapeflow graph"),
    (lambda d: d.update(version=99), "version 99 is not supported"),
    (lambda d: d["graph"]["eqns"][0].__setitem__(0, "no_such_op"), "primitive 'no_such_op'"),
    (lambda d: d["graph"]["eqns"][0][1].__setitem__(0, 999), "used before it is defined"),
    (lambda d: d["graph"]["eqns"][0][3].__setitem__("axis", {"$bogus": 1}), "unknown tag"),
    (lambda d: d["graph"]["inputs"][0].__setitem__(1, [[2], "float99", False]), "dtype 'float99'"),
    (lambda d: d["graph"].pop("eqns"), "must be an object with"),
])
def test_malformed_documents_raise_serialized_graph_error(mutate, needle):
    g = tf.function(lambda x: tf.reduce_sum(x * 2.0, axis=0)).get_concrete_function(x4).raw_graph
    t = _tables()
    doc = json.loads(json.dumps(S.graph_to_json(g, t, "f")))
    mutate(doc)
    with pytest.raises(S.SerializedGraphError, match=needle):
        S.graph_from_json(doc, t, "f")


def test_graph_equal_sees_a_changed_param_constant_and_literal():
    c = tf.constant(np.ones(4, F32))
    g = tf.function(lambda x: tf.reduce_sum(x * 2.0 + c, axis=0)).get_concrete_function(x4).raw_graph
    assert S.graph_equal(g, g)
    b = roundtrip(g)
    b.eqns[-1].params = dict(b.eqns[-1].params, keepdims=True)
    assert "param keepdims" in S.graph_equal(b, g, explain=True)
    b = roundtrip(g)
    b.consts[0] = (b.consts[0][0], b.consts[0][1] * 2)
    assert "const 0" in S.graph_equal(b, g, explain=True)
