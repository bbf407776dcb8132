"""A side-by-side sweep of the Keras surface added in wave 18 (recurrent layers and masking,
attention layers, reshaping/normalization/conv/noise layers, image preprocessing, focal/Dice/
Tversky losses, confusion-count and F-score metrics, callbacks, utils, Lion): ~150 small
programs, each printing one canonical outcome line, run under TF 2.21 and tapeflow, then diffed.

    cd /tmp && /work/main/.venv-peers/bin/python $WT/tests/tf_reference/keras_sweep18.py tf > tf.txt
    cd /tmp && PYTHONPATH=$WT /work/main/.venv/bin/python $WT/tests/tf_reference/keras_sweep18.py tp > tp.txt
    python3 $WT/tests/tf_reference/keras_sweep18.py diff tf.txt tp.txt     # WT: this checkout

Extra arguments after tf/tp run only the named cases; TB=1 prints tracebacks. Not a test
(CI has no TF): the differences it found are fixed with tests in tests/test_keras_sweep18.py
or listed in docs/differences.md.
"""
import sys, io, os, contextlib, traceback, re, tempfile
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
L = keras.layers
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
        return f"{a.dtype} {float(a):.5g}" if a.dtype.kind in "fiub" else repr(a)
    flat = ", ".join(f"{x:.5g}" for x in a.ravel()[:8].astype(float))
    return f"{a.dtype}{list(a.shape)}[{flat}{'...' if a.size > 8 else ''}]"

CASES = []
def case(f):
    CASES.append(f); return f

def clear():
    keras.backend.clear_session(); keras.utils.set_random_seed(0)

def seqx(b=2, t=4, d=3):
    return (np.sin(np.arange(b * t * d, dtype="float32")).reshape(b, t, d))

def setw(layer, scale=0.3):
    ws = layer.get_weights()
    layer.set_weights([(np.cos(np.arange(w.size, dtype="float32") * 0.7) * scale).reshape(w.shape).astype(w.dtype)
                       for w in ws])
    return layer

def shapes(ws):
    return [list(np.shape(w)) for w in ws]

def out(y):
    return np.asarray(y)

def summ(m):
    buf = []
    m.summary(print_fn=lambda s, *a, **k: buf.append(s))
    txt = "\n".join(buf)
    lines = [re.sub(r"[\s│┃━─┏┓┗┛┡┩└┘┌┐┼┬┴├┤╇╈╋]+", " ", l).strip() for l in txt.splitlines()]
    return [l for l in lines if l]

def cfg_keys(layer, keys):
    c = layer.get_config(); return {k: c.get(k, "MISSING") for k in keys}

def roundtrip(layer, x):
    y1 = layer(x)
    l2 = type(layer).from_config(layer.get_config())
    y2 = l2(x); l2.set_weights(layer.get_weights()); y2 = l2(x)
    return [out(y1).shape, bool(np.allclose(out(y1), out(y2), atol=1e-6))]

def fit_hist(m, *a, **k):
    h = m.fit(*a, verbose=0, **k)
    return {k2: [round(float(v), 4) for v in vs] for k2, vs in h.history.items()}

# ================= recurrent =================
RNN_KINDS = ["SimpleRNN", "LSTM", "GRU"]
for kind in RNN_KINDS:
    def _mk(kind=kind):
        @case
        def f():
            clear(); l = getattr(L, kind)(5); l(seqx()); setw(l); return out(l(seqx()))
        f.__name__ = f"rnn_{kind}_basic"
        @case
        def g():
            clear(); l = getattr(L, kind)(5, return_sequences=True, return_state=True); l(seqx()); setw(l)
            return [out(r) for r in l(seqx())]
        g.__name__ = f"rnn_{kind}_seq_state"
        @case
        def h():
            clear(); l = getattr(L, kind)(4); l.build((None, 4, 3)); return [names_(l.weights), shapes(l.get_weights()), l.count_params()]
        h.__name__ = f"rnn_{kind}_weights"
        @case
        def i():
            clear(); l = getattr(L, kind)(4, go_backwards=True); l(seqx()); setw(l); return out(l(seqx()))
        i.__name__ = f"rnn_{kind}_go_backwards"
        @case
        def j():
            clear(); l = getattr(L, kind)(4, return_sequences=True)
            mask = np.array([[1, 1, 0, 0], [1, 1, 1, 0]], bool); l(seqx()); setw(l); return out(l(seqx(), mask=mask))
        j.__name__ = f"rnn_{kind}_mask_seq"
        @case
        def k():
            clear(); i_ = keras.Input((None, 3)); m = L.Masking(0.0)(i_); o = getattr(L, kind)(3)(m)
            mod = keras.Model(i_, o); setw(mod.layers[-1]); x = seqx(); x[0, 2:] = 0; return out(mod(x))
        k.__name__ = f"rnn_{kind}_masking_layer_model"
        @case
        def cfg():
            clear(); l = getattr(L, kind)(4, dropout=0.1, recurrent_dropout=0.2, unroll=False, activation="relu")
            c = l.get_config(); return sorted(c.keys())
        cfg.__name__ = f"rnn_{kind}_config_keys"
        @case
        def rt():
            clear(); l = getattr(L, kind)(4, return_sequences=True); return roundtrip(l, seqx())
        rt.__name__ = f"rnn_{kind}_roundtrip"
        @case
        def cos():
            clear(); return getattr(L, kind)(4, return_sequences=True, return_state=True).compute_output_shape((2, 5, 3))
        cos.__name__ = f"rnn_{kind}_compute_output_shape"
        @case
        def r2():
            clear(); return out(getattr(L, kind)(4)(np.ones((2, 3), "float32")))
        r2.__name__ = f"rnn_{kind}_rank2_error"
        @case
        def st():
            clear(); l = getattr(L, kind)(4, stateful=True); return out(l(seqx()))
        st.__name__ = f"rnn_{kind}_stateful"
        @case
        def u0():
            clear(); return out(getattr(L, kind)(0)(seqx()))
        u0.__name__ = f"rnn_{kind}_units0"
        @case
        def dint():
            clear(); return out(getattr(L, kind)(2)(np.ones((2, 3, 2), "int32")))
        dint.__name__ = f"rnn_{kind}_int_input"
        @case
        def t0():
            clear(); return out(getattr(L, kind)(2)(np.ones((2, 0, 2), "float32")))
        t0.__name__ = f"rnn_{kind}_zero_steps"
    _mk()

def names_(ws):
    return [w.name for w in ws]

@case
def lstm_initial_state():
    clear(); l = L.LSTM(3); l(seqx()); setw(l)
    s = [np.full((2, 3), 0.5, "float32"), np.full((2, 3), -0.5, "float32")]
    return out(l(seqx(), initial_state=s))
@case
def gru_reset_after_false():
    clear(); l = L.GRU(3, reset_after=False); l(seqx()); setw(l); return [shapes(l.get_weights()), out(l(seqx()))]
@case
def lstm_unit_forget_bias():
    clear(); l = L.LSTM(2); l.build((None, 4, 3)); return out(l.get_weights()[2])
@case
def lstm_state_wrong_count():
    clear(); l = L.LSTM(3); return out(l(seqx(), initial_state=[np.zeros((2, 3), "float32")]))
@case
def rnn_cell_stacked():
    clear(); l = L.RNN([L.SimpleRNNCell(3), L.GRUCell(2)], return_state=True); l(seqx()); setw(l)
    return [out(r) for r in l(seqx())]
@case
def rnn_cell_lstm_state_size():
    clear(); c = L.LSTMCell(3); return [c.state_size, c.output_size]
@case
def rnn_gru_cell_state_size():
    clear(); c = L.GRUCell(3); return [c.state_size, c.output_size]
@case
def simple_rnn_cell_call():
    clear(); c = L.SimpleRNNCell(3, kernel_initializer="ones", recurrent_initializer="ones")
    o, s = c(np.ones((2, 2), "float32"), [np.zeros((2, 3), "float32")]); return [out(o), [out(x) for x in s] if isinstance(s, (list, tuple)) else out(s)]
@case
def stacked_lstm_model_fit():
    clear()
    m = keras.Sequential([keras.Input((4, 3)), L.LSTM(4, return_sequences=True), L.LSTM(2), L.Dense(1)])
    for l in m.layers: setw(l)
    m.compile(keras.optimizers.SGD(0.1), "mse")
    return fit_hist(m, np.concatenate([seqx()] * 4), np.arange(8, dtype="float32").reshape(8, 1) / 8, epochs=3, batch_size=4, shuffle=False)
@case
def gru_fit_masked_model():
    clear()
    m = keras.Sequential([keras.Input((4,)), L.Embedding(6, 3, mask_zero=True), L.GRU(3), L.Dense(1)])
    for l in m.layers: setw(l)
    m.compile(keras.optimizers.SGD(0.1), "mse")
    x = np.array([[1, 2, 0, 0], [3, 4, 5, 0], [1, 0, 0, 0], [5, 5, 5, 5]])
    return fit_hist(m, x, np.array([[0.], [1.], [0.5], [0.2]], "float32"), epochs=3, batch_size=2, shuffle=False)
@case
def embedding_mask_lstm_seq_pool():
    clear(); i = keras.Input((4,)); e = L.Embedding(6, 3, mask_zero=True)(i)
    h = L.LSTM(3, return_sequences=True)(e); o = L.GlobalAveragePooling1D()(h); m = keras.Model(i, o)
    for l in m.layers: setw(l)
    return out(m(np.array([[1, 2, 0, 0], [3, 4, 5, 0]])))
@case
def embedding_mask_attention():
    clear(); i = keras.Input((4,)); e = L.Embedding(6, 4, mask_zero=True)(i)
    a = L.Attention()([e, e]); m = keras.Model(i, a); setw(m.layers[1])
    return out(m(np.array([[1, 2, 0, 0], [3, 4, 5, 0]])))
@case
def embedding_mask_mha():
    clear(); i = keras.Input((4,)); e = L.Embedding(6, 4, mask_zero=True)(i)
    a = L.MultiHeadAttention(2, 2)(e, e); m = keras.Model(i, a)
    for l in m.layers: setw(l)
    return out(m(np.array([[1, 2, 0, 0], [3, 4, 5, 0]])))
@case
def masked_loss_seq_output():
    clear()
    m = keras.Sequential([keras.Input((4,)), L.Embedding(6, 2, mask_zero=True), L.SimpleRNN(2, return_sequences=True), L.Dense(1)])
    for l in m.layers: setw(l)
    m.compile(keras.optimizers.SGD(0.0), "mse")
    x = np.array([[1, 2, 0, 0], [3, 4, 5, 0]]); return m.evaluate(x, np.ones((2, 4, 1), "float32"), verbose=0)
@case
def compute_mask_rnn_seq():
    clear(); l = L.LSTM(2, return_sequences=True); m = np.array([[1, 1, 0, 0]], bool)
    return out(l.compute_mask(seqx(1), m))
@case
def compute_mask_rnn_last():
    clear(); l = L.LSTM(2); return l.compute_mask(seqx(1), np.array([[1, 1, 0, 0]], bool))
@case
def masking_compute_mask():
    clear(); x = seqx(); x[0, 1] = 0; return out(L.Masking(0.0).compute_mask(x))
@case
def masking_output():
    clear(); x = seqx(); x[0, 1] = 0; x[1, 2, 0] = 0; return out(L.Masking(0.0)(x))

# bidirectional
for mode in ["concat", "sum", "mul", "ave", None]:
    def _bm(mode=mode):
        @case
        def f():
            clear(); l = L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode=mode); l(seqx()); setw(l)
            r = l(seqx()); return [out(x) for x in r] if isinstance(r, (list, tuple)) else out(r)
        f.__name__ = f"bidi_merge_{mode}"
    _bm()
@case
def bidi_return_state():
    clear(); l = L.Bidirectional(L.LSTM(2, return_state=True)); l(seqx()); setw(l); return [out(x) for x in l(seqx())]
@case
def bidi_weights_names():
    clear(); l = L.Bidirectional(L.SimpleRNN(2)); l(seqx()); return [names_(l.weights), l.count_params()]
@case
def bidi_config_roundtrip():
    clear(); l = L.Bidirectional(L.LSTM(2, return_sequences=True), merge_mode="sum"); return roundtrip(l, seqx())
@case
def bidi_backward_layer():
    clear(); l = L.Bidirectional(L.LSTM(2), backward_layer=L.LSTM(3, go_backwards=True)); l(seqx()); setw(l); return out(l(seqx()))
