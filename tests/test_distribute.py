"""tf.distribute on one machine (tapeflow/distribute): the programs of
tests/tf_reference/distribute_programs.py against TF 2.21's results
(tests/data/distribute_tf_reference.json), plus reprs, errors and the 1-replica cases."""
import json
import os
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import config

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "tf_reference"))
import distribute_programs as P  # noqa: E402

with open(os.path.join(HERE, "data", "distribute_tf_reference.json")) as f:
    REF = json.load(f)


@pytest.fixture
def three_cpus():
    saved = list(config._cpu_configs)
    P.setup(tf)
    yield
    config._cpu_configs[:] = saved


def _close(got, want, rtol=2e-5, atol=2e-6):
    if isinstance(want, dict):
        assert set(got) == set(want)
        for k in want:
            _close(got[k], want[k], rtol, atol)
    elif isinstance(want, list) and want and isinstance(want[0], (list, dict)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, rtol, atol)
    elif isinstance(want, (list, float)):
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=rtol, atol=atol)
    else:
        assert got == want


@pytest.mark.parametrize("name", ["custom_loop_sgd_2", "custom_loop_momentum_3", "custom_loop_momentum_1",
                                  "keras_fit_2", "keras_fit_1"])
def test_training_matches_tf(three_cpus, name):
    _close(P.PROGRAMS[name](tf), REF[name])


def test_custom_loop_eager_equals_compiled(three_cpus):
    # TF 2.21 cannot run this eagerly (its collective all-reduce fails on the shapes); tapeflow's
    # eager replicas give the compiled run's (and so TF's) numbers
    eager = P.custom_loop(tf, 2, compiled=False, optimizer="sgd")
    _close(eager, REF["custom_loop_sgd_2"])
    _close(eager, P.custom_loop(tf, 2, compiled=True, optimizer="sgd"), rtol=1e-6, atol=1e-7)


def test_random_streams_match_tf_bits(three_cpus):
    got = P.random_streams(tf)
    assert got == REF["random_streams"]   # Philox: TF's bits


@pytest.mark.parametrize("name", ["datasets", "contexts"])
def test_datasets_and_contexts_match_tf(three_cpus, name):
    _close(P.PROGRAMS[name](tf), REF[name])


def test_per_replica_repr_and_regroup(three_cpus):
    s = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
    x = tf.constant(3.0)
    r = s.run(lambda v: (v * 2, {"a": x}), args=(x,))
    # TF 2.21: a value every replica returns as the same object comes back as itself
    assert r[1]["a"] is x
    assert str(r[0]) == ("PerReplica:{\n  0: tf.Tensor(6.0, shape=(), dtype=float32),\n"
                         "  1: tf.Tensor(6.0, shape=(), dtype=float32)\n}")
    assert repr(r[0]) == ("PerReplica:{\n  0: <tf.Tensor: shape=(), dtype=float32, numpy=6.0>,\n"
                          "  1: <tf.Tensor: shape=(), dtype=float32, numpy=6.0>\n}")
    assert repr(tf.distribute.ReduceOp.SUM) == "<ReduceOp.SUM: 'SUM'>"


def test_guide_generator_numbers(three_cpus):
    # TF 2.21 (random_numbers guide): from_seed(1) under a 2-replica scope
    s = tf.distribute.MirroredStrategy(devices=["cpu:0", "cpu:1"])
    with s.scope():
        g = tf.random.Generator.from_seed(1)
        first = [float(t) for t in s.experimental_local_results(s.run(lambda: g.normal([])))]
        second = [float(t) for t in s.experimental_local_results(s.run(lambda: g.normal([])))]
    assert first == [np.float32(-0.87930447), np.float32(0.020661574)]   # TF 2.21
    assert second == [np.float32(-1.5822568), np.float32(0.77539235)]    # TF 2.21
    assert g.state.numpy().tolist() == [513, 0, 0]   # from_seed(1): counter 1, plus 256 per scalar draw

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.g = tf.random.Generator.from_seed(0)

        @tf.function
        def __call__(self):
            return self.g.normal([])
    with s.scope():
        m = M()
        got = [[float(t) for t in s.experimental_local_results(s.run(m))] for _ in range(2)]
    # TF 2.21: a tf.function called in each replica draws that replica's stream
    assert got == [[np.float32(-1.4154755), np.float32(-0.11388441)],
                   [np.float32(-0.68758255), np.float32(0.8084062)]]


