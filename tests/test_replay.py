"""ReplayBuffer: preallocated ring buffer for experience replay."""

from collections import Counter, deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tapeflow.rl import Batch, ReplayBuffer


def transition(i, obs_dim=64):
    """A transition whose every field encodes i."""
    s = np.full(obs_dim, i, np.float32)
    return s, i % 4, float(-i), s + 0.5, i % 3 == 0


def stored_ids(buf):
    return sorted(int(v) for v in buf.states[: len(buf), 0])


def test_shapes_and_dtypes():
    buf = ReplayBuffer(100, obs_shape=64, seed=0)
    assert buf.states.shape == (100, 64) and buf.states.dtype == np.float32
    assert buf.next_states.shape == (100, 64)
    assert buf.actions.dtype == np.int64 and buf.rewards.dtype == np.float32 and buf.dones.dtype == np.float32
    for i in range(30):
        buf.add(*transition(i))
    b = buf.sample(8)
    assert isinstance(b, Batch)
    assert b.states.shape == (8, 64) and b.next_states.shape == (8, 64)
    assert b.actions.shape == b.rewards.shape == b.dones.shape == (8,)
    assert b.states.dtype == np.float32 and b.actions.dtype == np.int64
    assert b.rewards.dtype == np.float32 and b.dones.dtype == np.float32
    small = ReplayBuffer(4, obs_shape=(2, 3), action_dtype=np.int32)
    small.add(np.ones((2, 3)), 1, 0.0, np.ones((2, 3)), False)
    assert small.sample(1).states.shape == (1, 2, 3) and small.actions.dtype == np.int32


def test_sampled_rows_are_consistent_transitions():
    buf = ReplayBuffer(50, seed=1)
    for i in range(40):
        buf.add(*transition(i))
    b = buf.sample(40)
    ids = b.states[:, 0].astype(int)
    assert sorted(ids.tolist()) == list(range(40))  # without replacement: a permutation
    for k, i in enumerate(ids):
        s, a, r, s2, d = transition(int(i))
        assert np.array_equal(b.states[k], s) and np.array_equal(b.next_states[k], s2)
        assert b.actions[k] == a and b.rewards[k] == r and b.dones[k] == float(d)


def test_book_style_states_with_batch_axis():
    buf = ReplayBuffer(10)
    s = np.random.default_rng(0).random((1, 64))
    buf.add(s, 2, -1, s, True)
    assert np.allclose(buf.states[0], s[0]) and buf.dones[0] == 1.0
    with pytest.raises(ValueError):
        buf.add(np.zeros(63), 0, 0.0, np.zeros(63), False)


def test_wraps_like_a_deque():
    buf = ReplayBuffer(5, obs_shape=3)
    ref = deque(maxlen=5)
    for i in range(12):
        buf.add(*transition(i, 3))
        ref.append(i)
        assert len(buf) == len(ref)
        assert stored_ids(buf) == sorted(ref)
    assert buf.full and stored_ids(buf) == [7, 8, 9, 10, 11]
    # never samples an overwritten transition
    for _ in range(50):
        assert set(buf.sample(5).states[:, 0].astype(int).tolist()) == {7, 8, 9, 10, 11}
    buf.clear()
    assert len(buf) == 0 and not buf.full
    buf.add(*transition(42, 3))
    assert buf.sample(1).states[0, 0] == 42


def test_sample_errors():
    buf = ReplayBuffer(10)
    with pytest.raises(ValueError, match="empty"):
        buf.sample(1)
    with pytest.raises(ValueError, match="empty"):
        buf.sample(1, replace=True)
    for i in range(3):
        buf.add(*transition(i))
    with pytest.raises(ValueError, match="only 3 stored"):
        buf.sample(4)
    with pytest.raises(ValueError):
        buf.sample(0)
    assert buf.sample(7, replace=True).states.shape == (7, 64)  # with replacement it is fine
    with pytest.raises(ValueError):
        ReplayBuffer(0)


def test_sampling_is_uniform_and_seeded():
    buf = ReplayBuffer(20, obs_shape=1)
    for i in range(10):
        buf.add([i], 0, 0.0, [i], False)
    rng = np.random.default_rng(0)
    counts = Counter()
    n_draws = 2000
    for _ in range(n_draws):
        counts.update(buf.sample(3, rng).states[:, 0].astype(int).tolist())
    expected = n_draws * 3 / 10
    chi2 = sum((counts[i] - expected) ** 2 / expected for i in range(10))
    assert set(counts) == set(range(10)) and chi2 < 35  # 9 dof
    a = buf.sample(5, np.random.default_rng(3)).states
    b = buf.sample(5, np.random.default_rng(3)).states
    assert np.array_equal(a, b)
    b1 = ReplayBuffer(20, obs_shape=1, seed=9)
    b2 = ReplayBuffer(20, obs_shape=1, seed=9)
    for buf_ in (b1, b2):
        for i in range(10):
            buf_.add([i], 0, 0.0, [i], False)
    assert np.array_equal(b1.sample(4).states, b2.sample(4).states)


def test_samples_are_copies():
    buf = ReplayBuffer(4, obs_shape=2)
    buf.add([1, 2], 0, 0.0, [3, 4], False)
    b = buf.sample(1)
    b.states[:] = 99
    b.rewards[:] = 99
    assert buf.states[0].tolist() == [1, 2] and buf.rewards[0] == 0