@case
def bidi_bad_merge():
    clear(); return L.Bidirectional(L.LSTM(2), merge_mode="max")
@case
def bidi_not_rnn():
    clear(); return L.Bidirectional(L.Dense(2))
@case
def bidi_mask_model():
    clear(); i = keras.Input((4,)); e = L.Embedding(6, 3, mask_zero=True)(i)
    o = L.Bidirectional(L.SimpleRNN(2))(e); m = keras.Model(i, o)
    for l in m.layers: setw(l)
    return out(m(np.array([[1, 2, 0, 0], [3, 4, 5, 0]])))
@case
def bidi_compute_output_shape():
    clear(); return L.Bidirectional(L.LSTM(2, return_sequences=True)).compute_output_shape((2, 5, 3))
@case
def bidi_summary():
    clear(); m = keras.Sequential([keras.Input((4, 3)), L.Bidirectional(L.LSTM(2)), L.Dense(1)]); return summ(m)
@case
def td_dense():
    clear(); l = L.TimeDistributed(L.Dense(2)); l(seqx()); setw(l); return [out(l(seqx())), names_(l.weights)]
@case
def td_compute_output_shape():
    clear(); return L.TimeDistributed(L.Dense(2)).compute_output_shape((2, 5, 3))
@case
def td_rank2_error():
    clear(); return out(L.TimeDistributed(L.Dense(2))(np.ones((2, 3), "float32")))
@case
def td_conv2d():
    clear(); l = L.TimeDistributed(L.Conv2D(2, 3)); return out(l(np.ones((1, 2, 5, 5, 1), "float32"))).shape
@case
def td_mask_passthrough():
    clear(); i = keras.Input((4,)); e = L.Embedding(6, 3, mask_zero=True)(i)
    t = L.TimeDistributed(L.Dense(2))(e); o = L.LSTM(2)(t); m = keras.Model(i, o)
    for l in m.layers: setw(l)
    return out(m(np.array([[1, 2, 0, 0], [3, 4, 5, 0]])))
@case
def td_config_roundtrip():
    clear(); return roundtrip(L.TimeDistributed(L.Dense(2)), seqx())
@case
def rnn_model_save_load():
    clear(); m = keras.Sequential([keras.Input((4, 3)), L.Bidirectional(L.GRU(2, return_sequences=True)), L.LSTM(2), L.Dense(1)])
    for l in m.layers: setw(l)
    p = os.path.join(tempfile.mkdtemp(), "m.keras"); m.save(p); m2 = keras.models.load_model(p)
    return [bool(np.allclose(out(m(seqx())), out(m2(seqx())), atol=1e-6)), [type(l).__name__ for l in m2.layers]]
@case
def rnn_in_tf_function():
    clear(); l = L.GRU(3); l(seqx()); setw(l)
    f = tf.function(lambda x: l(x)); return out(f(seqx()))
@case
def rnn_dropout_training_false():
    clear(); l = L.LSTM(3, dropout=0.5, recurrent_dropout=0.5); l(seqx()); setw(l); return out(l(seqx(), training=False))
@case
def rnn_bad_dropout():
    clear(); return L.LSTM(3, dropout=1.5)
@case
def rnn_summary():
    clear(); return summ(keras.Sequential([keras.Input((4, 3)), L.SimpleRNN(3, return_sequences=True), L.GRU(2), L.Dense(1)]))

# ================= attention =================
def qkv(b=2, tq=3, tv=4, d=4):
    q = np.sin(np.arange(b * tq * d, dtype="float32")).reshape(b, tq, d)
    v = np.cos(np.arange(b * tv * d, dtype="float32")).reshape(b, tv, d)
    return q, v
@case
def att_basic():
    clear(); q, v = qkv(); return out(L.Attention()([q, v]))
@case
def att_scale():
    clear(); q, v = qkv(); l = L.Attention(use_scale=True); l([q, v]); return [names_(l.weights), out(l([q, v]))]
@case
def att_return_scores():
    clear(); q, v = qkv(); return [out(x) for x in L.Attention()([q, v], return_attention_scores=True)]
@case
def att_causal():
    clear(); q, v = qkv(tq=4); return out(L.Attention()([q, v], use_causal_mask=True))
@case
def att_masks():
    clear(); q, v = qkv(); return out(L.Attention()([q, v], mask=[np.array([[1, 1, 0], [1, 0, 0]], bool), np.array([[1, 1, 0, 0], [1, 1, 1, 0]], bool)]))
@case
def att_score_concat():
    clear(); q, v = qkv(); l = L.Attention(score_mode="concat"); return [out(l([q, v])), names_(l.weights)]
@case
def att_bad_score_mode():
    clear(); return L.Attention(score_mode="foo")
@case
def att_three_inputs():
    clear(); q, v = qkv(); return out(L.Attention()([q, v, v * 2]))
@case
def att_one_input():
    clear(); q, v = qkv(); return out(L.Attention()([q]))
@case
def att_dim_mismatch():
    clear(); q, v = qkv(); return out(L.Attention()([q, v[..., :3]]))
@case
def att_config():
    clear(); return L.Attention(use_scale=True, dropout=0.1).get_config()
@case
def att_compute_output_shape():
    clear(); return L.Attention().compute_output_shape([(2, 3, 4), (2, 5, 4)])
@case
def additive_att():
    clear(); q, v = qkv(); l = L.AdditiveAttention(); return [out(l([q, v])), names_(l.weights)]
@case
def additive_att_noscale():
    clear(); q, v = qkv(); l = L.AdditiveAttention(use_scale=False); return [out(l([q, v])), names_(l.weights)]
@case
def mha_basic():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(2, 3); l(q, v); setw(l); return out(l(q, v))
@case
def mha_weights():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(2, 3, value_dim=5, output_shape=6); l(q, v)
    return [names_(l.weights), shapes(l.get_weights()), l.count_params()]
@case
def mha_scores():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(2, 3); l(q, v); setw(l)
    return [out(x) for x in l(q, v, return_attention_scores=True)]
@case
def mha_causal():
    clear(); q, v = qkv(tq=4); l = L.MultiHeadAttention(2, 3); l(q, v); setw(l); return out(l(q, v, use_causal_mask=True))
@case
def mha_attention_mask():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(1, 2); l(q, v); setw(l)
    am = np.tril(np.ones((3, 4), bool))[None].repeat(2, 0); return out(l(q, v, attention_mask=am))
@case
def mha_key_given():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(2, 2); l(q, v, v * 0.5); setw(l); return out(l(q, v, v * 0.5))
@case
def mha_no_bias():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(2, 2, use_bias=False); l(q, v); return [names_(l.weights), l.count_params()]
@case
def mha_attention_axes():
    clear(); x = np.sin(np.arange(2 * 3 * 4 * 4, dtype="float32")).reshape(2, 3, 4, 4)
    l = L.MultiHeadAttention(2, 2, attention_axes=(2,)); l(x, x); setw(l); return out(l(x, x))
@case
def mha_config_keys():
    clear(); return sorted(L.MultiHeadAttention(2, 3).get_config().keys())
@case
def mha_roundtrip():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(2, 3)
    y1 = l(q, v); l2 = L.MultiHeadAttention.from_config(l.get_config()); l2(q, v); l2.set_weights(l.get_weights())
    return bool(np.allclose(out(y1), out(l2(q, v)), atol=1e-6))
@case
def mha_compute_output_shape():
    clear(); return L.MultiHeadAttention(2, 3).compute_output_shape((2, 3, 4), (2, 5, 4))
@case
def mha_rank2_error():
    clear(); return out(L.MultiHeadAttention(2, 3)(np.ones((2, 4), "float32"), np.ones((2, 4), "float32")))
@case
def mha_self_attention_model_fit():
    clear(); i = keras.Input((3, 4)); h = L.MultiHeadAttention(2, 2)(i, i); o = L.Dense(1)(L.GlobalAveragePooling1D()(h))
    m = keras.Model(i, o)
    for l in m.layers: setw(l)
    m.compile(keras.optimizers.SGD(0.1), "mse"); q, v = qkv(b=4)
    return fit_hist(m, q, np.arange(4, dtype="float32").reshape(4, 1) / 4, epochs=3, batch_size=2, shuffle=False)
@case
def mha_summary():
    clear(); i = keras.Input((3, 4)); return summ(keras.Model(i, L.MultiHeadAttention(2, 2)(i, i)))
@case
def mha_save_load():
    clear(); i = keras.Input((3, 4)); m = keras.Model(i, L.MultiHeadAttention(2, 2)(i, i)); setw(m.layers[-1])
    p = os.path.join(tempfile.mkdtemp(), "m.keras"); m.save(p); m2 = keras.models.load_model(p); q, _ = qkv()
    return bool(np.allclose(out(m(q)), out(m2(q)), atol=1e-6))
@case
def einsum_dense_basic():
    clear(); l = L.EinsumDense("ab,bc->ac", output_shape=4, bias_axes="c"); x = np.ones((2, 3), "float32"); l(x); setw(l)
    return [out(l(x)), names_(l.weights)]
@case
def einsum_dense_3d():
    clear(); l = L.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de"); x = seqx(); l(x); setw(l)
    return [out(l(x)), shapes(l.get_weights())]
@case
def einsum_dense_activation():
    clear(); l = L.EinsumDense("ab,bc->ac", output_shape=2, activation="relu"); x = np.ones((2, 3), "float32") * -1; l(x); setw(l); return out(l(x))
@case
def einsum_dense_bad_eq():
    clear(); return out(L.EinsumDense("ab,bc", output_shape=2)(np.ones((2, 3), "float32")))
@case
def einsum_dense_bad_bias():
    clear(); return out(L.EinsumDense("ab,bc->ac", output_shape=2, bias_axes="z")(np.ones((2, 3), "float32")))
@case
def einsum_dense_config():
    clear(); return cfg_keys(L.EinsumDense("ab,bc->ac", output_shape=2, bias_axes="c"), ["equation", "output_shape", "bias_axes", "activation"])
@case
def einsum_dense_cos():
    clear(); return L.EinsumDense("abc,cd->abd", output_shape=(None, 5)).compute_output_shape((2, 3, 4))
@case
def dot_basic():
    clear(); a = np.arange(6, dtype="float32").reshape(2, 3); return out(L.Dot(axes=1)([a, a + 1]))
@case
def dot_normalize():
    clear(); a = np.arange(6, dtype="float32").reshape(2, 3); return out(L.Dot(axes=1, normalize=True)([a, a + 1]))
@case
def dot_3d():
    clear(); a = seqx(); return out(L.Dot(axes=(2, 2))([a, a]))
@case
def dot_3d_axes1():
    clear(); a = seqx(); b = seqx(2, 4, 5); return out(L.Dot(axes=1)([a, b]))
@case
def dot_mismatch():
    clear(); return out(L.Dot(axes=1)([np.ones((2, 3), "float32"), np.ones((2, 4), "float32")]))
@case
def dot_three_inputs():
    clear(); a = np.ones((2, 3), "float32"); return out(L.Dot(axes=1)([a, a, a]))
@case
def dot_cos():
    clear(); return L.Dot(axes=(1, 1)).compute_output_shape([(2, 3, 4), (2, 3, 5)])
@case
def dot_functional():
    clear(); a = np.arange(6, dtype="float32").reshape(2, 3); return out(L.dot([a, a], axes=-1))

# ================= reshaping / normalization / conv / noise =================
@case
def cropping1d():
    clear(); return out(L.Cropping1D((1, 2))(seqx(1, 5, 2)))
@case
def cropping1d_too_much():
    clear(); return out(L.Cropping1D((3, 3))(seqx(1, 5, 2)))
@case
def cropping2d():
    clear(); return out(L.Cropping2D(((1, 0), (0, 1)))(np.arange(32, dtype="float32").reshape(1, 4, 4, 2)))
@case
def cropping2d_cos():
    clear(); return L.Cropping2D(1).compute_output_shape((2, 5, 6, 3))
@case
def cropping2d_negative():
    clear(); return L.Cropping2D(-1)
@case
def zeropad1d():
    clear(); return out(L.ZeroPadding1D(2)(seqx(1, 2, 2)))
@case
def zeropad1d_tuple():
    clear(); return out(L.ZeroPadding1D((0, 1))(seqx(1, 2, 2)))
@case
def upsampling1d():
    clear(); return out(L.UpSampling1D(3)(seqx(1, 2, 2)))
