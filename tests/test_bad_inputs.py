"""The bad-input table (issue 10 item 11, issue 15 item 1): every case of
tests/bad_input_cases.py runs eagerly, compiled (python backend), native
(numba backend; a graph it cannot lower must fall back cleanly) and fused (the
second tier forced on the first call), and every mode must give the outcome
real TF 2.21 gave (tests/tf_reference/bad_inputs.json, written by
tests/tf_reference/run_tf_bad_inputs.py): the same exception class (from
tapeflow.errors, or the builtin one) with the op named in the message, or the
same value, dtype and shape.

DEVIATIONS lists the few cases where tapeflow deliberately differs from TF,
each with its reason: TF returns a silently wrong value there, or its eager
and compiled modes disagree (tapeflow gives one outcome in every mode).
"""
import json
import os
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import errors

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bad_input_cases import CASES  # noqa: E402

with open(os.path.join(HERE, "tf_reference", "bad_inputs.json")) as _f:
    TF = json.load(_f)["cases"]

_OVERFLOW = ("TF 2.21 wraps a Python int that does not fit the tensor's dtype (2**40 -> 0 in int32); "
             "a silent wrong value, so tapeflow raises (NumPy 2 raises too)")
DEVIATIONS = {
    "variable_assign_py_int_overflow": ({"kind": "raise", "cls": "InvalidArgumentError"}, _OVERFLOW),
    "variable_assign_add_int_overflow": ({"kind": "raise", "cls": "InvalidArgumentError"}, _OVERFLOW),
    "int32_add_py_big": ({"kind": "raise", "cls": "ValueError"}, _OVERFLOW),
    "constant_int32_overflow": ({"kind": "raise", "cls": "InvalidArgumentError"}, _OVERFLOW),
    "numpy_operand_int_overflow": ({"kind": "raise", "cls": "InvalidArgumentError"},
                                   "TF converts the NumPy int64 to the int32 tensor's dtype by wrapping (2**40 "
                                   "adds 0); tapeflow converts NumPy operands only where the values survive"),
    "numpy_operand_fraction_to_int": ({"kind": "raise", "cls": "InvalidArgumentError"},
                                      "TF truncates a NumPy 1.5 to the int32 tensor's 1; a silent wrong value"),
    "range_start_after_limit": ({"kind": "value", "dtype": "int32", "shape": [0], "values": []},
                                "TF's eager Range kernel raises for start > limit, while its tf.function "
                                "loops `for i in tf.range(n)` run zero times for n < 0; tapeflow gives the "
                                "empty range (Python's range) in every mode, so eager and compiled agree"),
    "index_embedding_minus1": ({"kind": "raise", "cls": "InvalidArgumentError"},
                               "Keras 3's Embedding wraps -1 to the last row (NumPy's take); tf.gather and "
                               "Keras 2's Embedding raise, and a wrapped id is a silent wrong lookup"),
}

MODES = ("eager", "python", "numba", "fused")

#: (case, mode) -> why it fails on this branch; each is an xfail, so a fix shows up as XPASS
PENDING = {
}


def expected(name):
    if name in DEVIATIONS:
        return DEVIATIONS[name][0]
    return TF[name]["eager"]


def make(program):
    ns = {"tf": tf, "np": np}
    if "\n" not in program and program.lstrip().startswith("lambda"):
        return eval(program, ns)
    exec(program, ns)
    return ns["f"]


def run(mode, program, inputs, setenv=os.environ.__setitem__):
    """One case in one mode (benchmarks/bad_input_outcomes.py runs it too);
    ``setenv`` sets the tier-up variable (a test passes monkeypatch.setenv)."""
    f = make(program)
    args = [tf.constant(a) for a in inputs]
    if mode == "eager":
        return f(*args)
    if mode == "fused":
        setenv("TAPEFLOW_FUSE_AFTER", "1")  # the second tier compiles before the first call
        return tf.function(f, backend="python")(*args)
    if mode == "numba":
        try:
            return tf.function(f, backend="numba")(*args)
        except NotImplementedError as e:
            if not str(e).startswith("numba backend:"):
                raise
        # the native backend declined the graph: the clean fallback is the python backend
        f = make(program)
    setenv("TAPEFLOW_FUSE_AFTER", "0")
    return tf.function(f, backend="python")(*args)


