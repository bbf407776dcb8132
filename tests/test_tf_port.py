"""TF2 eager programs, written exactly as TensorFlow code, run unchanged with
``import tapeflow as tf``. Each snippet is executed as source in a fresh
namespace; the checks afterwards look at what the program computed."""
from __future__ import annotations

import textwrap

import numpy as np

REGRESSION = '''
import tapeflow as tf

tf.random.set_seed(42)
X = tf.random.normal((256, 4))
true_w = tf.constant([[1.0], [-2.0], [0.5], [3.0]])
y = tf.matmul(X, true_w) + 0.1 * tf.random.normal((256, 1))

W1 = tf.Variable(tf.random.normal((4, 16), stddev=0.5), name="W1")
b1 = tf.Variable(tf.zeros((16,)), name="b1")
W2 = tf.Variable(tf.random.normal((16, 1), stddev=0.5), name="W2")
b2 = tf.Variable(tf.zeros((1,)), name="b2")
params = [W1, b1, W2, b2]


def model(x):
    h = tf.nn.relu(tf.matmul(x, W1) + b1)
    return tf.matmul(h, W2) + b2


learning_rate = 0.05
losses = []
for step in range(150):
    with tf.GradientTape() as tape:
        pred = model(X)
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = tape.gradient(loss, params)
    for p, g in zip(params, grads):
        p.assign_sub(learning_rate * g)
    losses.append(float(loss))
'''

CLASSIFIER = '''
import numpy as np
import tapeflow as tf

tf.random.set_seed(0)
n, num_classes = 300, 3
centers = tf.constant([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.5]])
labels = tf.random.uniform((n,), minval=0, maxval=num_classes, dtype=tf.int32)
features = tf.gather(centers, labels) + 0.5 * tf.random.normal((n, 2))

W = tf.Variable(tf.random.normal((2, num_classes), stddev=0.1))
b = tf.Variable(tf.zeros((num_classes,)))

def logits_fn(x):
    return tf.matmul(x, W) + b

for epoch in range(60):
    with tf.GradientTape() as tape:
        logits = logits_fn(features)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        onehot_loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
            labels=tf.one_hot(labels, num_classes), logits=logits))
    dW, db = tape.gradient(loss, [W, b])
    W.assign_sub(0.5 * dW)
    b.assign_sub(0.5 * db)

pred = tf.argmax(logits_fn(features), axis=1, output_type=tf.int32)
accuracy = tf.reduce_mean(tf.cast(tf.equal(pred, labels), tf.float32))
probs = tf.nn.softmax(logits_fn(features))
row_sums = tf.reduce_sum(probs, axis=-1)
final_loss = float(loss)
'''

LOGISTIC_AND_HIGHER_ORDER = '''
import tapeflow as tf

# logistic regression with sigmoid cross-entropy and a persistent tape
tf.random.set_seed(3)
x = tf.random.normal((200, 3))
w_true = tf.constant([1.5, -1.0, 0.5])
z = tf.cast(tf.reduce_sum(x * w_true, axis=1) > 0.0, tf.float32)
w = tf.Variable(tf.zeros(3))
bias = tf.Variable(0.0)
for _ in range(100):
    with tf.GradientTape(persistent=True) as tape:
        logit = tf.reduce_sum(x * w, axis=1) + bias
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=logit))
        l2 = 1e-3 * tf.reduce_sum(tf.square(w))
    gw = tape.gradient(loss, w)
    gw_l2 = tape.gradient(l2, w)
    gb = tape.gradient(loss, bias)
    del tape
    w.assign_sub(1.0 * (gw + gw_l2))
    bias.assign_sub(1.0 * gb)
acc = tf.reduce_mean(tf.cast(tf.equal(tf.cast(tf.sigmoid(tf.reduce_sum(x * w, axis=1) + bias) > 0.5,
                                              tf.float32), z), tf.float32))

# position -> velocity -> acceleration with nested tapes
t = tf.Variable(2.0)
with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        position = 3.0 * t ** 3 - t ** 2 + tf.sin(t)
    velocity = t1.gradient(position, t)
acceleration = t2.gradient(velocity, t)

# tape.watch on constants, a jacobian and clipping by value
a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
with tf.GradientTape() as tape:
    tape.watch(a)
    b = tf.math.log(tf.reduce_sum(tf.exp(a), axis=1))
jac = tape.jacobian(b, a)
clipped = tf.clip_by_value(tf.constant([-5.0, 0.5, 5.0]), -1.0, 1.0)
'''


def run_snippet(src):
    namespace = {"__name__": "tf2_snippet"}
    exec(compile(textwrap.dedent(src), "<tf2 snippet>", "exec"), namespace)
    return namespace


def test_tf2_regression_program():
    ns = run_snippet(REGRESSION)
    tf = ns["tf"]
    assert tf.__name__ == "tapeflow"
    losses = ns["losses"]
    assert len(losses) == 150 and all(np.isfinite(losses))
    assert losses[-1] < 0.05 * losses[0], (losses[0], losses[-1])
    for p in ns["params"]:
        assert isinstance(p, tf.Variable) and p.dtype == tf.float32
    assert ns["W1"].name == "W1:0"
    assert tuple(ns["pred"].shape) == (256, 1)
    assert all(tuple(g.shape) == tuple(p.shape) for g, p in zip(ns["grads"], ns["params"]))


def test_tf2_regression_program_is_reproducible():
    a = run_snippet(REGRESSION)["losses"]
    b = run_snippet(REGRESSION)["losses"]
    assert a == b


def test_tf2_softmax_classifier_program():
    ns = run_snippet(CLASSIFIER)
    assert float(ns["accuracy"]) > 0.9
    assert ns["final_loss"] < 0.5
    assert abs(float(ns["loss"]) - float(ns["onehot_loss"])) < 1e-5   # sparse and one-hot CE agree
    np.testing.assert_allclose(ns["row_sums"].numpy(), 1.0, rtol=1e-5)
    assert ns["labels"].dtype == ns["tf"].int32


def test_tf2_logistic_regression_and_higher_order_program():
    ns = run_snippet(LOGISTIC_AND_HIGHER_ORDER)
    assert float(ns["acc"]) > 0.95
    t = 2.0
    assert abs(float(ns["velocity"]) - (9 * t ** 2 - 2 * t + np.cos(t))) < 1e-4
    assert abs(float(ns["acceleration"]) - (18 * t - 2 - np.sin(t))) < 1e-4
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    sm = np.exp(a) / np.exp(a).sum(axis=1, keepdims=True)
    expected = np.zeros((2, 2, 2))
    expected[0, 0], expected[1, 1] = sm[0], sm[1]
    np.testing.assert_allclose(ns["jac"].numpy(), expected, rtol=1e-5)
    np.testing.assert_array_equal(ns["clipped"].numpy(), np.array([-1.0, 0.5, 1.0], np.float32))
