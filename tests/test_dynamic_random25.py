"""Random draws whose shape is known only when the function runs (wave 25): inside ``tapeflow.function``
with an input_signature that leaves the batch None, a draw of tf.shape(x), of a list mixing ints and traced
scalars, or of an aval with None (dropout, the Keras noise layers), runs with its size filled in when the
function runs. TF's Philox streams depend on the element count only, so a run-time shape (2, 3, 4) draws the
numbers of the static (2, 3, 4): compiled with a None batch == eager == compiled with the static shape, and
TF 2.21's own numbers for the same program (tests/data/random25_tf.npz, recorded by
tests/tf_reference/make_random25_reference.py from tests/tf_reference/random25_cases.py)."""
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "tf_reference"))
import random25_cases as C  # noqa: E402

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "random25_tf.npz"))
X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 5 + 1
DYN = [tf.TensorSpec([None, 3, 4], tf.float32)]
STATIC = [tf.TensorSpec([2, 3, 4], tf.float32)]
K = tf.keras.layers


@pytest.mark.parametrize("name", sorted(C.CASES))
def test_tf_numbers_with_a_none_batch(name):
    """TF 2.21's outputs, bit for bit: batch 2, then batch 5 going on with the op's stream."""
    got = C.CASES[name](tf)
    for i, g in enumerate(got):
        want = REF[f"{name}/{i}"]
        assert g.shape == want.shape and g.dtype == want.dtype, (name, i, g.shape, want.shape)
        np.testing.assert_array_equal(g, want, err_msg=f"{name} output {i}")


# draws of x's shape: fn(t) of a (batch, 3, 4) float32 tensor
DRAWS = {
    "uniform": lambda t: tf.random.uniform(tf.shape(t), minval=-1.0, maxval=2.0, seed=3),
    "uniform_int": lambda t: tf.random.uniform([tf.shape(t)[0], 2], maxval=10, dtype=tf.int64, seed=3),
    "normal": lambda t: t + tf.random.normal(tf.shape(t), seed=4),
    "normal_float64": lambda t: tf.random.normal([tf.shape(t)[0], 5], dtype=tf.float64, seed=4),
    "truncated_normal": lambda t: tf.random.truncated_normal(tf.shape(t), stddev=2.0, seed=5),
    "stateless_uniform": lambda t: tf.random.stateless_uniform(tf.shape(t), [1, 2]),
    "stateless_uniform_int": lambda t: tf.random.stateless_uniform([tf.shape(t)[0]], [1, 2], minval=0, maxval=7,
                                                                   dtype=tf.int32),
    "stateless_normal": lambda t: tf.random.stateless_normal(tf.shape(t), [1, 2]),
    "stateless_truncated_normal": lambda t: tf.random.stateless_truncated_normal(tf.shape(t), [1, 2]),
    "stateless_categorical": lambda t: tf.random.stateless_categorical(t[:, 0, :], 3, [1, 2]),
    "stateless_gamma": lambda t: tf.random.stateless_gamma(tf.shape(t), [1, 2], alpha=2.0),
    "stateless_poisson": lambda t: tf.random.stateless_poisson(tf.shape(t), [1, 2], lam=3.0),
    "stateless_binomial": lambda t: tf.random.stateless_binomial(tf.shape(t), [1, 2], counts=5.0, probs=0.3),
    "stateless_parameterized_truncated_normal": lambda t: tf.random.stateless_parameterized_truncated_normal(
        tf.shape(t), [1, 2], means=0.5, minvals=-1.0, maxvals=[1.0, 2.0, 3.0, 4.0]),
    "stateless_shuffle": lambda t: tf.random.experimental.stateless_shuffle(t, [1, 2]),
    "gamma": lambda t: tf.random.gamma([tf.shape(t)[0]], [1.5, 3.0], beta=[1.0, 2.0], seed=3),
    "poisson": lambda t: tf.random.poisson(tf.shape(t), 3.0, dtype=tf.int32, seed=4),
    "dropout": lambda t: tf.nn.dropout(t, 0.5, seed=1),
    "dropout_noise_shape": lambda t: tf.nn.dropout(t, 0.4, noise_shape=[tf.shape(t)[0], 1, 4], seed=1),
    "shuffle": lambda t: tf.random.shuffle(t, seed=2),
    "categorical": lambda t: tf.random.categorical(t[:, 0, :], 3, seed=2),
    "generator_normal": "generator",
    "keras_random_dropout": lambda t: tf.keras.random.dropout(t, 0.5, seed=3),
}
# layers called with training=True (made outside the function, as a model's are); unseeded ones draw from
# the global stream, which set_seed restarts
LAYERS = {
    "Dropout": lambda: K.Dropout(0.5, seed=7),
    "Dropout_unseeded": lambda: K.Dropout(0.5),
    "Dropout_noise_shape": lambda: K.Dropout(0.5, noise_shape=(None, 1, 4), seed=7),
    "GaussianNoise": lambda: K.GaussianNoise(0.5, seed=7),
    "GaussianNoise_unseeded": lambda: K.GaussianNoise(0.5),
    "GaussianDropout": lambda: K.GaussianDropout(0.3, seed=7),
    "GaussianDropout_unseeded": lambda: K.GaussianDropout(0.3),
    "AlphaDropout": lambda: K.AlphaDropout(0.5, seed=7),
    "SpatialDropout1D": lambda: K.SpatialDropout1D(0.5, seed=7),
    "SpatialDropout1D_unseeded": lambda: K.SpatialDropout1D(0.5),
}


