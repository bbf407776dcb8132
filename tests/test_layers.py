"""Keras layers and models: NumPy reference forwards, finite-difference
gradients, lazy build, clone_model, regularization losses, the layer-path
error message, trainable switch, summary, functional API, tapeflow.function."""
import re

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras
from tapeflow.keras import layers as L

F64 = "float64"


def _rng(seed=0):
    return np.random.default_rng(seed)


def _fd_check(layer, x, training=None, eps=1e-6, rtol=1e-5, atol=1e-7, check_input=True):
    """Tape gradients of sum(layer(x) * R) w.r.t. the input and all trainable
    weights against central finite differences (float64)."""
    x = tf.constant(np.asarray(x, np.float64))
    kw = {} if training is None else {"training": training}
    out = layer(x, **kw)
    R = tf.constant(_rng(1).standard_normal(out.shape))
    params = list(layer.trainable_weights)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(layer(x, **kw) * R)
    grads = tape.gradient(loss, [x] + params)

    def f():
        return float(tf.reduce_sum(layer(x, **kw) * R))
    for k, (p, g) in enumerate(zip([x] + params, grads)):
        if k == 0 and not check_input:
            continue
        base = p.numpy().astype(np.float64)
        num = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            for sgn in (1, -1):
                b = base.copy()
                b[i] += sgn * eps
                if k == 0:
                    x = tf.constant(b)
                else:
                    p.assign(b)
                num[i] += sgn * f() / (2 * eps)
            if k == 0:
                x = tf.constant(base)
            else:
                p.assign(base)
        np.testing.assert_allclose(g.numpy(), num, rtol=rtol, atol=atol, err_msg=f"gradient {k}")


# -- Dense -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("activation,ref", [
    (None, lambda z: z), ("relu", lambda z: np.maximum(z, 0)), ("tanh", np.tanh),
    ("sigmoid", lambda z: 1 / (1 + np.exp(-z))), ("softplus", lambda z: np.log1p(np.exp(z))),
    ("elu", lambda z: np.where(z > 0, z, np.expm1(z))), ("swish", lambda z: z / (1 + np.exp(-z))),
    ("softmax", lambda z: np.exp(z) / np.exp(z).sum(-1, keepdims=True)),
])
def test_dense_forward_matches_numpy(activation, ref):
    d = L.Dense(5, activation=activation, dtype=F64)
    x = _rng().standard_normal((4, 3))
    y = d(x).numpy()
    np.testing.assert_allclose(y, ref(x @ d.kernel.numpy() + d.bias.numpy()), rtol=1e-7, atol=1e-9)
    assert d.kernel.shape == (3, 5) and d.bias.shape == (5,)


def test_dense_gradients_finite_differences():
    _fd_check(L.Dense(4, activation="tanh", dtype=F64), _rng().standard_normal((3, 5)))
    _fd_check(L.Dense(2, use_bias=False, dtype=F64), _rng().standard_normal((2, 3, 4)))


def test_dense_rank3_and_no_bias():
    d = L.Dense(2, use_bias=False, dtype=F64)
    x = _rng().standard_normal((2, 3, 4))
    np.testing.assert_allclose(d(x).numpy(), x @ d.kernel.numpy(), rtol=1e-10)
    assert d.bias is None and len(d.weights) == 1


def test_dense_autocasts_float64_numpy_and_builds_lazily():
    d = L.Dense(3)
    assert not d.built and d.weights == []
    y = d(np.ones((2, 7)))            # float64 NumPy in, float32 layer
    assert d.built and y.dtype == tf.float32
    # Keras 3 (TF 2.21) names: short name, the layer path in .path
    assert [v.name for v in d.weights] == ["kernel", "bias"]
    assert [v.path for v in d.weights] == [f"{d.name}/kernel", f"{d.name}/bias"]
    assert d.count_params() == 7 * 3 + 3


