"""Programs for the names outside the API survey's 30 namespaces (wave 25, api25): each is run under TF 2.21
by tests/tf_reference/make_other_ns25_reference.py (outcomes in tests/data/other_ns25.json) and under
tapeflow by tests/test_other_ns25.py.

A case is ``(name, program, check)``: ``program`` is Python source run with ``tf``, ``np`` and ``tmp`` (a
fresh directory holding ``f.txt`` (5 bytes) and ``sub/g``) in scope; it defines ``result``. ``check``:
"value" (the results must agree: numbers to float32 rounding), "message" (the same error class and text),
"class" (the same error class; TF's text names TF's internals).
"""
CASES = []


def case(name, program, check="value"):
    CASES.append((name, program, check))


# -- tf.optimizers.schedules.CosineDecayRestarts (Keras 3's values) --------------------------------------------
_STEPS = "[0, 1, 5, 9, 10, 11, 29, 30, 31, 69, 70, 150, 1000]"
case("cdr_default", f"s = tf.optimizers.schedules.CosineDecayRestarts(0.1, 10)\nresult = [s(i) for i in {_STEPS}]")
case("cdr_t_mul_1", "s = tf.optimizers.schedules.CosineDecayRestarts(0.1, 10, t_mul=1.0, m_mul=0.5, alpha=0.1)\n"
     f"result = [s(i) for i in {_STEPS}]")
case("cdr_t_mul_3", "s = tf.optimizers.schedules.CosineDecayRestarts(0.5, 7, t_mul=3.0, m_mul=0.8, alpha=0.05)\n"
     f"result = [s(i) for i in {_STEPS}]")
case("cdr_tensor_step", "s = tf.optimizers.schedules.CosineDecayRestarts(1.0, 4)\n"
     "result = [s(tf.constant(6)), s(tf.constant(6.5)), s(tf.Variable(13, dtype=tf.int64))]")
case("cdr_in_function", "s = tf.optimizers.schedules.CosineDecayRestarts(0.1, 10)\n"
     "f = tf.function(lambda step: s(step))\nresult = [f(tf.constant(i)) for i in (3, 17)]")
case("cdr_config", "s = tf.optimizers.schedules.CosineDecayRestarts(0.1, 10)\nresult = sorted(s.get_config().items())")
case("cdr_in_optimizer", "v = tf.Variable([1.0, 2.0])\n"
     "opt = tf.keras.optimizers.SGD(tf.optimizers.schedules.CosineDecayRestarts(0.1, 2))\n"
     "for _ in range(5):\n    opt.apply_gradients([(tf.constant([1.0, -1.0]), v)])\nresult = v")
case("legacy_ftrl", "result = tf.optimizers.legacy.Ftrl is not None")

# -- tf.nest.assert_same_structure ------------------------------------------------------------------------
case("nest_same", "result = tf.nest.assert_same_structure([1, (2, {'a': 3})], [4, (5, {'a': 6})])")
case("nest_leaf_vs_seq", "result = tf.nest.assert_same_structure([1, (2, 3)], [4, 5])", "message")
case("nest_types", "result = tf.nest.assert_same_structure([1, 2], (4, 5))", "message")
case("nest_types_unchecked", "result = tf.nest.assert_same_structure([1, 2], (4, 5), check_types=False)")
case("nest_length", "result = tf.nest.assert_same_structure([1, 2], [4, 5, 6])", "message")
case("nest_keys", "result = tf.nest.assert_same_structure({'a': 1}, {'b': 1})", "message")
case("nest_tensors", "result = tf.nest.assert_same_structure((tf.constant(1.0), [tf.constant([2])]), (3.0, [4]))")

# -- tf.io.gfile ------------------------------------------------------------------------------------------
case("gfile_join", "j = tf.io.gfile.join\nresult = [j('a', 'b', 'c'), j('a/', '/b'), j('gs://x', 'y'), j('a'), "
     "j('/r', 'x/', 'y')]")
