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


_DAWSN_1_AN = [1.13681498971755972054E-11, 8.49262267667473811108E-10, 1.94434204175553054283E-8,
    9.53151741254484363489E-7, 3.07828309874913200438E-6, 3.52513368520288738649E-4, -8.50149846724410912031E-4,
    4.22618223005546594270E-2, -9.17480371773452345351E-2, 9.99999999999999994612E-1]
_DAWSN_1_AD = [2.40372073066762605484E-11, 1.48864681368493396752E-9, 5.21265281010541664570E-8,
    1.27258478273186970203E-6, 2.32490249820789513991E-5, 3.25524741826057911661E-4, 3.48805814657162590916E-3,
    2.79448531198828973716E-2, 1.58874241960120565368E-1, 5.74918629489320327824E-1, 1.00000000000000000539E0]
_DAWSN_2_BN = [5.08955156417900903354E-1, -2.44754418142697847934E-1, 9.41512335303534411857E-2,
    -2.18711255142039025206E-2, 3.66207612329569181322E-3, -4.23209114460388756528E-4, 3.59641304793896631888E-5,
    -2.14640351719968974225E-6, 9.10010780076391431042E-8, -2.40274520828250956942E-9, 3.59233385440928410398E-11]
_DAWSN_2_BD = [1.0, -6.31839869873368190192E-1, 2.36706788228248691528E-1, -5.31806367003223277662E-2,
    8.48041718586295374409E-3, -9.47996768486665330168E-4, 7.81025592944552338085E-5, -4.55875153252442634831E-6,
    1.89100358111421846170E-7, -4.91324691331920606875E-9, 7.18466403235734541950E-11]
_DAWSN_3_CN = [-5.90592860534773254987E-1, 6.29235242724368800674E-1, -1.72858975380388136411E-1,
    1.64837047825189632310E-2, -4.86827613020462700845E-4]
_DAWSN_3_CD = [1.0, -2.69820057197544900361E0, 1.73270799045947845857E0, -3.93708582281939493482E-1,
    3.44278924041233391079E-2, -9.73655226040941223894E-4]
_EXPINT_1_A = [-5.350447357812542947283E0, 2.185049168816613393830E2, -4.176572384826693777058E3,
    5.541176756393557601232E4, -3.313381331178144034309E5, 1.592627163384945414220E6]
_EXPINT_1_B = [1.0, -5.250547959112862969197E1, 1.259616186786790571525E3, -1.756549581973534652631E4,
    1.493062117002725991967E5, -7.294949239640527645655E5, 1.592627163384945429726E6]
_EXPINT_2_A6 = [1.981808503259689673238E-2, -1.271645625984917501326E0, -2.088160335681228318920E0,
    2.755544509187936721172E0, -4.409507048701600257171E-1, 4.665623805935891391017E-2, -1.545042679673485262580E-3,
    7.059980605299617478514E-5]
_EXPINT_2_B6 = [1.0, 1.476498670914921440652E0, 5.629177174822436244827E-1, 1.699017897879307263248E-1,
    2.291647179034212017463E-2, 4.450150439728752875043E-3, 1.727439612206521482874E-4, 3.953167195549672482304E-5]
_EXPINT_3_A5 = [-1.373215375871208729803E0, -7.084559133740838761406E-1, 1.580806855547941010501E0,
    -2.601500427425622944234E-1, 2.994674694113713763365E-2, -1.038086040188744005513E-3, 4.371064420753005429514E-5,
    2.141783679522602903795E-6]
_EXPINT_3_B5 = [1.0, 8.585231423622028380768E-1, 4.483285822873995129957E-1, 7.687932158124475434091E-2,
    2.449868241021887685904E-2, 8.832165941927796567926E-4, 4.590952299511353531215E-4, -4.729848351866523044863E-6,
    2.665195537390710170105E-6]
