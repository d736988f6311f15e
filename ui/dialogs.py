"""Every modal question the window asks, behind one small object.

The window never calls ``QMessageBox``/``QFileDialog`` directly: it asks its ``Dialogs``. Tests pass
a subclass that answers from a script, so no modal dialog can block a test run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QStandardPaths
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog, QInputDialog, QMessageBox, QWidget

OK_CANCEL = QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel


def user_folder(kind: str) -> Path:
    """Where a file dialog starts when none was used yet: the user's Music folder for audio,
    Documents for scripts (never the app's own folders, e.g. the models folder)."""
    location = (
        QStandardPaths.StandardLocation.MusicLocation
        if kind == "audio"
        else QStandardPaths.StandardLocation.DocumentsLocation
    )
    for candidate in (QStandardPaths.writableLocation(location), str(Path.home())):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return Path.home()


def audio_filter() -> str:
    """The file dialog's filter: exactly the formats the audio reader decodes."""
    from app.audio.io import READABLE_SUFFIXES

    patterns = " ".join(f"*{suffix}" for suffix in READABLE_SUFFIXES)
    return QCoreApplication.translate("Dialogs", "Audio ({0})").format(patterns)


class Dialogs:
    """Modal questions shown with the standard Qt dialogs. With ``settings`` (ui.settings.Settings),
    file dialogs open in the folder last used for that kind of file."""

    settings: Any = None

    def __init__(self, settings: Any = None) -> None:
        self.settings = settings

    def start_folder(self, kind: str) -> Path:
        last = self.settings.last_folder(kind) if self.settings is not None else None
        return last if last is not None and last.is_dir() else user_folder(kind)

    def _used(self, kind: str, path: Path | None) -> Path | None:
        if path is not None and self.settings is not None:
            self.settings.set_last_folder(kind, path.parent if not path.is_dir() else path)
        return path

    def error(self, parent: QWidget | None, message: str) -> None:
        QMessageBox.warning(parent, QCoreApplication.translate("Dialogs", "VoxDesk"), message)

    def info(self, parent: QWidget | None, message: str) -> None:
        QMessageBox.information(parent, QCoreApplication.translate("Dialogs", "VoxDesk"), message)

    def confirm(self, parent: QWidget | None, message: str) -> bool:
        answer = QMessageBox.question(parent, QCoreApplication.translate("Dialogs", "VoxDesk"), message)
        return answer == QMessageBox.StandardButton.Yes

    def unsaved(self, parent: QWidget | None, message: str) -> str:
        """Save / Discard / Cancel about unsaved changes: "save", "discard" or "cancel"."""
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.warning(
            parent,
            QCoreApplication.translate("Dialogs", "VoxDesk"),
            message,
            buttons.Save | buttons.Discard | buttons.Cancel,
            buttons.Save,
        )
        return {buttons.Save: "save", buttons.Discard: "discard"}.get(answer, "cancel")

    def ask(self, parent: QWidget | None, message: str, options: list[str]) -> int:
        """A question answered by one of several buttons: the index of the one pressed (the first is
        the default; Esc and the title bar's close mean the last one)."""
        title = QCoreApplication.translate("Dialogs", "VoxDesk")
        no_buttons = QMessageBox.StandardButton.NoButton
        box = QMessageBox(QMessageBox.Icon.Question, title, message, no_buttons, parent)
        buttons = [box.addButton(text, QMessageBox.ButtonRole.AcceptRole) for text in options]
        box.setDefaultButton(buttons[0])
        box.setEscapeButton(buttons[-1])
        box.exec()
        clicked = box.clickedButton()
        return buttons.index(clicked) if clicked in buttons else len(options) - 1

    def open_audio(self, parent: QWidget | None) -> Path | None:
        name, _ = QFileDialog.getOpenFileName(
            parent,
            QCoreApplication.translate("Dialogs", "Import a voice"),
            str(self.start_folder("audio")),
            audio_filter(),
        )
        return self._used("audio", Path(name) if name else None)

    def open_project(self, parent: QWidget | None) -> Path | None:
        name, _ = QFileDialog.getOpenFileName(
            parent,
            QCoreApplication.translate("Dialogs", "Open a script"),
            str(self.start_folder("script")),
            "VoxDesk (*.voxdesk)",
        )
        return self._used("script", Path(name) if name else None)

    def open_subtitles(self, parent: QWidget | None) -> Path | None:
        name, _ = QFileDialog.getOpenFileName(
            parent,
            QCoreApplication.translate("Dialogs", "Import subtitles"),
            str(self.start_folder("subtitles")),
            QCoreApplication.translate("Dialogs", "Subtitles (*.srt *.vtt)"),
        )
        return self._used("subtitles", Path(name) if name else None)

    def save_path(self, parent: QWidget | None, title: str, suggested: Path, file_filter: str) -> Path | None:
        name, _ = QFileDialog.getSaveFileName(
            parent, title, str(suggested), file_filter, options=QFileDialog.Option.DontConfirmOverwrite
        )
        return Path(name) if name else None

    def pick_folder(self, parent: QWidget | None, title: str, start: Path | None = None) -> Path | None:
        name = QFileDialog.getExistingDirectory(parent, title, str(start or ""))
        return Path(name) if name else None

    def choose(self, parent: QWidget | None, question: str, options: list[str]) -> str | None:
        """One of ``options`` (None: cancelled)."""
        title = QCoreApplication.translate("Dialogs", "VoxDesk")
        item, ok = QInputDialog.getItem(parent, title, question, options, 0, False)
        return item if ok and item else None
