"""Special functions: lgamma, polygamma (digamma is order 0), erf, erfc, erfinv, igamma/igammac, nextafter.

SciPy is not a dependency, so the kernels are NumPy series and recurrences,
evaluated in float64 (float16/float32 inputs are rounded once at the end, so
their results are the correctly rounded float64 values in almost every case).
Measured against Python's ``math.lgamma`` / ``math.erfc`` (libm quality) and
TF 2.21 (tests/test_special.py); the accuracy of each kernel is stated at its
definition.

Each function is its own primitive rather than a composition: a composition of
tapeflow ops would need per-element branches (the series' regions, the poles)
as ``where`` over every region's value, several times the work, and its
gradient would be the derivative of the approximation rather than of the
function. Each record's vjp is the closed form in tapeflow ops (lgamma' =
digamma, polygamma(n)' = polygamma(n + 1), erf' = -erfc' = 2/sqrt(pi) exp(-x^2),
erfinv' = sqrt(pi)/2 exp(erfinv(x)^2)), so every order of gradient works.

Fusion: none of these has a numba scalar form (the kernels branch by region
and loop a data-dependent number of times), so the records keep the safe
default ``fusion="opaque"``: the fused tier runs the NumPy kernel, with the same
bits as eager.
"""
from __future__ import annotations

import math

import numpy as np

from ..primitive import Primitive, bind, aval_of
from . import _rules
from . import elementwise as E
from ...errors import InvalidArgumentTypeError

_F64 = np.float64


def _as64(x):
    return np.asarray(x, _F64)


def _back(r, x):
    """The float64 result ``r`` in ``x``'s dtype (one rounding), shaped like ``x``."""
    dt = getattr(x, "dtype", None)
    if dt is None or dt.kind != "f":
        dt = np.dtype(np.float32)
    with np.errstate(over="ignore"):   # a float64 value beyond float32's range is inf there, as TF's
        return np.asarray(r, _F64).astype(dt, copy=False)


# -- constants computed once: zeta(k) - 1 and the series of lgamma about 2 ------------------------------

def _zeta_minus_1(k):
    """zeta(k) - 1 = sum_{n >= 2} n^-k to double precision: the sum to n = 99 plus Euler-Maclaurin's
    tail from 100 (integral, half term and five Bernoulli corrections; the next is < 1e-26 for k >= 2;
    from 10 it would be 2.5e-14 for k = 2)."""
    n0 = 100
    s = math.fsum(n ** -k for n in range(2, n0))
    tail = n0 ** (1 - k) / (k - 1) + 0.5 * n0 ** -k
    # B_2j / (2j)! * k (k+1) ... (k+2j-2) * n0^-(k+2j-1)
    for b, j in ((1 / 6, 1), (-1 / 30, 2), (1 / 42, 3), (-1 / 30, 4), (5 / 66, 5)):
        rise = math.prod(range(k, k + 2 * j - 1))
        tail += b / math.factorial(2 * j) * rise * n0 ** -(k + 2 * j - 1)
    return s + tail


_EULER = 0.57721566490153286061
#: lgamma(2 + z) = (1 - gamma) z + sum_{k >= 2} (-1)^k (zeta(k) - 1) / k z^k, |z| <= 1/2: the terms
#: fall like 4^-k / k there, so 28 of them reach 1e-18 (a classic series: Abramowitz & Stegun 6.1.33)
_LG2_COEF = [1 - _EULER] + [(-1) ** k * _zeta_minus_1(k) / k for k in range(2, 30)]


def _lgamma2p(z):
    """lgamma(2 + z) for |z| <= 1/2 (Horner's rule, the smallest terms first)."""
    acc = np.zeros_like(z)
    for c in reversed(_LG2_COEF):
        acc = (acc + c) * z
    return acc


def _lgamma1p(z):
    """lgamma(1 + z) for |z| <= 1/2: lgamma(2 + z) - log(1 + z), exactly 0 at z = 0 (lgamma(1) = 0)."""
    return _lgamma2p(z) - np.log1p(z)


_HALF_LOG_2PI = 0.91893853320467274178


