"""Wave 21 (branch nn21) tf.nn / tf.image calls recorded under TF 2.21 by
tests/tf_reference/make_nn21_reference.py into tests/data/nn21_reference.npz, and replayed under
tapeflow by tests/test_nn21.py. Each CALLS entry is ``name: (fn(tf, *inputs), inputs, traceable)``:
inputs are NumPy arrays (made here, deterministically), ``traceable`` says whether the test also
runs it inside tf.function (ops whose output is a SparseTensor of value-dependent size run eagerly
only)."""
import numpy as np


def _boxes(rng, shape):
    c = rng.uniform(0, 1, shape + (2,))
    wh = rng.uniform(0.05, 0.4, shape + (2,))
    return np.concatenate([c - wh / 2, c + wh / 2], axis=-1).astype(np.float32)


def _inputs():
    rng = np.random.default_rng(21)
    d = {}
    d["b6"] = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1],
                        [0, 100, 1, 101]], np.float32)
    d["s6"] = np.array([.9, .75, .6, .95, .5, .3], np.float32)
    d["b30"] = _boxes(rng, (30,))
    d["b30"][3] = d["b30"][3][[2, 3, 0, 1]]          # one flipped box
    d["s30"] = np.round(rng.uniform(0, 1, 30), 1).astype(np.float32)   # ties
    d["bb"] = _boxes(rng, (3, 20))
    d["sb"] = rng.uniform(0, 1, (3, 20)).astype(np.float32)
    ov = rng.uniform(0, 1, (12, 12)).astype(np.float32)
    d["ov"] = ((ov + ov.T) / 2).astype(np.float32)
    d["s12"] = rng.uniform(0, 1, 12).astype(np.float32)
    d["cb"] = _boxes(rng, (2, 15, 3))
    d["cb"][0, 0, 0] = [-0.2, 0.1, 0.5, 1.3]          # clipped by clip_boxes
    d["cs"] = rng.uniform(0, 1, (2, 15, 3)).astype(np.float32)
    d["cb1"] = _boxes(rng, (2, 15, 1))
    return d


X = _inputs()
_r0 = np.random.default_rng(210)


def _c(fn, names, traceable=True):
    return fn, [X[n] for n in names], traceable


CALLS = {
    # -- detection -------------------------------------------------------------------------------
    "nms_padded_pad": _c(lambda tf, b, s: tf.image.non_max_suppression_padded(
        b, s, 4, iou_threshold=0.5, pad_to_max_output_size=True), ["b6", "s6"]),
    "nms_padded_nopad": _c(lambda tf, b, s: tf.image.non_max_suppression_padded(
        b, s, 4, iou_threshold=0.5), ["b6", "s6"]),
    "nms_padded_sorted": _c(lambda tf, b, s: tf.image.non_max_suppression_padded(
        b, s, 4, iou_threshold=0.5, pad_to_max_output_size=True, sorted_input=True,
        canonicalized_coordinates=True), ["b6", "s6"]),
    "nms_padded_30": _c(lambda tf, b, s: tf.image.non_max_suppression_padded(
        b, s, 25, iou_threshold=0.3, score_threshold=0.2, pad_to_max_output_size=True), ["b30", "s30"]),
    "nms_padded_30_nopad": _c(lambda tf, b, s: tf.image.non_max_suppression_padded(
        b, s, 10, iou_threshold=0.1), ["b30", "s30"]),
    "nms_padded_batch": _c(lambda tf, b, s: tf.image.non_max_suppression_padded(
        b, s, 8, iou_threshold=0.2, pad_to_max_output_size=True), ["bb", "sb"]),
    "nms_padded_small_tile": _c(lambda tf, b, s: tf.image.non_max_suppression_padded(
        b, s, 30, iou_threshold=0.25, pad_to_max_output_size=True, tile_size=4), ["bb", "sb"]),
    # IoU exactly at the threshold (0.5, the float32 1e-8 lost): TF's padded NMS suppresses (>=)
    "nms_padded_tie": (lambda tf, b, s: tf.image.non_max_suppression_padded(b, s, 3, iou_threshold=0.5),
                       [np.array([[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 2, 2]], np.float32),
                        np.array([.9, .8, .7], np.float32)], True),
    "nms_overlaps": _c(lambda tf, o, s: tf.image.non_max_suppression_overlaps(o, s, 12, overlap_threshold=0.5),
                       ["ov", "s12"]),
    "nms_overlaps_thr": _c(lambda tf, o, s: tf.image.non_max_suppression_overlaps(
        o, s, 3, overlap_threshold=0.7, score_threshold=0.3), ["ov", "s12"]),
    "nms_overlaps_asymmetric": (lambda tf, o, s: tf.image.non_max_suppression_overlaps(o, s, 12, 0.5),
                                [_r0.uniform(0, 1, (12, 12)).astype(np.float32), X["s12"]], True),
    "combined": _c(lambda tf, b, s: tuple(tf.image.combined_non_max_suppression(
        b, s, 3, 7, iou_threshold=0.3, score_threshold=0.1)), ["cb", "cs"]),
    "combined_pad_per_class": _c(lambda tf, b, s: tuple(tf.image.combined_non_max_suppression(
        b, s, 2, 20, iou_threshold=0.3, score_threshold=0.4, pad_per_class=True, clip_boxes=False)), ["cb", "cs"]),
    "combined_shared_boxes": _c(lambda tf, b, s: tuple(tf.image.combined_non_max_suppression(
        b, s, 5, 12, iou_threshold=0.5)), ["cb1", "cs"]),
}

