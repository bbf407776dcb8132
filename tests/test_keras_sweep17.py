"""Keras model APIs compared side by side with TF 2.21 (wave 17 sweep): each expected value
below is TF 2.21's (tf.keras = Keras 3), recorded with the peers venv."""
import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras


def _model():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, kernel_initializer="ones",
                                                                bias_initializer="zeros")])
    m.compile(keras.optimizers.SGD(0.01), "mse")
    return m


_X = np.arange(30, dtype="float32").reshape(10, 3) / 10.0
_Y = (np.arange(20, dtype="float32").reshape(10, 2) % 3) / 2.0


class _StepCounter(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.counts = []

    def on_epoch_begin(self, epoch, logs=None):
        self.counts.append(0)

    def on_train_batch_end(self, batch, logs=None):
        self.counts[-1] += 1


def test_steps_per_epoch_continues_the_iterator_across_epochs():
    # epoch 2 takes batches 3-5 of the repeated dataset, not batches 0-2 again
    ds = tf.data.Dataset.from_tensor_slices((_X, _Y)).batch(2).repeat()
    h = _model().fit(ds, epochs=2, steps_per_epoch=3, verbose=0)
    # TF 2.21: [6.1489105224609375, 21.12540626525879], params steps 3
    np.testing.assert_allclose(h.history["loss"], [6.1489105224609375, 21.12540626525879], rtol=1e-5)
    assert h.params["steps"] == 3


def test_steps_per_epoch_on_a_finite_dataset_ends_the_epoch_short_then_restarts():
    ds = tf.data.Dataset.from_tensor_slices((_X, _Y)).batch(4)        # 3 batches
    cb = _StepCounter()
    h = _model().fit(ds, epochs=3, steps_per_epoch=2, verbose=0, callbacks=[cb])
    # TF 2.21: [12.912001609802246, 44.46910095214844, 5.908134460449219]; 2, 1, 2 steps
    np.testing.assert_allclose(h.history["loss"], [12.912001609802246, 44.46910095214844, 5.908134460449219],
                               rtol=1e-5)
    assert cb.counts == [2, 1, 2]


def test_steps_per_epoch_on_arrays():
    cb = _StepCounter()
    h = _model().fit(_X, _Y, batch_size=3, epochs=3, steps_per_epoch=3, shuffle=False, verbose=0, callbacks=[cb])
    # TF 2.21: [15.313746452331543, 43.17796325683594, 5.08120584487915]; 3, 1, 3 steps (4 batches)
    np.testing.assert_allclose(h.history["loss"], [15.313746452331543, 43.17796325683594, 5.08120584487915],
                               rtol=1e-5)
    assert cb.counts == [3, 1, 3]


def test_history_params_steps():
    # TF 2.21: the batches of one pass, or None when the dataset's length is unknown
    assert _model().fit(_X, _Y, batch_size=4, verbose=0).params["steps"] == 3
    assert _model().fit(_X, _Y, epochs=0, verbose=0).params["steps"] == 1
    ds = tf.data.Dataset.from_tensor_slices((_X, _Y))
    assert _model().fit(ds.batch(4), verbose=0).params["steps"] == 3
    assert _model().fit(ds.filter(lambda a, b: True).batch(4), verbose=0).params["steps"] is None


def test_sequential_pop_rebuilds_output_shape():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(1)])
    m.pop()
    # TF 2.21: (None, 2), 8 params
    assert m.output_shape == (None, 2)
    assert m.count_params() == 8


def test_duplicate_layer_names_are_refused():
    keras.backend.clear_session()
    # TF 2.21: ValueError "All layers added to a Sequential model should have unique names. ..."
    with pytest.raises(ValueError, match="should have unique names. Name 'a' is already"):
        keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="a"), keras.layers.Dense(2, name="a")])
    i = keras.Input((3,))
    h = keras.layers.Dense(2, name="a")(i)
    # TF 2.21: ValueError 'The name "a" is used 2 times in the model. All operation names should be unique.'
    with pytest.raises(ValueError, match='The name "a" is used 2 times in the model'):
        keras.Model(i, keras.layers.Dense(2, name="a")(h))
    # one layer used twice is one name, not two
    d = keras.layers.Dense(3, name="shared")
    assert len(keras.Model(i, d(d(i))).layers) == 2


