"""Optimizers against closed-form NumPy references of Keras' (default) and
PyTorch's (``epsilon_mode="torch"``) update rules, clipping, schedules,
slots/iterations, None gradients, soft_update, and compiled steps."""
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras

O = tf.optimizers
SHAPE = (4, 3)
STEPS = 5


def _grads(steps=STEPS, shape=SHAPE, seed=0):
    rng = np.random.default_rng(seed)
    gs = []
    for _ in range(steps):
        g = rng.standard_normal(shape).astype(np.float32)
        g[0] *= 1e-5   # tiny gradients: where epsilon goes matters here
        gs.append(g)
    return rng.standard_normal(shape).astype(np.float32), gs


def _run(opt, w0, gs):
    w = tf.Variable(w0)
    for g in gs:
        opt.apply_gradients([(tf.constant(g), w)])
    return w.numpy()


# -- closed-form references (float64) ----------------------------------------------------------------

def ref_sgd_keras(w, gs, lr, momentum=0.0, nesterov=False, wd=0.0):
    w = w.astype(np.float64)
    m = np.zeros_like(w)
    for g in gs:
        w = w - w * wd * lr
        if momentum:
            m = momentum * m - lr * g
            w = w + (momentum * m - lr * g if nesterov else m)
        else:
            w = w - lr * g
    return w


def ref_sgd_torch(w, gs, lr, momentum=0.0, nesterov=False):
    w = w.astype(np.float64)
    b = None
    for g in gs:
        b = g.astype(np.float64) if b is None else momentum * b + g
        w = w - lr * (g + momentum * b if nesterov else b)
    return w


def ref_adam(w, gs, lr, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False, mode="keras", wd=0.0):
    w = w.astype(np.float64)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    vh = np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        w = w - w * wd * lr
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vh = np.maximum(vh, v)
        vv = vh if amsgrad else v
        if mode == "keras":
            alpha = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            w = w - alpha * m / (np.sqrt(vv) + eps)
        else:
            w = w - lr / (1 - b1 ** t) * m / (np.sqrt(vv) / np.sqrt(1 - b2 ** t) + eps)
    return w


def ref_rmsprop(w, gs, lr, rho=0.9, momentum=0.0, eps=1e-7, centered=False, mode="keras"):
    w = w.astype(np.float64)
    v = np.zeros_like(w)
    ag = np.zeros_like(w)
    mom = np.zeros_like(w)
    for g in gs:
        v = rho * v + (1 - rho) * g * g
        ag = rho * ag + (1 - rho) * g
        den = v - ag * ag if centered else v
        if mode == "keras":
            inc = lr * g / np.sqrt(den + eps)
            mom = momentum * mom + inc
            w = w - (mom if momentum else inc)
        else:
            q = g / (np.sqrt(den) + eps)
            mom = momentum * mom + q
            w = w - lr * (mom if momentum else q)
    return w


def ref_adagrad(w, gs, lr, init=0.1, eps=1e-7, mode="keras"):
    w = w.astype(np.float64)
    acc = np.full_like(w, init)
    for g in gs:
        acc = acc + g * g
        w = w - (lr * g / np.sqrt(acc + eps) if mode == "keras" else lr * g / (np.sqrt(acc) + eps))
    return w


W0, GS = _grads()
RTOL = dict(rtol=2e-6, atol=2e-7)


@pytest.mark.parametrize("kw", [{}, {"momentum": 0.9}, {"momentum": 0.9, "nesterov": True}])
def test_sgd_matches_keras_and_torch_rules(kw):
    got = _run(O.SGD(0.1, **kw), W0, GS)
    np.testing.assert_allclose(got, ref_sgd_keras(W0, GS, 0.1, **kw), **RTOL)
    np.testing.assert_allclose(got, ref_sgd_torch(W0, GS, 0.1, **kw), **RTOL)


@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("mode,eps", [("keras", 1e-7), ("torch", 1e-8), ("keras", 1e-3), ("torch", 1e-3)])
def test_adam(mode, eps, amsgrad):
    got = _run(O.Adam(0.01, epsilon=eps, amsgrad=amsgrad, epsilon_mode=mode), W0, GS)
    np.testing.assert_allclose(got, ref_adam(W0, GS, 0.01, eps=eps, amsgrad=amsgrad, mode=mode), **RTOL)


def test_adam_step_number_is_the_same_on_every_path():
    """Eager with nothing recording, Adam's step number comes from the iterations
    variable's value (no op); taped steps record iterations + 1 as before; a subclass
    running the op path eagerly computes it on first use. All give the fused update's bits."""

    class OpPath(O.Adam):
        def _update_step(self, grad, var, lr):       # an override: apply_gradients takes the op path
            return super()._update_step(grad, var, lr)

    fused = _run(O.Adam(0.01), W0, GS)
    assert _run(OpPath(0.01), W0, GS).tobytes() == fused.tobytes()
    opt, w = O.Adam(0.01), tf.Variable(W0)
    for g in GS:
        with tf.GradientTape():                       # recording: the op path, t from the add op
            opt.apply_gradients([(tf.constant(g), w)])
    assert w.numpy().tobytes() == fused.tobytes()
    assert int(opt.iterations.numpy()) == len(GS)


