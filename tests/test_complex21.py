"""complex64/complex128 (wave 21): dtypes, reprs, ops, TF's errors, eager == compiled on every
backend, and gradients with TF's convention (a real loss's gradient with respect to z = x + iy is
dL/dx + i dL/dy), against TF 2.21's numbers and central differences on the real and imaginary
parts separately."""
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import errors

C64 = np.complex64
Z = np.array([1 + 2j, 3 - 4j, 0j], C64)
W = np.array([0.5 - 1j, 2 + 0.25j, 1j], C64)


# --- dtypes, conversion, reprs ---------------------------------------------------------------------

def test_dtype_objects_match_tf():
    # TF 2.21: (tf.complex64, "<dtype: 'complex64'>", True, False, tf.float32, 8)
    d = tf.complex64
    assert repr(d) == "tf.complex64" and str(d) == "<dtype: 'complex64'>"
    assert d.is_complex and not d.is_floating and d.real_dtype is tf.float32 and d.size == 8
    assert tf.complex128.real_dtype is tf.float64 and tf.float32.real_dtype is tf.float32
    assert tf.as_dtype("complex64") is tf.complex64 and tf.as_dtype(complex) is tf.complex128
    assert tf.dtypes.complex64 is tf.complex64
    with pytest.raises(TypeError, match="Cannot find minimum value of <dtype: 'complex64'>"):
        tf.complex64.min


def test_conversion_and_reprs_are_tfs():
    # TF 2.21: tf.constant(1+2j) -> complex128; dtype=complex64 as asked; repr/str as below
    assert repr(tf.constant(1 + 2j)) == "<tf.Tensor: shape=(), dtype=complex128, numpy=(1+2j)>"
    assert repr(tf.constant(1 + 2j, tf.complex64)) == "<tf.Tensor: shape=(), dtype=complex64, numpy=(1+2j)>"
    assert repr(tf.complex(1.0, 2.0)) == "<tf.Tensor: shape=(), dtype=complex64, numpy=(1+2j)>"
    z = tf.constant(Z)
    assert str(z) == "tf.Tensor([1.+2.j 3.-4.j 0.+0.j], shape=(3,), dtype=complex64)"
    assert repr(tf.constant([1 + 2j, 3 - 4j], tf.complex64)) == \
        "<tf.Tensor: shape=(2,), dtype=complex64, numpy=array([1.+2.j, 3.-4.j], dtype=complex64)>"
    assert tf.convert_to_tensor(1j).dtype is tf.complex128
    assert z.numpy().dtype == C64 and np.array_equal(z.numpy(), Z)
    v = tf.Variable(z)
    assert repr(v).startswith("<tf.Variable 'Variable:0' shape=(3,) dtype=complex64, numpy=array([1.+2.j")
    v.assign(z * 2)
    assert np.array_equal(v.numpy(), Z * 2)
    assert np.array_equal(tf.zeros(2, tf.complex64).numpy(), np.zeros(2, C64))


def test_parts_and_casts_give_tfs_values():
    z = tf.constant(Z)
    cases = {   # TF 2.21's results
        "real": (tf.math.real(z), np.array([1, 3, 0], np.float32)),
        "imag": (tf.math.imag(z), np.array([2, -4, 0], np.float32)),
        "conj": (tf.math.conj(z), np.array([1 - 2j, 3 + 4j, 0j], C64)),
        "angle": (tf.math.angle(z), np.array([1.1071488, -0.9272952, 0.0], np.float32)),
        "abs": (tf.abs(z), np.array([2.236068, 5.0, 0.0], np.float32)),
        "cast_f32": (tf.cast(z, tf.float32), np.array([1, 3, 0], np.float32)),
        "cast_i32": (tf.cast(z, tf.int32), np.array([1, 3, 0], np.int32)),
        "cast_c128": (tf.cast(z, tf.complex128), Z.astype(np.complex128)),
        "f32_to_c64": (tf.cast(tf.constant([1.5]), tf.complex64), np.array([1.5 + 0j], C64)),
        "bool_to_c64": (tf.cast(tf.constant([True]), tf.complex64), np.array([1 + 0j], C64)),
        "abs_c128": (tf.abs(tf.constant(3 - 4j)), np.float64(5.0)),
        "real_of_float": (tf.math.real(tf.constant([1.0, 2.0])), np.array([1, 2], np.float32)),
        "imag_of_float": (tf.math.imag(tf.constant([1.0, 2.0])), np.array([0, 0], np.float32)),
        "angle_of_float": (tf.math.angle(tf.constant([1.0, -2.0])), np.array([0, np.pi], np.float32)),
        "conj_of_int": (tf.math.conj(tf.constant([1, -2])), np.array([1, -2], np.int32)),
    }
    for name, (got, want) in cases.items():
        assert got.numpy().dtype == want.dtype, name
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=name)


