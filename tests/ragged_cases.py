"""Ragged-tensor expressions whose printed result (repr, or the exception class) must be TF 2.21's:
tests/tf_reference/make_ragged_reference.py records TF's into tests/data/ragged_tf.json and
tests/test_ragged.py compares tapeflow's. ``R`` is tf.ragged.constant; ``tf`` either framework."""

CASES = [
 "R([[1,2,3],[],[4,5]])[1:]", "R([[1,2,3],[],[4,5]])[-1]", "R([[1,2,3],[],[4,5]])[::2]", "R([[1,2,3],[],[4,5]])[:, 1:]",
 "R([[1,2,3],[],[4,5]])[:, -1:]", "R([[1,2,3],[],[4,5]])[:, :0]", "R([[[1,2],[3]],[[4]]])[:, :, :1]",
 "R([[1.,2.,3.],[],[4.,5.]]).to_tensor(default_value=-1.)", "R([[1,2,3],[],[4,5]]).to_tensor(shape=[2, 2])",
 "R([[1,2,3],[],[4,5]]).to_tensor(shape=[4, 5])", "R([[[1,2],[3]],[[4]]]).to_tensor()",
 "tf.RaggedTensor.from_tensor([[1,0,0],[2,3,0]], padding=0)", "tf.RaggedTensor.from_tensor([[1,0,0],[0,0,0]], padding=0)",
 "tf.RaggedTensor.from_tensor([[[1,1],[0,0]],[[2,2],[3,3]]], padding=[0,0])",
 "tf.reduce_sum(R([[1,2,3],[],[4,5]]), axis=0)", "tf.reduce_max(R([[1.,2.,3.],[],[4.,5.]]), axis=1)",
 "tf.reduce_min(R([[1,2,3],[],[4,5]]), axis=1)", "tf.reduce_prod(R([[1,2,3],[],[4,5]]), axis=1)",
 "tf.reduce_mean(R([[1.,2.,3.],[],[4.,5.]]), axis=0)", "tf.reduce_any(R([[True,False],[],[False]]), axis=1)",
 "tf.reduce_all(R([[True,False],[],[True]]), axis=1)", "tf.reduce_sum(R([[1,2,3],[],[4,5]]), axis=1, keepdims=True)",
 "tf.reduce_sum(R([[[1,2],[3]],[[4]]]), axis=2)", "tf.reduce_sum(R([[[1,2],[3,4]],[[5,6]]], ragged_rank=1), axis=1)",
 "tf.concat([R([[[1],[2]],[[3]]]), R([[[4]],[[5],[6]]])], axis=1)", "tf.concat([R([[1],[2,3]]), R([[4,5],[]])], axis=0)",
 "tf.stack([R([[1],[2,3]]), R([[4,5],[]])], axis=0)", "tf.gather(R([[1],[2,3],[]]), [2, 0, 0])",
 "R([[1.,2.],[3.]]) * 2.5", "-R([[1,2],[3]])", "R([[1,2],[3]]) > 1",
 "tf.math.sqrt(R([[1.,4.],[9.]]))", "tf.math.maximum(R([[1,5],[3]]), 2)",
 "R([[1,2],[3]]).nested_row_lengths()", "R([[[1,2],[3]],[[4]]]).row_lengths(axis=2)", "R([[1,2],[3]]).bounding_shape()",
 "tf.RaggedTensor.from_value_rowids([1,2,3], [0,0,2], nrows=4)", "tf.ragged.range([0, 5], [3, 4])", "tf.ragged.range(3)",
 "tf.ragged.range([1, 2], 6, [2, 3])", "R([]).shape", "R([[], []]).to_list()", "R([[], []])",
 "R([['a','bb'],['c']]).to_tensor()", "tf.strings.length(R([['a','bb'],['c']]))", "tf.strings.join([R([['a','bb'],['c']]), 'x'])",
 "tf.strings.reduce_join(R([['a','bb'],['c']]), axis=1, separator='-')", "tf.strings.split(R([['a b','c'],['d e f']]))",
 "tf.strings.upper(R([['a','bb'],['c']]))", "tf.cast(R([[1,2],[3]]), tf.float64)", "R([[1,2],[3]]).shape",
 "tf.tile(R([[1,2],[3]]), [2, 1])", "tf.map_fn(lambda r: tf.reduce_sum(r), R([[1,2],[3]]), fn_output_signature=tf.int32)",
 "len(R([[1,2],[3]]))", "[r.numpy().tolist() for r in R([[1,2],[3]])]", "R([[1,2],[3]]).numpy()", "R([[1,2],[3,4]]).numpy()",
 "R([[1,2],[3]], dtype=tf.float32)", "R([[[1,2],[3,4]],[[5,6]]], ragged_rank=1)", "R([[[1,2],[3,4]],[[5,6]]], ragged_rank=1).shape",
 "R([[1,2],[3]], inner_shape=())", "R([1,2,3])", "R(5)", "R([[1,2],[3]]).values", "R([[[1,2],[3]],[[4]]]).values",
]


def run(tf):
    """{expression: its result's repr on one line, or '!! ExceptionClass'}."""
    import numpy as np  # noqa: F401  (the expressions may use it)
    R = tf.ragged.constant  # noqa: F841
    out = {}
    for c in CASES:
        try:
            out[c] = repr(eval(c)).replace("\n", " ")
        except Exception as e:  # noqa: BLE001 - the class is the expected outcome
            out[c] = "!! " + type(e).__name__
    return out