def test_sequential_add_non_layer_is_a_value_error():
    # TF 2.21: ValueError "Only instances of `keras.Layer` can be added to a Sequential model. ..."
    with pytest.raises(ValueError, match="Only instances of `keras.Layer` can be added"):
        keras.Sequential().add(3)


def test_uncompiled_model_raises_value_error():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    # TF 2.21: ValueError "You must call `compile()` before using the model."
    for call in (lambda: m.fit(_X, _Y, verbose=0), lambda: m.evaluate(_X, _Y, verbose=0),
                 lambda: m.train_on_batch(_X, _Y)):
        with pytest.raises(ValueError, match="You must call `compile\\(\\)`"):
            call()


def test_model_loss_and_stop_training_attributes():
    m = _model()
    assert m.loss == "mse"              # TF 2.21: 'mse' (the compile argument as given)
    assert m.stop_training is False     # TF 2.21: False before any fit


def test_to_categorical_is_float64():
    out = keras.utils.to_categorical([0, 2, 1])
    # TF 2.21: float64 [[1,0,0],[0,0,1],[0,1,0]]
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.eye(3)[[0, 2, 1]])
    assert keras.utils.to_categorical(np.array([], "int64"), num_classes=3).shape == (0, 3)


def test_input_batch_size_does_not_fix_the_batch():
    keras.backend.clear_session()
    i = keras.Input((3,), batch_size=4)
    m = keras.Model(i, keras.layers.Dense(1, kernel_initializer="ones", bias_initializer="zeros")(i))
    assert tuple(i.shape) == (4, 3)
    # TF 2.21: [[0.3], [1.2], [2.1], [3.], [3.9], [4.8]] both ways
    want = np.array([[0.3], [1.2], [2.1], [3.0], [3.9], [4.8]], np.float32)
    np.testing.assert_allclose(m.predict(_X[:6], batch_size=4, verbose=0), want, rtol=1e-6)
    np.testing.assert_allclose(m(_X[:6]).numpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="incompatible"):
        m(np.zeros((2, 4), np.float32))


# ---- compile(loss=[...] / {...}, loss_weights=..., metrics={output: ...}) on a model with two outputs ----

_Y1 = (np.arange(10, dtype="float32").reshape(10, 1) % 3) / 2.0


def _two_outputs(as_dict=False):
    keras.backend.clear_session()
    i = keras.Input((3,), name="inp")
    h = keras.layers.Dense(4, activation="relu", kernel_initializer="ones", name="h")(i)
    o1 = keras.layers.Dense(1, kernel_initializer="ones", name="o1")(h)
    o2 = keras.layers.Dense(2, kernel_initializer="ones", name="o2")(h)
    return keras.Model(i, {"o1": o1, "o2": o2} if as_dict else [o1, o2])


def test_two_output_losses_weights_and_metrics_in_evaluate():
    m = _two_outputs()
    m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mae"], metrics={"o1": ["mae"], "o2": ["mse", "mae"]})
    assert m.output_names == ["o1", "o2"]
    got = m.evaluate(_X, [_Y1, _Y], verbose=0)
    # TF 2.21: loss, o1_loss, o2_loss, then the metrics by sorted name (o1_mae, o2_mae, o2_mse)
    np.testing.assert_allclose(got, [410.77996826171875, 393.85498046875, 16.924999237060547, 16.950000762939453,
                                     16.924999237060547, 393.26751708984375], rtol=1e-6)
    assert m.metrics_names == ["loss", "compile_metrics", "o1_loss", "o2_loss"]      # TF 2.21
    m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mae"], loss_weights=[0.5, 2.0])
    got = m.evaluate(_X, [_Y1, _Y], sample_weight=np.linspace(0, 1, 10).astype("float32"), verbose=0,
                     return_dict=True)
    # TF 2.21: {'loss': 178.13665771484375, 'o1_loss': 309.239990234375, 'o2_loss': 11.758333206176758}
    assert sorted(got) == ["loss", "o1_loss", "o2_loss"]
    np.testing.assert_allclose([got["loss"], got["o1_loss"], got["o2_loss"]],
                               [178.13665771484375, 309.239990234375, 11.758333206176758], rtol=1e-6)
    # a loss dict and loss_weights dict, targets as a dict: TF 2.21 loss 444.63 (1 * 393.855 + 3 * 16.925)
    m.compile(keras.optimizers.SGD(0.01), loss={"o1": "mse", "o2": "mae"}, loss_weights={"o1": 1.0, "o2": 3.0})
    got = m.evaluate(_X, {"o1": _Y1, "o2": _Y}, verbose=0, return_dict=True)
    np.testing.assert_allclose(got["loss"], 444.63, rtol=1e-5)
    # one loss on two outputs: applied to each (TF 2.21 logs o1_loss and o2_loss)
    m.compile(keras.optimizers.SGD(0.01), loss="mse")
    assert sorted(m.evaluate(_X, (_Y1, _Y), verbose=0, return_dict=True)) == ["loss", "o1_loss", "o2_loss"]
    # None: no loss for that output, and no per-output logs with a single loss (TF 2.21: {'loss': 393.855})
    m.compile(keras.optimizers.SGD(0.01), loss=["mse", None])
    got = m.evaluate(_X, [_Y1, _Y], verbose=0, return_dict=True)
    assert list(got) == ["loss"]
    np.testing.assert_allclose(got["loss"], 393.85498046875, rtol=1e-6)


