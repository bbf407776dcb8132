"""Wave 19 Keras 3 augmentation layers beyond tests/image_cases.py's TF-recorded fixed maps:
the draws (the range of the factors actually drawn, one per image, fresh per compiled call),
config round trips, and Keras' constructor errors (TF 2.21's class and message)."""
import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers


def _imgs(n=300, h=6, w=5, hi=255.0, seed=0):
    return np.random.default_rng(seed).uniform(0, hi, (n, h, w, 3)).astype(np.float32)


def _per_image_constant(ratio, ok, rtol=1e-3):
    """ratio (n, ...) with ok (n, ...) a mask of the usable entries: one value per image."""
    vals = []
    for r, m in zip(ratio, ok):
        r = r[m]
        assert r.size > 5
        np.testing.assert_allclose(r, np.median(r), rtol=rtol, atol=1e-3)
        vals.append(np.median(r))
    return np.array(vals)


def _luma(x):
    return (x * np.array([0.2989, 0.587, 0.114], np.float32)).sum(-1, keepdims=True)


def _check_spread(f, lo, hi, slack=0.02):
    """the drawn factors fill [lo, hi]: inside it, and reaching both ends (300 uniform draws:
    missing the outer 6% at one end has probability 0.94^300 ~ 1e-8)."""
    span = hi - lo
    assert f.min() >= lo - slack * span and f.max() <= hi + slack * span, (f.min(), f.max())
    assert f.min() < lo + 0.06 * span and f.max() > hi - 0.06 * span, (f.min(), f.max())


def test_grayscale_and_invert_apply_per_image_with_their_probability():
    x = _imgs()
    y = L.RandomGrayscale(0.3, seed=1)(x).numpy()
    grey = np.isclose(y, _luma(x), atol=1e-3).reshape(300, -1).all(1)
    same = (y == x).reshape(300, -1).all(1)
    assert (grey ^ same).all() and 0.22 < grey.mean() < 0.38
    # Keras 3: factor 1.0 (the default) draws p uniform in [0, 1], so half the images invert
    for layer, p in ((L.RandomInvert(seed=2), 0.5), (L.RandomInvert((0.2, 0.2), seed=3), 0.2)):
        y = layer(x).numpy()
        inv = np.isclose(y, 255 - x, atol=1e-4).reshape(300, -1).all(1)
        assert (inv ^ (y == x).reshape(300, -1).all(1)).all() and p - 0.08 < inv.mean() < p + 0.08


def test_hue_shifts_each_image_by_plus_or_minus_half_the_factor():
    x = np.random.default_rng(4).uniform(0.05, 0.95, (300, 4, 4, 3)).astype(np.float32)
    y = L.RandomHue((0.2, 0.6), value_range=(0, 1), seed=5)(x).numpy()
    hx, hy = tf.image.rgb_to_hsv(x).numpy()[..., 0], tf.image.rgb_to_hsv(y).numpy()[..., 0]
    d = (hy - hx + 0.5) % 1.0 - 0.5                      # the shift, mod 1, in [-0.5, 0.5)
    d = _per_image_constant(d, np.ones_like(d, bool))
    assert 0.35 < (d > 0).mean() < 0.65                  # a random sign per image
    _check_spread(np.abs(d), 0.1, 0.3)


def test_saturation_degeneration_and_sharpness_factors_fill_their_ranges():
    x = _imgs(seed=6)
    # saturation: s * f / (1 - f + 1e-7), f in [0.2, 0.4] -> a ratio in [0.25, 0.667]
    y = L.RandomSaturation((0.2, 0.4), seed=7)(x).numpy()
    sx, sy = tf.image.rgb_to_hsv(x).numpy()[..., 1], tf.image.rgb_to_hsv(y).numpy()[..., 1]
    f = _per_image_constant(sy / sx, sx > 0.05)
    _check_spread(f, 0.25, 0.4 / 0.6)
    # degeneration: x + f (luma - x), f in [-0.5, 0.5] (clipped pixels excluded)
    y = L.RandomColorDegeneration(0.5, seed=8)(x).numpy()
    g = _luma(x)
    f = _per_image_constant((y - x) / (g - x), (np.abs(g - x) > 5) & (y > 0) & (y < 255))
    _check_spread(f, -0.5, 0.5)
    # sharpness: x + (1 - 2f)(smooth - x), f in [0.1, 0.9]; smooth: the 3x3 kernel, zero padding
    y = L.RandomSharpness((0.1, 0.9), seed=9)(x).numpy()
    k = np.full((3, 3), 1 / 13.0)
    k[1, 1] = 5 / 13.0
    p = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    sm = sum(k[i, j] * p[:, i:i + 6, j:j + 5] for i in range(3) for j in range(3))
    f = _per_image_constant((y - x) / (sm - x), (np.abs(sm - x) > 5) & (y > 0) & (y < 255))
    _check_spread((1 - f) / 2, 0.1, 0.9)


