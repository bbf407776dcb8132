"""The bad-input table: small programs, their inputs, and which op the error must name.

Shared by tests/test_bad_inputs.py (tapeflow, every mode) and
tests/tf_reference/run_tf_bad_inputs.py (real TF 2.21, which writes the
expected outcome of every case to tests/tf_reference/bad_inputs.json).

A case is ``(name, program, inputs, needle)``:
* program: Python source run with ``tf`` (tensorflow or tapeflow) and ``np`` in
  scope. Either one expression (a lambda of the input tensors) or statements
  that define ``f``; objects made there (layers, variables) are made once per mode.
* inputs: NumPy arrays, passed as tensors (so compiled modes see them as symbolic).
* needle: a substring the error message must contain (the op or layer name);
  None for cases where TF returns a value.
"""
import numpy as np

f32, f64, i32, i64 = np.float32, np.float64, np.int32, np.int64


def _a(x, dt=f32):
    return np.asarray(x, dt)


M23 = _a(np.arange(6).reshape(2, 3))          # float32 (2, 3)
M32 = _a(np.arange(6).reshape(3, 2))          # float32 (3, 2)
V3 = _a([1.0, 2.0, 3.0])                      # float32 (3,)
V3D = _a([1.0, 2.0, 3.0], f64)                # float64 (3,)
I3 = _a([1, 2, 3], i32)                       # int32 (3,)
B3 = np.array([True, False, True])
E0 = np.zeros((0,), f32)
E03 = np.zeros((0, 3), f32)
P53 = _a(np.arange(15).reshape(5, 3))         # params (5, 3)

CASES = []
#: tapeflow's primitive behind a TF op where the names differ (error messages name the primitive)
_PRIM = {"subtract": "sub", "multiply": "mul", "divide": "div", "squared_difference": "sub"}


def case(name, program, inputs=(), needle=None):
    CASES.append((name, program, tuple(inputs), needle))


# -- dtype mismatches (TF never converts silently) -------------------------------------------
for op in ["add", "subtract", "multiply", "divide", "maximum", "minimum", "pow", "equal", "less",
           "greater_equal", "squared_difference"]:
    prim = _PRIM.get(op, op)
    case(f"dtype_{op}_f32_f64", f"lambda x, y: tf.math.{op}(x, y)", [V3, V3D], prim)
    case(f"dtype_{op}_f32_i32", f"lambda x, y: tf.math.{op}(x, y)", [V3, I3], prim)
case("dtype_matmul_f32_f64", "lambda x, y: tf.matmul(x, y)", [M23, _a(M32, f64)], "matmul")
case("dtype_concat_f32_i32", "lambda x, y: tf.concat([x, y], 0)", [V3, I3], "concat")
case("dtype_where_branches", "lambda c, x, y: tf.where(c, x, y)", [B3, V3, I3], 'where')
case("dtype_where_float_cond", "lambda c, x, y: tf.where(c, x, y)", [V3, V3, V3], 'where')
case("dtype_operator_add_f32_f64", "lambda x, y: x + y", [V3, V3D], 'add')
case("dtype_operator_mul_i32_f32", "lambda x, y: x * y", [I3, V3], 'mul')
case("dtype_int_tensor_plus_py_float", "lambda x: x + 0.5", [I3], 'add')
case("dtype_exp_int", "lambda x: tf.exp(x)", [I3], "exp")
case("dtype_log_int", "lambda x: tf.math.log(x)", [I3], "log")
case("dtype_sqrt_int", "lambda x: tf.sqrt(x)", [I3], "sqrt")
case("dtype_sigmoid_int", "lambda x: tf.sigmoid(x)", [I3], "sigmoid")
case("dtype_tanh_bool", "lambda x: tf.tanh(x)", [B3], "tanh")
case("dtype_logical_and_float", "lambda x, y: tf.logical_and(x, y)", [V3, V3], "logical_and")
case("dtype_logical_not_int", "lambda x: tf.logical_not(x)", [I3], "logical_not")
case("dtype_bool_plus_bool", "lambda x, y: x + y", [B3, B3], 'add')
case("dtype_bool_times_bool", "lambda x, y: x * y", [B3, B3], None)
case("dtype_neg_bool", "lambda x: -x", [B3], 'neg')
case("dtype_reduce_sum_bool", "lambda x: tf.reduce_sum(x)", [B3], 'reduce_sum')
case("dtype_reduce_max_bool", "lambda x: tf.reduce_max(x)", [B3], 'reduce_max')
case("dtype_floor_int", "lambda x: tf.floor(x)", [I3], "floor")

# -- shapes ----------------------------------------------------------------------------------
case("shape_add_3_4", "lambda x, y: x + y", [V3, _a(np.ones(4))], 'add')
case("shape_add_23_32", "lambda x, y: tf.add(x, y)", [M23, M32], 'add')
case("shape_mul_23_2", "lambda x, y: x * y", [M23, _a([1.0, 2.0])], 'mul')
case("shape_where_cond", "lambda c, x: tf.where(c, x, x)", [np.array([True, False]), M23], 'where')
case("shape_maximum", "lambda x, y: tf.maximum(x, y)", [M23, _a(np.ones(4))], 'maximum')
case("shape_matmul_inner", "lambda x, y: tf.matmul(x, y)", [M23, M23], "matmul")
case("shape_matmul_rank1", "lambda x, y: tf.matmul(x, y)", [V3, V3], "matmul")
case("shape_matmul_batch", "lambda x, y: tf.matmul(x, y)",
     [_a(np.ones((2, 2, 3))), _a(np.ones((3, 3, 2)))], "matmul")
case("shape_reshape_count", "lambda x: tf.reshape(x, (4, 2))", [M23], "reshape")
case("shape_reshape_minus2", "lambda x: tf.reshape(x, (-2, 3))", [M23], "reshape")
case("shape_reshape_two_minus1", "lambda x: tf.reshape(x, (-1, -1))", [M23], "reshape")
case("shape_reshape_minus1_indivisible", "lambda x: tf.reshape(x, (-1, 4))", [M23], "reshape")
case("shape_concat_mismatch", "lambda x, y: tf.concat([x, y], 0)", [M23, M32], "concat")
case("shape_concat_rank", "lambda x, y: tf.concat([x, y], 0)", [M23, V3], "concat")
case("shape_concat_scalars", "lambda x, y: tf.concat([x, y], 0)", [_a(1.0), _a(2.0)], "concat")
case("shape_stack_mismatch", "lambda x, y: tf.stack([x, y])", [M23, M32], "stack")
case("shape_split_indivisible", "lambda x: tf.split(x, 2, axis=1)", [M23], "split")
case("shape_split_sizes", "lambda x: tf.split(x, [1, 1], axis=1)", [M23], "split")
case("shape_squeeze_not1", "lambda x: tf.squeeze(x, 0)", [M23], "squeeze")
case("shape_tile_len", "lambda x: tf.tile(x, [2])", [M23], "tile")
case("shape_pad_rows", "lambda x: tf.pad(x, [[1, 1]])", [M23], "pad")
case("shape_broadcast_to_bad", "lambda x: tf.broadcast_to(x, (2, 4))", [M23], "broadcast_to")
case("shape_broadcast_to_lower_rank", "lambda x: tf.broadcast_to(x, (3,))", [M23], "broadcast_to")
case("shape_softmax_xent_labels", "lambda l, z: tf.nn.softmax_cross_entropy_with_logits(labels=l, logits=z)",
     [M32, M23], 'softmax_cross_entropy_with_logits')
case("shape_sparse_xent_rank", "lambda l, z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=l, logits=z)",
     [_a([[0, 1]], i32), M23], "sparse_softmax_cross_entropy_with_logits")
case("shape_einsum_mismatch", "lambda x, y: tf.einsum('ij,jk->ik', x, y)", [M23, M23], "einsum")
case("shape_tensordot", "lambda x, y: tf.tensordot(x, y, 1)", [M23, M23], 'tensordot')
case("shape_boolean_mask", "lambda x, m: tf.boolean_mask(x, m)", [V3, np.array([True, False])], 'boolean_mask')

# -- axes and permutations (TF never takes them modulo the rank) ----------------------------
for op in ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_logsumexp"]:
    case(f"axis_{op}_2", f"lambda x: tf.{op}(x, axis=2)", [M23], op)
    case(f"axis_{op}_minus3", f"lambda x: tf.{op}(x, axis=-3)", [M23], op)
case("axis_reduce_sum_repeated", "lambda x: tf.reduce_sum(x, axis=[0, 0])", [M23], 'reduce_sum')
case("axis_reduce_sum_scalar_1", "lambda x: tf.reduce_sum(x, axis=1)", [_a(1.0)], "reduce_sum")
case("axis_argmax_2", "lambda x: tf.argmax(x, axis=2)", [M23], "argmax")
case("axis_argmin_minus3", "lambda x: tf.argmin(x, axis=-3)", [M23], "argmin")
case("axis_cumsum_2", "lambda x: tf.cumsum(x, axis=2)", [M23], "cumsum")
case("axis_concat_2", "lambda x, y: tf.concat([x, y], 2)", [M23, M23], "concat")
case("axis_concat_minus3", "lambda x, y: tf.concat([x, y], -3)", [M23, M23], "concat")
case("axis_stack_4", "lambda x, y: tf.stack([x, y], axis=4)", [M23, M23], "stack")
case("axis_unstack_2", "lambda x: tf.unstack(x, axis=2)", [M23], "unstack")
case("axis_expand_dims_3", "lambda x: tf.expand_dims(x, 3)", [M23], "expand_dims")
case("axis_expand_dims_minus4", "lambda x: tf.expand_dims(x, -4)", [M23], "expand_dims")
case("axis_squeeze_2", "lambda x: tf.squeeze(x, 2)", [_a(np.ones((2, 1)))], "squeeze")
case("axis_gather_2", "lambda p: tf.gather(p, [0], axis=2)", [M23], "gather")
case("axis_gather_minus3", "lambda p: tf.gather(p, [0], axis=-3)", [M23], "gather")
case("axis_reverse_2", "lambda x: tf.reverse(x, [2])", [M23], "reverse")
case("axis_split_2", "lambda x: tf.split(x, 1, axis=2)", [M23], "split")
case("axis_softmax_2", "lambda x: tf.nn.softmax(x, axis=2)", [M23], "softmax")
case("axis_log_softmax_2", "lambda x: tf.nn.log_softmax(x, axis=2)", [M23], "log_softmax")
case("axis_one_hot_3", "lambda i: tf.one_hot(i, 3, axis=3)", [I3], "one_hot")
case("axis_sort_2", "lambda x: tf.sort(x, axis=2)", [M23], "sort")
case("perm_transpose_1_2", "lambda x: tf.transpose(x, [1, 2])", [M23], "transpose")
case("perm_transpose_0_0", "lambda x: tf.transpose(x, [0, 0])", [M23], "transpose")
case("perm_transpose_short", "lambda x: tf.transpose(x, [0])", [M23], "transpose")
case("perm_transpose_negative", "lambda x: tf.transpose(x, [-1, 0])", [M23], "transpose")
case("perm_transpose_long", "lambda x: tf.transpose(x, [0, 1, 2])", [M23], "transpose")

# -- indices and labels --------------------------------------------------------------------
case("index_gather_minus1", "lambda p: tf.gather(p, [-1])", [P53], "gather")
case("index_gather_5", "lambda p: tf.gather(p, [5])", [P53], "gather")
case("index_gather_tensor_minus1", "lambda p, i: tf.gather(p, i)", [P53, _a([0, -1], i32)], "gather")
case("index_gather_tensor_big", "lambda p, i: tf.gather(p, i)", [P53, _a([[0], [7]], i64)], "gather")
case("index_gather_axis1_3", "lambda p: tf.gather(p, [3], axis=1)", [P53], "gather")
case("index_gather_axis1_minus1", "lambda p: tf.gather(p, [-1], axis=1)", [P53], "gather")
case("index_gather_float", "lambda p: tf.gather(p, [0.0])", [P53], "gather")
case("index_gather_ok_repeat", "lambda p: tf.gather(p, [4, 0, 4])", [P53], None)
case("index_gather_nd_minus1", "lambda p: tf.gather_nd(p, [[-1]])", [P53], "gather_nd")
case("index_gather_nd_5", "lambda p: tf.gather_nd(p, [[5]])", [P53], "gather_nd")
case("index_gather_nd_col", "lambda p: tf.gather_nd(p, [[0, 3]])", [P53], "gather_nd")
case("index_gather_nd_too_long", "lambda p: tf.gather_nd(p, [[0, 0, 0]])", [P53], "gather_nd")
case("index_gather_nd_ok", "lambda p: tf.gather_nd(p, [[4, 2], [0, 0]])", [P53], None)
case("index_scatter_nd_minus1", "lambda u: tf.scatter_nd([[-1]], u, [4])", [_a([1.0])], "scatter_nd")
case("index_scatter_nd_4", "lambda u: tf.scatter_nd([[4]], u, [4])", [_a([1.0])], "scatter_nd")
case("index_scatter_nd_ok_dup", "lambda u: tf.scatter_nd([[1], [1]], u, [4])", [_a([1.0, 2.0])], None)
case("index_tensor_scatter_add_minus1", "lambda t: tf.tensor_scatter_nd_add(t, [[-1]], [1.0])", [V3],
     "tensor_scatter_nd_add")
case("index_tensor_scatter_update_3", "lambda t: tf.tensor_scatter_nd_update(t, [[3]], [1.0])", [V3],
     "tensor_scatter_nd_update")
case("index_one_hot_minus1", "lambda i: tf.one_hot(i, 3)", [_a([0, -1], i32)], None)
case("index_one_hot_big", "lambda i: tf.one_hot(i, 3)", [_a([1, 5], i32)], None)
case("index_one_hot_float", "lambda i: tf.one_hot(i, 3)", [_a([0.0, 1.0])], "one_hot")
case("index_one_hot_ok_int64", "lambda i: tf.one_hot(i, 4)", [_a([3, 0], i64)], None)
case("index_sparse_xent_minus1",
     "lambda l, z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=l, logits=z)",
     [_a([-1, 0], i32), M23], "sparse_softmax_cross_entropy_with_logits")
case("index_sparse_xent_3",
     "lambda l, z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=l, logits=z)",
     [_a([0, 3], i32), M23], "sparse_softmax_cross_entropy_with_logits")
case("index_sparse_xent_float",
     "lambda l, z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=l, logits=z)",
     [_a([0.0, 1.0]), M23], "sparse_softmax_cross_entropy_with_logits")
case("index_embedding_minus1", "emb = tf.keras.layers.Embedding(5, 2)\nf = lambda i: emb(i)",
     [_a([0, -1], i32)], "embedding")
case("index_embedding_5", "emb = tf.keras.layers.Embedding(5, 2)\nf = lambda i: emb(i)",
     [_a([[5]], i32)], "embedding")
case("index_getitem_3", "lambda x: x[3]", [V3], 'getitem')
case("index_getitem_minus4", "lambda x: x[-4]", [V3], 'getitem')
case("index_getitem_ok_minus1", "lambda x: x[-1]", [V3], None)
case("index_getitem_too_many", "lambda x: x[0, 0]", [V3], 'getitem')
case("index_getitem_slice_ok", "lambda x: x[1:10]", [V3], None)

# -- empty tensors: TF returns the reduction's identity, or raises where there is none ---------
case("empty_reduce_mean", "lambda x: tf.reduce_mean(x)", [E0], None)
case("empty_reduce_mean_axis0", "lambda x: tf.reduce_mean(x, axis=0)", [E03], None)
case("empty_reduce_sum", "lambda x: tf.reduce_sum(x)", [E0], None)
case("empty_reduce_prod", "lambda x: tf.reduce_prod(x)", [E0], None)
case("empty_reduce_max_f32", "lambda x: tf.reduce_max(x)", [E0], None)
case("empty_reduce_min_f32", "lambda x: tf.reduce_min(x)", [E0], None)
case("empty_reduce_max_axis0", "lambda x: tf.reduce_max(x, axis=0)", [E03], None)
case("empty_reduce_max_i32", "lambda x: tf.reduce_max(x)", [np.zeros((0,), i32)], None)
case("empty_reduce_min_i32", "lambda x: tf.reduce_min(x)", [np.zeros((0,), i32)], None)
case("empty_reduce_logsumexp", "lambda x: tf.reduce_logsumexp(x)", [E0], None)
case("empty_argmax", "lambda x: tf.argmax(x)", [E0], "argmax")
case("empty_argmin_axis0", "lambda x: tf.argmin(x, axis=0)", [E03], "argmin")
case("empty_softmax", "lambda x: tf.nn.softmax(x)", [E0], None)
case("empty_softmax_rows", "lambda x: tf.nn.softmax(x)", [np.zeros((2, 0), f32)], None)
case("empty_matmul", "lambda x, y: tf.matmul(x, y)", [np.zeros((2, 0), f32), np.zeros((0, 3), f32)], None)
case("empty_concat", "lambda x, y: tf.concat([x, y], 0)", [E03, M23], None)
case("empty_gather", "lambda p, i: tf.gather(p, i)", [P53, np.zeros((0,), i32)], None)
case("empty_gather_params", "lambda p: tf.gather(p, [0])", [E03], "gather")
case("empty_cumsum", "lambda x: tf.cumsum(x)", [E0], None)
case("empty_reduce_std", "lambda x: tf.math.reduce_std(x)", [E0], None)

# -- integers: division, overflow, saturation -------------------------------------------------
case("int_floordiv_zero", "lambda x, y: x // y", [I3, _a([1, 0, 1], i32)], "floordiv")
case("int_floordiv_zero_fn", "lambda x, y: tf.math.floordiv(x, y)", [I3, _a([0, 1, 1], i32)], "floordiv")
case("int64_floordiv_zero", "lambda x, y: x // y", [_a([4], i64), _a([0], i64)], "floordiv")
case("int_mod_zero", "lambda x, y: x % y", [I3, _a([1, 0, 1], i32)], "mod")
case("int_floormod_zero_fn", "lambda x, y: tf.math.floormod(x, y)", [I3, _a([0, 1, 1], i32)], "mod")
case("int_floordiv_py_zero", "lambda x: x // 0", [I3], "floordiv")
case("float_floordiv_zero", "lambda x, y: x // y", [V3, _a([1, 0, 1])], None)
case("float_div_zero", "lambda x, y: x / y", [V3, _a([1, 0, -1])], None)
case("int_truediv_collatz", "lambda a: a / 2", [_a(12, i32)], None)
case("int_truediv_int32", "lambda x, y: x / y", [I3, _a([2, 4, 3], i32)], None)
case("int_truediv_int64", "lambda x, y: tf.divide(x, y)", [_a([7], i64), _a([2], i64)], None)
case("int_truediv_int8", "lambda x, y: x / y", [_a([7], np.int8), _a([2], np.int8)], None)
case("int_truediv_int16", "lambda x, y: tf.math.truediv(x, y)", [_a([7], np.int16), _a([2], np.int16)], None)
case("int_truediv_uint8", "lambda x, y: x / y", [_a([7], np.uint8), _a([2], np.uint8)], None)
case("int_truediv_by_zero", "lambda x, y: x / y", [I3, _a([0, 1, 0], i32)], None)
case("int_truediv_mixed", "lambda x, y: x / y", [I3, _a([2, 2, 2], i64)], 'div')
case("int_truediv_py_float", "lambda x: x / 2.5", [I3], 'div')
case("saturate_cast_int32", "lambda x: tf.saturate_cast(x, tf.int32)", [_a([3e9, -3e9, 1.5])], None)
case("saturate_cast_int32_f64", "lambda x: tf.saturate_cast(x, tf.int32)", [_a([3e9, -3e9, 2147483647.0], f64)], None)
case("saturate_cast_uint8", "lambda x: tf.saturate_cast(x, tf.uint8)", [_a([-5.0, 300.0, 7.0])], None)
case("saturate_cast_int8_from_i32", "lambda x: tf.saturate_cast(x, tf.int8)", [_a([-500, 500, 3], i32)], None)
case("variable_assign_add_int_overflow", "v = tf.Variable(np.int32(0))\ndef f():\n    v.assign_add(2**40)\n    return v.read_value()", [], "add")
case("variable_assign_py_int_overflow",
     "v = tf.Variable(np.int32(0))\ndef f():\n    v.assign(2**40)\n    return v.read_value()", [], "assign")