def test_arithmetic_reductions_matmul_give_tfs_values():
    z, w = tf.constant(Z), tf.constant(W)
    zz = tf.constant(Z[:2])
    assert np.array_equal((z * z).numpy(), np.array([-3 + 4j, -7 - 24j, 0j], C64))
    assert np.array_equal((z * 1j).numpy(), np.array([-2 + 1j, 4 + 3j, 0j], C64))   # a Python complex is weak
    assert (z * 2.0).dtype is tf.complex64 and (z * 2).dtype is tf.complex64
    assert np.array_equal((-z).numpy(), -Z) and np.array_equal((z - w).numpy(), Z - W)
    np.testing.assert_array_equal((zz / zz).numpy(), np.array([1, 1], C64))
    assert np.array_equal((z == z).numpy(), [True, True, True])
    assert tf.reduce_sum(z).numpy() == C64(4 - 2j)
    # TF 2.21: reduce_mean -> (1.3333333730697632-0.6666666865348816j)
    assert tf.reduce_mean(z).numpy() == C64(1.3333333730697632 - 0.6666666865348816j)
    m = tf.matmul(tf.reshape(z, (1, 3)), tf.reshape(z, (3, 1)))
    assert m.dtype is tf.complex64 and m.numpy()[0, 0] == C64(-10 - 20j)
    assert tf.einsum("i,i->", z, z).numpy() == C64(-10 - 20j)
    assert np.array_equal(tf.cumsum(z).numpy(), np.array([1 + 2j, 4 - 2j, 4 - 2j], C64))
    np.testing.assert_allclose(tf.exp(z).numpy(), np.exp(Z), rtol=1e-6)
    np.testing.assert_allclose(tf.sqrt(z).numpy(), np.sqrt(Z), rtol=1e-6)
    np.testing.assert_allclose(tf.math.log(zz).numpy(), np.log(Z[:2]), rtol=1e-6)
    assert np.array_equal(tf.abs(z).numpy() ** 2, np.array([5, 25, 0], np.float32))


@pytest.mark.parametrize("fn, needle", [
    # TF 2.21: InvalidArgumentError "Value for attr 'T' of complex64 is not in the list of allowed values"
    (lambda z: z < z, "less: does not accept complex"),
    (lambda z: tf.maximum(z, z), "maximum: does not accept complex"),
    (lambda z: tf.reduce_max(z), "reduce_max: does not accept complex"),
    (lambda z: tf.argmax(z), "argmax: does not accept complex"),
    (lambda z: tf.math.is_nan(z), "isnan: does not accept complex"),
    # TF 2.21: InvalidArgumentError "cannot compute AddV2 as input #1 was expected to be a complex64 tensor"
    (lambda z: z + tf.constant([1.0, 1.0, 1.0]), "dtypes differ"),
])
def test_bad_complex_operands_raise_invalid_argument(fn, needle):
    z = tf.constant(Z)
    for f in (fn, tf.function(fn)):
        with pytest.raises(errors.InvalidArgumentError, match=needle):
            f(z)


