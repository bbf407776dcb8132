"""The unsigned integer dtypes (uint16, uint32, uint64; uint8 was there before): TF 2.21's ops on
them, run by tests/tf_reference/make_unsigned_reference.py under TF into tests/data/unsigned_tf.json
and by tests/test_unsigned_dtypes.py under tapeflow (eagerly and inside tapeflow.function)."""

DTYPES = ("uint8", "uint16", "uint32", "uint64")

#: name -> f(tf, a, b) with a = [3, 5] and b = [2, 7] of the dtype
OPS = {
    "add": lambda tf, a, b: tf.add(a, b),
    "sub_wraps": lambda tf, a, b: tf.subtract(a, b),          # 5 - 7 wraps, as TF's kernel
    "mul": lambda tf, a, b: tf.multiply(a, b),
    "floordiv": lambda tf, a, b: tf.math.floordiv(a, b),
    "truediv": lambda tf, a, b: tf.math.truediv(a, b),        # float32 up to 16 bits, float64 above
    "floormod": lambda tf, a, b: tf.math.floormod(a, b),
    "maximum": lambda tf, a, b: tf.maximum(a, b),
    "minimum": lambda tf, a, b: tf.minimum(a, b),
    "equal": lambda tf, a, b: tf.equal(a, b),
    "less": lambda tf, a, b: tf.less(a, b),
    "reduce_sum": lambda tf, a, b: tf.reduce_sum(a),
    "reduce_max": lambda tf, a, b: tf.reduce_max(a),
    "reduce_prod": lambda tf, a, b: tf.reduce_prod(a),
    "reduce_mean": lambda tf, a, b: tf.reduce_mean(a),
    "reduce_mean_of_max": lambda tf, a, b: tf.reduce_mean(tf.stack([a.dtype.max + 0 * a[0], a.dtype.max - 2 + 0 * a[0]])),
    "cast_to_float": lambda tf, a, b: tf.cast(a, tf.float32),
    "cast_from_float": lambda tf, a, b: tf.cast(tf.constant([1.7, 3.0]), a.dtype),
    "bitwise_and": lambda tf, a, b: tf.bitwise.bitwise_and(a, b),
    "left_shift": lambda tf, a, b: tf.bitwise.left_shift(a, b),
    "gather": lambda tf, a, b: tf.gather(a, [1, 0]),
    "concat": lambda tf, a, b: tf.concat([a, b], 0),
    "where": lambda tf, a, b: tf.where([True, False], a, b),
    "argmax": lambda tf, a, b: tf.argmax(a),
    "square": lambda tf, a, b: tf.square(a),
    "cumsum": lambda tf, a, b: tf.cumsum(a),
    "sort": lambda tf, a, b: tf.sort(a),
    "fill": lambda tf, a, b: tf.fill([2], tf.constant(7, a.dtype)),
    "zeros": lambda tf, a, b: tf.zeros([2], a.dtype),
    "python_int_adopts_dtype": lambda tf, a, b: a + 1,
    "large_constant": lambda tf, a, b: tf.constant(2 ** 15 if a.dtype.size < 4 else 2 ** 31, a.dtype)
    if a.dtype.size > 1 else tf.constant(200, a.dtype),
    "one_hot_indices": lambda tf, a, b: tf.one_hot(a, 4),     # TF's kernel: uint8, int8, int32, int64 only
}


def summary(x):
    """A result as text: a tensor's dtype, shape and values (lists of Python ints/floats/bools)."""
    import numpy as np
    v = np.asarray(x.numpy())
    return {"dtype": x.dtype.name, "shape": list(v.shape), "value": v.tolist()}


def run(tf):
    """{'<dtype> <op>': summary, or '!! <exception class>'} for every dtype and op, eagerly."""
    out = {}
    for dt in DTYPES:
        d = getattr(tf, dt)
        a, b = tf.constant([3, 5], d), tf.constant([2, 7], d)
        for name, f in OPS.items():
            try:
                out[f"{dt} {name}"] = summary(f(tf, a, b))
            except Exception as e:  # noqa: BLE001 - the class is the outcome
                out[f"{dt} {name}"] = "!! " + type(e).__name__
        out[f"{dt} attributes"] = [int(d.min), int(d.max), d.size, d.is_unsigned, d.is_integer, d.is_floating,
                                   repr(d), str(d)]
    return out
