"""One training program for keras.optimizers.Adafactor, run by TF 2.21 (make_adafactor_reference.py)
and by tapeflow (tests/test_adafactor.py): a rank-2 kernel (factored moments), a bias (unfactored)
and a rank-3 weight (factored over its last two axes), five steps."""
import numpy as np

CONFIGS = {
    "default": {},
    "fixed_lr": {"learning_rate": 0.05, "relative_step": False, "clip_threshold": 0.5},
    "schedule": "schedule",   # ExponentialDecay(0.1, 2, 0.5): relative_step does not cap a schedule
}


def optimizer(tf, name):
    kw = CONFIGS[name]
    if kw == "schedule":
        kw = {"learning_rate": tf.keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5)}
    return tf.keras.optimizers.Adafactor(**kw)


def run(tf, name, compiled=False):
    rng = np.random.default_rng(0)
    w0 = rng.normal(size=(3, 4)).astype(np.float32)
    b0 = rng.normal(size=4).astype(np.float32)
    w3 = rng.normal(size=(2, 3, 2)).astype(np.float32)
    x = rng.normal(size=(5, 3)).astype(np.float32)
    W, B, W3 = tf.Variable(w0), tf.Variable(b0), tf.Variable(w3)
    opt = optimizer(tf, name)

    def step():
        with tf.GradientTape() as t:
            y = tf.matmul(tf.constant(x), W) + B
            loss = tf.reduce_mean(tf.square(y)) + tf.reduce_sum(tf.square(W3)) * 0.1
        g = t.gradient(loss, [W, B, W3])
        opt.apply_gradients(zip(g, [W, B, W3]))
    if compiled:
        step = tf.function(step)
    for _ in range(5):
        step()
    return [v.numpy().tolist() for v in (W, B, W3)]
