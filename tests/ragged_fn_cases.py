"""RaggedTensors inside tf.function (wave 20): each case is a function body over arguments
(``x``, ``y``), traced with ``tf.function`` and called on a list of argument tuples in order;
the record is each call's printed result (or exception class) and the function's trace count
after each call. tests/tf_reference/make_ragged_fn_reference.py records TF 2.21's into
tests/data/ragged_fn_tf.json; tests/test_ragged_function.py runs tapeflow's (python and
interpreter backends, and eagerly) against it. ``R`` is tf.ragged.constant."""

A = "R([[1, 2], [3], [4, 5, 6]])"
B = "R([[1], [2, 3, 4], [5, 6]])"       # other row lengths, the same row count: shares A's trace
C = "R([[1], [], [2, 3]])"              # an empty row
D = "R([[1.5, 2.0], [], [4.0, 5.0, 6.0]])"
E = "R([[[1, 2], [3]], [[4]], []])"     # ragged_rank 2
F = "R([[1, 2], [3]])"                  # two rows: retraces

# (name, parameters, body, calls): the body is one expression
CASES = [
    ("add1", "x", "x + 1", [A, B, F, D, E, A]),
    ("square_cast", "x", "(tf.math.square(x), tf.cast(x, tf.float64), -x, x * 2)", [A, C]),
    ("map_flat", "x", "tf.ragged.map_flat_values(lambda v: v * 10 + 1, x)", [A, E]),
    ("palindrome1", "x", "tf.concat([x, tf.reverse(x, [1])], 1)", [A, B, C]),
    ("palindrome0", "x", "tf.concat([x, tf.reverse(x, [0])], 0)", [A, C]),
    ("stack", "x", "tf.stack([x, x * 2], axis=0)", [A, C]),
    ("reverse_inner", "x", "tf.reverse(x, [2])", [E]),
    ("reduce_rows", "x", "(tf.reduce_sum(x, axis=1), tf.reduce_max(x, axis=1), tf.reduce_min(x, axis=-1), "
                         "tf.reduce_prod(x, axis=1), tf.reduce_mean(x, axis=1))", [A, C, D]),
    ("reduce_cols", "x", "(tf.reduce_sum(x, axis=0), tf.reduce_max(x, axis=0), tf.reduce_mean(x, axis=0))", [A, C, D]),
    ("reduce_all", "x", "(tf.reduce_sum(x), tf.reduce_any(x > 2, axis=1), tf.reduce_all(x > 2, axis=1), "
                        "tf.reduce_sum(x, axis=1, keepdims=True))", [A, C]),
    ("reduce_inner", "x", "tf.reduce_sum(x, axis=2)", [E]),
    ("parts", "x", "(x.row_splits, x.values, x.flat_values, x.row_lengths(), x.value_rowids(), x.nrows(), "
                   "x.bounding_shape(), x.row_starts(), x.row_limits())", [A, C, E]),
    ("two_same", "x, y", "x + y", ["(%s, %s)" % (A, A), "(%s, %s)" % (B, B)]),
    ("two_differ", "x, y", "x * y", ["(%s, %s)" % (A, B)]),
    ("broadcast_rows", "x, y", "x + y", ["(%s, tf.constant([[10], [20], [30]]))" % A]),
    ("broadcast_scalar", "x, y", "x * y", ["(%s, tf.constant(3))" % A, "(%s, tf.constant(4))" % B]),
    ("build_splits", "x, y", "tf.RaggedTensor.from_row_splits(x, y)",
     ["(tf.constant([1, 2, 3]), tf.constant([0, 2, 3], tf.int64))",
      "(tf.constant([4, 5, 6, 7]), tf.constant([0, 0, 4], tf.int64))",
      "(tf.constant([1, 2, 3]), tf.constant([0, 2, 4], tf.int64))"]),
    ("build_lengths", "x, y", "tf.RaggedTensor.from_row_lengths(x, y) + 1",
     ["(tf.constant([1, 2, 3]), tf.constant([2, 0, 1], tf.int64))"]),
    ("strings_split", "x", "tf.strings.split(x)", ["tf.constant(['a b', 'c', ''])", "tf.constant(['d', 'e f g', 'h'])"]),
    ("strings_len", "x", "tf.strings.length(tf.strings.split(x))", ["tf.constant(['a bb', 'ccc'])"]),
    # wave 21: indexing, to_tensor and tf.shape traced
    ("getitem_rows", "x", "(x[0], x[1], x[-1], x[::2], x[::-1], x[1:], x[:0])", [A, C, E]),
    ("getitem_cols", "x", "(x[:, 1:], x[:, -1:], x[:, :-1], x[:, ::2], x[:, 5:], x[0, 1:], x[2, 1:], x[0, 0])",
     [A, C, D]),
    ("getitem_inner", "x", "(x[:, 1:], x[:, :, 0:1], x[0, 1], x[1:], x[0, :, 1:])", [E]),
    ("getitem_uniform_inner", "x", "(x[:, 1:, 0], x[1:, :, ::-1], x[0])",
     ["tf.ragged.constant([[[1., 2], [3, 4]], [], [[5, 6]]], ragged_rank=1)"]),
    ("getitem_tensor", "x, y", "x[y]", ["(%s, tf.constant(2))" % A, "(%s, tf.constant(-3))" % B]),
    ("getitem_ragged_col", "x", "x[:, 0]", [A]),
    ("to_tensor", "x", "(x.to_tensor(), x.to_tensor(-1), x.to_tensor(shape=[2, 5]), x.to_tensor(shape=[4, 2]), "
                      "x.to_tensor(shape=[None, 2]))", [A, C, D]),
    ("to_tensor_rank2", "x", "(x.to_tensor(), x.to_tensor(7), x.to_tensor(shape=[None, 1, 2]))", [E]),
    ("to_tensor_inner", "x", "(x.to_tensor(), x.to_tensor(default_value=[9., 8.]))",
     ["tf.ragged.constant([[[1., 2], [3, 4]], [], [[5, 6]]], ragged_rank=1)"]),
    ("to_tensor_bad_shape", "x", "x.to_tensor(shape=[3, 1, 1])",
     ["tf.ragged.constant([[[1., 2], [3, 4]], [], [[5, 6]]], ragged_rank=1)"]),
    ("to_tensor_empty", "x", "x.to_tensor()", ["R([[], []], dtype=tf.float32)"]),
    ("to_tensor_strings", "x", "(x.to_tensor(), x[1], x[:, 1:])", ["R([['a', 'bc'], ['d']])"]),
    ("to_list", "x", "tf.constant(x.to_list())", [A]),
    ("map_fn", "x", "(tf.map_fn(tf.reduce_sum, x, fn_output_signature=tf.int32), tf.map_fn(lambda r: r * 2, x), "
                    "tf.map_fn(lambda r: r[:1], x, fn_output_signature=tf.RaggedTensorSpec([None], tf.int32)))",
     [A, C]),
    ("map_fn_float", "x", "tf.map_fn(tf.math.reduce_mean, x, fn_output_signature=tf.float32)", [D]),
    ("shape", "x", "(tf.shape(x)[0], tf.constant(tf.shape(x).rank), tf.constant(tf.shape(x).num_row_partitions), tf.shape(x).inner_shape, "
                   "tf.shape(x).row_partitions[0].row_splits(), tf.ones(tf.shape(x), tf.int64), "
                   "tf.zeros(tf.shape(x)), tf.fill(tf.shape(x), 7))", [A, C]),
    ("shape_reshape", "x", "tf.reshape(tf.range(6), tf.shape(x))", [A, B]),
    ("shape_ragged_dim", "x", "tf.shape(x)[1]", [A]),
    ("shape_text", "x", "tf.constant(str(tf.shape(x)))", [A, E,
                                                          "tf.ragged.constant([[[1., 2]], []], ragged_rank=1)"]),
]

