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


@pytest.mark.parametrize("name", ["FixedLengthRecordDataset"])  # (TextLineDataset, TFRecordDataset: wave 19)
def test_file_readers_name_the_unsupported_feature(name):
    with pytest.raises(NotImplementedError, match=name):
        getattr(tf.data, name)("x.tfrecord")


def test_bad_counts_raise_clear_errors():
    with pytest.raises(ValueError, match="batch_size must be positive"):
        tf.data.Dataset.range(3).batch(0)
    with pytest.raises(TypeError, match="Dataset.take"):
        tf.data.Dataset.range(3).take(1.5)
    with pytest.raises(ValueError, match="cannot batch component"):
        list(tf.data.Dataset.from_generator(lambda: iter([[1], [1, 2]]), output_types=tf.int32).batch(2))


# -- wave 17: window, flat_map, interleave, padded_batch, from_generator's declared spec. Expected
# values are TF 2.21's (run side by side in the peers venv).

def ints(ds):
    return [int(x) for x in ds.as_numpy_iterator()]


@pytest.mark.parametrize("n, size, shift, stride, drop, want", [
    (7, 3, None, 1, False, [[0, 1, 2], [3, 4, 5], [6]]),            # shift defaults to size
    (7, 3, 2, 1, False, [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]),
    (9, 3, 2, 2, False, [[0, 2, 4], [2, 4, 6], [4, 6, 8], [6, 8], [8]]),
    (7, 3, 2, 1, True, [[0, 1, 2], [2, 3, 4], [4, 5, 6]]),
    (2, 3, 1, 1, True, []),
])
def test_window_matches_tf(n, size, shift, stride, drop, want):
    ds = tf.data.Dataset.range(n).window(size, shift=shift, stride=stride, drop_remainder=drop)
    assert [ints(w) for w in ds] == want


def test_window_cardinality_spec_and_reprs_as_tf():
    # TF 2.21: size 3, shift 2, stride 2 over range(n), without / with drop_remainder
    got = [int(tf.data.Dataset.range(n).window(3, 2, 2, d).cardinality()) for n in (0, 1, 5, 7, 9, 10)
           for d in (False, True)]
    assert got == [0, 0, 1, 0, 3, 1, 4, 2, 5, 3, 5, 3]
    ds = tf.data.Dataset.range(7).window(3)
    assert repr(ds) == ("<_WindowDataset element_spec=DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, "
                        "name=None), TensorShape([]))>")
    assert repr(next(iter(ds))) == "<_VariantDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    # a tuple element gives a tuple of datasets, a dict a dict of them
    a, b = next(iter(tf.data.Dataset.from_tensor_slices(([1, 2, 3], [4., 5., 6.])).window(2)))
    assert ints(a) == [1, 2] and list(b.as_numpy_iterator()) == [4.0, 5.0]
    (w,) = next(iter(tf.data.Dataset.from_tensor_slices({"a": [1, 2, 3]}).window(2))).values()
    assert ints(w) == [1, 2]


def test_window_then_flat_map_batch_is_the_guide_sliding_window():
    ds = tf.data.Dataset.range(7).window(3, 1, drop_remainder=True).flat_map(lambda w: w.batch(3))
    assert [x.tolist() for x in ds.as_numpy_iterator()] == [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]]


@pytest.mark.parametrize("arg, what", [({"size": 0}, "size"), ({"size": -1}, "size"),
                                       ({"size": 2, "shift": 0}, "shift"), ({"size": 2, "stride": 0}, "stride")])
def test_window_arguments_must_be_positive(arg, what):
    with pytest.raises(tf.errors.InvalidArgumentError, match=f"Window {what} must be greater than zero"):
        tf.data.Dataset.range(7).window(**arg)


