"""Every modal question the window asks, behind one small object.

The window never calls ``QMessageBox``/``QFileDialog`` directly: it asks its ``Dialogs``. Tests pass
a subclass that answers from a script, so no modal dialog can block a test run.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog, QInputDialog, QMessageBox, QWidget

OK_CANCEL = QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel


class Dialogs:
    """Modal questions shown with the standard Qt dialogs."""

    def error(self, parent: QWidget | None, message: str) -> None:
        QMessageBox.warning(parent, QCoreApplication.translate("Dialogs", "VoxDesk"), message)

    def info(self, parent: QWidget | None, message: str) -> None:
        QMessageBox.information(parent, QCoreApplication.translate("Dialogs", "VoxDesk"), message)

    def confirm(self, parent: QWidget | None, message: str) -> bool:
        answer = QMessageBox.question(parent, QCoreApplication.translate("Dialogs", "VoxDesk"), message)
        return answer == QMessageBox.StandardButton.Yes

    def open_audio(self, parent: QWidget | None) -> Path | None:
        name, _ = QFileDialog.getOpenFileName(
            parent,
            QCoreApplication.translate("Dialogs", "Import a voice"),
            "",
            QCoreApplication.translate("Dialogs", "Audio (*.wav *.flac *.mp3 *.ogg *.m4a *.aiff *.aif)"),
        )
        return Path(name) if name else None

    def open_project(self, parent: QWidget | None) -> Path | None:
        name, _ = QFileDialog.getOpenFileName(
            parent, QCoreApplication.translate("Dialogs", "Open a script"), "", "VoxDesk (*.voxdesk)"
        )
        return Path(name) if name else None

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
