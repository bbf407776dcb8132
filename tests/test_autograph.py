"""AutoGraph: tensor-dependent Python control flow inside tapeflow.function
becomes cond/while_loop; every case is checked against the same Python run
eagerly (where Python's own control flow decides)."""
import numpy as np
import pytest

import tapeflow as tf


def both(fn, *args):
    """(compiled result, eager result) of the same Python function."""
    eager = fn(*args)
    compiled = tf.function(fn)(*args)
    return compiled, eager


def collatz(a):
    counter = tf.constant(0)
    while tf.not_equal(a, 1):
        if tf.equal(a % 2, 0):
            a = a // 2
        else:
            a = 3 * a + 1
        counter += 1
    return counter


@pytest.mark.parametrize("n", [1, 6, 12, 27])
def test_collatz_while_and_if_on_tensors(n):
    c, e = both(collatz, tf.constant(n))
    assert int(c) == int(e)


def test_converted_code_uses_the_operators():
    src = tf.autograph.to_code(collatz)
    assert "ag__.while_stmt" in src and "ag__.if_stmt" in src
    assert "def collatz(a):" in src


def skip_odd_until(x, n):
    s = tf.constant(0.)
    for i in tf.range(n):
        if i % 2 == 0:
            continue
        if i > 7:
            break
        s += x * tf.cast(i, tf.float32)
    return s


@pytest.mark.parametrize("n", [0, 1, 5, 20])
def test_for_over_tensor_range_with_break_and_continue(n):
    c, e = both(skip_odd_until, tf.constant(2.), tf.constant(n))
    assert float(c) == float(e)


def sum_until_above(x, n):
    # the exits are not the last statement of an `if` whose rest moves into its else:
    # only the flags they set stop the loop (they must leave the tensor `if`)
    s = tf.constant(0.)
    count = tf.constant(0)
    for i in tf.range(n):
        s += tf.cast(i, tf.float32)
        if s > x:
            break
        count += 1
    k = tf.constant(0)
    while k < n:
        k += 1
        if k % 3 == 0:
            continue
        count += 10
    return s, count


