"""Wave 21 (branch nn21): the tf.nn / tf.image ops TF 2.21 has and tapeflow lacked, against TF's
recorded outputs (tests/data/nn21_reference.npz from tests/tf_reference/make_nn21_reference.py, the
calls in tests/nn21_cases.py), eagerly and inside tf.function; gradients against finite
differences; behaviour TF's numbers cannot pin (random draws) against its documented law."""
import os

import numpy as np
import pytest

import tapeflow as tf
from nn21_cases import CALLS, RECORD

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
                # float32 sums of up to a few hundred terms: the absolute error scales with the values' size
                scale = max(1.0, float(np.max(np.abs(want[np.isfinite(want)]), initial=0.0)))
                np.testing.assert_allclose(g.numpy(), want, rtol=1e-5, atol=2e-6 * scale, err_msg=f"{name}/{i}")
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


# -- pooling / morphology / convolution --------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(n for n in RECORD if n.startswith("fractional_")))
def test_fractional_pool_with_tfs_sequences_gives_tfs_output_and_gradient(name):
    # TF's sequences are its random draws: pool with TF's sequences through tapeflow's windows
    from tapeflow.ops.nn_ops import _fractional_pool_with
    _, (x,), (kind, overlapping) = RECORD[name]
    rows, cols = REF[f"{name}/1"], REF[f"{name}/2"]
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        out = _fractional_pool_with(xt, tf.constant(rows), tf.constant(cols), overlapping, kind)
        s = tf.reduce_sum(out * out)
    np.testing.assert_allclose(out.numpy(), REF[f"{name}/0"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tape.gradient(s, xt).numpy(), REF[f"{name}/3"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pseudo_random", [False, True])
@pytest.mark.parametrize("overlapping", [False, True])
def test_fractional_pool_sequences_follow_tfs_law(pseudo_random, overlapping):
    x = tf.constant(np.random.default_rng(0).standard_normal((1, 23, 17, 2)).astype(np.float32))
    seen = set()
    for _ in range(40):
        out, rows, cols = tf.nn.fractional_max_pool(x, [1, 1.6, 1.3, 1], pseudo_random=pseudo_random,
                                                    overlapping=overlapping)
        for seq, n, m in ((rows.numpy(), 23, 14), (cols.numpy(), 17, 13)):
            assert seq.dtype == np.int64 and seq[0] == 0 and seq[-1] == n and len(seq) == m + 1
            assert set(np.diff(seq)) <= {n // m, n // m + 1}        # intervals of floor/ceil(alpha)
        seen.add(tuple(rows.numpy()))
        assert out.shape == (1, 14, 13, 2)
        # the pooled values are the window maxima of those sequences
        from tapeflow.ops.nn_ops import _fractional_pool_with
        np.testing.assert_array_equal(out.numpy(), _fractional_pool_with(x, rows, cols, overlapping, "max").numpy())
    assert len(seen) > 3                                              # random, not fixed
    tf.random.set_seed(1)
    a = tf.nn.fractional_avg_pool(x, [1, 1.6, 1.3, 1], pseudo_random=pseudo_random, seed=3)[1].numpy()
    tf.random.set_seed(1)
    b = tf.nn.fractional_avg_pool(x, [1, 1.6, 1.3, 1], pseudo_random=pseudo_random, seed=3)[1].numpy()
    np.testing.assert_array_equal(a, b)                               # seeded: repeatable


def test_fractional_pool_traced_draws_each_call():
    x = tf.constant(np.random.default_rng(0).standard_normal((1, 23, 17, 1)).astype(np.float32))
    f = tf.function(lambda v: tf.nn.fractional_max_pool(v, [1, 1.6, 1.6, 1])[1])
    assert len({tuple(f(x).numpy()) for _ in range(20)}) > 2


@pytest.mark.parametrize("op", ["dilation2d", "erosion2d"])
def test_morphology_gradient_vs_finite_differences(op):
    # distinct values (no ties), so the max is locally smooth and central differences are exact up to rounding
    rng = np.random.default_rng(3)
    x = rng.permutation(np.linspace(0, 1, 2 * 5 * 6 * 2)).reshape(2, 5, 6, 2)
    f = rng.permutation(np.linspace(0, 0.37, 3 * 2 * 2)).reshape(3, 2, 2)
    w = rng.standard_normal((2, 5, 6, 2))
    call = lambda a, b: getattr(tf.nn, op)(a, b, [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])  # noqa: E731
    xt, ft = tf.constant(x), tf.constant(f)
    with tf.GradientTape() as tape:
        tape.watch([xt, ft])
        y = tf.reduce_sum(call(xt, ft) * w)
    gx, gf = tape.gradient(y, [xt, ft])
    eps = 1e-7
    for arr, g, which in ((x, gx.numpy(), 0), (f, gf.numpy(), 1)):
        fd = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            p, m = arr.copy(), arr.copy()
            p[i] += eps
            m[i] -= eps
            args_p = (p, f) if which == 0 else (x, p)
            args_m = (m, f) if which == 0 else (x, m)
            fd[i] = (np.sum(call(*map(tf.constant, args_p)).numpy() * w) -
                     np.sum(call(*map(tf.constant, args_m)).numpy() * w)) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dl", [[1, 1, 1, 1], [1, 2, 2, 1], [1, 2, 3, 1]])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_backprops_are_the_tape_gradients(dl, padding):
    # TF 2.21's CPU has no dilated kernels for these: check against tapeflow's conv2d gradients
    rng = np.random.default_rng(4)
    x = tf.constant(rng.standard_normal((2, 9, 10, 4)).astype(np.float32))
    w = tf.constant(rng.standard_normal((3, 2, 4, 5)).astype(np.float32))
    dw = tf.constant(rng.standard_normal((3, 3, 4, 2)).astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, w, dw])
        y = tf.nn.conv2d(x, w, 1, padding, dilations=dl[1:3])
        z = tf.nn.depthwise_conv2d(x, dw, [1, 1, 1, 1], padding, dilations=dl[1:3])
    gy, gz = tf.constant(rng.standard_normal(y.shape).astype(np.float32)), \
        tf.constant(rng.standard_normal(z.shape).astype(np.float32))
    gx, gw = tape.gradient(y, [x, w], output_gradients=gy)
    np.testing.assert_allclose(tf.conv2d_backprop_filter_v2(x, w, gy, [1, 1, 1, 1], padding, dilations=dl).numpy(),
                               gw.numpy(), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(tf.conv2d_backprop_input_v2(x, w, gy, [1, 1, 1, 1], padding, dilations=dl).numpy(),
                               gx.numpy(), rtol=1e-5, atol=1e-4)
    gx, gdw = tape.gradient(z, [x, dw], output_gradients=gz)
    np.testing.assert_allclose(tf.nn.depthwise_conv2d_backprop_filter(x, [3, 3, 4, 2], gz, [1, 1, 1, 1], padding,
                                                                      dilations=dl).numpy(), gdw.numpy(),
                               rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(tf.nn.depthwise_conv2d_backprop_input([2, 9, 10, 4], dw, gz, [1, 1, 1, 1], padding,
                                                                     dilations=dl).numpy(), gx.numpy(),
                               rtol=1e-5, atol=1e-4)


def test_conv_groups_and_extract_volume_patches_gradient():
    rng = np.random.default_rng(5)
    x = tf.constant(rng.standard_normal((2, 9, 8, 4)).astype(np.float32))
    w = tf.constant(rng.standard_normal((3, 2, 2, 6)).astype(np.float32))
    # TF 2.21's CPU Conv refuses groups (UnimplementedError); tapeflow runs them as conv2d does
    np.testing.assert_allclose(tf.conv(x, w, [1, 1, 1, 1], "VALID", groups=2).numpy(),
                               tf.nn.conv2d(x, w, 1, "VALID").numpy(), rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match="groups=3"):
        tf.conv(x, w, [1, 1, 1, 1], "VALID", groups=3)
    v = tf.constant(rng.standard_normal((1, 4, 5, 3, 2)))
    with tf.GradientTape() as tape:
        tape.watch(v)
        p = tf.extract_volume_patches(v, [1, 2, 3, 2, 1], [1, 1, 2, 1, 1], "SAME")
    g = tape.gradient(p, v).numpy()            # each voxel's count of patches containing it
    ones = tf.extract_volume_patches(tf.ones_like(v), [1, 2, 3, 2, 1], [1, 1, 2, 1, 1], "SAME")
    assert g.sum() == ones.numpy().sum() and (g >= 1).all()


# -- isotonic regression, approximate top-k -------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1])
def test_approx_min_k_and_other_dimensions_are_exact(dim):
    # TF 2.21's CPU has no ApproxTopK kernel for these (NotFoundError): exact against NumPy
    x = np.random.default_rng(2).standard_normal((6, 7)).astype(np.float32)
    for fn, order in ((tf.math.approx_min_k, 1), (tf.math.approx_max_k, -1)):
        v, i = fn(tf.constant(x), 3, reduction_dimension=dim)
        want = np.argsort(order * x, axis=dim, kind="stable")
        want = np.take(want, np.arange(3), axis=dim)
        np.testing.assert_array_equal(i.numpy(), want)
        np.testing.assert_array_equal(v.numpy(), np.take_along_axis(x, want, axis=dim))
        assert i.dtype == tf.int32


def test_isotonic_regression_is_the_least_squares_monotone_fit():
    # PAV's output is the projection onto monotone sequences: no monotone perturbation lowers the error,
    # and its gradient (TF's segment-mean rule) matches finite differences away from segment changes
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 12))
    y, seg = tf.nn.isotonic_regression(tf.constant(x), decreasing=False)
    y = y.numpy()
    assert (np.diff(y, axis=1) >= -1e-12).all() and (np.diff(seg.numpy(), axis=1) >= 0).all()
    for _ in range(50):
        z = np.sort(rng.standard_normal((3, 12)), axis=1)
        assert (((z - x) ** 2).sum(1) >= ((y - x) ** 2).sum(1) - 1e-12).all()
    w = rng.standard_normal((3, 12))
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        s = tf.reduce_sum(tf.nn.isotonic_regression(xt, decreasing=False)[0] * w)
    g = tape.gradient(s, xt).numpy()
    eps, fd = 1e-7, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[i] += eps
        m[i] -= eps
        fd[i] = (np.sum(tf.nn.isotonic_regression(p, decreasing=False)[0].numpy() * w) -
                 np.sum(tf.nn.isotonic_regression(m, decreasing=False)[0].numpy() * w)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_jpeg_quality_default_decode_and_stateless_draws_are_within_the_fast_idct_of_tfs():
    # TF decodes with libjpeg's fast IDCT by default, Pillow only with the accurate one: same bytes,
    # pixels within a few levels (measured max 3 on these images); the stateless qualities are TF's draws
    for name, call in (("jpeg_default_dct", lambda x: tf.image.adjust_jpeg_quality(x, 40)),
                       ("jpeg_stateless", lambda x: tf.stack([tf.image.stateless_random_jpeg_quality(x, 5, 95, [i, 3])
                                                              for i in range(6)]))):
        _, (x,), _ = RECORD[name]
        got = call(tf.constant(x)).numpy().astype(int)
        want = REF[f"{name}/0"].astype(int)
        assert got.shape == want.shape and np.abs(got - want).max() <= 4 and np.mean(got == want) > 0.2


def test_random_jpeg_quality_draws_and_refuses_bad_ranges():
    x = tf.constant((np.random.default_rng(0).random((16, 16, 3)) * 255).astype(np.uint8))
    outs = {tf.image.random_jpeg_quality(x, 5, 95).numpy().tobytes() for _ in range(8)}
    assert len(outs) > 2                                   # different qualities, different pixels
    with pytest.raises(ValueError, match="between 0 and 100"):     # TF 2.21: ValueError
        tf.image.random_jpeg_quality(x, 5, 101)
    with pytest.raises(ValueError, match="must be less than"):
        tf.image.stateless_random_jpeg_quality(x, 50, 50, [1, 2])
    f = tf.function(lambda v: tf.image.stateless_random_jpeg_quality(v, 5, 95, [4, 2]))   # seeds: trace-time
    np.testing.assert_array_equal(f(x).numpy(),
                                  tf.image.stateless_random_jpeg_quality(x, 5, 95, [4, 2]).numpy())
