"""Values known while tracing are numbers to the rest of the trace (tf.shape(x)[0] of a known shape,
constants, Python numbers): ops that need a number (one_hot's depth, a slice bound, a range, a
size) take them in tapeflow.function as they do eagerly, as TF. Expected values: TF 2.21's, run side
by side (eager and tf.function, known input shapes)."""
import numpy as np
import pytest

import tapeflow as tf

X = np.arange(12, dtype=np.float32).reshape(4, 3)

CASES = {
    "reshape shape0": (lambda x: tf.reshape(x, [tf.shape(x)[0], -1, 1]),
        [[[0.0], [1.0], [2.0]], [[3.0], [4.0], [5.0]], [[6.0], [7.0], [8.0]], [[9.0], [10.0], [11.0]]]),
    "zeros shape": (lambda x: tf.zeros(tf.shape(x)),
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    "zeros [n]": (lambda x: tf.zeros([tf.shape(x)[0]]),
        [0.0, 0.0, 0.0, 0.0]),
    "ones stack": (lambda x: tf.ones(tf.stack([tf.shape(x)[0], 2])),
        [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]),
    "fill": (lambda x: tf.fill([tf.shape(x)[0], 2], 7.0),
        [[7.0, 7.0], [7.0, 7.0], [7.0, 7.0], [7.0, 7.0]]),
    "fill tensor val": (lambda x: tf.fill([2], x[0, 0]),
        [0.0, 0.0]),
    "range n": (lambda x: tf.range(tf.shape(x)[0]),
        [0, 1, 2, 3]),
    "random normal": (lambda x: tf.shape(tf.random.normal(tf.shape(x))),
        [4, 3]),
    "tile": (lambda x: tf.tile(x, [tf.shape(x)[0] // 2, 1]),
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0], [0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]),
    "one_hot depth": (lambda x: tf.one_hot([0, 1], tf.shape(x)[1]),
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
    "broadcast_to": (lambda x: tf.broadcast_to(tf.constant([1., 2., 3.]), tf.shape(x)),
        [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]),
    "slice size": (lambda x: tf.slice(x, [0, 0], [tf.shape(x)[0] - 1, 2]),
        [[0.0, 1.0], [3.0, 4.0], [6.0, 7.0]]),
    "x[:n]": (lambda x: x[:tf.shape(x)[0] - 1],
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]),
    "eye n": (lambda x: tf.eye(tf.shape(x)[1]),
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
    "zeros_like": (lambda x: tf.zeros_like(x),
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    "split": (lambda x: tf.split(x, 2)[0],
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]),
    "reduce_mean cast n": (lambda x: tf.reduce_sum(x) / tf.cast(tf.shape(x)[0], tf.float32),
        16.5),
    "top_k": (lambda x: tf.math.top_k(x[:, 0], k=2).values,
        [9.0, 6.0]),
    "pad": (lambda x: tf.pad(x, [[0, tf.shape(x)[0] - 3], [0, 0]]),
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0], [0.0, 0.0, 0.0]]),
    "linspace": (lambda x: tf.linspace(0.0, 1.0, tf.shape(x)[0]),
        [0.0, 0.3333333432674408, 0.6666666865348816, 1.0]),
    "sequence_mask": (lambda x: tf.cast(tf.sequence_mask([1, 2], tf.shape(x)[1]), tf.int32),
        [[1, 0, 0], [1, 1, 0]]),
    "expand+tile": (lambda x: tf.tile(tf.expand_dims(x, 0), [tf.shape(x)[0], 1, 1]),
        [[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]], [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]], [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]], [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]),
    "gather range": (lambda x: tf.gather(x, tf.range(tf.shape(x)[0] - 1)),
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]),
    "concat zeros": (lambda x: tf.concat([x, tf.zeros([tf.shape(x)[0], 1])], 1),
        [[0.0, 1.0, 2.0, 0.0], [3.0, 4.0, 5.0, 0.0], [6.0, 7.0, 8.0, 0.0], [9.0, 10.0, 11.0, 0.0]]),
    "random.uniform n": (lambda x: tf.shape(tf.random.uniform([tf.shape(x)[0]], maxval=10, dtype=tf.int32)),
        [4]),
    "TensorArray n": (lambda x: tf.TensorArray(tf.float32, size=tf.shape(x)[0]).unstack(x).stack(),
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]),
    "argmax one_hot": (lambda x: tf.one_hot(tf.argmax(x, 1), tf.shape(x)[1]),
        [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_known_values_while_tracing_match_tf(name):
    fn, want = CASES[name]
    x = tf.constant(X)
    np.testing.assert_allclose(np.asarray(fn(x).numpy(), np.float64), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tf.function(fn)(x).numpy(), np.float64), want, rtol=1e-6)


def test_folding_keeps_effects_control_flow_and_large_results_in_the_program():
    v = tf.Variable(2.0)

    def f(x):
        n = tf.shape(x)[0]                       # known: folded
        big = tf.zeros([300, 300]) + 1.0         # 90,000 elements: computed at run time
        r = tf.random.uniform([n])               # a draw: stays in the program
        total = tf.constant(0.0)
        for i in tf.range(n):                    # a known bound: one counted loop, not unrolled
            total += x[i, 0]
        return total + v + tf.reduce_sum(big) * 0.0 + tf.reduce_sum(r) * 0.0

    x = tf.constant(X)
    g = tf.function(f, backend="interpreter").get_concrete_function(x).raw_graph
    names = [e.prim.name for e in g.eqns]
    assert "random_uniform" in names and "read_variable" in names and "add" in names   # big's add
    assert sum(n in ("scan", "while_loop") for n in names) == 1 and "shape" not in names
    assert all(n != "getitem" for n in names[:1])
    f = tf.function(f)
    assert float(f(x)) == float(X[:, 0].sum() + 2.0)
    v.assign(5.0)
    assert float(f(x)) == float(X[:, 0].sum() + 5.0)   # the read was not folded


def test_fill_with_a_tensor_value_has_tfs_gradient():
    x = tf.Variable([3.0, 4.0])
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.fill([2, 2], x[0]) * 2.0)
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), [8.0, 0.0])   # TF 2.21: [8. 0.]
    np.testing.assert_array_equal(tf.function(lambda x: tf.fill([2, 2], x[0]))(tf.constant([3.0, 4.0])).numpy(),
                                  np.full((2, 2), 3.0))
    with pytest.raises(ValueError, match="fill: value must be a scalar"):
        tf.fill([2], tf.constant([1.0, 2.0]))


