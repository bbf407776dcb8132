"""TF 2.21's tf.nn.nce_loss / sampled_softmax_loss (given sampled_values: deterministic), their gradients,
and the candidate samplers' expected counts of the true classes (unique=False), for
tests/test_candidate_sampling.py. Run with the peers venv:
    python tests/tf_reference/make_sampled_loss_reference.py
It writes tests/data/sampled_loss_tf.json."""
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sampled_loss_cases import losses  # noqa: E402

if __name__ == "__main__":
    Path(__file__).resolve().parent.parent.joinpath("data", "sampled_loss_tf.json").write_text(json.dumps(losses(tf)))