_EXPINT_4_A2 = [-2.106934601691916512584E0, 1.732733869664688041885E0, -2.423619178935841904839E-1,
    2.322724180937565842585E-2, 2.372880440493179832059E-4, -8.343219561192552752335E-5, 1.363408795605250394881E-5,
    -3.655412321999253963714E-7, 1.464941733975961318456E-8, 6.176407863710360207074E-10]
_EXPINT_4_B2 = [1.0, -2.298062239901678075778E-1, 1.105077041474037862347E-1, -1.566542966630792353556E-2,
    2.761106850817352773874E-3, -2.089148012284048449115E-4, 1.708528938807675304186E-5, -4.459311796356686423199E-7,
    1.394634930353847498145E-8, 6.150865933977338354138E-10]
_EXPINT_5_A4 = [-2.458119367674020323359E-1, -1.483382253322077687183E-1, 7.248291795735551591813E-2,
    -1.348315687380940523823E-2, 1.342775069788636972294E-3, -7.942465637159712264564E-5, 2.644179518984235952241E-6,
    -4.239473659313765177195E-8]
_EXPINT_5_B4 = [1.0, -1.044225908443871106315E-1, -2.676453128101402655055E-1, 9.695000254621984627876E-2,
    -1.601745692712991078208E-2, 1.496414899205908021882E-3, -8.462452563778485013756E-5, 2.728938403476726394024E-6,
    -4.239462431819542051337E-8]
_EXPINT_6_A7 = [1.212561118105456670844E-1, -5.823133179043894485122E-1, 2.348887314557016779211E-1,
    -3.040034318113248237280E-2, 1.510082146865190661777E-3, -2.523137095499571377122E-5]
_EXPINT_6_B7 = [1.0, -1.002252150365854016662E0, 2.928709694872224144953E-1, -3.337004338674007801307E-2,
    1.560544881127388842819E-3, -2.523137093603234562648E-5]
_EXPINT_7_A3 = [-7.657847078286127362028E-1, 6.886192415566705051750E-1, -2.132598113545206124553E-1,
    3.346107552384193813594E-2, -3.076541477344756050249E-3, 1.747119316454907477380E-4, -6.103711682274170530369E-6,
    1.218032765428652199087E-7, -1.086076102793290233007E-9]
_EXPINT_7_B3 = [1.0, -1.888802868662308731041E0, 1.066691687211408896850E0, -2.751915982306380647738E-1,
    3.930852688233823569726E-2, -3.414684558602365085394E-3, 1.866844370703555398195E-4, -6.345146083130515357861E-6,
    1.239754287483206878024E-7, -1.086076102793126632978E-9]
_FRESNEL_CN = [-4.98843114573573548651E-8, 9.50428062829859605134E-6, -6.45191435683965050962E-4,
    1.88843319396703850064E-2, -2.05525900955013891793E-1, 9.99999999999999998822E-1]
_FRESNEL_CD = [3.99982968972495980367E-12, 9.15439215774657478799E-10, 1.25001862479598821474E-7,
    1.22262789024179030997E-5, 8.68029542941784300606E-4, 4.12142090722199792936E-2, 1.00000000000000000118E0]
_FRESNEL_SN = [-2.99181919401019853726E3, 7.08840045257738576863E5, -6.29741486205862506537E7,
    2.54890880573376359104E9, -4.42979518059697779103E10, 3.18016297876567817986E11]
_FRESNEL_SD = [1.0, 2.81376268889994315696E2, 4.55847810806532581675E4, 5.17343888770096400730E6,
    4.19320245898111231129E8, 2.24411795645340920940E10, 6.07366389490084639049E11]
_FRESNEL_FN = [4.21543555043677546506E-1, 1.43407919780758885261E-1, 1.15220955073585758835E-2,
    3.45017939782574027900E-4, 4.63613749287867322088E-6, 3.05568983790257605827E-8, 1.02304514164907233465E-10,
    1.72010743268161828879E-13, 1.34283276233062758925E-16, 3.76329711269987889006E-20]
