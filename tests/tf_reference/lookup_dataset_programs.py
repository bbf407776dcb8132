"""tf.data.experimental's dataset-built lookup tables (DatasetInitializer, table_from_dataset,
index_table_from_dataset), run by both TF 2.21 and tapeflow: make_lookup_tables_reference.py
records TF's results (the "datasets" entry of tests/data/lookup_tables_tf.json);
tests/test_lookup_tables.py runs them under tapeflow. Each takes the framework as ``tf`` and
returns a tensor (or raises)."""


def _pairs(tf):
    return tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(["a", "b", "c"]), tf.data.Dataset.range(3)))


def _keys(tf):
    return tf.data.Dataset.from_tensor_slices(["a", "b", "c"])



def _e(tf):
    return tf.data.experimental


PROGRAMS = {
    "init_lookup": lambda tf: tf.lookup.StaticHashTable(_e(tf).DatasetInitializer(_pairs(tf)), -1).lookup(
        tf.constant(["a", "c", "z"])),
    "init_size": lambda tf: tf.lookup.StaticHashTable(_e(tf).DatasetInitializer(_pairs(tf)), -1).size(),
    "init_dtypes": lambda tf: tf.constant([_e(tf).DatasetInitializer(_pairs(tf)).key_dtype.name,
                                          _e(tf).DatasetInitializer(_pairs(tf)).value_dtype.name]),
    "init_float_values": lambda tf: tf.lookup.StaticHashTable(_e(tf).DatasetInitializer(
        tf.data.Dataset.from_tensor_slices((["a", "b"], [0.5, 1.5]))), -1.0).lookup(tf.constant(["b", "x"])),
    "init_int_keys": lambda tf: tf.lookup.StaticHashTable(_e(tf).DatasetInitializer(
        tf.data.Dataset.from_tensor_slices((tf.constant([3, 4], tf.int64), ["x", "y"]))), "?").lookup(
        tf.constant([4, 5], tf.int64)),
    "init_mapped": lambda tf: tf.lookup.StaticHashTable(_e(tf).DatasetInitializer(
        tf.data.Dataset.from_tensor_slices(["x", "y"]).enumerate().map(lambda i, s: (s, i))), -1).lookup(
        tf.constant(["y", "x", "q"])),
    "init_vocabulary_table": lambda tf: tf.lookup.StaticVocabularyTable(
        _e(tf).DatasetInitializer(_pairs(tf)), 2).lookup(tf.constant(["a", "zz", "c"])),
    "init_duplicate": lambda tf: tf.lookup.StaticHashTable(_e(tf).DatasetInitializer(
        tf.data.Dataset.from_tensor_slices((["a", "a"], tf.constant([1, 2], tf.int64)))), -1).size(),
    "init_empty": lambda tf: tf.lookup.StaticHashTable(_e(tf).DatasetInitializer(
        tf.data.Dataset.from_tensor_slices((tf.constant([], tf.string), tf.constant([], tf.int64)))), -1).size(),
    "init_three_components": lambda tf: _e(tf).DatasetInitializer(
        tf.data.Dataset.zip((_keys(tf), tf.data.Dataset.range(3), tf.data.Dataset.range(3)))),
    "init_rank1_keys": lambda tf: _e(tf).DatasetInitializer(
        tf.data.Dataset.from_tensor_slices((tf.constant([["a"]]), tf.constant([[1]])))),
    "init_rank1_values": lambda tf: _e(tf).DatasetInitializer(
        tf.data.Dataset.from_tensor_slices((tf.constant(["a"]), tf.constant([[1, 2]])))),
    "table_lookup": lambda tf: _e(tf).table_from_dataset(_pairs(tf), default_value=-1).lookup(
        tf.constant(["a", "z"])),
    "table_oov": lambda tf: _e(tf).table_from_dataset(_pairs(tf), num_oov_buckets=2).lookup(
        tf.constant(["a", "z", "q", "hello"])),
    "table_no_default_size": lambda tf: _e(tf).table_from_dataset(_pairs(tf)).size(),
    "table_no_default_lookup": lambda tf: _e(tf).table_from_dataset(_pairs(tf)).lookup(tf.constant(["a", "z"])),
    "table_no_default_float": lambda tf: _e(tf).table_from_dataset(
        tf.data.Dataset.from_tensor_slices((["a"], [0.5]))).lookup(tf.constant(["a", "z"])),
    "table_vocab_size": lambda tf: _e(tf).table_from_dataset(_pairs(tf), vocab_size=2, default_value=-1).lookup(
        tf.constant(["a", "b", "c"])),
    "table_vocab_size_too_big": lambda tf: _e(tf).table_from_dataset(_pairs(tf), vocab_size=5,
                                                                     default_value=-1).size(),
    "index_lookup": lambda tf: _e(tf).index_table_from_dataset(_keys(tf)).lookup(tf.constant(["b", "z"])),
    "index_oov": lambda tf: _e(tf).index_table_from_dataset(_keys(tf), num_oov_buckets=3).lookup(
        tf.constant(["b", "z", "hello"])),
    "index_default": lambda tf: _e(tf).index_table_from_dataset(_keys(tf), default_value=-5).lookup(
        tf.constant(["b", "z"])),
    "index_int_keys": lambda tf: _e(tf).index_table_from_dataset(
        tf.data.Dataset.from_tensor_slices(tf.constant([5, 7], tf.int64)), key_dtype=tf.int64).lookup(
        tf.constant([7, 1], tf.int64)),
    "index_int_keys_oov": lambda tf: _e(tf).index_table_from_dataset(
        tf.data.Dataset.from_tensor_slices(tf.constant([5, 7], tf.int64)), num_oov_buckets=4,
        key_dtype=tf.int64).lookup(tf.constant([7, 1, 100], tf.int64)),
    "index_vocab_size": lambda tf: _e(tf).index_table_from_dataset(_keys(tf), vocab_size=2).size(),
    "index_duplicate": lambda tf: _e(tf).index_table_from_dataset(
        tf.data.Dataset.from_tensor_slices(["a", "a"])).size(),
}
