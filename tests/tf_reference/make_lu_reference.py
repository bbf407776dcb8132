"""TF 2.21's tf.linalg.lu / lu_reconstruct / lu_solve / lu_matrix_inverse on a few matrices (a tie
between pivot candidates, a batch, a singular one), float32 and float64, for tests/test_linalg_lu.py.
Run with the peers venv:
    python tests/tf_reference/make_lu_reference.py
It writes tests/data/lu_tf.json."""
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lu_cases import cases, rhs_of  # noqa: E402

if __name__ == "__main__":
    out = {}
    for k, a in cases().items():
        for dt in (tf.float32, tf.float64):
            x = tf.constant(a, dt)
            try:
                lu, p = tf.linalg.lu(x)
            except tf.errors.InvalidArgumentError as e:
                out[f"{k}/{dt.name}"] = {"error": type(e).__name__, "message": str(e).split("}} ")[-1]}
                continue
            out[f"{k}/{dt.name}"] = {
                "lu": lu.numpy().tolist(), "p": p.numpy().tolist(),
                "rec": tf.linalg.lu_reconstruct(lu, p).numpy().tolist(),
                "sol": tf.linalg.lu_solve(lu, p, tf.constant(rhs_of(a), dt)).numpy().tolist(),
                "inv": tf.linalg.lu_matrix_inverse(lu, p).numpy().tolist()}
    Path(__file__).resolve().parent.parent.joinpath("data", "lu_tf.json").write_text(json.dumps(out))
