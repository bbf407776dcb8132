"""Wave 18b tf.image additions beyond tests/image_cases.py's TF-recorded calls: gradients of the
colour functions against central finite differences, the random colour functions' draws
(one factor per call, inside the documented range), and bad arguments."""
import numpy as np
import pytest

import tapeflow as tf


def _pixels(n=6, seed=0, dtype=np.float64):
    # distinct channels, kept apart by > 0.05 so no finite difference crosses a max/min switch
    rng = np.random.default_rng(seed)
    base = rng.permutation(np.linspace(0.1, 0.9, 3))
    px = np.stack([np.roll(base, i) + rng.uniform(-0.02, 0.02, 3) for i in range(n)])
    return px.reshape(1, n, 1, 3).transpose(0, 1, 2, 3).reshape(1, 2, n // 2, 3).astype(dtype)


def _grad_vs_fd(fn, x, eps, rtol, atol):
    w = np.random.default_rng(1).standard_normal(np.asarray(fn(tf.constant(x))).shape)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.reduce_sum(fn(xt) * w.astype(x.dtype))
    g = tape.gradient(y, xt).numpy()
    fd = np.zeros_like(x, dtype=np.float64)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        fd[i] = (np.sum(np.asarray(fn(tf.constant(xp))) * w) - np.sum(np.asarray(fn(tf.constant(xm))) * w)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name,fn", [
    ("rgb_to_hsv", lambda x: tf.image.rgb_to_hsv(x)),
    ("hsv_to_rgb", lambda x: tf.image.hsv_to_rgb(x)),
    ("rgb_to_yiq", lambda x: tf.image.rgb_to_yiq(x)),
    ("yuv_to_rgb", lambda x: tf.image.yuv_to_rgb(x)),
])
def test_colour_gradients_float64(name, fn):
    _grad_vs_fd(fn, _pixels(), 1e-6, 1e-6, 1e-8)


@pytest.mark.parametrize("name,fn", [
    # float32 inside (TF computes these in float32 whatever the input): looser finite differences
    ("adjust_saturation", lambda x: tf.image.adjust_saturation(x, 0.6)),
    ("adjust_hue", lambda x: tf.image.adjust_hue(x, 0.3)),
    ("adjust_hue_wraps", lambda x: tf.image.adjust_hue(x, -0.8)),
    ("adjust_gamma", lambda x: tf.image.adjust_gamma(x, 0.7, gain=1.3)),
])
def test_colour_gradients_float32(name, fn):
    _grad_vs_fd(fn, _pixels(dtype=np.float32), 1e-2, 2e-2, 2e-3)