def test_posterization_draws_integer_bits_below_the_upper_bound():
    x = _imgs(seed=10)
    y = L.RandomPosterization((2, 6), seed=11)(x).numpy()
    yi = y.astype(np.int64).reshape(300, -1)
    assert (y == yi.reshape(y.shape)).all()
    # the lowest set bit across an image: 2^(8 - bits)
    low = np.array([np.bitwise_or.reduce(r) & -np.bitwise_or.reduce(r) for r in yi])
    bits = 8 - np.log2(low).astype(int)
    assert set(bits) == {2, 3, 4, 5}                    # Keras' randint: 6 is never drawn
    np.testing.assert_array_equal(y, (x.astype(np.uint8) >> (8 - bits[:, None, None, None]))
                                  << (8 - bits[:, None, None, None]))


def test_solarization_draws_addition_and_threshold_per_image():
    x = _imgs(seed=12)
    # threshold 0: every pixel inverted after the addition, a uniform in [0, 0.4 * 255]
    y = L.Solarization(addition_factor=0.4, seed=13)(x).numpy()
    a = _per_image_constant(255 - y - x, (y > 0) & (y < 255) & (x + 102 < 255), rtol=1e-4)
    _check_spread(a, 0, 102)
    # no addition, threshold t uniform in [0, 255]: values below t kept, the rest inverted
    y = L.Solarization(threshold_factor=1.0, seed=14)(x).numpy()
    kept = np.isclose(y, x, atol=1e-4)
    assert (kept | np.isclose(y, 255 - x, atol=1e-4)).all()
    clear = np.abs(x - 127.5) > 1e-3                    # x near 127.5 reads as both
    t_lo = np.array([xi[k & c].max() if (k & c).any() else 0 for xi, k, c in zip(x, kept, clear)])
    t_hi = np.array([xi[~k & c].min() if (~k & c).any() else 255 for xi, k, c in zip(x, kept, clear)])
    assert (t_lo < t_hi).all()                          # one threshold per image
    _check_spread((t_lo + t_hi) / 2, 0, 255, slack=0.05)


def test_color_jitter_draws_each_part_from_one_stream():
    x = _imgs(seed=15)
    layer = L.RandomColorJitter(brightness_factor=0.2, contrast_factor=0.3, seed=16)
    y = layer(x).numpy()
    assert not np.allclose(y, x)
    # brightness then contrast: y = (x + d - m) c + m with m the image mean after the shift
    xb = L.RandomColorJitter(brightness_factor=0.2, seed=16)(x).numpy()
    d = _per_image_constant(xb - x, (xb > 0) & (xb < 255))
    _check_spread(d, -51, 51)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)


@pytest.mark.parametrize("make", [
    lambda: L.RandomGrayscale(0.5, seed=1), lambda: L.RandomHue(0.4, seed=1), lambda: L.RandomSaturation(0.5, seed=1),
    lambda: L.RandomColorDegeneration(0.5, seed=1), lambda: L.RandomInvert(seed=1),
    lambda: L.RandomPosterization((2, 7), seed=1), lambda: L.Solarization(0.3, 0.8, seed=1),
    lambda: L.RandomSharpness(0.7, seed=1), lambda: L.RandomColorJitter(brightness_factor=0.1, hue_factor=0.3,
                                                                         saturation_factor=0.4, seed=1)])
