"""The Gridworld DQN: the update step against a NumPy reference on a fixed
batch, acting, target sync, the vectorized env, and the console script
(train -> test -> play -> resume) in a subprocess."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.rl.dqn import DQNAgent, DQNConfig, PRESETS
from tapeflow.rl.envs.gridworld import Gridworld
from tapeflow.rl.envs.vector import GridworldVec

from conftest import subprocess_env


def _batch(B=16, seed=0):
    rs = np.random.default_rng(seed)
    return dict(s=rs.random((B, 64)).astype(np.float32), a=rs.integers(0, 4, B).astype(np.int64),
                r=rs.choice(np.array([-1, -10, 10], np.float32), B),
                s2=rs.random((B, 64)).astype(np.float32), done=(rs.random(B) < 0.3).astype(np.float32))


def _forward(ws, x):
    """MLP 64-150-100-4 with ReLU; returns activations for backprop."""
    acts = [x]
    h = x
    n = len(ws) // 2
    for i in range(n):
        z = h @ ws[2 * i] + ws[2 * i + 1]
        h = np.maximum(z, 0) if i < n - 1 else z
        acts.append(h)
    return acts


def _reference_update(online, target, batch, cfg):
    """Hand-written NumPy: TD target, loss, backprop, one Keras-style Adam step (t=1)."""
    s, a, r, s2, d = batch["s"], batch["a"], batch["r"], batch["s2"], batch["done"]
    B = len(a)
    q_next = _forward(target, s2)[-1]
    if cfg.double_dqn:
        a_star = _forward(online, s2)[-1].argmax(1)
        q_next_a = q_next[np.arange(B), a_star]
    else:
        q_next_a = q_next.max(1)
    y = r + cfg.gamma * (1 - d) * q_next_a
    acts = _forward(online, s)
    q_sa = acts[-1][np.arange(B), a]
    e = q_sa - y
    if cfg.loss == "huber":  # delta 1
        loss = np.mean(np.where(np.abs(e) <= 1, 0.5 * e * e, np.abs(e) - 0.5))
        de = np.clip(e, -1, 1) / B
    else:
        loss = np.mean(e * e)
        de = 2 * e / B
    g_out = np.zeros_like(acts[-1])
    g_out[np.arange(B), a] = de
    grads = [None] * len(online)
    g = g_out
    n = len(online) // 2
    for i in range(n - 1, -1, -1):
        grads[2 * i] = acts[i].T @ g
        grads[2 * i + 1] = g.sum(0)
        if i > 0:
            g = (g @ online[2 * i].T) * (acts[i] > 0)
    lr, b1, b2, eps = cfg.learning_rate, 0.9, 0.999, 1e-7
    new = []
    for w, gw in zip(online, grads):
        m = (1 - b1) * gw
        v = (1 - b2) * gw * gw
        alpha = lr * np.sqrt(1 - b2) / (1 - b1)
        new.append(w - alpha * m / (np.sqrt(v) + eps))
    return loss, new


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("double,loss", [(False, "mse"), (True, "huber")])
def test_update_matches_numpy_reference(compiled, double, loss):
    cfg = dataclasses.replace(PRESETS["book"], double_dqn=double, loss=loss)
    agent = DQNAgent(cfg, seed=3, compiled=compiled)
    # make the target network differ from the online one
    agent.q_target.set_weights([w * 0.5 for w in agent.q.get_weights()])
    online = [w.astype(np.float64) for w in agent.q.get_weights()]
    target = [w.astype(np.float64) for w in agent.q_target.get_weights()]
    b = _batch()
    ref_loss, ref_w = _reference_update(online, target, {k: v.astype(np.float64) if v.dtype == np.float32 else v
                                                        for k, v in b.items()}, cfg)
    got = agent.update(tf.constant(b["s"]), tf.constant(b["a"]), tf.constant(b["r"]), tf.constant(b["s2"]),
                       tf.constant(b["done"]))
    assert abs(float(got) - ref_loss) <= 1e-4 * max(1.0, abs(ref_loss))
    for w_got, w_ref in zip(agent.q.get_weights(), ref_w):
        np.testing.assert_allclose(w_got, w_ref, rtol=1e-4, atol=1e-5)


def test_sync_target_and_act():
    agent = DQNAgent(PRESETS["book"], seed=1)
    agent.q_target.set_weights([np.zeros_like(w) for w in agent.q.get_weights()])
    agent.sync_target()
    for a, b in zip(agent.q.get_weights(), agent.q_target.get_weights()):
        np.testing.assert_array_equal(a, b)
    obs = np.random.default_rng(0).random((50, 64)).astype(np.float32)
    q = agent.q(tf.constant(obs)).numpy()
    np.testing.assert_array_equal(agent.act(obs, 0.0), q.argmax(1))
    assert agent.greedy(obs[0]) == int(q[0].argmax())
    acts = agent.act(np.repeat(obs[:1], 4000, 0), 1.0)
    counts = np.bincount(acts, minlength=4)
    assert counts.min() > 800  # uniform exploration at epsilon 1


def test_epsilon_schedule():
    cfg = DQNConfig(epsilon_start=1.0, epsilon_end=0.1, epsilon_decay_steps=100)
    assert cfg.epsilon(0) == 1.0
    assert abs(cfg.epsilon(50) - 0.55) < 1e-12
    assert abs(cfg.epsilon(1000) - 0.1) < 1e-12


def test_vector_env_follows_gridworld_rules():
    env = Gridworld(mode="random", noise=0.0)
    v = GridworldVec(1, mode="random", noise=0.0, seed=1)
    v.reset()
    rng = np.random.default_rng(0)
    for _ in range(500):
        board = v.boards[0].copy()
        obs, _ = env.reset(options={"board": board})
        np.testing.assert_array_equal(obs, v.observe()[0])
        a = int(rng.integers(4))
        o2, r2, t2, _, _ = env.step(a)
        _, r, te, tr, final = v.step(np.array([a]))
        assert (r2, t2) == (float(r[0]), bool(te[0]))
        np.testing.assert_array_equal(o2, final[0])


def test_vector_env_autoreset_and_truncation():
    v = GridworldVec(8, mode="random", noise=0.0, max_steps=3, seed=0)
    v.reset()
    for t in range(3):
        obs, r, term, trunc, final = v.step(np.zeros(8, np.int64))
    # after 3 moves every board has ended (terminated or truncated) and restarted
    assert (term | trunc).all() or (v.steps < 3).all()
    assert (v.steps == 0).all() or (v.steps < 3).all()
    with pytest.raises(ValueError, match="expected 8 actions"):
        v.step(np.zeros(3, np.int64))


def _cli(*args, cwd):
    env = subprocess_env(PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable, "-m", "tapeflow.cli", "gridworld", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=240)


def test_console_script_train_test_play_resume(tmp_path):
    ck, logs = str(tmp_path / "ck"), str(tmp_path / "runs")
    r = _cli("train", "--steps", "4000", "--games", "50", "--ckpt-dir", ck, "--logdir", logs,
             "--no-progress", "--json", "--seed", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["env_steps"] >= 4000 and 0.0 <= res["win_rate"] <= 1.0 and res["checkpoint"]
    assert "test win rate over 50 random games" in r.stdout
    # summaries were written with namespaced tags, readable by TensorBoard
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    ea = EventAccumulator(logs)
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    assert {"losses/td_loss", "charts/epsilon", "charts/test_win_rate"} <= tags
    r = _cli("test", "--ckpt-dir", ck, "--games", "50", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "win rate" in r.stdout
    r = _cli("play", "--ckpt-dir", ck, "--seed", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "move 1:" in r.stdout and "P" in r.stdout
    r = _cli("train", "--steps", "6000", "--games", "20", "--ckpt-dir", ck, "--logdir", "", "--resume",
             "--no-progress", "--json", "--seed", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "resumed from" in r.stdout
    res2 = json.loads(r.stdout.strip().splitlines()[-1])
    assert res2["env_steps"] >= 6000 and res2["updates"] < res["updates"] + 200  # continued, not restarted


def test_test_command_without_checkpoint_is_a_clear_error(tmp_path):
    r = _cli("test", "--ckpt-dir", str(tmp_path / "nothing"), cwd=tmp_path)
    assert r.returncode != 0
    assert "no trained agent" in r.stderr


def test_ctrl_c_stops_cleanly_after_saving_a_checkpoint(tmp_path):
    """SIGINT during training: the run stops, saves, still reports, and exits 0."""
    import re
    import signal
    import threading
    ck = str(tmp_path / "ck")
    env = subprocess_env(PYTHONUNBUFFERED="1")
    p = subprocess.Popen([sys.executable, "-m", "tapeflow.cli", "gridworld", "train", "--steps", "10000000",
                          "--games", "10", "--ckpt-dir", ck, "--logdir", ""],
                         cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Readiness: the progress bar (stderr, "| 0/10000000") is drawn by the training loop,
    # i.e. after train() installed its SIGINT handler. Wait for it rather than for a time.
    err_chunks, started = [], threading.Event()

    def drain_stderr():
        for chunk in iter(lambda: os.read(p.stderr.fileno(), 4096), b""):
            err_chunks.append(chunk)
            if re.search(rb"\|\s*\d+/\d+", b"".join(err_chunks)):
                started.set()
    reader = threading.Thread(target=drain_stderr, daemon=True)
    reader.start()
    try:
        assert started.wait(timeout=120), b"".join(err_chunks).decode(errors="replace")
        p.send_signal(signal.SIGINT)
        out = p.stdout.read().decode()
        p.wait(timeout=120)
        reader.join(timeout=10)
        err = b"".join(err_chunks).decode(errors="replace")
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    assert "interrupted: checkpoint saved to" in out
    from tapeflow import train as tftrain
    assert tftrain.latest_checkpoint(ck) is not None
