"""The numba native tier: integer reductions in the integer dtype, the kernel's
errors instead of made-up values (it declines what NumPy would reject), and a
fallback to the python backend, with one debug line, whenever numba fails."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.compiler.backends import numba_backend
from tapeflow.core import primitive as _prim
from tapeflow.core.aval import Aval
from tapeflow.core.primitive import REGISTRY, Primitive, bind

pytest.importorskip("numba")

F32, I64 = np.float32, np.int64
BIG = 2**53 + 1  # not a float64: a float accumulator rounds it to 2**53


@pytest.mark.parametrize("op,want", [(tf.reduce_max, BIG + 6), (tf.reduce_min, -BIG - 6),
                                     (tf.reduce_sum, 4 * BIG + 12)])
def test_integer_reductions_stay_exact_above_2_53(op, want):
    x = tf.constant(np.array([BIG, BIG + 6, BIG + 2, BIG + 4], I64) * (-1 if op is tf.reduce_min else 1))
    fn = tf.function(lambda x: op(x * 1 + 0), backend="numba")
    got = fn(x)
    assert fn.get_concrete_function(x).backend == "numba"
    assert got.dtype == tf.int64 and int(got.numpy()) == want == int(op(x).numpy())


def test_int32_reductions_keep_their_dtype_and_wrap_like_numpy():
    x = tf.constant(np.array([2**31 - 1, 5, -7], np.int32))
    for op in (tf.reduce_sum, tf.reduce_max, tf.reduce_min):
        fn = tf.function(lambda x: op(x + 0), backend="numba")
        got = fn(x)
        assert got.dtype == tf.int32
        assert int(got.numpy()) == int(op(x).numpy()), op


def _both_raise(f, *args):
    """Eager raises; compiled code raises the same error type whatever the backend
    choice (numba declines, the python backend runs the kernel), never a value."""
    with pytest.raises(Exception) as eager:
        f(*args)
    for backend in ("auto", "python"):
        with pytest.raises(Exception) as compiled:
            tf.function(f, backend=backend)(*args)
        assert compiled.type is eager.type, (backend, compiled.value, eager.value)


def _chain(x):
    # long enough for 'auto' to choose the native tier (and no identity simplify removes)
    for _ in range(3):
        x = x * 2 - x
    return x


def test_integer_power_with_a_negative_exponent_is_not_zero():
    x = tf.constant(np.array([1, 2, 3], np.int32))
    with pytest.raises(NotImplementedError, match="pow"):
        numba_backend.try_compile(tf.function(lambda x: _chain(x) ** -1, backend="python")
                                  .get_concrete_function(x).graph, "p", required=True)
    _both_raise(lambda x: _chain(x) ** -1, x)
    # a literal exponent >= 0 stays native and exact
    fn = tf.function(lambda x: _chain(x) ** 3, backend="numba")
    np.testing.assert_array_equal(fn(x).numpy(), [1, 8, 27])


def test_out_of_range_integer_constant_is_not_wrapped():
    x = tf.constant(np.array([1, 2, 3], np.int32))
    g = tf.function(lambda x: _chain(x) + 2**40, backend="interpreter").get_concrete_function(x).graph
    with pytest.raises(NotImplementedError, match="out of range"):
        numba_backend.try_compile(g, "c", required=True)
    _both_raise(lambda x: _chain(x) + 2**40, x)


@pytest.mark.parametrize("op", [tf.reduce_max, tf.reduce_min])
def test_extremum_of_an_empty_tensor_is_tfs_identity_in_every_mode(op):
    # TF returns the identity (-inf for max, +inf for min); the native tier
    # declines empty extrema and the kernel gives the identity
    x = tf.constant(np.zeros((0,), F32))
    g = tf.function(lambda x: op(_chain(x)), backend="interpreter").get_concrete_function(x).graph
    with pytest.raises(NotImplementedError, match="empty"):
        numba_backend.try_compile(g, "e", required=True)
    want = -np.inf if op is tf.reduce_max else np.inf
    assert float(op(_chain(x))) == want
    assert float(tf.function(lambda x: op(_chain(x)))(x)) == want
    # an empty sum is 0 natively as in NumPy
    fn = tf.function(lambda x: tf.reduce_sum(_chain(x)), backend="numba")
    assert float(fn(x).numpy()) == 0.0


@pytest.mark.parametrize("src,dst", [((), (1,)), ((1,), ()), ((1,), (1,))])
def test_reshapes_between_scalar_and_one_element_compile_natively(src, dst):
    def f(x):
        y = tf.reshape(tf.exp(x) * 2.0 + 1.0, dst)
        return tf.tanh(y * 0.5) + y, tf.reduce_sum(y * y)

    x = tf.constant(np.full(src, 0.25, F32))
    fn = tf.function(f, backend="numba")
    got = fn(x)
    assert fn.get_concrete_function(x).backend == "numba"
    for g, w in zip(got, f(x)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


@pytest.fixture
def untypable():
    """An elementwise primitive whose numba form numba cannot type (a TypingError)."""
    p = Primitive("test_untypable", lambda x: x + 1, lambda x: Aval(x.shape, x.dtype), differentiable=False,
                  fusion="elementwise", aliases=False, lowerings={"numba": "({0}[0])"})  # a scalar indexed
    yield p
    REGISTRY.pop(p.name, None)
    _prim.NON_DIFFERENTIABLE.discard(p.name)


@pytest.mark.parametrize("backend", ["auto", "numba"])
def test_a_numba_compile_failure_falls_back_to_python_with_one_debug_line(untypable, backend, caplog):
    def f(x):
        return bind(untypable, _chain(x) * 2.0) + 1.0

    x = tf.constant(np.array([1.0, 2.0], F32))
    with caplog.at_level(logging.DEBUG, logger="tapeflow"):
        fn = tf.function(f, backend=backend)
        got = fn(x)
    np.testing.assert_array_equal(got.numpy(), f(x).numpy())
    assert fn.get_concrete_function(x).backend == "python"
    lines = [r for r in caplog.records if r.name == "tapeflow" and "numba" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.DEBUG
    assert "could not compile" in lines[0].getMessage() and "TypingError" in lines[0].getMessage()


def test_a_failure_at_call_time_falls_back_too(caplog):
    """Numba compiles lazily for argument types it has not seen (read-only arrays...):
    a failure then also runs the python backend from that call on, logged once."""
    from numba.core.errors import TypingError

    class FailingKernel:  # a dispatcher that compiled the planned types but fails at a call
        def compile(self, sig):
            pass

        def __call__(self, *args):
            raise TypingError("cannot type the arguments")

    graph = tf.function(lambda x: _chain(x) * 2.0, backend="interpreter").get_concrete_function(
        tf.constant(np.ones(3, F32))).graph
    run = numba_backend._make_wrapper(FailingKernel(), graph, {"variables": [], "consts": [], "out_params": [None]}, "", "late")
    x = np.array([1.0, 2.0, 3.0], F32)
    with caplog.at_level(logging.DEBUG, logger="tapeflow"):
        for _ in range(2):
            np.testing.assert_array_equal(run(x)[0], x * 2.0)
    lines = [r for r in caplog.records if r.name == "tapeflow"]
    assert len(lines) == 1 and "call time" in lines[0].getMessage()
