"""TF 2.21's outputs of ``tf.experimental.numpy`` (tnp) for tests/test_tnp.py, which evaluates the
same expressions under tapeflow and compares values, dtypes, shapes and error classes with
tests/data/tnp_tf_reference.json.

Each mode runs in its own process (TF's ``experimental_enable_numpy_behavior`` cannot be undone):
``off`` (tnp functions, no switch), ``on`` (the switch, legacy promotion), ``f32`` (the switch with
``prefer_float32=True``). Run with real TensorFlow (the peers venv), from the repository root:

    .venv-peers/bin/python tests/tf_reference/make_tnp_reference.py
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "tnp_tf_reference.json")

# names every expression may use (the test runs the same text under tapeflow)
SETUP = """
a = tnp.asarray([[1., -2., 3.5], [4., 5., -6.]])
b = tnp.asarray([[2., 1., 0.5], [-1., 3., 2.]])
i = tnp.asarray([[1, 2, 3], [4, 5, 6]], dtype=tnp.int32)
j = tnp.asarray([3, 0, -2], dtype=tnp.int64)
f = tnp.asarray([0.25, -1.5, 2.0], dtype=tnp.float32)
m = tnp.asarray([[2., 1.], [1., 3.]])
v = tnp.asarray([1., 2., 3.])
bo = tnp.asarray([True, False, True])
x3 = tnp.reshape(tnp.arange(24), (2, 3, 4))
n = tnp.asarray([1., float('nan'), 3.])
"""

# expressions evaluated with the switch on (mode "on"); a subset again with prefer_float32 ("f32")
ON = [
    # creation and dtype defaults
    "tnp.asarray(1)", "tnp.asarray(1.)", "tnp.asarray([1, 2])", "tnp.asarray([1., 2.])", "tnp.asarray(True)",
    "tnp.asarray([1, 2], dtype=tnp.float32)", "tnp.asarray(np.arange(3, dtype=np.int16))", "tnp.array(2.5, ndmin=2)",
    "tnp.ones(3)", "tnp.ones([2, 2], tnp.int32)", "tnp.zeros((2,), dtype=int)", "tnp.zeros(2, dtype=bool)",
    "tnp.full(2, 1.5)",   "tnp.full([2, 2], 7)",   "tnp.full_like(i, 2.7)",   "tnp.zeros_like(a)",
    "tnp.ones_like(i, dtype=float)",
    "tnp.arange(5)",   "tnp.arange(1, 7, 2)",   "tnp.arange(3.)",   "tnp.arange(0., 1., 0.25)",
    "tnp.arange(2, dtype=tnp.float32)",
    "tnp.linspace(0, 1, 5)", "tnp.linspace(0, 1, 4, endpoint=False)", "tnp.logspace(0, 2, 3)", "tnp.geomspace(1, 8, 4)",
    "tnp.eye(3)", "tnp.eye(2, 3, k=1)", "tnp.identity(2, dtype=tnp.int32)", "tnp.tri(3, 2)", "tnp.empty([2]).shape",
    "tnp.copy(i)",
    # elementwise, promotion
    "tnp.add(i, a)", "tnp.add(i, 1.5)", "tnp.add(f, 1.5)", "tnp.add(j, i)", "tnp.add(f, v)", "tnp.add(1., 2.)",
    "tnp.add(1, 2)", "tnp.add(bo, bo)", "tnp.subtract(i, j)", "tnp.multiply(f, 2)", "tnp.multiply(bo, bo)",
    "tnp.true_divide(i, 2)", "tnp.divide(j, i)", "tnp.divide(f, 2)", "tnp.floor_divide(a, b)", "tnp.floor_divide(i, 4)",
    "tnp.mod(a, 3)", "tnp.remainder(j, 2)", "tnp.power(i, 2)", "tnp.power(a, 2)", "tnp.float_power(i, 2)",
    "tnp.maximum(i, f)", "tnp.minimum(a, 0)", "tnp.arctan2(a, b)", "tnp.hypot(a, b)", "tnp.logaddexp(a, b)",
    "tnp.logaddexp2(a, b)", "tnp.heaviside(tnp.asarray([-1., 0., 2.]), 0.5)",
    "tnp.equal(i, 2)", "tnp.not_equal(a, b)", "tnp.less(i, f)", "tnp.greater_equal(a, 1)",
    "tnp.logical_and(bo, tnp.asarray([1, 1, 0]))", "tnp.logical_or(a, 0)", "tnp.logical_xor(bo, True)",
    "tnp.logical_not(i)",   "tnp.bitwise_and(i, 3)",   "tnp.bitwise_or(j, 1)",   "tnp.bitwise_xor(i, i)",
    "tnp.bitwise_not(j)",
    "tnp.sqrt(4)", "tnp.sqrt(i)", "tnp.sqrt(f)", "tnp.exp(a)", "tnp.exp(i)", "tnp.expm1(f)", "tnp.log(v)",
    "tnp.log1p(v)", "tnp.log2(v)", "tnp.log10(i)", "tnp.exp2(j)", "tnp.sin(a)", "tnp.cos(f)", "tnp.tan(v)",
    "tnp.sinh(f)", "tnp.cosh(v)", "tnp.tanh(a)", "tnp.arcsin(f / 4)", "tnp.arccos(f / 4)", "tnp.arctan(a)",
    "tnp.arcsinh(a)", "tnp.arccosh(v)", "tnp.arctanh(f / 4)", "tnp.cbrt(a)", "tnp.reciprocal(a)",
    "tnp.deg2rad(i)", "tnp.rad2deg(f)", "tnp.negative(i)", "tnp.positive(f)", "tnp.square(j)", "tnp.sign(a)",
    "tnp.abs(j)", "tnp.absolute(a)", "tnp.fabs(i)", "tnp.floor(a / 3)", "tnp.ceil(f)", "tnp.fix(a / 3)",
    "tnp.around(a / 3, 2)", "tnp.round(f)", "tnp.clip(a, -1, 4)", "tnp.clip(i, 2, None)",
    "tnp.isfinite(n)", "tnp.isnan(n)", "tnp.isinf(tnp.asarray([1., float('inf'), -float('inf')]))",
    "tnp.isposinf(tnp.asarray([1., float('inf'), -float('inf')]))", "tnp.isnan(i)", "tnp.signbit(a)",
    "tnp.sinc(tnp.asarray([0., 0.5, 1.]))", "tnp.isclose(a, a + 1e-9)", "tnp.allclose(a, b)", "tnp.allclose(a, a)",
    "tnp.array_equal(i, i)", "tnp.array_equal(i, j)", "tnp.where(bo, v, 0)", "tnp.where(a > 0, i, a)",
    "tnp.where(bo)", "tnp.nonzero(i > 2)", "tnp.select([v < 2, v > 2], [v, -v], 9.)", "tnp.polyval([1., 2., 3.], v)",
    "tnp.real(a)", "tnp.imag(a)", "tnp.conj(i)", "tnp.isscalar(1.)", "tnp.isscalar(a)", "tnp.iscomplexobj(a)",
    "tnp.gcd(i, 4)", "tnp.lcm(i, 4)", "tnp.nextafter(f, 10.)",
    # reductions
    "tnp.sum(i)",   "tnp.sum(a, axis=0)",   "tnp.sum(bo)",   "tnp.sum(i, axis=1, keepdims=True)",
    "tnp.sum(f, dtype=tnp.float64)",
    "tnp.sum(np.ones([2, 3]))",   "tnp.prod(i)",   "tnp.prod(a, axis=1)",   "tnp.mean(i)",   "tnp.mean(a, axis=1)",
    "tnp.mean(f)",
    "tnp.amax(a)", "tnp.max(i, axis=0)", "tnp.amin(a, axis=1)", "tnp.min(bo)", "tnp.all(bo)", "tnp.any(i > 5)",
    "tnp.all(a, axis=0)",   "tnp.var(a)",   "tnp.var(i, axis=0)",   "tnp.var(a, ddof=1)",   "tnp.std(a, axis=1)",
    "tnp.ptp(a, axis=0)",
    "tnp.average(a)", "tnp.average(a, axis=1, weights=[1., 2., 3.])", "tnp.count_nonzero(i > 2)",
    "tnp.count_nonzero(a, axis=0)", "tnp.nansum(n)", "tnp.nanmean(n)", "tnp.nanprod(n)", "tnp.argmax(a)",
    "tnp.argmax(a, axis=1)", "tnp.argmin(i, axis=0)", "tnp.cumsum(i)", "tnp.cumsum(a, axis=1)", "tnp.cumprod(f)",
    "tnp.diff(j)", "tnp.diff(a, axis=0)", "tnp.diff(v, n=2)",
    # shapes
    "tnp.reshape(i, [3, 2])",   "tnp.reshape(a, -1)",   "tnp.ravel(i)",   "tnp.transpose(x3).shape",
    "tnp.transpose(x3, (1, 0, 2))",
    "tnp.swapaxes(x3, 0, 2).shape", "tnp.moveaxis(x3, 0, -1).shape", "tnp.moveaxis(x3, [0, 1], [-1, -2]).shape",
    "tnp.expand_dims(v, 0)", "tnp.expand_dims(v, (0, 2)).shape", "tnp.squeeze(tnp.ones([1, 3, 1]))",
    "tnp.squeeze(tnp.ones([1, 3, 1]), axis=0).shape",   "tnp.broadcast_to(v, [2, 3])",
    "tnp.broadcast_arrays(v, m[:, :1])",
    "tnp.atleast_1d(1.)", "tnp.atleast_2d(v)", "tnp.atleast_3d(m).shape", "tnp.concatenate([i, a])",
    "tnp.concatenate([i, a], axis=None)", "tnp.append(v, [4, 5])", "tnp.stack([v, f])", "tnp.stack([v, v], axis=1)",
    "tnp.hstack([v, f])", "tnp.vstack([v, f])", "tnp.dstack([v, f]).shape", "tnp.split(x3, 2)", "tnp.split(v, [1])",
    "tnp.hsplit(a, 3)", "tnp.vsplit(a, 2)", "tnp.tile(v, 2)", "tnp.tile(m, [2, 1])", "tnp.repeat(i, 2)",
    "tnp.repeat(i, 2, axis=0)", "tnp.flip(i)", "tnp.flip(i, 1)", "tnp.fliplr(i)", "tnp.flipud(i)", "tnp.rot90(i)",
    "tnp.rot90(i, 2)", "tnp.rot90(i, 3)", "tnp.roll(i, 1)", "tnp.roll(i, -1, axis=1)", "tnp.pad(i, 1)",
    "tnp.pad(v, [[1, 2]])",   "tnp.take(i, [0, 4])",   "tnp.take(i, [2, 0], axis=1)",
    "tnp.take_along_axis(a, tnp.argsort(a, axis=1), 1)",
    "tnp.compress([True, False, True], v)", "tnp.sort(a)", "tnp.sort(a, axis=0)", "tnp.argsort(j)",
    "tnp.diag(v)",   "tnp.diag(v, 1)",   "tnp.diag(a)",   "tnp.diagonal(x3)",   "tnp.diagflat(m)",   "tnp.trace(m)",
    "tnp.trace(i)",
    "tnp.tril(a)", "tnp.triu(a, 1)", "tnp.vander(v)", "tnp.meshgrid(v, f)", "tnp.meshgrid(v, f, indexing='ij')",
    "tnp.ix_([0, 1], [2, 0])", "tnp.shape(a)", "tnp.ndim(x3)", "tnp.size(i)", "tnp.size(x3, 1)",
    # linear algebra
    "tnp.matmul(a, tnp.transpose(b))", "tnp.matmul(m, v[:2])", "tnp.matmul(v, v)", "tnp.matmul(i, tnp.transpose(a))",
    "tnp.dot(a, v)", "tnp.dot(2, v)", "tnp.dot(m, m)", "tnp.vdot(a, b)", "tnp.inner(v, f)", "tnp.inner(a, b)",
    "tnp.outer(v, f)", "tnp.kron(m, tnp.eye(2))", "tnp.tensordot(a, b, axes=[[1], [1]])", "tnp.tensordot(v, v, 1)",
    "tnp.einsum('ij,kj->ik', a, b)", "tnp.einsum('ij,kj->ik', i, a)", "tnp.cross(v, f)", "tnp.cross(a, b)",
    # dtypes
    "tnp.result_type(tnp.int32, tnp.float32)", "tnp.result_type(i, 1.5)", "tnp.promote_types(tnp.int8, tnp.uint8)",
    "tnp.finfo(tnp.float32).eps", "tnp.iinfo(tnp.int8).max", "tnp.issubdtype(tnp.float32, tnp.inexact)",
    # operators and methods once the switch is on
    "i + f",   "i + 1.5",   "f + 1.5",   "f + np.ones(3)",   "i * j",   "i < f",   "j / 2",   "i // 2.",   "f ** 2",
    "a @ tnp.transpose(b)",
    "i.T", "i.reshape(3, 2)", "i.reshape([-1])", "i.astype(tnp.float32)", "a.ravel()", "a.flatten()", "a.clip(0, 2)",
    "a.mean()", "a.mean(axis=0)", "i.max()", "a.min(axis=1)", "x3.transpose().shape", "x3.transpose(1, 0, 2).shape",
    "i.tolist()", "i.ndim", "int(i.size)",
    # NumPy's functions on tensors call the methods the switch adds
    "np.mean(a)", "np.max(i, axis=0)", "np.min(a)", "np.transpose(i)", "np.clip(a, 0, 2)", "np.ravel(i)",
    # NumPy indexing
    "x3[1, tnp.newaxis, 1:3, ...]", "x3[:, (True, False, True)]", "x3[1, (0, 0, 1), tnp.asarray([0, 1, 1])]",
    "v[[0, 0, 2]]", "v[bo]", "i[:, [2, 0]]", "i[i > 2]", "x3[..., 1]", "x3[[0, 1], :, [1, 2]].shape",
    # errors
    "tnp.matmul(a, b)", "tnp.reshape(a, [4, 2])", "tnp.concatenate([a, v])", "tnp.sum(a, axis=3)",
    "tnp.arange(6)[1]", "tnp.split(v, 2)", "tnp.add(a, v[:2])", "tnp.matmul(2., v)",
]

F32 = ["tnp.asarray(1.)", "tnp.asarray([1., 2.])", "tnp.add(1., 2.)", "tnp.ones(3)", "tnp.add(i, 1.5)",
       "i + 1.5", "f + 1.5", "tnp.sqrt(4)", "tnp.mean(i)", "tnp.arange(3.)", "tnp.true_divide(1, 2)",
       "tnp.linspace(0, 1, 3)", "tnp.full(2, 1.5)"]

# without the switch: TF's tensors have no NumPy methods, operators keep TF's rules
OFF = ["tnp.asarray(1.)", "tnp.add(i, f)", "tnp.ones(3)", "hasattr(a, 'ravel')", "hasattr(a, 'clip')",
       "hasattr(a, 'tolist')", "i + f", "tnp.sum(i)"]

# TF's JAX-like lattice (dtype_conversion_mode "all" / "safe"): operators over dtype pairs
LATTICE = [ "tf.constant(10, tf.int32) + tf.constant(5., tf.float32)",
"tf.constant(1, tf.int64) + tf.constant(3.5, tf.float16)",
           "tf.constant(1, tf.int8) + tf.constant(2, tf.uint8)",
           "tf.constant([1, 2], tf.int16) * tf.constant(3, tf.int32)",
           "tf.constant([1, 2], tf.int32) + 1.5", "tf.constant([1., 2.], tf.float16) + 1.5", "tf.constant(True) + 1",
           "tf.constant([1., 2.], tf.float32) < tf.constant([2, 1], tf.int8)",
           "tf.constant(2., tf.float64) * tf.constant(3, tf.int64)",
           "tf.constant(1, tf.uint8) - tf.constant(1, tf.int64)",
           "tf.Variable(10, dtype=tf.int32).assign_add(tf.constant(5, tf.int16))"]
MODES = {"off": OFF, "on": ON, "f32": F32, "all": LATTICE, "safe": LATTICE}


def encode(out):
    import numpy as np
    import tensorflow as tf
    if isinstance(out, (tuple, list)) and not isinstance(out, tf.TensorShape):
        return {"seq": [encode(o) for o in out], "kind": type(out).__name__}
    if isinstance(out, tf.TensorShape):
        return {"shape_value": out.as_list()}
    if isinstance(out, tf.Variable):
        out = out.read_value()
    if isinstance(out, tf.Tensor) or type(out).__name__ == "EagerWeakTensor":
        a = out.numpy()
        return {"dtype": a.dtype.name, "shape": list(a.shape), "values": _vals(a)}
    if isinstance(out, tf.dtypes.DType):
        return {"dtype_value": out.name}
    if isinstance(out, type) or isinstance(out, np.dtype):
        return {"dtype_value": np.dtype(out).name}
    if isinstance(out, (bool, np.bool_)):
        return {"py": bool(out)}
    if isinstance(out, np.ndarray):
        return {"dtype": out.dtype.name, "shape": list(out.shape), "values": _vals(out), "ndarray": True}
    if isinstance(out, (int, float, np.number)):
        return {"py": float(out) if not np.isnan(out) else "nan"}
    raise TypeError(f"cannot encode {type(out)}")


def _vals(a):
    import numpy as np
    v = a.reshape(-1).tolist()
    if a.dtype.kind == "f":
        v = [x if np.isfinite(x) else str(x) for x in v]
    return v


def run_mode(mode):
    import numpy as np
    import tensorflow as tf
    import tensorflow.experimental.numpy as tnp
    if mode == "on":
        tnp.experimental_enable_numpy_behavior()
    elif mode == "f32":
        tnp.experimental_enable_numpy_behavior(prefer_float32=True)
    elif mode in ("all", "safe"):
        tnp.experimental_enable_numpy_behavior(dtype_conversion_mode=mode)
    ns = {"tnp": tnp, "np": np, "tf": tf}
    exec(SETUP, ns)
    out = []
    for expr in MODES[mode]:
        try:
            rec = encode(eval(expr, ns))
        except Exception as e:   # noqa: BLE001  (the class is the record)
            rec = {"error": type(e).__name__, "message": str(e)[:200]}
        out.append({"expr": expr, "out": rec})
    return out


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(json.dumps(run_mode(sys.argv[1])))
        sys.exit(0)
    res = {}
    for mode in MODES:
        p = subprocess.run([sys.executable, __file__, mode], capture_output=True, text=True, check=True)
        res[mode] = json.loads(p.stdout.strip().splitlines()[-1])
    with open(OUT, "w") as fh:
        json.dump({"setup": SETUP, "modes": res}, fh, indent=0)
    print("wrote", OUT, {k: len(v) for k, v in res.items()})
