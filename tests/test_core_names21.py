"""Wave 21's core names of ``tf``: TypeSpec and the specs, IndexedSlices, DeviceSpec,
variable_creator_scope, register_tensor_conversion_function, make_tensor_proto/make_ndarray.
Expected values are TF 2.21's (``# TF 2.21:``)."""
import numpy as np
import pytest

import tapeflow as tf


# -- TypeSpec and the specs ----------------------------------------------------------------------------

def test_typespec_is_the_base_of_every_spec():
    specs = [tf.TensorSpec([2]), tf.RaggedTensorSpec([2, None]), tf.SparseTensorSpec([2, 3]),
             tf.data.DatasetSpec(tf.TensorSpec([])), tf.OptionalSpec(tf.TensorSpec([])),
             tf.TensorArraySpec([2], tf.float32), tf.NoneTensorSpec(), tf.IndexedSlicesSpec([4, 3])]
    assert all(isinstance(s, tf.TypeSpec) for s in specs)   # TF 2.21: all True
    assert not isinstance(tf.TensorShape([2]), tf.TypeSpec)
    with pytest.raises(TypeError, match="Can't instantiate abstract class TypeSpec"):   # TF 2.21
        tf.TypeSpec()


def test_spec_reprs_and_equality():
    # TF 2.21's reprs
    assert repr(tf.OptionalSpec(tf.TensorSpec([], tf.float32))) == \
        "OptionalSpec(TensorSpec(shape=(), dtype=tf.float32, name=None),)"
    assert repr(tf.TensorArraySpec([2], tf.float32)) == "TensorArraySpec(TensorShape([2]), tf.float32, False, True)"
    assert repr(tf.TensorArraySpec(None)) == "TensorArraySpec(TensorShape(None), tf.float32, False, True)"
    assert repr(tf.NoneTensorSpec()) == "NoneTensorSpec()"
    assert repr(tf.IndexedSlicesSpec([4, 3])) == \
        "IndexedSlicesSpec(TensorShape([4, 3]), tf.float32, tf.int64, None, TensorShape([None]))"
    n = tf.NoneTensorSpec()
    assert n == tf.NoneTensorSpec() and hash(n) == hash(tf.NoneTensorSpec())
    assert n.is_compatible_with(tf.NoneTensorSpec()) and not n.is_compatible_with(tf.TensorSpec([]))
    assert n.most_specific_common_supertype([tf.NoneTensorSpec()]) == n
    o = tf.OptionalSpec(tf.TensorSpec([2], tf.int32))
    assert o == tf.OptionalSpec(tf.TensorSpec([2], tf.int32)) and o != tf.OptionalSpec(tf.TensorSpec([3], tf.int32))
    assert o.is_compatible_with(tf.OptionalSpec(tf.TensorSpec([None], tf.int32)))   # TF 2.21: True
    assert not o.is_compatible_with(tf.OptionalSpec(tf.TensorSpec([2], tf.float32)))
    assert repr(tf.OptionalSpec.from_value(tf.data.experimental.Optional.from_value(tf.constant([1, 2])))) == \
        "OptionalSpec(TensorSpec(shape=(2,), dtype=tf.int32, name=None),)"   # TF 2.21
    t = tf.TensorArraySpec([2], tf.float32, dynamic_size=True, infer_shape=False)
    assert repr(t) == "TensorArraySpec(TensorShape([2]), tf.float32, True, False)"
    assert t == tf.TensorArraySpec([2], tf.float32, True, False) and t != tf.TensorArraySpec([2], tf.float32)
    assert t.is_compatible_with(tf.TensorArraySpec([None], tf.float32, True, False))


# -- IndexedSlices -------------------------------------------------------------------------------------

