"""Keras 3.15 (TF 2.21 backend): Muon and ScheduleFreeAdamW (and use_ema) over 5 steps of fixed gradients on
variables of ranks 1-3 (Muon: rank-2 ones take Newton-Schulz, others and 'embedding' ones AdamW),
the variables after each step, for tests/test_keras21_optimizers.py.

    .venv-peers/bin/python tests/tf_reference/make_keras21_optimizers_reference.py
"""
from __future__ import annotations

import json
import os

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                   "keras21_optimizers_reference.json")

SHAPES = {"kernel": (4, 3), "tall": (5, 2), "bias": (3,), "conv": (2, 3, 2), "embedding": (6, 3)}
STEPS = 5
CONFIGS = [
    ("Muon", {}), ("Muon", {"nesterov": False, "rms_rate": None}),
    ("Muon", {"learning_rate": 0.01, "weight_decay": 0.1, "adam_weight_decay": 0.02, "exclude_layers": ["tall"],
              "exclude_embeddings": False, "adam_lr_ratio": 0.5, "ns_steps": 3, "momentum": 0.9}),
    ("ScheduleFreeAdamW", {}), ("ScheduleFreeAdamW", {"warmup_steps": 3, "learning_rate": 0.01}),
    ("ScheduleFreeAdamW", {"weight_decay": 0.05, "beta_1": 0.8, "epsilon": 1e-6}),
    # use_ema (Keras 3's moving averages of the weights; SwapEMAWeights swaps them in)
    ("Adam", {"use_ema": True, "ema_momentum": 0.9}),
    ("SGD", {"learning_rate": 0.1, "use_ema": True, "ema_momentum": 0.5, "ema_overwrite_frequency": 2}),
    ("Muon", {"use_ema": True}),
]


def initial(name, shape):
    import numpy as np
    n = int(np.prod(shape))
    return (np.cos(np.arange(n) * 0.7 + len(name)) * 0.5).reshape(shape).astype(np.float32)


def grad(name, shape, step):
    import numpy as np
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 1.3 + step * 0.9 + len(name)) + 0.1 * step).reshape(shape).astype(np.float32)


def main():
    import keras
    import numpy as np
    out = []
    for cls, kw in CONFIGS:
        vs = [keras.Variable(initial(k, s), name=k) for k, s in SHAPES.items()]
        opt = getattr(keras.optimizers, cls)(**kw)
        traj = []
        for t in range(STEPS):
            opt.apply_gradients([(grad(k, s, t), v) for (k, s), v in zip(SHAPES.items(), vs)])
            traj.append({k: np.asarray(v).reshape(-1).tolist() for k, v in zip(SHAPES, vs)})
        avg = getattr(opt, "_model_variables_moving_average", None)
        out.append({"class": cls, "kwargs": kw, "paths": [v.path for v in vs], "steps": traj,
                    "averages": None if avg is None else {k: np.asarray(a).reshape(-1).tolist()
                                                          for k, a in zip(SHAPES, avg)},
                    "config": {k: v for k, v in opt.get_config().items() if isinstance(v, (int, float, str, list,
                                                                                           bool, type(None)))}})
    with open(OUT, "w") as fh:
        json.dump({"keras": keras.__version__, "shapes": SHAPES, "runs": out}, fh, indent=0)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