def test_one_replica_is_plain_and_default_strategy():
    s = tf.distribute.MirroredStrategy()
    assert s.num_replicas_in_sync == 1
    r = s.run(lambda: tf.constant([1.0, 2.0]))
    assert type(r).__name__ == "Tensor"
    d = tf.distribute.get_strategy()
    assert d.reduce("SUM", 1.0, axis=None) == 1.0 and isinstance(d.reduce("SUM", 1.0, axis=None), float)  # TF 2.21
    assert tf.distribute.get_replica_context().replica_id_in_sync_group == 0
    assert not tf.distribute.has_strategy()


def test_errors(three_cpus):
    s = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
    other = tf.distribute.MirroredStrategy(["cpu:0"])
    with pytest.raises(RuntimeError, match="Mixing different"):
        with s.scope():
            with other.scope():
                pass
    with pytest.raises(ValueError, match="non-DistributedValues"):
        s.reduce("SUM", tf.constant(2.0), axis=None)
    with pytest.raises(ValueError, match="not a valid ReduceOp"):
        s.reduce("MAX", tf.constant(2.0), axis=None)
    with pytest.raises(ZeroDivisionError):
        s.run(lambda: 1 / 0)

    def uneven():
        c = tf.distribute.get_replica_context()
        if int(c.replica_id_in_sync_group) == 0:
            return c.all_reduce("SUM", tf.constant(1.0))
        return tf.constant(1.0)
    with pytest.raises(RuntimeError, match="different number of replica_context"):
        s.run(uneven)
    with s.scope():
        with pytest.raises(RuntimeError, match="cross replica context"):
            tf.nn.compute_average_loss(tf.constant([1.0]))
    with pytest.raises(ValueError, match="not divisible"):
        tf.distribute.InputContext(1, 0, 2).get_per_replica_batch_size(3)
    with pytest.raises(AssertionError, match="No duplicates"):
        tf.distribute.MirroredStrategy(["cpu:0", "cpu:0"])
    with pytest.raises(tf._unsupported.UnsupportedFeatureError, match="TPU"):
        tf.distribute.TPUStrategy()
    with pytest.raises(tf._unsupported.UnsupportedFeatureError, match="cluster resolvers"):
        tf.distribute.cluster_resolver.TFConfigClusterResolver()
    # a failed run leaves no replica context behind
    assert not tf.distribute.has_strategy()
    assert tf.distribute.MultiWorkerMirroredStrategy().num_replicas_in_sync == 1   # TF 2.21, no TF_CONFIG


def test_apply_gradients_hook_off_outside_runs():
    # outside strategy.run the optimizers' replica hook is one list load that reads 0
    from tapeflow import _distribute_context as _context
    assert _context.RUNNING[0] == 0
    v = tf.Variable([1.0, 2.0])
    opt = tf.keras.optimizers.SGD(0.5)
    opt.apply_gradients([(tf.constant([1.0, 1.0]), v)])
    np.testing.assert_array_equal(v.numpy(), [0.5, 1.5])


def test_average_loss_edges():
    # TF 2.21: an empty batch gives 0 (div_no_nan), a tensor of regularization losses is summed
    assert float(tf.nn.compute_average_loss(tf.zeros([0]))) == 0.0
    assert float(tf.nn.compute_average_loss(tf.constant([1.0, 2.0]), global_batch_size=0)) == 0.0
    assert float(tf.nn.compute_average_loss(tf.constant([[1.0, 2.0], [3.0, 4.0]]))) == 5.0
    assert float(tf.nn.compute_average_loss(tf.constant([1.0, 2.0]), sample_weight=3.0)) == 4.5
    assert float(tf.nn.scale_regularization_loss(tf.constant([1.0, 2.0]))) == 3.0
    f = tf.function(lambda x, n: tf.nn.compute_average_loss(x, global_batch_size=n))
    assert float(f(tf.constant([1.0, 2.0]), tf.constant(4))) == 0.75   # a traced batch size


def test_mirrored_variable_repr(three_cpus):
    s2 = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
    with s2.scope():
        u = tf.Variable([[1, 2]], name="u")
    u.assign([[3, 4]])
    # TF 2.21
    assert repr(u) == str(u) == (
        "MirroredVariable:{\n"
        "  0: <tf.Variable 'u:0' shape=(1, 2) dtype=int32, numpy=array([[3, 4]], dtype=int32)>,\n"
        "  1: <tf.Variable 'u/replica_1:0' shape=(1, 2) dtype=int32, numpy=array([[3, 4]], dtype=int32)>\n}")
    with tf.distribute.OneDeviceStrategy("cpu:0").scope():
        w = tf.Variable([1.0, 2.0], name="w")
    assert repr(w) == "<tf.Variable 'w:0' shape=(2,) dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    assert repr(tf.Variable(1.0)) == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>"
