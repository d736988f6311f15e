"""The list of segments: number, voice, text, status, duration and the back-check's score, with
per-segment actions.

Every cell's ``QTableWidgetItem`` is created once per row and kept in ``self._cells``: the table is
never asked for an item back (``item()`` can hand out a wrapper whose C++ side is already gone).
A failed row is drawn in red and its Status cell carries the one-line reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QAction, QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QTableWidget, QTableWidgetItem, QWidget

FAILED_RED = QColor(200, 30, 30)
STALE_AMBER = QColor(160, 95, 0)  # a take made with other settings: kept, but not what they say now


def format_seconds(seconds: float) -> str:
    """A length for people: tenths of a second, milliseconds below 0.05 s (never "0.0 s")."""
    if seconds < 0.05:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.1f} s"


@dataclass(frozen=True)
class CheckCell:
    """What the back-check says of a segment's kept take (app/backcheck/)."""

    score: float | None = None  # errors per unit; None: not scored
    flagged: bool = False  # still above the threshold
    heard: str = ""  # what the recognizer heard in it
    busy: bool = False  # a take is being heard or drawn


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
    takes: int = 1  # > 1: drawn again (a runaway take, the official bad-case retry; or the back-check)
    kept: int = 0  # the back-check's kept take (1-based) when it drew takes; 0: the last take
    check: CheckCell = CheckCell()
    seed: int | None = None  # the seed of the current take
    stale: str = ""  # the take was made with other settings: which ones ("CFG 2.0")
    playing: bool = False  # the playhead is in this segment
    position: float | None = None  # seconds into it, while playing


