"""The subtitle view's table model: cue columns read from the cues as they are drawn, result
columns set one row at a time, so a file of 20,000 cues opens at once (no item per cell)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush

from app.longform.subtitles import Cue, clock
from ui.views.segment_table import FAILED_RED

NUMBER, START, END, VOICE, TEXT, SPOKEN, FIT, CHECK = range(8)
Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class ResultCells:
    """What a decided cue shows, already in the window's language."""

    spoken: str = ""
    fit: str = ""
    fit_bad: bool = False
    fit_tip: str = ""
    check: str = ""
    check_bad: bool = False
    check_tip: str = ""


class CueTableModel(QAbstractTableModel):
    def __init__(self, headers: Sequence[str]) -> None:
        super().__init__()
        self.headers = list(headers)
        self.cues: list[Cue] = []
        self.default_voice = ""
        self.cells: dict[int, ResultCells] = {}

    def set_cues(self, cues: Sequence[Cue], default_voice: str) -> None:
        self.beginResetModel()
        self.cues, self.default_voice, self.cells = list(cues), default_voice, {}
        self.endResetModel()

    def set_result(self, row: int, cells: ResultCells) -> None:
        self.cells[row] = cells
        self.dataChanged.emit(self.index(row, SPOKEN), self.index(row, CHECK))

    def clear_results(self) -> None:
        self.cells = {}
        if self.cues:
            self.dataChanged.emit(self.index(0, SPOKEN), self.index(len(self.cues) - 1, CHECK))

    # --- QAbstractTableModel ----------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.cues)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.headers)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, column)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (NUMBER, SPOKEN):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        cells = self.cells.get(row)
        if cells is None:
            return None
        if role == Qt.ItemDataRole.ForegroundRole:
            bad = cells.fit_bad if column == FIT else cells.check_bad if column == CHECK else False
            return QBrush(FAILED_RED) if bad else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return cells.fit_tip if column == FIT else cells.check_tip if column == CHECK else None
        return None

    def _text(self, row: int, column: int) -> str:
        cue = self.cues[row]
        if column == NUMBER:
            return str(cue.number)
        if column == START:
            return clock(cue.start)
        if column == END:
            return clock(cue.end)
        if column == VOICE:
            return (cue.voice or self.default_voice) if cue.speakable else ""
        if column == TEXT:  # "[Music]": a bracketed note with nothing to say, shown as the file has it
            return cue.text if cue.speakable or not cue.voice else f"[{cue.voice}] {cue.text}".strip()
        cells = self.cells.get(row, ResultCells())
        return {SPOKEN: cells.spoken, FIT: cells.fit, CHECK: cells.check}[column]
