"""bind is the one call site of every op, and its interpretations agree.

* eager runs the same shape/dtype rule as tracing, on every call (cached), so
  eager and compiled accept and reject the same inputs with the same dtypes;
* Tensor's operators, Variable reads and writes all reach bind (the profiler,
  a hook inside bind, sees them; tapes and traces record them as primitives);
* one graph evaluator runs the reference interpreter, control-flow inlining,
  eval_slice and the profiler, and reaches into sub-graph primitives through
  their record's ``interpret`` field;
* no import cycles among the core modules.
"""
from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core import primitive as _prim
from tapeflow.core.aval import Aval
from tapeflow.core.primitive import REGISTRY as P, Primitive, bind
from tapeflow.core.primitives import elementwise as E
from tapeflow.ir import interpreter
from tapeflow.ir.control_flow import inline_graph
from tapeflow.ir.graph import Eqn, Graph, Var
from tapeflow.ir.tracer import Trace

F32 = np.float32


# -- eager and traced agree (issue 10's repros and neighbours) -----------------------------------

def _outcome(fn, *args):
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001 - the exception *is* the outcome compared
        return ("raises", type(e))
    out = np.asarray(out.numpy() if hasattr(out, "numpy") else out)
    return ("value", out.dtype, out.shape, out.tolist())


def _traced(fn):
    return tf.function(fn, backend="python")


