"""td3: one TD3 training iteration (Fujimoto et al.'s reference algorithm).

Actor 17-H1-H2-6 (ReLU, tanh output, max action 1), twin critics
23-H1-H2-1 on concat(state, action), target copies of all three, batch 256,
gamma 0.99, tau 0.005, target policy noise 0.2 clipped to 0.5, policy delay 2,
Adam lr 3e-4 (eps 1e-8) for the actor and for the two critics together.
A timed call is one 2-iteration cycle (critic update; critic update + actor
update + soft target updates); the table reports time per iteration (half a
cycle). The batch and the (pre-drawn, unclipped) target-policy noise come from
NumPy so that every framework computes the same thing.
"""
from __future__ import annotations

import numpy as np

from benchmarks.common import Bench, Impl, mlp_params, rng
from benchmarks.workloads import _npnn as nn
from benchmarks.workloads._peerutil import jax_mlp, named, torch_arrays, torch_mlp
from benchmarks.workloads._tfapi import HandAdam, KerasAdam, constants, dense_mlp, import_tf, variables

NAME = "td3"
TITLE = "TD3 train iteration (actor + twin critics, batch 256)"
S_DIM, A_DIM = 17, 6
GAMMA, TAU, NOISE_CLIP, POLICY_NOISE, LR = 0.99, 0.005, 0.5, 0.2, 3e-4
A_ACTS = ["relu", "relu", "tanh"]
C_ACTS = ["relu", "relu", "linear"]
CHECK_CYCLES = 2


def cases(mode):
    if mode == "tiny":
        return [{"name": "32-32", "title": "hidden 32-32, batch 16", "unit": "iteration", "display": "ms",
                 "hidden": [32, 32], "batch": 16}]
    return [
        {"name": "400-300", "title": "hidden 400-300, batch 256", "unit": "iteration", "display": "ms",
         "hidden": [400, 300], "batch": 256},
        {"name": "256-256", "title": "hidden 256-256, batch 256", "unit": "iteration", "display": "ms",
         "hidden": [256, 256], "batch": 256},
    ]


def make_data(case, seed):
    rs = rng(seed)
    h = case["hidden"]
    B = case["batch"]
    d = {}
    for name, sizes in (("actor", [S_DIM, *h, A_DIM]), ("q1_", [S_DIM + A_DIM, *h, 1]),
                        ("q2_", [S_DIM + A_DIM, *h, 1])):
        for i, w in enumerate(mlp_params(rs, sizes)):
            d[f"{name}{i}"] = w
    d.update({
        "s": rs.standard_normal((B, S_DIM)).astype(np.float32),
        "a": rs.uniform(-1, 1, (B, A_DIM)).astype(np.float32),
        "r": rs.standard_normal((B, 1)).astype(np.float32),
        "s2": rs.standard_normal((B, S_DIM)).astype(np.float32),
        "nd": (rs.random((B, 1)) > 0.05).astype(np.float32),
        "noise": (rs.standard_normal((B, A_DIM)) * POLICY_NOISE).astype(np.float32),
    })
    return d


def get(data, prefix):
    return [data[f"{prefix}{i}"] for i in range(6)]


BATCH_KEYS = ("s", "a", "r", "s2", "nd", "noise")