def test_two_output_fit_history_and_weights():
    m = _two_outputs()
    m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mae"], loss_weights=[0.5, 2.0], metrics={"o2": "mse"})
    h = m.fit(_X, [_Y1, _Y], epochs=2, batch_size=4, shuffle=False, verbose=0,
              validation_data=(_X[:4], [_Y1[:4], _Y[:4]]))
    want = {  # TF 2.21 (o1_loss/o2_loss are unweighted means over the 3 batches; loss weighs batch sizes)
        "loss": [92.12946319580078, 15.132146835327148], "o1_loss": [108.5393295288086, 0.316188782453537],
        "o2_loss": [14.276179313659668, 8.529118537902832], "o2_mse": [231.510009765625, 79.70936584472656],
        "val_loss": [4.910935401916504, 3.3379876613616943], "val_o1_loss": [0.41529619693756104, 0.41715022921562195],
        "val_o2_loss": [2.3516435623168945, 1.5647063255310059], "val_o2_mse": [9.207986831665039, 4.409688472747803]}
    assert sorted(h.history) == sorted(want)
    for k, v in want.items():
        np.testing.assert_allclose(h.history[k], v, rtol=2e-5, err_msg=k)
    # TF 2.21: the first entries of each weight after the two epochs
    np.testing.assert_allclose([w.ravel()[0] for w in m.get_weights()],
                               [0.55183643, -0.3062851, 0.04196277, -0.21729745, 0.8070256, -0.055], rtol=2e-5)
    # train_on_batch: TF 2.21 [60.835, 54.6725, 6.1625] (loss, o1_loss, o2_loss)
    m = _two_outputs()
    m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mae"])
    np.testing.assert_allclose(m.train_on_batch(_X[:4], [_Y1[:4], _Y[:4]]), [60.835, 54.6725, 6.1625], rtol=1e-5)


def test_two_output_dict_outputs_and_list_of_metric_lists():
    m = _two_outputs(as_dict=True)
    m.compile(keras.optimizers.SGD(0.01), loss={"o1": "mse", "o2": "mae"}, metrics={"o1": "mae"})
    got = m.evaluate(_X, {"o1": _Y1, "o2": _Y}, verbose=0, return_dict=True)
    # TF 2.21 (the same model as a list): o1_loss 393.855, o1_mae 16.95, o2_loss 16.925
    np.testing.assert_allclose([got["o1_loss"], got["o1_mae"], got["o2_loss"]], [393.855, 16.95, 16.925], rtol=1e-5)
    m = _two_outputs()
    m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mae"], metrics=[["mae"], ["mse"]])
    got = m.evaluate(_X, [_Y1, _Y], verbose=0)
    # TF 2.21: [410.78, 393.855, 16.925, 16.95, 393.2675]
    np.testing.assert_allclose(got, [410.77996826171875, 393.85498046875, 16.924999237060547, 16.950000762939453,
                                     393.26751708984375], rtol=1e-6)