def _stirling(t):
    """lgamma(t) for t >= 10: Stirling's series to 1/t^13 (the next term is < 4e-17 at t = 10)."""
    z = 1.0 / t
    z2 = z * z
    s = z * (1 / 12 + z2 * (-1 / 360 + z2 * (1 / 1260 + z2 * (-1 / 1680 + z2 * (1 / 1188 + z2 * (
        -691 / 360360 + z2 / 156))))))
    with np.errstate(invalid="ignore", over="ignore"):
        r = (t - 0.5) * np.log(t) - t + _HALF_LOG_2PI + s
    return np.where(t == np.inf, np.inf, r)


def _lgamma_pos(t):
    """lgamma(t) for t >= 1/2 (float64 array): the series about 1 on [1/2, 3/2), about 2 on
    [3/2, 5/2), the downward recurrence lgamma(t) = lgamma(t - n) + log((t-1)...(t-n)) to
    [3/2, 5/2) below 10, Stirling from 10. Measured against math.lgamma on 200k points of
    [0.5, 1e6] (tests/test_special.py): within 4e-16 absolute below 2.5 (relative 2e-15
    at the zeros 1 and 2, where both are exactly 0) and 1e-15 relative above."""
    out = np.empty_like(t)
    a = t < 1.5
    out[a] = _lgamma1p(t[a] - 1.0)
    b = (t >= 1.5) & (t < 2.5)
    out[b] = _lgamma2p(t[b] - 2.0)
    c = (t >= 2.5) & (t < 10.0)
    if c.any():
        tc = t[c]
        n = np.floor(tc - 1.5)                  # tc - n in [1.5, 2.5): exact (tc < 10, n an integer)
        prod = np.ones_like(tc)
        for j in range(1, 9):
            prod = np.where(n >= j, prod * (tc - j), prod)
        out[c] = _lgamma2p(tc - n - 2.0) + np.log(prod)
    d = t >= 10.0
    out[d] = _stirling(t[d])
    return out


def _sinpi_abs(x):
    """|sin(pi x)| with the argument reduced first (x - round(x) is exact), so large |x| keep
    their accuracy: sin(pi * 1e10) in one step would be sin of a rounded multiple of pi."""
    r = x - np.round(x)
    return np.abs(np.sin(np.pi * r))


def _lgamma64(x):
    x = _as64(x)
    shape = x.shape
    x = x.reshape(-1)
    out = np.full(x.shape, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        pole = (x <= 0) & (np.floor(x) == x)            # 0, -1, -2, ..., and -inf: inf, as TF
        out[pole] = np.inf
        small = (np.abs(x) < 0.5) & ~pole               # lgamma(x) = lgamma(1 + x) - log|x|, z = x exact
        out[small] = _lgamma1p(x[small]) - np.log(np.abs(x[small]))
        pos = x >= 0.5
        out[pos] = _lgamma_pos(x[pos])
        neg = (x <= -0.5) & ~pole                       # reflection: log(pi / |sin(pi x)|) - lgamma(1 - x)
        xn = x[neg]
        out[neg] = np.log(np.pi / _sinpi_abs(xn)) - _lgamma_pos(1.0 - xn)
    return out.reshape(shape)


def _lgamma_kernel(x):
    return _back(_lgamma64(x), x)


# -- polygamma: digamma (order 0) and its derivatives -----------------------------------------------

#: B_2k for k = 1..10
_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
              -174611 / 330]


def _psi_asymptotic(n, y):
    """polygamma(n, y) for y >= 10 + n by its asymptotic series (10 Bernoulli terms: the last is
    below 1e-17 of the sum there for every n <= 8)."""
    inv = 1.0 / y
    if n == 0:
        z2 = inv * inv
        s = np.zeros_like(y)
        for k in range(len(_BERNOULLI), 0, -1):
            s = (s + _BERNOULLI[k - 1] / (2 * k)) * z2
        return np.log(y) - 0.5 * inv - s
    # (-1)^(n+1) [(n-1)!/y^n + n!/(2 y^(n+1)) + sum_k B_2k (2k+n-1)!/(2k)! / y^(2k+n)]
    s = np.zeros_like(y)
    z2 = inv * inv
    for k in range(len(_BERNOULLI), 0, -1):
        s = (s + _BERNOULLI[k - 1] * math.factorial(2 * k + n - 1) / math.factorial(2 * k)) * z2
    s = s + math.factorial(n - 1) + math.factorial(n) * 0.5 * inv
    return (-1) ** (n + 1) * s * inv ** n


