"""The training loop shared by tapeflow's RL agents, and its parts.

Parts every agent's loop uses (the Gridworld DQN's too): ``summary_writer``
(TensorBoard, or None), ``checkpointing`` (``Checkpoint`` + ``CheckpointManager``),
``progress_bar`` (tqdm, or None), ``StopOnSigint`` (the first Ctrl-C asks the
loop to stop after saving; a second one kills at once) and ``Counters``
(progress Variables saved with the checkpoint).

``train`` is the off-policy continuous-control loop of the TD3 authors'
main.py: ``start_steps`` uniform-random actions, then the deterministic
policy plus N(0, expl_noise * max_action) noise, one ``agent.train`` per
env step, an evaluation of the deterministic policy every ``eval_freq``
steps over ``eval_episodes`` episodes on a separate env seeded seed + 100
(and one before training), and time-limit truncation NOT treated as
terminal (only ``terminated`` ends the bootstrap).

Seeding (the same seed on the same machine gives identical returns): the
network initialisations derive from ``seed``; the env is reset with
``seed`` once and its action space (the random start phase) seeded with
``seed``; exploration noise, minibatch indices and the target policy noise
each have their own NumPy generator seeded from ``seed`` (the two noises are
drawn a block of steps per call, the values of one call per step: draws.py).

Per env step the loop does only what the algorithm needs: the action (the
compiled actor called with the env's NumPy observation, no Tensor
conversion), env.step, a replay add, and one ``agent.train`` (a minibatch
gathered from the NumPy buffer, passed as NumPy arrays to the compiled
update). Scalars (``charts/SPS``, the losses) are written and the progress
bar is refreshed every ``log_every`` env steps (1000; CleanRL writes its
losses every 100 steps), episode returns at each episode's end.

Checkpoints hold the agent (networks, targets, optimizers, ``total_it``),
the step counters, and beside each checkpoint the replay buffer
(``ckpt-N.replay.npz``) and the generators' states and evaluations so far
(``ckpt-N.trainer.json``). They are taken at episode boundaries (the
env's physical state is not saveable in general), so ``--resume`` after a
kill continues from the last one exactly as the uninterrupted run would;
Ctrl-C finishes the current episode, saves, and stops.
"""
from __future__ import annotations

import collections
import dataclasses
import json
import os
import signal
import time

import numpy as np

import tapeflow as tf
from .draws import BlockDraws
from .replay import ReplayBuffer


# -- parts shared with the Gridworld DQN -----------------------------------------------------------

def summary_writer(logdir):
    """A TensorBoard writer for ``logdir``, or None when logdir is empty."""
    if not logdir:
        return None
    from .. import summary
    return summary.create_file_writer(logdir)


def checkpointing(ckpt_dir, max_to_keep=3, **objects):
    """``(Checkpoint(**objects), CheckpointManager)`` in ``ckpt_dir``, or ``(None, None)``."""
    if not ckpt_dir:
        return None, None
    from .. import train as tftrain
    ckpt = tftrain.Checkpoint(**objects)
    return ckpt, tftrain.CheckpointManager(ckpt, ckpt_dir, max_to_keep=max_to_keep)


def progress_bar(total, unit, enabled, initial=0):
    """A tqdm bar (None when disabled)."""
    if not enabled:
        return None
    from ..util.extras import require
    tqdm = require("tqdm", "rl", "the progress bar (progress=True)").tqdm
    return tqdm(total=total, initial=initial, unit=unit, dynamic_ncols=True, mininterval=0.5)


class StopOnSigint:
    """``with StopOnSigint() as stop:`` -- the first Ctrl-C sets ``stop.requested``
    (the loop finishes its step, saves, and leaves); it also restores the previous
    handler, so a second Ctrl-C interrupts at once. Outside the main thread it
    does nothing (signals can only be handled there)."""

    def __init__(self):
        self.requested = False
        self._old = None

    def _on_sigint(self, signum, frame):
        self.requested = True
        signal.signal(signal.SIGINT, self._old)

    def __enter__(self):
        try:
            self._old = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._on_sigint)
        except ValueError:  # not in the main thread
            self._old = None
        return self

    def __exit__(self, *exc):
        if self._old is not None:
            try:
                signal.signal(signal.SIGINT, self._old)
            except ValueError:
                pass
        return False


