"""tapeflow.data against the behaviour of tf.data in TF 2.21 (the expected
values below were read off real TF: element order, dtypes, cardinalities,
errors)."""
import numpy as np
import pytest

import tapeflow as tf


def np_list(ds):
    return [tuple(np.asarray(v) for v in e) if isinstance(e, tuple) else np.asarray(e) for e in ds.as_numpy_iterator()]


def test_from_tensor_slices_tuple_keeps_dtypes_and_structure():
    ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3], [4., 5., 6.]))
    els = list(ds.as_numpy_iterator())
    assert [(int(a), float(b)) for a, b in els] == [(1, 4.0), (2, 5.0), (3, 6.0)]
    assert els[0][0].dtype == np.int32 and els[0][1].dtype == np.float32
    spec = ds.element_spec
    assert spec[0].shape == () and spec[0].dtype == tf.int32 and spec[1].dtype == tf.float32
    assert len(ds) == 3


def test_dict_elements_are_dicts_of_tensors():
    ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [[1., 2.], [3., 4.]]})
    els = list(ds)
    assert set(els[1]) == {"a", "b"}
    assert isinstance(els[1]["b"], tf.Tensor)
    np.testing.assert_array_equal(els[1]["b"].numpy(), [3., 4.])


def test_mismatched_leading_dimensions_raise_like_tf():
    with pytest.raises(ValueError, match="Dimensions 3 and 2 are not compatible"):
        tf.data.Dataset.from_tensor_slices(([1, 2, 3], [1, 2]))


def test_from_tensors_is_one_element():
    ds = tf.data.Dataset.from_tensors([1, 2])
    (el,) = list(ds)
    assert el.shape == (2,) and el.dtype == tf.int32


def test_range_is_int64_and_supports_start_stop_step():
    assert [int(x) for x in tf.data.Dataset.range(3)] == [0, 1, 2]
    assert next(iter(tf.data.Dataset.range(3))).dtype == tf.int64
    assert [int(x) for x in tf.data.Dataset.range(5, 0, -2)] == [5, 3, 1]


def test_batch_with_and_without_remainder():
    b = tf.data.Dataset.range(5).batch(2)
    assert [list(x) for x in b.as_numpy_iterator()] == [[0, 1], [2, 3], [4]]
    assert b.element_spec.shape == (None,)
    d = tf.data.Dataset.range(5).batch(2, drop_remainder=True)
    assert [list(x) for x in d.as_numpy_iterator()] == [[0, 1], [2, 3]]
    assert d.element_spec.shape == (2,)
    assert len(b) == 3 and len(d) == 2


def test_batch_of_tuples_stacks_each_component():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6)
    (xb, yb), = list(tf.data.Dataset.from_tensor_slices((x, y)).batch(6))
    np.testing.assert_array_equal(xb.numpy(), x)
    np.testing.assert_array_equal(yb.numpy(), y)


def test_cardinality_and_len_errors_as_tf():
    assert int(tf.data.Dataset.range(5).batch(2).cardinality()) == 3
    assert int(tf.data.Dataset.range(5).repeat().cardinality()) == tf.data.INFINITE_CARDINALITY == -1
    assert int(tf.data.Dataset.range(5).filter(lambda x: x > 1).cardinality()) == tf.data.UNKNOWN_CARDINALITY == -2
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(tf.data.Dataset.range(5).repeat())
    with pytest.raises(TypeError, match="The dataset length is unknown."):
        len(tf.data.Dataset.range(5).filter(lambda x: x > 1))


def test_map_unpacks_tuples_and_filter_keeps_matching():
    ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3], [10, 20, 30])).map(lambda a, b: a + b)
    assert [int(x) for x in ds] == [11, 22, 33]
    f = tf.data.Dataset.range(6).filter(lambda x: x % 2 == 0)
    assert [int(x) for x in f] == [0, 2, 4]


def test_filter_predicate_must_be_scalar_bool():
    with pytest.raises(ValueError, match="scalar bool"):
        list(tf.data.Dataset.range(3).filter(lambda x: x))