def _cot_derivative_poly(n):
    """P_n with d^n/du^n cot(u) = P_n(cot u): P_0(c) = c, P_{k+1}(c) = -(1 + c^2) P_k'(c)."""
    p = np.polynomial.Polynomial([0.0, 1.0])
    for _ in range(n):
        p = -np.polynomial.Polynomial([1.0, 0.0, 1.0]) * p.deriv()
    return p


def _polygamma_pos(n, x):
    """polygamma(n, x) for x > 0: the recurrence psi_n(x) = psi_n(x + 1) - (-1)^n n! / x^(n+1) up
    to 10 + n, then the asymptotic series. Digamma is Cephes' algorithm (the recurrence to 10,
    the series), which TF's kernel (Eigen) also uses."""
    top = 10.0 + n
    y = x.copy()
    s = np.zeros_like(x)
    steps = int(np.ceil(top - y.min())) if y.size else 0
    for _ in range(max(steps, 0)):
        m = y < top
        if not m.any():
            break
        s = np.where(m, s + 1.0 / y ** (n + 1), s)
        y = np.where(m, y + 1.0, y)
    sign = -1.0 if n == 0 else float((-1) ** (n + 1) * math.factorial(n))
    return _psi_asymptotic(n, y) + sign * s


def _polygamma64(x, n):
    x = _as64(x)
    shape = x.shape
    x = x.reshape(-1)
    out = np.full(x.shape, np.nan)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pole = (x <= 0) & (np.floor(x) == x)
        # at 0, -1, ...: digamma and the even orders change sign across the pole (nan, as TF's digamma);
        # the odd orders tend to +inf from both sides (TF: polygamma(1, 0) = inf)
        out[pole & np.isfinite(x)] = np.inf if n % 2 == 1 else np.nan
        out[x == np.inf] = np.inf if n == 0 else 0.0
        pos = (x > 0) & (x < np.inf)
        out[pos] = _polygamma_pos(n, x[pos])
        neg = (x < 0) & ~pole
        xn = x[neg]
        # reflection, differentiated n times: psi_n(x) = (-1)^n psi_n(1 - x) - pi^(n+1) P_n(cot(pi x))
        r = xn - np.round(xn)
        cot = np.cos(np.pi * r) / np.sin(np.pi * r)
        cot = np.where(np.abs(r) == 0.5, 0.0, cot)
        out[neg] = (-1) ** n * _polygamma_pos(n, 1.0 - xn) - np.pi ** (n + 1) * _cot_derivative_poly(n)(cot)
    return out.reshape(shape)


def _polygamma_kernel(x, n):
    return _back(_polygamma64(x, n), x)


# -- erfc, erf (internal), erfinv -----------------------------------------------------------------------

_TWO_OVER_SQRT_PI = 1.1283791670955126
_SQRT_PI_OVER_2 = 0.88622692545275801


def _erf_series(x):
    """erf(x) for |x| <= 1/2 by its Maclaurin series, 2/sqrt(pi) sum (-1)^k x^(2k+1) / (k! (2k+1)):
    the terms after the 14th are below 1e-19 there."""
    x2 = x * x
    term = x.copy()
    s = x.copy()
    for k in range(1, 15):
        term = term * (-x2) / k
        s = s + term / (2 * k + 1)
    return _TWO_OVER_SQRT_PI * s


def _piecewise_fit(f, lo, hi, pieces, deg):
    """Polynomials approximating f on [lo, hi] split into ``pieces`` equal intervals: on each, the
    interpolant at deg + 1 Chebyshev points (cosine sums), as Chebyshev coefficients in the local
    variable s in [-1, 1], evaluated by Clenshaw's recurrence (one series of degree 40 over the
    whole range was 20 ulp off; monomial coefficients amplify the reference's noise 2^deg-fold)."""
    n = deg + 1
    theta = np.pi * (np.arange(n) + 0.5) / n
    width = (hi - lo) / pieces
    coef = np.empty((pieces, n))
    for i in range(pieces):
        a = lo + i * width
        vals = np.array([f(a + width * (math.cos(t) + 1) / 2) for t in theta])
        c = np.array([2.0 / n * math.fsum(vals * np.cos(j * theta)) for j in range(n)])
        c[0] /= 2
        coef[i] = c
    return lo, width, coef