def test_complex_constructor_errors_are_tfs():
    # TF 2.21: TypeError "The `real` and `imag` components have incorrect types: int32 int32. ..."
    with pytest.raises(TypeError, match="incorrect types: int32 int32"):
        tf.complex(1, 2)
    with pytest.raises(TypeError, match="incorrect types: float64 float32"):
        tf.complex(tf.constant(1.0, tf.float64), tf.constant(2.0))
    # TF 2.21: InvalidArgumentError "Incompatible shapes: [2] vs. [3]"
    with pytest.raises(errors.InvalidArgumentError):
        tf.complex(tf.ones(2), tf.ones(3))
    assert tf.complex(tf.ones(2), tf.ones(())).numpy().tolist() == [1 + 1j, 1 + 1j]
    assert tf.complex(tf.constant(1.0, tf.float64), tf.constant(2.0, tf.float64)).dtype is tf.complex128


# --- eager == compiled on every backend -----------------------------------------------------------

def _program(z, w):
    a = tf.math.real(z * w) + tf.math.imag(z / (w + 1.0)) + tf.abs(z) ** 2 + tf.math.angle(w)
    b = tf.exp(z) * tf.math.conj(w) - tf.sqrt(w) + tf.math.log(w) * 2.0 + z * 1j
    c = tf.cast(b, tf.float32) + tf.reduce_sum(a) + tf.math.real(tf.reduce_mean(z))
    m = tf.matmul(tf.reshape(z, (3, 1)), tf.reshape(w, (1, 3)))
    return a, b, c, tf.reduce_sum(m, axis=0), tf.cumsum(z), tf.where(tf.abs(z) > 1, z, w), z == w, \
        tf.complex(a, c)


@pytest.mark.parametrize("backend, fuse", [("python", "0"), ("python", "1"), ("interpreter", "0")])
def test_compiled_equals_eager(backend, fuse, monkeypatch):
    monkeypatch.setenv("TAPEFLOW_FUSE_AFTER", fuse)   # "1": the fused tier compiles before the first call
    z, w = tf.constant(Z), tf.constant(W)
    want = _program(z, w)
    f = tf.function(_program, backend=backend)
    for _ in range(3):
        got = f(z, w)
    for g, e in zip(got, want):
        assert g.dtype == e.dtype
        assert np.array_equal(g.numpy(), e.numpy(), equal_nan=True)


def test_native_tiers_keep_complex_out():
    from tapeflow.compiler.backends import numba_backend
    z, w = tf.constant(Z), tf.constant(W)
    # the numba backend declines a graph holding complex values (its scalar forms are real)
    with pytest.raises(NotImplementedError, match="numba backend: complex"):
        tf.function(_program, backend="numba")(z, w)
    g = tf.function(_program).get_concrete_function(z, w).graph
    assert numba_backend._has_complex(g)
    # no equation over complex values may join a fused loop; real ones still may
    for e in g.eqns:
        if numba_backend._complex_eqn(e):
            assert not numba_backend.can_lower_in_loop(e)
    assert any(numba_backend.can_lower_in_loop(e) for e in g.eqns if not numba_backend._complex_eqn(e))


# --- gradients: TF's convention --------------------------------------------------------------------

def _grads(f, *xs):
    xs = [tf.constant(x) for x in xs]
    with tf.GradientTape() as t:
        for x in xs:
            t.watch(x)
        y = f(*xs)
    return [g.numpy() for g in t.gradient(y, xs)]


Z2 = np.array([1 + 2j, 3 - 4j], C64)
W2 = np.array([0.5 - 1j, 2 + 0.25j], C64)
A = np.array([[1 + 1j, 2 - 1j], [0.5j, 3]], C64)
B = np.array([[2 - 1j, 1j], [1, -1 - 1j]], C64)
M = np.array([[1 + 2j, 3j], [1, -2]], C64)

def k(v, x):
    """The constant ``v`` at ``x``'s precision (complex64/float32 or complex128/float64), so the
    programs below run in single precision against TF's numbers and in double for differences."""
    single = x.dtype in (tf.complex64, tf.float32)
    v = np.asarray(v)
    return tf.constant(v.astype((np.complex64 if single else np.complex128) if v.dtype.kind == "c"
                                else (np.float32 if single else np.float64)))


