"""L-BFGS: PyTorch's algorithm (tapeflow.optimizers.LBFGS / lbfgs_minimize).

Reference losses below were computed with torch 2.13.0's torch.optim.LBFGS
on the same seeded data (the ``_data`` generator, shared with the torch
script). Float64 runs agree with torch to ~1e-12 for every evaluation, with
and without line search: the algorithm is the same step for step.

Float32 runs agree to float32 rounding for the first iterations; after that
any two float32 implementations drift apart: on this problem a 2e-7 relative
perturbation of the gradient (what reordering one float32 sum does) grows to
1e-5 after ~12 evaluations and 1e-3 after ~50, *for torch against itself*
too. So the float32 comparisons cover the first step of 10 iterations and
the long comparisons are in float64.
"""
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.optimizers import lbfgs as LB


def _data(n_in, n_hid, batch, seed):
    rng = np.random.default_rng(seed)
    X = (rng.random((batch, n_in)) < 0.3).astype(np.float32) * rng.random((batch, n_in)).astype(np.float32)
    W0 = (rng.standard_normal((n_in, n_hid)) * 0.1).astype(np.float32)
    return X, W0


def _autoencoder_losses(n_in, n_hid, batch, seed, steps, max_iter, dtype, ls=None, history=100,
                        closure_returns_grads=False):
    X, W0 = _data(n_in, n_hid, batch, seed)
    Xt = tf.constant(X.astype(dtype))
    W = tf.Variable(W0.astype(dtype))
    opt = tf.optimizers.LBFGS([W], lr=1, max_iter=max_iter, history_size=history, line_search_fn=ls)
    losses = []

    def loss_fn():
        out = tf.sigmoid(tf.matmul(tf.sigmoid(tf.matmul(Xt, W)), W, transpose_b=True))
        return tf.reduce_mean(tf.square(out - Xt))

    def closure():
        if closure_returns_grads:
            with tf.GradientTape() as tape:
                loss = loss_fn()
            g = tape.gradient(loss, [W])
            losses.append(float(loss))
            return loss, g
        loss = loss_fn()
        losses.append(float(loss))
        return loss

    firsts = [float(opt.step(closure)) for _ in range(steps)]
    return np.array(losses), firsts, W, opt


# torch.optim.LBFGS, 64-16 autoencoder, batch 20, seed 0, lr 1, history 100
TORCH_F64_2x20 = [
    0.20362493674794963, 0.2021275558234236, 0.1270849025311529, 0.11223383836842031, 0.10149340983736285,
    0.08829383249463067, 0.06735971556686789, 0.045604599617672756, 0.03403439188359779, 0.027016625562706703,
    0.021944734766024966, 0.018859799759177443, 0.016489963979177784, 0.013184508058771314, 0.011918105501634493,
    0.010984924052532912, 0.010045767413468692, 0.009084617119176247, 0.008166381398877714, 0.007596772971020199,
    0.007012835879616387, 0.006646376973380892, 0.006349756060567724, 0.006051675794324779, 0.0058933650955959715,
    0.005745173503510115, 0.005654008239415881, 0.005531655842334864, 0.0054061577578012835, 0.005283578207905601,
    0.005222782242170461, 0.005143646381223867, 0.005070065999010111, 0.005012495136058907, 0.004972591930808587,
    0.004944989817444046, 0.004901648645338308, 0.004854378602144145, 0.004817156750458124, 0.0047872122331834265]
TORCH_F32_1x10 = [
    0.2036249190568924, 0.20212754607200623, 0.1270848661661148, 0.11223383247852325, 0.10149339586496353,
    0.08829377591609955, 0.0673597902059555, 0.045604705810546875, 0.03403447940945625, 0.027016624808311462]