_FRESNEL_FD = [1.0, 7.51586398353378947175E-1, 1.16888925859191382142E-1, 6.44051526508858611005E-3,
    1.55934409164153020873E-4, 1.84627567348930545870E-6, 1.12699224763999035261E-8, 3.60140029589371370404E-11,
    5.88754533621578410010E-14, 4.52001434074129701496E-17, 1.25443237090011264384E-20]
_FRESNEL_GN = [5.04442073643383265887E-1, 1.97102833525523411709E-1, 1.87648584092575249293E-2,
    6.84079380915393090172E-4, 1.15138826111884280931E-5, 9.82852443688422223854E-8, 4.45344415861750144738E-10,
    1.08268041139020870318E-12, 1.37555460633261799868E-15, 8.36354435630677421531E-19, 1.86958710162783235106E-22]
_FRESNEL_GD = [1.0, 1.47495759925128324529E0, 3.37748989120019970451E-1, 2.53603741420338795122E-2,
    8.14679107184306179049E-4, 1.27545075667729118702E-5, 1.04314589657571990585E-7, 4.60680728146520428211E-10,
    1.10273215066240270757E-12, 1.38796531259578871258E-15, 8.39158816283118707363E-19, 1.86958710162783236342E-22]
_SPENCE_A = [4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
    8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0, 3.29771340985225106936E0,
    1.00000000000000000126E0]
_SPENCE_B = [6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
    1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0, 3.54771340985225096217E0,
    9.99999999999999998740E-1]


# -- dawsn, expint, fresnel_cos/sin, spence: TF's special_math_op_misc_impl.h (Cephes) ----------------------

def _dawsn(x):
    a = np.abs(x)
    x2 = a * a
    r1 = a * _poly(x2, _DAWSN_1_AN) / _poly(x2, _DAWSN_1_AD)

    def tail(num, den):
        inv = 1.0 / a
        inv2 = inv * inv
        return 0.5 * (inv2 * (_poly(inv2, num) / (a * _poly(inv2, den))) + inv)
    r = np.where(a < 3.25, r1, np.where(a < 6.25, tail(_DAWSN_2_BN, _DAWSN_2_BD),
                                        np.where(a < 1e9, tail(_DAWSN_3_CN, _DAWSN_3_CD), 0.5 / a)))
    # (TF 2.21 takes 0.5 / x beyond 1e9 and then flips the sign for x < 0 again: dawsn(-1e10) = +5e-11 there;
    # dawsn is odd, so tapeflow gives -5e-11: docs/differences.md)
    return np.where(x < 0, -r, r)


_EULER = 0.5772156649015329
#: expint's intervals beyond 2: (upper end, numerator, denominator) of x exp(-x) Ei(x) - 1 = w A(w) / B(w)
_EXPINT_TAILS = ((4.0, _EXPINT_2_A6, _EXPINT_2_B6), (8.0, _EXPINT_3_A5, _EXPINT_3_B5),
                 (16.0, _EXPINT_4_A2, _EXPINT_4_B2), (32.0, _EXPINT_5_A4, _EXPINT_5_B4),
                 (64.0, _EXPINT_6_A7, _EXPINT_6_B7), (np.inf, _EXPINT_7_A3, _EXPINT_7_B3))


def _expint(x):
    r = x * (_poly(x, _EXPINT_1_A) / _poly(x, _EXPINT_1_B)) + _EULER + np.log(x)   # x < 2
    w = 1.0 / x
    lo = 2.0
    for hi, num, den in _EXPINT_TAILS:
        f = w * (_poly(w, num) / _poly(w, den)) + 1.0
        r = np.where((x >= lo) & ((x < hi) | (hi == np.inf)), np.exp(x) * w * f, r)
        lo = hi
    return np.where(x < 0, np.nan, r)


