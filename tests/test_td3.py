"""TD3 / DDPG: the compiled (and eager) update against a NumPy reference step,
and the off-policy trainer's exact resume and seeding on Pendulum-v1."""
import dataclasses

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.rl.ddpg import DDPG, PRESETS
from tapeflow.rl.replay import ReplayBuffer
from tapeflow.rl.td3 import TD3, TD3Config
from tapeflow.rl.trainer import TrainConfig, train

S, A, B, MAX_ACTION = 5, 2, 8, 2.0


# -- NumPy reference: dense layers, their backward pass, torch's Adam ---------------------------------

def relu(x):
    return np.maximum(x, 0)


def forward(layers, x, acts):
    """layers: [(W, b)]; acts: 'relu' | 'tanh' | None per layer. Returns (y, cache)."""
    cache = []
    for (W, b), act in zip(layers, acts):
        z = x @ W + b
        y = relu(z) if act == "relu" else np.tanh(z) if act == "tanh" else z
        cache.append((x, z, y))
        x = y
    return x, cache


def backward(layers, cache, acts, gy):
    """Gradients [(dW, db)] and d/dx of the first layer's input."""
    grads = []
    for (W, b), (x, z, y), act in reversed(list(zip(layers, cache, acts))):
        gz = gy * (z > 0) if act == "relu" else gy * (1 - y ** 2) if act == "tanh" else gy
        grads.append((x.T @ gz, gz.sum(0)))
        gy = gz @ W.T
    return grads[::-1], gy


class TorchAdam:
    def __init__(self, lr, eps=1e-8, b1=0.9, b2=0.999):
        self.lr, self.eps, self.b1, self.b2, self.t, self.m, self.v = lr, eps, b1, b2, 0, {}, {}

    def step(self, params, grads):
        self.t += 1
        out = []
        for k, (p, g) in enumerate(zip(params, grads)):
            m = self.m[k] = self.b1 * self.m.get(k, 0) + (1 - self.b1) * g
            v = self.v[k] = self.b2 * self.v.get(k, 0) + (1 - self.b2) * g * g
            denom = np.sqrt(v) / np.sqrt(1 - self.b2 ** self.t) + self.eps
            out.append(p - self.lr / (1 - self.b1 ** self.t) * m / denom)
        return out


def pairs(flat):
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


def flat(layers):
    return [a for wb in layers for a in wb]