def test_dense_torch_linear_init_bounds():
    d = L.Dense(50, kernel_initializer="torch_linear", bias_initializer="torch_linear")
    d.build((None, 400))
    bound = 1 / np.sqrt(400)
    for w in (d.kernel.numpy(), d.bias.numpy()):
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound


# -- other layers ---------------------------------------------------------------------------------------

def test_activation_flatten_reshape_lambda_concat_merges():
    x = _rng().standard_normal((2, 3, 4))
    np.testing.assert_allclose(L.Activation("relu", dtype=F64)(x).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(L.Flatten(dtype=F64)(x).numpy(), x.reshape(2, 12))
    np.testing.assert_allclose(L.Reshape((4, 3), dtype=F64)(x).numpy(), x.reshape(2, 4, 3))
    np.testing.assert_allclose(L.Lambda(lambda t: t * 2.0, dtype=F64)(x).numpy(), 2 * x)
    a, b = _rng(1).standard_normal((2, 3)), _rng(2).standard_normal((2, 5))
    np.testing.assert_allclose(L.Concatenate(dtype=F64)([a, b]).numpy(), np.concatenate([a, b], 1))
    np.testing.assert_allclose(L.Concatenate(axis=0, dtype=F64)([a, a]).numpy(), np.concatenate([a, a], 0))
    c = _rng(3).standard_normal((2, 3))
    np.testing.assert_allclose(L.Add(dtype=F64)([a, c]).numpy(), a + c)
    np.testing.assert_allclose(L.Subtract(dtype=F64)([a, c]).numpy(), a - c)
    np.testing.assert_allclose(L.Multiply(dtype=F64)([a, c]).numpy(), a * c)
    np.testing.assert_allclose(L.Average(dtype=F64)([a, c]).numpy(), (a + c) / 2)
    np.testing.assert_allclose(L.Maximum(dtype=F64)([a, c]).numpy(), np.maximum(a, c))
    np.testing.assert_allclose(L.LeakyReLU(0.1, dtype=F64)(a).numpy(), np.where(a > 0, a, 0.1 * a))
    with pytest.raises(ValueError, match="Concatenate"):
        L.Concatenate()([np.zeros((2, 3), np.float32), np.zeros((3, 3), np.float32)])


def test_concatenate_gradient():
    a = tf.constant(_rng(1).standard_normal((2, 3)))
    b = tf.constant(_rng(2).standard_normal((2, 2)))
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = tf.reduce_sum(L.Concatenate(dtype=F64)([a, b]) * np.arange(5.0))
    ga, gb = tape.gradient(y, [a, b])
    np.testing.assert_allclose(ga.numpy(), np.tile([0.0, 1, 2], (2, 1)))
    np.testing.assert_allclose(gb.numpy(), np.tile([3.0, 4], (2, 1)))


def test_embedding_forward_and_gradient():
    e = L.Embedding(10, 4, dtype=F64)
    ids = np.array([[1, 2], [2, 9]])
    y = e(ids)
    np.testing.assert_allclose(y.numpy(), e.embeddings.numpy()[ids])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(e(ids))
    g = tape.gradient(loss, e.embeddings).numpy()
    expect = np.zeros((10, 4))
    for i in ids.ravel():
        expect[i] += 1
    np.testing.assert_allclose(g, expect)
    assert np.abs(e.embeddings.numpy()).max() <= 0.05  # Keras' default uniform(-0.05, 0.05)


def test_layer_normalization_forward_and_gradients():
    ln = L.LayerNormalization(epsilon=1e-3, dtype=F64)
    x = _rng().standard_normal((3, 5))
    ln.build((None, 5))
    ln.gamma.assign(_rng(4).standard_normal(5))
    ln.beta.assign(_rng(5).standard_normal(5))
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    ref = (x - mu) / np.sqrt(var + 1e-3) * ln.gamma.numpy() + ln.beta.numpy()
    np.testing.assert_allclose(ln(x).numpy(), ref, rtol=1e-10)
    _fd_check(ln, x)


@pytest.mark.parametrize("cls, extra", [(L.LayerNormalization, {}),
                                        (L.BatchNormalization, {"momentum": 0.8,
                                                                "moving_variance_initializer": "zeros"})])
def test_normalization_config_round_trip_and_unknown_axis(cls, extra):
    layer = cls(axis=1, epsilon=0.01, center=False, gamma_initializer="zeros", gamma_regularizer="l2", **extra)
    cfg = layer.get_config()
    assert cfg["axis"] == 1 and cfg["epsilon"] == 0.01 and cfg["center"] is False and cfg["scale"] is True
    for k, v in extra.items():
        assert cfg[k] == (v if k == "momentum" else {"class_name": "Zeros", "config": {}})
    again = cls.from_config(cfg)
    assert again.get_config() == cfg
    again.build((None, 4, 3))
    assert again.beta is None and again.gamma.shape == (4,)
    np.testing.assert_array_equal(again.gamma.numpy(), np.zeros(4, np.float32))
    assert len(again.losses) == 1  # the gamma regularizer
    with pytest.raises(ValueError, match=f"{cls.__name__}: the normalized ax.*input shape \\(\\?, \\?, 3\\)"):
        cls(axis=1).build((None, None, 3))


def test_batch_normalization_training_inference_and_moving_stats():
    bn = L.BatchNormalization(momentum=0.9, epsilon=1e-3, dtype=F64)
    x = _rng().standard_normal((8, 3)) * 2 + 1
    y_inf = bn(x)  # training=None: inference with moving stats (0, 1)
    np.testing.assert_allclose(y_inf.numpy(), x / np.sqrt(1 + 1e-3), rtol=1e-10)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0)
    y = bn(x, training=True)
    mu, var = x.mean(0), x.var(0)
    np.testing.assert_allclose(y.numpy(), (x - mu) / np.sqrt(var + 1e-3), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * mu, rtol=1e-10)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * var, rtol=1e-10)
    assert len(bn.trainable_weights) == 2 and len(bn.non_trainable_weights) == 2
    assert [w.name for w in bn.weights] == ["gamma", "beta", "moving_mean", "moving_variance"]
    _fd_check(bn, x, training=True, rtol=1e-4)
    # a frozen BN runs in inference mode even with training=True (Keras 2)
    bn.trainable = False
    mm = bn.moving_mean.numpy().copy()
    bn(x, training=True)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), mm)
    # training may be a boolean tensor
    bn.trainable = True
    y_t = bn(x, training=tf.constant(False))
    np.testing.assert_allclose(y_t.numpy(), bn(x, training=False).numpy())


