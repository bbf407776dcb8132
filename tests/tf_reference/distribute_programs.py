"""tf.distribute programs run by both TF 2.21 and tapeflow: `make_distribute_reference.py` runs
them under TF (peers venv) into tests/data/distribute_tf_reference.json; tests/test_distribute.py
runs them under tapeflow and compares. Each takes the framework module as ``tf`` and returns
plain Python numbers and lists. The process must first split the CPU into 3 logical devices
(``setup``); the programs name the devices they use.
"""
from __future__ import annotations

import numpy as np


def setup(tf):
    cpu = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpu[0], [tf.config.LogicalDeviceConfiguration()] * 3)


def _strategy(tf, n):
    return tf.distribute.MirroredStrategy([f"cpu:{i}" for i in range(n)])


def _data(rows=10):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(rows, 3)).astype(np.float32)
    y = (x @ np.array([[0.5], [-1.0], [2.0]], np.float32) + 0.3).astype(np.float32)
    return x, y


def _weights():
    rng = np.random.default_rng(11)
    return [rng.normal(size=(3, 4)).astype(np.float32) * 0.5, rng.normal(size=(4,)).astype(np.float32) * 0.1,
            rng.normal(size=(4, 1)).astype(np.float32) * 0.5, np.zeros((1,), np.float32)]


def _model(tf):
    reg = tf.keras.regularizers.L2(1e-2)
    m = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="tanh", kernel_regularizer=reg),
                             tf.keras.layers.Dense(1)])
    m.build((None, 3))
    m.set_weights(_weights())
    return m


def _flat(ws):
    return [np.asarray(w, np.float64).ravel().tolist() for w in ws]