class Counters(tf.Module):
    """Named int64 step counters saved with the checkpoint (``Counters("env_steps", "episodes")``)."""

    def __init__(self, *names):
        super().__init__(name="counters")
        for n in names:
            setattr(self, n, tf.Variable(np.int64(0), trainable=False, name=n))

    def get(self, name):
        return int(getattr(self, name).numpy())

    def set(self, **values):
        for k, v in values.items():
            getattr(self, k).assign(np.int64(v))


# -- environments ------------------------------------------------------------------------------------

def make_env(env_id, render_mode=None):
    """``gymnasium.make(env_id)``; a MuJoCo env without MuJoCo installed raises an
    ImportError that names the extra."""
    import gymnasium as gym
    if render_mode is not None:
        # MuJoCo renders offscreen through EGL without a display (set before its first render)
        os.environ.setdefault("MUJOCO_GL", "egl")
    try:
        return gym.make(env_id, render_mode=render_mode)
    except gym.error.DependencyNotInstalled as e:
        raise ImportError(f"{env_id} needs MuJoCo: pip install \"tapeflow[mujoco]\" ({e})") from None


def record_video(env, folder, episodes_per_eval):
    """Wrap an evaluation env in gymnasium's RecordVideo (first episode of each evaluation)."""
    try:
        import moviepy  # noqa: F401  (RecordVideo writes the mp4 with it)
    except ImportError:
        raise ImportError('--video needs moviepy: pip install "tapeflow[video]"') from None
    from gymnasium.wrappers import RecordVideo
    return RecordVideo(env, folder, episode_trigger=lambda ep: ep % episodes_per_eval == 0,
                       name_prefix="eval", disable_logger=True)


def evaluate(agent, env, seed, episodes=10):
    """The authors' eval_policy: ``episodes`` episodes of the deterministic policy
    on ``env``, reset with ``seed`` at the first one. Returns (returns, lengths)."""
    returns, lengths = np.zeros(episodes), np.zeros(episodes, np.int64)
    for k in range(episodes):
        state, _ = env.reset(seed=seed if k == 0 else None)
        done = False
        while not done:
            state, reward, terminated, truncated, _ = env.step(agent.select_action(state))
            returns[k] += reward
            lengths[k] += 1
            done = terminated or truncated
    return returns, lengths


# -- the off-policy loop ---------------------------------------------------------------------------------

@dataclasses.dataclass
class TrainConfig:
    """The loop's settings (the authors' main.py defaults)."""

    env: str = "HalfCheetah-v5"
    steps: int = 1_000_000              # env steps in all (random start phase included)
    start_steps: int = 25_000           # uniform-random actions before the policy acts
    expl_noise: float = 0.1             # x max_action: std of the Gaussian exploration noise
    eval_freq: int = 5_000
    eval_episodes: int = 10
    buffer_size: int = 1_000_000
    seed: int = 0
    log_every: int = 1_000              # env steps between scalar summaries
    ckpt_every: int | None = None       # env steps between checkpoints (default eval_freq)


@dataclasses.dataclass
class TrainResult:
    final_eval: float                   # mean return of the last evaluation
    evaluations: list                   # [(env step, mean return)]
    episode_returns: list               # training episodes' returns, in order (this process)
    env_steps: int
    episodes: int
    wall_s: float                       # this process's loop (evaluations included)
    learn_s: float                      # steps after the random start phase, evaluations excluded
    learn_steps: int
    interrupted: bool = False
    checkpoint: str | None = None

    def as_dict(self):
        return dataclasses.asdict(self)


