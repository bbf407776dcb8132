"""Keras losses added in wave 18 (focal crossentropies, Dice, Tversky) against TF 2.21: TF_OUT
is what TF 2.21 printed for the program in _run (values rounded to 6 decimals)."""
import numpy as np

import tapeflow as tf

TF_OUT = """
[0.387609, 0.037933, 0.615989, 0.866369, 0.217356]
[0.225724, 0.133199, 0.134003, 0.167301, 0.261663]
[0.128527, 0.284667, 0.680501, 0.384046, 0.478691]
[0.264056, 0.085001, 0.380583, 0.204293, 0.212719]
0.34717 [0.255717, 0.136814, 1.0, 0.533124, 0.314813] 0.34717 [0.254944, 0.181602, 1.0, 0.586448, 0.355139]
BinaryFocalCrossentropy 0.425051 0.216038
BinaryFocalCrossentropy 0.194359 0.089997
CategoricalFocalCrossentropy 0.391286 0.152135
Dice 0.34717 0.158767
Dice 0.448094 0.190042
Tversky 0.396311 0.164019
"""


def _run():
    L = tf.keras.losses
    rng = np.random.default_rng(9)
    yt = (rng.random((5, 4)) > 0.5).astype("f")
    yp = rng.uniform(0.01, 0.99, (5, 4)).astype("f")
    lg = rng.standard_normal((5, 4)).astype("f")
    oh = np.eye(4, dtype="f")[rng.integers(0, 4, 5)]
    sw = rng.random(5).astype("f")

    def r(x):
        return np.round(np.asarray(x, dtype=float), 6).tolist()
    out = [str(r(L.binary_focal_crossentropy(yt, yp))),
           str(r(L.binary_focal_crossentropy(yt, lg, apply_class_balancing=True, alpha=0.3, gamma=1.5,
                                             from_logits=True, label_smoothing=0.1))),
           str(r(L.categorical_focal_crossentropy(oh, yp))),
           str(r(L.categorical_focal_crossentropy(oh, lg, from_logits=True, label_smoothing=0.2, gamma=3.))),
           " ".join(str(v) for v in (r(L.dice(yt, yp)), r(L.dice(yt, yp, axis=1)), r(L.tversky(yt, yp)),
                                     r(L.tversky(yt, yp, alpha=0.7, beta=0.3, axis=-1))))]
    for c, kw in [("BinaryFocalCrossentropy", {}), ("BinaryFocalCrossentropy", {"apply_class_balancing": True}),
                  ("CategoricalFocalCrossentropy", {}), ("Dice", {}), ("Dice", {"axis": 1}),
                  ("Tversky", {"alpha": 0.2, "beta": 0.8, "axis": 1})]:
        y = oh if "Categ" in c else yt
        out.append(f"{c} {r(getattr(L, c)(**kw)(y, yp))} {r(getattr(L, c)(**kw)(y, yp, sample_weight=sw))}")
    return out


def _numbers(line):
    return np.array([float(t) for t in line.replace("[", " ").replace("]", " ").replace(",", " ").split()
                     if t[0].isdigit() or t[0] == "-"])


def test_losses_match_tf():
    want = TF_OUT.strip().splitlines()
    got = _run()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.split()[0].isalpha() == w.split()[0].isalpha()
        np.testing.assert_allclose(_numbers(g), _numbers(w), rtol=1e-5, atol=2e-6, err_msg=w)


def test_new_losses_by_name_and_config():
    for name in ("binary_focal_crossentropy", "categorical_focal_crossentropy", "dice", "tversky"):
        assert tf.keras.losses.get(name).__name__ == name
    loss = tf.keras.losses.BinaryFocalCrossentropy(gamma=3.0, apply_class_balancing=True)
    again = tf.keras.losses.deserialize(tf.keras.losses.serialize(loss))
    assert again.get_config() == loss.get_config()
