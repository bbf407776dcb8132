"""dqn: the Gridworld DQN's train step and action selection.

step: MLP 64-150-100-4 (ReLU), batch 200, Adam lr 1e-3 (eps 1e-8), a target
network (separate weights, forward only), Q gathered at the actions, target
r + gamma*(1-done)*max_a Q_target(s'), gamma 0.9, MSE loss.
act: one state (1x64 NumPy array, as an environment returns it) -> argmax of
the Q network as a Python int (conversion in and out included).
"""
from __future__ import annotations

import numpy as np

from benchmarks.common import Bench, Impl, mlp_params, rng
from benchmarks.workloads import _npnn as nn
from benchmarks.workloads._peerutil import jax_mlp, keras_arrays, keras_mlp, named, torch_arrays, torch_mlp
from benchmarks.workloads._tfapi import HandAdam, constants, dense_mlp, import_tf, variables

NAME = "dqn"
TITLE = "DQN (Gridworld network 64-150-100-4): train step and act"
SIZES = [64, 150, 100, 4]
ACTS = ["relu", "relu", "linear"]
GAMMA = 0.9
LR = 1e-3
EPS = 1e-8
CHECK_STEPS = 3


def cases(mode):
    batch = 200 if mode != "tiny" else 32
    return [
        {"name": "step", "title": f"train step, batch {batch}, Adam, target network", "unit": "step",
         "display": "us", "batch": batch, "kind": "step"},
        {"name": "act", "title": "act: one 1x64 state -> argmax Q (int)", "unit": "call", "display": "us",
         "batch": 1, "kind": "act"},
    ]


def make_data(case, seed):
    rs = rng(seed)
    online = mlp_params(rs, SIZES)
    target = mlp_params(rs, SIZES)
    B = case["batch"]
    a = rs.integers(0, SIZES[-1], size=B)
    d = {f"w{i}": w for i, w in enumerate(online)}
    d.update({f"t{i}": w for i, w in enumerate(target)})
    d.update({
        "s": (rs.random((B, SIZES[0])) + rs.standard_normal((B, SIZES[0])) * 0.1).astype(np.float32),
        "a": a.astype(np.int64),
        "idx": (np.arange(B) * SIZES[-1] + a).astype(np.int64),
        "r": rs.choice(np.array([-1.0, -10.0, 10.0], dtype=np.float32), size=B).astype(np.float32),
        "s2": (rs.random((B, SIZES[0])) + rs.standard_normal((B, SIZES[0])) * 0.1).astype(np.float32),
        "done": (rs.random(B) < 0.1).astype(np.float32),
    })
    return d


def weights(data, p="w"):
    return [data[f"{p}{i}"] for i in range(2 * (len(SIZES) - 1))]


# --- NumPy (hand-written backprop + Adam); float64 copy is the reference ------------
class NumpyDQN:
    def __init__(self, data, dtype, adam_style="torch"):
        self.p = nn.as_dtype(weights(data, "w"), dtype)
        self.t = nn.as_dtype(weights(data, "t"), dtype)
        self.opt = nn.Adam(self.p, lr=LR, eps=EPS, style=adam_style)
        self.s, self.s2 = (np.asarray(data[k], dtype) for k in ("s", "s2"))
        self.r, self.done = (np.asarray(data[k], dtype) for k in ("r", "done"))
        self.a = data["a"]
        self.rows = np.arange(len(self.a))

    def step(self):
        q2, _ = nn.mlp_forward(self.t, self.s2, ACTS)
        y = self.r + GAMMA * (1 - self.done) * q2.max(axis=1)
        q, cache = nn.mlp_forward(self.p, self.s, ACTS)
        err = q[self.rows, self.a] - y
        loss = np.mean(err * err)
        dq = np.zeros_like(q)
        dq[self.rows, self.a] = 2 * err / len(err)
        grads = nn.mlp_backward(self.p, cache, ACTS, dq)
        self.opt.update(self.p, grads)
        return loss


def np_act(p, s):
    q, _ = nn.mlp_forward(p, s, ACTS)
    return q