_G = np.arange(2 * 6 * 7 * 2, dtype=np.float32).reshape(2, 6, 7, 2)
_GO = {"zero": np.zeros((2, 2), np.float32), "mix": np.array([[0.0, 0.0], [0.3, -0.5]], np.float32),
       "out": np.array([[-0.9, 0.95], [1.5, -1.5]], np.float32),
       "frac": np.array([[0.1, 0.13], [-0.21, 0.33]], np.float32),
       "pix": np.array([[1.4, 2.6], [2.5, 3.5]], np.float32)}
for _o in _GO:
    for _cen in (True, False):
        for _nor in (True, False):
            for _sz in ((3, 4), (8, 9)):
                CALLS[f"glimpse_{_o}_{_cen}_{_nor}_{_sz[0]}"] = (
                    lambda tf, x, o, c=_cen, n=_nor, s=_sz: tf.image.extract_glimpse(
                        x, s, o, centered=c, normalized=n, noise="zero"), [_G, _GO[_o]], True)
CALLS["sample_box_stateless"] = (lambda tf, s, b: tuple(
    tf.concat([tf.image.stateless_sample_distorted_bounding_box(s, b, seed=[i, 7 * i + 1])[k] for i in range(40)], 0)
    for k in range(3)), [np.array([100, 80, 3], np.int32), np.array([[[0.1, 0.2, 0.5, 0.6]]], np.float32)], True)
CALLS["sample_box_stateless_args"] = (lambda tf, s, b: tuple(
    tf.concat([tf.image.stateless_sample_distorted_bounding_box(
        s, b, seed=[3, i], min_object_covered=0.5, aspect_ratio_range=(0.5, 2.0), area_range=(0.2, 0.9),
        max_attempts=5)[k] for i in range(40)], 0) for k in range(3)),
    [np.array([37, 211, 1], np.int64), np.array([[[0.1, 0.2, 0.5, 0.6], [0.0, 0.5, 0.3, 0.9]]], np.float32)], True)
CALLS["sample_box_stateless_no_boxes"] = (lambda tf, s, b: tuple(
    tf.concat([tf.image.stateless_sample_distorted_bounding_box(
        s, b, seed=[i, 0], use_image_if_no_bounding_boxes=True)[k] for i in range(20)], 0) for k in range(3)),
    [np.array([5, 9, 3], np.int32), np.zeros((1, 0, 4), np.float32)], True)

# -- sequence ops ----------------------------------------------------------------------------------------
_LAB = np.array([[1, 1, 2, 2, 3, 0], [4, 4, 4, 0, 0, 0], [5, 6, 5, 5, 0, 0], [7, 7, 7, 7, 7, 7]], np.int32)
CALLS["collapse_repeated"] = (lambda tf, x, n: tf.nn.collapse_repeated(x, n),
                              [_LAB, np.array([5, 3, 4, 6], np.int32)], True)
CALLS["collapse_repeated_i64"] = (lambda tf, x, n: tf.nn.collapse_repeated(x, n),
                                  [_LAB.astype(np.int64), np.array([6, 1, 0, 2], np.int64)], True)
