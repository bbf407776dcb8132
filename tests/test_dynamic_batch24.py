"""Ops on a tensor whose first dimension an input_signature leaves None (a served or exported model's
batch: tf.TensorSpec([None, 28, 28, 1])). benchmarks/op_fuzz.py's grid runs each program eagerly and
inside a tapeflow.function whose signature leaves the FIRST argument's first dimension None: the traced
run gives the eager outcome (value, dtype and shape, or the exception class), or, for an op whose result
or loop needs that size as a static number, a clear refusal naming the op and the size (REFUSED, each
with why). Before wave 24 it differed in 347 programs of 62 ops, most with raw TypeErrors naming no op
("unsupported operand type(s) for -: 'NoneType' and 'int'"), some with silently different values
(tf.roll rolled nothing, tf.slice clipped). NOT_YET: the ops that still differ (known defects: the list
must shrink, never grow). No TF needed: the eager run is the reference (tests/test_op_fuzz.py checks it
against TF's recorded outcomes)."""
import logging
import os
import re
import sys
import warnings

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import op_fuzz as F  # noqa: E402
import tapeflow as tf  # noqa: E402

# ops that refuse an unknown size by name, and why they need it as a number (wave 25 made band_part,
# diag_part, set_diag, trace, diag, REFLECT/SYMMETRIC pad, signal.frame/overlap_and_add (and so stft)
# strings.reduce_join, linalg.lstsq and math.polygamma of a traced order work: tests/test_dynamic_batch25.py)
REFUSED = {
    "tf.image.resize": "unknown height/width: the resampling weights and taps are constants of the sizes",
    "tf.image.resize_with_crop_or_pad": "unknown height/width: crop offsets and paddings are static",
    "tf.image.resize_with_pad": "unknown height/width: the scale and paddings are static",
    "tf.image.crop_to_bounding_box": "unknown height/width: the box is checked against static sizes",
    "tf.image.pad_to_bounding_box": "unknown height/width: the paddings are static",
    "tf.image.central_crop": "unknown height/width: the offsets are static",
    "tf.signal.idct": "the DCT's length sets its twiddle factors and the rfft's size",
    "tf.signal.irfft": "fft_length defaults to the input's length",
    "tf.unstack": "the number of outputs is the axis length",
}

# ops that still differ traced with an unknown first dimension (wave 24 left 7; wave 25 fixed them,
# tests/test_dynamic_batch25.py)
NOT_YET = set()

_REFUSAL = ("known only when the function runs", "must be known")


def _programs():
    for src, args in F.grid(0):
        if args and not any(a.ndim == 0 for a in args):
            yield src, args


def _clear_refusal(msg):
    """An error that names the op (the text starts 'name:') and says the size is unknown while tracing."""
    return bool(re.match(r"[\w.]+(\(.*?\))?: ", msg)) and any(t in msg for t in _REFUSAL)


def test_unknown_first_dimension_gives_the_eager_outcome_or_a_refusal_by_name():
    logging.disable(logging.WARNING)
    bad, still, refused = [], set(), set()
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            for src, args in _programs():
                op = F._op(src)
                fn = eval("lambda x=None, y=None, z=None: " + src, {"tf": tf, "np": np})  # noqa: S307
                spec = [tf.TensorSpec(([None] + list(a.shape[1:])) if i == 0 else list(a.shape),
                                      tf.as_dtype(a.dtype)) for i, a in enumerate(args)]
                try:
                    g = tf.function(fn, input_signature=spec)
                except Exception:  # noqa: BLE001  (a signature the op's arguments cannot take)
                    continue
                e, c = F.outcome(tf, fn, args), F.outcome(tf, g, args)
                if F.same(e, c, 1e-6):
                    continue
                if op in NOT_YET:
                    still.add(op)
                    continue
                if c["k"] == "err" and op in REFUSED:
                    try:   # (the outcome keeps the message's first 160 characters)
                        g(*[tf.constant(a) for a in args])
                    except Exception as ex:  # noqa: BLE001
                        if _clear_refusal(str(ex)):
                            refused.add(op)
                            continue
                bad.append((src, [(str(a.dtype), a.shape) for a in args], F._short(e), F._short(c)))
    finally:
        logging.disable(logging.NOTSET)
    assert not bad, "\n".join(map(str, bad[:20]))
    # a fixed op leaves NOT_YET (so the list only shrinks)
    assert still == NOT_YET, f"no longer differing, remove from NOT_YET: {sorted(NOT_YET - still)}"
    assert refused == set(REFUSED), f"no longer refusing, remove from REFUSED: {sorted(set(REFUSED) - refused)}"