def test_sequence_mask_as_tf():
    # TF 2.21's values; int32 lengths against the positions raised a dtype mismatch before
    assert tf.sequence_mask([1, 3, 2]).numpy().tolist() == [[True, False, False], [True, True, True],
                                                           [True, True, False]]
    assert tf.sequence_mask(tf.constant([1, 2], tf.int64), 4).numpy().astype(int).tolist() == [[1, 0, 0, 0],
                                                                                            [1, 1, 0, 0]]
    assert tf.sequence_mask([[1, 2], [0, 1]], 2).shape == (2, 2, 2)
    assert tf.sequence_mask([], 3).shape == (0, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="maxlen must be >= 0"):
        tf.sequence_mask([1, 2], -1)


def test_run_time_shapes_of_unknown_dims():
    # an input_signature's None dimension: tf.shape is computed when the function runs (TF's value)
    spec = [tf.TensorSpec((None, 3), tf.float32)]
    x = tf.constant(X)
    mean = tf.function(lambda x: tf.reduce_sum(x) / tf.cast(tf.shape(x)[0], tf.float32), input_signature=spec)
    np.testing.assert_allclose(float(mean(x)), 16.5)                          # TF 2.21: 16.5
    np.testing.assert_allclose(float(mean(x[:2])), X[:2].sum() / 2)           # the same trace, another size
    assert mean.experimental_get_tracing_count() == 1
    shape = tf.function(lambda x: tf.shape(x, out_type=tf.int64), input_signature=spec)
    assert shape(x).numpy().tolist() == [4, 3] and shape(x).dtype == tf.int64
    assert int(tf.function(lambda x: tf.size(x), input_signature=spec)(x)) == 12
    # a size that a shape or a split needs while tracing: refused with what to do
    # zeros/ones/fill of such sizes (wave 24): a shape known when the function runs, as TF's (TF 2.21's values)
    z = tf.function(lambda x: tf.zeros([tf.shape(x)[0], 4]), input_signature=spec)
    assert z(x).shape == (4, 4) and z(x[:1]).shape == (1, 4) and not z(x).numpy().any()
    o = tf.function(lambda x: tf.ones(tf.shape(x), tf.int32) * 2, input_signature=spec)
    assert o(x[:2]).numpy().tolist() == [[2, 2, 2], [2, 2, 2]]
    h = tf.function(lambda x: tf.fill([tf.shape(x)[0]], 0.5) + tf.reduce_sum(x, 1), input_signature=spec)
    np.testing.assert_allclose(h(x).numpy(), 0.5 + X.sum(1))
    assert tf.function(lambda n: tf.zeros([n, 2], tf.bool))(tf.constant(3)).numpy().tolist() == [[False] * 2] * 3
    v = tf.Variable(2.0)

    @tf.function(input_signature=spec)
    def fill_grad(x):
        with tf.GradientTape() as t:
            y = tf.reduce_sum(tf.fill([tf.shape(x)[0], 2], v * 1.0))
        return y, t.gradient(y, v)
    assert [float(t) for t in fill_grad(x[:3])] == [12.0, 6.0]            # TF 2.21: 12.0, 6.0
    # reshape to such sizes and split of such an axis (wave 25: tests/test_dynamic_shapes25.py)
    r = tf.function(lambda x: tf.reshape(x, [tf.shape(x)[0], -1, 1]), input_signature=spec)
    assert r(x).shape == (4, 3, 1) and r(x[:1]).shape == (1, 3, 1)
    assert [p.shape for p in tf.function(lambda x: tf.split(x, 2), input_signature=spec)(x)] == [(2, 3), (2, 3)]
    with pytest.raises(ValueError, match="unstack: the axis length must be known"):   # a number of outputs
        tf.function(lambda x: tf.unstack(x)[0], input_signature=spec)(x)