class SegmentTable(QTableWidget):
    """Rows mirror the script's segments; the window pushes statuses in as they change."""

    regenerateRequested = Signal(int, bool)  # row, new seed
    settingsRequested = Signal(int)
    playRequested = Signal(int)
    detailsRequested = Signal(int)
    keepSeedRequested = Signal(int)
    regenerateStaleRequested = Signal()  # every take made with other settings than the script's now

    COLUMNS = 6

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, self.COLUMNS, parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(5, QHeaderView.ResizeMode.ResizeToContents)
        self.setColumnWidth(3, 220)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.cellDoubleClicked.connect(lambda row, _col: self.playRequested.emit(row))
        self._rows: list[SegmentRow] = []
        # The cells' items, kept here so a cell is never looked up with item(): PySide6 6.12's
        # item() drops a reference to None each time it returns None, and the process aborts
        # ("none_dealloc") after a few long pastes. Row i of the table is _items[i], always.
        self._cells: list[list[QTableWidgetItem]] = []
        self.retranslate()

    def retranslate(self) -> None:
        labels = ["#", self.tr("Voice"), self.tr("Text"), self.tr("Status"), self.tr("Length")]
        labels.append(self.tr("Check"))
        self.setHorizontalHeaderLabels(labels)
        for i, row in enumerate(self._rows):
            self._fill(i, row)

    def rows(self) -> list[SegmentRow]:
        return list(self._rows)

    def cell_text(self, row: int, column: int) -> str:
        """What a cell shows (tests and the keyboard pass read it without ``item()``)."""
        return self._cells[row][column].text()

    def cell(self, row: int, column: int) -> QTableWidgetItem:
        return self._cells[row][column]

    def set_rows(self, rows: list[SegmentRow]) -> None:
        self._rows = list(rows)
        del self._cells[len(rows) :]  # setRowCount deletes those rows' items
        self.setRowCount(len(rows))
        for i in range(len(self._cells), len(rows)):
            cells = [QTableWidgetItem() for _ in range(self.COLUMNS)]
            for col, item in enumerate(cells):
                if col in (0, 4, 5):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(i, col, item)
            self._cells.append(cells)
        for i, row in enumerate(rows):
            self._fill(i, row)

    def update_row(self, index: int, row: SegmentRow) -> None:
        if 0 <= index < len(self._rows) and self._rows[index] != row:
            self._rows[index] = row
            self._fill(index, row)

    def status_text(self, row: SegmentRow) -> str:
        text = self._status_word(row)
        if row.kept and row.kept != row.takes and text:
            text = self.tr("{0} · take {1} of {2}").format(text, row.kept, row.takes)
        elif row.takes > 1 and text:
            text = self.tr("{0} · take {1}").format(text, row.takes)
        if row.stale and row.status == "done":
            text = self.tr("Made with {0} · Regenerate to apply").format(row.stale)
        if not row.playing:
            return text
        at = format_seconds(row.position or 0.0)
        return f"▶ {at} · {text}" if text else f"▶ {at}"

    def _status_word(self, row: SegmentRow) -> str:
        if row.status == "failed":
            reason = row.message.splitlines()[0] if row.message else ""
            return self.tr("Failed: {0}").format(reason) if reason else self.tr("Failed")
        return {
            "": "",
            "queued": self.tr("Queued"),
            "generating": self.tr("Generating {0}%").format(int(row.progress * 100)),
            "done": self.tr("Done"),
            "cancelled": self.tr("Stopped"),
        }.get(row.status, row.status)

    def check_text(self, row: SegmentRow) -> str:
        """The kept take's score ("0.05"), ⚑ while still above the threshold, … while checking."""
        check = row.check
        text = "" if check.score is None else f"{check.score:.2f}{' ⚑' if check.flagged else ''}"
        return f"{text} …".strip() if check.busy else text

    def _check_tip(self, row: SegmentRow) -> str:
        check = row.check
        if check.score is None:
            return self.tr("Being heard by the speech recognizer…") if check.busy else ""
        heard = self.tr("Heard: “{0}”").format(check.heard) if check.heard else self.tr("Nothing was heard.")
        lines = [heard]
        if check.flagged:
            lines.append(self.tr("Above the threshold: Fix flagged draws it again."))
        return "\n".join(lines)

    def _fill(self, index: int, row: SegmentRow) -> None:
        number = f"{index + 1}{' *' if row.custom else ''}"
        length = format_seconds(row.seconds) if row.seconds is not None else ""
        failed = row.status == "failed"
        brush = QBrush(FAILED_RED) if failed else QBrush()
        cells = self._cells[index]
        texts = (number, row.voice, row.text, self.status_text(row), length, self.check_text(row))
        for col, text in enumerate(texts):
            item = cells[col]
            if item.text() != text:
                item.setText(text)
            item.setForeground(QBrush(STALE_AMBER) if col == 3 and row.stale and not failed else brush)
            font = QFont(item.font())
            font.setBold(row.playing)
            item.setFont(font)
        cells[2].setToolTip(row.text)
        if row.kept:
            retried = self.tr("The back-check heard {0} takes and kept the one with the fewest errors.")
            retried = retried.format(row.takes)
        else:
            retried = self.tr("Drawn again: an earlier take ran on far longer than its text.")
        stale = self.tr(
            "This take was made with {0}. It plays and exports as it is; Speech › Regenerate stale "
            "takes makes it again with the settings now."
        ).format(row.stale)
        tips = (row.message, retried if row.takes > 1 else "", stale if row.stale else "")
        cells[3].setToolTip("\n".join(t for t in tips if t))
        cells[4].setToolTip(self.tr("Seed {0}").format(row.seed) if row.seed is not None else "")
        cells[5].setToolTip(self._check_tip(row))

    def _menu(self, pos: QPoint) -> None:
        row = self.rowAt(pos.y())
        if row < 0:
            return
        menu = QMenu(self)
        actions: list[tuple[str, object]] = [
            (self.tr("Play this segment"), lambda: self.playRequested.emit(row)),
            (self.tr("Regenerate (same seed)"), lambda: self.regenerateRequested.emit(row, False)),
            (self.tr("Regenerate (new seed)"), lambda: self.regenerateRequested.emit(row, True)),
            (self.tr("Keep this take's seed"), lambda: self.keepSeedRequested.emit(row)),
            (self.tr("Segment settings…"), lambda: self.settingsRequested.emit(row)),
        ]
        if row < len(self._rows) and self._rows[row].status == "failed":
            actions.append((self.tr("Details…"), lambda: self.detailsRequested.emit(row)))
        if any(r.stale for r in self._rows):
            actions.append((self.tr("Regenerate stale takes"), self.regenerateStaleRequested.emit))
        for label, slot in actions:
            action = QAction(label, menu)
            action.triggered.connect(slot)
            menu.addAction(action)
        menu.popup(self.viewport().mapToGlobal(pos))
