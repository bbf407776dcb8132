"""tapeflow.train: Checkpoint round-trips of every object kind, deferred
restoration, CheckpointManager retention, crash safety (SIGKILL during saves),
and rejection of corrupted / truncated / foreign / mismatched files."""
from __future__ import annotations

import json
import os
import random
import signal
import sys
import time

import numpy as np
import pytest

import tapeflow as tf
import tapeflow.train  # noqa: F401  (tf.train)
from tapeflow import keras
from tapeflow.train import (CheckpointError, CheckpointMismatchError, CheckpointNotFoundError,
                            CorruptCheckpointError)
from tapeflow.train.trackable import collect


def _var(shape, dtype=np.float32, fill=None, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) if fill is None else np.full(shape, fill)
    return tf.Variable(np.asarray(a).astype(dtype))


class Holder:
    """A plain user object (not a Module) holding variables in nested containers."""


def _data_file(prefix):
    with open(prefix + ".json") as f:
        return os.path.join(os.path.dirname(prefix), json.load(f)["data_file"])


# -- round trips ------------------------------------------------------------------------------------

def test_variables_of_every_dtype_round_trip(tmp_path):
    vs = {"f32": _var((3, 4)), "f64": _var((2,), np.float64), "f16": _var((5,), np.float16),
          "i32": tf.Variable(np.arange(6, dtype=np.int32).reshape(2, 3)), "i64": tf.Variable(np.int64(7)),
          "u8": tf.Variable(np.arange(4, dtype=np.uint8)), "b": tf.Variable(np.array([True, False])),
          "scalar": tf.Variable(2.5), "empty": tf.Variable(np.zeros((0, 3), np.float32))}
    before = {k: v.numpy().copy() for k, v in vs.items()}
    ck = tf.train.Checkpoint(**vs)
    path = ck.write(str(tmp_path / "vars"))
    assert path == str(tmp_path / "vars")
    for v in vs.values():
        v.assign(np.zeros_like(v.numpy()))
    ck.read(path).assert_consumed()
    for k, v in vs.items():
        np.testing.assert_array_equal(v.numpy(), before[k])
        assert v.numpy().dtype == before[k].dtype and v.numpy().shape == before[k].shape


def test_nested_user_objects_keys_and_round_trip(tmp_path):
    agent = Holder()
    agent.actor = Holder()
    agent.actor.l1 = _var((4, 3), seed=1)
    agent.critics = [_var((3,), seed=2), _var((3,), seed=3)]
    agent.nets = {"q": {"w": _var((2, 2), seed=4)}}
    agent.same = agent.actor.l1            # second path to one variable: stored once
    agent.buffer = [(np.zeros(3), 1, 0.5)] * 1000   # long plain data: not walked
    agent.name = "agent"
    keys = collect({"agent": agent})
    assert list(keys) == ["agent/actor/l1", "agent/critics/0", "agent/critics/1", "agent/nets/q/w"]
    ck = tf.train.Checkpoint(agent=agent)
    path = ck.save(str(tmp_path / "ckpt"))
    saved = {k: v.numpy().copy() for k, v in keys.items()}
    other = Holder()
    other.actor = Holder()
    other.actor.l1 = _var((4, 3), seed=9)
    other.critics = [_var((3,), seed=8), _var((3,), seed=7)]
    other.nets = {"q": {"w": _var((2, 2), seed=6)}}
    tf.train.Checkpoint(agent=other).restore(path).assert_consumed()
    for k, v in collect({"agent": other}).items():
        np.testing.assert_array_equal(v.numpy(), saved[k])


def test_module_round_trip(tmp_path):
    from tapeflow.module import Module

    class Net(Module):
        def __init__(self, seed):
            super().__init__()
            self.w = _var((3, 2), seed=seed)
            self.blocks = [Block(seed + 1), Block(seed + 2)]

    class Block(Module):
        def __init__(self, seed):
            super().__init__()
            self.b = _var((2,), seed=seed)

    a, b = Net(0), Net(10)
    path = tf.train.Checkpoint(net=a).write(str(tmp_path / "m"))
    listed = tf.train.list_variables(path)
    # TF 2.21's keys (the path + /.ATTRIBUTES/VARIABLE_VALUE)
    assert ("net/w/.ATTRIBUTES/VARIABLE_VALUE", [3, 2]) in listed
    assert ("net/blocks/0/b/.ATTRIBUTES/VARIABLE_VALUE", [2]) in listed
    tf.train.Checkpoint(net=b).read(path).assert_consumed()
    for x, y in zip(a.variables, b.variables):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def _model(seed=0, build=True):
    tf.random.set_seed(seed) if hasattr(tf.random, "set_seed") else None
    layers = [keras.layers.Dense(16, activation="relu", input_shape=(4,)) if build else
              keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2)]
    return keras.Sequential(layers)


