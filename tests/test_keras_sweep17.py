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
