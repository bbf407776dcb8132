"""Random draws of a shape known only when the function runs (wave 25), as cases written once for both
frameworks (the framework passed in): tests/tf_reference/make_random25_reference.py runs them with TensorFlow
and records the outputs in tests/data/random25_tf.npz; tests/test_dynamic_random25.py runs them with tapeflow.

A case is ``fn(tf) -> list of arrays``: a ``tf.function`` whose input_signature leaves the batch None, called
with a batch of 2 and then of 5 (one trace; the second call goes on with the op's stream), after
``tf.random.set_seed(11)``.
"""
import numpy as np

CASES = {}
X2 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7 + 1
X5 = np.arange(60, dtype=np.float32).reshape(5, 3, 4) / 11 - 2


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _twice(tf, body, layer=None):
    tf.random.set_seed(11)
    spec = [tf.TensorSpec([None, 3, 4], tf.float32)]
    f = tf.function(body, input_signature=spec)
    return [np.asarray(f(tf.constant(X2)).numpy()), np.asarray(f(tf.constant(X5)).numpy())]


@case
def uniform_shape_vector(tf):
    return _twice(tf, lambda t: tf.random.uniform(tf.shape(t), seed=3))


@case
def normal_mixed_list(tf):
    return _twice(tf, lambda t: tf.random.normal([tf.shape(t)[0], 2], seed=4))


@case
def truncated_normal_global_seed(tf):
    return _twice(tf, lambda t: tf.random.truncated_normal(tf.shape(t)))


@case
def uniform_int(tf):
    return _twice(tf, lambda t: tf.random.uniform([tf.shape(t)[0], 3], maxval=100, dtype=tf.int32, seed=6))


@case
def stateless_normal(tf):
    return _twice(tf, lambda t: tf.random.stateless_normal(tf.shape(t), [1, 2]))


@case
def stateless_uniform_full_int(tf):
    return _twice(tf, lambda t: tf.random.stateless_uniform(tf.shape(t), [3, 4], minval=None, maxval=None,
                                                            dtype=tf.int32))


@case
def dropout(tf):
    return _twice(tf, lambda t: tf.nn.dropout(t, 0.5, seed=1))


@case
def dropout_noise_shape(tf):
    return _twice(tf, lambda t: tf.nn.dropout(t, 0.4, noise_shape=[tf.shape(t)[0], 1, 4], seed=1))


@case
def keras_dropout(tf):
    layer = tf.keras.layers.Dropout(0.5, seed=7)
    return _twice(tf, lambda t: layer(t, training=True))


@case
def keras_gaussian_noise(tf):
    layer = tf.keras.layers.GaussianNoise(0.5, seed=7)
    return _twice(tf, lambda t: layer(t, training=True))


@case
def keras_gaussian_dropout(tf):
    layer = tf.keras.layers.GaussianDropout(0.3, seed=7)
    return _twice(tf, lambda t: layer(t, training=True))


@case
def shuffle(tf):
    return _twice(tf, lambda t: tf.random.shuffle(t, seed=2))


@case
def categorical(tf):
    return _twice(tf, lambda t: tf.random.categorical(t[:, 0, :], 3, seed=2))


@case
def stateless_categorical(tf):
    return _twice(tf, lambda t: tf.random.stateless_categorical(t[:, 1, :], 6, [5, 6]))
