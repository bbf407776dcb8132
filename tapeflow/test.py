"""``tf.test``: TF 2.21's test helpers for tests written against TF (wave 20).

``TestCase`` is a ``unittest.TestCase`` (so pytest and ``unittest`` both run it) with TF's
array assertions (``assertAllClose`` and kin: nested structures of tensors/arrays, TF's default
tolerances 1e-6, NumPy's mismatch report), ``evaluate`` (tensors -> NumPy over a structure),
``get_temp_dir`` and a ``cached_session``/``session`` context whose ``run`` is ``evaluate`` (TF2
tests use them only as a scope). ``compute_gradient`` is TF's gradient checker: the theoretical
Jacobians from the tape and the numerical ones by central differences with TF's step 1/1024, each
(y size, x size). tapeflow runs on the CPU: ``gpu_device_name()`` is '' and the ``is_built_with_*``
queries are False, as TF 2.21's CPU build answers (except XLA, which tapeflow does not have).
"""
from __future__ import annotations

import contextlib
import re
import tempfile
import unittest

import numpy as np

from . import errors
from .core.tensor import Tensor, convert_to_tensor


def _np(x):
    if isinstance(x, Tensor) or hasattr(x, "numpy"):
        return np.asarray(x.numpy())
    return np.asarray(x)


