"""``voxdesk`` (the installed entry point) opens its real window on Qt's X11 platform (xcb) under
Xvfb, as on a Linux desktop, and closes cleanly on SIGTERM. CI runs this on a clean machine with
only README's packages installed (.ci/run), so a library Qt's xcb plugin needs but README does not
list fails here, not on a user's first start. The offscreen platform the window tests use never
loads the xcb plugin."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("xvfb-run") is None,
    reason="needs Linux with Xvfb (xvfb-run): apt-get install xvfb",
)


def _entry_point() -> list[str]:
    script = Path(sys.executable).parent / "voxdesk"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "app"]


def _app_pid(parent: int) -> int | None:
    """The VoxDesk process xvfb-run started (its child that is not Xvfb)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == parent and b"Xvfb" not in cmdline:
            return int(stat.parent.name)
    return None


def _wait(condition, proc: subprocess.Popen, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{what} (exit code {proc.poll()})")
        time.sleep(0.2)


def test_voxdesk_opens_on_xcb_under_xvfb_and_closes_on_sigterm(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("VOXDESK_HOME", str(home))
    from ui.errors import log_file

    log = log_file()
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "VOXDESK_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("WAYLAND_DISPLAY", None)
    output = tmp_path / "output.txt"
    with open(output, "wb") as out:
        proc = subprocess.Popen(["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", *_entry_point()],
                                env=env, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        opened = lambda: log.is_file() and "VoxDesk window opened" in log.read_text(encoding="utf-8")  # noqa: E731
        _wait(opened, proc, 240, f"no window: {output.read_text(errors='replace')[-2000:]}")
        pid = _app_pid(proc.pid)
        assert pid is not None
        os.kill(pid, signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, output.read_text(errors="replace")[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text(encoding="utf-8")
    assert "VoxDesk window closed" in text and "Traceback" not in text
    assert "qt.qpa.plugin" not in output.read_text(errors="replace")
    assert not list(log.parent.glob("crash-*.log"))
