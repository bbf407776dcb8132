"""BlockDraws (tapeflow/rl/draws.py): noise drawn a block of steps per Generator call
gives the values and the Generator states of one call per step."""
import numpy as np
import pytest

from tapeflow.rl.draws import BlockDraws
from tapeflow.rl.td3 import NOISE_BLOCK, TD3, standard_normal_f32


def _normal(g, size):
    return g.normal(0, 0.3, size=size)


DRAWS = [(standard_normal_f32, lambda g, shape: g.standard_normal(shape, dtype=np.float32), (256, 6)),
         (_normal, lambda g, shape: g.normal(0, 0.3, size=shape), (6,))]


@pytest.mark.parametrize("draw, per_step, shape", DRAWS)
@pytest.mark.parametrize("block", [1, 5, 16])
def test_values_and_states_are_those_of_one_call_per_step(draw, per_step, shape, block):
    ref = np.random.default_rng([7, 2])
    d = BlockDraws(np.random.default_rng([7, 2]), draw, shape, block)
    assert d.state == ref.bit_generator.state
    for step in range(2 * block + 3):     # across block boundaries
        got, want = d(), per_step(ref, shape)
        assert got.dtype == want.dtype and got.shape == shape
        np.testing.assert_array_equal(got, want, err_msg=f"step {step}")
        # mid-block too: the state after the draws handed out, not after the whole block
        assert d.bit_generator.state == ref.bit_generator.state, step


def test_setting_the_state_discards_the_rest_of_the_block():
    ref = np.random.default_rng(0)
    d = BlockDraws(np.random.default_rng(0), _normal, (3,), 8)
    for _ in range(3):
        d(), _normal(ref, (3,))
    saved = d.state
    later = [d().copy() for _ in range(10)]
    d.bit_generator.state = saved                     # a resume: the same draws again
    np.testing.assert_array_equal([d() for _ in range(10)], later)
    other = BlockDraws(np.random.default_rng(99), _normal, (3,), 8)
    other.state = saved                               # another process restoring a checkpoint
    np.testing.assert_array_equal([other() for _ in range(10)], later)


def test_block_must_be_positive():
    with pytest.raises(ValueError, match="block must be >= 1, got 0"):
        BlockDraws(np.random.default_rng(0), _normal, (3,), 0)


def test_td3_target_noise_is_one_standard_normal_call_per_iteration():
    """The agent's noise stream is the one it drew before blocks (seed [seed, 2], one
    (batch, action_dim) float32 standard_normal per train call)."""
    agent = TD3(3, 2, 1.0, seed=4, compiled=False)
    ref = np.random.default_rng([4, 2])
    for _ in range(NOISE_BLOCK + 2):
        np.testing.assert_array_equal(agent.rng(), ref.standard_normal((256, 2), dtype=np.float32))
    assert agent.rng.bit_generator.state == ref.bit_generator.state