def _flat_pairs(a, b, path=""):
    """Yield (path, a_leaf, b_leaf) over two structures (dicts by key, lists/tuples by position),
    as TF's _assertAllCloseRecursive walks them; a structure mismatch is an AssertionError."""
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)):
            other = type(a if not isinstance(a, dict) else b).__name__
            raise AssertionError(f"{path or 'value'}: one is a dict, the other {other}")
        if set(a) != set(b):
            raise AssertionError(f"{path or 'value'}: mismatched keys: {sorted(map(str, a))} vs {sorted(map(str, b))}")
        for k in a:
            yield from _flat_pairs(a[k], b[k], f"{path}[{k!r}]")
        return
    seq = (list, tuple)
    if isinstance(a, seq) and isinstance(b, seq) and not _is_array_like(a) and not _is_array_like(b):
        if len(a) != len(b):
            raise AssertionError(f"{path or 'value'}: lengths differ: {len(a)} vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _flat_pairs(x, y, f"{path}[{i}]")
        return
    yield path, a, b


def _is_array_like(x):
    # a list of numbers (not of tensors or structures) is one array, as np.asarray reads it
    try:
        arr = np.asarray(x)
    except Exception:  # noqa: BLE001  (ragged nesting)
        return False
    return arr.dtype != object


_PROCESS_TEMP = []


def _process_temp_dir():
    """One directory per process that every test's get_temp_dir lives in, removed at exit (TF's
    googletest.GetTempDir); a directory per test left in /tmp piled up one per TestCase test."""
    if not _PROCESS_TEMP:
        import atexit
        import shutil
        d = tempfile.mkdtemp(prefix="tapeflow_test_")
        atexit.register(shutil.rmtree, d, True)
        _PROCESS_TEMP.append(d)
    return _PROCESS_TEMP[0]


class TestCase(unittest.TestCase):
    """TF 2.21's ``tf.test.TestCase`` assertions on tapeflow tensors."""

    # -- running ---------------------------------------------------------------------------------------
    def evaluate(self, tensors):
        """Tensors (any structure of them) -> NumPy values; other leaves pass through."""
        from .util import nest
        return nest.map_structure(lambda t: t.numpy() if isinstance(t, Tensor) else t, tensors)

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """TF2 tests use the session only as a scope; its ``run`` is ``evaluate``."""
        yield _Session(self)

    session = cached_session

    def test_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        # unittest collects this name as a test: TF skips it there, as here
        if self.id().endswith(".test_session"):
            self.skipTest("Not a test.")
        return self.cached_session(graph, config, use_gpu, force_gpu)

    def get_temp_dir(self):
        if not getattr(self, "_tf_temp_dir", None):
            self._tf_temp_dir = tempfile.mkdtemp(prefix=f"{type(self).__name__}_", dir=_process_temp_dir())
        return self._tf_temp_dir

    # -- array assertions -------------------------------------------------------------------------------
    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        for path, x, y in _flat_pairs(a, b):
            x, y = _np(x), _np(y)
            self._shape_equal(x, y, path, msg)
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=" ".join(s for s in (msg, path and f"at {path}") if s) or "")

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6, float_atol=1e-6,  # noqa: N802
                                      half_rtol=1e-3, half_atol=1e-3, bfloat16_rtol=1e-2, bfloat16_atol=1e-2,
                                      msg=None):
        x, y = _np(a), _np(b)
        if np.float32 in (x.dtype, y.dtype):
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.float16 in (x.dtype, y.dtype):
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        self.assertAllClose(x, y, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        raise AssertionError(msg or "The two values are close at all elements")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        for path, x, y in _flat_pairs(a, b):
            x, y = _np(x), _np(y)
            self._shape_equal(x, y, path, msg)
            np.testing.assert_array_equal(x, y, err_msg=" ".join(s for s in (msg, path and f"at {path}") if s) or "")

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        try:
            self.assertAllEqual(a, b, msg=msg)
        except AssertionError:
            return
        raise AssertionError(msg or "The two values are equal at all elements")

    def _shape_equal(self, x, y, path, msg):
        if x.shape != y.shape and x.size != 1 and y.size != 1:
            where = f" at {path}" if path else ""
            raise AssertionError(f"Shape mismatch{where}: expected {x.shape}, got {y.shape}. Contents: {y!r}. "
                                 f"{msg or ''}".rstrip())

    def _compare_all(self, a, target, op, word):
        x = _np(a)
        bad = ~op(x, target)
        if np.any(bad):
            raise AssertionError(f"{x!r} is not {word} {target!r} (at {np.argwhere(bad).tolist()[:10]})")

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, comparison_target, np.greater, "greater than")

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, comparison_target, np.greater_equal, "greater than or equal to")

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, comparison_target, np.less, "less than")

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, comparison_target, np.less_equal, "less than or equal to")

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        x = _np(target)
        lo = np.greater if open_lower_bound else np.greater_equal
        hi = np.less if open_upper_bound else np.less_equal
        bad = ~(lo(x, lower_bound) & hi(x, upper_bound))
        if np.any(bad):
            raise AssertionError(f"{int(bad.sum())} of the {x.size} element(s) are outside the range "
                                 f"{'(' if open_lower_bound else '['}{lower_bound}, {upper_bound}"
                                 f"{')' if open_upper_bound else ']'}: {x[bad].tolist()[:10]}")

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        x = _np(target)
        diff = set(x.ravel().tolist()) - set(np.asarray(list(expected_set)).ravel().tolist())
        if diff:
            raise AssertionError(f"{sorted(diff)} not in the expected set {sorted(expected_set)}")

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        if not (f1 == f2 or abs(f1 - f2) <= err):
            raise AssertionError(f"{f1!r} != {f2!r} +/- {err!r}{' : ' + msg if msg else ''}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):  # noqa: N802
        if not np.all(np.abs(_np(ndarray1) - _np(ndarray2)) <= err):
            raise AssertionError(msg or f"arrays differ by more than {err}")

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        from .core import dtypes
        want = dtypes.as_dtype(expected_dtype).np
        for path, x, _ in _flat_pairs(target, target):
            self.assertEqual(_np(x).dtype, want, f"dtype at {path or 'value'}")

    def assertShapeEqual(self, input_a, input_b, msg=None):  # noqa: N802
        a = _np(input_a).shape
        b = tuple(input_b.shape)
        self.assertEqual(a, b, msg=msg or f"Shape mismatch: {a} vs {b}")

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        return self.assertRaisesWithPredicateMatch(errors.OpError, expected_err_re_or_predicate)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):  # noqa: N802
        if callable(expected_err_re_or_predicate):
            pred = expected_err_re_or_predicate
        else:
            def pred(e):
                return re.search(expected_err_re_or_predicate, str(e)) is not None
        try:
            yield
        except exception_type as e:
            if not pred(e):
                raise AssertionError(f"Exception of type {type(e).__name__}: {e}") from e
        else:
            raise AssertionError(f"{exception_type.__name__} not raised")

    # absl's parameterized-test helpers that TF's TestCase inherits, the common ones
    def assertLen(self, container, expected_len, msg=None):  # noqa: N802
        self.assertEqual(len(container), expected_len, msg)

    def assertEmpty(self, container, msg=None):  # noqa: N802
        self.assertEqual(len(container), 0, msg or f"{container!r} has length of {len(container)}.")

    def assertNotEmpty(self, container, msg=None):  # noqa: N802
        self.assertNotEqual(len(container), 0, msg or f"{container!r} has length of 0.")

    def assertStartsWith(self, actual, expected_start, msg=None):  # noqa: N802
        self.assertTrue(actual.startswith(expected_start), msg or f"{actual!r} does not start with {expected_start!r}")

    def assertEndsWith(self, actual, expected_end, msg=None):  # noqa: N802
        self.assertTrue(actual.endswith(expected_end), msg or f"{actual!r} does not end with {expected_end!r}")

    def assertBetween(self, value, minv, maxv, msg=None):  # noqa: N802
        self.assertTrue(minv <= value <= maxv, msg or f"{value!r} is not between {minv!r} and {maxv!r}")

    def assertItemsEqual(self, expected_seq, actual_seq, msg=None):  # noqa: N802
        self.assertCountEqual(expected_seq, actual_seq, msg)

    def assertSameElements(self, expected_seq, actual_seq, msg=None):  # noqa: N802
        self.assertEqual(set(expected_seq), set(actual_seq), msg)

    def assertContainsSubset(self, expected_subset, actual_set, msg=None):  # noqa: N802
        missing = set(expected_subset) - set(actual_set)
        self.assertFalse(missing, msg or f"Missing elements {missing}")