CASES = {
    "matmul of a 1-D tensor": (lambda x: tf.matmul(x, x), [np.arange(6, dtype=F32)]),
    "reshape with -2": (lambda x: tf.reshape(x, (-2, 3)), [np.arange(6, dtype=F32)]),
    "bool + bool": (lambda a, b: a + b, [np.array([True, False]), np.array([True, True])]),
    "bool * bool": (lambda a, b: a * b, [np.array([True, False]), np.array([True, True])]),
    "int32 / int32": (lambda a, b: a / b, [np.array([1, 4], np.int32), np.array([2, 2], np.int32)]),
    "tf.divide int32": (lambda a, b: tf.divide(a, b), [np.array([1, 4], np.int32), np.array([2, 2], np.int32)]),
    "float32 + float64": (lambda a, b: a + b, [np.ones(2, F32), np.ones(2, np.float64)]),
    "float32 @ float64": (lambda a, b: a @ b, [np.ones((2, 2), F32), np.ones((2, 2), np.float64)]),
    "exp of int32": (lambda a: tf.exp(a), [np.array([1, 2], np.int32)]),
    "logical_not of float": (lambda a: tf.logical_not(a), [np.array([1.0, 0.0], F32)]),
    "where with a float condition": (lambda c, x: tf.where(c, x, x), [np.array([1.0, 0.0], F32), np.ones(2, F32)]),
    "broadcast mismatch": (lambda a, b: a - b, [np.ones(3, F32), np.ones(4, F32)]),
    "int tensor + python float": (lambda a: a + 1.5, [np.array([1, 2], np.int32)]),
    "concat float32 with float64": (lambda a, b: tf.concat([a, b], 0), [np.ones(2, F32), np.ones(2, np.float64)]),
    "float32 + python int": (lambda a: a + 2, [np.ones(2, F32)]),
    "int32 * int32": (lambda a, b: a * b, [np.array([3], np.int32), np.array([4], np.int32)]),
    "float32 * np.float64 scalar": (lambda a: a * np.float64(1.5), [np.ones(2, F32)]),
    "float32 * np.float32 scalar": (lambda a: a * np.float32(1.5), [np.ones(2, F32)]),
    "int32 + np.int64 scalar": (lambda a: a + np.int64(1), [np.ones(2, np.int32)]),
    "comparison": (lambda a, b: a < b, [np.array([1.0, 3.0], F32), np.array([2.0, 2.0], F32)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_and_traced_agree(name):
    fn, arrays = CASES[name]
    args = [tf.constant(a) for a in arrays]
    eager = _outcome(fn, *args)
    traced = _outcome(_traced(fn), *args)
    assert eager == traced, f"{name}: eager {eager} vs traced {traced}"


def test_issue_repros_raise_eagerly():
    x = tf.constant(np.arange(6, dtype=F32))
    with pytest.raises(ValueError, match="matmul"):
        tf.matmul(x, x)
    with pytest.raises(ValueError):
        tf.reshape(x, (-2, 3))
    b = tf.constant([True, False])
    with pytest.raises(TypeError, match="add"):
        b + b
    # bool * bool is TF's logical and (checked against TF 2.21), eagerly and compiled alike
    np.testing.assert_array_equal((b * b).numpy(), [True, False])
    np.testing.assert_array_equal(tf.function(lambda b: b * b)(b).numpy(), [True, False])


def test_eager_error_repeats_on_a_cached_signature():
    # the first call caches nothing for a failing signature; later calls fail the same way
    a, b = tf.constant(np.ones(2, F32)), tf.constant(np.ones(2, np.float64))
    for _ in range(3):
        with pytest.raises(TypeError, match="dtypes differ"):
            a + b
    ok = tf.constant(np.ones(2, F32))
    for _ in range(3):  # the fast path (cached signature) gives what the first call gave
        out = a + ok
        assert out.dtype == tf.float32 and out.shape == (2,)


def test_python_scalars_only_take_tf_defaults_from_the_rule():
    assert tf.exp(1.0).dtype == tf.float32
    assert tf.add(1, 2).dtype == tf.int32
    assert tf.add(1, 2.5).dtype == tf.float32
    np.testing.assert_allclose(tf.add(1, 2.5).numpy(), 3.5)
    assert tf.equal(0.0, 0).dtype == tf.bool
    assert tf.where(True, 1.0, 2.0).dtype == tf.float32


def test_kernel_result_not_matching_the_rule_is_a_record_bug():
    bad = Primitive("_test_bad_shape", lambda x: np.concatenate([x, x]), lambda a: Aval(a.shape, a.dtype),
                    differentiable=False)
    try:
        with pytest.raises(AssertionError, match="shape rule"):
            bind(bad, tf.constant(np.ones(2, F32)))
    finally:
        del P["_test_bad_shape"]


def test_kernel_computing_wider_is_cast_to_the_rule_dtype():
    wide = Primitive("_test_wide", lambda x: x.astype(np.float64) * 2, lambda a: Aval(a.shape, a.dtype),
                     differentiable=False)
    try:
        x = tf.constant(np.ones(2, F32))
        for _ in range(2):  # slow path, then the cached fast path
            out = bind(wide, x)
            assert out.numpy().dtype == np.float32
            np.testing.assert_array_equal(out.numpy(), [2.0, 2.0])
    finally:
        del P["_test_wide"]


# -- everything reaches bind ---------------------------------------------------------------------

def test_operators_are_defined_in_the_tensor_class():
    for name in ("__add__", "__radd__", "__mul__", "__matmul__", "__getitem__", "__eq__", "__neg__"):
        assert name in vars(tf.Tensor), name
    assert not hasattr(tf, "_operators")


def test_profiler_counts_operators_reads_and_writes_as_ops():
    a = tf.constant(np.ones(3, F32))
    v = tf.Variable(np.zeros(3, F32))
    with tf.profile() as prof:
        a + a
        a * 2.0
        -a
        a[1:]
        v.read_value()
        v.assign(a)
        v.assign_add(a)
    for op in ("add", "mul", "neg", "getitem", "read_variable", "assign_variable"):
        assert prof.ops[op].calls >= 1, op
    assert prof.ops["add"].calls == 2  # a + a and assign_add's add
    np.testing.assert_array_equal(v.numpy(), [2.0, 2.0, 2.0])


def test_profiler_does_not_swap_kernels():
    seen = []

    def kernel(x):
        seen.append(probe.impl is kernel)  # the record's kernel is untouched while profiled
        return x + 1

    probe = Primitive("_test_probe", kernel, lambda a: Aval(a.shape, a.dtype), differentiable=False)
    try:
        with tf.profile():
            bind(probe, tf.constant(np.ones(2, F32)))
        assert seen == [True]
        assert probe.impl is kernel
    finally:
        del P["_test_probe"]


def test_variable_reads_and_writes_are_primitives_on_tapes_and_traces():
    v = tf.Variable(np.array([1.0, 2.0], F32))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v * v)
    assert [n[0].name for n in tape._nodes][0] == "read_variable"
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [2.0, 4.0])

    @tf.function
    def step(x):
        v.assign(v * x)
        return v.read_value()

    g = step.get_concrete_function(tf.constant(np.ones(2, F32))).graph
    names = [e.prim.name for e in g.eqns]
    assert names.count("assign_variable") == 1 and "read_variable" in names
    np.testing.assert_array_equal(step(tf.constant(np.full(2, 3.0, F32))).numpy(), [3.0, 6.0])


def test_bind_of_read_and_assign_eagerly_and_traced_is_the_same_program():
    def prog(v, x):
        r = bind(P["read_variable"], var=v)
        bind(P["assign_variable"], r + x, var=v)
        return bind(P["read_variable"], var=v) * 2.0

    v1, v2 = tf.Variable(np.ones(2, F32)), tf.Variable(np.ones(2, F32))
    x = tf.constant(np.array([1.0, 2.0], F32))
    eager = prog(v1, x)
    traced = tf.function(lambda x: prog(v2, x))(x)
    np.testing.assert_array_equal(eager.numpy(), traced.numpy())
    np.testing.assert_array_equal(v1.numpy(), v2.numpy())


def test_tapes_record_only_through_record():
    src = pathlib.Path(_prim.__file__).resolve().parents[1]
    offenders = []
    for path in src.rglob("*.py"):
        text = path.read_text()
        if "_nodes.append" in text and path.name != "tape.py":
            offenders.append(str(path))
        if "._record(" in text and path.name != "primitive.py":
            offenders.append(str(path))
    assert offenders == []


# -- one evaluator ----------------------------------------------------------------------------------

def _twice_interpret(apply, x, *, body):
    # run the body graph twice, feeding its output back in
    for _ in range(2):
        (x,) = interpreter.evaluate(body, [x], apply)
    return x


def _twice_impl(x, *, body):
    return _twice_interpret(interpreter.apply_eqn, x, body=body)


@pytest.fixture
def twice():
    p = Primitive("_test_twice", _twice_impl, lambda a, body: a, differentiable=False,
                  interpret=_twice_interpret)
    yield p
    del P["_test_twice"]


def _body_graph():
    x, y = Var(Aval((2,), F32)), Var(Aval((2,), F32))
    return Graph([x], [], [Eqn(E.mul_p, [x, x], [y], {})], [y])


def test_interpret_field_in_the_reference_interpreter(twice):
    x, y = Var(Aval((2,), F32)), Var(Aval((2,), F32))
    g = Graph([x], [], [Eqn(twice, [x], [y], {"body": _body_graph()})], [y])
    (out,) = interpreter.eval_graph(g, [np.array([2.0, 3.0], F32)])
    np.testing.assert_array_equal(out, [16.0, 81.0])  # (x^2)^2
    seen = []

    def counting(e, vals):
        seen.append(e.prim.name)
        p = e.prim
        return p.interpret(counting, *vals, **e.params) if p.interpret else p.impl(*vals, **e.params)

    interpreter.evaluate(g, [np.array([2.0, 3.0], F32)], counting)
    assert seen == ["_test_twice", "mul", "mul"]  # an evaluator reaches inside the sub-graph


def test_interpret_field_in_inlining_and_eval_slice(twice):
    x, y = Var(Aval((2,), F32)), Var(Aval((2,), F32))
    g = Graph([x], [], [Eqn(twice, [x], [y], {"body": _body_graph()})], [y])
    (out,) = inline_graph(g, [tf.constant(np.array([2.0, 3.0], F32))])
    np.testing.assert_array_equal(out.numpy(), [16.0, 81.0])

    with Trace() as t:
        c = tf.constant(np.array([2.0, 3.0], F32))
        r = bind(twice, c * 1.0, body=_body_graph())
        value = t.lift_to_constant(r)  # what a Variable created while tracing gets
    np.testing.assert_array_equal(value, [16.0, 81.0])


def test_control_flow_records_carry_interpret():
    for name in ("cond", "while_loop", "scan"):
        assert P[name].interpret is not None
    assert P["add"].interpret is None


def test_profiler_compiled_ops_uses_the_evaluator():
    @tf.function
    def f(x):
        return tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0) + 1.0

    x = tf.constant(np.ones(2, F32))
    f(x)
    with tf.profile(compiled_ops=True) as prof:
        out = f(x)
    np.testing.assert_array_equal(out.numpy(), [3.0, 3.0])
    assert {"cond", "add", "reduce_sum"} <= set(prof.cops)