# cases whose printed result differs eagerly as in TF: a traced DynamicRaggedShape prints a ragged
# dim's lengths as None
TEXT_DIFFERS_EAGERLY = {"shape_text"}

# input_signature cases: (name, the spec's source, body, calls)
SIGNATURE_CASES = [
    ("max_min", "tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32)",
     "(tf.math.reduce_max(x, axis=-1), tf.math.reduce_min(x, axis=-1))", [A, F, C, "R([[1]], dtype=tf.int64)"]),
    ("sum_mean", "tf.RaggedTensorSpec(shape=[None, None], dtype=tf.float32)",
     "(tf.reduce_sum(x, axis=1), tf.reduce_mean(x, axis=1), tf.reduce_sum(x, axis=0), x * 2.0)",
     ["R([[1., 2.], [], [3.]])", "R([[4.], [5., 6.]])", "R([[1.0]], dtype=tf.float64)"]),
    ("rows3", "tf.RaggedTensorSpec(shape=[3, None], dtype=tf.int32)", "tf.concat([x, tf.reverse(x, [1])], 1)",
     [A, B, F]),
    ("rank3", "tf.RaggedTensorSpec(shape=[None, None, None], dtype=tf.int32)", "x + 1", [E, A]),
    ("rows_unknown", "tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32)",
     "(x[0], x[-1], x.to_tensor(), x[:, 1:], tf.shape(x)[0], tf.ones(tf.shape(x)))", [A, F, C]),
]


def _call(tf, fn, args):
    return fn(*args) if isinstance(args, tuple) else fn(args)


def _text(v):
    return repr(v).replace("\n", " ")


def run(tf, **fn_kwargs):
    """{case: [[printed result or '!! ExceptionClass', trace count], ...]} of every call."""
    R = tf.ragged.constant  # noqa: N806 (the cases' name for it)
    env = {"tf": tf, "R": R}
    out = {}
    for name, params, body, calls in CASES:
        fn = tf.function(eval(f"lambda {params}: {body}", env), **fn_kwargs)
        rows = []
        for c in calls:
            try:
                rows.append([_text(_call(tf, fn, eval(c, env))), fn.experimental_get_tracing_count()])
            except Exception as e:  # noqa: BLE001 - the class is the expected outcome
                rows.append(["!! " + type(e).__name__, fn.experimental_get_tracing_count()])
        out[name] = rows
    for name, spec, body, calls in SIGNATURE_CASES:
        fn = tf.function(eval(f"lambda x: {body}", env), input_signature=[eval(spec, env)], **fn_kwargs)
        rows = []
        for c in calls:
            try:
                rows.append([_text(fn(eval(c, env))), fn.experimental_get_tracing_count()])
            except Exception as e:  # noqa: BLE001
                rows.append(["!! " + type(e).__name__, fn.experimental_get_tracing_count()])
        out["sig_" + name] = rows
    return out