def _data():
    rng = np.random.default_rng(0)
    return (tf.constant(rng.standard_normal((32, 4)).astype(np.float32)),
            tf.constant(rng.standard_normal((32, 2)).astype(np.float32)))


def _step_fn(model, opt, compiled=True):
    def step(x, y):
        with tf.GradientTape() as t:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        g = t.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(g, model.trainable_variables))
        return loss
    return tf.function(step) if compiled else step


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_keras_model_and_adam_slots_round_trip_then_training_continues_identically(tmp_path, compiled):
    x, y = _data()
    model, opt = _model(0), keras.optimizers.Adam(1e-2)
    step = _step_fn(model, opt, compiled)
    for _ in range(3):
        step(x, y)
    ck = tf.train.Checkpoint(model=model, optimizer=opt)
    path = ck.save(str(tmp_path / "ckpt"))
    keys = set(collect(ck._roots))
    assert "model/layers/0/kernel" in keys and "optimizer/iterations" in keys
    assert "model/layers/0/kernel/.OPTIMIZER_SLOT/optimizer/m" in keys
    assert "model/layers/1/bias/.OPTIMIZER_SLOT/optimizer/v" in keys

    # a fresh, unbuilt model and an optimizer without slots: restoration is deferred
    model2, opt2 = _model(5, build=False), keras.optimizers.Adam(1e-2)
    status = tf.train.Checkpoint(model=model2, optimizer=opt2).restore(path)
    assert status.pending_keys  # weights and slots do not exist yet
    status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match="not matched"):
        status.assert_consumed()
    step2 = _step_fn(model2, opt2, compiled)
    # the first step builds the model and creates the slots (inside the trace when compiled):
    # each gets its saved value on creation, before it is used
    a, b = [float(step(x, y)) for _ in range(3)], [float(step2(x, y)) for _ in range(3)]
    assert a == b
    status.assert_consumed()
    assert int(opt2.iterations.numpy()) == int(opt.iterations.numpy()) == 6
    for v1, v2 in zip(model.weights, model2.weights):
        np.testing.assert_array_equal(v1.numpy(), v2.numpy())


def test_optimizer_listed_first_does_not_steal_model_keys(tmp_path):
    x, y = _data()
    model, opt = _model(0), keras.optimizers.Adam(1e-2)
    _step_fn(model, opt, False)(x, y)
    keys = collect({"optimizer": opt, "model": model})
    assert "model/layers/0/kernel" in keys
    assert "model/layers/0/kernel/.OPTIMIZER_SLOT/optimizer/m" in keys
    assert not any(k.startswith("optimizer/slots") for k in keys)


def test_named_roots_keep_their_names_when_also_held_elsewhere(tmp_path):
    model, opt = _model(0), keras.optimizers.Adam(1e-2)
    model.compile(optimizer=opt, loss="mse")          # model.optimizer is the same object
    x, y = _data()
    _step_fn(model, opt, False)(x, y)
    agent = Holder()
    agent.model = model
    agent.step = tf.Variable(0, dtype=tf.int64)
    keys = collect({"agent": agent, "optimizer": opt, "step": agent.step})
    assert "optimizer/iterations" in keys and "step" in keys
    assert "agent/model/layers/0/kernel/.OPTIMIZER_SLOT/optimizer/m" in keys
    assert not any(k.startswith("agent/model/optimizer") or k == "agent/step" for k in keys)


