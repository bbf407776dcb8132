"""Twin Delayed Deep Deterministic policy gradient (TD3; Fujimoto, van Hoof
and Meger, "Addressing Function Approximation Error in Actor-Critic Methods",
ICML 2018), written the way a TF2 eager port of the authors' PyTorch code
reads: Keras-subclassed ``Actor`` and ``Critic``, a ``GradientTape`` update
compiled with ``tapeflow.function``, soft target updates by ``assign``.

The names are the paper's (and its code's): ``target_Q``, ``not_done``,
``policy_noise``, ``noise_clip``, ``policy_freq``, ``total_it``, ``tau``,
``discount``. One call of ``train`` is Algorithm 1's inner loop body:

    noise ~ clip(N(0, policy_noise), -noise_clip, noise_clip)            (target policy smoothing)
    next_action = clip(actor_target(s') + noise, -max_action, max_action)
    target_Q = r + not_done * discount * min(Q1'(s', next_action), Q2'(s', next_action))   (clipped double Q)
    critic_loss = MSE(Q1(s, a), target_Q) + MSE(Q2(s, a), target_Q)
    every policy_freq iterations (delayed policy updates):
        actor_loss = -mean(Q1(s, actor(s)))
        theta' <- tau theta + (1 - tau) theta'   (actor and both critics)

The whole body -- the delayed branch included -- is ONE compiled function:
the delay is a ``tapeflow.cond`` on the ``total_it`` Variable, so the graph
is traced once and the branch is taken inside it.
"""
from __future__ import annotations

import dataclasses

import numpy as np

import tapeflow as tf
from .draws import BlockDraws


@dataclasses.dataclass
class TD3Config:
    """Hyper-parameters of the authors' TD3.py / main.py (noise in units of max_action)."""

    hidden: tuple = (256, 256)
    discount: float = 0.99
    tau: float = 0.005
    policy_noise: float = 0.2          # x max_action: std of the target policy smoothing noise
    noise_clip: float = 0.5            # x max_action
    policy_freq: int = 2               # critic updates per actor / target update
    actor_lr: float = 3e-4
    critic_lr: float = 3e-4
    critic_weight_decay: float = 0.0   # only the original DDPG uses it
    batch_size: int = 256


def dense(units, seed, activation=None, name=None, regularizer=None):
    """A Dense layer initialised as PyTorch's nn.Linear (U(+-1/sqrt(fan_in)) kernel and
    bias), the initialisation the authors' networks had."""
    from tapeflow.keras import initializers as I
    return tf.keras.layers.Dense(units, activation=activation, name=name, kernel_regularizer=regularizer,
                                 kernel_initializer=I.TorchLinear(seed=seed),
                                 bias_initializer=I.TorchLinear(seed=seed + 1))


class Actor(tf.keras.Model):
    """pi(s) = max_action * tanh(l3(relu(l2(relu(l1(s))))))."""

    def __init__(self, action_dim, max_action, hidden=(256, 256), seed=0, name="actor"):
        super().__init__(name=name)
        self.l1 = dense(hidden[0], seed, "relu", "l1")
        self.l2 = dense(hidden[1], seed + 2, "relu", "l2")
        self.l3 = dense(action_dim, seed + 4, "tanh", "l3")
        self.max_action = float(max_action)

    def call(self, state):
        return self.max_action * self.l3(self.l2(self.l1(state)))


class Critic(tf.keras.Model):
    """The twin critics Q1, Q2 on concat(s, a), each l(1..3) / l(4..6) of widths hidden-hidden-1."""

    def __init__(self, hidden=(256, 256), seed=0, name="critic"):
        super().__init__(name=name)
        self.l1 = dense(hidden[0], seed, "relu", "l1")
        self.l2 = dense(hidden[1], seed + 2, "relu", "l2")
        self.l3 = dense(1, seed + 4, None, "l3")
        self.l4 = dense(hidden[0], seed + 6, "relu", "l4")
        self.l5 = dense(hidden[1], seed + 8, "relu", "l5")
        self.l6 = dense(1, seed + 10, None, "l6")

    def call(self, state, action):
        sa = tf.concat([state, action], 1)
        return self.l3(self.l2(self.l1(sa))), self.l6(self.l5(self.l4(sa)))

    def Q1(self, state, action):
        sa = tf.concat([state, action], 1)
        return self.l3(self.l2(self.l1(sa)))


def adam(learning_rate):
    """torch.optim.Adam as the authors used it: epsilon 1e-8 added to the bias-corrected
    sqrt(v) (Keras adds its 1e-7 before the correction)."""
    return tf.keras.optimizers.Adam(learning_rate=learning_rate, epsilon=1e-8, epsilon_mode="torch")