@case
def upsampling2d_bilinear():
    clear(); return out(L.UpSampling2D(2, interpolation="bilinear")(np.arange(4, dtype="float32").reshape(1, 2, 2, 1)))
@case
def upsampling2d_cos():
    clear(); return L.UpSampling2D((2, 3)).compute_output_shape((1, 4, 5, 2))
@case
def identity_layer():
    clear(); return out(L.Identity()(seqx()))
@case
def layernorm_axes():
    clear(); l = L.LayerNormalization(axis=[1, 2]); return [out(l(seqx())), shapes(l.get_weights())]
@case
def layernorm_no_center():
    clear(); l = L.LayerNormalization(center=False, scale=False, epsilon=0.1); return [out(l(seqx())), l.get_weights()]
@case
def groupnorm():
    clear(); x = np.sin(np.arange(2 * 3 * 4, dtype="float32")).reshape(2, 3, 4); l = L.GroupNormalization(groups=2)
    return [out(l(x)), names_(l.weights)]
@case
def groupnorm_bad_groups():
    clear(); return out(L.GroupNormalization(groups=3)(np.ones((2, 4), "float32")))
@case
def groupnorm_minus1():
    clear(); x = np.sin(np.arange(24, dtype="float32")).reshape(2, 3, 4); return out(L.GroupNormalization(groups=-1)(x))
@case
def rmsnorm():
    clear(); l = L.RMSNormalization(); return [out(l(seqx())), names_(l.weights)]
@case
def unitnorm():
    clear(); return out(L.UnitNormalization(axis=[1, 2])(seqx()))
@case
def bn_fit_moving():
    clear(); m = keras.Sequential([keras.Input((3,)), L.BatchNormalization(momentum=0.5), L.Dense(1, kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.1), "mse"); x = np.arange(24, dtype="float32").reshape(8, 3) / 10
    h = fit_hist(m, x, np.ones((8, 1), "float32"), epochs=2, batch_size=4, shuffle=False)
    return [h, [out(w) for w in m.layers[0].get_weights()]]
@case
def bn_virtual_args():
    clear(); return out(L.BatchNormalization(axis=1)(np.ones((2, 3, 4), "float32"), training=True))
@case
def conv1d_causal():
    clear(); l = L.Conv1D(2, 3, padding="causal", kernel_initializer="ones"); return out(l(seqx(1, 5, 2)))
@case
def conv1d_dilation():
    clear(); l = L.Conv1D(1, 2, dilation_rate=2, kernel_initializer="ones"); return out(l(seqx(1, 6, 1)))
@case
def conv1d_groups():
    clear(); l = L.Conv1D(4, 2, groups=2, kernel_initializer="ones"); return [out(l(seqx(1, 4, 2))), shapes(l.get_weights())]
@case
def conv1d_transpose():
    clear(); l = L.Conv1DTranspose(2, 3, strides=2, kernel_initializer="ones"); return out(l(seqx(1, 3, 1)))
@case
def conv2d_transpose_same():
    clear(); l = L.Conv2DTranspose(1, 3, strides=2, padding="same", kernel_initializer="ones")
    return out(l(np.arange(4, dtype="float32").reshape(1, 2, 2, 1)))
@case
def conv2d_transpose_output_padding():
    clear(); l = L.Conv2DTranspose(1, 3, strides=2, output_padding=1, kernel_initializer="ones")
    return out(l(np.ones((1, 2, 2, 1), "float32"))).shape
@case
def depthwise_conv():
    clear(); l = L.DepthwiseConv2D(2, depth_multiplier=2, depthwise_initializer="ones")
    return [out(l(np.arange(18, dtype="float32").reshape(1, 3, 3, 2))), shapes(l.get_weights())]
@case
def separable_conv():
    clear(); l = L.SeparableConv2D(3, 2, depthwise_initializer="ones", pointwise_initializer="ones")
    return [out(l(np.arange(18, dtype="float32").reshape(1, 3, 3, 2))), names_(l.weights)]
@case
def conv2d_channels_first():
    clear(); l = L.Conv2D(2, 2, data_format="channels_first", kernel_initializer="ones")
    return out(l(np.arange(18, dtype="float32").reshape(1, 2, 3, 3)))
@case
def conv_bad_padding():
    clear(); return L.Conv2D(2, 2, padding="full")
@case
def conv1d_rank_error():
    clear(); return out(L.Conv1D(2, 2)(np.ones((2, 3), "float32")))
@case
def avgpool1d_same():
    clear(); return out(L.AveragePooling1D(2, padding="same")(seqx(1, 5, 1)))
@case
def maxpool1d_strides():
    clear(); return out(L.MaxPooling1D(3, strides=1)(seqx(1, 5, 1)))
@case
def gap1d_mask():
    clear(); return out(L.GlobalAveragePooling1D()(seqx(), mask=np.array([[1, 1, 0, 0], [1, 0, 0, 0]], bool)))
@case
def gmp1d_keepdims():
    clear(); return out(L.GlobalMaxPooling1D(keepdims=True)(seqx()))
@case
def gap2d_channels_first():
    clear(); return out(L.GlobalAveragePooling2D(data_format="channels_first")(np.arange(8, dtype="float32").reshape(1, 2, 2, 2)))
@case
def gaussian_dropout_infer():
    clear(); return out(L.GaussianDropout(0.5)(seqx()))
@case
def gaussian_noise_train_shape():
    clear(); return out(L.GaussianNoise(0.1)(seqx(), training=True)).shape
@case
def alpha_dropout_infer():
    clear(); return out(L.AlphaDropout(0.3)(seqx()))
@case
def spatial_dropout1d_rank():
    clear(); return out(L.SpatialDropout1D(0.5)(np.ones((2, 3), "float32"), training=True))
@case
def spatial_dropout2d_pattern():
    clear(); y = out(L.SpatialDropout2D(0.5)(np.ones((2, 3, 3, 4), "float32"), training=True))
    return [bool(np.all((y == y[:, :1, :1, :]))), sorted(set(np.unique(y).round(4).tolist()))]
@case
def dropout_bad_rate():
    clear(); return L.GaussianDropout(1.0)
@case
def activity_reg_losses():
    clear(); l = L.ActivityRegularization(l1=0.1, l2=0.01); l(seqx()); return [round(float(x), 4) for x in l.losses]

# ================= image preprocessing =================
def img(b=1, h=4, w=4, c=1):
    return np.arange(b * h * w * c, dtype="float32").reshape(b, h, w, c)
@case
def resizing_bilinear():
    clear(); return out(L.Resizing(2, 3)(img()))
@case
def resizing_nearest():
    clear(); return out(L.Resizing(6, 6, interpolation="nearest")(img()))
@case
def resizing_crop_to_aspect():
    clear(); return out(L.Resizing(2, 4, crop_to_aspect_ratio=True)(img(h=4, w=6)))
@case
def resizing_uint8():
    clear(); return out(L.Resizing(2, 2)(img().astype("uint8")))
@case
def resizing_unbatched():
    clear(); return out(L.Resizing(2, 2)(img()[0]))
@case
def center_crop():
    clear(); return out(L.CenterCrop(2, 2)(img()))
@case
def center_crop_upsize():
    clear(); return out(L.CenterCrop(5, 3)(img()))
@case
def rescaling():
    clear(); return out(L.Rescaling(1 / 255.0, offset=-1)(img().astype("uint8")))
@case
def random_flip_infer():
    clear(); return out(L.RandomFlip()(img()))
@case
def random_flip_bad_mode():
    clear(); return L.RandomFlip("diagonal")
@case
def random_rotation_infer():
    clear(); return out(L.RandomRotation(0.2)(img()))
@case
def random_rotation_bad_factor():
    clear(); return L.RandomRotation("a")
@case
def random_zoom_infer():
    clear(); return out(L.RandomZoom(0.2)(img()))
@case
def random_zoom_bad_factor():
    clear(); return L.RandomZoom(-2.0)
@case
def random_translation_infer():
    clear(); return out(L.RandomTranslation(0.1, 0.1)(img()))
@case
def random_contrast_infer():
    clear(); return out(L.RandomContrast(0.3)(img()))
@case
def random_contrast_bad():
    clear(); return L.RandomContrast(1.5)
@case
def random_brightness_infer():
    clear(); return out(L.RandomBrightness(0.2)(img()))
@case
def random_brightness_bad():
    clear(); return L.RandomBrightness(2.0)
@case
def random_crop_infer():
    clear(); return out(L.RandomCrop(2, 2)(img()))
@case
def random_crop_train_shape():
    clear(); return out(L.RandomCrop(2, 3)(img(b=2), training=True)).shape
@case
def random_crop_too_big_train():
    clear(); return out(L.RandomCrop(6, 6)(img(), training=True)).shape
@case
def image_cfg_roundtrip():
    clear(); l = L.Resizing(3, 3, interpolation="nearest", crop_to_aspect_ratio=True)
    return cfg_keys(L.Resizing.from_config(l.get_config()), ["height", "width", "interpolation", "crop_to_aspect_ratio"])
@case
def resizing_cos():
    clear(); return L.Resizing(3, 5).compute_output_shape((2, 10, 10, 3))

# ================= losses =================
YT = np.array([[0, 1, 1, 0], [1, 0, 1, 1]], "float32")
YP = np.array([[0.1, 0.8, 0.6, 0.3], [0.7, 0.2, 0.9, 0.4]], "float32")
@case
def loss_bfocal():
    return out(keras.losses.BinaryFocalCrossentropy()(YT, YP))
@case
def loss_bfocal_balanced():
    return out(keras.losses.BinaryFocalCrossentropy(apply_class_balancing=True, alpha=0.3, gamma=1.5)(YT, YP))
@case
def loss_bfocal_logits_smooth():
    return out(keras.losses.BinaryFocalCrossentropy(from_logits=True, label_smoothing=0.1)(YT, YP * 4 - 2))
@case
def loss_bfocal_none():
    return out(keras.losses.BinaryFocalCrossentropy(reduction=None)(YT, YP))
@case
def loss_cfocal():
    yt = np.eye(3, dtype="float32")[[0, 2]]; yp = np.array([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]], "float32")
    return out(keras.losses.CategoricalFocalCrossentropy()(yt, yp))
@case
def loss_cfocal_logits():
    yt = np.eye(3, dtype="float32")[[0, 2]]; yp = np.array([[2., 0.3, -1], [0.2, 0.2, 1.6]], "float32")
    return out(keras.losses.CategoricalFocalCrossentropy(from_logits=True, alpha=0.5, gamma=1.0)(yt, yp))
@case
def loss_dice():
    return out(keras.losses.Dice()(YT, YP))
@case
def loss_dice_axis():
    return out(keras.losses.Dice(axis=1)(YT, YP))
@case
def loss_dice_none_red():
    return out(keras.losses.Dice(reduction=None)(YT, YP))
@case
def loss_tversky():
    return out(keras.losses.Tversky(alpha=0.3, beta=0.7)(YT, YP))
@case
def loss_tversky_axis():
    return out(keras.losses.Tversky(axis=1)(YT, YP))
@case
def loss_dice_int_labels():
    return out(keras.losses.Dice()(YT.astype("int32"), YP))
@case
def loss_focal_sample_weight():
    return out(keras.losses.BinaryFocalCrossentropy()(YT, YP, sample_weight=np.array([1.0, 0.5], "float32")))
@case
def loss_focal_fn():
    return out(keras.losses.binary_focal_crossentropy(YT, YP))
@case
def loss_dice_fn():
    return out(keras.losses.dice(YT, YP))
@case
def loss_tversky_fn():
    return out(keras.losses.tversky(YT, YP, alpha=0.2, beta=0.8))
@case
def loss_focal_config():
    return keras.losses.BinaryFocalCrossentropy(gamma=3.0).get_config()
@case
def loss_dice_config():
    return keras.losses.Dice(axis=1).get_config()
@case
def loss_shape_mismatch():
    return out(keras.losses.Dice()(YT, YP[:, :3]))
@case
def loss_focal_compile_fit():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(1, activation="sigmoid", kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.1), keras.losses.BinaryFocalCrossentropy())
    x = np.arange(12, dtype="float32").reshape(4, 3) / 10; return fit_hist(m, x, np.array([[0], [1], [0], [1]], "float32"), epochs=2, batch_size=2, shuffle=False)