# (name, f, inputs, TF 2.21's gradients)
TF_GRADS = [
    ("abs2", lambda z: tf.abs(z) ** 2, [Z2], [[2 + 4j, 6 - 8j]]),
    ("abs", lambda z: tf.abs(z), [Z2], [[0.4472136 + 0.8944272j, 0.6 - 0.8j]]),
    ("abs_at_0", lambda z: tf.abs(z), [np.array([0j], C64)], [[0j]]),
    ("real_zw", lambda z, w: tf.math.real(z * w), [Z2, W2], [[0.5 + 1j, 2 - 0.25j], [1 - 2j, 3 + 4j]]),
    ("imag_zw", lambda z, w: tf.math.imag(z * w), [Z2, W2], [[-1 + 0.5j, 0.25 + 2j], [2 + 1j, -4 + 3j]]),
    ("complex", lambda a, b: tf.math.real(tf.complex(a, b) * k(W2, a)),
     [np.array([1., 2.], np.float32), np.array([3., 4.], np.float32)], [[0.5, 2.], [1., -0.25]]),
    ("complex_abs", lambda a, b: tf.abs(tf.complex(a, b)), [np.array([1., 2.], np.float32),
                                                           np.array([3., 4.], np.float32)],
     [[0.31622776, 0.4472136], [0.94868326, 0.8944272]]),
    ("complex_target", lambda z: tf.reduce_sum(z * z), [Z2], [[2 - 4j, 6 + 8j]]),
    ("conj", lambda z: tf.math.real(tf.math.conj(z) * k(W2, z)), [Z2], [[0.5 - 1j, 2 + 0.25j]]),
    ("angle", lambda z: tf.math.angle(z), [Z2], [[-0.4 + 0.2j, 0.16 + 0.12j]]),
    ("exp", lambda z: tf.math.real(tf.exp(z)), [Z2], [[-1.1312044 - 2.4717267j, -13.128783 - 15.200785j]]),
    ("log", lambda z: tf.math.imag(tf.math.log(z)), [Z2], [[-0.4 + 0.2j, 0.16 + 0.12j]]),
    ("sqrt", lambda z: tf.math.real(tf.sqrt(z)), [Z2], [[0.28443223 + 0.17578879j, 0.2 - 0.1j]]),
    ("div", lambda z, w: tf.math.real(z / w), [Z2, W2],
     [[0.4 - 0.8j, 0.4923077 + 0.06153846j], [1.76 - 0.32j, -0.4733728 - 1.1360948j]]),
    ("matmul", lambda a, b: tf.math.real(tf.reduce_sum(tf.matmul(a, b) * k(M, a))), [A, B],
     [[[1 - 3j, 4 + 1j], [2 + 3j, 3 - 2j]], [[-1 - 3.5j, -3 - 2j], [7 - 3j, -3 - 6j]]]),
    ("einsum", lambda a, b: tf.math.real(tf.einsum("ij,jk->", a, b)), [A, B],
     [[[2, 1j], [2, 1j]], [[1 - 1.5j, 1 - 1.5j], [5 + 1j, 5 + 1j]]]),
    ("cast_c2f", lambda z: tf.cast(z, z.dtype.real_dtype) * 3., [Z2], [[3, 3]]),
    ("cast_f2c", lambda a: tf.math.imag(tf.cast(a, k(W2, a).dtype) * k(W2, a)),
     [np.array([1., 2.], np.float32)], [[-1., 0.25]]),
    ("real_in", lambda z: tf.math.real(z) * k([2., 3.], z), [Z2], [[2, 3]]),
    ("imag_in", lambda z: tf.math.imag(z) * k([2., 3.], z), [Z2], [[2j, 3j]]),
    ("mean", lambda z: tf.math.real(tf.reduce_mean(z * k(W2, z))), [Z2], [[0.25 + 0.5j, 1 - 0.125j]]),
    ("sub_neg", lambda z, w: tf.math.real(-(z - w) * w), [Z2, W2], [[-0.5 - 1j, -2 + 0.25j], [4j, 1 - 4.5j]]),
    ("square", lambda z: tf.math.real(tf.square(z)), [Z2], [[2 - 4j, 6 + 8j]]),
    ("cumsum", lambda z: tf.math.real(tf.cumsum(z) * k(W2, z)), [Z2], [[2.5 + 0.75j, 2 - 0.25j]]),
    ("reciprocal", lambda z: tf.math.real(tf.math.reciprocal(z)), [Z2], [[0.12 - 0.16j, 0.0112 + 0.0384j]]),
    ("complex_target_default_seed", lambda z: z * k(W2, z), [Z2], [[0.5 + 1j, 2 - 0.25j]]),
]