def test_save_numbering_save_counter_and_latest(tmp_path):
    v = _var((2,))
    ck = tf.train.Checkpoint(v=v)
    d = str(tmp_path / "run")
    p1, p2 = ck.save(d + "/ckpt"), ck.save(d + "/ckpt")
    assert (p1, p2) == (d + "/ckpt-1", d + "/ckpt-2")
    assert tf.train.latest_checkpoint(d) == p2
    assert int(ck.save_counter.numpy()) == 2
    ck2 = tf.train.Checkpoint(v=_var((2,), seed=3))
    ck2.restore(p1).assert_consumed()
    assert int(ck2.save_counter.numpy()) == 1
    # numbering continues from the restored counter and replaces what the directory has there (as TF 2.21)
    assert ck2.save(d + "/ckpt") == d + "/ckpt-2"
    assert int(ck2.save_counter.numpy()) == 2
    np.testing.assert_array_equal(tf.train.load_variable(d, "v"), ck2.v.numpy())
    assert tf.train.Checkpoint(v=v).save(str(tmp_path / "elsewhere" / "ckpt")).endswith("ckpt-1")
    assert tf.train.latest_checkpoint(str(tmp_path / "nothing")) is None


def test_restore_takes_effect_inside_compiled_function(tmp_path):
    w = tf.Variable(np.ones((3, 3), np.float32))

    @tf.function
    def f(x):
        return tf.matmul(x, w)

    x = tf.constant(np.eye(3, dtype=np.float32))
    path = tf.train.Checkpoint(w=w).write(str(tmp_path / "w"))
    w.assign(np.full((3, 3), 5.0, np.float32))
    np.testing.assert_array_equal(f(x).numpy(), 5.0)
    tf.train.Checkpoint(w=w).read(path)
    np.testing.assert_array_equal(f(x).numpy(), 1.0)
    assert f.experimental_get_tracing_count() == 1


def test_deferred_restore_for_plain_objects_and_status_asserts(tmp_path):
    src = Holder()
    src.a, src.b = _var((2,), seed=1), _var((3,), seed=2)
    path = tf.train.Checkpoint(obj=src).write(str(tmp_path / "p"))
    dst = Holder()
    st = tf.train.Checkpoint(obj=dst).read(path)
    assert st.pending_keys == ["obj/a", "obj/b"]
    with pytest.raises(AssertionError):
        st.assert_nontrivial_match()
    dst.a = _var((2,), seed=5)
    dst.b = _var((3,), seed=6)
    st.assert_consumed()
    np.testing.assert_array_equal(dst.a.numpy(), src.a.numpy())
    np.testing.assert_array_equal(dst.b.numpy(), src.b.numpy())
    # a variable with no saved value
    dst.extra = _var((1,))
    with pytest.raises(AssertionError, match="obj/extra"):
        tf.train.Checkpoint(obj=dst).read(path).assert_consumed()
    tf.train.Checkpoint(obj=dst).read(path).expect_partial()
    none = tf.train.Checkpoint(obj=dst).restore(None)
    with pytest.raises(AssertionError):
        none.assert_consumed()


def test_deferred_mismatch_is_reported_when_the_variable_appears(tmp_path):
    from tapeflow.module import Module
    src = Holder()
    src.w = _var((2, 3))
    path = tf.train.Checkpoint(obj=src).write(str(tmp_path / "p"))
    m = Module()
    st = tf.train.Checkpoint(obj=m).read(path)
    assert st.pending_keys == ["obj/w"]
    with pytest.raises(CheckpointMismatchError, match=r"(?s)p'.*obj/w.*shape \[2, 3\] in the checkpoint, \[4, 4\]"):
        m.w = _var((4, 4))       # reported when the variable is attached, not at some later assert
    # a Keras layer built with the wrong input size: reported at build
    path2 = tf.train.save_weights(keras.Sequential([keras.layers.Dense(3, input_shape=(2,))]), str(tmp_path / "d"))
    model = keras.Sequential([keras.layers.Dense(3)])
    model.load_weights(path2)
    with pytest.raises(CheckpointMismatchError, match="kernel"):
        model(tf.constant(np.ones((1, 5), np.float32)))


def test_save_and_restore_refused_while_tracing(tmp_path):
    v = _var((2,))
    ck = tf.train.Checkpoint(v=v)

    @tf.function
    def f(x):
        ck.write(str(tmp_path / "x"))
        return x

    with pytest.raises(RuntimeError, match="outside the compiled function"):
        f(tf.constant(1.0))


