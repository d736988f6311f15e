"""``voxdesk train`` on the tiny model (CPU): a SIGKILL mid-run, then the same command finishes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from test_train_job import tiny_dataset

from app.train.job import TrainJob
from app.voices.library import VoiceLibrary

ROOT = Path(__file__).resolve().parents[1]


def _command(tiny_v2, data, out) -> list[str]:
    return [sys.executable, "-m", "app.cli", "train", "--voice", "Trained", "--data", str(data), "--model",
            str(tiny_v2), "--steps", "6", "--save-every", "2", "--out", str(out), "--device", "cpu",
            "--grad-accum", "1", "--allow-little-data"]  # fmt: skip


def test_killed_training_continues_from_the_last_checkpoint(tmp_path, tiny_v2):
    data = tiny_dataset(tmp_path / "data").folder
    out = tmp_path / "run"
    env = dict(os.environ, VOXDESK_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(_command(tiny_v2, data, out), cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    first = out / "job" / "checkpoints" / "step_000002"
    deadline = time.monotonic() + 600
    while not first.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert first.exists(), proc.stderr.read()
    done = [c.step for c in TrainJob.open(out / "job").checkpoints()]
    assert done and done[-1] < 6  # killed mid-run

    again = subprocess.run(_command(tiny_v2, data, out), cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=600)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert f"from step {done[-1]}" in again.stdout
    job = TrainJob.open(out / "job")
    assert [c.step for c in job.checkpoints()] == [2, 4, 6]
    assert [s for s, _ in job.losses()] == [1, 2, 3, 4, 5, 6]
    voices = VoiceLibrary(tmp_path / "home" / "data" / "voices").list()
    assert [v.name for v in voices] == ["Trained"]