def _piecewise_eval(fit, x):
    lo, width, coef = fit
    i = np.clip(np.floor((x - lo) / width), 0, len(coef) - 1).astype(np.intp)
    s = (x - (lo + (i + 0.5) * width)) / (0.5 * width)
    c = coef[i]
    s2 = 2.0 * s
    b1 = np.zeros_like(s)
    b2 = np.zeros_like(s)
    for k in range(coef.shape[1] - 1, 0, -1):
        b1, b2 = c[:, k] + s2 * b1 - b2, b1
    return c[:, 0] + s * b1 - b2


def _exp_neg_square(x):
    """exp(-x^2) without x^2's rounding: x = xh + xl with xh of 26 bits, so xh^2 is exact and the
    rest is a small correction (exp(-x*x) alone is 1e-14 off in relative terms at x = 10)."""
    xh = x * 134217729.0
    xh = xh - (xh - x)
    xl = x - xh
    hi = xh * xh
    lo = xl * (2 * xh + xl)
    return np.exp(-hi) * np.exp(-lo)


def _exp_square_scalar(x):
    """exp(x^2) for the fits' reference values (Python floats, the same splitting)."""
    xh = x * 134217729.0
    xh = xh - (xh - x)
    xl = x - xh
    return math.exp(xh * xh) * math.exp(xl * (2 * xh + xl))


def _erfcx_ref(x):
    # exp(x^2) erfc(x) from libm's erfc (math.erfc), below the range where erfc(x) is subnormal;
    # beyond it the asymptotic series, whose terms fall to 1e-18 well before they grow
    if x < 25.0:
        return _exp_square_scalar(x) * math.erfc(x)
    s, t, k = 1.0, 1.0, 1
    while abs(t) > 1e-18:
        t *= -(2 * k - 1) / (2 * x * x)
        s += t
        k += 1
    return s / (x * math.sqrt(math.pi))


#: erfcx(x) = exp(x^2) erfc(x) on [1/2, 4] (smooth, 0.62 .. 0.14), and x erfcx(x) as a function of
#: t = 1/x on [0, 1/4] (to 1/sqrt(pi) at t = 0): piecewise interpolants fitted to libm's erfc at the
#: first erfc call (~15 ms; not at import). Their degrees are where the Chebyshev coefficients reach
#: the reference's noise (1e-16): libm's erfc is within 1-3 ulp, and the fits within 3-5 ulp median,
#: 20 at most, of the true float64 erfc (mpmath, 60k points of [-6, 27]); float32 results are the
#: correctly rounded ones.
_ERFCX_FITS = []


def _erfcx_fits():
    if not _ERFCX_FITS:
        _ERFCX_FITS.append(_piecewise_fit(_erfcx_ref, 0.5, 4.0, 28, 12))
        _ERFCX_FITS.append(_piecewise_fit(
            lambda t: (1 / math.sqrt(math.pi)) if t == 0 else _erfcx_ref(1 / t) / t, 0.0, 0.25, 16, 10))
    return _ERFCX_FITS


def _erfc_nonneg(a):
    """erfc(a) for a >= 0 (float64)."""
    mid, tail = _erfcx_fits()
    out = np.empty_like(a)
    s = a < 0.5
    out[s] = 1.0 - _erf_series(a[s])
    m = (a >= 0.5) & (a < 4.0)
    out[m] = _exp_neg_square(a[m]) * _piecewise_eval(mid, a[m])
    t = a >= 4.0
    at = a[t]
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        v = _exp_neg_square(at) * _piecewise_eval(tail, 1.0 / at) / at
    out[t] = np.where(at > 27.3, 0.0, v)      # erfc(27.3) < 5e-325: 0 in float64
    return out


def _erfc64(x):
    x = _as64(x)
    shape = x.shape
    x = x.reshape(-1)
    r = _erfc_nonneg(np.abs(x))
    r = np.where(x < 0, 2.0 - r, r)            # erfc(-a) = 2 - erfc(a)
    return np.where(np.isnan(x), np.nan, r).reshape(shape)


def _erfc_kernel(x):
    return _back(_erfc64(x), x)


