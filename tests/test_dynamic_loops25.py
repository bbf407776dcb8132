"""Loops and Keras recurrent layers over an unknown batch (an input_signature's None): map_fn, tf.scan,
foldl/foldr and vectorized_map run one ``scan`` whose trip count is elems' first dimension when it runs
(TF: a while_loop over a TensorArray); Keras RNN layers build their zero states of the run-time batch;
tf.linspace takes a num the trace computes. Each gives eager's values (and gradients) for every batch,
empty included, from one trace. Before wave 25 each refused ("must be known") or the scan refused the
step's state shape."""
import numpy as np
import pytest

import tapeflow as tf

SPEC = [tf.TensorSpec([None, 3], tf.float32)]
W = tf.Variable(np.array([0.5, -1.0, 2.0], np.float32))

LOOPS = {
    "map_fn": lambda t: tf.map_fn(lambda r: tf.reduce_sum(r * W), t),
    "map_fn structure": lambda t: tf.map_fn(lambda rr: (rr[0] * 2, tf.reduce_max(rr[0]) + rr[1]), (t, t[:, 0]),
                                            fn_output_signature=(tf.float32, tf.float32))[1],
    "map_fn int signature": lambda t: tf.map_fn(lambda r: tf.cast(tf.argmax(r), tf.int32), t,
                                                fn_output_signature=tf.int32),
    "scan": lambda t: tf.scan(lambda a, r: a * W + r, t),
    "scan initializer": lambda t: tf.scan(lambda a, r: a + tf.reduce_sum(r), t, initializer=tf.constant(1.0)),
    "foldl": lambda t: tf.foldl(lambda a, r: a + r * W, t, initializer=tf.zeros([3])),
    "foldr": lambda t: tf.foldr(lambda a, r: a * 0.5 + r, t, initializer=tf.ones([3])),
    "vectorized_map": lambda t: tf.vectorized_map(lambda r: tf.reduce_sum(r) * 2, t),
}


@pytest.mark.parametrize("name", list(LOOPS))
def test_loops_over_a_run_time_batch_give_eager_values(name):
    f = LOOPS[name]
    g = tf.function(f, input_signature=SPEC)
    for batch in (4, 1) if name == "scan" else (4, 1, 0):   # (scan without initializer: empty raises)
        x = np.linspace(-2, 2, batch * 3, dtype=np.float32).reshape(batch, 3)
        want, got = f(tf.constant(x)).numpy(), g(x).numpy()
        assert want.shape == got.shape and want.dtype == got.dtype
        np.testing.assert_array_equal(got, want)
    assert g.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("name", ["map_fn", "scan", "foldl"])
def test_loop_gradients_over_a_run_time_batch(name):
    f = LOOPS[name]

    @tf.function(input_signature=SPEC)
    def grads(t):
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = tf.reduce_sum(f(t) ** 2)
        return tape.gradient(y, [t, W])

    x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(f(x) ** 2)
    for a, b in zip(tape.gradient(y, [x, W]), grads(x)):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-6)


LAYERS = {
    "LSTM": lambda: tf.keras.layers.LSTM(4),
    "GRU sequences": lambda: tf.keras.layers.GRU(3, return_sequences=True),
    "SimpleRNN state": lambda: tf.keras.layers.SimpleRNN(2, return_state=True),
    "Bidirectional": lambda: tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(2)),
    "stacked cells": lambda: tf.keras.layers.RNN([tf.keras.layers.LSTMCell(2), tf.keras.layers.GRUCell(3)]),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_recurrent_layers_under_a_run_time_batch(name):
    layer = LAYERS[name]()
    rng = np.random.default_rng(0)
    g = tf.function(lambda x: layer(x), input_signature=[tf.TensorSpec((None, 6, 3), tf.float32)])
    for batch in (2, 5):
        x = rng.standard_normal((batch, 6, 3)).astype(np.float32)
        want, got = layer(tf.constant(x)), g(x)
        want, got = (want, got) if isinstance(want, (list, tuple)) else ([want], [got])
        for a, b in zip(want, got):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
    assert g.experimental_get_tracing_count() == 1