case("variable_assign_dtype", "v = tf.Variable(np.float32(0))\ndef f(x):\n    v.assign(x)\n    return v.read_value()",
     [_a(1.0, f64)], "assign")
case("variable_assign_shape", "v = tf.Variable(np.zeros(3, np.float32))\ndef f(x):\n    v.assign(x)\n    return v.read_value()",
     [M23], "assign")
case("int_pow_negative", "lambda x: x ** -1", [I3], 'pow')
case("int32_add_py_big", "lambda x: x + 2**40", [I3], 'add')
case("constant_int32_overflow", "lambda: tf.constant(2**40, tf.int32)", [], 'constant')
case("int_abs_ok", "lambda x: tf.abs(x)", [_a([-3, 2], i32)], None)

# -- non-tensor arguments ----------------------------------------------------------------------
case("nontensor_add_str", "lambda x: tf.add(x, 'a')", [V3], 'add')
case("nontensor_exp_str", "lambda x: tf.exp('a')", [V3], 'exp')
case("nontensor_matmul_none", "lambda x: tf.matmul(x, None)", [M23], 'matmul')
case("nontensor_exp_none", "lambda x: tf.exp(None)", [V3], 'exp')
case("nontensor_reduce_axis_str", "lambda x: tf.reduce_sum(x, axis='a')", [M23], 'reduce_sum')
case("nontensor_reshape_str", "lambda x: tf.reshape(x, 'ab')", [M23], 'reshape')
case("nontensor_add_object", "lambda x: x + object()", [V3], 'add')
case("nontensor_mixed_list", "lambda x: tf.add(x, [1.0, 'a', 2.0])", [V3], 'add')
case("nontensor_dense_str", "d = tf.keras.layers.Dense(2)\nf = lambda x: d('abc')", [V3], "dense")
case("nontensor_one_hot_depth_str", "lambda i: tf.one_hot(i, 'x')", [I3], "one_hot")

# -- sizes that would not fit in memory: fail at once, before allocating or looping -------------
case("huge_tile", "lambda x: tf.tile(x, [2**40])", [V3], "tile")
case("huge_tile_2d", "lambda x: tf.tile(x, [2**20, 2**20])", [M23], "tile")
case("huge_broadcast_reduce", "lambda x: tf.reduce_sum(tf.broadcast_to(x, [2**40, 3]))", [V3], "broadcast_to")
case("huge_zeros", "lambda x: x + tf.zeros([2**40])", [_a(1.0)], "zeros")
case("huge_ones_2d", "lambda x: x + tf.ones([2**20, 2**20])", [_a(1.0)], "ones")
case("huge_fill", "lambda x: x + tf.fill([2**40], 1.0)", [_a(1.0)], "fill")
case("huge_broadcast_add", "lambda x, y: tf.reshape(x, [-1, 1]) + tf.broadcast_to(y, [2**40])",
     [V3, _a(1.0)], "broadcast_to")

# -- arguments TF's kernels and layers check (a NumPy-based op would slice, wrap or truncate) ---
case("range_delta_zero", "lambda: tf.range(0, 10, 0)", [], "range")
case("range_start_after_limit", "lambda: tf.range(5, 0)", [], "range")
case("range_negative_delta_ok", "lambda: tf.range(5, 0, -2)", [], None)
case("one_hot_negative_depth", "lambda i: tf.one_hot(i, -1)", [I3], "one_hot")
case("top_k_k_too_big", "lambda x: tf.math.top_k(x, k=5).values", [V3], "top_k")
case("top_k_k_negative", "lambda x: tf.math.top_k(x, k=-1).values", [V3], "top_k")
case("unstack_wrong_num", "lambda x: tf.unstack(x, num=5)", [M23], "unstack")
case("tile_negative_multiple", "lambda x: tf.tile(x, [-1])", [V3], "tile")
case("pad_negative", "lambda x: tf.pad(x, [[-1, 0]])", [V3], "pad")
case("zeros_negative_dim", "lambda x: x + tf.zeros([-1])", [_a(1.0)], "zeros")
case("fill_negative_dim", "lambda x: x + tf.fill([2, -1], 1.0)", [_a(1.0)], "fill")
case("eye_negative", "lambda x: x + tf.eye(-1)", [_a(1.0)], "eye")
case("categorical_negative_samples", "lambda x: tf.random.categorical(x, -1)", [M23], "categorical")
case("shuffle_scalar", "lambda x: tf.random.shuffle(x)", [_a(1.0)], None)
case("clip_by_value_min_above_max", "lambda x: tf.clip_by_value(x, 3.0, 2.0)", [_a([1.0, 2.5, 5.0])], None)
case("clip_by_value_bounds_enlarge", "lambda x, m: tf.clip_by_value(x, m, 10.0)", [V3, M23], "clip_by_value")
case("clip_by_norm_negative", "lambda x: tf.clip_by_norm(x, -1.0)", [V3], None)
case("layer_dense_float_units", "def f(x):\n    return tf.keras.layers.Dense(2.5)(x)", [M23], "Dense")
case("layer_embedding_zero_input_dim", "def f(i):\n    return tf.keras.layers.Embedding(0, 4)(i)", [I3], "Embedding")
case("layer_embedding_zero_output_dim", "def f(i):\n    return tf.keras.layers.Embedding(5, 0)(i)", [I3], "Embedding")
case("layer_leaky_relu_negative_slope", "def f(x):\n    return tf.keras.layers.LeakyReLU(negative_slope=-1.0)(x)",
     [V3], "LeakyReLU")
case("layer_dropout_rate_one", "def f(x):\n    return tf.keras.layers.Dropout(1.0)(x, training=True)", [M23], None)
case("constant_python_float_to_int", "lambda: tf.constant(1.5, dtype=tf.int32)", [], "int32")
case("constant_python_whole_float_to_int", "lambda: tf.constant([1, 2.0], dtype=tf.int64)", [], "int64")
case("index_python_list_is_a_tuple", "lambda x: x[[0, 1]]", [M23], None)
case("layer_dense_int_input", "d = tf.keras.layers.Dense(2, kernel_initializer='ones')\nf = lambda x: d(x)",
     [_a([[1, 2, 3], [0, 1, 0]], i32)], None)
case("layer_dense_rank1_input", "def f(x):\n    return tf.keras.layers.Dense(2)(x)", [V3], "Dense")
YT41 = _a([[1.0], [2.0], [3.0], [4.0]])
YP4 = _a([1.5, 2.0, 2.0, 5.0])
case("loss_mse_labels_n1_preds_n", "lambda a, b: tf.keras.losses.MeanSquaredError()(a, b)", [YT41, YP4], None)
case("loss_mse_none_labels_n1_preds_n", "lambda a, b: tf.keras.losses.MeanSquaredError(reduction='none')(a, b)",
     [YT41, YP4], None)
case("loss_bce_labels_n1_preds_n", "lambda a, b: tf.keras.losses.BinaryCrossentropy()(a / 5, b / 6)", [YT41, YP4], None)
case("metric_mse_labels_n1_preds_n",
     "m = tf.keras.metrics.MeanSquaredError()\ndef f(a, b):\n    m.reset_state()\n    m.update_state(a, b)\n"
     "    return m.result()", [YT41, YP4], None)
case("metric_accuracy_labels_n1_preds_n",
     "m = tf.keras.metrics.Accuracy()\ndef f(a, b):\n    m.reset_state()\n    m.update_state(a, b)\n"
     "    return m.result()", [YT41, YP4], None)
case("loss_bce_shape_mismatch", "lambda a, b: tf.keras.losses.BinaryCrossentropy()(a, b)",
     [_a([0.0, 1.0]), _a([0.2, 0.3, 0.4])], "binary_crossentropy")
case("sigmoid_ce_shape_mismatch", "lambda a, b: tf.nn.sigmoid_cross_entropy_with_logits(labels=a, logits=b)",
     [YT41, YP4], "sigmoid_cross_entropy_with_logits")
case("tape_never_entered", "def f(x):\n    return tf.GradientTape().gradient(x * x, x)", [V3], "GradientTape")
case("layer_gaussian_noise_negative", "def f(x):\n    return tf.keras.layers.GaussianNoise(-1.0)(x)", [V3],
     "GaussianNoise")
case("regularizer_l2_negative", "def f(x):\n    return tf.keras.regularizers.L2(-1.0)(x)", [V3], "l2")
case("slice_size_past_end", "lambda x: tf.slice(x, [2], [5])", [V3], "slice")
case("sort_bad_direction", "lambda x: tf.sort(x, direction='UP')", [V3], "sort")
case("tensorshape_negative_dim", "lambda x: tf.reshape(x, tf.TensorShape([3, -1]))", [V3], "TensorShape")
case("variable_shape_incompatible", "def f(x):\n    return tf.Variable(1.0, shape=(2,)) + x", [V3], "Variable")
case("optimizer_float64_gradient",
     "v = tf.Variable(np.zeros(3, np.float32))\nopt = tf.keras.optimizers.SGD(1.0)\ndef f(g):\n"
     "    opt.apply_gradients([(g, v)])\n    return v.read_value()", [V3D], None)
case("repeat_per_entry", "lambda x: tf.repeat(x, [1, 2, 3])", [I3], None)
case("repeat_wrong_count", "lambda x: tf.repeat(x, [1, 2])", [I3], "repeat")
case("linalg_inv_not_square", "lambda x: tf.linalg.inv(x)", [M23], "inv")
case("linalg_inv_singular", "lambda x: tf.linalg.inv(x)", [_a([[1.0, 2.0], [2.0, 4.0]])], "invertible")

# -- values TF defines where NumPy's answer differs (no error either way) ----------------------
NAN, INF = np.nan, np.inf
case("argmax_skips_nan", "lambda x: tf.math.argmax(x)", [_a([1.0, NAN, 3.0])], None)
case("argmin_skips_nan", "lambda x: tf.math.argmin(x)", [_a([NAN, 3.0, 1.0])], None)
case("argmax_rows_with_nan", "lambda x: tf.math.argmax(x, axis=1)", [_a([[NAN, 1.0], [2.0, NAN]])], None)
case("argmax_all_nan", "lambda x: tf.math.argmax(x)", [_a([NAN, NAN])], None)
case("floordiv_float_inf", "lambda x: tf.math.floordiv(x, -1.5)", [_a([INF, -INF, 3.0])], None)
case("floordiv_float_rounding", "lambda x: x // 0.1", [_a([1.0, -1.0])], None)
case("one_hot_int_on_value", "lambda i: tf.one_hot(i, 4, on_value=5, off_value=-1)", [I3], None)
case("linspace_int_bounds", "lambda: tf.linspace(1, 3, 3)", [], None)
case("image_flip_int", "lambda x: tf.image.flip_left_right(x)", [_a([[[1], [2]], [[3], [4]]], i32)], None)
case("hard_sigmoid_keras3", "lambda x: tf.keras.activations.hard_sigmoid(x)", [_a([-2.5, -0.5, 0.0, 1.5, 4.0])], None)
case("relu_slope_cap_threshold",
     "lambda x: tf.keras.activations.relu(x, negative_slope=0.1, max_value=1.0, threshold=0.5)",
     [_a([-2.5, -0.5, 0.5, 1.5, INF, -INF])], None)
P2 = _a([[0.3, 0.7], [0.6, 0.4]])
case("sparse_ce_ignore_class_mean", "lambda y, p: tf.keras.losses.SparseCategoricalCrossentropy(ignore_class=1)(y, p)",
     [_a([1, 0], i32), P2], None)
case("sparse_ce_ignore_class_weighted",
     "lambda y, p, w: tf.keras.losses.SparseCategoricalCrossentropy(ignore_class=1)(y, p, sample_weight=w)",
     [_a([[1], [0]], i32), P2, _a([1.0, 0.5])], None)
case("sparse_ce_ignore_class_all", "lambda y, p: tf.keras.losses.SparseCategoricalCrossentropy(ignore_class=1)(y, p)",
     [_a([1, 1], i32), P2], None)
case("divide_no_nan", "lambda x, y: tf.math.divide_no_nan(x, y)", [_a([1.0, 0.0, INF, 3.0]), _a([0.0, 0.0, 0.0, 2.0])],
     None)
case("pad_reflect", "lambda x: tf.pad(x, [[1, 1], [1, 1]], mode='REFLECT')", [M23], None)
case("pad_symmetric", "lambda x: tf.pad(x, [[0, 0], [2, 2]], mode='SYMMETRIC')", [M23], None)
case("pad_reflect_too_wide", "lambda x: tf.pad(x, [[2, 0], [0, 0]], mode='REFLECT')", [M23], "pad")
case("variable_slice_assign",
     "v = tf.Variable(np.zeros((3, 2), np.float32))\ndef f(x):\n    v[1].assign(x)\n    v[0, 1].assign(5.0)\n"
     "    v[:, 0].assign(v[:, 0] - 1.0)\n    return v.read_value()", [_a([1.0, 2.0])], None)
case("variable_slice_assign_tensor_index",
     "v = tf.Variable(np.zeros((3, 2), np.float32))\np = tf.Variable(2)\ndef f(x):\n    v[p].assign(x)\n"
     "    p.assign((p + 1) % 3)\n    v[p].assign(x * 2.0)\n    return v.read_value()", [_a([1.0, 2.0])], None)
case("variable_slice_assign_out_of_range", "v = tf.Variable(np.zeros((3, 2), np.float32))\ndef f(x):\n"
     "    v[5].assign(x)\n    return v.read_value()", [_a([1.0, 2.0])], "getitem")
case("tensor_assign", "def f(x):\n    y = x * 2.0\n    y.assign(x)\n    return y", [V3], "assign")

# -- NumPy operands take the dtype of their tensor peers (TF converts them) ---------------------
case("numpy_operand_float64_array", "lambda x: x * np.array([2.0, 3.0, 4.0])", [V3], None)
case("numpy_operand_int64_scalar", "lambda x: x + np.int64(2)", [I3], None)
case("numpy_operand_int_array_to_float", "lambda x: x * np.arange(3)", [V3], None)
case("numpy_operand_reflected", "lambda x: np.float32(2.0) - x", [I3], None)
case("numpy_operand_matmul", "lambda x: tf.matmul(x, np.ones((3, 2)))", [M23], None)
case("numpy_operand_concat", "lambda x: tf.concat([x, np.zeros(3)], 0)", [V3], None)
case("numpy_operand_compare", "lambda x: x < np.array([2, 2, 2])", [V3], None)
case("numpy_operand_int_overflow", "lambda x: x + np.int64(2**40)", [I3], "add")
case("numpy_operand_fraction_to_int", "lambda x: x * np.array([1.5, 2.0, 3.0])", [I3], "mul")
case("roll_static", "lambda x: tf.roll(x, 1, 1)", [M23], None)
case("roll_two_axes", "lambda x: tf.roll(x, [1, -4], [0, 1])", [M23], None)
case("roll_tensor_shift", "lambda x, s: tf.roll(x, s, 1)", [M23, _a(-1, i32)], None)
case("roll_shape_mismatch", "lambda x: tf.roll(x, [1, 2], [0])", [M23], "roll")
case("math_l2_normalize", "lambda x: tf.math.l2_normalize(x, axis=1)", [M23], None)

# -- branch keras17: Keras losses, metrics, optimizers (values and errors against TF 2.21) -----
YB4 = _a([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])          # binary labels (4, 2)
YS4 = _a([[-1.0, 1.0], [1.0, -1.0], [0.5, 2.0], [-1.0, -1.0]])     # labels not all 0/1
PR4 = _a([[0.3, -1.2], [2.0, 0.1], [-0.4, 0.9], [1.5, -0.7]])       # scores (4, 2)
PP4 = _a([[0.2, 0.8], [0.9, 0.1], [0.0, 1.0], [0.5, 0.5]])          # probabilities (4, 2)
case("keras17_kld_zero_negative_labels", "lambda a, b: tf.keras.losses.KLDivergence()(a, b)",
     [_a([[0.0, 1.0], [-0.5, 1.5], [0.3, 0.7], [1.0, 0.0]]), PP4], None)
case("keras17_kld_sum_weighted", "lambda a, b, w: tf.keras.losses.KLDivergence(reduction='sum')(a, b, sample_weight=w)",
     [PP4[::-1].copy(), PP4, _a([1.0, 0.0, 2.0, 0.5])], None)
case("keras17_kld_shape_mismatch", "lambda a, b: tf.keras.losses.kld(a, b)", [M23, M32], "div")
case("keras17_cosine_zero_vector", "lambda a, b: tf.keras.losses.cosine_similarity(a, b)",
     [_a([[0.0, 0.0], [1.0, 2.0], [3.0, -1.0], [0.0, 1.0]]), PR4], None)
case("keras17_cosine_axis0", "lambda a, b: tf.keras.losses.CosineSimilarity(axis=0, reduction='none')(a, b)",
     [YS4, PP4], None)
case("keras17_hinge_binary_labels", "lambda a, b: tf.keras.losses.hinge(a, b)", [YB4, PR4], None)
case("keras17_hinge_signed_labels", "lambda a, b: tf.keras.losses.Hinge()(a, b)", [YS4, PR4], None)
case("keras17_squared_hinge_binary", "lambda a, b: tf.keras.losses.SquaredHinge(reduction='none')(a, b)",
     [YB4, PR4], None)
case("keras17_categorical_hinge", "lambda a, b: tf.keras.losses.CategoricalHinge()(a, b)", [YB4, PR4], None)
case("keras17_poisson_zero_pred", "lambda a, b: tf.keras.losses.poisson(a, b)", [YB4 * 3.0, PP4], None)
case("keras17_poisson_int_labels", "lambda a, b: tf.keras.losses.Poisson()(a, b)",
     [_a([[1, 0], [2, 3], [0, 0], [5, 1]], i32), PP4], None)
case("keras17_precision_top_k",
     "m = tf.keras.metrics.Precision(top_k=1)\ndef f(a, b):\n    m.reset_state()\n    m.update_state(a, b)\n"
     "    return m.result()", [YB4, PP4], None)
case("keras17_recall_thresholds_weighted",
     "m = tf.keras.metrics.Recall(thresholds=[0.0, 0.5, 0.9])\ndef f(a, b, w):\n    m.reset_state()\n"
     "    m.update_state(a, b, sample_weight=w)\n    return m.result()", [YB4, PP4, _a([1.0, 2.0, 0.0, 0.5])], None)
case("keras17_auc_roc_small",
     "m = tf.keras.metrics.AUC(num_thresholds=7)\ndef f(a, b):\n    m.reset_state()\n    m.update_state(a, b)\n"
     "    return m.result()", [YB4, PP4], None)
case("keras17_auc_pr_interpolation",
     "m = tf.keras.metrics.AUC(curve='PR')\ndef f(a, b):\n    m.reset_state()\n    m.update_state(a, b)\n"
     "    return m.result()", [YB4, PP4], None)
case("keras17_auc_no_positives",
     "m = tf.keras.metrics.AUC()\ndef f(a, b):\n    m.reset_state()\n    m.update_state(a, b)\n"
     "    return m.result()", [YB4 * 0.0, PP4], None)