def test_dropout_training_flag_seed_and_scaling():
    d = L.Dropout(0.5, seed=3)
    x = np.ones((200, 50), np.float32)
    np.testing.assert_array_equal(d(x).numpy(), x)                 # training=None: identity
    np.testing.assert_array_equal(d(x, training=False).numpy(), x)
    y = d(x, training=True).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert 0.45 < (y == 0).mean() < 0.55
    y2 = L.Dropout(0.5, seed=3)(x, training=True).numpy()
    np.testing.assert_array_equal(y, y2)                            # same seed, same mask
    assert not np.array_equal(d(x, training=True).numpy(), y)       # fresh draw each call


def test_training_propagates_to_sublayers():
    seen = []

    class Probe(L.Layer):
        def call(self, x, training=None):
            seen.append(training)
            return x

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.p = Probe()

        def call(self, x):       # does not accept `training`: the outer value still reaches Probe
            return self.p(x)
    n = Net()
    x = np.zeros((1, 2), np.float32)
    n(x)
    n(x, training=True)
    n(x, training=False)
    assert seen == [None, True, False]


# -- models ------------------------------------------------------------------------------------------

class Critic(keras.Model):
    def __init__(self, hidden=16):
        super().__init__(name="critic")
        self.L1 = L.Dense(hidden, activation="relu", name="L1")
        self.L2 = L.Dense(hidden, activation="relu", name="L2")
        self.q = L.Dense(1, name="q")

    def call(self, inputs, training=None):
        s, a = inputs
        return self.q(self.L2(self.L1(tf.concat([s, a], axis=1))))