class _Session:
    def __init__(self, case):
        self._case = case

    def run(self, fetches, feed_dict=None):
        if feed_dict:
            raise NotImplementedError("session.run(feed_dict=...) is TF1's; tapeflow tests call functions with "
                                      "their arguments")
        return self._case.evaluate(fetches)


def main(argv=None):
    """``tf.test.main``: run the module's tests (unittest's runner; TF's is absltest's)."""
    return unittest.main(argv=argv)


def gpu_device_name():
    """'' : no GPU (tapeflow runs on the CPU), TF's answer without one."""
    return ""


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    return False


def is_built_with_cuda():
    return False


def is_built_with_rocm():
    return False


def is_built_with_gpu_support():
    return False


def is_built_with_xla():
    return False   # TF 2.21 says True; tapeflow.function compiles to its own backends, not XLA


def compute_gradient(f, x, delta=None):
    """TF's ``tf.test.compute_gradient``: (theoretical, numerical) tuples of Jacobians, one per
    argument in ``x``, each of shape (size of f(*x), size of that argument): the theoretical ones
    from the tape (one row per output element), the numerical ones by central differences
    ``(f(x + d) - f(x - d)) / 2d`` computed in the argument's dtype, ``d`` = ``delta`` or TF's
    1/1024 (TF 2.21: d/dx sum(x**3) at 1 is 3.00000095 in float64, 3 + d**2)."""
    from .autodiff.tape import GradientTape
    delta = 1.0 / 1024 if delta is None else float(delta)
    xs = [np.asarray(_np(v)) for v in x]
    for i, v in enumerate(xs):
        if not np.issubdtype(v.dtype, np.floating):
            # TF 2.21's AssertionError and text
            raise AssertionError(f"Cannot compute gradient for unsupported type {v.dtype} of argument {i} "
                                 "(the gradient checker needs floating arguments)")

    def call(args):
        return _np(f(*[convert_to_tensor(a) for a in args]))
    y0 = call(xs)
    theoretical = []
    for i, v in enumerate(xs):
        jac = np.zeros((y0.size, v.size), v.dtype)
        for j in range(y0.size):
            ts = [convert_to_tensor(a) for a in xs]
            with GradientTape() as tape:
                for t in ts:
                    tape.watch(t)
                y = f(*ts)
            seed = np.zeros(y0.size, y0.dtype)
            seed[j] = 1
            g = tape.gradient(y, ts[i], output_gradients=convert_to_tensor(seed.reshape(y0.shape)))
            if g is not None:
                jac[j] = _np(g).ravel()
        theoretical.append(jac)
    numerical = []
    for i, v in enumerate(xs):
        jac = np.zeros((y0.size, v.size), v.dtype)
        d = v.dtype.type(delta)
        for k in range(v.size):
            pos, neg = [a.copy() for a in xs], [a.copy() for a in xs]
            pos[i].reshape(-1)[k] += d
            neg[i].reshape(-1)[k] -= d
            jac[:, k] = ((call(pos) - call(neg)) / (d + d)).ravel()
        numerical.append(jac)
    return tuple(theoretical), tuple(numerical)


# --- wave 25 (api25): TF 2.21's remaining plain helpers -------------------------------------------------

