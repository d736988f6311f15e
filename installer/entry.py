"""Entry point of the frozen bundle: both executables (``VoxDesk``, windowed, and ``voxdesk-cli``,
console) start here and then behave exactly like the ``voxdesk`` command (``app.cli.main``).

What only a frozen build needs lives here:
- A windowed Windows executable has no stdout/stderr (they are ``None``), so anything printed
  (``--self-test``'s report, ``--help``) or dumped by ``faulthandler`` goes to ``console.log`` in the
  user log folder instead of being lost or raising.
- Nothing may end silently: an exception that escapes everything else (a DLL missing from the
  bundle, a bug before the window's own handler is installed) is written with its traceback to a
  ``crash-*.log`` file and announced in one plain line, in a dialog when there is no console.
"""

from __future__ import annotations

import faulthandler
import multiprocessing
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

CONSOLE_LOG = "console.log"


def log_folder() -> Path:
    """The user log folder (``app.paths``), or the temp folder when even that cannot be had."""
    try:
        from app import paths

        return paths.log_dir()
    except Exception:
        path = Path(tempfile.gettempdir()) / "VoxDesk"
        path.mkdir(parents=True, exist_ok=True)
        return path


def redirect_missing_streams() -> bool:
    """Give a console-less process a real stdout/stderr (a log file). True if it had none."""
    if sys.stdout is not None and sys.stderr is not None:
        return False
    stream = open(log_folder() / CONSOLE_LOG, "w", encoding="utf-8", buffering=1)  # noqa: SIM115
    sys.stdout = sys.stdout or stream
    sys.stderr = sys.stderr or stream
    return True


def write_crash_log(exc: BaseException) -> Path:
    """Write ``exc``'s traceback and a few facts to a new file in the log folder; return its path."""
    path = log_folder() / time.strftime("crash-%Y%m%d-%H%M%S.log")
    lines = [
        f"VoxDesk crashed at {time.strftime('%Y-%m-%d %H:%M:%S')}\n",
        f"executable: {sys.executable}\narguments: {sys.argv[1:]}\n",
        f"python: {sys.version.split()[0]}  frozen: {getattr(sys, 'frozen', False)}\n\n",
        *traceback.format_exception(type(exc), exc, exc.__traceback__),
    ]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def crash_message(exc: BaseException, log: Path) -> str:
    """One line for the user: a VoxDeskError's own words, otherwise a pointer to the crash log."""
    if type(exc).__name__ == "VoxDeskError":
        return f"{exc} (Details: {log})"
    return f"VoxDesk stopped because of an unexpected error. The details are in {log}."


def show_message(message: str, windowed: bool) -> None:
    """Tell the user: on stderr, and in a dialog when there is no console or the window is up."""
    print(message, file=sys.stderr)
    widgets = sys.modules.get("PySide6.QtWidgets")
    app_up = widgets is not None and widgets.QApplication.instance() is not None
    if not (windowed or app_up):
        return
    try:
        if widgets is None:
            from PySide6 import QtWidgets as widgets
        if widgets.QApplication.instance() is None:
            widgets.QApplication([sys.argv[0]])
        widgets.QMessageBox.critical(None, "VoxDesk", message)
    except Exception:
        if os.name == "nt":  # Qt itself is what failed: fall back to the plain Windows dialog
            import ctypes

            ctypes.windll.user32.MessageBoxW(None, message, "VoxDesk", 0x10)


def main() -> int:
    multiprocessing.freeze_support()
    windowed = redirect_missing_streams()
    faulthandler.enable(sys.stderr)
    try:
        from app.cli import main as cli_main

        return cli_main(sys.argv[1:])
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:
        path = write_crash_log(exc)
        show_message(crash_message(exc, path), windowed)
        return 1


if __name__ == "__main__":
    sys.exit(main())
