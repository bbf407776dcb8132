"""Records TF 2.21 (Keras 3) numbers for tests/test_keras_reference.py: losses, metrics and
optimizer trajectories that tapeflow's tests compare against (tests cannot import TF).

Run with the peers venv (it has TensorFlow), from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_keras_reference.py
Writes tests/data/keras_reference.json. Inputs are stored with the outputs, so the test
feeds exactly what TF saw.
"""
import json
import os

import numpy as np
import tensorflow as tf

K = tf.keras
rng = np.random.default_rng(17)


def L(a):
    return np.asarray(a).tolist()


def f32(*shape, lo=None, hi=None):
    if lo is not None:
        return rng.uniform(lo, hi, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


out = {"tensorflow": tf.__version__}

# -- losses: each case = (name, y_true, y_pred, sample_weight); function values per sample,
# class values under each reduction, with and without a sample weight
probs_t = f32(5, 4, lo=0, hi=1)
probs_t[0, 1] = 0.0                      # a zero label: clipped to eps in kl_divergence
probs_p = f32(5, 4, lo=0, hi=1)
onehot = np.eye(4, dtype=np.float32)[rng.integers(0, 4, 5)]
binary = (rng.random((5, 4)) > 0.5).astype(np.float32)
signs = binary * 2 - 1
counts = rng.integers(0, 5, (5, 4)).astype(np.float32)
zero_row = f32(5, 4)
zero_row[2] = 0.0                        # a zero vector: cosine similarity 0, not NaN
cases = [
    ("kl_divergence", "KLDivergence", probs_t, probs_p, {}),
    ("cosine_similarity", "CosineSimilarity", f32(5, 4), zero_row, {}),
    ("cosine_similarity", "CosineSimilarity", f32(4, 3, 2), f32(4, 3, 2), {"axis": 1}),
    ("hinge", "Hinge", binary, f32(5, 4), {}),          # 0/1 labels converted to -1/+1
    ("hinge", "Hinge", signs, f32(5, 4), {}),
    ("hinge", "Hinge", probs_t, f32(5, 4), {}),         # not binary: used as given
    ("squared_hinge", "SquaredHinge", binary, f32(5, 4), {}),
    ("squared_hinge", "SquaredHinge", signs, f32(5, 4), {}),
    ("categorical_hinge", "CategoricalHinge", onehot, f32(5, 4), {}),
    ("poisson", "Poisson", counts, f32(5, 4, lo=0, hi=3), {}),
    ("log_cosh", "LogCosh", f32(5, 4), f32(5, 4), {}),
    ("hinge", "Hinge", f32(6, lo=0, hi=1).round(), f32(6, 1), {}),   # (batch,) vs (batch, 1)
    ("poisson", "Poisson", counts[:, 0], f32(5, 1, lo=0, hi=3), {}),
    ("mean_absolute_percentage_error", "MeanAbsolutePercentageError", zero_row, f32(5, 4), {}),   # y_true 0: eps
    ("mean_squared_logarithmic_error", "MeanSquaredLogarithmicError", counts, f32(5, 4), {}),    # y_pred < 0: eps
]
sw = np.array([1.0, 0.5, 0.0, 2.0, 1.5], np.float32)
out["losses"] = []
for fname, cname, yt, yp, kw in cases:
    fn = getattr(K.losses, fname) if hasattr(K.losses, fname) else K.losses.get(fname)
    rec = {"fn": fname, "cls": cname, "kwargs": kw, "y_true": L(yt), "y_pred": L(yp),
           "per_sample": L(fn(yt, yp, **kw)), "classes": {}}
    w = sw[:yt.shape[0]] if yt.shape[0] == 5 else None
    for red in ("sum_over_batch_size", "sum", "none"):
        obj = getattr(K.losses, cname)(reduction=red, **kw)
        rec["classes"][red] = L(obj(yt, yp))
        if w is not None:
            rec["classes"][red + "+sw"] = L(obj(yt, yp, sample_weight=w))
    rec["sample_weight"] = L(sw) if yt.shape[0] == 5 else None
    rec["config"] = getattr(K.losses, cname)(**kw).get_config()
    rec["config"].pop("dtype", None)
    out["losses"].append(rec)

# -- metrics: each case = (class, kwargs, updates [(y_true, y_pred, sample_weight)]); the
# result after each update and after reset_state + the last update
def bprobs(*shape, grid=None):
    p = rng.uniform(0, 1, shape).astype(np.float32)
    if grid:        # values exactly on thresholds (k / grid) and ties
        p = (np.round(p * grid) / grid).astype(np.float32)
    return p


def blabels(*shape):
    return (rng.random(shape) > 0.5).astype(np.float32)


multi_t = blabels(6, 5)
multi_p = bprobs(6, 5, grid=10)
multi_t2, multi_p2 = blabels(6, 5), bprobs(6, 5)
sw6 = np.array([1.0, 0.0, 2.0, 0.5, 1.0, 3.0], np.float32)
bin_t, bin_p = blabels(12), bprobs(12, grid=8)
bin_t2, bin_p2 = blabels(12, 1), bprobs(12, 1)
sw12 = rng.uniform(0, 2, 12).astype(np.float32)
logits = (rng.standard_normal(12) * 3).astype(np.float32)
cls_t = np.eye(5, dtype=np.float32)[rng.integers(0, 5, 6)]
cls_p = bprobs(6, 5, grid=4)          # ties on a 0.25 grid
sparse_t = rng.integers(0, 5, 6)
reg_t, reg_p = f32(8, 3), f32(8, 3)
reg_t2, reg_p2 = f32(5, 3), f32(5, 3)

M = K.metrics
mcases = [
    ("Precision", {}, [(bin_t, bin_p, None), (bin_t2, bin_p2, sw12)]),
    ("Recall", {}, [(bin_t, bin_p, None), (bin_t2, bin_p2, sw12)]),
    ("Precision", {"thresholds": [0.2, 0.5, 0.75]}, [(bin_t, bin_p, sw12), (multi_t, multi_p, None)]),
    ("Recall", {"thresholds": [0.0, 0.5, 1.0]}, [(bin_t, bin_p, sw12), (multi_t, multi_p, None)]),  # evenly
    ("Precision", {"top_k": 2}, [(multi_t, multi_p, None), (multi_t2, multi_p2, sw6)]),
    ("Recall", {"top_k": 2}, [(multi_t, multi_p, None), (multi_t2, multi_p2, sw6)]),
    ("Precision", {"class_id": 2}, [(multi_t, multi_p, sw6), (multi_t2, multi_p2, None)]),
    ("Recall", {"class_id": 3, "top_k": 2}, [(multi_t, multi_p, None), (multi_t2, multi_p2, sw6)]),
    ("Recall", {"thresholds": 0.3, "class_id": 0}, [(multi_t, multi_p, None)]),
    ("AUC", {}, [(bin_t, bin_p, None), (bin_t2, bin_p2, sw12)]),
    ("AUC", {"curve": "PR"}, [(bin_t, bin_p, None), (bin_t2, bin_p2, sw12)]),
    ("AUC", {"curve": "PR"}, [(multi_t, multi_p, sw6), (multi_t2, multi_p2, None)]),
    ("AUC", {"num_thresholds": 9, "summation_method": "minoring"}, [(bin_t, bin_p, None), (bin_t2, bin_p2, sw12)]),
    ("AUC", {"num_thresholds": 9, "summation_method": "majoring", "curve": "PR"}, [(bin_t, bin_p, sw12)]),
    ("AUC", {"num_thresholds": 9, "curve": "PRGAIN"}, [(bin_t, bin_p, None), (bin_t2, bin_p2, sw12)]),
    ("AUC", {"thresholds": [0.1, 0.35, 0.5, 0.9]}, [(bin_t, bin_p, None), (multi_t, multi_p, sw6)]),
    ("AUC", {"thresholds": [0.25, 0.5, 0.75]}, [(bin_t, bin_p, None)]),        # evenly with 0 and 1 added
    ("AUC", {"from_logits": True}, [(bin_t, logits, None)]),
    ("AUC", {"label_weights": [1.0, 0.5, 2.0, 0.0, 1.0]}, [(multi_t, multi_p, None)]),
    ("AUC", {"multi_label": True}, [(multi_t, multi_p, None), (multi_t2, multi_p2, sw6)]),
    ("AUC", {"multi_label": True, "curve": "PR", "label_weights": [1.0, 0.5, 2.0, 0.0, 1.0]},
     [(multi_t, multi_p, sw6), (multi_t2, multi_p2, None)]),
    ("AUC", {"multi_label": True, "num_labels": 5, "num_thresholds": 9, "summation_method": "minoring"},
     [(multi_t, multi_p, None)]),
    ("AUC", {"multi_label": True, "thresholds": [0.1, 0.35, 0.5, 0.9]}, [(multi_t, multi_p, sw6)]),
    ("AUC", {"multi_label": True, "curve": "PRGAIN", "num_thresholds": 9}, [(multi_t, multi_p, None)]),
    ("TopKCategoricalAccuracy", {}, [(cls_t, cls_p, None), (cls_t, multi_p2, sw6)]),
    ("TopKCategoricalAccuracy", {"k": 1}, [(cls_t, cls_p, None), (cls_t, multi_p2, sw6)]),
    ("TopKCategoricalAccuracy", {"k": 2}, [(cls_t, cls_p, sw6)]),
    ("SparseTopKCategoricalAccuracy", {"k": 2}, [(sparse_t, cls_p, None), (sparse_t[:, None], multi_p2, sw6)]),
    ("SparseTopKCategoricalAccuracy", {"k": 1}, [(sparse_t, cls_p, sw6)]),
    ("SparseTopKCategoricalAccuracy", {}, [(sparse_t, cls_p, None)]),
    ("RootMeanSquaredError", {}, [(reg_t, reg_p, None), (reg_t2, reg_p2, np.linspace(0.5, 2, 5).astype(np.float32))]),
    ("MeanAbsolutePercentageError", {}, [(reg_t, reg_p, None),
                                         (reg_t2, reg_p2, np.linspace(0.5, 2, 5).astype(np.float32))]),
    ("MeanSquaredLogarithmicError", {}, [(np.abs(reg_t), reg_p, None)]),
    ("R2Score", {}, [(reg_t, reg_p, None), (reg_t2, reg_p2, np.linspace(0.5, 2, 5).astype(np.float32))]),
    ("R2Score", {"class_aggregation": "variance_weighted_average"}, [(reg_t, reg_p, None)]),
    ("R2Score", {"class_aggregation": None}, [(reg_t, reg_p, None), (reg_t2, reg_p2, None)]),
    ("R2Score", {"num_regressors": 2}, [(reg_t, reg_p, None)]),
    ("R2Score", {"num_regressors": 9}, [(reg_t[:4], reg_p[:4], None)]),     # too few samples: plain R2
]
out["metrics"] = []
for cname, kw, updates in mcases:
    m = getattr(M, cname)(**kw)
    results = []
    for yt, yp, w in updates:
        m.update_state(yt, yp, sample_weight=w)
        results.append(L(m.result()))
    m.reset_state()
    yt, yp, w = updates[-1]
    m.update_state(yt, yp, sample_weight=w)
    cfg = m.get_config()
    cfg.pop("name"), cfg.pop("dtype")
    out["metrics"].append({"cls": cname, "kwargs": kw, "config": cfg, "results": results,
                           "after_reset": L(m.result()),
                           "updates": [[L(yt), L(yp), None if w is None else L(w)] for yt, yp, w in updates]})

# functions
out["metric_functions"] = {
    "top_k_categorical_accuracy": L(M.top_k_categorical_accuracy(cls_t, cls_p, k=2)),
    "sparse_top_k_categorical_accuracy": L(M.sparse_top_k_categorical_accuracy(sparse_t, cls_p, k=2)),
    "sparse_top_k_categorical_accuracy_col": L(M.sparse_top_k_categorical_accuracy(sparse_t[:, None], cls_p, k=1)),
    "inputs": [L(cls_t), L(cls_p), L(sparse_t)],
}

# -- optimizers: 20 steps on a small least-squares problem; the variables after each step
# and the slots at the end
ox = f32(6, 3)
oy = f32(6, 2)
ow0, ob0 = f32(3, 2), f32(2)
opt_cases = [
    ("Nadam", {"learning_rate": 0.01}),
    ("Nadam", {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-3}),
    ("Adamax", {"learning_rate": 0.01}),
    ("Adamax", {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-3}),
    ("Adadelta", {"learning_rate": 1.0}),
    ("Adadelta", {"learning_rate": 0.5, "rho": 0.9, "epsilon": 1e-5}),
    ("Lion", {"learning_rate": 0.01}),
    ("Lion", {"learning_rate": 0.003, "beta_1": 0.95, "beta_2": 0.98}),
]
out["optimizers"] = {"x": L(ox), "y": L(oy), "w0": L(ow0), "b0": L(ob0), "cases": []}
for oname, kw in opt_cases:
    opt = getattr(K.optimizers, oname)(**kw)
    w, b = tf.Variable(ow0), tf.Variable(ob0)
    traj = []
    for _ in range(20):
        with tf.GradientTape() as t:
            loss = tf.reduce_mean(tf.square(tf.matmul(ox, w) + b - oy))
        opt.apply_gradients(zip(t.gradient(loss, [w, b]), [w, b]))
        traj.append([L(w.numpy()), L(b.numpy())])
    cfg = opt.get_config()
    out["optimizers"]["cases"].append({
        "cls": oname, "kwargs": kw, "trajectory": traj,
        "config": {k: cfg[k] for k in kw if k in cfg},
        "slots": {v.path.split("/")[-1]: L(v.numpy()) for v in opt.variables if v.shape == (2,)}})

# the same optimizers fed fixed gradients (no matmul between TF and tapeflow): the update
# rules alone, compared bit for bit where TF's kernels allow
fg = f32(20, 8)
out["optimizers_fixed"] = {"grads": L(fg), "w0": L(np.linspace(-1, 1, 8).astype(np.float32)), "cases": []}
for oname, kw in opt_cases:
    opt = getattr(K.optimizers, oname)(**kw)
    v = tf.Variable(np.linspace(-1, 1, 8).astype(np.float32))
    traj = []
    for g in fg:
        opt.apply_gradients([(tf.constant(g), v)])
        traj.append(L(v.numpy()))
    out["optimizers_fixed"]["cases"].append({"cls": oname, "kwargs": kw, "trajectory": traj})

# -- layers: outputs (and PReLU's input gradient) for fixed inputs and weights
lx = f32(4, 3, 2)
limg = rng.integers(0, 256, (2, 3, 3, 2)).astype(np.uint8)
ladapt = (f32(40, 3) * [1.0, 5.0, 0.1] + [0.0, 3.0, -2.0]).astype(np.float32)
lcases = []


def layer_case(name, make, x, weights=None, grad=False, adapt=None):
    layer = make()
    if adapt is not None:
        layer.adapt(adapt)
    if weights is not None:
        layer.build(x.shape)
        layer.set_weights([np.asarray(w, np.float32) for w in weights])
    xt = tf.constant(x)
    with tf.GradientTape() as t:
        t.watch(xt)
        y = layer(xt)
        s = tf.reduce_sum(y * tf.sin(y))
    rec = {"name": name, "x": L(x), "x_dtype": x.dtype.name, "y": L(y), "y_dtype": y.dtype.name,
           "weights": [L(w) for w in layer.get_weights()], "weight_names": [w.name for w in layer.weights]}
    if grad:
        rec["dx"] = L(t.gradient(s, xt))
    cfg = layer.get_config()
    for k in ("name", "dtype", "trainable"):
        cfg.pop(k, None)
    rec["config"] = json.loads(json.dumps(cfg, default=lambda o: np.asarray(o).tolist()))
    lcases.append(rec)


Ly = K.layers
layer_case("prelu", lambda: Ly.PReLU(), lx, weights=[f32(3, 2)], grad=True)
layer_case("prelu_shared", lambda: Ly.PReLU(shared_axes=[1], alpha_initializer=K.initializers.Constant(0.25)),
           lx, grad=True)
layer_case("permute", lambda: Ly.Permute((2, 1)), lx, grad=True)
layer_case("permute3", lambda: Ly.Permute((3, 1, 2)), f32(2, 2, 3, 4))
layer_case("repeat_vector", lambda: Ly.RepeatVector(3), f32(4, 2), grad=True)
layer_case("rescaling_uint8", lambda: Ly.Rescaling(1.0 / 255, offset=-0.5), limg)
layer_case("rescaling_vector", lambda: Ly.Rescaling(np.array([2.0, 0.5], np.float32)), lx, grad=True)
layer_case("normalization_adapt", lambda: Ly.Normalization(), ladapt[:5], adapt=ladapt, grad=True)
layer_case("normalization_adapt_batches", lambda: Ly.Normalization(), ladapt[:5],
           adapt=tf.data.Dataset.from_tensor_slices(ladapt).batch(16))
layer_case("normalization_axis_none", lambda: Ly.Normalization(axis=None), ladapt[:5], adapt=ladapt)
layer_case("normalization_axis_12", lambda: Ly.Normalization(axis=(1, 2)), lx, adapt=lx)
layer_case("normalization_given", lambda: Ly.Normalization(mean=[1.0, 2.0], variance=[4.0, 0.0]), lx, grad=True)
layer_case("normalization_invert", lambda: Ly.Normalization(mean=3.0, variance=2.0, invert=True), lx)
out["layers"] = lcases
out["layer_adapt_data"] = {"normalization_adapt": L(ladapt), "normalization_adapt_batches": L(ladapt),
                           "normalization_axis_none": L(ladapt), "normalization_axis_12": L(lx)}

# -- fit programs (tests/keras_fit_programs.py): TF's history of each
import sys, tempfile  # noqa: E401,E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import keras_fit_programs  # noqa: E402
out["fit"] = {}
for pname, prog in keras_fit_programs.PROGRAMS.items():
    with tempfile.TemporaryDirectory() as d:
        hist = prog(tf, d)
        out["fit"][pname] = {"keys": list(hist), "history": {
            k: [v if isinstance(v, str) else L(np.asarray(v, np.float64)) for v in vs] for k, vs in hist.items()}}

if __name__ == "__main__":
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "keras_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True, default=lambda o: np.asarray(o).tolist())
    print("wrote", os.path.normpath(path))