def test_adam_epsilon_placement_differs_between_modes():
    k = _run(O.Adam(0.01, epsilon=1e-3), W0, GS)
    t = _run(O.Adam(0.01, epsilon=1e-3, epsilon_mode="torch"), W0, GS)
    assert np.abs(k - t).max() > 1e-5
    assert O.Adam().epsilon == 1e-7   # Keras' default


def test_adamw_decoupled_weight_decay():
    got = _run(O.AdamW(0.01, weight_decay=0.1), W0, GS)
    np.testing.assert_allclose(got, ref_adam(W0, GS, 0.01, wd=0.1), **RTOL)
    got = _run(O.SGD(0.1, weight_decay=0.05), W0, GS)
    np.testing.assert_allclose(got, ref_sgd_keras(W0, GS, 0.1, wd=0.05), **RTOL)
    # excluded variables get no decay
    opt = O.AdamW(0.01, weight_decay=0.5)
    w = tf.Variable(W0)
    opt.exclude_from_weight_decay(var_list=[w])
    opt.apply_gradients([(tf.constant(GS[0]), w)])
    np.testing.assert_allclose(w.numpy(), ref_adam(W0, GS[:1], 0.01), **RTOL)


@pytest.mark.parametrize("kw", [{}, {"momentum": 0.5}, {"centered": True}, {"centered": True, "momentum": 0.5}])
@pytest.mark.parametrize("mode", ["keras", "torch"])
def test_rmsprop(kw, mode):
    got = _run(O.RMSprop(0.01, rho=0.9, epsilon=1e-7, epsilon_mode=mode, **kw), W0, GS)
    np.testing.assert_allclose(got, ref_rmsprop(W0, GS, 0.01, mode=mode, **kw), **RTOL)


@pytest.mark.parametrize("mode,init", [("keras", 0.1), ("torch", 0.0)])
def test_adagrad(mode, init):
    got = _run(O.Adagrad(0.1, initial_accumulator_value=init, epsilon=1e-7, epsilon_mode=mode), W0, GS)
    np.testing.assert_allclose(got, ref_adagrad(W0, GS, 0.1, init=init, mode=mode), **RTOL)


# torch 2.13.0 on the same gradients (_grads()), 5 steps: the torch-mode rules reproduce torch.optim
TORCH = {
    "adam": [[-0.433413357, -1.14325118, 1.7398417], [-0.48925361, 0.376313806, -0.284651846], [1.55809236, 1.27846026, 0.662458897], [-2.20060205, 0.0774397552, 0.644785464]],
    "adam_ams": [[-0.433413357, -1.14325118, 1.7398417], [-0.48925361, 0.376309842, -0.284651846], [1.55809236, 1.27846026, 0.662458897], [-2.20060205, 0.0774397552, 0.644785464]],
    "adamw": [[-0.431226403, -1.13749874, 1.73117924], [-0.486774087, 0.374573082, -0.28330946], [1.5502646, 1.27196264, 0.659216344], [-2.18963766, 0.0771002695, 0.641463697]],
    "rmsprop": [[-0.497951508, -1.08270144, 1.7117672], [-0.443525314, 0.634336412, -0.467105031], [1.50202882, 1.08845639, 0.68999362], [-2.22285295, 0.174404681, 0.347643048]],
    "rmsprop_cm": [[-0.464865059, -1.0797472, 1.72735584], [-0.471250027, 0.524289846, -0.370090872], [1.51863265, 1.17717981, 0.688080192], [-2.20410776, 0.128825605, 0.471215129]],
    "adagrad": [[-0.50464952, -1.07322264, 1.71107268], [-0.443775088, 0.633589387, -0.466700405], [1.5017761, 1.08929133, 0.690796435], [-2.22218585, 0.174360007, 0.347719371]],
    "sgd_nest": [[-0.43643105, -1.16980302, 1.73936975], [-0.10334976, 1.30230689, -0.909201741], [1.03116918, 0.234805003, 0.917146146], [-2.40333748, 0.372511208, -0.00734363636]],
}
TORCH_CFG = {  # torch.optim constructor -> tapeflow equivalent
    "adam": lambda: O.Adam(0.01, epsilon=1e-8, epsilon_mode="torch"),                       # Adam(lr=0.01)
    "adam_ams": lambda: O.Adam(0.01, epsilon=1e-8, amsgrad=True, epsilon_mode="torch"),     # Adam(amsgrad=True)
    "adamw": lambda: O.AdamW(0.01, weight_decay=0.1, epsilon=1e-8, epsilon_mode="torch"),   # AdamW(wd=0.1)
    "rmsprop": lambda: O.RMSprop(0.01, rho=0.99, epsilon=1e-8, epsilon_mode="torch"),       # RMSprop(lr=0.01)
    "rmsprop_cm": lambda: O.RMSprop(0.01, rho=0.9, epsilon=1e-8, centered=True, momentum=0.5,
                                    epsilon_mode="torch"),          # RMSprop(alpha=.9, centered, momentum=.5)
    "adagrad": lambda: O.Adagrad(0.1, initial_accumulator_value=0.0, epsilon=1e-10,
                                 epsilon_mode="torch"),                                      # Adagrad(lr=0.1)
    "sgd_nest": lambda: O.SGD(0.1, momentum=0.9, nesterov=True),          # SGD(lr=.1, momentum=.9, nesterov)
}


