"""Complex gaps closed in wave 22: reduce_prod, pow, tan, sigmoid take complex64/128 with TF 2.21's values
and gradients (TF's convention: a real loss's gradient is dL/dx + i dL/dy), eager == compiled."""
import numpy as np
import pytest

import tapeflow as tf

Z23 = np.array([[1 + 2j, 3 - 1j, 0.5j], [2, 1j, 1 - 1j]], np.complex128)


def _grad(f, z, wr=1.3, wi=0.7):
    z = tf.constant(z)
    with tf.GradientTape() as t:
        t.watch(z)
        y = f(z)
        loss = tf.reduce_sum(tf.math.real(y) * wr + tf.math.imag(y) * wi)
    return y.numpy(), t.gradient(loss, z).numpy()


def test_reduce_prod_complex_is_tfs():
    y, g = _grad(lambda z: tf.reduce_prod(z, axis=1), Z23)
    # TF 2.21: the values and the gradient of sum(1.3 re + 0.7 im) of the row products
    np.testing.assert_allclose(y, [-2.5 + 2.5j, 2 + 2j], rtol=1e-14)
    np.testing.assert_allclose(g, [[1.7 - 1.6j, -0.95 - 1.35j, 10 - 3j], [2 - 0.6j, 1.2 + 4j, 1.4 - 2.6j]],
                               rtol=1e-14)
    with_zero = np.array([1 + 1j, 0, 2j])
    _, g0 = _grad(lambda z: tf.reduce_prod(z), with_zero)   # (exact with a zero factor: the others' product)
    np.testing.assert_allclose(g0, [0, np.conj((1 + 1j) * 2j) * (1.3 + 0.7j), 0], atol=1e-14)


def test_complex_of_two_float64_scalars_keeps_float64():
    # (found by LinearOperatorCirculant.trace: two 0-d float64 values were rounded through float32)
    a, b = tf.constant(np.float64(0.1)), tf.constant(np.float64(0.3))
    z = tf.complex(a, b)
    assert z.dtype is tf.complex128 and z.numpy() == 0.1 + 0.3j
    assert tf.function(lambda a, b: tf.complex(a, b))(a, b).numpy() == 0.1 + 0.3j


_Z = np.array([1 + 2j, -0.5 + 0.3j, 0.2 - 1.1j])
_W = np.array([0.5 - 0.2j, 2 + 0j, -1 + 0.5j])
# TF 2.21 (complex128): values and the gradient of sum(1.3 re(y) + 0.7 im(y)) w.r.t. z (and w for pow)
_TF = {
    "pow": ([1.7239945421911815 + 0.7139635411025165j, 0.15999999999999995 - 0.29999999999999993j,
             0.22188506730298654 + 1.7792348733489887j],
            [-0.01205511059172731 + 0.6634050435908825j, -0.8799999999999999 - 1.48j,
             0.8057996312903718 + 2.5217434720154963j],
            [2.5142082899731952 - 2.81042875657441j, 1.3068677326276146 - 0.2655788786977159j,
             3.1723591902071466 + 1.8928512301611673j]),
    "square_op": ([-3 + 4.000000000000002j, 0.15999999999999995 - 0.29999999999999993j,
                   -1.1700000000000004 - 0.43999999999999984j],
                  [5.4 - 3.8j, -0.8799999999999999 - 1.48j, -1.0200000000000002 + 3.14j], None),
    "sqrt_op": ([1.272019649514069 + 0.7861513777574233j, 0.2038322711011802 + 0.7358991743046496j,
                 0.8117986168841059 - 0.6775079293816032j],
                [0.24670975816480906 + 0.42762799811721697j, -0.21449968555121907 + 0.9426861481559498j,
                 0.6840551217171589 - 0.1397548194069782j], None),
    "tan": ([0.03381282607989669 + 1.0147936161466335j, -0.4875923164921388 + 0.36891039682556387j,
             0.07094562191920381 - 0.8120113100176989j],
            [0.01077664705587052 - 0.10927784744448066j, 1.1803177771283317 + 1.2388384452634702j,
             0.3687200814222099 + 0.39175212279703614j], None),
    "sigmoid": ([1.0214153641721806 + 0.40343870608154253j, 0.37491485878441716 + 0.07093747802480527j,
                 0.5683114183295646 - 0.30237830305147567j],
                [-0.1113473459528011 + 0.6455559289158772j, 0.32362409744497084 + 0.14449969967877202j,
                 0.4667142918216678 + 0.182031015838279j], None),
}
_OPS = {"pow": lambda z, w: tf.pow(z, w), "square_op": lambda z, w: z ** 2, "sqrt_op": lambda z, w: z ** 0.5,
        "tan": lambda z, w: tf.tan(z), "sigmoid": lambda z, w: tf.sigmoid(z)}


def _grads2(f, z, w):
    z, w = tf.constant(z), tf.constant(w)
    with tf.GradientTape() as t:
        t.watch([z, w])
        y = f(z, w)
        loss = tf.reduce_sum(tf.math.real(y) * 1.3 + tf.math.imag(y) * 0.7)
    gz, gw = t.gradient(loss, [z, w])
    return y, gz, gw


