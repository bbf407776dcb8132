"""A side-by-side sweep of tf.keras model/layer APIs (wave 17): ~230 small programs, each
printing one canonical outcome line (values to 6 digits, names, shapes, or the exception
class and message gist), run under TF 2.21 and under tapeflow, then diffed.

    cd /tmp && /work/main/.venv-peers/bin/python $WT/tests/tf_reference/keras_model_sweep.py tf > tf.txt
    cd /tmp && PYTHONPATH=$WT /work/main/.venv/bin/python $WT/tests/tf_reference/keras_model_sweep.py tp > tp.txt
    python3 $WT/tests/tf_reference/keras_model_sweep.py diff tf.txt tp.txt     # WT: this checkout

Extra arguments after tf/tp run only the named cases; TB=1 prints tracebacks. Not a test
(CI has no TF): the differences it found are fixed with tests in tests/test_keras_sweep17.py
or listed in docs/differences.md.
"""
import sys, io, os, contextlib, traceback, re
import numpy as np
MODE = sys.argv[1]
if MODE == "diff":
    def _load(p):
        return dict(l.split(": ", 1) for l in open(p).read().splitlines() if l.startswith("## "))
    a, b = _load(sys.argv[2]), _load(sys.argv[3])
    n = 0
    for k in b:
        if a.get(k) != b[k]:
            n += 1
            print(k, "\n  TF:", a.get(k, "MISSING")[:400], "\n  TP:", b[k][:400])
    print(f"{n} differences in {len(b)} cases")
    sys.exit(0)
if MODE == "tf":
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import tensorflow as tf
else:
    import tapeflow as tf
keras = tf.keras
ONLY = sys.argv[2:] 

def fmt(v, d=0):
    if d > 4: return "..."
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {fmt(v[k], d+1)}" for k in sorted(v)) + "}"
    if isinstance(v, (list, tuple)):
        s = ", ".join(fmt(x, d+1) for x in v)
        return ("[%s]" if isinstance(v, list) else "(%s)") % s
    if isinstance(v, (bool, str, type(None))):
        return repr(v)
    if isinstance(v, (int,)) and not isinstance(v, bool):
        return f"int {v}"
    try:
        a = np.asarray(v)
    except Exception:
        return type(v).__name__
    if a.dtype == object:
        return type(v).__name__
    if a.ndim == 0:
        return f"{type(v).__name__}:{a.dtype} {float(a):.6g}" if a.dtype.kind in "fiu" else repr(a)
    flat = ", ".join(f"{x:.6g}" for x in a.ravel()[:8].astype(float))
    return f"{type(v).__name__}:{a.dtype}{list(a.shape)}[{flat}{'...' if a.size > 8 else ''}]"

CASES = []
def case(f):
    CASES.append(f); return f

def seed():
    keras.utils.set_random_seed(0)

def x_data(n=10, d=3):
    return np.arange(n * d, dtype="float32").reshape(n, d) / 10.0

def y_data(n=10, k=1):
    return (np.arange(n * k, dtype="float32").reshape(n, k) % 3) / 2.0

def const_dense(units, **kw):
    return keras.layers.Dense(units, kernel_initializer="ones", bias_initializer="zeros", **kw)

def summ(m):
    buf = []
    m.summary(print_fn=lambda s, *a, **k: buf.append(s))
    txt = "\n".join(buf)
    lines = [re.sub(r"[\s│┃━─┏┓┗┛┡┩└┘┌┐┼┬┴├┤╇╈╋]+", " ", l).strip() for l in txt.splitlines()]
    return [l for l in lines if l]

def names(ws):
    return [w.name for w in ws]
def paths(ws):
    return [getattr(w, "path", "NOPATH") for w in ws]

def seq1():
    keras.backend.clear_session()
    return keras.Sequential([keras.Input((3,)), const_dense(4, activation="relu"), const_dense(2)])

def func2():
    keras.backend.clear_session()
    i = keras.Input((3,), name="inp")
    h = const_dense(4, activation="relu", name="h")(i)
    o1 = const_dense(1, name="o1")(h)
    o2 = const_dense(2, name="o2")(h)
    return keras.Model(i, [o1, o2])

class Sub(keras.Model):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.a = const_dense(4)
        self.b = const_dense(1)
    def call(self, x):
        return self.b(self.a(x))

# ---- summary ----
@case
def summary_seq(): return summ(seq1())
@case
def summary_func2(): return summ(func2())
@case
def summary_sub_unbuilt():
    keras.backend.clear_session(); m = Sub(); return summ(m)
@case
def summary_sub_built():
    keras.backend.clear_session(); m = Sub(); m(np.ones((2, 3), "float32")); return summ(m)
@case
def summary_nested():
    inner = seq1()
    i = keras.Input((3,)); o = const_dense(1)(inner(i))
    return summ(keras.Model(i, o))
@case
def summary_seq_unbuilt():
    keras.backend.clear_session(); m = keras.Sequential([keras.layers.Dense(2)]); return summ(m)
@case
def summary_trainable_false():
    m = seq1(); m.layers[0].trainable = False; return summ(m)
@case
def summary_concat():
    keras.backend.clear_session()
    i = keras.Input((3,)); a = const_dense(2)(i); b = const_dense(3)(i)
    return summ(keras.Model(i, keras.layers.Concatenate()([a, b])))

# ---- count_params / weights ----
@case
def count_params_seq(): return seq1().count_params()
@case
def count_params_func(): return func2().count_params()
@case
def count_params_unbuilt():
    keras.backend.clear_session(); return keras.Sequential([keras.layers.Dense(2)]).count_params()
@case
def count_params_layer():
    l = keras.layers.Dense(3); l.build((None, 4)); return l.count_params()
@case
def weights_names_seq(): return names(seq1().weights)
@case
def weights_paths_seq(): return paths(seq1().weights)
@case
def weights_paths_func(): return paths(func2().weights)
@case
def weights_names_func(): return names(func2().weights)
@case
def weights_paths_sub():
    keras.backend.clear_session(); m = Sub(); m(np.ones((2, 3), "float32")); return paths(m.weights)
@case
def weights_paths_nested():
    inner = seq1(); i = keras.Input((3,)); o = const_dense(1)(inner(i))
    return paths(keras.Model(i, o).weights)
