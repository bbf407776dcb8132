"""Wave 18's new Keras surface compared side by side with TF 2.21 (tests/tf_reference/
keras_sweep18.py): the differences it found, fixed. Each expected value is TF 2.21's
(tf.keras = Keras 3), recorded with the peers venv."""
import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras
L = keras.layers

_YT = np.array([[0, 1, 1, 0], [1, 0, 1, 1]], "float32")
_YP = np.array([[0.1, 0.8, 0.6, 0.3], [0.7, 0.2, 0.9, 0.4]], "float32")


# -- loss reductions: None is "no reduction" in Keras 3, not the default -------------------------

def test_reduction_none_returns_per_sample_losses():
    # TF 2.21: BinaryFocalCrossentropy(reduction=None) -> [0.030953044071793556, 0.09298620373010635]
    got = keras.losses.BinaryFocalCrossentropy(reduction=None)(_YT, _YP)
    np.testing.assert_allclose(np.asarray(got), [0.030953044071793556, 0.09298620373010635], rtol=1e-5)
    # TF 2.21: MeanSquaredError(reduction=None) -> [0.075, 0.125]; with sample_weight [1, 0] -> [0.075, 0]
    mse = keras.losses.MeanSquaredError(reduction=None)
    np.testing.assert_allclose(np.asarray(mse(_YT, _YP)), [0.075, 0.125], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(mse(_YT, _YP, sample_weight=np.array([1.0, 0.0], "float32"))),
                               [0.075, 0.0], rtol=1e-5, atol=1e-7)
    # TF 2.21: Tversky(reduction=None, axis=1) -> [0.2631579041481018, 0.23076927661895752]
    np.testing.assert_allclose(np.asarray(keras.losses.Tversky(reduction=None, axis=1)(_YT, _YP)),
                               [0.2631579041481018, 0.23076927661895752], rtol=1e-5)


def test_reduction_none_inside_tf_function():
    loss = keras.losses.MeanSquaredError(reduction=None)
    got = tf.function(lambda a, b: loss(a, b))(tf.constant(_YT), tf.constant(_YP))
    np.testing.assert_allclose(np.asarray(got), [0.075, 0.125], rtol=1e-5)


def test_mean_and_mean_with_sample_weight_reductions():
    sw = np.array([1.0, 0.0], "float32")
    # TF 2.21: "mean" -> 0.1 and 0.0375 (with sw); "mean_with_sample_weight" -> 0.1 and 0.075
    m = keras.losses.MeanSquaredError(reduction="mean")
    np.testing.assert_allclose([float(m(_YT, _YP)), float(m(_YT, _YP, sample_weight=sw))], [0.1, 0.0375], rtol=1e-5)
    m = keras.losses.MeanSquaredError(reduction="mean_with_sample_weight")
    np.testing.assert_allclose([float(m(_YT, _YP)), float(m(_YT, _YP, sample_weight=sw))], [0.1, 0.075], rtol=1e-5)
    # TF 2.21: sample_weight [[2], [0.5]] -> 0.08499999344348907 (divides by 2 + 0.5)
    np.testing.assert_allclose(float(m(_YT, _YP, sample_weight=np.array([[2.0], [0.5]], "float32"))),
                               0.08499999344348907, rtol=1e-5)
    assert m.get_config()["reduction"] == "mean_with_sample_weight"
    with pytest.raises(ValueError, match="bogus"):
        keras.losses.MeanSquaredError(reduction="bogus")


# -- GroupNormalization(groups=-1) is instance normalization ---------------------------------------

def test_group_normalization_groups_minus_one():
    x = np.sin(np.arange(24, dtype="float32")).reshape(2, 3, 4)
    layer = L.GroupNormalization(groups=-1)
    got = np.asarray(layer(x)).ravel()
    # TF 2.21 (first 6 values; the same as groups=4)
    np.testing.assert_allclose(got[:6], [-0.10831604152917862, 0.9672160744667053, 1.3916634321212769,
                                         0.30072224140167236, -1.1657896041870117, -1.375700831413269], rtol=1e-5)
    np.testing.assert_allclose(got, np.asarray(L.GroupNormalization(groups=4)(x)).ravel(), rtol=1e-6)
    assert layer.get_config()["groups"] == 4   # TF 2.21: the resolved count after build


@pytest.mark.parametrize("groups", [0, -2])
def test_group_normalization_bad_groups(groups):
    # TF 2.21: ValueError "... expected a positive integer (or `-1` for instance normalization)"
    with pytest.raises(ValueError, match="instance normalization"):
        L.GroupNormalization(groups=groups)


# -- compute_output_shape -----------------------------------------------------------------------------

