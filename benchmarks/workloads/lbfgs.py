"""lbfgs: full-batch L-BFGS on a tied-weight autoencoder.

W of shape 784x196, output sigmoid(sigmoid(X W) W^T), MSE against X; X is
random in [0, 1) from a fixed seed (batch 100, 200, 300; no dataset
download). 51 iterations, history 100, no line search, lr 1; the gradient
and change tolerances are set to 0 so that every implementation runs all 51
iterations (one loss+gradient evaluation each). A timed call is a whole run
from the same initial W (fresh optimizer state). The NumPy row is a port of
torch.optim.LBFGS's algorithm (and, in float64, the check's reference).
"""
from __future__ import annotations

import inspect

import numpy as np

from benchmarks.common import Bench, Impl, Unavailable, glorot, rng
from benchmarks.workloads._tfapi import import_tf

NAME = "lbfgs"
TITLE = "L-BFGS, tied-weight autoencoder 784x196"
D, H = 784, 196
HISTORY, LR = 100, 1.0


def cases(mode):
    if mode == "tiny":
        return [{"name": "batch20", "title": "batch 20, 5 iterations", "unit": "run", "display": "ms",
                 "batch": 20, "iters": 5, "columns": [["final loss", "final_loss", "{:.6f}"], ["evals", "evals", "{}"]]}]
    return [{"name": f"batch{b}", "title": f"batch {b}, 51 iterations, history 100, no line search, lr 1",
             "unit": "run", "display": "ms", "batch": b, "iters": 51,
             "columns": [["final loss", "final_loss", "{:.6f}"], ["evals", "evals", "{}"]]}
            for b in (100, 200, 300)]


def make_data(case, seed):
    rs = rng(seed)
    return {"W": glorot(rs, D, H), "X": rs.random((case["batch"], D), dtype=np.float32)}


def _sig(z):
    return 1.0 / (1.0 + np.exp(-z))


def np_value_and_grad(W, X):
    h = _sig(X @ W)
    out = _sig(h @ W.T)
    diff = out - X
    loss = np.mean(diff * diff)
    dz2 = (2.0 / diff.size) * diff * out * (1 - out)  # d loss / d (h W^T)
    dh = dz2 @ W
    dz1 = dh * h * (1 - h)
    grad = X.T @ dz1 + dz2.T @ h  # through both uses of W
    return loss, grad


def lbfgs_numpy(fg, x, max_iter, history_size=HISTORY, lr=LR, tolerance_grad=0.0, tolerance_change=0.0):
    """torch.optim.LBFGS.step without line search, on a flat vector x (in place).
    Returns (loss at the final x is NOT evaluated; number of evaluations)."""
    loss, g = fg(x)
    evals = 1
    if np.max(np.abs(g)) <= tolerance_grad:
        return evals
    old_dirs, old_stps, ro = [], [], []
    H_diag = 1.0
    d = t = prev_g = None
    for n_iter in range(1, max_iter + 1):
        if n_iter == 1:
            d = -g
        else:
            y = g - prev_g
            s = d * t
            ys = y.dot(s)
            if ys > 1e-10:
                if len(old_dirs) == history_size:
                    old_dirs.pop(0)
                    old_stps.pop(0)
                    ro.pop(0)
                old_dirs.append(y)
                old_stps.append(s)
                ro.append(1.0 / ys)
                H_diag = ys / y.dot(y)
            al = [0.0] * len(old_dirs)
            tmp = np.empty_like(g)
            q = -g
            for i in range(len(old_dirs) - 1, -1, -1):
                al[i] = old_stps[i].dot(q) * ro[i]
                q -= np.multiply(old_dirs[i], al[i], out=tmp)
            q *= H_diag
            d = r = q
            for i in range(len(old_dirs)):
                be_i = old_dirs[i].dot(r) * ro[i]
                r += np.multiply(old_stps[i], al[i] - be_i, out=tmp)
        prev_g, prev_loss = g.copy(), loss
        t = min(1.0, 1.0 / np.abs(g).sum()) * lr if n_iter == 1 else lr
        if g.dot(d) > -tolerance_change:
            break
        x += (t * d).astype(x.dtype)
        if n_iter != max_iter:
            loss, g = fg(x)
            evals += 1
        if n_iter == max_iter:
            break
        if np.max(np.abs(g)) <= tolerance_grad or np.max(np.abs(d * t)) <= tolerance_change:
            break
        if abs(loss - prev_loss) < tolerance_change:
            break
    return evals


def _np_run(data, iters, dtype):
    X = data["X"].astype(dtype)
    x = data["W"].astype(dtype).ravel().copy()

    def fg(v):
        loss, g = np_value_and_grad(v.reshape(D, H), X)
        return loss, g.ravel()

    evals = lbfgs_numpy(fg, x, iters)
    W = x.reshape(D, H)
    return {"final_loss": np.asarray(np_value_and_grad(W, X)[0]), "W": W}, evals


def reference(case, data):
    out, _ = _np_run(data, case["iters"], np.float64)
    return out


# 51 L-BFGS iterations amplify float32 rounding: the loss is compared tightly,
# W (which the loss does not pin down) loosely.
TOL = {"final_loss": 2e-3, "W": 5e-2}


def build_numpy(case, data):
    res = {}

    def step():
        out, res["evals"] = _np_run(data, case["iters"], np.float32)
        res["final_loss"] = float(out["final_loss"])
        return out

    b = Bench(step=step, check=step)
    b.finish = lambda: {"final_loss": res["final_loss"], "evals": res["evals"]}
    return b