def test_flat_map_and_its_errors():
    ds = tf.data.Dataset.range(4).flat_map(lambda x: tf.data.Dataset.range(x))
    assert ints(ds) == [0, 0, 1, 0, 1, 2]
    assert int(ds.cardinality()) == -2
    assert repr(ds) == "<_FlatMapDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    with pytest.raises(TypeError, match="flat_map: map_func must return a tf.data.Dataset, got Tensor"):
        list(tf.data.Dataset.range(3).flat_map(lambda x: x))
    pairs = tf.data.Dataset.from_tensor_slices(([1, 2], [3, 4]))
    assert [int(x) for x in pairs.flat_map(lambda a, b: tf.data.Dataset.from_tensors(a + b))] == [4, 6]


@pytest.mark.parametrize("cycle, block, want", [
    # TF 2.21's orders over range(1, 6).interleave(lambda x: range(x) or x repeated 6 times)
    (3, 2, [0, 0, 1, 0, 1, 0, 1, 2, 2, 3, 0, 1, 2, 3, 4]),
    (3, 1, [0, 0, 0, 1, 1, 0, 2, 1, 0, 2, 1, 3, 2, 3, 4]),
    (2, 1, [0, 0, 1, 0, 1, 0, 2, 1, 2, 0, 3, 1, 2, 3, 4]),
])
def test_interleave_order_is_tfs(cycle, block, want):
    ds = tf.data.Dataset.range(1, 6).interleave(lambda x: tf.data.Dataset.range(x), cycle_length=cycle,
                                                block_length=block)
    assert ints(ds) == want
    # a parallel interleave (deterministic, TF's default) yields the same order
    par = tf.data.Dataset.range(1, 6).interleave(lambda x: tf.data.Dataset.range(x), cycle_length=cycle,
                                                 block_length=block, num_parallel_calls=tf.data.AUTOTUNE)
    assert ints(par) == want
    assert repr(par).startswith("<_ParallelInterleaveDataset ") and repr(ds).startswith("<_InterleaveDataset ")


def test_interleave_blocks_and_errors():
    ds = tf.data.Dataset.range(1, 6).interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(6),
                                                cycle_length=2, block_length=4)
    assert ints(ds) == [1] * 4 + [2] * 4 + [1, 1, 2, 2] + [3] * 4 + [4] * 4 + [3, 3, 4, 4] + [5] * 6
    for kw, what in (({"cycle_length": 0}, "cycle_length"), ({"block_length": 0}, "block_length")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=f"{what} must be greater than zero"):
            tf.data.Dataset.range(3).interleave(lambda x: tf.data.Dataset.range(x), **kw)


def _lengths():   # the guide's ragged rows: element x is x repeated x times
    return tf.data.Dataset.range(1, 6).map(lambda x: tf.fill([tf.cast(x, tf.int32)], x))


def test_padded_batch_pads_to_the_batch_or_to_the_given_shape():
    got = [b.tolist() for b in _lengths().padded_batch(2).as_numpy_iterator()]
    assert got == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]], [[5, 5, 5, 5, 5]]]
    got = [b.tolist() for b in _lengths().padded_batch(2, padded_shapes=[6], drop_remainder=True).as_numpy_iterator()]
    assert got == [[[1, 0, 0, 0, 0, 0], [2, 2, 0, 0, 0, 0]], [[3, 3, 3, 0, 0, 0], [4, 4, 4, 4, 0, 0]]]
    got = [b.tolist() for b in _lengths().padded_batch(2, padded_shapes=(None,),
                                                       padding_values=tf.constant(-1, tf.int64)).as_numpy_iterator()]
    assert got == [[[1, -1], [2, 2]], [[3, 3, 3, -1], [4, 4, 4, 4]], [[5, 5, 5, 5, 5]]]
    two_d = tf.data.Dataset.range(1, 4).map(lambda x: tf.ones(tf.stack([x, 4 - x]), tf.int32)).padded_batch(3)
    assert [b.tolist() for b in two_d.as_numpy_iterator()] == [
        [[[1, 1, 1], [0, 0, 0], [0, 0, 0]], [[1, 1, 0], [1, 1, 0], [0, 0, 0]], [[1, 0, 0], [1, 0, 0], [1, 0, 0]]]]
    pairs = tf.data.Dataset.zip((_lengths(), tf.data.Dataset.range(5))).padded_batch(2)
    assert [(a.tolist(), b.tolist()) for a, b in pairs.as_numpy_iterator()][0] == ([[1, 0], [2, 2]], [0, 1])
    assert int(_lengths().padded_batch(2).cardinality()) == 3
    assert repr(_lengths().padded_batch(2)) == ("<_PaddedBatchDataset element_spec=TensorSpec(shape=(None, None), "
                                                "dtype=tf.int64, name=None)>")
    assert repr(_lengths().padded_batch(2, padded_shapes=[6], drop_remainder=True).element_spec) == \
        "TensorSpec(shape=(2, 6), dtype=tf.int64, name=None)"