def test_indexed_slices():
    iv = tf.IndexedSlices(tf.constant([[1., 2.], [3., 4.]]), tf.constant([0, 2]), tf.constant([3, 2]))
    assert iv.dtype == tf.float32 and iv.shape == (3, 2)
    # TF 2.21's str
    assert str(iv) == ("IndexedSlices(indices=tf.Tensor([0 2], shape=(2,), dtype=int32), values=tf.Tensor(\n"
                       "[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32), dense_shape=tf.Tensor([3 2], shape=(2,), "
                       "dtype=int32))")
    # TF 2.21: convert_to_tensor densifies; repeated rows add up
    np.testing.assert_array_equal(tf.convert_to_tensor(iv).numpy(), [[1, 2], [0, 0], [3, 4]])
    iv2 = tf.IndexedSlices(tf.constant([[1., 2.], [3., 4.]]), tf.constant([0, 0]), tf.constant([3, 2]))
    np.testing.assert_array_equal(tf.convert_to_tensor(iv2).numpy(), [[4, 6], [0, 0], [0, 0]])
    # any op takes one (its conversion), eagerly and compiled
    np.testing.assert_array_equal(tf.reduce_sum(iv, axis=0).numpy(), [4, 6])
    np.testing.assert_array_equal(tf.function(lambda: tf.add(iv, 1.0))().numpy(), [[2, 3], [1, 1], [4, 5]])
    np.testing.assert_array_equal(tf.convert_to_tensor(-iv).numpy(), [[-1, -2], [0, 0], [-3, -4]])
    assert iv._type_spec == tf.IndexedSlicesSpec([3, 2], tf.float32, tf.int32, tf.int32, [2])   # TF 2.21: True
    assert iv._type_spec.value_type is tf.IndexedSlices
    no_shape = tf.IndexedSlices(tf.constant([[1., 2.]]), tf.constant([0]))
    assert no_shape.dense_shape is None
    with pytest.raises(ValueError, match="Tensor conversion requested for IndexedSlices for argument `value` "
                                         "without dense_shape"):   # TF 2.21
        tf.convert_to_tensor(no_shape)
    with pytest.raises(TypeError):   # TF 2.21: unsupported operand type(s) for +
        iv + 1


def test_an_optimizer_takes_indexed_slices():
    v = tf.Variable(tf.ones([3, 2]))
    g = tf.IndexedSlices(tf.constant([[1., 1.]]), tf.constant([1]), tf.constant([3, 2]))
    tf.keras.optimizers.SGD(0.5).apply_gradients([(g, v)])
    np.testing.assert_array_equal(v.numpy(), [[1, 1], [0.5, 0.5], [1, 1]])


# -- DeviceSpec -----------------------------------------------------------------------------------------

# TF 2.21: from_string(s).to_string(), and the fields
DEVICES = {
    "/job:a/replica:1/task:2/device:GPU:3": ("/job:a/replica:1/task:2/device:GPU:3", "a", 1, 2, "GPU", 3),
    "/cpu:0": ("/device:CPU:0", None, None, None, "CPU", 0),
    "/device:CPU:*": ("/device:CPU:*", None, None, None, "CPU", None),
    "/GPU:1": ("/device:GPU:1", None, None, None, "GPU", 1),
    "": ("", None, None, None, None, None),
    "/job:worker": ("/job:worker", "worker", None, None, None, None),
    "/task:3/device:TPU:0": ("/task:3/device:TPU:0", None, None, 3, "TPU", 0),
    "gpu:0": ("/device:GPU:0", None, None, None, "GPU", 0),
    "/replica:0": ("/replica:0", None, 0, None, None, None),
    "/job:ps/device:cpu:1": ("/job:ps/device:CPU:1", "ps", None, None, "CPU", 1),
    "/job:a/job:b": ("/job:b", "b", None, None, None, None),
}


@pytest.mark.parametrize("text", sorted(DEVICES))
def test_device_spec_parse(text):
    d = tf.DeviceSpec.from_string(text)
    assert (d.to_string(), d.job, d.replica, d.task, d.device_type, d.device_index) == DEVICES[text]


def test_device_spec():
    d = tf.DeviceSpec.from_string("/job:a/replica:1/task:2/device:GPU:3")
    assert repr(d) == "<DeviceSpec(job=a, replica=1, task=2, device_type=GPU, device_index=3)>"   # TF 2.21
    for bad, msg in [("/foo:1", "Unknown attribute 'foo' is encountered while parsing the device spec: '/foo:1'."),
                     ("junk", "Unknown attribute 'junk'"), ("/device:GPU:x", "invalid literal for int"),
                     ("/task:x", "invalid literal for int")]:
        with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(".", r"\.")):   # TF 2.21
            tf.DeviceSpec.from_string(bad)
    d = tf.DeviceSpec(job="a", device_type="GPU", device_index=0)
    assert d.to_string() == "/job:a/device:GPU:0"
    assert d == tf.DeviceSpec.from_string("/job:a/device:GPU:0") and hash(d) == hash(tf.DeviceSpec.from_string(
        "/job:a/device:GPU:0"))
    # TF 2.21: make_merged_spec -> /job:a/task:3/device:CPU:0 (d unchanged); replace; cpu upper-cased
    assert d.make_merged_spec(tf.DeviceSpec(task=3, device_type="CPU")).to_string() == "/job:a/task:3/device:CPU:0"
    assert d.to_string() == "/job:a/device:GPU:0"
    assert d.replace(job="b").to_string() == "/job:b/device:GPU:0"
    assert tf.DeviceSpec(device_type="cpu").to_string() == "/device:CPU:*"
    assert tf.DeviceSpec(device_index=2).to_string() == ""
    assert tf.DeviceSpec(replica="1").to_string() == "/replica:1"
    assert tf.DeviceSpec.from_string("/job:a").make_merged_spec(tf.DeviceSpec.from_string("/job:b")).to_string() \
        == "/job:b"
    with tf.device(tf.DeviceSpec(device_type="CPU", device_index=0)):
        assert tf.constant(1.0).numpy() == 1.0