@case
def loss_string_dice():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(1, activation="sigmoid", kernel_initializer="ones")])
    m.compile("sgd", "dice"); x = np.arange(12, dtype="float32").reshape(4, 3) / 10
    return m.evaluate(x, np.array([[0], [1], [0], [1]], "float32"), verbose=0)

# ================= metrics =================
MT = np.array([0, 1, 1, 0, 1], "float32"); MP = np.array([0.2, 0.7, 0.4, 0.6, 0.9], "float32")
for nm in ["TruePositives", "FalsePositives", "TrueNegatives", "FalseNegatives"]:
    def _mm(nm=nm):
        @case
        def f():
            m = getattr(keras.metrics, nm)(); m.update_state(MT, MP); return out(m.result())
        f.__name__ = f"metric_{nm}"
        @case
        def g():
            m = getattr(keras.metrics, nm)(thresholds=[0.3, 0.5, 0.8]); m.update_state(MT, MP, sample_weight=[1, 2, 1, 1, 0.5]); return out(m.result())
        g.__name__ = f"metric_{nm}_thresholds_sw"
    _mm()
@case
def metric_tp_config():
    return keras.metrics.TruePositives(thresholds=0.3).get_config()
@case
def metric_tp_reset():
    m = keras.metrics.TruePositives(); m.update_state(MT, MP); m.reset_state(); return out(m.result())
@case
def metric_f1_micro():
    yt = np.eye(3, dtype="float32")[[0, 1, 2, 1]]; yp = np.array([[.6, .3, .1], [.2, .7, .1], [.5, .1, .4], [.1, .4, .5]], "float32")
    m = keras.metrics.F1Score(average="micro", threshold=0.45); m.update_state(yt, yp); return out(m.result())
@case
def metric_f1_none():
    yt = np.eye(3, dtype="float32")[[0, 1, 2, 1]]; yp = np.array([[.6, .3, .1], [.2, .7, .1], [.5, .1, .4], [.1, .4, .5]], "float32")
    m = keras.metrics.F1Score(); m.update_state(yt, yp); return out(m.result())
@case
def metric_f1_macro_weighted():
    yt = np.eye(3, dtype="float32")[[0, 1, 2, 1]]; yp = np.array([[.6, .3, .1], [.2, .7, .1], [.5, .1, .4], [.1, .4, .5]], "float32")
    r = []
    for a in ["macro", "weighted"]:
        m = keras.metrics.F1Score(average=a); m.update_state(yt, yp); r.append(out(m.result()))
    return r
@case
def metric_fbeta():
    yt = np.eye(3, dtype="float32")[[0, 1, 2, 1]]; yp = np.array([[.6, .3, .1], [.2, .7, .1], [.5, .1, .4], [.1, .4, .5]], "float32")
    m = keras.metrics.FBetaScore(beta=2.0, average="macro", threshold=0.3); m.update_state(yt, yp); return out(m.result())
@case
def metric_fbeta_bad_beta():
    return keras.metrics.FBetaScore(beta=0)
@case
def metric_fbeta_bad_average():
    return keras.metrics.FBetaScore(average="mean")
@case
def metric_f1_rank1():
    m = keras.metrics.F1Score(); m.update_state(MT, MP); return out(m.result())
@case
def metric_f1_config():
    return keras.metrics.F1Score(average="macro", threshold=0.4).get_config()
@case
def metric_tp_in_fit():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(1, activation="sigmoid", kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.0), "binary_crossentropy", metrics=[keras.metrics.TruePositives(), keras.metrics.FalseNegatives()])
    x = (np.arange(12, dtype="float32").reshape(4, 3) - 6) / 10; return fit_hist(m, x, np.array([[0], [1], [0], [1]], "float32"), epochs=1, batch_size=2, shuffle=False)

# ================= activations / constraints / callbacks / utils / optim =================
ACT_X = np.array([-3., -1., -0.5, 0., 0.5, 1., 3.], "float32")
for an in ["gelu", "silu", "mish", "hard_silu", "hard_sigmoid", "relu6", "elu", "selu", "softplus", "softsign", "leaky_relu", "log_softmax", "celu", "glu", "hard_tanh", "squareplus", "sparse_plus", "soft_shrink", "hard_shrink", "tanh_shrink", "log_sigmoid", "sparsemax", "threshold"]:
    def _ma(an=an):
        @case
        def f():
            return out(keras.activations.get(an)(ACT_X if an != "glu" else ACT_X[:6]))
        f.__name__ = f"act_{an}"
    _ma()
@case
def act_gelu_approx():
    return out(keras.activations.gelu(ACT_X, approximate=True))
@case
def act_serialize():
    return [keras.activations.serialize(keras.activations.get("gelu")), keras.activations.serialize(keras.activations.relu)]
@case
def act_unknown():
    return keras.activations.get("nope")
@case
def constraint_maxnorm():
    w = np.arange(6, dtype="float32").reshape(2, 3); return out(keras.constraints.MaxNorm(2.0)(w))
@case
def constraint_minmax():
    w = np.arange(6, dtype="float32").reshape(2, 3); return out(keras.constraints.MinMaxNorm(1.0, 2.0, rate=0.5)(w))
@case
def constraint_unitnorm():
    w = np.arange(6, dtype="float32").reshape(2, 3); return out(keras.constraints.UnitNorm(axis=1)(w))
@case
def constraint_nonneg():
    return out(keras.constraints.NonNeg()(np.array([-1., 2.], "float32")))
@case
def constraint_in_fit():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(1, kernel_initializer="ones", kernel_constraint=keras.constraints.MaxNorm(1.0))])
    m.compile(keras.optimizers.SGD(0.1), "mse"); x = np.arange(12, dtype="float32").reshape(4, 3) / 10
    fit_hist(m, x, np.ones((4, 1), "float32"), epochs=1, batch_size=2, shuffle=False); return out(m.layers[0].kernel)
@case
def constraint_get_config():
    return [keras.constraints.MaxNorm(2.0, axis=1).get_config(), keras.constraints.serialize(keras.constraints.NonNeg())]