def _erf64(x):
    """erf(x): the series where |x| < 1/2 (1 - erfc there would cancel: erf(1e-6) is 1.13e-6), else
    sign(x) (1 - erfc(|x|)), whose erfc is below 1/2 so the difference keeps float64's precision."""
    x = _as64(x)
    shape = x.shape
    x = x.reshape(-1)
    a = np.abs(x)
    r = np.empty_like(x)
    s = a < 0.5
    r[s] = _erf_series(x[s])
    r[~s] = np.copysign(1.0 - _erfc_nonneg(a[~s]), x[~s])
    return np.where(np.isnan(x), np.nan, r).reshape(shape)


def _erf_kernel(x):
    return _back(_erf64(x), x)


def _erfinv64(x):
    """erfinv(x): Winitzki's closed form (relative error < 2e-3) refined by four Newton steps on
    erf (|x| < 1/2, where erfinv(x) < 1/2 and erf is its series) or on erfc (the tail, where
    1 - |x| is exact and erf's slope is tiny): quadratic convergence reaches float64's precision.
    Measured against mpmath: within 9 ulp on [-1, 1], 3 on [0.99, 1]."""
    x = _as64(x)
    shape = x.shape
    x = x.reshape(-1)
    a = np.abs(x)
    y = np.zeros_like(a)
    inside = a < 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ai = a[inside]
        w = np.log((1.0 - ai) * (1.0 + ai))
        k = 0.147
        t = 2.0 / (np.pi * k) + 0.5 * w
        yi = np.sqrt(np.sqrt(t * t - w / k) - t)
        tail = ai >= 0.5
        q = 1.0 - ai[tail]                           # exact for a >= 1/2 (Sterbenz)
        yc, yt, ac = yi[~tail], yi[tail], ai[~tail]
        for _ in range(4):
            # Newton on f(y) = erf(y) - a (or (1 - a) - erfc(y)); f'(y) = 2/sqrt(pi) exp(-y^2)
            yc = yc - (_erf_series(yc) - ac) / (_TWO_OVER_SQRT_PI * _exp_neg_square(yc))
            yt = yt - (q - _erfc_nonneg(yt)) / (_TWO_OVER_SQRT_PI * _exp_neg_square(yt))
        yi[~tail] = yc
        yi[tail] = yt
        y[inside] = yi
    r = np.copysign(y, x)
    r = np.where(a == 1.0, np.copysign(np.inf, x), r)
    r = np.where(a > 1.0, np.nan, r)
    return np.where(np.isnan(x), np.nan, r).reshape(shape)


def _erfinv_kernel(x):
    return _back(_erfinv64(x), x)


# -- records -------------------------------------------------------------------------------------------

def _unary_special(name, kernel, vjp, doc, **params):
    return Primitive(name, kernel, _rules.elementwise(name, None, "f"), vjp, aliases=False, doc=doc, **params)


def polygamma(n, x):
    return bind(polygamma_p, x, n=n)


def _const_like(v, out):
    return np.asarray(v, aval_of(out).dtype)


lgamma_p = _unary_special(
    "lgamma", _lgamma_kernel, lambda g, out, x: (E.mul(g, polygamma(0, x)),),
    doc="log|Gamma(x)|: inf at 0 and the negative integers (TF's value there)")

polygamma_p = _unary_special(
    "polygamma", _polygamma_kernel, lambda g, out, x, n: (E.mul(g, polygamma(n + 1, x)),),
    doc="n: the order (a Python int >= 0; 0 is digamma). Each derivative is the next order, so every "
        "order of gradient works")


def _erfc_vjp(g, out, x):
    # d erfc(x) = -2/sqrt(pi) exp(-x^2)
    k = _const_like(-_TWO_OVER_SQRT_PI, out)
    return (E.mul(g, E.mul(k, bind(E.exp_p, E.neg(E.mul(x, x))))),)


erfc_p = _unary_special("erfc", _erfc_kernel, _erfc_vjp, doc="1 - erf(x), accurate where erf(x) is near 1")


def _erf_vjp(g, out, x):
    # d erf(x) = 2/sqrt(pi) exp(-x^2)
    k = _const_like(_TWO_OVER_SQRT_PI, out)
    return (E.mul(g, E.mul(k, bind(E.exp_p, E.neg(E.mul(x, x))))),)