def test_range_and_sequence_mask_of_values_the_trace_computes():
    """tf.range of a tensor argument and sequence_mask without maxlen trace to the range primitive, whose
    result's length is known when the function runs (TF: a dynamic shape); values are TF 2.21's."""
    k = tf.function(lambda n: tf.range(n) * 2)
    assert k(tf.constant(4)).numpy().tolist() == [0, 2, 4, 6] and k(tf.constant(2)).numpy().tolist() == [0, 2]
    assert k.experimental_get_tracing_count() == 1                   # one trace for every n
    half = tf.function(lambda a, b: tf.range(a, b, 0.5))(tf.constant(1.0), tf.constant(3.0))
    assert half.dtype == tf.float32 and half.numpy().tolist() == [1.0, 1.5, 2.0, 2.5]
    assert tf.function(lambda n: tf.range(n, dtype=tf.int64))(tf.constant(3)).dtype == tf.int64
    mask = tf.function(lambda lengths: tf.sequence_mask(lengths))
    assert mask(tf.constant([1, 3])).numpy().tolist() == [[True, False, False], [True, True, True]]
    assert mask(tf.constant([2, 0, 1])).numpy().tolist() == [[True, True], [False, False], [True, False]]
    spec = [tf.TensorSpec([None, None], tf.float32)]
    h = tf.function(lambda x: tf.reduce_sum(tf.cast(tf.range(tf.shape(x)[1]), tf.float32) * x, axis=1),
                    input_signature=spec)
    assert h(tf.ones([2, 3])).numpy().tolist() == [3.0, 3.0] and h(tf.ones([1, 4])).numpy().tolist() == [6.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="range: delta must not be 0"):
        tf.function(lambda d: tf.range(0, 3, d))(tf.constant(0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="range: limit must be a scalar"):
        tf.function(lambda n: tf.range(n))(tf.constant([3, 4]))


def test_slices_with_bounds_the_trace_computes():
    """x[a:b:c] where a or b is a tensor the trace computes (a loop counter of tf.range, a tensor argument):
    the axis is masked by Python's slice rule, so compiled gives what eager gives for every bound, negative
    and out of range ones included, with gradients; tf.slice with a traced begin or size too, checked
    as TF checks it when it runs. TF 2.21: the loop below gives [10, 50, 90]."""
    x = tf.constant(np.arange(24.0).reshape(4, 6), tf.float32)
    f = tf.function(lambda x, a, b: x[1:, a:b:2])
    g = tf.function(lambda x, a: x[..., a:, None])
    for a in range(-8, 9, 3):
        for b in (-7, -2, 0, 3, 9):
            np.testing.assert_array_equal(f(x, tf.constant(a), tf.constant(b)).numpy(), x.numpy()[1:, a:b:2])
        np.testing.assert_array_equal(g(x, tf.constant(a)).numpy(), x.numpy()[..., a:, None])

    @tf.function
    def loop(x):
        acc = tf.zeros([4])
        for t in tf.range(3):
            acc += tf.reduce_sum(x[:, :t + 1], axis=1)
        return acc
    np.testing.assert_array_equal(loop(x).numpy(), sum(x.numpy()[:, :t + 1].sum(1) for t in range(3)))

    @tf.function
    def grad(x, a):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x[:a] ** 2)
        return tape.gradient(y, x)
    np.testing.assert_array_equal(grad(x, tf.constant(2)).numpy(), np.where(np.arange(4)[:, None] < 2, 2 * x.numpy(), 0))
    s = tf.function(lambda x, b, k: tf.slice(x, [0, b], [2, k]))
    np.testing.assert_array_equal(s(x, tf.constant(1), tf.constant(3)).numpy(), x.numpy()[:2, 1:4])
    np.testing.assert_array_equal(s(x, tf.constant(2), tf.constant(-1)).numpy(), x.numpy()[:2, 2:])
    with pytest.raises(tf.errors.InvalidArgumentError, match="slice: axis 1 needs 0 <= begin <= begin"):
        s(x, tf.constant(4), tf.constant(3))
    t = tf.function(lambda x, b: tf.slice(x, [b, 0], [2, 6]))       # a traced begin, a static size: a gather
    assert t.get_concrete_function(x, tf.constant(0)).structured_outputs.shape == (2, 6)
    np.testing.assert_array_equal(t(x, tf.constant(2)).numpy(), x.numpy()[2:4])
    with pytest.raises(tf.errors.InvalidArgumentError):
        t(x, tf.constant(3))