def test_two_output_compile_errors():
    m = _two_outputs()
    data = (_X, [_Y1, _Y])
    cases = [  # (compile kwargs, y, error needle)
        # TF 2.21: ValueError "Expected keys ['o1', 'o2'] in loss dict, but found loss.keys()=['o1', 'zz']"
        (dict(loss={"o1": "mse", "zz": "mae"}), data[1], r"Expected keys \['o1', 'o2'\] in loss dict"),
        # TF 2.21: ValueError "`loss_weights` must match the number of losses, got 2 losses and 1 weights."
        (dict(loss=["mse", "mse"], loss_weights=[1.0]), data[1], "must match the number of losses, got 2"),
        # TF 2.21: ValueError "... `metrics` should ... be a dict or a list matching the output names"
        (dict(loss=["mse", "mse"], metrics=["mae"]), data[1], "Invalid `metrics`"),
        (dict(loss=["mse", "mse"], metrics={"zz": "mae"}), data[1], "Invalid `metrics`"),
        # TF 2.21: ValueError "y_true and y_pred have different structures."
        (dict(loss=["mse", "mse"]), [_Y1], "y_true and y_pred have different structures"),
        # TF 2.21 trains the first output alone here (KeyError for 3 losses): tapeflow refuses both
        (dict(loss=["mse"]), data[1], "gives 1 losses for a model with 2 outputs"),
        (dict(loss=["mse"] * 3), data[1], "gives 3 losses for a model with 2 outputs"),
    ]
    for kw, y, needle in cases:
        m.compile(keras.optimizers.SGD(0.01), **kw)
        with pytest.raises(ValueError, match=needle):
            m.evaluate(_X, y, verbose=0)


def test_two_output_save_load_keeps_the_compiled_losses(tmp_path):
    m = _two_outputs()
    m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mae"], loss_weights=[0.5, 2.0], metrics={"o1": ["mae"]})
    m.fit(_X, [_Y1, _Y], epochs=1, verbose=0, shuffle=False)
    m.save(str(tmp_path / "m.keras"))
    got = keras.models.load_model(str(tmp_path / "m.keras")).evaluate(_X, [_Y1, _Y], verbose=0, return_dict=True)
    # TF 2.21: {'loss': 19.14363, 'o1_loss': 0.610375, 'o1_mae': 0.660186, 'o2_loss': 9.419222}
    assert sorted(got) == ["loss", "o1_loss", "o1_mae", "o2_loss"]
    np.testing.assert_allclose([got[k] for k in sorted(got)], [19.143630981445312, 0.6103748083114624,
                                                               0.6601861119270325, 9.419221878051758], rtol=1e-5)


def test_nested_python_list_input_is_a_value_error():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    # TF 2.21: ValueError "Unrecognized data type: x=[[0.0, 0.1, 0.2], ...] (of type <class 'list'>)"
    with pytest.raises(ValueError, match="Unrecognized data type"):
        m.predict(_X[:3].tolist(), verbose=0)


def test_layer_input_output_and_feature_extraction():
    keras.backend.clear_session()
    i = keras.Input((3,), name="inp")
    h = keras.layers.Dense(4, kernel_initializer="ones", name="h")(i)
    m = keras.Model(i, keras.layers.Dense(1, kernel_initializer="ones", name="o")(h))
    # TF 2.21: m.input/m.output shapes (None, 3)/(None, 1); h.input is the Input, h.output (None, 4)
    assert tuple(m.input.shape) == (None, 3) and tuple(m.output.shape) == (None, 1)
    assert m.get_layer("h").input is i and m.get_layer("h").output is h
    x = np.arange(6, dtype="float32").reshape(2, 3)
    # TF 2.21: [[3, 3, 3, 3], [12, 12, 12, 12]]
    np.testing.assert_allclose(keras.Model(m.input, m.get_layer("h").output).predict(x, verbose=0),
                               [[3.0] * 4, [12.0] * 4])
    # a Sequential's layers too, through model.inputs (TF 2.21: [[3]*4, [12]*4] and [[12], [48]])
    s = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, kernel_initializer="ones"),
                          keras.layers.Dense(1, kernel_initializer="ones")])
    outs = keras.Model(s.inputs, [l.output for l in s.layers]).predict(x, verbose=0)
    np.testing.assert_allclose(outs[0], [[3.0] * 4, [12.0] * 4])
    np.testing.assert_allclose(outs[1], [[12.0], [48.0]])
    # TF 2.21: AttributeError "The layer dense has never been called and thus has no defined output."
    with pytest.raises(AttributeError, match="has never been called and thus has no defined output"):
        keras.layers.Dense(2).output


