"""TF's tf.scan, tf.foldl and tf.foldr (compositions of the scan loop) against TF 2.21: TF_OUT is
what TF printed for _run. JAX's carry-and-output scan is tapeflow.lax.scan."""
import numpy as np

import tapeflow as tf

TF_OUT = """
cumsum [1.0, 3.0, 6.0, 10.0]
init [2.0, 4.0, 12.0, 48.0]
rev [10.0, 9.0, 7.0, 4.0]
rev_init [0.0, 1.0, 3.0, 6.0]
nested ([1.0, 3.0, 6.0, 10.0], [2.0, 8.0, 48.0, 384.0])
fib ([1, 1, 2, 3, 5, 8], [1, 2, 3, 5, 8, 13])
shape [[0.0, 1.0], [2.0, 4.0], [6.0, 9.0]]
one [5.0]
foldl -8.0
foldr -2.0
foldl_i 110.0
fn_scan [1.0, 4.0, 11.0, 26.0]
grad 30.0
"""


def _run():
    out = []

    def show(n, f):
        out.append(f"{n} {tf.nest.map_structure(lambda t: np.asarray(t).tolist(), f())}")
    e = tf.constant([1., 2., 3., 4.])
    show("cumsum", lambda: tf.scan(lambda a, x: a + x, e))
    show("init", lambda: tf.scan(lambda a, x: a * x, e, initializer=tf.constant(2.)))
    show("rev", lambda: tf.scan(lambda a, x: a + x, e, reverse=True))
    show("rev_init", lambda: tf.scan(lambda a, x: a - x, e, initializer=tf.constant(10.), reverse=True))
    show("nested", lambda: tf.scan(lambda a, x: (a[0] + x[0], a[1] * x[1]), (e, e * 2)))
    show("fib", lambda: tf.scan(lambda a, _: (a[1], a[0] + a[1]), tf.range(6),
                                initializer=(tf.constant(0), tf.constant(1))))
    show("shape", lambda: tf.scan(lambda a, x: a + x, tf.reshape(tf.range(6.), [3, 2])))
    show("one", lambda: tf.scan(lambda a, x: a + x, tf.constant([5.])))
    show("foldl", lambda: tf.foldl(lambda a, x: a - x, e))
    show("foldr", lambda: tf.foldr(lambda a, x: a - x, e))
    show("foldl_i", lambda: tf.foldl(lambda a, x: a + x, e, initializer=100.))
    show("fn_scan", lambda: tf.function(lambda t: tf.scan(lambda a, x: a * 2 + x, t))(e))

    def grad():
        x = tf.constant(2.)
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.scan(lambda a, v: a * x + v, e))
        return t.gradient(y, x)
    show("grad", grad)
    return out


def test_scan_and_folds_match_tf():
    assert _run() == TF_OUT.strip().splitlines()


def test_jax_scan_is_under_lax():
    carry, ys = tf.lax.scan(lambda c, x: (c + x, c * x), tf.constant(0.), tf.constant([1., 2., 3.]))
    assert float(carry) == 6.0 and ys.numpy().tolist() == [0.0, 2.0, 9.0]
