"""Records TF 2.21's stateless random ops added in wave 21 for tests/test_random21.py: index_shuffle /
random_index_shuffle, stateless_shuffle and stateless_binomial (whose numbers tapeflow reproduces bit for
bit), and the error texts of bad arguments.

Run with the peers venv (it has TensorFlow), from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_random21_reference.py
Writes tests/data/random21_tf.json.
"""
import json
import os

import numpy as np
import tensorflow as tf


def rec(t):
    a = np.asarray(t)
    return {"values": a.ravel().tolist(), "dtype": a.dtype.name, "shape": list(a.shape)}


out = {"tensorflow": tf.__version__, "index_shuffle": [], "random_index_shuffle": [], "stateless_shuffle": [],
       "binomial": [], "errors": {}}
for index, seed, max_index, dt in (
        (list(range(10)), [5, 8], 9, "int32"), (list(range(10)), [5, 9], 9, "int64"),
        ([0, 1, 12345, 99999], [1, 2], 100000, "int32"), (list(range(20)), [-3, 2 ** 31 - 1], 19, "uint32"),
        ([0, 7, 2 ** 40], [11, 12], 2 ** 41, "int64"), ([0], [0, 0], 0, "int32"), (list(range(6)), [4, 4], 65536, "int32"),
        (123, [9, 9], 1000, "uint64")):
    r = tf.random.experimental.index_shuffle(tf.constant(index, dt), tf.constant(seed, tf.int64 if dt == "int64" else
                                                                                 tf.int32), tf.constant(max_index, dt))
    out["index_shuffle"].append({"index": index, "seed": seed, "max_index": max_index, "dtype": dt, "out": rec(r)})
for index, seed, max_index, rounds in ((3, [1, 2, 3], 10, 4), (3, [1, 2, 3], 10, 8), ([0, 1, 2, 3], [7, 8, 9], 1000, 6),
                                       (list(range(8)), [[i, i + 1, i + 2] for i in range(8)], 50, 4)):
    r = tf.random_index_shuffle(tf.constant(index), tf.constant(seed), tf.constant(max_index), rounds=rounds)
    out["random_index_shuffle"].append({"index": index, "seed": seed, "max_index": max_index, "rounds": rounds,
                                        "out": rec(r)})
for shape, seed in (([10], [1, 2]), ([6, 2], [7, 3]), ([1], [4, 4]), ([1000], [123, -5]), ([40, 3, 2], [2 ** 40, 9])):
    v = tf.reshape(tf.range(int(np.prod(shape))), shape)
    r = tf.random.experimental.stateless_shuffle(v, seed=seed)
    out["stateless_shuffle"].append({"shape": shape, "seed": seed, "out": rec(r)})
for shape, seed, counts, probs, pdt, odt in (
        ([5], [1, 2], 10.0, 0.3, "float32", "int32"), ([5], [1, 2], [10, 20, 30, 40, 50], 0.5, "float32", "int64"),
        ([3, 4], [7, 7], [5.0, 50.0, 500.0, 5000.0], [0.1, 0.6, 0.02, 0.97], "float64", "float32"),
        ([200], [3, 1], 100.0, 0.25, "float32", "int32"), ([2, 3], [9, 0], [[0.0], [7.0]], [0.0, 1.0, 0.5], "float32",
                                                            "float64"),
        ([64], [5, 5], 1000.0, 0.9, "float16", "int32"), ([4, 2], [11, 3], [40.0, 3.0], 0.7, "float64", "float16")):
    p = tf.constant(probs, pdt)
    c = tf.constant(counts, pdt)
    r = tf.random.stateless_binomial(shape, seed, c, p, output_dtype=odt)
    out["binomial"].append({"shape": shape, "seed": seed, "counts": counts, "probs": probs, "pdtype": pdt,
                            "odtype": odt, "out": rec(r)})


def err(name, f):
    try:
        f()
        out["errors"][name] = None
    except Exception as e:  # noqa: BLE001
        out["errors"][name] = [type(e).__name__, str(e).split("\n")[0]]


err("binomial_shape_suffix", lambda: tf.random.stateless_binomial([5], [1, 2], [1.0, 2.0], 0.5))
err("binomial_bad_seed", lambda: tf.random.stateless_binomial([5], [1, 2, 3], 1.0, 0.5))
err("binomial_int_probs", lambda: tf.random.stateless_binomial([5], [1, 2], 3, tf.constant(1)))
err("ptn_invalid", lambda: tf.random.stateless_parameterized_truncated_normal([3], [1, 2], stddevs=-1.0))
err("ptn_min_max", lambda: tf.random.stateless_parameterized_truncated_normal([3], [1, 2], minvals=2.0, maxvals=1.0))
err("index_shuffle_index_above_max", lambda: tf.random.experimental.index_shuffle(tf.constant([3]), [1, 2], 0))
err("index_shuffle_batched_seed", lambda: tf.random.experimental.index_shuffle(tf.constant([5, 6, 7]),
                                                                              [[1, 2], [3, 4], [5, 6]], 10))
err("index_shuffle_float", lambda: tf.random.experimental.index_shuffle(tf.constant(3.0), [1, 2], 10.0))
err("random_index_shuffle_seed", lambda: tf.random_index_shuffle(tf.constant(3), tf.constant([1, 2]), tf.constant(10)))
ptn = tf.random.stateless_parameterized_truncated_normal([100000], [1, 2], means=1.0, stddevs=2.0, minvals=3.0,
                                                         maxvals=9.0).numpy()
out["ptn_moments"] = {"mean": float(ptn.mean()), "std": float(ptn.std()), "min": float(ptn.min()),
                      "max": float(ptn.max())}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "random21_tf.json")
with open(path, "w") as f:
    json.dump(out, f, indent=0)
print("wrote", os.path.normpath(path))
print(json.dumps(out["errors"], indent=1))