def _fresnel(x, sine):
    a = np.abs(x)
    x2 = a * a
    x4 = x2 * x2
    if sine:
        near = a * x2 * _poly(x4, _FRESNEL_SN) / _poly(x4, _FRESNEL_SD)
    else:
        near = a * _poly(x4, _FRESNEL_CN) / _poly(x4, _FRESNEL_CD)
    # the auxiliary functions f, g of 1 / (pi x^2) beyond x^2 = 2.5625
    t = 1.0 / (np.pi * x2)
    u = t * t
    f = 1.0 - u * (_poly(u, _FRESNEL_FN) / _poly(u, _FRESNEL_FD))
    g = t * _poly(u, _FRESNEL_GN) / _poly(u, _FRESNEL_GD)
    z = 1.5707963267948966 * x2
    c, s = np.cos(z), np.sin(z)
    y = 1.0 / (np.pi * a)
    far = 0.5 - (f * c + g * s) * y if sine else 0.5 + (f * s - g * c) * y
    r = np.where(x2 < 2.5625, near, far)
    r = np.where(a > 36974.0, 0.5, r)          # (TF's cutoff: the oscillation is below float64's spacing of 0.5)
    return np.where(x < 0, -r, r)


_PI2O6 = np.pi * np.pi / 6.0


def _spence(x):
    y = np.where(x < 2.0, x, 1.0 / x)
    w = np.where(1.5 < y, 1.0 / y - 1.0, np.where(y < 0.5, -y, y - 1.0))
    r = -w * (_poly(w, _SPENCE_A) / _poly(w, _SPENCE_B))
    z = np.log(y)
    r = np.where(y < 0.5, -z * np.log1p(-y) + _PI2O6 - r, r)
    r = np.where(1.5 < x, -0.5 * z * z - r, r)
    r = np.where(x == 1.0, 0.0, np.where(x == 0.0, _PI2O6, r))
    return np.where(x < 0, np.nan, r)


# -- the record --------------------------------------------------------------------------------------

#: fn -> its float64 kernel
_KERNELS = {"bessel_i0": _i0, "bessel_i0e": _i0e, "bessel_i1": _i1, "bessel_i1e": _i1e,
            "bessel_k0": _k0, "bessel_k0e": _k0e, "bessel_k1": _k1, "bessel_k1e": _k1e,
            "bessel_j0": _j0, "bessel_j1": _j1, "bessel_y0": _y0, "bessel_y1": _y1,
            "dawsn": _dawsn, "expint": _expint, "fresnel_cos": lambda x: _fresnel(x, False),
            "fresnel_sin": lambda x: _fresnel(x, True), "spence": _spence}


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
    if fn == "dawsn":
        return E.sub(1.0, E.mul(E.mul(2.0, x), y))
    if fn == "expint":
        return E.div(bind(E.exp_p, x), x)
    if fn in ("fresnel_cos", "fresnel_sin"):
        arg = E.mul(np.asarray(np.pi / 2, aval_of(x).dtype), E.mul(x, x))
        return bind(E.cos_p if fn == "fresnel_cos" else E.sin_p, arg)
    if fn == "spence":
        # log(x) / (1 - x), -1 at x = 1 (the limit; TF imputes it)
        return bind(E.select_p, bind(E.equal_p, x, 1.0), np.asarray(-1.0, aval_of(x).dtype),
                    E.div(bind(E.log_p, x), E.sub(1.0, x)))
    raise AssertionError(fn)


special_unary_p = Primitive(
    "special_unary", _kernel, _abstract, lambda g, out, x, fn: (E.mul(g, _derivative(fn, x, out)),),
    aliases=False,
    doc="fn: the function (bessel_i0, ..., bessel_y1, dawsn, expint, fresnel_cos, fresnel_sin, spence): Cephes' algorithm, TF's values; each derivative a "
        "closed form in the family, so every order of gradient works")


# -- betainc and zeta: Eigen's SpecialFunctionsImpl.h (Cephes' incbet and zeta), double precision ------------

_MACHEP = np.finfo(np.float64).eps / 2
_BIG = 1.0 / np.finfo(np.float64).eps


