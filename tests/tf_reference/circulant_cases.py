"""The circulant operators of tests/test_circulant22.py and make_circulant_reference.py, built the same way
under TF 2.21 (``L = tf.linalg``) and tapeflow (no TF import here: the tests run without TF).

``operators(L, tf)`` builds each case; ``evaluate(op)`` calls every public method on fixed inputs of the
operator's dtype and returns plain values (complex arrays as {"re": ..., "im": ...}), so the generator
records TF's and the test compares tapeflow's. ``bad(L, tf)`` are programs TF refuses."""
import numpy as np


def _spectra():
    r = np.random.RandomState(22)
    c = lambda *s: (r.randn(*s) + 1j * r.randn(*s))   # noqa: E731
    # a Hermitian spectrum (a real kernel's DFT) with positive real part: a real, self-adjoint operator
    h = np.fft.fft(np.array([4.0, 1.0, 0.5, 0.5, 1.0]))
    h2 = np.fft.fft2(np.array([[6.0, 1.0, 1.0], [0.5, 0.2, 0.2], [0.5, 0.2, 0.2]]))
    return dict(c4=c(4), cb=c(2, 4), r5=r.rand(5) + 0.5, h=h, c23=c(2, 3), cb23=c(2, 2, 3), h2=h2, c223=c(2, 2, 3),
                r222=r.rand(2, 2, 2) + 1.0)


def operators(L, tf):
    """name -> thunk building the operator."""
    S = _spectra()
    C1, C2, C3 = L.LinearOperatorCirculant, L.LinearOperatorCirculant2D, L.LinearOperatorCirculant3D
    c64 = lambda a: a.astype(np.complex64)   # noqa: E731
    return {
        "c1_complex64": lambda: C1(c64(S["c4"])),
        "c1_complex128": lambda: C1(S["c4"], input_output_dtype=tf.complex128),
        "c1_batch": lambda: C1(c64(S["cb"])),
        "c1_real_spectrum": lambda: C1(S["r5"].astype(np.float32)),
        "c1_real_spectrum_pd": lambda: C1(S["r5"], input_output_dtype=tf.complex128, is_positive_definite=True),
        "c1_hermitian_float32": lambda: C1(c64(S["h"]), input_output_dtype=tf.float32, is_self_adjoint=True,
                                           is_positive_definite=True),
        "c1_hermitian_float64": lambda: C1(S["h"], input_output_dtype=tf.float64),
        "c2_complex64": lambda: C2(c64(S["c23"])),
        "c2_batch128": lambda: C2(S["cb23"], input_output_dtype=tf.complex128),
        "c2_hermitian_float64": lambda: C2(S["h2"], input_output_dtype=tf.float64, is_self_adjoint=True),
        "c3_complex128": lambda: C3(S["c223"], input_output_dtype=tf.complex128),
        "c3_real": lambda: C3(S["r222"].astype(np.float32), is_positive_definite=True),
    }


def _val(t):
    a = np.asarray(t)
    if a.dtype.kind == "c":
        return {"re": np.real(a).tolist(), "im": np.imag(a).tolist()}
    return a.tolist()


def evaluate(op):
    """Every public method of ``op`` on fixed inputs: name -> value (a method TF refuses: its error class)."""
    n = int(op.domain_dimension)
    dt = op.dtype.as_numpy_dtype
    rs = np.random.RandomState(5)

    def arr(*s):
        a = rs.randn(*s) + (1j * rs.randn(*s) if np.dtype(dt).kind == "c" else 0)
        return a.astype(dt)
    x, xb, v, xt = arr(n, 2), arr(2, n, 2), arr(n), arr(2, n)
    out = {"shape": list(op.shape), "batch_shape": list(op.batch_shape), "dtype": op.dtype.name, "name": op.name,
           "block_depth": op.block_depth, "block_shape": list(op.block_shape),
           "hints": [op.is_non_singular, op.is_self_adjoint, op.is_positive_definite, op.is_square]}
    calls = {
        "dense": lambda: op.to_dense(),
        "matmul": lambda: op.matmul(x), "matmul_batch": lambda: op.matmul(xb),
        "matmul_adj": lambda: op.matmul(x, adjoint=True),
        "matmul_adj_arg": lambda: op.matmul(xt, adjoint_arg=True),
        "matvec": lambda: op.matvec(v), "matvec_adj": lambda: op.matvec(v, adjoint=True),
        "solve": lambda: op.solve(x), "solve_batch": lambda: op.solve(xb),
        "solve_adj": lambda: op.solve(x, adjoint=True),
        "solve_adj_arg": lambda: op.solve(xt, adjoint_arg=True),
        "solvevec": lambda: op.solvevec(v),
        "determinant": lambda: op.determinant(), "log_abs_determinant": lambda: op.log_abs_determinant(),
        "trace": lambda: op.trace(), "diag_part": lambda: op.diag_part(),
        "add_to_tensor": lambda: op.add_to_tensor(np.ones((n, n), dt)),
        "cond": lambda: op.cond(),
        "eigvals": lambda: op.eigvals(),
        "convolution_kernel": lambda: op.convolution_kernel(),
        "inverse": lambda: op.inverse().to_dense(), "inverse_type": lambda: type(op.inverse()).__name__,
        "inverse_dtype": lambda: op.inverse().dtype.name,
        "adjoint_type": lambda: type(op.adjoint()).__name__,
        "square_type": lambda: type(op @ op).__name__,
        "square": lambda: (op @ op).to_dense(),
        "square_hints": lambda: [(op @ op).is_non_singular, (op @ op).is_self_adjoint,
                                 (op @ op).is_positive_definite],
        "solve_op": lambda: op.solve(op).to_dense(),
        "assert_non_singular": lambda: str(op.assert_non_singular() is None),
        "getitem": lambda: op[0].to_dense() if len(op.batch_shape) else "no batch",
    }
    for k, f in calls.items():
        try:
            r = f()
            out[k] = r if isinstance(r, (str, list)) else _val(r)
        except Exception as e:   # noqa: BLE001  (TF's refusal is the expected value)
            out[k] = {"error": type(e).__name__}
    return out


def bad(L, tf):
    """Programs TF 2.21 refuses: name -> thunk."""
    C1, C2 = L.LinearOperatorCirculant, L.LinearOperatorCirculant2D
    c4 = np.ones(4, np.complex64)
    return {
        "real_spectrum_not_self_adjoint": lambda: C1(np.ones(4, np.float32), is_self_adjoint=False),
        "not_square": lambda: C1(c4, is_square=False),
        "scalar_spectrum": lambda: C1(np.complex64(1.0)),
        "c2_vector_spectrum": lambda: C2(c4),
        "matmul_dtype": lambda: C1(c4).matmul(np.ones((4, 1), np.complex128)),
        "matmul_shape": lambda: C1(c4).matmul(np.ones((3, 1), np.complex64)),
        "eigvals_not_self_adjoint": lambda: C1(c4 * 1j).eigvals(),
        "assert_non_singular": lambda: C1(np.array([1, 0, 2, 1], np.complex64)).assert_non_singular(),
        "assert_positive_definite": lambda: C1(np.array([1, -1, 2, 1], np.complex64)).assert_positive_definite(),
        "assert_self_adjoint": lambda: C1(np.array([1, 1j, 2, 1], np.complex64)).assert_self_adjoint(),
        "assert_hermitian_spectrum": lambda: C1(np.array([1, 1j, 2, 1], np.complex64)).assert_hermitian_spectrum(),
    }
