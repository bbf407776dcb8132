"""Deep Q-learning with experience replay and a target network
(Mnih et al. 2015; Double DQN: van Hasselt et al. 2016), written the way a
tapeflow user writes it: Keras layers, a GradientTape, an optimizer, and
``tapeflow.function`` around the update and the greedy action.

Notation follows the paper: the online network Q(s, a; theta), the target
network Q(s, a; theta^-), the TD target

    y = r + gamma * (1 - done) * max_a' Q(s', a'; theta^-)              (DQN)
    y = r + gamma * (1 - done) * Q(s', argmax_a' Q(s', a'; theta); theta^-)  (Double DQN)

and the loss L(theta) = E[ loss(y - Q(s, a; theta)) ] over a replay minibatch.
"""
from __future__ import annotations

import dataclasses

import numpy as np

import tapeflow as tf


@dataclasses.dataclass
class DQNConfig:
    """Hyper-parameters (Python values only; arrays live in the agent)."""

    hidden: tuple = (150, 100)
    learning_rate: float = 1e-3
    gamma: float = 0.9
    batch_size: int = 200
    buffer_size: int = 1000
    target_sync_every: int = 500       # env steps (book) between theta^- <- theta
    epsilon_start: float = 0.3
    epsilon_end: float = 0.3
    epsilon_decay_steps: int = 1
    double_dqn: bool = False
    loss: str = "mse"                  # "mse" (book) or "huber"
    pit_is_terminal: bool = False      # book: only the goal ends the TD bootstrap
    n_envs: int = 1                    # >1: boards stepped in lock step (GridworldVec)
    episodes: int = 5000
    max_moves: int = 50
    updates_per_step: int = 1
    learning_starts: int = 0           # transitions stored before the first update
    train_steps: int | None = None     # vectorised runs: env steps (of all boards) to train for
    mode: str = "random"
    noise: float = 0.01
    init: str = "torch_linear"         # PyTorch's default Linear init, as the book's network

    def epsilon(self, step):
        """Linear decay from epsilon_start to epsilon_end over epsilon_decay_steps."""
        frac = min(1.0, step / max(1, self.epsilon_decay_steps))
        return self.epsilon_start + frac * (self.epsilon_end - self.epsilon_start)


PRESETS = {
    # Deep Reinforcement Learning in Action, listing 3.7, exactly.
    "book": DQNConfig(),
    # tapeflow's default: the best win rate per second we found (see README).
    "default": DQNConfig(
        hidden=(150, 100), learning_rate=1e-3, gamma=0.9, batch_size=256, buffer_size=100_000,
        target_sync_every=2000, epsilon_start=1.0, epsilon_end=0.05, epsilon_decay_steps=150_000,
        double_dqn=True, loss="huber", pit_is_terminal=True, n_envs=32, max_moves=50,
        updates_per_step=1, learning_starts=2000, train_steps=500_000),
}


def q_network(hidden, n_actions, seed, init="torch_linear"):
    """Q(s, .): 64 -> hidden... -> n_actions (ReLU)."""
    layers = []
    for k, units in enumerate(hidden):
        layers.append(tf.keras.layers.Dense(units, activation="relu", name=f"L{k + 1}",
                                            kernel_initializer=_init(init, seed + k),
                                            bias_initializer=_init(init, seed + 100 + k, bias=True)))
    layers.append(tf.keras.layers.Dense(n_actions, name=f"L{len(hidden) + 1}",
                                        kernel_initializer=_init(init, seed + 50),
                                        bias_initializer=_init(init, seed + 150, bias=True)))
    return tf.keras.Sequential(layers, name="q")


def _init(kind, seed, bias=False):
    """A seeded initializer; ``torch_linear`` is PyTorch's nn.Linear default
    (kernel and bias U(+-1/sqrt(fan_in))), the book network's initialization."""
    from tapeflow.keras import initializers as I
    if kind == "torch_linear":
        return I.TorchLinear(seed=seed)
    return I.Zeros() if bias else I.get({"class_name": kind, "config": {"seed": seed}})


class DQNAgent(tf.Module):
    """Online network, target network, optimizer; ``update`` is one compiled call."""

    def __init__(self, config: DQNConfig, obs_dim=64, n_actions=4, seed=0, compiled=True):
        super().__init__(name="dqn")
        self.config = config
        self.n_actions = n_actions
        self.q = q_network(config.hidden, n_actions, seed, config.init)
        self.q_target = tf.keras.models.clone_model(self.q)
        dummy = tf.zeros((1, obs_dim))
        self.q(dummy)
        self.q_target(dummy)
        self.q_target.set_weights(self.q.get_weights())
        self.optimizer = tf.keras.optimizers.Adam(learning_rate=config.learning_rate)
        self.loss_fn = (tf.keras.losses.Huber() if config.loss == "huber" else tf.keras.losses.MeanSquaredError())
        self.compiled = compiled
        self.update = tf.function(self.update_step) if compiled else self.update_step
        # one trace for every batch size (acting on 1 or 32 boards, evaluating 1000)
        self.q_values = tf.function(self.q, input_signature=[tf.TensorSpec((None, obs_dim), tf.float32)]) \
            if compiled else self.q
        self.sync_target = tf.function(self._sync) if compiled else self._sync
        self.rng = np.random.default_rng(seed)

    def td_target(self, r, s2, done):
        """y = r + gamma (1 - done) Q(s', a*; theta^-), a* by the target (DQN) or online (Double DQN) net."""
        q_next = self.q_target(s2)
        if self.config.double_dqn:
            a_star = tf.argmax(self.q(s2), axis=1)
            q_next_a = tf.gather(q_next, a_star, batch_dims=1)
        else:
            q_next_a = tf.reduce_max(q_next, axis=1)
        return tf.stop_gradient(r + self.config.gamma * (1.0 - done) * q_next_a)

    def update_step(self, s, a, r, s2, done):
        """One gradient step on a minibatch. s, s2: (B, 64) f32; a: (B,) int; r, done: (B,) f32.
        Returns the TD loss (scalar)."""
        y = self.td_target(r, s2, done)
        with tf.GradientTape() as tape:
            q_sa = tf.gather(self.q(s), a, batch_dims=1)  # Q(s, a; theta), (B,)
            loss = self.loss_fn(y, q_sa)
        grads = tape.gradient(loss, self.q.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.q.trainable_variables))
        return loss

    def _sync(self):
        for t, s in zip(self.q_target.trainable_variables, self.q.trainable_variables):
            t.assign(s)

    def act(self, obs, epsilon):
        """Epsilon-greedy actions for a batch of observations (k, 64) -> (k,) int64."""
        q = self.q_values(tf.constant(obs)).numpy()
        greedy = q.argmax(axis=1)
        if epsilon <= 0:
            return greedy
        explore = self.rng.random(len(greedy)) < epsilon
        return np.where(explore, self.rng.integers(0, self.n_actions, len(greedy)), greedy)

    def greedy(self, obs):
        """Greedy action(s) for (64,) or (k, 64) observations."""
        o = np.asarray(obs, np.float32)
        single = o.ndim == 1
        q = self.q_values(tf.constant(o.reshape(-1, o.shape[-1]))).numpy()
        a = q.argmax(axis=1)
        return int(a[0]) if single else a
