"""tf.image's resizing, crops, rotations, colour conversions and measures against TF 2.21's
outputs (tests/data/image_reference.npz from tests/tf_reference/make_image_reference.py, the
calls in tests/image_cases.py), eagerly and inside tf.function; resize's gradient is its
transpose; bad arguments raise as TF."""
import os

import numpy as np
import pytest

import tapeflow as tf
from image_cases import CALLS

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "image_reference.npz"))


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("compiled", [False, True])
def test_tf_image_matches_tf(name, compiled):
    fn = CALLS[name]
    call = tf.function(lambda x: fn(tf, x)) if compiled else (lambda x: fn(tf, x))
    got = call(tf.constant(REF["x"]))
    got = got if isinstance(got, tuple) else (got,)
    for i, g in enumerate(got):
        want = REF[f"{name}/{i}"]
        assert g.dtype.as_numpy_dtype == want.dtype and g.shape == want.shape
        if want.dtype.kind == "f":
            np.testing.assert_allclose(g.numpy(), want, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(g.numpy(), want)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("size", [(3, 7), (10, 8), (1, 1)])
def test_resize_gradient_is_its_transpose(method, size):
    # resize is linear in the image: <resize(x), w> == <x, d/dx <resize(x), w>> for any x, w
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((2, 5, 4, 3)).astype(np.float32))
    w = rng.standard_normal((2,) + size + (3,)).astype(np.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.image.resize(x, size, method=method) * w)
    g = tape.gradient(y, x).numpy().astype(np.float64)
    assert np.isclose(float(np.sum(g * x.numpy())), float(y), rtol=1e-5)
    if method == "nearest":   # each output pixel copies one input pixel: the gradient counts copies
        np.testing.assert_allclose(g.sum(), w.sum(), rtol=1e-5)


def test_random_flips_flip_whole_images_half_the_time():
    x = tf.constant(np.arange(400 * 2 * 3, dtype=np.float32).reshape(400, 2, 3, 1))
    y = tf.image.random_flip_left_right(x, seed=3).numpy()
    same = (y == x.numpy()).reshape(400, -1).all(axis=1)
    flipped = (y == x.numpy()[:, :, ::-1]).reshape(400, -1).all(axis=1)
    assert (same ^ flipped).all() and 0.4 < flipped.mean() < 0.6
    y = tf.image.random_flip_up_down(x, seed=4).numpy()
    flipped = (y == x.numpy()[:, ::-1]).reshape(400, -1).all(axis=1)
    assert ((y == x.numpy()).reshape(400, -1).all(axis=1) ^ flipped).all() and 0.4 < flipped.mean() < 0.6


@pytest.mark.parametrize("call,err,needle", [
    (lambda x: tf.image.resize(x[0, 0], (3, 3)), ValueError, "3 or 4 dimensions"),     # TF 2.21: ValueError
    (lambda x: tf.image.resize(x, (0, 3)), tf.errors.InvalidArgumentError, "positive"),  # TF: InvalidArgumentError
    (lambda x: tf.image.resize(x, (3,)), ValueError, "2 elements"),
    (lambda x: tf.image.resize(x, (3, 3), method="bogus"), ValueError, "not implemented"),
    (lambda x: tf.image.crop_to_bounding_box(x, 3, 0, 3, 2), ValueError, "inside"),
    (lambda x: tf.image.pad_to_bounding_box(x, 0, 0, 4, 4), ValueError, "fit"),
    (lambda x: tf.image.central_crop(x, 0.0), ValueError, "central_fraction"),
    (lambda x: tf.image.rgb_to_grayscale(x[..., :2]), ValueError, "3"),
])
def test_tf_image_bad_arguments(call, err, needle):
    with pytest.raises(err, match=needle):
        call(tf.constant(REF["x"]))


