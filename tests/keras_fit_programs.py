"""Small Keras fit programs written once for both frameworks: ``run(tf, name, tmpdir)``
with ``tf`` either TensorFlow 2.21 (tests/tf_reference/make_keras_reference.py records the
history) or tapeflow (tests/test_keras_reference.py compares). Weights are set from fixed
arrays so both start alike; shuffle=False so both see the same batches."""
import os

import numpy as np


def _data(seed, n, d, classes=None):
    r = np.random.default_rng(seed)
    x = r.normal(size=(n, d)).astype(np.float32)
    w = r.normal(size=(d, classes or 1)).astype(np.float32)
    z = x @ w
    if classes is None:
        return x, (z[:, 0] > 0).astype(np.float32)[:, None], w
    return x, np.argmax(z + r.normal(size=z.shape).astype(np.float32), -1), w


def _dense(tf, units, act, x, w0):
    k = tf.keras
    m = k.Sequential([k.Input((x.shape[1],)), k.layers.Dense(units, activation=act)])
    m.set_weights([w0 * 0.3, np.zeros(units, np.float32)])
    return m


def binary_metrics(tf, tmpdir):
    k = tf.keras
    k.backend.clear_session()
    x, y, w = _data(0, 40, 4)
    m = _dense(tf, 1, "sigmoid", x, -w)       # a bad start, so the metrics move
    m.compile(optimizer=k.optimizers.SGD(0.5), loss="binary_crossentropy",
              metrics=[k.metrics.Precision(), k.metrics.Recall(thresholds=[0.3, 0.7]), k.metrics.AUC(),
                       k.metrics.AUC(curve="PR", name="pr_auc"), "auc"])
    return m.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0, validation_data=(x[:12], y[:12])).history


def categorical_metrics(tf, tmpdir):
    k = tf.keras
    k.backend.clear_session()
    x, yi, w = _data(1, 30, 4, classes=6)
    y = np.eye(6, dtype=np.float32)[yi]
    m = _dense(tf, 6, "softmax", x, w)
    m.compile(optimizer=k.optimizers.SGD(0.2), loss="categorical_hinge",
              metrics=["top_k_categorical_accuracy", k.metrics.TopKCategoricalAccuracy(k=2, name="top2"),
                       "kl_divergence", "categorical_hinge"])
    return m.fit(x, y, batch_size=10, epochs=2, shuffle=False, verbose=0).history


def sparse_metrics(tf, tmpdir):
    k = tf.keras
    k.backend.clear_session()
    x, yi, w = _data(2, 30, 4, classes=6)
    m = _dense(tf, 6, "softmax", x, w)
    m.compile(optimizer=k.optimizers.SGD(0.2), loss="sparse_categorical_crossentropy",
              metrics=[k.metrics.SparseTopKCategoricalAccuracy(k=2), "sparse_top_k_categorical_accuracy"])
    return m.fit(x, yi, batch_size=10, epochs=2, shuffle=False, verbose=0).history


def regression_metrics(tf, tmpdir):
    k = tf.keras
    k.backend.clear_session()
    r = np.random.default_rng(3)
    x = r.normal(size=(32, 3)).astype(np.float32)
    y = np.concatenate([x @ [[1.0], [-2.0], [0.5]], np.exp(0.3 * x[:, :1])], 1).astype(np.float32)
    m = _dense(tf, 2, None, x, r.normal(size=(3, 2)).astype(np.float32))
    m.compile(optimizer=k.optimizers.SGD(0.05), loss=k.losses.LogCosh(),
              metrics=[k.metrics.R2Score(), "r2_score", "cosine_similarity", "poisson", "msle", "mape",
                       k.metrics.RootMeanSquaredError()])
    return m.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history


PROGRAMS = {f.__name__: f for f in (binary_metrics, categorical_metrics, sparse_metrics, regression_metrics)}


def _reg(tf, lr, opt="SGD"):
    k = tf.keras
    k.backend.clear_session()
    r = np.random.default_rng(5)
    x = r.normal(size=(24, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    m = _dense(tf, 1, None, x, r.normal(size=(3, 1)).astype(np.float32))
    m.compile(optimizer=getattr(k.optimizers, opt)(lr), loss="mse", metrics=["mae"])
    return m, x, y


def lr_scheduler(tf, tmpdir):
    k = tf.keras
    m, x, y = _reg(tf, 0.05)
    seen = []

    def schedule(epoch, lr):
        seen.append(lr)
        return lr if epoch < 2 else lr * 0.5

    h = dict(m.fit(x, y, batch_size=8, epochs=4, shuffle=False, verbose=0,
                   callbacks=[k.callbacks.LearningRateScheduler(schedule)]).history)
    h["seen_lr"] = seen
    return h


def lr_scheduler_one_arg(tf, tmpdir):
    k = tf.keras
    m, x, y = _reg(tf, 0.05, "Adam")
    cb = k.callbacks.LearningRateScheduler(lambda epoch: 0.05 / (1 + epoch))
    return m.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0, callbacks=[cb]).history


def reduce_lr(tf, tmpdir):
    k = tf.keras
    m, x, y = _reg(tf, 0.3)        # too large a step: the loss stalls, the rate gets cut
    cb = k.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_delta=0.1, cooldown=1,
                                       min_lr=0.02)
    return m.fit(x, y, batch_size=24, epochs=10, shuffle=False, verbose=0, callbacks=[cb]).history


def reduce_lr_val_mae(tf, tmpdir):
    k = tf.keras
    m, x, y = _reg(tf, 0.02)
    cb = k.callbacks.ReduceLROnPlateau(monitor="val_mae", factor=0.2, patience=2, min_delta=0.5)
    return m.fit(x, y, batch_size=8, epochs=6, shuffle=False, verbose=0, callbacks=[cb],
                 validation_data=(x[:8], y[:8] + 1.0)).history


def csv_logger(tf, tmpdir):
    k = tf.keras
    m, x, y = _reg(tf, 0.05)
    path = os.path.join(tmpdir, "log.csv")
    m.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0, callbacks=[k.callbacks.CSVLogger(path)])
    m.fit(x, y, batch_size=8, epochs=3, initial_epoch=2, shuffle=False, verbose=0,
          validation_data=(x[:8], y[:8]), callbacks=[k.callbacks.CSVLogger(path, append=True)])
    path2 = os.path.join(tmpdir, "log2.tsv")
    m.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0, validation_split=0.25,
          callbacks=[k.callbacks.CSVLogger(path2, separator="\t"),
                     k.callbacks.LearningRateScheduler(lambda e, lr: lr)])
    with open(path, newline="") as f, open(path2, newline="") as f2:
        return {"csv": [f.read()], "tsv": [f2.read()]}


PROGRAMS.update({f.__name__: f for f in (lr_scheduler, lr_scheduler_one_arg, reduce_lr, reduce_lr_val_mae,
                                         csv_logger)})
