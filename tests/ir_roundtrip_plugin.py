"""Round-trip every graph the test suite traces through the serialized IR (a golden check
over the suite's whole corpus, too slow to run on every suite run):

    PYTHONPATH=$PWD python -m pytest tests -p tests.ir_roundtrip_plugin -q

Each trace's raw and optimized graphs go through ``graph_to_json`` -> JSON text ->
``graph_from_json`` and must compare equal (``graph_equal``); a graph holding a Python
callable (py_function) must raise ``UnserializableError``. The counts and the first
failures are written to ``$TAPEFLOW_ROUNDTRIP_OUT`` (default /tmp/ir_roundtrip-<pid>.json)
per process. (test_summary's check of TRACE_LISTENERS sees the extra listener.)"""
import atexit
import json
import os

COUNTS = {"graphs": 0, "equal": 0, "unserializable": 0, "failed": 0}
FAILURES = []


def _listener(cf):
    from tapeflow.ir import serialize as S
    for g in (cf.raw_graph, cf.graph):
        COUNTS["graphs"] += 1
        table, back = {}, {}

        def ref(v):
            if id(v) not in table:
                table[id(v)] = len(table)
                back[table[id(v)]] = v
            return table[id(v)]
        t = S.Tables(variable_ref=ref, variable_of=back.__getitem__)
        try:
            text = json.dumps(S.graph_to_json(g, t, cf.name), allow_nan=False)
        except S.UnserializableError:
            COUNTS["unserializable"] += 1
            continue
        except Exception as e:  # noqa: BLE001 -- any other error is a finding
            COUNTS["failed"] += 1
            FAILURES.append(f"{os.environ.get('PYTEST_CURRENT_TEST')}: {cf.name}: dump: {type(e).__name__}: {e}"[:400])
            continue
        try:
            t2 = S.Tables(variable_of=back.__getitem__, arrays=t.arrays, rngs=json.loads(json.dumps(t.rngs)))
            why = S.graph_equal(S.graph_from_json(json.loads(text), t2, cf.name), g, explain=True)
        except Exception as e:  # noqa: BLE001
            why = f"load: {type(e).__name__}: {e}"
        if why:
            COUNTS["failed"] += 1
            FAILURES.append(f"{os.environ.get('PYTEST_CURRENT_TEST')}: {cf.name}: {why}"[:400])
        else:
            COUNTS["equal"] += 1


def pytest_configure(config):
    from tapeflow.compiler.function import TRACE_LISTENERS
    TRACE_LISTENERS.append(_listener)


def _dump():
    out = os.environ.get("TAPEFLOW_ROUNDTRIP_OUT", f"/tmp/ir_roundtrip-{os.getpid()}.json")
    with open(out, "w") as f:
        json.dump({"counts": COUNTS, "failures": FAILURES[:200]}, f, indent=1)


atexit.register(_dump)
