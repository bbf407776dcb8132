"""tf.debugging's assertions, check_numerics and tf.ensure_shape (tapeflow/ops/check_ops.py)
against TF 2.21's outcomes, eagerly and compiled. Value checks must raise at call time on
the values (TF's Assert op), in every backend, and never at trace time."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import errors

MODES = ["eager", "python", "numba", "fused"]
X = np.array([1., 2., 3.], np.float32)
Y = np.array([1., 2., 4.], np.float32)


def run(mode, fn, *args, monkeypatch=None):
    ts = [tf.constant(a) for a in args]
    if mode == "eager":
        return fn(*ts)
    if mode == "fused":
        monkeypatch.setenv("TAPEFLOW_FUSE_AFTER", "1")
        return tf.function(fn, backend="python")(*ts)
    try:
        return tf.function(fn, backend=mode)(*ts)
    except NotImplementedError as e:   # the native backend declines graphs holding an opaque op:
        if not str(e).startswith("numba backend:"):   # its clean fallback is the python backend
            raise
        return tf.function(fn, backend="python")(*ts)


def _then(check):
    """A function that runs ``check`` and returns x + 1 (so compiled code has an output)."""
    def f(*a):
        check(*a)
        return a[0] + 1
    return f


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check,ok,bad,needle", [
    # TF 2.21: InvalidArgumentError "Condition x == y did not hold" (eagerly: with the values)
    (tf.debugging.assert_equal, (X, X), (X, Y), "condition x == y did not hold element-wise"),
    (tf.debugging.assert_none_equal, (X, Y + 5), (X, Y), "condition x != y"),
    (tf.debugging.assert_less, (X, Y + 1), (X, Y), "condition x < y"),
    (tf.debugging.assert_less_equal, (X, Y), (Y, X), "condition x <= y"),
    (tf.debugging.assert_greater, (Y + 1, X), (X, Y), "condition x > y"),
    (tf.debugging.assert_greater_equal, (Y, X), (X, Y), "condition x >= y"),
    (tf.debugging.assert_positive, (X,), (np.array([1., 0.], np.float32),), "condition x > 0"),
    (tf.debugging.assert_non_negative, (np.array([1, 0], np.int32),), (np.array([1, -2, 3], np.int32),),
     "condition x >= 0"),
    (tf.debugging.assert_negative, (-X,), (X,), "condition x < 0"),
    (tf.debugging.assert_non_positive, (-X,), (X,), "condition x <= 0")])
def test_value_assertions(mode, check, ok, bad, needle, monkeypatch):
    f = _then(check)
    np.testing.assert_array_equal(run(mode, f, *ok, monkeypatch=monkeypatch).numpy(), ok[0] + 1)
    with pytest.raises(errors.InvalidArgumentError, match=needle):
        run(mode, f, *bad, monkeypatch=monkeypatch)


def test_assertion_message_shows_the_values_and_the_users_message():
    with pytest.raises(errors.InvalidArgumentError) as e:
        tf.debugging.assert_equal(tf.constant(X), tf.constant(Y), message="custom msg")
    text = str(e.value)
    assert text.startswith("custom msg\nassert_equal: condition x == y did not hold element-wise:")
    assert "x (shape=(3,) dtype=float32) = [1 2 3]" in text and "y (shape=(3,) dtype=float32) = [1 2 4]" in text


def test_compiled_assertions_check_every_call_not_the_trace():
    f = tf.function(lambda x: (tf.debugging.assert_positive(x), x * 2.)[1])
    np.testing.assert_array_equal(f(tf.constant(X)).numpy(), X * 2)
    with pytest.raises(errors.InvalidArgumentError, match="condition x > 0"):
        f(tf.constant(-X))                                 # the same trace, other values
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_array_equal(f(tf.constant(X)).numpy(), X * 2)
    # unused by the outputs, the assert still runs (effect "io": dead-code elimination keeps it)
    g = tf.function(lambda x: (tf.debugging.assert_positive(x), tf.constant(0.))[1])
    assert "assert" in [e.prim.name for e in g.get_concrete_function(tf.constant(X)).graph.eqns]
    with pytest.raises(errors.InvalidArgumentError):
        g(tf.constant(-X))


def test_assertions_return_none_and_pass_on_empty_and_broadcast():
    assert tf.debugging.assert_equal(tf.constant(X), tf.constant(X)) is None                    # TF 2.21: None
    assert tf.debugging.assert_positive(tf.constant([], tf.float32)) is None                     # TF 2.21: None
    tf.debugging.assert_equal(tf.constant([1., 1.]), 1.)
    with pytest.raises(errors.InvalidArgumentError):                                            # TF 2.21
        tf.debugging.assert_equal(tf.constant(X), 1.)
    with pytest.raises(errors.InvalidArgumentError):        # TF 2.21: "Incompatible shapes: [3] vs. [2]"
        tf.debugging.assert_equal(tf.constant(X), tf.constant([1., 2.]))
    with pytest.raises(errors.InvalidArgumentError):        # TF 2.21: InvalidArgumentError (float vs int)
        tf.debugging.assert_equal(tf.constant(X), tf.constant([1, 2, 3]))


@pytest.mark.parametrize("mode", ["eager", "python"])
def test_static_assertions(mode, monkeypatch):
    tf.debugging.assert_rank(tf.constant(X), 1)
    with pytest.raises(ValueError, match="must have rank 2.  Received rank 1, shape"):        # TF 2.21: ValueError
        run(mode, _then(lambda x: tf.debugging.assert_rank(x, 2)), X, monkeypatch=monkeypatch)
    ones32 = np.ones((3, 2), np.float32)
    run(mode, _then(lambda x, y: tf.debugging.assert_shapes([(x, ("N",)), (y, ("N", "D"))])), X, ones32,
        monkeypatch=monkeypatch)
    run(mode, _then(lambda y: tf.debugging.assert_shapes([(y, (3, 2))])), ones32, monkeypatch=monkeypatch)
    with pytest.raises(ValueError, match="must have size 3"):                                   # TF 2.21: ValueError
        run(mode, _then(lambda x, y: tf.debugging.assert_shapes([(x, ("N",)), (y, ("N", "D"))])), X,
            np.ones((2, 2), np.float32), monkeypatch=monkeypatch)
    with pytest.raises(ValueError, match="must have size 5"):
        run(mode, _then(lambda y: tf.debugging.assert_shapes([(y, (3, 5))])), ones32, monkeypatch=monkeypatch)
    with pytest.raises(ValueError, match="must have rank 2"):
        run(mode, _then(lambda x: tf.debugging.assert_shapes([(x, ("N", "D"))])), X, monkeypatch=monkeypatch)


@pytest.mark.parametrize("mode", MODES)
def test_check_numerics(mode, monkeypatch):
    f = lambda x: tf.debugging.check_numerics(x, "my message") * 2.   # noqa: E731
    np.testing.assert_array_equal(run(mode, f, X, monkeypatch=monkeypatch).numpy(), X * 2)
    # TF 2.21's texts: "my message : Tensor had NaN values" / "Inf values" / "Inf and NaN values"
    for bad, what in [([1., np.nan], "NaN"), ([1., np.inf], "Inf"), ([-np.inf, np.nan], "Inf and NaN")]:
        with pytest.raises(errors.InvalidArgumentError, match=f"my message : Tensor had {what} values"):
            run(mode, f, np.array(bad, np.float32), monkeypatch=monkeypatch)
    with pytest.raises(errors.InvalidArgumentError, match="floating-point"):   # TF 2.21: InvalidArgumentError
        run(mode, f, np.array([1, 2], np.int32), monkeypatch=monkeypatch)


def test_check_numerics_passes_gradients_through():
    x = tf.constant(X)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(tf.debugging.check_numerics(x * x, "m"))
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), 2 * X)


@pytest.mark.parametrize("mode", MODES)
def test_Assert(mode, monkeypatch):
    f = _then(lambda x: tf.debugging.Assert(tf.reduce_all(x > 0.), [x, "text"]))
    run(mode, f, X, monkeypatch=monkeypatch)
    with pytest.raises(errors.InvalidArgumentError, match=r"assertion failed: \[-1 -2 -3\] \[text\]"):
        run(mode, f, -X, monkeypatch=monkeypatch)
    assert tf.Assert is tf.debugging.Assert


@pytest.mark.parametrize("mode", MODES)
def test_ensure_shape(mode, monkeypatch):
    np.testing.assert_array_equal(run(mode, lambda x: tf.ensure_shape(x, [3]), X, monkeypatch=monkeypatch), X)
    np.testing.assert_array_equal(run(mode, lambda x: tf.ensure_shape(x, [None]), X, monkeypatch=monkeypatch), X)
    # TF 2.21: "Shape of tensor input [3] is not compatible with expected shape [4]." (InvalidArgumentError)
    for shape in ([4], [3, 1]):
        with pytest.raises(errors.InvalidArgumentError, match="not compatible with expected shape"):
            run(mode, lambda x: tf.ensure_shape(x, shape), X, monkeypatch=monkeypatch)


def test_ensure_shape_checks_unknown_dims_at_run_time_and_refines_the_static_shape():
    f = tf.function(lambda a: tf.ensure_shape(a, [3]) * 2., input_signature=[tf.TensorSpec([None], tf.float32)])
    assert "f32[3] = ensure_shape" in str(f.get_concrete_function().graph)
    np.testing.assert_array_equal(f(tf.constant(X)).numpy(), X * 2)
    with pytest.raises(errors.InvalidArgumentError, match=r"input \[2\] is not compatible with expected shape \[3\]"):
        f(tf.constant([1., 2.]))                    # TF 2.21: InvalidArgumentError at run time


def test_namespaces():
    for name in ("assert_equal", "assert_less", "assert_greater", "assert_rank", "Assert"):
        assert getattr(tf, name) is getattr(tf.debugging, name)
    assert callable(tf.ensure_shape) and callable(tf.debugging.check_numerics)


def test_checks_inside_loops_and_branches_run_when_their_code_runs():
    f = tf.function(lambda x: tf.map_fn(lambda r: (tf.debugging.assert_positive(r), r * 2.)[1], x))
    np.testing.assert_array_equal(f(tf.constant([[1., 2.]])).numpy(), [[2., 4.]])
    with pytest.raises(errors.InvalidArgumentError, match="condition x > 0"):
        f(tf.constant([[1., -2.]]))                     # in the scan's body, on the second row's values
    h = tf.function(lambda k, x: tf.switch_case(k, [lambda: tf.debugging.check_numerics(x, "a"), lambda: x * 0.]))
    assert np.isnan(h(tf.constant(1), tf.constant([np.nan])).numpy()).all()   # the branch not taken: no check
    with pytest.raises(errors.InvalidArgumentError, match="a : Tensor had NaN values"):
        h(tf.constant(0), tf.constant([np.nan]))

    def g(x):   # a gradient re-runs the loop body without its checks (they ran in the forward pass)
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.map_fn(lambda r: tf.debugging.check_numerics(r * r, "m"), x))
        return t.gradient(y, x)
    np.testing.assert_array_equal(tf.function(g)(tf.constant([[1., 2.]])).numpy(), [[2., 4.]])