def test_compute_output_shape_wrappers_and_rnn():
    # TF 2.21's answers
    assert L.LSTM(4, return_sequences=True, return_state=True).compute_output_shape((2, 5, 3)) == \
        ((2, 5, 4), (2, 4), (2, 4))
    assert L.Bidirectional(L.LSTM(2, return_state=True)).compute_output_shape((2, 5, 3)) == \
        ((2, 4), (2, 2), (2, 2), (2, 2), (2, 2))
    assert L.Bidirectional(L.LSTM(2, return_sequences=True), merge_mode=None).compute_output_shape((2, 5, 3)) == \
        ((2, 5, 2), (2, 5, 2))
    assert L.Bidirectional(L.LSTM(2, return_sequences=True), merge_mode="sum").compute_output_shape(
        (None, 5, 3)) == (None, 5, 2)
    assert L.Bidirectional(L.LSTM(2, return_sequences=True)).compute_output_shape((2, 5, 3)) == (2, 5, 4)
    assert L.TimeDistributed(L.Dense(2)).compute_output_shape((2, 5, 3)) == (2, 5, 2)
    assert L.TimeDistributed(L.Conv2D(2, 3)).compute_output_shape((1, 2, 5, 5, 1)) == (1, 2, 3, 3, 2)
    assert L.UpSampling2D(2).compute_output_shape((None, None, 5, 3)) == (None, None, 10, 3)
    assert L.UpSampling2D((2, 3)).compute_output_shape((1, 4, 5, 2)) == (1, 8, 15, 2)


def test_default_compute_output_shape_probes_the_layer():
    assert L.Conv2D(2, 3).compute_output_shape((None, 5, 5, 1)) == (None, 3, 3, 2)
    assert L.Concatenate().compute_output_shape([(None, 3), (None, 2)]) == (None, 5)
    with pytest.raises(NotImplementedError, match="keras.Input"):
        L.Conv2D(2, 3).compute_output_shape((None, None, 5, 1))


# -- MultiHeadAttention on rank-2 inputs -----------------------------------------------------------

def test_mha_rank2_inputs_raise():
    # TF 2.21 fails with an IndexError inside its softmax; tapeflow returned a meaningless value
    x = np.ones((2, 4), "float32")
    layer = L.MultiHeadAttention(2, 3)
    with pytest.raises(ValueError, match="rank >= 3"):
        layer(x, x)
    with pytest.raises(ValueError, match="rank >= 3"):
        tf.function(lambda a: L.MultiHeadAttention(2, 3)(a, a))(tf.constant(x))


# -- Bidirectional with a custom backward layer survives get_config / save / load ----------------

def test_bidirectional_custom_backward_layer_round_trip(tmp_path):
    keras.backend.clear_session()
    x = np.sin(np.arange(24, dtype="float32")).reshape(2, 4, 3)
    m = keras.Sequential([keras.Input((4, 3)), L.Bidirectional(L.LSTM(2), backward_layer=L.LSTM(3, go_backwards=True))])
    cfg = m.layers[0].get_config()
    # TF 2.21: the config always has 'backward_layer' (keys backward_layer, dtype, layer, merge_mode, name, trainable)
    assert cfg["backward_layer"]["config"]["units"] == 3 and cfg["backward_layer"]["config"]["go_backwards"]
    p = str(tmp_path / "m.keras")
    m.save(p)
    m2 = keras.models.load_model(p)
    assert tuple(m2(x).shape) == (2, 5)
    np.testing.assert_allclose(np.asarray(m2(x)), np.asarray(m(x)), rtol=1e-6)
    assert sorted(L.Bidirectional(L.LSTM(2)).get_config()) == ["backward_layer", "dtype", "layer", "merge_mode",
                                                              "name", "trainable"]


# -- LayerNormalization(rms_scaling=True): deprecated in Keras 3 but accepted ---------------------

def test_layer_normalization_rms_scaling():
    x = np.sin(np.arange(24, dtype="float32")).reshape(2, 4, 3)
    for kw in ({}, {"center": False, "scale": False}):
        with pytest.warns(UserWarning, match="deprecated"):
            layer = L.LayerNormalization(rms_scaling=True, **kw)
        got = np.asarray(layer(x)).ravel()[:6]
        # TF 2.21: x * rsqrt(var + eps) * gamma (not centred), a gamma and no beta either way
        np.testing.assert_allclose(got, [0.0, 2.028641939163208, 2.192159652709961, 0.2945249080657959,
                                         -1.5794868469238281, -2.0013256072998047], rtol=1e-5, atol=1e-7)
        assert [w.name for w in layer.weights] == ["gamma"]
        assert layer.get_config()["rms_scaling"] is True
    assert L.LayerNormalization().get_config()["rms_scaling"] is False


