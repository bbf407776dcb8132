"""Differences from TF 2.21 found by the wave-18 sweep of GradientTape / tf.function / Variable
semantics (tests/tf_reference/sweep_fn18.py), each fixed here with TF's behaviour as the
expected value. (Cases that are a program and its inputs are in the bad-input table's
"sweepfn18" block: tests/bad_input_cases.py.)"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import errors


def c(x, dt="float32"):
    return tf.constant(np.asarray(x, dtype=dt))


# -- tf.function: input_signature and concrete functions --------------------------------------

def test_input_signature_unknown_rank_serves_every_rank():
    n = [0]

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def f(x):
        n[0] += 1
        return tf.reduce_sum(x)
    # TF 2.21: 1.0 and 3.0 (one trace of unknown rank; tapeflow traces once per rank)
    assert f(c(1.0)).numpy() == 1.0
    r = f(c([[1.0, 2.0]]))
    assert r.shape == () and r.numpy() == 3.0
    r = f(c([[1.0, 2.0], [3.0, 4.0]]))  # the rank-2 trace serves another rank-2 shape
    assert r.shape == () and r.numpy() == 10.0
    assert n[0] == 2


def test_input_signature_converts_a_python_list():
    n = [0]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        n[0] += 1
        return x * 2
    # TF 2.21: [2., 4.] float32, one trace
    r = f([1.0, 2.0])
    assert r.dtype == tf.float32 and r.numpy().tolist() == [2.0, 4.0]
    assert f([3, 4, 5]).numpy().tolist() == [6.0, 8.0, 10.0]
    assert n[0] == 1


def test_concrete_function_checks_dtype_and_shape():
    f = tf.function(lambda x: x * 2)
    cf = f.get_concrete_function(tf.TensorSpec([2], tf.float32))
    assert cf(c([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    # TF 2.21: InvalidArgumentError "... input #0(zero-based) was expected to be a float tensor but is a
    # int32 tensor"; tapeflow's compiled code would have computed in int32
    with pytest.raises(errors.InvalidArgumentError, match="traced as float32 but is int32"):
        cf(c([1, 2], "int32"))
    # TF 2.21 runs the other shape; tapeflow's trace has its shapes built in, so it raises
    with pytest.raises(errors.InvalidArgumentError, match=r"shape \(3,\).*traced for \(2,\)"):
        cf(c([1.0, 2.0, 3.0]))
    g = tf.function(lambda x: x * 2).get_concrete_function(tf.TensorSpec([None], tf.float32))
    assert g(c([1.0, 2.0, 3.0])).numpy().tolist() == [2.0, 4.0, 6.0]


def test_numpy_scalar_arguments_share_a_trace():
    n = [0]

    @tf.function
    def f(x):
        n[0] += 1
        return x * 2
    # TF 2.21: one trace; NumPy scalars are tensors, as NumPy arrays are
    assert f(np.float32(1.0)).numpy() == 2.0
    assert f(np.float32(2.0)).numpy() == 4.0
    assert n[0] == 1
    r = f(np.float16(3.0))  # TF 2.21: float16 6.0 (a new dtype: a second trace)
    assert r.dtype == tf.float16 and r.numpy() == 6.0 and n[0] == 2
    # NumPy ints stay constants of the trace (a size may need the value); TF makes them tensors
    assert f(np.int32(3)).numpy() == 6 and f(np.int32(4)).numpy() == 8 and n[0] == 4


def test_closed_over_numpy_array_is_captured_when_traced():
    k = np.array([2.0], np.float32)
    # exp(x * k) * k: the first k is read by the compiled code, and k + 0 is folded when traced;
    # a reference to k would see a later write in one and not the other
    f = tf.function(lambda x: tf.exp(x * k) * (k + 0.0))
    x = c([1.0])
    first = f(x).numpy()
    k[0] = 5.0
    # TF 2.21: the array's value when traced (2.0), on every later call (past the tier-up too)
    for _ in range(200):
        r = f(x).numpy()
    np.testing.assert_allclose(r, first)
    np.testing.assert_allclose(first, np.exp(np.float32(2.0)) * 2.0, rtol=1e-6)


# -- cond / while_loop --------------------------------------------------------------------------

@pytest.mark.parametrize("compiled", [False, True])
def test_cond_branches_returning_none(compiled):
    v = tf.Variable(0.0)

    def g(x):
        def t():
            v.assign_add(1.0)

        def e():
            v.assign_add(10.0)
        return tf.cond(x > 0, t, e), tf.cond(x > 0, lambda: (None, x * 2), lambda: (None, x * 3))
    g = tf.function(g) if compiled else g
    # TF 2.21: None (both branches return None); the branches' writes still run
    a, (b, y) = g(c(1.0))
    assert a is None and b is None and y.numpy() == 2.0 and v.numpy() == 1.0
    a, (b, y) = g(c(-1.0))
    assert y.numpy() == -3.0 and v.numpy() == 11.0


def test_cond_none_in_one_branch_only_raises():
    @tf.function
    def f(x):
        return tf.cond(x > 0, lambda: None, lambda: x)
    with pytest.raises(ValueError, match="None in true_fn only"):
        f(c(1.0))


def test_eager_while_loop_returns_tensors():
    # TF 2.21: (int32 5, int32 10) for Python-int loop variables, as tf.function gives
    i, s = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), [0, 0])
    assert isinstance(i, tf.Tensor) and i.dtype == tf.int32 and i.numpy() == 5 and s.numpy() == 10
    (z,) = tf.while_loop(lambda s: s < 0.0, lambda s: s + 1.0, [2.5])  # no iteration at all
    assert isinstance(z, tf.Tensor) and z.dtype == tf.float32 and z.numpy() == 2.5


# -- GradientTape ------------------------------------------------------------------------------

def test_unconnected_gradients_values():
    x, z = c([1.0, 2.0]), c([3.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, z])
        y = x * 2.0
    # TF 2.21: "none" is UnconnectedGradients.NONE (None), "zero" is ZERO, anything else a ValueError
    assert t.jacobian(y, z, unconnected_gradients="none") is None
    assert t.jacobian(y, z, unconnected_gradients="zero").numpy().tolist() == [[0.0], [0.0]]
    assert t.gradient(y, z, unconnected_gradients="none") is None
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'ZERO'"):
        t.gradient(y, z, unconnected_gradients="ZERO")
    with pytest.raises(ValueError, match="unconnected_gradients"):
        t.jacobian(y, z, unconnected_gradients=0)


# -- Variables ---------------------------------------------------------------------------------

@pytest.mark.parametrize("stmt,word", [("v += 1.0", "assign_add"), ("v -= 1.0", "assign_sub"),
                                       ("v *= 2.0", "assign"), ("v /= 2.0", "assign"), ("v **= 2.0", "assign")])
def test_variable_inplace_operators_raise(stmt, word):
    v = tf.Variable([1.0, 2.0])
    w = v
    # TF 2.21: RuntimeError "`variable += value` with `tf.Variable`s is not supported. Use
    # `variable.assign_add(value)` ..." (the rebinding would leave the variable as it was)
    with pytest.raises(RuntimeError, match=word):
        exec(stmt, {"v": v})
    assert w.numpy().tolist() == [1.0, 2.0]


def test_variable_constraint_kept_and_applied_by_optimizers():
    v = tf.Variable([-1.0, 2.0], constraint=lambda x: tf.maximum(x, 0.0))
    assert v.constraint is not None and tf.Variable(1.0).constraint is None
    v.assign([-3.0, 4.0])  # TF 2.21: assign does not apply it
    assert v.numpy().tolist() == [-3.0, 4.0]
    v.assign([-1.0, 2.0])
    tf.keras.optimizers.SGD(0.1).apply_gradients([(c([1.0, 1.0]), v)])
    np.testing.assert_allclose(v.numpy(), [0.0, 1.9], rtol=1e-6)  # TF 2.21: [0. 1.9]
    with pytest.raises(ValueError, match="constraint"):  # TF 2.21: ValueError
        tf.Variable(1.0, constraint=3)


def test_variable_synchronization_and_aggregation():
    # TF 2.21: accepted; ON_READ makes a variable non-trainable unless trainable=True is given
    v = tf.Variable(1.0, synchronization=tf.VariableSynchronization.ON_READ,
                    aggregation=tf.VariableAggregation.MEAN)
    assert v.trainable is False and v.synchronization is tf.VariableSynchronization.ON_READ
    assert v.aggregation is tf.VariableAggregation.MEAN
    assert tf.Variable(1.0, synchronization=tf.VariableSynchronization.ON_READ, trainable=True).trainable
    assert tf.Variable(1.0).trainable and not tf.Variable(1.0, trainable=False).trainable


# -- AutoGraph -----------------------------------------------------------------------------------

def test_autograph_nested_tensor_loops():
    @tf.function
    def f(n):
        s = tf.constant(0)
        for i in tf.range(n):
            for j in tf.range(i):  # j: assigned by the inner loop only, never before the outer one
                s += j
        return s
    # TF 2.21: 10 (sum over i < 5 of sum(range(i)))
    assert f(c(5, "int32")).numpy() == 10
    assert f(c(0, "int32")).numpy() == 0


def test_autograph_name_first_assigned_in_a_tensor_loop():
    @tf.function
    def f(n):
        for i in tf.range(n):
            y = i * 2
        return y
    assert f(c(3, "int32")).numpy() == 4  # TF 2.21: 4

    @tf.function
    def g(n):
        s = tf.constant(0.0)
        k = tf.constant(0)
        while k < n:
            tmp = tf.cast(k, tf.float32) * 2.0
            s += tmp
            k += 1
        return s, tmp
    s, tmp = g(c(3, "int32"))
    assert s.numpy() == 6.0 and tmp.numpy() == 4.0


def test_autograph_read_before_assignment_in_a_tensor_loop_raises():
    @tf.function
    def f(n):
        s = tf.constant(0)
        for i in tf.range(n):
            s = s + t  # noqa: F821 (t is read before the body assigns it)
            t = i
        return s
    with pytest.raises(ValueError, match="'t' must be defined before"):
        f(c(3, "int32"))


def test_autograph_conditional_expression_on_a_tensor():
    @tf.function
    def f(x, k):
        y = x * 2 if k > 1 else x * 3      # a Python condition: Python's
        return y if x > 0 else -y          # a tensor condition: a cond
    # TF 2.21: 2.0 and 3.0
    assert f(c(1.0), 2).numpy() == 2.0
    assert f(c(-1.0), 0).numpy() == 3.0


# -- TensorArray inside tapeflow.function ----------------------------------------------------------

def test_tensor_array_written_in_a_tensor_loop():
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=tf.shape(x)[0])  # no element_shape: the first write's
        for i in tf.range(tf.shape(x)[0]):
            ta = ta.write(i, x[i] * 2.0)
        return ta.stack()
    # TF 2.21: [2. 4. 6.]
    assert f(c([1.0, 2.0, 3.0])).numpy().tolist() == [2.0, 4.0, 6.0]

    @tf.function
    def g(x):
        ta = tf.TensorArray(tf.float32, size=3)
        i = tf.constant(0)
        while i < 2:  # the last element is never written: zeros, as TF's stack gives
            ta = ta.write(i, tf.fill([2], tf.cast(i, tf.float32) + x))
            i += 1
        return ta.stack()
    assert g(c(1.0)).numpy().tolist() == [[1.0, 1.0], [2.0, 2.0], [0.0, 0.0]]


def test_tensor_array_limits_inside_tapeflow_function_say_so():
    @tf.function
    def f(n):
        ta = tf.TensorArray(tf.float32, size=n)  # (wave 25: a run-time size works; TF 2.21 too)
        return ta.stack()
    # nothing written and no element_shape: TF 2.21 raises when it runs ("Tried to stack elements of an
    # empty list with non-fully-defined element_shape"); tapeflow while tracing
    with pytest.raises(ValueError, match="nothing written yet and no element_shape"):
        f(c(3, "int32"))
    sized = tf.function(lambda n: tf.TensorArray(tf.float32, size=n, element_shape=[2]).stack())
    assert sized(c(3, "int32")).numpy().tolist() == [[0.0, 0.0]] * 3            # TF 2.21: three rows of zeros

    @tf.function
    def g(n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            ta = ta.write(i, tf.cast(i, tf.float32))
        return ta.stack()
    with pytest.raises(TypeError, match="dynamic_size=True"):
        g(c(3, "int32"))


# -- custom gradients, recompute_grad, forward mode, tf.gradients ---------------------------------

def test_unwatched_constant_has_no_gradient_next_to_a_watched_variable():
    v, x = tf.Variable(2.0), c(3.0)
    with tf.GradientTape() as t:
        y = x * v
    gx, gv = t.gradient(y, [x, v])
    assert gx is None and gv.numpy() == 3.0  # TF 2.21: [None, 3.0]

    @tf.function
    def g(x):  # the same with the tape inside a compiled function
        with tf.GradientTape() as t:
            y = x * v
        return t.gradient(y, [x, v])
    gx, gv = g(x)
    assert gx is None and gv.numpy() == 3.0


def test_custom_gradient_variable_gradient_without_watched_inputs():
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            return dy * v, [dy * x * 10.0]
        return x * v, grad
    x = c(3.0)
    with tf.GradientTape() as t:
        y = f(x)
    gx, gv = t.gradient(y, [x, v])
    assert gx is None and gv.numpy() == 30.0  # TF 2.21: [None, 30.0]


@pytest.mark.parametrize("compiled", [False, True])
def test_recompute_grad(compiled):
    v = tf.Variable([0.5, -1.0, 2.0])

    def block(a):
        return tf.sin(a) * a * v

    rb = tf.recompute_grad(block)

    def run(fn, x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(fn(x))
        return (y,) + tuple(t.gradient(y, [x, v]))
    runner = tf.function(run) if compiled else run
    x = c([1.0, -2.0, 3.0])
    got, want = runner(rb, x), run(block, x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    # TF 2.21 (the sweep's recompute_grad case, without v): y 3.0834, dx [1.3818, -0.077004, -2.8289]
    x3 = c([1.0, -2.0, 3.0])
    with tf.GradientTape() as t:
        t.watch(x3)
        y = tf.reduce_sum(tf.recompute_grad(lambda a: tf.sin(a) * a)(x3))
    np.testing.assert_allclose(t.gradient(y, x3).numpy(), [1.3818, -0.077004, -2.8289], rtol=1e-4)


def test_forward_accumulator_matches_the_jacobian(caplog, monkeypatch):
    import sys
    monkeypatch.setattr(sys.modules["tapeflow.autodiff.tape"], "_watch_warnings_left", 5)   # (log_first_n)
    x = c([1.0, 2.0])
    v = tf.Variable([3.0, 4.0])
    tx, tv = c([1.0, 0.0]), c([0.0, 1.0])
    with tf.autodiff.ForwardAccumulator([x, v], [tx, tv]) as acc:
        y = x * v
        z = tf.reduce_sum(tf.sin(y))
        w = x
    # TF 2.21: jvp(y) [3. 2.]; jvp of x itself is its tangent
    assert acc.jvp(y).numpy().tolist() == [3.0, 2.0]
    jz, jw = acc.jvp([z, w])
    assert jw.numpy().tolist() == [1.0, 0.0]
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        z2 = tf.reduce_sum(tf.sin(x * v))
    gx, gv = t.gradient(z2, [x, v])
    np.testing.assert_allclose(jz.numpy(), np.sum(gx.numpy() * tx.numpy() + gv.numpy() * tv.numpy()), rtol=1e-6)
    # unconnected: None (TF 2.21), or zeros; an integer result: None
    assert acc.jvp(c(1.0)) is None
    assert acc.jvp(c(1.0), unconnected_gradients=tf.UnconnectedGradients.ZERO).numpy() == 0.0
    with tf.autodiff.ForwardAccumulator(x, c([1.0, 1.0])) as acc2:
        k = tf.cast(x, tf.int32) * 2
    with caplog.at_level("WARNING", logger="tensorflow"):
        assert acc2.jvp(k) is None
    assert "must be floating" not in caplog.text  # (no tape.watch warning from the jvp's own tape)


def test_forward_accumulator_checks_its_tangents():
    x = c([1.0, 2.0])
    with pytest.raises(ValueError, match="dtype int32"):  # TF 2.21: ValueError
        tf.autodiff.ForwardAccumulator(x, c([1, 2], "int32"))
    with pytest.raises(ValueError, match=r"shape \(1,\)"):  # TF 2.21 does not check (a broadcast jvp)
        tf.autodiff.ForwardAccumulator(x, c([1.0]))


def test_tf_gradients():
    x = c(1.0)
    with pytest.raises(RuntimeError, match="not supported when eager execution is enabled"):  # TF 2.21's text
        tf.gradients(x * x, x)

    @tf.function
    def f(a):
        return tf.gradients(a * a, a)
    with pytest.raises(NotImplementedError, match="GradientTape inside the function"):
        f(x)


def test_gradient_of_a_variable_with_respect_to_itself():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        pass
    assert t.gradient(v, v).numpy() == 1.0  # TF 2.21: 1.0 (the tape never read v)
    w = tf.Variable(3.0)
    with tf.GradientTape() as t:
        pass
    assert t.gradient(v, w) is None


def test_control_flow_condition_and_structure_errors_are_tf_classes():
    @tf.function
    def f(x):
        if x > 0:  # a non-scalar condition: TF 2.21's AutoGraph raises ValueError
            return x
        return -x

    @tf.function
    def g(x):  # TF 2.21: tf.cond in a graph raises InvalidArgumentError
        return tf.cond(x > 0, lambda: x * 2, lambda: x * 3)

    @tf.function
    def h(x):
        if x > 0:  # TF 2.21's AutoGraph: TypeError "'y' must have the same nested structure"
            y = (x, x)
        else:
            y = x
        return y
    @tf.function
    def w(x):
        while x > 0:  # TF 2.21's AutoGraph: ValueError "condition of while loop expected to be ..."
            x = x - 1.0
        return x
    for fn, arg in ((f, c([1.0, -1.0])), (g, c([1.0, 2.0])), (h, c(1.0)), (w, c([1.0, 2.0]))):
        with pytest.raises(errors.InvalidArgumentError) as e:
            fn(arg)
        assert isinstance(e.value, ValueError) and isinstance(e.value, TypeError)


def test_forward_accumulator_compiled_matches_eager():
    v = tf.Variable([3.0, 4.0])

    def jvp(x):
        with tf.autodiff.ForwardAccumulator([x, v], [c([1.0, 0.0]), c([0.0, 1.0])]) as acc:
            y = tf.sin(x * v)
        return acc.jvp(y)
    x = c([1.0, 2.0])
    e, f = jvp(x).numpy(), tf.function(jvp)(x).numpy()
    np.testing.assert_array_equal(e, f)
    # d sin(x v) = cos(x v) (v dx + x dv) with dx = [1, 0], dv = [0, 1]
    np.testing.assert_allclose(e, np.cos([3.0, 8.0]) * np.array([3.0, 2.0]), rtol=1e-5)
