"""The names outside the API survey's 30 namespaces (wave 25, api25) against TF 2.21's recorded outcomes
(tests/other_ns25_cases.py, recorded by tests/tf_reference/make_other_ns25_reference.py into
tests/data/other_ns25.json); their error cases in every mode are in tests/bad_input_cases.py ('api25_')."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf
from tapeflow._unsupported import UnsupportedFeatureError, UnsupportedNamespace
from other_ns25_cases import CASES, run_case

REF = json.loads((Path(__file__).resolve().parent / "data" / "other_ns25.json").read_text())["cases"]


def _same(a, b, where="result"):
    if isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=2e-6, abs_tol=1e-7), f"{where}: {a} != TF's {b}"
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), f"{where}: {a} != TF's {b}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict) and isinstance(b, dict):
        assert sorted(a) == sorted(b), f"{where}: {a} != TF's {b}"
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    else:
        assert a == b, f"{where}: {a!r} != TF's {b!r}"


@pytest.mark.parametrize("name, program, check", CASES, ids=[c[0] for c in CASES])
def test_case_as_tf(name, program, check):
    want, got = REF[name], run_case(tf, program)
    if "value" in want:
        assert "value" in got, f"{name}: raised {got.get('error')}: {got.get('message')}"
        _same(got["value"], want["value"])
        return
    assert "error" in got, f"{name}: returned {got['value']!r} where TF raised {want['error']}"
    assert want["error"] in got["mro"], f"{name}: {got['error']} ({got['message']}) where TF raised {want['error']}"
    if check == "message":
        assert got["message"] == want["message"]


def test_optional_empty_traced_get_value_raises_when_known():
    # an Optional made empty inside the function: its emptiness is known at trace time
    f = tf.function(lambda x: tf.experimental.Optional.empty(tf.TensorSpec([], tf.float32)).get_value() + x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not have a value"):
        f(tf.constant(1.0))


def test_benchmark_evaluate_gives_numpy():
    # TF 2.21's Benchmark.evaluate reaches for a TF1 cached_session its class lacks (AttributeError);
    # tapeflow's gives the values, as its docstring says
    out = tf.test.Benchmark().evaluate([tf.constant(2.0), (tf.constant([1, 2]),)])
    assert out[0] == 2.0 and np.array_equal(out[1][0], [1, 2])


def test_determinism_flag_recorded():
    from tapeflow import config
    config.experimental.enable_op_determinism()
    assert config.is_op_determinism_enabled()
    config.experimental.disable_op_determinism()
    assert not config.is_op_determinism_enabled()


@pytest.mark.parametrize("path, words", [
    ("experimental.StructuredTensor", "StructuredTensor"), ("experimental.dlpack.to_dlpack", "DLPack"),
    ("experimental.float8_e4m3fn", "8-, 4- and 2-bit"), ("experimental.async_scope", "asynchronous"),
    ("experimental.tensorrt.Converter", "TF-TRT"), ("experimental.dtensor.Mesh", "DTensor"),
    ("debugging.experimental.enable_dump_debug_info", "Debugger V2"),
    ("quantization.experimental.quantize_saved_model", "SavedModel quantizer"),
    ("profiler.experimental.server.start", "remote profiling"), ("sysconfig.get_include", "C\\+\\+ ops"),
    ("test.benchmark_config", "ConfigProto"), ("test.create_local_cluster", "clusters"),
    ("config.experimental.ClusterDeviceFilters", "clusters"), ("types.experimental.AtomicFunction", "runtime"),
    ("types.experimental.distributed.Mirrored", "per-replica"),
])
def test_out_of_scope_names_say_what_they_are(path, words):
    obj = tf
    with pytest.raises(UnsupportedFeatureError, match=words):
        for part in path.split("."):
            obj = getattr(obj, part)
            assert not isinstance(obj, UnsupportedNamespace) or part != path.split(".")[-1]


def test_typos_stay_attribute_errors():
    for mod in (tf.experimental, tf.config.experimental, tf.types.experimental, tf.profiler.experimental):
        with pytest.raises(AttributeError) as info:
            getattr(mod, "NoSuchName")
        assert not isinstance(info.value, NotImplementedError)


def test_callable_type():
    f = tf.function(lambda x: x)
    assert isinstance(f, tf.types.experimental.Callable)
    assert isinstance(f.get_concrete_function(tf.constant(1.0)), tf.types.experimental.Callable)
    assert not isinstance(len, tf.types.experimental.Callable)


def test_bool_of_traced_tensor_is_operator_not_allowed():
    # TF 2.21 raises OperatorNotAllowedInGraphError (a TypeError) for `if tensor:` in a graph without AutoGraph
    @tf.function(autograph=False)
    def f(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError, match="symbolic tensor"):
        f(tf.constant(1.0))
