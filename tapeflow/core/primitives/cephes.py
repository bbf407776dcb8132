"""Cephes' special functions as TF 2.21 computes them: the Bessel functions (i0, i0e, i1, i1e, k0,
k0e, k1, k1e, j0, j1, y0, y1), dawsn, expint, fresnel_cos, fresnel_sin and spence.

TF's kernels are Eigen's port of Cephes (Moshier's Cephes Math Library 2.8, incorporated into Eigen by
the author's permission; TF's own special_math_op_misc_impl.h for dawsn..spence): Chebyshev series
and rational approximations per interval. Here they are the same algorithms with the same float64
coefficients, evaluated in NumPy, every branch on every element and the branch picked per element
(as Eigen's ``pselect``), so TF's values at the edges come out the same: i0(+-inf) = nan (exp(inf) * 0),
k0(x <= 0) = inf, y0(x <= 0) = -inf, j0(inf) = nan, expint(x < 0) = nan. No SciPy.

float16/float32 inputs are computed in float64 and rounded once (TF's float32 kernels run Cephes'
float coefficients in float32: 1e-7 .. 2e-6 relative off; and exp(|x|) overflows float32 before
i0(x) does, so TF's float32 i0(89) is inf where the value, 4.3e37, is finite: docs/differences.md).
Measured against TF 2.21's float64 kernels (tests/test_cephes.py, tests/data/cephes_tf_reference.npz):
the same algorithm, so within a few ulp (NumPy's exp/log/sin vs Eigen's).

One primitive for all of them, ``special_unary`` with the function a static param ``fn`` (as
``polygamma``'s order): they share the record's facts (elementwise, float in = float out, opaque to the
fused tier: the kernels branch per interval), and each derivative is a closed form in other members
of the family (i0' = i1, k0' = -k1, j1' = j0 - j1/x, ...: TF's gradients, math_grad.py), so every
order of gradient works through the one record. Seventeen primitives would repeat the same record
seventeen times.
"""
from __future__ import annotations

import numpy as np

from ..primitive import Primitive, bind, aval_of
from . import _rules
from . import elementwise as E
from .special import _as64, _back


