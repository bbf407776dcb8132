"""`tapeflow td3|ddpg train|eval|plot` on Pendulum-v1 (and InvertedPendulum-v5 when
MuJoCo is installed): outputs, TensorBoard tags, evaluations.npz, Ctrl-C + --resume."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from conftest import subprocess_env
import tapeflow as tf
from tapeflow.cli import main

# small and fast: 100 random steps, then 200 updates of batch 16; evaluations of one episode
SHORT = ["--env", "Pendulum-v1", "--steps", "400", "--start-steps", "100", "--eval-freq", "200",
         "--eval-episodes", "1", "--batch-size", "16", "--no-progress", "--json"]


def _json(out):
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def test_td3_train_eval_plot(tmp_path, capsys):
    run, ck = tmp_path / "runs" / "Pendulum-v1-seed0", tmp_path / "ck"
    assert main(["td3", "train", *SHORT, "--logdir", str(run), "--ckpt-dir", str(ck)]) == 0
    res = _json(capsys.readouterr().out)
    assert res["env_steps"] == 400 and res["episodes"] == 2 and res["learn_steps"] == 300
    assert [s for s, _ in res["evaluations"]] == [0, 200, 400]
    assert np.isfinite(res["final_eval"]) and -2000 < res["final_eval"] <= 0   # Pendulum's reward range
    ev = np.load(run / "evaluations.npz")
    assert ev["timesteps"].tolist() == [0, 200, 400] and ev["results"].shape == ev["ep_lengths"].shape == (3, 1)
    assert (ev["ep_lengths"] == 200).all()

    acc = EventAccumulator(str(run), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    for tag in ("charts/episodic_return", "eval/mean_reward"):
        assert tag in tags["scalars"], tags
    assert [e.step for e in acc.Scalars("charts/episodic_return")] == [200, 400]
    assert [e.step for e in acc.Scalars("eval/mean_reward")] == [0, 200, 400]
    assert "hyperparameters/text_summary" in tags["tensors"] or "hyperparameters" in str(tags)
    assert tags["graph"]                                     # the compiled update in the Graphs tab

    assert main(["td3", "eval", "--ckpt-dir", str(ck), "--episodes", "1", "--json"]) == 0
    ev_out = _json(capsys.readouterr().out)
    # the saved agent, evaluated as the trainer did (seed + 100, deterministic): the same return
    assert ev_out["returns"] == pytest.approx([res["final_eval"]], rel=1e-6)

    png = tmp_path / "curve.png"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        with pytest.raises(SystemExit, match=r'pip install "tapeflow\[plot\]"'):
            main(["td3", "plot", str(run), "--out", str(png)])
    else:
        assert main(["td3", "plot", str(run), str(run), "--out", str(png)]) == 0
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_losses_logged_every_log_step(tmp_path, capsys):
    from tapeflow.rl.td3 import TD3Config
    from tapeflow.rl.trainer import TrainConfig, train
    cfg = TrainConfig(env="Pendulum-v1", steps=300, start_steps=100, eval_freq=300, eval_episodes=1, log_every=100)
    train(cfg, agent_config=TD3Config(hidden=(16, 16), batch_size=16), logdir=str(tmp_path), progress=False,
          out=lambda *a: None)
    acc = EventAccumulator(str(tmp_path), size_guidance={"scalars": 0})
    acc.Reload()
    assert [e.step for e in acc.Scalars("losses/critic_loss")] == [200, 300]
    # the delayed actor loss exists from the second update on
    assert [e.step for e in acc.Scalars("losses/actor_loss")] == [200, 300]
    assert [e.step for e in acc.Scalars("charts/SPS")] == [100, 200, 300]


@pytest.mark.parametrize("variant", ["ours", "original"])
def test_ddpg_train(tmp_path, capsys, variant):
    args = ["ddpg", "train", *SHORT, "--steps", "200", "--variant", variant, "--logdir", "", "--ckpt-dir",
            str(tmp_path / "ck")]
    assert main(args) == 0
    res = _json(capsys.readouterr().out)
    assert res["algo"] == "ddpg" and res["variant"] == variant and res["env_steps"] == 200
    cfg = json.loads((tmp_path / "ck" / "config.json").read_text())
    assert cfg["agent"]["hidden"] == ([400, 300] if variant == "original" else [256, 256])


def test_video_without_moviepy_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "moviepy", None)        # import moviepy -> ImportError
    with pytest.raises(SystemExit, match=r'pip install "tapeflow\[video\]"'):
        main(["td3", "train", *SHORT, "--video", "--logdir", str(tmp_path), "--ckpt-dir", ""])


def test_eval_without_a_trained_agent(tmp_path):
    with pytest.raises(SystemExit, match="no trained agent"):
        main(["td3", "eval", "--ckpt-dir", str(tmp_path)])


@pytest.fixture
def one_blas_thread():
    """GEMMs on one thread, in this process and its children. The thread count of a GEMM
    decides its last bits (util/threads.py), and while the machine is busy (the other
    xdist worker) a shape's count follows the load: the full and the cut run would then
    differ in the last bits. Same seed gives the same bits on a quiet machine, or at any
    load with one thread, as the README's seeding section says."""
    was = tf.config.threading.get_intra_op_parallelism_threads()
    tf.config.threading.set_intra_op_parallelism_threads(1)
    yield {"OPENBLAS_NUM_THREADS": "1"}
    tf.config.threading.set_intra_op_parallelism_threads(was)


def test_ctrl_c_saves_at_an_episode_end_and_resume_continues_exactly(tmp_path, capsys, one_blas_thread):
    """SIGINT: the run finishes its episode, saves, exits 0; --resume then ends where an
    uninterrupted run with the same seed ends, with the same evaluations."""
    args = ["td3", "train", *SHORT, "--steps", "600", "--logdir", ""]
    assert main([*args, "--ckpt-dir", str(tmp_path / "full")]) == 0
    full = _json(capsys.readouterr().out)

    ck = str(tmp_path / "cut")
    env = subprocess_env(PYTHONUNBUFFERED="1", **one_blas_thread)
    p = subprocess.Popen([sys.executable, "-m", "tapeflow.cli", *args, "--ckpt-dir", ck], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for line in p.stdout:                                # interrupt once learning has started
            if line.startswith("evaluation at step 200"):
                p.send_signal(signal.SIGINT)
                break
        out = p.stdout.read()
        p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, out
    assert "interrupted: checkpoint saved to" in out
    cut = _json(out)
    assert cut["interrupted"] and cut["env_steps"] % 200 == 0 and cut["env_steps"] < 600   # an episode end
    assert main([*args, "--ckpt-dir", ck, "--resume"]) == 0
    rest = _json(capsys.readouterr().out)
    assert rest["env_steps"] == 600
    assert rest["evaluations"] == full["evaluations"]
    assert cut["episode_returns"] + rest["episode_returns"] == full["episode_returns"]


def test_inverted_pendulum_short(tmp_path, capsys):
    pytest.importorskip("mujoco")
    args = ["td3", "train", "--env", "InvertedPendulum-v5", "--steps", "300", "--start-steps", "100",
            "--eval-freq", "300", "--eval-episodes", "2", "--batch-size", "16", "--no-progress", "--json",
            "--logdir", str(tmp_path / "run"), "--ckpt-dir", ""]
    assert main(args) == 0
    res = _json(capsys.readouterr().out)
    assert res["env_steps"] == 300 and res["episodes"] > 1     # the pole falls: terminated episodes
    assert res["final_eval"] >= 1.0
