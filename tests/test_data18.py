"""tf.data methods added in wave 18 (scan, group_by_window, bucket_by_sequence_length, unique,
random, counter, shard, rebatch, take_while, ignore_errors, apply, get_single_element and the
tf.data.experimental spellings) against TF 2.21: the expected elements, specs, cardinalities and
errors below were read off real TF 2.21 (``# TF 2.21:`` comments)."""
import numpy as np
import pytest

import tapeflow as tf

D = tf.data.Dataset


def vals(ds):
    def conv(e):
        if isinstance(e, tuple):
            return tuple(conv(v) for v in e)
        if isinstance(e, dict):
            return {k: conv(v) for k, v in e.items()}
        return np.asarray(e).tolist()
    return [conv(e) for e in ds.as_numpy_iterator()]


def spec(shape, dtype):
    return tf.TensorSpec(shape, dtype)


# -- scan --------------------------------------------------------------------------------------

def test_scan_threads_state_and_keeps_cardinality():
    ds = D.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s * 10))
    assert vals(ds) == [0, 0, 10, 30, 60]  # TF 2.21
    assert int(ds.cardinality()) == 5 and ds.element_spec == spec((), tf.int64)
    assert repr(ds).startswith("<_ScanDataset element_spec=")
    assert int(D.range(10).filter(lambda x: x > 3).scan(0, lambda s, x: (s + 1, x)).cardinality()) == -2


def test_scan_nested_state_and_dict_output():
    ds = D.range(5).scan((tf.constant(0, tf.int64), tf.constant(1.0)),
                         lambda s, x: ((s[0] + x, s[1] * 2), (x, s[1])))
    # TF 2.21: [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (4, 16.0)], spec (int64, float32)
    assert vals(ds) == [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (4, 16.0)]
    assert ds.element_spec == (spec((), tf.int64), spec((), tf.float32))
    d = D.from_tensor_slices({"a": [1, 2, 3]}).scan(0, lambda s, x: (s + x["a"], {"b": s}))
    assert vals(d) == [{"b": 0}, {"b": 1}, {"b": 3}]  # TF 2.21
    # a tuple element is one argument (TF: lambda s, a, b fails with a missing argument)
    z = D.zip((D.range(3), D.range(3))).scan(0, lambda s, el: (s + 1, el[0]))
    assert vals(z) == [0, 1, 2]


def test_scan_errors_like_tf():
    # TF 2.21: TypeError "Invalid `scan_func`. The element types for the new state must match ..."
    with pytest.raises(TypeError, match="element types for the new state must match"):
        list(D.range(3).scan(tf.constant(0, tf.int64), lambda s, x: (tf.cast(s, tf.int32), x)))
    # TF 2.21: TypeError "... should return a pair consisting of new state and the output value ..."
    with pytest.raises(TypeError, match="should return a pair consisting of new state"):
        list(D.range(3).scan(0, lambda s, x: s))


def test_counter():
    ds = D.counter()
    assert [int(x) for x in ds.take(4)] == [0, 1, 2, 3]
    assert int(ds.cardinality()) == -1 and ds.element_spec == spec((), tf.int64)
    assert repr(ds).startswith("<_ScanDataset")   # TF 2.21: counter is a scan
    d2 = D.counter(start=3, step=2, dtype=tf.int32)
    assert vals(d2.take(4)) == [3, 5, 7, 9] and d2.element_spec.dtype == tf.int32
    assert vals(tf.data.experimental.Counter().take(2)) == [0, 1]
    assert D.counter(dtype=tf.float32).element_spec.dtype == tf.float32


# -- group_by_window / bucket_by_sequence_length -------------------------------------------

def test_group_by_window_order_matches_tf():
    ds = D.range(10).group_by_window(lambda x: x % 3, lambda k, d: d.batch(2), window_size=2)
    assert vals(ds) == [[0, 3], [1, 4], [2, 5], [6, 9], [7], [8]]  # TF 2.21
    assert int(ds.cardinality()) == -2 and ds.element_spec == spec((None,), tf.int64)
    assert repr(ds).startswith("<_GroupByWindowDataset")
    # leftover groups flush in increasing key order (TF 2.21: [[9], [5], [3], [1]])
    d = D.from_tensor_slices([5, 3, 9, 1]).group_by_window(lambda x: tf.cast(-x, tf.int64),
                                                           lambda k, g: g.batch(10), window_size=5)
    assert vals(d) == [[9], [5], [3], [1]]
    # window_size_func per key: TF 2.21 [[0, 2], [1, 3, 5], [4, 6], [8], [7, 9]]
    f = D.range(10).group_by_window(lambda x: x % 2, lambda k, g: g.batch(10), window_size_func=lambda k: k + 2)
    assert vals(f) == [[0, 2], [1, 3, 5], [4, 6], [8], [7, 9]]
    # the key reaches reduce_func: TF 2.21 [(0, [0, 2, 4]), (1, [1, 3, 5]), (0, [6, 8]), (1, [7, 9])]
    k = D.range(10).group_by_window(lambda x: x % 2, lambda key, g: g.batch(10).map(lambda b: (key, b)), 3)
    assert vals(k) == [(0, [0, 2, 4]), (1, [1, 3, 5]), (0, [6, 8]), (1, [7, 9])]
    t = D.from_tensor_slices((np.arange(6), np.arange(6.))).group_by_window(lambda a, b: a % 2,
                                                                           lambda key, g: g.batch(10), 3)
    assert vals(t) == [([0, 2, 4], [0., 2., 4.]), ([1, 3, 5], [1., 3., 5.])]  # TF 2.21
    e = D.range(5).apply(tf.data.experimental.group_by_window(lambda x: x % 2, lambda key, g: g.batch(10), 3))
    assert vals(e) == [[0, 2, 4], [1, 3]]  # TF 2.21