def test_random_flip_layer_in_training_only():
    x = np.arange(300 * 2 * 3, dtype=np.float32).reshape(300, 2, 3, 1)
    for mode, want in [("horizontal", x[:, :, ::-1]), ("vertical", x[:, ::-1]),
                       ("horizontal_and_vertical", x[:, ::-1, ::-1])]:     # Keras 3: one draw for both
        layer = tf.keras.layers.RandomFlip(mode, seed=5)
        y = layer(x).numpy()                       # Keras 3: a direct call is training
        same = (y == x).reshape(300, -1).all(axis=1)
        flipped = (y == want).reshape(300, -1).all(axis=1)
        assert (same ^ flipped).all() and 0.4 < flipped.mean() < 0.6, mode
        np.testing.assert_array_equal(layer(x, training=False).numpy(), x)


def test_random_crop_draws_offsets_per_call_also_when_traced():
    x = np.arange(6 * 7, dtype=np.float32).reshape(1, 6, 7, 1)
    layer = tf.keras.layers.RandomCrop(3, 4, seed=2)
    step = tf.function(lambda x: layer(x, training=True))
    tops = set()
    for _ in range(40):
        y = step(x).numpy()[0, :, :, 0]
        top, left = divmod(int(y[0, 0]), 7)
        np.testing.assert_array_equal(y, x[0, top:top + 3, left:left + 4, 0])   # a real window of x
        tops.add((top, left))
    assert len(tops) > 5      # a crop drawn at trace time would repeat one window


@pytest.mark.parametrize("cls", ["RandomContrast", "RandomBrightness"])
def test_random_contrast_and_brightness_per_image_within_keras_ranges(cls):
    rng = np.random.default_rng(6)
    x = rng.uniform(50, 200, (300, 4, 5, 3)).astype(np.float32)
    layer = getattr(tf.keras.layers, cls)(0.3, seed=7)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    y = layer(x).numpy()
    assert y.min() >= 0 and y.max() <= 255
    mean = x.mean(axis=(1, 2), keepdims=True)
    if cls == "RandomContrast":
        # one factor per image (all channels). Keras 3 reads factor=0.3 as (lower, upper) =
        # (max(-0.3, 0), 0.3) and draws from [1 - lower, 1 + upper] = [1.0, 1.3] (TF 2.21 too)
        f = ((y - mean) / (x - mean)).reshape(300, -1)
        inside = (y > 0).all(axis=(1, 2, 3)) & (y < 255).all(axis=(1, 2, 3))
        np.testing.assert_allclose(f[inside], f[inside][:, :1].repeat(f.shape[1], 1), rtol=1e-3)
        assert 0.9999 <= f[inside].min() and f[inside].max() <= 1.3 and f[inside][:, 0].std() > 0.06
    else:                          # one delta per image, uniform in [-0.3, 0.3] * 255
        d = (y - x).reshape(300, -1)
        inside = (y > 0).all(axis=(1, 2, 3)) & (y < 255).all(axis=(1, 2, 3))
        np.testing.assert_allclose(d[inside], d[inside][:, :1].repeat(d.shape[1], 1), atol=1e-3)
        assert -76.6 <= d.min() and d.max() <= 76.6 and d[inside][:, 0].std() > 20
    with pytest.raises(ValueError, match="factor"):
        getattr(tf.keras.layers, cls)(1.5)


@pytest.mark.parametrize("make", [lambda: tf.keras.layers.RandomRotation(0.3, seed=1),
                                  lambda: tf.keras.layers.RandomZoom(0.4, seed=1),
                                  lambda: tf.keras.layers.RandomTranslation(0.3, 0.3, seed=1)])
def test_affine_layers_draw_per_image_and_per_traced_call(make):
    x = np.repeat(REF["x"][:1], 4, axis=0)             # four copies of one image
    layer = make()
    step = tf.function(lambda x: layer(x, training=True))
    a, b = step(x).numpy(), step(x).numpy()
    assert not np.allclose(a[0], a[1])                  # a draw per image
    assert not np.allclose(a, b)                        # and per call of the traced step
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
