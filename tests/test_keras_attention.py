"""Attention layers (tapeflow/keras/layers/attention.py) against TF 2.21's Keras 3: the same
weights give the same outputs (tests/data/attention_reference.npz, recorded by
tests/tf_reference/make_attention_reference.py from the cases in tests/attention_cases.py),
eagerly and inside tf.function; gradients against finite differences; Keras' errors."""
import os

import numpy as np
import pytest

import tapeflow as tf
from attention_cases import CASES
from conftest import check_grads

K = tf.keras
REF = np.load(os.path.join(os.path.dirname(__file__), "data", "attention_reference.npz"))


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
    return getattr(K.layers, cls)(**kwargs), args, ckw, weights, outs


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
        layer = getattr(K.layers, cls)(**kwargs)
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
