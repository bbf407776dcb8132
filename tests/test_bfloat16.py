"""tf.bfloat16 (ml_dtypes' NumPy dtype): the DType, conversions, arithmetic and products as
TF 2.21's CPU kernels compute them, gradients, tf.function on every backend, checkpoints and
SavedModel. Expected values are TF 2.21's (noted where they are)."""
import os

import ml_dtypes
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

b = tf.bfloat16
BF = np.dtype(ml_dtypes.bfloat16)


def f32(t):
    return np.asarray(t.numpy()).astype(np.float32)


def bits(t):
    a = np.asarray(t.numpy())
    return a.view(np.uint16) if a.dtype == BF else a


def test_dtype_properties():
    # TF 2.21: repr tf.bfloat16, str <dtype: 'bfloat16'>, min/max -/+3.38953e+38, size 2
    assert repr(b) == "tf.bfloat16" and str(b) == "<dtype: 'bfloat16'>" and b.name == "bfloat16"
    assert b.is_floating and not b.is_integer and not b.is_unsigned and b.size == 2
    assert b.as_numpy_dtype is ml_dtypes.bfloat16
    assert float(b.max) == float(ml_dtypes.finfo(BF).max) and float(b.min) == -float(b.max)
    assert tf.as_dtype("bfloat16") is b and tf.as_dtype(ml_dtypes.bfloat16) is b and tf.as_dtype(BF) is b
    assert tf.dtypes.bfloat16 is b and b != tf.float16 and b == BF


def test_reprs_and_conversions():
    # TF 2.21's reprs, exactly
    assert repr(tf.constant(1.5, b)) == "<tf.Tensor: shape=(), dtype=bfloat16, numpy=1.5>"
    assert str(tf.constant(1.5, b)) == "tf.Tensor(1.5, shape=(), dtype=bfloat16)"
    assert repr(tf.constant([1.5, 2.25, 3.1], b)) == \
        "<tf.Tensor: shape=(3,), dtype=bfloat16, numpy=array([1.5, 2.25, 3.09375], dtype=bfloat16)>"
    assert repr(tf.Variable(1.0, dtype=b)) == "<tf.Variable 'Variable:0' shape=() dtype=bfloat16, numpy=1.0>"
    t = tf.convert_to_tensor(np.array([1.5], BF))
    assert t.dtype is b and tf.convert_to_tensor([1.5, 2], dtype=b).dtype is b
    assert tf.convert_to_tensor(1, dtype=b).numpy() == 1
    # TF 2.21: cast of [1.0009765625, 3.14159, 1e39, nan] is [1, 3.14062, inf, nan] (round to nearest even)
    c = tf.cast(tf.constant([1.0009765625, 3.14159, 1e39, float("nan")]), b)
    assert c.dtype is b
    np.testing.assert_array_equal(f32(c)[:3], [1.0, 3.140625, np.inf]) and np.isnan(f32(c)[3])
    # ties: TF 2.21 [1.00390625, 1.01171875, 1.0078125 + 2**-9] -> [1, 1.015625, 1.0078125]
    np.testing.assert_array_equal(f32(tf.cast(tf.constant([1.00390625, 1.01171875, 1.0078125 + 2**-9]), b)),
                                  [1.0, 1.015625, 1.0078125])
    x = tf.constant(1.5, b)
    assert tf.cast(x, tf.int32).numpy() == 1 and tf.cast(x, tf.float16).dtype == tf.float16
    assert tf.cast(tf.constant(True), b).numpy() == 1 and tf.cast(tf.constant(3), b).dtype is b
    assert x.numpy().dtype == BF and float(x) == 1.5


@pytest.mark.parametrize("other", [tf.float16, tf.float32, tf.int32])
def test_no_implicit_promotion(other):
    # TF 2.21: bfloat16 + half/float/int32 is InvalidArgumentError ("expected to be a bfloat16 tensor")
    with pytest.raises(InvalidArgumentError, match="bfloat16"):
        tf.constant(1.0, b) + tf.constant(1, other)


