"""Wave 20's API surface fill (benchmarks/tf_api_surface.py): aliases, constants, tf.data.experimental's
transformations and the out-of-scope names that now say so. Expected values are TF 2.21's (noted)."""
import logging
import os
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf
from tapeflow._unsupported import NAMES, UnsupportedFeatureError


# --- out of scope: a clear error naming the feature, never a bare AttributeError -------------------

@pytest.mark.parametrize("path, words", [
    ("Graph", "graphs"), ("Operation", "graph operations"), ("RegisterGradient", "custom_gradient"),
    ("load_op_library", "custom C\\+\\+ ops"),
    ("qint8", "quantized"), ("dtypes.quint8", "quantized"),
    ("nn.RNNCellDropoutWrapper", "dropout="),
    ("config.experimental_connect_to_cluster", "clusters"), ("train.ClusterDef", "protos"),
    ("io.write_graph", "GraphDef"), ("distribute.Server", "clusters"),
    # (keras.layers.JaxLayer, keras.callbacks.OrbaxCheckpoint, keras.utils.plot_model: since wave 25 the
    # names exist and refuse when used: tests/test_keras25.py)
    ("CriticalSection", "threading.Lock"), ("strings.unicode_script", "ICU"), ("saved_model.experimental.read_fingerprint", "fingerprints"),
])
def test_out_of_scope_names_say_so(path, words):
    assert path in NAMES
    *ns, name = path.split(".")
    mod = tf
    for part in ns:
        mod = getattr(mod, part)
    with pytest.raises(UnsupportedFeatureError, match=rf"tf\.{path}: tapeflow does not implement .*{words}"):
        getattr(mod, name)
    assert not hasattr(mod, name)
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'") as info:
        getattr(mod, "NoSuchName")   # a typo stays a plain AttributeError
    assert not isinstance(info.value, NotImplementedError)


@pytest.mark.parametrize("ns, words", [("feature_column", "Estimator"), ("lite", "Lite"), ("tpu", "TPU"),
                                       ("raw_ops", "op name"), ("queue", "tf.data"),
                                       ("sysconfig", "custom C\\+\\+ ops"),
                                       ("security", "fuzzing"), ("tools", "upgrade script")])
def test_out_of_scope_namespaces(ns, words):
    with pytest.raises(NotImplementedError, match=rf"tf\.{ns}\.anything: .*{words}"):
        getattr(getattr(tf, ns), "anything")


# --- aliases and constants: TF 2.21 exports each (checked: `tf.dtypes.cast is tf.cast`, ...) --------

def test_aliases_are_the_same_objects():
    assert tf.dtypes.cast is tf.cast          # TF 2.21: True
    assert tf.dtypes.bool is tf.bool          # TF 2.21: True
    assert tf.as_string is tf.strings.as_string
    assert tf.keras.initializers.IdentityInitializer is tf.keras.initializers.Identity
    assert tf.keras.initializers.OrthogonalInitializer is tf.keras.initializers.Orthogonal
    assert tf.keras.metrics.binary_focal_crossentropy is tf.keras.losses.binary_focal_crossentropy
    assert tf.keras.metrics.categorical_focal_crossentropy is tf.keras.losses.categorical_focal_crossentropy
    assert tf.keras.utils.CustomObjectScope is tf.keras.utils.custom_object_scope
    # TF 2.21: tf.metrics is tf.keras.metrics, tf.losses is tf.keras.losses (`tf.metrics.Mean is tf.keras.metrics.Mean`)
    assert tf.metrics is tf.keras.metrics and tf.losses is tf.keras.losses
    assert tf.metrics.SparseCategoricalAccuracy is tf.keras.metrics.SparseCategoricalAccuracy
    assert tf.losses.sparse_categorical_crossentropy is tf.keras.losses.sparse_categorical_crossentropy
    # tf.version names tapeflow's version (TF 2.21: tf.version.VERSION == tf.__version__)
    assert tf.version.VERSION == tf.__version__ and isinstance(tf.version.GIT_VERSION, str)
    assert bool(1) is True   # the dtypes module's `bool` is resolved lazily: the builtin is not shadowed
    assert tf.dtypes.cast(tf.constant([1.7]), tf.int32).numpy().tolist() == [1]


def test_focal_metrics_values():
    # TF 2.21: keras.metrics.binary_focal_crossentropy([[0,1]], [[.2,.7]]) -> [0.02051324];
    # categorical_focal_crossentropy([[0,1]], [[.2,.8]]) -> [0.00223144]
    b = tf.keras.metrics.binary_focal_crossentropy([[0., 1.]], [[0.2, 0.7]]).numpy()
    c = tf.keras.metrics.categorical_focal_crossentropy([[0., 1.]], [[0.2, 0.8]]).numpy()
    np.testing.assert_allclose(b, [0.02051324], rtol=1e-5)
    np.testing.assert_allclose(c, [0.00223144], rtol=1e-4)


def test_saved_model_constants():
    sm = tf.saved_model   # TF 2.21's values
    assert (sm.ASSETS_KEY, sm.DEBUG_DIRECTORY, sm.DEBUG_INFO_FILENAME_PB) == (
        "saved_model_assets", "debug", "saved_model_debug_info.pb")
    assert sm.SAVED_MODEL_SCHEMA_VERSION == 1
    assert (sm.CLASSIFY_INPUTS, sm.CLASSIFY_METHOD_NAME, sm.CLASSIFY_OUTPUT_CLASSES, sm.CLASSIFY_OUTPUT_SCORES) == (
        "inputs", "tensorflow/serving/classify", "classes", "scores")
    assert (sm.PREDICT_INPUTS, sm.PREDICT_METHOD_NAME, sm.PREDICT_OUTPUTS) == (
        "inputs", "tensorflow/serving/predict", "outputs")
    assert (sm.REGRESS_INPUTS, sm.REGRESS_METHOD_NAME, sm.REGRESS_OUTPUTS) == (
        "inputs", "tensorflow/serving/regress", "outputs")


def test_config_and_logger():
    assert tf.config.get_soft_device_placement() is True   # TF 2.21's default
    tf.config.set_soft_device_placement(False)
    assert tf.config.get_soft_device_placement() is False
    tf.config.set_soft_device_placement(True)
    assert tf.config.experimental_functions_run_eagerly() is False
    tf.config.experimental_run_functions_eagerly(True)
    try:
        assert tf.config.functions_run_eagerly() is True
    finally:
        tf.config.run_functions_eagerly(False)
    assert tf.get_logger() is logging.getLogger("tensorflow")   # TF 2.21: the logger named "tensorflow"


def test_keras_utils():
    su = tf.keras.utils.standardize_dtype
    # TF 2.21 (Keras 3.15)
    assert [su(d) for d in ("float32", tf.float32, "int64", None, "uint8", np.float32, np.dtype("int32"),
                            float, int, bool)] == [
        "float32", "float32", "int64", "float32", "uint8", "float32", "int32", "float32", "int64", "bool"]
    with pytest.raises(ValueError, match="Invalid dtype: float"):
        su("float")
    assert tf.keras.utils.get_registered_name(tf.keras.layers.Dense) == "Dense"
    assert tf.keras.utils.get_registered_object("Dense") is None   # TF 2.21: built-ins are not "registered"
    m = tf.keras.metrics.deserialize(tf.keras.metrics.serialize(tf.keras.metrics.Mean(name="m2")))
    assert type(m).__name__ == "Mean" and m.name == "m2"
    assert tf.keras.metrics.serialize(tf.keras.metrics.Mean()) == {
        "module": "keras.metrics", "class_name": "Mean", "config": {"name": "mean", "dtype": "float32"},
        "registered_name": None}


def test_interactive_logging_routes_the_progbar(capsys, caplog):
    u = tf.keras.utils
    assert u.is_interactive_logging_enabled()
    u.disable_interactive_logging()
    try:
        assert not u.is_interactive_logging_enabled()
        with caplog.at_level(logging.INFO, logger="absl"):
            u.Progbar(2).update(2)
        assert capsys.readouterr().out == ""
        assert "2/2" in caplog.text
    finally:
        u.enable_interactive_logging()
    u.Progbar(2).update(2)
    assert "2/2" in capsys.readouterr().out


# --- tf.data ---------------------------------------------------------------------------------------

def test_data_iterator_classes():
    ds = tf.data.Dataset.range(3)
    assert isinstance(iter(ds), tf.data.Iterator)            # TF 2.21: True
    it = ds.as_numpy_iterator()
    assert isinstance(it, tf.data.NumpyIterator)              # TF 2.21: True
    assert it.next() == 0 and next(it) == 1 and list(it) == [2]
    assert repr(ds.as_numpy_iterator()).startswith("NumpyIterator(iterator=")


def test_data_experimental_transformations():
    E = tf.data.experimental
    ds = tf.data.Dataset.range(6)
    assert E.SHARD_HINT == -1   # TF 2.21
    assert E.AutotuneAlgorithm.HILL_CLIMB == 1
    # TF 2.21: shuffle_and_repeat(3, count=2, seed=7) gives ds.shuffle(3, seed=7).repeat(2)'s order
    a = list(ds.apply(E.shuffle_and_repeat(3, count=2, seed=7)).as_numpy_iterator())
    assert a == list(ds.shuffle(3, seed=7).repeat(2).as_numpy_iterator()) and sorted(a) == sorted(list(range(6)) * 2)
    m = ds.apply(E.map_and_batch(lambda x: x * 2, 4))
    assert [v.tolist() for v in m.as_numpy_iterator()] == [[0, 2, 4, 6], [8, 10]]     # TF 2.21
    assert tuple(m.element_spec.shape) == (None,)
    m = ds.apply(E.map_and_batch(lambda x: x * 2, 4, drop_remainder=True))
    assert [v.tolist() for v in m.as_numpy_iterator()] == [[0, 2, 4, 6]] and tuple(m.element_spec.shape) == (4,)
    assert list(ds.apply(E.enumerate_dataset(5)).take(2).as_numpy_iterator()) == [(5, 0), (6, 1)]
    assert list(tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).apply(E.unbatch()).as_numpy_iterator()) == [
        1, 2, 3, 4]
    pi = tf.data.Dataset.range(3).apply(
        E.parallel_interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2))
    assert list(pi.as_numpy_iterator()) == [0, 1, 0, 1, 2, 2]     # TF 2.21
    assert list(ds.apply(E.copy_to_device("/cpu:0")).as_numpy_iterator()) == list(range(6))
    assert list(ds.apply(E.prefetch_to_device("/cpu:0")).as_numpy_iterator()) == list(range(6))
    E.enable_debug_mode()
    assert repr(E.get_structure(ds)) == "TensorSpec(shape=(), dtype=tf.int64, name=None)"
    assert E.get_structure(iter(ds)) == E.get_structure(ds)
    with pytest.raises(TypeError, match="must be a `tf.data.Dataset` or tf.data.Iterator object"):
        E.get_structure([1])


def test_assert_cardinality():
    E = tf.data.experimental
    ds = tf.data.Dataset.range(6)
    d = ds.apply(E.assert_cardinality(6))
    assert int(d.cardinality()) == 6 and list(d.as_numpy_iterator()) == list(range(6))
    # TF 2.21: a filtered dataset's cardinality is unknown; the assertion makes it known
    assert int(tf.data.Dataset.range(3).filter(lambda x: True).apply(E.assert_cardinality(3)).cardinality()) == 3
    # TF 2.21: FailedPreconditionError at the 5th element / at the end
    with pytest.raises(tf.errors.FailedPreconditionError, match="expected to contain 4 elements but contained at "
                                                                "least 5 elements"):
        list(ds.apply(E.assert_cardinality(4)).as_numpy_iterator())
    with pytest.raises(tf.errors.FailedPreconditionError, match="expected to contain 8 elements but contained only "
                                                                "6 elements"):
        list(ds.apply(E.assert_cardinality(8)).as_numpy_iterator())


def test_from_list_and_at():
    E = tf.data.experimental
    fl = E.from_list([(1, "a"), (2, "b")])
    assert list(fl.as_numpy_iterator()) == [(1, b"a"), (2, b"b")]   # TF 2.21: int32 and string
    assert [s.dtype for s in fl.element_spec] == [tf.int32, tf.string] and int(fl.cardinality()) == 2
    with pytest.raises(ValueError, match="`elements` should not be empty"):
        E.from_list([])
    ds = tf.data.Dataset.range(6)
    assert int(E.at(ds, 2)) == 2
    a, b = E.at(tf.data.Dataset.from_tensor_slices(([1, 2], [3., 4.])), 1)
    assert (int(a), float(b), a.dtype, b.dtype) == (2, 4.0, tf.int32, tf.float32)
    for i in (10, -1):   # TF 2.21: OutOfRangeError "Index out of range [0, 6):10"
        with pytest.raises(tf.errors.OutOfRangeError, match=rf"Index out of range \[0, 6\):{i}"):
            E.at(ds, i)


# --- tf.io.decode_csv -------------------------------------------------------------------------------

def _cols(r):
    return [(np.asarray(x.numpy()).tolist(), x.dtype.name) for x in r]


@pytest.mark.parametrize("compiled", [False, True])
def test_decode_csv_values(compiled):
    def run(fn, records):
        return fn(tf.constant(records)) if not compiled else tf.function(fn)(tf.constant(records))
    # TF 2.21: [[1, 3] int32, [2.5, 1.0] float32, [b'a', b'b'] string]
    assert _cols(run(lambda r: tf.io.decode_csv(r, [[0], [1.0], [""]]), ["1,2.5,a", "3,,b"])) == [
        ([1, 3], "int32"), ([2.5, 1.0], "float32"), ([b"a", b"b"], "string")]
    # TF 2.21: records of shape (2, 1) give columns of shape (2, 1)
    assert _cols(run(lambda r: tf.io.decode_csv(r, [[0], [0]]), [["1,2"], ["3,4"]])) == [
        ([[1], [3]], "int32"), ([[2], [4]], "int32")]
    assert _cols(run(lambda r: tf.io.decode_csv(r, [[0], [""]]), ['1,"a,b"'])) == [([1], "int32"), ([b"a,b"], "string")]
    assert _cols(run(lambda r: tf.io.decode_csv(r, [[0], [0]], field_delim=";"), ["1;2"])) == [
        ([1], "int32"), ([2], "int32")]
    assert _cols(run(lambda r: tf.io.decode_csv(r, [[0], [0]], select_cols=[0, 2]), ["1,2,3"])) == [
        ([1], "int32"), ([3], "int32")]
    assert _cols(run(lambda r: tf.io.decode_csv(r, [[0], [7]], na_value="NA"), ["1,NA"])) == [
        ([1], "int32"), ([7], "int32")]
    assert _cols(run(lambda r: tf.io.decode_csv(r, [0, 0]), ["1,2"])) == [([1], "int32"), ([2], "int32")]