case("keras17_top_k_ties",
     "m = tf.keras.metrics.TopKCategoricalAccuracy(k=1)\ndef f(a, b):\n    m.reset_state()\n    m.update_state(a, b)\n"
     "    return m.result()", [YB4, PP4], None)
case("keras17_sparse_top_k_out_of_range",
     "m = tf.keras.metrics.SparseTopKCategoricalAccuracy(k=1)\ndef f(a, b):\n    m.reset_state()\n"
     "    m.update_state(a, b)\n    return m.result()", [_a([1, 0, 7, -1], i32), PP4], None)
case("keras17_sparse_top_k_nan_score",
     "m = tf.keras.metrics.SparseTopKCategoricalAccuracy(k=2)\ndef f(a, b):\n    m.reset_state()\n"
     "    m.update_state(a, b)\n    return m.result()",
     [_a([1, 0, 1, 0], i32), _a([[np.nan, 0.5], [0.1, 0.5], [np.inf, 0.2], [0.3, 0.1]])], None)
for _opt in ("Nadam", "Adamax", "Adadelta"):
    case(f"keras17_{_opt.lower()}_three_steps",
         f"v = tf.Variable(np.array([1.0, -2.0, 0.5], np.float32))\nopt = tf.keras.optimizers.{_opt}(0.1)\n"
         "def f(g):\n    for _ in range(3):\n        opt.apply_gradients([(g * v, v)])\n    return v.read_value()",
         [_a([0.5, -1.0, 3.0])], None)
case("keras17_adadelta_gradient_shape",
     "v = tf.Variable(np.zeros(3, np.float32))\nopt = tf.keras.optimizers.Adadelta(0.1)\ndef f(g):\n"
     "    opt.apply_gradients([(g, v)])\n    return v.read_value()", [M23], "Adadelta")
case("keras17_prelu_shared_axes",
     "p = tf.keras.layers.PReLU(shared_axes=[1], alpha_initializer=tf.keras.initializers.Constant(0.2))\n"
     "f = lambda x: p(x)", [_a([[[-1.0, 2.0], [-3.0, -0.5]], [[0.0, -2.0], [4.0, -1.0]]])], None)
# (pixel 255 would give 0 exactly, where the numba tier's FMA gives 6e-8: no relative tolerance holds)
case("keras17_rescaling_int_input", "r = tf.keras.layers.Rescaling(1.0 / 255, offset=-1.0)\nf = lambda x: r(x)",
     [_a([[0, 128, 200]], np.uint8)], None)
case("keras17_normalization_zero_variance",
     "n = tf.keras.layers.Normalization(mean=[1.0, 2.0, 0.0], variance=[4.0, 0.0, 1e-20])\nf = lambda x: n(x)",
     [M23], None)
case("keras17_repeat_vector_rank3", "r = tf.keras.layers.RepeatVector(2)\nf = lambda x: r(x)",
     [_a(np.ones((2, 3, 4)))], "repeat_vector")
case("keras17_permute_rank_mismatch", "p = tf.keras.layers.Permute((2, 1))\nf = lambda x: p(x)",
     [_a(np.ones((2, 3, 4, 5)))], "permute")
# -- branch ops17 (wave 17): unique, segment ops, bincount, confusion_matrix, control flow, debugging ----
SEG_D = _a([1.0, 2.0, 3.0, 4.0, 5.0])
case("unique_values", "lambda x: tf.unique(x)", [_a([3, 1, 3, 2], i32)], None)
case("unique_with_counts_nan", "lambda x: tf.unique_with_counts(x)", [_a([3.0, np.nan, 3.0, np.nan, -0.0, 0.0])],
     None)
case("unique_2d", "lambda x: tf.unique(x)", [M23], "unique")
case("unique_out_idx_float", "lambda x: tf.unique(x, out_idx=tf.float32)", [V3], "unique")
case("segment_sum_values", "lambda d, i: tf.math.segment_sum(d, i)", [SEG_D, _a([0, 0, 2, 2, 3], i32)], None)
case("segment_max_empty_segment", "lambda d, i: tf.math.segment_max(d, i)", [SEG_D, _a([0, 0, 2, 2, 3], i64)], None)
case("segment_mean_int", "lambda d, i: tf.math.segment_mean(d, i)", [_a([1, 2, 4], i32), _a([0, 0, 1], i32)], None)
case("segment_sum_unsorted_ids", "lambda d, i: tf.math.segment_sum(d, i)", [SEG_D, _a([0, 1, 0, 2, 3], i32)],
     "segment_sum")
case("segment_sum_negative_id", "lambda d, i: tf.math.segment_sum(d, i)", [SEG_D, _a([-1, 0, 0, 2, 3], i32)],
     "segment_sum")
case("segment_sum_ids_length", "lambda d, i: tf.math.segment_sum(d, i)", [SEG_D, _a([0, 0, 2, 2], i32)],
     "segment_sum")
case("segment_sum_float_ids", "lambda d, i: tf.math.segment_sum(d, i)", [SEG_D, SEG_D], "segment_sum")
case("segment_sum_2d_ids", "lambda d, i: tf.math.segment_sum(d, i)", [_a(np.ones((2, 2))), _a([[0, 0], [1, 1]], i32)],
     "segment_sum")
case("unsorted_segment_max_fill", "lambda d, i: tf.math.unsorted_segment_max(d, i, 4)",
     [SEG_D, _a([0, 3, -1, 0, 3], i32)], None)
case("unsorted_segment_min_int_fill", "lambda d, i: tf.math.unsorted_segment_min(d, i, 2)",
     [_a([1, 2], i32), _a([0, 0], i32)], None)
case("unsorted_segment_prod_2d_ids", "lambda d, i: tf.math.unsorted_segment_prod(d, i, 3)",
     [M23 + 1, _a([[0, 1, 0], [2, 2, -1]], i32)], None)
case("unsorted_segment_mean_int", "lambda d, i: tf.math.unsorted_segment_mean(d, i, 3)",
     [_a([1, 2], i32), _a([0, 0], i32)], None)
case("unsorted_segment_sqrt_n", "lambda d, i: tf.math.unsorted_segment_sqrt_n(d, i, 4)",
     [SEG_D, _a([0, 3, -1, 0, 3], i32)], None)
case("unsorted_segment_sum_id_too_big", "lambda d, i: tf.math.unsorted_segment_sum(d, i, 4)",
     [SEG_D, _a([0, 1, 5, 0, 0], i32)], "unsorted_segment_sum")
case("unsorted_segment_sum_negative_num", "lambda d, i: tf.math.unsorted_segment_sum(d, i, -1)",
     [SEG_D, _a([0, 1, 1, 0, 0], i32)], "unsorted_segment_sum")
case("unsorted_segment_sum_shape_prefix", "lambda d, i: tf.math.unsorted_segment_sum(d, i, 3)",
     [M32, _a([1, 0], i32)], "unsorted_segment_sum")
case("unsorted_segment_sum_bool_data", "lambda d, i: tf.math.unsorted_segment_sum(d, i, 2)",
     [np.array([True, False]), _a([0, 1], i32)], "unsorted_segment_sum")
case("unsorted_segment_sqrt_n_int", "lambda d, i: tf.math.unsorted_segment_sqrt_n(d, i, 2)",
     [_a([1, 2], i32), _a([0, 0], i32)], "unsorted_segment_sqrt_n")
case("bincount_values", "lambda a: tf.math.bincount(a, minlength=8)", [_a([1, 1, 2, 5], i32)], None)
case("bincount_maxlength_weights", "lambda a, w: tf.math.bincount(a, weights=w, maxlength=3)",
     [_a([1, 1, 2, 5], i32), _a([1.0, 2.0, 3.0, 4.0])], None)
case("bincount_2d_float", "lambda a: tf.math.bincount(a)", [_a([[1, 2], [2, 3]])], None)
case("bincount_negative", "lambda a: tf.math.bincount(a)", [_a([1, -1, 2], i32)], "bincount")
case("bincount_weights_shape", "lambda a, w: tf.math.bincount(a, weights=w)", [_a([1, 1, 2, 5], i32), _a([1.0, 2.0])],
     "bincount")
case("confusion_matrix_weights", "lambda l, p, w: tf.math.confusion_matrix(l, p, 5, weights=w, dtype=tf.float32)",
     [_a([1, 2, 4], i32), _a([2, 2, 4], i64), _a([0.5, 1.0, 2.0])], None)
case("confusion_matrix_negative_label", "lambda l, p: tf.math.confusion_matrix(l, p, 5)",
     [_a([-1, 2, 4], i32), _a([2, 2, 4], i32)], "labels")
case("confusion_matrix_negative_prediction", "lambda l, p: tf.math.confusion_matrix(l, p, 5)",
     [_a([1, 2, 4], i32), _a([2, -2, 4], i32)], "predictions")
case("confusion_matrix_label_out_of_bound", "lambda l, p: tf.math.confusion_matrix(l, p, 3)",
     [_a([1, 2, 4], i32), _a([2, 2, 1], i32)], "labels")
case("map_fn_values", "lambda x: tf.map_fn(lambda r: r * r, x)", [M32], None)
case("map_fn_nested", "lambda x, i: tf.map_fn(lambda t: (t[0], t[1] * 2), (x, i))", [M32, _a([1, 2, 3], i32)], None)
case("map_fn_output_dtype", "lambda x: tf.map_fn(lambda r: tf.cast(tf.reduce_sum(r), tf.int32), x)", [M32], "map_fn")
case("map_fn_scalar_elems", "lambda x: tf.map_fn(lambda r: r, x)", [_a(1.0)], "map_fn")
case("map_fn_lengths", "lambda x, i: tf.map_fn(lambda t: t[0], (x, i))", [M32, _a([1, 2], i32)], "map_fn")
case("switch_case_in_range", "lambda i: tf.switch_case(i, [lambda: tf.constant(10), lambda: tf.constant(20)])",
     [_a(0, i32)], None)
case("switch_case_out_of_range", "lambda i: tf.switch_case(i, [lambda: tf.constant(10), lambda: tf.constant(20)])",
     [_a(7, i32)], None)
case("switch_case_negative_default",
     "lambda i: tf.switch_case(i, [lambda: tf.constant(10)], default=lambda: tf.constant(-1))", [_a(-1, i64)], None)
case("switch_case_float_index", "lambda i: tf.switch_case(i, [lambda: tf.constant(10)])", [_a(0.0)], "switch_case")
case("case_first_true", "lambda a, b: tf.case([(a < b, lambda: a), (a < 5, lambda: b)], default=lambda: a * 0)",
     [_a(2, i32), _a(3, i32)], None)
case("case_no_pred_no_default", "lambda a, b: tf.case([(a > b, lambda: a), (a > 5, lambda: b)])",
     [_a(2, i32), _a(3, i32)], "case")
case("assert_equal_fails", "def f(x, y):\n    tf.debugging.assert_equal(x, y)\n    return x + 1.0", [V3, _a([1, 2, 4])],
     "assert_equal")
case("assert_less_holds", "def f(x, y):\n    tf.debugging.assert_less(x, y)\n    return x + 1.0", [V3, V3 + 1], None)
case("assert_non_negative_fails", "def f(x):\n    tf.debugging.assert_non_negative(x)\n    return x",
     [_a([1, -2, 3], i32)], "assert_non_negative")
case("assert_rank_static", "def f(x):\n    tf.debugging.assert_rank(x, 2)\n    return x", [V3], "rank 2")
case("check_numerics_nan", "lambda x: tf.debugging.check_numerics(x, 'my message')", [_a([1.0, np.nan])],
     "my message")
case("check_numerics_int", "lambda x: tf.debugging.check_numerics(x, 'm')", [I3], "check_numerics")
case("ensure_shape_ok", "lambda x: tf.ensure_shape(x, [None, 3])", [M23], None)
case("ensure_shape_mismatch", "lambda x: tf.ensure_shape(x, [3, 2])", [M23], "ensure_shape")
case("cumprod_exclusive_reverse", "lambda x: tf.math.cumprod(x, axis=1, exclusive=True, reverse=True)", [M23], None)
case("cumprod_int", "lambda x: tf.math.cumprod(x)", [I3], None)
case("cumprod_axis_out_of_range", "lambda x: tf.math.cumprod(x, axis=2)", [M23], "cumprod")
case("cumprod_bool", "lambda x: tf.math.cumprod(x)", [B3], "cumprod")
case("searchsorted_sides", "lambda s, v: (tf.searchsorted(s, v), tf.searchsorted(s, v, side='right'))",
     [_a([[0, 3, 9, 9, 10], [1, 2, 3, 4, 5]], i32), _a([[2, 4, 9], [0, 2, 6]], i32)], None)
case("searchsorted_nan", "lambda s, v: tf.searchsorted(s, v)", [_a([1.0, 2.0]), _a([np.nan, -np.inf, 1.5])], None)
case("searchsorted_rows_mismatch", "lambda s, v: tf.searchsorted(s, v)", [_a(np.zeros((2, 5)), i32), _a(np.zeros((3, 1)), i32)],
     "searchsorted")
case("searchsorted_dtypes", "lambda s, v: tf.searchsorted(s, v)", [_a(np.zeros((2, 5)), i32), _a(np.zeros((2, 1)))],
     "searchsorted")
case("histogram_fixed_width", "lambda v, r: tf.histogram_fixed_width(v, r, nbins=5)",
     [_a([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0]), _a([0.0, 5.0])], None)
case("histogram_fixed_width_bins", "lambda v, r: tf.histogram_fixed_width_bins(v, r, nbins=5)",
     [_a([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0]), _a([0.0, 5.0])], None)
case("histogram_nan", "lambda v, r: tf.histogram_fixed_width(v, r, nbins=5)", [_a([np.nan, 1.0]), _a([0.0, 5.0])],
     "histogram")
case("histogram_range_reversed", "lambda v, r: tf.histogram_fixed_width(v, r, nbins=5)", [V3, _a([5.0, 0.0])],
     "value_range")
case("histogram_range_dtype", "lambda v, r: tf.histogram_fixed_width(v, r, nbins=5)", [V3, _a([0.0, 5.0], f64)],
     "histogram")
case("bincount_per_row", "lambda a, w: tf.math.bincount(a, weights=w, axis=-1, minlength=5)",
     [_a([[1, 2], [2, 3]], i32), _a([[1.0, 2.0], [3.0, 4.0]])], None)
case("bincount_per_row_rank3", "lambda a: tf.math.bincount(a, axis=-1)", [_a(np.ones((2, 1, 2)), i32)], "bincount")
# -- branch sweepnn17 (wave 17): tf.nn / tf.math / tf ops swept against TF 2.21 (tests/tf_reference/sweep_nn17.py) --
case("bias_add_bias_rank2", "lambda x, b: tf.nn.bias_add(x, b)", [M23, _a([[1.0, 2.0, 3.0]])], "bias_add")
case("bias_add_value_rank1", "lambda x, b: tf.nn.bias_add(x, b)", [V3, V3], "bias_add")
case("bias_add_size", "lambda x, b: tf.nn.bias_add(x, b)", [M23, _a([1.0, 2.0])], "bias_add")
case("bias_add_nchw", "lambda x, b: tf.nn.bias_add(x, b, data_format='NCHW')",
     [_a(np.arange(12).reshape(1, 2, 2, 3)), _a([1.0, 2.0])], None)
case("bias_add_nchw_square", "lambda x, b: tf.nn.bias_add(x, b, data_format='NCHW')",
     [_a(np.arange(18).reshape(1, 2, 3, 3)), _a([10.0, 20.0])], None)
case("bias_add_ncdhw_rank5", "lambda x, b: tf.nn.bias_add(x, b, data_format='NCDHW')",
     [_a(np.arange(8).reshape(1, 2, 1, 2, 2)), _a([1.0, 2.0])], None)
case("bias_add_nchw_rank2", "lambda x, b: tf.nn.bias_add(x, b, data_format='NCHW')", [M23, V3], None)
case("bias_add_data_format", "lambda x, b: tf.nn.bias_add(x, b, data_format='XYZ')", [M23, V3], "bias_add")
case("reduce_variance_int", "lambda x: tf.math.reduce_variance(x)", [_a([1, 2], i32)], "reduce_variance")
case("reduce_std_int", "lambda x: tf.math.reduce_std(x, axis=0)", [_a([1, 2, 4], i32)], "reduce_std")
case("cumsum_bool", "lambda x: tf.math.cumsum(x)", [B3], "cumsum")
case("cumsum_scalar", "lambda x: tf.math.cumsum(x)", [_a(1.0)], "cumsum")
case("argmax_scalar", "lambda x: tf.math.argmax(x)", [_a(1.0)], "argmax")
case("argmin_scalar_int", "lambda x: tf.math.argmin(x)", [_a(3, i32)], "argmin")
case("add_n_broadcast", "lambda x, y: tf.math.add_n([x, y])", [M23, V3], "add_n")
case("add_n_scalar", "lambda x, y: tf.math.add_n([x, y])", [_a(1.0), V3], "add_n")
case("split_minus1_negative", "lambda x: tf.split(x, [5, -1, 2])", [_a(np.arange(6.0))], "split")
case("split_two_minus1", "lambda x: tf.split(x, [-1, -1])", [_a(np.arange(6.0))], "split")
case("split_negative_size", "lambda x: tf.split(x, [-2, 8])", [_a(np.arange(6.0))], "split")
case("split_minus1_zero", "lambda x: tf.split(x, [6, -1])", [_a(np.arange(6.0))], None)
case("boolean_mask_int_mask", "lambda x, m: tf.boolean_mask(x, m)", [_a([-2.0, -0.5, 0.0, 3.0]), _a([1, 0, 1, 0], i32)],
     None)
case("boolean_mask_float_mask_axis", "lambda x, m: tf.boolean_mask(x, m, axis=1)",
     [M23, _a([0.0, 0.5, np.nan])], None)
case("conv1d_channels", "lambda x, w: tf.nn.conv1d(x, w, stride=1, padding='SAME')",
     [_a(np.ones((1, 5, 3))), _a(np.ones((3, 2, 2)))], "conv")
case("depthwise_conv2d_channels", "lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], 'SAME')",
     [_a(np.ones((1, 4, 4, 2))), _a(np.ones((2, 2, 3, 1)))], "depthwise_conv2d")
case("avg_pool_int", "lambda x: tf.nn.avg_pool(x, 2, 2, 'VALID')", [_a(np.ones((1, 4, 4, 1)), i32)], "avg_pool")
case("batch_normalization", "lambda x, m, v: tf.nn.batch_normalization(x, m, v, tf.constant([0.1, 0.2, 0.3]), "
     "tf.constant([1.0, 2.0, 3.0]), 1e-3)", [M23, _a([0.5, -1.0, 1.0]), _a([1.0, 4.0, 0.25])], None)
case("batch_normalization_no_scale_offset", "lambda x, m, v: tf.nn.batch_normalization(x, m, v, None, None, 0.0)",
     [M23, _a([0.5, -1.0, 1.0]), _a([1.0, 4.0, 0.25])], None)
case("embedding_lookup", "lambda p, i: tf.nn.embedding_lookup(p, i)", [P53, _a([[0, 4], [1, 1]], i32)], None)
case("embedding_lookup_out_of_range", "lambda p, i: tf.nn.embedding_lookup(p, i)", [P53, _a([5], i32)],
     "gather")
case("embedding_lookup_max_norm", "lambda p, i: tf.nn.embedding_lookup(p, i, max_norm=2.0)",
     [P53, _a([[0, 4], [1, 1]], i64)], None)
case("in_top_k", "lambda t, p: tf.math.in_top_k(t, p, 2)", [_a([0, 2, 1], i32), _a([[1.0, 3.0, 2.0], [0.0, 1.0, 5.0],
                                                                                 [1.0, 1.0, 1.0]])], None)