@pytest.mark.parametrize("name, f, xs, want", TF_GRADS, ids=[c[0] for c in TF_GRADS])
def test_gradients_are_tfs(name, f, xs, want):
    got = _grads(f, *xs)
    for g, x, w in zip(got, xs, want):
        assert g.dtype == x.dtype, name    # a complex source gets a complex gradient, a real one a real
        np.testing.assert_allclose(g, np.array(w, x.dtype), rtol=2e-6, atol=1e-6, err_msg=name)
    # the same gradient traced (the general, non-lean backward) and compiled
    traced = tf.function(lambda *a: _grads_in_function(f, *a))(*[tf.constant(x) for x in xs])
    for g, t in zip(got, traced):
        np.testing.assert_allclose(t.numpy(), g, rtol=1e-6, atol=1e-7, err_msg=name)


def _grads_in_function(f, *xs):
    with tf.GradientTape() as t:
        for x in xs:
            t.watch(x)
        y = f(*xs)
    return t.gradient(y, list(xs))


def _loss_value(f, zs):
    return float(np.sum(f(*[tf.constant(z) for z in zs]).numpy()))


@pytest.mark.parametrize("name, f, xs, want", [c for c in TF_GRADS if "at_0" not in c[0] and "target" not in c[0]],
                         ids=[c[0] for c in TF_GRADS if "at_0" not in c[0] and "target" not in c[0]])
def test_gradients_match_finite_differences_of_real_and_imaginary_parts(name, f, xs, want):
    # in complex128/float64: grad = dL/dx + i dL/dy, so a step along the real parts checks its
    # real part and a step along the imaginary parts its imaginary part
    xs = [x.astype(np.complex128 if x.dtype.kind == "c" else np.float64) for x in xs]
    f64 = f
    got = _grads(lambda *a: tf.reduce_sum(f64(*a)), *xs)
    rng = np.random.default_rng(0)
    eps = 1e-6
    for part in (1, 1j):
        v = [rng.standard_normal(x.shape) * (part if x.dtype.kind == "c" else 1) for x in xs]
        if part == 1j and not any(x.dtype.kind == "c" for x in xs):
            continue
        plus = _loss_value(f64, [x + eps * d for x, d in zip(xs, v)])
        minus = _loss_value(f64, [x - eps * d for x, d in zip(xs, v)])
        numeric = (plus - minus) / (2 * eps)
        analytic = sum(float(np.sum(np.real(np.conj(g) * d))) for g, d in zip(got, v))
        assert abs(analytic - numeric) <= 1e-6 + 1e-6 * abs(numeric), (name, part, analytic, numeric)


def test_second_order_through_complex():
    # h(z) = <grad L, v> differentiated again: L = |z|^2 * re(z), d/dz of h vs finite differences
    def loss(z):
        return tf.reduce_sum(tf.abs(z) ** 2 * tf.math.real(z))
    z0 = np.array([1 + 2j, -0.5 + 0.3j], np.complex128)
    v = np.array([0.3 - 1j, 1 + 0.5j])

    def h(z):
        with tf.GradientTape() as t:
            t.watch(z)
            y = loss(z)
        return tf.math.real(tf.reduce_sum(tf.math.conj(t.gradient(y, z)) * tf.constant(v)))
    z = tf.constant(z0)
    with tf.GradientTape() as outer:
        outer.watch(z)
        hv = h(z)
    g2 = outer.gradient(hv, z).numpy()
    eps = 1e-6
    for d in (np.array([1.0, -2.0]), np.array([0.5j, 1j])):
        numeric = (float(h(tf.constant(z0 + eps * d))) - float(h(tf.constant(z0 - eps * d)))) / (2 * eps)
        analytic = float(np.sum(np.real(np.conj(g2) * d)))
        assert abs(analytic - numeric) < 1e-5, (analytic, numeric)


