"""keras.utils added in wave 18 against TF 2.21's outputs (literals): pad_sequences,
timeseries_dataset_from_array, normalize, PyDataset in fit/predict, split_dataset and the
pack/unpack helpers."""
import numpy as np
import pytest

import tapeflow as tf

U = tf.keras.utils


def test_pad_sequences_matches_tf():
    # TF 2.21
    assert U.pad_sequences([[1, 2, 3], [4, 5], [], [6, 7, 8, 9, 10]]).tolist() == \
        [[0, 0, 1, 2, 3], [0, 0, 0, 4, 5], [0, 0, 0, 0, 0], [6, 7, 8, 9, 10]]
    assert U.pad_sequences([[1, 2, 3], [4, 5], [6, 7, 8, 9, 10]], maxlen=3, padding="post", truncating="post",
                           value=-1).tolist() == [[1, 2, 3], [4, 5, -1], [6, 7, 8]]
    out = U.pad_sequences([[1.5, 2], [3]], dtype="float32")
    assert out.dtype == np.float32 and out.tolist() == [[1.5, 2.0], [0.0, 3.0]]
    assert U.pad_sequences([np.ones((2, 2)), np.zeros((1, 2))]).shape == (2, 2, 2)
    with pytest.raises(ValueError, match="Padding type"):
        U.pad_sequences([[1]], padding="middle")


def test_timeseries_dataset_from_array_matches_tf():
    ds = U.timeseries_dataset_from_array(np.arange(20), np.arange(100, 120), sequence_length=4, sequence_stride=2,
                                         sampling_rate=2, batch_size=3)
    got = [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ds]
    assert got == [   # TF 2.21
        ([[0, 2, 4, 6], [2, 4, 6, 8], [4, 6, 8, 10]], [100, 102, 104]),
        ([[6, 8, 10, 12], [8, 10, 12, 14], [10, 12, 14, 16]], [106, 108, 110]),
        ([[12, 14, 16, 18]], [112])]
    ds = U.timeseries_dataset_from_array(np.arange(30).reshape(15, 2), None, sequence_length=5, batch_size=None,
                                         start_index=2, end_index=12)
    xs = [x.numpy().tolist() for x in ds]
    assert len(xs) == 6 and xs[:2] == [[[4, 5], [6, 7], [8, 9], [10, 11], [12, 13]],
                                       [[6, 7], [8, 9], [10, 11], [12, 13], [14, 15]]]
    shuffled = U.timeseries_dataset_from_array(np.arange(50), np.arange(50), sequence_length=3, batch_size=4,
                                               shuffle=True, seed=1)
    pairs = [(x, y) for xb, yb in shuffled for x, y in zip(xb.numpy(), yb.numpy())]
    assert sorted(int(y) for _, y in pairs) == list(range(48)) and all((x == y + np.arange(3)).all() for x, y in pairs)
    with pytest.raises(ValueError, match="sampling_rate"):
        U.timeseries_dataset_from_array(np.arange(5), None, 2, sampling_rate=0)


def test_normalize_and_pack_helpers_match_tf():
    assert U.normalize(np.array([[3., 4.], [0, 0]])).tolist() == [[0.6, 0.8], [0.0, 0.0]]
    np.testing.assert_allclose(U.normalize(tf.constant([[3., 4.], [0, 0]])).numpy(), [[0.6, 0.8], [0, 0]], rtol=1e-6)
    assert U.unpack_x_y_sample_weight((1, 2)) == (1, 2, None)
    assert U.pack_x_y_sample_weight(1) == 1 and U.pack_x_y_sample_weight((1, 2)) == ((1, 2),)
    assert U.pack_x_y_sample_weight(1, 2, 3) == (1, 2, 3)
    left, right = U.split_dataset(np.arange(10), left_size=0.3)
    assert [int(v) for v in left] == [0, 1, 2] and [int(v) for v in right] == list(range(3, 10))


def test_pydataset_feeds_fit_and_predict():
    class Batches(U.PyDataset):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.ends = 0

        def __len__(self):
            return 3

        def __getitem__(self, i):
            return np.full((4, 2), float(i), np.float32), np.full((4, 1), float(i), np.float32)

        def on_epoch_end(self):
            self.ends += 1

    m = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    m.compile("sgd", "mse")
    data = Batches(workers=2)
    h = m.fit(data, epochs=2, verbose=0)
    assert len(h.history["loss"]) == 2 and data.ends == 2     # (Keras 3 also calls it once at the start: 3)
    assert m.predict(data, verbose=0).shape == (12, 1)        # TF 2.21: (12, 1)
    assert U.Sequence is U.PyDataset
