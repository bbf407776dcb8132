"""tf.map_fn, tf.switch_case and tf.case (tapeflow/ops/control_flow_ops.py) against
TF 2.21's outcomes (recorded literally below), eagerly and compiled, with gradients."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import errors
from conftest import check_grads

MODES = ["eager", "compiled"]
X = np.array([[1., 2.], [3., 4.], [5., 6.]], np.float32)


def run(mode, fn, *args):
    ts = [tf.constant(a) if isinstance(a, np.ndarray) else a for a in args]
    return fn(*ts) if mode == "eager" else tf.function(fn)(*ts)


def same(got, values, dtype):
    a = got.numpy()
    assert a.dtype == np.dtype(dtype), (a.dtype, dtype)
    np.testing.assert_array_equal(a, np.asarray(values, dtype))


# -- map_fn ------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_map_fn_values(mode):
    same(run(mode, lambda x: tf.map_fn(lambda r: r * r, x), X), X * X, np.float32)              # TF 2.21
    same(run(mode, lambda x: tf.map_fn(tf.reduce_sum, x), X), [3., 7., 11.], np.float32)
    same(run(mode, lambda x: tf.map_fn(lambda r: tf.cast(tf.reduce_sum(r), tf.int32), x,
                                       fn_output_signature=tf.int32), X), [3, 7, 11], np.int32)
    same(run(mode, lambda x: tf.map_fn(lambda r: r[:1], x, fn_output_signature=tf.TensorSpec([1], tf.float32)), X),
         [[1.], [3.], [5.]], np.float32)
    same(run(mode, lambda x: tf.map_fn(lambda r: 1.0, x), X), [1., 1., 1.], np.float32)
    out = run(mode, lambda x: tf.map_fn(lambda r: r * 2, x), np.zeros((0, 2), np.float32))
    assert out.shape == (0,) and out.dtype == tf.float32                                          # TF 2.21


@pytest.mark.parametrize("mode", MODES)
def test_map_fn_nested_elems_and_outputs(mode):
    ids = np.array([1, 2, 3], np.int32)
    a, b = run(mode, lambda x, i: tf.map_fn(lambda t: (t[0], t[1] * 2), (x, i)), X, ids)           # TF 2.21
    same(a, X, np.float32)
    same(b, [2, 4, 6], np.int32)
    a, b = run(mode, lambda x, i: tf.map_fn(lambda t: (t[0] + 1., t[1] * 2), (x, i),
                                            fn_output_signature=(tf.float32, tf.int32)), X, ids)
    same(a, X + 1, np.float32)
    d = run(mode, lambda x: tf.map_fn(lambda d: {"b": d["a"] + 1.}, {"a": x}, fn_output_signature={"b": tf.float32}), X)
    same(d["b"], X + 1, np.float32)


def test_map_fn_compiles_to_one_loop():
    f = tf.function(lambda x: tf.map_fn(lambda r: tf.tanh(r) * 2.0, x))
    names = [e.prim.name for e in f.get_concrete_function(tf.constant(X)).raw_graph.eqns]
    assert names.count("scan") == 1 and "tanh" not in names    # the body is the scan's sub-graph, not unrolled


@pytest.mark.parametrize("mode", MODES)
def test_map_fn_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match="output signature says float32"):
        # TF 2.21: InvalidArgumentError "TensorArray dtype is float32 but Op is trying to write dtype int32"
        run(mode, lambda x: tf.map_fn(lambda r: tf.cast(tf.reduce_sum(r), tf.int32), x), X)
    with pytest.raises(ValueError, match="structures must match"):   # TF 2.21: ValueError, same nested structure
        run(mode, lambda x: tf.map_fn(lambda t: t[0] * t[1], (x, x + 1.)), X)
    with pytest.raises(ValueError, match="not scalars"):              # TF 2.21: ValueError
        run(mode, lambda x: tf.map_fn(lambda r: r, x), np.float32(1.0))
    with pytest.raises(ValueError, match="same first dimension"):     # TF 2.21: ValueError
        run(mode, lambda x, i: tf.map_fn(lambda t: t[0], (x, i)), X, np.array([1, 2], np.int32))


@pytest.mark.parametrize("mode", MODES)
def test_map_fn_gradient_matches_tf(mode):
    def g(v):
        with tf.GradientTape() as t:
            t.watch(v)
            loss = tf.reduce_sum(tf.map_fn(lambda a: a * a * 3., v))
        return t.gradient(loss, v)
    same(run(mode, g, np.array([1., 2., 3.], np.float32)), [6., 12., 18.], np.float32)           # TF 2.21


def test_map_fn_gradients_finite_differences():
    w = np.array([[0.5, -1.0], [2.0, 0.3]])
    check_grads(lambda x, y: tf.map_fn(lambda t: tf.tanh(tf.linalg.matvec(tf.constant(w), t[0])) * t[1], (x, y),
                                       fn_output_signature=tf.float64),
                [np.linspace(-1, 1, 8).reshape(4, 2), np.linspace(0.5, 2, 4)])
    check_grads(lambda x: tf.function(lambda x: tf.map_fn(lambda r: tf.reduce_prod(r) + tf.sin(r[0]), x))(x),
                [np.linspace(-1, 1, 6).reshape(3, 2)])


# -- switch_case -------------------------------------------------------------------------------

BRANCHES = [lambda: tf.constant(10), lambda: tf.constant(20), lambda: tf.constant(30)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("i,want,want_default", [(0, 10, 10), (1, 20, 20), (2, 30, 30),
                                                 (3, 30, -1), (-1, 30, -1), (7, 30, -1)])
def test_switch_case_out_of_range_runs_the_default_or_the_last_branch(mode, i, want, want_default):
    same(run(mode, lambda k: tf.switch_case(k, BRANCHES), np.array(i, np.int32)), want, np.int32)        # TF 2.21
    same(run(mode, lambda k: tf.switch_case(k, BRANCHES, default=lambda: tf.constant(-1)),
             np.array(i, np.int64)), want_default, np.int32)


@pytest.mark.parametrize("mode", MODES)
def test_switch_case_forms_and_errors(mode):
    same(run(mode, lambda k: tf.switch_case(k, {0: BRANCHES[0], 1: BRANCHES[2]}), np.array(1, np.int32)), 30,
         np.int32)
    a, b = run(mode, lambda k: tf.switch_case(k, [lambda: (tf.constant(1), tf.constant(2.)),
                                                  lambda: (tf.constant(3), tf.constant(4.))]), np.array(1, np.int32))
    same(a, 3, np.int32)
    same(b, 4., np.float32)
    with pytest.raises(ValueError, match="contiguous range"):                    # TF 2.21: ValueError
        run(mode, lambda k: tf.switch_case(k, {0: BRANCHES[0], 2: BRANCHES[2]}), np.array(1, np.int32))
    with pytest.raises(TypeError, match="must be an integer tensor"):            # TF 2.21: TypeError
        run(mode, lambda k: tf.switch_case(k, BRANCHES), np.array(1., np.float32))
    with pytest.raises(TypeError, match="must be a Tensor"):                     # TF 2.21: TypeError
        tf.switch_case(1, BRANCHES)
    with pytest.raises(ValueError, match="at least one branch"):                 # TF 2.21: ValueError
        tf.switch_case(tf.constant(0), [])


@pytest.mark.parametrize("mode", MODES)
def test_switch_case_gradient_flows_through_the_taken_branch(mode):
    def g(k, x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.switch_case(k, [lambda: x * x, lambda: 3. * x, lambda: tf.sin(x)])
        return t.gradient(y, x)
    for k, want in [(0, 4.), (1, 3.), (2, np.cos(2.)), (9, np.cos(2.))]:
        np.testing.assert_allclose(run(mode, g, np.array(k, np.int32), np.array(2., np.float32)).numpy(), want,
                                   rtol=1e-6)


def test_switch_case_traces_one_cond_chain_and_runs_one_branch():
    f = tf.function(lambda k, x: tf.switch_case(k, [lambda: x + 1., lambda: x * 2., lambda: x - 5.]))
    cf = f.get_concrete_function(tf.constant(0), tf.constant(1.))
    assert [e.prim.name for e in cf.raw_graph.eqns].count("cond") == 1   # nested: the chain's first cond
    assert [float(f(tf.constant(k), tf.constant(1.))) for k in (0, 1, 2, 3)] == [2., 2., -4., -4.]


# -- case --------------------------------------------------------------------------------------

def _case(a, b, **kw):
    return tf.case([(a > b, lambda: tf.constant(1)), (a < b, lambda: tf.constant(2))], **kw)


@pytest.mark.parametrize("mode", MODES)
def test_case(mode):
    two, three = np.array(2, np.int32), np.array(3, np.int32)
    # TF 2.21 values: the first pred that holds, else the default
    same(run(mode, lambda a, b: _case(a, b, default=lambda: tf.constant(0)), two, three), 2, np.int32)
    same(run(mode, lambda a, b: _case(a, b, default=lambda: tf.constant(0)), two, two), 0, np.int32)
    same(run(mode, lambda a, b: _case(a, b), two, three), 2, np.int32)
    same(run(mode, lambda a, b: tf.case([(a < b, lambda: tf.constant(1)), (a < 5, lambda: tf.constant(2))],
                                        default=lambda: tf.constant(0)), two, three), 1, np.int32)
    same(run(mode, lambda a, b: tf.case([(a < b, lambda: a), (a > b, lambda: b)], default=lambda: a * 0,
                                        exclusive=True), two, three), 2, np.int32)
    with pytest.raises(errors.InvalidArgumentError, match="none of the conditions evaluated as True"):
        run(mode, lambda a, b: _case(a, b), two, two)                     # TF 2.21: InvalidArgumentError
    with pytest.raises(errors.InvalidArgumentError, match="exclusive=True: more than 1 conditions"):
        # TF 2.21 raises this eagerly; its tf.function returned the first branch's value
        run(mode, lambda a, b: tf.case([(a < b, lambda: tf.constant(1)), (a < 5, lambda: tf.constant(2))],
                                       default=lambda: tf.constant(0), exclusive=True), two, three)


def test_case_errors():
    with pytest.raises(TypeError, match="pred must be a Tensor"):             # TF 2.21: TypeError
        tf.case([(True, lambda: tf.constant(1))], default=lambda: tf.constant(0))
    with pytest.raises(TypeError, match="scalar bool tensor"):
        tf.case([(tf.constant(2), lambda: tf.constant(1))], default=lambda: tf.constant(0))
    with pytest.raises(TypeError, match="fn must be callable"):
        tf.case([(tf.constant(True), 1)], default=lambda: tf.constant(0))


def test_case_gradient():
    def f(x):
        return tf.case([(x[0] > 0., lambda: x * x), (x[0] < -1., lambda: tf.sin(x))], default=lambda: 3. * x)
    for x0 in (0.5, -2.0, -0.5):
        check_grads(f, [np.array([x0, 0.7])], order=1)
        check_grads(lambda x: tf.function(f)(x), [np.array([x0, 0.7])], order=1)
