"""td3_mujoco: TD3 training steps on HalfCheetah-v5, end to end.

Wall time of N training steps (env step + action selection + one update, the
authors' main.py loop, ``tapeflow.rl.trainer.train``) after the random start
phase, evaluations excluded: tapeflow's TD3 compiled (what `tapeflow td3
train` runs) and eager (`--eager`), against benchmarks/td3_torch.py (a
PyTorch TD3 written from the paper, run through the same loop, env,
hyper-parameters and NumPy replay buffer; once with Adam's defaults, as the
paper's code, and once with ``fused=True``, PyTorch's fastest Adam on CPU).

The N steps are cut into chunks that the harness serves round-robin like any
other blocks (rounds.py): each implementation's run lives in its worker,
paused between chunks, so the runs advance together and every chunk's
ratio compares neighbours in time. The training loop runs in a thread of the
worker and stops inside the agent's ``train`` call when its chunk is done (the
first chunk includes the first update's compilation, as a run does). The
table reports ms/step (median over chunks), the timed total and the ratio of
the totals to PyTorch's. Full mode: the issue's 20k steps (10 chunks of 2k)
after 25k random ones; quick: 10 x 200 after 1k; tiny (the harness's tests):
Pendulum-v1, which needs no MuJoCo. Needs MuJoCo (tapeflow[mujoco]) in
tapeflow's venv and in the peers venv.
"""
from __future__ import annotations

import threading

from benchmarks.common import Bench, Impl

NAME = "td3_mujoco"
TITLE = "TD3 on HalfCheetah-v5: training steps after the random start phase"
SEED = 0
COLUMNS = [["timed steps", "timed_steps", "{}"], ["timed total (s)", "total_s", "{:.1f}"],
           ["× fastest peer, totals", "ratio_of_sums", "{:.2f}×"]]


def cases(mode):
    env, start, chunks, chunk = {"full": ("HalfCheetah-v5", 25_000, 10, 2_000),
                                 "quick": ("HalfCheetah-v5", 1_000, 10, 200),
                                 "tiny": ("Pendulum-v1", 200, 3, 20)}[mode]
    return [{"name": "halfcheetah", "title": f"{chunks * chunk:,} TD3 steps on {env} after {start:,} random ones, "
             f"in {chunks} chunks of {chunk:,} served round-robin", "unit": "step", "display": "ms", "env": env,
             "start": start, "chunk": chunk, "rounds": chunks, "ratio_of_sums": True, "columns": COLUMNS}]


def make_data(case, seed):
    return {}


class ChunkedRun:
    """``train`` in a thread of its own, let go `chunk` learning steps at a time.

    The agent is wrapped so that its ``train`` call (once per learning step) waits
    for the next chunk when the current one is used up; ``step`` hands out a chunk
    and returns when the loop waits again (or has ended). The two threads never
    run at once: one always waits on a semaphore."""

    def __init__(self, case, make):
        from tapeflow.rl.trainer import TrainConfig

        self.case, self.left, self.error, self.result = case, 0, None, None
        self._go, self._paused = threading.Semaphore(0), threading.Semaphore(0)
        self.cfg = TrainConfig(env=case["env"], steps=case["start"] + case["rounds"] * case["chunk"],
                               start_steps=case["start"], eval_freq=10 ** 9, eval_episodes=1, seed=SEED)
        self._make = make
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        from tapeflow.rl.trainer import train

        try:
            self.result, _ = train(self.cfg, logdir="", ckpt_dir="", progress=False, out=lambda *a: None,
                                   agent_factory=lambda s, a, m: _Paced(self._make(s, a, m), self))
        except BaseException as exc:  # reported by the main thread
            self.error = exc
        finally:
            self._paused.release()

    def wait_turn(self):  # in the training thread, before each learning step
        if self.left == 0:
            self._paused.release()
            self._go.acquire()
        self.left -= 1

    def _wait(self):
        self._paused.acquire()
        if self.error is not None:
            raise RuntimeError(f"the training run failed: {type(self.error).__name__}: {self.error}")

    def start(self):
        """The random start phase and the evaluation at step 0; returns at the first learning step."""
        self._thread.start()
        self._wait()

    def step(self):
        if not self._thread.is_alive():
            raise RuntimeError("the training run has ended: no steps left for another chunk")
        self.left = self.case["chunk"]
        self._go.release()
        self._wait()

    def metrics(self):
        done = self.cfg.steps - self.cfg.start_steps if self.result is not None else None
        return {"timed_steps": done, "episodes": self.result.episodes if self.result else None}


class _Paced:
    """An agent whose ``train`` waits for its run's next chunk; everything else is the agent's."""

    def __init__(self, agent, run):
        self._agent, self._run = agent, run

    def __getattr__(self, name):
        return getattr(self._agent, name)

    def train(self, replay_buffer):
        self._run.wait_turn()
        return self._agent.train(replay_buffer)


def _bench(case, make):
    run = ChunkedRun(case, make)
    run.start()
    return Bench(step=run.step, units=case["chunk"], calls=1, finish=run.metrics)


def build_tapeflow(case, data, compiled=True):
    import tapeflow as tf
    from tapeflow.rl.trainer import make_agent

    # as `tapeflow td3 train` runs: no thread count set in the program (the worker sets one
    # for the other workloads), so a GEMM's BLAS threads follow the load as they do for a
    # user; the environment's OPENBLAS/OMP_NUM_THREADS still size the pool, as for the CLI
    tf.config.threading.set_intra_op_parallelism_threads(0)
    tf.config.threading.set_inter_op_parallelism_threads(0)
    return _bench(case, lambda s, a, m: make_agent("td3", s, a, m, SEED, compiled))


def build_tapeflow_eager(case, data):
    return build_tapeflow(case, data, compiled=False)


def build_torch(case, data, fused_adam=False):
    from benchmarks.td3_torch import TorchTD3

    return _bench(case, lambda s, a, m: TorchTD3(s, a, m, SEED, fused_adam=fused_adam))


def build_torch_fused(case, data):
    return build_torch(case, data, fused_adam=True)


IMPLS = [
    Impl("tapeflow", "tapeflow", "tapeflow TD3 (compiled, as `tapeflow td3 train`)", build_tapeflow),
    Impl("tapeflow_eager", "tapeflow", "tapeflow TD3 eager (as `tapeflow td3 train --eager`)", build_tapeflow_eager),
    Impl("torch", "torch", "PyTorch TD3 (benchmarks/td3_torch.py; Adam's defaults, as the paper's code)", build_torch),
    Impl("torch_fused", "torch", "PyTorch TD3, torch.optim.Adam(fused=True)", build_torch_fused),
]