case("in_top_k_out_of_range_nan", "lambda t, p: tf.nn.in_top_k(t, p, 1)",
     [_a([3, -1, 0], i64), _a([[1.0, 3.0, 2.0], [0.0, 1.0, 5.0], [np.nan, 1.0, 1.0]])], None)
case("in_top_k_float_targets", "lambda t, p: tf.math.in_top_k(t, p, 1)", [_a([0.0]), _a([[1.0, 2.0]])], "in_top_k")
case("in_top_k_rank", "lambda t, p: tf.math.in_top_k(t, p, 1)", [_a([0], i32), _a([1.0, 2.0])], "in_top_k")
case("xdivy_zeros", "lambda x, y: tf.math.xdivy(x, y)", [_a([0.0, 0.0, 1.0, 2.0, 0.0]), _a([0.0, np.inf, 0.0, 3.0, np.nan])],
     None)
case("xlog1py_zeros", "lambda x, y: tf.math.xlog1py(x, y)", [_a([0.0, 0.0, 1.0, 2.0]), _a([-1.0, -2.0, 1.0, np.nan])],
     None)
case("xdivy_dtypes", "lambda x, y: tf.math.xdivy(x, y)", [V3, V3D], "div")

# -- sweepfn18 (wave 18): GradientTape / tf.function / Variable semantics, found by
#    tests/tf_reference/sweep_fn18.py ---------------------------------------------------------
case("fn18_tape_unconnected_bogus", '''
def f(x):
    y = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch([x, y])
        z = x * x
    return t.gradient(z, [x, y], unconnected_gradients="bogus")
''', [V3], "unconnected_gradients")
case("fn18_tape_unconnected_zero_string", '''
def f(x):
    y = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch([x, y])
        z = x * x
    return t.gradient(z, [x, y], unconnected_gradients="zero")
''', [V3], None)
case("fn18_tape_target_none", '''
def f(x):
    with tf.GradientTape() as t:
        t.watch(x)
    return t.gradient(None, x)
''', [V3], "target")
case("fn18_tape_watch_python_float", '''
def f(x):
    with tf.GradientTape() as t:
        t.watch(2.0)
    return x
''', [V3], "watch")
case("fn18_variable_iadd", '''
vs = [tf.Variable([1.0, 2.0, 3.0])]
def f(x):
    w = vs[0]
    w += x
    return w
''', [V3], "assign_add")
case("fn18_variable_imul", '''
vs = [tf.Variable([1.0, 2.0, 3.0])]
def f(x):
    w = vs[0]
    w *= x
    return w
''', [V3], "assign")
case("fn18_while_loop_python_int_vars", "lambda x: tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + i), [0, 0])",
     [V3], None)
case("fn18_while_loop_zero_trips_python_float", "lambda x: tf.while_loop(lambda s: s < 0.0, lambda s: s + 1.0, [2.5])",
     [V3], None)
case("fn18_tensor_array_write_out_of_range", "lambda x: tf.TensorArray(tf.float32, size=2).write(2, x[0]).stack()",
     [V3], "TensorArray.write")
case("fn18_tensor_array_write_dtype",
     "lambda x: tf.TensorArray(tf.float32, size=2).write(0, tf.cast(x[0], tf.int32)).stack()", [V3],
     "TensorArray.write")
case("fn18_variable_assign_add_shape", '''
vs = [tf.Variable([1.0, 2.0])]
def f(x):
    vs[0].assign_add(x)
    return vs[0].read_value()
''', [V3], "assign_add")

# -- recurrent layers and masking (branch rnn18) ---------------------------------------------------
X123 = _a(np.arange(6).reshape(1, 3, 2) / 4.0)       # float32 (1, 3, 2): a batch of one 3-step sequence
case("rnn_lstm_rank2", "lstm = tf.keras.layers.LSTM(3)\nf = lambda x: lstm(x)", [M23], "ndim=3")
case("rnn_gru_rank4", "gru = tf.keras.layers.GRU(3)\nf = lambda x: gru(x)", [_a(np.ones((1, 2, 2, 2)))], "ndim=3")
case("rnn_simple_units_zero", "def f(x):\n    return tf.keras.layers.SimpleRNN(0)(x)", [X123], "units")
case("rnn_lstm_float_units", "def f(x):\n    return tf.keras.layers.LSTM(2.5)(x)", [X123], "units")
case("rnn_lstm_values", "lstm = tf.keras.layers.LSTM(2, kernel_initializer='ones', recurrent_initializer='ones', "
     "return_sequences=True)\nf = lambda x: lstm(x)", [X123], None)
case("rnn_gru_values_backwards", "gru = tf.keras.layers.GRU(2, kernel_initializer='ones', "
     "recurrent_initializer='ones', go_backwards=True, return_sequences=True)\nf = lambda x: gru(x)", [X123], None)
case("rnn_simple_nan_input", "rnn = tf.keras.layers.SimpleRNN(2, kernel_initializer='ones', "
     "recurrent_initializer='ones')\nf = lambda x: rnn(x)", [_a([[[1.0, np.nan], [0.5, 0.5]]])], None)
case("rnn_simple_int_input", "rnn = tf.keras.layers.SimpleRNN(2, kernel_initializer='ones', "
     "recurrent_initializer='ones')\nf = lambda x: rnn(x)", [_a([[[1, 0], [0, 1]]], i32)], None)
case("rnn_masking_values", "lambda x: tf.keras.layers.Masking(0.5)(x)", [_a([[[0.5, 0.5], [0.5, 1.0]]])], None)

# -- branch ops18 (wave 18): special functions, multiply_no_nan, bitwise, linalg -----------------------------
for _op in ["lgamma", "digamma", "erfc", "erfinv"]:
    case(f"ops18_{_op}_int", f"lambda x: tf.math.{_op}(x)", [I3], _op if _op != "digamma" else "polygamma")
case("ops18_lgamma_poles", "lambda x: tf.math.lgamma(x)", [_a([0.0, -1.0, -np.inf, np.inf, np.nan, 1.0])])
case("ops18_digamma_poles", "lambda x: tf.math.digamma(x)", [_a([0.0, -2.0, -np.inf, np.inf, np.nan, 1.0])])
case("ops18_erfinv_edges", "lambda x: tf.math.erfinv(x)", [_a([-1.0, 1.0, 1.5, -2.0, np.nan, 0.0])])
case("ops18_polygamma_int", "lambda x: tf.math.polygamma(1.0, x)", [I3], "polygamma")
case("ops18_nextafter_dtypes", "lambda x, y: tf.math.nextafter(x, y)", [V3, V3D], "nextafter")
case("ops18_nextafter_int", "lambda x, y: tf.math.nextafter(x, y)", [I3, I3], "nextafter")
case("ops18_nextafter_shapes", "lambda x, y: tf.math.nextafter(x, y)", [V3, _a([1.0, 2.0])], "nextafter")
case("ops18_multiply_no_nan_int", "lambda x, y: tf.math.multiply_no_nan(x, y)", [I3, I3], "mul_no_nan")
case("ops18_multiply_no_nan_dtypes", "lambda x, y: tf.math.multiply_no_nan(x, y)", [V3, V3D], "mul_no_nan")
case("ops18_multiply_no_nan_shapes", "lambda x, y: tf.math.multiply_no_nan(x, y)", [V3, _a([1.0, 2.0])], "mul_no_nan")
case("ops18_multiply_no_nan_inf", "lambda x, y: tf.math.multiply_no_nan(x, y)",
     [_a([np.inf, np.nan, 2.0]), _a([0.0, 0.0, np.inf])])
case("ops18_cumulative_logsumexp_int", "lambda x: tf.math.cumulative_logsumexp(x)", [I3], "cumulative_logsumexp")
case("ops18_cumulative_logsumexp_axis", "lambda x: tf.math.cumulative_logsumexp(x, axis=2)", [M23],
     "cumulative_logsumexp")
case("ops18_cumulative_logsumexp_scalar", "lambda x: tf.math.cumulative_logsumexp(x)", [_a(1.0)],
     "cumulative_logsumexp")
case("ops18_cumulative_logsumexp_inf", "lambda x: tf.math.cumulative_logsumexp(x, exclusive=True)",
     [_a([np.inf, 1.0, np.nan, -np.inf])])
case("ops18_unravel_index_oob", "lambda i, d: tf.unravel_index(i, d)", [_a([12], i32), _a([3, 4], i32)], "unravel_index")
case("ops18_unravel_index_float", "lambda i, d: tf.unravel_index(i, d)", [_a([1.0]), _a([3, 4], i32)], "unravel_index")
case("ops18_unravel_index_dtypes", "lambda i, d: tf.unravel_index(i, d)", [_a([1], i32), _a([3, 4], i64)],
     "unravel_index")
case("ops18_unravel_index_rank2", "lambda i, d: tf.unravel_index(i, d)", [_a([[1, 2]], i32), _a([3, 4], i32)],
     "unravel_index")
case("ops18_unravel_index_zero_dim", "lambda i, d: tf.unravel_index(i, d)", [_a([1], i32), _a([3, 0], i32)],
     "unravel_index")
case("ops18_unravel_index_negative", "lambda i, d: tf.unravel_index(i, d)", [_a([-1, 5], i32), _a([3, 4], i32)])
case("ops18_log_poisson_loss_shapes", "lambda t, l: tf.nn.log_poisson_loss(t, l)", [V3, _a([1.0, 2.0])],
     "log_poisson_loss")
case("ops18_log_poisson_loss_int", "lambda t, l: tf.nn.log_poisson_loss(t, l)", [I3, I3], "exp")
case("ops18_weighted_ce_shapes", "lambda z, x: tf.nn.weighted_cross_entropy_with_logits(z, x, 2.0)",
     [V3, _a([1.0, 2.0])], "weighted_cross_entropy_with_logits")
case("ops18_weighted_ce_dtypes", "lambda z, x: tf.nn.weighted_cross_entropy_with_logits(z, x, 2.0)", [V3D, V3], "mul")
case("ops18_bitwise_and_float", "lambda x, y: tf.bitwise.bitwise_and(x, y)", [V3, V3], "bitwise_and")
case("ops18_bitwise_or_bool", "lambda x, y: tf.bitwise.bitwise_or(x, y)", [B3, B3], "bitwise_or")
case("ops18_bitwise_xor_dtypes", "lambda x, y: tf.bitwise.bitwise_xor(x, y)", [I3, _a([1, 2, 3], i64)], "bitwise_xor")
case("ops18_bitwise_and_shapes", "lambda x, y: tf.bitwise.bitwise_and(x, y)", [I3, _a([1, 2], i32)], "bitwise_and")
case("ops18_invert_float", "lambda x: tf.bitwise.invert(x)", [V3], "invert")
case("ops18_left_shift_clamp", "lambda x, y: tf.bitwise.left_shift(x, y)", [_a([1, 1, 5], i32), _a([32, 40, -1], i32)])
case("ops18_right_shift_clamp", "lambda x, y: tf.bitwise.right_shift(x, y)", [_a([-8, -1, 5], i32), _a([1, 40, -1], i32)])
case("ops18_operator_and_float", "lambda x, y: x & y", [V3, V3], "logical_and")
case("ops18_operator_and_int", "lambda x, y: (x & y) | (x ^ y)", [I3, _a([3, 1, 2], i32)])
case("ops18_qr_int", "lambda x: tf.linalg.qr(x)[1]", [_a([[1, 2], [3, 4]], i32)], "qr")
case("ops18_qr_vector", "lambda x: tf.linalg.qr(x)[1]", [V3], "qr")
case("ops18_eigh_not_square", "lambda x: tf.linalg.eigh(x)[0]", [M23], "eigh")
case("ops18_eigh_int", "lambda x: tf.linalg.eigvalsh(x)", [_a([[1, 2], [2, 1]], i32)], "eigh")
case("ops18_normalize_bad_ord", "lambda x: tf.linalg.normalize(x, ord=-1)[0]", [V3], "norm")
case("ops18_triangular_solve_shapes", "lambda m, b: tf.linalg.triangular_solve(m, b)", [_a(np.eye(3)), M23],
     "triangular_solve")
case("ops18_cholesky_solve_dtypes", "lambda m, b: tf.linalg.cholesky_solve(m, b)", [_a(np.eye(2)), _a(M23[:, :2].T, f64)],
     "cholesky_solve")
case("ops18_igamma_edges", "lambda a, x: tf.math.igamma(a, x)", [_a([0.0, -1.0, 1.0, 1.0, 2.0]), _a([1.0, 1.0, 0.0, np.inf, -1.0])])
case("ops18_igammac_int", "lambda a, x: tf.math.igammac(a, x)", [I3, I3], "igammac")
case("ops18_igamma_dtypes", "lambda a, x: tf.math.igamma(a, x)", [V3, V3D], "igamma")

# -- branch sweepk18 (wave 18 Keras sweep) ---------------------------------------------------------
case("sweepk18_gelu_int", "lambda x: tf.nn.gelu(x)", [I3], "gelu")
case("sweepk18_gelu_approx_int", "lambda x: tf.nn.gelu(x, approximate=True)", [I3], "gelu")
case("sweepk18_keras_gelu_int", "lambda x: tf.keras.activations.gelu(x)", [I3], "gelu")

# -- branch imgrand18: tf.image colour / measures / geometry, tf.random --------------------------
IMG = _a(np.arange(24).reshape(2, 4, 3) / 24.0)   # float32 (2, 4, 3), an RGB image in [0, 1)
IMG2 = _a(np.arange(16).reshape(2, 4, 2) / 16.0)  # two channels
case("imgrand18_rgb_to_hsv_channels", "lambda x: tf.image.rgb_to_hsv(x)", [IMG2], "rgb_to_hsv")
case("imgrand18_rgb_to_hsv_int", "lambda x: tf.image.rgb_to_hsv(x)", [_a(IMG * 255, i32)], "rgb_to_hsv")
case("imgrand18_hsv_to_rgb_channels", "lambda x: tf.image.hsv_to_rgb(x)", [IMG2], "hsv_to_rgb")
case("imgrand18_adjust_saturation_channels", "lambda x: tf.image.adjust_saturation(x, 0.5)", [IMG2],
     "adjust_saturation")
case("imgrand18_adjust_hue_channels", "lambda x: tf.image.adjust_hue(x, 0.1)", [IMG2], "adjust_hue")
case("imgrand18_rgb_to_yiq_channels", "lambda x: tf.image.rgb_to_yiq(x)", [IMG2], "rgb_to_yiq")
case("imgrand18_yuv_to_rgb_int", "lambda x: tf.image.yuv_to_rgb(x)", [_a(IMG * 255, i32)], "yuv_to_rgb")
case("imgrand18_adjust_gamma_negative", "lambda x: tf.image.adjust_gamma(x, -1.0)", [IMG], "adjust_gamma")
case("imgrand18_random_hue_big_delta", "lambda x: tf.image.random_hue(x, 0.7)", [IMG], "random_hue")
case("imgrand18_random_brightness_negative", "lambda x: tf.image.random_brightness(x, -0.1)", [IMG],
     "random_brightness")
case("imgrand18_random_contrast_range", "lambda x: tf.image.random_contrast(x, 0.5, 0.5)", [IMG], "random_contrast")
case("imgrand18_random_saturation_negative", "lambda x: tf.image.random_saturation(x, -0.5, 0.5)", [IMG],
     "random_saturation")
case("imgrand18_stateless_hue_bad_seed", "lambda x: tf.image.stateless_random_hue(x, 0.2, (1, 2, 3))", [IMG],
     "stateless")
IMGB = _a(np.arange(2 * 6 * 5 * 3).reshape(2, 6, 5, 3) % 7 / 7.0)   # float32 (2, 6, 5, 3) batch
case("imgrand18_ssim_shapes", "lambda a, b: tf.image.ssim(a, b, 1.0, filter_size=3)", [IMGB, IMGB[:, :5]], "ssim")
case("imgrand18_ssim_too_small", "lambda a: tf.image.ssim(a, a, 1.0)", [IMGB], "ssim")
case("imgrand18_crop_and_resize_box_index", "lambda x: tf.image.crop_and_resize(x, [[0.0, 0.0, 1.0, 1.0]], [2], [2, 2])",
     [IMGB], "crop_and_resize")
case("imgrand18_crop_and_resize_boxes_shape", "lambda x: tf.image.crop_and_resize(x, [[0.0, 0.0, 1.0]], [0], [2, 2])",
     [IMGB], "crop_and_resize")
case("imgrand18_extract_patches_sizes", "lambda x: tf.image.extract_patches(x, [2, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "
     "'VALID')", [IMGB], "extract_patches")
case("imgrand18_stateless_random_crop_big", "lambda x: tf.image.stateless_random_crop(x, [2, 7, 5, 3], (1, 2))", [IMGB],
     "random_crop")
case("imgrand18_resize_with_pad_zero", "lambda x: tf.image.resize_with_pad(x, 0, 4)", [IMGB], "resize_with_pad")
case("imgrand18_sobel_3d", "lambda x: tf.image.sobel_edges(x)", [IMGB[0]], "sobel_edges")
case("imgrand18_split_bad_seed", "lambda: tf.random.split((1, 2, 3))", [], "seed")
case("imgrand18_fold_in_bad_seed", "lambda: tf.random.fold_in((1,), 3)", [], "seed")
case("imgrand18_stateless_poisson_bad_seed", "lambda x: tf.random.stateless_poisson([3], (1, 2, 3), x)", [V3],
     "stateless_poisson")
case("imgrand18_stateless_uniform_one_none", "lambda: tf.random.stateless_uniform([2], (1, 2), minval=None, "
     "maxval=3, dtype=tf.int32)", [], "stateless_uniform")
case("imgrand18_nms_boxes_shape", "lambda b, s: tf.image.non_max_suppression(b, s, 3)", [M23, _a([0.5, 0.7])],
     "non_max_suppression")
case("imgrand18_nms_scores_shape", "lambda b, s: tf.image.non_max_suppression(b, s, 3)",
     [_a([[0, 0, 1, 1], [0, 0, 1, 2]]), V3], "non_max_suppression")
case("imgrand18_nms_iou_threshold", "lambda b, s: tf.image.non_max_suppression(b, s, 3, iou_threshold=1.5)",
     [_a([[0, 0, 1, 1], [0, 0, 1, 2]]), _a([0.5, 0.7])], "iou_threshold")
case("imgrand18_draw_boxes_3d", "lambda x, b: tf.image.draw_bounding_boxes(x, b, [[1.0, 0.0, 0.0, 1.0]])",
     [IMGB[0], _a([[0.1, 0.1, 0.5, 0.5]])], "draw_bounding_boxes")
case("imgrand18_draw_boxes_batch", "lambda x, b: tf.image.draw_bounding_boxes(x, b, [[1.0, 0.0, 0.0, 1.0]])",
     [IMGB, _a([[[0.1, 0.1, 0.5, 0.5]]])], "draw_bounding_boxes")

# -- lead, wave 19: 3-D convolution and pooling ---------------------------------------------------
VOL = _a(np.arange(3 * 3 * 3 * 3).reshape(1, 3, 3, 3, 3) % 5 / 5.0)   # float32 (1, 3, 3, 3, 3)
case("lead19_conv3d_channels", "lambda x: tf.nn.conv3d(x, tf.ones([2, 2, 2, 2, 4]), [1, 1, 1, 1, 1], 'VALID')",
     [VOL], "conv3d")
case("lead19_avg_pool3d_int", "lambda x: tf.nn.avg_pool3d(tf.cast(x, tf.int32), 2, 1, 'VALID')", [VOL],
     "avg_pool3d")
case("lead19_conv3d_explicit_padding", "lambda x: tf.nn.conv3d(x, tf.ones([2, 2, 2, 3, 4]), [1, 1, 1, 1, 1], "
     "[[0, 0], [1, 1], [1, 1], [1, 1], [0, 0]])", [VOL], "padding")

