"""tf.RaggedTensor (wave 19, eager): TF 2.21's values and texts (recorded as literals: '# TF 2.21'),
elementwise ops over flat_values, reductions, indexing, conversions, gradients through flat_values,
and (wave 20) a RaggedTensor inside tapeflow.function."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError


def digits():
    return tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])


def test_constant_repr_parts():
    d = digits()
    assert repr(d) == "<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2], [6], []]>"   # TF 2.21
    assert str(d) == repr(d) and d.dtype is tf.int32 and d.ragged_rank == 1
    assert d.shape == tf.TensorShape([5, None]) and str(d.shape) == "(5, None)"
    assert d.values.numpy().tolist() == [3, 1, 4, 1, 5, 9, 2, 6]
    assert d.row_splits.numpy().tolist() == [0, 4, 4, 7, 8, 8] and d.row_splits.dtype is tf.int64
    assert d.to_list() == [[3, 1, 4, 1], [], [5, 9, 2], [6], []]
    assert d.row_lengths().numpy().tolist() == [4, 0, 3, 1, 0]
    assert d.value_rowids().numpy().tolist() == [0, 0, 0, 0, 2, 2, 2, 3]
    assert d.bounding_shape().numpy().tolist() == [5, 4]
    n = d.numpy()
    assert n.dtype == object and [r.tolist() for r in n] == d.to_list()
    w = tf.ragged.constant([["So", "long"], ["thanks", "for", "all", "the", "fish"]])
    assert repr(w) == "<tf.RaggedTensor [[b'So', b'long'], [b'thanks', b'for', b'all', b'the', b'fish']]>"
    p = tf.ragged.constant([[['I', 'have'], ['His']], [['Do']]])
    assert p.ragged_rank == 2 and p.shape == tf.TensorShape([2, None, None])
    s = tf.ragged.constant([["Let's", "build", "some", "ragged", "tensors", "!"],
                            ["We", "can", "use", "tf.ragged.constant", "."]])
    # TF 2.21 wraps the text as NumPy does
    assert str(s) == ("<tf.RaggedTensor [[b\"Let's\", b'build', b'some', b'ragged', b'tensors', b'!'],\n"
                      " [b'We', b'can', b'use', b'tf.ragged.constant', b'.']]>")


def test_constant_errors():
    with pytest.raises(ValueError, match="mixed types"):
        tf.ragged.constant([["one", "two"], [3, 4]])
    with pytest.raises(ValueError, match="same nesting depth"):
        tf.ragged.constant(["A", ["B", "C"]])


def test_factories():
    vals = [3, 1, 4, 1, 5, 9, 2]
    want = "<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9], [2]]>"   # TF 2.21
    assert repr(tf.RaggedTensor.from_value_rowids(vals, [0, 0, 0, 0, 2, 2, 3])) == want
    assert repr(tf.RaggedTensor.from_row_lengths(vals, [4, 0, 2, 1])) == want
    assert repr(tf.RaggedTensor.from_row_splits(vals, [0, 4, 4, 6, 7])) == want
    assert repr(tf.RaggedTensor.from_row_starts(vals, [0, 4, 4, 6])) == want
    assert repr(tf.RaggedTensor.from_row_limits(vals, [4, 4, 6, 7])) == want
    rt = tf.RaggedTensor.from_nested_row_splits([10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
                                                ([0, 1, 1, 5], [0, 3, 3, 5, 9, 10]))
    assert rt.to_list() == [[[10, 11, 12]], [], [[], [13, 14], [15, 16, 17, 18], [19]]]
    assert rt.ragged_rank == 2 and len(rt.nested_row_splits) == 2
    u = tf.RaggedTensor.from_uniform_row_length(tf.RaggedTensor.from_row_splits(
        [10, 11, 12, 13, 14, 15, 16, 17, 18, 19], [0, 3, 5, 9, 10]), 2)
    assert u.shape == tf.TensorShape([2, 2, None])
    with pytest.raises(InvalidArgumentError):
        tf.RaggedTensor.from_row_splits(vals, [0, 4, 3, 7])
    with pytest.raises(ValueError, match="private"):
        tf.RaggedTensor(tf.constant([1]), tf.constant([0, 1]))


def test_dense_conversions():
    s = tf.ragged.constant([['Hi'], ['Welcome', 'to', 'the', 'fair'], ['Have', 'fun']])
    t = s.to_tensor(default_value='', shape=[None, 10])
    assert t.shape == (3, 10) and t.numpy()[1, :4].tolist() == [b'Welcome', b'to', b'the', b'fair']
    assert t.numpy()[0, 1] == b''
    assert digits().to_tensor().numpy().tolist() == [[3, 1, 4, 1], [0, 0, 0, 0], [5, 9, 2, 0], [6, 0, 0, 0],
                                                     [0, 0, 0, 0]]
    x = [[1, 3, -1, -1], [2, -1, -1, -1], [4, 5, 8, 9]]
    assert repr(tf.RaggedTensor.from_tensor(x, padding=-1)) == "<tf.RaggedTensor [[1, 3], [2], [4, 5, 8, 9]]>"
    assert tf.RaggedTensor.from_tensor(x, lengths=[1, 0, 2]).to_list() == [[1], [], [4, 5]]


def test_elementwise_dispatch():
    d = digits()
    assert repr(tf.add(d, 3)) == "<tf.RaggedTensor [[6, 4, 7, 4], [], [8, 12, 5], [9], []]>"  # TF 2.21
    assert (d + 3).to_list() == (3 + d).to_list() == [[6, 4, 7, 4], [], [8, 12, 5], [9], []]
    assert (d + tf.ragged.constant([[1, 2, 3, 4], [], [5, 6, 7], [8], []])).to_list() == \
        [[4, 3, 7, 5], [], [10, 15, 9], [14], []]
    assert tf.math.square(d).to_list() == [[9, 1, 16, 1], [], [25, 81, 4], [36], []]
    assert tf.ragged.map_flat_values(lambda x: x * 2 + 1, d).to_list() == [[7, 3, 9, 3], [], [11, 19, 5], [13], []]
    x = tf.ragged.constant([[10, 87, 12], [19, 53], [12, 32]])
    assert (x + [[1000], [2000], [3000]]).to_list() == [[1010, 1087, 1012], [2019, 2053], [3012, 3032]]
    y = tf.ragged.constant([[[1, 2], [3, 4], [5, 6]], [[7, 8]]], ragged_rank=1)
    assert (y + tf.constant([[10]])).to_list() == [[[11, 12], [13, 14], [15, 16]], [[17, 18]]]
    with pytest.raises(InvalidArgumentError):   # TF 2.21: InvalidArgumentError (row partitions differ)
        tf.ragged.constant([[1, 2, 3], [4], [5, 6]]) + tf.ragged.constant([[10, 20], [30, 40], [50]])
    with pytest.raises(InvalidArgumentError):
        tf.ragged.constant([[1, 2], [3, 4, 5, 6], [7]]) + tf.constant([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
    with pytest.raises(InvalidArgumentError) as e:   # as many values, other rows
        tf.ragged.constant([[1, 2], [3]]) + tf.ragged.constant([[1], [2, 3]])
    # TF 2.21's text (its assert_equal of the row splits)
    assert str(e.value) == ("Condition x == y did not hold.\nIndices of first 1 different values:\n[[1]]\n"
                            "Corresponding x values:\n[2]\nCorresponding y values:\n[1]\nFirst 3 elements of x:\n"
                            "[0 2 3]\nFirst 3 elements of y:\n[0 1 3]")
    with pytest.raises(InvalidArgumentError) as e:   # another row count (TF 2.21's text)
        tf.ragged.constant([[1, 2], [3]]) + tf.ragged.constant([[1], [2], [3]])
    assert str(e.value) == "Condition x == y did not hold.\nFirst 1 elements of x:\n[False]\nFirst 1 elements of y:\n[ True]"
    # a dense operand of rows as long as the ragged rows: TF makes it ragged and adds
    assert repr(tf.ragged.constant([[1, 2], [3, 4]]) + tf.constant([[10, 20], [30, 40]])) == \
        "<tf.RaggedTensor [[11, 22],\n [33, 44]]>"   # TF 2.21
    f = tf.function(lambda a, b: a + b)
    assert f(tf.ragged.constant([[1, 2], [3, 4]]), tf.constant([[10, 20], [30, 40]])).to_list() == [[11, 22], [33, 44]]
    with pytest.raises(InvalidArgumentError, match="incompatible shapes"):
        f(tf.ragged.constant([[1], [3, 4, 5]]), tf.constant([[10, 20], [30, 40]]))
    with pytest.raises(TypeError, match="does not accept a RaggedTensor"):
        tf.matmul(d, d)
    assert tf.cast(d, tf.float32).dtype is tf.float32


def test_reductions_concat_tile_map():
    d = digits()
    m = tf.reduce_mean(d, axis=1)   # TF 2.21: float64 for int32 values, NaN for an empty row
    assert m.dtype is tf.float64
    np.testing.assert_allclose(m.numpy(), [2.25, np.nan, 16 / 3, 6.0, np.nan])
    assert tf.reduce_sum(d, axis=1).numpy().tolist() == [9, 0, 16, 6, 0]
    assert tf.reduce_sum(d, axis=0).numpy().tolist() == [14, 10, 6, 1]
    assert tf.reduce_sum(d).numpy() == 31
    r = tf.ragged.constant([[1, 2], [3], [4, 5, 6]])
    assert tf.reduce_max(r, axis=-1).numpy().tolist() == [2, 3, 6] and tf.reduce_min(r, -1).numpy().tolist() == [1, 3, 4]
    assert repr(tf.concat([d, [[5, 3]]], axis=0)) == "<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2], [6], [], [5, 3]]>"
    assert repr(tf.tile(d, [1, 2])) == "<tf.RaggedTensor [[3, 1, 4, 1, 3, 1, 4, 1], [], [5, 9, 2, 5, 9, 2], [6, 6], []]>"
    assert tf.map_fn(tf.math.square, d).to_list() == [[9, 1, 16, 1], [], [25, 81, 4], [36], []]
    x = tf.ragged.constant([["John"], ["a", "big", "dog"], ["my", "cat"]])
    y = tf.ragged.constant([["fell", "asleep"], ["barked"], ["is", "fuzzy"]])
    assert tf.concat([x, y], axis=1).to_list() == [[b"John", b"fell", b"asleep"], [b"a", b"big", b"dog", b"barked"],
                                                    [b"my", b"cat", b"is", b"fuzzy"]]
    w = tf.ragged.constant([["So", "long"], ["thanks", "for", "all", "the", "fish"]])
    assert tf.strings.substr(w, 0, 2).to_list() == [[b"So", b"lo"], [b"th", b"fo", b"al", b"th", b"fi"]]


def test_indexing():
    d = digits()
    assert d[0].numpy().tolist() == [3, 1, 4, 1]
    assert repr(d[:, :2]) == "<tf.RaggedTensor [[3, 1], [], [5, 9], [6], []]>"   # TF 2.21
    assert repr(d[:, -2:]) == "<tf.RaggedTensor [[4, 1], [], [9, 2], [6], []]>"
    q = tf.ragged.constant([['Who', 'is', 'George', 'Washington'], ['What', 'is', 'the', 'weather', 'tomorrow'],
                            ['Goodnight']])
    assert q[1, 2].numpy() == b"the" and q[1:].nrows_static() == 2
    rt = tf.ragged.constant([[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]])
    assert rt[1].to_list() == [[5], [], [6]] and rt[3, 0].numpy().tolist() == [8, 9]
    assert rt[:, 1:3].to_list() == [[[4]], [[], [6]], [], [[10]]]
    assert rt[:, -1:].to_list() == [[[4]], [[6]], [[7]], [[10]]]


def test_strings_on_ragged_and_hashes():
    s = tf.constant(['What makes you think she is a witch?', 'She turned me into a newt.', 'A newt?',
                     'Well, I got better.'])
    h = tf.strings.to_hash_bucket_fast(tf.strings.split(s, ' '), 1000)
    # TF 2.21's buckets (its run of the ragged_tensor guide, benchmarks/tf_guides.py)
    assert h.to_list() == [[940, 203, 668, 387, 790, 320, 939, 185], [315, 515, 791, 181, 939, 787],
                           [564, 205], [820, 180, 993, 739]]


def test_ragged_range_boolean_mask():
    assert tf.ragged.range([3, 0, 2]).to_list() == [[0, 1, 2], [], [0, 1]]
    assert tf.ragged.range([1, 2], [4, 3]).to_list() == [[1, 2, 3], [2]]
    d = tf.ragged.constant([[1, 2, 3], [4], [5, 6]])
    m = tf.ragged.constant([[True, False, True], [False], [True, True]])
    assert tf.ragged.boolean_mask(d, m).to_list() == [[1, 3], [], [5, 6]]
    assert tf.ragged.boolean_mask(d, [True, False, True]).to_list() == [[1, 2, 3], [5, 6]]
    # TF 2.21: empty rows (also trailing ones) and a 3-D mask
    e = tf.ragged.constant([[1, 2, 3], [], [5, 6], []])
    me = tf.ragged.constant([[True, False, True], [], [False, True], []])
    assert repr(tf.ragged.boolean_mask(e, me)) == "<tf.RaggedTensor [[1, 3], [], [6], []]>"
    d3 = tf.ragged.constant([[[1, 2], [3]], [], [[4]]])
    m3 = tf.ragged.constant([[[True, False], [False]], [], [[True]]])
    assert repr(tf.ragged.boolean_mask(d3, m3)) == "<tf.RaggedTensor [[[1], []], [], [[4]]]>"


def test_gradient_through_flat_values():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        rt = tf.RaggedTensor.from_row_lengths(x, [2, 1])
        y = tf.reduce_sum(tf.reduce_sum(rt * rt, axis=1) * tf.constant([1.0, 10.0]))
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 4.0, 60.0]


def test_compiled_mode_takes_ragged_tensors():
    # (wave 20: tests/test_ragged_function.py has the cases; this was the eager-only error)
    f = tf.function(lambda x: x + 1)
    assert f(digits()).to_list() == [[4, 2, 5, 2], [], [6, 10, 3], [7], []]
    g = tf.function(lambda s: tf.strings.split(s))
    assert g(tf.constant(["a b"])).to_list() == [[b"a", b"b"]]
    assert g(tf.constant("a b")).numpy().tolist() == [b"a", b"b"]   # a scalar's split is dense


def test_expressions_print_what_tf_prints():
    # tests/ragged_cases.py run under TF 2.21 (tests/tf_reference/make_ragged_reference.py)
    import json
    from pathlib import Path
    import ragged_cases
    want = json.loads((Path(__file__).parent / "data" / "ragged_tf.json").read_text())
    got = ragged_cases.run(tf)
    assert set(got) == set(want)
    bad = {c: (got[c], want[c]) for c in want if got[c] != want[c]}
    assert not bad, bad


def test_dynamic_ragged_shape_as_tf_prints_it():
    # the ragged guide's cells (TF 2.21's texts and values, recorded as literals)
    x = tf.constant([["a", "b"], ["c", "d"], ["e", "f"]])
    rt_shape = tf.shape(tf.ragged.constant([[1], [2, 3, 4], [], [5, 6]]))
    assert repr(rt_shape) == "<DynamicRaggedShape lengths=[4, (1, 3, 0, 2)] num_row_partitions=1>"
    assert repr(tf.reshape(x, rt_shape)) == "<tf.RaggedTensor [[b'a'], [b'b', b'c', b'd'], [], [b'e', b'f']]>"
    assert repr(tf.zeros(rt_shape)) == "<tf.RaggedTensor [[0.0], [0.0, 0.0, 0.0], [], [0.0, 0.0]]>"
    assert repr(tf.ones(rt_shape)) == "<tf.RaggedTensor [[1.0], [1.0, 1.0, 1.0], [], [1.0, 1.0]]>"
    assert repr(tf.fill(rt_shape, "x")) == "<tf.RaggedTensor [[b'x'], [b'x', b'x', b'x'], [], [b'x', b'x']]>"
    assert repr(tf.zeros(tf.shape(tf.ragged.constant([[1], [2, 3]])), dtype=tf.int32)) == "<tf.RaggedTensor [[0], [0, 0]]>"
    assert repr(rt_shape[0]) == "<tf.Tensor: shape=(), dtype=int32, numpy=4>"
    with pytest.raises(ValueError, match="^Index 1 is not uniform$"):
        rt_shape[1]
    assert repr(rt_shape[:1]) == "<DynamicRaggedShape lengths=[4] num_row_partitions=0>"
    DRS = tf.experimental.DynamicRaggedShape
    s = DRS(row_partitions=[tf.experimental.RowPartition.from_row_lengths([5, 3, 2])], inner_shape=[10, 8])
    assert repr(s) == "<DynamicRaggedShape lengths=[3, (5, 3, 2), 8] num_row_partitions=1>"
    s = DRS.from_lengths([4, (2, 1, 0, 8), 12])
    assert repr(s) == "<DynamicRaggedShape lengths=[4, (2, 1, 0, 8), 12] num_row_partitions=1>"
    assert repr(s[2]) == "<tf.Tensor: shape=(), dtype=int64, numpy=12>" and s.rank == 3
    assert repr(s[:2]) == "<DynamicRaggedShape lengths=[4, (2, 1, 0, 8)] num_row_partitions=1>"
    assert repr(tf.shape(tf.ragged.constant([[[1, 2], [3]], [[4]]]))) == \
        "<DynamicRaggedShape lengths=[2, (2, 1), (2, 1, 1)] num_row_partitions=2>"
    assert repr(tf.shape(tf.RaggedTensor.from_uniform_row_length(tf.constant([1, 2, 3, 4]), 2))) == \
        "<DynamicRaggedShape lengths=[2, 2] num_row_partitions=1>"
    with pytest.raises(InvalidArgumentError):   # TF 2.21: InvalidArgumentError (3 values for a shape of 6)
        tf.reshape(tf.constant([1, 2, 3]), rt_shape)
    with pytest.raises(TypeError):   # a plain bad shape is still TF's TypeError
        tf.reshape(tf.constant([1, 2]), object())
