"""Wave 21 (branch nn21): the tf.nn / tf.image ops TF 2.21 has and tapeflow lacked, against TF's
recorded outputs (tests/data/nn21_reference.npz from tests/tf_reference/make_nn21_reference.py, the
calls in tests/nn21_cases.py), eagerly and inside tf.function; gradients against finite
differences; behaviour TF's numbers cannot pin (random draws) against its documented law."""
import os

import numpy as np
import pytest

import tapeflow as tf
from nn21_cases import CALLS

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "nn21_reference.npz"))


def _flat(r):
    if isinstance(r, (tuple, list)):
        return [y for x in r for y in _flat(x)]
    return [r]


def _check(name, got):
    for i, g in enumerate(_flat(got)):
        if isinstance(g, tf.SparseTensor):
            parts = [(getattr(g, p), REF[f"{name}/{i}.{p}"]) for p in ("indices", "values", "dense_shape")]
        else:
            parts = [(g, REF[f"{name}/{i}"])]
        for g, want in parts:
            g = g if isinstance(g, tf.Tensor) else tf.constant(g)
            assert g.dtype.as_numpy_dtype == want.dtype and tuple(g.shape) == want.shape, (name, i, g, want)
            if want.dtype.kind == "f":
                np.testing.assert_allclose(g.numpy(), want, rtol=1e-5, atol=1e-6, err_msg=f"{name}/{i}")
            else:
                np.testing.assert_array_equal(g.numpy(), want, err_msg=f"{name}/{i}")
    assert f"{name}/{len(_flat(got))}" not in REF.files


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("compiled", [False, True])
def test_matches_tf(name, compiled):
    fn, inputs, traceable = CALLS[name]
    if compiled and not traceable:
        pytest.skip("value-dependent SparseTensor output: eager only")
    call = tf.function(lambda *xs: fn(tf, *xs)) if compiled else (lambda *xs: fn(tf, *xs))
    _check(name, call(*[tf.constant(x) for x in inputs]))


# -- detection: what TF's recorded numbers cannot pin ------------------------------------------------

@pytest.mark.parametrize("noise", ["uniform", "gaussian"])
def test_extract_glimpse_noise_fills_only_outside_pixels(noise):
    x = np.random.default_rng(0).uniform(2.0, 5.0, (2, 6, 7, 2)).astype(np.float32)
    off = np.array([[-0.9, 0.95], [1.5, -1.5]], np.float32)
    got = tf.image.extract_glimpse(x, [5, 6], off, noise=noise).numpy()
    zero = tf.image.extract_glimpse(x, [5, 6], off, noise="zero").numpy()
    inside = zero != 0                        # x > 0 everywhere: the zero-noise glimpse marks the image pixels
    np.testing.assert_array_equal(got[inside], zero[inside])
    fill = got[~inside]
    assert fill.size > 20 and len(np.unique(fill)) == fill.size     # noise, not a constant
    if noise == "uniform":                    # TF: min + U[0, 1) * (max - min) of the image
        assert fill.min() >= 2.0 and fill.max() <= 5.0
    else:
        assert abs(fill.mean() - x.mean()) < 0.6


def test_extract_glimpse_gradient_routes_to_the_window():
    x = tf.constant(np.random.default_rng(1).standard_normal((2, 6, 7, 2)).astype(np.float32))
    off = tf.constant(np.array([[0.1, 0.2], [-0.9, 0.95]], np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.image.extract_glimpse(x, [4, 5], off, noise="zero") ** 2)
    g = tape.gradient(y, x).numpy()
    win = tf.image.extract_glimpse(tf.ones_like(x), [4, 5], off, noise="zero").numpy()
    assert g[np.abs(g) > 0].size == int(win.sum())                  # one pixel per in-image window pixel
    np.testing.assert_allclose(float(y), float(np.sum(g * x.numpy()) / 2), rtol=1e-5)   # d/dx sum x^2 = 2x


def test_sample_distorted_bounding_box_stateful_is_in_tfs_law():
    # the stateful op is the stateless algorithm on a seed pair from tapeflow's stream: every crop
    # is one the stateless op can make, seeded calls repeat, and the crops vary between calls
    tf.random.set_seed(3)
    bb = np.array([[[0.1, 0.2, 0.5, 0.6]]], np.float32)
    first = [tuple(tf.image.sample_distorted_bounding_box([100, 80, 3], bb, seed=5)[1].numpy()) for _ in range(30)]
    tf.random.set_seed(3)
    again = [tuple(tf.image.sample_distorted_bounding_box([100, 80, 3], bb, seed=5)[1].numpy()) for _ in range(30)]
    assert first == again and len(set(first)) > 10
    for begin, size, box in [tf.image.sample_distorted_bounding_box([100, 80, 3], bb) for _ in range(20)]:
        (y, x, z), (h, w, m) = begin.numpy(), size.numpy()
        assert z == 0 and m == -1 and 0 <= y and y + h <= 100 and 0 <= x and x + w <= 80
        assert 0.05 * 8000 <= h * w <= 8000 and (0.75 * h - 1 <= w <= 1.33 * h + 1 or (h, w) == (100, 80))
        np.testing.assert_allclose(box.numpy(), [[[y / 100, x / 80, (y + h) / 100, (x + w) / 80]]], rtol=1e-6)


def test_sample_distorted_bounding_box_compiled_matches_eager():
    f = tf.function(lambda s, sd: tf.image.stateless_sample_distorted_bounding_box(s, [[[0.1, 0.2, 0.5, 0.6]]], sd))
    for i in range(5):
        want = tf.image.stateless_sample_distorted_bounding_box([64, 48, 3], [[[0.1, 0.2, 0.5, 0.6]]], [i, 2])
        got = f(tf.constant([64, 48, 3]), tf.constant([i, 2]))
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_nms_padded_refuses_unpadded_batches():
    b = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(ValueError, match="must be True for batched input"):   # TF 2.21: ValueError
        tf.image.non_max_suppression_padded(b, np.zeros((2, 3), np.float32), 2)