def test_subclassed_model_multiple_inputs_lazy_build():
    c = Critic()
    assert not c.built and c.trainable_variables == []
    s, a = np.ones((4, 3), np.float32), np.ones((4, 2), np.float32)
    q = c([s, a])
    assert q.shape == (4, 1) and c.built
    assert len(c.trainable_variables) == 6
    assert [v.shape for v in c.trainable_variables][:2] == [(5, 16), (16,)]
    c2 = Critic()
    c2.build([(None, 3), (None, 2)])
    assert len(c2.weights) == 6


def test_wrong_input_shape_error_names_layer_path():
    c = Critic()
    s, a = np.ones((4, 3), np.float32), np.ones((4, 2), np.float32)
    c([s, a])
    with pytest.raises(ValueError) as ei:
        c.L2(np.ones((4, 7), np.float32))
    msg = str(ei.value)
    assert "'L2'" in msg and "expected shape (None, 16)" in msg and "got shape (4, 7)" in msg, msg

    class Bad(keras.Model):
        """Its call slices L1's output wrongly once L2 was built on the right size."""

        def __init__(self):
            super().__init__(name="critic")
            self.L1 = L.Dense(8, name="L1")
            self.L2 = L.Dense(4, name="L2")

        def call(self, x):
            return self.L2(self.L1(x)[:, :5])
    b = Bad()
    b.L1(np.ones((2, 3), np.float32))
    b.L2(np.ones((2, 8), np.float32))
    with pytest.raises(ValueError) as ei:
        b(np.ones((2, 3), np.float32))
    msg = str(ei.value)
    assert "'critic/L2'" in msg, msg
    assert "expected shape (None, 8)" in msg and "got shape (2, 5)" in msg, msg


def test_input_spec_check_is_remembered_per_spec_and_shape():
    # a repeat call with a shape that passed skips the check; another shape, or a new
    # spec object, is checked again
    d = L.Dense(4, name="d")
    x = np.ones((2, 3), np.float32)
    d(x)
    d(x)
    with pytest.raises(ValueError, match=r"expected axis -1 of the input to have size 3.*got shape \(2, 5\)"):
        d(np.ones((2, 5), np.float32))
    d(tf.ones((7, 3)))
    d(tf.ones((7, 3)))  # a tensor's repeat call: the check __call__ makes inline
    with pytest.raises(ValueError, match=r"expected axis -1 of the input to have size 3.*got shape \(7, 5\)"):
        d(tf.ones((7, 5)))
    assert d(tf.ones((2, 3), tf.float64)).dtype == tf.float32  # another dtype still converts (autocast)
    d.input_spec = L.InputSpec(min_ndim=2, axes={-1: 5})
    with pytest.raises(ValueError, match="expected axis -1 of the input to have size 5"):
        d(x)
    with pytest.raises(ValueError, match="expected axis -1 of the input to have size 5"):
        d(tf.ones((7, 3)))


def test_errors_inside_call_are_annotated_with_the_path():
    class Inner(L.Layer):
        def call(self, x):
            return tf.matmul(x, tf.ones((5, 2)))

    class Outer(keras.Model):
        def __init__(self):
            super().__init__(name="actor")
            self.body = Inner(name="body")

        def call(self, x):
            return self.body(x)
    with pytest.raises(ValueError, match=re.escape("in layer 'actor/body' (Inner 'body')")) as ei:
        Outer()(np.ones((2, 3), np.float32))
    assert "(2, 3)" in str(ei.value)


