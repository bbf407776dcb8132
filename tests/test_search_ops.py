"""tf.math.cumprod, tf.searchsorted, tf.histogram_fixed_width and histogram_fixed_width_bins
against TF 2.21 (tests/data/ops17_tf_reference.json, written by
tests/tf_reference/make_ops17_reference.py; literal values below), eagerly and compiled."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import errors
from conftest import check_grads

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "ops17_tf_reference.json")) as _f:
    REF = json.load(_f)
MODES = ["eager", "compiled"]


def arr(enc):
    return np.array(enc["values"], enc["dtype"]).reshape(enc["shape"])


def run(mode, fn, *args):
    ts = [tf.constant(a) for a in args]
    return fn(*ts) if mode == "eager" else tf.function(fn)(*ts)


# -- cumprod -----------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("i", range(len(REF["cumprod"])))
def test_cumprod_values_and_gradients_match_tf(mode, i):
    c = REF["cumprod"][i]
    x, ct = arr(c["x"]), arr(c["ct"])
    kw = dict(axis=c["axis"], exclusive=c["exclusive"], reverse=c["reverse"])

    def f(t):
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = tf.math.cumprod(t, **kw)
            loss = tf.reduce_sum(y * tf.constant(ct))
        return y, tape.gradient(loss, t)
    y, g = run(mode, f, x)
    np.testing.assert_allclose(y.numpy(), arr(c["out"]), rtol=1e-13, atol=0)
    # at zero entries TF's formula (div_no_nan) gives 0, not the derivative: matched, literally
    np.testing.assert_allclose(g.numpy(), arr(c["grad"]), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mode", MODES)
def test_cumprod_literal_values_and_errors(mode):
    x = np.array([[1., 2., 3.], [4., 0., 6.]], np.float32)
    np.testing.assert_array_equal(run(mode, lambda t: tf.math.cumprod(t, axis=1, exclusive=True, reverse=True), x),
                                  [[6., 3., 1.], [0., 6., 1.]])                                  # TF 2.21
    got = run(mode, tf.math.cumprod, np.array([1, 2, 3], np.int32))
    assert got.dtype == tf.int32 and got.numpy().tolist() == [1, 2, 6]                          # TF 2.21
    assert run(mode, tf.math.cumprod, np.zeros(0, np.float32)).shape == (0,)
    with pytest.raises(errors.InvalidArgumentError, match="axis 2 is out of range"):            # TF 2.21
        run(mode, lambda t: tf.math.cumprod(t, axis=2), x)
    with pytest.raises(errors.InvalidArgumentError, match="out of range for a tensor of rank 0"):
        run(mode, tf.math.cumprod, np.float32(2.0))                                             # TF 2.21
    with pytest.raises(errors.InvalidArgumentError, match="expects numbers"):                   # TF 2.21
        run(mode, tf.math.cumprod, np.array([True]))


def test_cumprod_gradient_finite_differences_away_from_zero():
    x = np.array([[0.5, -1.2, 2.0, 0.7], [1.5, 0.3, -0.8, 1.1]])
    for ex in (False, True):
        for rev in (False, True):
            check_grads(lambda t: tf.math.cumprod(t, axis=1, exclusive=ex, reverse=rev), [x])


# -- searchsorted ------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("i", range(len(REF["searchsorted"])))
def test_searchsorted_matches_tf(mode, i):
    c = REF["searchsorted"][i]
    got = run(mode, lambda s, v: tf.searchsorted(s, v, side=c["side"]), arr(c["sorted"]), arr(c["values"]))
    assert got.dtype == tf.int32
    np.testing.assert_array_equal(got.numpy(), arr(c["out"]))


@pytest.mark.parametrize("mode", MODES)
def test_searchsorted_edges_and_errors(mode):
    s = np.array([1., 2.], np.float32)
    v = np.array([np.nan, -np.inf, np.inf], np.float32)
    assert run(mode, tf.searchsorted, s, v).numpy().tolist() == [0, 0, 2]                        # TF 2.21
    assert run(mode, lambda a, b: tf.searchsorted(a, b, side="right"), s, v).numpy().tolist() == [2, 0, 2]
    got = run(mode, lambda a, b: tf.searchsorted(a, b, out_type=tf.int64), s, np.array([1.5], np.float32))
    assert got.dtype == tf.int64 and got.numpy().tolist() == [1]
    # no values (a row of none, or none of the rows): TF 2.21 returns the empty shape
    assert run(mode, tf.searchsorted, s, np.zeros(0, np.float32)).shape == (0,)
    assert run(mode, tf.searchsorted, np.zeros((2, 3), np.float32), np.zeros((2, 0), np.float32)).shape == (2, 0)
    with pytest.raises(errors.InvalidArgumentError, match="leading dims"):   # TF 2.21: "Leading dim_size ... must match"
        run(mode, tf.searchsorted, np.zeros((2, 5), np.int32), np.zeros((3, 1), np.int32))
    with pytest.raises(errors.InvalidArgumentError, match="need one dtype"):                     # TF 2.21
        run(mode, tf.searchsorted, np.zeros((2, 5), np.int32), np.zeros((2, 1), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="rank >= 1"):
        run(mode, tf.searchsorted, s, np.float32(1.5))
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):                      # TF 2.21: ValueError
        tf.searchsorted(s, v, side="middle")
    with pytest.raises(errors.InvalidArgumentError, match="out_type must be int32 or int64"):
        tf.searchsorted(s, v, out_type=tf.float32)


# -- histograms --------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("i", range(len(REF["histogram"])))
def test_histogram_fixed_width_matches_tf(mode, i):
    c = REF["histogram"][i]
    want = arr(c["counts"])
    vals = arr(REF["histogram_values"]) if "bins" in c else arr(c["values"])
    r = np.array(c["range"], vals.dtype)
    got = run(mode, lambda v, r: tf.histogram_fixed_width(v, r, nbins=c["nbins"], dtype=want.dtype), vals, r)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want)
    if "bins" in c:
        got = run(mode, lambda v, r: tf.histogram_fixed_width_bins(v, r, nbins=c["nbins"]), vals, r)
        np.testing.assert_array_equal(got.numpy(), arr(c["bins"]))


@pytest.mark.parametrize("mode", MODES)
def test_histogram_literal_values_and_errors(mode):
    h = np.array([-1.0, 0.0, 1.5, 2.0, 5.0, 15], np.float32)
    r = np.array([0., 5.], np.float32)
    hist = lambda v, r: tf.histogram_fixed_width(v, r, nbins=5)   # noqa: E731
    assert run(mode, hist, h, r).numpy().tolist() == [2, 1, 1, 0, 2]                             # TF 2.21
    assert run(mode, hist, h.reshape(2, 3), r).numpy().tolist() == [2, 1, 1, 0, 2]
    assert run(mode, lambda v, r: tf.histogram_fixed_width_bins(v, r, nbins=5), h, r).numpy().tolist() == \
        [0, 0, 1, 2, 4, 4]                                                                        # TF 2.21
    # TF 2.21's messages
    with pytest.raises(errors.InvalidArgumentError, match="must not contain NaN"):
        run(mode, hist, np.array([np.nan, 1.], np.float32), r)
    with pytest.raises(errors.InvalidArgumentError, match=r"value_range\[0\] < value_range\[1\]"):
        run(mode, hist, h, np.array([5., 0.], np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="nbins should be a positive number"):
        run(mode, lambda v, r: tf.histogram_fixed_width(v, r, nbins=0), h, r)
    with pytest.raises(errors.InvalidArgumentError, match="must have the values' dtype"):
        run(mode, hist, h, np.array([0., 5.]))
    with pytest.raises(errors.InvalidArgumentError, match="vector of 2 elements"):
        run(mode, hist, h, np.array([0., 5., 6.], np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="dtype must be int32 or int64"):
        tf.histogram_fixed_width(h, r, dtype=tf.float32)


def test_namespaces():
    assert tf.math.cumprod is tf.cumprod and callable(tf.searchsorted) and callable(tf.histogram_fixed_width)