def test_save_weights_load_weights_functions_and_methods(tmp_path):
    x, _ = _data()
    model = _model(0)
    p = str(tmp_path / "weights")
    assert tf.train.save_weights(model, p) == p
    m2 = _model(3, build=False)
    st = m2.load_weights(p)          # unbuilt: deferred until the first call builds it
    np.testing.assert_allclose(m2(x).numpy(), model(x).numpy(), rtol=1e-6)
    st.assert_consumed()
    m3 = _model(4)
    tf.train.load_weights(m3, p).assert_consumed()
    np.testing.assert_allclose(m3(x).numpy(), model(x).numpy(), rtol=1e-6)
    model.save_weights(str(tmp_path / "w.npz"))     # the Model's own .npz format still works
    m3.load_weights(str(tmp_path / "w.npz"))
    with pytest.raises(FileExistsError):
        tf.train.save_weights(model, p, overwrite=False)


# -- CheckpointManager retention ------------------------------------------------------------------------

def _names(mgr):
    return [os.path.basename(p) for p in mgr.checkpoints]


def _on_disk(d):
    return sorted(n[:-5] for n in os.listdir(d) if n.endswith(".json") and n != "checkpoint")


def test_manager_keeps_latest_n(tmp_path):
    v = _var((2,))
    mgr = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path), max_to_keep=3)
    assert mgr.latest_checkpoint is None
    for i in range(6):
        v.assign(np.full(2, i, np.float32))
        p = mgr.save()
        assert p == str(tmp_path / f"ckpt-{i + 1}")
    assert _names(mgr) == ["ckpt-4", "ckpt-5", "ckpt-6"] == _on_disk(tmp_path)
    assert mgr.latest_checkpoint == tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ckpt-6")
    assert not any(".data-" in n and n.split(".data-")[0] in ("ckpt-1", "ckpt-2", "ckpt-3")
                   for n in os.listdir(tmp_path))
    # a new manager on the same directory picks up the state
    mgr2 = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path), max_to_keep=3)
    assert _names(mgr2) == ["ckpt-4", "ckpt-5", "ckpt-6"]
    mgr2.checkpoint.restore(mgr2.latest_checkpoint)
    np.testing.assert_array_equal(v.numpy(), 5.0)
    assert mgr2.save() == str(tmp_path / "ckpt-7")
    assert _names(mgr2) == ["ckpt-5", "ckpt-6", "ckpt-7"]


def test_checkpoint_refuses_values_it_cannot_save(tmp_path):
    # Checkpoint(step=1) saved nothing for `step` and a restore left the new value in place;
    # TF 2.21 refuses non-trackable values ("expecting step to be a trackable object")
    for bad in (1, 2.5, "x", np.zeros(2), tf.constant(1.0)):
        with pytest.raises(ValueError, match=r"Checkpoint: 'step' is a .* which a checkpoint cannot save"):
            tf.train.Checkpoint(step=bad, v=_var((2,)))
        ck = tf.train.Checkpoint(v=_var((2,)))
        with pytest.raises(ValueError, match=r"'step' is a"):
            ck.step = bad
    ck = tf.train.Checkpoint(step=tf.Variable(3, dtype=tf.int64), vs=[_var((2,))])
    assert os.path.exists(ck.save(str(tmp_path / "c")) + ".json")


@pytest.mark.parametrize("keep", [0, -2])
def test_manager_refuses_max_to_keep_below_one(tmp_path, keep):
    # 0 deleted every checkpoint right after writing it (with best_k too, for one saved without
    # a metric); TF 2.21 refuses 0 and negative counts as well
    for best_k in (None, 2):
        with pytest.raises(ValueError, match=rf"max_to_keep must be a positive integer or None, got {keep}"):
            tf.train.CheckpointManager(tf.train.Checkpoint(v=_var((2,))), str(tmp_path), max_to_keep=keep,
                                       best_k=best_k)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("mode", ["max", "min"])
def test_manager_keeps_best_k_next_to_latest_n(tmp_path, mode):
    v = _var((2,))
    mgr = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path), max_to_keep=2, best_k=2, mode=mode)
    metrics = [1.0, 5.0, 3.0, 2.0, 4.0, 0.0, None]
    for i, m in enumerate(metrics):
        mgr.save(metric=None if m is None else tf.constant(m))
        # never deletes a checkpoint that is among the best or the latest so far
        seen = [(j + 1, x) for j, x in enumerate(metrics[:i + 1]) if x is not None]
        ranked = sorted(seen, key=lambda t: -t[1] if mode == "max" else t[1])[:2]
        must = {f"ckpt-{n}" for n, _ in ranked} | {f"ckpt-{n}" for n in range(max(1, i), i + 2)}
        assert must <= set(_on_disk(tmp_path)) == set(_names(mgr))
    if mode == "max":
        assert set(_names(mgr)) == {"ckpt-2", "ckpt-5", "ckpt-6", "ckpt-7"}
        assert [os.path.basename(p) for p in mgr.best_checkpoints] == ["ckpt-2", "ckpt-5", "ckpt-6"]
    else:
        assert set(_names(mgr)) == {"ckpt-1", "ckpt-6", "ckpt-7"}
        assert os.path.basename(mgr.best_checkpoint) == "ckpt-6"
    assert mgr.metric_of(mgr.best_checkpoint) == (5.0 if mode == "max" else 0.0)