@case
def trainable_weights_bn():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,)), keras.layers.BatchNormalization()])
    return [paths(m.trainable_weights), paths(m.non_trainable_weights), paths(m.weights)]
@case
def layer_weights_path_standalone():
    keras.backend.clear_session(); l = keras.layers.Dense(2); l.build((None, 3)); return paths(l.weights)
@case
def get_weights_shapes(): return [w.shape for w in seq1().get_weights()]
@case
def trainable_false_weights():
    m = seq1(); m.layers[0].trainable = False
    return [paths(m.trainable_weights), paths(m.non_trainable_weights)]
@case
def model_trainable_false():
    m = seq1(); m.trainable = False
    return [len(m.trainable_weights), len(m.non_trainable_weights)]
@case
def layer_names_seq(): return [l.name for l in seq1().layers]
@case
def layer_names_func(): return [l.name for l in func2().layers]
@case
def model_name_seq(): return seq1().name
@case
def model_name_func(): return func2().name
@case
def clear_session_counter():
    keras.backend.clear_session()
    a = keras.layers.Dense(1); b = keras.layers.Dense(1)
    keras.backend.clear_session()
    c = keras.layers.Dense(1)
    return [a.name, b.name, c.name]
@case
def name_counter_mixed():
    keras.backend.clear_session()
    return [keras.layers.Dense(1).name, keras.layers.Dropout(0.1).name, keras.layers.Dense(1).name,
            keras.Sequential().name, keras.Sequential().name]
@case
def get_layer():
    m = func2(); return [m.get_layer("o1").name, m.get_layer(index=1).name]
@case
def get_layer_missing():
    return func2().get_layer("nope")
@case
def set_weights_wrong_count():
    m = seq1(); m.set_weights(m.get_weights()[:-1])
@case
def set_weights_wrong_shape():
    m = seq1(); w = m.get_weights(); w[0] = np.zeros((4, 3), "float32"); m.set_weights(w)

# ---- config round trips ----
def roundtrip(layer):
    cfg = layer.get_config()
    l2 = type(layer).from_config(cfg)
    c2 = l2.get_config()
    keys = sorted(cfg)
    return [keys, {k: str(cfg[k]) for k in keys if k not in ("name",)} == {k: str(c2[k]) for k in keys if k not in ("name",)}]

@case
def cfg_dense(): return roundtrip(keras.layers.Dense(3, activation="relu", use_bias=False))
@case
def cfg_dense_keys(): return sorted(keras.layers.Dense(3).get_config())
@case
def cfg_dense_activation(): return keras.layers.Dense(3, activation="relu").get_config()["activation"]
@case
def cfg_dense_units_type(): return keras.layers.Dense(3).get_config()["units"]
@case
def cfg_conv2d(): return roundtrip(keras.layers.Conv2D(4, 3, strides=2, padding="same"))
@case
def cfg_conv2d_vals():
    c = keras.layers.Conv2D(4, 3, strides=2, padding="same").get_config()
    return [c["kernel_size"], c["strides"], c["padding"], c["dilation_rate"], c["data_format"]]
@case
def cfg_dropout(): return roundtrip(keras.layers.Dropout(0.3))
@case
def cfg_bn(): return roundtrip(keras.layers.BatchNormalization(momentum=0.9))
@case
def cfg_bn_vals():
    c = keras.layers.BatchNormalization(momentum=0.9).get_config(); return [c["momentum"], c["epsilon"], c["axis"]]
@case
def cfg_embedding(): return roundtrip(keras.layers.Embedding(10, 4, mask_zero=True))
@case
def cfg_lstm(): return roundtrip(keras.layers.LSTM(4))
@case
def cfg_flatten(): return roundtrip(keras.layers.Flatten())
@case
def cfg_activation(): return roundtrip(keras.layers.Activation("tanh"))
@case
def cfg_layernorm(): return roundtrip(keras.layers.LayerNormalization())
@case
def cfg_reshape(): return [roundtrip(keras.layers.Reshape((2, 3))), keras.layers.Reshape((2, 3)).get_config()["target_shape"]]
@case
def cfg_concat(): return roundtrip(keras.layers.Concatenate(axis=1))
@case
def cfg_maxpool(): return roundtrip(keras.layers.MaxPooling2D(2))
@case
def cfg_maxpool_vals():
    c = keras.layers.MaxPooling2D(2).get_config(); return [c["pool_size"], c["strides"], c["padding"]]
@case
def cfg_seq_roundtrip():
    m = seq1(); m2 = keras.Sequential.from_config(m.get_config())
    return [len(m2.layers), m2.count_params(), [l.name for l in m2.layers]]
@case
def cfg_func_roundtrip():
    m = func2(); m2 = keras.Model.from_config(m.get_config())
    return [len(m2.layers), m2.count_params(), [l.name for l in m2.layers], len(m2.outputs)]
@case
def to_json_seq():
    m = seq1(); j = m.to_json(); m2 = keras.models.model_from_json(j)
    return [type(j).__name__, m2.count_params(), [l.name for l in m2.layers], type(m2).__name__]
@case
def to_json_func():
    m = func2(); m2 = keras.models.model_from_json(m.to_json())
    m2.set_weights(m.get_weights())
    x = x_data(2)
    return [o for o in m2.predict(x, verbose=0)]
@case
def seq_get_config_keys(): return sorted(seq1().get_config())
@case
def func_get_config_keys(): return sorted(func2().get_config())
@case
def sub_get_config():
    keras.backend.clear_session(); m = Sub(); return sorted(m.get_config())

# ---- predict ----
@case
def predict_bs_uneven(): return seq1().predict(x_data(10), batch_size=3, verbose=0)
@case
def predict_dataset():
    ds = tf.data.Dataset.from_tensor_slices(x_data(5)).batch(2)
    return seq1().predict(ds, verbose=0)
@case
def predict_dataset_xy():
    ds = tf.data.Dataset.from_tensor_slices((x_data(5), y_data(5))).batch(2)
    return seq1().predict(ds, verbose=0)
@case
def predict_multi_out(): return func2().predict(x_data(3), verbose=0)
@case
def predict_steps():
    ds = tf.data.Dataset.from_tensor_slices(x_data(6)).batch(2)
    return seq1().predict(ds, steps=2, verbose=0)
