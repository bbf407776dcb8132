"""TF 2.21 / Keras 3.15's keras.backend dtype helpers (result_type over a table of pairs,
standardize_dtype, is_float_dtype/is_int_dtype, get_uid), keras.config's max_epochs /
max_steps_per_epoch as fit/evaluate/predict honour them, and regularizers.OrthogonalRegularizer's
values, for tests/test_keras25.py (wave 25) (tests cannot import TF).

    cd /tmp && /work/main/.venv-peers/bin/python /work/wt/keras25/tests/tf_reference/make_keras25_reference.py

Writes tests/data/keras25_tf.json. Python's types are written "py:int", "py:float", "py:bool", "py:str".
"""
from __future__ import annotations

import json
import os
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

K = tf.keras
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "keras25_tf.json")

PY = {"py:int": int, "py:float": float, "py:bool": bool, "py:str": str}
DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "bfloat16",
          "float16", "float32", "float64", "complex64", "complex128", "py:int", "py:float", "py:bool", None]


def arg(a):
    return PY.get(a, a) if isinstance(a, str) else a


def outcome(f):
    try:
        return {"value": f()}
    except Exception as e:  # noqa: BLE001
        return {"error": type(e).__name__, "message": str(e)}


out = {}

# --- backend.result_type: every pair of the table, and single arguments --------------------------
rt = {}
for a in DTYPES:
    rt[f"{a}"] = outcome(lambda: K.backend.result_type(arg(a)))
    for b in DTYPES:
        rt[f"{a}|{b}"] = outcome(lambda: K.backend.result_type(arg(a), arg(b)))
rt["()"] = outcome(lambda: K.backend.result_type())
rt["int8|uint8|py:float"] = outcome(lambda: K.backend.result_type("int8", "uint8", float))
rt["float8_e4m3fn|float32"] = outcome(lambda: K.backend.result_type("float8_e4m3fn", "float32"))
rt["string|float32"] = outcome(lambda: K.backend.result_type("string", "float32"))
out["result_type"] = rt

# --- standardize_dtype / is_float_dtype / is_int_dtype ------------------------------------------
STD = ["float32", "int4", "uint4", "float8_e4m3fn", "float8_e5m2", "string", "complex64", "bfloat16", "float",
       "int", "foo", "py:int", "py:float", "py:bool", "py:str", None, "np:float16", "np:int8", "tf:float64",
       "tf:bool", "npdtype:uint32"]


def std_arg(a):
    if isinstance(a, str) and a.startswith("np:"):
        return getattr(np, a[3:])
    if isinstance(a, str) and a.startswith("npdtype:"):
        return np.dtype(a[8:])
    if isinstance(a, str) and a.startswith("tf:"):
        return getattr(tf, a[3:])
    return arg(a)


out["standardize_dtype"] = {str(a): outcome(lambda: K.backend.standardize_dtype(std_arg(a))) for a in STD}
out["is_float_dtype"] = {str(a): outcome(lambda: K.backend.is_float_dtype(std_arg(a))) for a in STD}
out["is_int_dtype"] = {str(a): outcome(lambda: K.backend.is_int_dtype(std_arg(a))) for a in STD}

# --- get_uid shares the layer-name counters ------------------------------------------------------
K.backend.clear_session()
uids = [K.backend.get_uid("dense"), K.backend.get_uid("dense"), K.backend.get_uid()]
layer = K.layers.Dense(2)
uids.append(K.backend.get_uid("dense"))
uids.append(layer.name)
layer2 = K.layers.Dense(2)
uids.append(layer2.name)
out["get_uid"] = uids
out["backend"] = K.backend.backend()
out["image_data_format"] = K.backend.image_data_format()
out["is_nnx_enabled"] = K.config.is_nnx_enabled()

# --- max_epochs / max_steps_per_epoch ----------------------------------------------------------------