def test_python_numbers_round_to_bfloat16_first():
    x = tf.constant(1.5, b)
    # TF 2.21: x * 0.3 is 0.451171875 (0.3 -> 0.30078125 first; the product rounded would be 0.44921875)
    assert float(x * 0.3) == 0.451171875 and (x * 0.3).dtype is b
    assert float(x * 2) == 3.0 and float(x + np.float32(2.0)) == 3.5
    assert (x + np.array(2.0)).dtype is b
    w = tf.where(tf.constant([True, False]), tf.constant([1.0, 1.0], b), 0.3)
    assert w.dtype is b and f32(w)[1] == np.float32(0.30078125)


def test_matmul_accumulates_in_float32():
    # TF 2.21 (CPU): float32 sums rounded once: [[1, 2**-8, 2**-8]] @ ones is 1.0078125 (bfloat16 sums: 1)
    m = tf.matmul(tf.constant([[1.0, 2**-8, 2**-8]], b), tf.ones([3, 1], b))
    assert m.dtype is b and f32(m)[0, 0] == 1.0078125
    rng = np.random.default_rng(0)
    a, c = rng.standard_normal((4, 64)).astype(BF), rng.standard_normal((64, 3)).astype(BF)
    want = (a.astype(np.float32) @ c.astype(np.float32)).astype(BF)   # TF 2.21: equal, for these inputs
    np.testing.assert_array_equal(bits(tf.matmul(a, c)), want.view(np.uint16))


def test_reductions():
    v = tf.constant([1.0] + [2**-8] * 16, b)
    # TF 2.21: sum 1.0625, mean 0.0625 (float32 accumulation); cumsum all ones (bfloat16 partial sums)
    assert float(tf.reduce_sum(v)) == 1.0625 and float(tf.reduce_mean(v)) == 0.0625
    np.testing.assert_array_equal(f32(tf.cumsum(v)), np.ones(17))
    w = tf.constant(np.linspace(0, 1, 1000).astype(np.float32), b)
    # TF 2.21: 500.0, 0.5, 1.0; prod of ten 1.1s 2.625
    assert (float(tf.reduce_sum(w)), float(tf.reduce_mean(w)), float(tf.reduce_max(w))) == (500.0, 0.5, 1.0)
    assert float(tf.reduce_prod(tf.constant([1.1] * 10, b))) == 2.625
    # TF 2.21: 0.14453125 (mean in float32, rounded once; the sum rounded, then divided: 0.143555)
    x = tf.constant([0.345703125, 0.8203125, 0.330078125, -1.3046875, 0.90625, 0.447265625, -0.53515625], b)
    assert float(tf.reduce_mean(x)) == 0.14453125 and tf.reduce_mean(x).dtype is b
    np.testing.assert_array_equal(f32(tf.reduce_sum(tf.constant([[1.0] + [2**-8] * 4] * 2, b), axis=1)),
                                  [1.015625, 1.015625])   # TF 2.21
    assert float(tf.reduce_max(tf.zeros([0], b))) == -np.inf   # TF 2.21: -inf


def test_elementwise_values():
    # TF 2.21: exp [1.1015625, 2.71875, 27], 1/3 0.33398438, tanh [0.09960938, 0.76171875, 0.99609375]
    x = tf.constant([0.1, 1.0, 3.3], b)
    np.testing.assert_array_equal(f32(tf.exp(x)), [1.1015625, 2.71875, 27.0])
    np.testing.assert_array_equal(f32(tf.tanh(x)), [0.099609375, 0.76171875, 0.99609375])
    assert f32(tf.constant([1.0], b) / tf.constant([3.0], b))[0] == 0.333984375
    assert tf.math.is_nan(tf.constant([np.nan], b)).numpy()[0]
    assert f32(tf.math.floordiv(tf.constant([7.0], b), tf.constant([2.0], b)))[0] == 3.0   # TF 2.21


def test_gradient_of_bfloat16_variable():
    v = tf.Variable([1.5, 2.0], dtype=b)
    with tf.GradientTape() as t:
        y = tf.reduce_sum(v * v * v)
    g = t.gradient(y, v)
    # TF 2.21: <tf.Tensor: shape=(2,), dtype=bfloat16, numpy=array([6.75, 12], dtype=bfloat16)>
    assert repr(g) == "<tf.Tensor: shape=(2,), dtype=bfloat16, numpy=array([6.75, 12], dtype=bfloat16)>"
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.cast(v, tf.float32) ** 2)   # a gradient through a cast into bfloat16
    assert t.gradient(y, v).dtype is b