class Reference:
    """One agent's networks in float64; ``kind``: 'td3', 'ours' or 'original'."""

    def __init__(self, agent, kind):
        self.kind, self.c = kind, agent.config
        w = lambda m: pairs([np.float64(x) for x in m.get_weights()])  # noqa: E731
        self.actor, self.actor_t = w(agent.actor), w(agent.actor_target)
        self.critic, self.critic_t = w(agent.critic), w(agent.critic_target)
        self.aopt, self.copt = TorchAdam(self.c.actor_lr), TorchAdam(self.c.critic_lr)
        self.it = 0

    def pi(self, actor, s):
        y, cache = forward(actor, s, ["relu", "relu", "tanh"])
        return MAX_ACTION * y, cache

    def q(self, critic, s, a, head=0):
        """Q of one head ('td3': head 0 = l1..l3, head 1 = l4..l6); (q, backward(gq) -> (grads, ga))."""
        if self.kind == "original":
            h1, c1 = forward(critic[:1], s, ["relu"])
            q, c2 = forward(critic[1:], np.concatenate([h1, a], 1), ["relu", None])

            def back(gq):
                g2, gx = backward(critic[1:], c2, ["relu", None], gq)
                g1, _ = backward(critic[:1], c1, ["relu"], gx[:, :h1.shape[1]])
                return g1 + g2, gx[:, h1.shape[1]:]
            return q, back
        layers = critic[3 * head:3 * head + 3]
        q, c = forward(layers, np.concatenate([s, a], 1), ["relu", "relu", None])

        def back(gq):
            g, gx = backward(layers, c, ["relu", "relu", None], gq)
            return g, gx[:, S:]
        return q, back

    def target_Q(self, s2, r, nd, noise):
        a2, _ = self.pi(self.actor_t, s2)
        if self.kind == "td3":
            n = np.clip(noise * self.c.policy_noise * MAX_ACTION, -self.c.noise_clip * MAX_ACTION,
                        self.c.noise_clip * MAX_ACTION)
            a2 = np.clip(a2 + n, -MAX_ACTION, MAX_ACTION)
            return r + nd * self.c.discount * np.minimum(self.q(self.critic_t, s2, a2, 0)[0],
                                                         self.q(self.critic_t, s2, a2, 1)[0])
        return r + nd * self.c.discount * self.q(self.critic_t, s2, a2)[0]

    def step(self, s, a, s2, r, nd, noise):
        self.it += 1
        y = self.target_Q(s2, r, nd, noise)
        heads = (0, 1) if self.kind == "td3" else (0,)
        grads = [np.zeros_like(p) for p in flat(self.critic)]
        critic_loss = 0.0
        for h in heads:
            q, back = self.q(self.critic, s, a, h)
            critic_loss += np.mean((q - y) ** 2)
            g, _ = back(2 * (q - y) / q.size)
            off = 6 * h
            for k, gk in enumerate(flat(g)):
                grads[off + k] += gk
        if self.c.critic_weight_decay:  # L2 penalty wd/2 * |W|^2 on the kernels
            for k in range(0, len(grads), 2):
                grads[k] += self.c.critic_weight_decay * flat(self.critic)[k]
        self.critic = pairs(self.copt.step(flat(self.critic), grads))
        actor_loss = None
        if self.it % self.c.policy_freq == 0:
            pi, ca = self.pi(self.actor, s)
            q, back = self.q(self.critic, s, pi, 0)
            actor_loss = -np.mean(q)
            _, ga = back(np.full_like(q, -1.0 / q.size))
            g, _ = backward(self.actor, ca, ["relu", "relu", "tanh"], ga * MAX_ACTION)
            self.actor = pairs(self.aopt.step(flat(self.actor), flat(g)))
            tau = self.c.tau
            self.critic_t = [(tau * W + (1 - tau) * Wt, tau * b + (1 - tau) * bt)
                             for (W, b), (Wt, bt) in zip(self.critic, self.critic_t)]
            self.actor_t = [(tau * W + (1 - tau) * Wt, tau * b + (1 - tau) * bt)
                            for (W, b), (Wt, bt) in zip(self.actor, self.actor_t)]
        return y, critic_loss, actor_loss


def make(kind, compiled):
    if kind == "td3":
        cfg = TD3Config(hidden=(16, 12), batch_size=B)
        return TD3(S, A, MAX_ACTION, cfg, seed=3, compiled=compiled)
    cfg = dataclasses.replace(PRESETS[kind], hidden=(16, 12), batch_size=B)
    return DDPG(S, A, MAX_ACTION, cfg, seed=3, compiled=compiled, variant=kind)


