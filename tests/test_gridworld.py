"""Gridworld (book chapter 3) environment: boards, rules, observations, gymnasium API."""

import itertools
import warnings
from collections import Counter, deque

import numpy as np
import pytest

from tapeflow.rl.envs import Gridworld, generate_boards, is_valid_board, play_greedy, win_rate

UP, DOWN, LEFT, RIGHT = 0, 1, 2, 3
MOVES = {UP: (-1, 0), DOWN: (1, 0), LEFT: (0, -1), RIGHT: (0, 1)}


# -- an independent reference: plain BFS on (row, col) coordinates ---------------
def bfs_path(player, goal, pit, wall):
    """Shortest action list from player to goal avoiding pit and wall, or None."""
    prev = {player: None}
    queue = deque([player])
    while queue:
        cur = queue.popleft()
        if cur == goal:
            path = []
            while prev[cur] is not None:
                cur, a = prev[cur]
                path.append(a)
            return path[::-1]
        for a, (dr, dc) in MOVES.items():
            nxt = (cur[0] + dr, cur[1] + dc)
            if not (0 <= nxt[0] < 4 and 0 <= nxt[1] < 4) or nxt in (pit, wall) or nxt in prev:
                continue
            prev[nxt] = (cur, a)
            queue.append(nxt)
    return None


def ref_valid(player, goal, pit, wall):
    return len({player, goal, pit, wall}) == 4 and bfs_path(player, goal, pit, wall) is not None


SQUARES = [(r, c) for r in range(4) for c in range(4)]


@pytest.fixture(scope="module")
def all_valid_boards():
    return [b for b in itertools.permutations(SQUARES, 4) if ref_valid(*b)]


def decode(obs):
    """(Player, Goal, Pit, Wall) positions from a noise-free or noisy observation."""
    planes = np.asarray(obs).reshape(4, 4, 4)
    return tuple(tuple(int(v) for v in np.argwhere(planes[k] >= 0.5)[0]) for k in range(4))


def oracle_policy(obs):
    path = bfs_path(*decode(obs))
    return path[0] if path else 0


# -- board generation ---------------------------------------------------------------
def test_validity_matches_reference_bfs_on_every_board(all_valid_boards):
    valid = set(all_valid_boards)
    n_distinct = 16 * 15 * 14 * 13
    # there ARE unwinnable boards with distinct pieces, and we must reject them
    assert 0 < n_distinct - len(valid) < 0.01 * n_distinct
    for b in itertools.product(SQUARES, repeat=4):
        assert is_valid_board(*b) == (b in valid), b


def test_known_unwinnable_boards_rejected():
    # Goal boxed in a corner by Pit and Wall
    assert not is_valid_board((3, 3), (0, 0), (0, 1), (1, 0))
    # Player boxed in a corner
    assert not is_valid_board((3, 3), (0, 0), (3, 2), (2, 3))
    # overlaps
    assert not is_valid_board((0, 0), (0, 0), (1, 1), (2, 2))
    assert is_valid_board((0, 3), (0, 0), (0, 1), (1, 1))


def test_static_mode_is_fixed():
    env = Gridworld(mode="static", noise=0.0)
    for seed in range(5):
        _, info = env.reset(seed=seed)
        assert info == {"player": (0, 3), "goal": (0, 0), "pit": (0, 1), "wall": (1, 1)}
    assert env.render() == "+ - . P\n. W . .\n. . . .\n. . . ."


def test_player_mode_distribution():
    env = Gridworld(mode="player", noise=0.0)
    env.reset(seed=123)
    n = 2600
    counts = Counter()
    for _ in range(n):
        _, info = env.reset()
        assert (info["goal"], info["pit"], info["wall"]) == ((0, 0), (0, 1), (1, 1))
        counts[info["player"]] += 1
    free = [s for s in SQUARES if s not in ((0, 0), (0, 1), (1, 1))]
    assert set(counts) == set(free)  # all 13 free squares, nothing else
    expected = n / 13
    chi2 = sum((counts[s] - expected) ** 2 / expected for s in free)
    assert chi2 < 40  # 12 dof: p ~ 1e-4


