"""Shared helpers for the core test suite: float64 finite-difference checks of
first- and second-order gradients, and small conversion utilities.

The gradient checks work along random directions (one scalar comparison per
check) so they are cheap for any input size:

* first order:  <grad_x (w . f(x)), v>  vs  (phi(x + eps v) - phi(x - eps v)) / 2 eps,
  with phi(x) = w . f(x) for a random output cotangent w and direction v;
* second order: h(x) = <grad_x (w . f(x)), v> is computed with a tape, then
  differentiated again by an outer tape along a second direction u, and
  compared with the central difference of h (i.e. of the first-order
  gradient) along u.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.util.cache import cache_dir


# -- a private cache directory -----------------------------------------------------

@pytest.fixture(scope="session", autouse=True)
def _private_cache_dir(tmp_path_factory):
    """TAPEFLOW_CACHE_DIR for the session (subprocesses inherit it): the BLAS thread
    decisions (blas_threads.json) of the user's earlier runs must not steer tests, nor
    the tests' decisions their runs. The compiled numba kernels stay shared through a
    link (they are keyed by source and cost seconds each to build)."""
    old = os.environ.get("TAPEFLOW_CACHE_DIR")
    d = tmp_path_factory.mktemp("tapeflow-cache")
    numba_dir = os.path.join(cache_dir(), "numba")  # (the user's, before the override below)
    try:
        os.makedirs(numba_dir, exist_ok=True)
        os.symlink(numba_dir, d / "numba")
    except OSError:  # no shared numba cache: kernels are compiled into the private one
        pass
    os.environ["TAPEFLOW_CACHE_DIR"] = str(d)
    yield
    if old is None:
        os.environ.pop("TAPEFLOW_CACHE_DIR", None)
    else:
        os.environ["TAPEFLOW_CACHE_DIR"] = old


# -- conversions -----------------------------------------------------------------

def subprocess_env(**extra):
    """The environment for a child ``python -m tapeflow...``: it imports the same tapeflow
    as this test process (the checkout under test, not whatever the venv's install points
    to), plus ``extra``."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(tf.__file__)))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, **extra)


def np_of(x):
    """A tapeflow value (or nested list of them) as NumPy."""
    if isinstance(x, (list, tuple)):
        return [np_of(v) for v in x]
    if isinstance(x, tf.Tensor):
        return np.asarray(x.numpy())
    return np.asarray(x)


def assert_close(actual, expected, rtol=1e-6, atol=1e-7, dtype=True, msg=""):
    a = np_of(actual)
    e = np.asarray(expected)
    assert a.shape == e.shape, f"{msg} shape {a.shape} != expected {e.shape}"
    if dtype:
        assert a.dtype == e.dtype, f"{msg} dtype {a.dtype} != expected {e.dtype}"
    if a.dtype.kind in "biu" or a.dtype.kind == "O":
        np.testing.assert_array_equal(a, e, err_msg=msg)
    else:
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=msg)


# -- gradients through tapes -------------------------------------------------------------

def _zero_none(gs, xs):
    return [np.zeros_like(x) if g is None else np_of(g) for g, x in zip(gs, xs)]


def tape_grad(f, xs, w, wrt):
    """Gradient of sum(w * f(x)) w.r.t. xs[i] for i in wrt, as NumPy arrays."""
    ts = [_const(x) for x in xs]
    with tf.GradientTape() as tape:
        for i in wrt:
            tape.watch(ts[i])
        y = f(*ts)
        phi = tf.reduce_sum(y * tf.constant(w))
    gs = tape.gradient(phi, [ts[i] for i in wrt])
    out = []
    for g, i in zip(gs, wrt):
        if g is not None:
            assert tuple(g.shape) == xs[i].shape, f"gradient shape {tuple(g.shape)} != input {xs[i].shape}"
            assert g.dtype == xs[i].dtype, f"gradient dtype {g.dtype} != input {xs[i].dtype}"
        out.append(g)
    return _zero_none(out, [xs[i] for i in wrt])


def _phi(f, xs, w):
    return float(np.sum(np_of(f(*[_const(x) for x in xs])) * w))


def _shift(xs, wrt, dirs, eps):
    out = list(xs)
    for i, d in zip(wrt, dirs):
        out[i] = np.asarray(xs[i] + eps * d)
    return out


def _const(x):
    return tf.constant(np.asarray(x)) if isinstance(x, (np.ndarray, np.generic)) else x


def _close(a, n, rtol, atol):
    return abs(a - n) <= atol + rtol * max(abs(a), abs(n))