def test_cond_and_while_carry_complex_gradients():
    z0 = tf.constant(Z2)

    def f(z):
        y = tf.cond(tf.reduce_sum(tf.abs(z)) > 1, lambda: z * z, lambda: z)
        _, y = tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * tf.constant(W2)), (0, y))
        return tf.math.real(tf.reduce_sum(y))
    eager = _grads(f, Z2)[0]
    # d/dz real(sum(z^2 w^2)): conj(2 z w^2)
    np.testing.assert_allclose(eager, np.conj(2 * Z2 * W2 ** 2), rtol=1e-5)
    traced = tf.function(lambda z: _grads_in_function(f, z))(z0)[0]
    np.testing.assert_allclose(traced.numpy(), eager, rtol=1e-6)


# --- tf.linalg.eig / eigvals (TF 2.21's numbers; eigenvector phases differ: |v| is compared) ----------

EIG_A = np.array([[1., 2., 0.], [-1., 3., 1.], [0.5, 0., 2.]], np.float32)
EIG_B = np.array([[1 + 1j, 2 - 0.5j], [0.3j, -1 + 2j]], np.complex128)
# TF 2.21: eigenvalues, |eigenvectors|, and the gradients of l1 = sum(re(e) w + im(e) w^2),
# l2 = sum(|v| W), l3 = sum(|eigvals|) (w = 1..n, W its tiling), from /tmp probes of tf.linalg.eig
EIG_TF = {
    "A": dict(
        e=[1.65884 + 1.16154j, 1.65884 - 1.16154j, 2.68233 + 0j],
        absv=[[0.78655, 0.78655, 0.66748], [0.52517, 0.52517, 0.56146], [0.32486, 0.32486, 0.48912]],
        g1=[[0.63306, -1.30495, 0.63388], [2.68428, 3.31735, 0.07438], [0.14877, 1.41653, 2.04959]],
        g2=[[-0.03987, -0.19627, 0.12052], [-0.09615, -0.01881, -0.2077], [0.96604, 0.43909, 0.05868]],
        g3=[[1.08242, 0.4416, -0.29238], [-0.59687, 0.48555, 0.28633], [0.57267, -0.0121, 1.07032]]),
    "B": dict(
        e=[0.97079 + 1.29398j, -0.97079 + 1.70602j],
        absv=[[0.98989, 0.70166], [0.14186, 0.71251]],
        g1=[[1.38036 + 0.72274j, -0.41219 + 0.24198j], [-0.92625 - 3.15121j, 1.61964 + 4.27726j]],
        g2=[[-0.06404 + 0.01359j, 0.01003 + 0.00671j], [-0.06143 + 0.41649j, 0.06404 - 0.01359j]],
        g3=[[0.65936 + 0.95205j, -0.04458 - 0.15968j], [1.13886 - 0.03108j, -0.55381 + 0.717j]]),
}


def _eig_losses(x):
    e, v = tf.linalg.eig(x)
    n = e.shape[0]
    w = tf.cast(tf.range(1, n + 1), e.dtype.real_dtype)
    l1 = tf.reduce_sum(tf.math.real(e) * w) + tf.reduce_sum(tf.math.imag(e) * w * w)
    l2 = tf.reduce_sum(tf.abs(v) * tf.reshape(tf.concat([w, w, w], 0)[: n * n], (n, n)))
    l3 = tf.reduce_sum(tf.abs(tf.linalg.eigvals(x)))
    return e, v, (l1, l2, l3)