TORCH_F64_WOLFE_2x10 = [
    0.20362493674794963, 0.2021275558234236, 0.189483012975419, 0.12617644850532309, 0.11133079569737406,
    0.1009792531821047, 0.08668444424918788, 0.06760640848040636, 0.045814802489125374, 0.03409184720927348,
    0.02696151078994722, 0.02175764932991228, 0.02175764932991228, 0.018218368148650455, 0.01584246436436407,
    0.013649116869834842, 0.012131684798666897, 0.011124138746900129, 0.010291232309603476,
    0.009694569717555113, 0.008965585979109462, 0.008046963011225526, 0.009285956212605147, 0.007700869377629381]


def test_matches_torch_float64_every_evaluation():
    losses, firsts, _, opt = _autoencoder_losses(64, 16, 20, 0, steps=2, max_iter=20, dtype="float64")
    assert len(losses) == len(TORCH_F64_2x20)
    np.testing.assert_allclose(losses, TORCH_F64_2x20, rtol=1e-9)
    # step() returns the loss of its first evaluation, as PyTorch
    np.testing.assert_allclose(firsts, [TORCH_F64_2x20[0], TORCH_F64_2x20[20]], rtol=1e-9)
    assert opt.n_iter == 40 and opt.func_evals == 40


def test_matches_torch_float32_first_step():
    losses, _, W, _ = _autoencoder_losses(64, 16, 20, 0, steps=1, max_iter=10, dtype="float32")
    assert W.dtype == tf.float32
    np.testing.assert_allclose(losses, TORCH_F32_1x10, rtol=1e-5)


def test_matches_torch_strong_wolfe_float64():
    losses, _, _, _ = _autoencoder_losses(64, 16, 20, 0, steps=2, max_iter=10, dtype="float64",
                                          ls="strong_wolfe")
    np.testing.assert_allclose(losses, TORCH_F64_WOLFE_2x10, rtol=1e-9)


def test_closure_may_return_loss_and_grads():
    a, _, Wa, _ = _autoencoder_losses(64, 16, 20, 0, steps=1, max_iter=15, dtype="float64")
    b, _, Wb, _ = _autoencoder_losses(64, 16, 20, 0, steps=1, max_iter=15, dtype="float64",
                                      closure_returns_grads=True)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(Wa.numpy(), Wb.numpy())


def _rosenbrock(x):
    return tf.reduce_sum(100.0 * tf.square(x[1:] - tf.square(x[:-1])) + tf.square(1.0 - x[:-1]))


def test_lbfgs_minimize_rosenbrock():
    x0 = np.array([-1.2, 1.0, -0.5, 0.8], np.float64)
    res = tf.optimizers.lbfgs_minimize(tf.value_and_grad(_rosenbrock), x0, max_iterations=200)
    assert res.converged and not res.failed
    np.testing.assert_allclose(res.position.numpy(), np.ones(4), atol=1e-5)
    assert float(res.objective_value) < 1e-10
    assert res.position.dtype == tf.float64 and res.position.shape == (4,)
    assert 0 < res.num_iterations <= 200
    assert res.num_objective_evaluations >= res.num_iterations
    np.testing.assert_allclose(res.objective_gradient.numpy(), 0, atol=1e-3)


def test_lbfgs_minimize_limits_and_aliases():
    x0 = np.array([-1.2, 1.0], np.float64)
    res = tf.optimizers.lbfgs_minimize(tf.value_and_grad(_rosenbrock), x0, max_iterations=3,
                                       num_correction_pairs=5, tolerance=1e-12)
    assert not res.converged and 1 <= res.num_iterations <= 3 and res.reason in ("max_iter", "max_eval")


def test_lbfgs_class_rosenbrock_matches_torch():
    # torch.optim.LBFGS from (-1.2, 1), float64: with strong Wolfe it stops (tolerance_change)
    # at the point below after 35 iterations and 43 evaluations; without line search,
    # 30 iterations end at the second point.
    x = tf.Variable(np.array([-1.2, 1.0], np.float64))
    opt = tf.optimizers.LBFGS([x], line_search_fn="strong_wolfe", max_iter=100)
    first = opt.step(lambda: _rosenbrock(x))
    assert float(first) == pytest.approx(24.2)
    np.testing.assert_allclose(x.numpy(), [0.9999814210791366, 0.9999619651810989], rtol=1e-10)
    assert (opt.n_iter, opt.func_evals, opt.last_reason) == (35, 43, "tolerance_change")
    y = tf.Variable(np.array([-1.2, 1.0], np.float64))
    opt = tf.optimizers.LBFGS([y], max_iter=30)
    opt.step(lambda: _rosenbrock(y))
    np.testing.assert_allclose(y.numpy(), [0.1977748898554459, 0.04205846830929344], rtol=1e-9)
    assert (opt.n_iter, opt.func_evals) == (30, 30)