# -- no import cycles ------------------------------------------------------------------------------

def _module_imports(pkg_root, path):
    """Module-level imports of ``path`` (function-level ones are deliberate late
    binding), resolved to tapeflow module names."""
    rel = path.relative_to(pkg_root.parent).with_suffix("")
    parts = list(rel.parts)
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    here = parts if is_pkg else parts[:-1]
    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            base = here[:len(here) - node.level + 1] if node.level else []
            mod = base + (node.module.split(".") if node.module else [])
            for alias in node.names:
                sub = ".".join(mod + [alias.name])
                out.add(sub if (pkg_root.parent / (sub.replace(".", "/") + ".py")).exists() else ".".join(mod))
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith("tapeflow.")}


def test_no_import_cycles_in_core_and_ops():
    root = pathlib.Path(tf.__file__).resolve().parent
    files = list((root / "core").rglob("*.py")) + list((root / "ops").rglob("*.py"))
    graph = {}
    for f in files:
        name = ".".join(f.relative_to(root.parent).with_suffix("").parts)
        name = name[:-len(".__init__")] if name.endswith(".__init__") else name
        graph[name] = {m for m in _module_imports(root, f)
                       if m.startswith(("tapeflow.core", "tapeflow.ops")) and m != name}
    # a package's __init__ importing its own submodules is how packages load, not a cycle
    for name in graph:
        graph[name] = {m for m in graph[name] if not m.startswith(name + ".")}
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in graph.get(n, ()):
            if state.get(m) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(m):] + [m]))
            if m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)
    assert "tapeflow.core.primitives.elementwise" in graph  # the walk saw the modules