def _fn(name):
    if name in LAYERS:
        layer = LAYERS[name]()
        return lambda t: layer(t, training=True)
    if DRAWS[name] == "generator":
        g = tf.random.Generator.from_seed(5)
        return lambda t: g.normal(tf.shape(t))
    return DRAWS[name]


@pytest.mark.parametrize("name", sorted(DRAWS) + sorted(LAYERS))
def test_a_run_time_shape_draws_the_static_shapes_numbers(name):
    out = []
    for mode in ("eager", "none batch", "static"):
        tf.random.set_seed(11)
        f = _fn(name)
        if mode == "eager":
            out.append(f(tf.constant(X)).numpy())
        else:
            out.append(tf.function(f, input_signature=DYN if mode == "none batch" else STATIC)(X).numpy())
    for o in out[1:]:
        assert o.shape == out[0].shape and o.dtype == out[0].dtype
        np.testing.assert_array_equal(o, out[0])


def test_one_trace_serves_every_batch_size():
    f = tf.function(lambda t: (tf.nn.dropout(t, 0.5, seed=1), tf.random.normal([tf.shape(t)[0], 2], seed=2),
                               tf.random.shuffle(t, seed=3), tf.random.categorical(t[:, 0, :], 2, seed=4)),
                    input_signature=DYN)
    for n in (2, 5, 1, 0):
        d, z, s, c = f(np.ones((n, 3, 4), np.float32))
        assert d.shape == (n, 3, 4) and z.shape == (n, 2) and s.shape == (n, 3, 4) and c.shape == (n, 2)
    assert f.experimental_get_tracing_count() == 1


def test_the_traced_shape_keeps_the_known_dims():
    """TF's constant_value_as_shape: a draw of tf.shape(x) has x's known dims in its static shape."""
    seen = []

    def f(t):
        r = tf.random.normal(tf.shape(t))
        seen.extend([r.shape, tf.random.uniform([tf.shape(t)[0], 2]).shape,
                     tf.random.normal(tf.stack([tf.shape(t)[0], 3])).shape,
                     tf.random.normal(tf.concat([tf.shape(t)[:-1], [5]], 0)).shape,
                     tf.random.normal([tf.shape(t)[1], tf.shape(t)[0]]).shape,
                     tf.random.normal(tf.cast(tf.shape(t)[1:], tf.int64)).shape])
        return t + r, tf.random.normal(tf.concat([tf.shape(t)[:-1], [5]], 0)), \
            tf.random.normal([tf.shape(t)[2], tf.shape(t)[0]])
    f2 = tf.function(f, input_signature=DYN)
    _, c, d = f2(np.ones((6, 3, 4), np.float32))
    assert [tuple(s) for s in seen] == [(None, 3, 4), (None, 2), (None, 3), (None, 3, 5), (3, None), (3, 4)]
    assert c.shape == (6, 3, 5) and d.shape == (4, 6)


