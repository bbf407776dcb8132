"""tf.debugging.enable_check_numerics: the first op whose float output holds a NaN or an Inf raises
InvalidArgumentError with TF 2.21's text, eagerly, inside tapeflow.function, in gradients and in
optimizer updates (tapeflow/numerics_checker.py)."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.state import STATE


@pytest.fixture(autouse=True)
def _checking():
    tf.debugging.enable_check_numerics()
    try:
        yield
    finally:
        tf.debugging.disable_check_numerics()
    assert STATE.profiler is None


def _err(fn):
    with pytest.raises(tf.errors.InvalidArgumentError) as ei:
        fn()
    return str(ei.value)


def test_eager_op_message_is_tfs():
    x = tf.constant([0.0, 1.0])
    # TF 2.21 (op "Log"; tapeflow names its primitive):
    assert _err(lambda: tf.math.log(x)) == (
        "\n\n!!! Detected Infinity or NaN in output 0 of eagerly-executing op \"log\" (# of outputs: 1) !!!\n"
        "  dtype: <dtype: 'float32'>\n"
        "  shape: (2,)\n"
        "  # of -Inf elements: 1\n"
        "\n"
        "  Input tensor: tf.Tensor([0. 1.], shape=(2,), dtype=float32)\n"
        "\n"
        " : Tensor had -Inf values")


def test_counts_kinds_and_inputs():
    # TF 2.21: "# of -Inf elements: 1 / # of +Inf elements: 1 / # of +NaN elements: 1",
    # "Tensor had -Inf, +Inf, and NaN values", the two inputs listed with their slots
    m = _err(lambda: tf.constant([-np.inf, np.inf, np.nan, 1.0]) * 2.0)
    assert "op \"mul\" (# of outputs: 1)" in m
    assert "  # of -Inf elements: 1\n  # of +Inf elements: 1\n  # of +NaN elements: 1\n" in m
    assert "  Input tensors (2):\n         0: tf.Tensor([-inf  inf  nan   1.], shape=(4,), dtype=float32)\n" \
           "         1: tf.Tensor(2.0, shape=(), dtype=float32)\n" in m
    assert m.endswith(" : Tensor had -Inf, +Inf, and NaN values")
    # TF 2.21: "Tensor had -Inf and +Inf values"; a Python scalar shown as the tensor it became
    assert _err(lambda: tf.constant([-np.inf, np.inf]) * 2.0).endswith("Tensor had -Inf and +Inf values")
    m = _err(lambda: tf.math.log(0.0))
    assert "Input tensor: tf.Tensor(0.0, shape=(), dtype=float32)" in m and m.endswith("Tensor had -Inf values")
    m = _err(lambda: tf.sqrt(tf.constant([-1.0, -2.0])))
    assert "  # of +NaN elements: 2\n" in m and m.endswith("Tensor had NaN values")
    # float16 overflow and float64 are checked too (TF 2.21: "+Inf values", dtype float16)
    m = _err(lambda: tf.constant([60000.0], tf.float16) * 2.0)
    assert "dtype: <dtype: 'float16'>" in m
    assert "dtype: <dtype: 'float64'>" in _err(lambda: tf.math.log(tf.constant([0.0], tf.float64)))


def test_finite_and_integer_results_pass():
    x = tf.constant([0.0, 1.0])
    np.testing.assert_allclose(tf.exp(x).numpy(), np.exp([0.0, 1.0]), rtol=1e-6)
    assert int(tf.constant(7) // 2) == 3
    assert tf.reduce_sum(tf.constant([1, 2])).numpy() == 3


def test_variables_read_checked_writes_not():
    v = tf.Variable([1.0])
    v.assign([np.nan])      # TF 2.21: AssignVariableOp has no output: no error here
    m = _err(lambda: v.read_value())
    assert 'eagerly-executing op "read_variable"' in m and m.endswith("Tensor had NaN values")


def test_compiled_function_names_graph_and_line():
    @tf.function
    def f(y):
        return tf.math.log(y) * 2.0
    m = _err(lambda: f(tf.constant([0.0, 1.0])))
    # TF 2.21: 'graph op "Log"', then 'Graph name: "f"' (tapeflow also counts and shows the values)
    assert 'in output 0 of graph op "log" (# of outputs: 1)' in m
    assert 'Graph name: "f"' in m and "Traced from:" in m and "test_check_numerics.py" in m
    assert "Input tensor: tf.Tensor([0. 1.], shape=(2,), dtype=float32)" in m
    assert f(tf.constant([1.0, 2.0])).numpy().tolist() == pytest.approx([0.0, 2 * np.log(2.0)])


def test_compiled_hot_and_control_flow_bodies():
    @tf.function
    def g(y):
        return tf.cond(y[0] < 1.0, lambda: tf.sqrt(y - 1.0), lambda: y)
    tf.debugging.disable_check_numerics()
    for _ in range(200):       # past the fused tier's tier-up, unchecked: NaN comes out silently
        out = g(tf.constant([0.0, 2.0]))
    assert np.isnan(out.numpy()[0])
    tf.debugging.enable_check_numerics()
    m = _err(lambda: g(tf.constant([0.0, 2.0])))
    assert 'graph op "sqrt"' in m and 'Graph name: "g"' in m


def test_gradients_are_checked():
    v = tf.Variable(0.0)
    with tf.GradientTape() as t:
        y = tf.sqrt(v)
    # TF 2.21: 'eagerly-executing op "SqrtGrad"', "+Inf values" (d sqrt(v)/dv at 0)
    m = _err(lambda: t.gradient(y, v))
    assert "eagerly-executing op" in m and m.endswith("Tensor had +Inf values")


def test_optimizer_update_is_checked():
    v = tf.Variable([1.0])
    opt = tf.keras.optimizers.SGD(1.0)
    m = _err(lambda: opt.apply_gradients([(tf.constant([np.inf]), v)]))
    assert "Tensor had" in m
    assert v.numpy().tolist() == [1.0]


def test_keras_fit_on_nan_data_raises():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.array([[1.0, np.nan]], np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Detected Infinity or NaN"):
        model.fit(x, np.ones((1, 1), np.float32), verbose=0)


def test_enable_is_idempotent_disable_restores_and_profile_refuses():
    tf.debugging.enable_check_numerics()
    tf.debugging.disable_check_numerics()
    assert float(tf.math.log(tf.constant(0.0))) == -np.inf     # unchecked again
    tf.debugging.disable_check_numerics()                      # (a no-op)
    tf.debugging.enable_check_numerics()
    with pytest.raises(RuntimeError, match="enable_check_numerics"):
        with tf.profile():
            pass
    tf.debugging.disable_check_numerics()
    with tf.profile():
        with pytest.raises(RuntimeError, match="a tapeflow.profile is active"):
            tf.debugging.enable_check_numerics()


def test_untaken_branch_reading_a_nan_variable_passes_in_every_mode():
    # TF 2.21: the read runs inside the branch, so a NaN "no value yet" on the branch not taken
    # raises nothing (tapeflow's tracer hoists the read out of the cond: graph reads are unchecked)
    v = tf.Variable(np.float32(np.nan))

    def f(p):
        return tf.cond(p, lambda: v.read_value(), lambda: tf.constant(0.0))
    g = tf.function(f)
    assert float(f(tf.constant(False))) == 0.0
    assert float(g(tf.constant(False))) == 0.0
    m = _err(lambda: g(tf.constant(True)))    # the NaN leaves the cond: raised there
    assert 'graph op "cond"' in m and m.endswith("Tensor had NaN values")
    assert 'op "read_variable"' in _err(lambda: f(tf.constant(True)))
