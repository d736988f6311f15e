"""File menu for scripts: New, Open, Recent scripts, Save, Save as, and the question that guards
unsaved work.

Unsaved changes (the ``*`` in the title, restored ones included) are never dropped without a
word: New, Open and closing the window ask Save / Discard / Cancel first. A take finished since
the last save counts as one (its reference is only in the autosave until then). The autosave copy
of those changes is deleted only after the user chose Discard; Cancel keeps everything as it was.
A start with no autosave (the last script was discarded) reopens the most recent script file.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from PySide6.QtCore import QCoreApplication, QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QStyle

from app import project as projects
from app import takes
from app.errors import VoxDeskError
from ui.errors import report

if TYPE_CHECKING:
    from ui.main_window import MainWindow
    from ui.settings import Settings

Settled = Literal["clean", "saved", "discarded"]
MAX_RECENT = 10
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reopened:
    """What a start without an autosave says about the most recent script: a status-bar note
    when it was reopened, a message when it exists but could not be (or needed repairs)."""

    note: str = ""
    problem: str = ""


def reopen_recent(settings: Settings) -> tuple[projects.Project, Reopened]:
    """The script to start with when there is no autosave: the most recent script file, as it
    was saved, when it still exists (as desktop editors reopen the last document); else a new
    script. A file that cannot be read costs nothing: a new script, and the reason."""
    recent = settings.recent_scripts()
    path = recent[0] if recent else None
    if path is None or not path.is_file():
        return projects.Project(), Reopened()
    tr = QCoreApplication.translate
    try:
        project = projects.Project.load(path)
    except Exception as exc:  # noqa: BLE001 - whatever is in it, the window opens
        why = str(exc) if isinstance(exc, VoxDeskError) else report(exc, "reopening the last script")
        problem = tr("ScriptFiles", "The last script, {0}, could not be reopened: {1}").format(path.name, why)
        return projects.Project(), Reopened(problem=problem)
    note = tr("ScriptFiles", "Reopened {0}, the last script").format(path.name)
    return project, Reopened(note, repairs(path, project))


def repairs(path: Path, project: projects.Project) -> str:
    """What opening ``path`` had to repair ("" when nothing); the file is untouched until saved."""
    return f"{path.name} was opened with repairs: {'; '.join(project.problems)}." if project.problems else ""


def only_takes_differ(project: projects.Project) -> bool:
    """Whether the script's file holds everything but the takes made since it was saved (the
    question then says so: the user typed nothing). False when in doubt."""
    if project.path is None:
        return False
    try:
        saved = json.loads(project.path.read_text(encoding="utf-8"))
        now = json.loads(json.dumps(project.to_dict(project.path)))
    except (OSError, ValueError, RecursionError, MemoryError):
        return False
    if not isinstance(saved, dict):
        return False
    saved.pop("results", None)
    now.pop("results", None)
    return saved == now


class ScriptFiles(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.recent_menu: QMenu | None = None

    def add_to(self, menu: QMenu, action: Callable[..., QAction]) -> None:
        """The File menu's script entries (``action``: WindowActions' menu-entry maker)."""
        sp = QStyle.StandardPixmap
        action(menu, self.tr("New script"), self.new_script, "Ctrl+N", sp.SP_FileIcon)
        action(menu, self.tr("Open script…"), self.open_script, "Ctrl+O", sp.SP_DialogOpenButton)
        self.recent_menu = menu.addMenu(self.tr("Recent scripts"))
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._fill_recent()
        action(menu, self.tr("Save script"), self.save_script, "Ctrl+S", sp.SP_DialogSaveButton)
        action(menu, self.tr("Save script as…"), self.save_script_as, "Ctrl+Shift+S", None)
        action(menu, self.tr("Save as self-contained project…"), self.save_self_contained, None, None)

    # --- the question -----------------------------------------------------------------------
    def settle_unsaved(self) -> Settled | None:
        """Before the script is replaced or the window closes: with unsaved changes, ask Save /
        Discard / Cancel. None: cancelled (or the save did not happen), keep everything."""
        self.w.script.flush()
        self.w.session.wait_for_writes()  # a take finished a moment ago is unsaved work too
        if not self.w.isWindowModified():
            return "clean"
        path = self.w.project.path
        if path is None:
            question = self.tr("This script was never saved. Save it before closing it?")
        elif only_takes_differ(self.w.project):
            question = self.tr("“{0}” has new takes that are not saved in it yet. Save it before closing it?")
            question = question.format(path.name)
        else:
            question = self.tr("“{0}” has unsaved changes. Save them before closing it?").format(path.name)
        answer = self.w.dialogs.unsaved(self.w, question)
        if answer == "save":
            return "saved" if self.save_script() else None
        if answer == "discard":
            self.w.project.discard_autosave()
            return "discarded"
        return None

    # --- scripts ----------------------------------------------------------------------------
    def new_script(self) -> None:
        if self.settle_unsaved() is None:
            return
        self.w.project.discard_autosave()
        self.w.set_project(projects.Project())

    def open_script(self) -> None:
        path = self.w.dialogs.open_project(self.w)
        if path is not None:
            self.open_path(path)

    def open_path(self, path: Path) -> bool:
        """Open a script file (the current one's unsaved changes are settled first, after the new
        one was read: a damaged file costs nothing). True when it was opened."""
        try:
            project = projects.Project.load(path)
        except VoxDeskError as err:
            self.w.dialogs.error(self.w, str(err))
            if not path.is_file():
                self.w.settings.remove_recent_script(path)
            return False
        if self.settle_unsaved() is None:
            return False
        self.w.set_project(project)
        self.w.settings.add_recent_script(path, MAX_RECENT)
        if project.problems:
            self.w.dialogs.error(self.w, repairs(path, project))
        return True

    def save_script(self) -> bool:
        """Ctrl+S: save to the script's file; the first time, ask where (as Save as…)."""
        if self.w.project.path is None:
            return self.save_script_as()
        return self._save_to(self.w.project.path)

    def save_script_as(self) -> bool:
        suggested = self.w.project.path or self.w.dialogs.start_folder("script") / f"script{projects.SUFFIX}"
        path = self.w.dialogs.save_path(self.w, self.tr("Save script"), suggested, "VoxDesk (*.voxdesk)")
        return path is not None and self._save_to(path)

    def save_self_contained(self) -> bool:
        """Save with the takes copied into a folder beside the file (relative paths), so the two
        can move to another computer together; later saves keep it that way."""
        suggested = self.w.project.path or self.w.dialogs.start_folder("script") / f"script{projects.SUFFIX}"
        title = self.tr("Save as self-contained project")
        path = self.w.dialogs.save_path(self.w, title, suggested, "VoxDesk (*.voxdesk)")
        if path is None or not self._save_to(path, self_contained=True):
            return False
        saved = self.w.project.path
        if saved is not None:
            self.w.statusBar().showMessage(
                self.tr("Saved {0} with its takes in the folder {1} beside it").format(
                    saved.name, takes.folder(saved).name
                ),
                15_000,
            )
        return True

    def _save_to(self, path: Path, self_contained: bool | None = None) -> bool:
        self.w.script.flush()
        self.w.session.wait_for_writes()  # takes still being written belong in the file too
        try:
            saved = self.w.project.save(path, self_contained)
        except Exception as exc:  # noqa: BLE001
            self.w.dialogs.error(self.w, report(exc, "saving the script"))
            return False
        self.w.set_modified(False)
        self.w.autosave()  # now marked as saved: a restart does not call it unsaved
        self.w.settings.set_last_folder("script", saved.parent)
        self.w.settings.add_recent_script(saved, MAX_RECENT)
        self.w.statusBar().showMessage(self.tr("Saved {0}").format(saved), 5000)
        return True

    # --- recent scripts ---------------------------------------------------------------------
    def _fill_recent(self) -> None:
        """Rebuilt each time it opens: a file that is gone shows as not found, disabled."""
        menu = self.recent_menu
        if menu is None:
            return
        menu.clear()
        recent = self.w.settings.recent_scripts()
        for path in recent:
            found = path.is_file()
            text = path.name if found else self.tr("{0} (not found)").format(path.name)
            action = menu.addAction(text)
            action.setToolTip(str(path))
            action.setStatusTip(str(path))
            action.setEnabled(found)
            action.triggered.connect(lambda _checked=False, p=path: self.open_path(p))
        if not recent:
            menu.addAction(self.tr("No recent scripts")).setEnabled(False)
        menu.addSeparator()
        clear = menu.addAction(self.tr("Clear recent scripts"))
        clear.setEnabled(bool(recent))
        clear.triggered.connect(self._clear_recent)
        menu.setToolTipsVisible(True)

    def _clear_recent(self) -> None:
        self.w.settings.clear_recent_scripts()
        self._fill_recent()