CALLS["ctc_unique_labels"] = (lambda tf, x: tuple(tf.nn.ctc_unique_labels(x)), [_LAB], True)
CALLS["ctc_unique_labels_i64"] = (lambda tf, x: tuple(tf.nn.ctc_unique_labels(x)),
                                  [np.array([[3, 1, 3, 2, 1, 0], [0, 0, 9, 0, 8, 9]], np.int64)], True)


def _sp(ind, val, shape):
    return (np.asarray(ind, np.int64).reshape(-1, len(shape)), np.asarray(val), np.asarray(shape, np.int64))


_ED = {
    "int": (_sp([[0, 0], [0, 1], [1, 0]], np.array([1, 2, 3], np.int32), [2, 3]),
            _sp([[0, 0], [0, 2], [1, 1], [1, 2]], np.array([1, 3, 3, 4], np.int32), [2, 3])),
    "rank3_shapes": (_sp([[0, 0, 0], [1, 0, 0]], np.array([1.0, 2.0], np.float32), [2, 1, 1]),
                     _sp([[0, 1, 0], [1, 0, 0], [1, 0, 1]], np.array([1.0, 2.0, 5.0], np.float32), [2, 2, 2])),
    "empty_truth": (_sp([[0, 0], [0, 1]], np.array([1, 2], np.int64), [3, 2]),
                    _sp(np.zeros((0, 2)), np.zeros(0, np.int64), [3, 2])),
    "long": (_sp([[0, j] for j in range(7)], np.array([1, 2, 3, 4, 5, 6, 7], np.int64), [1, 9]),
             _sp([[0, j] for j in range(9)], np.array([2, 3, 9, 4, 5, 7, 7, 8, 1], np.int64), [1, 9])),
}
for _k, (_h, _t) in _ED.items():
    for _norm in (True, False):
        CALLS[f"edit_distance_{_k}_{_norm}"] = (
            lambda tf, a, b, c, d, e, f, n=_norm: tf.edit_distance(tf.SparseTensor(a, b, c), tf.SparseTensor(d, e, f),
                                                                   normalize=n), list(_h) + list(_t), False)


def _logits(seed, t, b, c, scale=1.0):
    return (np.random.default_rng(seed).standard_normal((t, b, c)) * scale).astype(np.float32)


for _name, _x, _lens, _bw, _tp in [("small", _logits(0, 6, 2, 4), [6, 4], 5, 3),
                                   ("peaked", _logits(1, 12, 3, 6, 4.0), [12, 7, 1], 10, 4),
                                   ("narrow", _logits(2, 15, 2, 5, 1.5), [15, 11], 2, 2),
                                   ("wide", _logits(3, 10, 2, 8, 2.0), [10, 9], 40, 5),
                                   ("one_path", _logits(4, 20, 2, 3, 3.0), [20, 16], 100, 1)]:
    CALLS[f"ctc_beam_{_name}"] = (lambda tf, x, n, bw=_bw, tp=_tp: tf.nn.ctc_beam_search_decoder(
        x, n, beam_width=bw, top_paths=tp), [_x, np.array(_lens, np.int32)], False)

# -- morphology, convolution gradients and aliases ---------------------------------------------------------
_r = np.random.default_rng(7)
_MX = _r.standard_normal((2, 7, 8, 3)).astype(np.float32)
_MX[0, 2, 2:5, :] = 1.5                                   # ties in the windows
_MF = np.round(_r.standard_normal((3, 2, 3)), 1).astype(np.float32)
_MW = _r.standard_normal((2, 7, 8, 3)).astype(np.float32)


def _morph(op, st, rates, pad):
    def fn(tf, x, f):
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            t.watch(f)
            y = getattr(tf.nn, op)(x, f, st, pad, "NHWC", rates)
            s = tf.reduce_sum(y * tf.ones_like(y) * tf.range(tf.size(y), dtype=y.dtype)[:1] + y * y)
        return y, t.gradient(s, x), t.gradient(s, f)
    return fn