case("gfile_stat_file", "st = tf.io.gfile.stat(tmp + '/f.txt')\nresult = [st.length, st.is_directory, "
     "type(st.mtime_nsec).__name__, st.mtime_nsec > 10**18]")
case("gfile_stat_dir", "result = tf.io.gfile.stat(tmp + '/sub').is_directory")
case("gfile_stat_missing", "result = tf.io.gfile.stat(tmp + '/nope')", "class")
case("gfile_walk", "result = [(r[len(tmp):], sorted(d), sorted(f)) for r, d, f in tf.io.gfile.walk(tmp)]")
case("gfile_walk_bottom_up", "result = [(r[len(tmp):], sorted(d), sorted(f)) for r, d, f in "
     "tf.io.gfile.walk(tmp, topdown=False)]")
case("gfile_walk_missing", "result = list(tf.io.gfile.walk(tmp + '/nope'))")

# -- tf.debugging: the values and messages beside the bad-input table's ------------------------------------
case("dbg_same_float_dtype", "x = tf.constant([1.0])\nresult = [tf.debugging.assert_same_float_dtype([x, x]).name, "
     "tf.debugging.assert_same_float_dtype().name, tf.debugging.assert_same_float_dtype(None, tf.float64).name, "
     "tf.debugging.assert_same_float_dtype([None, x]).name]")
case("dbg_same_float_dtype_vs_dtype", "result = tf.debugging.assert_same_float_dtype([tf.constant([1.0])], tf.float64)",
     "class")
case("dbg_is_numeric", "f = tf.debugging.is_numeric_tensor\nresult = [f(tf.constant([1.0])), f(tf.constant([1])), "
     "f(tf.constant('a')), f(tf.constant([True])), f(3), f(np.ones(2)), f(tf.constant([1j]))]")
case("dbg_proper_iterable", "tf.debugging.assert_proper_iterable([1, 2])\ntf.debugging.assert_proper_iterable((1,))\n"
     "result = tf.debugging.assert_proper_iterable({1: 2})")
case("dbg_proper_iterable_str", "result = tf.debugging.assert_proper_iterable('ab')", "class")
case("dbg_proper_iterable_int", "result = tf.debugging.assert_proper_iterable(3)", "class")
case("dbg_proper_iterable_tensor", "result = tf.debugging.assert_proper_iterable(tf.constant([1, 2]))", "class")
case("dbg_traceback_filtering", "d = tf.debugging\nr = [d.is_traceback_filtering_enabled()]\n"
     "d.disable_traceback_filtering()\nr.append(d.is_traceback_filtering_enabled())\n"
     "d.enable_traceback_filtering()\nresult = r + [d.is_traceback_filtering_enabled()]")
case("dbg_log_device_placement", "r = [tf.debugging.get_log_device_placement()]\n"
     "tf.debugging.set_log_device_placement(True)\nr.append(tf.debugging.get_log_device_placement())\n"
     "tf.debugging.set_log_device_placement(False)\nresult = r")
case("dbg_returns", "x = tf.constant([1.0, 2.0])\nd = tf.debugging\nresult = [d.assert_near(x, x), "
     "d.assert_integer(tf.constant(1)), d.assert_type(x, tf.float32), d.assert_scalar(tf.constant(1.0)), "
     "d.assert_rank_at_least(x, 0), d.assert_rank_in(x, [1])]")
case("dbg_near_default_tolerance", "x = tf.constant([1.0, 100.0])\n"
     "tf.debugging.assert_near(x, x * (1 + 5e-7))\nresult = tf.debugging.assert_near(x, x + 2e-4)", "class")
case("dbg_near_float64", "x = tf.constant([1.0], tf.float64)\ntf.debugging.assert_near(x, x + 1e-15)\n"
     "result = tf.debugging.assert_near(x, x + 1e-14)", "class")
case("dbg_near_python_y", "result = tf.debugging.assert_near(tf.constant([1.0, 2.0]), [1.0, 2.0])")

