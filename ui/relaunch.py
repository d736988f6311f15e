"""Start VoxDesk again (after a language change): the same program with the same arguments."""

from __future__ import annotations

import sys

from PySide6.QtCore import QProcess
from PySide6.QtWidgets import QApplication


def relaunch_command(argv: list[str] | None = None, frozen: bool | None = None) -> tuple[str, list[str]]:
    """(program, arguments) that start this VoxDesk again: the frozen executable itself, or this
    Python running the ``app`` package (``voxdesk`` and ``python -m app`` both open the window)."""
    argv = sys.argv if argv is None else argv
    frozen = bool(getattr(sys, "frozen", False)) if frozen is None else frozen
    if frozen:
        return sys.executable, list(argv[1:])
    return sys.executable, ["-m", "app", *argv[1:]]


def relaunch() -> None:
    """Start a new VoxDesk detached from this one, then end this one's event loop. Call it only
    after the window has closed (its autosave is written then; the new window restores it)."""
    program, args = relaunch_command()
    if not QProcess.startDetached(program, args):
        raise RuntimeError(f"Could not start {program} again")
    QApplication.quit()
