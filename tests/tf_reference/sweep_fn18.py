"""A side-by-side sweep of GradientTape / tf.function / AutoGraph / Variable semantics (wave 18):
~200 small programs, each printing one canonical outcome line (values to 5 digits, dtypes,
shapes, trace counts from a Python counter in the body, or the exception class and message
gist), run under TF 2.21 and under tapeflow, then diffed.

    cd /tmp && /work/main/.venv-peers/bin/python $WT/tests/tf_reference/sweep_fn18.py tf > tf.txt
    cd /tmp && PYTHONPATH=$WT /work/main/.venv/bin/python $WT/tests/tf_reference/sweep_fn18.py tp > tp.txt
    python3 $WT/tests/tf_reference/sweep_fn18.py diff tf.txt tp.txt     # WT: this checkout

A case marked `both` takes `F` and runs twice: F = identity (eager) and F = tf.function (its
compute wrapped), so compiled and eager must agree as well. Extra arguments after tf/tp run only
the named cases; TB=1 prints tracebacks. Not a test (CI has no TF): the differences it found
are fixed with tests in tests/test_sweep_fn18.py or listed in docs/differences.md.
"""
import collections
import contextlib
import dataclasses
import io
import os
import sys
import traceback
import warnings

import numpy as np

MODE = sys.argv[1]
if MODE == "diff":
    def _load(p):
        return dict(l.split(": ", 1) for l in open(p).read().splitlines() if l.startswith("## "))

    def _cls(s):
        return s.split(":", 1)[0][4:] if s.startswith("EXC ") else None

    a, b = _load(sys.argv[2]), _load(sys.argv[3])
    n = 0
    for k in b:
        x, y = a.get(k, "MISSING"), b[k]
        if x == y:
            continue
        # an exception matches when TF's class is among tapeflow's bases (the MRO after '|')
        if x.startswith("EXC ") and y.startswith("EXC "):
            bases = y.split(" |", 1)[1].split(" ||")[0].split(",") if " |" in y else [_cls(y)]
            if _cls(x) in bases:
                continue
        n += 1
        print(k, "\n  TF:", x[:400], "\n  TP:", y[:400])
    print(f"{n} differences in {len(b)} cases")
    sys.exit(0)
if MODE == "tf":
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    import tensorflow as tf
else:
    import tapeflow as tf
ONLY = sys.argv[2:]
warnings.simplefilter("ignore")


def fmt(v, d=0):
    if d > 5:
        return "..."
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {fmt(v[k], d + 1)}" for k in sorted(v, key=str)) + "}"
    if hasattr(v, "_fields"):
        return type(v).__name__ + "(" + ", ".join(fmt(x, d + 1) for x in v) + ")"
    if isinstance(v, (list, tuple)):
        s = ", ".join(fmt(x, d + 1) for x in v)
        return ("[%s]" if isinstance(v, list) else "(%s)") % s
    if isinstance(v, (bool, str, type(None))):
        return repr(v)
    if isinstance(v, int):
        return f"int {v}"
    if isinstance(v, float):
        return f"float {v:.5g}"
    if type(v).__name__ == "IndexedSlices":
        v = tf.convert_to_tensor(v)
    kind = "T"
    if isinstance(v, tf.Variable):
        kind = "V"
        v = v.read_value() if v.shape is not None else v
    try:
        a = np.asarray(v)
    except Exception:
        return type(v).__name__
    if a.dtype == object:
        return type(v).__name__
    if a.dtype.kind == "f":
        vals = ["0" if x == 0 else f"{x:.5g}" for x in a.ravel()[:12].tolist()]
    else:
        vals = [str(x) for x in a.ravel()[:12].tolist()]
    return f"{kind}:{a.dtype}{list(a.shape)}[{', '.join(vals)}{'...' if a.size > 12 else ''}]"


CASES = []


def case(f):
    CASES.append((f.__name__, f))
    return f


def ident(f=None, **kw):
    return f if f is not None else (lambda g: g)


def both(f):
    """Run f(F) with F = identity (eager) and F = tf.function."""
    CASES.append((f.__name__ + "[eager]", lambda: f(ident)))
    CASES.append((f.__name__ + "[fn]", lambda: f(tf.function)))
    return f


def c(x, dt="float32"):
    return tf.constant(np.asarray(x, dtype=dt))


X3 = [1.0, -2.0, 3.0]

# ================================================================ GradientTape basics


