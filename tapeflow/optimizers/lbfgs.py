"""L-BFGS: PyTorch's ``torch.optim.LBFGS`` algorithm, step for step.

L-BFGS's outer loop is host-side logic on flat NumPy vectors; only the
objective (value and gradient) is tapeflow code, which may be a compiled
``tapeflow.function``. The curvature history is kept in two preallocated
(history_size, n) matrices S and Y used as a ring buffer, so the two-loop
recursion is one dot product and one axpy of length n per stored pair (it
is inherently sequential over the pairs), with no per-step allocation that
grows with the history. With numba installed the recursion runs as one native
function that fuses each pair's update with the next pair's dot product
(``_two_loop_kernel``: one pass over memory per pair where NumPy makes four).

Two interfaces:

``LBFGS(var_list, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
tolerance_change=1e-9, history_size=100, line_search_fn=None)`` and
``opt.step(closure)``, as PyTorch. The closure re-evaluates the objective
at the variables' current values and returns either

* the loss tensor -- the optimizer then runs it under a GradientTape and
  differentiates it with respect to ``var_list``; or
* ``(loss, grads)`` with ``grads`` matching ``var_list`` (e.g. from a
  compiled ``tapeflow.function`` that uses a tape inside) -- used as given.

``step`` returns the loss of the first evaluation (as PyTorch) and leaves the
variables at the new point; the history persists across ``step`` calls.

``lbfgs_minimize(value_and_gradients_function, initial_position, ...)`` is the
functional form: it runs one such step of up to ``max_iterations`` iterations
(strong-Wolfe line search by default) from ``initial_position`` and returns an
``LBFGSResult`` (position, objective_value, objective_gradient,
num_iterations, num_objective_evaluations, converged, failed).

Arithmetic is done in the variables' dtype (float32 for float32 variables),
with the same operations in the same order as PyTorch, so losses agree with
``torch.optim.LBFGS`` to float32 rounding.

A compiled objective should be ``tapeflow.function(..., jit_compile=True)``: L-BFGS
forms its curvature pairs from differences of gradients at nearby points, where
rounding that is the same in both calls cancels; a function that moves to the fused
tier between two evaluations changes its rounding (float32 sums over a large batch
in NumPy's row order, then in float64), and that difference does not cancel
(examples/lbfgs_autoencoder.py: the 60k case's third loss 0.045 from the float64 run
with the tier-up inside the run, 6.6e-4 on one tier; PyTorch 6e-4).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core.tensor import Tensor, Variable, convert_to_tensor

__all__ = ["LBFGS", "lbfgs_minimize", "LBFGSResult"]


# -- line search (a transcription of torch/optim/lbfgs.py) ------------------------------------------

def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    with np.errstate(all="ignore"):
        d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
        d2_square = d1 ** 2 - g1 * g2
        if d2_square >= 0:
            d2 = np.sqrt(d2_square)
            if x1 <= x2:
                min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
            else:
                min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
            return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = [t_prev, t]
            bracket_f = [f_prev, f_new]
            bracket_g = [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = [t]
            bracket_f = [f_new]
            bracket_g = [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket = [t_prev, t]
            bracket_f = [f_prev, f_new]
            bracket_g = [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev = tmp
        f_prev = f_new
        g_prev = g_new.copy()
        gtd_prev = gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    if ls_iter == max_ls:
        bracket = [0, t]
        bracket_f = [f, f_new]
        bracket_g = [g, g_new]

    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1],
                               bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos] = t
            bracket_f[high_pos] = f_new
            bracket_g[high_pos] = g_new.copy()
            bracket_gtd[high_pos] = gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos] = bracket[low_pos]
                bracket_f[high_pos] = bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos] = t
            bracket_f[low_pos] = f_new
            bracket_g[low_pos] = g_new.copy()
            bracket_gtd[low_pos] = gtd_new

    t = bracket[low_pos]
    f_new = bracket_f[low_pos]
    g_new = bracket_g[low_pos]
    return f_new, g_new, t, ls_func_evals


# -- the history and the two-loop recursion ---------------------------------------------------------

class _History:
    """(s, y, 1/y.s) pairs in preallocated (m, n) matrices used as a ring."""

    def __init__(self, m, n, dtype):
        self.m = int(m)
        # np.empty: pages are only touched (committed) as rows are written
        self.S = np.empty((self.m, n), dtype)
        self.Y = np.empty((self.m, n), dtype)
        self.ro = np.empty(self.m, dtype)
        self.al = np.empty(self.m, dtype)
        self.tmp = np.empty(n, dtype)
        self.start = 0
        self.count = 0

    def clear(self):
        self.start = 0
        self.count = 0

    def push(self, s, y, ro):
        if self.count == self.m:
            j = self.start
            self.start = (self.start + 1) % self.m
        else:
            j = (self.start + self.count) % self.m
            self.count += 1
        self.S[j] = s
        self.Y[j] = y
        self.ro[j] = ro

    def direction(self, flat_grad, H_diag):
        """-H g by the two-loop recursion (torch's order of operations)."""
        S, Y, ro, al, tmp = self.S, self.Y, self.ro, self.al, self.tmp
        num = self.count
        idx = [(self.start + i) % self.m for i in range(num)]
        kernel = _two_loop_kernel() if num else None
        if kernel is not None:
            r = np.empty_like(flat_grad)
            kernel(S, Y, ro, np.array(idx, np.int64), al[:num], np.ascontiguousarray(flat_grad),
                   S.dtype.type(H_diag), r)
            return r
        q = np.negative(flat_grad)
        for i in range(num - 1, -1, -1):
            j = idx[i]
            a = S[j].dot(q) * ro[j]
            al[i] = a
            np.multiply(Y[j], -a, out=tmp)
            q += tmp
        r = np.multiply(q, H_diag, out=q) if not isinstance(H_diag, int) else q
        for i in range(num):
            j = idx[i]
            be_i = Y[j].dot(r) * ro[j]
            np.multiply(S[j], al[i] - be_i, out=tmp)
            r += tmp
        return r


_KERNEL = []


def _two_loop_kernel():
    """The two-loop recursion as one native function (None without numba).

    It is memory-bound: S and Y (history x n) are far larger than the caches,
    and NumPy spends a pass for each dot, each scaled copy and each add. Here
    each pass over memory fuses a pair's update with the next pair's dot
    product (the recursion's only dependence), so S and Y are each read once
    per loop and q / r once per pair. Dot products accumulate in float64 and
    are rounded to the vectors' dtype (float32 products as torch's, within
    float32 rounding of its BLAS sums); updates stay in that dtype."""
    if not _KERNEL:
        try:
            from numba import njit
        except ImportError:
            _KERNEL.append(None)
            return None

        # reassoc lets LLVM vectorize the float64 dot sums (split into lanes: any order is far
        # more accurate than a float32 sum); the updates are one multiply-add per element,
        # which reassociation cannot reorder; contract fuses them (as torch's add_(alpha=) does)
        @njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})
        def two_loop(S, Y, ro, idx, al, g, h_diag, r):
            n = g.size
            num = idx.size
            dt = g.dtype.type
            q = r  # q is built in r's memory, then scaled into r in place
            acc = 0.0
            j = idx[num - 1]
            for k in range(n):
                q[k] = -g[k]
                acc += np.float64(S[j, k]) * q[k]
            for i in range(num - 1, -1, -1):
                j = idx[i]
                a = dt(dt(acc) * ro[j])
                al[i] = a
                acc = 0.0
                if i > 0:
                    jn = idx[i - 1]
                    for k in range(n):
                        q[k] = q[k] + (-a) * Y[j, k]
                        acc += np.float64(S[jn, k]) * q[k]
                else:
                    j0 = idx[0]
                    for k in range(n):
                        q[k] = (q[k] + (-a) * Y[j, k]) * h_diag
                        acc += np.float64(Y[j0, k]) * q[k]
            for i in range(num):
                j = idx[i]
                be = dt(dt(acc) * ro[j])
                c = dt(al[i] - be)
                acc = 0.0
                if i + 1 < num:
                    jn = idx[i + 1]
                    for k in range(n):
                        r[k] = r[k] + c * S[j, k]
                        acc += np.float64(Y[jn, k]) * r[k]
                else:
                    for k in range(n):
                        r[k] = r[k] + c * S[j, k]

        _KERNEL.append(two_loop)
    return _KERNEL[0]