def test_linspace_of_a_run_time_num():
    f = tf.function(lambda n: tf.linspace(0.0, 1.0, n))
    g = tf.function(lambda a, b, n: tf.linspace(a, b, n, axis=1))
    a, b = tf.constant([0.0, 1.0]), tf.constant([2.0, 5.0])
    for n in (0, 1, 2, 5):
        np.testing.assert_array_equal(f(tf.constant(n)).numpy(), tf.linspace(0.0, 1.0, n).numpy())
        np.testing.assert_array_equal(g(a, b, tf.constant(n)).numpy(), tf.linspace(a, b, n, axis=1).numpy())
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(tf.errors.InvalidArgumentError, match="linspace: num must be >= 0"):
        f(tf.constant(-1))


def _ta_loop(x):
    ta = tf.TensorArray(tf.float32, size=tf.shape(x)[0], element_shape=[])
    for i in tf.range(tf.shape(x)[0]):
        ta = ta.write(i, tf.reduce_sum(x[i]) * tf.cast(i, tf.float32))
    return ta.stack(), ta.size()


def _ta_unstack(x):
    ta = tf.TensorArray(tf.float32, size=tf.shape(x)[0], element_shape=[3]).unstack(x * 2)
    return ta.stack(), ta.concat()


def _ta_lazy(x):   # no element_shape: the first write (outside a loop) sets it
    ta = tf.TensorArray(tf.float32, size=tf.shape(x)[0])
    return ta.write(0, x[0]).stack(), ta.size()


@pytest.mark.parametrize("f", [_ta_loop, _ta_unstack, _ta_lazy])
def test_tensor_array_of_a_run_time_size(f):
    g = tf.function(f, input_signature=SPEC)
    for batch in (3, 1) if f is _ta_lazy else (3, 1, 0):
        x = np.arange(batch * 3, dtype=np.float32).reshape(batch, 3)
        for a, b in zip(f(tf.constant(x)), g(x)):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(b.numpy(), a.numpy())
    assert g.experimental_get_tracing_count() == 1


def _rows_loop(t):
    s = tf.zeros([3])
    for row in t:
        s = s * 0.5 + row
    return s


def _rows_break(t):
    m = tf.constant(-1e9)
    for row in t:
        if tf.reduce_sum(row) > 10:
            break
        m = tf.maximum(m, tf.reduce_max(row))
    return m


@pytest.mark.parametrize("f", [_rows_loop, _rows_break])
def test_autograph_for_over_the_rows_of_a_run_time_batch(f):
    """``for row in t`` over a None batch (AutoGraph: a while loop to the length it has when it runs); it
    refused ("a `for` loop over a tensor of unknown length")."""
    g = tf.function(f, input_signature=SPEC)
    for batch in (4, 1, 0):
        x = np.arange(batch * 3, dtype=np.float32).reshape(batch, 3)
        np.testing.assert_array_equal(g(x).numpy(), f(tf.constant(x)).numpy())
    assert g.experimental_get_tracing_count() == 1


def _grow(x):
    i, acc = tf.while_loop(lambda i, a: i < tf.shape(x)[0],
                           lambda i, a: (i + 1, tf.concat([a, x[i:i + 1] * 2], 0)),
                           [tf.constant(0), tf.zeros([0, 3])],
                           shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 3])])
    return acc


