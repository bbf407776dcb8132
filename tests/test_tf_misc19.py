"""Wave 19's smaller TF-parity fixes (lead), each against TF 2.21's behaviour."""
import numpy as np

import tapeflow as tf


def test_map_element_spec_traces_the_function_without_reading(tmp_path):
    # TF 2.21 (the data guide): a mapped CsvDataset of a file that does not exist yet has an
    # element_spec, TensorSpec(shape=(4,), dtype=tf.int32); the file is opened when iterated
    ds = tf.data.experimental.CsvDataset(str(tmp_path / "missing.csv"), [999] * 4).map(lambda *c: tf.stack(c))
    assert repr(ds.element_spec) == "TensorSpec(shape=(4,), dtype=tf.int32, name=None)"
    # unknown dims stay unknown: (None, 2) after batch(2) and a slice, as TF
    d3 = tf.data.Dataset.from_tensor_slices(tf.ones([4, 3])).batch(2).map(lambda x: x[:, :2])
    assert d3.element_spec.shape == (None, 2)
    # a function that cannot be traced (it reads a value) still gets a spec, from its first element
    d4 = tf.data.Dataset.range(3).map(lambda x: tf.constant([float(x.numpy())] * 2))
    assert d4.element_spec.shape == (2,) and d4.element_spec.dtype == tf.float32
    assert [v.tolist() for v in d4.as_numpy_iterator()] == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]


def test_keras_tree_and_config_as_keras_3():
    t = tf.keras.tree
    # TF 2.21's Keras 3 outputs
    assert t.flatten([1, None, {"b": 2, "a": 3}, (4,)]) == [1, None, 3, 2, 4]
    assert t.flatten_with_path({"b": [1, 2], "a": (3, None)}) == [(("a", 0), 3), (("a", 1), None), (("b", 0), 1),
                                                                (("b", 1), 2)]
    assert t.lists_to_tuples([1, [2, {"a": [3]}]]) == (1, (2, {"a": (3,)}))
    assert t.map_structure_up_to(([1], 2), lambda a, b: (a, b), ([10], 20), ([30], 40)) == ([(10, 30)], (20, 40))
    assert t.map_shape_structure(lambda s: s, {"x": (None, 3), "y": [(2,), (4, 5)]}) == \
        {"x": (None, 3), "y": [(2,), (4, 5)]}
    assert t.pack_sequence_as({"b": 0, "a": [0, 0]}, [1, 2, 3]) == {"b": 3, "a": [1, 2]}
    assert t.traverse(lambda x: None, [1, (2, 3)]) == [1, (2, 3)]
    assert t.traverse(lambda x: t.MAP_TO_NONE if x == 2 else None, [1, 2]) == [1, None]
    assert t.is_nested([1]) and not t.is_nested(1) and not t.is_nested(None)
    import pytest
    with pytest.raises(ValueError, match="Expected an instance of list"):
        t.assert_same_structure([1, [2]], [1, 2])
    with pytest.raises(ValueError, match="Expected an instance of list"):
        t.assert_same_structure([1, 2], (1, 2))
    c = tf.keras.config
    assert c.floatx() == "float32" and c.epsilon() == 1e-7 and c.image_data_format() == "channels_last"
    assert c.backend() == "tensorflow"
    with pytest.raises(ValueError, match="channels_last only"):
        c.set_image_data_format("channels_first")
    assert tf.keras.Layer is tf.keras.layers.Layer and tf.keras.Loss is tf.keras.losses.Loss


def test_stateless_dropout_and_layer_serialize():
    # TF 2.21: tf.nn.experimental.stateless_dropout(tf.ones((6,)), 0.5, seed=[1, 2])
    got = tf.nn.experimental.stateless_dropout(tf.ones((6,)), 0.5, seed=[1, 2]).numpy().tolist()
    assert got == [2.0, 0.0, 2.0, 0.0, 0.0, 2.0]
    f = tf.function(lambda x: tf.nn.experimental.stateless_dropout(x, 0.5, seed=[1, 2]))
    assert f(tf.ones((6,))).numpy().tolist() == got
    rows = tf.nn.experimental.stateless_dropout(tf.ones((2, 3)), 0.3, seed=[4, 5], noise_shape=[2, 1]).numpy()
    assert (rows == rows[:, :1]).all()            # one draw per row, broadcast over the columns
    import pytest
    with pytest.raises(ValueError, match="floating point"):
        tf.nn.experimental.stateless_dropout(tf.ones((2,), tf.int32), 0.5, seed=[1, 2])
    layer = tf.keras.layers.Dense(3, name="d")
    cfg = tf.keras.layers.serialize(layer)
    assert cfg["class_name"] == "Dense" and cfg["module"] == "keras.layers"
    assert tf.keras.layers.deserialize(cfg).get_config() == layer.get_config()