# --- PyTorch -----------------------------------------------------------------------
def build_torch(case, data):
    import torch

    X = torch.from_numpy(data["X"])
    W0 = torch.from_numpy(data["W"])
    W = W0.clone().requires_grad_(True)
    res = {}

    def loss_fn():
        return torch.mean((torch.sigmoid(torch.sigmoid(X @ W) @ W.T) - X) ** 2)

    def step():
        with torch.no_grad():
            W.copy_(W0)
        opt = torch.optim.LBFGS([W], lr=LR, max_iter=case["iters"], history_size=HISTORY, line_search_fn=None,
                                tolerance_grad=0.0, tolerance_change=0.0)

        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss

        opt.step(closure)
        res["evals"] = opt.state[W]["func_evals"]
        return W

    def check():
        step()
        with torch.no_grad():
            loss = float(loss_fn())
        res["final_loss"] = loss
        return {"final_loss": np.asarray(loss), "W": W.detach().numpy().copy()}

    return Bench(step=step, check=check, finish=lambda: dict(res))


# --- tapeflow ------------------------------------------------------------------------
def _kwargs_for(fn, **want):
    """The subset of `want` that `fn` accepts (tapeflow's signature is young)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return want
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        return want
    return {k: v for k, v in want.items() if k in sig.parameters}


def _tapeflow_optimizers():
    tf = import_tf("tapeflow")
    opts = getattr(tf, "optimizers", None)
    if opts is None:
        raise Unavailable("tapeflow.optimizers does not exist yet")
    return tf, opts


def _tf_loss(tf, W, X):
    return tf.reduce_mean(tf.square(tf.sigmoid(tf.matmul(tf.sigmoid(tf.matmul(X, W)), tf.transpose(W))) - X))


def build_tapeflow_closure(case, data):
    tf, opts = _tapeflow_optimizers()
    if not hasattr(opts, "LBFGS"):
        raise Unavailable("tapeflow.optimizers.LBFGS does not exist yet")
    X = tf.constant(data["X"])
    W = tf.Variable(data["W"].copy())
    res = {}

    def closure():  # PyTorch-like: re-evaluates and returns the loss (the optimizer takes the gradient)
        return _tf_loss(tf, W, X)

    def step():
        W.assign(data["W"])
        opt = opts.LBFGS([W], **_kwargs_for(opts.LBFGS, lr=LR, max_iter=case["iters"], history_size=HISTORY,
                                            line_search_fn=None, tolerance_grad=0.0, tolerance_change=0.0))
        opt.step(closure)
        for attr in ("func_evals", "n_evals", "evals"):
            if isinstance(getattr(opt, attr, None), int):
                res["evals"] = getattr(opt, attr)
        return W

    def check():
        step()
        loss = float(np.asarray(_tf_loss(tf, W, X)))
        res["final_loss"] = loss
        return {"final_loss": np.asarray(loss), "W": np.array(W.numpy())}

    return Bench(step=step, check=check, finish=lambda: {k: v for k, v in res.items() if v is not None})


def _extract(result):
    """(x, loss) from lbfgs_minimize's result, whatever its form."""
    if isinstance(result, tuple) and len(result) >= 1 and not hasattr(result, "_fields"):
        return result[0], (result[1] if len(result) > 1 else None)
    for xa in ("position", "x", "params", "solution"):
        if hasattr(result, xa):
            x = getattr(result, xa)
            for la in ("objective_value", "loss", "f", "fun", "value"):
                if hasattr(result, la):
                    return x, getattr(result, la)
            return x, None
    return result, None


def _tf_minimize(compiled):
    def build(case, data):
        tf, opts = _tapeflow_optimizers()
        if not hasattr(opts, "lbfgs_minimize"):
            raise Unavailable("tapeflow.optimizers.lbfgs_minimize does not exist yet")
        X = tf.constant(data["X"])
        x0 = tf.constant(data["W"].ravel().copy())

        def value_and_grad(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = _tf_loss(tf, tf.reshape(x, [D, H]), X)
            return loss, tape.gradient(loss, x)

        vg = tf.function(value_and_grad) if compiled else value_and_grad
        kw = _kwargs_for(opts.lbfgs_minimize, max_iter=case["iters"], max_iterations=case["iters"],
                         history_size=HISTORY, num_correction_pairs=HISTORY, lr=LR, learning_rate=LR,
                         line_search_fn=None, tolerance_grad=0.0, tolerance=0.0, tolerance_change=0.0,
                         x_tolerance=0.0, f_relative_tolerance=0.0)
        res = {}

        def step():
            return opts.lbfgs_minimize(vg, x0, **kw)

        def check():
            x, _ = _extract(step())
            W = np.asarray(x.numpy() if hasattr(x, "numpy") else x).reshape(D, H)
            loss = float(np_value_and_grad(W.astype(np.float64), data["X"].astype(np.float64))[0])
            res["final_loss"] = loss
            return {"final_loss": np.asarray(loss), "W": W}

        return Bench(step=step, check=check, finish=lambda: dict(res),
                     note="keywords passed: " + ", ".join(sorted(kw)))

    return build


IMPLS = [
    Impl("numpy", "numpy", "NumPy (port of torch's L-BFGS)", build_numpy),
    Impl("tapeflow_lbfgs", "tapeflow", "tapeflow.optimizers.LBFGS (closure)", build_tapeflow_closure),
    Impl("tapeflow_minimize", "tapeflow", "tapeflow.optimizers.lbfgs_minimize (eager value_and_grad)",
         _tf_minimize(False)),
    Impl("tapeflow_minimize_fn", "tapeflow", "tapeflow.optimizers.lbfgs_minimize (tf.function value_and_grad)",
         _tf_minimize(True)),
    Impl("torch", "torch", "PyTorch torch.optim.LBFGS", build_torch),
]
