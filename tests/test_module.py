"""tapeflow.Module: attribute tracking, walk_variables paths, tracking hooks."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras
from tapeflow.module import walk_variables, TRACKING_HOOKS


def _v(x, **kw):
    return tf.Variable(np.asarray(x, np.float32), **kw)


class Inner(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.w = _v([1.0, 2.0])
        self.b = _v(0.0, trainable=False)


class Outer(tf.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.blocks = [Inner(), Inner()]
        self.table = {"x": _v(3.0), "y": [Inner()]}
        self.tup = (_v(4.0),)
        self.not_tracked = np.zeros(3)


def test_module_finds_variables_through_nesting_lists_dicts():
    m = Outer()
    assert m.name == "outer"
    vs = m.variables
    # 4 Inner modules x 2 + x + tup
    assert len(vs) == 10
    assert len(m.trainable_variables) == 6
    assert all(not v.trainable for v in m.non_trainable_variables)
    assert len(m.non_trainable_variables) == 4
    assert len(m.submodules) == 4
    assert all(isinstance(s, Inner) for s in m.submodules)
    # lazily added variables are found too
    m.extra = _v(5.0)
    assert len(m.variables) == 11


def test_shared_variables_counted_once():
    m = tf.Module()
    v = _v(1.0)
    m.a = v
    m.b = [v, v]
    m.c = {"k": v}
    assert len(m.variables) == 1
    assert [p for p, _ in walk_variables(m)] == ["a"]


def test_walk_variables_paths():
    m = Outer()
    paths = dict(walk_variables(m))
    assert set(paths) == {"blocks/0/b", "blocks/0/w", "blocks/1/b", "blocks/1/w", "inner/b", "inner/w",
                          "table/x", "table/y/0/b", "table/y/0/w", "tup/0"}
    assert paths["inner/w"] is m.inner.w
    assert paths["blocks/1/w"] is m.blocks[1].w
    assert paths["table/y/0/b"] is m.table["y"][0].b


class Agent:
    """A plain object holding models and optimizers (not a Module)."""

    def __init__(self):
        self.actor = keras.Sequential([keras.layers.Dense(3, name="l1"), keras.layers.Dense(1, name="l2")])
        self.critic = keras.Sequential([keras.layers.Dense(2)])
        self.actor_target = self.actor      # an alias: its variables are reported once
        self.actor_opt = keras.optimizers.Adam(1e-3)
        self.step = _v(0.0)
        self.rng = np.random.default_rng(0)


def test_walk_plain_objects_models_and_optimizers():
    ag = Agent()
    x = np.ones((2, 4), np.float32)
    ag.actor(x)
    ag.critic(x)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(ag.actor(x))
    tv = ag.actor.trainable_variables
    ag.actor_opt.apply_gradients(zip(tape.gradient(loss, tv), tv))
    pairs = list(walk_variables(ag))
    paths = [p for p, _ in pairs]
    assert paths[:4] == ["actor/layers/0/kernel", "actor/layers/0/bias", "actor/layers/1/kernel",
                         "actor/layers/1/bias"]
    assert "critic/layers/0/kernel" in paths
    assert not any(p.startswith("actor_target") for p in paths)
    assert "actor_opt/iterations" in paths and "actor_opt/learning_rate" in paths
    assert "actor_opt/slots/0/m" in paths and "actor_opt/slots/3/v" in paths
    assert "step" in paths
    assert len({id(v) for _, v in pairs}) == len(pairs)
    d = dict(pairs)
    assert d["actor_opt/slots/2/m"] is ag.actor_opt.get_slot(ag.actor.layers[1].kernel, "m")
    # a model's variables are its weights only (not its optimizer's)
    assert len(ag.actor.variables) == 4


def test_walk_layer_attribute_names_and_prefix():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.l1 = keras.layers.Dense(2)
            self.hidden = [keras.layers.Dense(2), keras.layers.Dense(2)]
            self.scale = tf.Variable(1.0)

        def call(self, x):
            for h in self.hidden:
                x = h(x)
            return self.l1(x) * self.scale

    n = Net()
    n(np.zeros((1, 3), np.float32))
    paths = [p for p, _ in walk_variables(n, prefix="net")]
    assert paths == ["net/l1/kernel", "net/l1/bias", "net/hidden/0/kernel", "net/hidden/0/bias",
                     "net/hidden/1/kernel", "net/hidden/1/bias", "net/scale"]


def test_tracking_hooks_attribute_weight_and_slot():
    seen = []

    def hook(owner, name, var):
        seen.append((type(owner).__name__, name, var))
    TRACKING_HOOKS.append(hook)
    try:
        m = tf.Module()
        v = _v(1.0)
        m.v = v
        m.vs = [_v(2.0)]
        d = keras.layers.Dense(2)
        d(np.zeros((1, 3), np.float32))
        opt = keras.optimizers.SGD(0.1, momentum=0.9)
        opt.apply_gradients([(tf.ones((3, 2)), d.kernel)])
    finally:
        TRACKING_HOOKS.remove(hook)
    names = [(o, n) for o, n, _ in seen]
    assert ("Module", "v") in names and ("Module", "vs/0") in names
    assert ("Dense", "kernel") in names and ("Dense", "bias") in names
    assert ("SGD", "iterations") in names and ("SGD", "learning_rate") in names
    assert ("SGD", "slots/0/momentum") in names
    slot = [var for o, n, var in seen if n == "slots/0/momentum"][0]
    assert slot is opt.get_slot(d.kernel, "momentum")


def test_cycles_are_safe():
    class Node:
        pass
    a, b = Node(), Node()
    a.other, b.other = b, a
    a.v = _v(1.0)
    b.v = _v(2.0)
    assert [p for p, _ in walk_variables(a)] == ["other/v", "v"] or \
        [p for p, _ in walk_variables(a)] == ["v", "other/v"]


def test_module_name_and_scope():
    m = Inner(name="enc")
    assert m.name == "enc"
    with m.name_scope as s:
        assert s.name == "enc"
    # as tf.Module: no repr of its own (TF 2.21 prints `<__main__.Inner object at 0x...>`)
    assert repr(m) == object.__repr__(m)


def test_variable_cache_sees_new_variables():
    m = tf.Module()
    m.layers = []
    assert m.variables == ()
    m.layers.append(_v(1.0))  # list mutated in place after the first walk: a new Variable invalidates the cache
    assert len(m.variables) == 1


@pytest.mark.parametrize("bad", [1, "x", None])
def test_walk_ignores_non_trackables(bad):
    m = tf.Module()
    m.x = bad
    assert list(walk_variables(m)) == []


def test_walk_skips_compiled_functions():
    class Agent(tf.Module):
        def __init__(self):
            super().__init__()
            self.model = keras.Sequential([keras.layers.Dense(2)])
            self.act_fn = tf.function(self.model)   # sorts before "model": must not claim its variables

    ag = Agent()
    ag.act_fn(tf.ones((1, 3)))
    assert [p for p, _ in walk_variables(ag)] == ["model/layers/0/kernel", "model/layers/0/bias"]


def test_cache_sees_prebuilt_layer_appended_to_a_list():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.blocks = []

        def call(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    d = keras.layers.Dense(2)
    d(np.ones((1, 2), np.float32))       # built before it joins the model
    n = Net()
    assert n.trainable_variables == []
    n.blocks.append(d)                   # an in-place list mutation, no new Variable
    assert len(n.trainable_variables) == 2
    assert n.layers == [d]


# -- the one walker and its bookkeeping policy ----------------------------------------------------

def test_bookkeeping_attributes_are_neither_tracked_nor_walked_and_merge_with_the_bases():
    seen = []

    def hook(owner, name, var):
        seen.append(name)

    class Base(tf.Module):
        _bookkeeping = frozenset({"_scratch"})

    class Child(Base):
        _bookkeeping = frozenset({"_other"})

    assert {"_scratch", "_other", "_name"} <= Child._bookkeeping
    TRACKING_HOOKS.append(hook)
    try:
        m = Child()
        m._scratch = [_v(1.0)]
        m._other = {"k": _v(2.0)}
        m.w = _v(3.0)
    finally:
        TRACKING_HOOKS.remove(hook)
    assert seen == ["w"]
    assert [p for p, _ in walk_variables(m)] == ["w"]
    assert m.variables == (m.w,)


def test_keras_subclass_bookkeeping_keeps_the_layer_s_own():
    class Noisy(keras.layers.Dense):
        _bookkeeping = frozenset({"_noise"})

        def __init__(self, units):
            super().__init__(units)
            self._noise = tf.Variable(np.zeros(2, np.float32))   # internal: not a weight

    layer = Noisy(2)
    layer(np.ones((1, 3), np.float32))
    assert [w.name for w in layer.weights] == [layer.kernel.name, layer.bias.name]
    assert [p for p, _ in walk_variables(layer)] == ["kernel", "bias"]


def test_variables_deep_inside_containers_are_found_and_reported_to_hooks():
    seen = []
    TRACKING_HOOKS.append(lambda o, n, v: seen.append(n))
    try:
        m = tf.Module()
        m.deep = {"a": [({"b": [_v(1.0)]},)]}
    finally:
        TRACKING_HOOKS.pop()
    assert seen == ["deep/a/0/0/b/0"]
    assert [p for p, _ in walk_variables(m)] == ["deep/a/0/0/b/0"]
    assert len(m.variables) == 1


def test_replacing_or_deleting_a_variable_updates_the_cached_walk():
    m = tf.Module()
    m.w = _v(1.0)
    assert len(m.variables) == 1
    m.w = None
    assert m.variables == ()
    m.w = _v(2.0)
    m.ws = [_v(3.0)]
    assert len(m.variables) == 2
    m.ws = "gone"
    assert len(m.variables) == 1
    del m.w
    assert m.variables == ()


@pytest.mark.parametrize("assign_after_walk", [False, True])
def test_prebuilt_layer_appended_to_an_empty_list(assign_after_walk):
    d = keras.layers.Dense(2)
    d(np.ones((1, 2), np.float32))     # its variables exist before any walk below
    m = tf.Module()
    if not assign_after_walk:
        m.blocks = []                  # walked (and cached) while empty
    assert m.variables == ()
    if assign_after_walk:
        m.blocks = []                  # a new container after the cached walk
    m.blocks.append(d)                 # an in-place append: no new Variable, no setattr
    assert len(m.variables) == 2


def test_module_variables_walk_variables_and_checkpoint_keys_agree():
    """One walker: the three views list the same variables in the same order
    (for objects without optimizers, where checkpoint keys are plain paths)."""
    from tapeflow.train.trackable import collect

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.enc = keras.Sequential([keras.layers.Dense(3), keras.layers.Dense(2)])
            self.heads = {"pi": keras.layers.Dense(2), "v": keras.layers.Dense(1)}
            self.pair = (keras.layers.Dense(1), tf.Variable(np.ones(2, np.float32)))
            self.temp = tf.Variable(1.0, trainable=False)

        def call(self, x):
            h = self.enc(x)
            return self.heads["pi"](h) + self.heads["v"](h) + self.pair[0](h) * self.temp

    n = Net()
    n(np.ones((1, 4), np.float32))
    walked = list(walk_variables(n))
    keys = list(collect({"": n}).items())
    assert [p for p, _ in walked] == [k for k, _ in keys]
    assert [id(v) for _, v in walked] == [id(v) for _, v in keys] == [id(v) for v in n.variables]
    # stable names: attribute order (Keras: assignment order), list index, dict key
    assert [p for p, _ in walked] == [
        "enc/layers/0/kernel", "enc/layers/0/bias", "enc/layers/1/kernel", "enc/layers/1/bias",
        "heads/pi/kernel", "heads/pi/bias", "heads/v/kernel", "heads/v/bias",
        "pair/0/kernel", "pair/0/bias", "pair/1", "temp"]
    assert n.non_trainable_variables == [n.temp]


def test_submodules_and_flatten_layers_use_the_same_walk():
    class Agent(tf.Module):
        def __init__(self):
            super().__init__()
            self.q = keras.Sequential([keras.layers.Dense(2), keras.layers.Dense(1)])
            self.target = self.q                   # an alias: listed once
            self.opt = keras.optimizers.Adam()

    ag = Agent()
    subs = ag.submodules
    assert len(subs) == len({id(s) for s in subs}) == 4
    assert subs[0] is ag.opt and subs[1] is ag.q     # attributes sorted by name, depth first
    assert ag.q._flatten_layers() == [ag.q] + ag.q.layers
    assert ag.q._flatten_layers(include_self=False, recursive=False) == ag.q.layers


def test_layers_of_a_functional_model_are_named_by_their_name_in_error_paths():
    class Boom(keras.layers.Layer):
        armed = False

        def call(self, x):
            if self.armed:
                raise ValueError("boom")
            return x

    x = keras.Input((4,))
    boom = Boom()
    m = keras.Model(x, boom(keras.layers.Dense(3)(x)), name="fm")
    boom.armed = True
    # (the model's internal layer list is bookkeeping: it does not name the path)
    with pytest.raises(ValueError, match=r"in layer 'fm/boom(_\d+)?' "):
        m(np.ones((1, 4), np.float32))


def test_no_object_setattr_workarounds_left():
    """The bookkeeping policy replaced the ``object.__setattr__`` work-arounds in
    every Module subclass (Module itself and Checkpoint's own __setattr__ aside)."""
    import pathlib
    root = pathlib.Path(tf.__file__).parent
    offenders = [str(p.relative_to(root)) for p in root.rglob("*.py")
                 if "object.__setattr__" in p.read_text() and p.name not in ("module.py", "checkpoint.py")]
    assert offenders == []


def test_hooks_see_the_new_variable_in_cached_walks():
    m = tf.Module()
    m.a = _v(1.0)
    assert len(m.variables) == 1          # cached now
    counts = []
    TRACKING_HOOKS.append(lambda o, n, v: counts.append(len(m.variables)))
    try:
        m.b = _v(2.0)
        m.c = (_v(3.0),)
    finally:
        TRACKING_HOOKS.pop()
    assert counts == [2, 3]