def is_cpu_target_available(target):
    """Whether ``target`` (TF's prefixes: 'x86', 'aarch64', 'arm', 'ppc'/'powerpc', 's390x') is this machine's
    CPU family. TF answers for the LLVM back ends its XLA was built with; tapeflow compiles for the CPU it runs
    on only. An unknown target is TF's AssertionError."""
    import platform
    families = (("arm", ("armv", "arm")), ("aarch64", ("aarch64", "arm64")), ("ppc", ("ppc", "powerpc")),
                ("powerpc", ("ppc", "powerpc")), ("x86", ("x86", "i386", "i686", "amd64")), ("s390x", ("s390x",)))
    here = platform.machine().lower()
    for prefix, machines in families:
        if target.startswith(prefix):
            return here.startswith(machines)
    raise AssertionError("Unknown CPU target: " + target)


def disable_with_predicate(pred, skip_message):
    """A test-method decorator: the test is skipped (``skipTest(skip_message)``) when ``pred()`` is true."""
    import functools

    def decorator(func):
        @functools.wraps(func)
        def wrapper(self, *args, **kwargs):
            if pred():
                self.skipTest(skip_message)
            else:
                return func(self, *args, **kwargs)
        return wrapper
    return decorator


def with_eager_op_as_function(cls=None, only_as_function=False):
    """The class itself (TF 2.21 keeps the decorator as a no-op: eager ops run as functions by default)."""
    if cls is not None:
        return cls
    return lambda c: c


class Benchmark:
    """tf.test.Benchmark: a base class whose ``report_benchmark`` prints a benchmark entry (TF prints its
    BenchmarkEntries proto when no report file is requested, which tapeflow always does), named
    ``<class>.<method>`` after the calling benchmark method; ``evaluate`` gives tensors' NumPy values."""

    @classmethod
    def is_abstract(cls):
        return cls is Benchmark

    def _get_name(self, overwrite_name=None):
        import inspect
        name = None
        for frame in inspect.stack()[::-1]:   # the outermost call on this object names the benchmark
            if frame.frame.f_locals.get("self", None) is self:
                name = frame.function
                break
        if name is None and overwrite_name is None:
            raise ValueError("Unable to determine calling Benchmark class.")
        return f"{type(self).__name__}.{overwrite_name or name}"

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None, extras=None,
                         name=None, metrics=None):
        if extras is not None and not isinstance(extras, dict):
            raise TypeError("extras must be a dict")
        if metrics is not None:
            if not isinstance(metrics, list):
                raise TypeError("metrics must be a list")
            for m in metrics:
                for key in ("name", "value"):
                    if key not in m:
                        raise TypeError(f"metric must has a '{key}' field")
        lines = ["entry {", f'  name: "{self._get_name(name)}"']
        for field, v in (("iters", iters), ("cpu_time", cpu_time), ("wall_time", wall_time),
                         ("throughput", throughput)):
            if v is not None:
                lines.append(f"  {field}: {v}")
        for k, v in (extras or {}).items():
            kind = "double_value" if isinstance(v, (int, float)) else "string_value"
            val = v if kind == "double_value" else f'"{v}"'
            lines.append(f'  extras {{\n    key: "{k}"\n    value {{\n      {kind}: {val}\n    }}\n  }}')
        for m in metrics or ():
            lines.append(f'  metrics {{\n    name: "{m["name"]}"\n    value: {m["value"]}\n  }}')
        lines.append("}")
        print("\n".join(lines))

    def evaluate(self, tensors):
        from .util import nest
        return nest.map_structure(lambda t: _np(t) if isinstance(t, Tensor) or hasattr(t, "numpy") else t,
                                  tensors)

    def run_op_benchmark(self, sess, op_or_tensor, *args, **kwargs):
        from ._unsupported import unsupported_name
        raise unsupported_name("test.Benchmark.run_op_benchmark")


class experimental:  # noqa: N801  (tf.test.experimental namespace)
    @staticmethod
    def sync_devices():
        """Waits for the devices' queued work: tapeflow's ops run synchronously on the CPU, so there is none."""


__all__ = ["TestCase", "main", "gpu_device_name", "is_gpu_available", "is_built_with_cuda", "is_built_with_rocm",
           "is_built_with_gpu_support", "is_built_with_xla", "compute_gradient", "is_cpu_target_available",
           "disable_with_predicate", "with_eager_op_as_function", "Benchmark", "experimental"]

# TF's GraphDef, session and cluster helpers: out of scope, by name (tapeflow/_unsupported.py NAMES)
from ._unsupported import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("test", "tapeflow.test")