@pytest.mark.parametrize("key, m", [("A", EIG_A), ("B", EIG_B)])
def test_eig_is_tfs(key, m):
    want = EIG_TF[key]
    x = tf.constant(m)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        e, v, losses = _eig_losses(x)
    assert e.dtype == (tf.complex64 if m.dtype == np.float32 else tf.complex128) and v.dtype == e.dtype
    np.testing.assert_allclose(e.numpy(), want["e"], atol=2e-5)
    np.testing.assert_allclose(np.abs(v.numpy()), want["absv"], atol=2e-5)
    for k, l in zip(("g1", "g2", "g3"), losses):
        g = t.gradient(l, x)
        assert g.dtype == x.dtype
        np.testing.assert_allclose(g.numpy(), want[k], atol=5e-5, err_msg=k)
    assert tf.eig is tf.linalg.eig and tf.eigvals is tf.linalg.eigvals


def test_eig_gradient_matches_finite_differences():
    m = EIG_B
    rng = np.random.default_rng(0)
    for k in range(3):
        def loss(a, k=k):
            return float(_eig_losses(tf.constant(a))[2][k])
        x = tf.constant(m)
        with tf.GradientTape() as t:
            t.watch(x)
            lk = _eig_losses(x)[2][k]
        g = t.gradient(lk, x).numpy()
        for part in (1.0, 1j):
            d = rng.standard_normal(m.shape) * part
            num = (loss(m + 1e-6 * d) - loss(m - 1e-6 * d)) / 2e-6
            assert abs(float(np.sum(np.real(np.conj(g) * d))) - num) < 1e-6 * (1 + abs(num)), (k, part)


def test_eig_errors():
    # TF 2.21: InvalidArgumentError "Input matrix must be square."
    with pytest.raises(errors.InvalidArgumentError, match="square"):
        tf.linalg.eig(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="float32 or float64"):
        tf.linalg.eig(np.ones((2, 2), np.int32))   # (TF 2.21 fails with an UnboundLocalError of its own)


# (name, f, TF 2.21's gradient at Z2) for the trigonometric and hyperbolic functions
TRIG = [
    ("sin", lambda z: tf.math.real(tf.sin(z)), [2.032723 + 3.0518978j, -27.034945 - 3.8511534j]),
    ("tanh", lambda z: tf.math.real(tf.tanh(z)), [-0.30200148 - 0.568103j, -0.0013957 - 0.00982348j]),
]


@pytest.mark.parametrize("name, f, want", TRIG, ids=[t[0] for t in TRIG])
def test_trig_gradients_are_tfs(name, f, want):
    np.testing.assert_allclose(_grads(f, Z2)[0], np.array(want, C64), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("op", ["sin", "cos", "tanh", "sinh", "cosh"])
def test_trig_values_and_finite_differences(op):
    fn = getattr(tf, op)
    z = np.array([0.3 + 0.7j, -1.1 + 0.2j], np.complex128)
    np.testing.assert_allclose(fn(tf.constant(z)).numpy(), getattr(np, op)(z), rtol=1e-12)
    w = np.array([0.5 - 1j, 2 + 0.25j])
    loss = lambda a: float(tf.math.real(tf.reduce_sum(fn(tf.constant(a)) * w)))   # noqa: E731
    g = _grads(lambda a: tf.math.real(tf.reduce_sum(fn(a) * w)), z)[0]
    for part in (1.0, 1j):
        d = np.array([0.7, -1.3]) * part
        num = (loss(z + 1e-6 * d) - loss(z - 1e-6 * d)) / 2e-6
        assert abs(float(np.sum(np.real(np.conj(g) * d))) - num) < 1e-7 * (1 + abs(num))
    # traced (the general backward) gives the same
    traced = tf.function(lambda a: _grads_in_function(lambda b: tf.math.real(tf.reduce_sum(fn(b) * w)), a))(
        tf.constant(z))[0]
    np.testing.assert_allclose(traced.numpy(), g, rtol=1e-12)
