"""Keras 3's Muon and ScheduleFreeAdamW (tapeflow/optimizers/keras3.py), and use_ema (base.py), against Keras 3.15 on TF 2.21
(tests/data/keras21_optimizers_reference.json, tests/tf_reference/make_keras21_optimizers_reference.py):
5 steps of fixed gradients on variables of ranks 1-3, eager and inside tapeflow.function."""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "tf_reference"))
from make_keras21_optimizers_reference import grad, initial  # noqa: E402

REF = json.load(open(os.path.join(HERE, "data", "keras21_optimizers_reference.json")))
RUNS = [(r["class"], r["kwargs"], r) for r in REF["runs"]]
IDS = [f"{c}-{i}" for i, (c, _, _) in enumerate(RUNS)]


def _run(cls, kwargs, compiled):
    shapes = {k: tuple(s) for k, s in REF["shapes"].items()}
    vs = [tf.Variable(initial(k, s), name=k) for k, s in shapes.items()]
    opt = getattr(tf.keras.optimizers, cls)(**kwargs)

    def step(*gs):
        opt.apply_gradients(zip(gs, vs))
    if compiled:
        step = tf.function(step)
    out = []
    for t in range(len(REF["runs"][0]["steps"])):
        step(*[tf.constant(grad(k, s, t)) for k, s in shapes.items()])
        out.append({k: v.numpy().reshape(-1) for k, v in zip(shapes, vs)})
    return out, opt


@pytest.mark.parametrize("cls,kwargs,run", RUNS, ids=IDS)
def test_iterates_match_keras(cls, kwargs, run):
    got, opt = _run(cls, kwargs, compiled=False)
    for t, (g, want) in enumerate(zip(got, run["steps"])):
        for k in want:
            # float32 rounding of Keras' operations, in Keras' order: equal up to a few ulps
            np.testing.assert_allclose(g[k], np.array(want[k], np.float32), rtol=1e-6, atol=1e-7,
                                       err_msg=f"{cls} {kwargs} step {t} {k}")
    if run.get("averages"):     # use_ema: the moving averages after the last step
        for v in opt._slot_vars:
            k = v.name.split(":")[0]
            np.testing.assert_allclose(opt.get_slot(v, "average").numpy().reshape(-1),
                                       np.array(run["averages"][k], np.float32), rtol=1e-6, atol=1e-7, err_msg=k)


@pytest.mark.parametrize("cls,kwargs,run", RUNS, ids=IDS)
def test_compiled_step_equals_eager(cls, kwargs, run):
    eager, _ = _run(cls, kwargs, compiled=False)
    comp, _ = _run(cls, kwargs, compiled=True)
    for e, c in zip(eager, comp):
        for k in e:
            # the fused tier's documented last-bit differences (its elementwise chains, e.g.
            # Newton-Schulz's a*X + B@X, round once per chain): Muon's kernel differs by 1 ulp
            np.testing.assert_allclose(e[k], c[k], rtol=4e-7, atol=1e-8, err_msg=k)


def test_muon_routes_variables_as_keras():
    """Rank-2 non-embedding variables take Newton-Schulz (momentum slot only), the rest AdamW."""
    _, opt = _run("Muon", {}, compiled=False)
    names = {v.name.split(":")[0]: "velocity" in opt._slots[id(v)] for v in opt._slot_vars}
    assert names == {"kernel": False, "tall": False, "bias": True, "conv": True, "embedding": True}, names
    # Newton-Schulz gives a near-orthogonal update: singular values of the orthogonalised matrix near 1
    u = opt.zeropower_via_newtonschulz5(tf.constant(np.random.default_rng(0).standard_normal((8, 5))
                                                    .astype(np.float32)), 5).numpy()
    s = np.linalg.svd(u, compute_uv=False)
    assert u.shape == (8, 5) and np.all((s > 0.6) & (s < 1.25)), s
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        opt.zeropower_via_newtonschulz5(tf.constant([1.0, 2.0]), 5)


@pytest.mark.parametrize("cls,kwargs,run", RUNS[:1] + RUNS[3:4], ids=IDS[:1] + IDS[3:4])
def test_config_round_trip(cls, kwargs, run):
    opt = getattr(tf.keras.optimizers, cls)(**kwargs)
    cfg = opt.get_config()
    for k, v in run["config"].items():
        if k in cfg and k not in ("name", "learning_rate"):
            assert cfg[k] == v, (k, cfg[k], v)
    again = tf.keras.optimizers.deserialize(tf.keras.optimizers.serialize(opt))
    assert type(again) is type(opt) and again.get_config() == cfg
    assert isinstance(tf.keras.optimizers.get(cls.lower()), type(opt))


def test_muon_trains_a_keras_model():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 6)).astype(np.float32)
    y = (x @ rng.standard_normal((6, 1))).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh"), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.Muon(learning_rate=0.02), loss="mse")
    h = model.fit(x, y, epochs=25, batch_size=16, verbose=0)
    assert h.history["loss"][-1] < 0.5 * h.history["loss"][0]