@case
def predict_list_input():
    return seq1().predict(x_data(3).tolist(), verbose=0)
@case
def predict_empty():
    return seq1().predict(np.zeros((0, 3), "float32"), verbose=0)
@case
def predict_wrong_shape():
    return seq1().predict(np.zeros((2, 4), "float32"), verbose=0)
@case
def predict_float64(): return seq1().predict(x_data(2).astype("float64"), verbose=0)
@case
def predict_on_batch(): return seq1().predict_on_batch(x_data(3))
@case
def predict_on_batch_multi(): return func2().predict_on_batch(x_data(2))
@case
def call_returns(): return seq1()(x_data(2))
@case
def call_multi(): return func2()(x_data(2))

# ---- evaluate / fit ----
def cseq(metrics=None, loss="mse", opt=None):
    m = seq1(); m.compile(optimizer=opt or keras.optimizers.SGD(0.01), loss=loss, metrics=metrics); return m

@case
def evaluate_scalar(): return cseq().evaluate(x_data(), y_data().repeat(2, 1), verbose=0)
@case
def evaluate_metrics(): return cseq(["mae"]).evaluate(x_data(), y_data().repeat(2, 1), verbose=0)
@case
def evaluate_dict(): return cseq(["mae"]).evaluate(x_data(), y_data().repeat(2, 1), verbose=0, return_dict=True)
@case
def evaluate_dict_nometric(): return cseq().evaluate(x_data(), y_data().repeat(2, 1), verbose=0, return_dict=True)
@case
def evaluate_bs(): return cseq(["mae"]).evaluate(x_data(), y_data().repeat(2, 1), batch_size=3, verbose=0)
@case
def evaluate_sw():
    return cseq().evaluate(x_data(), y_data().repeat(2, 1), sample_weight=np.arange(10, dtype="float32"), batch_size=4, verbose=0)
@case
def evaluate_dataset():
    ds = tf.data.Dataset.from_tensor_slices((x_data(), y_data().repeat(2, 1))).batch(4)
    return cseq(["mae"]).evaluate(ds, verbose=0)
@case
def evaluate_uncompiled(): return seq1().evaluate(x_data(), y_data().repeat(2, 1), verbose=0)
@case
def evaluate_multi_out():
    m = func2(); m.compile("sgd", loss=["mse", "mae"])
    return m.evaluate(x_data(), [y_data(), y_data(10, 2)], verbose=0)
@case
def evaluate_multi_out_dict():
    m = func2(); m.compile("sgd", loss=["mse", "mae"])
    return m.evaluate(x_data(), [y_data(), y_data(10, 2)], verbose=0, return_dict=True)
@case
def evaluate_multi_loss_weights():
    m = func2(); m.compile("sgd", loss=["mse", "mae"], loss_weights=[0.5, 2.0])
    return m.evaluate(x_data(), [y_data(), y_data(10, 2)], verbose=0, return_dict=True)
@case
def evaluate_metrics_dict():
    m = func2(); m.compile("sgd", loss=["mse", "mae"], metrics={"o1": ["mae"], "o2": ["mse"]})
    return m.evaluate(x_data(), [y_data(), y_data(10, 2)], verbose=0, return_dict=True)
@case
def evaluate_loss_dict():
    m = func2(); m.compile("sgd", loss={"o1": "mse", "o2": "mae"}, loss_weights={"o1": 1.0, "o2": 3.0})
    return m.evaluate(x_data(), {"o1": y_data(), "o2": y_data(10, 2)}, verbose=0, return_dict=True)
@case
def metrics_names_before():
    m = cseq(["mae"]); return m.metrics_names
@case
def metrics_names_after():
    m = cseq(["mae"]); m.evaluate(x_data(), y_data().repeat(2, 1), verbose=0); return m.metrics_names
@case
def metrics_names_multi():
    m = func2(); m.compile("sgd", loss=["mse", "mae"], metrics={"o1": ["mae"], "o2": ["mse"]})
    m.evaluate(x_data(), [y_data(), y_data(10, 2)], verbose=0); return m.metrics_names

def fit_hist(m, *a, **k):
    h = m.fit(*a, verbose=0, **k)
    return [h.epoch, h.history, h.params]

@case
def fit_basic(): return fit_hist(cseq(["mae"]), x_data(), y_data().repeat(2, 1), epochs=2, batch_size=4, shuffle=False)
@case
def fit_val_tuple2(): return fit_hist(cseq(["mae"]), x_data(), y_data().repeat(2, 1), epochs=2, batch_size=4, shuffle=False,
                                     validation_data=(x_data(4), y_data(4).repeat(2, 1)))
@case
def fit_val_tuple3(): return fit_hist(cseq(), x_data(), y_data().repeat(2, 1), epochs=1, batch_size=4, shuffle=False,
                                     validation_data=(x_data(4), y_data(4).repeat(2, 1), np.array([1, 0, 0, 2], "float32")))
@case
def fit_val_tuple1(): return fit_hist(cseq(), x_data(), y_data().repeat(2, 1), epochs=1, batch_size=4, shuffle=False,
                                     validation_data=(x_data(4),))
@case
def fit_val_split(): return fit_hist(cseq(), x_data(), y_data().repeat(2, 1), epochs=1, batch_size=4, shuffle=False, validation_split=0.3)
@case
def fit_initial_epoch(): return fit_hist(cseq(), x_data(), y_data().repeat(2, 1), epochs=3, initial_epoch=1, batch_size=4, shuffle=False)
@case
def fit_initial_epoch_ge(): return fit_hist(cseq(), x_data(), y_data().repeat(2, 1), epochs=2, initial_epoch=2, batch_size=4, shuffle=False)
@case
def fit_steps_per_epoch_ds():
    ds = tf.data.Dataset.from_tensor_slices((x_data(), y_data().repeat(2, 1))).batch(2).repeat()
    return fit_hist(cseq(), ds, epochs=2, steps_per_epoch=3)
@case
def fit_steps_per_epoch_short_ds():
    ds = tf.data.Dataset.from_tensor_slices((x_data(), y_data().repeat(2, 1))).batch(4)
    return fit_hist(cseq(), ds, epochs=2, steps_per_epoch=2)
