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