@case
def cb_terminate_on_nan():
    clear(); m = keras.Sequential([keras.Input((1,)), L.Dense(1, kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(1e30), "mse"); x = np.full((8, 1), 1e10, "float32")
    h = m.fit(x, x, epochs=3, batch_size=2, verbose=0, callbacks=[keras.callbacks.TerminateOnNaN()], shuffle=False)
    return [len(h.history["loss"]), h.epoch]
@case
def cb_on_batch_end_logs():
    clear(); seen = []
    class C(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append((batch, sorted(logs)))
    m = keras.Sequential([keras.Input((1,)), L.Dense(1)]); m.compile("sgd", "mse", metrics=["mae"])
    m.fit(np.ones((4, 1)), np.ones((4, 1)), batch_size=2, epochs=1, verbose=0, callbacks=[C()]); return seen
@case
def cb_lambda_on_batch_end():
    clear(); seen = []
    m = keras.Sequential([keras.Input((1,)), L.Dense(1)]); m.compile("sgd", "mse")
    m.fit(np.ones((6, 1)), np.ones((6, 1)), batch_size=2, epochs=2, verbose=0,
          callbacks=[keras.callbacks.LambdaCallback(on_batch_end=lambda b, l: seen.append(b))]); return seen
@case
def pad_seq_default():
    return out(keras.utils.pad_sequences([[1, 2, 3], [4], [5, 6]]))
@case
def pad_seq_post_maxlen():
    return out(keras.utils.pad_sequences([[1, 2, 3], [4], [5, 6]], maxlen=2, padding="post", truncating="post", value=-1))
@case
def pad_seq_float():
    return out(keras.utils.pad_sequences([[1.5, 2.5], [3.5]], dtype="float32"))
@case
def pad_seq_empty_seq():
    return out(keras.utils.pad_sequences([[], [1, 2]]))
@case
def pad_seq_empty_list():
    return out(keras.utils.pad_sequences([]))
@case
def pad_seq_bad_padding():
    return out(keras.utils.pad_sequences([[1, 2]], padding="middle"))
@case
def pad_seq_str_int_dtype():
    return out(keras.utils.pad_sequences([["a", "b"], ["c"]], dtype=object, value="x"))
@case
def pad_seq_2d_items():
    return out(keras.utils.pad_sequences([np.ones((2, 3)), np.ones((1, 3))], dtype="float32"))
@case
def ts_dataset_basic():
    ds = keras.utils.timeseries_dataset_from_array(np.arange(10), np.arange(10) * 10, sequence_length=3, batch_size=4)
    return [[out(a), out(b)] for a, b in ds]
@case
def ts_dataset_stride_rate():
    ds = keras.utils.timeseries_dataset_from_array(np.arange(20), None, sequence_length=3, sequence_stride=2, sampling_rate=2, batch_size=8)
    return [out(a) for a in ds]
@case
def ts_dataset_start_end():
    ds = keras.utils.timeseries_dataset_from_array(np.arange(20), None, sequence_length=2, start_index=5, end_index=11, batch_size=10)
    return [out(a) for a in ds]
@case
def ts_dataset_too_short():
    ds = keras.utils.timeseries_dataset_from_array(np.arange(2), None, sequence_length=3); return [out(a) for a in ds]
@case
def ts_dataset_bad_len():
    ds = keras.utils.timeseries_dataset_from_array(np.arange(10), None, sequence_length=0); return [out(a) for a in ds]
@case
def ts_dataset_mismatch_targets():
    ds = keras.utils.timeseries_dataset_from_array(np.arange(10), np.arange(5), sequence_length=2); return [out(a) for a in ds]
@case
def pydataset_fit():
    clear()
    class D(keras.utils.PyDataset):
        def __len__(self): return 2
        def __getitem__(self, i): return np.ones((2, 1), "float32") * (i + 1), np.ones((2, 1), "float32")
    m = keras.Sequential([keras.Input((1,)), L.Dense(1, kernel_initializer="ones")]); m.compile(keras.optimizers.SGD(0.1), "mse")
    return fit_hist(m, D(), epochs=2)
@case
def lion_steps():
    v = tf.Variable([1.0, -2.0, 3.0]); opt = keras.optimizers.Lion(learning_rate=0.1, beta_1=0.9, beta_2=0.99)
    for g in ([0.5, -0.1, 0.0], [-0.2, 0.3, 1.0], [0.1, 0.1, -0.1]):
        opt.apply_gradients([(tf.constant(g), v)])
    return out(v)
@case
def lion_weight_decay():
    v = tf.Variable([1.0, -2.0]); opt = keras.optimizers.Lion(learning_rate=0.1, weight_decay=0.5)
    opt.apply_gradients([(tf.constant([0.5, 0.5]), v)]); return out(v)
@case
def lion_config():
    c = keras.optimizers.Lion(learning_rate=0.01).get_config(); return {k: c[k] for k in ["name", "learning_rate", "beta_1", "beta_2"]}
@case
def lion_bad_beta():
    return keras.optimizers.Lion(beta_1=1.5)
@case
def lion_fit():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(1, kernel_initializer="ones")])
    m.compile(keras.optimizers.Lion(0.01), "mse"); x = np.arange(12, dtype="float32").reshape(4, 3) / 10
    return fit_hist(m, x, np.ones((4, 1), "float32"), epochs=3, batch_size=2, shuffle=False)
@case
def lion_string():
    return type(keras.optimizers.get("lion")).__name__

# ================= batch 2 =================
for kind in RNN_KINDS:
    def _mk2(kind=kind):
        @case
        def a():
            clear(); l = getattr(L, kind)(2); l(np.ones((2, 3, 2), "int32")); setw(l); return out(l(np.ones((2, 3, 2), "int32")))
        a.__name__ = f"b2_rnn_{kind}_int_input_setw"
        @case
        def b():
            clear(); l = getattr(L, kind)(3, return_sequences=True); l(seqx()); setw(l)
            mask = np.array([[1, 1, 0, 0], [1, 1, 1, 0]], bool)
            f = tf.function(lambda x, m: l(x, mask=m)); return out(f(tf.constant(seqx()), tf.constant(mask)))
        b.__name__ = f"b2_rnn_{kind}_mask_tf_function"
        @case
        def c():
            clear(); l = getattr(L, kind)(3, use_bias=False, activation=None); l(seqx()); setw(l)
            return [names_(l.weights), out(l(seqx()))]
        c.__name__ = f"b2_rnn_{kind}_nobias_linear"
        @case
        def d():
            clear(); l = getattr(L, kind)(3, return_sequences=True, go_backwards=True); l(seqx()); setw(l)
            return out(l(seqx(), mask=np.array([[1, 1, 0, 0], [1, 1, 1, 1]], bool)))
        d.__name__ = f"b2_rnn_{kind}_backwards_mask"
        @case
        def e():
            clear(); m = keras.Sequential([keras.Input((4, 3)), getattr(L, kind)(3), L.Dense(1)])
            for l in m.layers: setw(l)
            m.compile(keras.optimizers.Adam(0.01), "mse")
            return fit_hist(m, np.concatenate([seqx()] * 2), np.arange(4, dtype="float32").reshape(4, 1), epochs=3, batch_size=2, shuffle=False)
        e.__name__ = f"b2_rnn_{kind}_fit_adam"
        @case
        def g():
            clear(); l = getattr(L, kind)(3); l(seqx()); return sorted(l.get_config()["cell"].keys()) if "cell" in l.get_config() else "NOCELL"
        g.__name__ = f"b2_rnn_{kind}_cell_in_config"
        @case
        def h():
            clear(); cell = getattr(L, kind + "Cell")(3); l = L.RNN(cell, return_sequences=True); l(seqx()); setw(l)
            return [out(l(seqx())), names_(l.weights)]
        h.__name__ = f"b2_rnn_{kind}_cell_wrapper"
        @case
        def i():
            clear(); l = getattr(L, kind)(3, unroll=True); l(seqx()); setw(l); return out(l(seqx()))
        i.__name__ = f"b2_rnn_{kind}_unroll"
        @case
        def j():
            clear(); i_ = keras.Input((4, 3)); s_ = [keras.Input((3,)) for _ in range(2 if kind == "LSTM" else 1)]
            o = getattr(L, kind)(3)(i_, initial_state=s_); m = keras.Model([i_] + s_, o); setw(m.layers[-1])
            return out(m([seqx()] + [np.full((2, 3), 0.1, "float32")] * len(s_)))
        j.__name__ = f"b2_rnn_{kind}_functional_initial_state"
    _mk2()
@case
def b2_additive_att_setw():
    clear(); q, v = qkv(); l = L.AdditiveAttention(); l([q, v]); setw(l); return out(l([q, v]))
@case
def b2_att_dropout_training():
    clear(); q, v = qkv(); return out(L.Attention(dropout=0.5)([q, v], training=False))
@case
def b2_att_masked_model_tf_function():
    clear(); i = keras.Input((4,)); e = L.Embedding(6, 4, mask_zero=True)(i)
    a = L.Attention(use_scale=True)([e, e]); m = keras.Model(i, L.GlobalAveragePooling1D()(a)); setw(m.layers[1])
    f = tf.function(lambda x: m(x)); return out(f(tf.constant(np.array([[1, 2, 0, 0], [3, 4, 5, 0]]))))
@case
def b2_mha_masking_layer():
    clear(); i = keras.Input((4, 3)); mm = L.Masking(0.0)(i); a = L.MultiHeadAttention(1, 2)(mm, mm)
    m = keras.Model(i, a); setw(m.layers[-1]); x = seqx(); x[0, 2:] = 0; return out(m(x))
@case
def b2_mha_value_dim_output_shape():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(2, 3, value_dim=2, output_shape=(2, 3)); l(q, v); setw(l); return out(l(q, v))
@case
def b2_mha_dropout_infer():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(2, 3, dropout=0.5); l(q, v); setw(l); return out(l(q, v, training=False))
@case
def b2_mha_query_mask_kw():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(1, 2); l(q, v); setw(l)
    return out(l(q, v, query_mask=np.array([[1, 1, 0], [1, 0, 0]], bool), value_mask=np.array([[1, 1, 1, 0], [1, 1, 0, 0]], bool)))
@case
def b2_mha_attention_mask_broadcast():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(1, 2); l(q, v); setw(l)
    return out(l(q, v, attention_mask=np.array([[[1, 0, 1, 1]]] * 2, bool)))
@case
def b2_mha_bad_mask_shape():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(1, 2); return out(l(q, v, attention_mask=np.ones((2, 5, 4), bool)))
@case
def b2_mha_key_dim_mismatch():
    clear(); q, v = qkv(); l = L.MultiHeadAttention(1, 2); return out(l(q, v, v[:, :3]))
@case
def b2_einsum_dense_bias_none():
    clear(); l = L.EinsumDense("abc,cd->abd", output_shape=(4, 2)); l(seqx()); setw(l); return [out(l(seqx())), names_(l.weights)]
@case
def b2_einsum_dense_in_fit():
    clear(); m = keras.Sequential([keras.Input((3,)), L.EinsumDense("ab,bc->ac", output_shape=1, bias_axes="c")]); setw(m.layers[0])
    m.compile(keras.optimizers.SGD(0.1), "mse"); x = np.arange(12, dtype="float32").reshape(4, 3) / 10
    return fit_hist(m, x, np.ones((4, 1), "float32"), epochs=2, batch_size=2, shuffle=False)
@case
def b2_dot_negative_axes():
    clear(); a = seqx(); return out(L.Dot(axes=(-1, -1))([a, a]))
@case
def b2_dot_int_inputs():
    clear(); a = np.arange(6).reshape(2, 3); return out(L.Dot(axes=1)([a, a]))
@case
def b2_bidi_fit():
    clear(); m = keras.Sequential([keras.Input((4, 3)), L.Bidirectional(L.LSTM(2)), L.Dense(1)])
    for l in m.layers: setw(l)
    m.compile(keras.optimizers.SGD(0.1), "mse")
    return fit_hist(m, np.concatenate([seqx()] * 2), np.arange(4, dtype="float32").reshape(4, 1) / 4, epochs=3, batch_size=2, shuffle=False)
@case
def b2_bidi_initial_state():
    clear(); l = L.Bidirectional(L.GRU(2)); l(seqx()); setw(l)
    return out(l(seqx(), initial_state=[np.full((2, 2), 0.3, "float32"), np.full((2, 2), -0.3, "float32")]))
@case
def b2_bidi_seq_mask_output():
    clear(); l = L.Bidirectional(L.SimpleRNN(2, return_sequences=True)); l(seqx()); setw(l)
    return out(l(seqx(), mask=np.array([[1, 1, 0, 0], [1, 1, 1, 0]], bool)))
@case
def b2_bidi_get_config_keys():
    clear(); return sorted(L.Bidirectional(L.LSTM(2)).get_config().keys())
@case
def b2_bidi_stacked_summary_params():
    clear(); m = keras.Sequential([keras.Input((4, 3)), L.Bidirectional(L.LSTM(3, return_sequences=True)), L.Bidirectional(L.GRU(2)), L.Dense(1)])
    return m.count_params()
@case
def b2_td_dense_fit():
    clear(); m = keras.Sequential([keras.Input((4, 3)), L.TimeDistributed(L.Dense(1))]); setw(m.layers[0])
    m.compile(keras.optimizers.SGD(0.1), "mse"); return fit_hist(m, seqx(), np.ones((2, 4, 1), "float32"), epochs=2, batch_size=2, shuffle=False)
@case
def b2_td_summary():
    clear(); return summ(keras.Sequential([keras.Input((4, 3)), L.TimeDistributed(L.Dense(2)), L.LSTM(2)]))
@case
def b2_masking_then_dense_mask_prop():
    clear(); i = keras.Input((4, 3)); h = L.Dense(2)(L.Masking(0.0)(i)); o = L.LSTM(2)(h); m = keras.Model(i, o)
    for l in m.layers: setw(l)
    x = seqx(); x[1, 3:] = 0; return out(m(x))
@case
def b2_masking_mask_reaches_loss():
    clear()
    m = keras.Sequential([keras.Input((4, 3)), L.Masking(0.0), L.TimeDistributed(L.Dense(1))]); setw(m.layers[-1])
    m.compile(keras.optimizers.SGD(0.0), "mse"); x = seqx(); x[0, 2:] = 0
    return m.evaluate(x, np.ones((2, 4, 1), "float32"), verbose=0)
@case
def b2_masking_mask_loss_sum_reduction():
    clear()
    m = keras.Sequential([keras.Input((4, 3)), L.Masking(0.0), L.Dense(1)]); setw(m.layers[-1])
    m.compile(keras.optimizers.SGD(0.0), keras.losses.MeanSquaredError(reduction="sum")); x = seqx(); x[0, 2:] = 0
    return m.evaluate(x, np.ones((2, 4, 1), "float32"), verbose=0)
@case
def b2_conv1d_masking_drop():
    clear(); i = keras.Input((4, 3)); h = L.Conv1D(2, 2, padding="same")(L.Masking(0.0)(i)); o = L.LSTM(2)(h); m = keras.Model(i, o)
    for l in m.layers: setw(l)
    x = seqx(); x[1, 3:] = 0; return out(m(x))
@case
def b2_save_load_attention_norm():
    clear(); i = keras.Input((3, 4)); h = L.LayerNormalization()(i); a = L.Attention()([h, h]); g = L.GroupNormalization(2)(a)
    o = L.EinsumDense("abc,cd->abd", output_shape=(None, 2))(g); m = keras.Model(i, o)
    for l in m.layers: setw(l)
    p = os.path.join(tempfile.mkdtemp(), "m.keras"); m.save(p); m2 = keras.models.load_model(p); q, _ = qkv()
    return [bool(np.allclose(out(m(q)), out(m2(q)), atol=1e-6)), [type(l).__name__ for l in m2.layers]]
@case
def b2_save_load_image_layers():
    clear(); m = keras.Sequential([keras.Input((4, 4, 1)), L.Resizing(2, 2), L.Rescaling(0.5), L.RandomFlip(), L.Flatten()])
    p = os.path.join(tempfile.mkdtemp(), "m.keras"); m.save(p); m2 = keras.models.load_model(p)
    return [out(m2.predict(img(), verbose=0)), [type(l).__name__ for l in m2.layers]]
@case
def b2_random_layers_predict():
    clear(); m = keras.Sequential([keras.Input((4, 4, 1)), L.RandomFlip(), L.RandomRotation(0.3), L.RandomZoom(0.2), L.RandomTranslation(0.1, 0.1), L.RandomContrast(0.5), L.RandomBrightness(0.5)])
    return out(m.predict(img(), verbose=0))
@case
def b2_random_layers_training_false():
    clear(); r = []
    for l in [L.RandomFlip(), L.RandomRotation(0.3), L.RandomZoom(0.2), L.RandomTranslation(0.1, 0.1), L.RandomContrast(0.5), L.RandomBrightness(0.5), L.RandomCrop(2, 2)]:
        r.append(out(l(img(), training=False)))
    return r
@case
def b2_random_crop_infer_nonsquare():
    clear(); return out(L.RandomCrop(2, 3)(img(h=4, w=5), training=False))
@case
def b2_random_brightness_value_range():
    clear(); return out(L.RandomBrightness((0.5, 0.5), value_range=(0, 1))(img() / 16.0))
@case
def b2_random_contrast_fixed():
    clear(); return out(L.RandomContrast((0.5, 0.5))(img()))
@case
def b2_random_flip_seeded_shape_dtype():
    clear(); y = L.RandomFlip(seed=1)(img().astype("uint8")); return [out(y).shape, str(out(y).dtype)]
@case
def b2_resizing_int_output_dtype():
    clear(); return [str(out(L.Resizing(2, 2, interpolation="nearest")(img().astype("int32"))).dtype), str(out(L.CenterCrop(2, 2)(img().astype("uint8"))).dtype)]
@case
def b2_resizing_bicubic():
    clear(); return out(L.Resizing(3, 3, interpolation="bicubic")(img()))
@case
def b2_resizing_area():
    clear(); return out(L.Resizing(2, 2, interpolation="area")(img()))
@case
def b2_resizing_pad_to_aspect():
    clear(); return out(L.Resizing(4, 4, pad_to_aspect_ratio=True)(img(h=2, w=4)))
@case
def b2_resizing_bad_interp():
    clear(); return L.Resizing(2, 2, interpolation="foo")
@case
def b2_center_crop_rank2():
    clear(); return out(L.CenterCrop(2, 2)(np.ones((4, 4), "float32")))
@case
def b2_layernorm_rms_scaling():
    clear(); return out(L.LayerNormalization(rms_scaling=True)(seqx()))
@case
def b2_groupnorm_channels_mid():
    clear(); x = np.sin(np.arange(48, dtype="float32")).reshape(2, 4, 6); return out(L.GroupNormalization(groups=2, axis=1)(x))
@case
def b2_groupnorm_mask():
    clear(); x = np.sin(np.arange(24, dtype="float32")).reshape(2, 3, 4)
    return out(L.GroupNormalization(groups=2)(x, mask=np.array([[1, 1, 0], [1, 0, 0]], bool)))
@case
def b2_rmsnorm_axis_eps():
    clear(); return out(L.RMSNormalization(axis=1, epsilon=0.5)(seqx()))
@case
def b2_unitnorm_zero():
    clear(); return out(L.UnitNormalization()(np.zeros((2, 3), "float32")))
@case
def b2_bn_fit_then_infer():
    clear(); m = keras.Sequential([keras.Input((3,)), L.BatchNormalization()]); m.compile("sgd", "mse")
    x = np.arange(24, dtype="float32").reshape(8, 3); m.fit(x, x, epochs=1, batch_size=4, verbose=0, shuffle=False)
    return [out(w) for w in m.get_weights()]
@case
def b2_cropping2d_channels_first():
    clear(); return out(L.Cropping2D(1, data_format="channels_first")(np.arange(32, dtype="float32").reshape(1, 2, 4, 4)))
@case
def b2_zeropadding2d_asym():
    clear(); return out(L.ZeroPadding2D(((1, 0), (0, 2)))(np.ones((1, 2, 2, 1), "float32"))).shape
@case
def b2_upsampling1d_cos():
    clear(); return L.UpSampling1D(3).compute_output_shape((None, 4, 2))
@case
def b2_cropping1d_cos():
    clear(); return L.Cropping1D((1, 2)).compute_output_shape((None, 6, 2))
@case
def b2_zeropad1d_cos():
    clear(); return L.ZeroPadding1D(2).compute_output_shape((None, None, 2))
@case
def b2_identity_mask():
    clear(); i = keras.Input((4,)); e = L.Embedding(6, 2, mask_zero=True)(i); o = L.LSTM(2)(L.Identity()(e)); m = keras.Model(i, o)
    for l in m.layers: setw(l)
    return out(m(np.array([[1, 2, 0, 0], [3, 4, 5, 0]])))
@case
def b2_spatial_dropout_infer():
    clear(); return out(L.SpatialDropout1D(0.5)(seqx()))
@case
def b2_gaussian_noise_cfg():
    clear(); return L.GaussianNoise(0.2, seed=3).get_config()
@case
def b2_activity_reg_in_fit():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(2, kernel_initializer="ones"), L.ActivityRegularization(l2=0.1)])
    m.compile(keras.optimizers.SGD(0.01), "mse"); x = np.arange(12, dtype="float32").reshape(4, 3) / 10
    return fit_hist(m, x, np.ones((4, 2), "float32"), epochs=2, batch_size=2, shuffle=False)