@case
def fit_shuffle_false_repro():
    a = fit_hist(cseq(), x_data(), y_data().repeat(2, 1), epochs=2, batch_size=3, shuffle=False)
    b = fit_hist(cseq(), x_data(), y_data().repeat(2, 1), epochs=2, batch_size=3, shuffle=False)
    return [a[1] == b[1], a[1]]
@case
def fit_sample_weight(): return fit_hist(cseq(), x_data(), y_data().repeat(2, 1), epochs=1, batch_size=4, shuffle=False,
                                        sample_weight=np.linspace(0, 1, 10).astype("float32"))
@case
def fit_class_weight():
    m = seq1(); m.compile(keras.optimizers.SGD(0.01), "sparse_categorical_crossentropy")
    return fit_hist(m, x_data(), np.array([0, 1] * 5), epochs=1, batch_size=4, shuffle=False, class_weight={0: 1.0, 1: 3.0})
@case
def fit_weights_after():
    m = cseq(); m.fit(x_data(), y_data().repeat(2, 1), epochs=1, batch_size=4, shuffle=False, verbose=0); return m.get_weights()
@case
def fit_multi_out():
    m = func2(); m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mae"], loss_weights=[0.5, 2.0])
    return fit_hist(m, x_data(), [y_data(), y_data(10, 2)], epochs=1, batch_size=5, shuffle=False)
@case
def fit_multi_out_metrics():
    m = func2(); m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mae"], metrics={"o1": "mae", "o2": ["mse", "mae"]})
    return fit_hist(m, x_data(), [y_data(), y_data(10, 2)], epochs=1, batch_size=5, shuffle=False)
@case
def fit_multi_out_metrics_list():
    m = func2(); m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mae"], metrics=[["mae"], ["mse"]])
    return fit_hist(m, x_data(), [y_data(), y_data(10, 2)], epochs=1, batch_size=5, shuffle=False)
@case
def fit_multi_loss_single():
    m = func2(); m.compile(keras.optimizers.SGD(0.01), loss="mse")
    return fit_hist(m, x_data(), [y_data(), y_data(10, 2)], epochs=1, batch_size=5, shuffle=False)
@case
def fit_loss_list_wrong_len():
    m = func2(); m.compile(keras.optimizers.SGD(0.01), loss=["mse"])
    return fit_hist(m, x_data(), [y_data(), y_data(10, 2)], epochs=1, batch_size=5, shuffle=False)
@case
def fit_loss_weights_wrong_len():
    m = func2(); m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mse"], loss_weights=[1.0])
    return fit_hist(m, x_data(), [y_data(), y_data(10, 2)], epochs=1, batch_size=5, shuffle=False)
@case
def fit_metrics_dict_badkey():
    m = func2(); m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mse"], metrics={"zz": "mae"})
    return fit_hist(m, x_data(), [y_data(), y_data(10, 2)], epochs=1, batch_size=5, shuffle=False)
@case
def fit_trainable_false():
    m = seq1(); m.layers[0].trainable = False; m.compile(keras.optimizers.SGD(0.1), "mse")
    m.fit(x_data(), y_data().repeat(2, 1), epochs=1, batch_size=5, shuffle=False, verbose=0)
    return m.get_weights()
@case
def fit_trainable_false_after_compile():
    m = seq1(); m.compile(keras.optimizers.SGD(0.1), "mse"); m.layers[0].trainable = False
    m.fit(x_data(), y_data().repeat(2, 1), epochs=1, batch_size=5, shuffle=False, verbose=0)
    return m.get_weights()
@case
def fit_trainable_false_after_fit():
    m = seq1(); m.compile(keras.optimizers.SGD(0.1), "mse")
    m.fit(x_data(), y_data().repeat(2, 1), epochs=1, batch_size=5, shuffle=False, verbose=0)
    m.layers[0].trainable = False
    w0 = m.get_weights()[0].copy()
    m.fit(x_data(), y_data().repeat(2, 1), epochs=1, batch_size=5, shuffle=False, verbose=0)
    return [np.abs(m.get_weights()[0] - w0).max(), m.get_weights()]
@case
def fit_bn_frozen():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,)), keras.layers.BatchNormalization(), const_dense(1)])
    m.layers[0].trainable = False
    m.compile(keras.optimizers.SGD(0.1), "mse")
    m.fit(x_data(), y_data(), epochs=1, batch_size=5, shuffle=False, verbose=0)
    return m.get_weights()
@case
def fit_returns_history_type():
    h = cseq().fit(x_data(), y_data().repeat(2, 1), epochs=1, verbose=0); return [type(h).__name__, h.model is not None]
@case
def fit_y_none_error():
    return cseq().fit(x_data(), epochs=1, verbose=0)
@case
def fit_mismatched_len():
    return cseq().fit(x_data(10), y_data(9).repeat(2, 1), epochs=1, verbose=0)
@case
def fit_uncompiled():
    return seq1().fit(x_data(), y_data().repeat(2, 1), epochs=1, verbose=0)
@case
def fit_epochs0(): return fit_hist(cseq(), x_data(), y_data().repeat(2, 1), epochs=0)

@case
def train_on_batch_scalar(): return cseq().train_on_batch(x_data(4), y_data(4).repeat(2, 1))
@case
def train_on_batch_metrics(): return cseq(["mae"]).train_on_batch(x_data(4), y_data(4).repeat(2, 1))
@case
def train_on_batch_dict(): return cseq(["mae"]).train_on_batch(x_data(4), y_data(4).repeat(2, 1), return_dict=True)
@case
def train_on_batch_twice():
    m = cseq(["mae"]); a = m.train_on_batch(x_data(4), y_data(4).repeat(2, 1)); b = m.train_on_batch(x_data(4), y_data(4).repeat(2, 1))
    return [a, b]
@case
def train_on_batch_reset():
    m = cseq(["mae"]); a = m.train_on_batch(x_data(4), y_data(4).repeat(2, 1)); b = m.train_on_batch(x_data(4), y_data(4).repeat(2, 1), reset_metrics=False)
    return [a, b]