def test_padded_batch_errors_as_tf():
    with pytest.raises(tf.errors.DataLossError, match="Attempted to pad to a smaller size than the input element"):
        list(_lengths().padded_batch(2, padded_shapes=[3]))
    with pytest.raises(TypeError, match=r"values type <dtype: 'int32'> does not match type <dtype: 'int64'>"):
        _lengths().padded_batch(2, padding_values=-1)   # a Python int is int32, as in TF
    with pytest.raises(ValueError, match=r"The padded shape \(6, 2\) is not compatible"):
        _lengths().padded_batch(2, padded_shapes=[6, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Batch size must be greater than zero"):
        _lengths().padded_batch(0)


def _series():
    for i in range(3):
        yield i, np.arange(i, dtype=np.float64)


def test_from_generator_uses_its_declared_types_and_shapes():
    ds = tf.data.Dataset.from_generator(_series, output_types=(tf.int32, tf.float32), output_shapes=((), (None,)))
    # the spec is the declared one: reading it does not run the generator
    assert repr(ds) == ("<_FlatMapDataset element_spec=(TensorSpec(shape=(), dtype=tf.int32, name=None), "
                        "TensorSpec(shape=(None,), dtype=tf.float32, name=None))>")
    assert [(a.dtype.name, b.dtype.name, b.numpy().tolist()) for a, b in ds] == [
        ("int32", "float32", []), ("int32", "float32", [0.0]), ("int32", "float32", [0.0, 1.0])]
    ds = tf.data.Dataset.from_generator(_series, output_types=(tf.int32, tf.float32))
    assert repr(ds.element_spec[0]) == "TensorSpec(shape=<unknown>, dtype=tf.int32, name=None)"
    assert [float(x) for x in tf.data.Dataset.from_generator(lambda: iter([1, 2]), output_types=tf.float32)] == [1, 2]
    # output_signature casts as TF does (1.5 -> 1); output_types refuses a value it would change
    sig = tf.data.Dataset.from_generator(lambda: iter([1.5]), output_signature=tf.TensorSpec((), tf.int32))
    assert [int(x) for x in sig] == [1]


def test_from_generator_errors_as_tf():
    with pytest.raises(TypeError, match="provide either the `output_signature` argument or the `output_types`"):
        tf.data.Dataset.from_generator(_series)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"yielded an element of shape \(0,\) where an element "
                                                             r"of shape \(2,\) was expected"):
        list(tf.data.Dataset.from_generator(_series, output_types=(tf.int32, tf.float32), output_shapes=((), (2,))))
    with pytest.raises(tf.errors.InvalidArgumentError, match="did not match the expected structure"):
        list(tf.data.Dataset.from_generator(lambda: iter([1.5]), output_types=tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"expected structure was \(tf.float32, tf.float32\)"):
        list(tf.data.Dataset.from_generator(lambda: iter([1, 2]), output_types=(tf.float32, tf.float32)))
    with pytest.raises(ValueError, match="don't have the same sequence length"):
        tf.data.Dataset.from_generator(_series, output_types=(tf.int32, tf.float32), output_shapes=((),))


def test_parallel_map_and_batch_reprs_as_tf():
    ds = tf.data.Dataset.range(3)
    assert repr(ds.map(lambda x: x, num_parallel_calls=2)).startswith("<_ParallelMapDataset ")
    assert repr(ds.map(lambda x: x)).startswith("<_MapDataset ")
    assert repr(ds.batch(2, num_parallel_calls=2)).startswith("<_ParallelBatchDataset ")


def test_iterator_is_tfs_owned_iterator():
    it = iter(tf.data.Dataset.range(2))
    assert type(it).__name__ == "OwnedIterator"
    assert int(it.get_next()) == 0 and int(next(it)) == 1
    assert repr(it.element_spec) == "TensorSpec(shape=(), dtype=tf.int64, name=None)"
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        it.get_next()
    with pytest.raises(StopIteration):
        next(it)


def test_checkpoint_restores_an_iterators_position(tmp_path):
    # TF's data guide: save after 5 elements, read 5 more, restore: the next 5 are 5..9 again
    iterator = iter(tf.data.Dataset.range(20))
    ckpt = tf.train.Checkpoint(step=tf.Variable(0), iterator=iterator)
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=3)
    assert [int(next(iterator)) for _ in range(5)] == [0, 1, 2, 3, 4]
    manager.save()
    assert [int(next(iterator)) for _ in range(5)] == [5, 6, 7, 8, 9]
    ckpt.restore(manager.latest_checkpoint)
    assert [int(next(iterator)) for _ in range(5)] == [5, 6, 7, 8, 9]
    assert [int(next(iterator)) for _ in range(2)] == [10, 11]


def test_checkpointed_iterator_replays_shuffles_in_a_fresh_pipeline(tmp_path):
    def pipeline(seed):
        return tf.data.Dataset.range(10).shuffle(10, seed=seed).repeat(3).batch(4)
    ds = pipeline(3)
    it = iter(ds)
    for _ in range(4):      # past the first epoch: the repeat has reshuffled
        next(it)
    path = tf.train.Checkpoint(it=it).save(str(tmp_path / "ck"))
    want = [next(it).numpy().tolist() for _ in range(3)]
    # a new dataset object with another seed (a new process with no seed draws another one):
    # the restored iterator gives the saved one's elements
    it2 = iter(pipeline(99))
    next(it2)
    tf.train.Checkpoint(it=it2).restore(path)
    assert [next(it2).numpy().tolist() for _ in range(3)] == want


def test_iterator_over_a_generator_cannot_be_saved_as_in_tf(tmp_path):
    it = iter(tf.data.Dataset.from_generator(lambda: iter(range(3)), output_types=tf.int64))
    next(it)
    with pytest.raises(tf.errors.FailedPreconditionError, match="from_generator cannot be saved"):
        tf.train.Checkpoint(it=it).save(str(tmp_path / "ck"))


# -- tf.data.experimental.CsvDataset: files made here, expected values TF 2.21's

def _csv(tmp_path, name, text):
    p = tmp_path / name
    p.write_bytes(text.encode())
    return str(p)


def _rows(ds):
    return [tuple((x.numpy().item(), x.dtype.name) for x in el) for el in ds]


def test_csv_dataset_parses_as_tf(tmp_path):
    n = _csv(tmp_path, "n.csv", "1,2.5,3,4\n5,6,7,8\n")
    assert _rows(tf.data.experimental.CsvDataset(n, [0, 0.0, 0, 0])) == [
        ((1, "int32"), (2.5, "float32"), (3, "int32"), (4, "int32")),
        ((5, "int32"), (6.0, "float32"), (7, "int32"), (8, "int32"))]
    h = _csv(tmp_path, "h.csv", "a,b,c,d\n1,2.5,,4\n5,,7,8\n,10,11,12\n")
    ds = tf.data.experimental.CsvDataset(h, [99, 99.0, 99, 99], header=True)
    assert [tuple(v for v, _ in r) for r in _rows(ds)] == [(1, 2.5, 99, 4), (5, 99.0, 7, 8), (99, 10.0, 11, 12)]
    assert [tuple(v for v, _ in r) for r in _rows(tf.data.experimental.CsvDataset(
        h, [99, 99], header=True, exclude_cols=[1, 3]))] == [(1, 99), (5, 7), (99, 11)]
    # the guide's form: defaults per column, then a map that stacks the columns
    stacked = tf.data.experimental.CsvDataset(h, [999, 999], header=True, select_cols=[2, 3]).map(
        lambda *items: tf.stack(items))
    assert [x.numpy().tolist() for x in stacked] == [[999, 4], [7, 8], [11, 12]]
    wide = tf.data.experimental.CsvDataset(n, [tf.constant(0, tf.int64), tf.constant(0.0, tf.float64), 0, 0])
    assert [d for _, d in _rows(wide)[0]] == ["int64", "float64", "int32", "int32"]
    assert _rows(tf.data.experimental.CsvDataset(_csv(tmp_path, "q.csv", '"1",2\n'), [0, 0])) == [
        ((1, "int32"), (2, "int32"))]
    semi = _csv(tmp_path, "s.csv", "1;NA;3\n")
    assert [v for v, _ in _rows(tf.data.experimental.CsvDataset(semi, [0, -1, 0], field_delim=";",
                                                                 na_value="NA"))[0]] == [1, -1, 3]
    crlf = _csv(tmp_path, "c.csv", "1,2\r\n3,4")   # CRLF, and no newline at the end
    assert len(list(tf.data.experimental.CsvDataset([crlf, crlf], [0, 0]))) == 4
    assert repr(tf.data.experimental.CsvDataset("not-there.csv", [1, 2.0])) == (
        "<CsvDatasetV2 element_spec=(TensorSpec(shape=(), dtype=tf.int32, name=None), "
        "TensorSpec(shape=(), dtype=tf.float32, name=None))>")
    assert int(ds.cardinality()) == -2


@pytest.mark.parametrize("text, defaults, kw, err, msg", [
    ("a,b,c,d\n1,2.5,,4\n", [tf.int32, tf.float32, tf.int32, tf.int32], {"header": True},
     tf.errors.InvalidArgumentError, "Field 2 is required but missing in record!"),
    ("1,2.5\n", [0, 0], {}, tf.errors.InvalidArgumentError, "Field 1 in record is not a valid int32: 2.5"),
    ("1,x\n", [0, 0.0], {}, tf.errors.InvalidArgumentError, "Field 1 in record is not a valid float: x"),
    ("1,2\n3\n", [0, 0], {}, tf.errors.InvalidArgumentError, "Expect 2 fields but have 1 in record"),
    ("1,2\n\n3,4\n", [0, 0], {}, tf.errors.InvalidArgumentError, "Expect 2 fields but have 1 in record"),
    ("99999999999,2\n", [0, 0], {}, tf.errors.InvalidArgumentError, "not a valid int32: 99999999999"),
    ('"1",2\n', [0, 0], {"use_quote_delim": False}, tf.errors.InvalidArgumentError, 'not a valid int32: "1"'),
])
def test_csv_dataset_errors_as_tf(tmp_path, text, defaults, kw, err, msg):
    with pytest.raises(err, match=msg):
        list(tf.data.experimental.CsvDataset(_csv(tmp_path, "x.csv", text), defaults, **kw))


def test_csv_dataset_argument_errors(tmp_path):
    n = _csv(tmp_path, "n.csv", "1,2\n")
    with pytest.raises(tf.errors.NotFoundError, match="missing.csv; No such file or directory"):
        list(tf.data.experimental.CsvDataset(str(tmp_path / "missing.csv"), [0, 0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="select_cols should match output size"):
        tf.data.experimental.CsvDataset(n, [0, 0, 0], select_cols=[0, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="select_cols should be strictly increasing"):
        tf.data.experimental.CsvDataset(n, [0, 0], select_cols=[1, 0])
    assert [tuple(t.numpy() for t in r) for r in tf.data.experimental.CsvDataset(n, ["", 0])] == [(b"1", 2)]
    with pytest.raises(TypeError, match="record_defaults\\[0\\] has dtype bool"):
        tf.data.experimental.CsvDataset(n, [True, 0])
