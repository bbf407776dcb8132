"""Programs over Keras 2's ImageDataGenerator (``tf.keras.preprocessing.image``), run by
make_image_data_generator_reference.py under TF 2.21 (which writes tests/data/image_data_generator_tf.npz)
and by tests/test_image_data_generator.py under tapeflow: each takes the framework module and a
scratch directory and returns named arrays. Seeded generators draw from NumPy's global state, so
the random transforms are the same draws in both."""
from __future__ import annotations

import os

import numpy as np

X = (np.arange(6 * 9 * 8 * 3) % 251).reshape(6, 9, 8, 3).astype(np.float32)   # 6 images 9x8, RGB
Y = np.array([0, 1, 0, 1, 1, 0])


def _batches(it, n):
    out = {}
    for b in range(n):
        got = next(it)
        if isinstance(got, tuple):
            for k, v in enumerate(got):
                out[f"b{b}_{k}"] = np.asarray(v)
        else:
            out[f"b{b}_0"] = np.asarray(got)
    return out


def guide_rescale_rotation(tf, tmp):
    # the data guide's generator (cell 27), over arrays
    g = tf.keras.preprocessing.image.ImageDataGenerator(rescale=1. / 255, rotation_range=20)
    return _batches(g.flow(X, Y, batch_size=4, seed=3), 3)


def shifts_shear_zoom_flips(tf, tmp):
    out = {}
    for i, (kw, mode) in enumerate([
            (dict(width_shift_range=0.2, height_shift_range=[-2, 1, 3], shear_range=15, zoom_range=0.3,
                  horizontal_flip=True, vertical_flip=True), "nearest"),
            (dict(rotation_range=40, width_shift_range=2, zoom_range=(0.8, 1.1)), "constant"),
            (dict(rotation_range=40, height_shift_range=0.3, shear_range=20), "reflect"),
            (dict(rotation_range=40, width_shift_range=0.3, zoom_range=0.4), "wrap"),
            (dict(channel_shift_range=30., samplewise_center=True, samplewise_std_normalization=True), "nearest")]):
        g = tf.keras.preprocessing.image.ImageDataGenerator(fill_mode=mode, cval=7., **kw)
        for k, v in _batches(g.flow(X, batch_size=3, seed=11 + i, shuffle=False), 2).items():
            out[f"case{i}_{k}"] = v
    return out


def order0_channels_first(tf, tmp):
    g = tf.keras.preprocessing.image.ImageDataGenerator(rotation_range=30, zoom_range=0.2, interpolation_order=0,
                                                        data_format="channels_first")
    xc = np.transpose(X, (0, 3, 1, 2))
    return _batches(g.flow(xc, Y, batch_size=6, seed=5), 1)


def featurewise_fit(tf, tmp):
    g = tf.keras.preprocessing.image.ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True)
    g.fit(X)
    z = tf.keras.preprocessing.image.ImageDataGenerator(zca_whitening=True, zca_epsilon=0.1)
    z.fit(X[:, :4, :4])
    out = {"mean": g.mean, "std": g.std, "zca": z.zca_whitening_matrix.astype(np.float32)}
    out.update(_batches(g.flow(X, batch_size=6, shuffle=False), 1))
    out["zca_batch"] = next(z.flow(X[:, :4, :4], batch_size=6, shuffle=False))
    return out


def transforms_by_hand(tf, tmp):
    I = tf.keras.preprocessing.image
    x = X[0]
    np.random.seed(2)
    return {"affine": I.apply_affine_transform(x, theta=25, tx=1.5, ty=-2, shear=10, zx=0.9, zy=1.2,
                                              row_axis=0, col_axis=1, channel_axis=2, fill_mode="constant", cval=3.),
            "rotation": I.random_rotation(np.transpose(x, (2, 0, 1)), 30),
            "shift": I.random_shift(np.transpose(x, (2, 0, 1)), 0.2, 0.3),
            "shear": I.random_shear(np.transpose(x, (2, 0, 1)), 20),
            "zoom": I.random_zoom(np.transpose(x, (2, 0, 1)), (0.7, 1.2)),
            "channel_shift": I.apply_channel_shift(x, 20., 2),
            "brightness": I.apply_brightness_shift(x, 1.3),
            "brightness_noscale": I.apply_brightness_shift(x * 2, 0.6, scale=False),
            "random_transform": I.ImageDataGenerator(rotation_range=10, brightness_range=(0.5, 1.5)
                                                     ).random_transform(x, seed=9)}


def make_image_folder(tmp):
    """Two class folders of small PNGs (lossless: both frameworks read the same pixels)."""
    from PIL import Image
    for c, name in enumerate(["cats", "dogs"]):
        os.makedirs(os.path.join(tmp, name, "sub"), exist_ok=True)
        for k in range(3 + c):
            a = ((np.arange(10 * 12 * 3).reshape(10, 12, 3) * (k + 2) + 40 * c) % 256).astype(np.uint8)
            where = os.path.join(tmp, name, "sub" if k == 2 else "", f"im{k}.png")
            Image.fromarray(a).save(where)
        with open(os.path.join(tmp, name, "notes.txt"), "w") as f:
            f.write("not an image")


def from_directory(tf, tmp):
    make_image_folder(tmp)
    out = {}
    g = tf.keras.preprocessing.image.ImageDataGenerator(rescale=1. / 255, rotation_range=20, horizontal_flip=True)
    it = g.flow_from_directory(tmp, target_size=(6, 7), batch_size=3, seed=4)
    out["filenames"] = np.array(it.filenames)
    out["classes"] = np.asarray(it.classes)
    out.update(_batches(it, 3))
    for mode in ("binary", "sparse", "input"):
        it = tf.keras.preprocessing.image.ImageDataGenerator().flow_from_directory(
            tmp, target_size=(5, 5), color_mode="grayscale", class_mode=mode, batch_size=7, shuffle=False)
        for k, v in _batches(it, 1).items():
            out[f"{mode}_{k}"] = v
    it = tf.keras.preprocessing.image.ImageDataGenerator(validation_split=0.5).flow_from_directory(
        tmp, target_size=(4, 4), subset="validation", shuffle=False, class_mode=None)
    out["validation_files"] = np.array(it.filenames)
    out["validation_batch"] = next(it)
    return out


PROGRAMS = [guide_rescale_rotation, shifts_shear_zoom_flips, order0_channels_first, featurewise_fit,
            transforms_by_hand, from_directory]