# -- variable_creator_scope ------------------------------------------------------------------------------

TF_CREATOR_KWARGS = ['aggregation', 'caching_device', 'constraint', 'dtype', 'experimental_enable_variable_lifting',
                     'import_scope', 'initial_value', 'name', 'shape', 'synchronization', 'trainable',
                     'validate_shape', 'variable_def']   # TF 2.21: what a creator gets


def test_variable_creator_scope_renames_and_records():
    log = []

    def creator(next_creator, **kw):
        log.append((sorted(kw), kw["name"], kw["trainable"], kw["dtype"], kw["synchronization"],
                    kw["aggregation"]))
        kw["trainable"] = False
        kw["name"] = "R_" + str(kw["name"])
        return next_creator(**kw)
    with tf.variable_creator_scope(creator):
        layer = tf.keras.layers.Dense(2, name="dense")   # (named: the suite's other Dense layers number theirs)
        layer.build((None, 3))
        v = tf.Variable(np.ones(2), name="w", dtype=tf.float32)
    # TF 2.21: the Keras weights' creators see ('kernel', True, 'float32'), ('bias', True, 'float32');
    # the tf.Variable's ('w', None, tf.float32); synchronization AUTO, aggregation NONE
    assert [e[1:4] for e in log] == [("kernel", True, "float32"), ("bias", True, "float32"), ("w", None, tf.float32)]
    assert all(e[0] == TF_CREATOR_KWARGS for e in log)
    assert log[2][4] == tf.VariableSynchronization.AUTO and log[2][5] == tf.VariableAggregation.NONE
    # TF 2.21: the tf.Variable is renamed and not trainable; the Keras weights keep name, path, trainable
    assert v.name == "R_w:0" and not v.trainable
    assert [(w.name, w.path, w.trainable) for w in layer.weights] == [("kernel", "dense/kernel", True),
                                                                      ("bias", "dense/bias", True)]
    assert len(layer.trainable_weights) == 2


def test_variable_creator_scope_nesting_and_values():
    order = []

    def outer(next_creator, **kw):
        order.append("outer")
        return next_creator(**{**kw, "trainable": False})

    def inner(next_creator, **kw):
        order.append("inner")
        return next_creator(**kw)
    with tf.variable_creator_scope(outer):
        with tf.variable_creator_scope(inner):
            v = tf.Variable(2.0)
    assert order == ["inner", "outer"] and not v.trainable   # TF 2.21: innermost first
    with tf.variable_creator_scope(lambda nc, **kw: nc(**{**kw, "initial_value": tf.zeros([3, 2])})):
        layer = tf.keras.layers.Dense(2)
        layer.build((None, 3))
    np.testing.assert_array_equal(layer.kernel.numpy(), np.zeros((3, 2)))   # TF 2.21: zeros
    with tf.variable_creator_scope(lambda nc, **kw: tf.constant(5.0)):
        assert repr(tf.Variable(1.0)) == "<tf.Tensor: shape=(), dtype=float32, numpy=5.0>"   # TF 2.21
    with pytest.raises(TypeError, match="'int' object is not callable"):   # TF 2.21
        with tf.variable_creator_scope(3):
            tf.Variable(1.0)
    v = tf.Variable(1.0)   # outside: untouched, and an assign's result is still a view
    assert v.trainable and "UnreadVariable" in repr(v.assign(3.0))


# -- register_tensor_conversion_function -----------------------------------------------------------------

class _Point:
    def __init__(self, v):
        self.v = v


