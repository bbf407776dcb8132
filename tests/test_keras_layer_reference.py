"""Keras layers against TF 2.21's Keras 3: the same weights give the same outputs
(tests/data/layer_reference.npz, recorded by tests/tf_reference/make_layer_reference.py from the
cases in tests/layer_cases.py), eagerly and inside tf.function; gradients against finite
differences; Keras' errors. Attention layers first, then the other layers added with them."""
import os

import numpy as np
import pytest

import tapeflow as tf
from layer_cases import CASES, build
from conftest import check_grads

K = tf.keras
REF = np.load(os.path.join(os.path.dirname(__file__), "data", "layer_reference.npz"))


def _case(name):
    cls, kwargs, call_kwargs, in_shapes = CASES[name]
    n_in = len(in_shapes[0]) if isinstance(in_shapes[0], list) else len(in_shapes)
    ins = [REF[f"{name}/in{i}"] for i in range(n_in)]
    args = [ins] if isinstance(in_shapes[0], list) else ins
    ckw = {}
    for k, v in call_kwargs.items():
        if isinstance(v, str):
            ms = [REF[key] for key in sorted(x for x in REF.files if x.startswith(f"{name}/kw_{k}"))]
            ckw[k] = ms if k == "mask" else ms[0]
        else:
            ckw[k] = v
    weights = [REF[f"{name}/w{i}"] for i in range(sum(1 for x in REF.files if x.startswith(f"{name}/w")))]
    outs = [REF[f"{name}/out{i}"] for i in range(sum(1 for x in REF.files if x.startswith(f"{name}/out")))]
    return build(K.layers, cls, kwargs), args, ckw, weights, outs


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("mode", ["eager", "function"])
def test_same_weights_give_tfs_outputs(name, mode):
    layer, args, ckw, weights, outs = _case(name)
    layer(*args, **ckw)
    assert [tuple(w.shape) for w in layer.weights] == [w.shape for w in weights]   # Keras' order and shapes
    layer.set_weights(weights)
    call = (lambda *a: layer(*a, **ckw)) if mode == "eager" else tf.function(lambda *a: layer(*a, **ckw))
    got = call(*args)
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    assert len(got) == len(outs)
    for g, want in zip(got, outs):
        assert g.shape == want.shape
        np.testing.assert_allclose(g.numpy(), want, rtol=2e-5, atol=2e-6)


def test_fully_masked_row_follows_keras_two_paths():
    # TF 2.21: with the scores returned, a query row with every key masked gives zero weights
    # (Keras' Softmax layer); without them, dot_product_attention averages all values
    *_, out_plain = _case("mha_amask")
    *_, out_scores = _case("mha_amask_scores")
    assert not np.allclose(out_plain[0][1, 2], out_scores[0][1, 2])
    np.testing.assert_array_equal(out_scores[1][1, :, 2], 0.0)


def test_mha_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    layer = K.layers.MultiHeadAttention(num_heads=2, key_dim=2, dtype="float64")
    q, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 3))
    mask = np.ones((2, 3, 5), bool)
    mask[0, :, 3:] = False
    layer(q, v)

    def f(q, v):
        return layer(q, v, attention_mask=mask)
    check_grads(f, [q, v], order=1)
    x = tf.constant(q)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layer(x, v) ** 2)
    grads = tape.gradient(y, layer.trainable_weights)
    assert len(grads) == 8 and all(g is not None for g in grads)


@pytest.mark.parametrize("cls,kw", [("Attention", {"use_scale": True, "score_mode": "concat"}),
                                    ("AdditiveAttention", {})])
def test_attention_gradients_match_finite_differences(cls, kw):
    rng = np.random.default_rng(1)
    layer = getattr(K.layers, cls)(dtype="float64", **kw)
    q, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    layer([q, v])
    check_grads(lambda q, v: layer([q, v], mask=[None, np.array([[1, 1, 0, 1, 1], [1] * 5], bool)]), [q, v])


def test_dot_normalize_gradient_and_zero_row():
    rng = np.random.default_rng(2)
    layer = K.layers.Dot(axes=1, normalize=True, dtype="float64")
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    check_grads(lambda a, b: layer([a, b]), [a, b])
    a[1] = 0.0   # Keras: the norm is clamped at 1e-7, a zero row gives 0 (not NaN)
    np.testing.assert_array_equal(layer([a, b]).numpy()[1], [0.0])