def test_manager_keep_every_n_hours_with_fake_clock_and_pinned(tmp_path):
    now = [0.0]
    v = _var((2,))
    mgr = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path), max_to_keep=2,
                                     keep_checkpoint_every_n_hours=1, clock=lambda: now[0])
    for i in range(7):           # one save every half hour: t = 0, 0.5, ..., 3.0 h
        now[0] = i * 1800.0
        mgr.save(keep=(i == 1))  # ckpt-2 is pinned
    # TF's rule: a checkpoint leaving the window is kept if >= 1 h after the last one kept that way
    assert _names(mgr) == ["ckpt-2", "ckpt-3", "ckpt-5", "ckpt-6", "ckpt-7"] == _on_disk(tmp_path)
    # the preserved-by-time state survives a new manager
    mgr2 = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path), max_to_keep=2,
                                      keep_checkpoint_every_n_hours=1, clock=lambda: now[0])
    now[0] = 3.5 * 3600
    mgr2.save()
    assert _names(mgr2) == ["ckpt-2", "ckpt-3", "ckpt-5", "ckpt-7", "ckpt-8"]


def test_manager_checkpoint_interval_and_restore_or_initialize(tmp_path):
    step = tf.Variable(0, dtype=tf.int64)
    inits = []
    mgr = tf.train.CheckpointManager(tf.train.Checkpoint(step=step), str(tmp_path), step_counter=step,
                                     checkpoint_interval=10, init_fn=lambda: inits.append(1))
    assert mgr.restore_or_initialize() is None and inits == [1]
    saved = []
    for s in range(0, 35, 5):
        step.assign(s)
        if mgr.save() is not None:
            saved.append(s)
    assert saved == [0, 10, 20, 30]
    step.assign(0)
    assert mgr.restore_or_initialize() == mgr.latest_checkpoint
    assert int(step.numpy()) == 30


# -- crash safety ----------------------------------------------------------------------------------------

_CHILD = r"""
import os, sys
import numpy as np
import tapeflow as tf
import tapeflow.train
d, out = sys.argv[1], int(sys.argv[2])
v = tf.Variable(np.zeros((512, 512), np.float32))
w = tf.Variable(np.zeros(20000, np.float64))
step = tf.Variable(0, dtype=tf.int64)
ck = tf.train.Checkpoint(v=v, w=w, step=step)
mgr = tf.train.CheckpointManager(ck, d, max_to_keep=2)   # cleans what the previous (killed) child left
if mgr.latest_checkpoint:
    ck.restore(mgr.latest_checkpoint).assert_consumed()
os.write(out, b"r")
sys.stdin.buffer.read(1)                     # the test looks at the directory while this writer is alive
while True:
    s = int(step.numpy()) + 1
    step.assign(s)
    v.assign(np.full((512, 512), s, np.float32))
    w.assign(np.full(20000, s, np.float64))
    mgr.save()
    ck.write(os.path.join(d, "fixed"))       # rewriting one prefix in place
    os.write(out, b"%d\n" % s)
"""


def _check_consistent(prefix):
    v = tf.Variable(np.zeros((512, 512), np.float32))
    w = tf.Variable(np.zeros(20000, np.float64))
    step = tf.Variable(0, dtype=tf.int64)
    tf.train.Checkpoint(v=v, w=w, step=step).read(prefix).assert_consumed()
    s = int(step.numpy())
    assert s >= 1 and (v.numpy() == s).all() and (w.numpy() == s).all(), f"{prefix}: torn checkpoint"
    return s


