"""Keras 3.15 (TF 2.21 backend): Circle and CategoricalGeneralizedCrossEntropy (classes and
functions) on small inputs, for tests/test_keras21_losses.py.

    .venv-peers/bin/python tests/tf_reference/make_keras21_losses_reference.py
"""
from __future__ import annotations

import json
import os

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                   "keras21_losses_reference.json")

SETUP = """
e = np.cos(np.arange(8 * 5).reshape(8, 5) * 0.9 + 0.3).astype(np.float32)
e = e / np.linalg.norm(e, axis=1, keepdims=True)
lab = np.array([0, 1, 0, 2, 1, 0, 3, 2], np.int32)
r = np.sin(np.arange(6 * 5).reshape(6, 5) * 1.1).astype(np.float32)
r = r / np.linalg.norm(r, axis=1, keepdims=True)
rlab = np.array([1, 0, 2, 2, 3, 0], np.int32)
sw = np.array([1., 0.5, 2., 0., 1., 1., 3., 1.], np.float32)
p = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.25, 0.5, 0.25]], np.float32)
y = np.array([0, 1, 2, 0], np.int32)
"""

EXPRS = [
    "losses.Circle()(lab, e)", "losses.Circle(reduction=None)(lab, e)", "losses.Circle(reduction='sum')(lab, e)",
    "losses.Circle(gamma=10., margin=0.25)(lab, e)", "losses.Circle(remove_diagonal=False)(lab, e)",
    "losses.Circle()(lab, e, sample_weight=sw)", "losses.circle(lab, e)",
    "losses.circle(lab, e, ref_labels=rlab, ref_embeddings=r, gamma=20.)",
    "losses.Circle().get_config()",
    "losses.CategoricalGeneralizedCrossEntropy()(y, p)", "losses.CategoricalGeneralizedCrossEntropy(q=0.3)(y, p)",
    "losses.CategoricalGeneralizedCrossEntropy(reduction='none')(y[:, None], p)",
    "losses.categorical_generalized_cross_entropy(y, p, q=0.7)",
    "losses.CategoricalGeneralizedCrossEntropy(q=0.2)(y, p, sample_weight=np.array([1., 2., 0., 1.]))",
    "losses.CategoricalGeneralizedCrossEntropy().get_config()", "losses.CategoricalGeneralizedCrossEntropy(q=1.5)",
    "losses.get('circle')", "losses.get('categorical_generalized_cross_entropy')",
]


def main():
    import keras
    import numpy as np
    from keras import losses
    from make_keras_ops_reference import encode
    ns = {"losses": losses, "np": np}
    exec(SETUP, ns)
    out = []
    for expr in EXPRS:
        try:
            v = eval(expr, ns)
            rec = {"config": {k: x for k, x in v.items() if k != "dtype"}} if isinstance(v, dict) else \
                {"callable": getattr(v, "__name__", type(v).__name__)} if callable(v) and not hasattr(v, "shape") \
                else encode(v)
        except Exception as ex:  # noqa: BLE001
            rec = {"error": type(ex).__name__, "message": str(ex)[:200]}
        out.append({"expr": expr, "out": rec})
    with open(OUT, "w") as fh:
        json.dump({"keras": keras.__version__, "setup": SETUP, "cases": out}, fh, indent=0)
    print("wrote", OUT)


if __name__ == "__main__":
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