def test_transformer_block_trains_with_fit():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 6, 4)).astype(np.float32)
    y = x[:, ::-1, :1].sum(axis=1)          # needs attention across the sequence
    inp = K.Input((6, 4))
    h = K.layers.MultiHeadAttention(num_heads=2, key_dim=4)(inp, inp)
    h = K.layers.LayerNormalization()(h + inp)
    out = K.layers.Dense(1)(K.layers.Flatten()(h))
    model = K.Model(inp, out)
    model.compile(optimizer=K.optimizers.Adam(0.01), loss="mse")
    first = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=30, batch_size=16, verbose=0)
    assert model.evaluate(x, y, verbose=0) < 0.3 * first


def test_configs_round_trip():
    for name, (cls, kwargs, _, _) in CASES.items():
        layer = build(K.layers, cls, kwargs)
        again = type(layer).from_config(layer.get_config())
        assert again.get_config() == layer.get_config(), name
    cfg = K.layers.MultiHeadAttention(num_heads=2, key_dim=3).get_config()
    # TF 2.21: value_dim defaults to key_dim, the attention axes are filled in at build
    assert cfg["value_dim"] == 3 and cfg["output_shape"] is None and cfg["use_gate"] is False


@pytest.mark.parametrize("make,call,err,needle", [
    (lambda: K.layers.Attention(), lambda l: l(np.ones((2, 3, 4), np.float32)), ValueError, "list of inputs"),
    (lambda: K.layers.Attention(), lambda l: l([np.ones((2, 3, 4), np.float32)] * 4), ValueError, "length 2 or 3"),
    (lambda: K.layers.Attention(score_mode="add"), None, ValueError, "score_mode"),
    (lambda: K.layers.MultiHeadAttention(num_heads=0, key_dim=2), None, ValueError, "num_heads"),
    (lambda: K.layers.MultiHeadAttention(num_heads=2, key_dim=2.5), None, ValueError, "key_dim"),
    (lambda: K.layers.MultiHeadAttention(num_heads=2, key_dim=2),
     lambda l: l(np.ones((2, 3, 4), np.float32), np.ones((2, 5, 4), np.float32), np.ones((2, 6, 4), np.float32)),
     ValueError, "value` and `key"),
    (lambda: K.layers.Dot(axes=(1, 2, 3)), None, ValueError, "two ints"),
    (lambda: K.layers.Dot(axes=0), lambda l: l([np.ones((2, 3), np.float32)] * 2), ValueError, "axis 0"),
    (lambda: K.layers.Dot(axes=1), lambda l: l([np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)]),
     ValueError, "3"),
    (lambda: K.layers.EinsumDense("ab,bc", 3), lambda l: l(np.ones((2, 3), np.float32)), ValueError, "equation"),
    (lambda: K.layers.EinsumDense("abc,cd->abd", (None, 4)), lambda l: l(np.ones((2, 3), np.float32)),
     ValueError, "rank 3"),
    (lambda: K.layers.EinsumDense("ab,bc->ac", 4, bias_axes="x"), lambda l: l(np.ones((2, 3), np.float32)),
     ValueError, "bias axis"),
])
def test_bad_arguments_raise_like_keras(make, call, err, needle):
    # TF 2.21 raises ValueError for each (the texts name the same argument)
    with pytest.raises(err, match=needle):
        layer = make()
        call(layer)


def test_softmax_layer_masks_like_keras3():
    x = np.array([[1., 2., 3.], [4., 5., 6.]], np.float32)
    S = K.layers.Softmax
    # TF 2.21: a fully masked row is zeros; a numeric mask keeps entries > 0.5
    np.testing.assert_allclose(S()(x, mask=np.array([[1, 0, 1], [0, 0, 0]], bool)).numpy(),
                               [[0.119203, 0., 0.880797], [0., 0., 0.]], atol=1e-6)
    np.testing.assert_allclose(S()(x, mask=np.array([[0.7, 0.2, 1.], [0., 0.6, 0.]], np.float32)).numpy(),
                               [[0.119203, 0., 0.880797], [0., 1., 0.]], atol=1e-6)
    np.testing.assert_allclose(S(axis=(0, 1))(x).numpy(),
                               [[0.00427, 0.011606, 0.03155], [0.085761, 0.233122, 0.633691]], atol=1e-6)
    np.testing.assert_allclose(S(axis=[1])(x).numpy(), [[0.090031, 0.244728, 0.665241]] * 2, atol=1e-6)
    with pytest.raises(ValueError, match="broadcastable"):
        S()(x, mask=np.ones((1, 2, 3), bool))


