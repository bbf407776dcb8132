"""RaggedTensors inside tapeflow.function (wave 20): arguments, results, captures and
input_signature=[tf.RaggedTensorSpec] trace as their component tensors (flat_values, row_splits).
TF 2.21's printed results and trace counts come from tests/ragged_fn_cases.py (recorded by
tests/tf_reference/make_ragged_fn_reference.py into tests/data/ragged_fn_tf.json)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

import ragged_fn_cases

WANT = json.loads((Path(__file__).parent / "data" / "ragged_fn_tf.json").read_text())


@pytest.mark.parametrize("backend", ["python", "interpreter"])
def test_cases_print_and_retrace_as_tf(backend):
    got = ragged_fn_cases.run(tf, backend=backend)
    assert set(got) == set(WANT)
    bad = {c: (got[c], WANT[c]) for c in WANT if got[c] != WANT[c]}
    assert not bad, bad


def test_compiled_equals_eager():
    # every case's result compiled equals the same Python run eagerly (values, dtypes, classes)
    tf.config.run_functions_eagerly(True)
    try:
        eager = ragged_fn_cases.run(tf)
    finally:
        tf.config.run_functions_eagerly(False)
    compiled = ragged_fn_cases.run(tf)
    for name in compiled:
        # (eagerly nothing traces, and an error inside a trace is the same class eagerly; a call
        # that does not match an input_signature is refused before it runs, so eagerly it runs)
        if name in ragged_fn_cases.TEXT_DIFFERS_EAGERLY:
            continue
        pairs = [(c[0], e[0]) for c, e in zip(compiled[name], eager[name]) if c[0] != "!! TypeError"]
        assert pairs and all(c == e for c, e in pairs), (name, pairs)


R = tf.ragged.constant


def test_results_are_ragged_and_share_traces():
    f = tf.function(lambda x: x * 2)
    a, b = R([[1, 2], [3], [4, 5, 6]]), R([[1], [2, 3, 4], [5, 6]])
    ra, rb = f(a), f(b)
    assert isinstance(ra, tf.RaggedTensor) and ra.to_list() == [[2, 4], [6], [8, 10, 12]]
    assert rb.to_list() == [[2], [4, 6, 8], [10, 12]]
    assert f.experimental_get_tracing_count() == 1   # TF 2.21: 1 (spec [3, None] both)
    cf = f.get_concrete_function(a)
    assert cf(b).to_list() == [[2], [4, 6, 8], [10, 12]]


def test_captured_ragged_and_spec_concrete_function():
    cap = R([[1, 2], [3]])
    f = tf.function(lambda x: cap * x)
    assert repr(f(tf.constant(2))) == "<tf.RaggedTensor [[2, 4], [6]]>"   # TF 2.21
    g = tf.function(lambda x: x * 100.0)
    cf = g.get_concrete_function(tf.RaggedTensorSpec(shape=[None, None], dtype=tf.float32))
    assert repr(cf(R([[1.0, 4.0, 3.0], [2.0]]))) == "<tf.RaggedTensor [[100.0, 400.0, 300.0], [200.0]]>"
    assert g.experimental_get_tracing_count() == 1
    assert g(R([[1.0], [2.0, 3.0], []])).to_list() == [[100.0], [200.0, 300.0], []]
    assert g.experimental_get_tracing_count() == 1   # the spec's trace serves any row count


def test_signature_mismatch_is_a_type_error():
    f = tf.function(lambda x: x + 1, input_signature=[tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32)])
    with pytest.raises(TypeError, match="RaggedTensorSpec"):   # TF 2.21: TypeError (binding inputs)
        f(R([[1.0]]))
    with pytest.raises(TypeError):
        f(tf.constant([[1, 2]]))
    with pytest.raises(TypeError):
        f(R([[[1]]]))



def test_concrete_function_of_a_spec_signature_takes_ragged_values():
    f = tf.function(lambda r: tf.reduce_sum(r, axis=1),
                    input_signature=[tf.RaggedTensorSpec([None, None], tf.int32)])
    cf = f.get_concrete_function()
    # TF 2.21: array([3, 3]) and, by keyword with another row count, array([1, 5, 4])
    assert cf(R([[1, 2], [3]])).numpy().tolist() == [3, 3]
    assert cf(r=R([[1], [2, 3], [4]])).numpy().tolist() == [1, 5, 4]
    for bad in (R([[[1]], [[2]]]), R([[1.0]]), tf.constant([[1, 2]])):
        with pytest.raises(TypeError, match="RaggedTensorSpec"):   # TF 2.21: TypeError (binding inputs)
            cf(bad)
    assert f.experimental_get_tracing_count() == 1   # TF 2.21: 1
    # specs nested in an input_signature entry (TF 2.21: <tf.RaggedTensor [[2, 4], [6]]> both ways)
    sp = tf.RaggedTensorSpec([None, None], tf.int32)
    g = tf.function(lambda rs: rs[0] + rs[1], input_signature=[[sp, sp]])
    rt = R([[1, 2], [3]])
    assert repr(g([rt, rt])) == repr(g.get_concrete_function()([rt, rt])) == "<tf.RaggedTensor [[2, 4], [6]]>"
    with pytest.raises(TypeError, match="RaggedTensorSpec"):
        g.get_concrete_function()([rt, R([[1.0]])])


def test_partition_mismatch_raises_at_run_time():
    f = tf.function(lambda x, y: x + y)
    f(R([[1], [2, 3]]), R([[1], [2, 3]]))
    # TF 2.21: InvalidArgumentError (its graph's assert_equal text, x's splits first)
    with pytest.raises(InvalidArgumentError, match=r"row partitions differ \(row_splits \[0 2 3\] vs \[0 1 3\]\)"):
        f(R([[1, 2], [3]]), R([[1], [2, 3]]))
    assert f.experimental_get_tracing_count() == 1


def test_gradient_through_traced_ragged_ops():
    x = tf.Variable([1.0, 2.0, 3.0, 4.0])

    @tf.function
    def step(splits):
        with tf.GradientTape() as tape:
            rt = tf.RaggedTensor.from_row_splits(x * 1.0, splits)
            y = tf.reduce_sum(tf.reduce_max(rt * rt, axis=1) * tf.constant([1.0, 10.0]))
        return tape.gradient(y, x)
    g = step(tf.constant([0, 2, 4], tf.int64)).numpy().tolist()
    assert g == [0.0, 4.0, 0.0, 80.0]   # d/dx of x1^2 + 10 x3^2 (the rows' maxima)
    assert step(tf.constant([0, 3, 4], tf.int64)).numpy().tolist() == [0.0, 0.0, 6.0, 80.0]


def test_traced_indexing_and_to_tensor_differentiate():
    # (wave 21) indexing and to_tensor traced are gathers: gradients reach the flat values, and the
    # compiled step gives the eager step's numbers
    w = tf.constant([[1., 2, 3], [4, 5, 6], [7, 8, 9]])

    def step(x, splits):
        with tf.GradientTape() as tape:
            tape.watch(x)
            rt = tf.RaggedTensor.from_row_splits(x, splits)
            y = (tf.reduce_sum(rt.to_tensor() * w) + 3.0 * tf.reduce_sum(rt[:, 1:].flat_values)
                 + 5.0 * tf.reduce_sum(rt[2]) + 7.0 * tf.reduce_sum(rt[::2].flat_values))
        return tape.gradient(y, x)
    x, splits = tf.constant([1., 2, 3, 4, 5]), tf.constant([0, 3, 3, 5], tf.int64)
    got = tf.function(step)(x, splits).numpy().tolist()
    # row 0 = x0..x2 at w[0, :3], row 2 = x3, x4 at w[2, :2]; x[:, 1:] takes x1, x2, x4; rt[2] x3, x4;
    # rt[::2] rows 0 and 2: every value
    assert got == [1 + 7, 2 + 3 + 7, 3 + 3 + 7, 7 + 5 + 7, 8 + 3 + 5 + 7]
    assert got == step(x, splits).numpy().tolist()
    # other row lengths reuse the trace and still differentiate
    f = tf.function(step)
    f(x, splits)
    assert f(x, tf.constant([0, 2, 2, 5], tf.int64)).numpy().tolist() == \
        step(x, tf.constant([0, 2, 2, 5], tf.int64)).numpy().tolist()
    assert f.experimental_get_tracing_count() == 1


def test_row_index_out_of_range():
    rt = R([[1], [2, 3], []])
    # a static index: eager's IndexError in both modes (TF's tf.function raises a ValueError at trace
    # time for it: docs/differences.md)
    with pytest.raises(IndexError, match="Row key 3 out of bounds"):
        rt[3]
    with pytest.raises(IndexError, match="Row key -4 out of bounds"):
        tf.function(lambda x: x[-4])(rt)
    # a tensor index: checked when the function runs (TF's InvalidArgumentError and text)
    f = tf.function(lambda x, i: x[i])
    assert f(rt, tf.constant(-2)).numpy().tolist() == [2, 3]
    with pytest.raises(InvalidArgumentError, match="slice index 3 of dimension 0 out of bounds"):
        f(rt, tf.constant(3))


def test_traced_ops_still_refused_say_so():
    # a negative step inside each row needs the rows reversed: refused by name, never a wrong answer
    with pytest.raises(NotImplementedError, match="negative step"):
        tf.function(lambda x: x[:, ::-1])(R([[1], [2, 3]]))
    with pytest.raises(ValueError, match="to_list can only be used in eager mode"):
        tf.function(lambda x: tf.constant(x.to_list()))(R([[1], [2, 3]]))
    with pytest.raises(ValueError, match="Cannot index into an inner ragged dimension"):
        R([[1], [2, 3]])[:, 0]   # TF 2.21: even when every row has the column
    # map_fn unrolls over the rows: an unknown row count is refused as for dense elems
    f = tf.function(lambda x: tf.map_fn(tf.reduce_sum, x, fn_output_signature=tf.int32),
                    input_signature=[tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32)])
    with pytest.raises(ValueError, match="number of rows of a RaggedTensor must be known"):
        f(R([[1], [2, 3]]))


def test_signature_text_names_ragged_specs():
    f = tf.function(lambda x: x * 2.0)
    cf = f.get_concrete_function(tf.RaggedTensorSpec(shape=[None, None], dtype=tf.float32))
    text = cf.pretty_printed_signature()
    assert "x (POSITIONAL_OR_KEYWORD): RaggedTensorSpec(TensorShape([None, None]), tf.float32, 1, tf.int64)" in text
    assert "Output Type:\n  RaggedTensorSpec(TensorShape([None, None]), tf.float32, 1, tf.int64)" in text
    g = tf.function(lambda x: (x, tf.reduce_sum(x, axis=1)))
    text = g.get_concrete_function(R([[1], [2, 3]])).pretty_printed_signature()
    assert "RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1, tf.int64)" in text


def test_saved_model_keeps_ragged_traces(tmp_path):
    # the ragged tensor guide's CustomModule: a trace for a RaggedTensorSpec, saved and loaded
    class CustomModule(tf.Module):
        def __init__(self, value):
            super().__init__()
            self.v = tf.Variable(value)

        @tf.function
        def grow(self, x):
            return x * self.v, tf.reduce_sum(x, axis=1)

    module = CustomModule(100.0)
    module.grow.get_concrete_function(tf.RaggedTensorSpec(shape=[None, None], dtype=tf.float32))
    tf.saved_model.save(module, str(tmp_path))
    from tapeflow.compiler import function as F
    F._COMPOSITE_CLASSES.pop("RaggedTensor", None)   # as in a new process: the load finds the class
    loaded = tf.saved_model.load(str(tmp_path))
    grown, sums = loaded.grow(R([[1.0, 4.0, 3.0], [2.0]]))
    # TF 2.21: <tf.RaggedTensor [[100.0, 400.0, 300.0], [200.0]]>
    assert repr(grown) == "<tf.RaggedTensor [[100.0, 400.0, 300.0], [200.0]]>"
    assert sums.numpy().tolist() == [8.0, 2.0]
    with tf.GradientTape() as tape:   # the op-by-op path (a tape records it) rebuilds the result too
        x = tf.constant([1.0, 2.0])
        tape.watch(x)
        g, _ = loaded.grow(tf.RaggedTensor.from_row_lengths(x, [2, 0]))
    assert isinstance(g, tf.RaggedTensor) and g.to_list() == [[100.0, 200.0], []]
    with pytest.raises(ValueError, match="Could not find matching concrete function"):
        loaded.grow(R([[1, 2]]))
