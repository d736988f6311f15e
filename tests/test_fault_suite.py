"""The fault suite every later change must pass.

SIGKILL during every writer (project, autosave, export, voice import, latents, settings), then
reopen: nothing acknowledged is lost, and no leftover is offered as a project, a voice or a file.
A full disk on every writer: one plain message, the previous content intact, nothing left behind.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from app import project as projects
from app import quarantine
from app.errors import VoxDeskError
from app.export import Clip, export_merged
from app.voices import latents
from app.voices.library import VoiceLibrary

ROOT = Path(__file__).resolve().parents[1]
KILLS = 3  # per writer; each kill lands after a different number of acknowledged writes


def _kill_after(writer: str, folder: Path, first: int, acks: int) -> int:
    """Run the writer from write ``first`` until it acknowledged write ``acks``, SIGKILL it,
    return the last acknowledged write."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    child = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "fault_writer.py"), writer, str(folder), str(first)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    last = first - 1
    try:
        assert child.stdout.readline().strip() == "ready", child.stderr.read()
        while last < acks:
            line = child.stdout.readline()
            assert line, child.stderr.read()
            last = int(line)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
        child.stderr.close()
    return last


def _visible(folder: Path) -> list[str]:
    """What a user (or a file dialog) would see: no hidden temporaries."""
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".") and p.name != "home")


def _check_project(folder: Path, acked: int) -> None:
    project = projects.Project.load(folder / "script.voxdesk")
    assert int(project.text.split()[-1]) >= acked
    assert set(_visible(folder)) <= {"script.voxdesk", "script.voxdesk.bak"}


def _check_autosave(folder: Path, acked: int) -> None:
    offered = projects.autosaves()
    assert [p.name for p in offered] == ["fault.voxdesk"]  # never a temporary copy
    assert int(projects.Project.load(offered[0]).text.split()[-1]) >= acked


def _check_export(folder: Path, acked: int) -> None:
    samples, rate = sf.read(str(folder / "out.wav"), dtype="float32")
    assert rate == 16000 and len(samples) - 1000 >= acked
    assert _visible(folder) == ["out.wav"]


def _check_voice(folder: Path, acked: int) -> None:
    library = VoiceLibrary(folder / "voices")
    names = {v.name for v in library.list()}
    assert {f"v{n}" for n in range(1, acked + 1)} <= names  # every acknowledged import is there
    # and nothing half-made is offered (at most one finished-but-unacknowledged import per kill)
    assert len(names) <= acked + KILLS and library.problems == []
    for voice in library.list():
        assert len(library.audio(voice)) == voice.n_samples


def _check_latents(folder: Path, acked: int) -> None:
    library = VoiceLibrary(folder / "voices")
    (voice,) = library.list()
    cached = latents.load(library, voice, "m", "prompt")
    assert cached is not None and int(cached[0, 0, 0]) >= acked and np.all(cached == cached[0, 0, 0])


def _check_settings(folder: Path, acked: int) -> None:
    from ui.settings import Settings

    quarantine.take_notices()
    settings = Settings(folder / "settings.ini")
    assert int(settings.output_dir.name) >= acked
    assert quarantine.take_notices() == []  # read back whole, nothing set aside


CHECKS = {
    "project": _check_project,
    "autosave": _check_autosave,
    "export": _check_export,
    "voice": _check_voice,
    "latents": _check_latents,
    "settings": _check_settings,
}


@pytest.mark.parametrize("writer", sorted(CHECKS))
def test_sigkill_during_every_writer_loses_nothing_acknowledged(writer, tmp_path, monkeypatch):
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path / "home"))
    acked = 0
    for kill in range(KILLS):
        acked = _kill_after(writer, tmp_path, acked + 1, acked + 2 + 3 * kill)
        CHECKS[writer](tmp_path, acked)
    # At the next start the leftovers of the killed writes are removed, never offered
    for folder in [p for p in tmp_path.rglob("*") if p.is_dir()] + [tmp_path]:
        quarantine.clean_leftovers(folder, min_age_s=0)
    assert not [p for p in tmp_path.rglob(".*") if quarantine.is_leftover(p)]
    CHECKS[writer](tmp_path, acked)


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*_args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)


def _clip(n: int) -> np.ndarray:
    return (0.3 * np.sin(np.arange(16000 + n, dtype=np.float32) * 0.05)).astype(np.float32)


def test_full_disk_on_every_writer_is_one_plain_message_and_keeps_the_old_content(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path / "home"))
    project = projects.Project(text="saved")
    project.save(tmp_path / "script.voxdesk")
    project.autosave()
    export_merged(tmp_path / "out.wav", [Clip("x", _clip(0))], 16000)
    library = VoiceLibrary(tmp_path / "voices")
    voice = library.create_from_samples(_clip(0), 16000, "Anna")
    latents.store(library, voice, "m", "prompt", np.ones((2, 4, 8), np.float32))
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    _full_disk(monkeypatch)
    project.text = "changed"
    attempts = {
        "project": lambda: project.save(),
        "autosave": project.autosave,
        "export": lambda: export_merged(tmp_path / "out.wav", [Clip("x", _clip(5))], 16000, overwrite=True),
        "voice import": lambda: library.create_from_samples(_clip(1), 16000, "Bob"),
        "voice edit": lambda: library.rename(voice, "Anne"),
        "latents": lambda: latents.store(library, voice, "m", "prompt", np.zeros((3, 4, 8), np.float32)),
    }
    for what, attempt in attempts.items():
        with pytest.raises(VoxDeskError, match="disk is full") as err:
            attempt()
        assert "\n" not in str(err.value), what
    monkeypatch.undo()
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before  # every old file intact, no temporary file or staging folder left
    assert [v.name for v in library.list()] == ["Anna"]
    assert json.loads((tmp_path / "script.voxdesk").read_text())["text"] == "saved"


def test_full_disk_on_the_settings_file_keeps_it_whole(tmp_path):
    """QSettings writes from C++ (no Python call to fail): a real full file system, when this
    machine lets a test mount one."""
    from ui.settings import Settings

    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True
    ).returncode:
        pytest.skip("mounting a small tmpfs is not permitted here")
    try:
        settings = Settings(mnt / "settings.ini")
        settings.output_dir = Path("/kept")
        (mnt / "filler").write_bytes(b"\0" * (64 * 1024 - 4096 * 2))  # leave less than a page or two
        with pytest.raises(OSError):
            while True:
                with open(mnt / "filler", "ab") as f:
                    f.write(b"\0" * 4096)
        settings.output_dir = Path("/" + "x" * 20_000)  # cannot fit
        text = (mnt / "settings.ini").read_text()  # (another Settings would share Qt's cache)
        assert "output_dir=/kept" in text and "xxxx" not in text
        assert not [p for p in mnt.iterdir() if p.name not in ("settings.ini", "filler")]
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