def test_register_tensor_conversion_function():
    tf.register_tensor_conversion_function(_Point, lambda value, dtype=None, name=None, as_ref=False:
                                           tf.constant(value.v, dtype=dtype))
    # TF 2.21: [1. 2.], [2. 3.], 3
    np.testing.assert_array_equal(tf.convert_to_tensor(_Point([1., 2.])).numpy(), [1, 2])
    np.testing.assert_array_equal(tf.add(_Point([1., 2.]), 1.0).numpy(), [2, 3])
    assert tf.reduce_sum(_Point([1, 2])).numpy() == 3
    assert tf.function(lambda: tf.add(_Point([1., 2.]), 1.0))().numpy().tolist() == [2, 3]
    assert tf.convert_to_tensor(_Point([1, 2]), dtype=tf.float32).dtype == tf.float32


def test_register_tensor_conversion_function_errors():
    f = lambda value, dtype=None, name=None, as_ref=False: tf.constant(1.0)   # noqa: E731
    with pytest.raises(TypeError, match="Argument `base_type` must be a type or a tuple of types. Obtained: 3"):
        tf.register_tensor_conversion_function(3, f)
    with pytest.raises(TypeError, match="Cannot register conversions for Python numeric types and NumPy"):
        tf.register_tensor_conversion_function(np.ndarray, f)
    with pytest.raises(TypeError, match="Argument `conversion_func` must be callable. Received 3."):
        tf.register_tensor_conversion_function(_Point, 3)

    class Q:
        pass

    class R:
        pass

    class S:
        pass
    tf.register_tensor_conversion_function(Q, lambda value, dtype=None, name=None, as_ref=False: 3)
    tf.register_tensor_conversion_function(R, lambda value, dtype=None, name=None, as_ref=False: NotImplemented)
    tf.register_tensor_conversion_function(S, lambda value, dtype=None, name=None, as_ref=False: tf.constant([1, 2]))
    with pytest.raises(RuntimeError, match="returned non-Tensor: 3"):   # TF 2.21
        tf.convert_to_tensor(Q())
    with pytest.raises(ValueError, match="with an unsupported type"):   # TF 2.21
        tf.convert_to_tensor(R())
    with pytest.raises(RuntimeError, match="returned incompatible dtype: requested = float32, actual = int32"):
        tf.convert_to_tensor(S(), dtype=tf.float32)

    class P2:
        v = 0
    tf.register_tensor_conversion_function(P2, lambda value, dtype=None, name=None, as_ref=False: tf.constant(1.0))
    tf.register_tensor_conversion_function(P2, lambda value, dtype=None, name=None, as_ref=False: tf.constant(9.0),
                                           priority=50)
    assert tf.convert_to_tensor(P2()).numpy() == 9.0   # TF 2.21: the lower priority first


# -- make_tensor_proto / make_ndarray ---------------------------------------------------------------------