@case
def test_on_batch_scalar(): return cseq().test_on_batch(x_data(4), y_data(4).repeat(2, 1))
@case
def test_on_batch_dict(): return cseq(["mae"]).test_on_batch(x_data(4), y_data(4).repeat(2, 1), return_dict=True)
@case
def test_on_batch_sw(): return cseq().test_on_batch(x_data(4), y_data(4).repeat(2, 1), sample_weight=np.array([1, 2, 0, 1], "float32"))
@case
def train_on_batch_multi():
    m = func2(); m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mae"]); return m.train_on_batch(x_data(4), [y_data(4), y_data(4, 2)])

# ---- save / load ----
@case
def save_load_seq():
    import tempfile
    m = cseq(["mae"]); m.fit(x_data(), y_data().repeat(2, 1), epochs=1, verbose=0, shuffle=False)
    p = os.path.join(tempfile.mkdtemp(), "m.keras"); m.save(p)
    m2 = keras.models.load_model(p)
    return [np.abs(m2.predict(x_data(3), verbose=0) - m.predict(x_data(3), verbose=0)).max(), [l.name for l in m2.layers],
            m2.optimizer is not None, m2.evaluate(x_data(), y_data().repeat(2, 1), verbose=0)]
@case
def save_load_func():
    import tempfile
    m = func2(); p = os.path.join(tempfile.mkdtemp(), "m.keras"); m.save(p)
    m2 = keras.models.load_model(p)
    return [m2.predict(x_data(2), verbose=0), paths(m2.weights)]
@case
def save_load_optimizer_state():
    import tempfile
    m = cseq(opt=keras.optimizers.Adam(0.01)); m.fit(x_data(), y_data().repeat(2, 1), epochs=1, verbose=0, shuffle=False)
    p = os.path.join(tempfile.mkdtemp(), "m.keras"); m.save(p)
    m2 = keras.models.load_model(p)
    m.fit(x_data(), y_data().repeat(2, 1), epochs=1, verbose=0, shuffle=False)
    m2.fit(x_data(), y_data().repeat(2, 1), epochs=1, verbose=0, shuffle=False)
    return np.abs(m.get_weights()[0] - m2.get_weights()[0]).max()
@case
def save_weights_h5_name():
    import tempfile
    m = seq1(); p = os.path.join(tempfile.mkdtemp(), "m.weights.h5"); m.save_weights(p)
    m2 = seq1(); m2.load_weights(p); return m2.get_weights()
@case
def save_bad_ext():
    import tempfile
    m = seq1(); p = os.path.join(tempfile.mkdtemp(), "m.xyz"); m.save(p)

# ---- training flags ----
@case
def dropout_predict():
    keras.backend.clear_session(); m = keras.Sequential([keras.Input((4,)), keras.layers.Dropout(0.5)])
    return m.predict(np.ones((2, 4), "float32"), verbose=0)
@case
def dropout_call_default():
    keras.backend.clear_session(); m = keras.Sequential([keras.Input((4,)), keras.layers.Dropout(0.5)])
    return m(np.ones((2, 4), "float32"))
@case
def dropout_call_training():
    seed(); l = keras.layers.Dropout(0.5)
    o = np.asarray(l(np.ones((200,), "float32"), training=True)); return [sorted(set(o.tolist())), (o == 0).sum() > 50]
@case
def bn_predict():
    keras.backend.clear_session(); m = keras.Sequential([keras.Input((2,)), keras.layers.BatchNormalization()])
    return m.predict(np.array([[1, 2], [3, 6]], "float32"), verbose=0)
@case
def bn_call_training():
    keras.backend.clear_session(); l = keras.layers.BatchNormalization()
    o = l(np.array([[1, 2], [3, 6]], "float32"), training=True); return [o, l.moving_mean, l.moving_variance]
@case
def bn_call_default():
    keras.backend.clear_session(); l = keras.layers.BatchNormalization()
    o = l(np.array([[1, 2], [3, 6]], "float32")); return [o, l.moving_mean]
@case
def bn_frozen_training_true():
    keras.backend.clear_session(); l = keras.layers.BatchNormalization(); l.trainable = False
    o = l(np.array([[1, 2], [3, 6]], "float32"), training=True); return [o, l.moving_mean]
@case
def bn_weights_names():
    keras.backend.clear_session(); l = keras.layers.BatchNormalization(); l.build((None, 2)); return names(l.weights)

# ---- Embedding / Input / Lambda / merge ----
@case
def embedding_mask():
    keras.backend.clear_session(); l = keras.layers.Embedding(5, 2, embeddings_initializer="ones", mask_zero=True)
    x = np.array([[0, 1, 2], [3, 0, 0]]); return [l(x), l.compute_mask(x)]
@case
def embedding_mask_lstm():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,), dtype="int32"), keras.layers.Embedding(5, 2, embeddings_initializer="ones", mask_zero=True),
                          keras.layers.GlobalAveragePooling1D()])
    return m.predict(np.array([[1, 0, 0], [1, 2, 3]]), verbose=0)
@case
def embedding_mask_dense_sum():
    keras.backend.clear_session()
    i = keras.Input((3,), dtype="int32"); e = keras.layers.Embedding(5, 2, embeddings_initializer="ones", mask_zero=True)(i)
    o = keras.layers.SimpleRNN(1, kernel_initializer="ones", recurrent_initializer="ones", activation=None)(e)
    return keras.Model(i, o).predict(np.array([[1, 1, 0], [1, 0, 0]]), verbose=0)
@case
def embedding_float_input():
    keras.backend.clear_session(); l = keras.layers.Embedding(5, 2, embeddings_initializer="ones")
    return l(np.array([[1.7, 2.2]], "float32"))
@case
def embedding_oob():
    keras.backend.clear_session(); l = keras.layers.Embedding(5, 2); return l(np.array([[5]]))
@case
def input_batch_size():
    keras.backend.clear_session(); i = keras.Input((3,), batch_size=4); return [tuple(i.shape), i.dtype if isinstance(i.dtype, str) else i.dtype.name]
@case
def input_batch_size_predict():
    keras.backend.clear_session(); i = keras.Input((3,), batch_size=4); m = keras.Model(i, const_dense(1)(i))
    return m.predict(x_data(6), batch_size=2, verbose=0)
@case
def input_batch_size_mismatch():
    keras.backend.clear_session(); i = keras.Input((3,), batch_size=4); m = keras.Model(i, const_dense(1)(i))
    return m(x_data(6))