for _op in ("dilation2d", "erosion2d"):
    for _st, _rt, _pad in [([1, 1, 1, 1], [1, 1, 1, 1], "SAME"), ([1, 2, 1, 1], [1, 1, 1, 1], "VALID"),
                           ([1, 1, 2, 1], [1, 2, 2, 1], "SAME"), ([1, 2, 3, 1], [1, 1, 2, 1], "VALID")]:
        CALLS[f"{_op}_{_st[1]}{_st[2]}_{_rt[1]}{_rt[2]}_{_pad}"] = (_morph(_op, _st, _rt, _pad), [_MX, _MF], True)

# small integers: x + filter ties everywhere, so the recorded gradients pin TF's choice among equal maxima
_TX = _r.integers(0, 3, (2, 6, 7, 2)).astype(np.float32)
_TF_ = _r.integers(0, 2, (2, 3, 2)).astype(np.float32)
for _op in ("dilation2d", "erosion2d"):
    for _pad in ("SAME", "VALID"):
        CALLS[f"{_op}_ties_{_pad}"] = (_morph(_op, [1, 1, 1, 1], [1, 1, 1, 1], _pad), [_TX, _TF_], True)

_CX = _r.standard_normal((2, 9, 8, 4)).astype(np.float32)
_CW = _r.standard_normal((3, 2, 4, 5)).astype(np.float32)
_CWG = _r.standard_normal((3, 2, 2, 6)).astype(np.float32)      # grouped: 2 groups of the 4 channels
_DW = _r.standard_normal((3, 3, 4, 2)).astype(np.float32)
for _st, _pad, _dl in [([1, 1, 1, 1], "SAME", [1, 1, 1, 1]), ([1, 2, 2, 1], "VALID", [1, 1, 1, 1]),
                       ([1, 2, 1, 1], "SAME", [1, 1, 1, 1])]:
    # (dilated gradients: TF 2.21's CPU kernels refuse them, or abort in oneDNN; tests/test_nn21.py checks
    # them against tapeflow's tape gradient of conv2d instead)
    _tag = f"{_st[1]}{_st[2]}_{_pad}_{_dl[1]}"
    CALLS[f"conv2d_backprop_filter_v2_{_tag}"] = (
        lambda tf, x, w, st=_st, pad=_pad, dl=_dl: tf.conv2d_backprop_filter_v2(
            x, w, tf.nn.conv2d(x, w, st, pad, dilations=dl) ** 2, st, pad, dilations=dl), [_CX, _CW], True)
    CALLS[f"conv2d_backprop_input_v2_{_tag}"] = (
        lambda tf, x, w, st=_st, pad=_pad, dl=_dl: tf.conv2d_backprop_input_v2(
            x, w, tf.nn.conv2d(x, w, st, pad, dilations=dl) ** 2, st, pad, dilations=dl), [_CX, _CW], True)
    if _st[1] != _st[2]:
        continue        # TF's depthwise kernels take equal row and column strides only
    CALLS[f"depthwise_backprop_filter_{_tag}"] = (
        lambda tf, x, w, st=_st, pad=_pad, dl=_dl: tf.nn.depthwise_conv2d_backprop_filter(
            x, [3, 3, 4, 2], tf.nn.depthwise_conv2d(x, w, st, pad, dilations=dl[1:3]) ** 2, st, pad,
            dilations=dl), [_CX, _DW], True)
    CALLS[f"depthwise_backprop_input_{_tag}"] = (
        lambda tf, x, w, st=_st, pad=_pad, dl=_dl: tf.nn.depthwise_conv2d_backprop_input(
            [2, 9, 8, 4], w, tf.nn.depthwise_conv2d(x, w, st, pad, dilations=dl[1:3]) ** 2, st, pad,
            dilations=dl), [_CX, _DW], True)
CALLS["conv2d_backprop_filter_v2_grouped"] = (
    lambda tf, x, w: tf.conv2d_backprop_filter_v2(x, w, tf.nn.conv2d(x, w, 1, "SAME") ** 2, [1, 1, 1, 1], "SAME"),
    [_CX, _CWG], True)
CALLS["conv2d_backprop_input_v2_grouped"] = (
    lambda tf, x, w: tf.conv2d_backprop_input_v2(x, w, tf.nn.conv2d(x, w, 1, "SAME") ** 2, [1, 1, 1, 1], "SAME"),
    [_CX, _CWG], True)
