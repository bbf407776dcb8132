"""The eager-vs-compiled half of benchmarks/op_fuzz.py in every test run: its grid (each of its ~180
templates, one public op each, with a first argument of each of 9 dtypes, the other arguments, shapes and
values random from seed 0, NaN/inf/empty included: ~1,600 programs, ~15 s) gives the same outcome
eagerly and inside tapeflow.function (the same value, dtype and shape, or the same exception class),
except ops whose result length depends on values, which a trace refuses by name (op_fuzz.TRACE_REFUSED).
The TF half (TF 2.21's outcomes) needs the peers venv: `python benchmarks/op_fuzz.py --seed 1`."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import op_fuzz  # noqa: E402


def test_eager_and_compiled_agree_on_random_programs():
    records = op_fuzz.run("tapeflow", 0, 0, compiled=True, progs=op_fuzz.grid(0))
    bad = op_fuzz.eager_vs_compiled(records)
    assert not bad, op_fuzz.report(records)


def test_the_comparison_can_fail():
    ok = {"k": "ok", "dtype": "float32", "shape": [2], "v": [1.0, None]}
    assert op_fuzz.same(ok, dict(ok))
    assert not op_fuzz.same(ok, dict(ok, dtype="float64"))
    assert not op_fuzz.same(ok, dict(ok, v=[1.0, 2.0]))         # NaN only equals NaN
    assert not op_fuzz.same(ok, {"k": "err", "cls": ["ValueError"], "msg": ""})
    err = {"k": "err", "cls": ["InvalidArgumentError", "OpError", "ValueError"], "msg": ""}
    assert op_fuzz.same({"k": "err", "cls": ["ValueError"], "msg": ""}, err)   # TF's class among tapeflow's bases
    assert not op_fuzz.same({"k": "err", "cls": ["TypeError"], "msg": ""}, err)
    rec = {"i": 0, "src": "tf.gather_nd(x, y)", "args": [], "eager": ok, "fn": dict(ok, shape=[1])}
    assert op_fuzz.eager_vs_compiled([rec]) == [rec]
