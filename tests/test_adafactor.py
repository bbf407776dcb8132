"""keras.optimizers.Adafactor against TF 2.21 (tests/data/adafactor_tf.json, recorded by
tests/tf_reference/make_adafactor_reference.py from adafactor_program.py): the weights after five
steps of a factored kernel, an unfactored bias and a rank-3 weight, eagerly and compiled."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "tf_reference"))
import adafactor_program as P  # noqa: E402

REF = json.loads((HERE / "data" / "adafactor_tf.json").read_text())


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("name", list(P.CONFIGS))
def test_weights_after_five_steps_are_tfs(name, compiled):
    for got, want in zip(P.run(tf, name, compiled), REF[name]):
        # (the default run is bit for bit TF's; the others within one float32 ulp of the weights)
        np.testing.assert_allclose(np.array(got, np.float32), np.array(want, np.float32), rtol=0, atol=2.5e-7)


def test_slots_factored_above_rank_one_and_config_round_trip():
    opt = tf.keras.optimizers.Adafactor(learning_rate=0.01, clip_threshold=2.0)
    W, b = tf.Variable(np.ones((3, 4), np.float32)), tf.Variable(np.ones(4, np.float32))
    opt.apply_gradients([(tf.ones((3, 4)), W), (tf.ones(4), b)])
    assert tuple(opt.get_slot(W, "r").shape) == (3,) and tuple(opt.get_slot(W, "c").shape) == (4,)
    assert tuple(opt.get_slot(W, "velocity").shape) == (3, 4) and tuple(opt.get_slot(b, "velocity").shape) == (4,)
    cfg = opt.get_config()
    assert cfg["clip_threshold"] == 2.0 and cfg["relative_step"] is True and cfg["beta_2_decay"] == -0.8
    assert isinstance(tf.keras.optimizers.get("adafactor"), tf.keras.optimizers.Adafactor)