@pytest.mark.parametrize("backend", ["python", "interpreter", None])
def test_while_loop_shape_invariants_let_a_loop_value_grow(backend):
    """TF's shape_invariants: a None dimension may change between iterations (an accumulator grown by
    concat). They were accepted and ignored (the loop refused the growing value)."""
    g = tf.function(_grow, backend=backend) if backend else tf.function(_grow)
    for batch in (3, 0, 2):
        x = np.arange(batch * 3, dtype=np.float32).reshape(batch, 3)
        np.testing.assert_array_equal(g(tf.constant(x)).numpy(), _grow(tf.constant(x)).numpy())
    with pytest.raises(ValueError, match="needs shape_invariants"):    # without them: TF's ValueError too
        tf.function(lambda x: tf.while_loop(lambda a: tf.shape(a)[0] < 5, lambda a: tf.concat([a, a[:1]], 0),
                                            [x]))(tf.ones([2, 3]))
    with pytest.raises(ValueError, match="not compatible with its shape invariant"):
        tf.function(lambda x: tf.while_loop(lambda a: tf.shape(a)[0] < 5, lambda a: a, [x],
                                            shape_invariants=[tf.TensorShape([None, 2])]))(tf.ones([2, 3]))

    @tf.function
    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(_grow(x))
        return tape.gradient(y, x)
    with pytest.raises(NotImplementedError, match="change shape"):   # (a clear refusal: TF differentiates it)
        grad(tf.ones([2, 3]))


def _ta_dynamic_for(x):
    out = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=[3])
    for i in tf.range(tf.shape(x)[0]):
        out = out.write(i, x[i] * 2)
    return out.stack(), out.size()


def _ta_dynamic_while(x):
    out = tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[])
    i = 0
    n = tf.shape(x)[0]
    while i < n:
        out = out.write(i, i * i)
        i += 1
    return (out.stack(),)


def _ta_dynamic_gap(x):   # a write past the end fills the rows between with zeros, as TF
    return (tf.TensorArray(tf.float32, size=1, dynamic_size=True, element_shape=[3]).write(0, x[0]).write(2, x[1])
            .stack(),)


@pytest.mark.parametrize("f", [_ta_dynamic_for, _ta_dynamic_while, _ta_dynamic_gap])
def test_dynamic_size_tensor_array_grows_in_compiled_loops(f):
    """TensorArray(dynamic_size=True, element_shape=...) written in an AutoGraph loop (TF's idiom for an
    unknown count): it refused inside tapeflow.function ("static shapes")."""
    g = tf.function(f, input_signature=SPEC)
    for batch in (3, 2) if f is _ta_dynamic_gap else (3, 1, 0):
        x = np.arange(batch * 3, dtype=np.float32).reshape(batch, 3)
        for a, b in zip(f(tf.constant(x)), g(x)):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(b.numpy(), a.numpy())
    assert g.experimental_get_tracing_count() == 1


def _grow_autograph(x):
    acc = tf.zeros([0, 3])
    for i in tf.range(tf.shape(x)[0]):
        tf.autograph.experimental.set_loop_options(shape_invariants=[(acc, tf.TensorShape([None, 3]))])
        acc = tf.concat([acc, x[i:i + 1] * 2], 0)
    return acc


def _capped(x):
    s, i = tf.constant(0.0), tf.constant(0)
    while i < tf.shape(x)[0] * 100:
        tf.autograph.experimental.set_loop_options(maximum_iterations=3)
        s += 1.0
        i += 1
    return s


def test_autograph_set_loop_options():
    """tf.autograph.experimental.set_loop_options was missing (an AttributeError): its shape_invariants let an
    AutoGraph loop grow a value, its maximum_iterations caps the loop (TF 2.21: [[0, 2, 4], ...] and 3.0)."""
    g = tf.function(_grow_autograph, input_signature=SPEC)
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    np.testing.assert_array_equal(g(x).numpy(), 2 * x)
    assert g(x[:0]).shape == (0, 3)
    h = tf.function(_capped, input_signature=SPEC)
    assert float(h(x)) == 3.0 and float(h(x[:0])) == 0.0
    tf.autograph.experimental.set_loop_options(maximum_iterations=2)   # outside a loop: nothing
