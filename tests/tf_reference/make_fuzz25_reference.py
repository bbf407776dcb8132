"""TF 2.21's outcomes (value and the gradient of sum(f(args)^2) / 2, as benchmarks/op_fuzz.py records them) for the
programs the wave-25 differential fuzz (seeds 31, 32) found tapeflow answering differently: written to
tests/data/fuzz25_tf.json, which tests/test_fuzz25.py checks tapeflow against, eagerly and in tapeflow.function.

    cd /tmp && /work/main/.venv-peers/bin/python <repo>/tests/tf_reference/make_fuzz25_reference.py
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import op_fuzz  # noqa: E402

nan, inf = np.nan, np.inf
f32, f64 = np.float32, np.float64

#: (name, program over x, y, z, arguments)
PROGRAMS = [
    # erf was a 1.5e-7 absolute fit: 5% off at 1e-6, float32's precision in float64 (seed 32 #1220)
    ("erf_f64", "tf.math.erf(x)", [np.array([-1.83, 0.16, 3.0, 1e-6, 1e-300, -0.3, 0.5, 5.9], f64)]),
    ("erf_f32", "tf.math.erf(x)", [np.array([-1.83, 0.16, 3.0, 1e-6, 1e-30, -0.3, 0.5, 5.9, -inf, inf], f32)]),
    ("erf_f16", "tf.math.erf(x)", [np.array([-1.83, 0.16, 1e-3, 0.5], np.float16)]),
    ("gelu_f32", "tf.nn.gelu(x)", [np.array([-2.0, -1e-4, 0.7, 3.0], f32)]),
    ("keras_erf_f64", "tf.keras.ops.erf(x)", [np.array([-1.83, 0.16, 1e-7], f64)]),
    # polygamma of a vector of orders: every gradient was nan (seed 31 #1272, #1539)
    # (the orders a NumPy constant: tapeflow.function refuses a traced order, one op per order)
    ("polygamma_orders_f64", "tf.math.polygamma(np.array([3.0, 3.0, 0.0]), x)",
     [np.array([2.1804842317936464, -1.0138054356026875, 1.6455951068440782], f64)]),
    ("polygamma_orders_f32", "tf.math.polygamma(np.array([4.0, 0.0, 2.0], np.float32), x)",
     [np.array([0.92155129, 0.50956166, -4.31605768], f32)]),
    ("polygamma_orders_not_whole", "tf.math.polygamma(np.array([[0.5, 1.0, -1.0]], np.float32), x)",
     [np.array([1.5, 2.0, 3.0], f32)]),
    # triangular_solve: a general pivoted solve spread a NaN over the column and raised for a zero pivot
    # (seed 31 #690, seed 32 #175, #2755, #2213)
    ("trisolve_nan_rhs", "tf.linalg.triangular_solve(x, y, lower=True)",
     [np.array([[-4.52, -1.12, 1.51], [0.0, -1.84, 7.51], [-3.55, -2.21, 1.32]], f64),
      np.array([[-2.22, 6.11], [0.90, 2.65], [nan, 1.05]], f64)]),
    ("trisolve_zero_diag", "tf.linalg.triangular_solve(x, y, lower=True)",
     [np.array([[0.0, 1.0, 2.0], [1.5, -2.0, 0.5], [0.3, 0.7, 1.1]], f64), np.array([[1.0], [2.0], [3.0]], f64)]),
    ("trisolve_upper_nan", "tf.linalg.triangular_solve(x, y, lower=False)",
     [np.array([[2.0, 1.0, nan], [9.0, -2.0, 0.5], [0.3, 0.7, 1.1]], f64),
      np.array([[1.0, 0.5], [2.0, -1.0], [3.0, 0.25]], f64)]),
    ("trisolve_adjoint", "tf.linalg.triangular_solve(x, y, lower=True, adjoint=True)",
     [np.array([[2.0, 5.0, 7.0], [1.5, -2.0, 9.0], [0.3, 0.7, 1.1]], f32), np.array([[1.0], [2.0], [3.0]], f32)]),
    ("trisolve_batched_upper", "tf.linalg.triangular_solve(x, y, lower=False)",
     [np.array([[[2.0, 1.0], [0.5, 4.0]], [[-1.0, 3.0], [8.0, 0.5]]], f32),
      np.array([[[1.0, 2.0], [3.0, 4.0]], [[-1.0, 0.5], [2.0, 1.0]]], f32)]),
    ("cholesky_solve_singular", "tf.linalg.cholesky_solve(x, y)",
     [np.array([[0.0, 0.0], [1.0, 2.0]], f64), np.array([[1.0], [2.0]], f64)]),
    # resize methods with weights: a contraction with the whole weight matrix spread a NaN/inf pixel over its row
    # and column (0 * nan); TF's kernels read only the taps (seed 31 #1817, seed 32 #2962)
    ("resize_area_nan", "tf.image.resize(x, [2, 2], method='area')", [np.array([[[1.5285], [nan]]], f32)]),
    ("resize_area_inf", "tf.image.resize(x, [4, 3], method='area')",
     [np.array([[[3.9302008], [inf]], [[0.02369775], [4.4229074]]], f32)]),
    ("resize_bicubic_nan", "tf.image.resize(x, [3, 6], method='bicubic')",
     [np.array([[[1.0], [2.0], [3.0], [4.0]], [[5.0], [nan], [7.0], [8.0]], [[9.0], [1.0], [2.0], [3.0]],
                [[4.0], [5.0], [6.0], [7.0]]], f32)]),
    ("resize_lanczos3_inf", "tf.image.resize(x, [2, 5], method='lanczos3')",
     [np.array([[[1.0], [2.0], [-inf], [4.0]], [[5.0], [6.0], [7.0], [8.0]]], f32)]),
    ("resize_gaussian_nan", "tf.image.resize(x, [5, 2], method='gaussian')",
     [np.array([[[1.0], [2.0]], [[nan], [6.0]], [[7.0], [8.0]]], f32)]),
    # sqrtm of a matrix holding inf/NaN: NaNs, as TF (eig raised; seed 31 #453, seed 32 #281, #905)
    ("sqrtm_inf", "tf.linalg.sqrtm(x)", [np.array([[-inf, 0.9076], [-2.6066, -2.6136]], f32)]),
    ("sqrtm_nan_batch", "tf.linalg.sqrtm(x)", [np.array([[[4.0, 0.0], [0.0, nan]], [[4.0, 1.0], [0.0, 9.0]]], f64)]),
    # expm1's gradient was g * (out + 1), which cancels for very negative x (0 at -20 in float32; seed 33 #1617)
    ("expm1_grad_f32", "tf.math.expm1(x)", [np.array([-20.0, -10.0, -1.0, 0.5, 3.0], f32)]),
    ("expm1_grad_f64", "tf.math.expm1(x)", [np.array([-40.0, -12.0, 1e-3], f64)]),
]


def main():
    tf = op_fuzz.import_framework("tf")
    out = []
    for name, src, args in PROGRAMS:
        fn = eval("lambda x=None, y=None, z=None: " + src, {"tf": tf, "np": np})  # noqa: S307
        rec = {"name": name, "src": src, "args": [{"dtype": str(a.dtype), "v": op_fuzz._pack(a)["v"],
                                                   "shape": list(a.shape)} for a in args],
               "eager": op_fuzz.outcome(tf, fn, args)}
        if rec["eager"]["k"] == "ok":
            rec["grad"] = op_fuzz.grad_outcome(tf, fn, args, False)
        out.append(rec)
    path = os.path.join(ROOT, "tests", "data", "fuzz25_tf.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"{len(out)} programs -> {path}")


if __name__ == "__main__":
    main()