def test_optimizer_map_lookup_as_keras():
    # Keras 3.15's docstring example: exact keys first, then re.fullmatch patterns, else the default
    adam, sgd, rms = tf.keras.optimizers.Adam(), tf.keras.optimizers.SGD(), tf.keras.optimizers.RMSprop()
    om = tf.keras.optimizers.OptimizerMap(default_optimizer=rms)
    om["encoder/layer_0/dense"] = adam
    om["encoder/.*"] = sgd
    om["decoder"] = adam
    assert om["decoder"] is adam and om["encoder/layer_0/dense"] is adam
    assert om["encoder/layer_0/attention/query"] is sgd and om["decoder/layer_0/dense"] is rms
    with pytest.raises(ValueError, match="already exists"):
        om["decoder"] = sgd
    with pytest.raises(ValueError, match="cannot be MultiOptimizer"):
        om["x"] = tf.keras.optimizers.MultiOptimizer(om)
    with pytest.raises(TypeError, match="default_optimizer"):
        tf.keras.optimizers.OptimizerMap("adam")
    om2 = tf.keras.optimizers.OptimizerMap(rms, {"a.*": sgd, "ab.*": adam})
    with pytest.raises(ValueError, match="Multiple optimizers"):
        om2["abc"]


def test_multi_optimizer_routes_and_matches_separate_optimizers():
    """Each variable gets exactly the update its own optimizer would give it alone."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = rng.standard_normal((32, 1)).astype(np.float32)

    def model():
        tf.random.set_seed(1)
        m = tf.keras.Sequential([tf.keras.layers.Dense(3, name="enc"), tf.keras.layers.Dense(1, name="head")])
        m(x[:1])
        return m
    m1 = model()
    adam, sgd = tf.keras.optimizers.Adam(0.01), tf.keras.optimizers.SGD(0.1)
    multi = tf.keras.optimizers.MultiOptimizer(tf.keras.optimizers.OptimizerMap(sgd, {"enc/.*": adam}))
    m1.compile(optimizer=multi, loss="mse")
    m1.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    assert multi.optimizers == [adam, sgd] or multi.optimizers == [sgd, adam]
    assert int(multi.iterations.numpy()) == 8 and int(adam.iterations.numpy()) == 8
    assert len(adam._slot_vars) == 2 and len(sgd._slot_vars) == 2
    with pytest.raises(AttributeError, match="Learning rate cannot be accessed"):
        multi.learning_rate
    # the same by hand: each layer's variables with its own optimizer
    m2 = model()
    a2, s2 = tf.keras.optimizers.Adam(0.01), tf.keras.optimizers.SGD(0.1)
    for _ in range(2):
        for i in range(0, 32, 8):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(m2(x[i:i + 8]) - y[i:i + 8]))
            gs = tape.gradient(loss, m2.trainable_variables)
            a2.apply_gradients(zip(gs[:2], m2.trainable_variables[:2]))
            s2.apply_gradients(zip(gs[2:], m2.trainable_variables[2:]))
    for v1, v2 in zip(m1.trainable_variables, m2.trainable_variables):
        np.testing.assert_allclose(v1.numpy(), v2.numpy(), rtol=1e-5, atol=1e-6)
    cfg = tf.keras.optimizers.serialize(multi)
    again = tf.keras.optimizers.deserialize(cfg)
    assert isinstance(again, tf.keras.optimizers.MultiOptimizer)
    assert isinstance(again._optimizer_map["enc/kernel"], tf.keras.optimizers.Adam)
    assert isinstance(again._optimizer_map["head/bias"], tf.keras.optimizers.SGD)


def test_multi_optimizer_with_a_callable_and_checkpoint(tmp_path):
    adam, sgd = tf.keras.optimizers.Adam(0.1), tf.keras.optimizers.SGD(0.1)
    multi = tf.keras.optimizers.MultiOptimizer(lambda v: adam if "w" in v.name else sgd)
    w, b = tf.Variable([1.0, 2.0], name="w"), tf.Variable([3.0], name="b")
    multi.apply_gradients([(tf.constant([1.0, 1.0]), w), (tf.constant([2.0]), b)])
    np.testing.assert_allclose(b.numpy(), [2.8], rtol=1e-6)          # SGD
    np.testing.assert_allclose(w.numpy(), [0.9, 1.9], rtol=1e-5)     # Adam's first step: lr * sign
    ck = tf.train.Checkpoint(opt=multi, w=w, b=b)
    path = ck.save(str(tmp_path / "ck"))
    m_before = adam.get_slot(w, "m" if "m" in adam._slots[id(w)] else "momentum").numpy().copy()
    multi.apply_gradients([(tf.constant([5.0, 5.0]), w), (tf.constant([2.0]), b)])
    ck.restore(path)
    np.testing.assert_array_equal(adam.get_slot(w, "m" if "m" in adam._slots[id(w)] else "momentum").numpy(),
                                  m_before)
    assert int(multi.iterations.numpy()) == 1
