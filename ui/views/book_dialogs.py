"""The Book view's two questions: how to speak a book being imported (voice, seed, where its
project goes), and how to export a finished one (formats, loudness, folder)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from app.longform.project import new_seed


@dataclass(frozen=True)
class ImportChoices:
    folder: Path
    voice: str | None
    seed: int


@dataclass(frozen=True)
class ExportChoices:
    folder: Path
    formats: tuple[str, ...]
    target_lufs: float


def _folder_row(edit: QLineEdit, parent: QWidget, title: str) -> QHBoxLayout:
    browse = QPushButton(parent.tr("Browse…"))

    def pick() -> None:
        name = QFileDialog.getExistingDirectory(parent, title, edit.text())
        if name:
            edit.setText(name)

    browse.clicked.connect(pick)
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(browse)
    return row


class ImportBookDialog(QDialog):
    def __init__(self, source: Path, folder: Path, voices: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Import a book"))
        self.setMinimumWidth(560)
        self.voice = QComboBox()
        self.voice.addItem(self.tr("The model's own voice"), None)
        for name in voices:
            self.voice.addItem(name, name)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setValue(new_seed())
        self.seed.setToolTip(self.tr("The same seed makes the same audio, also when a run is resumed."))
        self.folder = QLineEdit(str(folder))
        form = QFormLayout(self)
        form.addRow(self.tr("Book:"), QLabel(source.name))
        form.addRow(self.tr("Voice:"), self.voice)
        form.addRow(self.tr("Seed:"), self.seed)
        form.addRow(self.tr("Project folder:"), _folder_row(self.folder, self, self.tr("Project folder")))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def choices(self) -> ImportChoices:
        return ImportChoices(Path(self.folder.text().strip()), self.voice.currentData(), self.seed.value())


class ExportBookDialog(QDialog):
    def __init__(self, folder: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Export the audiobook"))
        self.setMinimumWidth(560)
        self.mp3 = QCheckBox(self.tr("One MP3 per chapter"))
        self.m4b = QCheckBox(self.tr("One M4B audiobook with chapter marks"))
        self.mp3.setChecked(True)
        self.m4b.setChecked(True)
        self.lufs = QDoubleSpinBox()
        self.lufs.setRange(-30.0, -10.0)
        self.lufs.setSingleStep(1.0)
        self.lufs.setValue(-18.0)
        self.lufs.setSuffix(" LUFS")
        self.folder = QLineEdit(str(folder))
        form = QFormLayout(self)
        form.addRow(self.tr("Formats:"), self.mp3)
        form.addRow("", self.m4b)
        form.addRow(self.tr("Loudness:"), self.lufs)
        form.addRow(self.tr("Folder:"), _folder_row(self.folder, self, self.tr("Export folder")))
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        for box in (self.mp3, self.m4b):
            box.toggled.connect(self._check)
        form.addRow(self.buttons)

    def _check(self) -> None:
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(self.mp3.isChecked() or self.m4b.isChecked())

    def choices(self) -> ExportChoices:
        formats = tuple(f for f, box in (("mp3", self.mp3), ("m4b", self.m4b)) if box.isChecked())
        return ExportChoices(Path(self.folder.text().strip()), formats, self.lufs.value())