def test_repeat_take_skip_enumerate_zip():
    assert [int(x) for x in tf.data.Dataset.range(3).repeat(2)] == [0, 1, 2, 0, 1, 2]
    assert [int(x) for x in tf.data.Dataset.range(3).repeat().take(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert [int(x) for x in tf.data.Dataset.from_tensor_slices([1, 2, 3]).take(-1)] == [1, 2, 3]
    assert [int(x) for x in tf.data.Dataset.range(5).skip(3)] == [3, 4]
    assert [int(x) for x in tf.data.Dataset.range(5).skip(-1)] == []
    en = list(tf.data.Dataset.range(3).enumerate(start=5).as_numpy_iterator())
    assert [(int(i), int(v)) for i, v in en] == [(5, 0), (6, 1), (7, 2)]
    z = tf.data.Dataset.zip((tf.data.Dataset.range(3), tf.data.Dataset.range(5)))
    assert [(int(a), int(b)) for a, b in z.as_numpy_iterator()] == [(0, 0), (1, 1), (2, 2)]
    z2 = tf.data.Dataset.zip(tf.data.Dataset.range(3), tf.data.Dataset.range(5))
    assert len(z2) == 3
    assert repr(z).startswith("<_ZipDataset element_spec=(TensorSpec(shape=(), ")


def test_repeat_of_empty_dataset_terminates():
    assert list(tf.data.Dataset.range(0).repeat()) == []


def test_shuffle_is_a_permutation_reproducible_with_seed_and_reshuffles_each_epoch():
    ds = tf.data.Dataset.range(10).shuffle(10, seed=1)
    a = [int(x) for x in ds]
    b = [int(x) for x in ds]
    assert sorted(a) == list(range(10)) and sorted(b) == list(range(10))
    assert a != b  # reshuffle_each_iteration=True (TF's default)
    again = [int(x) for x in tf.data.Dataset.range(10).shuffle(10, seed=1)]
    assert again == a
    fixed = tf.data.Dataset.range(10).shuffle(10, seed=3, reshuffle_each_iteration=False)
    assert [int(x) for x in fixed] == [int(x) for x in fixed]


def test_shuffle_with_small_buffer_only_moves_elements_locally():
    # TF's buffer algorithm: element i cannot be emitted before position i - buffer_size + 1
    out = [int(x) for x in tf.data.Dataset.range(100).shuffle(4, seed=0)]
    assert sorted(out) == list(range(100))
    assert all(pos >= v - 3 for pos, v in enumerate(out))


def test_shuffle_follows_the_global_seed():
    tf.random.set_seed(7)
    a = [int(x) for x in tf.data.Dataset.range(20).shuffle(20)]
    tf.random.set_seed(7)
    b = [int(x) for x in tf.data.Dataset.range(20).shuffle(20)]
    assert a == b


def test_reduce_prefetch_cache_concatenate_unbatch():
    s = tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).reduce(0, lambda s, x: s + tf.reduce_sum(x))
    assert int(s) == 10
    ds = tf.data.Dataset.range(3).prefetch(tf.data.AUTOTUNE).cache()
    assert [int(x) for x in ds] == [0, 1, 2] == [int(x) for x in ds]
    assert [int(x) for x in tf.data.Dataset.range(2).concatenate(tf.data.Dataset.range(2))] == [0, 1, 0, 1]
    assert [int(x) for x in tf.data.Dataset.range(5).batch(2).unbatch()] == [0, 1, 2, 3, 4]



def test_prefetch_checks_its_buffer_size():
    ds = tf.data.Dataset.range(3)
    assert [int(x) for x in ds.prefetch(0)] == [0, 1, 2] == [int(x) for x in ds.prefetch(tf.data.AUTOTUNE)]
    # TF: "buffer_size must be >= 0 or set buffer_size to be -1 for auto-tuning"
    with pytest.raises(ValueError, match=r"Dataset.prefetch: buffer_size must be >= 0, or -1 \(AUTOTUNE\), got -5"):
        ds.prefetch(-5)
    with pytest.raises(TypeError, match="Dataset.prefetch"):
        ds.prefetch(1.5)

def test_from_generator():
    def gen():
        for i in range(3):
            yield i, float(i) / 2
    ds = tf.data.Dataset.from_generator(gen, output_signature=(tf.TensorSpec((), tf.int32), tf.TensorSpec((), tf.float32)))
    assert [(int(a), float(b)) for a, b in ds] == [(0, 0.0), (1, 0.5), (2, 1.0)]
    assert int(ds.cardinality()) == -2


def test_training_loop_over_a_dataset():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype(np.float32)
    y = x @ np.array([[1.], [-2.], [0.5]], np.float32)
    w = tf.Variable(tf.zeros((3, 1)))
    opt = tf.keras.optimizers.SGD(0.1)
    for _ in range(30):
        for xb, yb in tf.data.Dataset.from_tensor_slices((x, y)).shuffle(64, seed=0).batch(16):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(xb @ w - yb))
            opt.apply_gradients([(tape.gradient(loss, w), w)])
    np.testing.assert_allclose(w.numpy().ravel(), [1., -2., 0.5], atol=1e-3)


@pytest.mark.parametrize("name", ["TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset"])
def test_file_readers_name_the_unsupported_feature(name):
    with pytest.raises(NotImplementedError, match=name):
        getattr(tf.data, name)("x.tfrecord")


def test_bad_counts_raise_clear_errors():
    with pytest.raises(ValueError, match="batch_size must be positive"):
        tf.data.Dataset.range(3).batch(0)
    with pytest.raises(TypeError, match="Dataset.take"):
        tf.data.Dataset.range(3).take(1.5)
    with pytest.raises(ValueError, match="cannot batch component"):
        list(tf.data.Dataset.from_generator(lambda: iter([[1], [1, 2]])).batch(2))