@case
def b2_depthwise_cos():
    clear(); return L.DepthwiseConv2D(3, depth_multiplier=2).compute_output_shape((None, 5, 5, 3))
@case
def b2_conv1dT_cos():
    clear(); return L.Conv1DTranspose(2, 3, strides=2).compute_output_shape((None, 4, 1))
@case
def b2_sepconv_count_params():
    clear(); l = L.SeparableConv2D(4, 3, depth_multiplier=2); l.build((None, 5, 5, 3)); return l.count_params()
@case
def b2_conv1d_groups_bad():
    clear(); return out(L.Conv1D(3, 2, groups=2)(seqx(1, 4, 2)))
@case
def b2_loss_cfocal_sparse_like():
    return out(keras.losses.CategoricalFocalCrossentropy(reduction="sum")(np.eye(3, dtype="float32")[[0, 2]], np.array([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]], "float32")))
@case
def b2_loss_bfocal_1d():
    return out(keras.losses.BinaryFocalCrossentropy()(MT, MP))
@case
def b2_loss_bfocal_axis0():
    return out(keras.losses.BinaryFocalCrossentropy(axis=0, reduction=None)(YT, YP))
@case
def b2_loss_dice_3d_axis():
    yt = np.stack([YT, 1 - YT]); yp = np.stack([YP, 1 - YP]); return out(keras.losses.Dice(axis=(1, 2), reduction=None)(yt, yp))
@case
def b2_loss_tversky_sum():
    return out(keras.losses.Tversky(reduction="sum", axis=1)(YT, YP))
@case
def b2_loss_focal_from_config():
    l = keras.losses.BinaryFocalCrossentropy(gamma=1.0, alpha=0.4, apply_class_balancing=True)
    return out(keras.losses.BinaryFocalCrossentropy.from_config(l.get_config())(YT, YP))
@case
def b2_loss_get_by_name():
    return [type(keras.losses.get(n)).__name__ if not callable(keras.losses.get(n)) or isinstance(keras.losses.get(n), type) else keras.losses.get(n).__name__ for n in ["binary_focal_crossentropy", "categorical_focal_crossentropy", "dice", "tversky"]]
@case
def b2_loss_deserialize_dice():
    return type(keras.losses.deserialize({"class_name": "Dice", "config": {"axis": 1, "name": "d", "reduction": "sum"}})).__name__
@case
def b2_metric_tp_2d():
    m = keras.metrics.TruePositives(); m.update_state(YT, YP); return out(m.result())
@case
def b2_metric_fn_bool():
    m = keras.metrics.FalseNegatives(); m.update_state(MT.astype(bool), MP > 0.5); return out(m.result())
@case
def b2_metric_tn_thresh_list_cfg():
    return keras.metrics.TrueNegatives(thresholds=[0.2, 0.7]).get_config()
@case
def b2_metric_tp_bad_threshold():
    return keras.metrics.TruePositives(thresholds=1.5)
@case
def b2_metric_f1_threshold_none():
    yp = np.array([[.6, .3, .1], [.2, .7, .1], [.5, .1, .4], [.1, .4, .5]], "float32"); yt = np.eye(3, dtype="float32")[[0, 1, 2, 1]]
    m = keras.metrics.F1Score(average="weighted", threshold=None); m.update_state(yt, yp); return out(m.result())
@case
def b2_metric_f1_sample_weight():
    yp = np.array([[.6, .3, .1], [.2, .7, .1], [.5, .1, .4], [.1, .4, .5]], "float32"); yt = np.eye(3, dtype="float32")[[0, 1, 2, 1]]
    m = keras.metrics.F1Score(average="macro", threshold=0.3); m.update_state(yt, yp, sample_weight=[1, 0.5, 2, 0]); return out(m.result())
@case
def b2_metric_f1_in_compile():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(2, activation="softmax", kernel_initializer="ones")])
    m.compile("sgd", "categorical_crossentropy", metrics=[keras.metrics.F1Score(average="macro")])
    x = np.arange(12, dtype="float32").reshape(4, 3) / 10
    return m.evaluate(x, np.eye(2, dtype="float32")[[0, 1, 1, 0]], verbose=0, return_dict=True)
@case
def b2_metric_fbeta_string_name():
    return keras.metrics.FBetaScore(beta=0.5).name
@case
def b2_metric_tp_variables():
    m = keras.metrics.TruePositives(thresholds=[0.1, 0.5]); return [names_(m.variables), [list(np.shape(v)) for v in m.variables]]
@case
def b2_act_get_names():
    return [keras.activations.get(n).__name__ for n in ["gelu", "silu", "swish", "mish", "hard_swish", "relu6", "log_softmax"]]
@case
def b2_act_softmax_axis():
    return out(keras.activations.softmax(seqx(), axis=1))
@case
def b2_act_relu_args():
    return out(keras.activations.relu(ACT_X, negative_slope=0.1, max_value=2.0, threshold=0.5))
@case
def b2_act_elu_alpha():
    return out(keras.activations.elu(ACT_X, alpha=0.5))
@case
def b2_act_leaky_default():
    return out(keras.activations.leaky_relu(ACT_X))
@case
def b2_act_int_input():
    return out(keras.activations.gelu(np.array([1, 2], "int32")))
@case
def b2_act_layer_string():
    clear(); return out(L.Activation("mish")(ACT_X[None]))
@case
def b2_constraint_maxnorm_axis():
    w = np.arange(12, dtype="float32").reshape(3, 4); return out(keras.constraints.MaxNorm(3.0, axis=[0, 1])(w))
@case
def b2_constraint_get_string():
    return [type(keras.constraints.get(n)).__name__ for n in ["max_norm", "non_neg", "unit_norm", "min_max_norm"]]
@case
def b2_constraint_minmax_zero():
    return out(keras.constraints.MinMaxNorm(0.5, 1.0)(np.zeros((2, 2), "float32")))
@case
def b2_cb_terminate_nan_in_epoch():
    clear(); seen = []
    class C(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None): seen.append(batch)
    m = keras.Sequential([keras.Input((1,)), L.Dense(1, kernel_initializer="ones")]); m.compile(keras.optimizers.SGD(1e30), "mse")
    x = np.full((8, 1), 1e10, "float32"); m.fit(x, x, epochs=2, batch_size=2, verbose=0, callbacks=[keras.callbacks.TerminateOnNaN(), C()], shuffle=False)
    return [seen, bool(m.stop_training)]
@case
def b2_cb_on_batch_begin_lambda():
    clear(); seen = []
    m = keras.Sequential([keras.Input((1,)), L.Dense(1)]); m.compile("sgd", "mse")
    m.fit(np.ones((4, 1)), np.ones((4, 1)), batch_size=2, epochs=1, verbose=0, callbacks=[keras.callbacks.LambdaCallback(on_batch_begin=lambda b, l: seen.append(("b", b)), on_train_batch_end=lambda b, l: seen.append(("e", b)))])
    return seen
@case
def b2_cb_predict_batch_end():
    clear(); seen = []
    class C(keras.callbacks.Callback):
        def on_predict_batch_end(self, batch, logs=None): seen.append((batch, sorted(logs)))
        def on_test_batch_end(self, batch, logs=None): seen.append(("t", batch, sorted(logs)))
    m = keras.Sequential([keras.Input((1,)), L.Dense(1)]); m.compile("sgd", "mse")
    m.predict(np.ones((4, 1)), batch_size=2, verbose=0, callbacks=[C()]); m.evaluate(np.ones((4, 1)), np.ones((4, 1)), batch_size=2, verbose=0, callbacks=[C()])
    return seen
@case
def b2_pad_seq_truncate_pre():
    return out(keras.utils.pad_sequences([[1, 2, 3, 4], [5]], maxlen=2))
@case
def b2_pad_seq_maxlen0():
    return out(keras.utils.pad_sequences([[1, 2], [3]], maxlen=0))
@case
def b2_pad_seq_bad_truncating():
    return out(keras.utils.pad_sequences([[1, 2, 3]], maxlen=2, truncating="mid"))
@case
def b2_pad_seq_float_value_int_dtype():
    return out(keras.utils.pad_sequences([[1, 2], [3]], value=0.5))
@case
def b2_pad_seq_numpy_input():
    return out(keras.utils.pad_sequences(np.array([[1, 2, 3], [4, 5, 6]]), maxlen=4))
@case
def b2_pad_seq_not_iterable():
    return out(keras.utils.pad_sequences([1, 2, 3]))
@case
def b2_ts_dataset_shuffle_shapes():
    ds = keras.utils.timeseries_dataset_from_array(np.arange(30).reshape(15, 2), np.arange(15), sequence_length=4, batch_size=5, shuffle=True, seed=1)
    return [[list(np.shape(a)), list(np.shape(b))] for a, b in ds]
@case
def b2_ts_dataset_dtype():
    ds = keras.utils.timeseries_dataset_from_array(np.arange(10, dtype="float64"), None, sequence_length=3, batch_size=10)
    return [str(out(a).dtype) for a in ds]
@case
def b2_ts_dataset_targets_offset():
    # the Keras docs' pattern: targets shifted by sequence_length
    data = np.arange(10); ds = keras.utils.timeseries_dataset_from_array(data[:-3], data[3:], sequence_length=3, batch_size=10)
    return [[out(a), out(b)] for a, b in ds]
@case
def b2_ts_dataset_neg_stride():
    ds = keras.utils.timeseries_dataset_from_array(np.arange(10), None, sequence_length=2, sequence_stride=0); return [out(a) for a in ds]
