"""bfloat16 programs run under TF 2.21 (tests/tf_reference/make_bfloat16_reference.py records their
results in tests/data/bfloat16_reference.npz) and under tapeflow (tests/test_bfloat16.py). Each
case is a function of the module ``tf`` (TensorFlow or tapeflow) returning a tensor.

EXACT: tapeflow gives TF's bits. ULP: TF 2.21's CPU kernels round these at steps of their own
(sigmoid is TF's exp(x) / (1 + exp(x)) with each step rounded to bfloat16, elu exp(x) - 1 so
rounded; tapeflow's kernels round once or compose differently): within one bfloat16 ulp
(relative 2**-7) of TF's; docs/differences.md."""
import numpy as np

_rng = np.random.default_rng(0)
X = _rng.standard_normal((4, 6)).astype(np.float32)
W = _rng.standard_normal((6, 3)).astype(np.float32)
LABELS = np.array([0, 2, 1, 1], np.int32)


def _inputs(tf):
    b = tf.bfloat16
    return tf.cast(tf.constant(X), b), tf.cast(tf.constant(W), b), b


def _img(tf, x):
    return tf.reshape(x, [1, 4, 6, 1])


def _cases():
    c = {}

    def case(kind):
        def deco(f):
            c[f.__name__] = (kind, f)
            return f
        return deco

    E, U = "exact", "ulp"

    @case(E)
    def softmax(tf, x, w, b): return tf.nn.softmax(x)
    @case(E)
    def log_softmax(tf, x, w, b): return tf.nn.log_softmax(x)
    @case(E)
    def relu6(tf, x, w, b): return tf.nn.relu6(x * 4.0)
    @case(E)
    def leaky_relu(tf, x, w, b): return tf.nn.leaky_relu(x)
    @case(E)
    def sparse_xent(tf, x, w, b):
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=LABELS, logits=x[:, :3])
    @case(E)
    def sigmoid_xent(tf, x, w, b): return tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones_like(x), logits=x)
    @case(E)
    def l2_normalize(tf, x, w, b): return tf.math.l2_normalize(x, axis=1)
    @case(E)
    def elementary(tf, x, w, b):
        return tf.stack([tf.square(x), tf.sqrt(tf.abs(x)), tf.math.log(tf.abs(x)), tf.math.log1p(tf.abs(x)),
                         tf.pow(tf.abs(x), 1.5), tf.sin(x), tf.round(x * 3.0), tf.floor(x * 3.0), tf.abs(x),
                         tf.sign(x), -x, tf.math.reciprocal(x), tf.math.floormod(x, 0.7), tf.tanh(x), tf.exp(x)])
    @case(E)
    def erf(tf, x, w, b): return tf.math.erf(x)
    @case(E)
    def reductions(tf, x, w, b):
        return tf.stack([tf.reduce_max(x, axis=1), tf.reduce_logsumexp(x, axis=1), tf.reduce_sum(x[:, :4], axis=0),
                         tf.reduce_mean(x, axis=1), tf.math.reduce_variance(x[:, :4], axis=0)])
    @case(E)
    def norm_std(tf, x, w, b): return tf.stack([tf.norm(x), tf.math.reduce_std(x)])
    @case(E)
    def products(tf, x, w, b):
        return tf.stack([tf.matmul(x, w), tf.einsum("ij,jk->ik", x, w), tf.tensordot(x, w, 1),
                         tf.matmul(tf.stack([x, x]), tf.stack([w, w]))[1]])
    @case(E)
    def matvec(tf, x, w, b): return tf.linalg.matvec(x, w[:, 0])
    @case(E)
    def clip_cumprod(tf, x, w, b): return tf.stack([tf.clip_by_value(x, -0.5, 0.7), tf.math.cumprod(x, axis=1)])
    @case(E)
    def gathers(tf, x, w, b):
        return tf.concat([tf.gather(x, [2, 0]), tf.sort(x, axis=1)[:2], tf.math.top_k(x, 2).values[:, None, 0][:2] + 0 * x[:2],
                          tf.math.segment_sum(x, [0, 0, 1, 1]), tf.math.unsorted_segment_max(x, [0, 1, 0, 1], 2)], 0)
    @case(E)
    def creation(tf, x, w, b):
        return tf.concat([tf.one_hot(LABELS, 3, dtype=b)[0], tf.range(0, 3, 0.5, dtype=b),
                          tf.fill([2], tf.constant(0.3, b))], 0)
    @case(E)
    def python_numbers(tf, x, w, b):
        return tf.stack([tf.math.squared_difference(x, 0.3), tf.maximum(x, 0.3), tf.cast(x > 0.3, b),
                         tf.where(x > 0.1, x, 0.3), x * 0.3 + 1.7, 2.5 - x])
    @case(E)
    def conv_pool(tf, x, w, b):
        img = _img(tf, x)
        return tf.concat([tf.reshape(tf.nn.conv2d(img, tf.reshape(w[:4, :1], [2, 2, 1, 1]), 1, "VALID"), [-1]),
                          tf.reshape(tf.nn.max_pool2d(img, 2, 2, "VALID"), [-1]),
                          tf.reshape(tf.nn.avg_pool2d(img, 2, 2, "VALID"), [-1])], 0)
    @case(E)
    def normalization(tf, x, w, b):
        return tf.stack([tf.nn.bias_add(x, x[0]), tf.nn.batch_normalization(x, x[0], tf.abs(x[1]), x[2], x[3], 1e-3),
                         tf.broadcast_to(tf.nn.moments(x, [0])[1], [4, 6])])
    @case(E)
    def shapes(tf, x, w, b):
        return tf.concat([tf.reshape(tf.transpose(x), [4, 6]), tf.pad(x, [[1, 0], [0, 0]], constant_values=0.3),
                          tf.reverse(x, [1]), tf.tensor_scatter_nd_add(x, [[0, 0]], tf.constant([9.0], b))], 0)
    @case(E)
    def grad_relu_square(tf, x, w, b):
        v = tf.Variable(w)
        with tf.GradientTape() as t:
            y = tf.reduce_sum(tf.nn.relu(tf.matmul(x, v)) ** 2)
        return t.gradient(y, v)
    @case(E)
    def grad_tanh_mean(tf, x, w, b):
        v = tf.Variable(w)
        with tf.GradientTape() as t:
            y = tf.reduce_mean(tf.tanh(tf.matmul(x, v)) * 0.7)
        return t.gradient(y, v)
    @case(U)
    def sigmoid(tf, x, w, b): return tf.sigmoid(x)
    @case(U)
    def activations(tf, x, w, b):
        return tf.stack([tf.nn.elu(x), tf.nn.selu(x), tf.nn.softplus(x), tf.nn.silu(x), tf.nn.gelu(x),
                         tf.math.rsqrt(tf.abs(x) + 1.0)])
    @case(U)
    def grad_xent(tf, x, w, b):
        v = tf.Variable(w)
        with tf.GradientTape() as t:
            y = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=LABELS, logits=tf.matmul(x, v)))
        return t.gradient(y, v)
    @case(U)
    def grad_sigmoid(tf, x, w, b):
        v = tf.Variable(w)
        with tf.GradientTape() as t:
            y = tf.reduce_sum(tf.sigmoid(tf.matmul(x, v)) * 0.3)
        return t.gradient(y, v)
    return c


