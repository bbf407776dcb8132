"""Keras 3's ``keras.ops`` (Keras 3.15 on TF 2.21, the TensorFlow backend) over a broad sweep, for
tests/test_keras_ops.py: each expression's value, dtype and shape (or error class), evaluated the
same way under tapeflow (``ops = tapeflow.keras.ops``). Also records ``dir(keras.ops)``, so the test
can count how many of Keras' names tapeflow implements.

    .venv-peers/bin/python tests/tf_reference/make_keras_ops_reference.py
"""
from __future__ import annotations

import json
import os

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "keras_ops_reference.json")

SETUP = """
a = np.array([[1., -2., 3.5], [4., 5., -6.]], np.float32)
b = np.array([[2., 1., 0.5], [-1., 3., 2.]], np.float32)
i = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
j = np.array([3, 0, -2], np.int64)
d = np.array([0.25, -1.5, 2.0], np.float64)
v = np.array([1., 2., 3.], np.float32)
m = np.array([[2., 1.], [1., 3.]], np.float32)
bo = np.array([True, False, True])
x4 = np.arange(2 * 5 * 5 * 3, dtype=np.float32).reshape(2, 5, 5, 3) / 50.
k4 = (np.arange(3 * 3 * 3 * 2, dtype=np.float32).reshape(3, 3, 3, 2) - 25.) / 30.
q = (np.arange(2 * 4 * 2 * 3, dtype=np.float32).reshape(2, 4, 2, 3) - 20.) / 10.
ids = np.array([0, 0, 1, 2, 2], np.int32)
data = np.array([1., 2., 3., 4., 5.], np.float32)
"""