def test_sequential_add_summary_and_input_shape(capsys):
    m = keras.Sequential(name="q")
    m.add(L.Dense(8, activation="relu", input_shape=(4,)))
    m.add(L.Dense(2))
    assert m.built and len(m.weights) == 4
    m.summary()
    out = capsys.readouterr().out
    assert 'Model: "q"' in out and "(None, 8)" in out and "(None, 2)" in out
    assert "Total params: 58" in out and "Trainable params: 58" in out
    m2 = keras.Sequential([keras.Input(shape=(3,)), L.Dense(2)])
    assert m2.built and m2.output_shape == (None, 2)
    m3 = keras.Sequential([L.Dense(2)])
    m3.summary()        # Keras 3 shows an unbuilt layer as "?" and "0 (unbuilt)"
    assert "0 (unbuilt)" in capsys.readouterr().out
    m3.build((None, 6))
    assert m3.layers[0].kernel.shape == (6, 2)
    assert m.pop() is not None and len(m.layers) == 1


def test_get_set_weights_and_trainable_switch():
    m = keras.Sequential([L.Dense(3, input_shape=(2,)), L.BatchNormalization(), L.Dense(1)])
    ws = m.get_weights()
    # Keras 3's order (TF 2.21): layer by layer, each layer's trainable weights then its non-trainable ones
    assert [w.shape for w in ws] == [(2, 3), (3,), (3,), (3,), (3,), (3,), (3, 1), (1,)]
    assert len(m.trainable_weights) == 6 and len(m.non_trainable_weights) == 2
    new = [w + 1 for w in ws]
    m.set_weights(new)
    for a, b in zip(m.get_weights(), new):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="weight 0"):
        m.set_weights([np.zeros((5, 5))] + new[1:])
    with pytest.raises(ValueError, match="8 weights"):
        m.set_weights(new[:3])
    m.layers[0].trainable = False
    assert len(m.trainable_weights) == 4 and len(m.non_trainable_weights) == 4
    m.trainable = False
    assert m.trainable_weights == [] and len(m.weights) == 8
    assert all(not l.trainable for l in m.layers)
    m.trainable = True
    assert len(m.trainable_weights) == 6


def test_clone_model_sequential_subclassed_functional():
    q = keras.Sequential([L.Dense(8, activation="relu"), L.Dense(2)])
    x = np.ones((3, 4), np.float32)
    q(x)
    t = keras.models.clone_model(q)
    assert t.built and len(t.weights) == 4
    assert all(a is not b for a, b in zip(t.weights, q.weights))
    assert not np.allclose(t.weights[0].numpy(), q.weights[0].numpy())   # fresh initial values
    t.set_weights(q.get_weights())
    np.testing.assert_allclose(t(x).numpy(), q(x).numpy())
    # subclassed: replays the constructor arguments
    c = Critic(hidden=7)
    s, a = np.ones((2, 3), np.float32), np.ones((2, 2), np.float32)
    c([s, a])
    c2 = keras.models.clone_model(c)
    assert c2.built and [v.shape for v in c2.weights] == [v.shape for v in c.weights]
    c2.set_weights(c.get_weights())
    np.testing.assert_allclose(c2([s, a]).numpy(), c([s, a]).numpy())
    # functional
    inp = keras.Input(shape=(4,))
    out = L.Dense(1, activation="tanh")(L.Dense(5, activation="relu")(inp)) * 2.0
    f = keras.Model(inp, out)
    f2 = keras.models.clone_model(f)
    f2.set_weights(f.get_weights())
    np.testing.assert_allclose(f2(x).numpy(), f(x).numpy())