@case
def input_shape_int():
    keras.backend.clear_session(); return tuple(keras.Input(shape=3).shape)
@case
def input_name_dtype():
    keras.backend.clear_session(); i = keras.Input((2,), dtype="int32", name="ids"); return [i.name, str(i.dtype)]
@case
def model_input_shape():
    m = func2(); return [m.input_shape if hasattr(m, "input_shape") else "NOATTR", m.output_shape if hasattr(m, "output_shape") else "NOATTR"]
@case
def model_inputs_outputs():
    m = func2(); return [[tuple(t.shape) for t in m.inputs], [tuple(t.shape) for t in m.outputs]]
@case
def lambda_layer():
    keras.backend.clear_session(); m = keras.Sequential([keras.Input((3,)), keras.layers.Lambda(lambda t: t * 2 + 1)])
    return [m.predict(x_data(2), verbose=0), m.layers[0].name, m.output_shape if hasattr(m, "output_shape") else None]
@case
def lambda_output_shape():
    keras.backend.clear_session(); i = keras.Input((3,)); o = keras.layers.Lambda(lambda t: tf.reduce_sum(t, axis=-1, keepdims=True))(i)
    return tuple(o.shape)
@case
def lambda_summary():
    keras.backend.clear_session(); m = keras.Sequential([keras.Input((3,)), keras.layers.Lambda(lambda t: t[:, :2])]); return summ(m)
@case
def concat_ok():
    l = keras.layers.Concatenate(); return l([np.ones((2, 3), "float32"), np.zeros((2, 1), "float32")])
@case
def concat_mismatch():
    l = keras.layers.Concatenate(); return l([np.ones((2, 3), "float32"), np.zeros((3, 1), "float32")])
@case
def concat_mismatch_symbolic():
    keras.backend.clear_session(); a = keras.Input((3, 2)); b = keras.Input((4, 2))
    return tuple(keras.layers.Concatenate()([a, b]).shape)
@case
def concat_axis1_symbolic():
    keras.backend.clear_session(); a = keras.Input((3, 2)); b = keras.Input((4, 2))
    return tuple(keras.layers.Concatenate(axis=1)([a, b]).shape)
@case
def concat_single():
    return keras.layers.Concatenate()([np.ones((2, 3), "float32")])
@case
def add_ok():
    return keras.layers.Add()([np.ones((2, 3), "float32"), np.full((2, 3), 2, "float32")])
@case
def add_broadcast():
    return keras.layers.Add()([np.ones((2, 3), "float32"), np.full((2, 1), 2, "float32")])
@case
def add_mismatch():
    return keras.layers.Add()([np.ones((2, 3), "float32"), np.zeros((2, 4), "float32")])
@case
def add_mismatch_symbolic():
    keras.backend.clear_session(); a = keras.Input((3,)); b = keras.Input((4,)); return tuple(keras.layers.Add()([a, b]).shape)
@case
def add_single():
    return keras.layers.Add()([np.ones((2, 3), "float32")])
@case
def add_not_list():
    return keras.layers.Add()(np.ones((2, 3), "float32"))
@case
def multiply_ok():
    return keras.layers.Multiply()([np.ones((2, 3), "float32") * 2, np.full((2, 3), 3, "float32")])
@case
def average_ok():
    return keras.layers.Average()([np.ones((2, 3), "float32"), np.full((2, 3), 2, "float32")])
@case
def subtract_three():
    return keras.layers.Subtract()([np.ones((2, 3), "float32")] * 3)
@case
def dot_layer():
    return keras.layers.Dot(axes=1)([np.ones((2, 3), "float32"), np.full((2, 3), 2, "float32")])

# ---- to_categorical ----
@case
def to_cat_basic(): return keras.utils.to_categorical([0, 2, 1])
@case
def to_cat_num_classes(): return keras.utils.to_categorical([0, 2, 1], num_classes=4)
@case
def to_cat_2d(): return keras.utils.to_categorical(np.array([[0], [2]]))
@case
def to_cat_2d_wide(): return keras.utils.to_categorical(np.array([[0, 1], [2, 1]]))
@case
def to_cat_too_small(): return keras.utils.to_categorical([0, 3], num_classes=2)
@case
def to_cat_negative(): return keras.utils.to_categorical([0, -1], num_classes=3)
@case
def to_cat_float(): return keras.utils.to_categorical([0.0, 1.0, 2.0])
@case
def to_cat_float_frac(): return keras.utils.to_categorical([0.5, 1.7])
@case
def to_cat_empty(): return keras.utils.to_categorical(np.array([], "int64"), num_classes=3)
@case
def to_cat_tensor(): return keras.utils.to_categorical(tf.constant([1, 0]))
@case
def normalize_util(): return keras.utils.normalize(np.array([[3.0, 4.0]]))

# ---- misc model APIs ----
@case
def seq_add_pop():
    keras.backend.clear_session(); m = keras.Sequential(); m.add(keras.Input((3,))); m.add(const_dense(2)); m.add(const_dense(1))
    m.pop(); return [len(m.layers), m.count_params(), tuple(m.output_shape) if hasattr(m, "output_shape") else None]
@case
def seq_add_non_layer():
    keras.backend.clear_session(); m = keras.Sequential(); m.add(3)
@case
def seq_build():
    keras.backend.clear_session(); m = keras.Sequential([const_dense(2)]); m.build((None, 3)); return [m.built, m.count_params()]
@case
def seq_call_unbuilt():
    keras.backend.clear_session(); m = keras.Sequential([const_dense(2)]); return m(x_data(2))
@case
def seq_duplicate_names():
    keras.backend.clear_session(); return keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="a"), keras.layers.Dense(2, name="a")])
@case
def func_duplicate_names():
    keras.backend.clear_session(); i = keras.Input((3,)); a = keras.layers.Dense(2, name="a")(i); b = keras.layers.Dense(2, name="a")(a)
    return keras.Model(i, b)
@case
def layer_call_wrong_dim():
    l = keras.layers.Dense(2); l(np.ones((2, 3), "float32")); return l(np.ones((2, 4), "float32"))
@case
def compile_metrics_attr():
    m = cseq(["mae"]); m.evaluate(x_data(), y_data().repeat(2, 1), verbose=0); return [x.name for x in m.metrics]