def test_summary_connected_to_for_two_heads_on_one_layer():
    keras.backend.clear_session()
    i = keras.Input((3,), name="inp")
    h = keras.layers.Dense(4, name="h")(i)
    m = keras.Model(i, [keras.layers.Dense(1, name="o1")(h), keras.layers.Dense(2, name="o2")(h)])
    lines = []
    m.summary(print_fn=lambda s, *a, **k: lines.extend(s.splitlines()))
    rows = [" ".join(l.replace("│", " ").replace("┃", " ").split()) for l in lines]
    # TF 2.21 (no layer has two inputs, but o1 and o2 sit at the same depth):
    # ┃ Layer (type) ┃ Output Shape ┃ Param # ┃ Connected to ┃ ... │ o2 (Dense) │ (None, 2) │ 10 │ h[0][0] │
    assert "Layer (type) Output Shape Param # Connected to" in rows
    for row in ["inp (InputLayer) (None, 3) 0 -", "h (Dense) (None, 4) 16 inp[0][0]", "o1 (Dense) (None, 1) 5 h[0][0]",
                "o2 (Dense) (None, 2) 10 h[0][0]"]:
        assert row in rows, (row, rows)
    # a chain stays without the column (TF 2.21)
    lines.clear()
    keras.Model(i, keras.layers.Dense(1, name="o3")(h)).summary(print_fn=lambda s, *a, **k: lines.extend(s.splitlines()))
    assert not any("Connected to" in l for l in lines)


def test_sequential_builds_take_functional_names():
    def next_functional_name():
        i = keras.Input((3,))
        return keras.Model(i, keras.layers.Dense(1)(i)).name
    # TF 2.21: functional_1, functional_2, functional_1, functional_1
    keras.backend.clear_session()
    keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(2)])
    assert next_functional_name() == "functional_1"
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,))])
    m.add(keras.layers.Dense(2))
    m.add(keras.layers.Dense(2))
    assert next_functional_name() == "functional_2"
    keras.backend.clear_session()
    keras.Sequential([keras.layers.Dense(2)])(np.ones((1, 3), "float32"))
    assert next_functional_name() == "functional_1"
    keras.backend.clear_session()
    keras.Sequential([keras.layers.Dense(2)]).build((None, 3))
    assert next_functional_name() == "functional_1"


def test_validation_split_keeps_the_sample_weights_of_the_validation_samples():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.01), "mse")
    h = m.fit(_X, np.ones((10, 1), "float32"), sample_weight=np.arange(10, dtype="float32"), validation_split=0.3,
              epochs=1, batch_size=4, shuffle=False, verbose=0)
    # TF 2.21: loss 32.28055191040039, val_loss 11.181363105773926 (weighted by samples 7-9's weights)
    np.testing.assert_allclose(h.history["loss"], [32.28055191040039], rtol=1e-5)
    np.testing.assert_allclose(h.history["val_loss"], [11.181363105773926], rtol=1e-5)


