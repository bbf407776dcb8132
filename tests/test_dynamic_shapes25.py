"""Shapes the trace computes from an unknown batch (an input_signature's None): tf.reshape, broadcast_to and
tile to run-time sizes (``[tf.shape(x)[0], -1]``, ``tf.shape(x)``), tf.eye of a run-time size and tf.split
of a None axis. Each gives eager's values and gradients for every batch size from one trace, TF 2.21's
static result shapes (recorded below from TF's concrete functions), and TF's error when the sizes do not
fit. Before wave 25 each refused ("a size known only when the function runs") or crashed naming no op."""
import numpy as np
import pytest

import tapeflow as tf

SPEC = [tf.TensorSpec([None, 3, 4], tf.float32)]

# (program, TF 2.21's static shapes of the result traced with SPEC)
CASES = {
    "reshape [n, -1]": (lambda t: tf.reshape(t, [tf.shape(t)[0], -1]), (None, None)),
    "reshape [-1, d1 * 4]": (lambda t: tf.reshape(t, [-1, tf.shape(t)[1] * 4]), (None, 12)),
    "reshape [n, 3, 2, 2]": (lambda t: tf.reshape(t, [tf.shape(t)[0], 3, 2, 2]), (None, 3, 2, 2)),
    "reshape stack": (lambda t: tf.reshape(t, tf.stack([tf.shape(t)[0], 12])), (None, 12)),
    "reshape [n * 3, -1]": (lambda t: tf.reshape(t, [tf.shape(t)[0] * 3, -1]), (None, None)),
    "reshape concat": (lambda t: tf.reshape(t, tf.concat([[-1], tf.shape(t)[1:]], 0)), (None, 3, 4)),
    "tile": (lambda t: tf.tile(t[:1], [tf.shape(t)[0], 1, 2]), (None, 3, 8)),
    "tile of None": (lambda t: tf.tile(t, [tf.shape(t)[0], 1, 1]), (None, 3, 4)),
    "broadcast_to": (lambda t: tf.broadcast_to(t[:1], tf.shape(t)), (None, 3, 4)),
    "broadcast_to sum": (lambda t: tf.broadcast_to(tf.reduce_sum(t, [1, 2])[:, None], [tf.shape(t)[0], 5]),
                         (None, 5)),
    "eye": (lambda t: tf.eye(tf.shape(t)[0]), (None, None)),
    "eye batch": (lambda t: tf.eye(2, tf.shape(t)[0], batch_shape=[tf.shape(t)[0]]), (None, 2, None)),
    "split 2": (lambda t: tf.split(t, 2, axis=0), [(None, 3, 4), (None, 3, 4)]),
    "split [1, -1, 2]": (lambda t: tf.split(t, [1, -1, 2], axis=0), [(1, 3, 4), (None, 3, 4), (2, 3, 4)]),
    "split [-1, 1]": (lambda t: tf.split(t, [-1, 1], axis=0), [(None, 3, 4), (1, 3, 4)]),
}
DIFFERENTIABLE = [k for k in CASES if not k.startswith("eye")]


def _shapes(out):
    return [tuple(o.shape) for o in out] if isinstance(out, list) else tuple(out.shape)


def _listed(out):
    return [o.numpy() for o in out] if isinstance(out, list) else [out.numpy()]


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_tf_static_shapes_for_every_batch_from_one_trace(name):
    f, tf_shapes = CASES[name]
    g = tf.function(f, input_signature=SPEC)
    assert _shapes(g.get_concrete_function().structured_outputs) == tf_shapes
    for batch in (4, 6, 8):
        x = np.arange(batch * 12, dtype=np.float32).reshape(batch, 3, 4)
        want, got = _listed(f(tf.constant(x))), _listed(g(x))
        assert len(want) == len(got)
        for a, b in zip(want, got):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
    assert g.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_equal_eager(name):
    f = CASES[name][0]

    def loss(t):
        return sum(tf.reduce_sum(p ** 2) * (i + 1) for i, p in enumerate(f(t) if name.startswith("split") else [f(t)]))

    @tf.function(input_signature=SPEC)
    def grad(t):
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = loss(t)
        return tape.gradient(y, t)

    x = tf.constant(np.linspace(-1, 1, 48, dtype=np.float32).reshape(4, 3, 4))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = loss(x)
    np.testing.assert_array_equal(grad(x).numpy(), tape.gradient(y, x).numpy())