# TF 2.21: SerializeToString().hex(), and make_ndarray's (values, dtype, shape)
PROTOS = {
    "f_scalar": (lambda: tf.make_tensor_proto(1.5), '080112002a040000c03f', 1.5, 'float32', []),
    "f_list": (lambda: tf.make_tensor_proto([1.0, 2.0, 3.0]), '0801120412020803220c0000803f0000004000004040',
               [1.0, 2.0, 3.0], 'float32', [3]),
    "i_list": (lambda: tf.make_tensor_proto([1, 2, 3]), '0803120412020803220c010000000200000003000000', [1, 2, 3],
               'int32', [3]),
    "i64": (lambda: tf.make_tensor_proto(np.array([1, 2], np.int64)),
            '0809120412020802221001000000000000000200000000000000', [1, 2], 'int64', [2]),
    "np_f64": (lambda: tf.make_tensor_proto(np.array([[1.0, 2.0]])),
               '0802120812020801120208022210000000000000f03f0000000000000040', [[1.0, 2.0]], 'float64', [1, 2]),
    "bool": (lambda: tf.make_tensor_proto([True, False]), '080a1204120208025a020100', [True, False], 'bool', [2]),
    "str": (lambda: tf.make_tensor_proto([b"ab", "c"]), '080712041202080242026162420163', [b'ab', b'c'], 'object',
            [2]),
    "str_scalar": (lambda: tf.make_tensor_proto("hi"), '0807120042026869', b'hi', 'object', []),
    "dtype": (lambda: tf.make_tensor_proto([1, 2], dtype=tf.float32), '080112041202080222080000803f00000040',
              [1.0, 2.0], 'float32', [2]),
    "shape_bcast": (lambda: tf.make_tensor_proto(0.5, shape=[2, 3]), '0801120812020802120208032a040000003f',
                    [[0.5] * 3] * 2, 'float32', [2, 3]),
    "shape_reshape": (lambda: tf.make_tensor_proto([1, 2, 3, 4], shape=[2, 2]),
                      '080312081202080212020802221001000000020000000300000004000000', [[1, 2], [3, 4]], 'int32',
                      [2, 2]),
    "f16": (lambda: tf.make_tensor_proto(np.array([1.5, 2], np.float16)), '08131204120208022204003e0040', [1.5, 2.0],
            'float16', [2]),
    "bf16": (lambda: tf.make_tensor_proto(np.array([1.5, 2], tf.bfloat16.as_numpy_dtype)),
             '080e1204120208022204c03f0040', [1.5, 2.0], 'bfloat16', [2]),
    "u8": (lambda: tf.make_tensor_proto(np.array([1, 255], np.uint8)), '0804120412020802220201ff', [1, 255], 'uint8',
           [2]),
    "empty": (lambda: tf.make_tensor_proto(np.zeros((0, 2), np.float32)), '08011206120012020802', [], 'float32',
              [0, 2]),
    "tensor": (lambda: tf.make_tensor_proto(tf.constant([1.0, 2.0])), '080112041202080222080000803f00000040',
               [1.0, 2.0], 'float32', [2]),
    "i_scalar": (lambda: tf.make_tensor_proto(7), '080312003a0107', 7, 'int32', []),
    "big_int": (lambda: tf.make_tensor_proto(2**40), '080912005206808080808020', 1099511627776, 'int64', []),
    "u32": (lambda: tf.make_tensor_proto(np.array([1, 2], np.uint32)), '081612041202080222080100000002000000', [1, 2],
            'uint32', [2]),
    "f64_scalar_np": (lambda: tf.make_tensor_proto(np.float64(2.5)), '0802120032080000000000000440', 2.5, 'float64',
                      []),
    "shape_pad": (lambda: tf.make_tensor_proto([1, 2], shape=[4]), '08031204120208043a020102', [1, 2, 2, 2], 'int32',
                  [4]),
    "h_scalar": (lambda: tf.make_tensor_proto(np.float16(1.5)), '081312006a02807c', 1.5, 'float16', []),
    "bf_scalar": (lambda: tf.make_tensor_proto(np.array(1.5, tf.bfloat16.as_numpy_dtype)), '080e12006a02c07f', 1.5,
                  'bfloat16', []),
    "b_scalar": (lambda: tf.make_tensor_proto(True), '080a12005a0101', True, 'bool', []),
    "s_pad": (lambda: tf.make_tensor_proto([b"a", b"b"], shape=[3]), '0807120412020803420161420162',
              [b'a', b'b', b'b'], 'object', [3]),
    "u64": (lambda: tf.make_tensor_proto(np.uint64(3)), '081712008a010103', 3, 'uint64', []),
    "i8": (lambda: tf.make_tensor_proto(np.array([-1], np.int8)), '08061204120208013a0affffffffffffffffff01', [-1],
           'int8', [1]),
    "f_dtype64": (lambda: tf.make_tensor_proto(1.0, dtype=tf.float64), '080212003208000000000000f03f', 1.0, 'float64',
                  []),
}


@pytest.mark.parametrize("name", sorted(PROTOS))
def test_make_tensor_proto_bytes(name):
    make, hexbytes, values, dtype, shape = PROTOS[name]
    p = make()
    assert p.SerializeToString().hex() == hexbytes
    a = tf.make_ndarray(p)
    assert (a.tolist(), str(a.dtype), list(a.shape)) == (values, dtype, shape)


def test_make_tensor_proto_errors():
    # TF 2.21's classes and messages
    with pytest.raises(ValueError, match="Too many elements provided. Takes at most 2, but got 3."):
        tf.make_tensor_proto([1, 2, 3], shape=[2])
    with pytest.raises(TypeError, match=r"Expected Tensor's shape: \(4,\), but got \(2,\)."):
        tf.make_tensor_proto([1, 2], shape=[4], verify_shape=True)
    with pytest.raises(TypeError, match="Expected int32, but got 1.5 of type 'float'."):
        tf.make_tensor_proto([1.5], dtype=tf.int32)
    with pytest.raises(TypeError, match="Failed to convert elements of"):
        tf.make_tensor_proto(object())
    with pytest.raises(ValueError, match="inhomogeneous"):
        tf.make_tensor_proto([[1], [1, 2]])
    with pytest.raises(ValueError, match="None values not supported."):
        tf.make_tensor_proto(None)
    with pytest.raises(AttributeError, match="tensor_shape"):
        tf.make_ndarray(3)