CALLS["conv_2d"] = (lambda tf, x, w: tf.conv(x, w, [1, 2, 1, 1], "SAME", dilations=[1, 1, 2, 1]), [_CX, _CW], True)
CALLS["conv_explicit"] = (lambda tf, x, w: tf.conv(x, w, [1, 1, 1, 1], "EXPLICIT",
                                                   explicit_paddings=[0, 0, 1, 2, 0, 1, 0, 0]), [_CX, _CW], True)
for _rate, _pad in [([2, 2], "SAME"), ([2, 3], "VALID"), ([1, 1], "SAME"), ([3, 1], "SAME")]:
    CALLS[f"with_space_to_batch_{_rate[0]}{_rate[1]}_{_pad}"] = (
        lambda tf, x, w, rate=_rate, pad=_pad: tf.nn.with_space_to_batch(
            x, rate, pad, lambda inp, n, p: tf.nn.convolution(inp, w, padding=p), filter_shape=[3, 2]),
        [_CX, _CW], True)
for _rate, _pad in [(2, "SAME"), (2, "VALID"), (3, "SAME")]:
    _oh = 9 if _pad == "SAME" else 9 + 2 * _rate
    _ow = 8 if _pad == "SAME" else 8 + _rate
    CALLS[f"atrous_conv2d_transpose_{_rate}_{_pad}"] = (
        lambda tf, x, w, rate=_rate, pad=_pad, oh=_oh, ow=_ow: tf.nn.atrous_conv2d_transpose(
            x[..., :4], tf.transpose(w, [0, 1, 3, 2])[..., :4], [2, oh, ow, 5], rate, pad) if pad == "SAME" else
        tf.nn.atrous_conv2d_transpose(x, tf.transpose(w, [0, 1, 3, 2]), [2, oh, ow, 5], rate, pad),
        [_CX, _CW], True)