CASES = _cases()


def run(tf, name):
    x, w, b = _inputs(tf)
    return CASES[name][1](tf, x, w, b)


# -- a small model under keras.mixed_precision 'mixed_bfloat16' ---------------------------------------
MODEL_X = np.linspace(-1.5, 1.5, 32, dtype=np.float32).reshape(8, 4)
MODEL_Y = np.arange(8, dtype=np.int32) % 3


def model_weights():
    rng = np.random.default_rng(7)
    return [rng.standard_normal((4, 8)).astype(np.float32) * 0.5, rng.standard_normal(8).astype(np.float32) * 0.1,
            np.ones(8, np.float32), np.zeros(8, np.float32), np.zeros(8, np.float32), np.ones(8, np.float32),
            rng.standard_normal((8, 3)).astype(np.float32) * 0.5, rng.standard_normal(3).astype(np.float32) * 0.1]


def mixed_model(keras):
    """Dense(relu) -> BatchNormalization -> Dense -> a float32 softmax, under 'mixed_bfloat16'
    (the caller sets the global policy); weights set from ``model_weights``."""
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                          keras.layers.BatchNormalization(), keras.layers.Dense(3),
                          keras.layers.Activation("softmax", dtype="float32")])
    m.set_weights(model_weights())
    return m


def model_record(tf, keras):
    """What the test compares: per layer (compute dtype, variable dtype, weight dtypes, output dtype,
    output as float32) on MODEL_X, then the weights after two SGD steps of fit (batch 4, no shuffle)
    and the losses."""
    m = mixed_model(keras)
    rec = {"layers": []}
    h = tf.constant(MODEL_X)
    for layer in m.layers:
        h = layer(h)
        rec["layers"].append((layer.compute_dtype, layer.variable_dtype, [w.dtype.name if hasattr(w.dtype, "name")
                              else str(w.dtype) for w in layer.weights], h.dtype.name,
                              np.asarray(tf.cast(h, tf.float32).numpy())))
    m.compile(optimizer=keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
    rec["optimizer"] = type(m.optimizer).__name__
    hist = m.fit(MODEL_X, MODEL_Y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    rec["loss"] = float(hist.history["loss"][0])
    rec["weights"] = [np.asarray(w) for w in m.get_weights()]
    return rec