# -- branch dist19 (wave 19): tf.distribute's loss helpers -----------------------------------------------
case("dist19_average_loss_scalar", "lambda x: tf.nn.compute_average_loss(x)", [_a(2.0)], "per_example_loss")
case("dist19_average_loss_negative_batch", "lambda x: tf.nn.compute_average_loss(x, global_batch_size=-2)", [V3],
     "global_batch_size")
case("dist19_average_loss_float_batch", "lambda x: tf.nn.compute_average_loss(x, global_batch_size=2.5)", [V3],
     "global_batch_size")

# -- str19 (wave 19): string tensors; numeric ops refuse them, tf.strings' own errors ---------------
S2 = np.array([b"ab", b"c"], object)           # string (2,)
S3 = np.array([b"ab", b"c", b"d"], object)     # string (3,)
SNUM = np.array([b"1.5", b"x"], object)        # string (2,): "x" is not a number
case("str19_sub_strings", "lambda s: s - s", [S2], "sub")
case("str19_add_string_int", "lambda s: s + 1", [S2], "add")
case("str19_mul_string_int", "lambda s: s * 2", [S2], "mul")
case("str19_reduce_sum_strings", "lambda s: tf.reduce_sum(s)", [S2], "reduce_sum")
case("str19_matmul_strings", "lambda s: tf.matmul(tf.reshape(s, [1, 2]), tf.reshape(s, [2, 1]))", [S2], "matmul")
case("str19_equal_string_float", "lambda s, x: tf.equal(s, x)", [S2, V3[:2]], "equal")
case("str19_cast_string_float", "lambda s: tf.cast(s, tf.float32)", [S2], "cast")
case("str19_to_number_bad", "lambda s: tf.strings.to_number(s)", [SNUM], "StringToNumber")
case("str19_substr_pos", "lambda s: tf.strings.substr(s, 7, 2)", [S2], "pos 7")
case("str19_join_shapes", "lambda a, b: tf.strings.join([a, b])", [S2, S3], "Input shapes")
case("str19_length_int", "lambda x: tf.strings.length(x)", [I3], "length")

# -- np19 (wave 19): tf.experimental.numpy and keras.ops ----------------------------------------
_TNP = "tf.experimental.numpy"
case("np19_tnp_matmul_shapes", f"lambda x, y: {_TNP}.matmul(x, y)", [M23, M23], "matmul")
case("np19_tnp_reshape_size", f"lambda x: {_TNP}.reshape(x, [4, 2])", [M23], "reshape")
case("np19_tnp_sum_bad_axis", f"lambda x: {_TNP}.sum(x, axis=3)", [M23], "axis")
case("np19_tnp_concatenate_ranks", f"lambda x, y: {_TNP}.concatenate([x, y])", [M23, V3], "concat")
case("np19_tnp_add_shapes", f"lambda x, y: {_TNP}.add(x, y)", [M23, _a([1.0, 2.0])], "add")
case("np19_tnp_split_uneven", f"lambda x: {_TNP}.split(x, 2)", [V3], "split")
case("np19_tnp_take_range", f"lambda x: {_TNP}.take(x, [5])", [V3], "gather")
case("np19_kops_matmul_shapes", "lambda x, y: tf.keras.ops.matmul(x, y)", [M23, M23], "matmul")
case("np19_kops_reshape_size", "lambda x: tf.keras.ops.reshape(x, [4, 2])", [M23], "reshape")
case("np19_kops_softmax_axis", "lambda x: tf.keras.ops.softmax(x, axis=5)", [M23], "axis")
case("np19_kops_transpose_perm", "lambda x: tf.keras.ops.transpose(x, [0, 0])", [M23], "transpose")
case("np19_kops_squeeze_axis", "lambda x: tf.keras.ops.squeeze(x, axis=0)", [M23], "squeeze")
case("np19_kops_expand_dims_axis", "lambda x: tf.keras.ops.expand_dims(x, 3)", [V3], "expand_dims")
case("np19_kops_concatenate_ranks", "lambda x, y: tf.keras.ops.concatenate([x, y])", [M23, V3], "concat")
case("np19_kops_sum_bad_axis", "lambda x: tf.keras.ops.sum(x, axis=3)", [M23], "axis")

# -- branch aug19: Keras 3 augmentation layers, call-time errors ----------------------------------
case("aug19_grayscale_two_channels", "lambda x: tf.keras.layers.RandomGrayscale(1.0)(x[..., :2])", [IMGB],
     "channel")
case("aug19_hue_rank2", "lambda x: tf.keras.layers.RandomHue(0.5)(x[0, 0])", [IMGB], "shape")
case("aug19_saturation_one_channel", "lambda x: tf.keras.layers.RandomSaturation(0.5)(x[..., :1])", [IMGB], "3")
case("aug19_erasing_bad_fill", "lambda x: tf.keras.layers.RandomErasing(fill_value='x')(x)", [IMGB], "fill_value")

# -- branch tfrec19: tf.io (decode_raw, parse_tensor, Example parsing) ----------------------------
_RAW = np.array([b"\x01\x00\x02\x00", b"\x03\x00\x04"], object)
_F32_PROTO = np.array(b"\x08\x01\x12\x04\x12\x02\x08\x01\"\x04\x00\x00\x80?", object)   # serialize_tensor([1.0])
_EMPTY_EXAMPLE = np.array(b"\n\x00", object)
case("tfrec19_decode_raw_sizes", "lambda s: tf.io.decode_raw(s, tf.int16)", [_RAW], "DecodeRaw")
case("tfrec19_decode_raw_odd_length", "lambda s: tf.io.decode_raw(s, tf.int16)", [np.array([b"abc"], object)],
     "DecodeRaw")
case("tfrec19_parse_tensor_dtype", "lambda s: tf.io.parse_tensor(s, tf.float64)", [_F32_PROTO], "Type mismatch")
case("tfrec19_parse_example_missing", "lambda s: tf.io.parse_single_example(s, {'q': tf.io.FixedLenFeature([], "
     "tf.int64)})['q']", [_EMPTY_EXAMPLE], "is required")
case("tfrec19_parse_example_garbage", "lambda s: tf.io.parse_single_example(s, {'q': tf.io.FixedLenFeature([], "
     "tf.int64)})['q']", [np.array(b"abc", object)], "Could not parse example")

# -- branch lookup19: Keras 3 lookup and text layers, call-time errors ------------------------------
_SL = "tf.keras.layers.StringLookup"
case("lookup19_stringlookup_oov_without_oov_indices",
     f"layer = {_SL}(vocabulary=['ab'], num_oov_indices=0)\nf = lambda s: layer(s)", [S2], "num_oov_indices")
case("lookup19_stringlookup_number_input", f"layer = {_SL}(vocabulary=['ab'])\nf = lambda x: layer(x)", [I3],
     "cast")
case("lookup19_integerlookup_string_input",
     "layer = tf.keras.layers.IntegerLookup(vocabulary=[1, 2])\nf = lambda s: layer(s)", [S2], "cast")
case("lookup19_integerlookup_oov_without_oov_indices",
     "layer = tf.keras.layers.IntegerLookup(vocabulary=[1, 2], num_oov_indices=0)\nf = lambda x: layer(x)", [I3],
     "num_oov_indices")
case("lookup19_stringlookup_valid", f"layer = {_SL}(vocabulary=['ab', 'c'])\nf = lambda s: layer(s)", [S2])
case("lookup19_hashing_valid", "layer = tf.keras.layers.Hashing(num_bins=4)\nf = lambda s: layer(s)", [S2])

# -- branch ext20: tf.experimental.ExtensionType ----------------------------------------------------
_EXT = "class _MT(tf.experimental.ExtensionType):\n    values: tf.Tensor\n"
case("ext20_abs_without_handler", _EXT + "f = lambda x: tf.abs(_MT(x))", [V3], "Attempt to convert a value")
case("ext20_field_none", _EXT + "f = lambda x: _MT(None).values + x", [V3], "values: expected a Tensor")
case("ext20_valid", _EXT + "f = lambda x: _MT(x * 2.0).values", [V3])

# -- branch tbl20: tf.lookup tables (a key of another dtype, an insert of mismatched shapes) ------------
_KV = "tf.lookup.KeyValueTensorInitializer(['ab', 'c'], tf.constant([1, 2], tf.int64))"
_MUT = "t = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)\n"
case("tbl20_static_lookup_int_keys", f"t = tf.lookup.StaticHashTable({_KV}, -1)\nf = lambda x: t.lookup(x)", [I3],
     "keys")
case("tbl20_vocab_lookup_int_keys", f"t = tf.lookup.StaticVocabularyTable({_KV}, 3)\nf = lambda x: t.lookup(x)",
     [I3], "keys")
case("tbl20_mutable_lookup_int_keys", _MUT + "f = lambda x: t.lookup(x)", [I3], "keys")
case("tbl20_mutable_insert_shapes", _MUT + "def f(s):\n    t.insert(s, tf.constant([1], tf.int64))\n"
     "    return t.size()", [S2], "Expected shape")
case("tbl20_static_lookup_valid", f"t = tf.lookup.StaticHashTable({_KV}, -1)\nf = lambda s: t.lookup(s)", [S2])
case("tbl20_vocab_lookup_valid", f"t = tf.lookup.StaticVocabularyTable({_KV}, 3)\nf = lambda s: t.lookup(s)", [S2])

# -- branch rag20: RaggedTensors built from dense tensors (eagerly, and traced inside tapeflow.function) -----
_RV = _a([1.0, 2.0, 3.0])
case("rag20_from_row_splits_not_zero", "lambda v, s: tf.RaggedTensor.from_row_splits(v, s).flat_values",
     [_RV, _a([1, 2, 3], i64)], "from_row_splits")
case("rag20_from_row_splits_decreasing", "lambda v, s: tf.RaggedTensor.from_row_splits(v, s).flat_values",
     [_RV, _a([0, 2, 1, 3], i64)], "from_row_splits")
case("rag20_from_row_splits_last_not_nvals", "lambda v, s: tf.RaggedTensor.from_row_splits(v, s).flat_values",
     [_RV, _a([0, 1, 2], i64)], "from_row_splits")
case("rag20_from_row_lengths_sum", "lambda v, n: tf.RaggedTensor.from_row_lengths(v, n).flat_values",
     [_RV, _a([1, 1], i64)], "from_row_lengths")
case("rag20_add_other_partitions", "lambda v, a, b: (tf.RaggedTensor.from_row_lengths(v, a) + "
     "tf.RaggedTensor.from_row_lengths(v, b)).flat_values", [_RV, _a([1, 2], i64), _a([2, 1], i64)],
     "Condition x == y did not hold")
case("rag20_add_same_partitions", "lambda v, a: (tf.RaggedTensor.from_row_lengths(v, a) + "
     "tf.RaggedTensor.from_row_lengths(v, a)).flat_values", [_RV, _a([1, 2], i64)])
case("rag20_reduce_sum_rows", "lambda v, a: tf.reduce_sum(tf.RaggedTensor.from_row_lengths(v, a), axis=1)",
     [_RV, _a([1, 2], i64)])

# -- branch api20: tf.io.decode_csv (wave 20's API surface fill) --------------------------------------
_CSV = np.array([b"1,2.5", b"3,x"], object)
case("api20_decode_csv_bad_float", "lambda s: tf.io.decode_csv(s, [[0], [0.0]])[1]", [_CSV], "not a valid float")
case("api20_decode_csv_too_many_fields", "lambda s: tf.io.decode_csv(s, [[0]])[0]", [_CSV], "Expect 1 fields")
case("api20_decode_csv_required_missing", "lambda s: tf.io.decode_csv(s, [[0], tf.constant([], tf.int32)])[0]",
     [np.array([b"1,"], object)], "required")
case("api20_decode_csv_valid", "lambda s: tf.io.decode_csv(s, [[0], ['']])[0]", [_CSV])
case("api20_decode_csv_empty_record", "lambda s: tf.io.decode_csv(s, [[7]])[0]", [np.array([b"1", b""], object)],
     "Expect 1 fields but have 0")
case("api20_decode_csv_unterminated_quote", "lambda s: tf.io.decode_csv(s, [[''], [0]])[1]",
     [np.array([b'"ab,1'], object)], "Quoted field has to end with quote")
case("api20_decode_csv_quote_in_unquoted", "lambda s: tf.io.decode_csv(s, [[''], [0]])[1]",
     [np.array([b'a"b,1'], object)], "Unquoted fields cannot have quotes")
case("api20_decode_csv_two_defaults", "lambda s: tf.io.decode_csv(s, [[0, 1]])[0]", [_CSV],
     "only be 1 default per field")
case("api20_decode_csv_select_cols_negative", "lambda s: tf.io.decode_csv(s, [[0], [0]], select_cols=[-1, 0])[0]",
     [_CSV], "select_cols contains negative values")
# api20: image codecs (tf.io.decode_* / encode_*)
case("api20_decode_png_not_an_image", "lambda s: tf.io.decode_png(s)", [np.array(b"not an image", object)],
     "Unknown image file format")
case("api20_decode_image_empty", "lambda s: tf.io.decode_image(s, channels=3, expand_animations=False)",
     [np.array(b"", object)], "Input is empty")
case("api20_encode_png_float", "lambda x: tf.io.encode_png(x)", [np.zeros((2, 2, 3), np.float32)], "uint8, uint16")
case("api20_encode_jpeg_four_channels", "lambda x: tf.io.encode_jpeg(x)", [np.zeros((2, 2, 4), np.uint8)],
     "1 or 3 channels")

# -- branch seqex21: SequenceExample parsing, FixedLenSequenceFeature ----------------------------------
_SEQEX = np.array(b"\x12\x19\n\x17\n\x03tok\x12\x10\n\x06\x1a\x04\n\x02\x01\x02\n\x06\x1a\x04\n\x02\x03\x04",
                  object)   # feature list tok: [1, 2], [3, 4]
_FLS = "tf.io.FixedLenSequenceFeature"
case("seqex21_parse_seq_missing_list", f"lambda s: tf.io.parse_single_sequence_example(s, sequence_features={{'x': "
     f"{_FLS}([], tf.int64)}})[1]['x']", [_SEQEX], "is required but could not be found")
case("seqex21_parse_seq_garbage", f"lambda s: tf.io.parse_single_sequence_example(s, sequence_features={{'tok': "
     f"{_FLS}([], tf.int64)}})[1]['tok']", [np.array(b"\xff\xff", object)], "Invalid protocol message input")
case("seqex21_parse_seq_dtype", f"lambda s: tf.io.parse_single_sequence_example(s, sequence_features={{'tok': "
     f"{_FLS}([2], tf.float32)}})[1]['tok']", [_SEQEX], "Data types don't match")
case("seqex21_parse_seq_row_size", f"lambda s: tf.io.parse_single_sequence_example(s, sequence_features={{'tok': "
     f"{_FLS}([3], tf.int64)}})[1]['tok']", [_SEQEX], "unexpected number of values")
case("seqex21_parse_seq_missing_context", "lambda s: tf.io.parse_single_sequence_example(s, context_features={'n': "
     "tf.io.FixedLenFeature([], tf.int64)})[0]['n']", [_SEQEX], "Inconsistent max number of elements")
case("seqex21_parse_seq_valid", f"lambda s: tf.io.parse_single_sequence_example(s, sequence_features={{'tok': "
     f"{_FLS}([2], tf.int64)}})[1]['tok']", [_SEQEX])
case("seqex21_parse_seq_row_values", f"lambda s: tf.io.parse_single_sequence_example(s, sequence_features={{'tok': "
     f"{_FLS}([], tf.int64)}})[1]['tok']", [_SEQEX], "Number of values != expected")
case("seqex21_parse_seq_batch_lengths", f"lambda s: tf.io.parse_sequence_example(tf.stack([s, s]), sequence_features="
     f"{{'tok': {_FLS}([2], tf.int64)}})[2]['tok']", [_SEQEX])
case("seqex21_parse_example_seq_stride", f"lambda s: tf.io.parse_single_example(s, {{'a': {_FLS}([2], tf.int64, "
     "allow_missing=True)})['a']", [np.array(b"\n\x0e\n\x0c\n\x01a\x12\x07\x1a\x05\n\x03\x01\x02\x03", object)],
     "divisible by 2")
case("seqex21_decode_json_example_bad", "lambda s: tf.io.decode_json_example(s)",
     [np.array([b'{"features": {"feature": {"a": {"int64List": {"value": [1.5]}}}}}'], object)],
     "Error while parsing JSON")
case("seqex21_decode_json_example_valid", "lambda s: tf.strings.length(tf.io.decode_json_example(s))",
     [np.array([b'{"features": {"feature": {"a": {"int64List": {"value": [1]}}}}}', b'{}'], object)])

# -- branch linop21: tf.linalg.LinearOperator* and the matrix functions (wave 21) -----------------------------
_SQ2 = _a([[2.0, 1.0], [1.0, 3.0]])
case("linop21_sqrtm_not_square", "lambda x: tf.linalg.sqrtm(x)", [M23], "must be square")
case("linop21_sqrtm_rank1", "lambda x: tf.linalg.sqrtm(x)", [V3], "must have rank >= 2")
case("linop21_sqrtm_int", "lambda x: tf.linalg.sqrtm(x)", [_a([[1, 2], [3, 4]], i32)], "int32")
case("linop21_sqrtm_negative_eigenvalue_nan", "lambda x: tf.linalg.sqrtm(x)", [_a([[-1.0, 0.0], [0.0, 1.0]])])
case("linop21_banded_rhs_rows", "lambda b, r: tf.linalg.banded_triangular_solve(b, r)",
     [M23, np.ones((4, 1), f32)], "mismatch")
case("linop21_banded_rhs_vector", "lambda b, r: tf.linalg.banded_triangular_solve(b, r)", [M23, V3], "ndims must be >= 2")
case("linop21_matmul_shape", "lambda m, x: tf.linalg.LinearOperatorFullMatrix(m).matmul(x)", [_SQ2, M32],
     "are not compatible")
case("linop21_solve_shape", "lambda m, x: tf.linalg.LinearOperatorFullMatrix(m).solve(x)", [_SQ2, M32],
     "are not compatible")
case("linop21_solve_non_square", "lambda m, x: tf.linalg.LinearOperatorFullMatrix(m).solve(x)", [M23, M23],
     "not be square")
case("linop21_matvec_dtype", "lambda d, x: tf.linalg.LinearOperatorDiag(d).matvec(x)", [V3, V3D],
     "Expected argument to have dtype")
case("linop21_composition_shape", "lambda m, d: tf.linalg.LinearOperatorComposition(["
     "tf.linalg.LinearOperatorFullMatrix(m), tf.linalg.LinearOperatorDiag(d)]).to_dense()", [_SQ2, V3],
     "not compatible")
case("linop21_diag_assert_non_singular", "lambda d: tf.linalg.LinearOperatorDiag(d).assert_non_singular()",
     [_a([1.0, 0.0])], "Diagonal contained zero values")
case("linop21_diag_solve", "lambda d, x: tf.linalg.LinearOperatorDiag(d).solve(x)", [V3, M32])