EXPRS = [
    # core
    "ops.convert_to_tensor([1., 2.])", "ops.convert_to_tensor([1, 2])", "ops.convert_to_tensor(d)",
    "ops.convert_to_tensor(1.5)", "ops.cast(a, 'int32')", "ops.cast(i, 'float16')", "ops.shape(a)", "ops.dtype(i)",
    "ops.is_tensor(a)", "ops.is_tensor(ops.convert_to_tensor(a))", "ops.stop_gradient(a)",
    "ops.cond(ops.convert_to_tensor(True), lambda: a * 2, lambda: a)",
    "ops.fori_loop(0, 4, lambda k, x: x + k, ops.convert_to_tensor(0.))",
    "ops.while_loop(lambda x: x < 10., lambda x: x * 2., ops.convert_to_tensor(1.))",
    "ops.while_loop(lambda x, y: x < 5, lambda x, y: (x + 1, y * 2.), "
    "(ops.convert_to_tensor(0), ops.convert_to_tensor(1.)))",
    "ops.scan(lambda c, x: (c + x, c * x), ops.convert_to_tensor(0.), v)",
    "ops.map(lambda x: x * 2, v)", "ops.vectorized_map(lambda x: ops.sum(x), a)",
    "ops.switch(1, [lambda x: x + 1, lambda x: x * 10], v)", "ops.slice(a, [0, 1], [2, 2])",
    "ops.slice_update(a, [0, 1], np.zeros([1, 2], np.float32))", "ops.scatter([[0], [2]], [1., 2.], [4])",
    "ops.scatter_update(np.zeros([3, 2], np.float32), [[1]], [[5., 6.]])", "ops.unstack(a)",
    "ops.get_item(a, 1)", "ops.associative_scan(lambda x, y: x + y, v)", "ops.segment_sum(data, ids)",
    "ops.segment_max(data, ids, num_segments=3)",   "ops.top_k(v, 2)",
    "ops.in_top_k([2, 0], np.array([[.1, .2, .7], [.5, .3, .2]], np.float32), 1)",
    # numpy family: promotion and dtypes
    "ops.add(i, a)", "ops.add(i, 1.5)", "ops.add(a, 2)", "ops.add(i, j)", "ops.add(a, d)", "ops.add(bo, bo)",
"ops.subtract(a, b)", "ops.multiply(i, 2)", "ops.divide(i, 2)", "ops.divide(a, b)",
    "ops.true_divide(j, 2)", "ops.floor_divide(a, b)", "ops.mod(i, 4)", "ops.power(i, 2)", "ops.power(a, 2.)",
    "ops.maximum(i, a)", "ops.minimum(a, 0.)", "ops.negative(i)", "ops.square(j)", "ops.abs(a)", "ops.sign(a)",
    "ops.sqrt(i)",   "ops.sqrt(d)",   "ops.exp(i)",   "ops.exp(a)",   "ops.log(v)",   "ops.log1p(v)",   "ops.log2(v)",
     "ops.log10(v)",
    "ops.expm1(a)", "ops.sin(a)", "ops.cos(i)", "ops.tan(v)", "ops.tanh(a)", "ops.arctan2(a, b)", "ops.arcsin(v / 4)",
    "ops.sinh(a)", "ops.cosh(v)", "ops.arctanh(v / 4)", "ops.reciprocal(v)", "ops.rsqrt(v)", "ops.floor(a / 3)",
    "ops.ceil(a / 3)", "ops.round(a / 3)", "ops.trunc(a / 3)", "ops.clip(a, -1., 2.)", "ops.clip(i, 2, 4)",
    "ops.where(a > 0, a, 0.)", "ops.where(bo, i[0], a[0])", "ops.equal(i, 2)", "ops.greater(a, b)",
    "ops.logical_and(bo, True)", "ops.logical_not(bo)", "ops.isnan(a)", "ops.isfinite(a)", "ops.erf(a)",
    "ops.erfinv(v / 4)", "ops.hypot(a, b)", "ops.logaddexp(a, b)", "ops.divide_no_nan(a, np.zeros_like(a))",
    "ops.nan_to_num(np.array([np.nan, np.inf, -np.inf, 1.], np.float32))", "ops.isclose(a, a + 1e-7)",
    # reductions
    "ops.sum(i)",   "ops.sum(a, axis=0)",   "ops.sum(bo)",   "ops.sum(i, axis=1, keepdims=True)",   "ops.mean(i)",
    "ops.mean(a, axis=1)",
    "ops.max(a)", "ops.max(i, axis=0)", "ops.min(a, axis=1, keepdims=True)", "ops.prod(i)", "ops.prod(a, axis=1)",
    "ops.all(bo)", "ops.any(a > 4)", "ops.var(a)", "ops.var(i, axis=0)", "ops.std(a, axis=1)", "ops.logsumexp(a)",
    "ops.logsumexp(a, axis=1)", "ops.argmax(a)", "ops.argmax(a, axis=1)", "ops.argmin(i, axis=0)", "ops.argsort(j)",
    "ops.sort(a)", "ops.cumsum(i)", "ops.cumsum(a, axis=1)", "ops.cumprod(v)", "ops.count_nonzero(a > 0)",
    "ops.average(a, axis=1, weights=v)", "ops.average(i)", "ops.ptp(a, axis=0)",
    # creation
    "ops.ones(3)", "ops.zeros([2, 2], 'int32')", "ops.full([2], 3)", "ops.full([2], 1.5)", "ops.full_like(i, 2)",
    "ops.ones_like(a)", "ops.zeros_like(i, dtype='float32')", "ops.arange(4)", "ops.arange(1, 7, 2)", "ops.arange(3.)",
    "ops.arange(0., 1., 0.25)", "ops.linspace(0, 1, 5)", "ops.eye(3)", "ops.eye(2, 3, k=1)", "ops.identity(2)",
    "ops.tri(3)", "ops.copy(i)",
    # shapes
    "ops.reshape(a, [3, 2])",   "ops.reshape(i, -1)",   "ops.ravel(a)",   "ops.transpose(a)",
    "ops.transpose(x4, [0, 3, 1, 2]).shape",
    "ops.swapaxes(x4, 1, 3).shape", "ops.moveaxis(x4, 3, 1).shape", "ops.expand_dims(v, 0)", "ops.expand_dims(v, -1)",
    "ops.squeeze(np.ones([1, 3, 1], np.float32))", "ops.squeeze(np.ones([1, 3, 1], np.float32), axis=0)",
    "ops.broadcast_to(v, [2, 3])", "ops.concatenate([a, b])", "ops.concatenate([a, i], axis=1)", "ops.stack([v, v])",
    "ops.stack([v, v], axis=1)",   "ops.hstack([v, v])",   "ops.vstack([v, v])",   "ops.split(a, 3, axis=1)",
    "ops.split(v, [1])",
    "ops.array_split(np.arange(5, dtype=np.float32), 3)", "ops.tile(v, 2)", "ops.tile(m, [2, 1])", "ops.repeat(i, 2)",
    "ops.repeat(i, 2, axis=0)", "ops.flip(a)", "ops.flip(a, 1)", "ops.roll(i, 1)", "ops.roll(i, -1, axis=1)",
    "ops.pad(i, 1)", "ops.pad(v, [[1, 2]])", "ops.take(i, [0, 4])", "ops.take(a, [2, 0], axis=1)",
    "ops.take_along_axis(a, ops.argsort(a, axis=1), 1)", "ops.diag(v)", "ops.diagonal(a)", "ops.trace(m)",
    "ops.tril(a)", "ops.triu(a, 1)", "ops.diff(j)", "ops.meshgrid(v, d)", "ops.one_hot(np.array([0, 2, 1]), 3)",
    "ops.one_hot(np.array([0, 2]), 3, axis=0)", "ops.multi_hot(np.array([[0, 2], [1, 1]]), 3)",
    "ops.searchsorted(v, np.array([0.5, 2.5], np.float32))",   "ops.append(v, v)",   "ops.nonzero(i > 3)",
    "ops.where(i > 3)",
    "ops.fmax(np.array([1., np.nan, 3.], np.float32), v)", "ops.fmod(a, 3.)", "ops.ldexp(v, np.array([1, 2, 3]))",
    "ops.left_shift(i, 1)", "ops.isin(i, [2, 5])", "ops.logspace(0, 2, 3)", "ops.geomspace(1, 8, 4)", "ops.vander(v)",
    "ops.saturate_cast(a * 100, 'uint8')", "ops.unravel_index(np.array([3, 5]), (2, 3))", "ops.digitize(a, v)",
    "ops.bincount(np.array([0, 1, 1, 3]))", "ops.bincount(np.array([0, 1, 1, 3]), weights=v[[0, 1, 2, 0]])",
    "ops.trapezoid(v)", "ops.trapezoid(a, axis=0)", "ops.nansum(np.array([1., np.nan], np.float32))",
    "ops.nanmean(np.array([1., np.nan, 3.], np.float32))", "ops.nanmax(np.array([1., np.nan, 3.], np.float32))",
    "ops.median(a)", "ops.median(a, axis=1)", "ops.quantile(a, 0.3)", "ops.quantile(a, [0.25, 0.75], axis=1)",
    "ops.percentile(v, 40)", "ops.quantile(a, 0.5, axis=0, keepdims=True)", "ops.corrcoef(a)", "ops.cdist(a, b)",
    "ops.cholesky_inverse(ops.cholesky(m))", "ops.segment_min(data, ids)", "ops.segment_prod(data, ids, 3)",
    "ops.sparse_sigmoid(a)", "ops.depth_to_space(np.arange(16, dtype=np.float32).reshape(1, 2, 2, 4), 2)",
    "ops.space_to_depth(np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1), 2)", "ops.psnr(a, b, 6.)",
    "ops.angle(a)", "ops.erfc(a)", "ops.gcd(i, 4)", "ops.array([1, 2])",
    # linear algebra
    "ops.matmul(a, ops.transpose(b))", "ops.matmul(m, v[:2])", "ops.matmul(i, ops.transpose(a))", "ops.dot(a, v)",
    "ops.vdot(a, b)", "ops.inner(v, v)", "ops.outer(v, v)", "ops.tensordot(a, b, axes=[[1], [1]])",
    "ops.einsum('ij,kj->ik', a, b)", "ops.einsum('ij,kj->ik', i, a)", "ops.cross(v, v[::-1])", "ops.kron(m, m)",
    "ops.norm(a)", "ops.norm(a, axis=1)", "ops.norm(m, ord='fro')", "ops.det(m)", "ops.inv(m)", "ops.solve(m, m)",
    "ops.cholesky(m)", "ops.logdet(m)", "ops.slogdet(m)", "ops.eigh(m)[0]", "ops.linalg.norm(a)",
    # nn
    "ops.relu(a)", "ops.relu6(a * 2)", "ops.sigmoid(a)", "ops.sigmoid(i)", "ops.softplus(a)", "ops.softsign(a)",
    "ops.silu(a)", "ops.swish(a)", "ops.log_sigmoid(a)", "ops.leaky_relu(a)", "ops.leaky_relu(a, 0.1)", "ops.elu(a)",
    "ops.selu(a)",   "ops.celu(a)",   "ops.gelu(a)",   "ops.gelu(a, approximate=False)",
    "ops.glu(np.ones([2, 4], np.float32) * v[0])",
    "ops.hard_sigmoid(a)", "ops.hard_silu(a)", "ops.hard_tanh(a)", "ops.soft_shrink(a)", "ops.hard_shrink(a)",
    "ops.tanh_shrink(a)", "ops.squareplus(a)", "ops.sparse_plus(a / 3)", "ops.threshold(a, 1., 0.)",
    "ops.softmax(a)", "ops.softmax(a, axis=0)", "ops.log_softmax(a)", "ops.softmax(a, axis=(0, 1))",
    "ops.moments(a, axes=[0])", "ops.moments(a, axes=[1], keepdims=True)",
    "ops.batch_normalization(a, v, v, axis=1, offset=v, scale=v, epsilon=1e-3)", "ops.normalize(a)",
    "ops.normalize(a, axis=0)", "ops.rms_normalization(a)", "ops.layer_normalization(a)",
    "ops.categorical_crossentropy(ops.softmax(b), ops.softmax(a))",
    "ops.categorical_crossentropy(ops.softmax(b), a, from_logits=True)",
    "ops.sparse_categorical_crossentropy(np.array([0, 2]), ops.softmax(a))",
    "ops.sparse_categorical_crossentropy(np.array([0, 2]), a, from_logits=True)",
    "ops.binary_crossentropy(ops.sigmoid(b), ops.sigmoid(a))",
    "ops.binary_crossentropy(ops.sigmoid(b), a, from_logits=True)",
    "ops.conv(x4, k4)",   "ops.conv(x4, k4, strides=2, padding='same')",   "ops.max_pool(x4, 2)",
    "ops.average_pool(x4, 2, padding='same')",
    "ops.depthwise_conv(x4, k4[..., :1])", "ops.conv_transpose(x4, ops.transpose(k4, (0, 1, 3, 2)))",
    "ops.conv_transpose(x4, ops.transpose(k4, (0, 1, 3, 2)), strides=2, padding='same')",
    "ops.conv_transpose(x4[:, 0], ops.transpose(k4[0], (0, 2, 1)), strides=2)",
    "ops.conv_transpose(x4, ops.transpose(k4, (0, 1, 3, 2)), dilation_rate=2)",
    "ops.separable_conv(x4, k4[..., :1], k4[:1, :1, :, :])",
    "ops.separable_conv(x4, k4[..., :1], k4[:1, :1, :, :], strides=2, padding='same')",
    "ops.dot_product_attention(q, q, q)",
    "ops.dot_product_attention(q, q, q, is_causal=True)", "ops.nn.relu(a)", "ops.nn.softmax(a)",
    # image (channels_last)
    "ops.image.resize(x4, (3, 4))", "ops.image.resize(x4, (7, 8), interpolation='nearest')",
    "ops.image.rgb_to_grayscale(x4)", "ops.image.rgb_to_hsv(x4)", "ops.image.hsv_to_rgb(x4 / 3.)",
    "ops.image.extract_patches(x4, 2)", "ops.image.extract_patches(x4, (2, 3), strides=1)",
    "ops.image.crop_images(x4, top_cropping=1, left_cropping=2, target_height=3, target_width=2)",
    "ops.image.crop_images(x4, bottom_cropping=1, right_cropping=1)",
    "ops.image.pad_images(x4, top_padding=1, left_padding=2, target_height=8, target_width=9)",
    "ops.image.pad_images(x4[0], bottom_padding=1, right_padding=2)",
    # bad inputs
    "ops.matmul(a, b)", "ops.reshape(a, [4, 2])", "ops.concatenate([a, v])", "ops.sum(a, axis=3)", "ops.add(a, v[:2])",
    "ops.split(v, 2)", "ops.softmax(a, axis=5)", "ops.one_hot(np.array([0.5]), 3)", "ops.transpose(a, [0, 0])",
    "ops.take(v, [5])", "ops.squeeze(a, axis=0)", "ops.expand_dims(v, 3)",
]