def make_agent(algo, state_dim, action_dim, max_action, seed=0, compiled=True, variant="ours", config=None):
    """A ``TD3`` or ``DDPG`` (``variant`` ``"ours"`` or ``"original"``) agent."""
    if algo == "td3":
        from .td3 import TD3
        return TD3(state_dim, action_dim, max_action, config, seed=seed, compiled=compiled)
    if algo == "ddpg":
        from .ddpg import DDPG
        return DDPG(state_dim, action_dim, max_action, config, seed=seed, compiled=compiled, variant=variant)
    raise ValueError(f"unknown algorithm {algo!r}; use 'td3' or 'ddpg'")


def _gen_state(g):
    return g.bit_generator.state


def _set_gen_state(g, state):
    g.bit_generator.state = state


class _TrainerState:
    """The checkpoint's side files: replay buffer and generators (see the module doc)."""

    def __init__(self, manager):
        self.manager = manager

    @staticmethod
    def paths(ckpt_path):
        return f"{ckpt_path}.replay.npz", f"{ckpt_path}.trainer.json"

    def save(self, replay, meta):
        path = self.manager.save()
        rp, mp = self.paths(path)
        replay.save(rp)
        tmp = mp + ".tmp"
        with open(tmp, "w") as f:
            json.dump(meta, f)
        os.replace(tmp, mp)
        kept = {os.path.basename(p) for p in self.manager.checkpoints}
        d = self.manager.directory
        for n in os.listdir(d):
            for suffix in (".replay.npz", ".trainer.json"):
                if n.endswith(suffix) and n[:-len(suffix)] not in kept:
                    os.remove(os.path.join(d, n))
        return path

    def latest(self):
        """The newest checkpoint with both side files (a kill between the checkpoint and its
        side files leaves the one before usable)."""
        for path in reversed(self.manager.checkpoints):
            if all(os.path.exists(p) for p in self.paths(path)):
                return path
        return None


#: env steps of exploration noise drawn per Generator call
EXPL_BLOCK = 256