# --- NumPy (hand-written); float64 copy is the reference -------------------------
class NumpyTD3:
    def __init__(self, data, dtype):
        self.actor = nn.as_dtype(get(data, "actor"), dtype)
        self.q1 = nn.as_dtype(get(data, "q1_"), dtype)
        self.q2 = nn.as_dtype(get(data, "q2_"), dtype)
        self.actor_t = [p.copy() for p in self.actor]
        self.q1_t = [p.copy() for p in self.q1]
        self.q2_t = [p.copy() for p in self.q2]
        self.copt = nn.Adam(self.q1 + self.q2, lr=LR)
        self.aopt = nn.Adam(self.actor, lr=LR)
        self.s, self.a, self.r, self.s2, self.nd, self.noise = (np.asarray(data[k], dtype) for k in BATCH_KEYS)
        self.it = 0

    def critic_update(self):
        s, a, r, s2, nd = self.s, self.a, self.r, self.s2, self.nd
        noise = np.clip(self.noise, -NOISE_CLIP, NOISE_CLIP)
        a2 = np.clip(nn.mlp_forward(self.actor_t, s2, A_ACTS)[0] + noise, -1.0, 1.0)
        x2 = np.concatenate([s2, a2], axis=1)
        tq = np.minimum(nn.mlp_forward(self.q1_t, x2, C_ACTS)[0], nn.mlp_forward(self.q2_t, x2, C_ACTS)[0])
        y = r + nd * GAMMA * tq
        x = np.concatenate([s, a], axis=1)
        q1, c1 = nn.mlp_forward(self.q1, x, C_ACTS)
        q2, c2 = nn.mlp_forward(self.q2, x, C_ACTS)
        n = q1.size
        loss = np.mean((q1 - y) ** 2) + np.mean((q2 - y) ** 2)
        g1 = nn.mlp_backward(self.q1, c1, C_ACTS, 2 * (q1 - y) / n)
        g2 = nn.mlp_backward(self.q2, c2, C_ACTS, 2 * (q2 - y) / n)
        self.copt.update(self.q1 + self.q2, g1 + g2)
        return loss

    def actor_update(self):
        s = self.s
        pi, ca = nn.mlp_forward(self.actor, s, A_ACTS)
        q, cq = nn.mlp_forward(self.q1, np.concatenate([s, pi], axis=1), C_ACTS)
        loss = -np.mean(q)
        _, dx = nn.mlp_backward(self.q1, cq, C_ACTS, np.full_like(q, -1.0 / q.size), need_dx=True)
        ga = nn.mlp_backward(self.actor, ca, A_ACTS, dx[:, S_DIM:])
        self.aopt.update(self.actor, ga)
        for src, dst in ((self.actor, self.actor_t), (self.q1, self.q1_t), (self.q2, self.q2_t)):
            for p, tp in zip(src, dst):
                tp *= 1 - TAU
                tp += TAU * p
        return loss

    def cycle(self):
        c1 = self.critic_update()
        c2 = self.critic_update()
        al = self.actor_update()
        return c1, c2, al

    def state(self):
        out = {}
        for prefix, ps in (("actor", self.actor), ("q1_", self.q1), ("q2_", self.q2), ("actor_t", self.actor_t),
                           ("q1_t", self.q1_t)):
            out.update(named(ps, prefix))
        return out


def check_run(cycle, state):
    """CHECK_CYCLES cycles from the initial state; losses + parameters."""
    closs, aloss = [], []
    for _ in range(CHECK_CYCLES):
        c1, c2, al = cycle()
        closs += [float(c1), float(c2)]
        aloss.append(float(al))
    out = state()
    out["critic_loss"] = np.array(closs)
    out["actor_loss"] = np.array(aloss)
    return out


def reference(case, data):
    m = NumpyTD3(data, np.float64)
    return check_run(m.cycle, m.state)


TOL = {"*": 5e-4, "critic_loss": 1e-4, "actor_loss": 1e-4}


def build_numpy(case, data):
    m = NumpyTD3(data, np.float32)
    return Bench(step=m.cycle, units=2, check=lambda: check_run(m.cycle, m.state))


