"""PyTorch reference: the book's DQN with experience replay and a target network.

*Deep Reinforcement Learning in Action* (Zai & Brown), chapter 3, listing 3.7,
transcribed line for line into a function, with one substitution: the game is
tapeflow's :class:`tapeflow.rl.envs.Gridworld` (so PyTorch and tapeflow play the
very same game), and its evaluation is the book's ``test_model`` loop over 1000
random games via :func:`tapeflow.rl.envs.win_rate`.

Book hyper-parameters: Q-network Linear(64,150)-ReLU-Linear(150,100)-ReLU-
Linear(100,4); Adam lr 1e-3; MSELoss; gamma 0.9; epsilon 0.3 (constant);
5000 episodes ("epochs") of mode "random"; replay ``deque(maxlen=1000)``; batch
200 (training starts once ``len(replay) > 200``); at most 50 moves per episode
(the book's ``mov > max_moves`` test, i.e. the episode ends after move 51);
target network synced every 500 steps (``j % sync_freq == 0``, checked only on
steps that trained).  Observation noise ``np.random.rand(1,64)/100.0`` is the
env's ``noise=0.01``.

Book quirks kept on purpose (``--done-rule book``, the default):
``done = True if reward > 0 else False`` -- falling into the Pit is *not*
treated as terminal in the TD target (the next state is bootstrapped); the
action is chosen with ``model(state1)`` outside ``torch.no_grad()``; minibatches
are built with list comprehensions over ``random.sample(replay, 200)``.
``--done-rule terminal`` uses the env's ``terminated`` flag instead.

Evaluation (book ``test_model``, ``mode='random'``, 1000 games): greedy policy,
a win when the Goal is reached within 15 moves; we evaluate without observation
noise (the book adds ``rand/10`` there) on the boards of
``win_rate(..., seed=--seed)``.

Usage::

    PYTHONPATH=. python benchmarks/gridworld_torch_book.py --episodes 5000 --seed 0 --threads 1

The last stdout line is JSON: ``{"framework": "pytorch", "episodes": ...,
"wall_s": <training seconds>, "win_rate": ..., ...}``.  torch is imported inside
:func:`main` only, so this module imports without it.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
from collections import deque
from pathlib import Path

import numpy as np

try:
    from tapeflow.rl.envs import Gridworld, win_rate
except ImportError:  # run as a script from a checkout without PYTHONPATH
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tapeflow.rl.envs import Gridworld, win_rate

# the book's hyper-parameters
L1, L2, L3, L4 = 64, 150, 100, 4
LEARNING_RATE = 1e-3
GAMMA = 0.9
EPSILON = 0.3
EPOCHS = 5000
MEM_SIZE = 1000
BATCH_SIZE = 200
MAX_MOVES = 50
SYNC_FREQ = 500
NOISE = 1 / 100.0
EVAL_GAMES = 1000
EVAL_MAX_MOVES = 15


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=EPOCHS, help="training episodes (book: 5000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    ap.add_argument("--eval-games", type=int, default=EVAL_GAMES, help="0 skips the evaluation")
    ap.add_argument("--done-rule", choices=("book", "terminal"), default="book",
                    help="book: done = reward > 0 (listing 3.7); terminal: env's terminated flag")
    ap.add_argument("--log-every", type=int, default=500, help="progress line on stderr every N episodes (0: never)")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    import torch  # only here: the module stays importable without torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    np.random.seed(args.seed)

    model = torch.nn.Sequential(
        torch.nn.Linear(L1, L2),
        torch.nn.ReLU(),
        torch.nn.Linear(L2, L3),
        torch.nn.ReLU(),
        torch.nn.Linear(L3, L4),
    )
    model2 = copy.deepcopy(model)
    model2.load_state_dict(model.state_dict())

    loss_fn = torch.nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    gamma, epsilon = GAMMA, EPSILON

    game = Gridworld(mode="random", noise=NOISE)
    game.reset(seed=args.seed)  # seeds the board/noise stream; each episode below is a fresh board
    epochs = args.episodes
    losses = []
    replay = deque(maxlen=MEM_SIZE)
    max_moves = MAX_MOVES
    sync_freq = SYNC_FREQ
    batch_size = BATCH_SIZE
    book_done = args.done_rule == "book"
    j = 0
    wins = 0
    t0 = time.perf_counter()
    for i in range(epochs):
        state1_, _ = game.reset()  # book: game = Gridworld(size=4, mode='random'); render_np + rand/100
        state1 = torch.from_numpy(state1_).reshape(1, 64)
        status = 1
        mov = 0
        while status == 1:
            j += 1
            mov += 1
            qval = model(state1)
            qval_ = qval.data.numpy()
            if random.random() < epsilon:
                action_ = np.random.randint(0, 4)
            else:
                action_ = np.argmax(qval_)

            state2_, reward, terminated, _, _ = game.step(int(action_))
            state2 = torch.from_numpy(state2_).reshape(1, 64)
            done = (True if reward > 0 else False) if book_done else terminated
            exp = (state1, action_, reward, state2, done)
            replay.append(exp)
            state1 = state2

            if len(replay) > batch_size:
                minibatch = random.sample(replay, batch_size)
                state1_batch = torch.cat([s1 for (s1, a, r, s2, d) in minibatch])
                action_batch = torch.Tensor([a for (s1, a, r, s2, d) in minibatch])
                reward_batch = torch.Tensor([r for (s1, a, r, s2, d) in minibatch])
                state2_batch = torch.cat([s2 for (s1, a, r, s2, d) in minibatch])
                done_batch = torch.Tensor([d for (s1, a, r, s2, d) in minibatch])
                Q1 = model(state1_batch)
                with torch.no_grad():
                    Q2 = model2(state2_batch)

                Y = reward_batch + gamma * ((1 - done_batch) * torch.max(Q2, dim=1)[0])
                X = Q1.gather(dim=1, index=action_batch.long().unsqueeze(dim=1)).squeeze()
                loss = loss_fn(X, Y.detach())
                optimizer.zero_grad()
                loss.backward()
                losses.append(loss.item())
                optimizer.step()

                if j % sync_freq == 0:
                    model2.load_state_dict(model.state_dict())
            if reward != -1 or mov > max_moves:
                wins += reward > 0
                status = 0
                mov = 0
        if args.log_every and (i + 1) % args.log_every == 0:
            recent = np.mean(losses[-200:]) if losses else float("nan")
            print(f"episode {i + 1}/{epochs}  steps {j}  loss(last 200) {recent:.4f}  "
                  f"train wins {wins}  {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
    wall_s = time.perf_counter() - t0

    result = {
        "framework": "pytorch",
        "torch": torch.__version__,
        "episodes": epochs,
        "seed": args.seed,
        "threads": args.threads,
        "done_rule": args.done_rule,
        "steps": j,
        "updates": len(losses),
        "wall_s": round(wall_s, 3),
        "episodes_per_s": round(epochs / wall_s, 2) if wall_s > 0 else None,
        "steps_per_s": round(j / wall_s, 1) if wall_s > 0 else None,
        "train_win_frac": round(wins / max(epochs, 1), 4),
        "final_loss": round(float(np.mean(losses[-100:])), 5) if losses else None,
    }
    if args.eval_games:
        model.eval()

        def policy(obs):  # book test_model: argmax of model(state) on a (1, 64) state
            with torch.no_grad():
                qval = model(torch.from_numpy(obs).reshape(1, 64))
            return int(np.argmax(qval.data.numpy()))

        t1 = time.perf_counter()
        result["win_rate"] = win_rate(policy, n_games=args.eval_games, mode="random",
                                      max_moves=EVAL_MAX_MOVES, seed=args.seed)
        result["eval_games"] = args.eval_games
        result["eval_s"] = round(time.perf_counter() - t1, 3)
    else:
        result["win_rate"] = None
    print(json.dumps(result), flush=True)
    return result


if __name__ == "__main__":
    main()