def test_lbfgs_errors():
    with pytest.raises(TypeError):
        tf.optimizers.LBFGS([tf.constant(1.0)])
    with pytest.raises(ValueError, match="strong_wolfe"):
        tf.optimizers.LBFGS([tf.Variable(1.0)], line_search_fn="armijo")
    with pytest.raises(ValueError, match="empty"):
        tf.optimizers.LBFGS([])


class _CountingRows(np.ndarray):
    """A history matrix whose rows count the dot products taken with them."""
    dots = [0]

    def dot(self, other, out=None):
        _CountingRows.dots[0] += 1
        return np.asarray(self).dot(other)


def test_two_loop_cost_does_not_grow_past_the_history(monkeypatch):
    """The history is a ring buffer in preallocated (m, n) matrices: once full,
    pushing more pairs neither allocates nor adds work to the recursion (it
    takes 2 dot products per stored pair, however many were pushed), and it
    keeps the newest m pairs, oldest first. Dot products are counted on the
    NumPy recursion (the one used without numba); the native one is checked
    against it below."""
    monkeypatch.setattr(LB, "_KERNEL", [None])
    n, m = 2000, 20
    h = LB._History(m, n, np.float32)
    h.S, h.Y = h.S.view(_CountingRows), h.Y.view(_CountingRows)
    rng = np.random.default_rng(0)
    g = rng.standard_normal(n).astype(np.float32)
    S0, Y0 = h.S, h.Y
    pushed = []

    def push_and_count(k):
        for _ in range(k):
            s = rng.standard_normal(n).astype(np.float32)
            pushed.append(s)
            h.push(s, s * 2.0, np.float32(0.5 / s.dot(s)))
        _CountingRows.dots[0] = 0
        h.direction(g, np.float32(0.5))
        return _CountingRows.dots[0]
    assert push_and_count(m // 2) == 2 * (m // 2)
    assert push_and_count(m // 2) == 2 * m
    assert push_and_count(5 * m + 3) == 2 * m
    assert h.count == m and h.S is S0 and h.Y is Y0
    ring = [np.asarray(h.S[(h.start + i) % m]) for i in range(m)]
    np.testing.assert_array_equal(np.stack(ring), np.stack(pushed[-m:]))
    # with y = 2 s for every pair the inverse Hessian is I/2 on their span: direction = -g/2
    np.testing.assert_allclose(h.direction(g, np.float32(0.5)), -0.5 * g, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_native_two_loop_matches_the_numpy_recursion(dtype, monkeypatch):
    """The fused native two-loop recursion (numba) gives the NumPy recursion's
    direction within the dtype's rounding, with the ring partly filled and
    after it wrapped around, and leaves the same alphas."""
    pytest.importorskip("numba")
    n, m = 3001, 7
    rng = np.random.default_rng(1)
    h = LB._History(m, n, dtype)
    g = rng.standard_normal(n).astype(dtype)
    for pushes in (1, 3, 4, 9):
        for _ in range(pushes):
            s = rng.standard_normal(n).astype(dtype)
            y = (s * rng.uniform(0.5, 2) + 0.3 * rng.standard_normal(n)).astype(dtype)
            h.push(s, y, dtype(1.0 / y.dot(s)))
        monkeypatch.setattr(LB, "_KERNEL", [])
        fast, al_fast = h.direction(g, dtype(0.7)), h.al[:h.count].copy()
        monkeypatch.setattr(LB, "_KERNEL", [None])
        slow, al_slow = h.direction(g, dtype(0.7)), h.al[:h.count].copy()
        eps = np.finfo(dtype).eps
        np.testing.assert_allclose(fast, slow, rtol=0, atol=50 * eps * np.abs(slow).max())
        np.testing.assert_allclose(al_fast, al_slow, rtol=50 * eps)
        assert fast.dtype == dtype


# -- cross-check against torch at full size (784-196), when torch is available -------------------------------

_TORCH_SCRIPT = textwrap.dedent('''
    import json, sys
    import numpy as np, torch
    torch.set_num_threads(1)
    args = json.loads(sys.argv[1])
    rng = np.random.default_rng(args["seed"])
    X = (rng.random((args["batch"], args["n_in"])) < 0.3).astype(np.float32) * \\
        rng.random((args["batch"], args["n_in"])).astype(np.float32)
    W0 = (rng.standard_normal((args["n_in"], args["n_hid"])) * 0.1).astype(np.float32)
    dt = getattr(torch, args["dtype"])
    Xt = torch.tensor(X, dtype=dt); W = torch.nn.Parameter(torch.tensor(W0, dtype=dt))
    opt = torch.optim.LBFGS([W], lr=1, max_iter=args["max_iter"], history_size=100)
    losses = []
    def closure():
        opt.zero_grad()
        out = torch.sigmoid(torch.sigmoid(Xt @ W) @ W.T)
        loss = torch.mean((out - Xt) ** 2)
        loss.backward()
        losses.append(loss.item())
        return loss
    for _ in range(args["steps"]):
        opt.step(closure)
    print(json.dumps(losses))
''')


def _torch_losses(**args):
    try:
        import torch  # noqa: F401
        python = sys.executable
    except ImportError:
        python = os.environ.get("TAPEFLOW_TORCH_PYTHON")
        if not python:
            pytest.skip("torch is not importable (set TAPEFLOW_TORCH_PYTHON to a python with torch)")
    out = subprocess.run([python, "-c", _TORCH_SCRIPT, json.dumps(args)], capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0:
        pytest.skip(f"torch reference failed: {out.stderr[-500:]}")
    return np.array(json.loads(out.stdout))


@pytest.mark.slow
def test_autoencoder_784_196_matches_torch():
    # float64: every evaluation of 2 steps x 20 iterations agrees
    ref = _torch_losses(n_in=784, n_hid=196, batch=100, seed=0, steps=2, max_iter=20, dtype="float64")
    mine, _, _, _ = _autoencoder_losses(784, 196, 100, 0, steps=2, max_iter=20, dtype="float64")
    np.testing.assert_allclose(mine, ref, rtol=1e-9)
    # float32: the first step (10 iterations) agrees to float32 rounding (see the module docstring)
    ref = _torch_losses(n_in=784, n_hid=196, batch=100, seed=0, steps=1, max_iter=10, dtype="float32")
    mine, _, _, _ = _autoencoder_losses(784, 196, 100, 0, steps=1, max_iter=10, dtype="float32")
    np.testing.assert_allclose(mine, ref, rtol=1e-5)


def test_compiled_value_and_grad_closure():
    X, W0 = _data(64, 16, 20, 0)
    Xt = tf.constant(X.astype(np.float64))
    W = tf.Variable(W0.astype(np.float64))

    @tf.function
    def closure():
        with tf.GradientTape() as tape:
            out = tf.sigmoid(tf.matmul(tf.sigmoid(tf.matmul(Xt, W)), W, transpose_b=True))
            loss = tf.reduce_mean(tf.square(out - Xt))
        return loss, tape.gradient(loss, [W])

    opt = tf.optimizers.LBFGS([W], max_iter=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # no "called inside a GradientTape" fallback
        firsts = [float(opt.step(closure)) for _ in range(2)]
    np.testing.assert_allclose(firsts, [TORCH_F64_2x20[0], TORCH_F64_2x20[20]], rtol=1e-9)
    assert closure.experimental_get_tracing_count() == 1