# erf is a primitive of its own, not 1 - erfc (which cancels for small |x|) nor a composed polynomial (the
# Abramowitz-Stegun fit it replaced was 1.5e-7 off absolutely: erf(1e-6) came out 1.19e-6 in float32, 5% high,
# and float64 results had float32's precision)
erf_p = _unary_special("erf", _erf_kernel, _erf_vjp, doc="the error function, to float64's precision")


def _erfinv_vjp(g, out, x):
    # d erfinv(x) = sqrt(pi)/2 exp(erfinv(x)^2), from the output: inf at +-1, as TF
    k = _const_like(_SQRT_PI_OVER_2, out)
    return (E.mul(g, E.mul(k, bind(E.exp_p, E.mul(out, out)))),)


erfinv_p = _unary_special("erfinv", _erfinv_kernel, _erfinv_vjp, doc="the inverse of erf on (-1, 1); +-inf at +-1")


def _nextafter_abstract(a, b):
    r = _rules.elementwise("nextafter", None, "f")(a, b)   # (the dtypes must agree, as TF's)
    if r.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        # TF's NextAfter kernel: float and double only
        raise InvalidArgumentTypeError(f"nextafter: expects float32 or float64 tensors, got {r.dtype.name}; "
                                       "cast first: tapeflow.cast(x, tapeflow.float32)")
    return r


def _nextafter_vjp(g, out, x1, x2):
    # TF's NextAfterGrad: the result moves with x1 (gradient 1); x2 only picks the direction (0)
    return E._grads2(g, x1, x2, g, E.mul(g, 0))


nextafter_p = Primitive("nextafter", np.nextafter, _nextafter_abstract, _nextafter_vjp, aliases=False,
                        numpy_operands="adopt", doc="the next representable float after x1 towards x2")


# -- igamma / igammac: the regularized incomplete gamma functions P(a, x) and Q(a, x) --------------------

def _igamma64(a, x, upper):
    """P(a, x) (``upper``: Q = 1 - P) in float64: the series sum x^n / (a (a+1) ... (a+n)) below
    x = a + 1, the continued fraction (modified Lentz) for Q above (Numerical Recipes' gser/gcf),
    each times exp(-x + a log x - lgamma(a)); each element iterated until its next term is below
    1e-17 of its sum (at most 1000 rounds). nan for a <= 0 or x < 0, as TF. Measured against mpmath
    (3000 points a decade, x / a in [0.01, 3]): relative 1e-16..6e-16 median, 2e-14 at most for
    a < 10; 1e-13 median, 9e-12 at most for a in [200, 3000] (the prefactor's cancellation, as in
    Cephes' form TF's kernel uses)."""
    def series(aa, xx, pre):
        p = pre * _converged(_igamma_series, aa, xx)
        return 1.0 - p if upper else p

    def cf(aa, xx, pre):
        q = pre * _converged(_igamma_cf, aa, xx)
        return q if upper else 1.0 - q
    return _igamma_elements(a, x, 1.0 if upper else 0.0, 0.0 if upper else 1.0, series, cf)


def _igamma_elements(a, x, at_zero, at_inf, series, cf):
    """The element walk of P(a, x) and of its derivative in a: a and x broadcast and flattened; nan
    where P is undefined (a <= 0 or not finite, x < 0); ``at_zero`` / ``at_inf`` at x = 0 / x = inf;
    ``series(a, x, pre)`` for the elements below x = a + 1 and ``cf(a, x, pre)`` for those above, each
    given them and their prefactor pre = exp(-x + a log x - lgamma(a))."""
    a, x = np.broadcast_arrays(_as64(a), _as64(x))
    shape = a.shape
    a, x = a.reshape(-1), x.reshape(-1)
    out = np.full(a.shape, np.nan)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        ok = (a > 0) & (x >= 0) & np.isfinite(a)
        out[ok & (x == 0)] = at_zero
        out[ok & (x == np.inf)] = at_inf
        live = ok & (x > 0) & (x < np.inf)
        ser = live & (x < a + 1)
        for region, expansion in ((ser, series), (live & ~ser, cf)):
            if region.any():
                aa, xx = a[region], x[region]
                out[region] = expansion(aa, xx, np.exp(-xx + aa * np.log(xx) - _lgamma64(aa)))
    return out.reshape(shape)