def _exc_class(name):
    import builtins
    cls = getattr(errors, name, None) or getattr(builtins, name, None)
    assert isinstance(cls, type) and issubclass(cls, BaseException), name
    return cls


def _values(enc):
    return np.array([float(v) if isinstance(v, str) else v for v in enc["values"]], dtype=enc["dtype"]) \
        .reshape(enc["shape"])


def check(name, needle, exp, got_value, got_exc):
    if exp["kind"] == "raise":
        cls = _exc_class(exp["cls"])
        assert got_exc is not None, f"{name}: TF raises {exp['cls']}, tapeflow returned {got_value!r}"
        assert isinstance(got_exc, cls), (f"{name}: TF raises {exp['cls']}, tapeflow raised "
                                          f"{type(got_exc).__name__}: {got_exc}")
        if needle is not None:
            assert needle.lower() in str(got_exc).lower(), f"{name}: message does not name {needle!r}: {got_exc}"
        return
    if got_exc is not None:
        raise AssertionError(f"{name}: TF returns a value, tapeflow raised "
                             f"{type(got_exc).__name__}: {got_exc}") from got_exc
    if exp["kind"] == "list":
        assert isinstance(got_value, (list, tuple)) and len(got_value) == len(exp["items"]), name
        for i, (e, v) in enumerate(zip(exp["items"], got_value)):
            check(f"{name}[{i}]", needle, e, v, None)
        return
    got = np.asarray(got_value.numpy() if hasattr(got_value, "numpy") else got_value)
    want = _values(exp)
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype}, TF {want.dtype}"
    assert got.shape == want.shape, f"{name}: shape {got.shape}, TF {want.shape}"
    if want.dtype.kind == "f":
        # TF and NumPy kernels may differ in the last bit (summation order)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0, equal_nan=True, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_table_is_big_and_has_references():
    assert len(CASES) >= 150
    assert {c[0] for c in CASES} <= set(TF), "run tests/tf_reference/run_tf_bad_inputs.py after adding cases"
    assert set(DEVIATIONS) <= {c[0] for c in CASES}
    for name, program, inputs, needle in CASES:
        if expected(name)["kind"] == "raise":
            assert needle, f"{name}: a raising case must say which op its message names"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,program,inputs,needle", CASES, ids=[c[0] for c in CASES])
def test_bad_input(name, program, inputs, needle, mode, monkeypatch, request):
    if (name, mode) in PENDING:
        request.applymarker(pytest.mark.xfail(reason=PENDING[(name, mode)], strict=False))
    value = exc = None
    try:
        value = run(mode, program, inputs, monkeypatch.setenv)
    except Exception as e:  # noqa: BLE001  (the outcome under test)
        exc = e
    check(name, needle, expected(name), value, exc)


def test_error_classes_are_tfs_and_builtin():
    e = errors.InvalidArgumentError(None, None, "bad")
    assert (e.message, e.op, e.node_def, e.error_code, str(e)) == ("bad", None, None, errors.INVALID_ARGUMENT, "bad")
    assert isinstance(e, errors.OpError) and isinstance(e, ValueError)
    assert issubclass(errors.InvalidArgumentTypeError, TypeError)
    assert issubclass(errors.InvalidArgumentIndexError, IndexError)
    assert issubclass(errors.ResourceExhaustedError, MemoryError)
    assert errors.exception_type_from_error_code(errors.NOT_FOUND) is errors.NotFoundError
    # the one-argument form keeps the class when code re-raises with context
    assert type(errors.InvalidArgumentTypeError("x")).__name__ == "InvalidArgumentTypeError"
    assert str(type(e)(str(e) + " more")) == "bad more"