class _State:
    def __init__(self):
        self.func_evals = 0
        self.n_iter = 0
        self.d = None
        self.t = None
        self.hist = None
        self.H_diag = None
        self.prev_flat_grad = None
        self.prev_loss = None


def _axpy_inplace(x, t, d):
    """x += t * d in x's dtype (torch: p.add_(d, alpha=t))."""
    np.add(x, np.multiply(d, t, dtype=x.dtype, casting="same_kind"), out=x, casting="same_kind")


def _run(st, x, func, lr, max_iter, max_eval, tolerance_grad, tolerance_change, history_size, line_search_fn):
    """One call of torch's LBFGS.step on the flat point ``x`` (updated in place).

    ``func(x) -> (loss, loss_as_float, flat_grad)``. Returns (first loss, reason)."""
    orig_loss, loss, flat_grad = func(x)
    current_evals = 1
    st.func_evals += 1
    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
    if opt_cond:
        return orig_loss, "tolerance_grad"

    d, t, H_diag = st.d, st.t, st.H_diag
    prev_flat_grad, prev_loss = st.prev_flat_grad, st.prev_loss
    if st.hist is None or st.hist.S.shape[1] != x.size or st.hist.S.dtype != x.dtype:
        st.hist = _History(history_size, x.size, x.dtype)
    hist = st.hist
    reason = "max_iter"
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        st.n_iter += 1
        # descent direction
        if st.n_iter == 1:
            d = np.negative(flat_grad)
            hist.clear()
            H_diag = 1
        else:
            y = flat_grad - prev_flat_grad
            s = d * t if not isinstance(t, (float, int)) else np.multiply(d, t, dtype=d.dtype,
                                                                            casting="same_kind")
            ys = y.dot(s)
            if ys > 1e-10:
                hist.push(s, y, 1.0 / ys)
                H_diag = ys / y.dot(y)
            d = hist.direction(flat_grad, H_diag)
        if prev_flat_grad is None:
            prev_flat_grad = flat_grad.copy()
        else:
            prev_flat_grad[...] = flat_grad
        prev_loss = loss
        # step length
        if st.n_iter == 1:
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
        else:
            t = lr
        gtd = flat_grad.dot(d)
        if gtd > -tolerance_change:
            reason = "tolerance_change"
            break
        ls_func_evals = 0
        if line_search_fn is not None:
            if line_search_fn != "strong_wolfe":
                raise ValueError(f"LBFGS: only line_search_fn='strong_wolfe' (or None) is supported, got "
                                 f"{line_search_fn!r}")
            x_init = x.copy()

            def obj_func(x0, tt, dd):
                xt = x0.copy()
                _axpy_inplace(xt, tt, dd)
                _, fv, gv = func(xt)
                return fv, gv
            loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                              max_ls=max_eval - current_evals)
            x[...] = x_init
            _axpy_inplace(x, t, d)
            opt_cond = np.abs(flat_grad).max() <= tolerance_grad
        else:
            _axpy_inplace(x, t, d)
            if n_iter != max_iter:
                _, loss, flat_grad = func(x)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                ls_func_evals = 1
        current_evals += ls_func_evals
        st.func_evals += ls_func_evals
        # stopping conditions
        if n_iter == max_iter:
            reason = "max_iter"
            break
        if current_evals >= max_eval:
            reason = "max_eval"
            break
        if opt_cond:
            reason = "tolerance_grad"
            break
        if np.abs(d * t).max() <= tolerance_change:
            reason = "tolerance_change"
            break
        if abs(loss - prev_loss) < tolerance_change:
            reason = "tolerance_change"
            break

    st.d, st.t, st.H_diag = d, t, H_diag
    st.prev_flat_grad, st.prev_loss = prev_flat_grad, prev_loss
    return orig_loss, reason