def _programs():
    def dense(x, w, bias):
        h = tf.nn.relu(tf.matmul(x, w) + bias)
        return tf.reduce_sum(tf.exp(h * 0.3) - 1.0, axis=1), tf.reduce_mean(h), tf.sigmoid(h) * 2.5 > 1.1

    def grad(x, w, bias):
        with tf.GradientTape() as t:
            t.watch(w)
            y = tf.reduce_sum(tf.tanh(tf.matmul(x, w) + bias) * 0.7)
        return y, t.gradient(y, w)

    def misc(x, w, bias):
        return (tf.math.cumsum(x, axis=1), tf.reduce_max(x, axis=0), tf.concat([x, x * 2.0], 0),
                tf.where(x > 0.1, x, 0.3), tf.cast(x, tf.float32) * 1.7, tf.reduce_prod(x[:, :3] + 1.0, axis=1))
    return [dense, grad, misc]


@pytest.mark.parametrize("prog", _programs(), ids=lambda f: f.__name__)
@pytest.mark.parametrize("backend", ["python", "interpreter", None, "fused"])
def test_eager_equals_compiled(prog, backend):
    rng = np.random.default_rng(0)
    args = (tf.constant(rng.standard_normal((8, 16)), b), tf.constant(rng.standard_normal((16, 4)), b),
            tf.constant(rng.standard_normal(4), b))
    want = tf.nest.flatten(prog(*args))
    # (None: the default tiers; "fused": jit_compile=True asks for the fused second tier at once, whose
    # numba loops decline bfloat16 groups: they stay the python backend's calls)
    fn = tf.function(prog, jit_compile=True) if backend == "fused" else (
        tf.function(prog, backend=backend) if backend else tf.function(prog))
    for _ in range(3):   # (past the fused tier's tier-up)
        got = tf.nest.flatten(fn(*args))
    for w, g in zip(want, got):
        assert w.dtype == g.dtype
        np.testing.assert_array_equal(bits(w), bits(g))


def test_numba_declines_bfloat16():
    x = tf.constant(np.ones((4, 4)), b)
    with pytest.raises(NotImplementedError, match="numba backend"):
        tf.function(lambda x: tf.exp(x * 2.0) + 1.0, backend="numba")(x)


def test_checkpoint_and_safetensors_round_trip(tmp_path):
    v = tf.Variable(tf.constant([1.5, -2.25, 3.0e30], b))
    path = tf.train.Checkpoint(v=v).save(os.path.join(tmp_path, "ck"))
    v2 = tf.Variable(tf.zeros([3], b))
    tf.train.Checkpoint(v=v2).restore(path)
    assert v2.dtype is b
    np.testing.assert_array_equal(bits(v2), bits(v))
    from safetensors import safe_open
    data = [f for f in os.listdir(tmp_path) if f.endswith(".safetensors")]
    import json
    import struct
    raw = open(os.path.join(tmp_path, data[0]), "rb").read()
    header = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
    assert "BF16" in {e["dtype"] for k, e in header.items() if k != "__metadata__"}   # safetensors' own dtype (and the save counter's I64)
    with safe_open(os.path.join(tmp_path, data[0]), "np") as f:
        assert BF in {f.get_tensor(k).dtype for k in f.keys()}


def test_saved_model_round_trip(tmp_path):
    class M(tf.Module):
        def __init__(self):
            self.v = tf.Variable(tf.constant([1.5, 2.5], b))

        @tf.function(input_signature=[tf.TensorSpec([2], b)])
        def f(self, x):
            return self.v * x * 0.3
    m = M()
    tf.saved_model.save(m, str(tmp_path / "sm"))
    m2 = tf.saved_model.load(str(tmp_path / "sm"))
    x = tf.constant([1.0, 2.0], b)
    assert m2.f(x).dtype is b
    np.testing.assert_array_equal(bits(m2.f(x)), bits(m.f(x)))
    assert f32(m.f(x))[0] == 0.451171875   # TF 2.21: 1.5 * 1 * bf16(0.3)


# -- TF 2.21's numbers for the programs of tests/bfloat16_cases.py ------------------------------------
import bfloat16_cases as C  # noqa: E402

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "bfloat16_reference.npz"))