def _converged(step, a, x, rounds=1000, dtype=None):
    """Run ``step`` (a generator of (state, done, value) per round) and keep each element's value
    from the round it converges, dropping it from the arrays then: an element near x = a + 1 needs
    hundreds of rounds, most a few dozen, so rounds cost only the unconverged ones. ``dtype``: the
    values' (complex128 for a value and its derivative as one number)."""
    res = np.empty_like(a, dtype=dtype)
    idx = np.arange(a.size)
    gen = step(a, x)
    for _ in range(rounds):
        done, value, keep_state = next(gen)
        if done.any():
            res[idx[done]] = value[done]
            idx = idx[~done]
            if not idx.size:
                return res
            keep_state(~done)
    res[idx] = value[~done]
    return res


def _keeper(st):
    """The ``keep(mask)`` an element-wise iteration yields to its driver: it drops the converged elements
    from every array of its state ``st``."""
    def keep(m):
        for k in st:
            st[k] = st[k][m]
    return keep


def _igamma_series(a, x):
    """sum_n x^n / (a (a+1) ... (a+n)), one term a round."""
    st = {"term": 1.0 / a, "ap": a.copy(), "x": x}
    st["s"] = st["term"].copy()

    keep = _keeper(st)
    while True:
        st["ap"] = st["ap"] + 1.0
        st["term"] = st["term"] * st["x"] / st["ap"]
        st["s"] = st["s"] + st["term"]
        yield np.abs(st["term"]) < np.abs(st["s"]) * 1e-17, st["s"], keep


def _igamma_cf(a, x):
    """Q's continued fraction by the modified Lentz method, one level a round."""
    tiny = 1e-300
    b = x + 1.0 - a
    st = {"a": a, "b": b, "c": np.full_like(b, 1.0 / tiny), "d": 1.0 / b}
    st["h"] = st["d"].copy()

    keep = _keeper(st)
    i = 0
    while True:
        i += 1
        an = -i * (i - st["a"])
        st["b"] = st["b"] + 2.0
        d = an * st["d"] + st["b"]
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = st["b"] + an / st["c"]
        st["c"] = np.where(np.abs(c) < tiny, tiny, c)
        st["d"] = 1.0 / d
        delta = st["d"] * st["c"]
        st["h"] = st["h"] * delta
        yield np.abs(delta - 1.0) < 1e-16, st["h"], keep


def _igamma_da64(a, x):
    """dP(a, x)/da in float64 (TF's IgammaGradA): the derivative carried through the same two
    expansions as ``_igamma64``, forward mode. P = pre * S with pre = exp(-x + a log x - lgamma(a)):
    dP/da = P (log x - digamma(a)) + pre dS/da, where each series term t_n = x^n / (a ... (a+n))
    has dt_n/da = -t_n sum_k 1/(a+k); above x = a + 1, Q = pre * CF and the modified-Lentz
    recurrences carry their derivatives in a (the continued fraction's a_n = -n (n - a), b_n =
    x + 1 - a + 2n), and dP/da = -dQ/da. nan where P is (a <= 0, x < 0); 0 at x = 0 and x = inf."""
    def expansion(step, sign):
        def derivative(aa, xx, pre):
            both = _converged(step, aa, xx, dtype=np.complex128)   # value + 1j * derivative
            return sign * pre * ((np.log(xx) - _polygamma64(aa, 0)) * both.real + both.imag)
        return derivative
    return _igamma_elements(a, x, 0.0, 0.0, expansion(_igamma_series_da, 1.0), expansion(_igamma_cf_da, -1.0))


def _igamma_series_da(a, x):
    """``_igamma_series`` and its derivative in a, as value + 1j * derivative (one array for
    ``_converged``)."""
    st = {"term": 1.0 / a, "ap": a.copy(), "x": x, "h": 1.0 / a}
    st["s"] = st["term"].copy()
    st["ds"] = -st["term"] * st["h"]

    keep = _keeper(st)
    while True:
        st["ap"] = st["ap"] + 1.0
        st["h"] = st["h"] + 1.0 / st["ap"]
        st["term"] = st["term"] * st["x"] / st["ap"]
        st["s"] = st["s"] + st["term"]
        st["ds"] = st["ds"] - st["term"] * st["h"]
        yield np.abs(st["term"]) * np.maximum(st["h"], 1.0) < np.abs(st["s"]) * 1e-17, st["s"] + 1j * st["ds"], keep


