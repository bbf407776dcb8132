"""keras.mixed_precision (wave 20): dtype policies, layers under 'mixed_float16', LossScaleOptimizer.
Expected values are TF 2.21's (Keras 3), recorded by running the same code there (``# TF 2.21:``)."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras
from tapeflow.keras import layers
from tapeflow.keras import mixed_precision as mp


@pytest.fixture(autouse=True)
def _reset_policy():
    yield
    mp._GLOBAL[0] = None      # (no public "unset": set_global_policy(None) raises, as in TF)


# TF 2.21: name -> (repr, compute_dtype, variable_dtype)
POLICIES = {
    "float32": ('<DTypePolicy "float32">', "float32", "float32"),
    "mixed_float16": ('<DTypePolicy "mixed_float16">', "float16", "float32"),
    "mixed_bfloat16": ('<DTypePolicy "mixed_bfloat16">', "bfloat16", "float32"),
    "float16": ('<DTypePolicy "float16">', "float16", "float16"),
    "float64": ('<DTypePolicy "float64">', "float64", "float64"),
    "int32": ('<DTypePolicy "int32">', "int32", "int32"),
}


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_policy_fields(name):
    p = mp.Policy(name)
    r, c, v = POLICIES[name]
    assert (repr(p), str(p), p.name, p.compute_dtype, p.variable_dtype) == (r, r, name, c, v)
    assert p.get_config() == {"name": name}
    assert mp.Policy.from_config(p.get_config()) == p
    assert mp.Policy is mp.DTypePolicy and tf.keras.mixed_precision.Policy is mp.Policy


def test_policy_bad_names():
    # TF 2.21: ValueError "Cannot convert 'foo' to a mixed precision DTypePolicy. Valid policies include ..."
    for bad in ("foo", "mixed_int8"):
        with pytest.raises(ValueError, match=f"Cannot convert '{bad}' to a mixed precision DTypePolicy"):
            mp.Policy(bad)
    # TF 2.21: TypeError "'name' must be a string, such as 'mixed_float16'. Received: name=3 ..."
    with pytest.raises(TypeError, match="'name' must be a string"):
        mp.Policy(3)
    # TF 2.21: ValueError "Invalid `policy` argument. ..." (None too)
    for bad in (3, None):
        with pytest.raises(ValueError, match="Invalid `policy` argument"):
            mp.set_global_policy(bad)


def test_global_policy():
    # TF 2.21: the default is floatx()'s; set_global_policy does not change floatx
    assert repr(mp.global_policy()) == '<DTypePolicy "float32">'
    assert mp.Policy(None) == mp.Policy("float32")
    mp.set_global_policy(mp.Policy("mixed_float16"))
    assert repr(mp.global_policy()) == '<DTypePolicy "mixed_float16">'
    assert keras.config.dtype_policy() == mp.global_policy() and keras.backend.floatx() == "float32"
    mp.set_global_policy("float64")
    assert keras.backend.floatx() == "float32"
    d = layers.Dense(2)
    assert d(np.ones((2, 4), np.float32)).dtype == tf.float64      # TF 2.21: float64
    assert repr(d.dtype_policy) == '<DTypePolicy "float64">'


def _kernel_values(d):
    k = np.arange(12, dtype=np.float32).reshape(4, 3) / 8 - 0.5
    d.set_weights([k, np.array([0.25, -0.5, 1.0], np.float32)])
    return k


def test_dense_mixed_float16():
    mp.set_global_policy("mixed_float16")
    d = layers.Dense(3)
    # TF 2.21: dtype float32, compute_dtype float16, variable_dtype float32, <DTypePolicy "mixed_float16">
    assert (d.dtype, d.compute_dtype, d.variable_dtype) == ("float32", "float16", "float32")
    assert repr(d.dtype_policy) == '<DTypePolicy "mixed_float16">'
    x = np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4)
    y = d(x)
    assert y.dtype == tf.float16 and d.kernel.dtype == tf.float32 and d.bias.dtype == tf.float32
    k = _kernel_values(d)
    want = (x.astype(np.float16) @ k.astype(np.float16)) + np.array([0.25, -0.5, 1.0], np.float16)
    np.testing.assert_allclose(d(x).numpy().astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
    # TF 2.21: float64 and int32 inputs give float16 outputs too
    assert d(x.astype(np.float64)).dtype == tf.float16
    assert d(tf.ones((2, 4), tf.int32)).dtype == tf.float16
    # the weights stay Variables (the float16 copies live only during call)
    assert isinstance(d.kernel, tf.Variable) and d.kernel.dtype == tf.float32
    # gradients reach the float32 variables in float32: d sum(x @ k + b)/dk = x^T 1
    with tf.GradientTape() as t:
        loss = tf.reduce_sum(tf.cast(d(x), tf.float32))
    gk, gb = t.gradient(loss, d.trainable_variables)
    assert gk.dtype == tf.float32 and gb.dtype == tf.float32           # TF 2.21: [float32, float32]
    np.testing.assert_allclose(gk.numpy(), np.repeat(x.sum(0)[:, None], 3, 1), rtol=1e-3)
    np.testing.assert_allclose(gb.numpy(), [2.0, 2.0, 2.0])
    # the float32 output layer the guide recommends
    a = layers.Activation("linear", dtype="float32")
    assert a(d(x)).dtype == tf.float32 and repr(a.dtype_policy) == '<DTypePolicy "float32">'


def test_functional_and_sequential_mixed():
    mp.set_global_policy("mixed_float16")
    inp = keras.Input((4,))
    assert inp.dtype == tf.float32                                     # TF 2.21: float32
    h = layers.Dense(3, activation="relu")(inp)
    assert h.dtype == tf.float16                                       # TF 2.21: float16
    out = layers.Activation("softmax", dtype="float32")(layers.Dense(2)(h))
    assert out.dtype == tf.float32
    m = keras.Model(inp, out)
    assert m(np.ones((2, 4), np.float32)).dtype == tf.float32
    s = keras.Sequential([keras.Input((4,)), layers.Dense(3), layers.Activation("linear", dtype="float32")])
    assert s.layers[0].compute_dtype == "float16" and s(np.ones((2, 4), np.float32)).dtype == tf.float32


def test_policy_argument_forms_and_config_round_trip():
    x = np.ones((2, 4), np.float32)
    ser = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_float16"},
           "registered_name": None}
    for dt in ("mixed_float16", mp.Policy("mixed_float16"), ser):
        d = layers.Dense(2, dtype=dt)
        assert repr(d.dtype_policy) == '<DTypePolicy "mixed_float16">' and d.dtype == "float32"
        assert d(x).dtype == tf.float16
        # TF 2.21: get_config()['dtype'] is the serialized policy
        assert d.get_config()["dtype"] == ser
        d2 = layers.Dense.from_config(d.get_config())
        assert repr(d2.dtype_policy) == '<DTypePolicy "mixed_float16">' and d2(x).dtype == tf.float16
    assert repr(layers.Dense(2, dtype=tf.float16).dtype_policy) == '<DTypePolicy "float16">'
    assert repr(layers.Dense(2, dtype=np.float64).dtype_policy) == '<DTypePolicy "float64">'
    d = layers.Dense(2)
    d.dtype_policy = "mixed_float16"                                   # TF 2.21: the setter works
    assert d(x).dtype == tf.float16
    d = layers.Dense(2, dtype="mixed_bfloat16")   # (wave 21: bfloat16 exists; tests/test_bfloat16.py)
    assert d(x).dtype == tf.bfloat16 and d.dtype == "float32"


def test_saved_model_round_trip(tmp_path):
    mp.set_global_policy("mixed_float16")
    m = keras.Sequential([keras.Input((4,)), layers.Dense(3), layers.Activation("linear", dtype="float32")])
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    want = m(x).numpy()
    mp.set_global_policy("float32")
    m.save(tmp_path / "m.keras")
    back = keras.models.load_model(tmp_path / "m.keras")
    assert back.layers[0].compute_dtype == "float16" and back.layers[-1].compute_dtype == "float32"
    np.testing.assert_array_equal(back(x).numpy(), want)


@pytest.mark.parametrize("make, shape", [
    (lambda: layers.BatchNormalization(), (3, 4)),
    (lambda: layers.LayerNormalization(), (3, 4)),
    (lambda: layers.GroupNormalization(2), (3, 4)),
    (lambda: layers.Conv2D(2, 3), (1, 5, 5, 2)),
    (lambda: layers.LSTM(2), (2, 3, 4)),
    (lambda: layers.GRU(2), (2, 3, 4)),
    (lambda: layers.SimpleRNN(2), (2, 3, 4)),
])
def test_layers_under_mixed(make, shape):
    # TF 2.21: every one returns float16 and keeps float32 weights
    mp.set_global_policy("mixed_float16")
    layer = make()
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    y = layer(x, training=True)
    assert y.dtype == tf.float16
    assert all(w.dtype == tf.float32 for w in layer.weights)
    mp.set_global_policy("float32")
    ref = make()
    ref(x)
    ref.set_weights(layer.get_weights())
    np.testing.assert_allclose(layer(x).numpy().astype(np.float32), ref(x).numpy(), rtol=2e-2, atol=2e-2)


def test_batchnorm_mixed_updates_float32_statistics():
    mp.set_global_policy("mixed_float16")
    bn = layers.BatchNormalization(momentum=0.5)
    x = np.arange(8, dtype=np.float32).reshape(4, 2) * 100     # float16 squares of these overflow: 600**2
    bn(x, training=True)
    assert bn.moving_mean.dtype == tf.float32
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.5 * x.mean(0), rtol=1e-3)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.5 + 0.5 * x.var(0), rtol=1e-3)


# -- LossScaleOptimizer ---------------------------------------------------------------------------

# TF 2.21: LossScaleOptimizer(SGD(0.1), initial_scale=8.0, dynamic_growth_steps=2) applied to
# v = [1, 2] with these gradients: the scale, v and iterations after each step
LSO_STEPS = [
    ([1.0, 1.0], 8.0, [0.9875, 1.9875], 1),
    ([1.0, 1.0], 16.0, [0.975, 1.9749999], 2),
    ([np.inf, 1.0], 8.0, [0.975, 1.9749999], 2),
    ([np.nan, 1.0], 4.0, [0.975, 1.9749999], 2),
    ([1.0, 1.0], 4.0, [0.95000005, 1.9499999], 3),
    ([1.0, 1.0], 8.0, [0.9250001, 1.925], 4),
    ([2.0, 2.0], 8.0, [0.9000001, 1.9], 5),
]


def _lso_run(traced):
    opt = mp.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=8.0, dynamic_growth_steps=2)
    v = tf.Variable(np.array([1.0, 2.0], np.float32))
    step = (lambda g: opt.apply_gradients([(g, v)]))
    if traced:
        step = tf.function(step)
    out = []
    for g, *_ in LSO_STEPS:
        step(tf.constant(np.array(g, np.float32)))
        out.append((float(opt.dynamic_scale.numpy()), v.numpy().copy(), int(opt.iterations.numpy())))
    return opt, out


@pytest.mark.parametrize("traced", [False, True])
def test_loss_scale_optimizer_trajectory(traced):
    opt, got = _lso_run(traced)
    for (g, scale, v, it), (gs, gv, git) in zip(LSO_STEPS, got):
        assert gs == scale and git == it, (g, gs, git)
        np.testing.assert_allclose(gv, v, rtol=1e-6)
    assert int(opt.step_counter.numpy()) == 1                      # TF 2.21: counter 1


def test_loss_scale_optimizer_api():
    opt = mp.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=8.0, dynamic_growth_steps=2)
    assert float(opt.scale_loss(tf.constant(3.0)).numpy()) == 24.0       # TF 2.21: 24.0 (unbuilt)
    assert keras.optimizers.LossScaleOptimizer is mp.LossScaleOptimizer
    cfg = opt.get_config()
    assert (cfg["name"], cfg["initial_scale"], cfg["dynamic_growth_steps"]) == ("loss_scale_optimizer", 8.0, 2)
    back = mp.LossScaleOptimizer.from_config(cfg)
    assert type(back.inner_optimizer).__name__ == "SGD" and back.initial_scale == 8.0
    assert mp.LossScaleOptimizer(keras.optimizers.Adam()).get_config()["initial_scale"] == 32768.0
    # TF 2.21: ValueError "LossScaleOptimizer no longer supports `dynamic=False`. ..."
    with pytest.raises(ValueError, match="no longer supports `dynamic=False`"):
        mp.LossScaleOptimizer(keras.optimizers.SGD(), dynamic=False)
    with pytest.raises(ValueError, match="does not support `clipnorm`"):
        mp.LossScaleOptimizer(keras.optimizers.SGD(), clipnorm=1.0)
    assert opt.learning_rate is opt.inner_optimizer.learning_rate


def test_fit_under_mixed_float16_scales_the_loss():
    mp.set_global_policy("mixed_float16")
    m = keras.Sequential([keras.Input((4,)), layers.Dense(3), layers.Activation("linear", dtype="float32")])
    m.compile(keras.optimizers.SGD(0.01), "mse")
    assert type(m.optimizer).__name__ == "LossScaleOptimizer"           # TF 2.21: LossScaleOptimizer
    m.fit(np.ones((8, 4), np.float32), np.ones((8, 3), np.float32), epochs=1, verbose=0)
    # TF 2.21: scale 32768.0, iterations 1 after one finite step
    assert float(m.optimizer.dynamic_scale.numpy()) == 32768.0 and int(m.optimizer.iterations.numpy()) == 1
    before = m.get_weights()
    # 1e4 inputs: the float16 gradients of the scaled loss overflow; TF 2.21: scale 16384.0, iterations 1
    m.fit(np.full((8, 4), 1e4, np.float32), np.ones((8, 3), np.float32), epochs=1, verbose=0, batch_size=8)
    assert float(m.optimizer.dynamic_scale.numpy()) == 16384.0 and int(m.optimizer.iterations.numpy()) == 1
    for a, b in zip(before, m.get_weights()):
        np.testing.assert_array_equal(a, b)                             # the step was skipped
    mp.set_global_policy("float32")
    m2 = keras.Sequential([keras.Input((4,)), layers.Dense(3)])
    m2.compile(keras.optimizers.SGD(0.01), "mse")
    assert type(m2.optimizer).__name__ == "SGD"


def test_fit_with_loss_scaling_matches_plain_float32_steps():
    """Scaling the loss and unscaling the gradients changes nothing for a float32 model: the
    same weights as plain SGD, step for step (the scale is a power of two)."""
    x = np.random.default_rng(1).normal(size=(16, 4)).astype(np.float32)
    y = np.random.default_rng(2).normal(size=(16, 1)).astype(np.float32)
    ws = []
    for wrap in (False, True):
        m = keras.Sequential([keras.Input((4,)), layers.Dense(1, kernel_initializer="ones")])
        opt = keras.optimizers.SGD(0.05)
        m.compile(mp.LossScaleOptimizer(opt) if wrap else opt, "mse")
        m.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
        ws.append(m.get_weights())
    for a, b in zip(*ws):
        np.testing.assert_array_equal(a, b)


def test_float32_layer_has_no_policy_state():
    d = layers.Dense(2)
    assert not d._mixed and d._policy is None
    assert d.get_config()["dtype"] == "float32"