def _marginal_chi2(boards, all_valid_boards):
    """Chi-square of each piece's square histogram against the exact law (uniform
    over valid boards).  Returns the largest of the four (15 dof each)."""
    n = len(boards)
    worst = 0.0
    for k in range(4):
        exact = Counter(b[k] for b in all_valid_boards)
        got = Counter(b[k] for b in boards)
        assert set(got) <= set(exact)
        chi2 = sum((got[s] - n * exact[s] / len(all_valid_boards)) ** 2 / (n * exact[s] / len(all_valid_boards)) for s in exact)
        worst = max(worst, chi2)
    return worst


def test_random_mode_boards_valid_and_uniform(all_valid_boards):
    env = Gridworld(mode="random", noise=0.0)
    env.reset(seed=7)
    boards = []
    for _ in range(3000):
        _, info = env.reset()
        b = (info["player"], info["goal"], info["pit"], info["wall"])
        assert len(set(b)) == 4, b
        assert bfs_path(*b) is not None, b
        boards.append(b)
    assert len(set(boards)) > 2500  # genuinely random, not a handful of boards
    assert _marginal_chi2(boards, all_valid_boards) < 50  # 15 dof: p ~ 1e-5


def test_generate_boards(all_valid_boards):
    rng = np.random.default_rng(0)
    flat = generate_boards(20000, "random", rng)
    assert flat.shape == (20000, 4) and flat.dtype == np.int64
    boards = [tuple((int(s) // 4, int(s) % 4) for s in row) for row in flat]
    valid = set(all_valid_boards)
    assert all(b in valid for b in boards)
    assert _marginal_chi2(boards, all_valid_boards) < 50
    player = generate_boards(1300, "player", 1)
    assert set(map(tuple, player[:, 1:].tolist())) == {(0, 1, 5)}
    assert set(player[:, 0].tolist()) == set(range(16)) - {0, 1, 5}
    static = generate_boards(3, "static", 0)
    assert static.tolist() == [[3, 0, 1, 5]] * 3
    assert np.array_equal(generate_boards(50, "random", 5), generate_boards(50, "random", 5))
    with pytest.raises(ValueError):
        generate_boards(3, "nope", 0)


# -- rules --------------------------------------------------------------------------
def test_book_listing_3_1_moves():
    env = Gridworld(mode="static", noise=0.0)
    env.reset(seed=0)
    for a in (DOWN, DOWN, LEFT):
        _, r, term, trunc, _ = env.step(a)
        assert (r, term, trunc) == (-1.0, False, False)
    assert env.player == (2, 2)
    assert env.render() == "+ - . .\n. W . .\n. . P .\n. . . ."


def test_left_twice_falls_in_pit():
    env = Gridworld(mode="static", noise=0.0)
    env.reset(seed=0)
    obs, r, term, trunc, _ = env.step(LEFT)
    assert env.player == (0, 2) and r == -1.0 and not term and not trunc
    obs, r, term, trunc, _ = env.step(LEFT)
    assert env.player == (0, 1) and r == -10.0 and term and not trunc
    planes = obs.reshape(4, 4, 4)
    assert planes[0, 0, 1] == 1 and planes[2, 0, 1] == 1  # player plane and pit plane
    with pytest.raises(RuntimeError):
        env.step(UP)  # episode is over


def test_walk_to_goal():
    env = Gridworld(mode="static", noise=0.0)
    env.reset(seed=0)
    path = [DOWN, DOWN, LEFT, LEFT, LEFT, UP, UP]
    rewards = [env.step(a)[1] for a in path[:-1]]
    assert rewards == [-1.0] * 6
    assert env.player == (1, 0)
    _, r, term, trunc, _ = env.step(path[-1])
    assert (r, term, trunc) == (10.0, True, False)
    assert env.player == (0, 0) and env.steps == 7


def test_edges_and_wall_block():
    env = Gridworld(mode="static", noise=0.0)
    env.reset(seed=0)
    for a in (UP, RIGHT):  # (0,3) is the top-right corner
        obs0 = env._observe()
        _, r, term, _, _ = env.step(a)
        assert env.player == (0, 3) and r == -1.0 and not term
        assert np.array_equal(env._observe(), obs0)
    env.step(DOWN)
    env.step(LEFT)
    assert env.player == (1, 2)
    _, r, term, _, _ = env.step(LEFT)  # Wall at (1,1)
    assert env.player == (1, 2) and r == -1.0 and not term
    assert env.steps == 5
    # bottom-left corner, explicit board
    env.reset(options={"board": [(3, 0), (0, 3), (0, 0), (1, 1)]})
    for a in (DOWN, LEFT):
        env.step(a)
        assert env.player == (3, 0)


def test_every_move_against_reference_rules(all_valid_boards):
    env = Gridworld(mode="random", noise=0.0)
    rng = np.random.default_rng(3)
    for i in rng.choice(len(all_valid_boards), 300, replace=False):
        board = all_valid_boards[i]
        p, g, pit, wall = board
        for a, (dr, dc) in MOVES.items():
            env.reset(options={"board": board})
            nxt = (p[0] + dr, p[1] + dc)
            if not (0 <= nxt[0] < 4 and 0 <= nxt[1] < 4) or nxt == wall:
                nxt = p
            exp_r = -10.0 if nxt == pit else 10.0 if nxt == g else -1.0
            obs, r, term, trunc, _ = env.step(a)
            assert env.player == nxt and r == exp_r and term == (exp_r != -1.0) and not trunc
            assert decode(obs)[1:] == (g, pit, wall)


def test_action_validation():
    env = Gridworld(noise=0.0)
    with pytest.raises(RuntimeError):
        env.step(0)  # before reset
    env.reset(seed=0)
    for bad in (-1, 4):
        with pytest.raises(ValueError):
            env.step(bad)
    with pytest.raises(TypeError):
        env.step(1.0)
    env.step(np.int64(1))
    env.step(np.array(2))
    assert env.player == (1, 2)


def test_max_steps_truncates():
    env = Gridworld(mode="static", noise=0.0, max_steps=3)
    env.reset(seed=0)
    outs = [env.step(UP)[2:4] for _ in range(3)]
    assert outs == [(False, False), (False, False), (False, True)]
    with pytest.raises(RuntimeError):
        env.step(UP)
    env.reset()
    assert env.steps == 0
    env.step(LEFT)
    _, r, term, trunc, _ = env.step(LEFT)  # terminal on the last allowed step: not truncated
    assert term and not trunc


def test_constructor_validation():
    with pytest.raises(ValueError):
        Gridworld(mode="nope")
    with pytest.raises(ValueError):
        Gridworld(noise=-0.1)
    with pytest.raises(ValueError):
        Gridworld(max_steps=0)
    with pytest.raises(ValueError):
        Gridworld(render_mode="rgb_array")
    env = Gridworld()
    with pytest.raises(ValueError):
        env.reset(options={"board": [(0, 0), (0, 0), (1, 1), (2, 2)]})
    with pytest.raises(ValueError):
        env.reset(options={"board": [(0, 4), (0, 0), (1, 1), (2, 2)]})


# -- observations ---------------------------------------------------------------------
def test_observation_planes_exact_without_noise():
    env = Gridworld(mode="random", noise=0.0)
    env.reset(seed=11)
    for _ in range(200):
        obs, info = env.reset()
        assert obs.shape == (64,) and obs.dtype == np.float32
        expected = np.zeros((4, 4, 4), np.float32)
        for k, key in enumerate(("player", "goal", "pit", "wall")):
            expected[(k, *info[key])] = 1.0
        assert np.array_equal(obs, expected.reshape(64))
        assert obs in env.observation_space


def test_observation_noise():
    env = Gridworld(mode="static", noise=0.01)
    obs, _ = env.reset(seed=0)
    clean = Gridworld(mode="static", noise=0.0).reset(seed=0)[0]
    diff = obs - clean
    assert diff.min() >= 0.0 and diff.max() < 0.01
    assert diff.std() > 0.001  # genuinely noisy
    assert obs in env.observation_space
    obs2, *_ = env.step(DOWN)
    assert not np.array_equal(obs2 - obs, np.zeros(64))
    assert obs2.reshape(4, 4, 4)[0, 1, 3] >= 1.0


def test_observations_are_fresh_arrays():
    env = Gridworld(mode="static", noise=0.0)
    obs, _ = env.reset(seed=0)
    obs_before = obs.copy()
    obs2, *_ = env.step(DOWN)
    assert np.array_equal(obs, obs_before)  # not overwritten by the next step
    obs2[:] = 5.0
    obs3, *_ = env.step(DOWN)
    assert obs3.max() == 1.0


# -- seeding ---------------------------------------------------------------------------
def _rollout(seed, n=60):
    env = Gridworld(mode="random")
    rng = np.random.default_rng(99)
    obs, _ = env.reset(seed=seed)
    trace = [obs]
    for _ in range(n):
        obs, r, term, trunc, _ = env.step(int(rng.integers(4)))
        trace.append(obs)
        if term or trunc:
            obs, _ = env.reset()
            trace.append(obs)
    return np.stack(trace)


def test_seeding_reproducible():
    a, b, c = _rollout(5), _rollout(5), _rollout(6)
    assert np.array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)


# -- gymnasium API -------------------------------------------------------------------------
def test_gymnasium_check_env():
    from gymnasium.utils.env_checker import check_env

    for mode in ("static", "random"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(Gridworld(mode=mode, render_mode="ansi"))
        # the only acceptable remark: alternative render modes need a registered spec
        problems = [str(w.message) for w in caught if "not having a spec" not in str(w.message)]
        assert not problems, problems


def test_spaces():
    env = Gridworld(noise=0.01)
    assert env.action_space.n == 4
    assert env.observation_space.shape == (64,)
    assert env.observation_space.dtype == np.float32


def test_render_human(capsys):
    env = Gridworld(mode="static", render_mode="human", noise=0.0)
    env.reset(seed=0)
    assert "+ - . P" in capsys.readouterr().out
    assert env.render() is None
    env.step(LEFT)
    out = capsys.readouterr().out
    assert "+ - P ." in out and "W" in out


# -- evaluation helpers ---------------------------------------------------------------------
def test_oracle_wins_every_random_game():
    assert win_rate(oracle_policy, n_games=300, mode="random", seed=0) == 1.0
    env = Gridworld(mode="random", noise=0.0)
    assert play_greedy(env, oracle_policy, seed=3)


def test_win_rate_batched_matches_unbatched():
    def always_up(obs):
        return UP

    def always_up_batched(obs):
        assert obs.ndim == 2 and obs.shape[1] == 64
        return np.zeros(len(obs), dtype=np.int64)

    def oracle_batched(obs):
        return np.array([oracle_policy(o) for o in obs])

    r1 = win_rate(always_up, n_games=400, seed=1)
    r2 = win_rate(always_up_batched, n_games=400, seed=1, batched=True)
    assert r1 == r2
    assert 0.05 < r1 < 0.5  # goal straight above the player, path clear
    assert win_rate(oracle_batched, n_games=300, seed=0, batched=True) == 1.0
    # the static board is unwinnable by going up; a shortest path takes 7 moves
    assert win_rate(always_up, n_games=5, mode="static") == 0.0
    assert win_rate(oracle_policy, n_games=5, mode="static", max_moves=7) == 1.0
    assert win_rate(oracle_policy, n_games=5, mode="static", max_moves=6) == 0.0


def test_play_greedy_loses_on_pit():
    env = Gridworld(mode="static", noise=0.0)
    assert play_greedy(env, lambda obs: LEFT) is False
    assert env.player == (0, 1)
