"""Complex variables in checkpoints (wave 22): safetensors has no complex dtype, so each is stored as its
(real, imag) float pairs (shape + [2]) with the index entry "complex" naming the dtype; restored bit for bit."""
import json

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.train import storage


def _vars():
    special = np.array([1 + 2j, complex(np.inf, -0.0), complex(np.nan, 1e-38), -0.0 - 0.0j], np.complex64)
    return dict(v=tf.Variable(special), w=tf.Variable(np.arange(6).reshape(2, 3) * (1 - 0.5j)),
                s=tf.Variable(np.complex128(2 - 3j)), e=tf.Variable(np.zeros((0, 2), np.complex64)),
                r=tf.Variable(np.float32([1.5, 2.5])))


def _bits(a):
    a = np.asarray(a)
    return a.reshape(-1).view(np.uint8).tobytes(), a.dtype, a.shape


def test_round_trip_is_bit_exact(tmp_path):
    vs = _vars()
    want = {k: _bits(v.numpy()) for k, v in vs.items()}
    ck = tf.train.Checkpoint(**vs)
    path = ck.save(str(tmp_path / "ckpt"))
    for v in vs.values():
        v.assign(tf.zeros_like(v))
    ck.restore(path)
    for k, v in vs.items():
        assert _bits(v.numpy()) == want[k], k
    # a fresh object graph restores too (restore-on-create is the same read)
    fresh = {k: tf.Variable(tf.zeros_like(v)) for k, v in vs.items()}
    tf.train.Checkpoint(**fresh).read(path).assert_consumed()
    for k, v in fresh.items():
        assert _bits(v.numpy()) == want[k], k


def test_readers_report_the_complex_dtype_and_shape(tmp_path):
    vs = _vars()
    path = tf.train.Checkpoint(**vs).write(str(tmp_path / "c"))
    shapes = dict(tf.train.list_variables(path))
    assert shapes["w/.ATTRIBUTES/VARIABLE_VALUE"] == [2, 3] and shapes["s/.ATTRIBUTES/VARIABLE_VALUE"] == []
    r = tf.train.load_checkpoint(path)
    assert r.get_variable_to_dtype_map()["v/.ATTRIBUTES/VARIABLE_VALUE"] is tf.complex64
    assert r.get_variable_to_shape_map()["e/.ATTRIBUTES/VARIABLE_VALUE"] == [0, 2]
    np.testing.assert_array_equal(tf.train.load_variable(path, "w/.ATTRIBUTES/VARIABLE_VALUE"), vs["w"].numpy())
    # the index says how the pairs were stored
    index = json.loads((tmp_path / "c.json").read_text())
    e = index["tensors"]["w"]
    assert e["complex"] == "complex128" and e["dtype"] == "float64" and e["shape"] == [2, 3, 2]


def test_a_bad_complex_entry_is_a_corrupt_checkpoint(tmp_path):
    path = tf.train.Checkpoint(**_vars()).write(str(tmp_path / "c"))
    ip = tmp_path / "c.json"
    index = json.loads(ip.read_text())
    index["tensors"]["w"]["complex"] = "complex64"   # float64 pairs are not complex64's
    ip.write_text(json.dumps(index))
    with pytest.raises(storage.CorruptCheckpointError, match="'complex' entry"):
        tf.train.Checkpoint(**_vars()).read(path)


def test_checkpoint_manager_and_training_state_with_complex(tmp_path):
    v = tf.Variable(np.array([1 + 1j, 2 - 1j], np.complex64))
    opt = tf.keras.optimizers.SGD(0.1)
    with tf.GradientTape() as t:
        loss = tf.reduce_sum(tf.math.real(v * tf.math.conj(v)))
    opt.apply_gradients([(t.gradient(loss, v), v)])
    m = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path), max_to_keep=2)
    m.save()
    want = v.numpy().copy()
    v.assign(tf.zeros_like(v))
    tf.train.Checkpoint(v=v).restore(m.latest_checkpoint)
    np.testing.assert_array_equal(v.numpy(), want)