def _live_files(d):
    """The files a clean directory holds: the state file, and index + data of every checkpoint
    it lists and of the unmanaged 'fixed' checkpoint."""
    st = tf.train.get_checkpoint_state(d)
    prefixes = [e["name"] for e in st["checkpoints"]] if st else []
    live = {"checkpoint"} if st else set()
    for name in prefixes + (["fixed"] if os.path.exists(os.path.join(d, "fixed.json")) else []):
        live |= {name + ".json", os.path.basename(_data_file(os.path.join(d, name)))}
    return live, prefixes


def test_sigkill_during_saves_leaves_only_live_loadable_checkpoints(tmp_path):
    """Kills a saving process again and again. Each restart loads the latest checkpoint with exact
    values, and its manager's start removes everything the killed writer left (temp files,
    safetensors' temp files, orphan data, checkpoints retention had dropped from the state)."""
    import subprocess
    d = str(tmp_path / "ckpts")
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    rng = random.Random(1234)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(tf.__file__))))
    last_reported = 0
    for round_ in range(10):
        r, wfd = os.pipe()
        proc = subprocess.Popen([sys.executable, str(script), d, str(wfd)], pass_fds=(wfd,), env=env,
                                stdin=subprocess.PIPE)
        os.close(wfd)
        assert os.read(r, 1) == b"r"          # cleaned the directory and restored the previous latest
        if round_:
            live, _ = _live_files(d)
            assert sorted(os.listdir(d)) == sorted(live), f"round {round_}: leftovers of the killed writer"
        proc.stdin.write(b"g")
        proc.stdin.flush()
        time.sleep(rng.uniform(0.02, 0.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdin.close()
        reported = b""
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            reported += chunk
        os.close(r)
        done = [int(x) for x in reported.split()] if reported else []
        last_reported = max([last_reported] + done)
        latest = tf.train.latest_checkpoint(d)
        if latest is None:
            assert last_reported == 0
            continue
        s = _check_consistent(latest)
        assert s >= last_reported                     # every completed save is visible
        if os.path.exists(os.path.join(d, "fixed.json")):
            _check_consistent(os.path.join(d, "fixed"))
    assert last_reported >= 1
    tf.train.CheckpointManager(tf.train.Checkpoint(), d)   # on start: cleans what the last kill left
    live, prefixes = _live_files(d)
    assert sorted(os.listdir(d)) == sorted(live)
    assert 1 <= len(prefixes) <= 3                    # max_to_keep=2, and the save in flight at the kill
    for name in prefixes:
        _check_consistent(os.path.join(d, name))


def test_cleaning_spares_live_writers_and_fresh_files_of_unknown_origin(tmp_path):
    """The rule for 'dead': a tagged file whose writer pid is gone (or reused) is removed at once;
    a live writer's files never; untagged files (safetensors' .tmpXXXXXX) once they are stale."""
    import subprocess
    from tapeflow.train import storage
    d = tmp_path
    v = _var((2,))
    mgr = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(d), max_to_keep=1)
    mgr.save()
    # a process that is alive for the whole test, and one that is dead
    sleeper = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        def tag(pid):
            st = storage._proc_stat(pid) if storage._HAS_PROC else None
            return f"{pid}-{st[1] if st else 0}-{storage._HOST}-0badf00d"
        me = storage.writer_tag().rsplit("-", 1)[0]
        pid_reused = f"{os.getpid()}-{int(me.split('-')[1]) + 1}-{storage._HOST}-0badf00d"
        files = {
            f".ckpt-7.json.tmp-{tag(dead.pid)}": False,            # dead writer's temp file
            f".ckpt-7.data-x.safetensors.tmp-{tag(dead.pid)}/": False,   # its private safetensors dir
            f"ckpt-7.data-{tag(dead.pid)}.safetensors": False,      # its orphan data file
            f".ckpt-8.json.tmp-{pid_reused}": False,               # a pid now used by another process
            f".ckpt-9.json.tmp-{tag(sleeper.pid)}": True,          # a live writer's temp file
            f"ckpt-9.data-{tag(sleeper.pid)}.safetensors": True,    # ... and its data, index not written yet
            f".ckpt-9.json.tmp-123-456-{'0' if storage._HOST[0] != '0' else '1'}{storage._HOST[1:]}-0badf00d":
                True,                                               # another host's writer: fresh, kept
            ".tmpAb3dE9": True,                                     # safetensors' temp file, fresh
            ".tmpQz81Lp": False,                                    # ... and one untouched for an hour
        }
        for n in files:
            p = d / n.rstrip("/")
            if n.endswith("/"):
                p.mkdir()
                (p / ".tmpXyZ123").write_bytes(b"x" * 100)
            else:
                p.write_bytes(b"x" * 100)
        old = time.time() - 3600
        os.utime(d / ".tmpQz81Lp", (old, old))
        tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(d), max_to_keep=1)
        left = set(os.listdir(d))
        for n, kept in files.items():
            assert (n.rstrip("/") in left) == kept, n
        assert os.path.exists(_data_file(mgr.latest_checkpoint))
    finally:
        sleeper.stdin.close()
        sleeper.wait()