def standard_normal_f32(rng, size):
    """N(0, 1) float32 draws: the target policy noise before its scaling (a BlockDraws draw)."""
    return rng.standard_normal(size, dtype=np.float32)


#: training steps of target policy noise drawn per Generator call (16 x 6 KiB at batch 256, 6 actions)
NOISE_BLOCK = 16


def mse(a, b):
    return tf.reduce_mean(tf.square(a - b))


class ActorCriticAgent(tf.Module):
    """What TD3 and both DDPGs share: the networks and their targets, the two
    Adam optimizers, ``select_action``, and ``train(replay_buffer)`` which
    samples a minibatch and calls the compiled ``train_step``.

    Subclasses define ``make_critic(seed)`` and ``train_step(state, action,
    next_state, reward, not_done, noise)`` returning ``(critic_loss, actor_loss)``.
    """

    algo = "?"

    def __init__(self, state_dim, action_dim, max_action, config, seed=0, compiled=True):
        super().__init__(name=self.algo)
        c = self.config = config
        self.state_dim, self.action_dim, self.max_action = int(state_dim), int(action_dim), float(max_action)
        self.discount, self.tau = c.discount, c.tau
        self.policy_noise, self.noise_clip = c.policy_noise * self.max_action, c.noise_clip * self.max_action
        self.policy_freq = c.policy_freq
        self.actor = Actor(action_dim, max_action, c.hidden, seed=100 * seed)
        self.actor_target = Actor(action_dim, max_action, c.hidden, seed=100 * seed, name="actor_target")
        self.actor_optimizer = adam(c.actor_lr)
        self.critic = self.make_critic(100 * seed + 50)
        self.critic_target = self.make_critic(100 * seed + 50, name="critic_target")
        self.critic_optimizer = adam(c.critic_lr)
        s, a = tf.zeros((1, state_dim)), tf.zeros((1, action_dim))
        for net in (self.actor, self.actor_target):
            net(s)
        for net in (self.critic, self.critic_target):
            net(s, a)
        self.actor_target.set_weights(self.actor.get_weights())
        self.critic_target.set_weights(self.critic.get_weights())
        # iterations of train() so far: drives the policy delay inside the compiled step
        self.total_it = tf.Variable(np.int64(0), trainable=False, name="total_it")
        # the actor loss at the last policy update (returned on the critic-only iterations)
        self.last_actor_loss = tf.Variable(np.float32(np.nan), trainable=False, name="last_actor_loss")
        # N(0, 1) draws for the target policy smoothing (scaled and clipped inside train_step),
        # (batch_size, action_dim) per iteration, the same values as one standard_normal call per
        # iteration but drawn NOISE_BLOCK iterations at a time (see draws.py); the trainer
        # checkpoints rng.bit_generator.state
        self.rng = BlockDraws(np.random.default_rng([seed, 2]), standard_normal_f32,
                              (c.batch_size, self.action_dim), NOISE_BLOCK)
        self.compiled = compiled
        self.train_fn, self.act_fn = self.train_step, self.actor
        if compiled:
            self._compile()
        else:
            # Eagerly, build the optimizers' slots here (same variable order as
            # apply_gradients): build also loads their fused update loop, ~0.5 s that the
            # first learning step paid otherwise. (Traced, the slots come with the trace.)
            self.actor_optimizer.build(self.actor.trainable_variables)
            self.critic_optimizer.build(self.critic.trainable_variables)

    def make_critic(self, seed, name="critic"):
        raise NotImplementedError

    def _compile(self):
        """Trace ``train_step`` and the actor now, in the fused (second) tier from their first call.

        Why: a resumed run must compute bit for bit what the uninterrupted run does,
        and the fused tier's native loops round differently from the first tier
        (last-bit differences that grow over thousands of updates). A function tiers
        up after a number of calls counted per process, which a resumed process
        restarts; starting both functions in the fused tier makes every process
        run the same code: ``jit_compile=True``, as a TF port asks XLA to compile the step
        at once (``TAPEFLOW_FUSE_AFTER``, when set, still decides)."""
        S, A, B = self.state_dim, self.action_dim, self.config.batch_size
        spec = [tf.TensorSpec((B, S), tf.float32), tf.TensorSpec((B, A), tf.float32),
                tf.TensorSpec((B, S), tf.float32), tf.TensorSpec((B, 1), tf.float32),
                tf.TensorSpec((B, 1), tf.float32), tf.TensorSpec((B, A), tf.float32)]
        # The loop calls the Functions (self._train_call, self._act_call), not the concrete
        # functions: a Function called with the trace's shapes and dtypes as NumPy arrays
        # takes its fast path straight to the compiled code, where a ConcreteFunction call
        # binds its Python signature first (~30 us per call, twice per env step). The
        # input_signature pins the one trace: another dtype or shape is a TypeError, never
        # a second trace (which would start outside the fused tier, see above).
        self._train_call = tf.function(self.train_step, input_signature=spec, jit_compile=True)
        self.train_fn = self._train_call.get_concrete_function()
        self._act_call = tf.function(self.actor, input_signature=[tf.TensorSpec((1, S), tf.float32)],
                                     jit_compile=True)
        self.act_fn = self._act_call.get_concrete_function()

    def select_action(self, state):
        """The deterministic policy pi(s) for one observation -> (action_dim,) float32."""
        s = np.asarray(state, np.float32).reshape(1, -1)
        if self.compiled:
            return self._act_call(s).numpy().reshape(-1)
        return self.act_fn(tf.constant(s)).numpy().reshape(-1)

    def train(self, replay_buffer):
        """One iteration: a uniform minibatch of ``config.batch_size`` (with replacement,
        as the authors' utils.ReplayBuffer) and one call of the compiled ``train_step``.
        Returns ``(critic_loss, actor_loss)`` as tensors."""
        b = replay_buffer.sample(self.config.batch_size, replace=True)
        noise = self.rng()
        batch = (b.states, b.actions, b.next_states, b.rewards[:, None], 1.0 - b.dones[:, None], noise)
        if self.compiled:
            return self._train_call(*batch)
        return self.train_fn(*[tf.constant(x) for x in batch])

    def update_critic(self, state, action, target_Q):
        with tf.GradientTape() as tape:
            current_Q = self.critic(state, action)
            if isinstance(current_Q, tuple):
                critic_loss = mse(current_Q[0], target_Q) + mse(current_Q[1], target_Q)
            else:
                critic_loss = mse(current_Q, target_Q)
            regularization = self.critic.losses
            if regularization:  # the original DDPG's L2 weight decay on the critic's kernels
                critic_loss_total = critic_loss + tf.add_n(regularization)
            else:
                critic_loss_total = critic_loss
        grads = tape.gradient(critic_loss_total, self.critic.trainable_variables)
        self.critic_optimizer.apply_gradients(zip(grads, self.critic.trainable_variables))
        return critic_loss

    def update_actor_and_targets(self, state, Q):
        """Deterministic policy gradient on -mean(Q(s, actor(s))), then the soft target updates."""
        with tf.GradientTape() as tape:
            actor_loss = -tf.reduce_mean(Q(state, self.actor(state)))
        grads = tape.gradient(actor_loss, self.actor.trainable_variables)
        self.actor_optimizer.apply_gradients(zip(grads, self.actor.trainable_variables))
        tf.soft_update(self.critic_target, self.critic, self.tau)
        tf.soft_update(self.actor_target, self.actor, self.tau)
        self.last_actor_loss.assign(actor_loss)
        return actor_loss


