"""GradientTape semantics (TF 2): persistence, nesting, watching, pausing,
unconnected gradients, target/seed/source structures, jacobians,
custom_gradient, grad/value_and_grad, and the errors TF raises."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

from conftest import assert_close, check_grads, np_of, numeric_jacobian


def c64(v):
    return tf.constant(np.asarray(v, np.float64))


# -- basics ----------------------------------------------------------------------------------

def test_simple_gradient():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x)
    assert g.dtype == tf.float32 and float(g) == 6.0


def test_unwatched_constant_gets_none():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None


def test_trainable_variables_are_watched_automatically():
    v = tf.Variable([1.0, -2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v * v * v)
    assert_close(tape.gradient(y, v), np.array([3.0, 12.0], np.float32))
    assert tape.watched_variables() == (v,)


def test_non_persistent_tape_used_twice_raises():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent"):
        tape.gradient(y, x)
    with tf.GradientTape() as tape2:
        tape2.watch(x)
        y = x * x
    tape2.jacobian(y, x)
    with pytest.raises(RuntimeError, match="persistent"):
        tape2.gradient(y, x)


def test_persistent_tape_many_gradients():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert float(tape.gradient(z, x)) == 108.0   # 4 x^3
    assert float(tape.gradient(y, x)) == 6.0
    assert float(tape.gradient(z, y)) == 18.0    # 2 y
    assert float(tape.gradient(z, x)) == 108.0


def test_second_derivative_of_cube_is_12_at_2():
    x = tf.constant(2.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = x ** 3
        dy = t1.gradient(y, x)
    d2y = t2.gradient(dy, x)
    assert float(dy) == 12.0
    assert float(d2y) == 12.0


def test_third_derivative_through_three_tapes():
    x = c64(1.5)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = tf.sin(x) * x
            g1 = t1.gradient(y, x)
        g2 = t2.gradient(g1, x)
    g3 = t3.gradient(g2, x)
    xv = 1.5
    # (x sin x)''' = -3 sin x - x cos x
    assert_close(g3, np.float64(-3 * np.sin(xv) - xv * np.cos(xv)), rtol=1e-12)


def test_hessian_vector_product():
    xv = np.array([0.5, -1.0, 2.0])
    vv = np.array([1.0, 0.25, -0.5])
    x, v = c64(xv), c64(vv)

    def f(a):
        return tf.reduce_sum(a ** 3) + a[0] * a[1] * a[2] + tf.reduce_sum(tf.exp(a) * a)

    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
        gv = tf.reduce_sum(g * v)
    hvp = np_of(outer.gradient(gv, x))
    a0, a1, a2 = xv
    H = np.diag(6 * xv + np.exp(xv) * (xv + 2)) + np.array([[0, a2, a1], [a2, 0, a0], [a1, a0, 0]])
    assert_close(hvp, H @ vv, rtol=1e-12)


def test_persistent_tape_records_its_own_gradient_inside_the_context():
    """TF: calling gradient() inside a persistent tape's context records the
    gradient computation, so the same tape gives second derivatives."""
    x = c64(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * x
        dy = tape.gradient(y, x)
    d2y = tape.gradient(dy, x)
    assert float(dy) == 27.0
    assert d2y is not None and float(d2y) == 18.0


# -- watching ------------------------------------------------------------------------------------

def test_watch_nested_structure():
    a, b = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch({"a": a, "rest": [b]})
        y = a * b
    ga, gb = tape.gradient(y, [a, b])
    assert float(ga) == 2.0 and float(gb) == 1.0


def test_watch_accessed_variables_false():
    v = tf.Variable(3.0)
    w = tf.Variable(5.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(w)
        y = v * w
    assert tape.gradient(y, v) is None
    assert tape.watched_variables() == (w,)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(w)
        y = v * w
    assert float(tape.gradient(y, w)) == 3.0


def test_watch_rejects_non_tensors():
    # (an integer tensor is not rejected: TF warns and leaves it unwatched, see test_tf_semantics)
    # TF 2.21: ValueError "Passed in object 3.0 of type 'float', not tf.Tensor or tf.Variable ..."
    with tf.GradientTape() as tape:
        with pytest.raises(ValueError, match="tapeflow.constant"):
            tape.watch(3.0)
        with pytest.raises(ValueError, match="float32"):
            tape.watch(np.float32(3.0))


def test_untrainable_variable_not_watched():
    v = tf.Variable(2.0, trainable=False)
    with tf.GradientTape() as tape:
        y = v * v
    assert tape.gradient(y, v) is None
    with tf.GradientTape() as tape:
        tape.watch(v)
        y = v * v
    assert float(tape.gradient(y, v)) == 4.0


def test_stop_recording():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x * x            # a constant for this tape
        z = y * x
    assert float(tape.gradient(z, x)) == 4.0   # y, not 3 x^2 = 12


def test_stop_recording_only_pauses_that_tape():
    x = tf.constant(2.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x * x
        assert inner.gradient(y, x) is None
    assert float(outer.gradient(y, x)) == 4.0


def test_reset():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        z = x * 3.0             # x is no longer watched after reset
        assert tape.gradient(z, x) is None
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        tape.watch(x)
        z = x * 3.0
    assert tape.gradient(y, x) is None   # recorded before the reset: forgotten
    assert float(tape.gradient(z, x)) == 3.0


def test_ops_outside_the_context_are_not_recorded():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    z = y * 5.0
    assert tape.gradient(z, x) is None


# -- unconnected gradients ------------------------------------------------------------------------

def test_unconnected_gradients_none_and_zero():
    x = tf.constant([1.0, 2.0])
    u = tf.constant([[3.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        y = tf.reduce_sum(x * x)
    assert tape.gradient(y, u) is None
    assert tape.gradient(y, u, unconnected_gradients=tf.UnconnectedGradients.NONE) is None
    z = tape.gradient(y, u, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert_close(z, np.zeros((1, 1), np.float32))
    z2 = tape.gradient(y, [x, u], unconnected_gradients="zero")
    assert_close(z2[0], np.array([2.0, 4.0], np.float32))
    assert_close(z2[1], np.zeros((1, 1), np.float32))


def test_integer_path_is_unconnected():
    x = tf.constant([1.5, 2.5])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.cast(tf.cast(x, tf.int32), tf.float32) * x
    # the path through the int cast is cut; the direct path remains
    assert_close(tape.gradient(y, x), np.array([1.0, 2.0], np.float32))


# -- targets, seeds and sources ------------------------------------------------------------------

def test_non_scalar_target_sums_like_tf():
    xv = np.array([0.3, -1.2, 2.0])
    x = c64(xv)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.sin(x) * x          # shape (3,)
        s = tf.reduce_sum(y)
    assert_close(tape.gradient(y, x), tape.gradient(s, x).numpy(), rtol=1e-14)
    assert_close(tape.gradient(y, x), np.cos(xv) * xv + np.sin(xv))


def test_list_and_dict_targets_sum():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a = x * x
        b = x * x * x
    assert float(tape.gradient([a, b], x)) == 4.0 + 12.0
    assert float(tape.gradient({"a": a, "b": [b]}, x)) == 16.0


def test_output_gradients_weight_the_targets():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = x * 3.0
    assert_close(tape.gradient(y, x, output_gradients=tf.constant([10.0, 100.0])),
                 np.array([20.0, 400.0], np.float32))
    g = tape.gradient([y, z], x, output_gradients=[tf.constant([1.0, 0.0]), tf.constant([0.0, 2.0])])
    assert_close(g, np.array([2.0, 6.0], np.float32))


def test_nested_list_and_dict_sources():
    a = tf.Variable(1.0)
    b = tf.constant([2.0, 3.0])
    c = tf.constant(4.0)
    with tf.GradientTape() as tape:
        tape.watch([b, c])
        y = a * tf.reduce_sum(b) * c
    g = tape.gradient(y, {"w": [a, (b,)], "c": c})
    assert set(g) == {"w", "c"}
    assert isinstance(g["w"], list) and isinstance(g["w"][1], tuple)
    assert float(g["w"][0]) == 20.0
    assert_close(g["w"][1][0], np.array([4.0, 4.0], np.float32))
    assert float(g["c"]) == 5.0


def test_gradient_with_respect_to_an_intermediate():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
        z = y * y
    gy, gx = tape.gradient(z, [y, x])
    assert float(gy) == 12.0 and float(gx) == 24.0


def test_same_source_twice():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, [x, x])
    assert float(g[0]) == 4.0 and float(g[1]) == 4.0


def test_variable_as_target_and_source():
    v = tf.Variable(5.0)
    with tf.GradientTape() as tape:
        _ = v * 1.0
    assert float(tape.gradient(v, v)) == 1.0


def test_gradient_of_integer_target_is_none_as_tf():
    x = tf.constant([1.5, 2.5])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.cast(x, tf.int32)
    assert tape.gradient(y, x) is None  # TF 2.21: None


@pytest.mark.parametrize("bad", [3.0, np.ones(2, np.float32), [1.0, 2.0], "x"])
def test_non_tensor_source_raises_type_error(bad):
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(TypeError, match="sources must be Tensors or Variables"):
        tape.gradient(y, bad if not isinstance(bad, list) else [x, bad])


def test_integer_source_has_no_gradient_as_tf():
    x = tf.constant(3.)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        z = tf.cast(x, tf.int32)
        y = tf.cast(z, tf.float32) * 2.0
    # TF 2.21: None, and zeros of the source's dtype when asked for zeros
    assert tape.gradient(y, z) is None
    g = tape.gradient(y, z, unconnected_gradients="zero")
    assert g.dtype == tf.int32 and int(g) == 0


def test_assign_after_read_does_not_change_the_recorded_value():
    v = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = v * v
        v.assign(100.0)
        z = y + 0.0
    assert float(y) == 9.0
    assert float(v) == 100.0
    assert float(tape.gradient(z, v)) == 6.0    # 2 * (value at the read), not 200


def test_assign_sub_in_a_training_loop():
    w = tf.Variable([1.0, -1.0])
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w)
        g = tape.gradient(loss, w)
        w.assign_sub(0.25 * g)
    assert_close(w, np.array([0.125, -0.125], np.float32))


def test_gradient_of_repeated_gather_accumulates():
    params = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with tf.GradientTape() as tape:
        rows = tf.gather(params, [2, 0, 2, 2])
        loss = tf.reduce_sum(rows)
    assert_close(tape.gradient(loss, params), np.array([[1, 1], [0, 0], [3, 3]], np.float32))
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x[tf.constant([0, 0, 1, 0])] * tf.constant([1.0, 2.0, 3.0, 4.0]))
    assert_close(tape.gradient(y, x), np.array([7.0, 3.0, 0.0], np.float32))


def test_gradient_of_gather_nd_and_scatter():
    p = tf.constant(np.arange(6, dtype=np.float64).reshape(2, 3))
    with tf.GradientTape() as tape:
        tape.watch(p)
        y = tf.reduce_sum(tf.gather_nd(p, [[0, 1], [1, 2], [0, 1]]) * c64([1.0, 2.0, 3.0]))
    assert_close(tape.gradient(y, p), np.array([[0, 4.0, 0], [0, 0, 2.0]]))


def test_gradient_through_boolean_mask_and_slices():
    xv = np.arange(6, dtype=np.float64).reshape(2, 3)
    x = c64(xv)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.boolean_mask(x, x > 2.5) ** 2) + tf.reduce_sum(x[:, ::-2] * 10.0)
    expected = np.where(xv > 2.5, 2 * xv, 0) + np.array([[10, 0, 10], [10, 0, 10]])
    assert_close(tape.gradient(y, x), expected)


def test_gradient_dtype_follows_source():
    x = c64([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.cast(x, tf.float32) ** 2)
    g = tape.gradient(y, x)
    assert g.dtype == tf.float64
    assert_close(g, np.array([2.0, 4.0]))


# -- jacobians ----------------------------------------------------------------------------------

def test_jacobian_against_finite_differences():
    rng = np.random.default_rng(0)
    xv = rng.uniform(-1, 1, (2, 3))
    W = rng.uniform(-1, 1, (3, 2))

    def fn(a):
        return np.tanh(a @ W) * np.sum(a)

    x = c64(xv)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.tanh(tf.matmul(x, c64(W))) * tf.reduce_sum(x)
    j = tape.jacobian(y, x)
    assert tuple(j.shape) == (2, 2, 2, 3)
    assert_close(j, numeric_jacobian(fn, xv), rtol=1e-7, atol=1e-9)


def test_jacobian_of_several_sources_and_unconnected():
    x = c64([1.0, 2.0])
    u = c64([[5.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        y = x * x
    jx, ju = tape.jacobian(y, [x, u])
    assert_close(jx, np.diag([2.0, 4.0]))
    assert ju is None
    jz = tape.jacobian(y, u, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert_close(jz, np.zeros((2, 1, 1)))


def test_batch_jacobian_against_finite_differences():
    rng = np.random.default_rng(1)
    xv = rng.uniform(-1, 1, (4, 3))
    W = rng.uniform(-1, 1, (3, 2))

    x = c64(xv)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.sin(tf.matmul(x, c64(W))) * x[:, :1]
    bj = np_of(tape.batch_jacobian(y, x))
    assert bj.shape == (4, 2, 3)
    for b in range(4):
        expected = numeric_jacobian(lambda r: np.sin(r @ W) * r[:1], xv[b])
        assert_close(bj[b], expected, rtol=1e-7, atol=1e-9)


# -- custom_gradient ------------------------------------------------------------------------------

@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # exp(100) overflows float32 on purpose
def test_custom_gradient_log1pexp_from_tf_docs():
    x = tf.constant(100.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    g = tape.gradient(y, x)
    assert np.isfinite(float(g)) and float(g) == 1.0
    # in float64 the value is finite too, and the gradient is still 1
    x64 = c64(100.0)
    with tf.GradientTape() as tape:
        tape.watch(x64)
        y64 = log1pexp(x64)
    assert abs(float(y64) - 100.0) < 1e-12
    assert float(tape.gradient(y64, x64)) == 1.0
    # without the custom gradient the same formula gives NaN: the test means something
    with tf.GradientTape() as tape:
        tape.watch(x)
        naive = tf.math.log(1 + tf.exp(x))
    assert np.isnan(float(tape.gradient(naive, x)))


def test_custom_gradient_without_tape_returns_plain_value():
    assert_close(log1pexp(c64(0.0)), np.float64(np.log(2.0)))


def test_custom_gradient_with_variables():
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def scaled(x):
        y = x * v

        def grad(up, variables=None):
            assert variables is not None and len(variables) == 1 and variables[0] is v
            return up * v * 10.0, [up * x * 100.0]
        return y, grad

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    gx, gv = tape.gradient(y, [x, v])
    assert float(y) == 6.0
    assert float(gx) == 20.0 and float(gv) == 300.0


def test_custom_gradient_reading_variables_needs_variables_kwarg():
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        return x * v, lambda up: up * v

    with tf.GradientTape() as tape:
        x = tf.constant(1.0)
        tape.watch(x)
        with pytest.raises(TypeError, match="variables"):
            f(x)


def test_custom_gradient_composes_with_higher_order():
    @tf.custom_gradient
    def cube(x):
        def grad(up):
            return up * 3.0 * x * x
        return x * x * x, grad

    x = tf.constant(2.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = cube(x)
        g = t1.gradient(y, x)
    assert float(g) == 12.0
    assert float(t2.gradient(g, x)) == 12.0
    check_grads(cube, (np.array([0.5, -1.5]),))


def test_custom_gradient_clip_gradient():
    @tf.custom_gradient
    def clip_grad(x):
        return tf.identity(x), lambda up: tf.clip_by_value(up, -1.0, 1.0)

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(clip_grad(x) * tf.constant([5.0, -0.5]))
    assert_close(tape.gradient(y, x), np.array([1.0, -0.5], np.float32))


def test_custom_gradient_multiple_inputs_and_outputs():
    @tf.custom_gradient
    def two(a, b):
        def grad(ga, gb):
            return ga * 2.0 + gb, ga + gb * 3.0
        return (a * 2.0 + b, a + b * 3.0), grad

    a, b = tf.constant(1.0), tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        p, q = two(a, b)
        y = p * 1.0 + q * 10.0
    ga, gb = tape.gradient(y, [a, b])
    assert float(ga) == 12.0 and float(gb) == 31.0


def test_custom_gradient_wrong_number_of_gradients():
    @tf.custom_gradient
    def f(a, b):
        return a * b, lambda up: up * b

    a, b = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = f(a, b)
    with pytest.raises(ValueError, match="1 gradients for 2"):
        tape.gradient(y, [a, b])


# -- grad / value_and_grad -----------------------------------------------------------------------

def test_grad_and_value_and_grad():
    g = tf.grad(lambda a: a * a * a)(tf.constant(2.0))
    assert float(g) == 12.0
    v, gs = tf.value_and_grad(lambda a, b: a * b * b, argnums=(0, 1))(tf.constant(3.0), tf.constant(4.0))
    assert float(v) == 48.0
    assert float(gs[0]) == 16.0 and float(gs[1]) == 24.0
    g1 = tf.grad(lambda a, b: a * b, argnums=1)(3.0, 4.0)   # Python floats are converted
    assert float(g1) == 3.0


def test_value_and_grad_has_aux_and_structures():
    def loss(p):
        return tf.reduce_sum(p["w"] ** 2) + p["b"], {"norm": tf.reduce_sum(p["w"])}

    params = {"w": tf.constant([1.0, 2.0]), "b": tf.constant(0.5)}
    (value, aux), grads = tf.value_and_grad(loss, has_aux=True)(params)
    assert float(value) == 5.5 and float(aux["norm"]) == 3.0
    assert_close(grads["w"], np.array([2.0, 4.0], np.float32))
    assert float(grads["b"]) == 1.0


def test_grad_unconnected_is_zero():
    g = tf.grad(lambda a, b: a * 2.0, argnums=(0, 1))(tf.constant(1.0), tf.constant(5.0))
    assert float(g[0]) == 2.0 and float(g[1]) == 0.0


def test_nested_grad_functions():
    d2 = tf.grad(lambda a: tf.grad(lambda b: b ** 3)(a))(tf.constant(2.0))
    assert float(d2) == 12.0


# -- tape context rules ----------------------------------------------------------------------------

def test_tape_cannot_be_entered_twice():
    tape = tf.GradientTape()
    with tape:
        with pytest.raises(RuntimeError, match="already recording"):
            tape.__enter__()


def test_tape_exit_on_exception_stops_recording():
    x = tf.constant(1.0)
    tape = tf.GradientTape()
    with pytest.raises(ZeroDivisionError):
        with tape:
            tape.watch(x)
            1 / 0
    from tapeflow.core.state import STATE
    assert tape not in STATE.tapes


def test_tapes_exited_out_of_order_leave_the_other_recording():
    # a with block pops the innermost tape; an explicit __exit__ of the outer one
    # first must remove just that tape, and the inner one keeps recording
    from tapeflow.core.state import STATE
    x = tf.constant(3.0)
    outer, inner = tf.GradientTape(), tf.GradientTape()
    outer.__enter__()
    inner.__enter__()
    outer.__exit__(None, None, None)
    assert STATE.tapes == (inner,)
    inner.watch(x)
    y = x * x
    inner.__exit__(None, None, None)
    assert STATE.tapes == ()
    assert inner.gradient(y, x).numpy() == np.float32(6.0)


_OPERATORS = {"matmul": lambda a, b: a @ b, "add": lambda a, b: a + b, "mul": lambda a, b: a * b,
              "sub": lambda a, b: a - b, "div": lambda a, b: a / b, "pow": lambda a, b: a ** b,
              "tf.maximum": tf.maximum, "tf.matmul": tf.matmul}


@pytest.mark.parametrize("op", sorted(_OPERATORS))
@pytest.mark.parametrize("side", ["left", "right"])
def test_python_list_operands_record_as_arrays(op, side):
    # TF's autodiff guide: `y = x @ w + b` with x = [[1., 2., 3.]], a Python list. The tape must
    # record the list's array (matmul's gradient transposed the list: AttributeError).
    fn = _OPERATORS[op]
    w_np = np.array([[1.5, 2.0], [0.5, 1.0]], np.float32)
    lst = [[1.0, 2.0], [3.0, 0.5]]
    grads = []
    for operand in (lst, np.array(lst, np.float32)):
        w = tf.Variable(w_np)
        with tf.GradientTape() as t:
            y = fn(operand, w) if side == "left" else fn(w, operand)
            loss = tf.reduce_sum(y * y)
        grads.append(t.gradient(loss, w).numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