def train(cfg: TrainConfig, algo="td3", variant="ours", agent_config=None, logdir=None, ckpt_dir=None,
          resume=False, eager=False, progress=True, video=False, out=print, agent_factory=None):
    """Train ``algo`` on ``cfg.env``; returns ``(TrainResult, agent)``.

    ``agent_factory(state_dim, action_dim, max_action)``, when given, makes the agent
    instead (anything with ``select_action(state)``, ``train(replay_buffer)``, ``config``
    and ``rng``, whose ``bit_generator.state`` is checkpointed: a NumPy Generator or a
    ``BlockDraws``): benchmarks/td3_torch.py runs a PyTorch TD3 through this same loop."""
    env = make_env(cfg.env)
    eval_env = make_env(cfg.env, render_mode="rgb_array" if video else None)
    run_dir = logdir or ckpt_dir
    if video:
        eval_env = record_video(eval_env, os.path.join(run_dir or ".", "videos"), cfg.eval_episodes)
    state_dim = env.observation_space.shape[0]
    action_dim = env.action_space.shape[0]
    max_action = float(env.action_space.high[0])
    tf.random.set_seed(cfg.seed)
    agent = (agent_factory(state_dim, action_dim, max_action) if agent_factory is not None else
             make_agent(algo, state_dim, action_dim, max_action, cfg.seed, not eager, variant, agent_config))
    replay = ReplayBuffer(cfg.buffer_size, obs_shape=(state_dim,), action_shape=(action_dim,),
                          action_dtype=np.float32, seed=[cfg.seed, 1])
    # exploration_noise() is the next step's N(0, expl_noise * max_action) of action_dim values,
    # drawn EXPL_BLOCK steps at a time (the same values as a normal() call per step; draws.py)
    expl_std = max_action * cfg.expl_noise
    exploration_noise = BlockDraws(np.random.default_rng([cfg.seed, 0]),
                     lambda g, size: g.normal(0, expl_std, size=size), (action_dim,), EXPL_BLOCK)
    counters = Counters("t", "episode_num")
    ckpt, manager = checkpointing(ckpt_dir, max_to_keep=2, agent=agent, counters=counters)
    side = _TrainerState(manager) if manager is not None else None
    evaluations = []                                     # [(t, returns, lengths)]
    env.action_space.seed(cfg.seed)
    state, _ = env.reset(seed=cfg.seed)
    fresh_episode_pending = False
    if resume and side is not None and side.latest() is not None:
        path = side.latest()
        ckpt.restore(path)
        rp, mp = side.paths(path)
        replay.load(rp)
        with open(mp) as f:
            meta = json.load(f)
        _set_gen_state(exploration_noise, meta["rng"])
        _set_gen_state(agent.rng, meta["agent_rng"])
        _set_gen_state(env.unwrapped.np_random, meta["env_rng"])
        _set_gen_state(env.action_space.np_random, meta["action_space_rng"])
        evaluations = [(t, np.array(r), np.array(l)) for t, r, l in meta["evaluations"]]
        if not meta["at_episode_boundary"]:
            out(f"note: {path} was saved mid-episode (the end of a --steps run); the resumed run starts a "
                "new episode there, so it differs from one uninterrupted longer run")
        fresh_episode_pending = True
        out(f"resumed from {path} at {counters.get('t'):,} env steps")
    t = counters.get("t")
    episode_num = counters.get("episode_num")
    writer = summary_writer(logdir)
    if writer is not None and t == 0:
        with writer.as_default():
            tf.summary.text("hyperparameters", _hparams_table(cfg, algo, variant, agent, eager), step=0)
    eval_seed = cfg.seed + 100
    ckpt_every = cfg.ckpt_every or cfg.eval_freq
    last_save = t

    def run_eval(step):
        returns, lengths = evaluate(agent, eval_env, eval_seed, cfg.eval_episodes)
        evaluations.append((step, returns, lengths))
        _write_evaluations(run_dir, evaluations)
        if writer is not None:
            with writer.as_default():
                tf.summary.scalar("eval/mean_reward", float(returns.mean()), step=step)
                tf.summary.scalar("eval/mean_ep_length", float(lengths.mean()), step=step)
        return float(returns.mean())

    def save(at_boundary):
        if side is None:
            return None
        counters.set(t=t, episode_num=episode_num)
        meta = {"rng": _gen_state(exploration_noise), "agent_rng": _gen_state(agent.rng),
                "env_rng": _gen_state(env.unwrapped.np_random),
                "action_space_rng": _gen_state(env.action_space.np_random),
                "evaluations": [(s, r.tolist(), l.tolist()) for s, r, l in evaluations],
                "at_episode_boundary": at_boundary}
        return side.save(replay, meta)

    t_begin = time.perf_counter()
    if not evaluations:
        out(f"evaluation at step 0: {run_eval(0):.3f}")
    bar = progress_bar(cfg.steps, "step", progress, initial=t)
    episode_returns = []
    recent = collections.deque(maxlen=10)
    episode_reward, episode_timesteps = 0.0, 0
    critic_loss = actor_loss = None
    learn_t0, learn_eval_s, learn_from = None, 0.0, max(t, cfg.start_steps)
    graph_logged = eager
    warned = False
    path = None
    with StopOnSigint() as stop:
        while t < cfg.steps:
            if fresh_episode_pending:
                state, _ = env.reset()
                fresh_episode_pending = False
            if t == learn_from and learn_t0 is None:
                learn_t0, learn_eval_s = time.perf_counter(), 0.0
            episode_timesteps += 1
            # Select action randomly or according to policy
            if t < cfg.start_steps:
                action = env.action_space.sample()
            else:
                action = (agent.select_action(state) + exploration_noise()).clip(-max_action, max_action).astype(np.float32)
            next_state, reward, terminated, truncated, _ = env.step(action)
            # a time-limit truncation is not a terminal state: only `terminated` stops the bootstrap
            replay.add(state, action, reward, next_state, float(terminated))
            state = next_state
            episode_reward += reward
            # Train agent after collecting sufficient data
            if t >= cfg.start_steps:
                critic_loss, actor_loss = agent.train(replay)
                if not graph_logged and writer is not None:
                    with writer.as_default():
                        tf.summary.graph(agent.train_fn, step=t)
                    graph_logged = True
            t += 1
            ended = terminated or truncated
            if ended:
                episode_returns.append(episode_reward)
                recent.append(episode_reward)
                if writer is not None:
                    with writer.as_default():
                        tf.summary.scalar("charts/episodic_return", episode_reward, step=t)
                        tf.summary.scalar("charts/episodic_length", episode_timesteps, step=t)
                episode_num += 1
                episode_reward, episode_timesteps = 0.0, 0
                fresh_episode_pending = True    # reset at the next step, after a save here
            if t % cfg.eval_freq == 0:
                te = time.perf_counter()
                mean = run_eval(t)
                learn_eval_s += time.perf_counter() - te
                msg = f"evaluation at step {t:,}: {mean:.3f}"
                if bar is not None:
                    bar.write(msg)
                else:
                    out(msg)
            if t % cfg.log_every == 0:
                sps = (t - learn_from if learn_t0 else t) / max(time.perf_counter() - (learn_t0 or t_begin), 1e-9)
                if writer is not None:
                    with writer.as_default():
                        tf.summary.scalar("charts/SPS", sps, step=t)
                        if critic_loss is not None:
                            tf.summary.scalar("losses/critic_loss", critic_loss, step=t)
                            al = float(actor_loss)
                            if al == al:  # NaN before the first delayed policy update
                                tf.summary.scalar("losses/actor_loss", al, step=t)
                if bar is not None:
                    bar.update(t - bar.n)
                    bar.set_postfix(ret=f"{np.mean(recent):.1f}" if recent else "-", sps=f"{sps:.0f}", refresh=False)
            # an episode boundary (before the next reset) is the only place the run can be saved exactly
            if ended and (stop.requested or t - last_save >= ckpt_every):
                path = save(True)
                last_save = t
            if stop.requested and (ended or side is None):
                break
            if stop.requested and not warned:
                out("Ctrl-C: finishing the current episode to save an exact checkpoint "
                    "(Ctrl-C again to stop at once without saving)")
                warned = True
    t_end = time.perf_counter()
    if bar is not None:
        bar.update(t - bar.n)
        bar.close()
    if path is None or last_save != t:
        path = save(fresh_episode_pending)
    if writer is not None:
        writer.flush()
    learn_s = (t_end - learn_t0 - learn_eval_s) if learn_t0 is not None else 0.0
    res = TrainResult(final_eval=float(evaluations[-1][1].mean()),
                      evaluations=[(int(s), float(r.mean())) for s, r, _ in evaluations],
                      episode_returns=[float(r) for r in episode_returns], env_steps=t, episodes=episode_num,
                      wall_s=t_end - t_begin, learn_s=learn_s, learn_steps=t - learn_from if learn_t0 else 0,
                      interrupted=stop.requested, checkpoint=path)
    env.close()
    eval_env.close()
    return res, agent


def _write_evaluations(run_dir, evaluations):
    """``evaluations.npz`` as Stable-Baselines3's EvalCallback writes it: ``timesteps (n,)``,
    ``results (n, episodes)``, ``ep_lengths (n, episodes)``."""
    if not run_dir:
        return
    os.makedirs(run_dir, exist_ok=True)
    tmp = os.path.join(run_dir, "evaluations.tmp.npz")
    np.savez(tmp, timesteps=np.array([s for s, _, _ in evaluations], np.int64),
             results=np.stack([r for _, r, _ in evaluations]), ep_lengths=np.stack([l for _, _, l in evaluations]))
    os.replace(tmp, os.path.join(run_dir, "evaluations.npz"))


def _hparams_table(cfg, algo, variant, agent, eager):
    rows = {"algo": algo if algo == "td3" else f"{algo} ({variant})", "mode": "eager" if eager else "compiled",
            **dataclasses.asdict(cfg), **dataclasses.asdict(agent.config)}
    return "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in rows.items())