def _lgamma_ab(x):
    """special.py's lgamma, for incbet's prefactor lgamma(a + b) - lgamma(a) - lgamma(b): that difference
    cancels, so its error is lgamma's absolute one (7e-13 at 1000: 1e-15 relative of 5900), which the
    exp makes relative: betainc(1000, 31.6, 0.9) is 1.9e-12 off mpmath's value, TF's 6e-13 (glibc's
    lgamma). Python's math.lgamma (its own Lanczos sum) measured worse here: 3e-12."""
    from .special import _lgamma64
    return _lgamma64(x)


def _incbps(a, b, x):
    """Cephes' power series for the incomplete beta, used where b x <= 1 and x <= 0.95 (elements in lockstep:
    each term's n is the round's; an element stops adding once its term is below machep / a)."""
    ai = 1.0 / a
    u = (1.0 - b) * x
    v = u / (a + 1.0)
    t1, t, s = v, u, np.zeros_like(x)
    z = _MACHEP * ai
    active = np.abs(v) > z
    n = 2.0
    while active.any() and n < 100000:      # (converges: |term| falls like (b x)^n / n; the cap is a guard)
        u = (n - b) * x / n
        t = np.where(active, t * u, t)
        v = t / (a + n)
        s = np.where(active, s + v, s)
        active = active & (np.abs(v) > z)
        n += 1.0
    s = s + t1 + ai
    return np.exp(_lgamma_ab(a + b) - _lgamma_ab(a) - _lgamma_ab(b) + a * np.log(x) + np.log(s))


def _incbeta_cfe(a, b, x, small):
    """Cephes' continued fractions #1 (``small``) and #2 for the incomplete beta, 300 rounds at most, each
    element returning at its first round within 3 machep (relative)."""
    if small:
        k1, k2, k3, k4, k5, k6, k7, k8, upd = a, a + b, a, a + 1.0, np.ones_like(a), b - 1.0, a + 1.0, a + 2.0, 1.0
    else:
        k1, k2, k3, k4, k5, k6, k7, k8, upd = a, b - 1.0, a, a + 1.0, np.ones_like(a), a + b, a + 1.0, a + 2.0, -1.0
        x = x / (1.0 - x)
    pkm2, qkm2 = np.zeros_like(x), np.ones_like(x)
    pkm1, qkm1 = np.ones_like(x), np.ones_like(x)
    ans = np.ones_like(x)
    done = np.zeros(x.shape, bool)
    for _ in range(300):
        xk = -(x * k1 * k2) / (k3 * k4)
        pk, qk = pkm1 + pkm2 * xk, qkm1 + qkm2 * xk
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        xk = (x * k5 * k6) / (k7 * k8)
        pk, qk = pkm1 + pkm2 * xk, qkm1 + qkm2 * xk
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        nz = (qk != 0) & ~done
        r = np.where(nz, pk / np.where(qk != 0, qk, 1.0), ans)
        conv = nz & (np.abs(ans - r) < np.abs(r) * (3 * _MACHEP))
        ans = np.where(nz, r, ans)
        done = done | conv
        if done.all():
            break
        k1, k2, k3, k4 = k1 + 1.0, k2 + upd, k3 + 2.0, k4 + 2.0
        k5, k6, k7, k8 = k5 + 1.0, k6 - upd, k7 + 2.0, k8 + 2.0
        big = (np.abs(qk) + np.abs(pk)) > _BIG
        pkm2, pkm1, qkm2, qkm1 = (np.where(big, v / _BIG, v) for v in (pkm2, pkm1, qkm2, qkm1))
        small_ = (np.abs(qk) < 1.0 / _BIG) | (np.abs(pk) < 1.0 / _BIG)
        pkm2, pkm1, qkm2, qkm1 = (np.where(small_, v * _BIG, v) for v in (pkm2, pkm1, qkm2, qkm1))
    return ans