def check_grads(f, xs, *, wrt=None, order=2, eps=1e-5, rtol=1e-5, atol=1e-7, seed=0):
    """Check f's gradients (first and, if order >= 2, second order) against
    central finite differences in float64 along random directions.

    f: tapeflow tensors -> tensor; xs: NumPy arguments (float64 ones are
    differentiated unless ``wrt`` lists the indices).
    """
    xs = [np.asarray(x) if not isinstance(x, np.ndarray) else x for x in xs]
    if wrt is None:
        wrt = [i for i, x in enumerate(xs) if x.dtype == np.float64]
    wrt = list(wrt)
    rng = np.random.default_rng(seed)
    y = np_of(f(*[tf.constant(x) for x in xs]))
    assert y.dtype == np.float64, f"check_grads needs a float64 output, got {y.dtype}"
    w = rng.standard_normal(y.shape)
    v = [rng.standard_normal(xs[i].shape) for i in wrt]
    u = [rng.standard_normal(xs[i].shape) for i in wrt]

    # -- first order
    g = tape_grad(f, xs, w, wrt)
    analytic = sum(float(np.sum(gi * vi)) for gi, vi in zip(g, v))
    numeric = (_phi(f, _shift(xs, wrt, v, eps), w) - _phi(f, _shift(xs, wrt, v, -eps), w)) / (2 * eps)
    assert _close(analytic, numeric, rtol, atol), \
        f"first-order gradient: tape {analytic!r} vs finite differences {numeric!r}"
    if order < 2:
        return

    # -- second order: differentiate h(x) = <grad phi(x), v> again with an outer tape
    def h_value(xs_):
        gi = tape_grad(f, xs_, w, wrt)
        return sum(float(np.sum(a * b)) for a, b in zip(gi, v))

    ts = [tf.constant(x) for x in xs]
    with tf.GradientTape() as outer:
        for i in wrt:
            outer.watch(ts[i])
        with tf.GradientTape() as inner:
            for i in wrt:
                inner.watch(ts[i])
            phi = tf.reduce_sum(f(*ts) * tf.constant(w))
        gs = inner.gradient(phi, [ts[i] for i in wrt],
                            unconnected_gradients=tf.UnconnectedGradients.ZERO)
        h = tf.add_n([tf.reduce_sum(gi * tf.constant(vi)) for gi, vi in zip(gs, v)])
    hg = outer.gradient(h, [ts[i] for i in wrt], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    analytic2 = sum(float(np.sum(np_of(a) * b)) for a, b in zip(hg, u))
    numeric2 = (h_value(_shift(xs, wrt, u, eps)) - h_value(_shift(xs, wrt, u, -eps))) / (2 * eps)
    assert _close(analytic2, numeric2, rtol * 10, atol * 10), \
        f"second-order gradient: tape {analytic2!r} vs finite differences of the gradient {numeric2!r}"


def numeric_jacobian(fn, x, eps=1e-6):
    """d fn(x)[i...] / d x[j...] by central differences (fn: ndarray -> ndarray)."""
    x = np.asarray(x, np.float64)
    y0 = np.asarray(fn(x))
    jac = np.zeros(y0.shape + x.shape)
    for j in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[j] = eps
        jac[(Ellipsis,) + j] = (np.asarray(fn(x + d)) - np.asarray(fn(x - d))) / (2 * eps)
    return jac


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def fused_tier(step, *args):
    """``(fn, cf)``: ``tf.function(step)`` called once with ``args``, its concrete function
    moved to the fused (second) tier now rather than after the usual number of calls."""
    fn = tf.function(step)
    fn(*args)
    cf = fn.get_concrete_function(*args)
    cf._tier_up()
    assert cf.backend == "python+fused"
    return fn, cf


def moment_update(z, W, m):
    """The in-place tests' update, traced inside their steps: a GEMM reads ``W``, a momentum
    ``m`` takes the gradient-like product, ``W`` steps by it (one fused loop writes both).
    Returns ``(h, y)``, the hidden value and the product before the update."""
    h = tf.sigmoid(z * 2.0 + 1.0)
    y = tf.matmul(h, W)
    g = tf.matmul(tf.transpose(h), y * y * 0.5 + y)
    m.assign(0.9 * m + 0.1 * g)
    W.assign_sub(0.01 * m / (tf.sqrt(m * m) + 1.0))
    return h, y


def eval_graph_with(graph, target, traced, z):
    """The reference interpreter on ``graph`` (traced on ``traced``'s variables), run on
    ``target``'s: their arrays are swapped in for the call (and the new ones handed back)."""
    from tapeflow.ir.interpreter import eval_graph
    saved = [v._v for v in traced]
    for v, t in zip(traced, target):
        v._v = t._v
    try:
        return np.asarray(eval_graph(graph, [z])[0])
    finally:
        for v, t, s in zip(traced, target, saved):
            t._v, v._v = v._v, s


def same_start(states):
    """Gives every variable list in ``states[1:]`` the values of ``states[0]`` (the
    in-place tests run one step on the first, then compare the others from the same
    start); returns those values."""
    start = [v.numpy().copy() for v in states[0]]
    for vs in states[1:]:
        for v, s in zip(vs, start):
            v.assign(s)
    return start