# --- TF API: tapeflow and TensorFlow (raw ops + hand Adam, or the Keras Adam) ------
def _tf(framework, how, optimizer=HandAdam):
    def build(case, data):
        tf = import_tf(framework)
        actor = variables(tf, get(data, "actor"), "actor")
        q1 = variables(tf, get(data, "q1_"), "q1_")
        q2 = variables(tf, get(data, "q2_"), "q2_")
        actor_t = variables(tf, get(data, "actor"), "actor_t")
        q1_t = variables(tf, get(data, "q1_"), "q1_t")
        q2_t = variables(tf, get(data, "q2_"), "q2_t")
        copt = optimizer(tf, get(data, "q1_") + get(data, "q2_"), lr=LR)
        aopt = optimizer(tf, get(data, "actor"), lr=LR)
        batch = constants(tf, [data[k] for k in BATCH_KEYS])

        def critic_update(s, a, r, s2, nd, noise):
            noise = tf.clip_by_value(noise, -NOISE_CLIP, NOISE_CLIP)
            a2 = tf.clip_by_value(dense_mlp(tf, actor_t, s2, A_ACTS) + noise, -1.0, 1.0)
            x2 = tf.concat([s2, a2], axis=1)
            tq = tf.minimum(dense_mlp(tf, q1_t, x2, C_ACTS), dense_mlp(tf, q2_t, x2, C_ACTS))
            y = r + nd * GAMMA * tq
            x = tf.concat([s, a], axis=1)
            with tf.GradientTape() as tape:
                e1 = dense_mlp(tf, q1, x, C_ACTS) - y
                e2 = dense_mlp(tf, q2, x, C_ACTS) - y
                loss = tf.reduce_mean(tf.square(e1)) + tf.reduce_mean(tf.square(e2))
            grads = tape.gradient(loss, q1 + q2)
            copt.apply(grads, q1 + q2)
            return loss

        def actor_update(s):
            with tf.GradientTape() as tape:
                pi = dense_mlp(tf, actor, s, A_ACTS)
                loss = -tf.reduce_mean(dense_mlp(tf, q1, tf.concat([s, pi], axis=1), C_ACTS))
            grads = tape.gradient(loss, actor)
            aopt.apply(grads, actor)
            for src, dst in ((actor, actor_t), (q1, q1_t), (q2, q2_t)):
                for p, tp in zip(src, dst):
                    tp.assign(TAU * p + (1.0 - TAU) * tp)
            return loss

        def full_update(s, a, r, s2, nd, noise):
            closs = critic_update(s, a, r, s2, nd, noise)
            return closs, actor_update(s)

        it1 = tf.function(critic_update) if how == "function" else critic_update
        it2 = tf.function(full_update) if how == "function" else full_update

        def cycle():
            c1 = it1(*batch)
            c2, al = it2(*batch)
            return c1, c2, al

        def state():
            out = {}
            for prefix, ps in (("actor", actor), ("q1_", q1), ("q2_", q2), ("actor_t", actor_t), ("q1_t", q1_t)):
                out.update(named([v.numpy() for v in ps], prefix))
            return out

        def as_float(c):
            return tuple(float(x.numpy()) for x in c)

        return Bench(step=cycle, units=2, sync=lambda c: c[2].numpy(),
                     check=lambda: check_run(lambda: as_float(cycle()), state))

    return build


# --- PyTorch -------------------------------------------------------------------------
def build_torch(case, data):
    import torch
    import torch.nn.functional as F

    actor = torch_mlp(get(data, "actor"), A_ACTS)
    q1 = torch_mlp(get(data, "q1_"), C_ACTS)
    q2 = torch_mlp(get(data, "q2_"), C_ACTS)
    actor_t = torch_mlp(get(data, "actor"), A_ACTS)
    q1_t = torch_mlp(get(data, "q1_"), C_ACTS)
    q2_t = torch_mlp(get(data, "q2_"), C_ACTS)
    # fused=True: PyTorch's fastest Adam on CPU (the default for-loop one took 394 us per
    # critic step at 256-256, fused 135; 2-core EPYC, torch 2.13)
    copt = torch.optim.Adam(list(q1.parameters()) + list(q2.parameters()), lr=LR, fused=True)
    aopt = torch.optim.Adam(actor.parameters(), lr=LR, fused=True)
    s, a, r, s2, nd, noise = (torch.from_numpy(data[k]) for k in BATCH_KEYS)
    pairs = [(p, tp) for m, mt in ((actor, actor_t), (q1, q1_t), (q2, q2_t))
             for p, tp in zip(m.parameters(), mt.parameters())]

    def train(actor_it):
        with torch.no_grad():
            nz = noise.clamp(-NOISE_CLIP, NOISE_CLIP)
            a2 = (actor_t(s2) + nz).clamp(-1.0, 1.0)
            x2 = torch.cat([s2, a2], 1)
            y = r + nd * GAMMA * torch.min(q1_t(x2), q2_t(x2))
        x = torch.cat([s, a], 1)
        closs = F.mse_loss(q1(x), y) + F.mse_loss(q2(x), y)
        copt.zero_grad(set_to_none=True)
        closs.backward()
        copt.step()
        if not actor_it:
            return closs, None
        aloss = -q1(torch.cat([s, actor(s)], 1)).mean()
        aopt.zero_grad(set_to_none=True)
        aloss.backward()
        aopt.step()
        with torch.no_grad():
            for p, tp in pairs:
                tp.data.copy_(TAU * p.data + (1 - TAU) * tp.data)
        return closs, aloss

    def cycle():
        c1, _ = train(False)
        c2, al = train(True)
        return c1, c2, al

    def state():
        out = {}
        for prefix, m in (("actor", actor), ("q1_", q1), ("q2_", q2), ("actor_t", actor_t), ("q1_t", q1_t)):
            out.update(named(torch_arrays(m), prefix))
        return out

    return Bench(step=cycle, units=2, check=lambda: check_run(lambda: tuple(float(x.detach()) for x in cycle()), state))


