"""TF 2.21's view of the checkpoints of checkpoint_inspection_programs.py for
tests/test_checkpoint_inspection.py (tbl20): tf.train.list_variables, the order of
load_checkpoint(...).get_variable_to_shape_map() (a libstdc++ unordered_map's), its shapes and
dtypes, and the _CHECKPOINTABLE_OBJECT_GRAPH entry's bytes; and for the reader-order cases the
order of the keys as a permutation of their sorted list. Run with the peers venv:
    python tests/tf_reference/make_checkpoint_inspection_reference.py
It writes tests/data/checkpoint_inspection_tf.json."""
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import checkpoint_inspection_programs as P  # noqa: E402


def inspect(path):
    r = tf.train.load_checkpoint(path)
    shapes, dtypes = r.get_variable_to_shape_map(), r.get_variable_to_dtype_map()
    return {"list_variables": [[k, s] for k, s in tf.train.list_variables(path)],
            "order": list(shapes), "dtype_order": list(dtypes),
            "shapes": shapes, "dtypes": {k: v.name for k, v in dtypes.items()},
            "object_graph": r.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH").hex()}


out = {"tf_version": tf.__version__, "programs": {}, "orders": {}}
with tempfile.TemporaryDirectory() as d:
    for name, prog in P.PROGRAMS.items():
        out["programs"][name] = inspect(prog(tf, f"{d}/{name}"))
    for n in P.ORDER_SIZES:
        order = list(tf.train.load_checkpoint(P.order_case(tf, d, n)).get_variable_to_shape_map())
        srt = sorted(order)
        pos = {k: i for i, k in enumerate(srt)}
        out["orders"][str(n)] = [pos[k] for k in order]
(HERE.parent / "data" / "checkpoint_inspection_tf.json").write_text(json.dumps(out, separators=(",", ":")) + "\n")
print("wrote", HERE.parent / "data" / "checkpoint_inspection_tf.json")
