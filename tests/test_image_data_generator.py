"""Keras 2's ImageDataGenerator (tf.keras.preprocessing.image, wave 22) against TF 2.21's Keras: the same
programs (tests/tf_reference/image_data_generator_programs.py) give TF's arrays, recorded in
tests/data/image_data_generator_tf.npz. Seeded generators draw the same NumPy numbers, so even the
random transforms are compared value for value; the affine warp (SciPy's in Keras, NumPy's here)
gives the same bits."""
from __future__ import annotations

import contextlib
import io
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_reference"))
import image_data_generator_programs as P  # noqa: E402

REF = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "image_data_generator_tf.npz"))


@pytest.mark.parametrize("prog", P.PROGRAMS, ids=lambda p: p.__name__)
def test_programs_match_tf(prog, tmp_path):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        got = prog(tf, str(tmp_path))
    assert out.getvalue() == str(REF["printed"][P.PROGRAMS.index(prog)])   # "Found 7 images belonging to 2 classes."
    names = [k.split("/", 1)[1] for k in REF.files if k.startswith(prog.__name__ + "/")]
    assert sorted(names) == sorted(got)
    for k in names:
        want, have = REF[f"{prog.__name__}/{k}"], np.asarray(got[k])
        assert have.shape == want.shape and have.dtype == want.dtype, k
        # bit for bit, the warped images too: NumPy's bilinear sum is SciPy's, in the same float64 order
        np.testing.assert_array_equal(have, want, err_msg=k)


def test_random_parameters_distribution():
    # the draws themselves (not only their seeded values): rotation uniform in [-20, 20], flips half the time
    g = tf.keras.preprocessing.image.ImageDataGenerator(rotation_range=20, horizontal_flip=True, zoom_range=0.2)
    np.random.seed(0)
    ps = [g.get_random_transform((9, 8, 3)) for _ in range(2000)]
    th = np.array([p["theta"] for p in ps])
    assert th.min() >= -20 and th.max() <= 20 and abs(th.mean()) < 1.0 and abs(th.std() - 40 / 12 ** .5) < 0.5
    assert 0.45 < np.mean([p["flip_horizontal"] for p in ps]) < 0.55
    z = np.array([(p["zx"], p["zy"]) for p in ps])
    assert z.min() >= 0.8 and z.max() <= 1.2 and not np.allclose(z[:, 0], z[:, 1])


def test_guide_cell_and_iterator_protocol():
    g = tf.keras.preprocessing.image.ImageDataGenerator(rescale=1. / 255, rotation_range=20)   # data guide cell 27
    it = g.flow(P.X, P.Y, batch_size=4, shuffle=False)
    assert len(it) == 2
    x, y = it[1]
    assert x.shape == (2, 9, 8, 3) and x.dtype == np.float32 and list(y) == [1, 0]
    assert 0 <= x.min() and x.max() <= 1


def test_bad_arguments_as_keras():
    I = tf.keras.preprocessing.image
    with pytest.raises(ValueError, match="`zoom_range` should be a float or a tuple or list of two floats"):
        I.ImageDataGenerator(zoom_range=(1, 2, 3))
    with pytest.raises(ValueError, match="`validation_split` must be strictly between 0 and 1"):
        I.ImageDataGenerator(validation_split=1.5)
    with pytest.raises(ValueError, match="should have rank 4"):
        I.ImageDataGenerator().flow(P.X[0])
    with pytest.raises(ValueError, match=r"`x` \(images tensor\) and `y` \(labels\) should have the same length"):
        I.ImageDataGenerator().flow(P.X, P.Y[:2])
    with pytest.raises(ValueError, match="Invalid class_mode"):
        I.ImageDataGenerator().flow_from_directory(".", class_mode="onehot")
    with pytest.raises(NotImplementedError, match="interpolation_order=3"):
        I.ImageDataGenerator(rotation_range=10, interpolation_order=3).random_transform(P.X[0], seed=1)
    with pytest.raises(ValueError, match="fill_mode must be one of"):
        I.ImageDataGenerator(rotation_range=10, fill_mode="mirror").random_transform(P.X[0], seed=1)
    # a fill_mode no transform uses is not looked at (Keras: the same)
    assert I.ImageDataGenerator(rescale=2., fill_mode="mirror").random_transform(P.X[0]).shape == (9, 8, 3)
    with pytest.raises(NotImplementedError, match="pandas"):
        I.ImageDataGenerator().flow_from_dataframe(None)