# -- the other layers added with them -------------------------------------------------------------
ENCODING_CASES = [   # TF 2.21's outputs (CategoryEncoding(num_tokens=4, output_mode=mode)(ids))
    ("one_hot", [3, 2], [[0, 0, 0, 1], [0, 0, 1, 0]]),
    ("one_hot", [[1], [3]], [[0, 1, 0, 0], [0, 0, 0, 1]]),                   # a trailing 1 is replaced
    ("one_hot", 2, [[0, 0, 1, 0]]),
    ("one_hot", [0, 4], [[1, 0, 0, 0], [0, 0, 0, 0]]),                      # out of range: a zero row
    ("multi_hot", [3, 2, 0, 1], [1, 1, 1, 1]),                               # rank 1 is one sample
    ("multi_hot", [[0, 1], [0, 0], [1, 2]], [[1, 1, 0, 0], [1, 0, 0, 0], [0, 1, 1, 0]]),
    ("multi_hot", [[[0, 1], [2, 2]]], [[[1, 0, 1, 0], [0, 1, 1, 0]]]),       # rank 3: axis 1 is reduced
    ("multi_hot", [0, 4], [1, 0, 0, 0]),                                     # ids >= num_tokens dropped
    ("count", [[0, 1], [0, 0], [1, 2]], [[1, 1, 0, 0], [2, 0, 0, 0], [0, 1, 1, 0]]),
    ("count", 2, [0, 0, 1, 0]),
]


@pytest.mark.parametrize("mode,ids,want", ENCODING_CASES)
@pytest.mark.parametrize("compiled", [False, True])
def test_category_encoding_matches_tf(mode, ids, want, compiled):
    layer = K.layers.CategoryEncoding(num_tokens=4, output_mode=mode)
    f = tf.function(layer) if compiled else layer
    out = f(tf.constant(np.array(ids)))
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), np.array(want, np.float32))


def test_category_encoding_counts_weights_and_refuses_negative_ids():
    layer = K.layers.CategoryEncoding(num_tokens=4, output_mode="count")
    out = layer(np.array([[0, 1, 1], [2, 2, 3]]), count_weights=np.array([[.5, 1, 2], [1, 1, 3]], np.float32))
    np.testing.assert_array_equal(out.numpy(), [[0.5, 3.0, 0.0, 0.0], [0.0, 0.0, 2.0, 3.0]])   # TF 2.21
    with pytest.raises(tf.errors.InvalidArgumentError):      # TF 2.21: bincount's "must be non-negative"
        K.layers.CategoryEncoding(num_tokens=4, output_mode="multi_hot")(np.array([-1, 0]))
    with pytest.raises(ValueError, match="count_weights"):
        K.layers.CategoryEncoding(num_tokens=4, output_mode="one_hot")(np.array([1]), count_weights=np.ones(1))