def test_embedding_mask_zero_inside_a_model_masks_the_next_layers():
    from tapeflow._unsupported import UnsupportedFeatureError
    ids = np.array([[1, 2, 0, 0], [3, 0, 0, 0]])
    keras.backend.clear_session()
    table = np.arange(10, dtype=np.float32).reshape(5, 2) / 10
    # TF 2.21 averages the unpadded steps only: [[0.3, 0.4], [0.6, 0.7]] (unmasked: [[0.15, 0.25], ...])
    want = [[0.3, 0.4], [0.6, 0.7]]
    i = keras.Input((4,), dtype="int32")
    fm = keras.Model(i, keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(5, 2, mask_zero=True)(i)))
    sm = keras.Sequential([keras.Input((4,), dtype="int32"), keras.layers.Embedding(5, 2, mask_zero=True),
                           keras.layers.GlobalAveragePooling1D()])
    for m in (fm, sm):
        m.set_weights([table])
        np.testing.assert_allclose(m(ids).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(tf.function(lambda v: m(v))(tf.constant(ids)).numpy(), want, rtol=1e-6)

    # a subclassed model's call() cannot carry the mask on (Keras attaches it to the tensor): refused
    class Sub(keras.Model):
        def __init__(self):
            super().__init__()
            self.e = keras.layers.Embedding(5, 2, mask_zero=True)
            self.p = keras.layers.GlobalAveragePooling1D()

        def call(self, x):
            return self.p(self.e(x))
    with pytest.raises(UnsupportedFeatureError, match="mask_zero=True called inside another layer"):
        Sub()(ids)
    # alone it gives Keras' values and mask (TF 2.21: the mask [[F, T, T, F], ...] of ids != 0)
    e = keras.layers.Embedding(5, 2, mask_zero=True)
    assert e(ids).shape == (2, 4, 2)
    np.testing.assert_array_equal(e.compute_mask(ids).numpy(), ids != 0)
    # mask_zero=False inside a model is Keras' (no mask anywhere)
    keras.Sequential([keras.Input((4,), dtype="int32"), keras.layers.Embedding(5, 2), keras.layers.Flatten()])


def test_python_generators_in_fit_and_evaluate():
    y = (np.arange(10, dtype="float32").reshape(10, 1) % 3) / 2

    def batches(forever):
        while True:
            for s in range(0, 10, 4):
                yield _X[s:s + 4], y[s:s + 4]
            if not forever:
                return

    def model():
        keras.backend.clear_session()
        m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="ones")])
        m.compile(keras.optimizers.SGD(0.01), "mse")
        return m
    # TF 2.21: {'loss': [17.066486358642578, 3.1747796535491943]} (epoch 2 goes on with batch 3 of the generator)
    h = model().fit(batches(True), steps_per_epoch=3, epochs=2, verbose=0)
    np.testing.assert_allclose(h.history["loss"], [17.066486358642578, 3.1747796535491943], rtol=1e-5)
    assert h.params["steps"] == 3
    # TF 2.21: 21.92999839782715 over the 3 batches of a finite generator
    np.testing.assert_allclose(model().evaluate(batches(False), verbose=0), 21.92999839782715, rtol=1e-6)
    # evaluate(steps=2) takes 2 batches and no more: the next call starts at the third (x[8:10]: 56.405)
    g, m = batches(True), model()
    np.testing.assert_allclose(m.evaluate(g, steps=2, verbose=0), 13.311249732971191, rtol=1e-6)   # TF 2.21
    np.testing.assert_allclose(m.evaluate(g, steps=1, verbose=0), 56.405, rtol=1e-5)


def test_a_nested_model_hands_its_mask_on():
    # TF 2.21: [[0.3, 0.4], [0.6, 0.7]] for both (the inner Sequential's Embedding mask reaches the
    # outer GlobalAveragePooling1D); without the mask the padding would count: [[0.15, 0.25], ...]
    ids = np.array([[1, 2, 0, 0], [3, 0, 0, 0]])
    want = [[0.3, 0.4], [0.6, 0.7]]
    inner = keras.Sequential([keras.Input((4,), dtype="int32"), keras.layers.Embedding(5, 2, mask_zero=True)])
    inner.set_weights([np.arange(10, dtype=np.float32).reshape(5, 2) / 10])
    inp = keras.Input((4,), dtype="int32")
    fm = keras.Model(inp, keras.layers.GlobalAveragePooling1D()(inner(inp)))
    sm = keras.Sequential([inner, keras.layers.GlobalAveragePooling1D()])
    for m in (fm, sm):
        np.testing.assert_allclose(m(ids).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(tf.function(lambda v: m(v))(tf.constant(ids)).numpy(), want, rtol=1e-6)
    # a later call without a mask does not reuse the earlier one: the same inner model (Dense passes
    # a mask on) called after a Masking, then alone
    x = np.ones((2, 4, 2), np.float32)
    x[:, 2:] = 0
    dense = keras.Sequential([keras.Input((4, 2)), keras.layers.Dense(2, bias_initializer="ones")])
    masked = keras.Sequential([keras.layers.Masking(0.0), dense, keras.layers.GlobalAveragePooling1D()])
    plain = keras.Sequential([dense, keras.layers.GlobalAveragePooling1D()])
    h = dense(x).numpy()
    np.testing.assert_allclose(masked(x).numpy(), h[:, :2].mean(1), rtol=1e-6)
    np.testing.assert_allclose(plain(x).numpy(), h.mean(1), rtol=1e-6)