def _betainc64(a, b, x):
    """I_x(a, b), Cephes' incbet (Eigen's betainc_impl<double>): the power series where b x <= 1, else a
    continued fraction after swapping (a, b, x) -> (b, a, 1 - x) when x is above the mean a / (a + b).
    nan for a <= 0, b <= 0 or x outside [0, 1], as TF."""
    a, b, x = (np.array(v, np.float64) for v in np.broadcast_arrays(_as64(a), _as64(b), _as64(x)))
    out = np.full(x.shape, np.nan)
    dom = (a > 0) & (b > 0)
    out[dom & (x == 0)] = 0.0
    out[dom & (x == 1)] = 1.0
    live = dom & (x > 0) & (x < 1)
    ser = live & (b * x <= 1.0) & (x <= 0.95)
    if ser.any():
        out[ser] = _incbps(a[ser], b[ser], x[ser])
    rest = live & ~ser
    if rest.any():
        aa, bb, xx = a[rest], b[rest], x[rest]
        rev = xx > aa / (aa + bb)
        A, B = np.where(rev, bb, aa), np.where(rev, aa, bb)
        X, XC = np.where(rev, 1.0 - xx, xx), np.where(rev, xx, 1.0 - xx)
        res = np.empty_like(xx)
        s2 = rev & (B * X <= 1.0) & (X <= 0.95)
        if s2.any():
            res[s2] = _incbps(A[s2], B[s2], X[s2])
        cf = ~s2
        if cf.any():
            A_, B_, X_, XC_ = A[cf], B[cf], X[cf], XC[cf]
            y = X_ * (A_ + B_ - 2.0) - (A_ - 1.0)
            sm = y < 0.0
            w = np.empty_like(X_)
            if sm.any():
                w[sm] = _incbeta_cfe(A_[sm], B_[sm], X_[sm], True)
            if (~sm).any():
                w[~sm] = _incbeta_cfe(A_[~sm], B_[~sm], X_[~sm], False) / XC_[~sm]
            yy = (A_ * np.log(X_) + B_ * np.log(XC_) + _lgamma_ab(A_ + B_) - _lgamma_ab(A_) - _lgamma_ab(B_)
                  + np.log(w / A_))
            res[cf] = np.exp(yy)
        res = np.where(rev, np.where(res <= _MACHEP, 1.0 - _MACHEP, 1.0 - res), res)
        out[rest] = res
    return out


#: B_2j (2j)! ... Cephes' zeta.c's A[]: (2j)! / B_2j
_ZETA_A = [12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17,
           -7.1661652561756670113e18]


def _zeta64(x, q):
    """Hurwitz's zeta(x, q) = sum_k (k + q)^-x, Cephes' zeta (Eigen's zeta_impl<double>): the direct sum
    until a term is below machep of the sum (at least 9 terms, and past k + q = 9), then Euler-Maclaurin's
    tail with 12 Bernoulli terms. inf at x = 1; nan for x < 1; q <= 0: inf/nan at the poles (q an integer:
    inf if x is even), nan unless x is an integer, as TF."""
    x, q = (np.array(v, np.float64) for v in np.broadcast_arrays(_as64(x), _as64(q)))
    out = np.full(x.shape, np.nan)
    pole = (q <= 0) & (q == np.floor(q))
    even = np.rint(0.5 * x) == 0.5 * x
    out[(x > 1) & pole & even] = np.inf
    live = (x > 1) & ~pole & ~((q <= 0) & (x != np.floor(x)))
    live = live | ((x > 1) & np.isnan(q)) | (np.isnan(x) & ~(q <= 0))
    out[x == 1] = np.inf
    if live.any():
        xx, qq = x[live], q[live]
        s = qq ** -xx
        a = qq.copy()
        b = np.zeros_like(s)
        done = np.zeros(s.shape, bool)
        res = np.empty_like(s)
        i = 0
        while True:
            act = ~done & ((i < 9) | (a <= 9.0))
            if not act.any():
                break
            i += 1
            a = np.where(act, a + 1.0, a)
            b = np.where(act, a ** -xx, b)
            s = np.where(act, s + b, s)
            conv = act & (np.abs(b / s) < _MACHEP)
            res[conv] = s[conv]
            done |= conv
        rest = ~done
        zero_b = rest & (b == 0)
        res[zero_b] = s[zero_b]
        em = rest & ~zero_b
        if em.any():
            xe, be, w, se = xx[em], b[em], a[em], s[em]
            se = se + be * w / (xe - 1.0) - 0.5 * be
            aa = np.ones_like(xe)
            k = 0.0
            stop = np.zeros(se.shape, bool)
            for j in range(12):
                aa = aa * (xe + k)
                be = be / w
                t = aa * be / _ZETA_A[j]
                se = np.where(stop, se, se + t)
                stop |= np.abs(t / se) < _MACHEP
                k += 1.0
                aa = aa * (xe + k)
                be = be / w
                k += 1.0
            res[em] = se
        out[live] = res
    return out