def test_rgb_to_hsv_grey_and_black_pixels_have_finite_gradients():
    # grey: range 0 (hue 0); black: max 0 (saturation 0) -- the where() branches divide by
    # a safe 1, so no NaN leaks into the gradient
    x = tf.constant(np.array([[[[0.5, 0.5, 0.5], [0.0, 0.0, 0.0]]]]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.image.rgb_to_hsv(x))
    np.testing.assert_array_equal(tf.image.rgb_to_hsv(x).numpy(), [[[[0, 0, 0.5], [0, 0, 0]]]])
    assert np.isfinite(tape.gradient(y, x).numpy()).all()


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("name,call,check", [
    ("brightness", lambda x, s: tf.image.random_brightness(x, 0.25, seed=s),
     lambda x, y: (y - x).ravel()),
    ("contrast", lambda x, s: tf.image.random_contrast(x, 0.5, 1.5, seed=s),
     lambda x, y: ((y - y.mean((0, 1))) / (x - x.mean((0, 1)))).ravel()),
])
def test_random_colour_draws_one_factor_in_range(compiled, name, call, check):
    x = np.random.default_rng(2).uniform(0.1, 0.9, (4, 5, 3)).astype(np.float32)
    f = tf.function(call) if compiled else call
    factors = []
    for s in range(60):
        d = check(x.astype(np.float64), f(tf.constant(x), s).numpy().astype(np.float64))
        assert np.ptp(d) < 1e-4, "one factor per call for every pixel"
        factors.append(d[0])
    lo, hi = (-0.25, 0.25) if name == "brightness" else (0.5, 1.5)
    factors = np.array(factors)
    assert factors.min() >= lo - 1e-5 and factors.max() < hi + 1e-5
    # a uniform draw: both halves of the range are hit (60 draws: P(miss) = 2^-59)
    assert (factors < (lo + hi) / 2).any() and (factors > (lo + hi) / 2).any()


def test_random_hue_and_saturation_match_their_adjust_forms():
    x = tf.constant(np.random.default_rng(3).uniform(0, 1, (2, 3, 3)).astype(np.float32))
    # the stateless forms draw TF's stateless_uniform: the same factor gives the same image
    d = tf.random.stateless_uniform([], seed=(4, 5), minval=-0.3, maxval=0.3)
    np.testing.assert_allclose(tf.image.stateless_random_hue(x, 0.3, (4, 5)).numpy(),
                               tf.image.adjust_hue(x, d).numpy(), rtol=0, atol=0)
    f = tf.random.stateless_uniform([], seed=(4, 5), minval=0.1, maxval=2.0)
    np.testing.assert_allclose(tf.image.stateless_random_saturation(x, 0.1, 2.0, (4, 5)).numpy(),
                               tf.image.adjust_saturation(x, f).numpy(), rtol=0, atol=0)
    for y in (tf.image.random_hue(x, 0.4, seed=1), tf.image.random_saturation(x, 0.5, 2.0, seed=1)):
        assert y.shape == x.shape and y.dtype == tf.float32


@pytest.mark.parametrize("call,err,needle", [
    (lambda x: tf.image.random_hue(x, 0.6), ValueError, "<= 0.5"),                  # TF 2.21: ValueError
    (lambda x: tf.image.stateless_random_hue(x, -0.1, (1, 2)), ValueError, "non-negative"),
    (lambda x: tf.image.random_contrast(x, 1.0, 0.5), ValueError, "upper must be > lower"),
    (lambda x: tf.image.stateless_random_saturation(x, -1.0, 0.5, (1, 2)), ValueError, "lower must be non-negative"),
    (lambda x: tf.image.adjust_gamma(x, -2), ValueError, "non-negative"),
    (lambda x: tf.image.rgb_to_hsv(x[..., :2]), tf.errors.FailedPreconditionError, "size 3"),
    (lambda x: tf.image.rgb_to_yuv(tf.cast(x, tf.int32)), TypeError, "int32"),
])
def test_colour_bad_arguments(call, err, needle):
    x = tf.constant(np.zeros((2, 2, 3), np.float32))
    with pytest.raises(err, match=needle):
        call(x)


def _img(shape, seed):
    return np.random.default_rng(seed).uniform(0.0, 1.0, shape)


@pytest.mark.parametrize("name,fn,x", [
    ("ssim_first", lambda a: tf.image.ssim(a, tf.constant(_img((2, 6, 5, 2), 5).astype(np.float32)), 1.0, filter_size=3), None),
    ("ssim_map", lambda a: tf.image.ssim(tf.sin(a), a, 1.0, filter_size=4, filter_sigma=0.9,
                                         return_index_map=True), None),
    ("ssim_multiscale", lambda a: tf.image.ssim_multiscale(a, tf.constant(_img((2, 7, 7, 2), 9).astype(np.float32)),
                                                           1.0, (0.6, 0.4), filter_size=3), "7x7"),
    ("sobel_edges", lambda a: tf.image.sobel_edges(a), None),
    ("extract_patches", lambda a: tf.image.extract_patches(a, [1, 2, 3, 1], [1, 2, 1, 1], [1, 2, 1, 1], "SAME"),
     None),
])
def test_measure_gradients(name, fn, x):
    # ssim runs in float32 (TF converts the images): float32 finite differences
    x = _img((2, 7, 7, 2) if x == "7x7" else (2, 6, 5, 2), 4).astype(np.float32)
    _grad_vs_fd(fn, x, 1e-2, 2e-2, 2e-3)


def test_crop_and_resize_gradients_in_image_and_boxes():
    x = _img((2, 5, 6, 1), 6).astype(np.float32)
    boxes = np.array([[0.13, 0.21, 0.77, 0.86], [0.31, 0.05, 0.62, 0.58]], np.float32)
    _grad_vs_fd(lambda a: tf.image.crop_and_resize(a, boxes, [1, 0], (3, 4)), x, 1e-2, 2e-2, 2e-3)
    # in the boxes too (TF's CropAndResizeGradBoxes); kept off integer pixel positions
    _grad_vs_fd(lambda b: tf.image.crop_and_resize(tf.constant(x), b, [1, 0], (3, 4)), boxes, 1e-3, 3e-2, 3e-3)


def test_ssim_identical_images_is_one_and_traced_matches_eager():
    a = tf.constant(_img((2, 12, 11, 3), 7).astype(np.float32))
    np.testing.assert_allclose(tf.image.ssim(a, a, 1.0).numpy(), [1.0, 1.0], rtol=1e-6)
    b = tf.constant(_img((2, 12, 11, 3), 8).astype(np.float32))
    f = tf.function(lambda p, q: tf.image.ssim(p, q, 1.0))
    np.testing.assert_allclose(f(a, b).numpy(), tf.image.ssim(a, b, 1.0).numpy(), rtol=1e-6)


@pytest.mark.parametrize("compiled", [False, True])
def test_random_crop_is_a_uniform_window(compiled):
    x = tf.constant(np.arange(6 * 7, dtype=np.float32).reshape(6, 7, 1))
    f = tf.function(lambda v, s: tf.image.random_crop(v, [3, 2, 1], seed=s)) if compiled else \
        (lambda v, s: tf.image.random_crop(v, [3, 2, 1], seed=s))
    corners = set()
    for s in range(200):
        y = f(x, s).numpy()[..., 0]
        r, c = divmod(int(y[0, 0]), 7)
        np.testing.assert_array_equal(y, x.numpy()[r:r + 3, c:c + 2, 0])
        corners.add((r, c))
    assert corners == {(r, c) for r in range(4) for c in range(6)}   # every offset is reachable


def _nms_reference(b, s, m, thr, sthr):
    # TF's greedy loop, written out (non_max_suppression_op.cc): highest score first (ties: lower index)
    ymin, ymax = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
    xmin, xmax = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    area = (ymax - ymin) * (xmax - xmin)
    out = []
    for i in sorted(range(len(s)), key=lambda i: (-s[i], i)):
        if len(out) == m or s[i] <= sthr:
            break
        ok = True
        for j in out:
            if area[i] <= 0 or area[j] <= 0:
                continue
            inter = max(min(ymax[i], ymax[j]) - max(ymin[i], ymin[j]), 0) * \
                max(min(xmax[i], xmax[j]) - max(xmin[i], xmin[j]), 0)
            if inter / (area[i] + area[j] - inter) > thr:
                ok = False
                break
        if ok:
            out.append(i)
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("compiled", [False, True])
def test_non_max_suppression_matches_the_greedy_reference(seed, compiled):
    rng = np.random.default_rng(seed)
    c = rng.uniform(0, 1, (40, 2))
    b = np.concatenate([c - 0.1, c + rng.uniform(0.0, 0.3, (40, 2))], axis=1).astype(np.float32)
    s = np.round(rng.uniform(0, 1, 40), 1).astype(np.float32)
    for m, thr, sthr in ((40, 0.5, -np.inf), (7, 0.2, 0.3), (40, 0.0, -np.inf)):
        fn = lambda bb, ss: tf.image.non_max_suppression(bb, ss, m, thr, sthr)  # noqa: E731
        got = (tf.function(fn) if compiled else fn)(tf.constant(b), tf.constant(s))
        assert got.dtype == tf.int32
        assert got.numpy().tolist() == _nms_reference(b, s, m, thr, sthr)