# -- branch cplx21: complex dtypes and tf.signal (wave 21) ---------------------------------------------
_Z3 = np.array([1 + 2j, 3 - 4j, 0j], np.complex64)
case("cplx21_less_complex", "lambda z: z < z", [_Z3], "less: does not accept complex")
case("cplx21_maximum_complex", "lambda z: tf.maximum(z, z)", [_Z3], "maximum: does not accept complex")
case("cplx21_reduce_max_complex", "lambda z: tf.reduce_max(z)", [_Z3], "reduce_max: does not accept complex")
case("cplx21_argmax_complex", "lambda z: tf.argmax(z)", [_Z3], "argmax: does not accept complex")
case("cplx21_complex_plus_float", "lambda z, x: z + x", [_Z3, V3], "dtypes differ")
case("cplx21_complex_of_ints", "lambda a, b: tf.complex(a, b)", [I3, I3], "incorrect types: int32 int32")
case("cplx21_complex_mixed_floats", "lambda a, b: tf.complex(a, b)", [V3, V3D], "incorrect types: float32 float64")
case("cplx21_complex_shapes", "lambda a, b: tf.complex(a, b)", [V3, np.ones(2, np.float32)], "complex")
case("cplx21_abs_complex_valid", "lambda z: tf.abs(z) + tf.math.real(z * tf.math.conj(z))", [_Z3])
case("cplx21_fft_of_real", "lambda x: tf.signal.fft(x)", [V3], "FFT: requires complex64 or complex128")
case("cplx21_rfft_of_complex", "lambda z: tf.signal.rfft(z)", [_Z3], "RFFT requires tf.float32 or tf.float64")
case("cplx21_irfft_of_real", "lambda x: tf.signal.irfft(x)", [V3], "IRFFT requires tf.complex64 or tf.complex128")
case("cplx21_irfft_odd_length_valid", "lambda z: tf.signal.irfft(z, [5])", [_Z3])
case("cplx21_fft2d_of_vector", "lambda z: tf.signal.fft2d(z)", [_Z3], "rank of at least 2")
case("cplx21_rfft_negative_length", "lambda x: tf.signal.rfft(x, [-1])", [V3], "must >= 0")
case("cplx21_mdct_length_not_multiple_of_4", "lambda x: tf.signal.mdct(x, 6)", [np.ones(24, np.float32)],
     "multiple of 4")

# -- branch spec21: tf.math.special, betainc, zeta, sobol_sample, the random additions (wave 21) -------------------
case("spec21_bessel_i0_int", "lambda x: tf.math.bessel_i0(x)", [I3], "bessel_i0")
case("spec21_special_bessel_y1_int", "lambda x: tf.math.special.bessel_y1(x)", [I3], "bessel_y1")
case("spec21_special_bessel_k0_negative", "lambda x: tf.math.special.bessel_k0(x)", [_a([-1.0, 0.0, 2.0])])
case("spec21_dawsn_int", "lambda x: tf.math.special.dawsn(x)", [I3], "dawsn")
case("spec21_betainc_shapes", "lambda a, b, x: tf.math.betainc(a, b, x)", [_a([2.0, 3.0]), V3, _a([0.5, 0.5])],
     "inconsistent")
case("spec21_betainc_mixed_dtypes", "lambda a, b, x: tf.math.betainc(a, b, x)", [V3D, V3, V3], "betainc")
case("spec21_betainc_int", "lambda a, b, x: tf.math.betainc(a, b, x)", [I3, I3, I3], "betainc")
case("spec21_betainc_scalar_broadcast", "lambda a, b, x: tf.math.betainc(a, b, x)", [_a(2.0), V3, _a([0.1, 0.5, 0.9])])
case("spec21_zeta_int", "lambda x, q: tf.math.zeta(x, q)", [I3, I3], "zeta")
case("spec21_zeta_broadcast", "lambda x, q: tf.math.zeta(x, q)", [_a([[2.0], [3.0]]), _a([1.0, 2.0])])
case("spec21_index_shuffle_float", "lambda x: tf.random.experimental.index_shuffle(x, [1, 2], 10.0)", [V3],
     "allowed values")
case("spec21_index_shuffle_valid", "lambda i: tf.random.experimental.index_shuffle(i, [5, 8], 9)",
     [_a(np.arange(10), i32)])
case("spec21_binomial_shape_suffix", "lambda c: tf.random.stateless_binomial([5], [1, 2], c, 0.5)", [_a([1.0, 2.0])],
     "must end with broadcasted shape")
case("spec21_binomial_valid", "lambda c, p: tf.random.stateless_binomial([4, 3], [7, 7], c, p)",
     [_a([5.0, 50.0, 500.0]), _a([0.1, 0.6, 0.9])])
case("spec21_stateless_shuffle_valid", "lambda x: tf.random.experimental.stateless_shuffle(x, [1, 2])", [M32])

# -- branch keras21: keras.ops' wave-21 names (Keras 3.15's checks and error classes) -------------------
case("keras21_histogram_float_bins", "lambda x: tf.keras.ops.histogram(x, bins=2.5)", [V3], "bins")
case("keras21_histogram_rank2", "lambda x: tf.keras.ops.histogram(x)", [M23], "1-dimensional")
case("keras21_correlate_bad_mode", "lambda x: tf.keras.ops.correlate(x, x, mode='bad')", [V3], "Invalid mode")
case("keras21_view_bytes", "lambda x: tf.keras.ops.view(x, 'float64')", [V3], "divisible")
case("keras21_lu_factor_rank1", "lambda x: tf.keras.ops.lu_factor(x)", [V3], "rank >= 2")
case("keras21_adaptive_pool_rank2", "lambda x: tf.keras.ops.adaptive_average_pool(x, 2)", [M23], "1D, 2D, or 3D")
case("keras21_nanquantile_valid", "lambda x: tf.keras.ops.nanquantile(x, 0.5)", [V3])
case("keras21_rearrange_valid", "lambda x: tf.keras.ops.rearrange(x, 'a b -> b a')", [M23])

# -- branch nn21: wave 21's tf.image detection ops and tf.nn sequence/pooling ops -------------------------
_NB = _a([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 5, 1, 6]])
_NS = _a([0.9, 0.8, 0.7])
case("nn21_nms_padded_boxes_rank1", "lambda b, s: tf.image.non_max_suppression_padded(b, s, 2)[0]",
     [_a([0, 0, 1, 1]), _NS], "non_max_suppression_padded")
case("nn21_nms_padded_valid", "lambda b, s: tf.image.non_max_suppression_padded(b, s, 2, "
     "pad_to_max_output_size=True)[0]", [_NB, _NS])
case("nn21_nms_overlaps_not_square", "lambda o, s: tf.image.non_max_suppression_overlaps(o, s, 2)",
     [M23, _NS], "non_max_suppression_overlaps")
case("nn21_combined_nms_q", "lambda b, s: tf.image.combined_non_max_suppression(b, s, 2, 3)[0]",
     [np.zeros((1, 3, 2, 4), f32), np.zeros((1, 3, 3), f32)], "combined_non_max_suppression")
case("nn21_combined_nms_boxes_rank", "lambda b, s: tf.image.combined_non_max_suppression(b, s, 2, 3)[0]",
     [np.zeros((1, 3, 4), f32), np.zeros((1, 3, 3), f32)], "combined_non_max_suppression")
case("nn21_sample_box_image_size_len", "lambda s, b: tf.image.stateless_sample_distorted_bounding_box(s, b, "
     "[1, 2])[0]", [_a([100, 80], i32), _a([[[0.1, 0.2, 0.5, 0.6]]])], "image_size")
case("nn21_sample_box_boxes_last_dim", "lambda s, b: tf.image.stateless_sample_distorted_bounding_box(s, b, "
     "[1, 2])[0]", [_a([100, 80, 3], i32), _a([[[0.1, 0.2, 0.5]]])], "bounding boxes must have shape")
case("nn21_sample_box_no_boxes", "lambda s, b: tf.image.stateless_sample_distorted_bounding_box(s, b, "
     "[1, 2])[0]", [_a([100, 80, 3], i32), np.zeros((1, 0, 4), f32)], "No bounding boxes provided")
case("nn21_sample_box_negative_cover", "lambda s, b: tf.image.stateless_sample_distorted_bounding_box(s, b, "
     "[1, 2], min_object_covered=-1.0)[0]", [_a([100, 80, 3], i32), _a([[[0.1, 0.2, 0.5, 0.6]]])],
     "Min object covered must be non-negative")
case("nn21_sample_box_coords_outside", "lambda s, b: tf.image.stateless_sample_distorted_bounding_box(s, b, "
     "[1, 2])[0]", [_a([100, 80, 3], i32), _a([[[0.1, 0.2, 1.5, 0.6]]])], "must be in [0.0, 1.0]")
case("nn21_glimpse_rank3", "lambda x, o: tf.image.extract_glimpse(x, [3, 4], o)", [np.zeros((6, 7, 2), f32),
     np.zeros((2, 2), f32)], "4-dimensional")
case("nn21_glimpse_offsets_batch", "lambda x, o: tf.image.extract_glimpse(x, [3, 4], o)",
     [np.zeros((2, 6, 7, 2), f32), np.zeros((1, 2), f32)], "batch")
case("nn21_glimpse_noise", "lambda x, o: tf.image.extract_glimpse(x, [3, 4], o, noise='foo')",
     [np.zeros((2, 6, 7, 2), f32), np.zeros((2, 2), f32)], "noise could only be")
case("nn21_glimpse_size_len", "lambda x, o: tf.image.extract_glimpse(x, [3], o)",
     [np.zeros((2, 6, 7, 2), f32), np.zeros((2, 2), f32)], "size 2")
case("nn21_collapse_repeated_rank1", "lambda x, n: tf.nn.collapse_repeated(x, n)[0]", [_a([1, 1, 2], i32),
     _a([3], i32)], "collapse_repeated")
case("nn21_collapse_repeated_float", "lambda x, n: tf.nn.collapse_repeated(x, n)[0]", [_a([[1, 1, 2]]),
     _a([3], i32)])
case("nn21_ctc_unique_labels_rank1", "lambda x: tf.nn.ctc_unique_labels(x)[0]", [_a([1, 1, 2], i32)],
     "unique expects a 1D vector")
case("nn21_ctc_unique_labels_float", "lambda x: tf.nn.ctc_unique_labels(x)[1]", [_a([[1, 1, 2]])])
case("nn21_edit_distance_ranks", "lambda i, v, j: tf.edit_distance(tf.SparseTensor(i, v, [2, 3]), "
     "tf.SparseTensor(j, v, [2, 3, 1]))", [_a([[0, 0]], i64), _a([1], i32), _a([[0, 0, 0]], i64)], "rank")
case("nn21_edit_distance_dtypes", "lambda i, v, w: tf.edit_distance(tf.SparseTensor(i, v, [2, 3]), "
     "tf.SparseTensor(i, w, [2, 3]))", [_a([[0, 0]], i64), _a([1], i32), _a([1.0])], "edit_distance")
case("nn21_edit_distance_rank1", "lambda i, v: tf.edit_distance(tf.SparseTensor(i, v, [3]), "
     "tf.SparseTensor(i, v, [3]))", [_a([[0]], i64), _a([1], i32)], "rank at least 2")
case("nn21_edit_distance_valid", "lambda i, v, j, w: tf.edit_distance(tf.SparseTensor(i, v, [2, 3]), "
     "tf.SparseTensor(j, w, [2, 3]), normalize=False)", [_a([[0, 0], [0, 1], [1, 0]], i64), _a([1, 2, 3], i32),
     _a([[0, 0], [0, 2], [1, 1]], i64), _a([1, 3, 3], i32)])
_X4 = np.zeros((1, 5, 6, 2), f32)
case("nn21_dilation2d_depth", "lambda x, f: tf.nn.dilation2d(x, f, [1, 1, 1, 1], 'SAME', 'NHWC', [1, 1, 1, 1])",
     [_X4, np.zeros((2, 2, 3), f32)], "depth")
case("nn21_dilation2d_filter_rank", "lambda x, f: tf.nn.dilation2d(x, f, [1, 1, 1, 1], 'SAME', 'NHWC', "
     "[1, 1, 1, 1])", [_X4, np.zeros((2, 2, 2, 1), f32)], "filter")
case("nn21_dilation2d_valid", "lambda x, f: tf.nn.dilation2d(x, f, [1, 2, 1, 1], 'VALID', 'NHWC', [1, 1, 2, 1])",
     [_a(np.arange(60).reshape(1, 5, 6, 2)), _a(np.arange(12).reshape(2, 3, 2) / 7)])
case("nn21_erosion2d_dtype", "lambda x, f: tf.nn.erosion2d(x, f, [1, 1, 1, 1], 'SAME', 'NHWC', [1, 1, 1, 1])",
     [_X4, np.zeros((2, 2, 2), f64)], "erosion2d")
case("nn21_fractional_pool_ratio_small", "lambda x: tf.nn.fractional_max_pool(x, [1, 0.5, 1.5, 1])[0]", [_X4],
     "pooling_ratio")
case("nn21_fractional_pool_batch_ratio", "lambda x: tf.nn.fractional_avg_pool(x, [2, 1.5, 1.5, 1])[0]", [_X4],
     "pooling_ratio")
case("nn21_fractional_pool_rank3", "lambda x: tf.nn.fractional_max_pool(x, [1, 1.5, 1.5, 1])[0]", [_X4[0]],
     "fractional_max_pool")
case("nn21_extract_volume_patches_rank4", "lambda x: tf.extract_volume_patches(x, [1, 2, 2, 2, 1], "
     "[1, 1, 1, 1, 1], 'VALID')", [_X4], "extract_volume_patches")
case("nn21_extract_volume_patches_depth_ksize", "lambda x: tf.extract_volume_patches(x, [1, 2, 2, 2, 2], "
     "[1, 1, 1, 1, 1], 'VALID')", [np.zeros((1, 3, 4, 5, 2), f32)], "ksizes")
case("nn21_extract_volume_patches_valid", "lambda x: tf.extract_volume_patches(x, [1, 2, 2, 3, 1], "
     "[1, 2, 1, 2, 1], 'SAME')", [_a(np.arange(120).reshape(1, 3, 4, 5, 2))])
case("nn21_conv_one_spatial_dim", "lambda x, w: tf.conv(x, w, [1, 1, 1], 'VALID')",
     [np.zeros((1, 5, 2), f32), np.zeros((2, 2, 3), f32)], "spatial dimensions")
case("nn21_with_space_to_batch_same_no_filter", "lambda x: tf.nn.with_space_to_batch(x, [2, 2], 'SAME', "
     "lambda i, n, p: i)", [_X4], "filter_shape")
# (depthwise_conv2d_backprop_input with 3 input_sizes: TF 2.21 aborts the process on a CHECK failure, so no case)
case("nn21_approx_max_k_too_large", "lambda x: tf.math.approx_max_k(x, 30)[0]", [np.zeros((3, 20), f32)],
     "at least k columns")
case("nn21_approx_max_k_float64", "lambda x: tf.math.approx_max_k(x, 2)[0]", [np.zeros((3, 20), f64)],
     "approx")
case("nn21_approx_top_k_int32", "lambda x: tf.approx_top_k(x, 2)[1]", [np.zeros((3, 20), i32)], "approx")
case("nn21_approx_max_k_valid", "lambda x: tf.math.approx_max_k(x, 2)[1]", [_a(np.arange(12).reshape(3, 4) % 5)])
case("nn21_isotonic_valid_int", "lambda x: tf.nn.isotonic_regression(x)[0]", [_a([[3, 1, 2, 5]], i32)])
case("nn21_isotonic_valid_axis0", "lambda x: tf.nn.isotonic_regression(x, decreasing=False, axis=0)[1]",
     [_a([[3, 1], [2, 5], [0, 4]])])
case("nn21_jpeg_quality_rank4", "lambda x: tf.image.adjust_jpeg_quality(x, 50)", [np.zeros((1, 4, 4, 3), np.uint8)],
     "adjust_jpeg_quality")
case("nn21_jpeg_quality_channels", "lambda x: tf.image.adjust_jpeg_quality(x, 50)", [np.zeros((4, 4, 2), np.uint8)],
     "channels")

# -- branch bf16_21: bfloat16 (ml_dtypes' NumPy dtype; TF never promotes it either) ---------------
import ml_dtypes as _mld  # noqa: E402
_BF = _mld.bfloat16
_BV3 = _a([1.5, 2.25, -3.0], _BF)
_BM22 = _a([[2.0, 1.0], [1.0, 3.0]], _BF)
case("bf16_add_f16", "lambda x, y: x + y", [_BV3, _a([1, 2, 3], np.float16)], "add")
case("bf16_add_f32", "lambda x, y: tf.add(x, y)", [_BV3, V3], "add")
case("bf16_matmul_f32", "lambda x, y: tf.matmul(x, y)", [_a(M23, _BF), M32])   # (TF: a float32 product)
case("bf16_matmul_f16", "lambda x, y: tf.matmul(x, y)", [_a(M23, _BF), _a(M32, np.float16)], "matmul")
case("bf16_matrix_inverse", "lambda x: tf.linalg.inv(x)", [_BM22], "bfloat16")
# (vector results: the recorder's np.asarray of a 0-d bfloat16 TF tensor fails)
case("bf16_valid_arithmetic_vec", "lambda x: tf.reduce_sum(x * 0.3 + 1.0, keepdims=True) + tf.reduce_max(x)",
     [_BV3])
case("bf16_valid_matmul", "lambda x: tf.matmul(x, x) * 0.5", [_BM22])

# -- lead, wave 22: an axis of a rank-0 tensor. A scalar has no axes (TF raises for axis 0 and -1 alike);
# tapeflow accepted axis 0, and then the kernels failed on their own (NumPy's AxisError, an IndexError in
# a traced reduce_mean, an AssertionError in sort) or a traced argsort returned shape (1,)
_S0 = _a(2.0)
for _prog in ["tf.reduce_sum(x, axis=0)", "tf.reduce_mean(x, axis=0)", "tf.reduce_max(x, axis=0)",
              "tf.reduce_prod(x, axis=-1)", "tf.reduce_any(x > 0, axis=0)", "tf.math.reduce_logsumexp(x, axis=0)",
              "tf.math.reduce_std(x, axis=0)", "tf.math.reduce_variance(x, axis=-1)", "tf.nn.moments(x, [0])[0]",
              "tf.math.reduce_euclidean_norm(x, axis=0)", "tf.math.count_nonzero(x, axis=0)",
              "tf.math.argmax(x, axis=0)", "tf.math.cumsum(x, axis=0)", "tf.squeeze(x, axis=0)",
              "tf.roll(x, 1, axis=0)", "tf.argsort(x, axis=0)", "tf.sort(x, axis=0)", "tf.split(x, 1, axis=0)[0]",
              "tf.nn.softmax(x, axis=0)", "tf.nn.log_softmax(x, axis=0)", "tf.math.l2_normalize(x, axis=0)",
              "tf.norm(x, axis=0)"]:
    case("rank0_axis_" + _prog.split("(")[0].split(".")[-1] + ("_m1" if "-1" in _prog else ""),
         f"lambda x: {_prog}", [_S0], "rank 0")
case("rank0_reverse_axis0", "lambda x: tf.reverse(x, [0])", [_S0])     # (TF's eager kernel: the scalar itself)
# TF's integer Euclidean norm (squares summed in the dtype, the root truncated); tapeflow raised "sqrt expects
# float"; a sum that wrapped negative gives TF's NaN conversion (the dtype's minimum, 0 for int8/int16)
case("int_euclidean_norm", "lambda x: tf.math.reduce_euclidean_norm(x)", [_a([3, 4, 12], i32)])
case("int_euclidean_norm_rows_i8", "lambda x: tf.math.reduce_euclidean_norm(x, axis=1)", [_a([[3, 4], [1, 1]], np.int8)])
case("int_euclidean_norm_wrapped", "lambda x: tf.math.reduce_euclidean_norm(x, keepdims=True)",
     [_a([46341, 0], i32), ])
