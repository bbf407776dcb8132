"""Wave 22 (api22): tf.distribute.RunOptions, tf.check_pinned, tf.saved_model.experimental,
tf.train.experimental and tf.dtypes.experimental as TF 2.21 has them (or refused with a reason)."""
import pytest

import tapeflow as tf
from tapeflow.errors import FailedPreconditionError


def test_run_options_as_tf():
    # TF 2.21: a namedtuple with these fields and defaults; strategy.run takes it as options=
    r = tf.distribute.RunOptions()
    assert r._fields == ("experimental_enable_dynamic_batch_size", "experimental_bucketizing_dynamic_shape",
                         "experimental_xla_options")
    assert tuple(r) == (True, False, None)
    r = tf.distribute.RunOptions(experimental_enable_dynamic_batch_size=False)
    assert repr(r) == ("RunOptions(experimental_enable_dynamic_batch_size=False, "
                       "experimental_bucketizing_dynamic_shape=False, experimental_xla_options=None)")
    out = tf.distribute.get_strategy().run(lambda x: x + 1, args=(tf.constant(1.),), options=r)
    assert float(out) == 2.0


def test_check_pinned_as_tf_cpu():
    # TF 2.21 (CPU build): FailedPreconditionError "to check pinnedness, must be built with `--config=cuda`",
    # eagerly and in tf.function
    with pytest.raises(FailedPreconditionError, match="must be built with `--config=cuda`"):
        tf.check_pinned(tf.constant([1., 2.]))
    with pytest.raises(FailedPreconditionError, match="pinnedness"):
        tf.function(lambda x: tf.check_pinned(x))(tf.constant(1.))


def test_saved_model_experimental_variable_policy():
    VP = tf.saved_model.experimental.VariablePolicy
    assert [p.name for p in VP] == ["NONE", "SAVE_VARIABLE_DEVICES", "EXPAND_DISTRIBUTED_VARIABLES"]
    assert VP.from_obj(None) is VP.NONE and VP.from_obj("Save_Variable_Devices") is VP.SAVE_VARIABLE_DEVICES
    assert VP.EXPAND_DISTRIBUTED_VARIABLES._expand_distributed_variables()
    assert not VP.NONE._save_variable_devices()
    with pytest.raises(ValueError, match="invalid VariablePolicy value"):
        VP.from_obj("x")
    tf.saved_model.SaveOptions(experimental_variable_policy=VP.SAVE_VARIABLE_DEVICES)


@pytest.mark.parametrize("get,words", [
    (lambda: tf.saved_model.experimental.read_fingerprint, "fingerprints"),
    (lambda: tf.saved_model.experimental.Fingerprint, "fingerprints"),
    (lambda: tf.saved_model.experimental.TrackableResource, "resource handles"),
    (lambda: tf.train.experimental.ShardingCallback, "sharding"),
    (lambda: tf.train.experimental.MaxShardSizePolicy, "sharding"),
    (lambda: tf.dtypes.experimental.float8_e4m3fn, "8-, 4- and 2-bit dtypes"),
    (lambda: tf.dtypes.experimental.int4, "8-, 4- and 2-bit dtypes"),
])
def test_experimental_names_refused_with_a_reason(get, words):
    with pytest.raises(NotImplementedError, match=words):
        get()
    with pytest.raises(AttributeError, match="no attribute 'Foo'"):
        tf.saved_model.experimental.Foo


def test_python_state_in_a_checkpoint_as_tf(tmp_path):
    import io

    import numpy as np

    class NumpyWrapper(tf.train.experimental.PythonState):      # TF 2.21's docstring example
        def __init__(self, array):
            self.array = array

        def serialize(self):
            f = io.BytesIO()
            np.save(f, self.array, allow_pickle=False)
            return f.getvalue()

        def deserialize(self, string_value):
            self.array = np.load(io.BytesIO(string_value), allow_pickle=False)

    m = tf.Module()
    m.w, m.v = NumpyWrapper(np.array([1.])), tf.Variable(2.)
    root = tf.train.Checkpoint(model=m)
    path = root.save(str(tmp_path / "ckpt"))
    m.w.array *= 2.
    m.v.assign(5.)
    root.restore(path)
    assert m.w.array.tolist() == [1.] and float(m.v) == 2.0
    # TF 2.21's key for it: <path>/.ATTRIBUTES/py_state
    assert "model/w/.ATTRIBUTES/py_state" in [k for k, _ in tf.train.list_variables(path)]

    got = []

    class S(tf.train.experimental.PythonState):
        def __init__(self):
            self.v = "x"

        def serialize(self):
            return self.v

        def deserialize(self, s):
            got.append(s)

    s = S()
    ck = tf.train.Checkpoint(s=s)
    ck.restore(ck.save(str(tmp_path / "s")))
    assert got == [b"x"]                 # TF 2.21 passes the saved string back as bytes
    with pytest.raises(TypeError, match="abstract"):
        type("Bad", (tf.train.experimental.PythonState,), {})()