@case
def model_layers_sub():
    keras.backend.clear_session(); m = Sub(); m(x_data(2)); return [l.name for l in m.layers]
@case
def model_compiled_loss_attr():
    m = cseq(); return [m.loss, m.optimizer.__class__.__name__]
@case
def submodules_count(): return len(list(seq1().submodules))
@case
def layer_input_output_shape():
    m = seq1(); l = m.layers[0]; return [tuple(l.input.shape), tuple(l.output.shape)]
@case
def optimizer_iterations():
    m = cseq(); m.fit(x_data(), y_data().repeat(2, 1), epochs=2, batch_size=4, verbose=0); return int(m.optimizer.iterations.numpy())
@case
def stop_training_attr():
    m = cseq(); return m.stop_training
@case
def predict_verbose_batch_size_none():
    return seq1().predict(x_data(40), verbose=0).shape
@case
def history_after_two_fits():
    m = cseq(); m.fit(x_data(), y_data().repeat(2, 1), epochs=1, verbose=0, shuffle=False)
    h = m.fit(x_data(), y_data().repeat(2, 1), epochs=2, verbose=0, shuffle=False); return [h.epoch, sorted(h.history), m.history is h]


# ---- batch 2 ----
@case
def b2_val_dataset():
    vds = tf.data.Dataset.from_tensor_slices((x_data(4), y_data(4).repeat(2, 1))).batch(3)
    return fit_hist(cseq(["mae"]), x_data(), y_data().repeat(2, 1), epochs=2, batch_size=4, shuffle=False, validation_data=vds)
@case
def b2_val_freq():
    return fit_hist(cseq(), x_data(), y_data().repeat(2, 1), epochs=3, batch_size=4, shuffle=False,
                    validation_data=(x_data(4), y_data(4).repeat(2, 1)), validation_freq=2)
@case
def b2_val_steps():
    vds = tf.data.Dataset.from_tensor_slices((x_data(4), y_data(4).repeat(2, 1))).batch(1).repeat()
    return fit_hist(cseq(), x_data(), y_data().repeat(2, 1), epochs=2, batch_size=4, shuffle=False, validation_data=vds, validation_steps=2)
@case
def b2_val_batch_size():
    return fit_hist(cseq(), x_data(), y_data().repeat(2, 1), epochs=1, batch_size=4, shuffle=False,
                    validation_data=(x_data(5), y_data(5).repeat(2, 1)), validation_batch_size=2)
@case
def b2_evaluate_steps_arrays(): return cseq().evaluate(x_data(), y_data().repeat(2, 1), batch_size=3, steps=2, verbose=0)
@case
def b2_predict_steps_arrays(): return seq1().predict(x_data(), batch_size=3, steps=2, verbose=0)
@case
def b2_fit_ds_batch_size():
    ds = tf.data.Dataset.from_tensor_slices((x_data(), y_data().repeat(2, 1))).batch(5)
    return fit_hist(cseq(), ds, batch_size=2, epochs=1)
@case
def b2_multi_input_list():
    keras.backend.clear_session()
    a = keras.Input((3,), name="a"); b = keras.Input((2,), name="b")
    o = const_dense(1)(keras.layers.Concatenate()([a, b]))
    m = keras.Model([a, b], o); m.compile(keras.optimizers.SGD(0.01), "mse")
    h = m.fit([x_data(), y_data(10, 2)], y_data(), epochs=1, batch_size=4, shuffle=False, verbose=0)
    return [h.history, m.predict([x_data(2), y_data(2, 2)], verbose=0)]
@case
def b2_multi_input_dict():
    keras.backend.clear_session()
    a = keras.Input((3,), name="a"); b = keras.Input((2,), name="b")
    o = const_dense(1)(keras.layers.Concatenate()([a, b]))
    m = keras.Model({"a": a, "b": b}, o); m.compile(keras.optimizers.SGD(0.01), "mse")
    h = m.fit({"a": x_data(), "b": y_data(10, 2)}, y_data(), epochs=1, batch_size=4, shuffle=False, verbose=0)
    return [h.history, m.predict({"b": y_data(2, 2), "a": x_data(2)}, verbose=0)]
@case
def b2_multi_input_list_to_dict_model():
    keras.backend.clear_session()
    a = keras.Input((3,), name="a"); b = keras.Input((2,), name="b")
    o = const_dense(1)(keras.layers.Concatenate()([a, b]))
    m = keras.Model([a, b], o)
    return m.predict({"a": x_data(2), "b": y_data(2, 2)}, verbose=0)
@case
def b2_predict_dict_output():
    keras.backend.clear_session(); i = keras.Input((3,))
    m = keras.Model(i, {"y": const_dense(1)(i), "z": const_dense(2)(i)})
    return m.predict(x_data(2), verbose=0)
@case
def b2_call_training_dropout():
    seed(); keras.backend.clear_session(); m = keras.Sequential([keras.Input((400,)), keras.layers.Dropout(0.5)])
    o = np.asarray(m(np.ones((1, 400), "float32"), training=True)); return [sorted(set(o.ravel().tolist())), bool((o == 0).sum() > 100)]
@case
def b2_bn_fit_moving_stats():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,)), keras.layers.BatchNormalization(momentum=0.5), const_dense(1)])
    m.compile(keras.optimizers.SGD(0.01), "mse")
    m.fit(x_data(), y_data(), epochs=1, batch_size=5, shuffle=False, verbose=0)
    return [m.get_weights(), m.predict(x_data(2), verbose=0)]
@case
def b2_nested_trainable_false():
    inner = seq1(); i = keras.Input((3,)); o = const_dense(1)(inner(i)); m = keras.Model(i, o)
    inner.trainable = False; m.compile(keras.optimizers.SGD(0.01), "mse")
    m.fit(x_data(), y_data(), epochs=1, batch_size=5, shuffle=False, verbose=0)
    return [len(m.trainable_weights), m.get_weights()]
@case
def b2_nested_seq_weights_order():
    keras.backend.clear_session()
    inner = keras.Sequential([keras.layers.Dense(2, name="i1")], name="inner")
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(3, name="pre"), inner, keras.layers.Dense(1, name="post")])
    return [w.shape for w in m.get_weights()] + [names(m.weights)]
