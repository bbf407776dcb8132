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


# -- sequence ops -------------------------------------------------------------------------------------

@pytest.mark.parametrize("call,err,needle", [
    # TF 2.21's classes and messages (recorded by hand: the decoder is eager-only, so not in the bad-input table)
    (lambda x: tf.nn.ctc_beam_search_decoder(x, [5, 3], beam_width=2, top_paths=3), tf.errors.InvalidArgumentError,
     "requested more paths than the beam width"),
    (lambda x: tf.nn.ctc_beam_search_decoder(x, [5, 0], beam_width=3, top_paths=2), tf.errors.InvalidArgumentError,
     "Less leaves in the beam search than requested"),
    (lambda x: tf.nn.ctc_beam_search_decoder(x, [6, 3], beam_width=3, top_paths=2), tf.errors.FailedPreconditionError,
     "sequence_length(b) <= max_time"),
    (lambda x: tf.nn.ctc_beam_search_decoder(x, [5], beam_width=3, top_paths=2), tf.errors.FailedPreconditionError,
     "len(sequence_length) != batch_size"),
    (lambda x: tf.nn.ctc_beam_search_decoder(x[0], [5, 3]), tf.errors.InvalidArgumentError, "3-D"),
])
def test_ctc_beam_search_decoder_bad_inputs(call, err, needle):
    x = tf.constant(np.random.default_rng(0).standard_normal((5, 2, 4)).astype(np.float32))
    with pytest.raises(err, match=needle.replace("(", r"\(").replace(")", r"\)")):
        call(x)


def test_ctc_beam_search_decoder_float64_and_traced():
    x = np.random.default_rng(0).standard_normal((5, 2, 4))
    (d,), lp = tf.nn.ctc_beam_search_decoder(x, [5, 3], beam_width=3)
    assert lp.dtype == tf.float64 and lp.shape == (2, 1) and d.values.dtype == tf.int64   # TF 2.21: float64
    with pytest.raises(NotImplementedError, match="call it eagerly"):
        tf.function(lambda v: tf.nn.ctc_beam_search_decoder(v, [5, 3]))(tf.constant(x))


def test_ctc_beam_search_wide_beam_finds_the_most_probable_labelling():
    # with a beam wider than all prefixes, the best path is the argmax over labellings of the CTC
    # probability: check it against brute force over all alignments (3 frames, 2 labels + blank)
    import itertools
    x = np.random.default_rng(5).standard_normal((3, 1, 3)).astype(np.float32)
    p = np.exp(x[:, 0]) / np.exp(x[:, 0]).sum(1, keepdims=True)
    total = {}
    for path in itertools.product(range(3), repeat=3):
        merged = [k for i, k in enumerate(path) if i == 0 or k != path[i - 1]]
        lab = tuple(k for k in merged if k != 2)        # CTC's collapse: merge runs, then drop blanks
        total[lab] = total.get(lab, 0.0) + np.prod([p[t, k] for t, k in enumerate(path)])
    (d,), lp = tf.nn.ctc_beam_search_decoder(x, [3], beam_width=100)
    best = max(total, key=total.get)
    assert tuple(d.values.numpy()) == best
    np.testing.assert_allclose(np.exp(lp.numpy()[0, 0]), total[best], rtol=1e-5)


def test_collapse_repeated_matches_eager_when_traced_with_unknown_width():
    x = np.array([[1, 1, 2, 2, 3, 0], [4, 4, 4, 0, 0, 0]], np.int32)
    f = tf.function(lambda a, n: tf.nn.collapse_repeated(a, n))
    for n in ([5, 3], [1, 1], [0, 0], [6, 6]):
        want = tf.nn.collapse_repeated(x, n)
        got = f(tf.constant(x), tf.constant(n, tf.int32))
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