@pytest.mark.parametrize("n", [0, 3, 20])
def test_break_and_continue_set_inside_a_tensor_if_stop_the_loop(n):
    (cs, cc), (es, ec) = both(sum_until_above, tf.constant(10.), tf.constant(n))
    want = sum(range(min(n, 6)))  # 0+1+...+5 = 15 is the first sum above 10
    assert float(cs) == float(es) == want
    assert int(cc) == int(ec) == min(n, 5) + 10 * (n - n // 3)


def test_tf_range_of_python_ints_is_one_differentiable_loop():
    # as TF's AutoGraph: a loop (the body traced once), not one copy of the body per
    # element; with a fixed trip count it is a scan, so gradients flow through it
    traced = []

    def f(x):
        s = x
        for i in tf.range(1, 10, 3):  # 1, 4, 7
            traced.append(1)
            s = s * 2.0 + tf.cast(i, tf.float32)
        for j in tf.range(3, 3):  # no trips
            s = s * 100.0
        return s

    x = tf.constant(1.5)
    c, e = both(f, x)
    assert float(c) == float(e) == ((1.5 * 2 + 1) * 2 + 4) * 2 + 7
    traced.clear()
    cf = tf.function(f).get_concrete_function(x)
    assert len(traced) == 1 and "scan" in str(cf.graph)
    ff = tf.function(f)  # converted, and inlined into grad's trace

    @tf.function
    def grad(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = ff(x)
        return t.gradient(y, x)
    assert float(grad(x)) == 8.0 and "scan" in str(grad.get_concrete_function(x).raw_graph)


def sign(x):
    if x > 0:
        return tf.constant(1.)
    elif x < 0:
        return tf.constant(-1.)
    return tf.constant(0.)


@pytest.mark.parametrize("v", [3., -3., 0.])
def test_early_returns_in_if_elif(v):
    c, e = both(sign, tf.constant(v))
    assert float(c) == float(e)


def row_sum(m):
    total = tf.zeros(3)
    for row in m:
        total += row
    return total


def test_for_over_tensor_rows():
    m = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    c, e = both(row_sum, m)
    np.testing.assert_array_equal(c.numpy(), e.numpy())


def test_python_loops_and_conditions_keep_python_semantics():
    trace_count = []

    def f(x):
        trace_count.append(1)
        acc = x
        for k in range(3):  # a Python range: unrolled at trace time
            if k > 0:       # a Python bool
                acc = acc * 2.
        return acc

    g = tf.function(f)
    assert float(g(tf.constant(1.))) == 4.0
    assert len(trace_count) == 1


def logic(x, y):
    if x > 0 and not y < 0:
        r = x + y
    elif x < 0 or y < 0:
        r = x - y
    else:
        r = x * y
    return r


@pytest.mark.parametrize("x, y", [(1., 2.), (1., -2.), (-1., 2.), (0., 3.)])
def test_and_or_not_on_tensors(x, y):
    c, e = both(logic, tf.constant(x), tf.constant(y))
    assert float(c) == float(e)


def test_while_on_reduction_with_variable_updates():
    v = tf.Variable(tf.ones(3) * 10.)

    def halve():
        steps = 0
        while tf.reduce_sum(v) > 1.:
            v.assign(v / 2.)
            steps += 1
        return steps

    steps = tf.function(halve)()
    assert int(steps) == 5 and float(tf.reduce_sum(v)) == pytest.approx(30 / 32)


def test_gradient_through_converted_branch():
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            if x > 0:
                y = x * x
            else:
                y = -x
        return t.gradient(y, x)

    g = tf.function(f)
    assert float(g(tf.constant(3.))) == 6.0
    assert float(g(tf.constant(-3.))) == -1.0


def test_closures_and_methods_are_converted():
    scale = tf.constant(3.)

    class M(tf.Module):
        @tf.function
        def __call__(self, x):
            if x > 0:
                x = x * scale
            return x

    m = M()
    assert float(m(tf.constant(2.))) == 6.0
    assert float(m(tf.constant(-2.))) == -2.0


def test_only_one_branch_assigns_is_a_clear_error():
    def f(x):
        if x > 0:
            y = x
        return y

    with pytest.raises(ValueError, match="'y' is assigned in only one branch"):
        tf.function(f)(tf.constant(1.))


def test_return_inside_tensor_loop_explains_the_rule():
    def f(x):
        for i in tf.range(tf.shape(x)[0]):
            if x[i] < 0:
                return i
        return -1

    with pytest.raises(ValueError, match="`return` inside a `for` loop"):
        tf.function(f)(tf.constant([1., -2.]))


def test_autograph_false_keeps_python_semantics():
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(Exception, match="truth value|symbolic|Python bool|bool"):
        tf.function(f, autograph=False)(tf.constant(1.))


def test_loop_variable_survives_the_loop_and_nested_defs_untouched():
    def f(n):
        def helper(v):  # a nested def is left as written
            return v + 1
        k = tf.constant(0)
        for i in tf.range(n):
            k = helper(k)
        return k, i

    k, i = tf.function(f)(tf.constant(4))
    assert int(k) == 4 and int(i) == 3


def test_run_functions_eagerly_runs_the_original():
    calls = []

    def f(x):
        calls.append(type(x).__name__)
        if x > 0:
            return x
        return -x

    tf.config.run_functions_eagerly(True)
    try:
        assert float(tf.function(f)(tf.constant(-2.))) == 2.0
    finally:
        tf.config.run_functions_eagerly(False)
    assert calls == ["Tensor"]  # the original ran on the concrete tensor; nothing was traced


@pytest.mark.parametrize("backend", ["python", "auto", "interpreter"])
def test_backends_agree_on_converted_loops(backend):
    def f(x, n):
        s = x
        i = tf.constant(0)
        while i < n:
            s = s * 0.5 + 1.
            i += 1
        return s

    ref = f(tf.constant(3.), tf.constant(7))
    got = tf.function(f, backend=backend)(tf.constant(3.), tf.constant(7))
    assert float(got) == pytest.approx(float(ref))


def test_do_not_convert():
    @tf.autograph.experimental.do_not_convert
    def f(x):
        if x > 0:
            return x
        return -x

    assert tf.autograph.to_graph(f) is f