def test_decode_csv_scalar_and_dtypes():
    # TF 2.21: a scalar record; int64/float64 defaults give int64/float64 columns
    r = tf.io.decode_csv("1,2.5,a", [tf.constant(0, tf.int64), tf.constant(1.0, tf.float64), ["x"]])
    assert _cols(r) == [(1, "int64"), (2.5, "float64"), (b"a", "string")]
    assert _cols(tf.io.decode_csv([], [[0], [0]])) == [([], "int32"), ([], "int32")]   # TF 2.21: empty columns


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("records, defaults, needle", [
    (["1,2", "3"], [[0], [0]], "Expect 2 fields but have 1 in record"),      # TF 2.21: "... in record 1"
    (["1,2,3"], [[0], [0]], "Expect 2 fields but have 3"),
    (["1,"], [[0], "required"], "Field 1 is required but missing in record"),
    (["1,x"], [[0], [0]], "Field 1 in record is not a valid int32: x"),      # TF 2.21: "... in record 0 ..."
    (["1,x"], [[0], [0.0]], "not a valid float: x"),
    # an empty record has no fields (Python's csv.reader would give one empty field, i.e. the default)
    ([""], [[7]], "Expect 1 fields but have 0 in record"),                     # TF 2.21: "... in record 0"
    (["1,2", ""], [[0], [0]], "Expect 2 fields but have 0 in record"),        # TF 2.21: "... in record 1"
    (['"ab,1'], [[0], [0]], "Quoted field has to end with quote followed by delim or end"),   # TF 2.21's texts
    (['a"b,1'], [[0], [0]], "Unquoted fields cannot have quotes/CRLFs inside"),
    (['"a"b,1'], [[0], [0]], "Quote inside a string has to be escaped by another quote"),
    (["1"], [[1, 2]], "There should only be 1 default per field but field 0 has 2"),
])
def test_decode_csv_errors(records, defaults, needle, compiled):
    defaults = [tf.constant([], tf.int32) if d == "required" else d for d in defaults]

    def fn(r):
        return tf.io.decode_csv(r, defaults)[0]   # column 0 is fine: the bad field fails every output
    with pytest.raises(tf.errors.InvalidArgumentError, match=needle):
        (tf.function(fn) if compiled else fn)(tf.constant(records))


def test_decode_csv_bad_default_dtype():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'OUT_TYPE' of bool is not in the list"):
        tf.io.decode_csv(["1,2"], [[True], [0]])
    # TF 2.21: InvalidArgumentError "Length for attr 'OUT_TYPE' of 0 must be at least minimum 1"
    with pytest.raises(tf.errors.InvalidArgumentError, match="Length for attr 'OUT_TYPE' of 0"):
        tf.io.decode_csv(["1,2"], [])


@pytest.mark.parametrize("select, needle", [
    ([2, 0], "select_cols is not strictly increasing"),          # TF 2.21 checks select_cols in Python: ValueError
    ([-1, 0], "select_cols contains negative values"),
    ([0], "Length of select_cols and record_defaults do not match"),
])
def test_decode_csv_select_cols_errors(select, needle):
    with pytest.raises(ValueError, match=needle):
        tf.io.decode_csv(["1,2,3"], [[0], [0]], select_cols=select)


@pytest.mark.parametrize("compiled", [False, True])
def test_decode_csv_quoting_and_empty_fields(compiled):
    def run(fn, records):
        return fn(tf.constant(records)) if not compiled else tf.function(fn)(tf.constant(records))
    # TF 2.21: a trailing delimiter is one more (empty) field: [[b'a'], [b'b'], [b'z']]
    assert _cols(run(lambda r: tf.io.decode_csv(r, [[""], [""], ["z"]]), ["a,b,"])) == [
        ([b"a"], "string"), ([b"b"], "string"), ([b"z"], "string")]
    # TF 2.21: "" inside quotes is one quote; a quoted empty field takes the default; use_quote_delim=False
    # keeps quotes as text: [[b'say "hi"', b'q'], [5, 2]] and [[b'"a'], [b'b"']]
    assert _cols(run(lambda r: tf.io.decode_csv(r, [["q"], [5]]), ['"say ""hi""",', '"",2'])) == [
        ([b'say "hi"', b"q"], "string"), ([5, 2], "int32")]
    assert _cols(run(lambda r: tf.io.decode_csv(r, [[""], [""]], use_quote_delim=False), ['"a,b"'])) == [
        ([b'"a'], "string"), ([b'b"'], "string")]
    # TF 2.21: empty records tensors of shape (0,) and (0, 3) give empty columns of that shape
    assert _cols(run(lambda r: tf.io.decode_csv(r, [[0], [0.0]]), np.zeros((0, 3), object))) == [
        ([], "int32"), ([], "float32")]


# --- keras.utils.text_dataset_from_directory ------------------------------------------------------------

@pytest.fixture
def text_dir(tmp_path):
    for sub, name, text in [("pos", "a.txt", "good movie"), ("pos", "b.txt", "great fun ok"), ("neg", "c.txt", "bad"),
                            ("neg", "d.txt", "awful film, really"), ("neg", "e.md", "meh")]:
        (tmp_path / sub).mkdir(exist_ok=True)
        (tmp_path / sub / name).write_text(text)
    return str(tmp_path)


def test_text_dataset_from_directory(text_dir, capsys):
    u = tf.keras.utils
    ds = u.text_dataset_from_directory(text_dir, batch_size=2, seed=3)
    assert capsys.readouterr().out == "Found 4 files belonging to 2 classes.\n"   # TF 2.21's line
    assert ds.class_names == ["neg", "pos"]
    assert repr(ds) == ("<_PrefetchDataset element_spec=(TensorSpec(shape=(None,), dtype=tf.string, name=None), "
                        "TensorSpec(shape=(None,), dtype=tf.int32, name=None))>")   # TF 2.21's repr
    pairs = sorted((t, int(y)) for x, yy in ds for t, y in zip(x.numpy().tolist(), yy.numpy()))
    assert pairs == [(b"awful film, really", 0), (b"bad", 0), (b"good movie", 1), (b"great fun ok", 1)]
    # unshuffled: Keras' file order; max_length keeps the first bytes; categorical labels (TF 2.21's values)
    ds = u.text_dataset_from_directory(text_dir, batch_size=None, shuffle=False, max_length=4, label_mode="categorical")
    assert [(x.numpy(), y.numpy().tolist()) for x, y in ds] == [
        (b"bad", [1.0, 0.0]), (b"awfu", [1.0, 0.0]), (b"good", [0.0, 1.0]), (b"grea", [0.0, 1.0])]
    ds = u.text_dataset_from_directory(text_dir, batch_size=None, shuffle=False, label_mode="binary")
    assert repr(ds.element_spec) == ("(TensorSpec(shape=(), dtype=tf.string, name=None), "
                                     "TensorSpec(shape=(1,), dtype=tf.float32, name=None))")
    capsys.readouterr()
    ds = u.text_dataset_from_directory(text_dir, batch_size=None, shuffle=False, labels=None)
    assert capsys.readouterr().out == "Found 4 files.\n"
    assert list(ds.as_numpy_iterator()) == [b"bad", b"awful film, really", b"good movie", b"great fun ok"]
    # TF 2.21: seed=1 puts the two 'pos' files in training, the two 'neg' ones in validation
    tr, va = u.text_dataset_from_directory(text_dir, batch_size=None, seed=1, validation_split=0.5, subset="both")
    assert sorted(tr.as_numpy_iterator()) == [(b"good movie", 1), (b"great fun ok", 1)]
    assert list(va.as_numpy_iterator()) == [(b"bad", 0), (b"awful film, really", 0)]
    with pytest.raises(ValueError, match='`label_mode` argument must be one of "int", "categorical", "binary", or '
                                         'None'):
        u.text_dataset_from_directory(text_dir, label_mode="bad")


# --- keras.metrics' IoU family (TF 2.21's Keras 3.15 values) -------------------------------------------

_SCORES = np.array([[.9, .1, 0], [.2, .3, .5], [0, .1, .9], [.1, .8, .1]], np.float32)


def test_mean_iou_values():
    M = tf.keras.metrics
    m = M.MeanIoU(num_classes=3)
    assert m.total_cm.dtype == tf.int64 and m.total_cm.shape == (3, 3)
    np.testing.assert_allclose(float(m([0, 1, 2, 2], [0, 2, 2, 1])), 0.44444442, rtol=1e-6)   # TF 2.21
    assert m.total_cm.numpy().tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 1]]
    m.update_state([[0, 1], [1, 1]], [[0, 1], [1, 0]], sample_weight=[[1, 2], [3, 4]])
    assert m.total_cm.numpy().tolist() == [[2, 0, 0], [4, 5, 1], [0, 1, 1]]                 # TF 2.21
    np.testing.assert_allclose(float(m.result()), 0.3737373650074005, rtol=1e-6)
    assert m.get_config() == {"num_classes": 3, "name": "mean_io_u", "dtype": "int64", "ignore_class": None,
                              "sparse_y_true": True, "sparse_y_pred": True, "axis": -1}
    m.reset_state()
    assert float(m.result()) == 0.0   # TF 2.21: no class seen -> 0
    # ignore_class drops its labels; labels/predictions out of [0, num_classes) are dropped too (TF 2.21: 0.5)
    np.testing.assert_allclose(float(M.MeanIoU(3, ignore_class=0)([0, 1, 2, 2, 5], [1, 1, 2, 0, 1])), 0.5, rtol=1e-6)
    # float sample weights are truncated into the int64 matrix; a float32 metric keeps them (TF 2.21)
    m = M.MeanIoU(num_classes=2)
    m.update_state([0, 1], [0, 1], sample_weight=[0.5, 0.7])
    assert m.total_cm.numpy().tolist() == [[0, 0], [0, 0]] and float(m.result()) == 0.0
    m = M.MeanIoU(num_classes=2, dtype="float32")
    m.update_state([0, 1], [0, 1], sample_weight=[0.5, 0.7])
    np.testing.assert_allclose(m.total_cm.numpy(), [[0.5, 0], [0, 0.7]], rtol=1e-6)
    np.testing.assert_allclose(float(m.result()), 0.9999997615814209, rtol=1e-6)


def test_iou_variants():
    M = tf.keras.metrics
    m = M.IoU(num_classes=3, target_class_ids=[0, 2])
    np.testing.assert_allclose(float(m([0, 1, 2, 2], [0, 2, 2, 1])), 0.6666666269302368, rtol=1e-6)   # TF 2.21
    assert m.get_config() == {"name": "io_u", "dtype": "int64", "num_classes": 3, "target_class_ids": [0, 2],
                              "ignore_class": None, "sparse_y_true": True, "sparse_y_pred": True, "axis": -1}
    m = M.BinaryIoU(threshold=0.3)
    np.testing.assert_allclose(float(m([0, 1, 0, 1], [0.1, 0.2, 0.4, 0.7])), 0.3333333432674408, rtol=1e-6)
    assert m.get_config() == {"target_class_ids": [0, 1], "threshold": 0.3, "name": "binary_io_u", "dtype": "int64"}
    np.testing.assert_allclose(float(M.BinaryIoU(target_class_ids=[1])([0, 1, 0, 1], [0.1, 0.2, 0.4, 0.7])),
                               0.4999999403953552, rtol=1e-6)
    onehot = np.eye(3, dtype=np.float32)[[0, 1, 2, 2]]
    m = M.OneHotIoU(num_classes=3, target_class_ids=[0, 2])
    np.testing.assert_allclose(float(m(onehot, _SCORES)), 0.6666666269302368, rtol=1e-6)
    assert m.get_config()["name"] == "one_hot_io_u" and m.get_config()["sparse_y_pred"] is False
    m = M.OneHotMeanIoU(num_classes=3)
    np.testing.assert_allclose(float(m(onehot, _SCORES)), 0.4444444179534912, rtol=1e-6)
    with pytest.raises(ValueError, match=r"Target class id 3 is out of range, which is \[0, 3\)"):
        M.IoU(num_classes=3, target_class_ids=[3])
    clone = M.deserialize(M.serialize(M.MeanIoU(4, ignore_class=1)))
    assert type(clone) is M.MeanIoU and clone.num_classes == 4 and clone.ignore_class == 1


def test_mean_iou_compiled_and_in_fit():
    m = tf.keras.metrics.MeanIoU(num_classes=3)

    @tf.function
    def step(a, b):
        m.update_state(a, b)
        return m.result()
    np.testing.assert_allclose(float(step(tf.constant([0, 1, 2, 2]), tf.constant([0, 2, 2, 1]))), 0.44444442,
                               rtol=1e-6)
    np.testing.assert_allclose(float(step(tf.constant([0, 1, 2, 2]), tf.constant([0, 2, 2, 1]))), 0.44444442,
                               rtol=1e-6)
    assert m.total_cm.numpy().tolist() == [[2, 0, 0], [0, 0, 2], [0, 2, 2]]
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="softmax")])
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=[tf.keras.metrics.MeanIoU(3, sparse_y_pred=False)])
    rng = np.random.default_rng(0)
    h = model.fit(rng.random((16, 4), np.float32), rng.integers(0, 3, 16), epochs=1, verbose=0)
    assert 0.0 <= h.history["mean_io_u"][0] <= 1.0


# --- tf.train.ExponentialMovingAverage (TF 2.21's values) ----------------------------------------------

def test_ema_values_and_names():
    v = tf.Variable([1.0, 2.0], name="w")
    ema = tf.train.ExponentialMovingAverage(0.9)
    assert ema.name == "ExponentialMovingAverage" and ema.average(v) is None
    assert ema.apply([v]) is None                      # TF 2.21: eager apply returns None
    avg = ema.average(v)
    # TF 2.21: <tf.Variable 'w/ExponentialMovingAverage:0' ...>, non-trainable, the variable's value at creation
    assert avg.name == "w/ExponentialMovingAverage:0" and not avg.trainable
    assert ema.average_name(v) == "w/ExponentialMovingAverage"
    np.testing.assert_array_equal(avg.numpy(), np.float32([1.0, 2.0]))
    v.assign([3.0, 5.0])
    ema.apply([v])
    np.testing.assert_array_equal(avg.numpy(), np.float32([1.2, 2.3000002]))   # TF 2.21's bits
    v.assign([0.0, -1.0])
    ema.apply([v])
    np.testing.assert_array_equal(avg.numpy(), np.float32([1.08, 1.97]))
    assert list(ema.variables_to_restore()) == ["w/ExponentialMovingAverage"]
    assert ema.variables_to_restore()["w/ExponentialMovingAverage"] is v
    # TF 2.21: a variable never applied has no average; its name is still derived
    assert ema.average(tf.Variable(1.0)) is None
    assert ema.average_name(tf.Variable(1.0, name="zz")) == "zz/ExponentialMovingAverage"
    k = tf.Variable(0.0, name="k")
    named = tf.train.ExponentialMovingAverage(0.5, name="Avg")
    named.apply([k])
    assert named.average(k).name == "k/Avg:0"
    # TF 2.21: a variable listed twice is updated twice (0 -> 2 -> 3 toward 4)
    k.assign(4.0)
    named.apply([k, k])
    assert named.average(k).numpy() == np.float32(3.0)


def test_ema_num_updates_dtypes_and_tensor_decay():
    # TF 2.21: decay min(0.99, (1 + n) / (10 + n)) with n = 3 -> 4/13, float64 variable: [2.38461542, 3.38461542]
    d = tf.Variable(np.array([1.0, 2.0]), name="d")
    ema = tf.train.ExponentialMovingAverage(0.99, num_updates=3)
    ema.apply([d])
    d.assign([3.0, 4.0])
    ema.apply([d])
    np.testing.assert_allclose(ema.average(d).numpy(), [2.38461542, 3.38461542], rtol=1e-8)
    assert ema.average(d).dtype == tf.float64
    # TF 2.21: float16 shadows stay float16: [1.3, 1.55]
    h = tf.Variable(np.array([1.0, 2.0], np.float16), name="h")
    e2 = tf.train.ExponentialMovingAverage(0.7)
    e2.apply([h])
    h.assign(np.array([2.0, 0.5], np.float16))
    e2.apply([h])
    np.testing.assert_array_equal(e2.average(h).numpy(), np.float16([1.3, 1.55]))
    assert e2.apply() is None                          # TF 2.21: no var_list in eager: nothing to do
    g = tf.Variable(3.0, name="g")
    e3 = tf.train.ExponentialMovingAverage(tf.constant(0.5))   # a tensor decay
    e3.apply([g])
    g.assign(1.0)
    e3.apply([g])
    assert e3.average(g).numpy() == np.float32(2.0)


