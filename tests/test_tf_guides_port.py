"""benchmarks/tf_guides.py's rewrites of a notebook cell (the conformance measure's harness)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "tf_guides", Path(__file__).resolve().parent.parent / "benchmarks" / "tf_guides.py")
tf_guides = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tf_guides)


def test_gym_runs_as_gymnasium_for_both_frameworks():
    assert tf_guides.port_env("import collections\nimport gym\nenv = gym.make('CartPole-v1')") == \
        "import collections\nimport gymnasium as gym\nenv = gym.make('CartPole-v1')"
    for keep in ("import gymnasium", "import gym_foo", "import gym as g", "x = 'import gym'"):
        assert tf_guides.port_env(keep) == keep


def test_tutorials_are_keyed_tut():
    assert tf_guides.GUIDES["tut_custom_layers"] == "site/en/tutorials/customization/custom_layers.ipynb"
    assert tf_guides.GUIDES["tut_actor_critic"] == \
        "site/en/tutorials/reinforcement_learning/actor_critic.ipynb"


def test_compat_v1_maps_to_tapeflow_compat_v1_outside_r1_notebooks():
    # wave 22: the migration guides' `tf1` is tapeflow.compat.v1 (its refusals name TF1 names);
    # the r1 eager guide, a TF1 program whose compat.v1 is its whole namespace, imports tapeflow
    assert tf_guides.to_tapeflow("import tensorflow.compat.v1 as tf1") == "import tapeflow.compat.v1 as tf1"
    assert tf_guides.to_tapeflow("import tensorflow.compat.v1 as tf", r1=True) == "import tapeflow as tf"
    assert tf_guides.to_tapeflow("from tensorflow.compat.v2 import summary") == "from tapeflow import summary"
    assert tf_guides.to_tapeflow("import tensorflow as tf") == "import tapeflow as tf"


def _row(code, cls):
    return {"code": code, "class": cls}


def test_numbers_from_an_unseeded_cell_are_nondeterministic():
    # intro_to_graphs#10, #11, #13: cell 11 prints get_MSE of cell 10's draws, which TF's two runs
    # happened to agree on
    rows = [_row("def get_MSE(a, b):\n  return a - b", "identical"),
            _row("y_true = tf.random.uniform([5])\nprint(y_true)", "nondeterministic"),
            _row("get_MSE(y_true, y_true)", "other-numbers"),
            _row("z = y_true * 2", "identical"),
            _row("print(z)", "other-numbers"),          # tainted through z
            _row("get_MSE(y_true, y_true)", "raises"),  # a raise is not explained by the draws
            _row("y_true = tf.constant([1.])", "identical"),
            _row("print(y_true)", "other-numbers")]     # bound again deterministically: counted
    out = [r["class"] for r in tf_guides.propagate_nondeterminism(rows)]
    assert out == ["identical", "nondeterministic", "nondeterministic", "identical", "nondeterministic", "raises",
                   "identical", "other-numbers"]
    assert rows[2]["nondeterministic_from"] == ["y_true"]


def test_a_def_parameter_is_not_a_read_of_the_cell():
    # function#27: measure_graph_size(f, ...) names its parameter f; an earlier nondeterministic cell's f
    # does not make it nondeterministic
    rows = [_row("f = tf.random.uniform([2])\nprint(f)", "nondeterministic"),
            _row("def size(f, *a):\n  print(len(f(*a)))\nsize(g, 1)", "other-numbers"),
            _row("h = lambda f: f + 1\nprint(h(2), f)", "other-numbers")]
    assert [r["class"] for r in tf_guides.propagate_nondeterminism(rows)] == [
        "nondeterministic", "other-numbers", "nondeterministic"]
