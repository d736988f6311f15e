"""Setting a bad file aside: one damaged file never stops VoxDesk, and nothing is thrown away.

Everything VoxDesk reads back (voices, projects, autosaves, settings, caches) is validated on its
own. A file (or folder) that fails is renamed ``<name>.damaged-<date>`` in its own folder, so it is
kept for the user (or a bug report) but never read again, the reason goes to the log, and the
window names it in one plain message (:func:`take_notices` + :func:`message`). The caller then
carries on with everything else.

Crash leftovers are handled here too: :func:`clean_leftovers` removes the hidden temporary files
of :mod:`app.atomic` and the staging folders of the voice library that a killed process left behind.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from app.atomic import fsync_dir

log = logging.getLogger(__name__)

MARK = ".damaged-"
# Hidden temporaries of app.atomic (".<stem>.tmp-XXXX<suffix>") and of the voice library
# (".new-<id>" staging folders, ".deleted-<id>-<x>" folders half-way through a delete).
_LEFTOVER = re.compile(r"^\.(?:.*\.tmp-[A-Za-z0-9_]+.*|new-[A-Za-z0-9_-]+|deleted-[A-Za-z0-9_-]+)$")
# A leftover younger than this may belong to a writer that is still running (another window).
LEFTOVER_AGE_S = 60.0


@dataclass(frozen=True)
class SetAside:
    """One file that was set aside: where it was, where it is now, and why."""

    original: Path
    kept: Path | None  # None: nothing was renamed (missing file, or a folder VoxDesk cannot write)
    reason: str


_lock = threading.Lock()
_notices: list[SetAside] = []


def is_set_aside(path: Path) -> bool:
    """True for a file or folder this module renamed (never read again)."""
    return MARK in path.name


def set_aside(path: str | os.PathLike[str], reason: str) -> SetAside:
    """Rename ``path`` to ``<name>.damaged-<date>`` next to it, log why, and queue a notice."""
    path = Path(path)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}{MARK}{stamp}")
    n = 2
    while target.exists():
        target = path.with_name(f"{path.name}{MARK}{stamp}-{n}")
        n += 1
    kept: Path | None = target
    try:
        os.replace(path, target)
        fsync_dir(path.parent)
    except FileNotFoundError:
        kept = None
    except OSError as exc:
        log.warning("Could not rename %s aside (%s); it is skipped instead", path, exc)
        kept = None
    log.warning("Set aside %s as %s: %s", path, kept.name if kept else "(not renamed)", reason)
    return _queue(SetAside(path, kept, reason))


def note(path: str | os.PathLike[str], reason: str) -> SetAside:
    """Queue a notice about ``path`` without renaming anything (e.g. a file that is missing)."""
    log.warning("%s: %s", path, reason)
    return _queue(SetAside(Path(path), None, reason))


def _queue(notice: SetAside) -> SetAside:
    with _lock:
        _notices.append(notice)
    return notice


def take_notices() -> list[SetAside]:
    """The notices queued since the last call (the window shows them in one message)."""
    with _lock:
        out = list(_notices)
        _notices.clear()
    return out


def message(notices: list[SetAside]) -> str:
    """One plain message naming every file that was set aside."""
    if not notices:
        return ""
    lines = []
    for n in notices:
        where = f"; kept as {n.kept.name}" if n.kept is not None else ""
        lines.append(f"• {n.original} ({n.reason}{where})")
    head = (
        "VoxDesk could not read this file, so it was set aside and everything else was loaded:"
        if len(notices) == 1
        else f"VoxDesk could not read these {len(notices)} files, so they were set aside "
        "and everything else was loaded:"
    )
    return head + "\n" + "\n".join(lines)


def is_leftover(path: Path) -> bool:
    """True for a crash leftover: a hidden temporary file or a staging folder."""
    return bool(_LEFTOVER.match(path.name))


def clean_leftovers(folder: Path, min_age_s: float = LEFTOVER_AGE_S) -> list[Path]:
    """Remove crash leftovers directly in ``folder`` older than ``min_age_s``; returns them."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    return [e for e in entries if is_leftover(e) and remove_leftover(e, min_age_s)]


def remove_leftover(entry: Path, min_age_s: float = LEFTOVER_AGE_S) -> bool:
    """Remove one leftover file or folder unless it is younger than ``min_age_s`` (it may belong
    to a writer still at work in another VoxDesk); True when it was removed."""
    try:
        if time.time() - entry.lstat().st_mtime < min_age_s:
            return False
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    except OSError as exc:
        log.warning("Could not remove the leftover %s: %s", entry, exc)
        return False
    log.info("Removed the crash leftover %s", entry)
    return True