def test_functional_two_input_critic_like_keras_ddpg_example():
    s_in = keras.Input(shape=(3,))
    a_in = keras.Input(shape=(1,))
    s_out = L.Dense(16, activation="relu")(s_in)
    a_out = L.Dense(8, activation="relu")(a_in)
    cat = L.Concatenate()([s_out, a_out])
    q = L.Dense(1)(L.Dense(16, activation="relu")(cat))
    model = keras.Model([s_in, a_in], q, name="critic")
    s, a = _rng().standard_normal((5, 3)), _rng(1).standard_normal((5, 1))
    y = model([s, a])
    assert y.shape == (5, 1)
    k = [w.numpy() for w in model.weights]
    h = np.concatenate([np.maximum(s @ k[0] + k[1], 0), np.maximum(a @ k[2] + k[3], 0)], 1)
    ref = np.maximum(h @ k[4] + k[5], 0) @ k[6] + k[7]
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-6)
    assert len(model.trainable_variables) == 8
    with pytest.raises(ValueError, match="expected shape"):
        model([np.ones((5, 4), np.float32), a])


def test_regularization_losses():
    m = keras.Sequential([
        L.Dense(3, kernel_regularizer=keras.regularizers.l2(0.1), bias_regularizer=keras.regularizers.l1(0.5),
                bias_initializer="ones", input_shape=(2,)),
        L.Dense(1, kernel_regularizer=keras.regularizers.L1L2(l1=0.01, l2=0.02)),
    ])
    k1, b1, k2 = m.layers[0].kernel.numpy(), m.layers[0].bias.numpy(), m.layers[1].kernel.numpy()
    losses = [float(l) for l in m.losses]
    expect = [0.1 * (k1 ** 2).sum(), 0.5 * np.abs(b1).sum(), 0.01 * np.abs(k2).sum() + 0.02 * (k2 ** 2).sum()]
    np.testing.assert_allclose(sorted(losses), sorted(expect), rtol=1e-5)
    # recomputed from the current values, and differentiable
    m.layers[0].kernel.assign(np.zeros((2, 3), np.float32))
    with tf.GradientTape() as tape:
        total = tf.add_n(m.losses)
    g = tape.gradient(total, m.layers[0].bias)
    np.testing.assert_allclose(g.numpy(), 0.5 * np.sign(b1), rtol=1e-6)
    # activity regularizer: added per call, cleared at the next call
    d = L.Dense(2, activity_regularizer="l2")
    y = d(np.ones((4, 3), np.float32))
    assert len(d.losses) == 1
    np.testing.assert_allclose(float(d.losses[0]), 0.01 * float(tf.reduce_sum(y * y)) / 4, rtol=1e-5)
    d(np.ones((4, 3), np.float32))
    assert len(d.losses) == 1


def test_add_weight_custom_layer_and_names():
    keras.backend.clear_session()

    class Scale(L.Layer):
        def build(self, input_shape):
            self.s = self.add_weight("s", shape=(input_shape[-1],), initializer="ones")
            self.c = self.add_weight("count", shape=(), initializer="zeros", trainable=False)

        def call(self, x):
            return x * self.s

    a, b = Scale(), Scale()
    assert (a.name, b.name) == ("scale", "scale_1")
    assert L.Dense(1).name == "dense" and L.Dense(1, name="head").name == "head"
    a(np.ones((1, 3), np.float32))
    assert [w.path for w in a.trainable_weights] == ["scale/s"] and len(a.non_trainable_weights) == 1
    w = a.add_weight((2, 2), initializer="ones")     # Keras 3's argument order
    assert w.shape == (2, 2) and len(a.weights) == 3