case("int_euclidean_norm_wrapped_i16", "lambda x: tf.math.reduce_euclidean_norm(x, axis=0)", [_a([182, 0], np.int16)])
case("uint_euclidean_norm", "lambda x: tf.math.reduce_euclidean_norm(x, axis=0)", [_a([[3, 200], [4, 1]], np.uint8)])
# found by an eager/compiled/TF differential fuzz of public ops (lead, wave 22)
_I10 = np.zeros((1, 0), i32)
_I20 = np.zeros((2, 0), i32)
case("gather_nd_depth0", "lambda x, i: tf.gather_nd(x, i)", [M23, _I20])    # (tapeflow dropped the rows' axis)
case("gather_nd_depth0_one", "lambda x, i: tf.gather_nd(x, i)", [V3, _I10])
case("scatter_nd_depth0", "lambda i, u: tf.scatter_nd(i, u, [2, 3])", [_I10, np.ones((1, 2, 3), f32)], "depth 0")
case("tensor_scatter_nd_add_depth0", "lambda x, i, u: tf.tensor_scatter_nd_add(x, i, u)",
     [M23, _I20, np.ones((2, 2, 3), f32)], "depth 0")
case("tensor_scatter_nd_update_depth0", "lambda x, i, u: tf.tensor_scatter_nd_update(x, i, u)",
     [M23, _I20, np.ones((2, 2, 3), f32)], "depth 0")
case("tensor_scatter_nd_max_depth0", "lambda x, i, u: tf.tensor_scatter_nd_max(x, i, u)",
     [M23, _I10, np.ones((1, 2, 3), f32)], "depth 0")
# (compiled, the ids are values: an id outside [0, n) was dropped silently where eager raised)
case("dynamic_partition_id_too_big", "lambda x, p: tf.dynamic_partition(x, p, 2)[0]",
     [P53, _a([0, 1, 5, 0, 1], i32)], "partitions")
case("dynamic_partition_id_negative", "lambda x, p: tf.dynamic_partition(x, p, 2)[1]",
     [P53, _a([0, -1, 1, 0, 1], i32)], "partitions")
case("dynamic_partition_valid", "lambda x, p: tf.dynamic_partition(x, p, 3)[2]", [P53, _a([0, 2, 1, 2, 0], i32)])
case("cumsum_exclusive_empty_axis", "lambda x: tf.math.cumsum(x, axis=1, exclusive=True)", [np.zeros((2, 0), f32)])
case("cumprod_exclusive_reverse_empty_axis", "lambda x: tf.math.cumprod(x, axis=0, exclusive=True, reverse=True)",
     [E03])
case("split_zero_parts", "lambda x: tf.split(x, 0)[0]", [V3], "split")
case("reduce_any_float", "lambda x: tf.reduce_any(x)", [_a([0.5, 0.0])], "reduce_any")
case("reduce_all_int", "lambda x: tf.reduce_all(x, axis=0)", [I3], "reduce_all")
case("reduce_any_bool_valid", "lambda x: tf.reduce_any(x, keepdims=True)", [B3])
case("round_int_identity", "lambda x: tf.math.round(x)", [_a([3, 2, 7], np.uint8)])
case("diag_part_rank1", "lambda x: tf.linalg.diag_part(x)", [V3], "diag_part")
case("band_part_rank1", "lambda x: tf.linalg.band_part(x, 0, -1)", [V3], "band_part")
case("getitem_zero_step", "lambda x: x[::0]", [V3], "step")
case("linspace_tensor_bounds", "lambda a, b: tf.linspace(a, b, 7)", [_a(-1.3), _a(7.1)])
case("linspace_broadcast_bounds_axis1", "lambda a, b: tf.linspace(a, b, 4, axis=-1)", [_a([0.0, 1.0]), _a(3.0)])
case("linspace_float64_one", "lambda a, b: tf.linspace(a, b, 1)", [_a(0.25, f64), _a(8.0, f64)])
case("linspace_mixed_dtypes", "lambda a, b: tf.linspace(a, b, 3)", [_a(1.0, f64), _a(2.0)], "linspace")
case("diag_of_scalar", "lambda x: tf.linalg.diag(x)", [_a(3.0)], "diag")
case("where_indices_of_scalar", "lambda x: tf.where(x)", [_a(3, i32)], "where")
# (a Python int beside a bool tensor: eagerly 2 * mask was mask, compiled NumPy's int64 [2, 0]; TF refuses)
case("bool_tensor_times_py_int", "lambda m: 2 * m", [B3], "bool")
case("bool_tensor_plus_py_int", "lambda m: tf.math.add(m, 1)", [B3], "bool")
case("scalar_mul_bool", "lambda m: tf.math.scalar_mul(2, m)", [B3], "bool")
# -- branch fft22: N-d FFTs, circulant operators, logm, complex gaps (wave 22) -------------------------
# (TF 2.21 has no CPU kernel for FFTND: only its Python wrapper's dtype checks are recordable)
_Z34 = (np.arange(12).reshape(3, 4) * (1 + 0.5j)).astype(np.complex64)
case("fft22_rfftnd_of_complex", "lambda z: tf.signal.rfftnd(z)", [_Z34], "RFFT requires tf.float32 or tf.float64")
case("fft22_irfftnd_of_real", "lambda x: tf.signal.irfftnd(x)", [M23], "IRFFT requires tf.complex64 or tf.complex128")
case("fft22_logm_of_real", "lambda x: tf.linalg.logm(x)", [np.eye(2, dtype=f32)], "complex64, complex128")
case("fft22_logm_not_square", "lambda z: tf.linalg.logm(z)", [np.ones((2, 3), np.complex64)], "must be square")
case("fft22_logm_valid", "lambda z: tf.math.real(tf.linalg.logm(z))", [np.diag([2.0, 3.0]).astype(np.complex64)])
case("fft22_complex_pow_tan_sigmoid_valid",
     "lambda z: tf.math.real(tf.pow(z, z) + tf.tan(z) + tf.sigmoid(z) + tf.reduce_prod(z, keepdims=True))", [_Z3])
case("fft22_complex_pow_float_exponent", "lambda z, x: tf.pow(z, x)", [_Z3, V3], "pow")
case("fft22_sort_complex", "lambda z: tf.sort(z)", [_Z3], "complex")
case("count_nonzero_bool", "lambda m: tf.math.count_nonzero(m, axis=0)", [np.array([[True, False], [True, True]])])
case("histogram_int_values_float_range", "lambda v: tf.histogram_fixed_width(v, [-1.0, 1.0], nbins=2)", [I3],
     "dtype int32")
case("histogram_uint8_values_negative_range", "lambda v: tf.histogram_fixed_width(v, [-1.5, 1.0], nbins=2)",
     [_a([1, 2], np.uint8)], "uint8")
case("ndtri_int", "lambda x: tf.math.ndtri(x)", [_a([1, 0, 2], i32)], "ndtri")      # (it returned INT_MIN)
case("ndtri_bool", "lambda x: tf.math.ndtri(x)", [B3], "ndtri")
case("softsign_int", "lambda x: tf.nn.softsign(x)", [I3], "softsign")               # (it returned float64)
case("leaky_relu_int", "lambda x: tf.nn.leaky_relu(x)", [_a([-3, 0, 2], i32)])      # (TF: cast to float32)
# -- branch api22: tf.sparse.bincount/cross/sampled_addmm/mask, tf.ragged.cross/stack_dynamic_partitions,
#    tf.ragged_fill_empty_rows(_grad) (wave 22) ---------------------------------------------------------
_S2 = np.array([[b"a"], [b"b"]], object)
_S3 = np.array([[b"p"], [b"q"], [b"r"]], object)
case("api22_sparse_bincount_negative", "lambda x: tf.sparse.bincount(x).values", [_a([1, -2, 2], i32)],
     "non-negative")
case("api22_sparse_bincount_float_ids", "lambda x: tf.sparse.bincount(x).values", [V3], "int32, int64")
case("api22_sparse_bincount_weights_shape", "lambda x, w: tf.sparse.bincount(x, weights=w, axis=-1).values",
     [_a([[1, 2, 2]], i32), _a([[1.0, 2.0]])], "same shape")
case("api22_sparse_bincount_rank3_rows", "lambda x: tf.sparse.bincount(x, axis=-1).values",
     [np.zeros((2, 2, 2), i32)], "1 or 2-dimensional")
case("api22_sparse_bincount_valid_rows", "lambda x, w: tf.sparse.bincount(x, weights=w, axis=-1, maxlength=4).indices",
     [_a([[1, 2, 2], [5, 0, 1]], i32), _a([[1.0, 2.0, 0.5], [1.0, 3.0, 1.0]])])
case("api22_sparse_bincount_valid_values", "lambda x: tf.sparse.bincount(x, minlength=7).values",
     [_a([[1, 2, 2], [5, 0, 1]], i64)])
case("api22_sparse_cross_batch_mismatch", "lambda a, b: tf.sparse.cross([a, b]).values", [_S2, _S3], "batch size")
case("api22_sparse_cross_rank1_dense", "lambda a, b: tf.sparse.cross([a, b]).values",
     [_S2, np.array([b"x", b"y"], object)], "should be a matrix")
case("api22_sparse_cross_hashed_valid", "lambda a, b: tf.sparse.cross_hashed([a, b], num_buckets=1000).values",
     [_S2, _a([[3, 4], [5, 6]], i64)])
case("api22_ragged_cross_batch_mismatch", "lambda a, b: tf.ragged.cross([a, b]).flat_values", [_S2, _S3],
     "batch dimension")
case("api22_sampled_addmm_dense_shape", "lambda i, v, a, b: tf.sparse.sampled_addmm(i, v, [3, 2], a, b)[1]",
     [_a([[0, 0], [1, 1]], i32), _a([0.5, 0.3]), M23, M32], "does not match output shape")
case("api22_sampled_addmm_valid", "lambda i, v, a, b: tf.sparse.sampled_addmm(i, v, [2, 2], a, b, alpha=0.5)[1]",
     [_a([[0, 0], [1, 1]], i32), _a([0.5, 0.3]), M23, M32])
case("api22_sparse_mask_2d_mask", "lambda v, i, m: tf.sparse.mask(tf.IndexedSlices(v, i), m).values",
     [V3, I3, _a([[1]], i32)], "1D vector")
case("api22_stack_dynamic_partitions_range", "lambda d, p: tf.ragged.stack_dynamic_partitions(d, p, 3).flat_values",
     [V3, _a([0, 5, 1], i32)], "less than num_partitions")
case("api22_ragged_fill_empty_rows_range",
     "lambda i, v: tf.ragged_fill_empty_rows(i, v, tf.constant(2, tf.int64), tf.constant(9.0))[1]",
     [_a([0, 5, 1], i64), V3], "is invalid")
case("api22_ragged_fill_empty_rows_grad_range", "lambda r, g: tf.ragged_fill_empty_rows_grad(r, g)[0]",
     [_a([0, 7], i64), V3], "reverse index")
# (second fuzz batch, lead wave 22) uint8 images through TF's float32 detour, integer image conversions
_U8 = np.random.default_rng(0).integers(0, 256, (2, 2, 3)).astype(np.uint8)
case("adjust_brightness_uint8", "lambda x: tf.image.adjust_brightness(x, 0.3)", [_U8])
case("adjust_contrast_uint8", "lambda x: tf.image.adjust_contrast(x, 1.7)", [_U8])
case("adjust_contrast_float64_in_float32", "lambda x: tf.image.adjust_contrast(x, 1.7)",
     [np.random.default_rng(1).random((2, 2, 3))])
case("convert_image_dtype_int16_uint8", "lambda x: tf.image.convert_image_dtype(x, tf.uint8)",
     [_a([[-30000, 20000], [255, 32767]], np.int16)])
case("convert_image_dtype_uint8_int32", "lambda x: tf.image.convert_image_dtype(x, tf.int32)", [_U8])
case("segment_mean_uint8", "lambda x, i: tf.math.segment_mean(x, i)", [_a([1, 2, 3], np.uint8), _a([0, 0, 1], i32)])
case("reduce_join_axis_out_of_range", "lambda x: tf.strings.reduce_join(tf.strings.as_string(x), axis=2)", [M23],
     "reduce_join")
case("solve_dtype_mismatch", "lambda a, b: tf.linalg.solve(a, b)", [_a(np.eye(2), f64), _a([[1.0], [2.0]])],
     "matrix_solve")
# (stateless 16-bit draws: TF converts one Philox word per value with its own 16-bit maps; tapeflow took the
# float32 or float64 draw and rounded it, other numbers for one seed)
case("stateless_uniform_float16", "lambda: tf.random.stateless_uniform([6], [5, 9], minval=-2.0, maxval=3.0, "
     "dtype=tf.float16)")
case("stateless_normal_float16", "lambda: tf.random.stateless_normal([5], [3, 4], dtype=tf.float16)")
case("stateless_uniform_bfloat16", "lambda: tf.cast(tf.random.stateless_uniform([6], [5, 9], dtype=tf.bfloat16), "
     "tf.float32)")
case("stateless_normal_bfloat16", "lambda: tf.cast(tf.random.stateless_normal([6], [5, 9], mean=1.0, stddev=2.0, "
     "dtype=tf.bfloat16), tf.float32)")
case("svd_nan_gives_nans", "lambda x: tf.linalg.svd(x, compute_uv=False)", [_a([[1.0, np.nan, 2.0], [0.0, 1.0, 1.0]])])
case("eigh_nan_raises", "lambda x: tf.linalg.eigh(x)[0]", [_a([[np.nan, 0.0], [0.0, 1.0]])], "eigh")
case("cross_of_scalars", "lambda a, b: tf.linalg.cross(a, b)", [_a(1.0), _a(2.0)], "cross")
case("gather_batch_dims_past_indices_rank", "lambda x, i: tf.gather(x, i, axis=-2, batch_dims=1)",
     [np.zeros((2, 1, 3), np.int16), _a(0, i32)], "batch_dims")
# (TF's Multinomial kernel: the same draws for a seed; the logits here are inputs, so compiled modes trace them)
case("stateless_categorical_tf_numbers", "lambda l: tf.random.stateless_categorical(l, 9, [7, 8])",
     [_a([[0.1, 0.5, -1.0], [2.0, 0.0, 0.0], [-np.inf, 1.0, 1.0]])])
case("stateless_categorical_float64_int32", "lambda l: tf.random.stateless_categorical(l, 6, [3, 3], dtype=tf.int32)",
     [_a([[0.0, np.log(3.0)], [1.0, 1.0]], f64)])
case("stateless_categorical_no_classes", "lambda l: tf.random.stateless_categorical(l, 2, [1, 2])",
     [np.zeros((2, 0), f32)], "num_classes")
# (tnp.moveaxis took an out-of-range axis modulo the rank: moveaxis of a matrix from axis 5 moved axis 1)
case("tnp_moveaxis_out_of_range", "lambda x: tf.experimental.numpy.moveaxis(x, 5, 0)", [M23], "moveaxis")
case("tnp_moveaxis_negative_out_of_range", "lambda x: tf.experimental.numpy.moveaxis(x, -3, 0)", [M23], "moveaxis")
case("tnp_moveaxis_lists", "lambda x: tf.experimental.numpy.moveaxis(tf.reshape(x, [1, 2, 3]), [0, 1], [-1, -2])", [M23])
# --- wave 24 (main) ---
# (TF 2.21's Cholesky kernel fills a matrix that is not positive definite with NaNs, with a logged
# warning, where tapeflow raised; logdet is then NaN. TF leaves the upper triangle unwritten: band_part)
case("cholesky_not_positive_definite_nans", "lambda m: tf.linalg.band_part(tf.linalg.cholesky(m), -1, 0)",
     [_a([[[4.0, 0.0], [0.0, 4.0]], [[-1.0, 0.0], [0.0, -1.0]]], f64)])
case("logdet_not_positive_definite_nan", "lambda m: tf.linalg.logdet(m)", [_a([[3.9757, -2.5521], [0.2341, -2.7932]], f64)])
# (SelfAdjointEigV2 reads the lower triangle: a NaN above the diagonal is never seen; below it, raises)
case("eigvalsh_nan_upper_ignored", "lambda m: tf.linalg.eigvalsh(m)", [_a([[1.0, np.nan], [2.0, 5.0]], f64)])
case("eigvalsh_nan_lower_raises", "lambda m: tf.linalg.eigvalsh(m)", [_a([[1.0, 3.0], [np.nan, 5.0]], f64)], "eigh")
# (diag_part/diag multiplied by the identity: inf * 0 put a NaN beside an infinite entry; bools raised)
case("diag_part_inf_off_diagonal", "lambda m: tf.linalg.diag_part(m)", [_a([[1.0, np.inf], [0.0, 2.0]])])
case("diag_inf_entry", "lambda d: tf.linalg.diag(d)", [_a([np.inf, 1.0])])
case("diag_part_bool", "lambda m: tf.linalg.diag_part(m)", [np.array([[False, True], [True, True]])])
case("trace_inf_off_diagonal", "lambda m: tf.linalg.trace(m)", [_a([[1.0, np.inf], [0.0, 2.0]])])
case("set_diag_list_takes_matrix_dtype", "lambda m: tf.linalg.set_diag(m, [3.0, 4.0])", [_a([[1.0, 5.0], [0.0, 2.0]], f64)])
# (scalar partitions: the whole of data is one slice; tapeflow's boolean_mask raised)
case("dynamic_partition_scalar", "lambda x, p: tf.dynamic_partition(x, p, 2)[1]", [_a(-1.75), _a(1, i32)])
# (Keras 3: integer steps and exponentials are floats)
case("keras_heaviside_int64", "lambda x, y: tf.keras.ops.heaviside(x, y)", [_a([1, 0, -1], i64), _a([2, 2, 2], i64)])
case("keras_heaviside_int32", "lambda x, y: tf.keras.ops.heaviside(x, y)", [_a([1, 0, -1], i32), _a([2, 2, 2], i32)])
case("keras_exponential_int", "lambda x: tf.keras.activations.exponential(x)", [_a([1, 0], i32)])
# (the fuzz's fourth batch, seed 21: each raised no error, or the wrong one, where TF 2.21 does)
case("expm_non_square", "lambda x: tf.linalg.expm(x)", [np.zeros((2, 1), f64)], "expm")
case("set_diag_short_diagonal", "lambda x, d: tf.linalg.set_diag(x, d)", [M23, _a([1.0])], "set_diag")
case("reverse_sequence_negative_length", "lambda x, l: tf.reverse_sequence(x, l, seq_axis=1, batch_axis=0)",
     [M23, _a([3, -1], i32)], "reverse_sequence")
case("reverse_sequence_length_past_dim", "lambda x, l: tf.reverse_sequence(x, l, seq_axis=1, batch_axis=0)",
     [M23, _a([4, 1], i32)], "reverse_sequence")
case("reverse_sequence_ok", "lambda x, l: tf.reverse_sequence(x, l, seq_axis=1, batch_axis=0)", [M23, _a([3, 1], i32)])
case("repeat_scalar_axis0", "lambda x: tf.repeat(x, 2, axis=0)", [_a(3, np.int16)])
case("repeat_scalar_zero_times", "lambda x: tf.repeat(x, 0, axis=0)", [_a(3, np.int16)])
case("repeat_axis_out_of_range", "lambda x: tf.repeat(x, 1, axis=-3)", [M23], "repeat")
case("frame_step_zero", "lambda x: tf.signal.frame(x, 2, 0)", [V3], "frame")
case("frame_length_zero", "lambda x: tf.signal.frame(x, 0, 1)", [V3])
case("overlap_and_add_step_zero", "lambda x: tf.signal.overlap_and_add(x, 0)", [M23], "overlap_and_add")
case("meshgrid_mixed_dtypes", "lambda x, y: tf.meshgrid(x, y)[0]", [V3, V3D], "meshgrid")
case("erfcinv_int", "lambda x: tf.math.erfcinv(x)", [I3], "erfcinv")
case("is_non_decreasing_bool", "lambda x: tf.math.is_non_decreasing(x)", [B3], "is_non_decreasing")
case("sequence_mask_negative_lengths", "lambda l: tf.sequence_mask(l)", [_a([-1, -3], i32)])
case("sequence_mask_lengths_no_maxlen", "lambda l: tf.sequence_mask(l)", [_a([2, 0, 3], i32)])
case("range_of_a_tensor_bound", "lambda n: tf.range(n) * 2", [_a(4, i32)])
case("bytes_split_empty_rows", "lambda x: tf.strings.bytes_split(tf.strings.as_string(x)).to_tensor()",
     [np.zeros((2, 0), i64)])