@settings(max_examples=60, deadline=None)
@given(
    capacity=st.integers(1, 9),
    chunks=st.lists(st.integers(0, 13), min_size=1, max_size=6),
)
def test_add_batch_equals_repeated_add(capacity, chunks):
    one, many = ReplayBuffer(capacity, obs_shape=2), ReplayBuffer(capacity, obs_shape=2)
    i = 0
    for n in chunks:
        ids = np.arange(i, i + n)
        s = np.stack([ids, ids], 1).astype(np.float32)
        many.add_batch(s, ids % 4, -ids.astype(np.float32), s + 1, ids % 2 == 0)
        for j in ids:
            one.add([j, j], j % 4, -float(j), [j + 1, j + 1], j % 2 == 0)
        i += n
        assert len(one) == len(many) == min(i, capacity)
        for name in ("states", "actions", "rewards", "next_states", "dones"):
            assert np.array_equal(getattr(one, name), getattr(many, name)), name
        assert one._pos == many._pos


# -- index plans (replay.py's module doc): the indices, and the saved generator state, of one
# Generator.integers call per sample, whatever the order of adds and samples

def _run(buf, schedule, rng=None):
    """Adds and samples with replacement as ``schedule`` says; the indices and sizes seen."""
    got, sizes = [], []
    for adds, samples in schedule:
        for _ in range(adds):
            buf.add(np.zeros(2), 0, 0.0, np.zeros(2), 0.0)
        for _ in range(samples):
            got.append(buf.sample_indices(8, rng, replace=True))
            sizes.append(len(buf))
    return got, sizes


def _per_call(seed, sizes):
    g = np.random.default_rng(seed)
    return [g.integers(0, n, size=8) for n in sizes], g


SCHEDULES = {
    "one add per sample, filling up": [(1, 1)] * 130,          # the off-policy loop; capacity 100
    "two samples per add": [(1, 2)] * 90,
    "three samples per add": [(1, 3)] * 90,                    # breaks every plan: patience grows
    "adds without samples between": [(1, 1)] * 40 + [(5, 0)] + [(1, 1)] * 40 + [(0, 1)] * 40,
}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_planned_indices_are_one_call_per_sample(name):
    buf = ReplayBuffer(100, obs_shape=2, seed=[3, 1])
    got, sizes = _run(buf, SCHEDULES[name])
    want, g = _per_call([3, 1], sizes)
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(a, b, err_msg=f"sample {k} of {name}")
    assert buf._rng_state() == g.bit_generator.state


def test_plans_are_drawn_for_the_one_add_per_sample_loop():
    """The plan is taken where it pays (one block for PLAN samples), else not."""
    from tapeflow.rl import replay
    buf = ReplayBuffer(1000, obs_shape=2, seed=0)
    _run(buf, [(1, 1)] * 10)
    assert buf._plan is not None and buf._plan[1].drawn == 10 - 2          # two calls to see the pattern
    assert len(buf._plan[0]) == replay.PLAN
    full = ReplayBuffer(20, obs_shape=2, seed=0)
    _run(full, [(1, 1)] * 90)
    assert full._patience == 2          # no plan broke while the buffer filled up (its sizes capped)


@settings(max_examples=40, deadline=None)
@given(schedule=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=60),
       capacity=st.integers(1, 40))
def test_planned_indices_any_schedule(schedule, capacity):
    schedule = [(1, 0)] + schedule
    buf = ReplayBuffer(capacity, obs_shape=2, seed=5)
    got, sizes = _run(buf, schedule)
    want, g = _per_call(5, sizes)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))
    assert buf._rng_state() == g.bit_generator.state


def test_save_mid_plan_resumes_the_same_samples(tmp_path):
    """A checkpoint taken in the middle of a plan stores the state as of the indices used:
    the loaded buffer draws what the uninterrupted one goes on to draw."""
    buf = ReplayBuffer(200, obs_shape=2, seed=[0, 1])
    _run(buf, [(1, 1)] * 15)
    assert buf._plan is not None and 0 < buf._plan[1].drawn < len(buf._plan[0])
    path = buf.save(str(tmp_path / "r.npz"))
    after, _ = _run(buf, [(1, 1)] * 50)
    other = ReplayBuffer(200, obs_shape=2, seed=123).load(path)
    resumed, _ = _run(other, [(1, 1)] * 50)
    for a, b in zip(after, resumed):
        np.testing.assert_array_equal(a, b)


def test_other_draws_from_the_buffer_generator_settle_the_plan():
    """Without replacement the buffer's generator draws from where the planned indices
    left it; a caller's own generator leaves the plan alone."""
    buf = ReplayBuffer(100, obs_shape=2, seed=1)
    got, sizes = _run(buf, [(1, 1)] * 10)
    mine = np.random.default_rng(9)
    buf.sample_indices(4, mine, replace=True)                 # the caller's generator: no effect
    assert buf._plan is not None
    without = buf.sample_indices(4)
    _, g = _per_call(1, sizes)
    np.testing.assert_array_equal(without, g.choice(len(buf), size=4, replace=False))
    assert buf._plan is None