@pytest.mark.parametrize("name", sorted(_TF))
def test_complex_ops_are_tfs(name):
    y, gz, gw = _grads2(_OPS[name], _Z, _W)
    vals, wz, ww = _TF[name]
    assert y.dtype is tf.complex128
    np.testing.assert_allclose(y.numpy(), vals, rtol=1e-13)
    np.testing.assert_allclose(gz.numpy(), wz, rtol=1e-12)
    if ww is not None:
        np.testing.assert_allclose(gw.numpy(), ww, rtol=1e-12)
    # compiled == eager, complex64 too (python backend: the native tiers keep complex out)
    for z, w in ((_Z, _W), (_Z.astype(np.complex64), _W.astype(np.complex64))):
        e = _grads2(_OPS[name], z, w)
        c = tf.function(lambda a, b: _grads2_in(_OPS[name], a, b))(tf.constant(z), tf.constant(w))
        for u, v in zip(e, c):
            if u is not None:
                assert u.dtype == v.dtype
                np.testing.assert_array_equal(u.numpy(), v.numpy())


def _grads2_in(f, z, w):
    with tf.GradientTape() as t:
        t.watch([z, w])
        y = f(z, w)
        loss = tf.reduce_sum(tf.math.real(y) * 1.3 + tf.math.imag(y) * 0.7)
    gz, gw = t.gradient(loss, [z, w])
    return y, gz, gw if gw is not None else tf.zeros_like(w)


@pytest.mark.parametrize("name", sorted(_OPS))
def test_complex_gradients_match_finite_differences(name):
    f = _OPS[name]
    _, gz, gw = _grads2(f, _Z, _W)

    def loss(z, w):
        y = f(tf.constant(z), tf.constant(w))
        return float(tf.reduce_sum(tf.math.real(y) * 1.3 + tf.math.imag(y) * 0.7))
    r = np.random.default_rng(0)
    eps = 1e-6
    for which, g in ((0, gz), (1, gw)):
        if g is None:
            continue
        for part in (1.0, 1j):
            d = r.standard_normal(3) * part
            args_p = [_Z + eps * d, _W] if which == 0 else [_Z, _W + eps * d]
            args_m = [_Z - eps * d, _W] if which == 0 else [_Z, _W - eps * d]
            num = (loss(*args_p) - loss(*args_m)) / (2 * eps)
            ana = float(np.sum(np.real(np.conj(g.numpy()) * d)))
            assert abs(ana - num) <= 1e-6 * (1 + abs(num)), (name, which, ana, num)


def test_complex_pow_edges():
    # TF 2.21: gradient of re(z^2) at z = 0 is 0 (y * z^(y-1) with mul_no_nan); a complex base's log
    # exists off 0, so d/dw of (-1)^w is finite (TF: mask x != 0, not x > 0)
    z0 = tf.constant(np.array([0j]))
    with tf.GradientTape() as t:
        t.watch(z0)
        y = tf.reduce_sum(tf.math.real(tf.pow(z0, tf.constant(np.array([2 + 0j])))))
    assert t.gradient(y, z0).numpy()[0] == 0
    w = tf.constant(np.array([0.5 + 0j]))
    with tf.GradientTape() as t:
        t.watch(w)
        y = tf.reduce_sum(tf.math.imag(tf.pow(tf.constant(np.array([-1 + 0j])), w)))
    # (-1)^w = exp(i pi w), w = a + ib: im = e^(-pi b) sin(pi a); at w = 0.5 d/da = 0, d/db = -pi,
    # so the gradient d/da + i d/db is -i pi
    np.testing.assert_allclose(t.gradient(y, w).numpy(), [-1j * np.pi], atol=1e-12)
    # TF 2.21: pow(complex128, float64 tensor) is an InvalidArgumentError (no promotion)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.pow(tf.constant(_Z), tf.constant(2.0, tf.float64))


def test_sort_of_complex_is_refused_as_tf():
    # TF 2.21: InvalidArgumentError "Value for attr 'T' of complex128 is not in the list of allowed values"
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.sort(tf.constant(_Z))


def test_complex_pow_of_zero_is_tfs():
    # TF 2.21: pow(0, [0, 1, -1, 0.5j, -0.5+1j, 2]) = [nan+nanj, 0, inf+nanj, nan+nanj, inf+nanj, 0] (exp(y log x))
    y = np.array([0, 1, -1, 0.5j, -0.5 + 1j, 2 + 0j])
    for dt in (np.complex64, np.complex128):
        for f in (tf.pow, tf.function(tf.pow)):
            got = f(tf.constant(np.zeros(6, dt)), tf.constant(y.astype(dt))).numpy()
            np.testing.assert_array_equal(np.isnan(got.real), [1, 0, 0, 1, 0, 0])
            np.testing.assert_array_equal(np.isnan(got.imag), [1, 0, 1, 1, 1, 0])
            assert got.real[2] == got.real[4] == np.inf and got[1] == got[5] == 0