@both
def tape_square(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        return t.gradient(y, x)
    return g(c(X3))


@case
def tape_second_call_nonpersistent():
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.gradient(y, x)
    return t.gradient(y, x)


@case
def tape_persistent_twice():
    x = c(2.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = y * x
    return t.gradient(y, x), t.gradient(z, x)


@case
def tape_watch_int():
    x = c(2, "int32")
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient(y, x)


@case
def tape_watch_int_variable():
    v = tf.Variable(3)
    with tf.GradientTape() as t:
        y = v * 2
    return t.gradient(y, v)


@case
def tape_constant_unwatched():
    x = c(2.0)
    with tf.GradientTape() as t:
        y = x * x
    return t.gradient(y, x)


@case
def tape_watch_python_float():
    with tf.GradientTape() as t:
        t.watch(2.0)
    return "ok"


@case
def tape_watch_numpy():
    with tf.GradientTape() as t:
        t.watch(np.float32(2.0))
    return "ok"


@case
def tape_watch_list():
    x, y = c(2.0), c(3.0)
    with tf.GradientTape() as t:
        t.watch([x, y])
        z = x * y
    return t.gradient(z, [x, y])


@case
def tape_watch_accessed_false():
    v = tf.Variable(2.0)
    w = tf.Variable(3.0)
    with tf.GradientTape(watch_accessed_variables=False) as t:
        t.watch(v)
        y = v * w
    return t.gradient(y, [v, w])


@case
def tape_watched_variables():
    v = tf.Variable(2.0, name="a")
    w = tf.Variable(3.0, name="b")
    with tf.GradientTape() as t:
        y = v * w
    return len(t.watched_variables())


@case
def tape_trainable_false():
    v = tf.Variable(2.0, trainable=False)
    with tf.GradientTape() as t:
        y = v * v
    return t.gradient(y, v)


@case
def tape_trainable_false_watched():
    v = tf.Variable(2.0, trainable=False)
    with tf.GradientTape() as t:
        t.watch(v)
        y = v * v
    return t.gradient(y, v)


@case
def tape_stop_recording():
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
        with t.stop_recording():
            z = y * x
        w = z + y
    return t.gradient(w, x)


@case
def tape_reset():
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
        t.reset()
        t.watch(x)
        z = x * 3.0
    return t.gradient(z + y, x)


@case
def tape_gradient_inside_context():
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
        g = t.gradient(y, x)
    return g


@case
def tape_gradient_inside_context_persistent():
    x = c(2.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        g = t.gradient(y, x)
    return g


@both
def tape_list_targets(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            a, b = x * x, x * 3.0
        return t.gradient([a, b], x)
    return g(c(X3))


@both
def tape_dict_sources(F):
    @F
    def g(x, y):
        with tf.GradientTape() as t:
            t.watch([x, y])
            z = tf.reduce_sum(x * y)
        return t.gradient(z, {"a": x, "b": y})
    return g(c(X3), c([2.0, 2.0, 2.0]))


@both
def tape_nested_sources(F):
    @F
    def g(x, y):
        with tf.GradientTape() as t:
            t.watch([x, y])
            z = tf.reduce_sum(x * y * y)
        return t.gradient(z, [x, (y, {"k": x})])
    return g(c(X3), c([2.0, 2.0, 2.0]))


@both
def tape_dict_targets(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            d = {"a": x * x, "b": [x * 2.0]}
        return t.gradient(d, x)
    return g(c(X3))


@both
def tape_output_gradients(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        return t.gradient(y, x, output_gradients=c([1.0, 2.0, 3.0]))
    return g(c(X3))


@case
def tape_output_gradients_bad_shape():
    x = c(X3)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient(y, x, output_gradients=c([1.0, 2.0]))


@both
def tape_output_gradients_list(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            a, b = x * x, x * 3.0
        return t.gradient([a, b], x, output_gradients=[c([1.0, 1.0, 1.0]), None])
    return g(c(X3))


@both
def tape_unconnected_zero(F):
    @F
    def g(x, y):
        with tf.GradientTape() as t:
            t.watch([x, y])
            z = x * x
        return t.gradient(z, [x, y], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return g(c(X3), c([[1.0, 2.0]]))


@case
def tape_unconnected_string():
    x, y = c(1.0), c(2.0)
    with tf.GradientTape() as t:
        t.watch([x, y])
        z = x * x
    return t.gradient(z, [x, y], unconnected_gradients="zero")


@case
def tape_unconnected_bad():
    x, y = c(1.0), c(2.0)
    with tf.GradientTape() as t:
        t.watch([x, y])
        z = x * x
    return t.gradient(z, [x, y], unconnected_gradients="bogus")


@case
def tape_unconnected_zero_int():
    x, y = c(1.0), c(2, "int32")
    with tf.GradientTape() as t:
        t.watch([x, y])
        z = x * x
    return t.gradient(z, [x, y], unconnected_gradients=tf.UnconnectedGradients.ZERO)


@both
def tape_cast_to_int(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.cast(tf.cast(x, tf.int32), tf.float32) * x
        return t.gradient(y, x)
    return g(c(X3))


@both
def tape_cast_only_int(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.cast(x, tf.int32)
        return t.gradient(y, x)
    return g(c(X3))


@both
def tape_cast_f64(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.cast(x, tf.float64) ** 2
        return t.gradient(y, x)
    return g(c(X3))


@case
def tape_through_assign():
    v = tf.Variable(1.0)
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        v.assign(x * 3.0)
        y = v * 1.0
    return t.gradient(y, x)


@case
def tape_through_assign_var():
    v = tf.Variable(1.0)
    with tf.GradientTape() as t:
        v.assign(v * 3.0)
        y = v * 2.0
    return t.gradient(y, v)


@both
def tape_stop_gradient(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.stop_gradient(x * x) * x
        return t.gradient(y, x)
    return g(c(X3))


@both
def tape_identity(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.identity(x) * 2.0
        return t.gradient(y, x)
    return g(c(X3))


@both
def tape_gather(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.gather(x, [0, 0, 2])
        return t.gradient(y, x)
    return g(c(X3))


@case
def tape_gather_variable():
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.gather(v, [2, 0, 2]))
    return t.gradient(y, v)


@both
def tape_where(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.where(x > 0, x * x, -x)
        return t.gradient(y, x)
    return g(c(X3))


@both
def tape_where_nan(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.where(x > 0, tf.sqrt(x), 0.0)
        return t.gradient(y, x)
    return g(c([-1.0, 4.0]))


@both
def tape_maximum_tie(F):
    @F
    def g(x, y):
        with tf.GradientTape() as t:
            t.watch([x, y])
            z = tf.maximum(x, y)
        return t.gradient(z, [x, y])
    return g(c([1.0, 2.0, 3.0]), c([1.0, 1.0, 4.0]))


@both
def tape_minimum_tie(F):
    @F
    def g(x, y):
        with tf.GradientTape() as t:
            t.watch([x, y])
            z = tf.minimum(x, y)
        return t.gradient(z, [x, y])
    return g(c([1.0, 2.0, 3.0]), c([1.0, 1.0, 4.0]))


@both
def tape_reduce_max_tie(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            z = tf.reduce_max(x)
        return t.gradient(z, x)
    return g(c([3.0, 1.0, 3.0]))


@both
def tape_abs_zero(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            z = tf.abs(x)
        return t.gradient(z, x)
    return g(c([-1.0, 0.0, 2.0]))


@both
def tape_relu_zero(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            z = tf.nn.relu(x)
        return t.gradient(z, x)
    return g(c([-1.0, 0.0, 2.0]))


@both
def tape_sqrt_zero(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            z = tf.sqrt(x)
        return t.gradient(z, x)
    return g(c([0.0, 4.0]))


@both
def tape_nonscalar_target(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            z = tf.reshape(x, [3, 1]) * x
        return t.gradient(z, x)
    return g(c(X3))


@case
def tape_unused_variable():
    v = tf.Variable(1.0)
    w = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = v * 3.0
    return t.gradient(y, [v, w])


@case
def tape_target_is_source():
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
    return t.gradient(x, x)


@case
def tape_target_none():
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
    return t.gradient(None, x)


@case
def tape_source_none():
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient(y, None)


@case
def tape_source_python_float():
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient(y, 2.0)


@case
def tape_int_target():
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.cast(x, tf.int32) * 2
    return t.gradient(y, x)


@case
def tape_f64():
    x = c([1.0, 2.0], "float64")
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(x ** 3)
    return t.gradient(y, x)


@case
def tape_complex_target_error():
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.complex(x, x)
    return t.gradient(y, x)


@case
def tape_variable_list_dup():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = v * v
    return t.gradient(y, [v, v])


@case
def tape_variable_read_value():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = v.read_value() * 3.0
    return t.gradient(y, v)


@case
def tape_variable_value():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = v.value() * 3.0
    return t.gradient(y, v)


@case
def tape_variable_convert():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = tf.convert_to_tensor(v) * 3.0
    return t.gradient(y, v)


@case
def tape_variable_read_before_tape():
    v = tf.Variable(2.0)
    r = v * 1.0
    with tf.GradientTape() as t:
        y = r * 3.0
    return t.gradient(y, v)


@case
def tape_variable_getitem():
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as t:
        y = v[1] * 5.0
    return t.gradient(y, v)


@case
def tape_assign_add_then_use():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        v.assign_add(1.0)
        y = v * v
    return t.gradient(y, v)


@case
def tape_integer_variable_source():
    v = tf.Variable([1, 2])
    with tf.GradientTape() as t:
        t.watch(v)
        y = v * 2
    return t.gradient(y, v)


@case
def tape_gradient_twice_persistent_after_exit_new_ops():
    x = c(2.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    z = y * x  # not recorded
    return t.gradient(z, x)


@case
def tape_del_tape_persistent():
    x = c(3.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    g1 = t.gradient(y, x)
    del t
    return g1


@case
def tape_reentry():
    x = c(3.0)
    t = tf.GradientTape()
    with t:
        t.watch(x)
        y = x * x
    with t:
        z = y * x
    return t.gradient(z, x)


@case
def tape_reentry_persistent():
    x = c(3.0)
    t = tf.GradientTape(persistent=True)
    with t:
        t.watch(x)
        y = x * x
    with t:
        z = y * x
    return t.gradient(z, x)


# ================================================================ jacobians / higher order


@both
def jac_basic(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        return t.jacobian(y, x)
    return g(c(X3))


@both
def jac_no_pfor(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reshape(x, [3, 1]) * x
        return t.jacobian(y, x, experimental_use_pfor=False)
    return g(c(X3))


@both
def jac_matrix(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.matmul(x, x)
        return t.jacobian(y, x)
    return g(c([[1.0, 2.0], [3.0, 4.0]]))


@both
def jac_unconnected(F):
    @F
    def g(x, z):
        with tf.GradientTape() as t:
            t.watch([x, z])
            y = x * 2.0
        return t.jacobian(y, z)
    return g(c(X3), c([1.0, 2.0]))


@both
def jac_unconnected_zero(F):
    @F
    def g(x, z):
        with tf.GradientTape() as t:
            t.watch([x, z])
            y = x * 2.0
        return t.jacobian(y, z, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return g(c(X3), c([1.0, 2.0]))


@both
def jac_list_sources(F):
    @F
    def g(x, z):
        with tf.GradientTape() as t:
            t.watch([x, z])
            y = x * tf.reduce_sum(z)
        return t.jacobian(y, [x, z])
    return g(c(X3), c([1.0, 2.0]))


@case
def jac_scalar_target():
    x = c(X3)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(x * x)
    return t.jacobian(y, x)


@case
def jac_nonpersistent_twice():
    x = c(X3)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.jacobian(y, x)
    return t.jacobian(y, x)


@both
def batch_jac(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x * tf.constant([1.0, 2.0])
        return t.batch_jacobian(y, x)
    return g(c([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))


@both
def batch_jac_no_pfor(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.matmul(x, tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        return t.batch_jacobian(y, x, experimental_use_pfor=False)
    return g(c([[1.0, 2.0], [3.0, 4.0]]))


@case
def batch_jac_bad_batch():
    x = c([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reshape(x, [4])
    return t.batch_jacobian(y, x)


@case
def batch_jac_mismatched_batch():
    x = c([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reshape(x, [1, 4])
    return t.batch_jacobian(y, x)


@both
def second_order(F):
    @F
    def g(x):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = x * x * x
            d = t1.gradient(y, x)
        return d, t2.gradient(d, x)
    return g(c(X3))


@both
def hvp(F):
    @F
    def g(x, v):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = tf.reduce_sum(tf.sin(x) * x)
            d = t1.gradient(y, x)
            dv = tf.reduce_sum(d * v)
        return t2.gradient(dv, x)
    return g(c(X3), c([1.0, 0.0, 2.0]))


@both
def hessian_via_jacobian(F):
    @F
    def g(x):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = tf.reduce_sum(x * x * x)
            d = t1.gradient(y, x)
        return t2.jacobian(d, x)
    return g(c([1.0, 2.0]))


@case
def second_order_inner_persistent_outer_gradient_of_none():
    x = c(2.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = x * 3.0
        d = t1.gradient(y, x)
    return t2.gradient(d, x)


@case
def third_order():
    x = c(2.0)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = x ** 4
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    return d1, d2, t3.gradient(d2, x)


@case
def nested_inner_stop_recording():
    x = c(2.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x * x
            z = y * x
    return inner.gradient(z, x), outer.gradient(z, x)


# ================================================================ custom_gradient / recompute


@tf.custom_gradient
def clip_grad(x):
    def grad(dy):
        return tf.clip_by_value(dy, -0.5, 0.5)
    return tf.identity(x), grad


@both
def custom_grad_basic(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = clip_grad(x) * 3.0
        return y, t.gradient(y, x)
    return g(c(X3))


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad


@both
def custom_grad_log1pexp(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = log1pexp(x)
        return t.gradient(y, x)
    return g(c([0.0, 10.0, 100.0]))


@tf.custom_gradient
def two_in(x, y):
    def grad(dz):
        return dz * 2.0, dz * 3.0
    return x * y, grad


@both
def custom_grad_two_inputs(F):
    @F
    def g(x, y):
        with tf.GradientTape() as t:
            t.watch([x, y])
            z = two_in(x, y)
        return t.gradient(z, [x, y])
    return g(c(1.0), c(5.0))


@tf.custom_gradient
def none_grad(x, y):
    def grad(dz):
        return dz, None
    return x + y, grad


@both
def custom_grad_none_for_input(F):
    @F
    def g(x, y):
        with tf.GradientTape() as t:
            t.watch([x, y])
            z = none_grad(x, y)
        return t.gradient(z, [x, y])
    return g(c(1.0), c(5.0))


@tf.custom_gradient
def wrong_count(x, y):
    def grad(dz):
        return dz
    return x + y, grad


@case
def custom_grad_wrong_count():
    x, y = c(1.0), c(2.0)
    with tf.GradientTape() as t:
        t.watch([x, y])
        z = wrong_count(x, y)
    return t.gradient(z, [x, y])


CG_VAR = None


def _cg_var():
    global CG_VAR
    if CG_VAR is None:
        CG_VAR = tf.Variable(2.0)
    return CG_VAR


@tf.custom_gradient
def with_var(x):
    v = _cg_var()

    def grad(dy, variables=None):
        return dy * v, [dy * x * 10.0]
    return x * v, grad


@case
def custom_grad_with_variable():
    x = c(3.0)
    v = _cg_var()
    with tf.GradientTape() as t:
        t.watch(x)
        y = with_var(x)
    return t.gradient(y, [x, v])


@tf.custom_gradient
def with_var_no_kw(x):
    v = _cg_var()

    def grad(dy):
        return dy * v
    return x * v, grad


@case
def custom_grad_variable_no_variables_kw():
    x = c(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = with_var_no_kw(x)
    return t.gradient(y, x)


@tf.custom_gradient
def multi_out(x):
    def grad(da, db):
        return da * 2.0 + (0.0 if db is None else db * 5.0)
    return (x * 2.0, x * 5.0), grad


@case
def custom_grad_multi_out_one_used():
    x = c(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        a, b = multi_out(x)
    return t.gradient(a, x)


@case
def custom_grad_multi_out_both():
    x = c(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        a, b = multi_out(x)
    return t.gradient(a + b, x)


@tf.custom_gradient
def cg_second(x):
    y = x * x

    def grad(dy):
        return dy * 2.0 * x
    return y, grad


@case
def custom_grad_second_order():
    x = c(3.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = cg_second(x)
        d = t1.gradient(y, x)
    return d, t2.gradient(d, x)


@tf.custom_gradient
def cg_kw(x, scale=2.0):
    def grad(dy):
        return dy * scale
    return x * scale, grad


@case
def custom_grad_kwarg():
    x = c(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = cg_kw(x, scale=4.0)
    return y, t.gradient(y, x)


@case
def custom_grad_upstream_none():
    x = c(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        a, b = multi_out(x)
    return t.gradient(b, x)


@both
def recompute_grad(F):
    def blk(x):
        return tf.sin(x) * x
    rb = tf.recompute_grad(blk)

    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(rb(x))
        return y, t.gradient(y, x)
    return g(c(X3))


@case
def forward_accumulator():
    x = c(X3)
    with tf.autodiff.ForwardAccumulator(x, c([1.0, 0.0, 1.0])) as acc:
        y = x * x
    return acc.jvp(y)


@case
def forward_accumulator_unconnected():
    x = c(X3)
    with tf.autodiff.ForwardAccumulator(x, c([1.0, 0.0, 1.0])) as acc:
        y = c(1.0) * 2.0
    return acc.jvp(y)


@case
def grad_tf_gradients_eager():
    x = c(1.0)
    return tf.gradients(x * x, x)


# ================================================================ tf.function: retracing


def counted(**kw):
    n = [0]

    def deco(fn):
        def body(*a, **k):
            n[0] += 1
            return fn(*a, **k)
        body.__name__ = fn.__name__
        return tf.function(body, **kw), n
    return deco


@case
def retrace_python_scalars():
    f, n = counted()(lambda x: x * 2)
    r = [f(1), f(2), f(1), f(1.0), f(True)]
    return r, n[0]


@case
def retrace_tensors_same_shape():
    f, n = counted()(lambda x: x * 2)
    r = [f(c(1.0)), f(c(2.0)), f(c(3.0))]
    return r, n[0]


@case
def retrace_new_shape():
    f, n = counted()(lambda x: x * 2)
    r = [f(c([1.0])), f(c([1.0, 2.0])), f(c([1.0, 2.0, 3.0])), f(c([[1.0]]))]
    return r, n[0], f.experimental_get_tracing_count()


@case
def retrace_new_dtype():
    f, n = counted()(lambda x: x * 2)
    r = [f(c(1.0)), f(c(1, "int32")), f(c(1.0, "float64")), f(c(2.0))]
    return r, n[0]


@case
def retrace_reduce_retracing():
    f, n = counted(reduce_retracing=True)(lambda x: x * 2)
    r = [f(c([1.0])), f(c([1.0, 2.0])), f(c([1.0, 2.0, 3.0])), f(c([1.0, 2.0, 3.0, 4.0]))]
    return r, n[0]


@case
def retrace_input_signature_none():
    f, n = counted(input_signature=[tf.TensorSpec([None], tf.float32)])(lambda x: x * 2)
    r = [f(c([1.0])), f(c([1.0, 2.0]))]
    return r, n[0]


@case
def input_signature_wrong_dtype():
    f, n = counted(input_signature=[tf.TensorSpec([None], tf.float32)])(lambda x: x * 2)
    return f(c([1, 2], "int32"))


@case
def input_signature_wrong_rank():
    f, n = counted(input_signature=[tf.TensorSpec([None], tf.float32)])(lambda x: x * 2)
    return f(c([[1.0]]))


@case
def input_signature_wrong_dim():
    f, n = counted(input_signature=[tf.TensorSpec([2], tf.float32)])(lambda x: x * 2)
    return f(c([1.0, 2.0, 3.0]))


@case
def input_signature_python_list():
    f, n = counted(input_signature=[tf.TensorSpec([None], tf.float32)])(lambda x: x * 2)
    return f([1.0, 2.0]), n[0]


@case
def input_signature_python_int_to_float():
    f, n = counted(input_signature=[tf.TensorSpec([], tf.float32)])(lambda x: x * 2)
    return f(3), n[0]


@case
def input_signature_numpy_f64():
    f, n = counted(input_signature=[tf.TensorSpec([], tf.float32)])(lambda x: x * 2)
    return f(np.float64(3.0)), n[0]


@case
def input_signature_too_many_args():
    f, n = counted(input_signature=[tf.TensorSpec([], tf.float32)])(lambda x: x * 2)
    return f(c(1.0), c(2.0))


@case
def input_signature_kwarg():
    f, n = counted(input_signature=[tf.TensorSpec([], tf.float32)])(lambda x: x * 2)
    return f(x=c(1.0)), n[0]


@case
def input_signature_unknown_rank():
    f, n = counted(input_signature=[tf.TensorSpec(None, tf.float32)])(lambda x: tf.reduce_sum(x))
    return f(c(1.0)), f(c([[1.0, 2.0]])), n[0]


@case
def input_signature_shape_inside():
    seen = []

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        seen.append(x.shape.as_list())
        return tf.shape(x)
    return f(c(np.ones((2, 3)))), seen


@case
def retrace_kw_vs_positional():
    f, n = counted()(lambda x, y=1.0: x * y)
    r = [f(c(1.0), c(2.0)), f(c(1.0), y=c(2.0)), f(x=c(1.0), y=c(2.0))]
    return r, n[0]


@case
def retrace_default_arg():
    f, n = counted()(lambda x, y=3.0: x * y)
    r = [f(c(1.0)), f(c(1.0), 3.0), f(c(1.0), 4.0)]
    return r, n[0]


@case
def retrace_list_of_tensors():
    f, n = counted()(lambda xs: tf.add_n(xs))
    r = [f([c(1.0), c(2.0)]), f([c(3.0), c(4.0)]), f([c(1.0), c(2.0), c(3.0)])]
    return r, n[0]


@case
def retrace_dict_of_tensors():
    f, n = counted()(lambda d: d["a"] + d["b"])
    r = [f({"a": c(1.0), "b": c(2.0)}), f({"b": c(2.0), "a": c(5.0)}), f({"a": c(1.0), "b": c(2.0), "z": c(0.0)})]
    return r, n[0]


PT = collections.namedtuple("PT", ["x", "y"])


@case
def retrace_namedtuple():
    f, n = counted()(lambda p: PT(p.y, p.x * 2))
    r = [f(PT(c(1.0), c(2.0))), f(PT(c(3.0), c(4.0)))]
    return r, n[0]


@dataclasses.dataclass
class DC:
    a: object
    b: object


@case
def retrace_dataclass():
    f, n = counted()(lambda d: d.a + d.b)
    r = [f(DC(c(1.0), c(2.0))), f(DC(c(3.0), c(4.0)))]
    return r, n[0]


@case
def retrace_variable_arg():
    f, n = counted()(lambda v: v * 2)
    v1, v2 = tf.Variable(1.0), tf.Variable(2.0)
    r = [f(v1), f(v2), f(tf.Variable(3.0)), f(tf.Variable([1.0, 2.0]))]
    return r, n[0]


@case
def retrace_variable_arg_assign():
    @tf.function
    def f(v):
        v.assign_add(1.0)
        return v.read_value()
    v1, v2 = tf.Variable(1.0), tf.Variable(10.0)
    return f(v1), f(v2), f(v1), v1, v2


@case
def retrace_numpy_arg():
    f, n = counted()(lambda x: x * 2)
    r = [f(np.array([1.0, 2.0], np.float32)), f(np.array([3.0, 4.0], np.float32)), f(np.array([1.0, 2.0]))]
    return r, n[0]


@case
def retrace_numpy_scalar():
    f, n = counted()(lambda x: x * 2)
    r = [f(np.float32(1.0)), f(np.float32(2.0))]
    return r, n[0]


@case
def retrace_string_arg():
    f, n = counted()(lambda x, mode: x * 2 if mode == "double" else x)
    r = [f(c(1.0), "double"), f(c(1.0), "same"), f(c(2.0), "double")]
    return r, n[0]


@case
def retrace_none_arg():
    f, n = counted()(lambda x, y: x if y is None else x + y)
    r = [f(c(1.0), None), f(c(1.0), c(2.0)), f(c(3.0), None)]
    return r, n[0]


@case
def retrace_object_arg():
    class O:
        k = 2.0
    o = O()
    f, n = counted()(lambda x, o: x * o.k)
    r = [f(c(1.0), o)]
    O.k = 5.0
    r.append(f(c(1.0), o))
    return r, n[0]


@case
def tracing_count_before_call():
    f = tf.function(lambda x: x)
    return f.experimental_get_tracing_count()


@case
def print_at_trace_only():
    buf = []

    @tf.function
    def f(x):
        buf.append("py")
        return x + 1
    f(c(1.0))
    f(c(2.0))
    return buf


@case
def tf_print_each_call():
    @tf.function
    def f(x):
        tf.print("v", x)
        return x + 1
    f(c(1.0))
    f(c(2.0))
    return "ok"


@case
def variable_created_twice():
    @tf.function
    def f(x):
        v = tf.Variable(1.0)
        return v + x
    return f(c(1.0))


@case
def variable_created_once_reused():
    holder = []

    @tf.function
    def f(x):
        if not holder:
            holder.append(tf.Variable(1.0))
        holder[0].assign_add(x)
        return holder[0].read_value()
    return f(c(1.0)), f(c(2.0)), f(c(3.0))


@case
def variable_created_on_second_trace():
    holder = []

    @tf.function
    def f(x):
        holder.append(tf.Variable(1.0))
        return holder[-1] + x
    return f(c(1.0)), f(c([1.0, 2.0]))


@case
def variable_created_on_second_trace_new_shape():
    holder = []

    @tf.function
    def f(x):
        if len(holder) < 2 and x.shape.rank == 1:
            holder.append(tf.Variable(1.0))
        return x * 2
    return f(c(1.0)), f(c([1.0, 2.0]))


@both
def assign_read_after(F):
    v = tf.Variable(1.0)

    @F
    def g(x):
        v.assign(x)
        a = v.read_value()
        v.assign(a * 10.0)
        return a, v.read_value(), v * 1.0
    return g(c(3.0)), v


@both
def assign_add_return(F):
    v = tf.Variable(1.0)

    @F
    def g(x):
        r = v.assign_add(x)
        return r * 1.0, v.assign_sub(c(0.5)) * 1.0
    return g(c(3.0)), v


@both
def assign_return_chain(F):
    v = tf.Variable([1.0, 2.0])

    @F
    def g():
        return v.assign([5.0, 6.0]).assign_add([1.0, 1.0]) * 1.0
    return g(), v


@both
def assign_read_value_false(F):
    v = tf.Variable(1.0)

    @F
    def g():
        return v.assign(4.0, read_value=False)
    r = g()
    return r is None or type(r).__name__, v


@both
def assign_order_between_vars(F):
    a = tf.Variable(1.0)
    b = tf.Variable(2.0)

    @F
    def g():
        a.assign(b)
        b.assign(a + 10.0)
        return a.read_value(), b.read_value()
    return g()


@both
def variable_read_before_assign_in_fn(F):
    v = tf.Variable(1.0)

    @F
    def g():
        old = v * 1.0
        v.assign(5.0)
        return old, v * 1.0
    return g()


@case
def method_per_instance():
    class M:
        def __init__(self, k):
            self.k = k
            self.n = 0

        @tf.function
        def f(self, x):
            self.n += 1
            return x * self.k
    a, b = M(2.0), M(3.0)
    r = [a.f(c(1.0)), b.f(c(1.0)), a.f(c(2.0)), b.f(c(2.0))]
    return r, a.n, b.n


@case
def method_module_variable():
    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(1.0)

        @tf.function
        def f(self, x):
            self.v.assign_add(x)
            return self.v.read_value()
    a, b = M(), M()
    return a.f(c(1.0)), b.f(c(5.0)), a.f(c(1.0))


@case
def concrete_function_call():
    f = tf.function(lambda x: x * 2)
    cf = f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    return cf(c([1.0, 2.0]))


@case
def concrete_function_wrong_shape():
    f = tf.function(lambda x: x * 2)
    cf = f.get_concrete_function(tf.TensorSpec([2], tf.float32))
    return cf(c([1.0, 2.0, 3.0]))


@case
def concrete_function_wrong_dtype():
    f = tf.function(lambda x: x * 2)
    cf = f.get_concrete_function(tf.TensorSpec([2], tf.float32))
    return cf(c([1, 2], "int32"))


@case
def concrete_function_from_tensor():
    f = tf.function(lambda x: x * 2)
    cf = f.get_concrete_function(c([1.0, 2.0]))
    return cf(c([3.0, 4.0])), cf(c([3.0, 4.0, 5.0]))


@case
def concrete_function_counts():
    f, n = counted()(lambda x: x * 2)
    f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    f(c([1.0, 2.0]))
    return n[0], f.experimental_get_tracing_count()


@case
def concrete_function_python_arg():
    f = tf.function(lambda x, k: x * k)
    cf = f.get_concrete_function(tf.TensorSpec([], tf.float32), 3.0)
    return cf(c(2.0))


@case
def jit_compile_true():
    f = tf.function(lambda x: x * 2 + 1, jit_compile=True)
    return f(c(X3))


@case
def nested_functions():
    n = [0, 0]

    @tf.function
    def inner(x):
        n[0] += 1
        return x * 2

    @tf.function
    def outer(x):
        n[1] += 1
        return inner(x) + inner(x + 1)
    return outer(c(1.0)), outer(c(2.0)), n


@case
def recursion_python_int():
    @tf.function
    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)
    return fact(5)


@case
def recursion_tensor():
    @tf.function
    def fact(n):
        if n <= 1:
            return tf.constant(1)
        return n * fact(n - 1)
    return fact(tf.constant(4))


@case
def closure_tensor_changes():
    k = [c(2.0)]
    f = tf.function(lambda x: x * k[0])
    a = f(c(1.0))
    k[0] = c(5.0)
    return a, f(c(1.0))


@case
def closure_variable_changes():
    v = tf.Variable(2.0)
    f = tf.function(lambda x: x * v)
    a = f(c(1.0))
    v.assign(5.0)
    return a, f(c(1.0))


@case
def closure_python_float_changes():
    k = [2.0]
    f = tf.function(lambda x: x * k[0])
    a = f(c(1.0))
    k[0] = 5.0
    return a, f(c(1.0))


@case
def closure_numpy_changes():
    k = np.array([2.0], np.float32)
    f = tf.function(lambda x: x * k)
    a = f(c([1.0]))
    k[0] = 5.0
    return a, f(c([1.0]))


@case
def function_returns_python():
    f = tf.function(lambda x: (x, 3, "s", None))
    return f(c(1.0))


@case
def function_returns_dict():
    f = tf.function(lambda x: {"b": x, "a": [x * 2, (x * 3,)]})
    return f(c(1.0))


@case
def function_returns_namedtuple():
    f = tf.function(lambda x: PT(x, x + 1))
    return f(c(1.0))


@case
def function_returns_variable():
    v = tf.Variable(2.0)
    f = tf.function(lambda: v)
    r = f()
    return type(r).__name__ == "ResourceVariable" or isinstance(r, tf.Variable), r


@case
def function_python_list_arg_retrace():
    f, n = counted()(lambda xs: xs[0] * len(xs))
    r = [f([1.0, 2.0]), f([3.0, 4.0]), f([1.0, 2.0])]
    return r, n[0]


@case
def function_shape_property_in_trace():
    @tf.function
    def f(x):
        return x.shape.as_list(), tf.shape(x)
    return f(c([[1.0, 2.0]]))


@case
def function_numpy_call_inside():
    @tf.function
    def f(x):
        return x.numpy()
    return f(c(1.0))


@case
def function_bool_tensor_python_if():
    @tf.function
    def f(x):
        if bool(x > 0):
            return x
        return -x
    return f(c(1.0))


@case
def function_python_if_on_tensor():
    @tf.function
    def f(x):
        if x > 0:
            return x
        return -x
    return f(c(1.0)), f(c(-2.0))


@case
def function_run_eagerly():
    tf.config.run_functions_eagerly(True)
    try:
        buf = []

        @tf.function
        def f(x):
            buf.append(1)
            return x.numpy() * 2
        return f(c(1.0)), f(c(2.0)), len(buf)
    finally:
        tf.config.run_functions_eagerly(False)


@case
def function_gradient_outside():
    f = tf.function(lambda x: x * x * x)
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    return t.gradient(y, x)


@case
def function_gradient_outside_variable():
    v = tf.Variable(3.0)
    f = tf.function(lambda x: x * v * v)
    with tf.GradientTape() as t:
        y = f(c(2.0))
    return t.gradient(y, v)


@case
def function_gradient_outside_second_order():
    f = tf.function(lambda x: x * x * x)
    x = c(2.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        d = t1.gradient(y, x)
    return d, t2.gradient(d, x)


@case
def function_gradient_outside_assign():
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        v.assign(x * 2.0)
        return v * x
    x = c(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    return t.gradient(y, x)


@case
def function_train_step():
    w = tf.Variable([[1.0], [2.0]])
    b = tf.Variable([0.5])
    opt = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as t:
            loss = tf.reduce_mean((tf.matmul(x, w) + b - y) ** 2)
        g = t.gradient(loss, [w, b])
        opt.apply_gradients(zip(g, [w, b]))
        return loss
    x, y = c([[1.0, 2.0], [3.0, 4.0]]), c([[1.0], [2.0]])
    return step(x, y), step(x, y), w, b


@case
def function_kwonly_args():
    @tf.function
    def f(x, *, k=2.0):
        return x * k
    return f(c(1.0)), f(c(1.0), k=3.0)


@case
def function_varargs():
    f, n = counted()(lambda *xs: tf.add_n(list(xs)))
    return f(c(1.0), c(2.0)), f(c(1.0), c(2.0), c(3.0)), n[0]


@case
def function_kwargs_dict():
    f, n = counted()(lambda **kw: kw["a"] * kw["b"])
    return f(a=c(2.0), b=c(3.0)), f(b=c(3.0), a=c(2.0)), n[0]


@case
def function_missing_arg():
    f = tf.function(lambda x, y: x + y)
    return f(c(1.0))


@case
def function_unexpected_kwarg():
    f = tf.function(lambda x: x)
    return f(c(1.0), z=c(2.0))


@case
def function_python_side_effect_list_append():
    out = []

    @tf.function
    def f(x):
        out.append(x)
        return x * 2
    f(c(1.0))
    f(c(2.0))
    return len(out)


@case
def function_pretty_name():
    def myfn(x):
        return x
    return tf.function(myfn).__name__


@case
def function_python_function_attr():
    def myfn(x):
        return x * 2
    return tf.function(myfn).python_function(3)


@case
def function_decorate_twice():
    f = tf.function(tf.function(lambda x: x * 2))
    return f(c(2.0))


@case
def function_return_none():
    f = tf.function(lambda x: None)
    return f(c(1.0))


@case
def function_no_return_assign():
    v = tf.Variable(1.0)

    @tf.function
    def f():
        v.assign(2.0)
    r = f()
    return r, v


@case
def function_int_arg_large_retrace():
    f, n = counted()(lambda x, k: x * k)
    r = [f(c(1.0), k) for k in range(6)]
    return r[-1], n[0]


# ================================================================ AutoGraph


@case
def ag_if_branch_dtypes():
    @tf.function
    def f(x):
        if x > 0:
            y = tf.constant(1)
        else:
            y = tf.constant(1.0)
        return y
    return f(c(1.0))


@case
def ag_if_branch_shapes():
    @tf.function
    def f(x):
        if x > 0:
            y = tf.zeros([2])
        else:
            y = tf.zeros([3])
        return y
    return f(c(1.0)), f(c(-1.0))


@case
def ag_if_branch_structures():
    @tf.function
    def f(x):
        if x > 0:
            y = (x, x)
        else:
            y = x
        return y
    return f(c(1.0))


@case
def ag_if_undefined_in_one_branch():
    @tf.function
    def f(x):
        if x > 0:
            y = x * 2
        return y
    return f(c(1.0))


@case
def ag_if_defined_before():
    @tf.function
    def f(x):
        y = x
        if x > 0:
            y = x * 2
        return y
    return f(c(1.0)), f(c(-1.0))


@case
def ag_if_return_both_branches():
    @tf.function
    def f(x):
        if x > 0:
            return x * 2
        else:
            return x * 3
    return f(c(1.0)), f(c(-1.0))


@case
def ag_if_return_one_branch():
    @tf.function
    def f(x):
        if x > 0:
            return x * 2
        return x * 3
    return f(c(1.0)), f(c(-1.0))


@case
def ag_if_return_none_one_branch():
    @tf.function
    def f(x):
        if x > 0:
            return x * 2
    return f(c(1.0))


@case
def ag_elif():
    @tf.function
    def f(x):
        if x > 1:
            y = x * 2
        elif x > 0:
            y = x * 3
        else:
            y = x * 4
        return y
    return f(c(2.0)), f(c(0.5)), f(c(-1.0))


@case
def ag_bool_ops():
    @tf.function
    def f(x):
        if x > 0 and x < 2:
            return x
        return -x
    return f(c(1.0)), f(c(3.0))


@case
def ag_not():
    @tf.function
    def f(x):
        if not x > 0:
            return x * 10
        return x
    return f(c(1.0)), f(c(-1.0))


@case
def ag_ternary():
    @tf.function
    def f(x):
        return x * 2 if x > 0 else x * 3
    return f(c(1.0)), f(c(-1.0))


@case
def ag_for_range_tensor():
    @tf.function
    def f(n):
        s = tf.constant(0)
        for i in tf.range(n):
            s += i
        return s
    return f(c(5, "int32"))


@case
def ag_for_range_break():
    @tf.function
    def f(n):
        s = tf.constant(0)
        for i in tf.range(n):
            if i > 3:
                break
            s += i
        return s
    return f(c(10, "int32"))


@case
def ag_for_range_continue():
    @tf.function
    def f(n):
        s = tf.constant(0)
        for i in tf.range(n):
            if i % 2 == 0:
                continue
            s += i
        return s
    return f(c(10, "int32"))


@case
def ag_for_range_return():
    @tf.function
    def f(n):
        for i in tf.range(n):
            if i > 3:
                return i
        return tf.constant(-1)
    return f(c(10, "int32")), f(c(2, "int32"))


@case
def ag_for_over_tensor():
    @tf.function
    def f(x):
        s = tf.constant(0.0)
        for row in x:
            s += tf.reduce_sum(row)
        return s
    return f(c([[1.0, 2.0], [3.0, 4.0]]))


@case
def ag_while_tensor():
    @tf.function
    def f(x):
        i = tf.constant(0)
        while x < 100.0:
            x = x * 2
            i += 1
        return x, i
    return f(c(3.0))


@case
def ag_while_shape_change():
    @tf.function
    def f(n):
        x = tf.zeros([1])
        i = tf.constant(0)
        while i < n:
            x = tf.concat([x, x], 0)
            i += 1
        return x
    return f(c(3, "int32"))


@case
def ag_while_dtype_change():
    @tf.function
    def f(n):
        x = tf.constant(0)
        i = tf.constant(0)
        while i < n:
            x = tf.cast(x, tf.float32) + 1.0
            i += 1
        return x
    return f(c(3, "int32"))


@case
def ag_loop_python_list():
    @tf.function
    def f(xs):
        s = 0.0
        for x in xs:
            s = s + x
        return s
    return f([c(1.0), c(2.0), c(3.0)])


@case
def ag_loop_python_range():
    n = [0]

    @tf.function
    def f(x):
        n[0] += 1
        for _ in range(3):
            x = x * 2
        return x
    return f(c(1.0)), n[0]


@case
def ag_while_python_cond():
    @tf.function
    def f(x):
        i = 0
        while i < 3:
            x = x + 1
            i += 1
        return x
    return f(c(1.0))


@case
def ag_loop_var_undefined_after():
    @tf.function
    def f(n):
        for i in tf.range(n):
            y = i * 2
        return y
    return f(c(3, "int32"))


@case
def ag_nested_loops():
    @tf.function
    def f(n):
        s = tf.constant(0)
        for i in tf.range(n):
            for j in tf.range(i):
                s += j
        return s
    return f(c(5, "int32"))


@case
def ag_loop_variable_assign():
    v = tf.Variable(0.0)

    @tf.function
    def f(n):
        for i in tf.range(n):
            v.assign_add(tf.cast(i, tf.float32))
        return v.read_value()
    return f(c(5, "int32"))


@case
def ag_while_grad():
    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x
            for i in tf.range(3):
                y = y * x
        return t.gradient(y, x)
    return f(c(2.0))


@case
def ag_cond_grad():
    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            if x > 0:
                y = x * x
            else:
                y = -x
        return t.gradient(y, x)
    return f(c(3.0)), f(c(-3.0))


@case
def ag_if_on_none_check():
    @tf.function
    def f(x, y=None):
        if y is not None:
            return x + y
        return x
    return f(c(1.0)), f(c(1.0), c(2.0))


@case
def ag_if_on_python_bool():
    @tf.function
    def f(x, flag):
        if flag:
            return x * 2
        return x
    return f(c(1.0), True), f(c(1.0), False)


@case
def ag_if_nonscalar_tensor():
    @tf.function
    def f(x):
        if x > 0:
            return x
        return -x
    return f(c([1.0, -1.0]))


@case
def ag_while_nonscalar_cond():
    @tf.function
    def f(x):
        while x > 0:
            x = x - 1
        return x
    return f(c([1.0, 2.0]))


@case
def ag_list_append_in_tensor_loop():
    @tf.function
    def f(n):
        out = []
        for i in tf.range(n):
            out.append(i)
        return out
    return f(c(3, "int32"))


@case
def ag_print_in_loop():
    buf = []

    @tf.function
    def f(n):
        s = tf.constant(0)
        for i in tf.range(n):
            buf.append(1)
            s += i
        return s
    return f(c(5, "int32")), len(buf)


@case
def ag_for_enumerate_tensor():
    @tf.function
    def f(x):
        s = tf.constant(0.0)
        for i, r in enumerate(x):
            s += tf.cast(i, tf.float32) * r
        return s
    return f(c([1.0, 2.0, 3.0]))


# ================================================================ TensorArray / cond / while_loop


@both
def ta_write_stack(F):
    @F
    def g(n):
        ta = tf.TensorArray(tf.float32, size=n)
        for i in tf.range(n):
            ta = ta.write(i, tf.cast(i, tf.float32) * 2.0)
        return ta.stack()
    return g(c(4, "int32"))


@both
def ta_dynamic_size(F):
    @F
    def g(n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            ta = ta.write(i, tf.fill([2], tf.cast(i, tf.float32)))
        return ta.stack(), ta.size()
    return g(c(3, "int32"))


@both
def ta_read(F):
    @F
    def g(x):
        ta = tf.TensorArray(tf.float32, size=3)
        ta = ta.unstack(x)
        return ta.read(1), ta.read(2)
    return g(c([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))


@both
def ta_unstack_stack(F):
    @F
    def g(x):
        ta = tf.TensorArray(tf.float32, size=3).unstack(x)
        return ta.stack() * 2.0
    return g(c([1.0, 2.0, 3.0]))


@case
def ta_write_oob():
    ta = tf.TensorArray(tf.float32, size=2)
    ta = ta.write(2, 1.0)
    return ta.stack()


@case
def ta_write_wrong_dtype():
    ta = tf.TensorArray(tf.float32, size=2)
    ta = ta.write(0, tf.constant(1))
    return ta.stack()


@case
def ta_element_shape_mismatch():
    ta = tf.TensorArray(tf.float32, size=2, element_shape=[2])
    ta = ta.write(0, tf.zeros([3]))
    return ta.stack()


@case
def ta_inconsistent_shapes():
    ta = tf.TensorArray(tf.float32, size=2)
    ta = ta.write(0, tf.zeros([2]))
    ta = ta.write(1, tf.zeros([3]))
    return ta.stack()


@case
def ta_stack_empty():
    ta = tf.TensorArray(tf.float32, size=0)
    return ta.stack()


@case
def ta_stack_empty_element_shape():
    ta = tf.TensorArray(tf.float32, size=0, element_shape=[3])
    return ta.stack()


@case
def ta_read_unwritten():
    ta = tf.TensorArray(tf.float32, size=3, element_shape=[2])
    ta = ta.write(0, tf.ones([2]))
    return ta.stack()


@case
def ta_gather_concat():
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.unstack(c([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    return ta.gather([2, 0]), ta.concat()


@case
def ta_write_twice():
    ta = tf.TensorArray(tf.float32, size=2)
    ta = ta.write(0, 1.0)
    ta = ta.write(0, 2.0)
    return ta.stack()


@case
def ta_grad():
    x = c([1.0, 2.0, 3.0])
    with tf.GradientTape() as t:
        t.watch(x)
        ta = tf.TensorArray(tf.float32, size=3).unstack(x * x)
        y = tf.reduce_sum(ta.stack() * c([1.0, 2.0, 3.0]))
    return t.gradient(y, x)


@both
def tf_cond_basic(F):
    @F
    def g(x):
        return tf.cond(x > 0, lambda: x * 2, lambda: x * 3)
    return g(c(1.0)), g(c(-1.0))


@both
def tf_cond_dtype_mismatch(F):
    @F
    def g(x):
        return tf.cond(x > 0, lambda: tf.constant(1), lambda: tf.constant(1.0))
    return g(c(1.0))


@both
def tf_cond_shape_mismatch(F):
    @F
    def g(x):
        return tf.cond(x > 0, lambda: tf.zeros([2]), lambda: tf.zeros([3]))
    return g(c(1.0)), g(c(-1.0))


@both
def tf_cond_structure_mismatch(F):
    @F
    def g(x):
        return tf.cond(x > 0, lambda: (x, x), lambda: x)
    return g(c(1.0))


@both
def tf_cond_python_pred(F):
    @F
    def g(x):
        return tf.cond(True, lambda: x * 2, lambda: x * 3)
    return g(c(1.0))


@both
def tf_cond_nonscalar_pred(F):
    @F
    def g(x):
        return tf.cond(x > 0, lambda: x * 2, lambda: x * 3)
    return g(c([1.0, 2.0]))


@both
def tf_cond_grad(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.cond(x > 0, lambda: x * x, lambda: x * 3.0)
        return t.gradient(y, x)
    return g(c(2.0)), g(c(-2.0))


@both
def tf_cond_returns_none(F):
    @F
    def g(x):
        return tf.cond(x > 0, lambda: None, lambda: None)
    return g(c(1.0))


@both
def while_loop_basic(F):
    @F
    def g(n):
        return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [0, 0])
    return g(c(5, "int32"))


@both
def while_loop_max_iter(F):
    @F
    def g(n):
        return tf.while_loop(lambda i: i < n, lambda i: i + 1, [c(0, "int32")], maximum_iterations=3)
    return g(c(10, "int32"))


@both
def while_loop_single_var(F):
    @F
    def g(x):
        return tf.while_loop(lambda x: x < 100.0, lambda x: x * 2.0, [x])
    return g(c(3.0))


@both
def while_loop_single_not_list(F):
    @F
    def g(x):
        return tf.while_loop(lambda x: x < 100.0, lambda x: x * 2.0, x)
    return g(c(3.0))


@both
def while_loop_shape_change(F):
    @F
    def g(n):
        return tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, tf.concat([x, x], 0)),
                             [c(0, "int32"), tf.zeros([1])])
    return g(c(3, "int32"))


@both
def while_loop_shape_invariants(F):
    @F
    def g(n):
        return tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, tf.concat([x, x], 0)),
                             [c(0, "int32"), tf.zeros([1])],
                             shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])
    return g(c(3, "int32"))


@both
def while_loop_dtype_change(F):
    @F
    def g(n):
        return tf.while_loop(lambda i: i < n, lambda i: tf.cast(i, tf.float32) + 1.0, [c(0, "int32")])
    return g(c(3, "int32"))


@both
def while_loop_wrong_arity(F):
    @F
    def g(n):
        return tf.while_loop(lambda i, s: i < n, lambda i, s: i + 1, [c(0, "int32"), c(0, "int32")])
    return g(c(3, "int32"))


@both
def while_loop_grad(F):
    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), [c(0, "int32"), c(1.0)])
        return y, t.gradient(y, x)
    return g(c(2.0))


@both
def while_loop_dict_vars(F):
    @F
    def g(n):
        return tf.while_loop(lambda d: d["i"] < n, lambda d: {"i": d["i"] + 1, "s": d["s"] * 2.0},
                             [{"i": c(0, "int32"), "s": c(1.0)}])
    return g(c(4, "int32"))


@both
def while_loop_max_iter_zero(F):
    @F
    def g(n):
        return tf.while_loop(lambda i: i < n, lambda i: i + 1, [c(0, "int32")], maximum_iterations=0)
    return g(c(10, "int32"))


# ================================================================ Variables


@case
def var_assign_wrong_dtype():
    v = tf.Variable(1.0)
    v.assign(tf.constant(2, tf.int32))
    return v


@case
def var_assign_python_int():
    v = tf.Variable(1.0)
    v.assign(2)
    return v


@case
def var_assign_f64_tensor():
    v = tf.Variable(1.0)
    v.assign(tf.constant(2.0, tf.float64))
    return v


@case
def var_assign_numpy_f64():
    v = tf.Variable(1.0)
    v.assign(np.float64(2.5))
    return v


@case
def var_int_assign_float():
    v = tf.Variable(1)
    v.assign(2.5)
    return v


@case
def var_assign_wrong_shape():
    v = tf.Variable([1.0, 2.0])
    v.assign([1.0, 2.0, 3.0])
    return v


@case
def var_assign_broadcast():
    v = tf.Variable([1.0, 2.0])
    v.assign(5.0)
    return v


@case
def var_assign_add_wrong_shape():
    v = tf.Variable([1.0, 2.0])
    v.assign_add([1.0, 2.0, 3.0])
    return v


@case
def var_assign_add_broadcast_scalar():
    v = tf.Variable([1.0, 2.0])
    v.assign_add(1.0)
    return v


@case
def var_assign_add_wrong_dtype():
    v = tf.Variable([1.0, 2.0])
    v.assign_add(tf.constant([1, 1]))
    return v


@case
def var_shape_none():
    v = tf.Variable(tf.zeros([2]), shape=tf.TensorShape(None))
    v.assign(tf.ones([3, 2]))
    return v, v.shape.rank


@case
def var_shape_none_dim():
    v = tf.Variable(tf.zeros([2, 3]), shape=tf.TensorShape([None, 3]))
    v.assign(tf.ones([4, 3]))
    return v, v.shape.as_list()


@case
def var_shape_none_dim_bad():
    v = tf.Variable(tf.zeros([2, 3]), shape=tf.TensorShape([None, 3]))
    v.assign(tf.ones([4, 2]))
    return v


@case
def var_shape_incompatible_init():
    return tf.Variable(tf.zeros([2, 3]), shape=[3, 3])


@case
def var_read_value_false_eager():
    v = tf.Variable(1.0)
    r = v.assign(3.0, read_value=False)
    return r is None or type(r).__name__, v


@case
def var_assign_returns():
    v = tf.Variable(1.0)
    r = v.assign(3.0)
    v.assign(5.0)
    return r


@case
def var_assign_add_returns():
    v = tf.Variable(1.0)
    r = v.assign_add(3.0)
    v.assign(10.0)
    return r


@case
def var_ops():
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    return v + 1.0, 1.0 - v, v @ v, v[0], v[:, 1], -v, v ** 2, v / 2, v > 2.0, abs(v)


@case
def var_assign_slice_result():
    v = tf.Variable([1.0, 2.0, 3.0])
    return v.assign([4.0, 5.0, 6.0])[1]


@case
def var_slice_assign():
    v = tf.Variable([1.0, 2.0, 3.0])
    v[1].assign(10.0)
    return v


@case
def var_scatter_update():
    v = tf.Variable([1.0, 2.0, 3.0])
    v.scatter_nd_update([[0], [2]], [7.0, 8.0])
    return v


@case
def var_sync_agg_args():
    v = tf.Variable(1.0, synchronization=tf.VariableSynchronization.ON_READ,
                    aggregation=tf.VariableAggregation.MEAN, trainable=False)
    return v, v.trainable


@case
def var_sync_on_read_trainable():
    return tf.Variable(1.0, synchronization=tf.VariableSynchronization.ON_READ, trainable=True).trainable


@case
def var_dtype_arg_cast():
    return tf.Variable(1, dtype=tf.float32)


@case
def var_dtype_arg_lossy():
    return tf.Variable(1.5, dtype=tf.int32)


@case
def var_from_python_list():
    return tf.Variable([1, 2])


@case
def var_from_f64_numpy():
    return tf.Variable(np.array([1.0, 2.0]))


@case
def var_name():
    return tf.Variable(1.0, name="w").name


@case
def var_initializer_callable():
    return tf.Variable(lambda: tf.ones([2]))


@case
def var_none_init():
    return tf.Variable(None)


@case
def var_bool():
    v = tf.Variable(True)
    v.assign(False)
    return v


@case
def var_bool_python():
    v = tf.Variable(0.0)
    return bool(v)


@case
def var_float_python():
    v = tf.Variable([[2.5]])
    return float(v), int(tf.Variable(3))


@case
def var_in_python_if():
    v = tf.Variable(0.0)
    return "yes" if v else "no"


@case
def var_hash_eq():
    v = tf.Variable(1.0)
    d = {v: 1}
    return len(d)


@case
def var_eq_elementwise():
    v = tf.Variable([1.0, 2.0])
    return v == tf.constant([1.0, 3.0])


@case
def var_numpy():
    return tf.Variable([1.0, 2.0]).numpy()


@case
def var_shape_attr():
    v = tf.Variable([[1.0, 2.0]])
    return v.shape.as_list(), v.dtype == tf.float32, v.get_shape().as_list()


@case
def var_assign_in_function_wrong_shape():
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def f(x):
        v.assign(x)
        return v.read_value()
    return f(c([1.0, 2.0, 3.0]))


@case
def var_assign_in_function_wrong_dtype():
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def f(x):
        v.assign(x)
        return v.read_value()
    return f(c([1, 2], "int32"))


@case
def var_assign_sub_int():
    v = tf.Variable(5)
    v.assign_sub(2)
    return v


@case
def var_iadd():
    v = tf.Variable(1.0)
    w = v
    v += 1.0
    return type(v).__name__ in ("ResourceVariable", "Variable"), w


@case
def var_constraint():
    v = tf.Variable([-1.0, 2.0], constraint=lambda x: tf.maximum(x, 0.0))
    v.assign([-3.0, 4.0])
    return v, v.constraint is not None


@case
def var_count_params_like():
    v = tf.Variable(tf.zeros([3, 4]))
    return int(tf.size(v)), len(v)


@case
def var_copy_independent():
    import copy
    v = tf.Variable([1.0])
    w = copy.deepcopy(v)
    v.assign([2.0])
    return w


@case
def var_in_tf_function_arg_trainable():
    v = tf.Variable(1.0, trainable=False)

    @tf.function
    def f():
        with tf.GradientTape() as t:
            y = v * v
        return t.gradient(y, v)
    return f()


@case
def gradient_tape_in_function_variable():
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            y = tf.reduce_sum(v * x)
        return t.gradient(y, v)
    return f(c([3.0, 4.0]))


@case
def gradient_tape_in_function_persistent():
    @tf.function
    def f(x):
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = x * x
            z = y * x
        return t.gradient(y, x), t.gradient(z, x)
    return f(c(2.0))


@case
def gradient_tape_in_function_nonpersistent_twice():
    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        return t.gradient(y, x), t.gradient(y, x)
    return f(c(2.0))


@case
def gradient_tape_in_function_watch_int():
    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        return t.gradient(y, x)
    return f(c(2, "int32"))


@case
def gradient_tape_in_function_stop_recording():
    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
            with t.stop_recording():
                z = y * x
        return t.gradient(z + y, x)
    return f(c(2.0))


# ================================================================ second round (after the first fixes)


@case
def tape_unwatched_constant_next_to_variable():
    v, x = tf.Variable(2.0), c(3.0)
    with tf.GradientTape() as t:
        y = x * v
    return t.gradient(y, [x, v])


@case
def custom_grad_variable_unwatched_input():
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            return dy * v, [dy * x * 10.0]
        return x * v, grad
    x = c(3.0)
    with tf.GradientTape() as t:
        y = f(x)
    return t.gradient(y, [x, v])


@both
def recompute_grad_variable(F):
    v = tf.Variable([0.5, -1.0, 2.0])
    rb = tf.recompute_grad(lambda a: tf.sin(a) * v)

    @F
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(rb(x))
        return t.gradient(y, [x, v])
    return g(c(X3))


@case
def forward_accumulator_multi():
    x = c([1.0, 2.0])
    v = tf.Variable([3.0, 4.0])
    with tf.autodiff.ForwardAccumulator([x, v], [c([1.0, 0.0]), c([0.0, 1.0])]) as acc:
        y = x * v
        z = tf.reduce_sum(tf.sin(y))
    return acc.jvp(y), acc.jvp({"z": z, "x": x}), acc.jvp(c(1.0), unconnected_gradients=tf.UnconnectedGradients.ZERO)


@case
def forward_accumulator_bad_dtype():
    return tf.autodiff.ForwardAccumulator(c([1.0, 2.0]), c([1, 2], "int32"))


@case
def forward_accumulator_nested_tape():
    x = c(2.0)
    with tf.autodiff.ForwardAccumulator(x, c(1.0)) as acc:
        with tf.GradientTape() as t:
            t.watch(x)
            y = x ** 3
        g = t.gradient(y, x)
    return acc.jvp(g)


@case
def batch_jacobian_unconnected():
    x = c([[1.0], [2.0]])
    z = c([[3.0], [4.0]])
    with tf.GradientTape() as t:
        t.watch([x, z])
        y = x * 2.0
    return t.batch_jacobian(y, z)


@case
def jacobian_none_string():
    x, z = c([1.0, 2.0]), c([3.0])
    with tf.GradientTape() as t:
        t.watch([x, z])
        y = x * 2.0
    return t.jacobian(y, z, unconnected_gradients="none")


@case
def tf_gradients_in_function():
    @tf.function
    def f(a):
        return tf.gradients(a * a, a)
    return f(c(1.0))


@case
def ta_loop_no_element_shape_fn():
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=3)
        for i in tf.range(3):
            ta = ta.write(i, x * tf.cast(i, tf.float32))
        return ta.stack()
    return f(c([1.0, 2.0]))


@case
def ta_loop_partially_written_fn():
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=3)
        i = tf.constant(0)
        while i < 2:
            ta = ta.write(i, tf.fill([2], tf.cast(i, tf.float32) + x))
            i += 1
        return ta.stack()
    return f(c(1.0))


@case
def ag_while_temp_used_after():
    @tf.function
    def f(n):
        s = tf.constant(0.0)
        k = tf.constant(0)
        while k < n:
            tmp = tf.cast(k, tf.float32) * 2.0
            s += tmp
            k += 1
        return s, tmp
    return f(c(3, "int32"))


@case
def ag_ternary_python_cond():
    @tf.function
    def f(x, k):
        return x * 2 if k > 1 else x * 3
    return f(c(1.0), 2), f(c(1.0), 0)


@case
def ag_autograph_false_python_if():
    @tf.function(autograph=False)
    def f(x):
        if x > 0:
            return x
        return -x
    return f(c(1.0))


@case
def tape_tuple_sources():
    x, y = c(2.0), c(3.0)
    with tf.GradientTape() as t:
        t.watch([x, y])
        z = x * y
    return t.gradient(z, (x, y))


@case
def tape_watch_twice():
    x = c(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        t.watch(x)
        y = x * x
    return t.gradient(y, x)


@case
def tape_enter_twice():
    t = tf.GradientTape()
    with t:
        with t:
            pass
    return "ok"


@case
def tape_target_is_variable():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        pass
    return t.gradient(v, v)


@case
def tape_stop_gradient_variable():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = tf.stop_gradient(v) * v
    return t.gradient(y, v)


@case
def tape_int_variable_cast():
    v = tf.Variable(3)
    w = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = tf.cast(v, tf.float32) * w
    return t.gradient(y, [v, w])


@both
def cond_python_ints(F):
    @F
    def g(x):
        return tf.cond(x > 0, lambda: 1, lambda: 2)
    return g(c(1.0)), g(c(-1.0))


@both
def while_loop_back_prop_false(F):
    @F
    def g(n):
        return tf.while_loop(lambda i: i < n, lambda i: (i + 1,), (c(0, "int32"),), back_prop=False)
    return g(c(3, "int32"))


@case
def function_experimental_relax_shapes():
    f, n = counted(experimental_relax_shapes=True)(lambda x: x * 2)
    r = [f(c([1.0])), f(c([1.0, 2.0])), f(c([1.0, 2.0, 3.0]))]
    return r, n[0]


@case
def function_input_signature_variable_arg():
    v = tf.Variable([1.0, 2.0])
    f = tf.function(lambda x: x * 2, input_signature=[tf.TensorSpec([2], tf.float32)])
    return f(v)


@case
def function_jacobian_persistent_inside():
    @tf.function
    def f(x):
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = x * x
            z = tf.reduce_sum(y)
        return t.jacobian(y, x), t.gradient(z, x)
    return f(c([1.0, 2.0]))


@case
def function_tape_watched_variables_inside():
    v = tf.Variable(1.0)
    w = tf.Variable(2.0, trainable=False)

    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            y = v * w * x
        return len(t.watched_variables())
    return f(c(1.0))


@case
def function_closure_variable_reassigned_python():
    box = [tf.Variable(1.0)]
    f = tf.function(lambda x: x * box[0])
    a = f(c(1.0))
    box[0] = tf.Variable(5.0)
    return a, f(c(1.0))


@case
def function_numpy_closure_folded():
    k = np.array([2.0], np.float32)
    f = tf.function(lambda x: x * k + (k * 10.0))
    a = f(c([1.0]))
    k[0] = 5.0
    return a, f(c([1.0]))


@case
def variable_assign_add_in_cond_fn():
    v = tf.Variable(0.0)

    @tf.function
    def f(x):
        if x > 0:
            v.assign_add(x)
        else:
            v.assign_sub(1.0)
        return v.read_value()
    return f(c(2.0)), f(c(-1.0)), v


@case
def var_iadd_in_function():
    v = tf.Variable(1.0)

    @tf.function
    def f():
        w = v
        w += 1.0
        return w
    return f()


@case
def var_imatmul():
    v = tf.Variable([[1.0]])
    v @= tf.constant([[2.0]])
    return v


# ================================================================ run
for name, f in CASES:
    if ONLY and name.split("[")[0] not in ONLY and name not in ONLY:
        continue
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            r = f()
        s = "OK " + fmt(r)
    except Exception as e:  # noqa: BLE001 (recording what raises is the point)
        msg = str(e).replace("\n", " ")[:160]
        mro = ",".join(k.__name__ for k in type(e).__mro__)
        s = f"EXC {type(e).__name__}: {msg}" if MODE == "tf" else f"EXC {type(e).__name__}: |{mro} || {msg}"
        if os.environ.get("TB"):
            traceback.print_exc()
    print(f"## {name}: {s}", flush=True)