def test_ema_inside_function_and_checkpoint(tmp_path):
    # the shadow is created once, eagerly (init_scope), on the first traced apply; later calls update it
    v3 = tf.Variable([1.0, 2.0], name="f")
    ema3 = tf.train.ExponentialMovingAverage(0.5)

    @tf.function
    def step(x):
        v3.assign(x)
        ema3.apply([v3])
        return ema3.average(v3).read_value()
    # TF 2.21: [2. 2.5] then [3.5 1.75]
    np.testing.assert_array_equal(step(tf.constant([3.0, 3.0])).numpy(), [2.0, 2.5])
    np.testing.assert_array_equal(step(tf.constant([5.0, 1.0])).numpy(), [3.5, 1.75])
    assert ema3.average(v3).name == "f/ExponentialMovingAverage:0" and not ema3.average(v3).trainable
    # TF 2.21: num_updates from a variable (the optimizer.iterations idiom), all inside a function:
    # decay 0.999 is capped by (1 + n) / (10 + n): [3.6013987, -0.6013986] after three steps
    it = tf.Variable(0, dtype=tf.int64, name="step")
    v = tf.Variable([1.0, 2.0], name="w")
    ema = tf.train.ExponentialMovingAverage(0.999, num_updates=it)

    @tf.function
    def train(x):
        v.assign_add(x)
        it.assign_add(1)
        ema.apply([v])
    for _ in range(3):
        train(tf.constant([1.0, -1.0]))
    want = np.float32([3.6013987, -0.6013986])
    np.testing.assert_array_equal(ema.average(v).numpy(), want)
    # TF 2.21: the EMA object is not trackable; its shadows checkpoint as variables
    ck = tf.train.Checkpoint(v=v, avg=ema.average(v))
    path = ck.save(str(tmp_path / "c"))
    ema.average(v).assign([0.0, 0.0])
    ck.restore(path)
    np.testing.assert_array_equal(ema.average(v).numpy(), want)


@pytest.mark.parametrize("compiled", [False, True])
def test_ema_bad_inputs(compiled):
    ema = tf.train.ExponentialMovingAverage(0.9)
    iv = tf.Variable(1)

    def run(fn):
        return (tf.function(fn) if compiled else fn)()
    # TF 2.21's TypeErrors (eager; the same inside tapeflow.function)
    with pytest.raises(TypeError, match="does not support non-Variable tensors"):
        run(lambda: ema.apply([tf.constant(1.0)]))
    with pytest.raises(TypeError, match="The variables must be half, float, or double: Variable:0"):
        run(lambda: ema.apply([iv]))


# --- image codecs: tf.io.decode_* / encode_* (TF 2.21's outputs: tests/data/image_codec_tf.npz) -----------

_IMG = np.load(Path(__file__).resolve().parent / "data" / "image_codec_tf.npz")
_IMG_FILES = sorted(k[5:] for k in _IMG.files if k.startswith("file:"))
# the generator's (op, kwargs) list: a case missing from the npz is one TF 2.21 refused (InvalidArgumentError)
_IMG_OPS = [
    ("decode_image", "{}"), ("decode_image", "{'channels': 1}"), ("decode_image", "{'channels': 3}"),
    ("decode_image", "{'channels': 4}"), ("decode_image", "{'expand_animations': False}"),
    ("decode_image", "{'dtype': 'float32'}"), ("decode_image", "{'dtype': 'float16'}"),
    ("decode_image", "{'dtype': 'uint16'}"),
    ("decode_png", "{}"), ("decode_png", "{'channels': 3}"), ("decode_png", "{'dtype': 'uint16'}"),
    ("decode_jpeg", "{}"), ("decode_jpeg", "{'channels': 1}"), ("decode_gif", "{}"), ("decode_bmp", "{}"),
    ("decode_bmp", "{'channels': 4}"), ("extract_jpeg_shape", "{}"), ("is_jpeg", "{}"),
]


def _img_bytes(name):
    return _IMG[f"file:{name}"].tobytes()


@pytest.mark.parametrize("name", _IMG_FILES)
@pytest.mark.parametrize("op, kw", _IMG_OPS)
def test_image_decoders_match_tf(name, op, kw):
    import ast
    kwargs = ast.literal_eval(kw)
    if kwargs.get("dtype") == "uint16" and not hasattr(tf, "uint16"):
        pytest.skip("tapeflow has no uint16 dtype on this branch")
    if "dtype" in kwargs:
        kwargs["dtype"] = getattr(tf, kwargs["dtype"])
    key = f"{name}|{op}|{kw}"
    fn = getattr(tf.io, op)
    if key not in _IMG.files:   # TF 2.21 raised InvalidArgumentError
        with pytest.raises(tf.errors.InvalidArgumentError):
            fn(_img_bytes(name), **kwargs)
        return
    got = fn(_img_bytes(name), **kwargs).numpy()
    want = _IMG[key]
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if name.endswith(".jpg") and op != "extract_jpeg_shape" and op != "is_jpeg":
        # Pillow's IDCT is libjpeg's accurate one: TF's dct_method="INTEGER_ACCURATE" exactly; TF's default
        # (the fast IDCT) differs by a few levels (measured: at most 4 of 255 on these files)
        if key + "|accurate" in _IMG.files:
            np.testing.assert_array_equal(got, _IMG[key + "|accurate"])
        scale = 1.0 if got.dtype == np.uint8 else (65535.0 / 255 if got.dtype == np.uint16 else 1 / 255)
        assert np.abs(got.astype(np.float64) - want.astype(np.float64)).max() <= 5 * scale + 1e-3
    else:
        np.testing.assert_array_equal(got, want)   # PNG, GIF, BMP: TF's bits (floats too)


def test_image_decoders_tf_image_names_and_compiled():
    png, jpg, gif = _img_bytes("rgb.png"), _img_bytes("smooth.jpg"), _img_bytes("anim.gif")
    for n in ("decode_image", "decode_png", "decode_jpeg", "decode_gif", "decode_bmp", "encode_png", "encode_jpeg",
              "is_jpeg", "extract_jpeg_shape", "decode_and_crop_jpeg"):
        assert getattr(tf.image, n) is getattr(tf.io, n)   # TF 2.21 exports each under both names

    @tf.function
    def dec(b):
        return tf.io.decode_image(b, channels=3, expand_animations=False)
    np.testing.assert_array_equal(dec(tf.constant(png)).numpy(), _IMG["rgb.png|decode_image|{'channels': 3}"])
    # TF 2.21's static shape inside the function: (None, None, 3)
    assert list(dec.get_concrete_function(tf.TensorSpec([], tf.string)).structured_outputs.shape) == [None, None, 3]

    @tf.function
    def dec_all(b):
        return tf.io.decode_gif(b), tf.io.is_jpeg(b), tf.io.decode_png(tf.io.encode_png(tf.io.decode_gif(b)[1]))
    frames, isj, rt = dec_all(tf.constant(gif))
    np.testing.assert_array_equal(frames.numpy(), _IMG["anim.gif|decode_gif|{}"])
    np.testing.assert_array_equal(rt.numpy(), frames.numpy()[1])
    assert not isj.numpy()
    with pytest.raises(tf.errors.InvalidArgumentError, match="animated gifs can only be decoded"):
        tf.function(lambda b: tf.io.decode_png(b))(tf.constant(gif))
    np.testing.assert_array_equal(tf.function(lambda b: tf.io.extract_jpeg_shape(b))(tf.constant(jpg)).numpy(),
                                  [12, 16, 3])
    # decode_and_crop_jpeg: TF 2.21 equals decode then crop [y, x, h, w]
    full = tf.io.decode_jpeg(jpg).numpy()
    np.testing.assert_array_equal(tf.io.decode_and_crop_jpeg(jpg, [2, 3, 4, 5]).numpy(), full[2:6, 3:8])
    np.testing.assert_array_equal(tf.function(lambda b: tf.io.decode_and_crop_jpeg(b, [2, 3, 4, 5]))(
        tf.constant(jpg)).numpy(), full[2:6, 3:8])
    # is_jpeg of any shape (TF's substr composition)
    assert tf.io.is_jpeg(tf.constant([jpg, png])).numpy().tolist() == [True, False]


def test_image_decode_in_dataset_map(tmp_path):
    p = tmp_path / "a.png"
    p.write_bytes(_img_bytes("rgb.png"))
    ds = tf.data.Dataset.from_tensor_slices([str(p), str(p)]).map(
        lambda f: tf.image.convert_image_dtype(tf.io.decode_png(tf.io.read_file(f), channels=3), tf.float32))
    got = [x.numpy() for x in ds]
    # convert_image_dtype(uint8 -> float32) is v * (1/255) (TF's Python op)
    np.testing.assert_array_equal(got[1], _IMG["rgb.png|decode_png|{}"].astype(np.float32) * np.float32(1 / 255))


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("fn, arg, err, needle", [
    # TF 2.21's texts (InvalidArgumentError)
    (lambda b: tf.io.decode_image(b), b"", tf.errors.InvalidArgumentError, "Input is empty"),
    (lambda b: tf.io.decode_png(b), b"not an image", tf.errors.InvalidArgumentError, "Unknown image file format"),
    (lambda b: tf.io.decode_image(b, channels=2), "rgb.png", tf.errors.InvalidArgumentError,
     "`channels` must be 0, 1, 3 or 4 but got 2"),
    (lambda b: tf.io.decode_bmp(b), "rgb.png", tf.errors.InvalidArgumentError,
     "Trying to decode PNG format using DecodeBmp op"),
    (lambda b: tf.io.decode_jpeg(b), "rgb.bmp", tf.errors.InvalidArgumentError,
     "Trying to decode BMP format using a wrong op. Use `decode_bmp`"),
    (lambda b: tf.io.decode_image(b, channels=4), "smooth.jpg", tf.errors.InvalidArgumentError,
     "JPEG does not support 4 channels"),
    (lambda b: tf.io.extract_jpeg_shape(b), "rgb.png", tf.errors.InvalidArgumentError, "Invalid JPEG data, size 178"),
    (lambda b: tf.io.decode_image(tf.stack([b, b])), "rgb.png", tf.errors.InvalidArgumentError,
     r"`contents` must be scalar but got shape\[2\]"),
])
def test_image_decoder_errors(fn, arg, err, needle, compiled):
    b = _img_bytes(arg) if isinstance(arg, str) else arg
    with pytest.raises(err, match=needle):
        out = (tf.function(fn) if compiled else fn)(tf.constant(b))
        out.numpy()


