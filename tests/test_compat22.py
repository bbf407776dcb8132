"""tf.compat.v1 leftovers of TF's migration guides (wave 22): TF1's Dimension, the tensor-equality
switches, the SessionRunHook base class; and adjust_contrast's gradient (autodiff guide cell 29).
Expected values are TF 2.21's (literals, noted)."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import tapeflow as tf
from tapeflow._unsupported import UnsupportedFeatureError

D = tf.compat.v1.Dimension


def test_dimension_values_text_and_construction_as_tf():
    assert D is tf.compat.v1.Dimension and repr(D(3)) == "Dimension(3)" and repr(D(None)) == "Dimension(None)"
    assert str(D(3)) == "3" and str(D(None)) == "?"                                   # TF 2.21
    assert D(3).value == 3 and D(None).value is None and D(D(4)).value == 4 and D(np.int64(5)).value == 5
    assert D(2 ** 40).value == 2 ** 40
    for bad in (3.0, 3.5, "a", np.float32(2)):
        # TF 2.21: "Dimension value must be integer or None or have an __index__ method, got value '3.0' ..."
        with pytest.raises(TypeError, match="Dimension value must be integer or None or have an __index__ method"):
            D(bad)
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):                  # TF 2.21
        D(-1)
    assert int(D(3)) == 3 and [0, 1, 2, 3][D(1)] == 1 and D(3).__index__() == 3
    with pytest.raises(TypeError):                       # TF 2.21: __int__ returned non-int (type NoneType)
        int(D(None))
    assert not D(0) and not D(None) and D(2)
    with pytest.raises(TypeError, match="unhashable"):                                   # TF 2.21
        hash(D(3))
    assert pickle.loads(pickle.dumps(D(7))).value == 7 and copy.copy(D(None)).value is None


def test_dimension_compatibility_and_merge_as_tf():
    assert D(3).is_compatible_with(3) and not D(3).is_compatible_with(4)                # TF 2.21
    assert D(None).is_compatible_with(4) and D(3).is_compatible_with(None) and D(3).is_compatible_with(D(None))
    assert repr(D(3).merge_with(3)) == "Dimension(3)" and repr(D(3).merge_with(None)) == "Dimension(3)"
    assert repr(D(None).merge_with(5)) == "Dimension(5)" and repr(D(None).merge_with(None)) == "Dimension(None)"
    with pytest.raises(ValueError, match="Dimensions 3 and 4 are not compatible"):        # TF 2.21
        D(3).merge_with(4)
    with pytest.raises(ValueError, match="Dimensions 3 and 4 are not compatible"):
        D(3).assert_is_compatible_with(4)
    assert D(3).assert_is_compatible_with(None) is None


def test_dimension_comparisons_are_three_valued_as_tf():
    # TF 2.21: True/False when both are known, None when either is unknown
    assert (D(3) == 3) is True and (D(3) != 4) is True and (D(3) < 4) is True and (D(3) <= D(3)) is True
    assert (D(3) > 2) is True and (D(3) >= 4) is False and (D(3) == D(4)) is False
    for r in (D(3) == D(None), D(None) == D(None), D(3) != D(None), D(None) < 4, D(3) >= None, D(3) == None):  # noqa: E711
        assert r is None
    assert D(3) in [3] and (D(3) == tf.constant(3)) is True
    assert (D(3) == "a") is False    # (not a dimension: unequal)


def test_dimension_arithmetic_as_tf():
    # TF 2.21: arithmetic gives a Dimension, unknown when either side is
    cases = [(D(3) + 4, 7), (4 + D(3), 7), (D(3) - 1, 2), (D(3) * 2, 6), (2 * D(3), 6), (D(7) // 2, 3),
             (7 // D(2), 3), (D(7) % 3, 1), (7 % D(3), 1), (D(3) + D(None), None), (D(None) + 1, None),
             (D(3) * None, None), (D(3) + None, None)]
    for got, want in cases:
        assert isinstance(got, D) and got.value == want
    with pytest.raises(ValueError, match="Dimension -2 must be >= 0"):                   # TF 2.21: 1 - D(3)
        1 - D(3)
    with pytest.raises(TypeError, match="please use // instead"):                         # TF 2.21
        D(7) / 2
    with pytest.raises(TypeError):
        D(3) + "a"
    with pytest.raises(TypeError):   # TF 2.21: no ** and no unary minus
        D(3) ** 2
    with pytest.raises(TypeError):
        -D(3)


def test_tensorshape_dims_are_dimensions_as_tf():
    s = tf.TensorShape([2, None])
    assert repr(s.dims) == "[Dimension(2), Dimension(None)]" and isinstance(s.dims[0], D)   # TF 2.21
    assert s[0] == 2 and type(s[0]) is int      # indexing the shape stays an int
    assert tf.TensorShape(None).dims is None and tf.TensorShape([]).dims == []
    assert tf.compat.dimension_value(D(3)) == 3 and tf.compat.v1.dimension_value(D(4)) == 4
    assert repr(tf.compat.v1.dimension_at_index(tf.TensorShape([2]), 0)) == "Dimension(2)"
    # migrate_tf1_vs_tf2 cell 4
    shape, i = tf.TensorShape([16, None]), 0
    dim = D(None) if shape.rank is None else shape.dims[i]
    assert dim.is_compatible_with(16) is True


def test_tensor_equality_switches():
    v1 = tf.compat.v1
    assert v1.enable_tensor_equality() is None     # TF2's behaviour: elementwise ==, nothing to do
    x, y = tf.Variable(0.0), tf.Variable(0.0)
    assert bool((x == y).numpy())                  # TF 2.21: <tf.Tensor: ... numpy=True>
    # disable (TF1's == as identity) is a process-wide switch tapeflow's own == would follow: refused
    with pytest.raises(UnsupportedFeatureError, match="disable_tensor_equality: .* identity test process-wide"):
        v1.disable_tensor_equality()
    assert bool((x == y).numpy())                  # (nothing was switched)
    refs = {x.ref(), tf.constant(2.0).ref()}
    assert x.ref() in refs and x.ref().deref() is x
    # TF 2.21's text
    assert repr(x.ref()) == "<Reference wrapping <tf.Variable 'Variable:0' shape=() dtype=float32, numpy=0.0>>"
    assert repr(tf.constant([1, 2]).ref()) == ("<Reference wrapping <tf.Tensor: shape=(2,), dtype=int32, "
                                                "numpy=array([1, 2], dtype=int32)>>")


def test_session_run_hook_classes_as_tf():
    t = tf.compat.v1.train
    h = t.SessionRunHook()
    # TF 2.21: every method does nothing and returns None
    assert (h.begin(), h.before_run(None), h.after_run(None, None), h.end(None),
            h.after_create_session(None, None)) == (None,) * 5
    assert repr(t.SessionRunArgs(fetches=1)) == "SessionRunArgs(fetches=1, feed_dict=None, options=None)"
    assert repr(t.SessionRunValues(1, 2, 3)) == "SessionRunValues(results=1, options=2, run_metadata=3)"
    ctx = t.SessionRunContext(original_args=t.SessionRunArgs(1), session=None)
    assert not ctx.stop_requested and ctx.original_args.fetches == 1 and ctx.session is None
    ctx.request_stop()
    assert ctx.stop_requested

    class InterruptHook(t.SessionRunHook):    # migrate_fault_tolerance cell 3, driven by hand
        def begin(self):
            self._step = -1

        def before_run(self, run_context):
            self._step += 1

        def after_run(self, run_context, run_values):
            if self._step == 5:
                raise RuntimeError("Interruption")
    hook = InterruptHook()
    hook.begin()
    with pytest.raises(RuntimeError, match="Interruption"):
        for _ in range(10):
            hook.before_run(ctx)
            hook.after_run(ctx, t.SessionRunValues(None, None, None))
    assert hook._step == 5
    # the rest of v1.train needs TF1's sessions: refused by name
    for name in ("MonitoredTrainingSession", "GradientDescentOptimizer", "Saver", "StopAtStepHook"):
        with pytest.raises(UnsupportedFeatureError, match=rf"tf.compat.v1.train.{name}: tapeflow does not implement"):
            getattr(t, name)


# -- autodiff guide cell 29: tf.image.adjust_contrast with Variables --------------------------------
def test_adjust_contrast_gradient_of_the_guide_cell():
    # TF 2.21 raises LookupError (no gradient for AdjustContrastv2); tapeflow composes ops, so the cell's
    # `assert False` line is reached: the gradient is right (a 1x1 image is its own mean: d/dimage = 1,
    # d/ddelta = sum(x - mean) = 0)
    image = tf.Variable([[[0.5, 0.0, 0.0]]])
    delta = tf.Variable(0.1)
    with tf.GradientTape() as tape:
        new_image = tf.image.adjust_contrast(image, delta)
    gi, gd = tape.gradient(new_image, [image, delta])
    np.testing.assert_array_equal(gi.numpy(), np.ones((1, 1, 3), np.float32))
    assert gd.numpy() == 0.0 and gd.dtype == tf.float32


X0 = np.arange(12, dtype=np.float32).reshape(2, 2, 3) / 7.0
W = np.arange(12, dtype=np.float32).reshape(2, 2, 3) % 5 - 2.0
# TF 2.21: adjust_contrast(X0, 0.6), and the gradients of sum(((x - m) * f + m) * W) written with ops TF
# differentiates (its AdjustContrastv2 kernel has none)
TF_CONTRAST = [0.25714284, 0.39999998, 0.54285717, 0.5142857, 0.6571429, 0.8, 0.7714286, 0.9142857, 1.0571429,
               1.0285714, 1.1714286, 1.3142858]
TF_GRAD_X = [-1.2, -0.70000005, -0.19999999, 0.6, 1.1, -1.4000001, -0.6, -0.099999994, 0.40000004, 1.2,
             -1.3000001, -0.8]
TF_GRAD_F = 1.0714285


def _contrast_grads(x, f):
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.image.adjust_contrast(x, f) * W)
    return (y, *tape.gradient(y, [x, f]))


def test_adjust_contrast_gradient_vs_tf_eager_and_compiled():
    x, f = tf.Variable(X0), tf.Variable(0.6)
    np.testing.assert_allclose(tf.image.adjust_contrast(X0, 0.6).numpy().ravel(), TF_CONTRAST, rtol=1e-6)
    for fn in (_contrast_grads, tf.function(_contrast_grads)):
        _, gx, gf = fn(x, f)
        np.testing.assert_allclose(gx.numpy().ravel(), TF_GRAD_X, rtol=1e-6, atol=1e-7)
        assert gf.numpy() == pytest.approx(TF_GRAD_F, rel=1e-6)


def test_tensorshape_truth_is_a_known_rank_as_tf():
    # migrate_tf1_vs_tf2 cell 6, TF 2.21: True for every known rank (the scalar shape too), False for None
    assert [bool(tf.TensorShape(s)) for s in ([], [0], [1], [None], [1, 10, 100], [None, None, None])] == [True] * 6
    assert not tf.TensorShape(None) and tf.TensorShape([2])[1:] and tf.constant(1.0).shape
    assert len(tf.TensorShape([])) == 0 and tf.TensorShape([]) == ()    # still the empty tuple otherwise