class TD3(ActorCriticAgent):
    """TD3 (TD3.py of the authors' code). ``train_fn`` is the compiled ``train_step``."""

    algo = "td3"

    def __init__(self, state_dim, action_dim, max_action, config: TD3Config | None = None, seed=0, compiled=True):
        super().__init__(state_dim, action_dim, max_action, config or TD3Config(), seed, compiled)

    def make_critic(self, seed, name="critic"):
        return Critic(self.config.hidden, seed, name=name)

    def compute_target_Q(self, next_state, reward, not_done, noise):
        """target_Q = r + not_done * discount * min(Q1', Q2')(s', clip(pi'(s') + clip(noise)))."""
        # Select action according to policy and add clipped noise
        noise = tf.clip_by_value(noise * self.policy_noise, -self.noise_clip, self.noise_clip)
        next_action = tf.clip_by_value(self.actor_target(next_state) + noise, -self.max_action, self.max_action)
        # Compute the target Q value
        target_Q1, target_Q2 = self.critic_target(next_state, next_action)
        target_Q = tf.minimum(target_Q1, target_Q2)
        return tf.stop_gradient(reward + not_done * self.discount * target_Q)

    def train_step(self, state, action, next_state, reward, not_done, noise):
        self.total_it.assign_add(1)
        target_Q = self.compute_target_Q(next_state, reward, not_done, noise)
        critic_loss = self.update_critic(state, action, target_Q)
        # Delayed policy updates
        actor_loss = tf.cond(self.total_it % self.policy_freq == 0,
                             lambda: self.update_actor_and_targets(state, self.critic.Q1),
                             lambda: self.last_actor_loss.read_value())
        return critic_loss, actor_loss