@pytest.mark.parametrize("name", sorted(TORCH))
def test_torch_mode_matches_torch_optim(name):
    got = _run(TORCH_CFG[name](), W0, GS)
    np.testing.assert_allclose(got, np.array(TORCH[name], np.float32), rtol=1e-6, atol=1e-6)


# -- clipping ---------------------------------------------------------------------------------------------

def test_clipnorm_clipvalue_global_clipnorm():
    g1 = np.array([3.0, 4.0], np.float32)       # norm 5
    g2 = np.array([0.3, 0.4], np.float32)       # norm 0.5
    for kw, e1, e2 in [({"clipnorm": 1.0}, g1 / 5, g2),
                       ({"clipvalue": 0.35}, np.clip(g1, -.35, .35), np.clip(g2, -.35, .35)),
                       ({"global_clipnorm": 1.0}, g1 / np.sqrt(25.25), g2 / np.sqrt(25.25))]:
        a, b = tf.Variable(np.zeros(2, np.float32)), tf.Variable(np.zeros(2, np.float32))
        O.SGD(1.0, **kw).apply_gradients([(tf.constant(g1), a), (tf.constant(g2), b)])
        np.testing.assert_allclose(-a.numpy(), e1, rtol=1e-6)
        np.testing.assert_allclose(-b.numpy(), e2, rtol=1e-6)
    with pytest.raises(ValueError):
        O.SGD(clipnorm=1.0, global_clipnorm=1.0)


# -- schedules ----------------------------------------------------------------------------------------------