# --- JAX + optax ---------------------------------------------------------------------
def build_jax(case, data):
    import jax
    import jax.numpy as jnp
    import optax

    j = lambda ps: [jnp.asarray(p) for p in ps]  # noqa: E731
    opt = optax.adam(LR)
    st = {"actor": j(get(data, "actor")), "q": (j(get(data, "q1_")), j(get(data, "q2_")))}
    st["actor_t"], st["q_t"] = st["actor"], st["q"]
    st["copt"], st["aopt"] = opt.init(st["q"]), opt.init(st["actor"])
    s, a, r, s2, nd, noise = (jnp.asarray(data[k]) for k in BATCH_KEYS)

    def critic_update(st):
        nz = jnp.clip(noise, -NOISE_CLIP, NOISE_CLIP)
        a2 = jnp.clip(jax_mlp(st["actor_t"], s2, A_ACTS) + nz, -1.0, 1.0)
        x2 = jnp.concatenate([s2, a2], 1)
        y = r + nd * GAMMA * jnp.minimum(jax_mlp(st["q_t"][0], x2, C_ACTS), jax_mlp(st["q_t"][1], x2, C_ACTS))
        x = jnp.concatenate([s, a], 1)

        def loss_fn(q):
            return jnp.mean((jax_mlp(q[0], x, C_ACTS) - y) ** 2) + jnp.mean((jax_mlp(q[1], x, C_ACTS) - y) ** 2)

        loss, g = jax.value_and_grad(loss_fn)(st["q"])
        upd, copt = opt.update(g, st["copt"], st["q"])
        return dict(st, q=optax.apply_updates(st["q"], upd), copt=copt), loss

    def actor_update(st):
        def loss_fn(ap):
            return -jnp.mean(jax_mlp(st["q"][0], jnp.concatenate([s, jax_mlp(ap, s, A_ACTS)], 1), C_ACTS))

        loss, g = jax.value_and_grad(loss_fn)(st["actor"])
        upd, aopt = opt.update(g, st["aopt"], st["actor"])
        st = dict(st, actor=optax.apply_updates(st["actor"], upd), aopt=aopt)
        soft = lambda p, tp: TAU * p + (1 - TAU) * tp  # noqa: E731
        st["actor_t"] = jax.tree.map(soft, st["actor"], st["actor_t"])
        st["q_t"] = jax.tree.map(soft, st["q"], st["q_t"])
        return st, loss

    @jax.jit
    def it1(st):
        return critic_update(st)

    @jax.jit
    def it2(st):
        st, closs = critic_update(st)
        st, aloss = actor_update(st)
        return st, closs, aloss

    box = {"st": st}

    def cycle():
        st, c1 = it1(box["st"])
        st, c2, al = it2(st)
        box["st"] = st
        return c1, c2, al

    def state():
        st = box["st"]
        out = {}
        for prefix, ps in (("actor", st["actor"]), ("q1_", st["q"][0]), ("q2_", st["q"][1]),
                           ("actor_t", st["actor_t"]), ("q1_t", st["q_t"][0])):
            out.update(named([np.asarray(p) for p in ps], prefix))
        return out

    return Bench(step=cycle, units=2, sync=lambda c: c[2].block_until_ready(),
                 check=lambda: check_run(lambda: tuple(float(x) for x in cycle()), state))


IMPLS = [
    Impl("numpy", "numpy", "NumPy (hand-written backprop + Adam)", build_numpy),
    Impl("tapeflow_function", "tapeflow", "tapeflow.function (raw ops + hand Adam)", _tf("tapeflow", "function")),
    Impl("tapeflow_eager", "tapeflow", "tapeflow eager (raw ops + hand Adam)", _tf("tapeflow", "eager")),
    Impl("tapeflow_eager_keras", "tapeflow", "tapeflow eager (raw ops + Keras Adam)",
         _tf("tapeflow", "eager", KerasAdam)),
    Impl("torch", "torch", "PyTorch (torch.optim.Adam, fused)", build_torch),
    Impl("jax", "jax", "JAX jit + optax.adam", build_jax),
    Impl("tf_function", "tensorflow", "TF tf.function (raw ops + hand Adam)", _tf("tensorflow", "function")),
]