@pytest.mark.parametrize("module", ["tapeflow.core.tensor", "tapeflow.core.primitives.shape",
                                    "tapeflow.core.primitives.linalg", "tapeflow.ops.math_ops",
                                    "tapeflow.ir.control_flow", "tapeflow.profiler.profile"])
def test_each_module_imports_first_in_a_fresh_process(module):
    import subprocess
    import sys
    code = (f"import importlib; m = importlib.import_module({module!r}); "
            "from tapeflow.core.tensor import Tensor; import numpy as np; "
            "t = Tensor(np.ones(2, np.float32)); print((t + t).numpy().tolist())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=str(pathlib.Path(tf.__file__).resolve().parents[1]))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[2.0, 2.0]"


@pytest.mark.parametrize("expr", ["x * 2.0", "2.0 - x", "x ** 2", "x / 4", "-x", "x + x", "i // 2", "i % 3",
                                  "i * i", "3 - i", "x < 0.5", "b & b", "~b"])
def test_fast_path_gives_what_the_full_path_gives(expr):
    env = {"x": tf.constant(np.array([0.25, 1.5, -2.0], F32)), "i": tf.constant(np.array([7, -3, 4], np.int32)),
           "b": tf.constant(np.array([True, False, True]))}
    first = eval(expr, {}, env)   # a new signature: eager_apply, which fills the cache
    second = eval(expr, {}, env)  # the same signature again: bind's fast path
    assert first.dtype == second.dtype and first.shape == second.shape
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    traced = tf.function(lambda **kw: eval(expr, {}, kw))(**env)
    assert traced.dtype == first.dtype
    np.testing.assert_array_equal(traced.numpy(), first.numpy())


@pytest.mark.parametrize("expr", ["tf.reduce_sum(x, axis=1, keepdims=True)", "tf.reshape(x, (3, 2))",
                                  "tf.transpose(x)", "tf.cast(x, tf.float64)", "tf.sqrt(v)", "v * x",
                                  "tf.matmul(x, v, transpose_b=True)", "v.read_value() - x",
                                  "tf.where(x > 2.0, x, 0.0)", "tf.where(x > 2.0, 1.0, v)",
                                  "tf.concat([x, v, x], axis=0)", "tf.add_n([x, x, v])"])
def test_fast_path_with_params_and_variables_gives_what_the_full_path_gives(expr):
    env = {"x": tf.constant(np.arange(6, dtype=F32).reshape(2, 3)), "tf": tf,
           "v": tf.Variable(np.linspace(0.5, 3.0, 6, dtype=F32).reshape(2, 3))}
    first, second = eval(expr, env), eval(expr, env)  # eager_apply, then bind's fast path
    assert first.dtype == second.dtype and first.shape == second.shape
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    with tf.GradientTape() as tape:  # the fast path records reads and ops like the full one
        y = eval(expr, env)
    if y.dtype.is_floating:
        g = tape.gradient(y, env["v"])
        if "v" in expr:
            assert g is not None and g.shape == (2, 3)
        else:
            assert g is None
    traced = tf.function(lambda: eval(expr, env))()
    assert traced.dtype == first.dtype
    np.testing.assert_array_equal(traced.numpy(), first.numpy())


def test_fast_path_errors_like_the_full_path():
    i = tf.constant(np.array([1, 2], np.int32))
    for _ in range(3):
        with pytest.raises(TypeError, match="Python float"):
            i + 1.5
    x = tf.constant(np.array([[1.0, 2.0]], F32))
    x @ tf.constant(np.ones((2, 1), F32))
    for _ in range(2):  # the cached signature (1,2)@(2,1) does not admit (1,2)@(1,2)
        with pytest.raises(ValueError, match="matmul"):
            x @ x