# -- tf.config.experimental -------------------------------------------------------------------------------
case("cfg_determinism", "result = tf.config.experimental.enable_op_determinism()")
case("cfg_tf32", "e = tf.config.experimental\nr = [e.tensor_float_32_execution_enabled()]\n"
     "e.enable_tensor_float_32_execution(False)\nr.append(e.tensor_float_32_execution_enabled())\n"
     "e.enable_tensor_float_32_execution(True)\nresult = r")
case("cfg_memory_info", "e = tf.config.experimental\nresult = [e.get_memory_info('CPU:0'), "
     "e.get_memory_info('/device:CPU:0'), e.reset_memory_stats('CPU:0')]")
case("cfg_memory_info_gpu", "result = tf.config.experimental.get_memory_info('GPU:0')", "message")
case("cfg_memory_usage", "result = tf.config.experimental.get_memory_usage('CPU:0')")
case("cfg_device_details", "result = tf.config.experimental.get_device_details(tf.config.list_physical_devices('CPU')[0])")
case("cfg_device_policy", "e = tf.config.experimental\nr = [e.get_device_policy()]\ne.set_device_policy('explicit')\n"
     "r.append(e.get_device_policy())\ne.set_device_policy(None)\nresult = r + [e.get_device_policy()]")
case("cfg_device_policy_bad", "result = tf.config.experimental.set_device_policy('bogus')", "message")
case("cfg_synchronous", "e = tf.config.experimental\nr = [e.get_synchronous_execution()]\n"
     "e.set_synchronous_execution(True)\nresult = r + [e.get_synchronous_execution()]")
case("cfg_mlir_bridge", "result = [tf.config.experimental.enable_mlir_bridge(), "
     "tf.config.experimental.disable_mlir_bridge()]")

# -- tf.version, tf.sysconfig, tf.errors, tf.test ----------------------------------------------------------
case("version_graph_def", "v = tf.version\nresult = [v.GRAPH_DEF_VERSION, v.GRAPH_DEF_VERSION_MIN_CONSUMER, "
     "v.GRAPH_DEF_VERSION_MIN_PRODUCER]")
case("sysconfig_build_info", "result = sorted(tf.sysconfig.get_build_info().items())")
case("errors_operator_not_allowed", "E = tf.errors.OperatorNotAllowedInGraphError\nresult = [issubclass(E, TypeError), "
     "issubclass(E, tf.errors.OpError), str(E('msg'))]")
case("test_cpu_target", "result = [tf.test.is_cpu_target_available('x86'), tf.test.is_cpu_target_available('x86_64')]")
case("test_cpu_target_unknown", "result = tf.test.is_cpu_target_available('bogus')", "message")
case("test_with_eager_op_as_function", "class C: pass\nresult = [tf.test.with_eager_op_as_function(C) is C, "
     "tf.test.with_eager_op_as_function()(C) is C, tf.test.with_eager_op_as_function(only_as_function=True)(C) is C]")
case("test_disable_with_predicate", "import unittest\nclass T(unittest.TestCase):\n"
     "    @tf.test.disable_with_predicate(lambda: True, 'off')\n    def test_a(self):\n        raise RuntimeError\n"
     "    @tf.test.disable_with_predicate(lambda: False, 'on')\n    def test_b(self):\n        pass\n"
     "r = unittest.TestResult()\nunittest.defaultTestLoader.loadTestsFromTestCase(T).run(r)\n"
     "result = [r.testsRun, len(r.skipped), [m for _, m in r.skipped], len(r.errors)]")
case("test_sync_devices", "result = tf.test.experimental.sync_devices()")
case("test_benchmark", "class B(tf.test.Benchmark):\n    def benchmark_x(self):\n"
     "        self.report_benchmark(iters=3, wall_time=0.5, extras={'k': 1.0}, metrics=[{'name': 'm', 'value': 2}])\n"
     "        return 1\n"
     "result = [B.is_abstract(), tf.test.Benchmark.is_abstract(), B().benchmark_x()]")