def _is_compiled(fn):
    t = type(fn)
    return t.__name__ == "Function" and t.__module__.startswith("tapeflow.")


def _np(x):
    if isinstance(x, Tensor):
        return np.asarray(x.numpy())
    return np.asarray(x)


class LBFGS:
    """PyTorch's L-BFGS over ``var_list`` (see the module docstring)."""

    def __init__(self, var_list, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        var_list = list(var_list() if callable(var_list) else var_list)
        if not var_list:
            raise ValueError("LBFGS: var_list is empty")
        for v in var_list:
            if not isinstance(v, Variable):
                raise TypeError(f"LBFGS: var_list must hold Variables, got {type(v).__name__}")
        dts = {v.dtype.as_numpy_dtype for v in var_list}
        if len(dts) != 1 or np.dtype(next(iter(dts))).kind != "f":
            raise TypeError(f"LBFGS: all variables must share one floating dtype, got {sorted(map(str, dts))}")
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}")
        self.var_list = var_list
        self.lr = float(lr)
        self.max_iter = int(max_iter)
        self.max_eval = int(max_eval) if max_eval is not None else self.max_iter * 5 // 4
        self.tolerance_grad = tolerance_grad
        self.tolerance_change = tolerance_change
        self.history_size = int(history_size)
        self.line_search_fn = line_search_fn
        self.dtype = np.dtype(next(iter(dts)))
        self._sizes = [int(np.prod(v.shape)) for v in var_list]
        self._shapes = [tuple(v.shape) for v in var_list]
        self.state = _State()
        self._returns_grads = None
        self.last_reason = None

    @property
    def n_iter(self):
        return self.state.n_iter

    @property
    def func_evals(self):
        return self.state.func_evals

    def _flat_params(self):
        return np.concatenate([np.asarray(v.numpy(), self.dtype).ravel() for v in self.var_list])

    def _set_params(self, x):
        off = 0
        for v, n, s in zip(self.var_list, self._sizes, self._shapes):
            v.assign(x[off:off + n].reshape(s))
            off += n

    def _flat_grads(self, grads):
        grads = list(grads)
        if len(grads) != len(self.var_list):
            raise ValueError(f"LBFGS: the closure returned {len(grads)} gradients for {len(self.var_list)} "
                             "variables")
        parts = []
        for g, n in zip(grads, self._sizes):
            parts.append(np.zeros(n, self.dtype) if g is None else np.asarray(_np(g), self.dtype).ravel())
        return np.concatenate(parts)

    def _evaluate(self, closure):
        from ..autodiff.tape import GradientTape
        if self._returns_grads is None and _is_compiled(closure):
            # a compiled closure: no tape around it (under a tape it would run
            # eagerly); it should return (loss, grads)
            out = closure()
            self._returns_grads = isinstance(out, (tuple, list)) and len(out) == 2
            if self._returns_grads:
                loss, grads = out
                return loss, float(_np(loss)), self._flat_grads(grads)
        if self._returns_grads:
            out = closure()
        else:
            with GradientTape(watch_accessed_variables=False) as tape:
                tape.watch(self.var_list)
                out = closure()
            if self._returns_grads is None:
                self._returns_grads = isinstance(out, (tuple, list)) and len(out) == 2
        if isinstance(out, (tuple, list)) and len(out) == 2:
            loss, grads = out
        else:
            loss = out
            grads = tape.gradient(loss, self.var_list)
        return loss, float(_np(loss)), self._flat_grads(grads)

    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; returns the first loss."""
        x = self._flat_params()

        def func(xv):
            self._set_params(xv)
            return self._evaluate(closure)
        try:
            orig_loss, reason = _run(self.state, x, func, self.lr, self.max_iter, self.max_eval,
                                     self.tolerance_grad, self.tolerance_change, self.history_size,
                                     self.line_search_fn)
        finally:
            self._set_params(x)
        self.last_reason = reason
        return orig_loss


class LBFGSResult(NamedTuple):
    converged: bool
    failed: bool
    num_iterations: int
    num_objective_evaluations: int
    position: object
    objective_value: object
    objective_gradient: object
    reason: str


def lbfgs_minimize(value_and_gradients_function, initial_position, max_iterations=100, max_evaluations=None,
                   history_size=100, tolerance_grad=1e-7, tolerance_change=1e-9, lr=1.0,
                   line_search_fn="strong_wolfe", num_correction_pairs=None, tolerance=None):
    """Minimize ``f`` from ``initial_position`` with PyTorch's L-BFGS.

    ``value_and_gradients_function(x) -> (value, gradient)``: ``x`` is a
    Tensor shaped like ``initial_position`` (its dtype: float32 or float64);
    build one from a plain ``f`` with ``tapeflow.value_and_grad(f)``.
    ``num_correction_pairs`` / ``tolerance`` are TFP-style aliases of
    ``history_size`` / ``tolerance_grad``. ``converged`` is True when a
    tolerance was met (gradient or change), False when an iteration or
    evaluation limit stopped the search; ``failed`` when the objective or
    position is not finite.
    """
    if num_correction_pairs is not None:
        history_size = num_correction_pairs
    if tolerance is not None:
        tolerance_grad = tolerance
    x0 = _np(initial_position)
    if x0.dtype.kind != "f":
        x0 = x0.astype(np.float32)
    shape, dtype = x0.shape, x0.dtype
    x = x0.astype(dtype, copy=True).ravel()
    max_eval = int(max_evaluations) if max_evaluations is not None else int(max_iterations) * 5 // 4
    last = {}

    def func(xv):
        v, g = value_and_gradients_function(convert_to_tensor(xv.reshape(shape).copy()))
        fv = float(_np(v))
        gv = np.asarray(_np(g), dtype).ravel()
        last["x"], last["f"], last["g"] = xv.copy(), fv, gv
        return v, fv, gv

    st = _State()
    _, reason = _run(st, x, func, float(lr), int(max_iterations), max_eval, tolerance_grad, tolerance_change,
                     int(history_size), line_search_fn)
    if "x" not in last or not np.array_equal(last["x"], x):
        func(x)
        st.func_evals += 1
    f, g = last["f"], last["g"]
    failed = not (np.isfinite(f) and np.all(np.isfinite(x)))
    converged = reason in ("tolerance_grad", "tolerance_change") and not failed
    return LBFGSResult(converged=converged, failed=failed, num_iterations=st.n_iter,
                       num_objective_evaluations=st.func_evals,
                       position=convert_to_tensor(x.reshape(shape).copy()),
                       objective_value=convert_to_tensor(np.asarray(f, dtype)),
                       objective_gradient=convert_to_tensor(g.reshape(shape).copy()), reason=reason)
