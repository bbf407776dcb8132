"""The inverse trigonometric and hyperbolic primitives (asin, acos, sinh, cosh, asinh, acosh,
atanh) against TF 2.21's values and gradients, edge values included (|x| = 1: inf gradients;
outside the domain: nan). TF_OUT is what TF printed for _run; Eigen's and NumPy's kernels differ
in the last float32 digit, hence rtol 1e-6."""
import numpy as np
import pytest

import tapeflow as tf

VALS = {"asin": [-1., -0.5, 0., 0.7, 1., 1.5], "acos": [-1., -0.5, 0., 0.7, 1., 1.5],
        "sinh": [-3., -1e-4, 0., 0.5, 20.], "cosh": [-3., 0., 0.5, 20.], "asinh": [-3., -1e-4, 0., 0.5, 1e3],
        "acosh": [0.5, 1., 1.5, 10.], "atanh": [-1., -0.5, 0., 0.7, 1., 1.5]}
TF_OUT = """
asin float32 [-1.5707963705062866, -0.5235987901687622, 0.0, 0.7753974795341492, 1.5707963705062866, nan] [inf, 1.154700517654419, 1.0, 1.4002799987792969, inf, nan]
asin float64 [-1.5707963267948966, -0.5235987755982989, 0.0, 0.775397496610753, 1.5707963267948966, nan] [inf, 1.1547005383792517, 1.0, 1.4002800840280099, inf, nan]
acos float32 [3.1415927410125732, 2.094395160675049, 1.5707963705062866, 0.7953988313674927, 0.0, nan] [-inf, -1.154700517654419, -1.0, -1.4002799987792969, -inf, nan]
acos float64 [3.141592653589793, 2.0943951023931957, 1.5707963267948966, 0.7953988301841436, 0.0, nan] [-inf, -1.1547005383792517, -1.0, -1.4002800840280099, -inf, nan]
sinh float32 [-10.017874717712402, -9.999999747378752e-05, 0.0, 0.5210952758789062, 242582592.0] [10.067662239074707, 1.0, 1.0, 1.1276259422302246, 242582592.0]
sinh float64 [-10.017874927409903, -0.00010000000016666667, 0.0, 0.5210953054937474, 242582597.70489514] [10.067661995777765, 1.000000005, 1.0, 1.1276259652063807, 242582597.70489514]
cosh float32 [10.067662239074707, 1.0, 1.1276259422302246, 242582592.0] [-10.017874717712402, 0.0, 0.5210952758789062, 242582592.0]
cosh float64 [10.067661995777765, 1.0, 1.1276259652063807, 242582597.70489514] [-10.017874927409903, 0.0, 0.5210953054937474, 242582597.70489514]
asinh float32 [-1.8184465169906616, -9.999999747378752e-05, 0.0, 0.4812118411064148, 7.600902557373047] [0.3162277340888977, 1.0, 1.0, 0.8944271802902222, 0.000999999581836164]
asinh float64 [-1.8184464592320668, -9.999999983333334e-05, 0.0, 0.48121182505960347, 7.600902709541988] [0.31622776601683794, 0.999999995, 1.0, 0.8944271909999159, 0.0009999995000003752]
acosh float32 [nan, 0.0, 0.9624236822128296, 2.993222951889038] [nan, inf, 0.8944270610809326, 0.10050376504659653]
acosh float64 [nan, 0.0, 0.9624236501192069, 2.993222846126381] [nan, inf, 0.8944271909999159, 0.10050378152592121]
atanh float32 [-inf, -0.5493061542510986, 0.0, 0.8673005104064941, inf, nan] [inf, 1.3333333730697632, 1.0, 1.9607843160629272, inf, -0.800000011920929]
atanh float64 [-inf, -0.5493061443340548, 0.0, 0.8673005276940531, inf, nan] [inf, 1.3333333333333333, 1.0, 1.9607843137254901, inf, -0.8]
"""


@pytest.mark.parametrize("line", TF_OUT.strip().splitlines())
@pytest.mark.parametrize("compiled", [False, True])
def test_matches_tf(line, compiled):
    name, dt, rest = line.split(" ", 2)
    i = rest.index("] [")
    want_y = np.array(eval(rest[:i + 1].replace("nan", "np.nan").replace("inf", "np.inf")))  # noqa: S307
    want_g = np.array(eval(rest[i + 2:].replace("nan", "np.nan").replace("inf", "np.inf")))  # noqa: S307

    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = getattr(tf.math, name)(x)
        return y, t.gradient(y, x)
    y, g = (tf.function(f) if compiled else f)(tf.constant(np.array(VALS[name], dt)))
    np.testing.assert_allclose(y.numpy(), want_y, rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), want_g, rtol=1e-6)


def test_integer_inputs_raise_as_tf():
    with pytest.raises(tf.errors.InvalidArgumentError):   # TF 2.21: InvalidArgumentError
        tf.math.asinh(tf.constant([1, 2]))