def _igamma_cf_da(a, x):
    """``_igamma_cf`` with each Lentz quantity's derivative in a carried beside it."""
    tiny = 1e-300
    b = x + 1.0 - a
    st = {"a": a, "b": b, "c": np.full_like(b, 1.0 / tiny), "dc": np.zeros_like(b), "d": 1.0 / b,
          "dd": 1.0 / (b * b)}
    st["h"], st["dh"] = st["d"].copy(), st["dd"].copy()

    keep = _keeper(st)
    i = 0
    while True:
        i += 1
        an = -i * (i - st["a"])              # dan/da = i
        st["b"] = st["b"] + 2.0              # db/da = -1
        den = an * st["d"] + st["b"]
        dden = i * st["d"] + an * st["dd"] - 1.0
        den = np.where(np.abs(den) < tiny, tiny, den)
        c = st["b"] + an / st["c"]
        dc = -1.0 + i / st["c"] - an * st["dc"] / (st["c"] * st["c"])
        st["c"], st["dc"] = np.where(np.abs(c) < tiny, tiny, c), dc
        st["d"], st["dd"] = 1.0 / den, -dden / (den * den)
        delta = st["d"] * st["c"]
        ddelta = st["dd"] * st["c"] + st["d"] * st["dc"]
        change = st["h"] * ddelta            # (the derivative converges after the value: both must)
        st["dh"] = st["dh"] * delta + change
        st["h"] = st["h"] * delta
        yield (np.abs(delta - 1.0) < 1e-16) & (np.abs(change) <= 1e-16 * np.abs(st["dh"])), \
            st["h"] + 1j * st["dh"], keep


def _igamma_grad_a_kernel(a, x):
    dt = np.result_type(getattr(a, "dtype", np.float32), getattr(x, "dtype", np.float32))
    return _igamma_da64(a, x).astype(dt if dt.kind == "f" else np.float32, copy=False)


# dP/da is a special function of its own, no composition of primitives (TF too has the op IgammaGradA,
# with no gradient of its own): a primitive, not differentiable
igamma_grad_a_p = Primitive("igamma_grad_a", _igamma_grad_a_kernel, _rules.elementwise("igamma_grad_a", None, "f"),
                            differentiable=False, aliases=False, numpy_operands="adopt",
                            doc="dP(a, x)/da, the derivative of the regularized lower incomplete gamma in a")


def _igamma_vjp(upper):
    def vjp(g, out, a, x):
        # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a); d/da P is igamma_grad_a (TF's IgammaGradA).
        # Q = 1 - P: both negated
        dt = aval_of(out).dtype
        av = np.asarray(a, dt) if E._is_const(a) else a
        xv = np.asarray(x, dt) if E._is_const(x) else x
        dens = bind(E.exp_p, E.sub(E.sub(E.mul(E.sub(av, 1.0), bind(E.log_p, xv)), xv), bind(lgamma_p, av)))
        gx = None if E._is_const(x) else E.mul(g, E.neg(dens) if upper else dens)
        ga = None
        if not E._is_const(a):
            da = bind(igamma_grad_a_p, av, xv)
            ga = E.mul(g, E.neg(da) if upper else da)
        return E._grads2(g, a, x, ga, gx)
    return vjp


def _igamma_kernel(upper):
    def kernel(a, x):
        dt = np.result_type(getattr(a, "dtype", np.float32), getattr(x, "dtype", np.float32))
        return _igamma64(a, x, upper).astype(dt if dt.kind == "f" else np.float32, copy=False)
    return kernel


def _igamma_abstract(name):
    rule = _rules.elementwise(name, None, "f")

    def abstract(a, x):
        r = rule(a, x)
        if r.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):   # TF's kernels: float, double
            raise InvalidArgumentTypeError(f"{name}: expects float32 or float64 tensors, got {r.dtype.name}")
        return r
    return abstract


igamma_p = Primitive("igamma", _igamma_kernel(False), _igamma_abstract("igamma"), _igamma_vjp(False), aliases=False,
                     numpy_operands="adopt", doc="the regularized lower incomplete gamma P(a, x)")
igammac_p = Primitive("igammac", _igamma_kernel(True), _igamma_abstract("igammac"), _igamma_vjp(True), aliases=False,
                      numpy_operands="adopt", doc="the regularized upper incomplete gamma Q(a, x) = 1 - P(a, x)")