def _float_only(name, rule):
    def abstract(*avals):
        r = rule(*avals)
        if r.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):     # TF's kernels: float, double
            from ...errors import InvalidArgumentTypeError
            raise InvalidArgumentTypeError(f"{name}: expects float32 or float64 tensors, got {r.dtype.name}; "
                                           "cast first: tapeflow.cast(x, tapeflow.float32)")
        return r
    return abstract


def _narrow(r, *ops):
    dt = np.result_type(*(getattr(v, "dtype", np.float32) for v in ops))
    return np.asarray(r).astype(dt if dt.kind == "f" else np.float32, copy=False)


def _betainc_kernel(a, b, x):
    with np.errstate(all="ignore"):
        return _narrow(_betainc64(a, b, x), a, b, x)


def _betainc_vjp(g, out, a, b, x):
    # TF's BetaincGrad: x only (None for a and b); in log space, xlog1py / xlogy so that a = 1 or b = 1
    # give the tail's limit instead of 0 * -inf
    from .special import lgamma_p
    dt = aval_of(out).dtype
    av, bv = (np.asarray(v, dt) if E._is_const(v) else v for v in (a, b))
    am1, bm1 = E.sub(av, 1.0), E.sub(bv, 1.0)
    zero = np.asarray(0.0, dt)

    def xlog(c, v):
        return bind(E.select_p, bind(E.equal_p, c, 0.0), zero, E.mul(c, v))
    log_beta = E.sub(E.add(bind(lgamma_p, av), bind(lgamma_p, bv)), bind(lgamma_p, E.add(av, bv)))
    dx = bind(E.exp_p, E.sub(E.add(xlog(bm1, bind(E.log1p_p, E.neg(x))), xlog(am1, bind(E.log_p, x))), log_beta))
    return (None, None, None if E._is_const(x) else _rules.unbroadcast(E.mul(g, dx), _rules.shape_of(x)))


betainc_p = Primitive("betainc", _betainc_kernel, _float_only("betainc", _rules.elementwise("betainc", None, "f")),
                      _betainc_vjp, aliases=False, numpy_operands="adopt",
                      doc="the regularized incomplete beta I_x(a, b) (Cephes' incbet); differentiable in x only, as TF")


def _zeta_kernel(x, q):
    with np.errstate(all="ignore"):
        return _narrow(_zeta64(x, q), x, q)


def _zeta_vjp(g, out, x, q):
    # TF's ZetaGrad: d/dq zeta(x, q) = -x zeta(x + 1, q); none for x
    dt = aval_of(out).dtype
    xv = np.asarray(x, dt) if E._is_const(x) else x
    dq = E.neg(E.mul(xv, bind(zeta_p, E.add(xv, 1.0), q)))
    return E._grads2(g, x, q, None, E.mul(g, dq))


zeta_p = Primitive("zeta", _zeta_kernel, _float_only("zeta", _rules.elementwise("zeta", None, "f")), _zeta_vjp,
                   aliases=False, numpy_operands="adopt",
                   doc="Hurwitz's zeta(x, q) (Cephes); differentiable in q only, as TF")