_VX = _r.standard_normal((2, 5, 6, 7, 2)).astype(np.float32)
for _k, _s, _pad in [([1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"), ([1, 3, 2, 2, 1], [1, 2, 2, 3, 1], "SAME"),
                     ([1, 1, 3, 2, 1], [1, 3, 1, 2, 1], "VALID"), ([1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME")]:
    CALLS[f"extract_volume_patches_{''.join(map(str, _k[1:4]))}_{''.join(map(str, _s[1:4]))}_{_pad}"] = (
        lambda tf, x, k=_k, s=_s, pad=_pad: tf.extract_volume_patches(x, k, s, pad), [_VX], True)

CALLS["conv_3d"] = (lambda tf, x, w: tf.conv(x, w, [1, 1, 2, 1, 1], "SAME"),
                    [_VX, _r.standard_normal((2, 2, 3, 2, 3)).astype(np.float32)], True)

# fractional pools: TF's sequences are random (not TF's stream here); RECORD keeps TF's output, sequences and
# gradient, and tests/test_nn21.py pools with TF's sequences through tapeflow's pooling
RECORD = {}
_FX = _r.standard_normal((2, 11, 13, 3)).astype(np.float32)
for _kind in ("max", "avg"):
    for _ratio, _pr, _ov in [([1, 1.5, 1.7, 1], False, False), ([1, 1.44, 2.0, 1], True, False),
                             ([1, 2.2, 1.3, 1], False, True), ([1, 1.0, 3.0, 1], True, True)]:
        def _frac(tf, x, kind=_kind, ratio=_ratio, pr=_pr, ov=_ov):
            with tf.GradientTape() as t:
                t.watch(x)
                out, rows, cols = getattr(tf.nn, f"fractional_{kind}_pool")(x, ratio, pseudo_random=pr,
                                                                             overlapping=ov, seed=5)
                s = tf.reduce_sum(out * out)
            return out, rows, cols, t.gradient(s, x)
        RECORD[f"fractional_{_kind}_{_ratio[1]}_{_ratio[2]}_{_pr}_{_ov}"] = (_frac, [_FX], (_kind, _ov))

# -- isotonic regression, approximate top-k ---------------------------------------------------------------
_IX = np.array([[1, 3, 2, 4, 0], [5, 5, 1, 2, 3]], np.float32)
_IR = np.round(_r.standard_normal((4, 9)), 1).astype(np.float32)
for _nm, _x in (("small", _IX), ("random", _IR), ("f64", _IR.astype(np.float64)),
                ("int32", (_IR * 10).astype(np.int32)), ("int16", (_IR * 10).astype(np.int16))):
    for _dec in (True, False):
        CALLS[f"isotonic_{_nm}_{_dec}"] = (lambda tf, x, d=_dec: tuple(tf.nn.isotonic_regression(x, decreasing=d)),
                                           [_x], True)
CALLS["isotonic_axis0"] = (lambda tf, x: tuple(tf.nn.isotonic_regression(x, axis=0)), [_IR], True)
CALLS["isotonic_nan_1d"] = (lambda tf, x: tuple(tf.nn.isotonic_regression(x)),
                            [np.array([np.nan, 1, 2, 0.5], np.float32)], True)


def _iso_grad(tf, x):
    with tf.GradientTape() as t:
        t.watch(x)
        y, _ = tf.nn.isotonic_regression(x, decreasing=False)
        z = tf.reduce_sum(y * tf.reshape(tf.range(tf.size(x), dtype=x.dtype), tf.shape(x)))
    return t.gradient(z, x)


CALLS["isotonic_gradient"] = (_iso_grad, [_IR], True)
_AX = _r.standard_normal((3, 20)).astype(np.float32)
_AX[1, 3] = _AX[1, 7] = _AX[1, 11] = 2.5        # ties
CALLS["approx_max_k"] = (lambda tf, x: tuple(tf.math.approx_max_k(x, 3)), [_AX], True)
CALLS["approx_max_k_nan"] = (lambda tf, x: tuple(tf.math.approx_max_k(x, 2)),
                             [np.array([[1.0, np.nan, 3.0]], np.float32)], True)
CALLS["approx_top_k"] = (lambda tf, x: tuple(tf.approx_top_k(x, 5, recall_target=0.5)), [_AX], True)
CALLS["approx_top_k_1d"] = (lambda tf, x: tuple(tf.approx_top_k(x[1], 4, aggregate_to_topk=False)), [_AX], True)
CALLS["nn_approx_max_k"] = (lambda tf, x: tuple(tf.nn.approx_max_k(x, 1)), [_AX], True)

# -- JPEG quality: Pillow's encoder writes TF's bytes, so with the accurate IDCT the pixels are TF's ---------
_JX = (_r.random((16, 24, 3)) * 255).astype(np.uint8)
_yy, _xx = np.mgrid[0:13, 0:21]
_JS = np.stack([_yy * 10, _xx * 8, (_yy + _xx) * 5], -1).astype(np.uint8)
for _q in (5, 50, 95):
    CALLS[f"jpeg_quality_noise_{_q}"] = (lambda tf, x, q=_q: tf.image.adjust_jpeg_quality(
        x, q, dct_method="INTEGER_ACCURATE"), [_JX], True)
    CALLS[f"jpeg_quality_smooth_float_{_q}"] = (lambda tf, x, q=_q: tf.image.adjust_jpeg_quality(
        (tf.cast(x, tf.float32) + 0.8) / 255.0, q, dct_method="INTEGER_ACCURATE"), [_JS], True)   # x (255 + 0.5)
CALLS["jpeg_quality_gray"] = (lambda tf, x: tf.image.adjust_jpeg_quality(x[..., :1], 30,
                                                                        dct_method="INTEGER_ACCURATE"), [_JX], True)
# TF's default (fast IDCT) decode and its stateless quality draws: compared within a few levels
RECORD["jpeg_default_dct"] = (lambda tf, x: tf.image.adjust_jpeg_quality(x, 40), [_JS], None)
RECORD["jpeg_stateless"] = (lambda tf, x: tf.stack([tf.image.stateless_random_jpeg_quality(x, 5, 95, [i, 3])
                                                    for i in range(6)]), [_JS], None)
# keras.ops.ctc_decode's beam search (Keras 3's TF backend on tf.nn.ctc_beam_search_decoder)
for _mi in (0, 2, None):
    CALLS[f"keras_ctc_decode_beam_{_mi}"] = (lambda tf, x, n, mi=_mi: tuple(tf.keras.ops.ctc_decode(
        tf.transpose(x, [1, 0, 2]), n, strategy="beam_search", beam_width=6, top_paths=3, mask_index=mi)),
        [_logits(9, 7, 2, 5, 2.0), np.array([7, 5], np.int32)], False)