def test_manager_removes_checkpoints_its_state_no_longer_lists(tmp_path):
    """Retention drops a checkpoint from the state file before deleting its files: a writer killed in
    between leaves them, and the next manager removes them (not other prefixes, not live writers')."""
    from tapeflow.train import storage
    v = _var((2,))
    mgr = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path), max_to_keep=2)
    for _ in range(3):
        mgr.save()
    assert _names(mgr) == ["ckpt-2", "ckpt-3"]
    # ckpt-1's files as a killed writer left them: written by a process that is gone
    stale = tf.train.Checkpoint(v=v).write(str(tmp_path / "ckpt-1"))
    dead_tag = f"{2 ** 22 + 7}-1-{storage._HOST}-0badf00d"        # above pid_max: never alive
    meta = json.load(open(stale + ".json"))
    dead_data = f"ckpt-1.data-{dead_tag}.safetensors"
    os.rename(_data_file(stale), tmp_path / dead_data)
    meta["data_file"] = dead_data
    open(stale + ".json", "w").write(json.dumps(meta))
    mine = tf.train.Checkpoint(v=v).write(str(tmp_path / "ckpt-0"))    # this (live) process's: kept
    other = tf.train.Checkpoint(v=v).write(str(tmp_path / "best"))     # not the manager's naming: kept
    mgr2 = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path), max_to_keep=2)
    assert not os.path.exists(stale + ".json") and not (tmp_path / dead_data).exists()
    assert storage.exists(mine) and storage.exists(other)
    assert _names(mgr2) == ["ckpt-2", "ckpt-3"]


# -- bad files ---------------------------------------------------------------------------------------------

@pytest.fixture
def saved(tmp_path):
    obj = Holder()
    obj.kernel = _var((64, 32), seed=1)
    obj.bias = _var((32,), seed=2)
    obj.step = tf.Variable(np.int64(3))
    path = tf.train.Checkpoint(model=obj).write(str(tmp_path / "ck"))
    return path, obj


def _fresh():
    o = Holder()
    o.kernel = _var((64, 32), seed=11)
    o.bias = _var((32,), seed=12)
    o.step = tf.Variable(np.int64(0))
    return o


def _unchanged(o, ref):
    for k in ("kernel", "bias", "step"):
        np.testing.assert_array_equal(getattr(o, k).numpy(), getattr(ref, k).numpy())


def test_truncated_data_file_names_file_and_variable(saved):
    path, _ = saved
    dp = _data_file(path)
    size = os.path.getsize(dp)
    with open(dp, "r+b") as f:
        f.truncate(size - 100)
    o = _fresh()
    ref = _fresh()
    with pytest.raises(CorruptCheckpointError) as e:
        tf.train.Checkpoint(model=o).read(path)
    msg = str(e.value)
    assert os.path.basename(dp) in msg and "truncated" in msg and "model/" in msg
    _unchanged(o, ref)