def reference(case, data, variant=None):
    """variant "keras": the same steps with Keras's Adam (eps placed differently)."""
    adam_style = "keras" if variant == "keras" else "torch"
    if case["kind"] == "act":
        q = np_act(nn.as_dtype(weights(data), np.float64), data["s"][:1].astype(np.float64))
        return {"q": q, "action": np.array(float(np.argmax(q)))}
    m = NumpyDQN(data, np.float64, adam_style)
    losses = [m.step() for _ in range(CHECK_STEPS)]
    out = named(m.p)
    out["loss"] = np.array(losses)
    return out


# Adam's first steps move every weight by about lr whatever the gradient's
# size, so float32 rounding of near-zero gradients shows up at ~1e-3 of the
# weights' scale: the parameters are compared with that tolerance, the losses
# (which depend on every weight) much tighter.
TOL = {"*": 5e-4, "loss": 1e-4, "q": 1e-5, "action": 0.0}


def build_numpy(case, data):
    if case["kind"] == "act":
        p = weights(data)
        s = data["s"][:1]

        def act():
            return int(np.argmax(np_act(p, s)))

        return Bench(step=act, check=lambda: {"q": np_act(p, s), "action": np.array(float(act()))})
    m = NumpyDQN(data, np.float32)

    def check():
        losses = [m.step() for _ in range(CHECK_STEPS)]
        out = named(m.p)
        out["loss"] = np.array(losses)
        return out

    return Bench(step=m.step, check=check)


# --- TF API: tapeflow and TensorFlow (raw ops + hand Adam, or Keras) --------------
def _tf_step(framework, style, how):
    def build(case, data):
        tf = import_tf(framework)
        s, idx, r, s2, done = constants(tf, [data[k] for k in ("s", "idx", "r", "s2", "done")])
        if style == "raw":
            params = variables(tf, weights(data, "w"), "w")
            tparams = variables(tf, weights(data, "t"), "t")
            opt = HandAdam(tf, weights(data, "w"), lr=LR, eps=EPS)

            def q_online(x):
                return dense_mlp(tf, params, x, ACTS)

            def q_target(x):
                return dense_mlp(tf, tparams, x, ACTS)

            def apply(grads):
                opt.apply(grads, params)

            def loss_fn(y, qa):
                return tf.reduce_mean(tf.square(qa - y))

            def current():
                return [v.numpy() for v in params]
        else:
            model = keras_mlp(tf, weights(data, "w"), ACTS, SIZES[0])
            target = keras_mlp(tf, weights(data, "t"), ACTS, SIZES[0])
            params = model.trainable_variables
            kopt = tf.keras.optimizers.Adam(learning_rate=LR, epsilon=EPS)
            if hasattr(kopt, "build"):
                kopt.build(params)
            q_online, q_target = model, target

            def apply(grads):
                kopt.apply_gradients(zip(grads, params))

            def loss_fn(y, qa):
                return tf.keras.losses.MSE(y, qa)

            def current():
                return keras_arrays(model)

        def train_step(s, idx, r, s2, done):
            q2 = q_target(s2)
            y = r + GAMMA * (1.0 - done) * tf.reduce_max(q2, axis=1)
            with tf.GradientTape() as tape:
                q = q_online(s)
                qa = tf.gather(tf.reshape(q, [-1]), idx)
                loss = loss_fn(y, qa)
            grads = tape.gradient(loss, params)
            apply(grads)
            return loss

        fn = tf.function(train_step) if how == "function" else train_step

        def step():
            return fn(s, idx, r, s2, done)

        def check():
            losses = [float(step().numpy()) for _ in range(CHECK_STEPS)]
            out = named(current())
            out["loss"] = np.array(losses)
            return out

        return Bench(step=step, check=check, sync=lambda loss: loss.numpy(),
                     note="checked against a Keras-style Adam reference" if style == "keras" else "")

    return build