def _cheb(x, c):
    """Cephes' chbevl: the Chebyshev series sum c_k T_k(x/2) (c highest first, the last halved)."""
    b0 = np.full_like(x, c[0])
    b1 = np.zeros_like(x)
    b2 = b1
    for ck in c[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + ck
    return 0.5 * (b0 - b2)


def _poly(x, c):
    """Horner's rule, c highest degree first (Cephes' polevl; Eigen's ppolevl)."""
    acc = np.full_like(x, c[0])
    for ck in c[1:]:
        acc = acc * x + ck
    return acc


# -- Bessel functions: Eigen's BesselFunctionsImpl.h (the double coefficients) -------------------------

_I0_A = [-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14, -4.85644678311192946090E-13,
    2.95505266312963983461E-12, -1.72682629144155570723E-11, 9.67580903537323691224E-11, -5.18979560163526290666E-10,
    2.65982372468238665035E-9, -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5, -5.75419501008210370398E-5,
    1.88502885095841655729E-4, -5.76375574538582365885E-4, 1.63947561694133579842E-3, -4.32430999505057594430E-3,
    1.05464603945949983183E-2, -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1]
_I0_B = [-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16, 1.77256013305652638360E-15,
    3.81168066935262242075E-15, -9.55484669882830764870E-15, -4.15056934728722208663E-14, 1.54008621752140982691E-14,
    3.85277838274214270114E-13, 7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10, 3.39623202570838634515E-9,
    2.26666899049817806459E-8, 2.04891858946906374183E-7, 2.89137052083475648297E-6, 6.88975834691682398426E-5,
    3.36911647825569408990E-3, 8.04490411014108831608E-1]
_I1_A = [2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14, 3.22379336594557470981E-13,
    -1.98397439776494371520E-12, 1.17361862988909016308E-11, -6.66348972350202774223E-11, 3.62559028155211703701E-10,
    -1.88724975172282928790E-9, 9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
    -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5, 4.78156510755005422638E-5,
    -1.61760815825896745588E-4, 5.12285956168575772895E-4, -1.51357245063125314899E-3, 4.15642294431288815669E-3,
    -1.05640848946261981558E-2, 2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
    -1.76416518357834055153E-1, 2.52587186443633654823E-1]
_I1_B = [7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16, -1.88035477551078244854E-15,
    -3.81440307243700780478E-15, 1.04202769841288027642E-14, 4.27244001671195135429E-14, -2.10154184277266431302E-14,
    -4.08355111109219731823E-13, -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
    3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10, -3.83538038596423702205E-9,
    -2.63146884688951950684E-8, -2.51223623787020892529E-7, -3.88256480887769039346E-6, -1.10588938762623716291E-4,
    -9.76109749136146840777E-3, 7.78576235018280120474E-1]
_K0_A = [1.37446543561352307156E-16, 4.25981614279661018399E-14, 1.03496952576338420167E-11,
    1.90451637722020886025E-9, 2.53479107902614945675E-7, 2.28621210311945178607E-5, 1.26461541144692592338E-3,
    3.59799365153615016266E-2, 3.44289899924628486886E-1, -5.35327393233902768720E-1]
_K0_B = [5.30043377268626276149E-18, -1.64758043015242134646E-17, 5.21039150503902756861E-17,
    -1.67823109680541210385E-16, 5.51205597852431940784E-16, -1.84859337734377901440E-15, 6.34007647740507060557E-15,
    -2.22751332699166985548E-14, 8.03289077536357521100E-14, -2.98009692317273043925E-13, 1.14034058820847496303E-12,
    -4.51459788337394416547E-12, 1.85594911495471785253E-11, -7.95748924447710747776E-11, 3.57739728140030116597E-10,
    -1.69753450938905987466E-9, 8.57403401741422608519E-9, -4.66048989768794782956E-8, 2.76681363944501510342E-7,
    -1.83175552271911948767E-6, 1.39498137188764993662E-5, -1.28495495816278026384E-4, 1.56988388573005337491E-3,
    -3.14481013119645005427E-2, 2.44030308206595545468E0]
_K1_A = [-7.02386347938628759343E-18, -2.42744985051936593393E-15, -6.66690169419932900609E-13,
    -1.41148839263352776110E-10, -2.21338763073472585583E-8, -2.43340614156596823496E-6, -1.73028895751305206302E-4,
    -6.97572385963986435018E-3, -1.22611180822657148235E-1, -3.53155960776544875667E-1, 1.52530022733894777053E0]
_K1_B = [-5.75674448366501715755E-18, 1.79405087314755922667E-17, -5.68946255844285935196E-17,
    1.83809354436663880070E-16, -6.05704724837331885336E-16, 2.03870316562433424052E-15, -7.01983709041831346144E-15,
    2.47715442448130437068E-14, -8.97670518232499435011E-14, 3.34841966607842919884E-13, -1.28917396095102890680E-12,
    5.13963967348173025100E-12, -2.12996783842756842877E-11, 9.21831518760500529508E-11, -4.19035475934189648750E-10,
    2.01504975519703286596E-9, -1.03457624656780970260E-8, 5.74108412545004946722E-8, -3.50196060308781257119E-7,
    2.40648494783721712015E-6, -1.93619797416608296024E-5, 1.95215518471351631108E-4, -2.85781685962277938680E-3,
    1.03923736576817238437E-1, 2.72062619048444266945E0]
_J0_PP = [7.96936729297347051624E-4, 8.28352392107440799803E-2, 1.23953371646414299388E0, 5.44725003058768775090E0,
    8.74716500199817011941E0, 5.30324038235394892183E0, 9.99999999999999997821E-1]
_J0_PQ = [9.24408810558863637013E-4, 8.56288474354474431428E-2, 1.25352743901058953537E0, 5.47097740330417105182E0,
    8.76190883237069594232E0, 5.30605288235394617618E0, 1.00000000000000000218E0]
_J0_QP = [-1.13663838898469149931E-2, -1.28252718670509318512E0, -1.95539544257735972385E1, -9.32060152123768231369E1,
    -1.77681167980488050595E2, -1.47077505154951170175E2, -5.14105326766599330220E1, -6.05014350600728481186E0]
_J0_QQ = [1.00000000000000000000E0, 6.43178256118178023184E1, 8.56430025976980587198E2, 3.88240183605401609683E3,
    7.24046774195652478189E3, 5.93072701187316984827E3, 2.06209331660327847417E3, 2.42005740240291393179E2]
_J0_RP = [-4.79443220978201773821E9, 1.95617491946556577543E12, -2.49248344360967716204E14, 9.70862251047306323952E15]
_J0_RQ = [1.00000000000000000000E0, 4.99563147152651017219E2, 1.73785401676374683123E5, 4.84409658339962045305E7,
    1.11855537045356834862E10, 2.11277520115489217587E12, 3.10518229857422583814E14, 3.18121955943204943306E16,
    1.71086294081043136091E18]
_Y0_YP = [1.55924367855235737965E4, -1.46639295903971606143E7, 5.43526477051876500413E9, -9.82136065717911466409E11,
    8.75906394395366999549E13, -3.46628303384729719441E15, 4.42733268572569800351E16, -1.84950800436986690637E16]
_Y0_YQ = [1.00000000000000000000E0, 1.04128353664259848412E3, 6.26107330137134956842E5, 2.68919633393814121987E8,
    8.64002487103935000337E10, 2.02979612750105546709E13, 3.17157752842975028269E15, 2.50596256172653059228E17]
_J1_PP = [7.62125616208173112003E-4, 7.31397056940917570436E-2, 1.12719608129684925192E0, 5.11207951146807644818E0,
    8.42404590141772420927E0, 5.21451598682361504063E0, 1.00000000000000000254E0]
_J1_PQ = [5.71323128072548699714E-4, 6.88455908754495404082E-2, 1.10514232634061696926E0, 5.07386386128601488557E0,
    8.39985554327604159757E0, 5.20982848682361821619E0, 9.99999999999999997461E-1]
_J1_QP = [5.10862594750176621635E-2, 4.98213872951233449420E0, 7.58238284132545283818E1, 3.66779609360150777800E2,
    7.10856304998926107277E2, 5.97489612400613639965E2, 2.11688757100572135698E2, 2.52070205858023719784E1]
_J1_QQ = [1.00000000000000000000E0, 7.42373277035675149943E1, 1.05644886038262816351E3, 4.98641058337653607651E3,
    9.56231892404756170795E3, 7.99704160447350683650E3, 2.82619278517639096600E3, 3.36093607810698293419E2]
_J1_RP = [-8.99971225705559398224E8, 4.52228297998194034323E11, -7.27494245221818276015E13, 3.68295732863852883286E15]
_J1_RQ = [1.00000000000000000000E0, 6.20836478118054335476E2, 2.56987256757748830383E5, 8.35146791431949253037E7,
    2.21511595479792499675E10, 4.74914122079991414898E12, 7.84369607876235854894E14, 8.95222336184627338078E16,
    5.32278620332680085395E18]
_Y1_YP = [1.26320474790178026440E9, -6.47355876379160291031E11, 1.14509511541823727583E14, -8.12770255501325109621E15,
    2.02439475713594898196E17, -7.78877196265950026825E17]
_Y1_YQ = [1.00000000000000000000E0, 5.94301592346128195359E2, 2.35564092943068577943E5, 7.34811944459721705660E7,
    1.87601316108706159478E10, 3.88231277496238566008E12, 6.20557727146953693363E14, 6.87141087355300489866E16,
    3.97270608116560655612E18]
_J0_DR1 = 5.78318596294678452118E0             # the squares of j0's first two zeros
_J0_DR2 = 3.04712623436620863991E1
_J1_Z1 = 1.46819706421238932572E1              # the squares of j1's first two zeros
_J1_Z2 = 4.92184563216946036703E1

_SQ2OPI = 7.9788456080286535587989E-1      # sqrt(2 / pi)
_TWOOPI = 0.636619772367581343075535       # 2 / pi
_PIO4 = 0.7853981633974483096
_THPIO4 = 2.35619449019234492885


def _i0e(x):
    y = np.abs(x)
    return np.where(y <= 8.0, _cheb(0.5 * y - 2.0, _I0_A), _cheb(32.0 / y - 2.0, _I0_B) / np.sqrt(y))


def _i0(x):
    return np.exp(np.abs(x)) * _i0e(x)


def _i1e(x):
    y = np.abs(x)
    r = np.where(y <= 8.0, y * _cheb(0.5 * y - 2.0, _I1_A), _cheb(32.0 / y - 2.0, _I1_B) / np.sqrt(y))
    return np.where(x < 0, -r, r)


def _i1(x):
    return np.exp(np.abs(x)) * _i1e(x)


def _k0_small(x):
    return _cheb(x * x - 2.0, _K0_A) - _i0(x) * np.log(0.5 * x)


def _k0e(x):
    small = np.where(x <= 0, np.inf, np.exp(x) * _k0_small(x))
    return np.where(x <= 2.0, small, _cheb(8.0 / x - 2.0, _K0_B) / np.sqrt(x))


def _k0(x):
    small = np.where(x <= 0, np.inf, _k0_small(x))
    return np.where(x <= 2.0, small, np.exp(-x) * _cheb(8.0 / x - 2.0, _K0_B) / np.sqrt(x))


def _k1_small(x):
    return _cheb(x * x - 2.0, _K1_A) / x + _i1(x) * np.log(0.5 * x)


def _k1e(x):
    small = np.where(x <= 0, np.inf, _k1_small(x) * np.exp(x))
    return np.where(x <= 2.0, small, _cheb(8.0 / x - 2.0, _K1_B) / np.sqrt(x))


def _k1(x):
    small = np.where(x <= 0, np.inf, _k1_small(x))
    return np.where(x <= 2.0, small, np.exp(-x) * (_cheb(8.0 / x - 2.0, _K1_B) / np.sqrt(x)))


def _asymptotic(y, pp, pq, qp, qq, phase, sine):
    """Hankel's asymptotic form beyond 5: sqrt(2/(pi y)) (P cos(y - phase) - 5/y Q sin(y - phase))
    (``sine``: the Y form, P sin + 5/y Q cos), P and Q rational in 25/y^2."""
    s = 25.0 / (y * y)
    p = _poly(s, pp) / _poly(s, pq)
    q = _poly(s, qp) / _poly(s, qq)
    yn = y - phase
    if sine:
        p = p * np.sin(yn) + (5.0 / y) * q * np.cos(yn)
    else:
        p = p * np.cos(yn) + (-5.0 / y) * q * np.sin(yn)
    return p * (_SQ2OPI / np.sqrt(y))


def _j0(x):
    y = np.abs(x)
    z = y * y
    small = np.where(y < 1e-5, 1.0 - 0.25 * z,
                     (z - _J0_DR1) * (z - _J0_DR2) * (_poly(z, _J0_RP) / _poly(z, _J0_RQ)))
    return np.where(y <= 5.0, small, _asymptotic(y, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, _PIO4, False))


def _y0(x):
    z = x * x
    small = _poly(z, _Y0_YP) / _poly(z, _Y0_YQ) + _TWOOPI * np.log(x) * _j0(x)
    small = np.where(x <= 0, -np.inf, small)
    return np.where(x <= 5.0, small, _asymptotic(x, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, _PIO4, True))


def _j1(x):
    y = np.abs(x)
    z = y * y
    small = _poly(z, _J1_RP) / _poly(z, _J1_RQ) * x * (z - _J1_Z1) * (z - _J1_Z2)
    big = _asymptotic(y, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, _THPIO4, False)
    return np.where(y <= 5.0, small, np.where(x < 0, -big, big))


def _y1(x):
    z = x * x
    small = _poly(z, _Y1_YP) / _poly(z, _Y1_YQ) * x + _TWOOPI * (_j1(x) * np.log(x) - 1.0 / x)
    small = np.where(x <= 0, -np.inf, small)
    return np.where(x <= 5.0, small, _asymptotic(x, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, _THPIO4, True))


# -- the record --------------------------------------------------------------------------------------

#: fn -> its float64 kernel
_KERNELS = {"bessel_i0": _i0, "bessel_i0e": _i0e, "bessel_i1": _i1, "bessel_i1e": _i1e,
            "bessel_k0": _k0, "bessel_k0e": _k0e, "bessel_k1": _k1, "bessel_k1e": _k1e,
            "bessel_j0": _j0, "bessel_j1": _j1, "bessel_y0": _y0, "bessel_y1": _y1}


def special_unary(fn, x):
    return bind(special_unary_p, x, fn=fn)


def _kernel(x, fn):
    with np.errstate(all="ignore"):
        return _back(_KERNELS[fn](_as64(x)), x)


def _abstract(x, fn):
    if fn not in _KERNELS:
        raise ValueError(f"special_unary: unknown function {fn!r}; one of {sorted(_KERNELS)}")
    return _rules.elementwise(fn, None, "f")(x)


def _where_zero(x, at_zero, other):
    """TF's ``where(x == 0, at_zero, other)``: the limit at 0, where ``other`` divides by x."""
    return bind(E.select_p, bind(E.equal_p, x, 0.0), np.asarray(at_zero, aval_of(x).dtype), other)


def _derivative(fn, x, y):
    """d fn(x) / dx in tapeflow ops (y = fn(x)): TF 2.21's gradients (math_grad.py), formula for formula,
    so their values at the edges are TF's (k1'(0) = nan, i1'(0) = 1 imputed, as TF)."""
    f = special_unary
    if fn == "bessel_i0":
        return f("bessel_i1", x)
    if fn == "bessel_i0e":
        return E.sub(f("bessel_i1e", x), E.mul(bind(E.sign_p, x), y))
    if fn == "bessel_i1":
        return _where_zero(x, 1.0, E.sub(f("bessel_i0", x), E.div(y, x)))
    if fn == "bessel_i1e":
        return _where_zero(x, 0.5, E.sub(f("bessel_i0e", x), E.mul(y, E.add(bind(E.sign_p, x), E.div(1.0, x)))))
    if fn == "bessel_k0":
        return E.neg(f("bessel_k1", x))
    if fn == "bessel_k0e":
        return E.sub(y, f("bessel_k1e", x))
    if fn == "bessel_k1":
        return E.sub(E.neg(f("bessel_k0", x)), E.div(y, x))
    if fn == "bessel_k1e":
        return E.sub(E.mul(y, E.sub(1.0, E.div(1.0, x))), f("bessel_k0e", x))
    if fn == "bessel_j0":
        return E.neg(f("bessel_j1", x))
    if fn == "bessel_j1":
        return _where_zero(x, 0.5, E.sub(f("bessel_j0", x), E.div(y, x)))
    if fn == "bessel_y0":
        return E.neg(f("bessel_y1", x))
    if fn == "bessel_y1":
        return E.sub(f("bessel_y0", x), E.div(y, x))
    raise AssertionError(fn)


special_unary_p = Primitive(
    "special_unary", _kernel, _abstract, lambda g, out, x, fn: (E.mul(g, _derivative(fn, x, out)),),
    aliases=False,
    doc="fn: the function (bessel_i0, ..., bessel_y1): Cephes' algorithm, TF's values; each derivative a "
        "closed form in the family, so every order of gradient works")