def test_initializers_are_seeded_and_have_the_right_scale():
    I = keras.initializers
    shape = (300, 200)
    a = I.GlorotUniform(seed=1)(shape).numpy()
    np.testing.assert_array_equal(a, I.GlorotUniform(seed=1)(shape).numpy())
    assert np.abs(a).max() <= np.sqrt(6 / 500)
    assert abs(a.std() - np.sqrt(2 / 500)) < 0.05 * np.sqrt(2 / 500)
    for cls, std in [(I.HeNormal, np.sqrt(2 / 300)), (I.LecunNormal, np.sqrt(1 / 300)),
                     (I.GlorotNormal, np.sqrt(2 / 500)), (I.HeUniform, np.sqrt(2 / 300)),
                     (I.LecunUniform, np.sqrt(1 / 300))]:
        w = cls(seed=2)(shape).numpy()
        assert abs(w.std() - std) < 0.05 * std, cls
    o = I.Orthogonal(seed=0)((6, 4)).numpy()
    np.testing.assert_allclose(o.T @ o, np.eye(4), atol=1e-5)
    np.testing.assert_array_equal(I.Zeros()((2,)).numpy(), 0)
    np.testing.assert_array_equal(I.Constant(3)((2,)).numpy(), 3)
    tn = I.TruncatedNormal(stddev=1.0, seed=0)((10000,)).numpy()
    assert np.abs(tn).max() <= 2.0
    ru = I.RandomUniform(-1, 1, seed=0)((1000,)).numpy()
    assert -1 <= ru.min() and ru.max() <= 1
    assert isinstance(I.get("he_normal"), I.HeNormal) and isinstance(I.get("GlorotUniform"), I.GlorotUniform)
    tf.random.set_seed(5)
    u1 = I.GlorotUniform()((3, 3)).numpy()
    tf.random.set_seed(5)
    np.testing.assert_array_equal(u1, I.GlorotUniform()((3, 3)).numpy())