case("test_benchmark_extras_type", "class B(tf.test.Benchmark):\n    def benchmark_x(self):\n"
     "        self.report_benchmark(extras=[1])\nresult = B().benchmark_x()", "message")

# -- tf.experimental.Optional ------------------------------------------------------------------------------
_O = "O = tf.experimental.Optional\n"
case("opt_from_value", _O + "o = O.from_value({'a': tf.constant(1.0), 'b': (tf.constant([1, 2]),)})\n"
     "result = [o.has_value(), o.get_value(), repr(o.element_spec)]")
case("opt_empty", _O + "e = O.empty(tf.TensorSpec([2], tf.float32))\nresult = [e.has_value(), repr(e.element_spec)]")
case("opt_empty_get_value", _O + "result = O.empty(tf.TensorSpec([2], tf.float32)).get_value()", "class")
case("opt_traced", _O + "@tf.function\ndef f(x):\n    o = O.from_value(x * 2)\n    return o.has_value(), o.get_value()\n"
     "result = f(tf.constant([1.0, 2.0]))")
case("opt_traced_empty_cond", _O + "@tf.function\ndef f(x):\n    e = O.empty(tf.TensorSpec([2], tf.float32))\n"
     "    return tf.cond(e.has_value(), lambda: e.get_value(), lambda: x)\nresult = f(tf.constant([1.0, 2.0]))")
case("opt_argument", _O + "f = tf.function(lambda o: o.has_value())\n"
     "result = [f(O.from_value(tf.constant(1.0))), f(O.empty(tf.TensorSpec([], tf.float32)))]")
case("opt_argument_value", _O + "f = tf.function(lambda o: o.get_value() + 1.0)\n"
     "result = [f(O.from_value(tf.constant(1.0))), f(O.from_value(tf.constant(5.0)))]")
case("opt_returned", _O + "f = tf.function(lambda x: O.from_value((x, x + 1)))\no = f(tf.constant(3.0))\n"
     "result = [o.has_value(), o.get_value()]")
case("opt_returned_empty", _O + "f = tf.function(lambda x: O.empty(tf.TensorSpec([], tf.float32)))\n"
     "result = f(tf.constant(3.0)).has_value()")


# -- running a case (shared by the recorder, under TF, and the test, under tapeflow) --------------------------

def encode(v):
    """A JSON form of a result: tensors as {"dtype", "value"}, dtypes by name, containers kept."""
    import numpy as np
    if isinstance(v, dict):
        return {"dict": sorted([str(k), encode(x)] for k, x in v.items())}
    if isinstance(v, (list, tuple)):
        return [encode(x) for x in v]
    if hasattr(v, "numpy") and hasattr(v, "dtype"):
        a = np.asarray(v.numpy())
        return {"dtype": a.dtype.name, "value": a.tolist() if a.dtype.kind != "c" else repr(a.tolist())}
    if isinstance(v, np.ndarray):
        return {"dtype": v.dtype.name, "value": v.tolist()}
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (np.generic,)):
        return v.item()
    return repr(v)


def run_case(tf, program):
    """{"value": ...} or {"error": class name, "mro": [class names], "message": text}."""
    import os
    import shutil
    import tempfile

    import numpy as np
    tmp = tempfile.mkdtemp()
    try:
        with open(os.path.join(tmp, "f.txt"), "w") as f:
            f.write("hello")
        os.mkdir(os.path.join(tmp, "sub"))
        with open(os.path.join(tmp, "sub", "g"), "w") as f:
            f.write("x")
        ns = {"tf": tf, "np": np, "tmp": tmp}
        try:
            exec(program, ns)
            return {"value": encode(ns["result"])}
        except Exception as e:  # noqa: BLE001 -- the outcome is what is recorded
            msg = str(e).replace(tmp, "<tmp>")
            return {"error": type(e).__name__, "mro": [c.__name__ for c in type(e).__mro__], "message": msg}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