def test_gradient_through_dropout_with_a_none_batch():
    def make():
        layer = K.GaussianDropout(0.3, seed=2)

        def f(t):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(t)
                y = tf.reduce_sum(tf.nn.dropout(t, 0.5, seed=1) ** 2)
                z = tf.reduce_sum(layer(t, training=True))
            return tape.gradient(y, t), tape.gradient(z, t)
        return f
    tf.random.set_seed(3)
    eager = [g.numpy() for g in make()(tf.constant(X))]
    tf.random.set_seed(3)
    compiled = [g.numpy() for g in tf.function(make(), input_signature=DYN)(X)]
    for c, e in zip(compiled, eager):
        np.testing.assert_array_equal(c, e)
    assert (eager[0] == 0).any() and (eager[0] != 0).any()


def test_a_negative_run_time_dimension_raises_tfs_error():
    f = tf.function(lambda n: tf.random.uniform([n, 2]), input_signature=[tf.TensorSpec([], tf.int32)])
    assert f(3).shape == (3, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Dimension -2 must be >= 0"):
        f(-2)


@pytest.mark.parametrize("fn, spec, op", [
    # TF 2.21: "Cannot convert a partially known TensorShape (None, 1, 4) to a Tensor" (a ValueError)
    (lambda t: tf.nn.dropout(t, 0.5, noise_shape=[None, 1, 4], seed=1), DYN, "dropout"),
    (lambda t: tf.random.experimental.stateless_shuffle(t, [1, 2]), [tf.TensorSpec([None, None, None], tf.float32)],
     "stateless_shuffle"),
    (lambda t: tf.random.shuffle(t, seed=1), [tf.TensorSpec([None, None, None], tf.float32)], "random.shuffle"),
])
def test_what_still_needs_the_size_refuses_by_name(fn, spec, op):
    with pytest.raises(ValueError, match=rf"^{op}: .*known only when the function runs"):
        tf.function(fn, input_signature=spec)(X)


def test_noise_shape_none_is_filled_from_a_known_shape():
    """TF fills a None of noise_shape from x's static shape (eagerly, and traced with it known): it raised."""
    eager = tf.nn.dropout(tf.ones((2, 3, 4)), 0.5, noise_shape=[None, 1, 4], seed=1).numpy()
    assert eager.shape == (2, 3, 4) and (eager[:, 0] == eager[:, 1]).all()
    traced = tf.function(lambda t: tf.nn.dropout(t, 0.5, noise_shape=[None, 1, 4], seed=1))(np.ones((2, 3, 4),
                                                                                               np.float32))
    assert traced.shape == (2, 3, 4)


IMAGES = np.random.default_rng(0).random((2, 8, 8, 3)).astype(np.float32)
IMAGE_DRAWS = {
    "RandomFlip": lambda: K.RandomFlip(seed=1),
    "RandomRotation": lambda: K.RandomRotation(0.2, seed=1),
    "RandomZoom": lambda: K.RandomZoom(0.2, seed=1),
    "RandomTranslation": lambda: K.RandomTranslation(0.2, 0.2, seed=1),
    "RandomContrast": lambda: K.RandomContrast(0.2, seed=1),
    "RandomBrightness": lambda: K.RandomBrightness(0.2, seed=1),
    "RandomErasing": lambda: K.RandomErasing(fill_value=None, seed=1),
    "RandomGrayscale": lambda: K.RandomGrayscale(0.5, seed=1),
    "RandomSaturation": lambda: K.RandomSaturation(0.2, seed=1),
    "RandomInvert": lambda: K.RandomInvert(seed=1),
    "RandomPosterization": lambda: K.RandomPosterization((1, 8), seed=1),
    "RandomHue": lambda: K.RandomHue(0.2, seed=1),
    "RandomShear": lambda: K.RandomShear(0.2, seed=1),
    "RandomPerspective": lambda: K.RandomPerspective(seed=1),
    "MixUp": lambda: K.MixUp(seed=1),
    "CutMix": lambda: K.CutMix(seed=1),
    "RandAugment": lambda: K.RandAugment(value_range=(0, 1), seed=1),
    "AugMix": lambda: K.AugMix(value_range=(0, 1), seed=1),
    "RandomColorJitter": lambda: K.RandomColorJitter(value_range=(0, 1), brightness_factor=0.2,
                                                     contrast_factor=0.2, seed=1),
    "random_flip_left_right": lambda: (lambda t, training=None: tf.image.random_flip_left_right(t, seed=1)),
    "stateless_random_flip_up_down": lambda: (lambda t, training=None: tf.image.stateless_random_flip_up_down(
        t, [1, 2])),
}


@pytest.mark.parametrize("name", sorted(IMAGE_DRAWS))
def test_image_augmentations_of_a_none_batch(name):
    out = []
    for spec in (None, [tf.TensorSpec([None, 8, 8, 3], tf.float32)], [tf.TensorSpec([2, 8, 8, 3], tf.float32)]):
        tf.random.set_seed(5)
        layer = IMAGE_DRAWS[name]()

        def f(t):
            return layer(t, training=True)
        out.append((f(tf.constant(IMAGES)) if spec is None else tf.function(f, input_signature=spec)(IMAGES)).numpy())
    np.testing.assert_array_equal(out[2], out[0])
    np.testing.assert_array_equal(out[1], out[0])


SEQ = np.random.default_rng(1).random((2, 5, 4)).astype(np.float32)


@pytest.mark.parametrize("make", [
    lambda: K.LSTM(3, seed=1),
    lambda: K.LSTM(3, dropout=0.3, recurrent_dropout=0.3, seed=1),
    lambda: K.GRU(3, dropout=0.3, recurrent_dropout=0.3, seed=1),
    lambda: K.SimpleRNN(3, dropout=0.3, recurrent_dropout=0.3, seed=1, return_sequences=True),
], ids=["LSTM", "LSTM_dropout", "GRU_dropout", "SimpleRNN_dropout"])
def test_recurrent_layers_of_a_none_batch(make):
    """The scan's zero states were (?, ?) (a stacked shape vector hid the units) and the first step's (?, 3)
    refused to loop: every RNN of a None batch raised, with or without dropout. Its dropout masks are drawn
    with the batch size the function runs with."""
    out = []
    for spec in (None, [tf.TensorSpec([None, 5, 4], tf.float32)], [tf.TensorSpec([2, 5, 4], tf.float32)]):
        tf.random.set_seed(5)
        layer = make()

        def f(t):
            return layer(t, training=True)
        out.append((f(tf.constant(SEQ)) if spec is None else tf.function(f, input_signature=spec)(SEQ)).numpy())
    for o in out[1:]:
        np.testing.assert_allclose(o, out[0], rtol=1e-6, atol=1e-7)


def test_elastic_transform_of_a_none_batch():
    """RandomElasticTransform draws from its own stream when traced (eagerly Keras' SeedGenerator's numbers),
    so a None batch is checked against the static trace: the same draws, the same images."""
    out = []
    for spec in ([None, 8, 8, 3], [2, 8, 8, 3]):
        layer = K.RandomElasticTransform(factor=1.0, value_range=(0, 1), seed=1)
        out.append(tf.function(lambda t: layer(t, training=True),
                               input_signature=[tf.TensorSpec(spec, tf.float32)])(IMAGES).numpy())
    np.testing.assert_array_equal(out[0], out[1])
    assert not np.array_equal(out[0], IMAGES)


def test_select_of_two_python_scalars_keeps_the_weak_dtype():
    """RandomShear's sign, where(u > 0.5, -1.0, 1.0), is a select of two inline literals in its trace; the kernel
    gave float64 (np.where of Python floats) under a float32 aval, and the reference interpreter and a None batch's
    compiled code went on in float64: RandomHue/RandomShear/RandAugment/AugMix one ulp off eager."""
    from tapeflow.core.primitives.elementwise import select_p
    c = np.array([True, False])
    assert select_p.impl(c, -1.0, 1.0).dtype == np.float32
    assert select_p.impl(c, 2, 3).dtype == np.int32
    assert select_p.impl(c, 2, 0.5).dtype == np.float32
    assert select_p.impl(c, np.zeros(2, np.float64), 1.0).dtype == np.float64