def batches(n, seed=0):
    rs = np.random.default_rng(seed)
    for _ in range(n):
        yield (rs.standard_normal((B, S)).astype(np.float32),
               rs.uniform(-MAX_ACTION, MAX_ACTION, (B, A)).astype(np.float32),
               rs.standard_normal((B, S)).astype(np.float32),
               rs.standard_normal((B, 1)).astype(np.float32),
               (rs.random((B, 1)) > 0.2).astype(np.float32),
               # large enough that the noise clip (0.5 * max_action) is hit
               (rs.standard_normal((B, A)) * 2).astype(np.float32))


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "eager"])
@pytest.mark.parametrize("kind", ["td3", "ours", "original"])
def test_update_matches_numpy_reference(kind, compiled):
    agent = make(kind, compiled)
    ref = Reference(agent, kind)
    if kind == "original":
        assert len(agent.critic.losses) == 3            # the weight decay is in model.losses
    last_actor_loss = np.nan
    for k, batch in enumerate(batches(4)):
        s, a, s2, r, nd, noise = batch
        y_ref, closs_ref, aloss_ref = ref.step(*[np.float64(x) for x in batch])
        y = agent.compute_target_Q(tf.constant(s2), tf.constant(r), tf.constant(nd), tf.constant(noise))
        np.testing.assert_allclose(y.numpy(), y_ref, rtol=1e-5, atol=1e-5)
        closs, aloss = agent.train_fn(*[tf.constant(x) for x in batch])
        np.testing.assert_allclose(float(closs), closs_ref, rtol=1e-4)
        if aloss_ref is not None:
            last_actor_loss = aloss_ref
        # TD3 returns the last policy update's loss on critic-only iterations (NaN before the first)
        np.testing.assert_allclose(float(aloss), last_actor_loss, rtol=1e-4)
    assert int(agent.total_it.numpy()) == 4
    for net, ref_layers in ((agent.actor, ref.actor), (agent.critic, ref.critic),
                            (agent.actor_target, ref.actor_t), (agent.critic_target, ref.critic_t)):
        for got, want in zip(net.get_weights(), flat(ref_layers)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=net.name)
    # the targets moved (tau > 0) but not all the way
    assert not np.allclose(agent.actor_target.get_weights()[0], agent.actor.get_weights()[0])


def test_policy_delay_is_inside_one_trace():
    agent = make("td3", True)
    first = [v.numpy().copy() for v in agent.actor.trainable_variables]
    gen = batches(2)
    agent.train_fn(*[tf.constant(x) for x in next(gen)])
    assert all(np.array_equal(a, v.numpy()) for a, v in zip(first, agent.actor.trainable_variables))
    agent.train_fn(*[tf.constant(x) for x in next(gen)])
    assert not np.array_equal(first[0], agent.actor.trainable_variables[0].numpy())
    assert agent.train_fn.graph is not None      # one ConcreteFunction: the branch is a cond in its graph
    assert "cond" in str(agent.train_fn.graph)


def test_train_samples_from_a_vector_action_replay_buffer():
    agent = make("td3", True)
    rb = ReplayBuffer(50, obs_shape=S, action_shape=A, action_dtype=np.float32, seed=0)
    for s, a, s2, r, nd, _ in batches(2):
        rb.add_batch(s, a, r[:, 0], s2, 1 - nd[:, 0])
    closs, aloss = agent.train(rb)
    assert np.isfinite(float(closs)) and np.isnan(float(aloss))


def test_train_and_act_run_the_one_trace_from_numpy():
    """The loop hands NumPy arrays to the Functions (their fast path): one trace each, the
    concrete functions' (in the fused tier from the first call), whatever the state's dtype."""
    agent = make("td3", True)
    rb = ReplayBuffer(50, obs_shape=S, action_shape=A, action_dtype=np.float32, seed=0)
    for s, a, s2, r, nd, _ in batches(2):
        rb.add_batch(s, a, r[:, 0], s2, 1 - nd[:, 0])
    for _ in range(3):
        agent.train(rb)
    state = np.random.default_rng(0).standard_normal(S)          # float64, as gymnasium returns it
    action = agent.select_action(state)
    assert action.shape == (A,) and action.dtype == np.float32
    np.testing.assert_allclose(action, agent.act_fn(tf.constant(state[None].astype(np.float32))).numpy()[0])
    assert agent._train_call.trace_count == 1 and agent._act_call.trace_count == 1
    assert agent.train_fn.hot and agent.train_fn.backend == "python+fused"
    assert int(agent.total_it.numpy()) == 3


# -- the trainer on Pendulum-v1 ---------------------------------------------------------------------------

SMALL = TD3Config(hidden=(32, 32), batch_size=32)


def _cfg(steps):
    return TrainConfig(env="Pendulum-v1", steps=steps, start_steps=100, eval_freq=200, eval_episodes=1, seed=0)


def _weights(agent):
    return [v.numpy() for v in agent.actor.weights + agent.critic.weights + agent.critic_target.weights]