def encode(out):
    import numpy as np
    import tensorflow as tf
    if isinstance(out, tf.TensorShape):
        return {"shape_value": out.as_list()}
    if isinstance(out, (tuple, list)):
        return {"seq": [encode(o) for o in out]}
    if isinstance(out, (tf.Tensor, tf.Variable, np.ndarray)):
        a = np.asarray(out)
        v = a.reshape(-1).tolist()
        if a.dtype.kind == "f":
            v = [x if np.isfinite(x) else str(x) for x in v]
        return {"dtype": a.dtype.name, "shape": list(a.shape), "values": v}
    if isinstance(out, (bool, np.bool_)):
        return {"py": bool(out)}
    if isinstance(out, (int, float, np.number)):
        return {"py": float(out)}
    if isinstance(out, str):
        return {"str": out}
    if out is None:
        return {"none": True}
    raise TypeError(f"cannot encode {type(out)}")


def main():
    import keras
    import numpy as np
    from keras import ops
    ns = {"ops": ops, "np": np}
    exec(SETUP, ns)
    out = []
    for expr in EXPRS:
        try:
            rec = encode(eval(expr, ns))
        except Exception as e:  # noqa: BLE001
            rec = {"error": type(e).__name__, "message": str(e)[:200]}
        out.append({"expr": expr, "out": rec})
    names = sorted(n for n in dir(ops) if not n.startswith("_"))
    with open(OUT, "w") as fh:
        json.dump({"keras": keras.__version__, "setup": SETUP, "names": names, "cases": out}, fh, indent=0)
    print("wrote", OUT, len(out), "cases,", sum("error" in r["out"] for r in out), "errors")


if __name__ == "__main__":
    main()