def custom_loop(tf, n=2, compiled=True, optimizer="sgd", batch=4, rows=10):
    """The distributed-training guide's custom loop: per-example loss, compute_average_loss,
    scale_regularization_loss, apply_gradients in the replicas, reduce(SUM) of the losses."""
    strategy = _strategy(tf, n)
    x, y = _data(rows)
    with strategy.scope():
        model = _model(tf)
        # (TF 2.21's Adam fails inside a compiled multi-replica step: "You must feed a value for
        # placeholder tensor 'cond/...'"; SGD with momentum has slots too)
        opt = tf.keras.optimizers.SGD(0.1) if optimizer == "sgd" else tf.keras.optimizers.SGD(0.05, momentum=0.9)
        loss_object = tf.keras.losses.MeanSquaredError(reduction="none")
        opt.build(model.trainable_variables)   # slots made in the scope (TF fails to make them in a step)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch)
    dist = strategy.experimental_distribute_dataset(ds)

    def train_step(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            pred = model(features, training=True)
            loss = tf.nn.compute_average_loss(loss_object(labels, pred))
            loss += tf.nn.scale_regularization_loss(tf.add_n(model.losses))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    def step(inputs):
        per_replica = strategy.run(train_step, args=(inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
    if compiled:
        step = tf.function(step)
    losses = []
    for _ in range(2):
        for batch in dist:
            losses.append(float(step(batch)))
    return {"losses": losses, "weights": _flat(model.get_weights()), "iterations": int(opt.iterations.numpy())}


def keras_fit(tf, n=2):
    """compile/fit under a strategy scope (the distributed-training guide's Keras part)."""
    strategy = _strategy(tf, n)
    x, y = _data()
    with strategy.scope():
        model = _model(tf)
        model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(0.1))
    hist = model.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    ev = model.evaluate(x, y, batch_size=4, verbose=0)
    return {"loss": [float(v) for v in hist.history["loss"]], "evaluate": float(ev),
            "weights": _flat(model.get_weights())}


def random_streams(tf):
    """Generators made outside and inside a scope, drawn in 2 and 3 replicas."""
    out = {}
    g = tf.random.Generator.from_seed(5)
    s2, s3 = _strategy(tf, 2), _strategy(tf, 3)
    out["outside"] = [r.numpy().tolist() for r in s2.experimental_local_results(s2.run(lambda: g.normal([2])))]
    with s3.scope():
        h = tf.random.Generator.from_seed(5)
        out["inside"] = [[r.numpy().tolist() for r in s3.experimental_local_results(
            s3.run(lambda: h.uniform([3])))] for _ in range(2)]
        out["cross_replica"] = h.normal([2]).numpy().tolist()
        out["inside_after"] = [r.numpy().tolist() for r in s3.experimental_local_results(
            s3.run(lambda: h.uniform([1], 0, 10, dtype=tf.int32)))]
        out["state"] = h.state.numpy().tolist()
    with s2.scope():
        k = tf.random.Generator.from_seed(9)
    f = tf.function(lambda: s2.run(lambda: k.normal([2])))   # the replicas traced into one graph
    out["compiled"] = [[r.numpy().tolist() for r in s2.experimental_local_results(f())] for _ in range(2)]
    out["compiled_state"] = k.state.numpy().tolist()
    one = tf.distribute.OneDeviceStrategy("cpu:0")
    with one.scope():
        o = tf.random.Generator.from_seed(9)
    out["one_device"] = one.run(lambda: o.normal([2])).numpy().tolist()   # replica 0's hashed key
    out["one_device_cross_replica"] = o.normal([2]).numpy().tolist()
    with s2.scope():
        sg = tf.random.Generator.from_seed(3)
        out["split_in_scope"] = [x.normal([2]).numpy().tolist() for x in sg.split(2)]
    # a Generator made in the replicas: every replica starts from replica 0's new state
    out["split_in_replicas"] = [x.numpy().tolist() for x in s2.experimental_local_results(
        s2.run(lambda: sg.split(1)[0].normal([1])))]
    return out


def datasets(tf):
    """experimental_distribute_dataset's split of global batches, distribute_datasets_from_function."""
    out = {}
    for n, rows, batch in ((2, 9, 4), (3, 17, 10), (3, 12, 10), (2, 13, 5), (3, 7, 2)):
        s = _strategy(tf, n)
        got = []
        for el in s.experimental_distribute_dataset(tf.data.Dataset.range(rows).batch(batch)):
            got.append([t.numpy().tolist() for t in s.experimental_local_results(el)])
        out[f"split_{n}_{rows}_{batch}"] = got
    s = _strategy(tf, 2)
    got = []
    for a, b in s.experimental_distribute_dataset(
            tf.data.Dataset.from_tensor_slices((np.arange(6.0), np.arange(6))).batch(3)):
        got.append([[t.numpy().tolist() for t in s.experimental_local_results(a)],
                    [t.numpy().tolist() for t in s.experimental_local_results(b)]])
    out["tuple_elements"] = got
    seen = []

    def fn(ctx):
        seen.append([ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync,
                     ctx.get_per_replica_batch_size(6)])
        return tf.data.Dataset.range(7).batch(2)
    got = []
    for el in s.distribute_datasets_from_function(fn):
        got.append([t.numpy().tolist() for t in s.experimental_local_results(el)])
    out["from_function"] = got
    out["input_context"] = seen
    one = _strategy(tf, 1)
    out["one_replica"] = [type(el).__name__ == "PerReplica" for el in
                          one.experimental_distribute_dataset(tf.data.Dataset.range(4).batch(2))]
    return out


def contexts(tf):
    """Replica ids, all_reduce, all_gather, merge_call, reduce with an axis, the context queries."""
    s = _strategy(tf, 3)
    out = {}

    def ids():
        c = tf.distribute.get_replica_context()
        return c.replica_id_in_sync_group

    out["ids"] = [int(t) for t in s.experimental_local_results(s.run(ids))]

    def reduce_fn():
        c = tf.distribute.get_replica_context()
        v = tf.cast(c.replica_id_in_sync_group, tf.float32) + 1.0
        return (c.all_reduce(tf.distribute.ReduceOp.SUM, v), c.all_reduce("MEAN", v * 2.0),
                c.all_gather(tf.reshape(v, [1]), axis=0))
    a, b, g = s.run(reduce_fn)
    out["all_reduce_sum"] = [float(t) for t in s.experimental_local_results(a)]
    out["all_reduce_mean"] = [float(t) for t in s.experimental_local_results(b)]
    out["all_gather"] = [t.numpy().tolist() for t in s.experimental_local_results(g)]

    def merge():
        c = tf.distribute.get_replica_context()
        v = tf.cast(c.replica_id_in_sync_group, tf.float32)
        return c.merge_call(lambda strategy, pr: strategy.reduce("SUM", pr, axis=None) * 10.0, args=(v,))
    out["merge_call"] = [float(t) for t in s.experimental_local_results(s.run(merge))]
    vals = s.run(lambda: tf.cast(tf.range(2), tf.float32) + tf.cast(
        tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32))
    out["reduce_sum_axis0"] = float(s.reduce("SUM", vals, axis=0))
    out["reduce_mean_axis0"] = float(s.reduce("MEAN", vals, axis=0))
    out["reduce_mean"] = s.reduce("MEAN", vals, axis=None).numpy().tolist()
    out["gather"] = s.gather(vals, axis=0).numpy().tolist()
    out["average_loss"] = [float(t) for t in s.experimental_local_results(
        s.run(lambda: tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 4.0]))))]
    out["scale_reg"] = [float(t) for t in s.experimental_local_results(
        s.run(lambda: tf.nn.scale_regularization_loss(tf.constant(3.0))))]
    with s.scope():
        out["in_scope"] = [tf.distribute.has_strategy(), tf.distribute.in_cross_replica_context(),
                           tf.distribute.get_replica_context() is None, tf.distribute.get_strategy() is s]
    out["outside"] = [tf.distribute.has_strategy(), tf.distribute.in_cross_replica_context(),
                      tf.distribute.get_strategy().num_replicas_in_sync,
                      tf.distribute.get_replica_context().num_replicas_in_sync]
    out["in_replica"] = [bool(x) for x in s.experimental_local_results(s.run(
        lambda: tf.constant(tf.distribute.has_strategy() and not tf.distribute.in_cross_replica_context())))]
    one = _strategy(tf, 1)
    r = one.run(lambda: tf.constant([1.0, 2.0]))
    out["one_replica_plain"] = type(r).__name__ != "PerReplica"
    out["one_replica_reduce"] = float(one.reduce("SUM", r, axis=0))
    return out


PROGRAMS = {
    "custom_loop_sgd_2": lambda tf: custom_loop(tf, 2, True, "sgd"),
    "custom_loop_momentum_3": lambda tf: custom_loop(tf, 3, True, "momentum", batch=6, rows=12),
    "custom_loop_momentum_1": lambda tf: custom_loop(tf, 1, True, "momentum"),
    "keras_fit_2": lambda tf: keras_fit(tf, 2),
    "keras_fit_1": lambda tf: keras_fit(tf, 1),
    "random_streams": random_streams,
    "datasets": datasets,
    "contexts": contexts,
}