def test_flipped_byte_is_caught_by_checksum_naming_the_variable(saved):
    path, _ = saved
    dp = _data_file(path)
    meta = json.load(open(path + ".json"))
    start, end = meta["tensors"]["model/kernel"]["offsets"]
    with open(dp, "r+b") as f:
        f.seek((start + end) // 2)
        b = f.read(1)
        f.seek((start + end) // 2)
        f.write(bytes([b[0] ^ 0xFF]))
    o, ref = _fresh(), _fresh()
    with pytest.raises(CorruptCheckpointError, match=r"'model/kernel' is corrupted \(checksum"):
        tf.train.Checkpoint(model=o).read(path)
    _unchanged(o, ref)


def test_corrupted_index_and_foreign_files(saved, tmp_path):
    path, _ = saved
    # truncated JSON index
    raw = open(path + ".json", "rb").read()
    open(path + ".json", "wb").write(raw[: len(raw) // 2])
    with pytest.raises(CorruptCheckpointError, match=r"ck\.json.*not JSON"):
        tf.train.Checkpoint(model=_fresh()).read(path)
    # a JSON file of another kind
    (tmp_path / "other.json").write_text(json.dumps({"format": "keras", "weights": []}))
    with pytest.raises(CheckpointError, match="other.json: not a tapeflow checkpoint"):
        tf.train.Checkpoint(model=_fresh()).read(str(tmp_path / "other"))
    # a foreign binary file posing as safetensors
    (tmp_path / "junk.safetensors").write_bytes(b"PK\x03\x04" + os.urandom(200))
    with pytest.raises(CorruptCheckpointError, match="junk.safetensors"):
        tf.train.Checkpoint(model=_fresh()).read(str(tmp_path / "junk.safetensors"))
    # a missing checkpoint, and a directory passed instead of a prefix
    with pytest.raises(CheckpointNotFoundError, match="not found"):
        tf.train.Checkpoint(model=_fresh()).read(str(tmp_path / "nope"))
    with pytest.raises(CheckpointNotFoundError, match="is a directory"):
        tf.train.Checkpoint(model=_fresh()).read(str(tmp_path))


def test_data_file_replaced_or_missing(saved, tmp_path):
    path, _ = saved
    dp = _data_file(path)
    data = open(dp, "rb").read()
    open(dp, "wb").write(data + b"\0" * 10)
    with pytest.raises(CorruptCheckpointError, match="modified or replaced"):
        tf.train.Checkpoint(model=_fresh()).read(path)
    os.remove(dp)
    with pytest.raises(CheckpointNotFoundError, match="data file .* is missing"):
        tf.train.Checkpoint(model=_fresh()).read(path)


def test_plain_safetensors_file_loads(tmp_path):
    from safetensors.numpy import save_file
    save_file({"w": np.arange(4, dtype=np.float32)}, str(tmp_path / "plain.safetensors"))
    v = tf.Variable(np.zeros(4, np.float32))
    tf.train.Checkpoint(w=v).read(str(tmp_path / "plain.safetensors")).assert_consumed()
    np.testing.assert_array_equal(v.numpy(), np.arange(4))


def test_shape_and_dtype_mismatch_assign_nothing(saved):
    path, _ = saved
    o = _fresh()
    o.bias = _var((16,), seed=12)           # wrong shape
    o.step = tf.Variable(np.int32(0))       # wrong dtype
    kernel_before = o.kernel.numpy().copy()
    with pytest.raises(CheckpointMismatchError) as e:
        tf.train.Checkpoint(model=o).read(path)
    msg = str(e.value)
    assert "ck" in msg and "model/bias" in msg and "shape [32]" in msg and "[16]" in msg
    assert "model/step" in msg and "int64" in msg and "int32" in msg and "nothing was assigned" in msg
    np.testing.assert_array_equal(o.kernel.numpy(), kernel_before)   # the matching one was not assigned either


def test_writes_are_atomic_and_leave_no_temp_files(saved, tmp_path):
    path, obj = saved
    ck = tf.train.Checkpoint(model=obj)
    first_data = _data_file(path)
    obj.kernel.assign(np.zeros((64, 32), np.float32))
    ck.write(path)                      # rewrite in place: a new data file, then the index, then cleanup
    assert _data_file(path) != first_data and not os.path.exists(first_data)
    assert not [n for n in os.listdir(tmp_path) if ".tmp-" in n]
    o = _fresh()
    tf.train.Checkpoint(model=o).read(path)
    np.testing.assert_array_equal(o.kernel.numpy(), 0.0)


def test_manager_removes_old_orphan_data_files(tmp_path):
    v = _var((2,))
    mgr = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path))
    live = mgr.save()
    orphan = tmp_path / "ckpt-9.data-deadbeef.safetensors"
    fresh = tmp_path / "ckpt-10.data-cafecafe.safetensors"
    orphan.write_bytes(b"x")
    fresh.write_bytes(b"x")
    old = time.time() - 3600
    os.utime(orphan, (old, old))
    tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path))
    assert not orphan.exists() and fresh.exists()       # a recent one may belong to a live writer
    assert os.path.exists(_data_file(live))