class Count(K.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.train, self.test, self.predict, self.params_steps = [], 0, 0, None

    def on_train_begin(self, logs=None):
        self.params_steps = self.params.get("steps")

    def on_epoch_begin(self, epoch, logs=None):
        self.train.append(0)

    def on_train_batch_end(self, batch, logs=None):
        self.train[-1] += 1

    def on_test_batch_end(self, batch, logs=None):
        self.test += 1

    def on_predict_batch_end(self, batch, logs=None):
        self.predict += 1


def model():
    m = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
    m.compile("sgd", "mse")
    return m


x = np.arange(60, dtype=np.float32).reshape(20, 3) / 60
y = x.sum(1, keepdims=True)
caps = {}
for me, ms, kw in [(2, None, {"epochs": 5}), (None, 3, {"epochs": 2}), (None, 3, {"epochs": 2, "steps_per_epoch": 2}),
                   (None, 3, {"epochs": 2, "steps_per_epoch": 4}), (7, None, {"epochs": 3}),
                   (2, 2, {"epochs": 3, "validation_data": (x, y)})]:
    K.config.set_max_epochs(me)
    K.config.set_max_steps_per_epoch(ms)
    m, c = model(), Count()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        h = m.fit(x, y, batch_size=4, verbose=0, callbacks=[c], **kw)
    ev = Count()
    n_pred = len(m.predict(x, batch_size=4, verbose=0, callbacks=[ev]))
    m.evaluate(x, y, batch_size=4, verbose=0, callbacks=[ev])
    caps[f"{me}|{ms}|{json.dumps(kw, default=lambda o: 'data')}"] = {
        "epochs_run": len(h.history["loss"]), "train_batches": c.train, "val_batches": c.test,
        "params_steps": c.params_steps, "predict_len": n_pred, "predict_batches": ev.predict,
        "eval_batches": ev.test, "max_epochs": K.config.max_epochs(), "max_steps": K.config.max_steps_per_epoch(),
        "warnings": sorted({str(i.message) for i in w if "Limiting" in str(i.message)})}
K.config.set_max_epochs(None)
K.config.set_max_steps_per_epoch(None)
out["caps"] = caps

# --- OrthogonalRegularizer ----------------------------------------------------------------------------
rng = np.random.RandomState(25)
ortho = []
for shape in [(4, 6), (6, 4), (3, 3), (2, 5)]:
    w = rng.standard_normal(shape).astype(np.float32)
    if shape == (3, 3):
        w[1] = 0                 # a zero row: normalize keeps it 0
    for factor, mode in [(0.01, "rows"), (0.5, "columns"), (2, "rows")]:
        r = K.regularizers.OrthogonalRegularizer(factor=factor, mode=mode)
        res = outcome(lambda: r(tf.constant(w)))    # an int factor: Keras' int32 factor * 0.5 is a TypeError
        if "value" in res:
            res = {"value": float(res["value"]), "dtype": res["value"].dtype.name}
        ortho.append({"w": w.tolist(), "factor": factor, "mode": mode, **res, "config": r.get_config()})
w64 = rng.standard_normal((3, 4))
# float64 weights: Keras multiplies its float32 factor tensor with the float64 sum (TF refuses the Mul)
r = K.regularizers.orthogonal_regularizer(0.1, "columns")
res = outcome(lambda: r(tf.constant(w64)))
ortho.append({"w": w64.tolist(), "w_dtype": "float64", "factor": 0.1, "mode": "columns", **res,
              "config": r.get_config()})
out["ortho"] = ortho
R = K.regularizers
out["ortho_errors"] = {
    "rank3": outcome(lambda: R.OrthogonalRegularizer()(tf.zeros((2, 2, 2)))),
    "mode": outcome(lambda: R.OrthogonalRegularizer(mode="diag")),
    "factor": outcome(lambda: R.OrthogonalRegularizer(factor=-1.0)),
    "factor_str": outcome(lambda: R.OrthogonalRegularizer(factor="0.1")),
}
out["ortho_get"] = {
    "name": type(R.get("orthogonal_regularizer")).__name__,
    "name_cls": type(R.get("OrthogonalRegularizer")).__name__,
    "serialize": R.serialize(R.OrthogonalRegularizer(0.2, "columns")),
    "alias": R.orthogonal_regularizer is R.OrthogonalRegularizer,
}
layer = K.layers.Dense(3, kernel_regularizer=R.OrthogonalRegularizer(0.1), kernel_initializer="ones")
layer.build((None, 2))
out["ortho_dense_loss"] = [float(v) for v in layer.losses]

with open(OUT, "w") as f:
    json.dump(out, f, indent=0, sort_keys=True)
print("wrote", OUT)
