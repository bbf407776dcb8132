"""How much of TF 2.21's public API a ported program can reach (wave 20).

benchmarks/tf_guides.py measures "a TF2 program ports by changing its import" on TF's guides; this
measures the API surface itself: of the public names of the namespaces a TF2 program uses (``tf``,
``tf.math``, ``tf.keras.layers``, ...), how many ``import tapeflow as tf`` resolves. A missing name is
an AttributeError on the first line that uses it.

The 30 namespaces of NAMESPACES make the total compared across waves; OTHER_NAMESPACES (wave 25) are
the rest of TF's tf.* namespaces, reported in a second table ("other namespaces").

Two steps:

    # 1. under TF 2.21 (peers venv): list TF's public names -> benchmarks/tf_api_surface.json
    .venv-peers/bin/python benchmarks/tf_api_surface.py --record
    # 2. under tapeflow: per namespace, present / refused / missing (Markdown)
    PYTHONPATH=$PWD .venv/bin/python benchmarks/tf_api_surface.py [--missing] [--update-json]

The JSON is committed (a list of names is a fact, not TF's code). ``--update-json`` also stores
tapeflow's present names in it: tests/test_api_surface.py checks they stay present (a removed
export fails CI without TF).

Each name is resolved with ``getattr`` on tapeflow's namespace, never called. Classes:
  present  the attribute resolves
  refused  it raises tapeflow's UnsupportedFeatureError, or is an UnsupportedNamespace
           (tapeflow/_unsupported.py: a documented out-of-scope decision, with a clear message)
  missing  AttributeError (or any other error on resolution, listed as such)
A public name is one without a leading underscore; TF's modules re-export nothing else, so
``dir()`` is the list (TF's ``__all__`` is absent on most of its generated API modules).
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JSON_PATH = ROOT / "benchmarks" / "tf_api_surface.json"

# The namespaces a TF2 program uses, in the order of the report. (tf.signal was kept out of the
# totals until wave 21, when complex dtypes and tf.signal were implemented.)
NAMESPACES = [
    "tf", "tf.math", "tf.nn", "tf.linalg", "tf.random", "tf.signal", "tf.image", "tf.strings",
    "tf.data", "tf.data.experimental", "tf.io", "tf.train", "tf.summary", "tf.config",
    "tf.keras.layers", "tf.keras.losses", "tf.keras.metrics", "tf.keras.optimizers",
    "tf.keras.callbacks", "tf.keras.activations", "tf.keras.initializers", "tf.keras.ops",
    "tf.keras.utils", "tf.experimental.numpy", "tf.sparse", "tf.ragged", "tf.saved_model",
    "tf.distribute", "tf.bitwise", "tf.dtypes",
]
NOT_IN_TOTALS: dict = {}

# wave 25 (api25): every other tf.* namespace two levels deep (TF 2.21's dir(), recursively), outside
# tf.keras (the Keras survey's), tf.raw_ops/compat/tpu/xla/mlir/lite/distribute's sub-namespaces. Reported
# in their own table, "other namespaces", so the 30 namespaces' total stays comparable with earlier waves.
OTHER_NAMESPACES = [
    "tf.audio", "tf.autodiff", "tf.autograph", "tf.autograph.experimental", "tf.config.experimental",
    "tf.config.optimizer", "tf.config.threading", "tf.debugging", "tf.debugging.experimental", "tf.dtensor",
    "tf.dtensor.proto", "tf.dtensor.python", "tf.dtypes.experimental", "tf.errors", "tf.experimental",
    "tf.experimental.dlpack", "tf.experimental.dtensor", "tf.experimental.extension_type",
    "tf.experimental.tensorrt", "tf.feature_column", "tf.graph_util", "tf.initializers", "tf.io.gfile",
    "tf.linalg.experimental", "tf.lookup", "tf.lookup.experimental", "tf.losses", "tf.math.special",
    "tf.metrics", "tf.nest", "tf.nn.experimental", "tf.optimizers", "tf.optimizers.legacy",
    "tf.optimizers.schedules", "tf.profiler", "tf.profiler.experimental", "tf.quantization",
    "tf.quantization.experimental", "tf.queue", "tf.random.experimental", "tf.saved_model.experimental",
    "tf.security", "tf.security.fuzzing", "tf.sets", "tf.summary.experimental", "tf.sysconfig", "tf.test",
    "tf.test.experimental", "tf.train.experimental", "tf.types", "tf.types.experimental", "tf.version",
]


def _kind(obj) -> str:
    if inspect.ismodule(obj) or type(obj).__name__ in ("LazyLoader", "KerasLazyLoader"):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "constant"


def _resolve(root, path: str):
    obj = root
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def record() -> dict:
    """Under TF 2.21: the public names of each namespace, with their kind."""
    import tensorflow as tf
    out = {"tf_version": tf.__version__, "namespaces": {}}
    for ns in NAMESPACES + OTHER_NAMESPACES:
        mod = _resolve(tf, ns)
        names = {}
        for name in sorted(n for n in dir(mod) if not n.startswith("_")):
            try:
                names[name] = _kind(getattr(mod, name))
            except Exception as e:   # a lazily loaded name that fails to load under TF itself
                names[name] = f"error: {type(e).__name__}"
        out["namespaces"][ns] = names
    return out


def classify(data: dict) -> dict:
    """Under tapeflow: ns -> {"present": [...], "refused": [...], "missing": [...], "errors": {name: msg}}."""
    import tapeflow
    from tapeflow._unsupported import UnsupportedFeatureError, UnsupportedNamespace
    result = {}
    for ns, names in data["namespaces"].items():
        row = {"present": [], "refused": [], "missing": [], "errors": {}}
        try:
            mod = _resolve(tapeflow, ns)
        except UnsupportedFeatureError:
            mod = UnsupportedNamespace("?")
        except AttributeError:
            mod = None
        for name in names:
            if mod is None:
                row["missing"].append(name)
                continue
            if isinstance(mod, UnsupportedNamespace):
                row["refused"].append(name)
                continue
            try:
                obj = getattr(mod, name)
            except UnsupportedFeatureError:
                row["refused"].append(name)
                continue
            except AttributeError:
                row["missing"].append(name)
                continue
            except Exception as e:   # resolution itself failed: a bug, counted missing and listed
                row["missing"].append(name)
                row["errors"][name] = f"{type(e).__name__}: {e}"[:200]
                continue
            if isinstance(obj, UnsupportedNamespace):
                row["refused"].append(name)
            else:
                row["present"].append(name)
        result[ns] = row
    return result


def table(data: dict, result: dict, namespaces=None) -> str:
    lines = ["| namespace | TF names | present | refused | missing | % |", "|---|---|---|---|---|---|"]
    tot = [0, 0, 0, 0]
    for ns, row in result.items():
        if namespaces is not None and ns not in namespaces:
            continue
        n = len(data["namespaces"][ns])
        p, r, m = len(row["present"]), len(row["refused"]), len(row["missing"])
        pct = 100.0 * p / n if n else 100.0
        label = f"`{ns}`" + (" (not in total)" if ns in NOT_IN_TOTALS else "")
        lines.append(f"| {label} | {n} | {p} | {r} | {m} | {pct:.0f} |")
        if ns not in NOT_IN_TOTALS:
            for i, v in enumerate((n, p, r, m)):
                tot[i] += v
    pct = 100.0 * tot[1] / tot[0] if tot[0] else 100.0
    lines.append(f"| **total** | {tot[0]} | {tot[1]} | {tot[2]} | {tot[3]} | {pct:.0f} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--record", action="store_true", help="under TF 2.21: write TF's public names to the JSON")
    ap.add_argument("--json", default=str(JSON_PATH))
    ap.add_argument("--missing", action="store_true", help="list the missing (and refused) names per namespace")
    ap.add_argument("--kinds", action="store_true", help="with --missing: each name's kind in TF")
    ap.add_argument("--update-json", action="store_true",
                    help="store tapeflow's present names in the JSON (the regression guard's list)")
    args = ap.parse_args(argv)
    path = Path(args.json)
    if args.record:
        data = record()
        old = json.loads(path.read_text()) if path.exists() else {}
        if "tapeflow_present" in old:
            data["tapeflow_present"] = old["tapeflow_present"]
        path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
        n = sum(len(v) for v in data["namespaces"].values())
        print(f"TF {data['tf_version']}: {n} public names in {len(data['namespaces'])} namespaces -> {path}")
        return 0
    data = json.loads(path.read_text())
    result = classify(data)
    print(f"TF {data['tf_version']}'s public names, resolved by tapeflow:\n")
    print(table(data, result, NAMESPACES))
    for ns, why in NOT_IN_TOTALS.items():
        print(f"\n`{ns}` is not in the total: {why}.")
    others = [ns for ns in OTHER_NAMESPACES if ns in result]
    if others:
        print("\nOther namespaces (wave 25: the rest of TF's tf.* namespaces two levels deep, outside tf.keras; "
              "not in the total above):\n")
        print(table(data, result, others))
    if args.missing:
        for ns, row in result.items():
            if row["missing"]:
                kinds = data["namespaces"][ns]
                items = [f"{n} ({kinds[n]})" if args.kinds else n for n in row["missing"]]
                print(f"\n{ns} missing ({len(items)}): " + ", ".join(items))
            if row["refused"]:
                print(f"{ns} refused ({len(row['refused'])}): " + ", ".join(row["refused"]))
            for name, err in row["errors"].items():
                print(f"  {ns}.{name}: resolution raised {err}")
    if args.update_json:
        data["tapeflow_present"] = {ns: row["present"] for ns, row in result.items()}
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"\ntapeflow's present names stored in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
