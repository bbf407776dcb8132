"""tf.image's float-image arithmetic, against numbers real TF 2.21 printed for the same inputs."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

X = (np.arange(24, dtype=np.float32).reshape(2, 2, 2, 3) ** 1.5) / 50

# TF 2.21: tf.image.adjust_contrast(X, 0.3) and (X[0], 2.)
TF_CONTRAST_03 = [0.16412581503391266, 0.21300062537193298, 0.272887259721756, 0.19530272483825684,
                  0.25500062108039856, 0.3229987323284149, 0.2523074448108673, 0.31812217831611633,
                  0.3916811943054199, 0.326125830411911, 0.396737277507782, 0.47481393814086914,
                  1.2023448944091797, 1.3203144073486328, 1.4420790672302246, 1.3014980554580688,
                  1.423081398010254, 1.5483367443084717, 1.4111348390579224, 1.5359958410263062,
                  1.6644362211227417, 1.530334234237671, 1.6582162380218506, 1.789604663848877]
TF_CONTRAST_2 = [-0.23446545004844666, -0.25571516156196594, -0.25245821475982666, -0.02661934494972229,
                 0.024284809827804565, 0.0816183090209961, 0.35341206192970276, 0.4450952112674713,
                 0.5395013689994812, 0.8455345630645752, 0.9691958427429199, 1.093719482421875]


def test_adjust_contrast_matches_tf():
    # (x - mean) * f + mean in float32: the channel mean's last bit depends on the sum's order
    # (NumPy's pairwise sum runs 8 or 16 lanes wide by CPU), and near-cancelling outputs such as
    # 0.0243 = (x - mean) * 2 + mean carry it as ~3e-8 absolute: hence an absolute tolerance of a
    # few float32 ulps at the mean's scale (~0.5) beside the relative one
    np.testing.assert_allclose(tf.image.adjust_contrast(X, 0.3).numpy().ravel(), TF_CONTRAST_03, rtol=1e-6, atol=1.2e-7)
    np.testing.assert_allclose(tf.image.adjust_contrast(X[0], 2.).numpy().ravel(), TF_CONTRAST_2, rtol=1e-6, atol=1.2e-7)
    assert tf.image.adjust_contrast(X.astype(np.float64), 2.).dtype == tf.float64


def test_adjust_brightness_and_flips_match_tf():
    np.testing.assert_allclose(tf.image.adjust_brightness(X[0], 0.1).numpy().ravel()[:3],
                               [0.10000000149011612, 0.12000000476837158, 0.15656854212284088], rtol=1e-7)
    np.testing.assert_array_equal(tf.image.flip_left_right(X[0]).numpy(), X[0][:, ::-1])
    np.testing.assert_array_equal(tf.image.flip_up_down(X).numpy(), X[:, ::-1])


def test_adjust_contrast_gradient_by_finite_differences():
    # TF has no gradient for adjust_contrast (LookupError); tapeflow's composes ops, so it has one
    x0 = X[0].astype(np.float64)
    x = tf.Variable(x0)
    f = tf.Variable(0.7, dtype=tf.float64)
    w = np.random.default_rng(0).normal(size=X[0].shape)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.image.adjust_contrast(x, f) * w)
    gx, gf = tape.gradient(y, [x, f])

    def value(xv, fv):
        m = xv.mean(axis=(0, 1), keepdims=True)
        return float((((xv - m) * fv + m) * w).sum())
    eps = 1e-6
    assert gf.numpy() == pytest.approx((value(x0, 0.7 + eps) - value(x0, 0.7 - eps)) / (2 * eps), rel=1e-6)
    e = np.zeros(X[0].shape)
    e[1, 0, 2] = eps
    fd = (value(x0 + e, 0.7) - value(x0 - e, 0.7)) / (2 * eps)
    assert gx.numpy()[1, 0, 2] == pytest.approx(fd, rel=1e-6)


def test_bad_images_say_what_to_do():
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least 3-D"):
        tf.image.adjust_contrast(X[0, 0], 2.)  # TF: "input must be at least 3-D, got shape[2,3]"
    # uint8 images go through float32 and back, as TF (wave 22: they were refused)
    out = tf.image.adjust_contrast(np.full((2, 2, 1), 100, np.uint8), 2.)
    assert out.dtype == tf.uint8 and out.numpy().ravel().tolist() == [100] * 4
    with pytest.raises(TypeError, match="bool images"):
        tf.image.adjust_contrast(np.ones((2, 2, 1), bool), 2.)