# -- UpSampling2D(interpolation="bilinear") ---------------------------------------------------------

_UP_F32 = [0.0, 0.0, 0.3333333730697632, 0.6666667461395264, 1.0, 1.3333333730697632, 1.6666667461395264, 2.0,
           2.0, 0.75, 0.75, 1.0833333730697632, 1.4166667461395264, 1.75, 2.0833334922790527, 2.4166667461395264,
           2.75, 2.75, 2.25, 2.25, 2.5833334922790527, 2.9166667461395264, 3.25, 3.5833334922790527,
           3.9166669845581055, 4.25, 4.25, 3.0, 3.0, 3.3333334922790527, 3.6666667461395264, 4.0, 4.333333492279053,
           4.6666669845581055, 5.0, 5.0]


def test_upsampling2d_bilinear_matches_tf():
    layer = L.UpSampling2D((2, 3), interpolation="bilinear")
    x = np.arange(6, dtype="float32").reshape(1, 2, 3, 1)
    # TF 2.21 values (float32), and int32 in -> int32 out, rounded
    np.testing.assert_allclose(np.asarray(layer(x)).ravel(), _UP_F32, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tf.function(lambda t: layer(t))(tf.constant(x))).ravel(), _UP_F32, rtol=1e-6)
    yi = layer(x.astype("int32"))
    assert yi.dtype == tf.int32
    assert np.asarray(yi).ravel().tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 3, 3, 2, 2, 3, 3, 3, 4,
                                               4, 4, 4, 3, 3, 3, 4, 4, 4, 5, 5, 5]
    with pytest.raises(ValueError, match="interpolation"):
        L.UpSampling2D(interpolation="foo")


def test_upsampling2d_bilinear_gradient_vs_finite_differences():
    layer = L.UpSampling2D(2, interpolation="bilinear", dtype="float64")
    x0 = np.sin(np.arange(6, dtype="float64")).reshape(1, 2, 3, 1)
    w = np.cos(np.arange(24, dtype="float64")).reshape(1, 4, 6, 1)
    x = tf.Variable(x0)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x) * w)
    g = np.asarray(tape.gradient(loss, x))
    eps, fd = 0.5, np.zeros_like(x0)   # the layer is linear in x: a large step is exact (and float32-safe)
    for i in range(x0.size):
        d = np.zeros(x0.size); d[i] = eps; d = d.reshape(x0.shape)
        fd.ravel()[i] = (float(np.sum(np.asarray(layer(x0 + d)) * w)) - float(np.sum(np.asarray(layer(x0 - d)) * w))) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-5)


# -- RNN(cell) keeps its cell in get_config: from_config and load_model work ------------------------

def test_rnn_cell_layer_config_round_trip_and_save(tmp_path):
    keras.backend.clear_session()
    x = np.sin(np.arange(24, dtype="float32")).reshape(2, 4, 3)
    layer = L.RNN(L.GRUCell(2), return_sequences=True)
    y = np.asarray(layer(x))
    cfg = layer.get_config()
    assert cfg["cell"]["class_name"] == "GRUCell"
    again = L.RNN.from_config(cfg)
    again(x)
    again.set_weights(layer.get_weights())
    np.testing.assert_allclose(np.asarray(again(x)), y, rtol=1e-6)
    m = keras.Sequential([keras.Input((4, 3)), L.RNN(L.LSTMCell(2)), L.Dense(1)])
    p = str(tmp_path / "m.keras")
    m.save(p)
    m2 = keras.models.load_model(p)
    np.testing.assert_allclose(np.asarray(m2(x)), np.asarray(m(x)), rtol=1e-6)
    assert "cell" not in L.LSTM(2).get_config()   # TF 2.21: SimpleRNN/LSTM/GRU flatten the cell's arguments


def test_pad_sequences_string_dtype():
    # TF 2.21: [['1', '2'], ['x', '3']]
    got = keras.utils.pad_sequences([[1, 2], [3]], dtype="str", value="x")
    assert got.tolist() == [["1", "2"], ["x", "3"]]
    with pytest.raises(ValueError, match="not compatible"):
        keras.utils.pad_sequences([[1, 2], [3]], dtype="int32", value="x")


def test_swish_serializes_as_silu():
    acts = keras.activations
    # TF 2.21: serialize(swish) == 'silu', get('swish').__name__ == 'silu', Dense(activation='swish') config 'silu'
    assert acts.serialize(acts.swish) == "silu" and acts.get("swish").__name__ == "silu"
    assert L.Dense(2, activation="swish").get_config()["activation"] == "silu"
    assert acts.get("swish") is acts.get("silu")