def test_functional_layer_order_is_keras_3s():
    # TF 2.21: layers ['input_layer', 'c', 'a', 'b', 'add'], weights (4, 5) (5,) (4, 3) (3,) (5, 3) (3,)
    # -- by depth from the output, the longer branch's first layer before the shorter branch
    tf.keras.backend.clear_session()
    L = tf.keras.layers
    inp = tf.keras.Input((4,))
    out = L.Add(name="add")([L.Dense(3, name="a")(inp), L.Dense(3, name="b")(L.Dense(5, name="c")(inp))])
    m = tf.keras.Model(inp, out)
    assert [layer.name for layer in m.layers] == ["input_layer", "c", "a", "b", "add"]
    assert [tuple(w.shape) for w in m.weights] == [(4, 5), (5,), (4, 3), (3,), (5, 3), (3,)]


def test_string_functions_as_the_function_guide():
    # TF 2.21 (the function guide): a traced string function prints, returns and describes strings
    import io
    import contextlib

    @tf.function
    def double(a):
        print("Tracing with", a)
        return a + a
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        r = double(tf.constant("a"))
    assert buf.getvalue() == 'Tracing with Tensor("a:0", shape=(), dtype=string)\n'
    assert str(r) == "tf.Tensor(b'aa', shape=(), dtype=string)"
    assert double(tf.constant("b")).numpy() == b"bb"                       # no retrace, a bytes scalar back
    cf = double.get_concrete_function(tf.constant("a"))
    assert "TensorSpec(shape=(), dtype=tf.string, name=None)" in str(cf)
    assert cf(a=tf.constant("b")).numpy() == b"bb"
    cf2 = double.get_concrete_function(tf.TensorSpec(shape=[], dtype=tf.string))
    assert cf2(tf.constant("c")).numpy() == b"cc"


def test_concrete_function_type_and_inference_fn():
    # TF 2.21: str(cf.function_type) and cf.inference_fn(t) of the function guide
    @tf.function
    def double(a):
        return a + a
    cf = double.get_concrete_function(tf.constant("a"))
    assert str(cf.function_type) == ("(a: TensorSpec(shape=(), dtype=tf.string, name=None)) -> "
                                     "TensorSpec(shape=(), dtype=tf.string, name=None)")
    assert cf.inference_fn(tf.constant("a")).numpy() == b"aa"


def test_to_hash_bucket_strong_is_tfs():
    # TF 2.21: SipHash-2-4 under the key, modulo the buckets; eager and compiled
    got = tf.strings.to_hash_bucket_strong(["Hello", "TensorFlow", "2.x", ""], 3, [1, 2])
    assert got.dtype == tf.int64 and got.numpy().tolist() == [2, 2, 1, 1]
    f = tf.function(lambda x: tf.strings.to_hash_bucket_strong(x, 1000, [10, 20]))
    assert f(tf.constant([["a", "b"], ["c", ""]])).numpy().tolist() == [[28, 62], [161, 816]]
    import pytest
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key must have 2 elements"):
        tf.strings.to_hash_bucket_strong(["a"], 3, [1])


def test_string_inputs_and_adapted_lookups_survive_save_and_load(tmp_path):
    # keras.Input(dtype="string") builds a functional model (it raised: 'string' is no NumPy dtype), and an
    # adapted vocabulary is saved: a loaded StringLookup had none and mapped every token to OOV.
    # TF 2.21: [[3, 1], [0, 2]] before and after load_model
    import numpy as np
    inp = tf.keras.Input(shape=(2,), dtype="string")
    lookup = tf.keras.layers.StringLookup()
    lookup.adapt(tf.constant(["a", "b", "b", "c", "c", "c"]))
    m = tf.keras.Model(inp, lookup(inp))
    x = tf.constant([["a", "c"], ["z", "b"]])
    assert m(x).numpy().tolist() == [[3, 1], [0, 2]]
    m.save(str(tmp_path / "lookup.keras"))
    assert tf.keras.models.load_model(str(tmp_path / "lookup.keras"))(x).numpy().tolist() == [[3, 1], [0, 2]]
    tv = tf.keras.layers.TextVectorization(output_mode="tf_idf")
    tv.adapt(tf.constant(["the cat sat", "the dog ran", "a cat ran"]))
    inp = tf.keras.Input(shape=(1,), dtype="string")
    m = tf.keras.Model(inp, tv(inp))
    t = tf.constant([["the cat ran"], ["zebra dog"]])
    m.save(str(tmp_path / "tv.keras"))
    np.testing.assert_array_equal(tf.keras.models.load_model(str(tmp_path / "tv.keras"))(t).numpy(), m(t).numpy())
    il = tf.keras.layers.IntegerLookup()
    il.adapt(np.array([5, 5, 7, 9]))
    inp = tf.keras.Input(shape=(2,), dtype="int64")
    m = tf.keras.Model(inp, il(inp))
    m.save(str(tmp_path / "il.keras"))
    assert tf.keras.models.load_model(str(tmp_path / "il.keras"))(np.array([[5, 9], [1, 7]])).numpy().tolist() == \
        m(np.array([[5, 9], [1, 7]])).numpy().tolist()
