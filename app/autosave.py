"""The autosave folder: where a script's autosave copy lives, which copies to offer at start,
and what an autosave records beyond the project (its script's file, whether it holds changes not
saved there). :meth:`app.project.Project.autosave` writes the copies; :meth:`~app.project.Project.load`
reads them back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app import quarantine

if TYPE_CHECKING:
    from app.project import Project


def _saved_path(data: dict[str, Any]) -> Path | None:
    value = data.get("saved_path")
    return Path(value) if isinstance(value, str) and value else None


def _unsaved(data: dict[str, Any], project: Project) -> bool:
    """Whether an autosave holds unsaved changes. Autosaves from before this was recorded:
    a script never saved to a file, or one whose text differs from its file's."""
    flag = data.get("unsaved")
    if isinstance(flag, bool):
        return flag
    if project.path is None:
        return bool(project.text.strip())
    try:
        saved = json.loads(project.path.read_text(encoding="utf-8"))
        return not isinstance(saved, dict) or saved.get("text") != project.text
    except (OSError, UnicodeDecodeError, ValueError, RecursionError, MemoryError):
        return True


def autosave_dir() -> Path:
    """Where autosave copies live (under the user data folder)."""
    from app.paths import data_dir

    folder = data_dir() / "autosave"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def autosaves() -> list[Path]:
    """Autosave copies to offer at start, newest first. Hidden files (a killed writer's temporary
    copies) and set-aside files are never among them."""
    from app.project import SUFFIX  # (app.project imports this module)

    found = []
    for path in autosave_dir().glob(f"*{SUFFIX}"):
        if path.name.startswith(".") or quarantine.is_set_aside(path):
            continue
        try:
            if path.is_file():
                found.append((path.stat().st_mtime, path))
        except OSError:
            continue
    return [path for _, path in sorted(found, reverse=True)]