def test_colour_layers_draw_per_image_and_per_compiled_call_and_round_trip(make):
    x = np.repeat(_imgs(1, seed=17), 8, axis=0)          # eight copies of one image
    layer = make()
    step = tf.function(lambda v: layer(v, training=True))
    a, b = step(x).numpy(), step(x).numpy()
    assert len({a[i].tobytes() for i in range(8)}) > 1   # a draw per image
    assert not np.array_equal(a, b)                       # and per call of the compiled step
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    # the config rebuilds the layer: same config, and with the same seed the same draws,
    # eagerly and compiled
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    twin = type(layer).from_config(layer.get_config())
    np.testing.assert_allclose(tf.function(lambda v: twin(v))(x).numpy(), clone(x).numpy(), rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("make", [lambda: L.AutoContrast(value_range=(0, 17)), lambda: L.Equalization(bins=32)])
def test_deterministic_colour_layers_round_trip_and_compile(make):
    x = _imgs(4, seed=18)
    layer = make()
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    np.testing.assert_array_equal(tf.function(lambda v: clone(v))(x).numpy(), layer(x).numpy())


@pytest.mark.parametrize("make,needle", [
    # TF 2.21 (Keras 3): all ValueError, with these messages
    (lambda: L.RandomGrayscale(1.5), "`factor` should be between 0 and 1"),
    (lambda: L.RandomHue(1.5), r"in the range \[0, 1\]. Received: factor=1.5"),
    (lambda: L.RandomHue(-0.2), r"in the range \[0, 1\]"),
    (lambda: L.RandomSaturation(2.0), r"in the range \[-1, 1\]"),
    (lambda: L.RandomSaturation(0.2, value_range=5), "`value_range` argument should be a list of two numbers"),
    (lambda: L.RandomColorDegeneration((0.1, 0.2, 0.3)), r"in the range \[-1, 1\]"),
    (lambda: L.RandomInvert(2.0), r"in the range \[0, 1\]"),
    (lambda: L.RandomPosterization(9), r"in the range \[1, 8\]"),
    (lambda: L.RandomPosterization(0), r"in the range \[1, 8\]"),
    (lambda: L.Solarization(1.5), "`addition_factor` and `threshold_factor`.*input_number=1.5"),
    (lambda: L.Solarization(threshold_factor=(0.2, 1.2)), "input_number=1.2"),
    (lambda: L.RandomSharpness(1.2), r"in the range \[0, 1\]"),
    (lambda: L.AutoContrast(value_range=(1, 2, 3)), "`value_range` argument should be a list of two numbers"),
    # TF 2.21 raises AttributeError here (Keras 3 lacks the message it formats): see docs/differences.md
    (lambda: L.Equalization(value_range=3), "`value_range` argument should be a list of two numbers"),
    (lambda: L.RandomColorJitter(hue_factor=2.0), r"in the range \[0, 1\]"),
    # call-time: TF 2.21 ValueError "Invalid channel size" / "rank 3 or 4"
    (lambda: L.RandomGrayscale(1.0)(np.zeros((2, 3, 3, 2), np.float32)), "expected 3 \\(RGB\\) or 1"),
    (lambda: L.RandomHue(0.5)(np.zeros((4, 3), np.float32)), "shape"),
])
def test_colour_layer_errors(make, needle):
    with pytest.raises(ValueError, match=needle):
        make()


def test_erasing_fills_one_box_per_image_with_keras_sizes():
    x = np.random.default_rng(20).uniform(1, 255, (300, 40, 30, 3)).astype(np.float32)
    y = L.RandomErasing(scale=(0.1, 0.5), fill_value=0.0, seed=21)(x).numpy()   # factor 1.0: p ~ U[0, 1]
    erased = (y == 0).all(-1)
    assert ((y == x) | (y == 0)).all()
    hit = erased.reshape(300, -1).any(1)
    assert 0.42 < hit.mean() < 0.58
    widths, heights = [], []
    for e in erased[hit]:
        rows, cols = e.any(1), e.any(0)
        np.testing.assert_array_equal(e, rows[:, None] & cols[None, :])            # a rectangle
        assert np.diff(np.flatnonzero(rows)).max(initial=1) == 1 and np.diff(np.flatnonzero(cols)).max(initial=1) == 1
        widths.append(cols.sum() / 30.0)
        heights.append(rows.sum() / 40.0)
    # sides sqrt(s) of the image's, s ~ U[0.1, 0.5], each side its own s (+-1 pixel of flooring)
    for side, n in ((np.array(widths), 30), (np.array(heights), 40)):
        _check_spread(side, np.sqrt(0.1), np.sqrt(0.5), slack=1.5 / n / (np.sqrt(0.5) - np.sqrt(0.1)))
    assert np.corrcoef(widths, heights)[0, 1] < 0.3                                   # drawn apart


def test_gaussian_blur_one_sigma_pair_per_call_within_range():
    x = np.zeros((40, 9, 9, 1), np.float32)
    x[:, 4, 4] = 100.0                                  # an impulse: the output is the kernel
    layer = L.RandomGaussianBlur(factor=0.5, kernel_size=5, sigma=(0.3, 1.0), value_range=(0, 100), seed=22)
    step = tf.function(lambda v: layer(v))
    sx, sy, applied = [], [], []
    for _ in range(60):
        y = step(x).numpy()[..., 0]
        blurred = y[:, 4, 4] < 100.0
        applied.append(blurred.mean())
        k = y[blurred]
        if len(k):
            np.testing.assert_allclose(k, np.repeat(k[:1], len(k), 0), rtol=1e-5)     # one kernel per call
            k = k[0]
            np.testing.assert_allclose(k.sum(), 100.0, rtol=1e-4)
            # k[4, 4] / k[4, 5] = exp(0.5 / sigma_x^2); rows use sigma_y
            sx.append(np.sqrt(0.5 / np.log(k[4, 4] / k[4, 5])))
            sy.append(np.sqrt(0.5 / np.log(k[4, 4] / k[5, 4])))
    # Keras 3: factor 0.5 -> p ~ U[0, 0.5] per image, so a quarter blurred on average
    assert 0.2 < np.mean(applied) < 0.3
    for s in (np.array(sx), np.array(sy)):
        assert s.min() > 0.29 and s.max() < 1.01 and s.min() < 0.45 and s.max() > 0.85
    assert np.abs(np.array(sx) - np.array(sy)).max() > 0.1          # two sigmas, not one


def test_shear_draws_per_image_factors_with_one_sign():
    n, s = 200, 21
    yy, xx = np.meshgrid(np.arange(s, dtype=np.float32), np.arange(s, dtype=np.float32), indexing="ij")
    x = np.repeat(np.stack([xx, yy, xx * 0], -1)[None], n, 0)
    y = L.RandomShear((0.1, 0.4), (0.2, 0.3), fill_mode="constant", fill_value=-1.0, seed=23)(x).numpy()
    sxs, sys_ = [], []
    for o in y:
        # output (r, c) reads input (c + sx r, r + sy c): where it is inside, the coordinates
        ok = (o[..., 0] >= 0) & (o[..., 1] >= 0) & (yy > 0) & (xx > 0)
        sxs.append(np.median(((o[..., 0] - xx) / yy)[ok]))
        sys_.append(np.median(((o[..., 1] - yy) / xx)[ok]))
    sxs, sys_ = np.array(sxs), np.array(sys_)
    assert (np.sign(sxs) == np.sign(sys_)).all() and 0.38 < (sxs > 0).mean() < 0.62   # one sign, random
    _check_spread(np.abs(sxs), 0.1, 0.4)
    _check_spread(np.abs(sys_), 0.2, 0.3)


@pytest.mark.parametrize("make", [
    lambda: L.RandomErasing(seed=1), lambda: L.RandomGaussianBlur(sigma=(0.2, 1.0), seed=1),
    lambda: L.RandomShear(0.3, 0.3, seed=1)])
def test_geometric_layers_draw_per_compiled_call_and_round_trip(make):
    x = np.repeat(_imgs(1, seed=24), 8, axis=0)
    layer = make()
    step = tf.function(lambda v: layer(v, training=True))
    a, b = step(x).numpy(), step(x).numpy()
    assert not np.array_equal(a, b)
    if not isinstance(layer, L.RandomGaussianBlur):       # Keras 3: one blur kernel per batch
        assert len({a[i].tobytes() for i in range(8)}) > 1
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    twin = type(layer).from_config(layer.get_config())
    np.testing.assert_allclose(tf.function(lambda v: twin(v))(x).numpy(), clone(x).numpy(), rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("make,needle", [
    # TF 2.21 (Keras 3): ValueError with these messages
    (lambda: L.RandomErasing(1.5), r"in the range \[0, 1\]"),
    (lambda: L.RandomErasing(scale=(0.1, 0.2, 0.3)), r"`scale` argument should be a number"),
    (lambda: L.RandomErasing(fill_value="x")(np.zeros((1, 4, 4, 3), np.float32)), "`fill_value` argument"),
    (lambda: L.RandomGaussianBlur(kernel_size=4), "kernel_size must be an odd number"),
    (lambda: L.RandomGaussianBlur(sigma=2.0), r"`sigma` argument should be a number"),
    (lambda: L.RandomShear(1.5), r"in the range \[0, 1.0\]. Received: input_number=1.5"),
    (lambda: L.RandomShear(0.1, (0.1, 0.2, 0.3)), "y_factor="),
])
def test_geometric_layer_errors(make, needle):
    with pytest.raises(ValueError, match=needle):
        make()


def test_shear_bad_modes_raise_not_implemented():
    # TF 2.21: NotImplementedError "Unknown `fill_mode` ..."
    with pytest.raises(NotImplementedError, match="fill_mode"):
        L.RandomShear(0.1, fill_mode="mirror")


def _labelled(n, h, w):
    x = np.repeat(np.arange(n, dtype=np.float32)[:, None, None, None], h * w * 3, 1).reshape(n, h, w, 3)
    return x, np.eye(n, dtype=np.float32)


def _partners(lab):
    """the permutation a mix used, from its mixed one-hot labels: each image's partner (itself
    where the row is one-hot, or its partner's weight too small to read); partners are distinct."""
    n = len(lab)
    other = lab.copy()
    other[np.arange(n), np.arange(n)] = 0
    known = other.max(1) > 1e-4
    perm = np.where(known, other.argmax(1), np.arange(n))
    assert len(set(perm[known])) == known.sum() and known.mean() > 0.5
    return perm


@pytest.mark.parametrize("compiled", [False, True])
def test_mixup_mixes_images_and_labels_with_beta_weights(compiled):
    n = 300
    x, y = _labelled(n, 3, 2)
    layer = L.MixUp(alpha=0.2, seed=30)
    call = tf.function(lambda d: layer(d)) if compiled else layer
    out = call({"images": x, "labels": y})
    img, lab = out["images"].numpy(), out["labels"].numpy()
    np.testing.assert_allclose(lab.sum(1), 1.0, rtol=1e-5)
    perm = _partners(lab)
    np.testing.assert_allclose(img[:, 0, 0, 0], lab @ np.arange(n), rtol=1e-4)   # images mix as labels
    w = lab[np.arange(n), np.arange(n)]       # (a true fixed point, 1/n a row, reads w = 1)
    # Beta(0.2, 0.2): mean 1/2, variance 1 / (4 (2 alpha + 1)) = 0.179 (Beta(1, 1): 0.083)
    assert 0.44 < w.mean() < 0.56 and 0.15 < w.var() < 0.21
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)


@pytest.mark.parametrize("compiled", [False, True])
def test_cutmix_pastes_one_box_and_mixes_labels_by_its_area(compiled):
    n, h, w = 200, 40, 30
    x, y = _labelled(n, h, w)
    layer = L.CutMix(seed=31)
    call = tf.function(lambda d: layer(d)) if compiled else layer
    out = call({"images": x, "labels": y})
    img, lab = out["images"].numpy()[..., 0], out["labels"].numpy()
    perm = _partners(lab)
    fracs = []
    for i in range(n):
        if perm[i] == i:
            continue
        pasted = img[i] == perm[i]
        assert ((img[i] == i) | pasted).all()
        rows, cols = pasted.any(1), pasted.any(0)
        np.testing.assert_array_equal(pasted, rows[:, None] & cols[None, :])     # a rectangle
        # the label weight is 1 - box area / image area, the box's real-valued area: within
        # a pixel's row and column of the pasted pixels' share
        assert abs(pasted.mean() - (1 - lab[i, i])) <= (h + w + 1) / (h * w)
        fracs.append(pasted.mean())
    fracs = np.array(fracs)
    assert fracs.min() < 0.05 and fracs.max() > 0.8 and fracs.std() > 0.15     # lambda ~ Beta(a, a), a ~ U(0, 1)


def test_random_height_and_width_draw_sizes_eagerly_and_refuse_to_trace_a_random_size():
    x = _imgs(2, 10, 20, seed=32)
    hs = {L.RandomHeight(0.5, seed=33)(x).shape[1] for _ in range(1)}
    layer = L.RandomHeight((-0.5, 0.5), seed=33)
    hs = [layer(x).shape[1] for _ in range(60)]
    assert min(hs) >= 5 and max(hs) <= 15 and min(hs) <= 6 and max(hs) >= 14     # int(f * 10), f ~ U[0.5, 1.5)
    ws = [L.RandomWidth((0.1, 0.3), seed=s)(x).shape[2] for s in range(30)]
    assert set(ws) <= {22, 23, 24, 25} and len(set(ws)) >= 3
    assert tf.function(lambda v: L.RandomWidth((0.25, 0.25))(v))(x).shape == (2, 10, 25, 3)
    with pytest.raises(ValueError, match="cannot be traced"):
        tf.function(lambda v: layer(v))(x)
    with pytest.raises(ValueError, match="larger than -1"):            # TF 2.21: ValueError
        L.RandomHeight((-1.5, 0.2))
    with pytest.raises(ValueError, match="upper bound less than the lower"):
        L.RandomWidth((0.5, 0.2))
    with pytest.raises(ValueError, match="upper bound lesser than the lower"):
        L.RandomHeight((0.5, 0.2))


def test_pipeline_applies_in_order_and_round_trips():
    x = _imgs(4, seed=34)
    p = L.Pipeline([L.RandomInvert((1.0, 1.0), seed=1), L.Resizing(3, 3), L.AutoContrast()])
    want = L.AutoContrast()(L.Resizing(3, 3)(255 - x)).numpy()
    np.testing.assert_allclose(p(x).numpy(), want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(tf.function(lambda v: p(v))(x).numpy(), want, rtol=1e-5, atol=1e-4)
    # training=False reaches the random layers (RandomInvert passes; AutoContrast still applies)
    np.testing.assert_allclose(p(x, training=False).numpy(), L.AutoContrast()(L.Resizing(3, 3)(x)).numpy(),
                               rtol=1e-5, atol=1e-4)
    q = L.Pipeline.from_config(p.get_config())
    assert [type(a).__name__ for a in q.layers] == ["RandomInvert", "Resizing", "AutoContrast"]
    np.testing.assert_allclose(q(x).numpy(), want, rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError, match="`layers` key"):
        L.Pipeline.from_config({"name": "p"})


@pytest.mark.parametrize("make", [lambda: L.MixUp(0.4, seed=3), lambda: L.CutMix(0.5, seed=3),
                                  lambda: L.RandomHeight((0.2, 0.2), seed=3), lambda: L.RandomWidth(0.3)])
def test_mix_and_side_layers_round_trip(make):
    layer = make()
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()


def test_perspective_moves_corners_within_scale_per_image():
    n, h, w = 120, 16, 12
    yy, xx = np.meshgrid(np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32), indexing="ij")
    x = np.repeat(np.stack([xx, yy, xx * 0], -1)[None], n, 0)
    out = L.RandomPerspective(factor=(1.0, 1.0), scale=0.4, fill_value=-100.0, seed=40)(x).numpy()
    moves, same = [], 0
    start = np.array([[0, 0], [w - 1, 0], [0, h - 1], [w - 1, h - 1]], np.float64)
    for o in out:
        # output pixel (c, r) reads input H(c, r): fit H from the inside pixels (bilinear reads of
        # a linear image are exact), then the end corners are H^-1 of the start corners
        # Keras moves corner (x, y) to (x, y) (1 + u), |u| <= 0.2: the output box
        # [0, 0.8 (w - 1)] x [0, 0.8 (h - 1)] lies inside the warped quad, so (with a pixel and a
        # half of margin for the bilinear taps) it reads no fill
        ok = (xx <= 0.8 * (w - 1) - 1.5) & (yy <= 0.8 * (h - 1) - 1.5)
        c, r, sx, sy = xx[ok], yy[ok], o[..., 0][ok].astype(np.float64), o[..., 1][ok].astype(np.float64)
        z, one = np.zeros_like(c), np.ones_like(c)
        a = np.concatenate([np.stack([c, r, one, z, z, z, -sx * c, -sx * r], 1),
                            np.stack([z, z, z, c, r, one, -sy * c, -sy * r], 1)])
        hm = np.linalg.lstsq(a, np.concatenate([sx, sy]), rcond=None)[0]
        assert np.abs(a @ hm - np.concatenate([sx, sy])).max() < 1e-3      # a homography
        m = np.append(hm, 1.0).reshape(3, 3)
        ends = np.linalg.solve(m, np.concatenate([start, np.ones((4, 1))], 1).T).T
        ends = ends[:, :2] / ends[:, 2:]
        nz = start != 0
        moves.append((ends[nz] / start[nz]) - 1)                 # (x, y) (1 + u), u ~ U[-0.2, 0.2]
        same += np.allclose(ends, start, atol=1e-3)
    moves = np.concatenate(moves)
    _check_spread(moves, -0.2, 0.2, slack=0.02)
    assert np.abs(moves.mean()) < 0.02 and same == 0


def test_perspective_probability_config_and_errors():
    x = np.repeat(_imgs(1, 10, 10, seed=41), 300, 0)
    y = L.RandomPerspective(seed=42)(x).numpy()                 # factor 1.0: p ~ U[0, 1] -> half
    moved = ~np.isclose(y, x).reshape(300, -1).all(1)
    assert 0.42 < moved.mean() < 0.58
    layer = L.RandomPerspective(0.5, scale=0.3, seed=1)
    clone = L.RandomPerspective.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    step = tf.function(lambda v: layer(v))
    assert not np.array_equal(step(x[:8]).numpy(), step(x[:8]).numpy())
    with pytest.raises(ValueError, match=r"`scale` argument should be a number in the range \[0,1\]"):   # TF 2.21
        L.RandomPerspective(scale=1.5)
    with pytest.raises(NotImplementedError, match="interpolation"):
        L.RandomPerspective(interpolation="cubic")


def test_randaugment_picks_one_of_eleven_ops_per_call():
    # factor 0: shear, translation, rotation, brightness, degeneration and contrast are the
    # identity; sharpness (f = 0) is the 3x3 smoothing, posterization keeps 1 bit, solarization
    # inverts, auto-contrast and equalization are fixed maps: each call gives one of six images
    # (TF 2.21: 60 calls of its RandAugment(num_ops=1, factor=0.0) all fell in the same six)
    x = _imgs(3, 8, 7, seed=50)
    layer = L.RandAugment(num_ops=1, factor=0.0, seed=51)
    cands = [x, L.RandomSharpness((0.0, 0.0))(x).numpy(), L.RandomPosterization((1, 1))(x).numpy(),
             L.Solarization()(x).numpy(), L.AutoContrast()(x).numpy(), L.Equalization()(x).numpy()]
    step = tf.function(lambda v: layer(v))
    counts = np.zeros(6)
    for _ in range(220):
        y = step(x).numpy()
        hits = [np.allclose(y, c, rtol=1e-5, atol=1e-3) for c in cands]
        assert sum(hits) == 1
        counts[hits.index(True)] += 1
    # 6 of 11 ops are the identity, each other op 1/11 (220 calls: 120 and 20 expected)
    assert 95 < counts[0] < 145 and (counts[1:] > 7).all() and (counts[1:] < 36).all()
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    clone = L.RandAugment.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    with pytest.raises(ValueError, match=r"in the range \[0, 1\]"):        # TF 2.21: ValueError
        L.RandAugment(factor=1.5)


def test_augmix_blends_the_input_with_one_chain_by_a_uniform_weight():
    # one chain of one step, factor 0: the step is one of the six fixed maps of factor 0 (see
    # RandAugment) or none, and the blend weight is Beta(1, 1) = U(0, 1): y = w x + (1 - w) op(x)
    x = _imgs(3, 8, 7, seed=60)
    layer = L.AugMix(num_chains=1, chain_depth=1, factor=0.0, seed=61)
    cands = [L.RandomSharpness((0.0, 0.0))(x).numpy(), L.RandomPosterization((1, 1))(x).numpy(),
             L.Solarization()(x).numpy(), L.AutoContrast()(x).numpy(), L.Equalization()(x).numpy()]
    step = tf.function(lambda v: layer(v))
    ws, counts, same = [], np.zeros(5), 0
    for _ in range(150):
        y = step(x).numpy()
        if np.allclose(y, x, atol=1e-3):
            same += 1
            continue
        fits = []
        for c in cands:
            d = (x - c).ravel()
            w = float(np.dot((y - c).ravel(), d) / np.dot(d, d))
            fits.append((np.abs(w * x + (1 - w) * c - y).max(), w))
        best = int(np.argmin([f[0] for f in fits]))
        assert fits[best][0] < 1e-2
        counts[best] += 1
        ws.append(fits[best][1])
    # 7 of 12 choices leave x (six identities and none): 150 * 7/12 = 87.5 expected
    assert 65 < same < 110 and (counts > 2).all()
    _check_spread(np.array(ws), 0.0, 1.0)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    clone = L.AugMix.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    with pytest.raises(ValueError, match=r"in the range \[0, 1\]"):        # TF 2.21: ValueError
        L.AugMix(factor=-0.5)