def test_the_refusal_rule_can_fail():
    assert _clear_refusal("resize: the image's height and width must be known; one is ...")
    assert not _clear_refusal("unsupported operand type(s) for -: 'NoneType' and 'int'")
    assert not _clear_refusal("stack: all tensors need the same shape, got (?,), (4,)")


def test_roll_and_slice_of_an_unknown_batch():
    """Two that gave wrong values, not errors: roll rolled nothing along a None axis, and tf.slice
    clipped a size past the end like a Python slice."""
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    spec = [tf.TensorSpec([None, 2], tf.float32)]
    roll = tf.function(lambda t: tf.roll(t, 1, axis=0), input_signature=spec)
    np.testing.assert_array_equal(roll(x).numpy(), np.roll(x, 1, axis=0))
    cut = tf.function(lambda t: tf.slice(t, [2, 0], [2, 2]), input_signature=spec)
    try:
        cut(x)
    except tf.errors.InvalidArgumentError:
        pass
    else:
        raise AssertionError("tf.slice past the end of a None axis returned a clipped slice")
    stack = tf.function(lambda t: tf.stack([t, tf.ones([3, 2])]), input_signature=spec)
    assert stack(x).shape == (2, 3, 2)
    avg = tf.function(lambda t: tf.nn.compute_average_loss(t[:, 0]), input_signature=spec)
    np.testing.assert_allclose(avg(x).numpy(), x[:, 0].sum() / 3, rtol=1e-6)


@pytest.mark.parametrize("begin, size", [([-1, 0], [1, "n"]),     # a static negative begin on the None axis
                                         (["n", 5], [1, 10]),     # static bounds past a static axis
                                         ([2, "n"], [3, 1])])     # static bounds past the None axis's run-time size
def test_tf_slice_static_bounds_beside_a_traced_one(begin, size):
    """tf.slice with one bound a tensor argument and static bounds elsewhere that do not fit: eager raises TF's
    error, and compiled under a None batch raised nothing for the first two (an empty slice: a Python slice
    clips), so every mode now raises InvalidArgumentError naming the axis."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    pick = lambda n, vs: [n if v == "n" else v for v in vs]
    f = lambda t, n: tf.slice(t, pick(n, begin), pick(n, size))
    spec = [tf.TensorSpec([None, 4], tf.float32), tf.TensorSpec([], tf.int32)]
    for run in (f, tf.function(f), tf.function(f, input_signature=spec)):
        with pytest.raises(tf.errors.InvalidArgumentError, match="slice: .*axis [01]"):
            run(tf.constant(x), tf.constant(1))


def test_conv2d_transpose_output_shape_from_the_run_time_batch():
    """A decoder's tf.nn.conv2d_transpose(x, w, [tf.shape(x)[0], 8, 8, 1], ...) under a None batch: the batch
    entry is the input's, checked when the function runs (TF 2.21: the same shape and sums, 35.2958 and 439.963;
    a wrong batch raises, AbortedError in TF)."""
    spec = [tf.TensorSpec([None, 4, 4, 2], tf.float32)]
    w = tf.constant(np.arange(18, dtype=np.float32).reshape(3, 3, 1, 2) / 10)
    x = tf.constant(np.random.default_rng(0).standard_normal((2, 4, 4, 2)).astype(np.float32))
    f = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [tf.shape(x)[0], 8, 8, 1], 2, "SAME"),
                    input_signature=spec)
    y = f(x)
    assert y.shape == (2, 8, 8, 1)
    np.testing.assert_allclose([float(tf.reduce_sum(y)), float(tf.reduce_sum(y * y))], [35.295753, 439.9628],
                               rtol=1e-5)
    g = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [tf.shape(x)[0] + 1, 8, 8, 1], 2, "SAME"),
                    input_signature=spec)
    with pytest.raises(tf.errors.InvalidArgumentError, match="output_shape's batch"):
        g(x)
