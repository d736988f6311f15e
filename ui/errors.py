"""Errors the user sees as dialogs, and tracebacks that only go to the log file.

``setup_logging`` sends everything to a rotating log in the user log folder.
``install_excepthook`` makes an unexpected exception log its traceback and show one plain message
(never a silent exit). ``user_message`` turns any exception into the one line a dialog shows:
a :class:`VoxDeskError` speaks for itself; anything else gets a generic line that points to the log.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from app import paths
from app.errors import VoxDeskError

log = logging.getLogger("voxdesk")

LOG_NAME = "voxdesk.log"
LINE_FORMAT = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")


def log_file() -> Path:
    return paths.log_dir() / LOG_NAME


def setup_logging(level: int = logging.INFO) -> Path:
    """Log to a rotating file (1 MB × 3) in the user log folder; return its path. Idempotent."""
    path = log_file()
    root = logging.getLogger()
    for handler in root.handlers:
        if isinstance(handler, logging.handlers.RotatingFileHandler) and Path(handler.baseFilename) == path:
            return path
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
    handler.setFormatter(LINE_FORMAT)
    root.addHandler(handler)
    root.setLevel(level)
    return path


def user_message(exc: BaseException) -> str:
    """The one line to show for ``exc``; tracebacks never reach the user."""
    if isinstance(exc, VoxDeskError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "VoxDesk ran out of memory. Close other programs or choose a smaller model, then try again."
    return (
        "Something went wrong inside VoxDesk. Your work is saved; try again, and if it keeps "
        f"happening, send the log file ({log_file()}) with a short description."
    )


def report(exc: BaseException, context: str = "") -> str:
    """Log ``exc`` (with traceback unless it is a plain VoxDeskError) and return the message to show."""
    if isinstance(exc, VoxDeskError):
        log.warning("%s%s", f"{context}: " if context else "", exc)
    else:
        log.error("Unexpected error%s", f" while {context}" if context else "", exc_info=exc)
    return user_message(exc)


def log_line(message: str, context: str = "") -> str:
    """Log ``message`` as a warning and return the line exactly as the log file shows it
    (what a "Details" button shows next to a failure)."""
    text = f"{context}: {message}" if context else message
    record = log.makeRecord(log.name, logging.WARNING, __file__, 0, "%s", (text,), None)
    log.handle(record)
    return LINE_FORMAT.format(record)


def install_excepthook(show: Callable[[str], None]) -> None:
    """Route uncaught exceptions (in Qt slots too) to the log plus ``show(message)``."""

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        exc.__traceback__ = tb
        message = report(exc)
        try:
            show(message)
        except Exception:  # a broken dialog must not hide the original error
            log.exception("Could not show the error message")

    sys.excepthook = hook