def test_image_encoders():
    x = tf.io.decode_png(_img_bytes("rgba.png"))
    for c in (1, 2, 3, 4):   # TF 2.21: encode_png then decode_png gives the pixels back, 1-4 channels
        img = x[..., :c]
        b = tf.io.encode_png(img)
        assert b.shape == () and b.dtype == tf.string and tf.io.decode_png(b).numpy().tobytes() == img.numpy().tobytes()
    assert tf.io.decode_png(tf.io.encode_png(x, compression=9)).numpy().tolist() == x.numpy().tolist()
    smooth = tf.io.decode_jpeg(_img_bytes("smooth.jpg"), dct_method="INTEGER_ACCURATE")
    errs = []
    for q in (95, 50):
        rt = tf.io.decode_jpeg(tf.io.encode_jpeg(smooth, quality=q)).numpy().astype(int)
        errs.append(np.abs(rt - smooth.numpy().astype(int)).mean())
    # TF 2.21's round trips of this image (accurate IDCT): mean |error| 1.74 (quality 95) and 3.79 (quality 50)
    assert errs[0] < 2.5 and errs[0] < errs[1] < 5.0, errs
    assert tf.io.decode_jpeg(tf.io.encode_jpeg(smooth[..., :1])).shape == (12, 16, 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="image must have 1 or 3 channels"):
        tf.io.encode_jpeg(x)                                    # TF 2.21: ... got [5,7,4]
    with pytest.raises(tf.errors.InvalidArgumentError, match="images must be at least rank 3"):
        tf.io.encode_png(x[..., 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'T' of float32"):
        tf.io.encode_png(tf.cast(x, tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'dtype' of float32"):
        tf.io.decode_png(_img_bytes("rgb.png"), dtype=tf.float32)


# --- tf.test (TF 2.21's TestCase assertions and gradient checker) -----------------------------------------

class TestTFTestCase(tf.test.TestCase):
    def test_assertions_pass_and_fail_as_tf(self):
        self.assertAllClose([1.0, 2.0], tf.constant([1.0, 2.0000001]))          # TF 2.21: within rtol=atol=1e-6
        self.assertAllClose({"a": [1.0], "b": (tf.constant(2.0), [3])}, {"a": np.array([1.0]), "b": (2.0, [3])})
        with self.assertRaisesRegex(AssertionError, "Not equal to tolerance rtol=1e-06, atol=1e-06"):
            self.assertAllClose([1.0, 2.0], [1.0, 2.1])
        with self.assertRaisesRegex(AssertionError, r"Shape mismatch: expected \(2,\), got \(3,\)"):   # TF's text
            self.assertAllEqual([1, 2], [1, 2, 3])
        with self.assertRaisesRegex(AssertionError, "Arrays are not equal"):
            self.assertAllEqual(tf.constant([1, 2]), [1, 3])
        with self.assertRaisesRegex(AssertionError, "mismatched keys"):
            self.assertAllClose({"a": 1.0}, {"b": 1.0})
        self.assertNotAllClose([1.0], [1.1])
        with self.assertRaises(AssertionError):
            self.assertNotAllClose([1.0], [1.0])
        self.assertAllInRange(tf.constant([1, 2]), 1, 2)
        with self.assertRaisesRegex(AssertionError, "outside the range"):
            self.assertAllInRange([1, 2], 1, 2, open_upper_bound=True)
        self.assertAllGreater(tf.constant([2.0, 3.0]), 1.0)
        with self.assertRaises(AssertionError):
            self.assertAllLess([2.0, 3.0], 3.0)
        self.assertAllInSet([1, 2, 1], {1, 2})
        self.assertDTypeEqual(tf.constant([1.0]), tf.float32)
        self.assertShapeEqual(np.zeros((2, 3)), tf.zeros((2, 3)))
        self.assertAllCloseAccordingToType(np.float16([1.0]), np.float16([1.0005]))   # half: 1e-3
        self.assertNear(1.0, 1.05, 0.1)
        self.assertArrayNear([1.0, 2.0], [1.05, 2.0], 0.1)
        self.assertLen([1, 2], 2)
        with self.assertRaisesOpError("not broadcastable"):
            tf.constant([1, 2]) + tf.constant([1, 2, 3])
        with self.assertRaisesRegex(AssertionError, "InvalidArgumentError"):   # an op error whose text differs
            with self.assertRaisesOpError("no such text"):
                tf.constant([1, 2]) + tf.constant([1, 2, 3])

    def test_evaluate_session_and_temp_dir(self):
        # TF 2.21: 3.0 and [1, {'k': 2.0}] as NumPy values
        self.assertEqual(self.evaluate(tf.constant(3.0)), 3.0)
        out = self.evaluate([tf.constant(1), {"k": tf.constant(2.0)}])
        assert isinstance(out[1]["k"], (np.ndarray, np.generic)) and out[1]["k"] == 2.0
        with self.cached_session() as sess:
            self.assertEqual(sess.run(tf.constant(4)), 4)
        d = self.get_temp_dir()
        assert os.path.isdir(d) and d == self.get_temp_dir()
        # inside the process's directory, which goes at exit (TF's googletest.GetTempDir): a directory
        # per test in /tmp piled up before
        from tapeflow.test import _process_temp_dir
        assert os.path.dirname(d) == _process_temp_dir()


def test_tf_test_queries_and_compute_gradient():
    # TF 2.21 (CPU build): '' and False; tapeflow has no XLA either
    assert tf.test.gpu_device_name() == "" and not tf.test.is_gpu_available()
    assert not tf.test.is_built_with_cuda() and not tf.test.is_built_with_gpu_support()
    th, nu = tf.test.compute_gradient(lambda x: x * x, [tf.constant([1.0, 2.0])])
    # TF 2.21: ([[2, 0], [0, 4]] float32,) twice
    assert th[0].dtype == np.float32 and th[0].tolist() == [[2, 0], [0, 4]] and nu[0].tolist() == [[2, 0], [0, 4]]
    th, nu = tf.test.compute_gradient(lambda x, y: x * y, [np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    assert [t.tolist() for t in th] == [[[3, 0], [0, 4]], [[1, 0], [0, 2]]] == [n.tolist() for n in nu]
    # TF 2.21: ([[3, 12]],) and ([[3.00000095, 12.00000095]],): Jacobians are (y size, x size); step 1/1024
    th, nu = tf.test.compute_gradient(lambda x: tf.reduce_sum(x ** 3), [tf.constant([[1.0, 2.0]], tf.float64)])
    assert th[0].tolist() == [[3.0, 12.0]]
    np.testing.assert_allclose(nu[0], [[3.00000095, 12.00000095]], rtol=0, atol=5e-9)
    with pytest.raises(AssertionError, match="Cannot compute gradient for unsupported type int64 of argument 0"):
        tf.test.compute_gradient(lambda x: x, [np.array([1, 2])])


def test_data_experimental_tfrecord_writer(tmp_path):
    ds = tf.data.Dataset.from_tensor_slices([b"a", b"bc", b""])
    p = str(tmp_path / "r.tfrecord")
    assert tf.data.experimental.TFRecordWriter(p).write(ds) is None
    # TF 2.21's file, byte for byte
    assert open(p, "rb").read().hex() == ("01000000000000000175de4161786ee428020000000000000078270b3462633433dba700"
                                          "0000000000000029039807d8ea82a2")
    g = str(tmp_path / "r.gz")
    tf.data.experimental.TFRecordWriter(g, compression_type="GZIP").write(ds)
    assert [x.numpy() for x in tf.data.TFRecordDataset(g, compression_type="GZIP")] == [b"a", b"bc", b""]
    w = tf.data.experimental.TFRecordWriter(p)
    # TF 2.21's TypeErrors
    with pytest.raises(TypeError, match="produces scalar `tf.string` elements, but got a dataset which produces "
                                        r"elements with shapes \(\) and types tf.int64"):
        w.write(tf.data.Dataset.range(3))
    with pytest.raises(TypeError, match=r"shapes \(1,\)"):
        w.write(tf.data.Dataset.from_tensor_slices([[b"a"]]))
    with pytest.raises(TypeError, match="Expected a `tf.data.Dataset` object but got <class 'list'>"):
        w.write([b"a"])


# --- tf.audio (TF 2.21's bytes and values) ------------------------------------------------------------------

_WAV_X = np.array([[0.0, 0.5], [-0.5, 1.0], [-1.0, 0.25], [0.3, -0.7]], np.float32)
# TF 2.21: tf.audio.encode_wav(_WAV_X, 16000), byte for byte
_WAV_TF = ("524946463400000057415645666d74201000000001000200803e000000fa00000400100064617461100000000000004000c0ff7f"
           "00800020662666a6")


@pytest.mark.parametrize("compiled", [False, True])
def test_audio_wav_round_trip(compiled):
    enc = tf.function(tf.audio.encode_wav) if compiled else tf.audio.encode_wav
    dec = tf.function(tf.audio.decode_wav) if compiled else tf.audio.decode_wav
    b = enc(_WAV_X, 16000)
    assert b.dtype == tf.string and b.shape == () and b.numpy().hex() == _WAV_TF
    a, sr = dec(b)
    # TF 2.21: int16 / 32768 (1.0 saturates to 32767 -> 0.999969482421875)
    assert a.dtype == tf.float32 and sr.dtype == tf.int32 and int(sr.numpy()) == 16000
    assert a.numpy().tolist() == [[0.0, 0.5], [-0.5, 0.999969482421875], [-1.0, 0.25],
                                  [0.29998779296875, -0.70001220703125]]
    # TF 2.21: desired_channels takes the first channels, repeats the last; desired_samples cuts or zero-pads
    assert dec(b, desired_channels=1)[0].numpy().tolist() == [[0.0], [-0.5], [-1.0], [0.29998779296875]]
    assert dec(b, desired_channels=3)[0].numpy()[1].tolist() == [-0.5, 0.999969482421875, 0.999969482421875]
    assert dec(b, desired_samples=2)[0].shape == (2, 2)
    assert dec(b, desired_channels=1, desired_samples=6)[0].numpy()[4:].tolist() == [[0.0], [0.0]]
    # TF 2.21: clamping and NaN -> 0, its bytes
    m = enc(np.array([[2.0], [-3.0], [np.nan]], np.float32), 8000)
    assert m.numpy().hex() == ("524946462a00000057415645666d74201000000001000100401f0000803e00000200100064617461"
                               "06000000ff7f00800000")
    # TF 2.21: rounding half away from zero (0.7 -> 22938, -0.3 -> -9830, +-0.00002 -> +-1), not flooring
    r = enc(np.array([[0.7], [-0.3], [0.00002], [-0.00002]], np.float32), 8000)
    assert r.numpy().hex() == ("524946462c00000057415645666d74201000000001000100401f0000803e0000020010006461746108"
                               "0000009a599ad90100ffff")


def test_audio_wav_static_shape_and_errors():
    f = tf.function(lambda b: tf.audio.decode_wav(b, desired_channels=2))
    audio, rate = f.get_concrete_function(tf.TensorSpec([], tf.string)).structured_outputs
    assert list(audio.shape) == [None, 2] and list(rate.shape) == []   # TF 2.21: (None, 2) and ()
    import io as _io
    import wave
    buf = _io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1), w.setsampwidth(1), w.setframerate(8000), w.writeframes(bytes(2))
    for compiled in (False, True):
        dec = tf.function(tf.audio.decode_wav) if compiled else tf.audio.decode_wav
        # TF 2.21's texts (InvalidArgumentError)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Header mismatch: Expected RIFF but found junk"):
            dec(tf.constant(b"junkjunkjunkjunk"))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Data too short"):
            dec(tf.constant(b""))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Can only read 16-bit WAV files, but received 8"):
            dec(tf.constant(buf.getvalue()))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"audio must be 2-dimensional\[3\]"):
        tf.audio.encode_wav(np.zeros(3, np.float32), 8000)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"contents must be scalar, got shape \[1\]"):
        tf.audio.decode_wav([bytes.fromhex(_WAV_TF)])


# --- keras.optimizers.Ftrl (Keras 3 / TF 2.21's values) -------------------------------------------------------

def _ftrl_run(**kw):
    v = tf.Variable([1.0, -2.0, 0.5])
    opt = tf.keras.optimizers.Ftrl(**kw)
    for g in ([0.1, -0.2, 0.3], [0.5, 0.5, -0.5], [-1.0, 2.0, 0.0]):
        opt.apply_gradients([(tf.constant(g), v)])
    return v.numpy()


def test_ftrl_values():
    # TF 2.21, three steps from [1, -2, 0.5]
    np.testing.assert_array_equal(_ftrl_run(learning_rate=0.1),
                                  np.float32([0.01880224049091339, -0.4317581355571747, 0.14381499588489532]))
    np.testing.assert_array_equal(
        _ftrl_run(learning_rate=0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.02),
        np.float32([0.01748868264257908, -0.4257119596004486, 0.140467569231987]))
    # a power other than 0.5: float32 pow may differ from Eigen's in the last bit (measured: 5e-9 here)
    np.testing.assert_allclose(
        _ftrl_run(learning_rate=0.1, learning_rate_power=-0.3, beta=0.5, l2_shrinkage_regularization_strength=0.05,
                  initial_accumulator_value=0.2),
        [0.013717751018702984, -0.15990863740444183, 0.03841984644532204], rtol=2e-6)
    v = tf.Variable(np.array([1.0, 2.0]))
    tf.keras.optimizers.Ftrl(0.05).apply_gradients([(tf.constant([0.3, -0.1], tf.float64), v)])
    np.testing.assert_allclose(v.numpy(), [0.24011139, 0.10815039], rtol=1e-7)   # TF 2.21, float64
    assert isinstance(tf.keras.optimizers.get("ftrl"), tf.keras.optimizers.Ftrl)
    cfg = tf.keras.optimizers.Ftrl(0.05).get_config()
    assert cfg["learning_rate_power"] == -0.5 and cfg["initial_accumulator_value"] == 0.1 and cfg["beta"] == 0.0


def test_ftrl_in_function_and_errors():
    w = tf.Variable([1.0, 2.0])
    opt = tf.keras.optimizers.Ftrl(0.1)

    @tf.function
    def step(g):
        opt.apply_gradients([(g, w)])
    for g in ([0.1, -0.2], [0.3, 0.3]):
        step(tf.constant(g))
    np.testing.assert_array_equal(w.numpy(), np.float32([-0.050695765763521194, 0.3005894720554352]))   # TF 2.21
    # Keras 3's ValueErrors
    with pytest.raises(ValueError, match="`initial_accumulator_value` needs to be positive or zero. Received: "
                                         "initial_accumulator_value=-1."):
        tf.keras.optimizers.Ftrl(initial_accumulator_value=-1)
    with pytest.raises(ValueError, match="`learning_rate_power` needs to be negative or zero"):
        tf.keras.optimizers.Ftrl(learning_rate_power=0.5)
    with pytest.raises(ValueError, match="`l1_regularization_strength` needs to be positive or zero"):
        tf.keras.optimizers.Ftrl(l1_regularization_strength=-1)


def test_timestamp_and_hessians():
    t = tf.timestamp()
    assert t.dtype == tf.float64 and t.shape == () and float(t.numpy()) > 1.7e9   # TF 2.21: float64 seconds
    f = tf.function(lambda: tf.timestamp())
    a = float(f().numpy())
    import time
    time.sleep(0.01)
    assert float(f().numpy()) > a   # TF 2.21: stateful, runs at every call (not a constant of the trace)
    with pytest.raises(RuntimeError, match="tf.gradients is not supported when eager execution is enabled"):
        tf.hessians(tf.constant([1.0]) ** 3, tf.constant([1.0]))   # TF 2.21's eager RuntimeError
    with pytest.raises(UnsupportedFeatureError, match="nest two tapeflow.GradientTapes"):
        tf.function(lambda x: tf.hessians(tf.reduce_sum(x ** 3), x))(tf.constant([1.0]))


# --- keras.utils.audio_dataset_from_directory (Keras 3.15 / TF 2.21) ---------------------------------------

@pytest.fixture
def wav_dir(tmp_path):
    import wave
    rng = np.random.RandomState(1)
    for cls, n in (("no", 3), ("yes", 4)):
        (tmp_path / cls).mkdir()
        for i in range(n):
            x = (rng.uniform(-1, 1, (5 + 3 * i + (cls == "yes"), 1)) * 32767).astype("<i2")
            with wave.open(str(tmp_path / cls / f"{i}.wav"), "wb") as w:
                w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000), w.writeframes(x.tobytes())
    (tmp_path / "yes" / "readme.txt").write_text("x")
    return str(tmp_path)


def test_audio_dataset_from_directory(wav_dir, capsys):
    ds = tf.keras.utils.audio_dataset_from_directory(wav_dir, batch_size=4, shuffle=False)
    assert capsys.readouterr().out == "Found 7 files belonging to 2 classes.\n"   # TF 2.21's line
    assert ds.class_names == ["no", "yes"]
    batches = [(a.numpy(), y.numpy()) for a, y in ds]
    # TF 2.21: padded batches (4, 11, 1) labels [0, 0, 0, 1] and (3, 15, 1) labels [1, 1, 1]; samples int16 / 32768
    assert [(a.shape, y.tolist()) for a, y in batches] == [((4, 11, 1), [0, 0, 0, 1]), ((3, 15, 1), [1, 1, 1])]
    assert batches[0][0].dtype == np.float32
    np.testing.assert_allclose(batches[0][0][:, :3, 0], [[-0.1659, 0.4406, -0.9997], [-0.8153, -0.6274, -0.3089],
                                                         [0.7562, -0.9452, 0.3409], [0.7527, 0.7892, -0.8299]],
                               atol=5e-5)
    assert batches[0][0][0, 5:, 0].tolist() == [0.0] * 6            # the 5-sample clip, zero-padded to 11
    assert batches[1][0][-1, -3:, 0].tolist() == [-0.171630859375, -0.900054931640625, 0.07177734375]
    # TF 2.21: output_sequence_length cuts/pads; categorical labels; no batching
    ds = tf.keras.utils.audio_dataset_from_directory(wav_dir, batch_size=None, shuffle=False, output_sequence_length=8,
                                                     label_mode="categorical", verbose=False)
    assert [(tuple(a.shape), y.numpy().tolist()) for a, y in ds][:2] == [((8, 1), [1.0, 0.0])] * 2
    tr, va = tf.keras.utils.audio_dataset_from_directory(wav_dir, batch_size=2, validation_split=0.3, subset="both",
                                                         seed=3, output_sequence_length=6, verbose=False)
    # TF 2.21: the seed's split puts labels [0, 1, 1, 1, 1] in training and [0, 0] in validation
    assert sorted(v for _, y in tr for v in y.numpy().tolist()) == [0, 1, 1, 1, 1]
    assert sorted(v for _, y in va for v in y.numpy().tolist()) == [0, 0]
    ds = tf.keras.utils.audio_dataset_from_directory(wav_dir, labels=None, batch_size=3, shuffle=False, verbose=False)
    assert [tuple(a.shape) for a in ds] == [(3, 11, 1), (3, 12, 1), (1, 15, 1)]   # TF 2.21
    ds = tf.keras.utils.audio_dataset_from_directory(wav_dir, label_mode="binary", batch_size=7, shuffle=False,
                                                     output_sequence_length=4, verbose=False)
    assert [y.numpy().tolist() for _, y in ds] == [[[0.0]] * 3 + [[1.0]] * 4]


def test_audio_dataset_from_directory_errors(wav_dir):
    f = tf.keras.utils.audio_dataset_from_directory
    # TF 2.21's ValueErrors / ImportError
    with pytest.raises(ValueError, match="Cannot set both `ragged` and `output_sequence_length`"):
        f(wav_dir, ragged=True, output_sequence_length=5)
    with pytest.raises(ImportError, match="install tensorflow_io"):
        f(wav_dir, sampling_rate=8000)
    with pytest.raises(ValueError, match="`sampling_rate` should have an integer value. Received: sampling_rate=1.5"):
        f(wav_dir, sampling_rate=1.5)
    with pytest.raises(ValueError, match='`label_mode` argument must be one of "int"'):
        f(wav_dir, label_mode="x")
    with pytest.raises(NotImplementedError, match="ragged=True"):
        f(wav_dir, ragged=True)


def test_random_algorithm():
    A = tf.random.Algorithm
    # TF 2.21: [<Algorithm.PHILOX: 1>, <Algorithm.THREEFRY: 2>, <Algorithm.AUTO_SELECT: 3>]
    assert [(a.name, a.value) for a in A] == [("PHILOX", 1), ("THREEFRY", 2), ("AUTO_SELECT", 3)]
    assert repr(A.PHILOX) == "<Algorithm.PHILOX: 1>"
    for alg in (A.PHILOX, "philox", 1, None):   # TF 2.21: the same stream, [0.43842274, -0.53439844]
        g = tf.random.Generator.from_seed(1, alg=alg)
        np.testing.assert_allclose(g.normal([2]).numpy(), [0.43842274, -0.53439844], rtol=1e-6)
    np.testing.assert_allclose(tf.random.stateless_normal([2], [1, 2], alg=A.PHILOX).numpy(), [0.5441101, 0.20738031],
                               rtol=1e-6)
    assert tf.random.create_rng_state(1, A.PHILOX).numpy().tolist() == [1, 0, 0]
    # TF 2.21: UnimplementedError "Non-XLA devices don't support the ThreeFry algorithm." (at the first draw)
    with pytest.raises(tf.errors.UnimplementedError, match="Non-XLA devices don't support the ThreeFry algorithm"):
        tf.random.Generator.from_seed(1, alg=A.THREEFRY).normal([2])
    with pytest.raises(ValueError, match="Argument `alg` got unsupported value mersenne"):   # TF 2.21's text
        tf.random.Generator.from_seed(1, alg="mersenne")


# --- keras.metrics PearsonCorrelation / ConcordanceCorrelation (Keras 3.15 / TF 2.21's bits) -----------------

@pytest.mark.parametrize("compiled", [False, True])
def test_correlation_metrics(compiled):
    yt = np.array([[1.0, 2.0, 3.0, 4.0], [0.5, 0.1, 0.9, 0.3]], np.float32)
    yp = np.array([[1.1, 1.9, 3.5, 3.7], [0.2, 0.4, 0.8, 0.1]], np.float32)
    run = (lambda f, *a, **k: tf.function(lambda x, y: f(x, y, **k))(*a)) if compiled else \
        (lambda f, *a, **k: f(*a, **k))

    def check(got, want):
        # TF 2.21's values: eagerly bit for bit; compiled, the fused tier's reductions sum in their loop's
        # order (ARCHITECTURE.md: last bits differ from eager's), 1 ulp here
        if compiled:
            np.testing.assert_allclose(got.numpy(), want, rtol=3e-7, atol=0)
        else:
            assert got.numpy().tolist() == want
    check(run(tf.keras.metrics.pearson_correlation, yt, yp), [0.9644196033477783, 0.6777750253677368])
    check(run(tf.keras.metrics.concordance_correlation, yt, yp), [0.9631147384643555, 0.6515147686004639])
    check(run(tf.keras.metrics.pearson_correlation, yt, yp, axis=0), [1.0, 1.0, 1.0000001192092896, 1.0])
    m = tf.keras.metrics.PearsonCorrelation()
    m.update_state(yt, yp)
    assert m.result().numpy() == np.float32(0.8210973) and m.name == "pearson_correlation"
    m.update_state(yt[:1], yp[::-1][:1])
    assert m.result().numpy() == np.float32(0.56129915)
    m2 = tf.keras.metrics.ConcordanceCorrelation()
    m2.update_state(yt, yp, sample_weight=[1.0, 3.0])
    assert m2.result().numpy() == np.float32(0.72941476)
    assert m2.get_config() == {"name": "concordance_correlation", "dtype": "float32", "axis": -1}
    assert isinstance(tf.keras.metrics.get("pearson_correlation"), tf.keras.metrics.PearsonCorrelation)


# --- small TF 2.21 names: bitcast, guarantee_const, AggregationMethod, base64, decode_compressed, ... ------

@pytest.mark.parametrize("compiled", [False, True])
def test_bitcast_and_byte_transforms(compiled):
    run = (lambda f, *a: tf.function(f)(*a)) if compiled else (lambda f, *a: f(*a))
    # TF 2.21's values and shapes
    assert run(lambda x: tf.bitcast(x, tf.int32), tf.constant([1.0, -2.0])).numpy().tolist() == [1065353216,
                                                                                                 -1073741824]
    assert run(lambda x: tf.bitcast(x, tf.uint8), tf.constant([1, 256])).numpy().tolist() == [[1, 0, 0, 0],
                                                                                              [0, 1, 0, 0]]
    assert run(lambda x: tf.bitcast(x, tf.int32), tf.constant(np.arange(8, dtype=np.uint8).reshape(2, 4))
               ).numpy().tolist() == [50462976, 117835012]
    assert run(lambda x: tf.bitcast(x, tf.float32), tf.constant([1.0], tf.float64)).numpy().tolist() == [[0.0, 1.875]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot bitcast from 4 to 3"):   # TF 2.21's text
        run(lambda x: tf.bitcast(x, tf.int32), tf.constant(np.arange(3, dtype=np.uint8)))
    # TF 2.21: web-safe base64, unpadded unless pad=True
    assert run(lambda s: tf.io.encode_base64(s), tf.constant([b"hello?>", b""])).numpy().tolist() == [b"aGVsbG8_Pg",
                                                                                                     b""]
    assert tf.io.encode_base64(b"hello?>", pad=True).numpy() == b"aGVsbG8_Pg=="
    assert run(lambda s: tf.io.decode_base64(s), tf.constant([b"aGVsbG8_Pg", b"aGVsbG8_Pg=="])).numpy().tolist() == \
        [b"hello?>"] * 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="Base64 string length cannot be 1 modulo 4"):
        run(lambda s: tf.io.decode_base64(s), tf.constant(b"a"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid character found in base64"):
        run(lambda s: tf.io.decode_base64(s), tf.constant(b"aGVsbG8/Pg=="))
    import gzip
    import zlib
    assert run(lambda s: tf.io.decode_compressed(s, compression_type="ZLIB"),
               tf.constant([zlib.compress(b"abc")])).numpy().tolist() == [b"abc"]
    assert tf.io.decode_compressed(gzip.compress(b"abcd", mtime=0), compression_type="GZIP").numpy() == b"abcd"
    assert tf.io.decode_compressed(b"xyz").numpy() == b"xyz"
    with pytest.raises(tf.errors.DataLossError, match="inflate\\(\\) failed with error -3: incorrect header check"):
        run(lambda s: tf.io.decode_compressed(s, compression_type="ZLIB"), tf.constant(b"xyz"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="supported compressions"):
        tf.io.decode_compressed(b"xyz", compression_type="BZ2")


def test_small_names(tmp_path):
    assert tf.guarantee_const(tf.constant([1.0, 2.0])).numpy().tolist() == [1.0, 2.0]
    A = tf.AggregationMethod   # TF 2.21: 0, 0, 1, 2
    assert (A.ADD_N, A.DEFAULT, A.EXPERIMENTAL_TREE, A.EXPERIMENTAL_ACCUMULATE_N) == (0, 0, 1, 2)
    for n in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / n).write_text("")
    # TF 2.21: sorted across patterns; none matching: an empty string vector
    assert tf.io.matching_files(str(tmp_path / "*.txt")).numpy().tolist() == [str(tmp_path / n).encode()
                                                                               for n in ("a.txt", "b.txt")]
    assert tf.io.matching_files([str(tmp_path / "*.csv"), str(tmp_path / "a*")]).numpy().tolist() == [
        str(tmp_path / n).encode() for n in ("a.txt", "c.csv")]
    got = tf.io.matching_files(str(tmp_path / "*.zzz"))
    assert got.shape == (0,) and got.dtype == tf.string
    assert len(tf.function(lambda p: tf.io.matching_files(p))(tf.constant(str(tmp_path / "*"))).numpy()) == 3
    o = tf.train.CheckpointOptions(experimental_io_device="/job:localhost")
    assert o.experimental_io_device == "/job:localhost" and o.enable_async is False   # TF 2.21
    v = tf.Variable(1.0)
    path = tf.train.Checkpoint(v=v).save(str(tmp_path / "ck"), options=o)
    tf.train.Checkpoint(v=v).restore(path, options=o)


@pytest.mark.parametrize("compiled", [False, True])
def test_sufficient_statistics_and_global_batch_norm(compiled):
    run = (lambda f, *a: tf.function(f)(*a)) if compiled else (lambda f, *a: f(*a))
    x = tf.constant([[1.0, 2.0, 4.0], [3.0, 5.0, 7.0]])
    c, m, v, s = run(lambda x: tf.nn.sufficient_statistics(x, [0]), x)
    # TF 2.21: [2.0, [4, 7, 11], [10, 29, 65], None] and, shifted by 1 over both axes, [6, [[16]], [[66]], 1]
    assert (c.numpy(), m.numpy().tolist(), v.numpy().tolist(), s) == (2.0, [4, 7, 11], [10, 29, 65], None)
    c, m, v, s = run(lambda x: tf.nn.sufficient_statistics(x, [0, 1], shift=1.0, keepdims=True), x)
    assert (c.numpy(), m.numpy().tolist(), v.numpy().tolist(), s.numpy()) == (6.0, [[16.0]], [[66.0]], 1.0)
    args = (tf.constant([1.0, 2.0, 3.0]), tf.constant([1.0, 4.0, 9.0]), tf.constant([0.1, 0.2, 0.3]),
            tf.constant([2.0, 1.0, 0.5]))
    # TF 2.21's values
    np.testing.assert_allclose(run(lambda x: tf.nn.batch_norm_with_global_normalization(x, *args, 1e-3, True), x),
                               [[0.10000002, 0.19999999, 0.4666574], [4.098002, 1.6998127, 0.96662956]], rtol=1e-6)
    np.testing.assert_allclose(run(lambda x: tf.nn.batch_norm_with_global_normalization(x, *args, 1e-3, False), x),
                               [[0.10000002, 0.19999999, 0.6333148], [2.099001, 1.6998127, 1.633259]], rtol=1e-6)
    with tf.GradientTape() as tape:   # d/dx of the sums: 1 and 2 (x - shift)
        tape.watch(x)
        _, m, v, _ = tf.nn.sufficient_statistics(x, [0, 1], shift=1.0)
        total = m + v
    np.testing.assert_allclose(tape.gradient(total, x).numpy(), 1 + 2 * (x.numpy() - 1.0))


@pytest.mark.parametrize("compiled", [False, True])
def test_stateless_random_flips(compiled):
    img = tf.reshape(tf.range(24, dtype=tf.float32), (2, 3, 4, 1))
    run = (lambda f, *a: tf.function(f)(*a)) if compiled else (lambda f, *a: f(*a))
    # TF 2.21's images for these seeds (its Philox draws; a batch flips where round(u) is 1)
    assert run(lambda x: tf.image.stateless_random_flip_left_right(x, seed=(1, 2)), img).numpy()[:, 0, :, 0].tolist() \
        == [[3, 2, 1, 0], [12, 13, 14, 15]]
    assert run(lambda x: tf.image.stateless_random_flip_up_down(x, seed=(3, 4)), img).numpy()[:, :, 0, 0].tolist() \
        == [[0, 4, 8], [20, 16, 12]]
    assert tf.image.stateless_random_flip_left_right(img[0], seed=(5, 6)).numpy()[0, :, 0].tolist() == [0, 1, 2, 3]
    firsts = [float(tf.image.stateless_random_flip_left_right(img[0], seed=(s, 0)).numpy()[0, 0, 0]) for s in range(8)]
    assert firsts == [3.0, 0.0, 0.0, 3.0, 0.0, 3.0, 3.0, 0.0]   # one image flips where u < 0.5


def test_data_experimental_optional_snapshot_reducer_padding(tmp_path):
    E = tf.data.experimental
    ds = tf.data.Dataset.range(10)
    snap = ds.apply(E.snapshot(str(tmp_path / "snap")))
    assert list(snap.as_numpy_iterator()) == list(range(10)) and int(snap.cardinality().numpy()) == 10
    # TF 2.21: keys x % 3, states summed then times 10: [120, 150, 180]
    r = E.Reducer(init_func=lambda k: np.int64(0), reduce_func=lambda s, x: s + x, finalize_func=lambda s: s * 10)
    assert sorted(ds.apply(E.group_by_reducer(lambda x: x % 3, r)).as_numpy_iterator()) == [120, 150, 180]
    it = iter(tf.data.Dataset.range(2))
    o = E.get_next_as_optional(it)
    assert bool(o.has_value().numpy()) and int(o.get_value().numpy()) == 0
    next(it)
    o = it.get_next_as_optional()
    assert not bool(o.has_value().numpy()) and o.element_spec == tf.TensorSpec([], tf.int64)
    with pytest.raises(tf.errors.InvalidArgumentError, match="The given optional does not have a value"):
        o.get_value()   # TF 2.21's text
    v = E.Optional.from_value({"a": tf.constant(1), "b": (2.0, "x")})
    assert v.element_spec == {"a": tf.TensorSpec([], tf.int32), "b": (tf.TensorSpec([], tf.float32),
                                                                      tf.TensorSpec([], tf.string))}
    # TF 2.21: [{'a': 1, 'valid': True}, {'a': 2, 'valid': True}, {'a': 0, 'valid': False} x 2]
    d = tf.data.Dataset.from_tensor_slices({"a": [1, 2]}).apply(E.pad_to_cardinality(4))
    assert [(int(x["a"]), bool(x["valid"])) for x in d.as_numpy_iterator()] == [(1, True), (2, True), (0, False),
                                                                                (0, False)]
    with pytest.raises(ValueError, match="`pad_to_cardinality` requires its input dataset to be a dictionary"):
        tf.data.Dataset.range(3).apply(E.pad_to_cardinality(4))
    with pytest.raises(ValueError, match=r"less than the target cardinality \(1\), but has cardinality 2"):
        tf.data.Dataset.from_tensor_slices({"a": [1, 2]}).apply(E.pad_to_cardinality(1))
    ex = tf.train.Example(features=tf.train.Features(feature={"x": tf.train.Feature(
        float_list=tf.train.FloatList(value=[1.0, 2.0]))})).SerializeToString()
    pds = tf.data.Dataset.from_tensor_slices([ex, ex]).batch(2).apply(
        E.parse_example_dataset({"x": tf.io.FixedLenFeature([2], tf.float32)}))
    assert [b["x"].tolist() for b in pds.as_numpy_iterator()] == [[[1.0, 2.0], [1.0, 2.0]]]


# --- keras.metrics at-constraint family (Keras 3's SensitivitySpecificityBase; TF 2.21's values) -------------

# TF 2.21 on the data below: (first update, after a weighted second, num_thresholds=7, num_thresholds=1, class_id=1)
_AT_CONSTRAINT = {
    "SensitivityAtSpecificity": (0.7, [0.3809524, 0.5837571, 0.14285715, 0.0, 0.47368422], "specificity"),
    "SpecificityAtSensitivity": (0.8, [0.47368422, 0.5203453, 0.47368422, 0.0, 0.2857143], "sensitivity"),
    "PrecisionAtRecall": (0.6, [0.67741936, 0.6796085, 0.6666667, 0.0, 0.59090906], "recall"),
    "RecallAtPrecision": (0.75, [0.14285715, 0.138038, 0.0, 0.0, 0.47368422], "precision"),
}


@pytest.mark.parametrize("cls", sorted(_AT_CONSTRAINT))
def test_metrics_at_constraint(cls):
    rng = np.random.RandomState(0)
    yt = (rng.rand(40) > 0.6).astype(np.float32)
    yp = np.clip(yt * 0.3 + rng.rand(40) * 0.7, 0, 1).astype(np.float32)
    w = rng.rand(40).astype(np.float32)
    v, want, arg = _AT_CONSTRAINT[cls]
    make = getattr(tf.keras.metrics, cls)
    m = make(v)
    m.update_state(yt, yp)
    got = [m.result().numpy()]
    tf.function(lambda a, b, c: m.update_state(a, b, sample_weight=c))(yt[:10], yp[:10][::-1], w[:10])   # compiled
    got.append(m.result().numpy())
    for kw, (t, p) in ((dict(num_thresholds=7), (yt, yp)), (dict(num_thresholds=1), (yt, yp)),
                       (dict(class_id=1), (np.stack([yt, 1 - yt], 1), np.stack([yp, 1 - yp], 1)))):
        mk = make(v, **kw)
        mk.update_state(t, p)
        got.append(mk.result().numpy())
    np.testing.assert_array_equal(np.float32(got), np.float32(want))
    cfg = m.get_config()
    assert cfg["name"] == m.name and cfg[arg] == v and cfg["num_thresholds"] == 200 and cfg["class_id"] is None
    # a constraint met exactly (TF 2.21: >= counts it): 1.0 for these four points
    exact = make(0.5)
    exact.update_state([0, 0, 1, 1], [0.1, 0.6, 0.4, 0.8])
    if cls in ("SensitivityAtSpecificity", "PrecisionAtRecall"):
        assert exact.result().numpy() == 1.0
    with pytest.raises(ValueError, match=rf"Argument `{arg}` must be in the range \[0, 1\]. Received: {arg}=1.5"):
        make(1.5)
    with pytest.raises(ValueError, match="Argument `num_thresholds` must be an integer > 0"):
        make(0.5, num_thresholds=0)


@pytest.mark.parametrize("compiled", [False, True])
def test_sparsemax(compiled):
    x = tf.constant([[1.0, 2.0, 0.5], [0.1, 0.1, 0.1], [3.0, -1.0, 2.9]])
    f = tf.function(tf.keras.activations.sparsemax) if compiled else tf.keras.activations.sparsemax
    # TF 2.21's values (Keras 3.15's tau sums the cumulative sums: [0.1] * 3 -> 0.2333 each, kept)
    np.testing.assert_allclose(f(x).numpy(), [[0.0, 1.0, 0.0], [0.23333332, 0.23333332, 0.23333332], [0.0, 0.0, 0.0]],
                               rtol=1e-6)
    np.testing.assert_array_equal(tf.keras.ops.sparsemax(x, axis=0).numpy(), [[0, 1, 0], [0, 0, 0], [1, 0, 1]])
    assert tf.keras.activations.get("sparsemax") is tf.keras.activations.sparsemax
    # gradient vs central differences (float64, away from support changes)
    x64 = np.array([[0.2, 0.5, -2.0, -3.0]])   # support of 2: outputs [0.1, 0.4, 0, 0], no kink nearby
    w = np.array([[1.0, -2.0, 0.5, 3.0]])
    with tf.GradientTape() as tape:
        t = tf.constant(x64)
        tape.watch(t)
        y = tf.reduce_sum(tf.keras.activations.sparsemax(t) * w)
    g = tape.gradient(y, t).numpy()

    def fsum(a):
        return float(np.sum(tf.keras.activations.sparsemax(tf.constant(a)).numpy() * w))
    eps = 1e-6
    fd = [(fsum(x64 + eps * e) - fsum(x64 - eps * e)) / (2 * eps) for e in np.eye(4).reshape(4, 1, 4)]
    np.testing.assert_allclose(g.ravel(), fd, rtol=1e-6, atol=1e-8)


def test_lamb_values():
    def run(**kw):
        v, b = tf.Variable([1.0, -2.0, 0.5]), tf.Variable([0.0, 0.0])
        opt = tf.keras.optimizers.Lamb(**kw)
        for g in ([0.1, -0.2, 0.3], [0.5, 0.5, -0.5], [-1.0, 2.0, 0.0]):
            opt.apply_gradients([(tf.constant(g), v), (tf.constant(g[:2]), b)])
        return v.numpy(), b.numpy()
    # TF 2.21, three steps (the second variable starts at 0: trust ratio 1)
    v, b = run(learning_rate=0.1)
    np.testing.assert_array_equal(v, np.float32([0.7614801526069641, -2.1491236686706543, 0.4895079731941223]))
    np.testing.assert_array_equal(b, np.float32([-0.10740077495574951, 0.07984837889671326]))
    v, b = run(learning_rate=0.01, beta_1=0.8, beta_2=0.99, epsilon=1e-3, weight_decay=0.1)
    np.testing.assert_array_equal(v, np.float32([0.9738101363182068, -2.0111141204833984, 0.499126672744751]))
    np.testing.assert_array_equal(b, np.float32([-0.009947593323886395, 0.00973353162407875]))
    w = tf.Variable([1.0, 2.0])
    opt = tf.keras.optimizers.Lamb(0.1)
    step = tf.function(lambda g: opt.apply_gradients([(g, w)]))
    for g in ([0.1, -0.2], [0.3, 0.3]):
        step(tf.constant(g))
    np.testing.assert_array_equal(w.numpy(), np.float32([0.6182372570037842, 2.097752809524536]))   # TF 2.21
    cfg = tf.keras.optimizers.Lamb().get_config()
    assert (cfg["beta_1"], cfg["beta_2"], cfg["epsilon"]) == (0.9, 0.999, 1e-7)
    assert isinstance(tf.keras.optimizers.get("lamb"), tf.keras.optimizers.Lamb)


@pytest.mark.parametrize("compiled", [False, True])
def test_dynamic_partition(compiled):
    run = (lambda f, *a: tf.function(f)(*a)) if compiled else (lambda f, *a: f(*a))
    data = tf.constant([10, 20, 30, 40, 50])
    # TF 2.21's partitions (an empty one included) and shapes
    out = run(lambda d, p: tf.dynamic_partition(d, p, 3), data, tf.constant([0, 0, 2, 2, 0]))
    assert [o.numpy().tolist() for o in out] == [[10, 20, 50], [], [30, 40]] and out[1].dtype == tf.int32
    out = run(lambda d, p: tf.dynamic_partition(d, p, 2), tf.reshape(tf.range(12.0), (3, 2, 2)),
              tf.constant([[1, 0], [0, 0], [1, 1]]))
    assert [o.numpy().tolist() for o in out] == [[[2.0, 3.0], [4.0, 5.0], [6.0, 7.0]],
                                                 [[0.0, 1.0], [8.0, 9.0], [10.0, 11.0]]]
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        a, b = tf.dynamic_partition(x, [1, 0, 1, 0], 2)
        y = tf.reduce_sum(a * tf.constant([1.0, 2.0])) + tf.reduce_sum(b * tf.constant([3.0, 5.0]))
    assert tape.gradient(y, x).numpy().tolist() == [3.0, 1.0, 5.0, 2.0]   # TF 2.21
    with pytest.raises(tf.errors.InvalidArgumentError, match="data.shape must start with partitions.shape"):
        run(lambda d: tf.dynamic_partition(d, tf.constant([0, 1]), 2), data)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"partitions\[2\] = 3 is not in \[0, 2\)"):
        tf.dynamic_partition(data, [0, 0, 3, 1, 0], 2)   # TF 2.21's text (eagerly)


def test_dynamic_stitch():
    # TF 2.21: later writes win, gaps are zero, the gradient gathers (overwritten entries too)
    assert tf.dynamic_stitch([[0, 2], [1, 3]], [[1.0, 3.0], [2.0, 4.0]]).numpy().tolist() == [1.0, 2.0, 3.0, 4.0]
    assert tf.dynamic_stitch([[0, 1], [1, 2]], [[1.0, 2.0], [20.0, 30.0]]).numpy().tolist() == [1.0, 20.0, 30.0]
    assert tf.dynamic_stitch([[0, 3]], [[1.0, 4.0]]).numpy().tolist() == [1.0, 0.0, 0.0, 4.0]
    assert tf.dynamic_stitch([[2], [0, 1]], [[[5, 6]], [[1, 2], [3, 4]]]).numpy().tolist() == [[1, 2], [3, 4], [5, 6]]
    assert tf.dynamic_stitch([1, 0], [7, 8]).numpy().tolist() == [8, 7]
    p, q = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch([p, q])
        y = tf.reduce_sum(tf.dynamic_stitch([[0, 1], [1, 2]], [p, q]) * tf.constant([1.0, 10.0, 100.0]))
    assert [g.numpy().tolist() for g in tape.gradient(y, [p, q])] == [[1.0, 10.0], [10.0, 100.0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] is out of range"):
        tf.dynamic_stitch([[0, -1]], [[1.0, 2.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"data\[0\].shape = \[3\] does not start with"):
        tf.dynamic_stitch([[0, 1]], [[1.0, 2.0, 3.0]])
    # traced (wave 24): the length is a value, TF 2.21's values and gradient (overwritten entries included)
    f = tf.function(lambda a, b: tf.dynamic_stitch([a, b], [tf.cast(a, tf.float32), tf.cast(b, tf.float32) * 10]))
    assert f(tf.constant([0, 2]), tf.constant([2, 4])).numpy().tolist() == [0.0, 0.0, 20.0, 0.0, 40.0]

    @tf.function
    def grads(i0, i1, d0, d1):
        with tf.GradientTape() as tape:
            tape.watch([d0, d1])
            y = tf.dynamic_stitch([i0, i1], [d0, d1])
            loss = tf.reduce_sum(y * tf.range(1.0, 1.0 + tf.cast(tf.shape(y)[0], tf.float32)))
        return tape.gradient(loss, [d0, d1])
    assert [g.numpy().tolist() for g in grads(tf.constant([0, 2]), tf.constant([2, 4]), p, q)] == [[1.0, 3.0],
                                                                                                  [3.0, 5.0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="dynamic_stitch: an index is negative"):
        tf.function(lambda i, d: tf.dynamic_stitch([i], [d]))(tf.constant([0, -1]), p)


@pytest.mark.parametrize("compiled", [False, True])
def test_space_to_batch_and_back(compiled):
    run = (lambda f, *a: tf.function(f)(*a)) if compiled else (lambda f, *a: f(*a))
    x = tf.reshape(tf.range(1.0, 17.0), (1, 4, 4, 1))
    y = run(lambda v: tf.space_to_batch_nd(v, [2, 2], [[0, 0], [0, 0]]), x)
    # TF 2.21's values
    assert y.numpy()[..., 0].tolist() == [[[1, 3], [9, 11]], [[2, 4], [10, 12]], [[5, 7], [13, 15]], [[6, 8], [14, 16]]]
    z = run(lambda v: tf.space_to_batch(v, [2, 2], [[1, 1], [0, 0]]), x)
    assert z.shape == (4, 3, 2, 1) and z.numpy()[0, :, :, 0].tolist() == [[0, 0], [5, 7], [13, 15]]
    assert tf.nn.space_to_batch(x, [2, 2], [[0, 0], [0, 0]]).shape == \
        (4, 2, 2, 1)
    assert run(lambda v: tf.space_to_batch_nd(v, [3], [[0, 0]]), tf.reshape(tf.range(12), (2, 6))).numpy().tolist() \
        == [[0, 3], [6, 9], [1, 4], [7, 10], [2, 5], [8, 11]]
    np.testing.assert_array_equal(run(lambda v: tf.batch_to_space(v, [2, 2], [[0, 0], [0, 0]]), y).numpy(), x.numpy())
    assert run(lambda v: tf.batch_to_space(v, [2, 2], [[0, 1], [1, 0]]), y).numpy()[0, :, :, 0].tolist() == \
        [[2, 3, 4], [6, 7, 8], [10, 11, 12]]
    with tf.GradientTape() as tape:
        tape.watch(x)
        zz = tf.space_to_batch_nd(x, [2, 2], [[1, 1], [0, 2]])
        s = tf.reduce_sum(zz * tf.reshape(tf.range(float(np.prod(zz.shape))), zz.shape))
    # TF 2.21's gradient
    assert tape.gradient(s, x).numpy().ravel().tolist() == [18, 27, 19, 28, 3, 12, 4, 13, 21, 30, 22, 31, 6, 15, 7, 16]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"padded_shape\[0\]=5 is not divisible by block_shape"):
        tf.space_to_batch_nd(tf.zeros((1, 5, 1)), [2], [[0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Input batch dimension \(3\) is not divisible"):
        tf.batch_to_space(tf.zeros((3, 2, 2, 1)), [2, 2], [[0, 0], [0, 0]])
    p, c = tf.required_space_to_batch_paddings([5, 7], [2, 3], base_paddings=[[1, 0], [0, 2]])
    assert (p.numpy().tolist(), c.numpy().tolist()) == ([[1, 0], [0, 2]], [[0, 0], [0, 0]])   # TF 2.21
    p, c = tf.required_space_to_batch_paddings([5, 7], [2, 3])
    assert (p.numpy().tolist(), c.numpy().tolist()) == ([[0, 1], [0, 2]], [[0, 1], [0, 2]])


@pytest.mark.parametrize("compiled", [False, True])
def test_nn_pool_and_conv_transpose(compiled):
    run = (lambda f, *a: tf.function(f)(*a)) if compiled else (lambda f, *a: f(*a))
    x = tf.reshape(tf.range(1.0, 33.0), (1, 4, 4, 2))
    # TF 2.21's values
    assert run(lambda v: tf.nn.pool(v, [2, 2], "MAX", strides=[2, 2]), x).numpy().ravel().tolist() == \
        [11, 12, 15, 16, 27, 28, 31, 32]
    assert run(lambda v: tf.nn.pool(v, [3, 3], "AVG", strides=[1, 1], padding="SAME"), x).numpy().ravel()[:6].tolist() \
        == [6, 7, 7, 8, 9, 10]
    assert run(lambda v: tf.nn.pool(v, [3], "MAX", strides=[2]), tf.reshape(tf.range(8.0), (1, 8, 1))
               ).numpy().ravel().tolist() == [2, 4, 6]
    assert run(lambda v: tf.nn.pool(v, [1, 2, 2], "AVG", strides=[1, 1, 2]), tf.reshape(tf.range(16.0), (1, 2, 2, 4, 1))
               ).numpy().ravel().tolist() == [2.5, 4.5, 10.5, 12.5]
    # dilated windows (TF 2.21's with_space_to_batch results)
    assert run(lambda v: tf.nn.pool(v, [2, 2], "MAX", dilations=[2, 2]), x).numpy().ravel().tolist() == \
        [21, 22, 23, 24, 29, 30, 31, 32]
    assert run(lambda v: tf.nn.pool(v, [2, 2], "AVG", dilations=[2, 2]), x).numpy().ravel().tolist() == \
        [11, 12, 13, 14, 19, 20, 21, 22]
    assert tf.nn.pool(tf.reshape(tf.range(10.0), (1, 10, 1)), [3], "AVG", dilations=[3]).numpy().ravel().tolist() == \
        [3, 4, 5, 6]
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.nn.pool(x, [2, 2], "MAX", dilations=[2, 1]) * tf.reshape(tf.range(12.0), (1, 2, 3, 2)))
    assert tape.gradient(y, x).numpy().ravel().tolist() == [0.0] * 19 + [1, 2, 3, 4, 5, 0, 0, 6, 7, 8, 9, 10, 11]
    with pytest.raises(ValueError, match="2-D MIN pooling is not supported"):
        tf.nn.pool(x, [2, 2], "MIN")
    w = tf.reshape(tf.range(1.0, 9.0), (2, 2, 1, 2)) / 10
    y2 = run(lambda v: tf.nn.conv_transpose(v, w, [1, 8, 8, 1], strides=2), x)
    np.testing.assert_allclose(y2.numpy().ravel()[:6], [0.5, 1.1, 1.1, 2.5, 1.7, 3.9], rtol=1e-6)
    assert y2.shape == (1, 8, 8, 1)
    assert run(lambda v: tf.nn.conv_transpose(v, tf.ones((3, 1, 2)), [1, 8, 1], strides=2),
               tf.reshape(tf.range(8.0), (1, 4, 2))).numpy().ravel().tolist() == [1, 1, 6, 5, 14, 9, 22, 13]
    with pytest.raises(ValueError, match="`output_shape` must be of length 3, 4 or 5"):
        tf.nn.conv_transpose(x, w, [1, 8], strides=2)


@pytest.mark.parametrize("compiled", [False, True])
def test_fingerprint(compiled):
    run = (lambda f, *a: tf.function(f)(*a)) if compiled else (lambda f, *a: f(*a))
    fp = lambda x: tf.fingerprint(x)   # noqa: E731
    # TF 2.21's bytes (FarmHash Fingerprint64 per row, little-endian)
    assert run(fp, tf.constant([[1, 2], [3, 4]])).numpy().tolist() == [[76, 18, 253, 133, 168, 204, 240, 10],
                                                                       [254, 162, 60, 240, 103, 244, 53, 255]]
    assert run(fp, tf.constant([[[1, 2]], [[3, 4]]], tf.int64)).numpy().tolist() == [
        [13, 174, 106, 137, 46, 191, 85, 144], [243, 64, 135, 33, 239, 128, 109, 162]]
    assert run(fp, tf.constant([1.5, 2.5])).numpy().tolist() == [[64, 181, 56, 72, 223, 224, 189, 72],
                                                                 [215, 206, 200, 229, 128, 42, 67, 207]]
    assert run(fp, tf.constant([b"abc", b""])).numpy().tolist() == [[105, 243, 231, 116, 160, 179, 165, 36],
                                                                    [79, 64, 144, 47, 59, 106, 225, 154]]
    out = run(fp, tf.constant([[b"a", b"bc"]]))
    assert out.dtype == tf.uint8 and out.numpy().tolist() == [[85, 27, 103, 37, 147, 177, 144, 87]]
    assert tf.fingerprint(tf.zeros((0, 3))).shape == (0, 8)
    with pytest.raises(tf.errors.InvalidArgumentError, match="`data` should have at least one dimension"):
        tf.fingerprint(tf.constant(3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unsupported fingerprint method: md5"):
        tf.fingerprint(tf.constant([1]), method="md5")


def test_checkpoints_iterator_and_keras_config(tmp_path):
    v = tf.Variable(1.0)
    ck = tf.train.Checkpoint(v=v)
    p1 = ck.save(str(tmp_path / "c"))
    # TF 2.21: the current checkpoint, then (no new one within the timeout) the end
    assert list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.5)) == [p1]
    calls = []

    def timeout_fn():   # TF 2.21: False keeps waiting (a new checkpoint appears meanwhile), True ends
        calls.append(1)
        if len(calls) == 1:
            ck.save(str(tmp_path / "c"))
            return False
        return True
    got = list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.3, timeout_fn=timeout_fn))
    assert [g.rsplit("/", 1)[1] for g in got] == ["c-1", "c-2"] and len(calls) == 2
    assert list(tf.train.checkpoints_iterator(str(tmp_path / "none"), timeout=0.2)) == []
    # keras.utils.Config (Keras 3.15's behaviour, TF 2.21)
    c = tf.keras.utils.Config(a=1, b={"x": 2})
    c.d = 3
    assert (c.a, c["b"], c.d, c.as_dict(), c.to_json()) == (1, {"x": 2}, 3, {"a": 1, "b": {"x": 2}, "d": 3},
                                                          '{"a": 1, "b": {"x": 2}, "d": 3}')
    assert repr(c) == "<Config {'a': 1, 'b': {'x': 2}, 'd': 3}>" and list(c) == ["a", "b", "d"] and "a" in c
    c.freeze()
    with pytest.raises(ValueError, match="Cannot mutate attribute\\(s\\) because the config is frozen."):
        c.e = 5
    with pytest.raises(ValueError, match="frozen"):
        c["f"] = 5
    c.unfreeze()
    c.e = 5
    assert c.e == 5 and len(c) == 4
    with pytest.raises(AttributeError, match="Unknown attribute: 'zz'."):
        c.zz


@pytest.mark.parametrize("compiled", [False, True])
def test_linalg_expm(compiled):
    run = (lambda f, *a: tf.function(f)(*a)) if compiled else (lambda f, *a: f(*a))
    rng = np.random.RandomState(0)
    # TF 2.21's first four entries for float32 / float64 (norms across every Pade order and squarings)
    want = {0.01: ([1.0178895, 0.0040675355, 0.009849678, 0.022773324],
                   [1.0178895970065966, 0.00406753556070786, 0.00984967778846907, 0.02277332508362302]),
            0.3: ([0.82080114, -0.10288361, -0.718589, 0.13552071],
                  [0.8208011436333471, -0.10288363098857488, -0.7185889484102306, 0.13552073329782421]),
            1.5: ([10.378637, 2.3030505, -3.305798, 2.0720575],
                  [10.378637503769689, 2.3030500702682, -3.3057974328546798, 2.0720570150102358]),
            5.0: ([2.0433078, 1.1185262, -0.24913973, 1.464158],
                  [2.043308812205118, 1.1185270451400782, -0.2491396301655525, 1.4641587112919454]),
            40.0: ([3.9531416e+24, -2.1056404e+24, 1.0873758e+24, -1.0562007e+24],
                   [3.9530919130121610e+24, -2.1056143796500866e+24, 1.0873622689175021e+24, -1.0561874075074322e+24])}
    f = lambda a: tf.linalg.expm(a)   # noqa: E731
    for scale, (w32, w64) in want.items():
        a = rng.randn(2, 3, 3) * scale
        # float32: TF's and NumPy's matmuls round differently; the squarings amplify it (2e-5 at 40)
        np.testing.assert_allclose(run(f, tf.constant(a.astype(np.float32))).numpy().ravel()[:4], w32, rtol=2e-5)
        np.testing.assert_allclose(run(f, tf.constant(a)).numpy().ravel()[:4], w64, rtol=1e-13)
    assert tf.linalg.expm(tf.zeros((2, 2))).numpy().tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert np.isnan(tf.linalg.expm(tf.constant([[np.inf, 0.0], [0.0, 1.0]])).numpy()).all()   # TF 2.21: all NaN
    x = tf.constant([[0.1, 0.4], [-0.3, 0.2]], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.linalg.expm(x) * tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[0.9123832059396554, 1.4211480923318762],
                                                             [4.56068728047007, 4.61578867159599]], rtol=1e-13)
    with pytest.raises(ValueError, match="tf.linalg.expm does not support matrices of type"):
        tf.linalg.expm(tf.constant([[1, 2], [3, 4]]))


@pytest.mark.parametrize("compiled", [False, True])
def test_linalg_tridiagonal(compiled):
    run = (lambda f, *a: tf.function(f)(*a)) if compiled else (lambda f, *a: f(*a))
    d = tf.constant([[1.0, 2.0, 3.0, 99.0], [4.0, 5.0, 6.0, 7.0], [99.0, 8.0, 9.0, 10.0]])   # 99: ignored, as TF
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    want_mm = [[7, 12], [33, 48], [78, 96], [99, 116]]   # TF 2.21
    assert run(lambda a, b: tf.linalg.tridiagonal_matmul(a, b), d, x).numpy().tolist() == want_mm
    assert run(lambda a, b: tf.linalg.tridiagonal_matmul((a[0], a[1], a[2]), b, diagonals_format="sequence"), d, x
               ).numpy().tolist() == want_mm
    m = tf.constant([[1.0, 2, 0], [3, 4, 5], [0, 6, 7]])
    assert tf.linalg.tridiagonal_matmul(m, tf.constant([[1.0], [2], [3]]), diagonals_format="matrix").numpy().tolist() \
        == [[5], [26], [33]]
    # TF 2.21's solutions (its Thomas algorithm; LAPACK's pivoted solve here: equal to float32 rounding)
    want = [[0.20555557, 0.39999998], [0.17777777, 0.40000004], [0.2333333, -0.6], [0.66666675, 2.0]]
    np.testing.assert_allclose(run(lambda a, b: tf.linalg.tridiagonal_solve(a, b), d, x).numpy(), want, rtol=2e-7 * 4)
    np.testing.assert_allclose(tf.linalg.tridiagonal_solve(d, tf.transpose(x), transpose_rhs=True).numpy(), want,
                               rtol=1e-6)
    np.testing.assert_allclose(tf.linalg.tridiagonal_solve((d[0], d[1], d[2]), x[:, 0], diagonals_format="sequence"
                                                           ).numpy(), [w[0] for w in want], rtol=1e-6)
    np.testing.assert_allclose(tf.linalg.tridiagonal_solve(m, tf.constant([[1.0], [2], [3]]), diagonals_format="matrix"
                                                           ).numpy(), [[0.0], [0.5], [0.0]], atol=1e-7)
    dd, xx = tf.constant(d), tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch([dd, xx])
        y = tf.reduce_sum(tf.linalg.tridiagonal_solve(dd, xx) * tf.reshape(tf.range(8.0), (4, 2)))
    gd, gx = tape.gradient(y, [dd, xx])
    # TF 2.21's gradients (the ignored corners get 0)
    np.testing.assert_allclose(gd.numpy(), [[-4.425926, -1.5111113, -4.1074076, 0.0],
                                            [-4.6185184, 2.162963, 0.63518524, -0.8111111],
                                            [0.0, 2.2592592, -0.88271606, 0.1277778]], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gx.numpy(), [[6.933333, 7.983333], [-3.4666665, -3.8666666], [1.3777777, 1.5944444],
                                            [0.26666665, 0.31666666]], rtol=1e-5)
    with pytest.raises(ValueError, match="Expected number of left-hand sided and right-hand sides to be equal, got 4 "
                                         "and 3"):
        tf.linalg.tridiagonal_solve(d, x[:3])
    with pytest.raises(ValueError, match="Unrecognized diagonals_format: bad"):
        tf.linalg.tridiagonal_matmul(d, x, diagonals_format="bad")


# --- CTC: tf.nn.ctc_loss, keras.ops.ctc_loss, keras.losses.ctc / CTC (TF 2.21's values and gradients) --------

@pytest.mark.parametrize("compiled", [False, True])
def test_ctc_loss(compiled):
    run = (lambda f, *a: tf.function(f)(*a)) if compiled else (lambda f, *a: f(*a))
    rng = np.random.RandomState(0)
    logits = rng.randn(3, 6, 5).astype(np.float32)
    labels = np.array([[1, 2, 2], [3, 0, 0], [4, 1, 0]], np.int32)
    ll, tl = np.array([3, 1, 2], np.int32), np.array([6, 4, 5], np.int32)
    # TF 2.21: repeated labels need a blank between them; frames past logit_length are ignored
    got = run(lambda x: tf.nn.ctc_loss(labels, x, ll, tl, logits_time_major=False, blank_index=0), tf.constant(logits))
    np.testing.assert_allclose(got.numpy(), [9.449357032775879, 4.516608238220215, 4.391458988189697], rtol=1e-6)
    got = run(lambda x: tf.nn.ctc_loss(labels[:2], x, ll[:2], tl[:2], blank_index=-1),
              tf.constant(np.transpose(logits, (1, 0, 2))[:, :2]))
    np.testing.assert_allclose(got.numpy(), [7.04135799407959, 5.036346912384033], rtol=1e-6)
    lab3 = np.array([[1, 3, 3], [3, 0, 0], [4, 1, 0]], np.int32)
    got = run(lambda x: tf.nn.ctc_loss(lab3, x, ll, tl, logits_time_major=False, blank_index=2), tf.constant(logits))
    np.testing.assert_allclose(got.numpy(), [7.2080278396606445, 3.750171422958374, 3.6557376384735107], rtol=1e-6)
    x = tf.constant(logits)
    with tf.GradientTape() as tape:
        tape.watch(x)
        total = tf.reduce_sum(tf.nn.ctc_loss(labels, x, ll, tl, logits_time_major=False, blank_index=0))
    g = tape.gradient(total, x).numpy()
    np.testing.assert_allclose(g[0, :2], [[-0.468485, -0.248177, 0.10289, 0.363515, 0.250256],   # TF 2.21
                                          [0.032596, -0.453118, 0.033831, 0.144738, 0.241953]], atol=2e-6)
    assert np.all(g[1, 4:] == 0)   # frames past logit_length get no gradient
    np.testing.assert_allclose(tf.keras.ops.ctc_loss(labels, logits, ll, tl).numpy(),
                               [9.449357032775879, 4.516608238220215, 4.391458988189697], rtol=1e-6)
    probs = tf.nn.softmax(tf.constant(logits))
    # TF 2.21: Keras feeds y_pred to tf.nn.ctc_loss as logits (its log_softmax applies to the probabilities)
    np.testing.assert_allclose(tf.keras.losses.ctc(labels.astype(np.float32), probs).numpy(),
                               [6.76978063583374, 6.588140487670898, 5.200069427490234], rtol=1e-6)
    loss = tf.keras.losses.CTC()
    assert loss.name == "ctc" and isinstance(tf.keras.losses.get("CTC"), tf.keras.losses.CTC)
    np.testing.assert_allclose(loss(labels, probs).numpy(), 6.185997009277344, rtol=1e-6)
    with tf.GradientTape() as tape:
        tape.watch(x)
        lk = tf.keras.losses.CTC()(labels, tf.nn.softmax(x))
    np.testing.assert_allclose(tape.gradient(lk, x).numpy()[1, 0], [-0.051113, 0.03194, 0.007028, -0.000778, 0.012923],
                               atol=2e-6)
    with pytest.raises(ValueError, match="Targets `y_true` are expected to be a tensor of shape"):
        tf.keras.losses.ctc(labels[0], probs)


def test_sparse_serialization():
    sp = tf.SparseTensor(indices=[[0, 1], [2, 3]], values=[1.5, 2.5], dense_shape=[3, 4])
    s = tf.io.serialize_sparse(sp)
    # TF 2.21's TensorProto bytes (indices, values, dense_shape)
    assert s.shape == (3,) and s.dtype == tf.string and [x.hex() for x in s.numpy()] == [
        "08091208120208021202080222200000000000000000010000000000000002000000000000000300000000000000",
        "080112041202080222080000c03f00002040", "0809120412020802221003000000000000000400000000000000"]
    m = tf.io.serialize_many_sparse(sp)
    # TF 2.21: one SparseTensor per row, the row dimension dropped (an empty row: indices of shape [0, 1])
    assert m.shape == (3, 3) and [x.hex() for x in m.numpy()[1]] == ["08091206120012020801", "080112021200",
                                                                     "080912041202080122080400000000000000"]
    assert m.numpy()[0, 1].hex() == "080112041202080122040000c03f"
    d = tf.io.deserialize_many_sparse(m, tf.float32)
    assert (d.indices.numpy().tolist(), d.values.numpy().tolist(), d.dense_shape.numpy().tolist()) == (
        [[0, 1], [2, 3]], [1.5, 2.5], [3, 4])
    sp2 = tf.SparseTensor(indices=[[0, 0, 1], [1, 2, 0]], values=[7, 8], dense_shape=[2, 3, 2])
    d2 = tf.io.deserialize_many_sparse(tf.io.serialize_many_sparse(sp2), tf.int32, rank=3)
    assert (d2.indices.numpy().tolist(), d2.values.numpy().tolist(), d2.dense_shape.numpy().tolist()) == (
        [[0, 0, 1], [1, 2, 0]], [7, 8], [2, 3, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Requested SparseTensor of type float32 but "
                                                             r"SparseTensor\[0\].values.dtype\(\) == int32"):
        tf.io.deserialize_many_sparse(tf.io.serialize_many_sparse(sp2), tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Rank of input SparseTensor should be > 1, but saw "
                                                             "rank: 1"):
        tf.io.serialize_many_sparse(tf.SparseTensor([[1]], [1.0], [3]))


def test_sets():
    a = tf.constant([[1, 2, 3, 3], [4, 5, 4, 6]])
    b = tf.constant([[3, 1, 9], [7, 7, 7]])

    def parts(sp):
        return sp.indices.numpy().tolist(), sp.values.numpy().tolist(), sp.dense_shape.numpy().tolist()
    # TF 2.21: sorted, duplicate-free rows; the last dimension the largest row's size
    assert parts(tf.sets.intersection(a, b)) == ([[0, 0], [0, 1]], [1, 3], [2, 2])
    assert parts(tf.sets.union(a, b)) == ([[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1], [1, 2], [1, 3]],
                                          [1, 2, 3, 9, 4, 5, 6, 7], [2, 4])
    assert parts(tf.sets.difference(a, b)) == ([[0, 0], [1, 0], [1, 1], [1, 2]], [2, 4, 5, 6], [2, 3])
    assert parts(tf.sets.difference(a, b, aminusb=False)) == ([[0, 0], [1, 0]], [9, 7], [2, 1])
    sa = tf.sparse.from_dense(a)
    assert tf.sets.size(sa).numpy().tolist() == [3, 3]
    assert parts(tf.sets.intersection(sa, b)) == ([[0, 0], [0, 1]], [1, 3], [2, 2])
    assert parts(tf.sets.union(tf.constant([["a", "b"]]), tf.constant([["c", "a"]]))) == (
        [[0, 0], [0, 1], [0, 2]], [b"a", b"b", b"c"], [1, 3])
    assert parts(tf.sets.intersection(tf.constant([[[1, 2], [3, 4]]]), tf.constant([[[2, 2], [5, 6]]]))) == (
        [[0, 0, 0]], [2], [1, 2, 1])
    assert parts(tf.sets.intersection(tf.constant([[1, 2]]), tf.constant([[3, 4]]))) == ([], [], [1, 0])
    with pytest.raises(TypeError, match="Expected `SparseTensor`"):
        tf.sets.size(a)
    with pytest.raises(TypeError, match="'a' has invalid dtype"):
        tf.sets.union(tf.constant([[1.0]]), tf.constant([[2.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Shape \[2\] has rank 1 < 2"):
        tf.sets.union(tf.constant([1, 2]), tf.constant([2, 3]))


@pytest.mark.parametrize("compiled", [False, True])
def test_max_pool_with_argmax(compiled):
    rng = np.random.RandomState(0)
    x = tf.constant(rng.randn(2, 5, 4, 3).astype(np.float32))
    run = (lambda f, *a: tf.function(f)(*a)) if compiled else (lambda f, *a: f(*a))
    # TF 2.21: shapes and the first flat indices ((y * width + x) * channels + c)
    for kw, shape, first in ((dict(ksize=2, strides=2, padding="VALID"), (2, 2, 2, 3),
                              [3, 4, 2, 6, 22, 11, 24, 28, 29, 30]),
                             (dict(ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME"), (2, 3, 2, 3),
                              [3, 4, 2, 6, 22, 11, 24, 43, 29, 21]),
                             (dict(ksize=2, strides=1, padding="VALID", include_batch_in_index=True), (2, 4, 3, 3),
                              [3, 4, 2, 3, 4, 8, 6, 22, 11, 24])):
        o, a = run(lambda v: tf.nn.max_pool_with_argmax(v, **kw), x)
        assert o.shape == shape and a.dtype == tf.int64 and a.numpy().ravel()[:10].tolist() == first
        flat = x.numpy().ravel() if kw.get("include_batch_in_index") else None
        if flat is not None:   # the indices point at the maxima
            np.testing.assert_array_equal(flat[a.numpy()], o.numpy())
    assert tf.nn.max_pool_with_argmax(x, 2, 2, "VALID", output_dtype=tf.int32)[1].dtype == tf.int32
    t = tf.constant([[[[1.0], [1.0]], [[1.0], [1.0]]]])
    assert tf.nn.max_pool_with_argmax(t, 2, 2, "VALID")[1].numpy().ravel().tolist() == [0]   # ties: the first
    with tf.GradientTape() as g:
        g.watch(x)
        o, _ = tf.nn.max_pool_with_argmax(x, 2, 2, "VALID")
        y = tf.reduce_sum(o * o)
    np.testing.assert_allclose(g.gradient(y, x).numpy().ravel()[:12], [0, 0, 1.95748, 4.48179, 3.73512, 0, 1.90018,
                                                                      0, 0, 0, 0, 2.90855], atol=1e-5)   # TF 2.21
    with pytest.raises(ValueError, match="`data_format` values other  than 'NHWC' are not supported"):
        tf.nn.max_pool_with_argmax(x, 2, 2, "VALID", data_format="NCHW")


def test_embedding_lookup_sparse():
    params = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 3)
    idx = [[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]]
    ids = tf.SparseTensor(idx, tf.constant([1, 3, 0, 0, 2], tf.int64), [4, 3])
    w = tf.SparseTensor(idx, [2.0, 1.0, 0.5, 0.5, 3.0], [4, 3])
    els = tf.nn.embedding_lookup_sparse
    # TF 2.21: rows up to the last one with ids (3 of 4), duplicates counted, empty rows zero
    want = {("sum", False): [[4.0, 4.666666, 5.333334], [0, 0, 0], [2.0, 3.0, 4.0]],
            ("sum", True): [[5.0, 6.0, 7.0], [0, 0, 0], [6.0, 7.333334, 8.666667]],
            ("mean", False): [[2.0, 2.333333, 2.666667], [0, 0, 0], [0.666667, 1.0, 1.333333]],
            ("mean", True): [[1.666667, 2.0, 2.333333], [0, 0, 0], [1.5, 1.833333, 2.166667]],
            ("sqrtn", False): [[2.828427, 3.299832, 3.771236], [0, 0, 0], [1.1547, 1.732051, 2.309401]],
            ("sqrtn", True): [[2.236068, 2.683282, 3.130495], [0, 0, 0], [1.946657, 2.379248, 2.811838]]}
    for (comb, weighted), v in want.items():
        np.testing.assert_allclose(els(params, ids, w if weighted else None, combiner=comb).numpy(), v, atol=2e-6)
    np.testing.assert_allclose(els(params, ids, None, combiner="sum", max_norm=1.0).numpy(),
                               [[0.942156, 1.141121, 1.340086], [0, 0, 0], [0.491539, 1.240129, 1.988719]], atol=2e-6)
    ids2 = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, -1, 2], tf.int64), [3, 2])
    w2 = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [1.0, 5.0, 0.0], [3, 2])
    safe = tf.nn.safe_embedding_lookup_sparse
    # TF 2.21: ids < 0 and weights <= 0 dropped; empty rows zero or default_id's row
    np.testing.assert_allclose(safe(params, ids2, w2).numpy(), [[1.0, 1.333333, 1.666667], [0, 0, 0], [0, 0, 0]],
                               atol=2e-6)
    np.testing.assert_allclose(safe(params, ids2, None, default_id=3).numpy(),
                               [[1.0, 1.333333, 1.666667], [3.0, 3.333333, 3.666667], [2.0, 2.333333, 2.666667]],
                               atol=2e-6)
    np.testing.assert_allclose(safe([params], ids2, None, combiner="sum").numpy(),
                               [[1.0, 1.333333, 1.666667], [0, 0, 0], [2.0, 2.333333, 2.666667]], atol=2e-6)
    with pytest.raises(ValueError, match="combiner must be one of 'mean', 'sqrtn' or 'sum', got max"):
        els(params, ids, None, combiner="max")
    p = tf.Variable(params)
    with tf.GradientTape() as g:
        y = tf.reduce_sum(els(p, ids, w, combiner="mean") * tf.constant([1.0, 2.0, 3.0]))
    # TF 2.21's gradient (an IndexedSlices there, dense here)
    np.testing.assert_allclose(g.gradient(y, p).numpy(), [[0.25, 0.5, 0.75], [0.666667, 1.333333, 2.0],
                                                          [0.75, 1.5, 2.25], [0.333333, 0.666667, 1.0]], atol=2e-6)


def test_eager_only_fills_refuse_inside_function():
    with pytest.raises(NotImplementedError, match="deserialize_many_sparse inside tapeflow.function"):
        tf.function(lambda s: tf.io.deserialize_many_sparse(s, tf.float32))(tf.constant([["a", "b", "c"]]))
    # (wave 25: dense numeric sets work traced, tests/test_dynamic_batch25.py; strings still refuse)
    with pytest.raises(NotImplementedError, match="tf.sets.union inside tapeflow.function"):
        tf.function(lambda a: tf.sets.union(a, a))(tf.constant([["a", "b"]]))
    with pytest.raises(NotImplementedError, match="embedding_lookup_sparse inside tapeflow.function"):
        tf.function(lambda a: tf.nn.embedding_lookup_sparse(a, None, None))(tf.constant([[1.0, 2.0]]))


def test_ctc_greedy_decoding():
    rng = np.random.RandomState(1)
    logits = rng.randn(6, 2, 4).astype(np.float32)   # time-major; the blank is the last class by default
    seq = np.array([6, 4], np.int32)
    (d,), neg = tf.nn.ctc_greedy_decoder(logits, seq)
    # TF 2.21: argmax per frame [[0, 2, 3, 0, 3, 3], [2, 2, 1, 1]], repeats merged, blanks dropped
    assert (d.indices.numpy().tolist(), d.values.numpy().tolist(), d.dense_shape.numpy().tolist()) == (
        [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], [0, 2, 0, 2, 1], [2, 3])
    assert neg.numpy().tolist() == [[-6.249914169311523], [-4.5536603927612305]]
    (d,), _ = tf.nn.ctc_greedy_decoder(logits, seq, merge_repeated=False)
    assert (d.values.numpy().tolist(), d.dense_shape.numpy().tolist()) == ([0, 2, 0, 2, 2, 1, 1], [2, 4])
    (d,), _ = tf.nn.ctc_greedy_decoder(logits, seq, blank_index=0)
    assert d.values.numpy().tolist() == [2, 3, 3, 2, 1]
    p = tf.nn.softmax(np.transpose(logits, (1, 0, 2)))
    dec, lp = tf.keras.ops.ctc_decode(p, seq, strategy="greedy")
    # TF 2.21: decodes padded with -1 to (top_paths, batch, time), the scores of Keras' probabilities-as-logits
    assert dec.dtype == tf.int32 and dec.numpy().tolist() == [[[2, 3, 3, -1, -1, -1], [2, 1, -1, -1, -1, -1]]]
    np.testing.assert_allclose(lp.numpy(), [[-3.6135830879211426], [-2.1827757358551025]], rtol=1e-6)
    dec, _ = tf.keras.ops.ctc_decode(p, seq, strategy="greedy", mask_index=3)
    assert dec.numpy().tolist() == [[[0, 2, 0, -1, -1, -1], [2, 1, -1, -1, -1, -1]]]
    with pytest.raises(ValueError, match="Invalid strategy"):      # beam search exists since wave 21 (nn21)
        tf.keras.ops.ctc_decode(p, seq, strategy="beam")


def test_summary_audio(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.audio import metadata as audio_md
    from tensorboard.util import tensor_util
    clips = np.array([[[0.5], [-0.25]], [[0.1], [0.2]]], np.float32)
    w = tf.summary.create_file_writer(str(tmp_path))
    with w.as_default():
        assert tf.summary.audio("snd", clips, 8000, step=3, max_outputs=1, description="d")
        with pytest.raises(ValueError, match="Unknown encoding: 'mp3'"):
            tf.summary.audio("bad", clips, 8000, step=1, encoding="mp3")
        with pytest.raises(ValueError, match="rank 3"):
            tf.summary.audio("bad", clips[0], 8000, step=1)
    w.flush()
    acc = EventAccumulator(str(tmp_path), size_guidance={"tensors": 0})
    acc.Reload()
    ev = acc.Tensors("snd")[0]
    rows = tensor_util.make_ndarray(ev.tensor_proto)
    # tensorboard's audio summary_v2 layout: (clips, 2) [wav bytes, label], plugin "audio", WAV encoding
    assert ev.step == 3 and rows.shape == (1, 2) and rows[0, 1] == b""
    assert rows[0, 0] == tf.audio.encode_wav(clips[0], 8000).numpy()
    md = acc.SummaryMetadata("snd")
    assert md.plugin_data.plugin_name == "audio" and md.summary_description == "d"
    assert md.plugin_data.content == audio_md.create_summary_metadata(
        None, None, audio_md.Encoding.Value("WAV")).plugin_data.content


def test_iterator_spec():
    s = tf.data.IteratorSpec(tf.TensorSpec([2], tf.float32))
    # TF 2.21: IteratorSpec(TensorSpec(shape=(2,), dtype=tf.float32, name=None),), equality by element spec
    assert repr(s) == "IteratorSpec(TensorSpec(shape=(2,), dtype=tf.float32, name=None),)"
    assert s == tf.data.IteratorSpec(tf.TensorSpec([2], tf.float32)) != tf.data.IteratorSpec(tf.TensorSpec([3]))
    assert hash(s) == hash(tf.data.IteratorSpec(tf.TensorSpec([2], tf.float32)))
    assert s.is_compatible_with(tf.data.IteratorSpec(tf.TensorSpec([2], tf.float32)))
    assert isinstance(iter(tf.data.Dataset.range(2)), s.value_type)