@case
def b2_class_weight_onehot():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,)), const_dense(2, activation="softmax")])
    m.compile(keras.optimizers.SGD(0.1), "categorical_crossentropy")
    y = keras.utils.to_categorical([0, 1, 1, 0, 1, 1, 0, 0, 1, 1], 2)
    return fit_hist(m, x_data(), y, epochs=1, batch_size=4, shuffle=False, class_weight={0: 2.0, 1: 0.5})
@case
def b2_evaluate_two_accuracy():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,)), const_dense(2, activation="softmax")])
    m.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy", "accuracy"])
    return m.evaluate(x_data(), np.array([0, 1] * 5), verbose=0, return_dict=True)
@case
def b2_fit_multi_out_sample_weight():
    m = func2(); m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mae"])
    return fit_hist(m, x_data(), [y_data(), y_data(10, 2)], sample_weight=np.linspace(0, 1, 10).astype("float32"), epochs=1, batch_size=4, shuffle=False)
@case
def b2_multi_out_ds():
    m = func2(); m.compile(keras.optimizers.SGD(0.01), loss=["mse", "mae"])
    ds = tf.data.Dataset.from_tensor_slices((x_data(), (y_data(), y_data(10, 2)))).batch(4)
    return [fit_hist(m, ds, epochs=1), m.evaluate(ds, verbose=0)]
@case
def b2_multi_out_ds_dict():
    m = func2(); m.compile(keras.optimizers.SGD(0.01), loss={"o1": "mse", "o2": "mae"})
    ds = tf.data.Dataset.from_tensor_slices((x_data(), {"o1": y_data(), "o2": y_data(10, 2)})).batch(4)
    return fit_hist(m, ds, epochs=1)
@case
def b2_multi_out_accuracy():
    keras.backend.clear_session(); i = keras.Input((3,))
    o1 = keras.layers.Dense(3, activation="softmax", kernel_initializer="ones", name="c")(i); o2 = const_dense(1, name="r")(i)
    m = keras.Model(i, [o1, o2]); m.compile("sgd", loss=["sparse_categorical_crossentropy", "mse"], metrics=[["accuracy"], ["mae"]])
    return m.evaluate(x_data(), [np.arange(10) % 3, y_data()], verbose=0, return_dict=True)
@case
def b2_multi_out_metric_string():
    m = func2(); m.compile("sgd", loss=["mse", "mae"], metrics={"o1": "mae", "o2": None})
    return m.evaluate(x_data(), [y_data(), y_data(10, 2)], verbose=0, return_dict=True)
@case
def b2_weighted_metrics_multi():
    m = func2(); m.compile("sgd", loss=["mse", "mae"], weighted_metrics={"o1": ["mae"]})
    return m.evaluate(x_data(), [y_data(), y_data(10, 2)], sample_weight=np.linspace(0, 1, 10).astype("float32"), verbose=0, return_dict=True)
@case
def b2_lambda_in_fit():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((3,)), keras.layers.Lambda(lambda t: t * 2.0), const_dense(1)])
    m.compile(keras.optimizers.SGD(0.01), "mse"); return fit_hist(m, x_data(), y_data(), epochs=1, batch_size=4, shuffle=False)
@case
def b2_test_on_batch_multi_dict():
    m = func2(); m.compile("sgd", loss=["mse", "mae"], metrics={"o2": "mse"}); return m.test_on_batch(x_data(4), [y_data(4), y_data(4, 2)], return_dict=True)
@case
def b2_predict_on_batch_dict_out():
    keras.backend.clear_session(); i = keras.Input((3,))
    m = keras.Model(i, {"y": const_dense(1)(i)}); return m.predict_on_batch(x_data(2))
@case
def b2_summary_multi_input():
    keras.backend.clear_session()
    a = keras.Input((3,), name="a"); b = keras.Input((2,), name="b")
    return summ(keras.Model([a, b], const_dense(1)(keras.layers.Concatenate()([a, b]))))
@case
def b2_summary_bn():
    keras.backend.clear_session(); return summ(keras.Sequential([keras.Input((3,)), keras.layers.BatchNormalization(), const_dense(1)]))
@case
def b2_summary_compiled_fitted():
    m = cseq(opt=keras.optimizers.Adam()); m.fit(x_data(), y_data().repeat(2, 1), epochs=1, verbose=0); return summ(m)
@case
def b2_count_params_bn():
    keras.backend.clear_session(); return keras.Sequential([keras.Input((3,)), keras.layers.BatchNormalization()]).count_params()
@case
def b2_fit_validation_split_ds_error():
    ds = tf.data.Dataset.from_tensor_slices((x_data(), y_data().repeat(2, 1))).batch(4)
    return fit_hist(cseq(), ds, validation_split=0.2)
@case
def b2_fit_x_none():
    return fit_hist(cseq(), None, y_data())
@case
def b2_fit_batch_size_zero():
    return fit_hist(cseq(), x_data(), y_data().repeat(2, 1), batch_size=0)
@case
def b2_history_model_attr():
    m = cseq(); h = m.fit(x_data(), y_data().repeat(2, 1), verbose=0); return h.model is m
@case
def b2_fit_y_1d_for_2col():
    return fit_hist(cseq(), x_data(), np.arange(10, dtype="float32"), epochs=1, batch_size=4, shuffle=False)
@case
def b2_evaluate_y_1d_for_1col():
    keras.backend.clear_session(); m = keras.Sequential([keras.Input((3,)), const_dense(1)]); m.compile("sgd", "mse")
    return m.evaluate(x_data(), np.arange(10, dtype="float32"), verbose=0)
@case
def b2_evaluate_int_labels_mse():
    keras.backend.clear_session(); m = keras.Sequential([keras.Input((3,)), const_dense(1)]); m.compile("sgd", "mse")
    return m.evaluate(x_data(), np.arange(10).reshape(10, 1), verbose=0)
for f in CASES:
    if ONLY and f.__name__ not in ONLY: continue
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            r = f()
        s = "OK " + fmt(r)
    except Exception as e:
        msg = str(e).replace("\n", " ")[:160]
        s = f"EXC {type(e).__name__}: {msg}"
        if os.environ.get("TB"): traceback.print_exc()
    print(f"## {f.__name__}: {s}", flush=True)
