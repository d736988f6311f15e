"""The list of segments: number, voice, text, status and duration, with per-segment actions."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QTableWidget, QTableWidgetItem, QWidget


@dataclass(frozen=True)
class SegmentRow:
    """What one row shows. ``status``: "", "queued", "generating", "done", "failed", "cancelled"."""

    text: str
    voice: str
    status: str = ""
    progress: float = 0.0
    seconds: float | None = None
    message: str = ""
    custom: bool = False  # has its own settings
    takes: int = 1  # > 1: a runaway take was drawn again (the official bad-case retry)


class SegmentTable(QTableWidget):
    """Rows mirror the script's segments; the window pushes statuses in as they change."""

    regenerateRequested = Signal(int, bool)  # row, new seed
    settingsRequested = Signal(int)
    playRequested = Signal(int)

    COLUMNS = 5

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, self.COLUMNS, parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        self.setShowGrid(False)
        self.setWordWrap(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.ResizeToContents)
        self.setColumnWidth(3, 130)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.cellDoubleClicked.connect(lambda row, _col: self.playRequested.emit(row))
        self._rows: list[SegmentRow] = []
        # The cells' items, kept here so a cell is never looked up with item(): PySide6 6.12's
        # item() drops a reference to None each time it returns None, and the process aborts
        # ("none_dealloc") after a few long pastes. Row i of the table is _items[i], always.
        self._items: list[list[QTableWidgetItem]] = []
        self.retranslate()

    def retranslate(self) -> None:
        labels = ["#", self.tr("Voice"), self.tr("Text"), self.tr("Status"), self.tr("Length")]
        self.setHorizontalHeaderLabels(labels)
        for i, row in enumerate(self._rows):
            self._fill(i, row)

    def rows(self) -> list[SegmentRow]:
        return list(self._rows)

    def set_rows(self, rows: list[SegmentRow]) -> None:
        self._rows = list(rows)
        del self._items[len(rows) :]  # setRowCount deletes those rows' items
        self.setRowCount(len(rows))
        for i in range(len(self._items), len(rows)):
            cells = [QTableWidgetItem() for _ in range(self.COLUMNS)]
            for col, item in enumerate(cells):
                if col in (0, 4):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(i, col, item)
            self._items.append(cells)
        for i, row in enumerate(rows):
            self._fill(i, row)

    def update_row(self, index: int, row: SegmentRow) -> None:
        if 0 <= index < len(self._rows) and self._rows[index] != row:
            self._rows[index] = row
            self._fill(index, row)

    def status_text(self, row: SegmentRow) -> str:
        text = self._status_word(row)
        return self.tr("{0} · take {1}").format(text, row.takes) if row.takes > 1 and text else text

    def _status_word(self, row: SegmentRow) -> str:
        return {
            "": "",
            "queued": self.tr("Queued"),
            "generating": self.tr("Generating {0}%").format(int(row.progress * 100)),
            "done": self.tr("Done"),
            "failed": self.tr("Failed"),
            "cancelled": self.tr("Stopped"),
        }.get(row.status, row.status)

    def _fill(self, index: int, row: SegmentRow) -> None:
        number = f"{index + 1}{' *' if row.custom else ''}"
        length = f"{row.seconds:.1f} s" if row.seconds is not None else ""
        cells = self._items[index]
        texts = (number, row.voice, row.text, self.status_text(row), length)
        for item, text in zip(cells, texts, strict=True):
            if item.text() != text:
                item.setText(text)
        cells[2].setToolTip(row.text)
        retried = self.tr("Drawn again: an earlier take ran on far longer than its text.")
        cells[3].setToolTip("\n".join(t for t in (row.message, retried if row.takes > 1 else "") if t))

    def _menu(self, pos: QPoint) -> None:
        row = self.rowAt(pos.y())
        if row < 0:
            return
        menu = QMenu(self)
        actions: list[tuple[str, object]] = [
            (self.tr("Play this segment"), lambda: self.playRequested.emit(row)),
            (self.tr("Regenerate (same seed)"), lambda: self.regenerateRequested.emit(row, False)),
            (self.tr("Regenerate (new seed)"), lambda: self.regenerateRequested.emit(row, True)),
            (self.tr("Segment settings…"), lambda: self.settingsRequested.emit(row)),
        ]
        for label, slot in actions:
            action = QAction(label, menu)
            action.triggered.connect(slot)
            menu.addAction(action)
        menu.popup(self.viewport().mapToGlobal(pos))