def test_discretization_matches_tf():
    d = K.layers.Discretization(bin_boundaries=[0., 1., 2.])
    # TF 2.21: boundaries[i-1] <= x < boundaries[i]; NaN and inf in the last bin; int32 ids
    out = d(np.array([[-1., 0.5, 1., 3., 2.]], np.float32))
    assert out.dtype == tf.int32
    np.testing.assert_array_equal(out.numpy(), [[0, 1, 2, 3, 3]])
    np.testing.assert_array_equal(d(np.array([np.nan, -np.inf, np.inf], np.float32)).numpy(), [3, 0, 3])
    np.testing.assert_array_equal(d(np.array([1, 2, 5])).numpy(), [2, 3, 3])
    x = np.array([[-1., 0.5], [3., 3.]], np.float32)
    np.testing.assert_array_equal(K.layers.Discretization(bin_boundaries=[0., 1.], output_mode="multi_hot")(x),
                                  [[1, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(K.layers.Discretization(bin_boundaries=[0., 1.], output_mode="count")(x),
                                  [[1, 1, 0], [0, 0, 2]])
    with pytest.raises(NotImplementedError, match="bin_boundaries"):
        K.layers.Discretization(num_bins=3).adapt(np.arange(10.))


def test_activity_regularization_adds_keras_loss():
    x = np.arange(12., dtype=np.float32).reshape(4, 3) / 10
    layer = K.layers.ActivityRegularization(l1=0.1, l2=0.01)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    np.testing.assert_allclose([float(v) for v in layer.losses], [0.17765], rtol=1e-6)   # TF 2.21 (per sample)


@pytest.mark.parametrize("cls,kw", [("GaussianDropout", {"rate": 0.3}), ("AlphaDropout", {"rate": 0.2}),
                                    ("SpatialDropout1D", {"rate": 0.5})])
def test_noise_layers_in_training_only_with_keras_statistics(cls, kw):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((400, 50, 8)).astype(np.float32)
    layer = getattr(K.layers, cls)(seed=1, **kw)
    np.testing.assert_array_equal(layer(x).numpy(), x)                  # inference: identity
    y = layer(x, training=True).numpy()
    assert not np.array_equal(y, x)
    if cls == "GaussianDropout":    # multiplicative N(1, rate / (1 - rate)) noise
        ratio = y / x
        assert abs(ratio.mean() - 1) < 0.01 and abs(ratio.var() - 0.3 / 0.7) < 0.01
    elif cls == "AlphaDropout":     # keeps a standard normal's mean and variance (the SELU fixed point)
        assert abs(y.mean()) < 0.02 and abs(y.var() - 1) < 0.03
        assert abs(np.mean(y == np.float32(-0.2 * 0 - 1.7580993408473766 * _a(0.2) + _b(0.2))) - 0.2) < 0.01
    else:                           # whole channels dropped: each (sample, channel) all zero or all kept
        zero = (y == 0).all(axis=1)
        kept = np.isclose(y, 2 * x).all(axis=1)
        assert (zero | kept).all() and abs(zero.mean() - 0.5) < 0.05


def _a(rate):
    alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
    return ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5


def _b(rate):
    alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
    return -_a(rate) * alpha_p * rate


@pytest.mark.parametrize("make,shape", [
    (lambda: K.layers.GroupNormalization(groups=2, dtype="float64"), (2, 3, 4)),
    (lambda: K.layers.RMSNormalization(dtype="float64"), (2, 3, 4)),
    (lambda: K.layers.UnitNormalization(dtype="float64"), (2, 3, 4)),
    (lambda: K.layers.DepthwiseConv2D(2, depth_multiplier=2, dtype="float64"), (1, 4, 3, 2)),
    (lambda: K.layers.SeparableConv2D(3, 2, padding="same", dtype="float64"), (1, 4, 3, 2)),
    (lambda: K.layers.Conv1DTranspose(2, 3, strides=2, dtype="float64"), (2, 4, 3)),
])
def test_new_layer_gradients_match_finite_differences(make, shape):
    layer = make()
    x = np.random.default_rng(5).standard_normal(shape)
    layer(x)
    check_grads(lambda x: layer(x), [x])


@pytest.mark.parametrize("make,x,needle", [
    (lambda: K.layers.Cropping1D((3, 3)), np.ones((1, 5, 2), np.float32), "smaller"),
    (lambda: K.layers.Cropping2D(((3, 3), (0, 0))), np.ones((1, 5, 4, 2), np.float32), "smaller"),
    (lambda: K.layers.Cropping2D((1, 2, 3)), None, "cropping"),
    (lambda: K.layers.GroupNormalization(groups=8), np.ones((1, 2, 4), np.float32), "cannot be more"),
    (lambda: K.layers.GroupNormalization(groups=3), np.ones((1, 2, 4), np.float32), "multiple"),
    (lambda: K.layers.ThresholdedReLU(theta=-1), None, "theta"),
    (lambda: K.layers.GaussianDropout(1.5), None, "rate"),
    (lambda: K.layers.CategoryEncoding(num_tokens=None), None, "num_tokens"),
    (lambda: K.layers.Discretization(bin_boundaries=[0.], num_bins=2), None, "both"),
])
def test_new_layer_bad_arguments_raise_like_keras(make, x, needle):
    # TF 2.21 raises ValueError for each
    with pytest.raises(ValueError, match=needle):
        layer = make()
        layer(x)


def _masked_model(kind):
    inp = K.Input((5,), dtype="int32")
    h = K.layers.Embedding(10, 4, mask_zero=True)(inp)
    att = K.layers.MultiHeadAttention(num_heads=2, key_dim=3)(h, h) if kind == "mha" else \
        K.layers.Attention()([h, h])
    return K.Model(inp, K.layers.GlobalAveragePooling1D()(att))


@pytest.mark.parametrize("kind,name", [("mha", "model_mha_mask"), ("attention", "model_attention_mask")])
@pytest.mark.parametrize("compiled", [False, True])
def test_embedding_mask_reaches_attention_in_a_model(kind, name, compiled):
    # TF 2.21: the padding (id 0) is masked as query and as key, and the pooling skips it
    model = _masked_model(kind)
    n = sum(1 for k in REF.files if k.startswith(f"{name}/w"))
    model.set_weights([REF[f"{name}/w{i}"] for i in range(n)])
    ids = REF[f"{name}/in0"]
    got = (tf.function(model) if compiled else model)(ids)
    np.testing.assert_allclose(got.numpy(), REF[f"{name}/out0"], rtol=2e-5, atol=2e-6)


def test_mha_given_query_mask_is_used():
    # (tapeflow uses a given query_mask; TF 2.21 ignores it: docs/differences.md) -- equal to the
    # same mask spelled as an attention_mask
    rng = np.random.default_rng(8)
    q, v = rng.standard_normal((2, 4, 5)).astype(np.float32), rng.standard_normal((2, 6, 5)).astype(np.float32)
    qm = np.array([[1, 1, 0, 1], [1, 0, 0, 0]], bool)
    layer = K.layers.MultiHeadAttention(num_heads=2, key_dim=3)
    a = layer(q, v, query_mask=qm, return_attention_scores=True)
    b = layer(q, v, attention_mask=np.broadcast_to(qm[:, :, None], (2, 4, 6)), return_attention_scores=True)
    np.testing.assert_array_equal(a[0].numpy(), b[0].numpy())
    np.testing.assert_array_equal(a[1].numpy()[0, :, 2], 0.0)


def test_spectral_normalization_state_and_errors():
    # the power iteration's result is stored: after a training call the kernel's top singular value
    # is ~1 (one iteration from a good u), vector_u moves; an all-zero kernel is left as it is
    rng = np.random.default_rng(5)
    sn = K.layers.SpectralNormalization(K.layers.Dense(3), power_iterations=20)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    sn(x)
    sn.layer.kernel.assign(rng.standard_normal((5, 3)).astype(np.float32) * 3)
    u0 = sn.vector_u.numpy().copy()
    np.testing.assert_array_equal(sn(x).numpy(), x @ sn.layer.kernel.numpy())     # inference: as stored
    sn(x, training=True)
    assert abs(np.linalg.svd(sn.layer.kernel.numpy(), compute_uv=False)[0] - 1.0) < 1e-4
    assert not np.allclose(sn.vector_u.numpy(), u0)
    sn.layer.kernel.assign(np.zeros((5, 3), np.float32))
    sn(x, training=True)
    assert not sn.layer.kernel.numpy().any() and np.isfinite(sn.vector_u.numpy()).all()
    with pytest.raises(ValueError, match="power_iterations"):
        K.layers.SpectralNormalization(K.layers.Dense(3), power_iterations=0)
    with pytest.raises(ValueError, match="no attribute 'kernel' nor 'embeddings'"):
        K.layers.SpectralNormalization(K.layers.LayerNormalization())(x)
    # fit passes training=True, so the kernel is normalized at every step
    m = K.Sequential([K.Input((5,)), K.layers.SpectralNormalization(K.layers.Dense(1))])
    m.compile(optimizer="sgd", loss="mse")
    m.fit(x, np.ones((4, 1), np.float32), epochs=2, verbose=0)
    assert abs(np.linalg.norm(m.layers[0].layer.kernel.numpy()) - 1.0) < 0.1
