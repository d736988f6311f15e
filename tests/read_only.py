"""A folder nobody may write to, root included (the machine that runs the tests may be root)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def make_read_only(folder: Path) -> bool:
    """Make ``folder`` unwritable even for root (chattr +i); False when this machine cannot."""
    folder.chmod(0o555)
    probe = folder / "probe"
    try:
        probe.touch()
    except OSError:
        return True
    probe.unlink()
    try:
        done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False)
    except OSError:  # no chattr (Windows, macOS)
        return False
    return done.returncode == 0


def undo_read_only(folder: Path) -> None:
    try:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True, check=False)
    except OSError:
        pass
    folder.chmod(0o755)