def test_group_by_window_errors_like_tf():
    for kw in ({}, {"window_size": 2, "window_size_func": lambda k: 3}):
        # TF 2.21: ValueError "Either the `window_size` argument or the `window_size_func` argument ..."
        with pytest.raises(ValueError, match="Either the `window_size` argument or the `window_size_func`"):
            D.range(10).group_by_window(lambda x: x % 2, lambda k, g: g.batch(10), **kw)
    # TF 2.21: InvalidArgumentError when iterated: "Window size must be greater than zero, but got 0."
    ds = D.range(10).group_by_window(lambda x: x % 2, lambda k, g: g.batch(10), 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Window size must be greater than zero, but got 0"):
        list(ds)
    # TF 2.21: ValueError (an int32 key: "Tensor conversion requested dtype int64 ...")
    with pytest.raises(ValueError, match="int64"):
        list(D.range(4).group_by_window(lambda x: tf.cast(x % 2, tf.int32), lambda k, g: g.batch(10), 3))
    # TF 2.21: TypeError "Invalid `reduce_func`. `reduce_func` must return a single `tf.data.Dataset` ..."
    with pytest.raises(TypeError, match="must return a single `tf.data.Dataset`"):
        list(D.range(4).group_by_window(lambda x: x % 2, lambda k, g: k, 3))


def _seqs():
    def gen():
        for n in [3, 1, 5, 2, 7, 4, 1, 6, 2, 3]:
            yield [n] * n
    return D.from_generator(gen, output_signature=tf.TensorSpec([None], tf.int32))


def test_bucket_by_sequence_length_matches_tf():
    ln = lambda x: tf.shape(x)[0]  # noqa: E731
    ds = _seqs().bucket_by_sequence_length(ln, [3, 5], [2, 2, 2])
    assert vals(ds) == [[[1, 0], [2, 2]], [[5, 5, 5, 5, 5, 0, 0], [7, 7, 7, 7, 7, 7, 7]], [[3, 3, 3, 0], [4, 4, 4, 4]],
                        [[1, 0], [2, 2]], [[3, 3, 3]], [[6, 6, 6, 6, 6, 6]]]  # TF 2.21
    assert ds.element_spec == spec((None, None), tf.int32) and int(ds.cardinality()) == -2
    drop = _seqs().bucket_by_sequence_length(ln, [3, 5], [2, 2, 2], drop_remainder=True)
    assert vals(drop) == vals(ds)[:4]  # TF 2.21
    pv = _seqs().bucket_by_sequence_length(ln, [3, 5], [2, 2, 2], padding_values=-1)
    assert vals(pv)[0] == [[1, -1], [2, 2]] and vals(pv)[1][0] == [5, 5, 5, 5, 5, -1, -1]  # TF 2.21
    ps = _seqs().bucket_by_sequence_length(ln, [3, 5], [2, 2, 2], padded_shapes=[8])
    assert ps.element_spec == spec((None, 8), tf.int32)  # TF 2.21
    assert vals(ps)[0] == [[1, 0, 0, 0, 0, 0, 0, 0], [2, 2, 0, 0, 0, 0, 0, 0]]
    big = _seqs().bucket_by_sequence_length(ln, [3, 8], [2, 2, 2], pad_to_bucket_boundary=True)
    assert vals(big) == [[[3, 3, 3, 0, 0, 0, 0], [5, 5, 5, 5, 5, 0, 0]], [[1, 0], [2, 2]],
                         [[7, 7, 7, 7, 7, 7, 7], [4, 4, 4, 4, 0, 0, 0]], [[1, 0], [2, 2]],
                         [[6, 6, 6, 6, 6, 6, 0], [3, 3, 3, 0, 0, 0, 0]]]  # TF 2.21
    assert big.element_spec == spec((None, None), tf.int32)
    # unsorted boundaries: the first bucket whose [lo, hi) holds the length (TF 2.21)
    un = _seqs().bucket_by_sequence_length(ln, [5, 3], [2, 2, 2])
    assert vals(un)[:3] == [[[3, 3, 3], [1, 0, 0]], [[5, 5, 5, 5, 5, 0, 0], [7, 7, 7, 7, 7, 7, 7]],
                            [[2, 2, 0, 0], [4, 4, 4, 4]]]
    # tuple elements from a map (the map's spec is its first element's: padding still per batch)
    tup = _seqs().map(lambda x: (x, tf.shape(x)[0])).bucket_by_sequence_length(lambda x, n: n, [3, 5], [3, 3, 3])
    assert vals(tup) == [([[1, 0], [2, 2], [1, 0]], [1, 2, 1]),
                         ([[5, 5, 5, 5, 5, 0, 0], [7, 7, 7, 7, 7, 7, 7], [6, 6, 6, 6, 6, 6, 0]], [5, 7, 6]),
                         ([[3, 3, 3, 0], [4, 4, 4, 4], [3, 3, 3, 0]], [3, 4, 3]), ([[2, 2]], [2])]  # TF 2.21
    nop = D.range(10).bucket_by_sequence_length(lambda x: tf.cast(x, tf.int32), [3, 5], [2, 2, 2], no_padding=True)
    assert vals(nop) == [[0, 1], [3, 4], [5, 6], [7, 8], [2], [9]]  # TF 2.21


def test_bucket_by_sequence_length_errors_like_tf():
    ln = lambda x: tf.shape(x)[0]  # noqa: E731
    # TF 2.21: ValueError "`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` ..."
    with pytest.raises(ValueError, match=r"must equal `len\(bucket_boundaries\) \+ 1`"):
        _seqs().bucket_by_sequence_length(ln, [3, 5], [2, 2])
    # TF 2.21: raised when the length-7 element is batched, after the first batches
    ds = _seqs().bucket_by_sequence_length(ln, [3, 5], [2, 2, 2], pad_to_bucket_boundary=True)
    it = iter(ds)
    assert next(it).numpy().tolist() == [[1, 0], [2, 2]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="elements must have length < max"):
        list(it)


# -- unique, random, shard, rebatch, take_while -------------------------------------------

def test_unique():
    ds = D.from_tensor_slices([1, 2, 1, 3, 2, 5]).unique()
    assert vals(ds) == [1, 2, 3, 5] and int(ds.cardinality()) == -2  # TF 2.21
    assert ds.element_spec == spec((), tf.int32)
    assert vals(D.from_tensor_slices([[1, 1], [2, 2], [1, 1]]).unique()) == [[1, 1], [2, 2]]
    assert vals(D.range(3).apply(tf.data.experimental.unique())) == [0, 1, 2]
    # TF 2.21: TypeError "`tf.data.Dataset.unique` does not support type <dtype: 'float32'> -- only ..."
    with pytest.raises(TypeError, match="does not support type"):
        D.from_tensor_slices([1., 2.]).unique()
    # TF 2.21: InvalidArgumentError "UniqueDataset only supports inputs with a single component."
    with pytest.raises(tf.errors.InvalidArgumentError, match="single component"):
        D.from_tensor_slices(([1, 1], [2, 2])).unique()


def test_random():
    ds = D.random(seed=4)
    assert int(ds.cardinality()) == -1 and ds.element_spec == spec((), tf.int64)  # TF 2.21
    a = vals(ds.take(500))
    assert a == vals(ds.take(500))            # TF 2.21: a seeded one repeats each iteration
    assert a == vals(D.random(seed=4).take(500))
    assert min(a) >= 0 and max(a) < 2**32 and max(a) > 2**31   # TF's range: a uint32 draw
    r = D.random(seed=4, rerandomize_each_iteration=True)
    assert vals(r.take(5)) != vals(r.take(5))  # TF 2.21: differs per iteration
    u = D.random()
    assert vals(u.take(5)) != vals(u.take(5))  # TF 2.21: unseeded: new numbers per iteration


def test_shard():
    ds = D.range(11).shard(3, 1)
    assert vals(ds) == [1, 4, 7, 10] and int(ds.cardinality()) == 4  # TF 2.21
    assert int(D.range(11).shard(3, 2).cardinality()) == 3
    assert int(D.range(10).filter(lambda x: True).shard(3, 1).cardinality()) == -2
    assert int(D.range(10).repeat().shard(3, 1).cardinality()) == -1
    # TF 2.21: InvalidArgumentError at construction
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Index must be between 0 and 2 \(currently index = 3\)"):
        D.range(10).shard(3, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Index must be between 0 and 2 \(currently index = -1\)"):
        D.range(10).shard(3, -1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Number of shards must be greater than zero"):
        D.range(10).shard(0, 0)


def test_rebatch():
    b = D.range(10).batch(4)
    r = b.rebatch(3)
    assert vals(r) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]  # TF 2.21
    assert int(r.cardinality()) == -2 and r.element_spec == spec((None,), tf.int64)
    assert repr(r).startswith("<_RebatchDataset")
    assert vals(b.rebatch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert b.rebatch(3, drop_remainder=True).element_spec == spec((3,), tf.int64)
    assert vals(b.rebatch([1, 3])) == [[0], [1, 2, 3], [4], [5, 6, 7], [8], [9]]  # TF 2.21
    ld = b.rebatch([1, 3], drop_remainder=True)
    assert vals(ld) == [[0], [1, 2, 3], [4], [5, 6, 7], [8]] and ld.element_spec == spec((None,), tf.int64)
    t = D.from_tensor_slices((np.arange(10), np.arange(10.) * 2)).batch(4, drop_remainder=True).rebatch(3)
    assert vals(t) == [([0, 1, 2], [0., 2., 4.]), ([3, 4, 5], [6., 8., 10.]), ([6, 7], [12., 14.])]  # TF 2.21
    assert vals(b.rebatch(0).take(3)) == [[], [], []]  # TF 2.21: empty batches
    # TF 2.21: ValueError "Invalid `batch_sizes`. Expected dataset with rank of >= 1 ..."
    with pytest.raises(ValueError, match="Expected dataset with rank of >= 1"):
        D.range(10).rebatch(3)


def test_take_while():
    ds = D.range(10).take_while(lambda x: x < 4)
    assert vals(ds) == [0, 1, 2, 3] and int(ds.cardinality()) == -2  # TF 2.21
    assert int(D.range(10).repeat().take_while(lambda x: x < 3).cardinality()) == -2  # TF 2.21
    assert vals(D.range(0).take_while(lambda x: x < 3)) == []
    assert vals(D.range(3).apply(tf.data.experimental.take_while(lambda x: x < 1))) == [0]
    # TF 2.21: ValueError "Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor ..."
    for bad in (lambda x: x, lambda x: tf.constant([True, False])):
        with pytest.raises(ValueError, match="must return a `tf.bool` scalar tensor"):
            list(D.range(10).take_while(bad))


# -- ignore_errors, apply, get_single_element ---------------------------------------------

def test_ignore_errors_skips_failed_elements():
    ds = D.from_tensor_slices([1., 2., 0., 4.]).map(lambda x: tf.debugging.check_numerics(1. / x, "boom"))
    with pytest.raises(tf.errors.InvalidArgumentError):
        list(ds)
    ig = ds.ignore_errors()
    assert vals(ig) == [1.0, 0.5, 0.25] and int(ig.cardinality()) == -2  # TF 2.21
    assert int(D.range(4).ignore_errors().cardinality()) == -2
    assert vals(D.range(3).apply(tf.data.experimental.ignore_errors())) == [0, 1, 2]
    # through a filter after the failing map, and with the warning logged
    f = ds.filter(lambda x: x < 0.9).ignore_errors(log_warning=True)
    assert vals(f) == [0.5, 0.25]


def test_ignore_errors_skips_bad_csv_records(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1,2\n3,x\n5,6\n7\n9,10\n")
    ds = tf.data.experimental.CsvDataset(str(p), [tf.int32, tf.int32])
    with pytest.raises(tf.errors.InvalidArgumentError):
        list(ds)
    assert vals(ds.ignore_errors()) == [(1, 2), (5, 6), (9, 10)]


def test_ignore_errors_refuses_to_end_early_where_it_cannot_go_on():
    # an error inside a batch that was filling ends tapeflow's batch: say so, never a short dataset
    ds = D.from_tensor_slices([1., 2., 0., 4.]).map(lambda x: tf.debugging.check_numerics(1. / x, "boom"))
    with pytest.raises(tf.errors.UnimplementedError, match="put ignore_errors right after"):
        list(ds.batch(2).ignore_errors())


def test_apply_and_get_single_element():
    assert vals(D.range(10).apply(lambda d: d.take(2))) == [0, 1]
    # TF 2.21: TypeError "`transformation_func` must return a `tf.data.Dataset` object. Got <class 'int'>."
    with pytest.raises(TypeError, match="must return a `tf.data.Dataset` object"):
        D.range(10).apply(lambda d: 3)
    x = D.from_tensors(3).get_single_element()
    assert int(x) == 3 and x.dtype == tf.int32
    assert int(tf.data.experimental.get_single_element(D.range(3).filter(lambda v: v > 1))) == 2
    # TF 2.21: InvalidArgumentError "Dataset was empty." / "Dataset had more than one element."
    with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset was empty"):
        D.range(0).get_single_element()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset had more than one element"):
        D.range(2).get_single_element()


def test_checkpointed_iterator_over_random_restores_its_stream(tmp_path):
    ds = D.random(seed=7, rerandomize_each_iteration=True).take(10)
    list(ds)   # one iteration done: the next has a new stream
    it = iter(ds)
    first = [int(next(it)) for _ in range(4)]
    ckpt = tf.train.Checkpoint(it=it)
    path = ckpt.save(str(tmp_path / "c"))
    rest = [int(x) for x in it]
    it2 = iter(ds)
    tf.train.Checkpoint(it=it2).restore(path)
    assert [int(x) for x in it2] == rest and len(first) == 4


# -- sample_from_datasets, choose_from_datasets, rejection_resample ------------------------

def test_sample_from_datasets_structure_and_errors():
    ds = D.sample_from_datasets([D.range(3), D.range(10, 13)], seed=1)
    out = vals(ds)
    # TF 2.21 (seed=1): [10, 0, 1, 2, 11, 12] -- tapeflow's own stream; each input's order is kept
    assert sorted(out) == [0, 1, 2, 10, 11, 12] and [x for x in out if x < 10] == [0, 1, 2]
    assert out == vals(ds)                       # a seeded one repeats (TF 2.21 too)
    assert int(ds.cardinality()) == -2 and repr(ds).startswith("<_DirectedInterleaveDataset")  # TF 2.21
    stop = vals(D.sample_from_datasets([D.range(3), D.range(10, 13)], seed=1, stop_on_empty_dataset=True))
    assert len(stop) < 6 or stop == out
    inf = D.sample_from_datasets([D.range(3).repeat(), D.range(10, 13).repeat()], seed=1)
    assert int(inf.cardinality()) == -1  # TF 2.21
    # TF 2.21: a static weight <= 0 drops its dataset; one left is returned as it is
    one = D.sample_from_datasets([D.range(3), D.range(10, 13)], weights=[0., 1.], seed=1)
    assert vals(one) == [10, 11, 12] and repr(one).startswith("<_RangeDataset") and int(one.cardinality()) == 3
    assert vals(D.sample_from_datasets([D.range(3), D.range(10, 13)], weights=[-1., 1.])) == [10, 11, 12]
    none = D.sample_from_datasets([D.range(3), D.range(10, 13)], weights=[0., 0.])
    assert vals(none) == [] and int(none.cardinality()) == 0
    # element specs merge (TF 2.21: (3, 2) and (3, 4) rows give shape (None,))
    m = D.sample_from_datasets([D.from_tensor_slices(np.zeros((3, 2))), D.from_tensor_slices(np.zeros((3, 4)))])
    assert m.element_spec == spec((None,), tf.float64)
    # TF 2.21 errors (ValueError / TypeError at construction)
    with pytest.raises(ValueError, match=r"`len\(weights\)=1` vs. `len\(datasets\)=2`"):
        D.sample_from_datasets([D.range(3), D.range(10, 13)], weights=[1.])
    with pytest.raises(ValueError, match="`datasets` should not be empty"):
        D.sample_from_datasets([])
    with pytest.raises(TypeError, match="must have compatible element specs"):
        D.sample_from_datasets([D.range(3), D.from_tensor_slices([1., 2.])])


def test_sample_from_datasets_distribution():
    # 5000 draws with weights (0.2, 0.8): the count of 1s is binomial, sd 28; +-150 (5.3 sd) cannot
    # fail by chance, and a wrong distribution (equal weights: 2500) cannot pass
    ds = D.sample_from_datasets([D.from_tensors(np.int64(0)).repeat(), D.from_tensors(np.int64(1)).repeat()],
                                weights=[0.2, 0.8], seed=5)
    ones = sum(vals(ds.take(5000)))
    assert abs(ones - 4000) < 150
    # weights as a dataset (one vector per draw), as TF takes them
    wd = D.sample_from_datasets([D.from_tensors(np.int64(0)).repeat(), D.from_tensors(np.int64(1)).repeat()],
                                weights=D.from_tensors([0.9, 0.1]).repeat(), seed=5)
    assert abs(sum(vals(wd.take(5000))) - 500) < 110     # sd 21
    e = tf.data.experimental.sample_from_datasets([D.range(3), D.range(10, 13)], seed=2)
    assert sorted(vals(e)) == [0, 1, 2, 10, 11, 12]


def test_choose_from_datasets_matches_tf():
    choice = D.from_tensor_slices(np.array([0, 1, 1, 0, 0, 0, 1], np.int64))
    ds = D.choose_from_datasets([D.range(3), D.range(10, 13)], choice)
    assert vals(ds) == [0, 10, 11, 1, 2] and int(ds.cardinality()) == -2  # TF 2.21 (stops at the empty one)
    assert vals(D.choose_from_datasets([D.range(3), D.range(10, 13)], choice, stop_on_empty_dataset=False)) == \
        [0, 10, 11, 1, 2, 12]  # TF 2.21
    cyc = D.choose_from_datasets([D.range(3).repeat(), D.range(10, 13).repeat()], D.range(2).repeat())
    assert vals(cyc.take(6)) == [0, 10, 1, 11, 2, 12] and int(cyc.cardinality()) == -1  # TF 2.21
    assert vals(tf.data.experimental.choose_from_datasets([D.range(3)], D.range(1))) == [0]
    # TF 2.21: TypeError "Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar `tf.int64` ..."
    for bad in (D.from_tensor_slices([0, 1]), D.range(2).batch(1)):
        with pytest.raises(TypeError, match="must be scalar `tf.int64` tensors"):
            D.choose_from_datasets([D.range(3), D.range(10, 13)], bad)
    # TF 2.21: InvalidArgumentError when iterated: "Selector index out of range: 2 >= 2" / "-1 >= 2"
    for i in (2, -1):
        oob = D.choose_from_datasets([D.range(3), D.range(10, 13)], D.from_tensor_slices(np.array([0, i], np.int64)))
        with pytest.raises(tf.errors.InvalidArgumentError, match=f"Selector index out of range: {i} >= 2"):
            list(oob)
    with pytest.raises(ValueError, match="`datasets` should not be empty"):
        D.choose_from_datasets([], D.range(1))


def test_rejection_resample_pairs_and_distribution():
    ds = D.range(20).rejection_resample(lambda x: x % 2, [0.5, 0.5], seed=3)
    # TF 2.21: (class, element) pairs; balanced data comes out as it is
    assert vals(ds.take(10)) == [(0, 0), (1, 1), (0, 2), (1, 3), (0, 4), (1, 5), (0, 6), (1, 7), (0, 8), (1, 9)]
    assert ds.element_spec == (spec((), tf.int64), spec((), tf.int64)) and int(ds.cardinality()) == -2
    t = D.zip((D.range(20), D.range(20))).rejection_resample(lambda a, b: a % 2, [0.5, 0.5], seed=3)
    assert vals(t.take(2)) == [(0, (0, 0)), (1, (1, 1))]  # TF 2.21
    i32 = D.range(20).rejection_resample(lambda x: tf.cast(x % 2, tf.int32), [0.9, 0.1], initial_dist=[0.5, 0.5],
                                         seed=3)
    assert i32.element_spec[0].dtype == tf.int32   # TF 2.21: the class keeps class_func's dtype
    # 80% class 1 resampled to (0.5, 0.5): TF 2.21 gives 1135 elements [546, 589] (estimated initial
    # distribution) and 1061 [532, 529] (initial_dist given). ~1000 draws: the class-1 fraction has
    # sd 0.016; +-0.06 cannot fail by chance, and the data's own 0.8 cannot pass.
    data = D.range(2000).map(lambda x: tf.cast(x % 10 < 8, tf.int64))
    for kw in ({}, {"initial_dist": [0.2, 0.8]}):
        cs = [c for c, _ in vals(data.rejection_resample(lambda x: x, [0.5, 0.5], seed=3, **kw))]
        assert 800 < len(cs) < 1400
        assert abs(np.mean(cs) - 0.5) < 0.06, (kw, np.mean(cs))
    e = data.apply(tf.data.experimental.rejection_resample(lambda x: x, [0.5, 0.5], seed=3))
    assert vals(e.take(5)) == vals(data.rejection_resample(lambda x: x, [0.5, 0.5], seed=3).take(5))


def test_checkpointed_sampling_iterator_restores_the_stream(tmp_path):
    ds = D.sample_from_datasets([D.range(50), D.range(100, 150)], weights=[0.3, 0.7], seed=11)
    it = iter(ds)
    _ = [int(next(it)) for _ in range(17)]
    path = tf.train.Checkpoint(it=it).save(str(tmp_path / "c"))
    rest = [int(x) for x in it]
    it2 = iter(D.sample_from_datasets([D.range(50), D.range(100, 150)], weights=[0.3, 0.7], seed=11))
    tf.train.Checkpoint(it=it2).restore(path)
    assert [int(x) for x in it2] == rest
    # unseeded rejection_resample: its streams' seeds are saved, so a restore repeats them
    rr = D.range(200).map(lambda x: tf.cast(x % 10 < 8, tf.int64)).rejection_resample(lambda x: x, [0.5, 0.5])
    it = iter(rr)
    _ = [next(it) for _ in range(20)]
    path = tf.train.Checkpoint(it=it).save(str(tmp_path / "r"))
    rest = [(int(c), int(x)) for c, x in it]
    it2 = iter(rr)
    tf.train.Checkpoint(it=it2).restore(path)
    assert [(int(c), int(x)) for c, x in it2] == rest


# -- make_csv_dataset ------------------------------------------------------------------------

A_CSV = "x,y,z,label\n1,2.5,3,0\n4,5,6,1\n7,,9,0\n10,11.5,12,1\n13,14,15,0\n"


def _csv(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _batches(ds):
    out = []
    for el in ds:
        feats, label = el if isinstance(el, tuple) else (el, None)
        out.append(({k: v.numpy().tolist() for k, v in feats.items()},
                    None if label is None else label.numpy().tolist()))
    return out


def test_make_csv_dataset_features_label_types_like_tf(tmp_path):
    mk = tf.data.experimental.make_csv_dataset
    a = _csv(tmp_path, "a.csv", A_CSV)
    ds = mk(a, 2, label_name="label", shuffle=False, num_epochs=1)
    # TF 2.21: (OrderedDict x int32, y float32, z int32; label int32), batches of (None,), empty field -> 0
    feats, lab = ds.element_spec
    assert list(feats) == ["x", "y", "z"] and type(feats).__name__ == "OrderedDict"
    assert [feats[k] for k in "xyz"] == [spec((None,), tf.int32), spec((None,), tf.float32), spec((None,), tf.int32)]
    assert lab == spec((None,), tf.int32) and int(ds.cardinality()) == -2
    assert repr(ds).startswith("<_PrefetchDataset")
    assert _batches(ds) == [({"x": [1, 4], "y": [2.5, 5.0], "z": [3, 6]}, [0, 1]),
                            ({"x": [7, 10], "y": [0.0, 11.5], "z": [9, 12]}, [0, 1]),
                            ({"x": [13], "y": [14.0], "z": [15]}, [0])]
    # no label: one OrderedDict of all columns (TF 2.21)
    nl = mk(a, 3, shuffle=False, num_epochs=1)
    assert list(nl.element_spec) == ["x", "y", "z", "label"]
    assert _batches(nl)[1] == ({"x": [10, 13], "y": [11.5, 14.0], "z": [12, 15], "label": [1, 0]}, None)
    # num_epochs: batches cross epochs; None repeats forever and drops the remainder (TF 2.21)
    e2 = mk(a, 4, shuffle=False, num_epochs=2, label_name="label")
    assert [b[1] for b in _batches(e2)] == [[0, 1, 0, 1], [0, 0, 1, 0], [1, 0]]
    inf = mk(a, 4, shuffle=False, label_name="label")
    assert int(inf.cardinality()) == -1 and inf.element_spec[1] == spec((4,), tf.int32)
    assert _batches(inf.take(2))[1][0]["x"] == [13, 1, 4, 7]
    # several files: sorted when not shuffled (TF 2.21: [b, a] reads a first)
    b = _csv(tmp_path, "b.csv", "x,y,z,label\n100,200,300,1\n")
    for pat in (str(tmp_path / "[ab].csv"), [b, a]):
        assert _batches(mk(pat, 10, shuffle=False, num_epochs=1, label_name="label"))[0][0]["x"] == \
            [1, 4, 7, 10, 13, 100]


def test_make_csv_dataset_options_like_tf(tmp_path):
    mk = tf.data.experimental.make_csv_dataset
    a = _csv(tmp_path, "a.csv", A_CSV)
    # select_columns by name or index: the file's column order (TF 2.21)
    sel = mk(a, 5, shuffle=False, num_epochs=1, select_columns=["z", "x"], label_name="z")
    assert _batches(sel) == [({"x": [1, 4, 7, 10, 13]}, [3, 6, 9, 12, 15])]
    assert list(mk(a, 5, shuffle=False, num_epochs=1, select_columns=[2, 0]).element_spec) == ["x", "z"]
    # column_defaults: values or dtypes (TF 2.21: x float32, y default -1.0, label int64)
    d = mk(a, 5, shuffle=False, num_epochs=1, column_defaults=[0.0, -1.0, 0, tf.int64])
    assert [d.element_spec[k].dtype for k in ("x", "y", "z", "label")] == [tf.float32, tf.float32, tf.int32, tf.int64]
    assert _batches(d)[0][0]["y"] == [2.5, 5.0, -1.0, 11.5, 14.0]
    # column_names replace the header's
    assert list(mk(a, 5, shuffle=False, num_epochs=1, column_names=list("abcd")).element_spec) == list("abcd")
    # na_value: TF 2.21 reads y's "5" as missing -> 0
    assert _batches(mk(a, 5, shuffle=False, num_epochs=1, na_value="5"))[0][0]["y"] == [2.5, 0.0, 0.0, 11.5, 14.0]
    na = _csv(tmp_path, "na.csv", "x,y\n1,2\nNA,3\n4,NA\n")   # na_value says nothing about the type
    nas = mk(na, 3, shuffle=False, num_epochs=1, na_value="NA")
    assert [nas.element_spec[k].dtype for k in "xy"] == [tf.int32, tf.int32]
    assert _batches(nas)[0][0] == {"x": [1, 0, 4], "y": [2, 3, 0]}
    # inference: int64 past int32, float64 past float32's range (TF 2.21)
    e = _csv(tmp_path, "e.csv", "a,b,c,d\n1,1e39,5,\n3000000000,2,6.5,\n")
    es = mk(e, 2, shuffle=False, num_epochs=1, select_columns=["a", "b", "c"])
    assert [es.element_spec[k].dtype for k in "abc"] == [tf.int64, tf.float64, tf.float32]
    assert _batches(es)[0][0]["a"] == [1, 3000000000]
    q = _csv(tmp_path, "q.csv", 'a;b\n"1";2\n3;4\n')
    assert _batches(mk(q, 2, shuffle=False, num_epochs=1, field_delim=";"))[0][0] == {"a": [1, 3], "b": [2, 4]}
    # shuffled: seeded runs repeat, the rows are all there
    s1 = _batches(mk(a, 5, shuffle_seed=3, num_epochs=1))
    assert s1 == _batches(mk(a, 5, shuffle_seed=3, num_epochs=1)) and sorted(s1[0][0]["x"]) == [1, 4, 7, 10, 13]
    # ignore_errors skips unparsable records
    bad = _csv(tmp_path, "bad.csv", "x,y\n1,2\n3,4\n5,oops\n7,8\n")
    assert _batches(mk(bad, 10, shuffle=False, num_epochs=1, num_rows_for_inference=2,
                       ignore_errors=True))[0][0]["x"] == [1, 3, 7]


def test_make_csv_dataset_errors_like_tf(tmp_path):
    mk = tf.data.experimental.make_csv_dataset
    a = _csv(tmp_path, "a.csv", A_CSV)
    # TF 2.21: ValueError texts
    with pytest.raises(ValueError, match=r"`label_name` provided must be one of the columns: .*Received: nope"):
        mk(a, 5, label_name="nope")
    with pytest.raises(ValueError, match="Column nope specified in `select_columns` must be of one of the columns"):
        mk(a, 5, select_columns=["nope"])
    with pytest.raises(ValueError, match="Problem inferring types: CSV row 2 has 4 number of fields. Expected: 2"):
        mk(a, 5, column_names=["a", "b"])
    with pytest.raises(ValueError, match="No files match `file_pattern`"):
        mk(str(tmp_path / "nope*.csv"), 5)
    with pytest.raises(ValueError, match="Expected `column_names` or `header` arguments"):
        mk(a, 5, header=False)
    # a string column: tf.string (wave 19; TF 2.21 infers it the same)
    s = _csv(tmp_path, "s.csv", "x,name\n1,ab\n2,cd\n")
    assert _batches(mk(s, 5, shuffle=False, num_epochs=1)) == [({"x": [1, 2], "name": [b"ab", b"cd"]}, None)]
    assert _batches(mk(s, 5, select_columns=["x"], shuffle=False, num_epochs=1)) == [({"x": [1, 2]}, None)]


# -- save / load (tapeflow's own format) ---------------------------------------------------

def test_save_load_roundtrip(tmp_path):
    ds = D.from_tensor_slices(({"a": np.arange(4), "b": np.arange(8.).reshape(4, 2)}, np.arange(4, dtype=np.int32)))
    ds.save(str(tmp_path / "s1"))
    ld = D.load(str(tmp_path / "s1"))
    # TF 2.21: the saved spec, cardinality = the element count, repr _LoadDataset
    assert ld.element_spec == ds.element_spec and int(ld.cardinality()) == 4
    assert repr(ld).startswith("<_LoadDataset")
    assert vals(ld) == vals(ds)
    got = next(iter(ld))
    assert got[0]["b"].dtype == tf.float64 and got[1].dtype == tf.int32
    # a filter's elements (TF 2.21: cardinality 2), a generator's unknown dimension kept
    D.range(3).filter(lambda x: x > 0).save(str(tmp_path / "s2"))
    l2 = tf.data.experimental.load(str(tmp_path / "s2"))
    assert vals(l2) == [1, 2] and int(l2.cardinality()) == 2
    g = D.from_generator(lambda: iter([[1], [2, 3]]), output_signature=tf.TensorSpec([None], tf.int32))
    tf.data.experimental.save(g, str(tmp_path / "s3"), compression="GZIP")
    l3 = D.load(str(tmp_path / "s3"), compression="GZIP")
    assert l3.element_spec == spec((None,), tf.int32) and vals(l3) == [[1], [2, 3]]
    # saving again over it replaces it (TF 2.21 too)
    D.range(3).save(str(tmp_path / "s1"))
    assert vals(D.load(str(tmp_path / "s1"))) == [0, 1, 2]
    # TF 2.21: NotFoundError for a directory with no saved dataset
    with pytest.raises(tf.errors.NotFoundError, match="no dataset saved"):
        D.load(str(tmp_path / "nothing"))


def test_get_single_element_and_scan_inside_function_match_eager():
    # TF's idiom: a dataset pipeline as preprocessing inside tf.function
    def pre(x):
        return D.from_tensors(x).map(lambda v: v * 2).get_single_element()

    def running():
        return D.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s)).batch(5).get_single_element()
    x = tf.constant([1., 2.])
    assert pre(x).numpy().tolist() == tf.function(pre)(x).numpy().tolist() == [2., 4.]   # TF 2.21: [2., 4.]
    assert running().numpy().tolist() == tf.function(running)().numpy().tolist() == [0, 0, 1, 3, 6]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset was empty"):
        tf.function(lambda: D.range(0).get_single_element())()


def test_restore_refuses_a_pipeline_that_makes_unseeded_random_datasets(tmp_path):
    # a shuffle made inside flat_map's function with no seed: a replay draws anew, so a restore
    # cannot give the saved iterator's elements: a clear error, never other elements
    def make(seed):
        return D.range(3).flat_map(lambda x: D.range(x * 10, x * 10 + 5).shuffle(5, seed=seed))
    for seed, ok in ((7, True), (None, False)):
        it = iter(make(seed))
        _ = [next(it) for _ in range(6)]
        path = tf.train.Checkpoint(it=it).save(str(tmp_path / f"c{ok}"))
        rest = [int(x) for x in it]
        it2 = iter(make(seed))
        tf.train.Checkpoint(it=it2).restore(path)
        if ok:
            assert [int(x) for x in it2] == rest
        else:
            with pytest.raises(tf.errors.FailedPreconditionError, match="unseeded random dataset"):
                next(it2)