@pytest.mark.parametrize("f, batch, match", [
    # TF 2.21: "Input to reshape is a tensor with 48 values, but the requested shape has 20"
    (lambda t: tf.reshape(t, [tf.shape(t)[0], 5]), 4, "48 values, but the requested shape has 20"),
    # TF: "Number of ways to split should evenly divide the split dimension ... (size = 4) and num_split 3"
    (lambda t: tf.split(t, 3, axis=0), 4, "does not divide into 3 parts"),
    (lambda t: tf.split(t, [1, 2], axis=0), 4, "do not add up to 4"),
    (lambda t: tf.split(t, [3, -1, 2], axis=0), 4, "do not add up to 4"),
    (lambda t: tf.tile(t, [tf.shape(t)[0] - 5, 1, 1]), 4, "negative"),
    (lambda t: tf.broadcast_to(t, [tf.shape(t)[0] + 1, 3, 4]), 4, "cannot broadcast"),
])
def test_sizes_that_do_not_fit_raise_when_it_runs(f, batch, match):
    g = tf.function(f, input_signature=SPEC)
    x = np.zeros((batch, 3, 4), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        g(x)
    with pytest.raises(tf.errors.InvalidArgumentError):
        f(tf.constant(x))


def test_a_reshape_to_run_time_sizes_is_never_simplified_away():
    """reshape(x, [tf.shape(y)[0], 4]) of an x that is already (None, 4): its aval looks like a no-op, but the
    sizes are checked when it runs (the simplifier once dropped same-aval reshapes)."""
    spec = [tf.TensorSpec([None, 4], tf.float32), tf.TensorSpec([None], tf.float32)]
    g = tf.function(lambda x, y: tf.reshape(x, [tf.shape(y)[0], 4]) * 2, input_signature=spec)
    np.testing.assert_array_equal(g(np.ones((2, 4), np.float32), np.ones(2, np.float32)).numpy(), 2 * np.ones((2, 4)))
    with pytest.raises(tf.errors.InvalidArgumentError):
        g(np.ones((2, 4), np.float32), np.ones(3, np.float32))


def test_gather_nd_batch_dims_gives_tf_values_eager_compiled_and_under_a_none_batch():
    """gather_nd(params, indices, batch_dims=b) raised NotImplementedError in every mode (an RL idiom: the
    Q-value of each row's action, tf.gather_nd(q, actions[:, None], batch_dims=1)). TF 2.21's values."""
    p = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    cases = [([[1], [2]], 1, [[4.0, 5.0, 6.0, 7.0], [20.0, 21.0, 22.0, 23.0]]),
             ([[[0, 1], [2, 3]], [[1, 0], [0, 3]]], 1, [[1.0, 11.0], [16.0, 15.0]]),
             ([[[1], [3], [0]], [[2], [2], [1]]], 2, [[1.0, 7.0, 8.0], [14.0, 18.0, 21.0]])]
    for idx, b, want in cases:
        idx = np.asarray(idx, np.int32)
        assert tf.gather_nd(p, idx, batch_dims=b).numpy().tolist() == want
        spec = [tf.TensorSpec([None, 3, 4], tf.float32), tf.TensorSpec([None] + list(idx.shape[1:]), tf.int32)]
        g = tf.function(lambda a, i: tf.gather_nd(a, i, batch_dims=b), input_signature=spec)
        assert g(p, idx).numpy().tolist() == want
    # batch sizes that differ: TF's InvalidArgumentError, eagerly and when it runs
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.gather_nd(p, np.zeros((1, 1), np.int32), batch_dims=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch dimension 0 differs"):
        g(p, np.zeros((1, 3, 1), np.int32))
    x = tf.constant(p)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.gather_nd(x, [[1], [2]], batch_dims=1) ** 2)
    want = np.zeros_like(p)
    want[0, 1], want[1, 2] = 2 * p[0, 1], 2 * p[1, 2]
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), want)


@pytest.mark.parametrize("sorted_input", [False, True])
def test_padded_non_max_suppression_under_a_none_batch(sorted_input):
    """It reshaped its results to the boxes' batch dims, None under an input_signature: a raw TypeError."""
    rng = np.random.default_rng(0)
    corner = np.abs(rng.standard_normal((3, 4, 2))).astype(np.float32)
    boxes, scores = np.concatenate([corner, corner + 1], -1), np.abs(rng.standard_normal((3, 4))).astype(np.float32)
    f = lambda b, s: tf.image.non_max_suppression_padded(b, s, 2, pad_to_max_output_size=True,
                                                         sorted_input=sorted_input)
    g = tf.function(f, input_signature=[tf.TensorSpec([None, 4, 4]), tf.TensorSpec([None, 4])])
    for a, b in zip(f(tf.constant(boxes), tf.constant(scores)), g(boxes, scores)):
        np.testing.assert_array_equal(b.numpy(), a.numpy())


def test_scatter_nd_and_sparse_to_dense_of_a_run_time_shape():
    """scatter_nd into a shape the trace computes (tf.sparse.to_dense(tf.sparse.from_dense(t)) of a None batch,
    scatter_nd(i, u, [tf.shape(u)[0] + 1, 3])): zeros of it when it runs; it refused."""
    spec = [tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([None, 1], tf.int32)]
    f = lambda t, i: (tf.scatter_nd(i, t, [tf.shape(t)[0] + 1, 3]), tf.sparse.to_dense(tf.sparse.from_dense(t)))
    g = tf.function(f, input_signature=spec)
    t, i = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([[2], [0]], np.int32)
    for a, b in zip(f(tf.constant(t), tf.constant(i)), g(t, i)):
        np.testing.assert_array_equal(b.numpy(), a.numpy())
    assert tuple(g.get_concrete_function().structured_outputs[0].shape) == (None, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        g(t, np.array([[5], [0]], np.int32))
