"""Export options: file name, format, what to write (merged / per segment / SRT) and the gap."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from app.export import FORMATS, segment_paths
from ui.dialogs import OK_CANCEL, Dialogs


@dataclass(frozen=True)
class ExportOptions:
    path: Path  # the merged file; per-segment files go to "<stem>_segments/", the SRT next to it
    fmt: str = "WAV"
    merged: bool = True
    segments: bool = False
    srt: bool = True
    gap_ms: int = 300

    @classmethod
    def remembered(cls, folder: Path, saved: dict[str, Any], name: str, gap_ms: int) -> ExportOptions:
        """The last export's choices (``saved``: :meth:`choices`, from the settings) in ``folder``;
        ``name`` (no suffix) when none was made yet. What does not fit is left at its default."""
        fmt = saved.get("fmt") if saved.get("fmt") in FORMATS else "WAV"
        file_name = saved.get("name")
        if not isinstance(file_name, str) or not file_name or Path(file_name).name != file_name:
            file_name = f"{name}{FORMATS[fmt]}"
        flags = {k: saved[k] for k in ("merged", "segments", "srt") if isinstance(saved.get(k), bool)}
        return cls(path=folder / file_name, fmt=fmt, gap_ms=gap_ms, **flags)

    def choices(self) -> dict[str, Any]:
        """What the next export starts from (kept in the settings)."""
        return {
            "name": self.path.name,
            "fmt": self.fmt,
            "merged": self.merged,
            "segments": self.segments,
            "srt": self.srt,
        }

    def with_suffix(self) -> Path:
        return self.path.with_suffix(FORMATS[self.fmt])

    def srt_path(self) -> Path:
        return self.path.with_suffix(".srt")

    def segments_dir(self) -> Path:
        return self.path.with_name(f"{self.path.stem}_segments")

    def targets(self, count: int) -> list[Path]:
        """Every file this export would write (to ask once before replacing any)."""
        out: list[Path] = []
        if self.merged:
            out.append(self.with_suffix())
        if self.srt:
            out.append(self.srt_path())
        if self.segments:
            out.extend(segment_paths(self.segments_dir(), count, "segment", self.fmt))
        return out


class ExportDialog(QDialog):
    def __init__(self, options: ExportOptions, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.dialogs = dialogs
        self.export: Callable[[], bool] = lambda: True  # the window's: write the files, True when done
        self.setWindowTitle(self.tr("Export"))
        self.setMinimumWidth(520)
        self.path = QLineEdit(str(options.path))
        browse = QPushButton(self.tr("Browse…"))
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        self.fmt = QComboBox()
        for name in FORMATS:
            self.fmt.addItem(name, name)
        self.fmt.setCurrentIndex(max(0, self.fmt.findData(options.fmt)))
        self.merged = QCheckBox(self.tr("One merged audio file"))
        self.merged.setChecked(options.merged)
        self.segments = QCheckBox(self.tr("One file per segment (in a “_segments” folder)"))
        self.segments.setChecked(options.segments)
        self.srt = QCheckBox(self.tr("Subtitles (SRT) matching the merged file"))
        self.srt.setChecked(options.srt)
        self.gap = QSpinBox()
        self.gap.setRange(0, 5000)
        self.gap.setSingleStep(50)
        self.gap.setSuffix(" ms")
        self.gap.setValue(options.gap_ms)
        self.gap.setToolTip(
            self.tr("[pause] tags, paragraph and chapter pauses keep the lengths the script gives them")
        )
        form = QFormLayout(self)
        form.addRow(self.tr("File:"), row)
        form.addRow(self.tr("Format:"), self.fmt)
        form.addRow(self.merged)
        form.addRow(self.segments)
        form.addRow(self.srt)
        form.addRow(self.tr("Silence between sentences:"), self.gap)
        buttons = QDialogButtonBox(OK_CANCEL)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def accept(self) -> None:
        """Export; close only when it worked (after an error the user's choices stay here)."""
        if self.export():
            super().accept()

    def _browse(self) -> None:
        path = self.dialogs.save_path(
            self, self.tr("Export to"), Path(self.path.text()), "Audio (*.wav *.flac)"
        )
        if path is not None:
            self.path.setText(str(path))

    def options(self) -> ExportOptions:
        return ExportOptions(
            path=Path(self.path.text().strip()),
            fmt=self.fmt.currentData(),
            merged=self.merged.isChecked(),
            segments=self.segments.isChecked(),
            srt=self.srt.isChecked(),
            gap_ms=self.gap.value(),
        )
