"""The compiled-call fast path (Function.__call__) and the NumPy-array conversions:
every call it serves must give what the general path gives -- same traces (retracing
rules), same results, same errors -- for NumPy arrays as for Tensors."""
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.compiler import function as F

F32 = np.float32


def _hot(f, *args, n=None):
    """Call ``f`` until its trace for ``args`` is past its tier-up (so the fast path
    runs the compiled code itself); returns the last result."""
    out = f(*args)
    cf = f._fast[tuple(x for a in args for x in (np.asarray(a).shape, np.asarray(a).dtype))]
    for _ in range(n if n is not None else max(cf.fuse_at, 1) + 1):
        out = f(*args)
    assert cf.hot
    return out


def test_numpy_and_tensor_arguments_share_a_trace_and_agree_hot_and_cold():
    w = tf.Variable(np.arange(12, dtype=F32).reshape(4, 3) / 10)

    @tf.function
    def f(x):
        return tf.nn.relu(x @ w + 1.0)

    x = np.linspace(-3, 3, 8, dtype=F32).reshape(2, 4)
    want = np.maximum(x @ w.numpy() + 1, 0)
    np.testing.assert_allclose(f(x).numpy(), want, rtol=1e-6)       # traces
    np.testing.assert_allclose(f(tf.constant(x)).numpy(), want, rtol=1e-6)
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(_hot(f, x).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(f(tf.constant(x)).numpy(), want, rtol=1e-6)
    w.assign(w * 2.0)  # the fast path reads the variable's current value
    np.testing.assert_allclose(f(x).numpy(), np.maximum(x @ w.numpy() + 1, 0), rtol=1e-6)
    assert f.experimental_get_tracing_count() == 1


def test_numpy_arguments_retrace_on_new_shapes_and_dtypes_as_tensors_do():
    @tf.function
    def f(x):
        return x * 2

    a = np.ones((2, 3), F32)
    _hot(f, a)
    assert f.experimental_get_tracing_count() == 1
    r = f(np.ones((3, 2), F32))  # new shape: a new trace, the right shape
    assert r.shape == (3, 2) and f.experimental_get_tracing_count() == 2
    r = f(np.ones((2, 3), np.float64))  # new dtype: a new trace, the dtype kept (no cast)
    assert r.dtype == tf.float64 and f.experimental_get_tracing_count() == 3
    r = f(np.ones((2, 3), np.int32))
    assert r.dtype == tf.int32 and r.numpy().tolist() == [[2] * 3] * 2
    assert f.experimental_get_tracing_count() == 4
    for x in (a, tf.constant(np.ones((3, 2), F32)), np.ones((2, 3), np.float64)):
        f(x)
    assert f.experimental_get_tracing_count() == 4
    assert f.retrace_reasons[0] == ["x: Tensor(shape=(2, 3), dtype=float32) -> Tensor(shape=(3, 2), dtype=float32)"]


def test_several_arguments_mixed_numpy_and_tensor():
    @tf.function
    def f(x, y, z):
        return x + y * z

    x, y, z = (np.full((2,), v, F32) for v in (1, 2, 3))
    _hot(f, x, y, z)
    for args in [(x, y, z), (tf.constant(x), y, z), (x, tf.constant(y), tf.constant(z))]:
        assert f(*args).numpy().tolist() == [7.0, 7.0]
    assert f.experimental_get_tracing_count() == 1
    # one argument of another kind (a Python number) is part of the key: its own trace
    assert f(x, y, 3.0).numpy().tolist() == [7.0, 7.0]
    assert f.experimental_get_tracing_count() == 2


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning", "ignore::tapeflow.RetracingWarning")
def test_variables_scalars_nested_and_keyword_arguments_still_work_beside_the_fast_path():
    @tf.function
    def f(x, y=None):
        if y is None:
            return x + 1.0
        return x + y[0] * y[1]

    x = np.ones((2,), F32)
    _hot(f, x)
    v = tf.Variable(np.full((2,), 5.0, F32))
    assert f(v).numpy().tolist() == [6.0, 6.0]
    v.assign(np.full((2,), 7.0, F32))
    assert f(v).numpy().tolist() == [8.0, 8.0]  # the variable's current value
    assert f(x, [x, tf.constant(np.full((2,), 3.0, F32))]).numpy().tolist() == [4.0, 4.0]
    assert f(x=x).numpy().tolist() == [2.0, 2.0]
    assert f(np.float32(2.0)).numpy() == 3.0  # a NumPy scalar, not an array
    assert f(np.matrix([[1.0, 2.0]], F32)).numpy().tolist() == [[2.0, 3.0]]


def test_input_signature_calls_are_checked_once_per_shape_and_still_reject():
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def f(x):
        return x * 2.0

    x = np.ones((3, 2), F32)
    _hot(f, x)
    assert f(np.ones((5, 2), F32)).shape == (5, 2)
    assert f(tf.constant(np.ones((1, 2), F32))).numpy().tolist() == [[2.0, 2.0]]
    assert f.experimental_get_tracing_count() == 1
    for bad in (np.ones((3, 2), np.float64), np.ones((3, 3), F32), np.ones((3,), F32)):
        for _ in range(2):  # a rejected call is never cached: the second is rejected too
            with pytest.raises(TypeError, match="contradicts input_signature"):
                f(bad)
    with pytest.raises(TypeError, match="input_signature has 1 entries, got 2"):
        f(x, x)


def test_hot_runtime_errors_name_the_op_as_cold_ones_do():
    @tf.function
    def f(i):
        return tf.gather(tf.constant([1.0, 2.0]), i)

    ok = np.array([1], np.int32)
    bad = np.array([5], np.int32)  # same shape and dtype: the fast path's own call
    with pytest.raises(IndexError) as cold:
        f(bad)
    assert _hot(f, ok).numpy().tolist() == [2.0]
    with pytest.raises(IndexError) as hot:
        f(bad)
    assert str(hot.value) == str(cold.value) and "in compiled function 'f'" in str(hot.value)


def test_hot_structured_outputs_and_python_values():
    @tf.function
    def f(x):
        return {"y": x + 1.0, "n": 3, "pair": (x, x * 2.0)}

    x = np.ones(2, F32)
    out = _hot(f, x)
    assert out["y"].numpy().tolist() == [2.0, 2.0]
    assert out["n"].numpy() == 3 and out["pair"][1].numpy().tolist() == [2.0, 2.0]
    assert isinstance(out["pair"][0], tf.Tensor)


def test_under_a_tape_and_eagerly_the_hot_fast_path_steps_aside():
    @tf.function
    def f(x):
        return tf.reduce_sum(x * x)

    x = tf.constant(np.array([1.0, 2.0], F32))
    _hot(f, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "called inside a GradientTape: it runs eagerly"
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 4.0]
    calls = []
    F.RUN_EAGERLY[0] = True
    try:
        @tf.function
        def g(x):
            calls.append(1)
            return x
        g(x), g(x)
    finally:
        F.RUN_EAGERLY[0] = False
    assert len(calls) == 2


def test_the_profiler_times_hot_calls():
    @tf.function
    def f(x):
        return x + 1.0

    x = np.ones(4, F32)
    _hot(f, x)
    with tf.profile() as prof:
        for _ in range(3):
            f(x)
    assert prof.compiled["f"][0] == 3


def test_constant_of_numpy_arrays_keeps_dtype_and_rejects_what_it_rejected():
    for dt in (np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.bool_):
        a = np.zeros((2, 2), dt)
        t = tf.constant(a)
        assert t.numpy().dtype == dt and tf.convert_to_tensor(a).numpy().dtype == dt
    assert tf.constant(np.zeros(2, np.complex64)).dtype == tf.complex64   # (complex dtypes: wave 21)
    with pytest.raises(TypeError, match="dtype timedelta64.* is not supported"):
        tf.constant(np.zeros(2, "timedelta64[s]"))
    assert tf.constant(np.array(["a", "b"])).numpy().tolist() == [b"a", b"b"]   # tf.string (wave 19)
    with pytest.raises(TypeError, match="cannot make a tensor"):
        tf.constant(np.array([object()]))
    assert tf.constant(np.arange(3, dtype=np.int64), dtype=tf.float32).dtype == tf.float32
    assert tf.constant(np.ones(4, F32), shape=(2, 2)).shape == (2, 2)


# -- eager operators: a Tensor operator is its primitive's bind2 (bind's two-operand path) --

def _outcome(fn):
    try:
        r = fn()
    except Exception as e:
        return type(e), str(e)
    return r.numpy().dtype, r.numpy().tolist()


@pytest.mark.parametrize("first", [False, True])  # a new signature (eager_apply), then a cached one
def test_operators_agree_with_bind_on_values_dtypes_and_errors(first):
    from tapeflow.core.primitive import bind
    from tapeflow.core.primitives import elementwise as E
    from tapeflow.core.primitives import linalg as L
    x = tf.constant(np.array([[1.0, -2.0]], F32))
    y = tf.constant(np.array([[3.0], [4.0]], F32))
    i = tf.constant(np.array([7, -3], np.int32))
    b = tf.constant(np.array([True, False]))
    d = tf.constant(np.array([1.0, 2.0], np.float64))
    v = tf.Variable(np.array([[0.5, 0.25]], F32))
    cases = [
        (lambda: x + y, E.add_p, (x, y)), (lambda: 2.0 - x, E.sub_p, (2.0, x)),
        (lambda: x * 3, E.mul_p, (x, 3)), (lambda: 1 / x, E.div_p, (1, x)),
        (lambda: i // 2, E.floordiv_p, (i, 2)), (lambda: 7 % i, E.mod_p, (7, i)),
        (lambda: x @ y, L.matmul_p, (x, y)), (lambda: v @ y, L.matmul_p, (v, y)),
        (lambda: x + v, E.add_p, (x, v)), (lambda: b & b, E.logical_and_p, (b, b)),
        (lambda: x < 0.0, E.less_p, (x, 0.0)), (lambda: x ** 2.0, E.pow_p, (x, 2.0)),
        # errors: TF's dtype rules, shapes, operand kinds
        (lambda: x + d, E.add_p, (x, d)), (lambda: b + b, E.add_p, (b, b)),
        (lambda: x + i, E.add_p, (x, i)), (lambda: x @ x, L.matmul_p, (x, x)),
        (lambda: i + 2.5, E.add_p, (i, 2.5)),
    ]
    for op, p, args in cases:
        if not first:
            _outcome(op)
        want = _outcome(lambda: bind(p, *args))
        assert _outcome(op) == want, (p, args)
    with pytest.raises(TypeError):
        pow(x, 2.0, 3)


def test_operator_results_are_recorded_by_tapes_and_counted_by_the_profiler():
    x = tf.constant(np.array([1.0, 2.0], F32))
    w = tf.Variable(np.array([3.0, 4.0], F32))
    for _ in range(2):  # the second time every signature is cached
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum((x * w + 1.0) / 2.0 - x ** 2.0)
        gx, gw = tape.gradient(y, [x, w])
        assert gx.numpy().tolist() == [-0.5, -2.0] and gw.numpy().tolist() == [0.5, 1.0]
    with tf.profile() as prof:
        x + x, 2.0 * x, tf.reshape(x, (1, 2)) @ tf.reshape(x, (2, 1))
    assert prof.ops["add"].calls == 1 and prof.ops["mul"].calls == 1 and prof.ops["matmul"].calls == 1


def test_operators_on_symbolic_tensors_trace():
    @tf.function
    def f(x, y):
        return (x + y) * 2.0 - 1.0 / y

    x = np.array([1.0, 2.0], F32)
    y = np.array([4.0, 8.0], F32)
    np.testing.assert_allclose(f(x, y).numpy(), (x + y) * 2 - 1 / y, rtol=1e-6)
    assert [e.prim.name for e in f.get_concrete_function(x, y).raw_graph.eqns] == ["add", "mul", "div", "sub"]


def test_variable_subclass_operands_are_read_at_the_op_and_differentiated():
    class MyVariable(tf.Variable):  # as Keras' variables are
        __slots__ = ()

    w = MyVariable(np.array([[2.0], [3.0]], F32))
    bias = MyVariable(np.array([1.0], F32))
    x = tf.constant(np.array([[1.0, 1.0]], F32))
    for k in range(2):  # new signatures, then cached ones
        with tf.GradientTape() as tape:
            y = x @ w + bias
            z = bias + y  # a Variable on the left too
        assert y.numpy().tolist() == [[6.0 + 3 * k]] and z.numpy().tolist() == [[7.0 + 4 * k]]
        gw, gb = tape.gradient(z, [w, bias])
        assert gw.numpy().tolist() == [[1.0], [1.0]] and gb.numpy().tolist() == [2.0]
        before = x @ w
        w.assign(w + 1.0)  # a read is a snapshot: later assigns do not change it
        bias.assign(bias + 1.0)
        assert before.numpy().tolist() == [[5.0 + 2 * k]]


def test_assign_owns_a_copy_of_its_value_in_every_layout():
    v = tf.Variable(np.zeros((2, 3), F32))
    before = v.read_value()
    src = np.arange(6, dtype=F32).reshape(3, 2).T  # a transposed (non-contiguous) view
    v.assign(src)
    src[0, 0] = 100.0  # the variable holds its own buffer, not the caller's
    assert v.numpy().tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    assert before.numpy().tolist() == [[0.0] * 3] * 2  # an earlier read is a snapshot
    t = tf.constant(np.ones((2, 3), F32)) * 2.0
    v.assign(t)
    assert v.numpy().tolist() == [[2.0] * 3] * 2 and v.numpy() is not t.numpy()
    v.assign_add(t)
    assert v.numpy().tolist() == [[4.0] * 3] * 2 and t.numpy().tolist() == [[2.0] * 3] * 2
    with pytest.raises(TypeError, match="dtype float64"):
        v.assign(tf.constant(np.ones((2, 3), np.float64)))