@case
def b2_ts_dataset_fit():
    clear(); ds = keras.utils.timeseries_dataset_from_array(np.arange(20, dtype="float32").reshape(10, 2) / 10, np.arange(10, dtype="float32") / 10, sequence_length=3, batch_size=4)
    m = keras.Sequential([keras.Input((3, 2)), L.SimpleRNN(2), L.Dense(1)])
    for l in m.layers: setw(l)
    m.compile(keras.optimizers.SGD(0.1), "mse"); return fit_hist(m, ds, epochs=2)
@case
def b2_pydataset_len_getitem_predict():
    clear()
    class D(keras.utils.PyDataset):
        def __init__(self, **kw): super().__init__(**kw)
        def __len__(self): return 2
        def __getitem__(self, i): return (np.ones((3, 1), "float32") * i,)
    m = keras.Sequential([keras.Input((1,)), L.Dense(1, kernel_initializer="ones")]); return out(m.predict(D(), verbose=0))
@case
def b2_pydataset_epoch_end():
    clear(); calls = []
    class D(keras.utils.PyDataset):
        def __len__(self): return 2
        def __getitem__(self, i): return np.ones((2, 1), "float32"), np.ones((2, 1), "float32")
        def on_epoch_end(self): calls.append(1)
    m = keras.Sequential([keras.Input((1,)), L.Dense(1)]); m.compile("sgd", "mse"); m.fit(D(), epochs=3, verbose=0); return len(calls)
@case
def b2_pydataset_workers_attrs():
    class D(keras.utils.PyDataset):
        def __init__(self): super().__init__(workers=2, use_multiprocessing=False, max_queue_size=5)
        def __len__(self): return 1
        def __getitem__(self, i): return np.ones((1, 1)), np.ones((1, 1))
    d = D(); return [d.workers, d.use_multiprocessing, d.max_queue_size, d.num_batches]
@case
def b2_lion_ema_amsgrad():
    return keras.optimizers.Lion(use_ema=True).get_config()["use_ema"]
@case
def b2_lion_clipnorm():
    v = tf.Variable([1.0, -2.0]); opt = keras.optimizers.Lion(learning_rate=0.1, clipnorm=0.1)
    opt.apply_gradients([(tf.constant([3.0, -4.0]), v)]); return out(v)
@case
def b2_lion_zero_grad():
    v = tf.Variable([1.0, -2.0]); opt = keras.optimizers.Lion(learning_rate=0.1)
    opt.apply_gradients([(tf.constant([0.0, 0.0]), v)]); return out(v)
@case
def b2_lion_variables():
    v = tf.Variable([1.0, -2.0]); opt = keras.optimizers.Lion(); opt.build([v]); return [len(opt.variables), [list(np.shape(x)) for x in opt.variables]]

# ================= batch 3 =================
def _seqmodel(loss, **ck):
    clear(); m = keras.Sequential([keras.Input((4, 3)), L.Masking(0.0), L.Dense(1)]); setw(m.layers[-1])
    m.compile(keras.optimizers.SGD(0.0), loss, **ck); x = seqx(); x[0, 2:] = 0; return m, x
@case
def b3_compile_loss_reduction_none():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(1, kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.0), keras.losses.MeanSquaredError(reduction=None))
    return m.evaluate(np.arange(12, dtype="float32").reshape(4, 3), np.ones((4, 1), "float32"), verbose=0)
@case
def b3_compile_loss_reduction_none_fit():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(1, kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.01), keras.losses.MeanSquaredError(reduction=None))
    return fit_hist(m, np.arange(12, dtype="float32").reshape(4, 3) / 10, np.ones((4, 1), "float32"), epochs=2, batch_size=2, shuffle=False)
@case
def b3_compile_loss_reduction_sum():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(1, kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.0), keras.losses.MeanSquaredError(reduction="sum"))
    return m.evaluate(np.arange(12, dtype="float32").reshape(4, 3), np.ones((4, 1), "float32"), verbose=0, batch_size=2)
@case
def b3_masked_loss_mean_with_sw():
    m, x = _seqmodel(keras.losses.MeanSquaredError(reduction="mean_with_sample_weight")); return m.evaluate(x, np.ones((2, 4, 1), "float32"), verbose=0)
@case
def b3_masked_loss_mean():
    m, x = _seqmodel(keras.losses.MeanSquaredError(reduction="mean")); return m.evaluate(x, np.ones((2, 4, 1), "float32"), verbose=0)
@case
def b3_masked_loss_metrics():
    m, x = _seqmodel("mse", metrics=["mae"]); return m.evaluate(x, np.ones((2, 4, 1), "float32"), verbose=0, return_dict=True)
@case
def b3_masked_loss_sample_weight():
    m, x = _seqmodel("mse"); return m.evaluate(x, np.ones((2, 4, 1), "float32"), sample_weight=np.array([1.0, 3.0], "float32"), verbose=0)
@case
def b3_focal_fit_sample_weight():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(1, activation="sigmoid", kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.1), keras.losses.BinaryFocalCrossentropy(apply_class_balancing=True))
    x = np.arange(12, dtype="float32").reshape(4, 3) / 10 - 0.5
    return fit_hist(m, x, np.array([[0], [1], [0], [1]], "float32"), sample_weight=np.array([1, 2, 1, 0.5], "float32"), epochs=2, batch_size=2, shuffle=False)
@case
def b3_dice_fit():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(2, activation="sigmoid", kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.5), keras.losses.Dice())
    x = np.arange(12, dtype="float32").reshape(4, 3) / 10 - 0.5
    return fit_hist(m, x, np.array([[0, 1], [1, 0], [0, 0], [1, 1]], "float32"), epochs=2, batch_size=2, shuffle=False)
@case
def b3_tversky_string_compile():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(1, activation="sigmoid", kernel_initializer="ones")])
    m.compile("sgd", "tversky"); return m.evaluate(np.ones((2, 3), "float32"), np.array([[0], [1]], "float32"), verbose=0)
@case
def b3_cfocal_string_compile():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(3, activation="softmax", kernel_initializer="ones")])
    m.compile("sgd", "categorical_focal_crossentropy"); return m.evaluate(np.ones((2, 3), "float32"), np.eye(3, dtype="float32")[[0, 2]], verbose=0)
@case
def b3_tp_thresholds_in_compile():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(1, activation="sigmoid", kernel_initializer="ones")])
    m.compile("sgd", "binary_crossentropy", metrics=[keras.metrics.TruePositives(thresholds=[0.3, 0.9]), keras.metrics.FalsePositives(name="fp")])
    x = np.arange(12, dtype="float32").reshape(4, 3) / 10 - 0.5; return m.evaluate(x, np.array([[0], [1], [0], [1]], "float32"), verbose=0, return_dict=True)
@case
def b3_f1_fit_history():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(2, activation="softmax", kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.1), "categorical_crossentropy", metrics=[keras.metrics.F1Score(average="micro", threshold=0.5)])
    x = np.arange(12, dtype="float32").reshape(4, 3) / 10 - 0.5
    return fit_hist(m, x, np.eye(2, dtype="float32")[[0, 1, 1, 0]], epochs=2, batch_size=2, shuffle=False)
@case
def b3_fbeta_none_average_result_shape():
    m = keras.metrics.FBetaScore(beta=2.0); m.update_state(np.eye(3, dtype="float32")[[0, 1]], np.array([[.9, .1, .1], [.2, .3, .6]], "float32")); return out(m.result())
@case
def b3_f1_int_labels():
    m = keras.metrics.F1Score(average="macro"); m.update_state(np.eye(3, dtype="int32")[[0, 1]], np.array([[.9, .1, .1], [.2, .3, .6]], "float32")); return out(m.result())
@case
def b3_tp_sample_weight_2d():
    m = keras.metrics.TruePositives(); m.update_state(YT, YP, sample_weight=np.array([[1.], [2.]], "float32")); return out(m.result())
@case
def b3_td_compute_mask():
    clear(); l = L.TimeDistributed(L.Dense(2)); return out(l.compute_mask(seqx(), np.array([[1, 1, 0, 0], [1, 0, 0, 0]], bool)))
@case
def b3_bidi_merge_none_functional_mask():
    clear(); i = keras.Input((4,)); e = L.Embedding(6, 3, mask_zero=True)(i)
    a, b = L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode=None)(e); o = L.Add()([a, b])
    m = keras.Model(i, L.GlobalAveragePooling1D()(o))
    for l in m.layers: setw(l)
    return out(m(np.array([[1, 2, 0, 0], [3, 4, 5, 0]])))
@case
def b3_att_scores_functional():
    clear(); i = keras.Input((3, 4)); o, sc = L.Attention()([i, i], return_attention_scores=True); m = keras.Model(i, [o, sc]); q, _ = qkv()
    return [out(t) for t in m(q)]
@case
def b3_mha_scores_functional():
    clear(); i = keras.Input((3, 4)); o, sc = L.MultiHeadAttention(2, 2)(i, i, return_attention_scores=True); m = keras.Model(i, [o, sc])
    setw(m.layers[-1]); q, _ = qkv(); return [out(t).shape for t in m(q)]
@case
def b3_mha_count_params():
    clear(); l = L.MultiHeadAttention(4, 8, value_dim=6, output_shape=10); l(np.ones((1, 5, 12), "float32"), np.ones((1, 7, 9), "float32")); return l.count_params()
@case
def b3_mha_cross_summary():
    clear(); a = keras.Input((3, 4)); b = keras.Input((5, 6)); return summ(keras.Model([a, b], L.MultiHeadAttention(2, 2)(a, b)))
@case
def b3_mha_from_config_after_save():
    clear(); i = keras.Input((3, 4)); m = keras.Model(i, L.MultiHeadAttention(2, 3, value_dim=5, output_shape=(2, 2), use_bias=False)(i, i))
    p = os.path.join(tempfile.mkdtemp(), "m.keras"); m.save(p); m2 = keras.models.load_model(p)
    return [m2.layers[-1].get_config()[k] for k in ["num_heads", "key_dim", "value_dim", "output_shape", "use_bias"]]
@case
def b3_einsum_count_params():
    clear(); l = L.EinsumDense("abc,cde->abde", output_shape=(None, 4, 5), bias_axes="de"); l.build((None, 3, 6)); return l.count_params()
@case
def b3_lion_fit_weight_decay():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(1, kernel_initializer="ones")])
    m.compile(keras.optimizers.Lion(0.01, weight_decay=0.1), "mse"); x = np.arange(12, dtype="float32").reshape(4, 3) / 10
    return [fit_hist(m, x, np.ones((4, 1), "float32"), epochs=2, batch_size=2, shuffle=False), out(m.layers[0].kernel)]
@case
def b3_lion_config_keys():
    return sorted(keras.optimizers.Lion().get_config().keys())
@case
def b3_lion_from_config():
    o = keras.optimizers.Lion.from_config(keras.optimizers.Lion(0.02, beta_1=0.8).get_config()); return [float(o.learning_rate), o.beta_1]
@case
def b3_rnn_kernel_constraint_fit():
    clear(); m = keras.Sequential([keras.Input((4, 3)), L.SimpleRNN(2, kernel_constraint=keras.constraints.MaxNorm(0.5)), L.Dense(1)])
    for l in m.layers: setw(l)
    m.compile(keras.optimizers.SGD(0.5), "mse"); m.fit(seqx(), np.ones((2, 1), "float32"), epochs=1, verbose=0)
    return out(m.layers[0].get_weights()[0])
@case
def b3_lstm_recurrent_relu():
    clear(); l = L.LSTM(3, recurrent_activation="relu", activation="sigmoid"); l(seqx()); setw(l); return out(l(seqx()))
@case
def b3_gru_relu():
    clear(); l = L.GRU(3, activation="relu", reset_after=False); l(seqx()); setw(l); return out(l(seqx()))
@case
def b3_cell_config_roundtrip():
    clear(); c = L.LSTMCell(3, dropout=0.2, recurrent_dropout=0.1, unit_forget_bias=False)
    return sorted(L.LSTMCell.from_config(c.get_config()).get_config().items())
@case
def b3_rnn_cell_get_config_layer():
    clear(); l = L.RNN(L.GRUCell(2), return_sequences=True); c = l.get_config(); return [c["cell"]["class_name"], sorted(c.keys())]
@case
def b3_rnn_cell_roundtrip():
    clear(); l = L.RNN(L.GRUCell(2), return_sequences=True); return roundtrip(l, seqx())
@case
def b3_rnn_cell_save_load():
    clear(); m = keras.Sequential([keras.Input((4, 3)), L.RNN(L.LSTMCell(2)), L.Dense(1)])
    for l in m.layers: setw(l)
    p = os.path.join(tempfile.mkdtemp(), "m.keras"); m.save(p); m2 = keras.models.load_model(p)
    return bool(np.allclose(out(m(seqx())), out(m2(seqx())), atol=1e-6))