def test_activations_by_name():
    A = keras.activations
    x = np.linspace(-3, 3, 7).astype(np.float32)
    for name, ref in [("relu", np.maximum(x, 0)), ("tanh", np.tanh(x)), ("linear", x),
                      ("selu", 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
                      ("leaky_relu", np.where(x > 0, x, 0.2 * x)), ("softsign", x / (1 + np.abs(x)))]:
        np.testing.assert_allclose(A.get(name)(tf.constant(x)).numpy(), ref, rtol=1e-5, atol=1e-6)
    from math import erf
    np.testing.assert_allclose(A.gelu(tf.constant(x)).numpy(),
                               [0.5 * v * (1 + erf(v / np.sqrt(2))) for v in x], rtol=1e-5, atol=1e-6)
    assert A.get(None) is A.linear and A.serialize(A.relu) == "relu"
    with pytest.raises(ValueError):
        A.get("nope")


# -- tapeflow.function ------------------------------------------------------------------------------------

def test_sequential_forward_and_adam_step_compiled_match_eager():
    def make():
        return keras.Sequential([L.Dense(16, activation="relu", kernel_initializer=keras.initializers.GlorotUniform(1)),
                                 L.Dense(3, kernel_initializer=keras.initializers.GlorotUniform(2))])
    x = tf.constant(_rng().standard_normal((8, 5)).astype(np.float32))
    y = tf.constant(_rng(1).standard_normal((8, 3)).astype(np.float32))
    models, opts = [make(), make()], [keras.optimizers.Adam(1e-2), keras.optimizers.Adam(1e-2)]
    loss_fn = keras.losses.MeanSquaredError()

    def step(model, opt, x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    compiled = tf.function(lambda x, y: step(models[1], opts[1], x, y))
    for _ in range(4):
        le = step(models[0], opts[0], x, y)
        lc = compiled(x, y)
        np.testing.assert_allclose(lc.numpy(), le.numpy(), rtol=1e-5)
    for a, b in zip(models[0].weights, models[1].weights):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    assert int(opts[1].iterations.numpy()) == 4
    fwd = tf.function(models[1])
    np.testing.assert_allclose(fwd(x).numpy(), models[1](x).numpy(), rtol=1e-6)


def test_two_positional_inputs_clone_and_deepcopy():
    import copy

    class TwinCritic(keras.Model):
        def __init__(self, hidden):
            super().__init__()
            self.l1 = L.Dense(hidden, activation="relu")
            self.l2 = L.Dense(1)
            self.l3 = L.Dense(hidden, activation="relu")
            self.l4 = L.Dense(1)

        def call(self, state, action):
            sa = tf.concat([state, action], 1)
            return self.l2(self.l1(sa)), self.l4(self.l3(sa))

    c = TwinCritic(8)
    s, a = np.ones((2, 3), np.float32), np.ones((2, 1), np.float32)
    q1, q2 = c(s, a)
    for t in (keras.models.clone_model(c), copy.deepcopy(c)):
        assert t.built and len(t.weights) == 8
        assert all(x is not y for x, y in zip(t.weights, c.weights))
        t.set_weights(c.get_weights())
        np.testing.assert_allclose(t(s, a)[1].numpy(), q2.numpy())
        t.l1.kernel.assign_add(np.ones((4, 8), np.float32))   # independent variables
        assert not np.allclose(t.l1.kernel.numpy(), c.l1.kernel.numpy())


def test_custom_build_calling_super_build():
    class M(keras.Model):
        def build(self, input_shape):
            self.w = self.add_weight("w", (input_shape[-1], 2))
            super().build(input_shape)

        def call(self, x):
            return tf.matmul(x, self.w)
    m = M()
    m.build((None, 3))
    assert len(m.weights) == 1 and m(np.ones((2, 3), np.float32)).shape == (2, 2)
    m2 = M()
    m2(np.ones((2, 3), np.float32))
    assert len(m2.weights) == 1


def test_save_and_load_weights(tmp_path):
    m = keras.Sequential([L.Dense(3, input_shape=(2,)), L.Dense(1)])
    p = str(tmp_path / "w.weights.h5")
    m.save_weights(p)
    m2 = keras.models.clone_model(m)
    m2.load_weights(p)
    for a, b in zip(m.get_weights(), m2.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_weights_order_is_keras3s_per_layer_order():
    # TF 2.21's names for this model (tests run without TF): each layer's own weights, its trainable
    # ones first, then its sublayers'. All trainable weights first put BatchNormalization's moving
    # statistics after the next layer's weights: set_weights(TF's get_weights()) then assigned
    # equal-shaped arrays to the wrong weights without an error.
    class Odd(tf.keras.layers.Layer):
        def build(self, shape):
            self.count = self.add_weight(name="count", shape=(), trainable=False, initializer="zeros")
            self.w = self.add_weight(name="w", shape=(shape[-1], 2))

        def call(self, x):
            return x @ self.w

    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8), tf.keras.layers.BatchNormalization(),
                             Odd(), tf.keras.layers.Dense(2)])
    assert [w.name for w in m.weights] == ["kernel", "bias", "gamma", "beta", "moving_mean", "moving_variance",
                                           "w", "count", "kernel", "bias"]
    assert [w.name for w in m.trainable_weights] == ["kernel", "bias", "gamma", "beta", "w", "kernel", "bias"]
    assert [w.name for w in m.non_trainable_weights] == ["moving_mean", "moving_variance", "count"]
    values = [np.full(w.shape, i, np.float32) for i, w in enumerate(m.weights)]
    m.set_weights(values)
    bn = m.layers[1]
    assert float(bn.moving_mean.numpy()[0]) == 4.0 and float(bn.gamma.numpy()[0]) == 2.0
    for got, want in zip(m.get_weights(), values):
        np.testing.assert_array_equal(got, want)
    inner = tf.keras.Sequential([tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(3)])
    i = tf.keras.Input((3,))
    f = tf.keras.Model(i, tf.keras.layers.Dense(2)(inner(tf.keras.layers.Dense(3)(i))))
    assert [w.name for w in f.weights] == ["kernel", "bias", "gamma", "beta", "moving_mean", "moving_variance",
                                           "kernel", "bias", "kernel", "bias"]