def _tf_act(framework, style, how):
    def build(case, data):
        tf = import_tf(framework)
        s_np = data["s"][:1]
        if style == "raw":
            params = variables(tf, weights(data), "w")

            def q_fn(x):
                return dense_mlp(tf, params, x, ACTS)
        else:
            model = keras_mlp(tf, weights(data), ACTS, SIZES[0])
            q_fn = model
        if how == "predict":
            def act():
                return int(np.argmax(model.predict(s_np, verbose=0)))

            def check():
                return {"q": np.asarray(model.predict(s_np, verbose=0)), "action": np.array(float(act()))}

            return Bench(step=act, check=check)

        def act_graph(x):
            return tf.argmax(q_fn(x), axis=1)

        compiled = how in ("function", "function_numpy")
        act_fn = tf.function(act_graph) if compiled else act_graph
        qc = tf.function(q_fn) if compiled else q_fn

        if how == "function_numpy":  # the env's NumPy array straight into the compiled call (issue 14)
            def act():
                return int(act_fn(s_np).numpy()[0])
        else:
            def act():
                return int(act_fn(tf.constant(s_np)).numpy()[0])

        def check():
            return {"q": qc(tf.constant(s_np)).numpy(), "action": np.array(float(act()))}

        return Bench(step=act, check=check)

    return build