@case
def b3_rnn_custom_cell():
    clear()
    class MinCell(L.Layer):
        def __init__(self, units, **kw):
            super().__init__(**kw); self.units = units; self.state_size = units
        def build(self, input_shape):
            self.k = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones", name="k"); self.built = True
        def call(self, inputs, states):
            h = tf.matmul(inputs, self.k) * 0.1 + states[0] * 0.5
            return h, [h]
    l = L.RNN(MinCell(2), return_sequences=True); return out(l(seqx()))
@case
def b3_masking_bad_value_dtype():
    clear(); return out(L.Masking(mask_value=0)(np.ones((2, 3, 2), "int32")))
@case
def b3_masking_rank2():
    clear(); return out(L.Masking()(np.array([[0., 1.], [0., 0.]], "float32")))
@case
def b3_masking_compute_mask_model():
    clear(); i = keras.Input((4, 3)); mm = L.Masking()(i); m = keras.Model(i, mm); x = seqx(); x[0, 3] = 0
    return out(m.layers[-1].compute_mask(x))
@case
def b3_embedding_mask_seq_loss_fit():
    clear(); m = keras.Sequential([keras.Input((4,)), L.Embedding(6, 2, mask_zero=True), L.LSTM(2, return_sequences=True), L.TimeDistributed(L.Dense(1))])
    for l in m.layers: setw(l)
    m.compile(keras.optimizers.SGD(0.1), "mse"); x = np.array([[1, 2, 0, 0], [3, 4, 5, 0]])
    return fit_hist(m, x, np.ones((2, 4, 1), "float32"), epochs=2, batch_size=2, shuffle=False)
@case
def b3_embedding_mask_gmp():
    clear(); i = keras.Input((4,)); e = L.Embedding(6, 2, mask_zero=True)(i); o = L.GlobalMaxPooling1D()(e); m = keras.Model(i, o); setw(m.layers[1])
    return out(m(np.array([[1, 2, 0, 0], [3, 4, 5, 0]])))
@case
def b3_embedding_mask_flatten_dense():
    clear(); i = keras.Input((4,)); e = L.Embedding(6, 2, mask_zero=True)(i); o = L.Dense(1)(L.Flatten()(e)); m = keras.Model(i, o)
    for l in m.layers: setw(l)
    return out(m(np.array([[1, 2, 0, 0], [3, 4, 5, 0]])))
@case
def b3_embedding_mask_concat():
    clear(); i = keras.Input((4,)); e1 = L.Embedding(6, 2, mask_zero=True)(i); e2 = L.Embedding(6, 2)(i)
    o = L.LSTM(2)(L.Concatenate()([e1, e2])); m = keras.Model(i, o)
    for l in m.layers: setw(l)
    return out(m(np.array([[1, 2, 0, 0], [3, 4, 5, 0]])))
@case
def b3_image_aug_in_fit():
    clear(); m = keras.Sequential([keras.Input((4, 4, 1)), L.RandomFlip(seed=1), L.Flatten(), L.Dense(1, kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.0), "mse"); return m.evaluate(img(b=2), np.ones((2, 1), "float32"), verbose=0)
@case
def b3_resizing_in_model_predict():
    clear(); m = keras.Sequential([keras.Input((None, None, 1)), L.Resizing(2, 2), L.Flatten()]); return out(m.predict(img(b=2, h=6, w=4), verbose=0))
@case
def b3_center_crop_model_unknown():
    clear(); m = keras.Sequential([keras.Input((None, None, 1)), L.CenterCrop(2, 2)]); return out(m.predict(img(h=5, w=3), verbose=0))
@case
def b3_rescaling_int_input():
    clear(); y = L.Rescaling(2.0)(np.array([[1, 2]], "int32")); return [str(out(y).dtype), out(y)]
@case
def b3_pad_seq_strings():
    return out(keras.utils.pad_sequences([[1, 2], [3]], dtype="str", value="x")).tolist()
@case
def b3_pad_seq_value_nan():
    return out(keras.utils.pad_sequences([[1.0], [2.0, 3.0]], dtype="float32", value=np.nan))
@case
def b3_ts_dataset_batch_none():
    ds = keras.utils.timeseries_dataset_from_array(np.arange(6), None, sequence_length=2, batch_size=None); return [out(a) for a in ds][:3]
@case
def b3_ts_dataset_2d_targets():
    ds = keras.utils.timeseries_dataset_from_array(np.arange(12).reshape(6, 2), np.arange(12).reshape(6, 2), sequence_length=2, batch_size=3)
    return [[out(a).shape, out(b)] for a, b in ds]

# ================= batch 4: wrong inputs inside tf.function / fit =================
def _tff(layer_fn, *xs):
    clear(); l = layer_fn(); f = tf.function(lambda *a: l(*a) if len(a) > 1 else l(a[0])); return out(f(*[tf.constant(x) for x in xs]))
@case
def b4_tff_lstm_rank2():
    return _tff(lambda: L.LSTM(2), np.ones((2, 3), "float32"))
@case
def b4_tff_gru_int():
    clear(); l = L.GRU(2); l(np.ones((2, 3, 2), "float32")); setw(l); f = tf.function(lambda a: l(a)); return out(f(tf.constant(np.ones((2, 3, 2), "int32"))))
@case
def b4_tff_td_rank2():
    return _tff(lambda: L.TimeDistributed(L.Dense(2)), np.ones((2, 3), "float32"))
@case
def b4_tff_conv1d_rank2():
    return _tff(lambda: L.Conv1D(2, 2), np.ones((2, 3), "float32"))
@case
def b4_tff_groupnorm_bad():
    return _tff(lambda: L.GroupNormalization(groups=3), np.ones((2, 4), "float32"))
@case
def b4_tff_cropping_too_much():
    return _tff(lambda: L.Cropping1D((3, 3)), np.ones((1, 5, 2), "float32"))
@case
def b4_tff_dot_mismatch():
    clear(); l = L.Dot(axes=1); f = tf.function(lambda a, b: l([a, b])); return out(f(tf.constant(np.ones((2, 3), "float32")), tf.constant(np.ones((2, 4), "float32"))))
@case
def b4_tff_attention_mismatch():
    clear(); l = L.Attention(); f = tf.function(lambda a, b: l([a, b])); q, v = qkv(); return out(f(tf.constant(q), tf.constant(v[..., :3])))
@case
def b4_tff_einsum_bad_rank():
    return _tff(lambda: L.EinsumDense("abc,cd->abd", output_shape=(None, 2)), np.ones((2, 3), "float32"))
@case
def b4_einsum_bad_rank_eager():
    clear(); return out(L.EinsumDense("abc,cd->abd", output_shape=(None, 2))(np.ones((2, 3), "float32")))
@case
def b4_fit_lstm_wrong_rank():
    clear(); m = keras.Sequential([keras.Input((4, 3)), L.LSTM(2)]); m.compile("sgd", "mse")
    return fit_hist(m, np.ones((4, 3), "float32"), np.ones((4, 2), "float32"))
@case
def b4_fit_lstm_wrong_features():
    clear(); m = keras.Sequential([keras.Input((4, 3)), L.LSTM(2)]); m.compile("sgd", "mse")
    return fit_hist(m, np.ones((4, 4, 5), "float32"), np.ones((4, 2), "float32"))
@case
def b4_fit_mha_wrong_features():
    clear(); i = keras.Input((3, 4)); m = keras.Model(i, L.MultiHeadAttention(2, 2)(i, i)); m.compile("sgd", "mse")
    return fit_hist(m, np.ones((2, 3, 5), "float32"), np.ones((2, 3, 4), "float32"))
@case
def b4_dice_shape_mismatch_fit():
    clear(); m = keras.Sequential([keras.Input((3,)), L.Dense(2, activation="sigmoid")]); m.compile("sgd", keras.losses.Dice())
    return fit_hist(m, np.ones((4, 3), "float32"), np.ones((4, 3), "float32"))
@case
def b4_focal_bad_labels_rank():
    return out(keras.losses.BinaryFocalCrossentropy()(np.ones((2, 3), "float32"), np.full((2, 4), 0.5, "float32")))
@case
def b4_tversky_int_pred():
    return out(keras.losses.Tversky()(YT, (YP > 0.5).astype("int32")))
@case
def b4_metric_tp_shape_mismatch():
    m = keras.metrics.TruePositives(); m.update_state(np.ones((2, 3)), np.ones((2, 4))); return out(m.result())
@case
def b4_metric_f1_shape_mismatch():
    m = keras.metrics.F1Score(); m.update_state(np.ones((2, 3)), np.ones((2, 4))); return out(m.result())
@case
def b4_metric_f1_rank3():
    m = keras.metrics.F1Score(); m.update_state(np.ones((2, 3, 2)), np.ones((2, 3, 2))); return out(m.result())
@case
def b4_metric_tp_in_tf_function():
    m = keras.metrics.TruePositives(thresholds=[0.3, 0.6]); f = tf.function(lambda a, b: m.update_state(a, b))
    f(tf.constant(MT), tf.constant(MP)); f(tf.constant(MT), tf.constant(MP)); return out(m.result())
@case
def b4_metric_f1_in_tf_function():
    m = keras.metrics.F1Score(average="macro", threshold=0.5); f = tf.function(lambda a, b: m.update_state(a, b))
    yt = np.eye(3, dtype="float32")[[0, 1, 2, 1]]; yp = np.array([[.6, .3, .1], [.2, .7, .1], [.5, .1, .4], [.1, .4, .5]], "float32")
    f(tf.constant(yt), tf.constant(yp)); return out(m.result())
@case
def b4_lion_in_tf_function():
    v = tf.Variable([1.0, -2.0]); opt = keras.optimizers.Lion(0.1)
    @tf.function
    def step(g):
        opt.apply_gradients([(g, v)])
    step(tf.constant([0.5, -0.5])); step(tf.constant([-0.1, 0.2])); return out(v)
@case
def b4_random_flip_training_tf_function_shape():
    clear(); l = L.RandomFlip(seed=2); f = tf.function(lambda a: l(a, training=True)); return out(f(tf.constant(img(b=2)))).shape
@case
def b4_random_rotation_rank2():
    clear(); return out(L.RandomRotation(0.1)(np.ones((4, 4), "float32")))
@case
def b4_random_crop_bad_rank():
    clear(); return out(L.RandomCrop(2, 2)(np.ones((4, 4), "float32"), training=True))
@case
def b4_resizing_rank2():
    clear(); return out(L.Resizing(2, 2)(np.ones((4, 4), "float32")))
@case
def b4_resizing_zero_size():
    clear(); return L.Resizing(0, 2)
@case
def b4_upsampling1d_rank2():
    clear(); return out(L.UpSampling1D(2)(np.ones((2, 3), "float32")))
@case
def b4_zeropad1d_negative():
    clear(); return L.ZeroPadding1D(-1)
@case
def b4_cropping1d_negative():
    clear(); return L.Cropping1D(-1)
@case
def b4_layernorm_bad_axis():
    clear(); return out(L.LayerNormalization(axis=3)(seqx()))
@case
def b4_unitnorm_int():
    clear(); return out(L.UnitNormalization()(np.array([[3, 4]], "int32")))
@case
def b4_gaussian_noise_negative():
    clear(); return L.GaussianNoise(-0.1)
@case
def b4_alpha_dropout_train_stats():
    clear(); y = out(L.AlphaDropout(0.5, seed=1)(np.zeros((1000,), "float32") + 1.0, training=True)); return [y.shape, sorted(set(np.round(y, 3).tolist()))[:4]]
@case
def b4_spatial_dropout3d_shape():
    clear(); return out(L.SpatialDropout3D(0.5)(np.ones((1, 2, 2, 2, 3), "float32"), training=True)).shape
@case
def b4_activity_reg_negative():
    clear(); return L.ActivityRegularization(l1=-1.0).get_config()

for f in CASES:
    if ONLY and f.__name__ not in ONLY: continue
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            r = f()
        s = "OK " + fmt(r)
    except Exception as e:
        msg = str(e).replace("\n", " ")[:160]
        s = f"EXC {type(e).__name__}: {msg}"
        if os.environ.get("TB"): traceback.print_exc()
    print(f"## {f.__name__}: {s}", flush=True)