def test_schedules_closed_forms():
    S = keras.optimizers.schedules
    ed = S.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    eds = S.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5, staircase=True)
    pc = S.PiecewiseConstantDecay([5, 10], [1.0, 0.5, 0.1])
    cd = S.CosineDecay(1.0, decay_steps=20, alpha=0.1)
    cw = S.CosineDecay(0.0, decay_steps=20, warmup_target=1.0, warmup_steps=4)
    it = S.InverseTimeDecay(1.0, 10, 0.5)
    its = S.InverseTimeDecay(1.0, 10, 0.5, staircase=True)
    pd = S.PolynomialDecay(1.0, 10, end_learning_rate=0.1, power=2.0)
    for step in [0, 1, 5, 6, 10, 11, 19, 20, 30]:
        st = tf.Variable(np.int64(step))
        assert float(ed(st)) == pytest.approx(0.1 * 0.5 ** (step / 10), rel=1e-6)
        assert float(eds(st)) == pytest.approx(0.1 * 0.5 ** (step // 10), rel=1e-6)
        assert float(pc(st)) == pytest.approx(1.0 if step <= 5 else 0.5 if step <= 10 else 0.1)
        c = 0.5 * (1 + np.cos(np.pi * min(step, 20) / 20))
        assert float(cd(st)) == pytest.approx(0.9 * c + 0.1, rel=1e-5, abs=1e-6)
        if step < 4:
            assert float(cw(st)) == pytest.approx(step / 4, rel=1e-6)
        else:
            s2 = min(step, 24) - 4
            assert float(cw(st)) == pytest.approx(0.5 * (1 + np.cos(np.pi * s2 / 20)), rel=1e-5, abs=1e-6)
        assert float(it(st)) == pytest.approx(1.0 / (1 + 0.5 * step / 10), rel=1e-6)
        assert float(pd(st)) == pytest.approx(0.9 * (1 - min(step, 10) / 10) ** 2 + 0.1, rel=1e-5)
        assert float(its(st)) == pytest.approx(1.0 / (1 + 0.5 * (step // 10)), rel=1e-6)
        assert ed(st).dtype == tf.float32


@pytest.mark.parametrize("make", [
    lambda n: keras.optimizers.schedules.ExponentialDecay(0.1, n, 0.5),
    lambda n: keras.optimizers.schedules.InverseTimeDecay(0.1, n, 0.5),
    lambda n: keras.optimizers.schedules.CosineDecay(0.1, n),
    lambda n: keras.optimizers.schedules.PolynomialDecay(0.1, n)])
@pytest.mark.parametrize("steps", [0, -3])
def test_schedules_reject_nonpositive_decay_steps(make, steps):
    # every rate divides by decay_steps: 0 gave a nan or 0 rate without a word (TF 2.21 raises
    # "Argument `decay_steps` must be > 0" for all four)
    with pytest.raises(ValueError, match=rf"Decay: decay_steps must be > 0 .*got {steps}"):
        make(steps)


def test_optimizer_uses_schedule_at_current_iteration():
    sched = keras.optimizers.schedules.PiecewiseConstantDecay([1], [1.0, 0.1])
    opt = O.SGD(sched)
    w = tf.Variable(np.zeros(1, np.float32))
    for _ in range(3):
        opt.apply_gradients([(tf.ones(1), w)])
    # steps 0 and 1 use lr 1.0 (step <= 1), step 2 uses 0.1
    np.testing.assert_allclose(w.numpy(), [-2.1], rtol=1e-6)
    assert float(opt.learning_rate) == pytest.approx(0.1)


# -- state, slots, API ---------------------------------------------------------------------------------------

def test_iterations_slots_and_variables():
    opt = O.Adam(0.01, amsgrad=True)
    a, b = tf.Variable(np.zeros((2, 2), np.float32)), tf.Variable(np.zeros(3, np.float32))
    assert opt.iterations.dtype == tf.int64 and int(opt.iterations) == 0
    opt.apply_gradients([(tf.ones((2, 2)), a), (tf.ones(3), b)])
    assert int(opt.iterations) == 1
    slots = list(opt.slots())
    assert [(v is a or v is b, n) for v, n, _ in slots] == [(True, "m"), (True, "v"), (True, "vhat")] * 2
    assert opt.get_slot(b, "m").shape == (3,)
    assert opt.get_slot_names() == ["m", "v", "vhat"]
    assert len(opt.variables) == 2 + 6 and len(opt.variables()) == 8
    assert opt.variables[0] is opt.iterations
    with pytest.raises(KeyError):
        opt.get_slot(a, "nope")


def test_learning_rate_variable_and_legacy_lr():
    opt = O.Adam(learning_rate=0.01)
    assert isinstance(opt.learning_rate, tf.Variable)
    opt.learning_rate.assign(0.5)
    assert float(opt.lr) == 0.5
    opt.learning_rate = 0.25
    assert float(opt.learning_rate) == 0.25
    with pytest.warns(DeprecationWarning):
        o2 = keras.optimizers.Adam(lr=0.003)
    assert float(o2.learning_rate) == pytest.approx(0.003)
    assert isinstance(keras.optimizers.get("rmsprop"), O.RMSprop)
    cfg = O.serialize(O.SGD(0.2, momentum=0.5))
    o3 = O.deserialize(cfg)
    assert isinstance(o3, O.SGD) and o3.momentum == 0.5 and float(o3.learning_rate) == pytest.approx(0.2)


def test_none_gradients_warn_and_all_none_raise():
    a, b = tf.Variable(np.ones(2, np.float32), name="a"), tf.Variable(np.ones(2, np.float32), name="b")
    opt = O.SGD(0.1)
    with pytest.warns(UserWarning, match="Gradients do not exist for variables"):
        opt.apply_gradients([(tf.ones(2), a), (None, b)])
    np.testing.assert_allclose(a.numpy(), 0.9)
    np.testing.assert_allclose(b.numpy(), 1.0)
    with pytest.raises(ValueError, match="No gradients provided"):
        opt.apply_gradients([(None, a), (None, b)])
    with pytest.raises(TypeError):
        opt.apply_gradients([(tf.ones(2), tf.ones(2))])


def test_minimize_with_callable_and_tape():
    w = tf.Variable(np.array([3.0], np.float32))
    opt = O.SGD(0.25)
    opt.minimize(lambda: tf.reduce_sum(w * w), [w])
    np.testing.assert_allclose(w.numpy(), [1.5])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(w * w)
    opt.minimize(loss, lambda: [w], tape=tape)
    np.testing.assert_allclose(w.numpy(), [0.75])
    with pytest.raises(ValueError, match="tape"):
        opt.minimize(loss, [w])


def test_float64_variables():
    w = tf.Variable(W0.astype(np.float64))
    opt = O.Adam(0.01)
    for g in GS:
        opt.apply_gradients([(tf.constant(g.astype(np.float64)), w)])
    np.testing.assert_allclose(w.numpy(), ref_adam(W0, GS, 0.01), rtol=1e-6)


def test_keras_model_training_loop_converges():
    tf.random.set_seed(1)
    x = np.random.default_rng(0).standard_normal((64, 2)).astype(np.float32)
    y = (x[:, :1] * 2 - x[:, 1:]).astype(np.float32)
    m = keras.Sequential([keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)])
    opt = keras.optimizers.Adam(0.05)
    for _ in range(150):
        with tf.GradientTape() as tape:
            loss = keras.losses.MeanSquaredError()(y, m(x))
        grads = tape.gradient(loss, m.trainable_variables)
        opt.apply_gradients(zip(grads, m.trainable_variables))
    assert float(loss) < 0.01


# -- soft_update ------------------------------------------------------------------------------------------

def test_soft_update_lists_models_and_errors():
    src = [tf.Variable(np.full((2, 2), 1.0, np.float32)), tf.Variable(np.full(3, 2.0, np.float32))]
    tgt = [tf.Variable(np.zeros((2, 2), np.float32)), tf.Variable(np.zeros(3, np.float32))]
    tf.soft_update(tgt, src, 0.1)
    np.testing.assert_allclose(tgt[0].numpy(), 0.1)
    np.testing.assert_allclose(tgt[1].numpy(), 0.2)
    keras.utils.soft_update(tgt, src, tf.constant(0.5))
    np.testing.assert_allclose(tgt[0].numpy(), 0.55)
    q = keras.Sequential([keras.layers.Dense(3, input_shape=(2,))])
    t = keras.models.clone_model(q)
    keras.utils.soft_update(t, q, 1.0)
    for a, b in zip(t.get_weights(), q.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="shape"):
        tf.soft_update([tf.Variable(np.zeros(2, np.float32))], [tf.Variable(np.zeros(3, np.float32))], 0.1)
    with pytest.raises(ValueError, match="2 target variables but 1"):
        tf.soft_update(tgt, src[:1], 0.1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("tau", [0.005, 0.3, 0.0])
def test_soft_update_eager_fused_equals_the_op_path(dtype, tau, monkeypatch):
    # Eager with nothing recording, each pair is one pass of rules.polyak's compiled loop
    # (the rule on NumPy arrays for float16); under a tape the same rule runs as ops.
    # Same bits, 0-d and 2-D variables, a non-contiguous tensor source, NaN and inf included.
    from tapeflow.keras import utils as ku
    rng = np.random.default_rng(1)
    shapes = [(5, 3), (), (7,)]
    srcs = [rng.standard_normal(s).astype(dtype) for s in shapes]
    srcs[0][0, 0], srcs[0][1, 1] = np.nan, np.inf
    tgt0 = [rng.standard_normal(s).astype(dtype) for s in shapes]
    fused_calls = []
    fused = ku._fused_soft_update
    monkeypatch.setattr(ku, "_fused_soft_update", lambda *a: (fused_calls.append(1), fused(*a)))
    results = []
    for taped in (False, True):
        tgt = [tf.Variable(t) for t in tgt0]
        src = [tf.Variable(srcs[0]), tf.constant(srcs[1]),
               tf.transpose(tf.constant(np.ascontiguousarray(srcs[2].reshape(7, 1).T)))[:, 0]]
        held = tgt[0].read_value()
        for _ in range(3):
            if taped:
                with tf.GradientTape():
                    tf.soft_update(tgt, src, tau)
            else:
                tf.soft_update(tgt, src, tau)
        np.testing.assert_array_equal(held.numpy(), tgt0[0])   # a read is a snapshot
        results.append([t.numpy() for t in tgt])
        assert all(t.numpy().dtype == dtype and t.numpy().shape == s for t, s in zip(tgt, shapes))
    assert len(fused_calls) == 3
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    keep = np.asarray(1.0 - tau, dtype)
    expect = srcs[1] * np.asarray(tau, dtype) + tgt0[1] * keep
    for _ in range(2):
        expect = srcs[1] * np.asarray(tau, dtype) + expect * keep
    np.testing.assert_array_equal(results[0][1], expect)


def test_soft_update_in_a_compiled_step_matches_eager():
    src = [tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))]
    te, tc = tf.Variable(np.ones((2, 3), np.float32)), tf.Variable(np.ones((2, 3), np.float32))
    f = tf.function(lambda: tf.soft_update([tc], src, 0.25))
    for _ in range(3):
        tf.soft_update([te], src, 0.25)
        f()
    np.testing.assert_array_equal(tc.numpy(), te.numpy())


# -- compiled (tapeflow.function) -----------------------------------------------------------------------------

@pytest.mark.parametrize("make", [lambda: O.Adam(0.01, amsgrad=True), lambda: O.RMSprop(0.01, momentum=0.5),
                                  lambda: O.SGD(keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5),
                                                momentum=0.9, clipnorm=1.0),
                                  lambda: O.Adagrad(0.1, global_clipnorm=0.5)])
def test_compiled_apply_gradients_matches_eager_without_retracing(make):
    w_e, w_c = tf.Variable(W0), tf.Variable(W0)
    t_e, t_c = tf.Variable(np.ones(3, np.float32)), tf.Variable(np.ones(3, np.float32))
    oe, oc = make(), make()

    def step(opt, w, t, g):
        opt.apply_gradients([(g, w), (g[0], t)])
        tf.soft_update([t], [w[1]], 0.3)

    f = tf.function(lambda g: step(oc, w_c, t_c, g))
    for g in GS:
        step(oe, w_e, t_e, tf.constant(g))
        f(tf.constant(g))
    np.testing.assert_allclose(w_c.numpy(), w_e.numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(t_c.numpy(), t_e.numpy(), rtol=1e-5, atol=1e-7)
    assert int(oc.iterations) == STEPS
    assert f.experimental_get_tracing_count() == 1


# -- the fused eager update -----------------------------------------------------------------------------------

FUSED_CFG = [lambda: O.SGD(0.1), lambda: O.SGD(0.1, momentum=0.9), lambda: O.SGD(0.1, momentum=0.9, nesterov=True),
             lambda: O.SGD(0.1, weight_decay=0.05), lambda: O.Adam(0.01), lambda: O.Adam(0.01, amsgrad=True),
             lambda: O.Adam(0.01, epsilon=1e-8, epsilon_mode="torch", amsgrad=True),
             lambda: O.Adam(0.01, epsilon=1e-8, epsilon_mode="torch"),
             lambda: O.AdamW(0.01, weight_decay=0.1), lambda: O.RMSprop(0.01),
             lambda: O.RMSprop(0.01, momentum=0.5, centered=True), lambda: O.RMSprop(0.01, centered=True),
             lambda: O.RMSprop(0.01, rho=0.99, epsilon=1e-8, epsilon_mode="torch"),
             lambda: O.RMSprop(0.01, momentum=0.5, centered=True, epsilon_mode="torch"),
             lambda: O.RMSprop(0.01, momentum=0.5), lambda: O.Adagrad(0.1),
             lambda: O.Adagrad(0.1, initial_accumulator_value=0.0, epsilon=1e-8, epsilon_mode="torch"),
             lambda: O.Adam(keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5), clipnorm=1.0),
             lambda: O.Nadam(0.01), lambda: O.Nadam(0.05, beta_1=0.8, weight_decay=0.1), lambda: O.Adamax(0.01),
             lambda: O.Adamax(0.05, epsilon=1e-3, weight_decay=0.1), lambda: O.Adadelta(1.0),
             lambda: O.Adadelta(0.5, rho=0.9, epsilon=1e-5)]


def _fused_and_op_path(make, w0, gs, transpose=False):
    """[value, *slots] after the steps, eager with nothing recording (the fused update:
    the rule's compiled loop, or the rule on NumPy arrays) and under a tape (the op path)."""
    results = []
    for taped in (False, True):
        opt, w = make(), tf.Variable(w0)
        fused_calls = []
        fused = opt._fused_update
        opt._fused_update = lambda *a: (fused_calls.append(1), fused(*a))
        for g in gs:
            # a transposed gradient is a non-contiguous view (what a matmul's vjp gives)
            g = tf.transpose(tf.constant(np.ascontiguousarray(g.T))) if transpose else tf.constant(g)
            if taped:
                with tf.GradientTape():
                    opt.apply_gradients([(g, w)])
            else:
                opt.apply_gradients([(g, w)])
        assert len(fused_calls) == (0 if taped else len(gs))
        assert w.numpy().shape == w0.shape and w.numpy().dtype == w0.dtype
        results.append([w.numpy()] + [sv.numpy() for _, _, sv in opt.slots()])
    return results


@pytest.mark.parametrize("make", FUSED_CFG)
@pytest.mark.parametrize("shape,dtype", [(SHAPE, np.float32), ((), np.float32), ((5,), np.float64),
                                         (SHAPE, np.float16)])
def test_fused_eager_update_equals_the_op_path(make, shape, dtype):
    # Both run the optimizer's one rule (tapeflow/optimizers/rules.py): compiled into a
    # numba loop for float32/float64, on NumPy arrays for float16, on Tensors under the
    # tape. Same bits, slots too (no FMA contraction, no reassociation in the loops).
    w0, gs = _grads(shape=shape or (1,))
    w0, gs = w0.astype(dtype).reshape(shape), [g.astype(dtype).reshape(shape) for g in gs]
    fused, ops = _fused_and_op_path(make, w0, gs)
    for a, b in zip(fused, ops):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("make", [FUSED_CFG[1], FUSED_CFG[5], FUSED_CFG[10]])
def test_fused_eager_update_takes_non_contiguous_gradients(make):
    w0, gs = _grads(shape=(3, 5))
    fused, ops = _fused_and_op_path(make, w0, gs, transpose=True)
    for a, b in zip(fused, ops):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("keras_mode", [True, False])
def test_adam_factors_on_numpy_equal_the_ops(dtype, keras_mode):
    # the fused update computes Adam's per-step constants on NumPy values, the op path as
    # ops: the same kernels (np.power, not the scalar **), so the same bits at every step
    from tapeflow.ops import math_ops as M
    from tapeflow.optimizers import rules
    lr = M.cast(tf.constant(np.float32(3e-4)), dtype)
    for t in [*range(1, 400), 1000, 4097, 65537, 10 ** 6 + 3]:
        t = M.cast(tf.constant(np.int64(t)), dtype)
        ops = rules.adam_factors(t, lr, 0.9, 0.999, keras_mode)
        arrays = rules.adam_factors(t.numpy(), lr.numpy(), 0.9, 0.999, keras_mode)
        for a, b in zip(ops, arrays):
            assert a.numpy().dtype == np.asarray(b).dtype and a.numpy().tobytes() == np.asarray(b).tobytes()


def test_fused_eager_update_runs_the_compiled_loops():
    # the loops exist for every rule (numba is a pinned dependency): a broken build would
    # otherwise fall back to the NumPy form silently and only be slower
    from tapeflow.optimizers import rules
    for rule in (rules.sgd, rules.adam, rules.rmsprop, rules.adagrad, rules.nadam, rules.adamax, rules.adadelta):
        assert rules.kernel(rule) is not None, rule.__name__


def test_fused_eager_update_keeps_ieee_division():
    # a zero denominator (epsilon 0, zero gradient and second moment) gives inf/nan as the
    # ops do, not numba's ZeroDivisionError
    g = np.zeros(3, np.float32)
    fused, ops = _fused_and_op_path(lambda: O.Adagrad(0.1, initial_accumulator_value=0.0, epsilon=0.0),
                                    np.ones(3, np.float32), [g])
    assert np.isnan(fused[0]).all()
    for a, b in zip(fused, ops):
        np.testing.assert_array_equal(a, b)


def test_an_overridden_update_step_runs_eagerly_too():
    class HalfSGD(O.SGD):
        def _update_step(self, g, var, lr):
            var.assign_sub(g * lr * 0.5)

    w = tf.Variable(np.ones(2, np.float32))
    HalfSGD(1.0).apply_gradients([(tf.constant(np.ones(2, np.float32)), w)])
    np.testing.assert_array_equal(w.numpy(), [0.5, 0.5])


def test_gradient_shape_must_match_the_variable():
    w = tf.Variable(np.ones(SHAPE, np.float32))
    for opt in (O.Adam(), O.SGD()):
        with pytest.raises(ValueError, match=r"gradient for Variable:0 has shape \(3,\), the variable has \(4, 3\)"):
            opt.apply_gradients([(tf.constant(np.ones(3, np.float32)), w)])


@pytest.mark.parametrize("mode", ["fused", "taped", "compiled"])
def test_a_weight_constraint_is_applied_after_each_update(mode):
    # Keras applies a weight's constraint right after the optimizer updates it, in every mode
    d = keras.layers.Dense(3, kernel_constraint=lambda w: tf.clip_by_value(w, 0.0, 0.05))
    x = tf.constant(np.ones((2, 4), np.float32))
    d(x)
    opt = O.SGD(0.1)
    g = tf.constant(np.full((4, 3), -1.0, np.float32))   # pushes the kernel up past the bound
    gb = tf.constant(np.full(3, -1.0, np.float32))

    def step():
        opt.apply_gradients([(g, d.kernel), (gb, d.bias)])
    if mode == "taped":
        with tf.GradientTape():
            step()
    elif mode == "compiled":
        tf.function(step)()
    else:
        step()
    assert d.kernel.numpy().max() <= 0.05
    np.testing.assert_allclose(d.bias.numpy(), 0.1)   # no constraint on the bias


@pytest.mark.parametrize("make", [FUSED_CFG[1], FUSED_CFG[5], FUSED_CFG[11], FUSED_CFG[15]])
def test_fused_update_writes_slots_in_place_only_when_nobody_holds_them(make):
    # The fused eager update writes a slot's buffer in place when only the slot variable
    # refers to it; a held read of the slot (or an F-ordered buffer, whose flat view would
    # be a copy) makes it update a copy instead. Values equal the op path's either way.
    w0, gs = _grads(shape=(4, 3))
    opt, w = make(), tf.Variable(w0)
    opt.apply_gradients([(tf.constant(gs[0]), w)])
    _, name, slot = next(iter(opt.slots()))
    buf = id(slot._v)
    opt.apply_gradients([(tf.constant(gs[1]), w)])
    assert id(slot._v) == buf                                    # nobody held it: in place
    held = slot.read_value()
    before = held.numpy().copy()
    opt.apply_gradients([(tf.constant(gs[2]), w)])
    np.testing.assert_array_equal(held.numpy(), before)          # a read stays a snapshot
    assert id(slot._v) != buf
    slot._v = np.asfortranarray(slot.numpy())   # an F-order buffer (assign makes C; checked anyway)
    for g in gs[3:]:
        opt.apply_gradients([(tf.constant(g), w)])
    ops_opt, ops_w = make(), tf.Variable(w0)
    for g in gs:
        with tf.GradientTape():
            ops_opt.apply_gradients([(tf.constant(g), ops_w)])
    np.testing.assert_array_equal(w.numpy(), ops_w.numpy())
    for (_, _, a), (_, _, b) in zip(opt.slots(), ops_opt.slots()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("make", FUSED_CFG)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_build_loads_the_fused_loop_for_the_steps_argument_types(make, dtype, monkeypatch):
    # Building the slots eagerly calls the rule's loop once on size-0 arrays, so its
    # machine code (numba's import, the cached compile) is loaded then and not in the
    # first step. The warm-up must pass exactly the types a step passes, else numba
    # compiles or loads another specialization in the step anyway.
    import numba
    from tapeflow.optimizers import rules
    calls = []
    real = rules.kernel

    def spy(rule):
        loop = real(rule)
        return lambda *a: (calls.append(([x.size for x in a if isinstance(x, np.ndarray)],
                                         [numba.typeof(x) for x in a])), loop(*a))[1]

    monkeypatch.setattr(rules, "kernel", spy)
    opt, w = make(), tf.Variable(np.ones(SHAPE, dtype))
    opt.build([w])
    assert len(calls) == 1 and set(calls[0][0]) == {0}
    opt.apply_gradients([(tf.constant(np.full(SHAPE, 0.5, dtype)), w)])
    assert len(calls) == 2 and calls[1][1] == calls[0][1]
    opt2, w2 = make(), tf.Variable(np.ones(SHAPE, dtype))
    tf.function(lambda: opt2.build([w2]))()   # inside a trace nothing is loaded: the traced update is the op path
    assert len(calls) == 2


def test_build_calls_no_learning_rate_callable():
    # the warm-up needs only the loop's argument types: a user's learning-rate callable
    # (which may count its calls) is called by the steps only, once each
    calls = []
    opt, w = O.Adam(lambda: (calls.append(1), 0.01)[1]), tf.Variable(np.ones(SHAPE, np.float32))
    opt.build([w])
    assert calls == []
    opt.apply_gradients([(tf.constant(np.ones(SHAPE, np.float32)), w)])
    assert calls == [1]


# -- several variables in one loop (optimizers/base.py _Slabs) -------------------------------------------------

SLAB_SHAPES = [(6, 5), (5,), (5, 3), (3,), ()]


def _many(dtype=np.float32, steps=4, seed=0):
    rs = np.random.default_rng(seed)
    w0 = [rs.standard_normal(s).astype(dtype) for s in SLAB_SHAPES]
    return w0, [[rs.standard_normal(s).astype(dtype) for s in SLAB_SHAPES] for _ in range(steps)]


def _apply_all(make, w0, gs, taped=False, between=None):
    """[values, *slots] after the steps, one apply_gradients of all the variables per step."""
    opt, ws = make(), [tf.Variable(a) for a in w0]
    for i, step in enumerate(gs):
        pairs = [(tf.constant(g), w) for g, w in zip(step, ws)]
        if taped:
            with tf.GradientTape():
                opt.apply_gradients(pairs)
        else:
            opt.apply_gradients(pairs)
        if between is not None:
            between(i, opt, ws)
    return [w.numpy() for w in ws] + [sv.numpy() for _, _, sv in opt.slots()]


@pytest.mark.parametrize("make", FUSED_CFG)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_variables_of_a_step_update_in_one_loop_with_the_same_bits(make, dtype, monkeypatch):
    # one call of the rule's loop over the joined slots, gradients and values: the same
    # bits as the op path and as one loop call per variable (weight decay: per variable)
    from tapeflow.optimizers import base, rules
    w0, gs = _many(dtype)
    calls = []
    real = rules.kernel
    monkeypatch.setattr(rules, "kernel", lambda rule: (lambda *a: (calls.append(1), real(rule)(*a))[1]))
    one_loop = _apply_all(make, w0, gs)
    per_step = (len(calls) - 1) / len(gs)  # (build's warm-up call: one)
    assert per_step == (len(w0) if make().weight_decay else 1)
    ops = _apply_all(make, w0, gs, taped=True)
    monkeypatch.setattr(base._Slabs, "of", classmethod(lambda *a: None))
    calls.clear()
    per_variable = _apply_all(make, w0, gs)
    assert len(calls) == 1 + len(gs) * len(w0)
    for a, b, c in zip(one_loop, ops, per_variable):
        assert a.shape == b.shape and a.dtype == b.dtype
        assert a.tobytes() == b.tobytes() == c.tobytes()


def test_one_loop_keeps_assign_semantics(tmp_path):
    # Slots are updated in their slab only while nothing else holds it or their views; a
    # read (or a view of one) taken between steps keeps its value, and a value assigned
    # to a variable or a slot (or restored from a checkpoint) between steps is the one the
    # next step starts from. The results equal the op path's with the same assigns.
    make = lambda: O.Adam(0.01, amsgrad=True)  # noqa: E731
    w0, gs = _many(steps=7)
    held, ckpt = [], []

    def between(i, opt, ws):
        slots = [sv for _, _, sv in opt.slots()]
        if i == 0:                                   # a read of a slot
            r = slots[1].read_value()
            held.append((r, r.numpy().copy()))
        elif i == 1:                                 # a view of a slot's buffer, its read gone
            sub = slots[4].read_value().numpy()[1:]
            held.append((sub, sub.copy()))
        elif i == 2:                                 # a variable and a slot assigned
            ws[2].assign(ws[2] * 0.5)
            slots[3].assign(slots[3] + 1.0)
            r = ws[0].read_value()                   # a read of a variable
            held.append((r, r.numpy().copy()))
        elif i == 3:
            c = tf.train.Checkpoint(opt=opt, ws=ws)
            ckpt[:] = [c, c.write(str(tmp_path / "ckpt"))]
        elif i == 5:                                 # back to the values after step 3
            ckpt[0].restore(ckpt[1])

    fused = _apply_all(make, w0, gs, between=between)
    for h, value in held:
        assert np.asarray(h).tobytes() == value.tobytes()
    held.clear()
    ops = _apply_all(make, w0, gs, taped=True, between=between)
    for a, b in zip(fused, ops):
        assert a.tobytes() == b.tobytes()


def test_repeated_and_mixed_dtype_variables_update_one_by_one():
    # a variable listed twice gets both gradients in turn, as on the op path; variables of
    # two dtypes take the per-variable loops
    rs = np.random.default_rng(2)
    w0 = rs.standard_normal(3).astype(np.float32)
    g = [tf.constant(rs.standard_normal(3).astype(np.float32)) for _ in range(2)]
    res = []
    for taped in (False, True):
        opt, w = O.Adam(0.1), tf.Variable(w0)
        w64 = tf.Variable(w0.astype(np.float64))
        for _ in range(3):
            pairs = [(g[0], w), (g[1], w), (tf.cast(g[0], tf.float64), w64)]
            if taped:
                with tf.GradientTape():
                    opt.apply_gradients(pairs)
            else:
                opt.apply_gradients(pairs)
        res.append([w.numpy(), w64.numpy()] + [sv.numpy() for _, _, sv in opt.slots()])
    for a, b in zip(*res):
        assert a.tobytes() == b.tobytes()