# (cholesky_solve read the factor's upper triangle through a general solve: other numbers where it is not 0)
case("cholesky_solve_ignores_upper_triangle", "lambda c, b: tf.linalg.cholesky_solve(c, b)",
     [_a([[2.0, 5.0], [0.5, 1.5]], f64), _a([[1.0], [2.0]], f64)])
# (the fuzz's fourth batch, seed 22: sqrtm of a float32 matrix with a small negative eigenvalue returned a
# matrix that is not its root, TF NaNs; lu raised for a NaN pivot, where TF's factors carry the NaN; the
# windows of a negative length were empty)
case("sqrtm_small_negative_eigenvalue", "lambda a: tf.linalg.sqrtm(a)",
     [_a([[2.8538961, -0.553735], [-0.2880402, 0.04663846]])])
case("lu_nan_pivot", "lambda a: tf.linalg.lu(a)[0]",
     [_a([[-1.37270937, 2.46914085, 2.83994521], [8.56777191, np.nan, -3.2374012], [-3.64811868, -1.12137634,
                                                                                    -1.77685978]], f64)])
case("lu_singular", "lambda a: tf.linalg.lu(a)[0]", [_a([[1.0, 2.0], [2.0, 4.0]], f64)], "lu")
case("hann_window_negative_length", "lambda: tf.signal.hann_window(-1)", [], "hann_window")
case("kaiser_window_negative_length", "lambda: tf.signal.kaiser_window(-1)", [], "kaiser_window")
# --- api24 ---
# (keras.utils.bounding_boxes, keras.utils.legacy, tf.io.decode_webp/decode_jxl: wave 24's new names)
case("api24_bbox_convert_last_dim_3", "lambda b: tf.keras.utils.bounding_boxes.convert_format(b, 'xyxy', 'yxyx')",
     [M23], "boxes")
case("api24_bbox_convert_unknown_format", "lambda b: tf.keras.utils.bounding_boxes.convert_format(b, 'xyxy', 'cxcy')",
     [_a(np.ones((2, 4)))], "format")
case("api24_bbox_iou_rank1", "lambda b: tf.keras.utils.bounding_boxes.compute_iou(b, b, 'xyxy')",
     [_a([1.0, 2.0, 3.0, 4.0])], "compute_iou")
case("api24_bbox_encode_variance_len", "lambda b: tf.keras.utils.bounding_boxes.encode_box_to_deltas(b, b, 'xyxy', "
     "'xyxy', variance=[1.0, 2.0])", [_a(np.ones((2, 4)))], "variance")
case("api24_bbox_crop_not_xyxy", "lambda b: tf.keras.utils.bounding_boxes.crop(b, 0, 0, 5, 5, "
     "bounding_box_format='yxyx')", [_a(np.ones((2, 4)))], "crop")
case("api24_legacy_deserialize_improper", "lambda: tf.keras.utils.legacy.deserialize_keras_object({'config': {}})",
     [], "class_name")
case("api24_decode_webp_float_dtype", "lambda: tf.io.decode_webp(b'RIFF\\x00\\x00\\x00\\x00WEBPVP8L', "
     "dtype=tf.float32)", [], "dtype")
case("api24_decode_webp_garbage", "lambda: tf.io.decode_webp(b'not an image')", [], "Unknown image file format")
case("api24_decode_webp_batch", "lambda: tf.io.decode_webp([b'a', b'b'])", [], "scalar")
case("api24_decode_jxl_gif", "lambda: tf.io.decode_jxl(b'GIF89a\\x01\\x00\\x01\\x00\\x00\\x00\\x00;')", [], "DecodeJxl")
case("api24_decode_webp_truncated", "lambda: tf.image.decode_webp(b'RIFF\\x1a\\x00\\x00\\x00WEBPVP8L\\x0d\\x00\\x00\\x00/')",
     [], "WebP")
# --- rand24 ---
# (TF's gamma and Poisson kernels since wave 24: TF's numbers for a seed, the parameters traced in compiled modes;
# the output shape must end with the parameters' shape)
case("rand24_stateless_gamma_traced_alpha", "lambda a: tf.random.stateless_gamma([4, 2], [3, 4], alpha=a)",
     [_a([0.5, 3.0])])
case("rand24_stateless_poisson_traced_lam", "lambda l: tf.random.stateless_poisson([3, 2], [3, 4], lam=l)",
     [_a([2.0, 30.0])])
case("rand24_stateless_ptn_traced_bounds", "lambda lo: tf.random.stateless_parameterized_truncated_normal("
     "[5, 2], [1, 1], 0.0, 1.0, lo, 4.0)", [_a([-1.0, 2.5])])
case("rand24_stateless_gamma_shape_not_suffix", "lambda: tf.random.stateless_gamma([3], [1, 2], alpha=[1.0, 2.0])",
     [], "stateless_gamma")
case("rand24_stateless_poisson_shape_not_suffix", "lambda: tf.random.stateless_poisson([3], [1, 2], "
     "lam=[1.0, 2.0])", [], "stateless_poisson")
case("rand24_stateless_ptn_invalid_bounds", "lambda: tf.random.stateless_parameterized_truncated_normal([3], [1, 2], "
     "0.0, 1.0, 2.0, 1.0)", [], "Invalid parameters")
# --- layers24 ---
# (wave 24's layer fuzz: TF 2.21's exception classes for bad layer configs and inputs)
case("layer24_einsumdense_wrong_rank", "def f(x):\n    return tf.keras.layers.EinsumDense('ab,bc->ac', output_shape=3)(x)",
     [np.zeros((2, 3, 4), f32)], "EinsumDense")
case("layer24_normalization_stats_do_not_broadcast",
     "def f(x):\n    return tf.keras.layers.Normalization(mean=[0.5, -1.0, 2.0], variance=[1.0, 4.0, 0.25])(x)",
     [np.zeros((2, 2), f32)], "Normalization")
case("layer24_conv_transpose_output_padding_ge_strides",
     "def f(x):\n    return tf.keras.layers.Conv1DTranspose(2, 3, strides=1, output_padding=1)(x)",
     [np.zeros((2, 4, 2), f32)], "output_padding")
case("layer24_conv_transpose_output_padding", "ct = tf.keras.layers.Conv2DTranspose(2, 3, strides=2, output_padding=1, "
     "kernel_initializer='ones')\nf = lambda x: ct(x)", [np.ones((1, 2, 3, 1), f32)])
case("layer24_global_average_pool_int", "def f(x):\n    return tf.keras.layers.GlobalAveragePooling1D()(x)",
     [_a([[[1], [2]], [[0], [1]]], i32)])

# --- qdq24 ---
_QDQ = "tf.quantization.quantize_and_dequantize_v2"
case("qdq24_min_gt_max", f"lambda x, lo, hi: {_QDQ}(x, lo, hi, range_given=True)", [V3, _a(1.0), _a(-1.0)],
     "quantize_and_dequantize_v2")
case("qdq24_v1_min_gt_max", "lambda x: tf.quantization.quantize_and_dequantize(x, 1.0, -1.0, range_given=True)",
     [V3], "quantize_and_dequantize")
case("qdq24_num_bits_0", f"lambda x: {_QDQ}(x, -1.0, 1.0, num_bits=0)", [V3], "quantize_and_dequantize_v2")
case("qdq24_num_bits_62_signed", f"lambda x: {_QDQ}(x, -1.0, 1.0, num_bits=62)", [V3],
     "quantize_and_dequantize_v2")
case("qdq24_int_input", f"lambda x: {_QDQ}(x, -1, 1)", [I3], "quantize_and_dequantize_v2")
case("qdq24_min_dtype", f"lambda x, lo: {_QDQ}(x, lo, 1.0)", [V3D, _a(-1.0)], "quantize_and_dequantize_v2")
case("qdq24_axis_range_given", f"lambda x: {_QDQ}(x, [-1.0, 0.0], [1.0, 1.0], axis=1, range_given=True)",
     [M32], "quantize_and_dequantize_v2")
case("qdq24_vector_min_given", f"lambda x: {_QDQ}(x, [-1.0, 0.0], 1.0, range_given=True)", [M32],
     "quantize_and_dequantize_v2")
case("qdq24_own_range", f"lambda x: {_QDQ}(x, 0.0, 0.0)", [M23])
case("qdq24_own_range_axis_half_up", f"lambda x: {_QDQ}(x, [0.0] * 3, [0.0] * 3, axis=1, round_mode='HALF_UP', "
     "signed_input=False, num_bits=3)", [M23])

# --- nyet25 ---
case("nyet25_sets_mismatched_batch", "lambda a, b: tf.sets.intersection(a, b).values",
     [_a([[1, 2, 2], [3, 4, 5]], i32), _a([[1, 2]], i32)], "Mismatched shapes")
case("nyet25_sets_union_values", "lambda a, b: tf.sets.union(a, b).indices",
     [_a([[1, 2, 2], [3, 4, 5]], i32), _a([[2, 1], [5, 9]], i32)])
case("nyet25_sets_difference_b_minus_a", "lambda a, b: tf.sets.difference(a, b, aminusb=False).values",
     [_a([[1, 2, 2], [3, 4, 5]], i32), _a([[2, 7], [5, 9]], i32)])
case("nyet25_sets_rank_1", "lambda a, b: tf.sets.intersection(a, b).values", [I3, I3], "rank 1 < 2")
case("nyet25_bitcast_last_dim", "lambda x: tf.bitcast(x, tf.int32)", [_a([[1, 2, 3]], np.int16)], "bitcast")
# --- rand25 ---
case("rand25_uniform_negative_dim", "lambda: tf.random.uniform([-1, 2])", [], "random.uniform")
case("rand25_stateless_normal_negative_dim", "lambda: tf.random.stateless_normal([2, -3], [1, 2])", [],
     "random.normal")
case("rand25_uniform_negative_dim_tensor", "lambda n: tf.random.uniform(tf.stack([n, 2]))", [_a(-2, i32)],
     "random.uniform")
case("rand25_normal_float_dim_tensor", "lambda x: tf.random.normal([tf.shape(x)[0], 2.5])", [V3], "random.normal")
# --- api25 ---
# tf.debugging's remaining assertions (static facts raise at once, values when the function runs)
case("api25_assert_near_fails", "def f(x, y):\n    tf.debugging.assert_near(x, y)\n    return x + 1.0",
     [V3, _a([1.0, 2.0, 3.5])], "assert_near")
case("api25_assert_near_within_tolerance", "def f(x, y):\n    tf.debugging.assert_near(x, y, rtol=0.1, atol=0.0)\n"
     "    return x + 1.0", [V3, _a([1.05, 2.1, 3.2])])
case("api25_assert_near_message", "def f(x, y):\n    tf.debugging.assert_near(x, y, atol=0.1, message='my check')\n"
     "    return x", [V3, _a([1.0, 2.0, 4.0])], "my check")
case("api25_assert_near_int", "def f(x):\n    tf.debugging.assert_near(x, x)\n    return x", [I3], "not inexact")
case("api25_assert_near_dtypes", "def f(x, y):\n    tf.debugging.assert_near(x, y)\n    return x", [V3, V3D], "float64")
case("api25_assert_rank_at_least", "def f(x):\n    tf.debugging.assert_rank_at_least(x, 2)\n    return x", [V3],
     "rank at least 2")
case("api25_assert_rank_at_least_ok", "def f(x):\n    tf.debugging.assert_rank_at_least(x, 1)\n    return x * 2.0",
     [M23])
case("api25_assert_rank_in", "def f(x):\n    tf.debugging.assert_rank_in(x, (0, 2))\n    return x", [V3],
     "rank in (0, 2)")
case("api25_assert_scalar", "def f(x):\n    tf.debugging.assert_scalar(x)\n    return x", [V3], "scalar shape")
case("api25_assert_type", "def f(x):\n    tf.debugging.assert_type(x, tf.int32)\n    return x", [V3],
     "must be of type tf.int32")
case("api25_assert_integer", "def f(x):\n    tf.debugging.assert_integer(x)\n    return x", [V3], "integer type")
case("api25_assert_integer_ok", "def f(x):\n    tf.debugging.assert_integer(x)\n    return x + 1", [I3])
case("api25_assert_same_float_dtype", "def f(x, y):\n    tf.debugging.assert_same_float_dtype([x, y])\n    return x",
     [V3, V3D], "same type")
case("api25_assert_same_float_dtype_int", "def f(x):\n    tf.debugging.assert_same_float_dtype([x])\n    return x",
     [I3], "floating point")
case("api25_optional_empty_get_value", "def f(x):\n    o = tf.experimental.Optional.empty(tf.TensorSpec([3], tf.float32))\n"
     "    return o.get_value() + x", [V3], "does not have a value")
case("api25_optional_from_value", "def f(x):\n    o = tf.experimental.Optional.from_value(x * 2.0)\n"
     "    return tf.cond(o.has_value(), lambda: o.get_value(), lambda: x)", [V3])
# --- fuzz25 ---
# (the wave-25 differential fuzz, seeds 31 and 32: TF 2.21's error classes and values)
case("fuzz25_cross_last_dim_2", "lambda a, b: tf.linalg.cross(a, b)", [_a([1.0, 2.0]), _a([2.0, 3.0])], "cross")
case("fuzz25_cross_shapes_differ", "lambda a, b: tf.linalg.cross(a, b)", [V3, np.ones((2, 3), f32)], "cross")
case("fuzz25_tnp_cross_4", "lambda a, b: tf.experimental.numpy.cross(a, b)", [np.ones(4, f32), np.ones(4, f32)],
     "cross")
case("fuzz25_tnp_cross_2x2", "lambda a, b: tf.experimental.numpy.cross(a, b)", [_a([1.0, 2.0]), _a([3.0, 5.0])])
case("fuzz25_tnp_cross_2x3", "lambda a, b: tf.experimental.numpy.cross(a, b)", [_a([1.0, 2.0]), _a([3.0, 4.0, 5.0])])
case("fuzz25_tnp_cross_scalar", "lambda a, b: tf.experimental.numpy.cross(a, b)", [M23, _a(1.0)], "cross")
case("fuzz25_keras_cross_scalar", "lambda a, b: tf.keras.ops.cross(a, b)", [_a(M23, np.float16), _a(1.0, np.float16)],
     "cross")
case("fuzz25_keras_matmul_scalar", "lambda a, b: tf.keras.ops.matmul(a, b)", [M23, _a(2.0)], "matmul")
case("fuzz25_reciprocal_no_nan_bool", "lambda x: tf.math.reciprocal_no_nan(x)", [B3], "reciprocal_no_nan")
case("fuzz25_dropout_int_rate0", "lambda x: tf.nn.dropout(x, rate=0.0)", [I3], "dropout")
case("fuzz25_dropout_bool", "lambda x: tf.nn.dropout(x, rate=0.5)", [B3], "dropout")
case("fuzz25_pad_reflect_scalar_empty", "lambda x: tf.pad(x, [], mode='REFLECT')", [_a(4.5)], "pad")
case("fuzz25_pad_constant_scalar_empty", "lambda x: tf.pad(x, [])", [_a(4.5)], "pad")
case("fuzz25_pad_flat_pair", "lambda x: tf.pad(x, [1, 1])", [V3], "pad")
case("fuzz25_keras_tanh_int8", "lambda x: tf.keras.activations.tanh(x)", [_a([2, 0, -2], np.int8)])
case("fuzz25_keras_erf_uint8", "lambda x: tf.keras.ops.erf(x)", [_a([3], np.uint8)], "erf")
case("fuzz25_keras_erfinv_int8", "lambda x: tf.keras.ops.erfinv(x)", [_a([0], np.int8)], "erfinv")
case("fuzz25_keras_rsqrt_int8", "lambda x: tf.keras.ops.rsqrt(x)", [_a(4, np.int8)], "sqrt")
case("fuzz25_tnp_diff_scalar", "lambda x: tf.experimental.numpy.diff(x)", [_a(3, np.int8)], "diff")
case("fuzz25_keras_diff_scalar", "lambda x: tf.keras.ops.diff(x)", [_a(3.0)], "diff")
case("fuzz25_truncatediv_uint8", "lambda x, y: tf.truncatediv(x, y)", [_a([7, 200], np.uint8), _a([2, 3], np.uint8)])
case("fuzz25_normalize_bool", "lambda x: tf.linalg.normalize(x, axis=2)[0]", [np.array([[True]])], "normalize")
# (the layer fuzz, seed 4: Reshape reshaped the whole batch, so a per-sample size mismatch gave another batch size)
case("fuzz25_layer_reshape_size_changed", "def f(x):\n    return tf.keras.layers.Reshape((1, 2, 3))(x)",
     [np.ones((2, 6, 2), f32)], "Reshape")
case("fuzz25_layer_reshape_size_changed_batch0", "def f(x):\n    return tf.keras.layers.Reshape((6,))(x)",
     [np.ones((0, 3, 1), f32)], "Reshape")
case("fuzz25_layer_reshape_minus1_indivisible", "def f(x):\n    return tf.keras.layers.Reshape((5, -1))(x)",
     [np.ones((2, 6, 2), f32)], "Reshape")
case("fuzz25_layer_reshape_minus1", "def f(x):\n    return tf.keras.layers.Reshape((3, -1))(x)",
     [_a(np.arange(24).reshape(2, 6, 2))])
# (seed 33: keras.ops.norm took axis=None as the flattened vector, cumsum widened small integers, sign refused uint8)
case("fuzz25_keras_norm_matrix_ord1", "lambda x: tf.keras.ops.norm(x, ord=1)", [_a([[1.0, -2.0, 3.0], [-4.0, 5.0, 6.5]])])
case("fuzz25_keras_norm_matrix_ord_neg2", "lambda x: tf.keras.ops.norm(x, ord=-2, keepdims=True)",
     [_a([[1.0, -2.0, 3.0], [-4.0, 5.0, 6.5]])])
case("fuzz25_keras_norm_matrix_nuc", "lambda x: tf.keras.ops.norm(x, ord='nuc')", [_a([[1.0, -2.0, 3.0], [-4.0, 5.0, 6.5]])])
case("fuzz25_keras_norm_vector_neg_inf", "lambda x: tf.keras.ops.norm(x, ord=-np.inf, axis=1)", [M23])
case("fuzz25_keras_norm_vector_ord0", "lambda x: tf.keras.ops.norm(x, ord=0, axis=0)", [M23])
case("fuzz25_keras_norm_rank3", "lambda x: tf.keras.ops.norm(x)", [np.ones((2, 3, 4), i64)], "norm")
case("fuzz25_keras_norm_scalar", "lambda x: tf.keras.ops.norm(x)", [_a(3.0)], "norm")
case("fuzz25_keras_cumsum_int8", "lambda x: tf.keras.ops.cumsum(x)", [_a([[-3, -4, 3], [3, -1, 2]], np.int8)])
case("fuzz25_keras_cumprod_uint16", "lambda x: tf.keras.ops.cumprod(x, axis=0)", [_a([[1, 2], [3, 4]], np.uint16)])
case("fuzz25_keras_sign_uint8", "lambda x: tf.keras.ops.sign(x)", [_a([5, 0], np.uint8)])
case("fuzz25_tnp_cumsum_uint8", "lambda x: tf.experimental.numpy.cumsum(x)", [_a([200, 100], np.uint8)])
case("fuzz25_cross_bool", "lambda a, b: tf.linalg.cross(a, b)", [np.ones((3, 1), bool), np.ones((3, 1), bool)], "cross")
