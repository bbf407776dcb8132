"""TF 2.21's results of the tf.distribute programs in distribute_programs.py, for
tests/test_distribute.py (which runs the same programs under tapeflow).

Run with real TensorFlow (the peers venv), from the repository root:

    .venv-peers/bin/python tests/tf_reference/make_distribute_reference.py

Each program runs in a process of its own: TF's collective all-reduce keys its groups per
process, and a second strategy with another replica count in the same process fails ("is
joining a group with size 3, but that group has size 2").
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "distribute_tf_reference.json")


def _one(name):
    import tensorflow as tf
    sys.path.insert(0, HERE)
    import distribute_programs as P
    P.setup(tf)
    print("RESULT " + json.dumps({"result": P.PROGRAMS[name](tf), "version": tf.__version__}))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        _one(sys.argv[1])
        sys.exit(0)
    sys.path.insert(0, HERE)
    import distribute_programs as P
    ref = {}
    for name in P.PROGRAMS:
        out = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True, check=True).stdout
        got = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
        ref[name] = got["result"]
        ref["_tf_version"] = got["version"]
    with open(OUT, "w") as f:
        json.dump(ref, f, indent=1)
    print("wrote", OUT)