@pytest.mark.parametrize("name", sorted(C.CASES))
def test_tf_reference(name):
    r = C.run(tf, name)
    assert r.dtype.name == str(REF[f"dtype/{name}"])
    got, want = f32(tf.cast(r, tf.float32)), REF[f"case/{name}"]
    if C.CASES[name][0] == "exact":
        np.testing.assert_array_equal(got, want)
    else:   # two bfloat16 ulps, or one of the largest entry (gradients cancel); tests/bfloat16_cases.py says why
        np.testing.assert_allclose(got, want, rtol=2**-6, atol=2**-7 * np.abs(want).max())


@pytest.fixture
def mixed_bfloat16():
    from tapeflow.keras import mixed_precision as mp
    mp.set_global_policy("mixed_bfloat16")
    yield
    mp._GLOBAL[0] = None


def test_mixed_bfloat16_model_matches_tf(mixed_bfloat16):
    rec = C.model_record(tf, tf.keras)
    for i, (comp, var, wd, od, val) in enumerate(rec["layers"]):
        # TF 2.21: Dense/BatchNormalization compute in bfloat16 over float32 weights; the float32 head
        assert [comp, var, od] + wd == REF[f"model/layer{i}/dtypes"].tolist()
        if od == "bfloat16":   # TF's bits
            np.testing.assert_array_equal(val, REF[f"model/layer{i}/out"])
        else:   # (the float32 softmax head: float32's last bit, as tapeflow's float32 softmax anywhere)
            np.testing.assert_allclose(val, REF[f"model/layer{i}/out"], rtol=1e-6)
    assert rec["optimizer"] == str(REF["model/optimizer"]) == "SGD"   # no LossScaleOptimizer for bfloat16
    np.testing.assert_allclose(rec["loss"], float(REF["model/loss"]), rtol=1e-3)
    # the two steps' updates agree to 3% of the largest (bfloat16 gradients round differently in the
    # few kernels tests/bfloat16_cases.py lists as ULP; measured: 1.1%)
    for i, (w, w0) in enumerate(zip(rec["weights"], C.model_weights())):
        step = REF[f"model/weights{i}"] - w0
        np.testing.assert_allclose(w - w0, step, rtol=0, atol=0.03 * np.abs(step).max())


# TF 2.21 (tnp.experimental_enable_numpy_behavior; `left + right`, values 1): the bfloat16 row of the
# promotion lattice (tapeflow/experimental/numpy.py); TypeError: the mode refuses the promotion
_BF16_LATTICE = {
    "all": [("bfloat16", "float16", "float32"), ("int32", "bfloat16", "bfloat16"), ("bfloat16", "float32", "float32"),
            ("uint64", "bfloat16", "bfloat16"), ("bfloat16", "float64", "float64"), (1.5, "bfloat16", "bfloat16"),
            (3, "bfloat16", "bfloat16"), (True, "bfloat16", TypeError), ("bool", "bfloat16", "bfloat16")],
    "safe": [("bfloat16", "float16", TypeError), ("int8", "bfloat16", "bfloat16"), ("int16", "bfloat16", TypeError),
             ("uint16", "bfloat16", TypeError), ("bfloat16", "float32", "float32"), (1.5, "bfloat16", "bfloat16")],
}


@pytest.fixture
def numpy_mode():
    yield
    from tapeflow.experimental.numpy import _set_numpy_behavior
    _set_numpy_behavior(False, False)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("conv", ["all", "safe"])
def test_tnp_promotion_lattice(numpy_mode, conv, compiled):
    from tapeflow.experimental.numpy import _set_numpy_behavior
    _set_numpy_behavior(True, False, conv)
    for left, right, want in _BF16_LATTICE[conv]:
        a = left if not isinstance(left, str) else tf.constant(1, getattr(tf, left if left != "bool" else "bool"))
        c = tf.constant(1, getattr(tf, right))
        fn = (lambda x: a + x) if not compiled else tf.function(lambda x: a + x)
        if want is TypeError:
            with pytest.raises(TypeError, match=f"PromoMode.{conv.upper()}"):
                fn(c)
        else:
            assert fn(c).dtype.name == want, (conv, left, right)
