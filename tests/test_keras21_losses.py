"""Keras 3's Circle and CategoricalGeneralizedCrossEntropy (tapeflow/keras/losses.py) against Keras
3.15 on TF 2.21 (tests/data/keras21_losses_reference.json, made by
tests/tf_reference/make_keras21_losses_reference.py); compiled == eager; gradients vs finite
differences."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import losses
from test_keras_ops import _check

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "keras21_losses_reference.json")))
CASES = [(r["expr"], r["out"]) for r in REF["cases"]]


def _ns():
    ns = {"losses": losses, "np": np}
    exec(REF["setup"], ns)
    return ns


# Keras 3.15 one-hots (batch, 1) labels to (batch, 1, classes) and broadcasts against (batch, classes):
# a (batch, batch) loss, where its docstring promises (batch,) for labels of shape (batch, 1).
# tapeflow gives the documented (batch,) (docs/differences.md): the labels' (batch,) values.
DOCUMENTED_INSTEAD = {
    "losses.CategoricalGeneralizedCrossEntropy(reduction='none')(y[:, None], p)":
        "losses.categorical_generalized_cross_entropy(y, p, q=0.5)",
}


@pytest.mark.parametrize("expr,want", CASES, ids=[e for e, _ in CASES])
def test_match_keras(expr, want):
    ns = _ns()
    if expr in DOCUMENTED_INSTEAD:
        got = eval(expr, ns)
        np.testing.assert_allclose(np.asarray(got), np.asarray(eval(DOCUMENTED_INSTEAD[expr], ns)), rtol=1e-7)
        assert np.asarray(got).shape == (4,)
        return
    if "error" in want:
        with pytest.raises(Exception) as info:
            eval(expr, ns)
        assert want["error"] in {c.__name__ for c in type(info.value).__mro__}, f"{expr}: {info.value!r}"
        return
    got = eval(expr, ns)
    if "config" in want:
        assert {k: v for k, v in got.items() if k != "dtype"} == want["config"]
    elif "callable" in want:
        assert got.__name__ == want["callable"]
    else:
        _check(got, want, expr)


def test_compiled_equals_eager():
    ns = _ns()
    circle = losses.Circle()
    gce = losses.CategoricalGeneralizedCrossEntropy(q=0.3)

    def prog(lab, e, sw, y, p):
        return circle(lab, e), circle(lab, e, sample_weight=sw), gce(y, p), losses.circle(lab, e, gamma=5.0)
    args = [tf.constant(ns[k]) for k in ("lab", "e", "sw", "y", "p")]
    for a, b in zip(prog(*args), tf.function(prog)(*args)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6)


@pytest.mark.parametrize("which", ["circle", "gce"])
def test_gradients_vs_finite_differences(which):
    ns = _ns()
    if which == "circle":
        x0, lab = ns["e"].astype(np.float64), ns["lab"]

        def fn(x):
            return losses.Circle(gamma=4.0)(lab, x)
    else:
        x0, y = ns["p"].astype(np.float64), ns["y"]

        def fn(x):
            return losses.CategoricalGeneralizedCrossEntropy(q=0.4)(y, x)
    x = tf.constant(x0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = fn(x)
    g = tape.gradient(out, x).numpy()
    fd = np.zeros_like(x0)
    for idx in np.ndindex(*x0.shape):
        d = np.zeros_like(x0)
        d[idx] = 1e-6
        fd[idx] = (float(fn(tf.constant(x0 + d))) - float(fn(tf.constant(x0 - d)))) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)


def test_circle_trains_an_embedding_model():
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((3, 4))
    lab = np.repeat(np.arange(3), 20).astype(np.int32)
    x = (centers[lab] + 0.3 * rng.standard_normal((60, 4))).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8),
                                 tf.keras.layers.UnitNormalization()])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss=losses.Circle(gamma=16.0))
    h = model.fit(x, lab, epochs=10, batch_size=60, verbose=0)
    assert h.history["loss"][-1] < h.history["loss"][0]