def test_resumed_run_equals_uninterrupted(tmp_path):
    quiet = dict(progress=False, out=lambda *a: None, agent_config=SMALL)
    full, agent_full = train(_cfg(800), ckpt_dir=str(tmp_path / "full"), logdir=str(tmp_path / "full_run"),
                             **quiet)
    # a run stopped (as by a kill) after its checkpoint at step 400, then resumed to 800
    first, _ = train(_cfg(400), ckpt_dir=str(tmp_path / "cut"), **quiet)
    rest, agent_rest = train(_cfg(800), ckpt_dir=str(tmp_path / "cut"), resume=True, **quiet)
    assert first.env_steps == 400 and rest.env_steps == 800 and rest.learn_steps == 400
    assert first.episode_returns + rest.episode_returns == full.episode_returns
    assert rest.evaluations == full.evaluations
    assert len(full.evaluations) == 5            # steps 0, 200, ..., 800
    for a, b in zip(_weights(agent_full), _weights(agent_rest)):
        np.testing.assert_array_equal(a, b)
    ev = np.load(tmp_path / "full_run" / "evaluations.npz")
    assert ev["timesteps"].tolist() == [0, 200, 400, 600, 800] and ev["results"].shape == (5, 1)
    np.testing.assert_allclose(ev["results"].mean(1), [m for _, m in full.evaluations])
    # a different seed gives different returns (the seed reaches the env, the noise and the nets)
    other, _ = train(dataclasses.replace(_cfg(300), seed=1), **quiet)
    assert other.episode_returns[0] != full.episode_returns[0]


def test_replay_buffer_save_load_round_trip(tmp_path):
    rb = ReplayBuffer(7, obs_shape=3, action_shape=2, action_dtype=np.float32, seed=5)
    for i in range(10):                           # wraps around
        rb.add(np.full(3, i), np.full(2, -i), i, np.full(3, i + 1), i % 2)
    rb.sample(4)                                  # advance the generator
    rb.save(str(tmp_path / "rb.npz"))
    back = ReplayBuffer(7, obs_shape=3, action_shape=2, action_dtype=np.float32, seed=0).load(str(tmp_path / "rb.npz"))
    assert len(back) == 7 and back._pos == rb._pos
    for k in ("states", "actions", "rewards", "next_states", "dones"):
        np.testing.assert_array_equal(getattr(back, k), getattr(rb, k))
    np.testing.assert_array_equal(back.sample_indices(5), rb.sample_indices(5))
    with pytest.raises(ValueError, match="action_shape"):
        ReplayBuffer(7, obs_shape=3, action_shape=3, action_dtype=np.float32).load(str(tmp_path / "rb.npz"))
    with pytest.raises(ValueError, match="actions must have shape"):
        rb.add_batch(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(2), np.zeros((2, 3)), np.zeros(2))


def test_eager_agent_builds_its_optimizers_and_restores_into_them(tmp_path):
    # eagerly the agent builds its optimizers' slots at construction (loading their
    # update loop outside the timed steps); a checkpoint then restores into those
    # slots, and the restored agent's next update is the saved agent's, bit for bit
    agent = make("td3", False)
    n_slots = len(agent.critic_optimizer.variables)
    assert n_slots > 1                                  # the slots exist before any step
    gen = batches(4)
    for _ in range(3):
        agent.train_fn(*[tf.constant(x) for x in next(gen)])
    assert len(agent.critic_optimizer.variables) == n_slots   # no slot made twice
    path = tf.train.Checkpoint(agent=agent).save(str(tmp_path / "ckpt"))
    other = make("td3", False)
    tf.train.Checkpoint(agent=other).restore(path).assert_consumed()
    last = [tf.constant(x) for x in next(gen)]
    for a in (agent, other):
        a.train_fn(*last)
    for net in ("actor", "critic", "critic_target"):
        for x, y in zip(getattr(agent, net).weights, getattr(other, net).weights):
            np.testing.assert_array_equal(x.numpy(), y.numpy())
    for x, y in zip(agent.critic_optimizer.variables, other.critic_optimizer.variables):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