# --- PyTorch -------------------------------------------------------------------------
def build_torch(case, data):
    import torch
    import torch.nn.functional as F

    model = torch_mlp(weights(data, "w"), ACTS)
    if case["kind"] == "act":
        s_np = data["s"][:1]

        def act():
            with torch.no_grad():
                return int(model(torch.from_numpy(s_np)).argmax(dim=1)[0])

        def check():
            with torch.no_grad():
                q = model(torch.from_numpy(s_np)).numpy()
            return {"q": q, "action": np.array(float(act()))}

        return Bench(step=act, check=check)
    target = torch_mlp(weights(data, "t"), ACTS)
    for p in target.parameters():
        p.requires_grad_(False)
    # fused=True: PyTorch's fastest Adam on CPU (the issue compares eager steps with it); the
    # default for-loop Adam took 189 us per step here, fused 55 (2-core EPYC, torch 2.13)
    opt = torch.optim.Adam(model.parameters(), lr=LR, eps=EPS, fused=True)
    s, r, s2, done = (torch.from_numpy(data[k]) for k in ("s", "r", "s2", "done"))
    a = torch.from_numpy(data["a"])

    def step():
        with torch.no_grad():
            y = r + GAMMA * (1 - done) * target(s2).max(dim=1)[0]
        qa = model(s).gather(1, a.unsqueeze(1)).squeeze(1)
        loss = F.mse_loss(qa, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    def check():
        losses = [float(step().detach()) for _ in range(CHECK_STEPS)]
        out = named(torch_arrays(model))
        out["loss"] = np.array(losses)
        return out

    return Bench(step=step, check=check, note="torch.optim.Adam(fused=True): its fastest Adam on CPU")


# --- JAX + optax ---------------------------------------------------------------------
def build_jax(case, data):
    import jax
    import jax.numpy as jnp
    import optax

    params = [jnp.asarray(w) for w in weights(data, "w")]
    if case["kind"] == "act":
        s_np = data["s"][:1]
        q_fn = jax.jit(lambda p, x: jax_mlp(p, x, ACTS))
        act_fn = jax.jit(lambda p, x: jnp.argmax(jax_mlp(p, x, ACTS), axis=1))

        def act():
            return int(act_fn(params, s_np)[0])

        return Bench(step=act, check=lambda: {"q": np.asarray(q_fn(params, s_np)), "action": np.array(float(act()))})
    tparams = [jnp.asarray(w) for w in weights(data, "t")]
    opt = optax.adam(LR, eps=EPS)
    s, a, r, s2, done = (jnp.asarray(data[k]) for k in ("s", "a", "r", "s2", "done"))
    rows = jnp.arange(a.shape[0])

    @jax.jit
    def train_step(params, opt_state, tparams, s, a, r, s2, done):
        y = r + GAMMA * (1 - done) * jnp.max(jax_mlp(tparams, s2, ACTS), axis=1)

        def loss_fn(p):
            qa = jax_mlp(p, s, ACTS)[rows, a]
            return jnp.mean((qa - y) ** 2)

        loss, g = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = opt.update(g, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    st = {"p": params, "o": opt.init(params)}

    def step():
        st["p"], st["o"], loss = train_step(st["p"], st["o"], tparams, s, a, r, s2, done)
        return loss

    def check():
        losses = [float(step()) for _ in range(CHECK_STEPS)]
        out = named([np.asarray(p) for p in st["p"]])
        out["loss"] = np.array(losses)
        return out

    return Bench(step=step, check=check, sync=lambda x: x.block_until_ready())


S = ("step",)
A = ("act",)
IMPLS = [
    Impl("numpy", "numpy", "NumPy (hand-written backprop + Adam)", build_numpy, cases=S),
    Impl("tapeflow_raw_eager", "tapeflow", "tapeflow eager (raw ops + hand Adam)", _tf_step("tapeflow", "raw", "eager"), cases=S),
    Impl("tapeflow_raw_function", "tapeflow", "tapeflow.function (raw ops + hand Adam)", _tf_step("tapeflow", "raw", "function"), cases=S),
    Impl("tapeflow_keras_function", "tapeflow", "tapeflow.function (keras Dense/MSE/Adam)", _tf_step("tapeflow", "keras", "function"), cases=S,
         reference_variant="keras"),
    Impl("tapeflow_keras_eager", "tapeflow", "tapeflow eager (keras Dense/MSE/Adam)", _tf_step("tapeflow", "keras", "eager"), cases=S,
         reference_variant="keras"),
    Impl("torch", "torch", "PyTorch (torch.optim.Adam, fused)", build_torch, cases=S),
    Impl("jax", "jax", "JAX jit + optax.adam", build_jax, cases=S),
    Impl("tf_keras_function", "tensorflow", "TF tf.function (keras Dense/MSE/Adam)", _tf_step("tensorflow", "keras", "function"), cases=S,
         reference_variant="keras"),
    Impl("tf_raw_function", "tensorflow", "TF tf.function (raw ops + hand Adam)", _tf_step("tensorflow", "raw", "function"), cases=S),
    Impl("tf_keras_eager", "tensorflow", "TF eager (keras Dense/MSE/Adam)", _tf_step("tensorflow", "keras", "eager"), cases=S,
         reference_variant="keras"),
    # act
    Impl("numpy_act", "numpy", "NumPy forward + argmax", build_numpy, cases=A),
    Impl("tapeflow_act_raw", "tapeflow", "tapeflow.function (raw ops)", _tf_act("tapeflow", "raw", "function"), cases=A),
    Impl("tapeflow_act_keras", "tapeflow", "tapeflow.function (keras model call)", _tf_act("tapeflow", "keras", "function"), cases=A),
    Impl("tapeflow_act_raw_numpy", "tapeflow", "tapeflow.function (raw ops), called with the NumPy array",
         _tf_act("tapeflow", "raw", "function_numpy"), cases=A),
    Impl("tapeflow_act_eager", "tapeflow", "tapeflow eager (raw ops)", _tf_act("tapeflow", "raw", "eager"), cases=A),
    Impl("tapeflow_act_predict", "tapeflow", "tapeflow keras model.predict", _tf_act("tapeflow", "keras", "predict"), cases=A),
    Impl("torch_act", "torch", "PyTorch (no_grad)", build_torch, cases=A),
    Impl("jax_act", "jax", "JAX jit", build_jax, cases=A),
    Impl("tf_act_function", "tensorflow", "TF tf.function (keras model call)", _tf_act("tensorflow", "keras", "function"), cases=A),
    Impl("tf_act_eager", "tensorflow", "TF eager (keras model call)", _tf_act("tensorflow", "keras", "eager"), cases=A),
    Impl("tf_act_predict", "tensorflow", "TF keras model.predict", _tf_act("tensorflow", "keras", "predict"), cases=A),
]
