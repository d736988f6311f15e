"""The list of segments: number, voice, text, status, duration and the back-check's score, with
per-segment actions.

Every cell's ``QTableWidgetItem`` is created once per row and kept in ``self._cells``: the table is
never asked for an item back (``item()`` can hand out a wrapper whose C++ side is already gone).
A failed row is drawn in red and its Status cell carries the one-line reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QAction, QBrush, QColor, QFont, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QMenu,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

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
    emotion: str = ""  # how it is spoken (EmotionSpec.label: "angry 0.8"); "": the voice's own
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
        # Status stays narrow (a failure's reason is in its tooltip and the bar under the table)
        # and the user can widen it; the Text column takes the rest of the room.
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(5, QHeaderView.ResizeMode.ResizeToContents)
        header.setMinimumSectionSize(24)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.cellDoubleClicked.connect(lambda row, _col: self.playRequested.emit(row))
        self._rows: list[SegmentRow] = []
        # The cells' items, kept here so a cell is never looked up with item(): PySide6 6.12's
        # item() drops a reference to None each time it returns None, and the process aborts
        # ("none_dealloc") after a few long pastes. Row i of the table is _items[i], always.
        self._cells: list[list[QTableWidgetItem]] = []
        # One QAction per row action, for the buttons under the table and the context menu alike
        # (one name, one tooltip, one enabled state); each acts on the selected row.
        pix = QStyle.StandardPixmap
        self.play_action = self._row_action(pix.SP_MediaPlay, self.playRequested.emit)
        self.regenerate_action = self._row_action(
            pix.SP_BrowserReload, lambda r: self.regenerateRequested.emit(r, False)
        )
        self.new_take_action = self._row_action(
            pix.SP_BrowserReload, lambda r: self.regenerateRequested.emit(r, True)
        )
        self.keep_seed_action = self._row_action(pix.SP_DialogApplyButton, self.keepSeedRequested.emit)
        self.settings_action = self._row_action(pix.SP_FileDialogInfoView, self.settingsRequested.emit)
        self.details_action = self._row_action(pix.SP_MessageBoxInformation, self.detailsRequested.emit)
        self.itemSelectionChanged.connect(self._update_actions)
        self._update_actions()
        self.retranslate()

    def _row_action(self, icon: QStyle.StandardPixmap, slot: Callable[[int], object]) -> QAction:
        action = QAction(self.style().standardIcon(icon), "", self)
        action.triggered.connect(lambda _checked=False: self._for_current(slot))
        return action

    def _for_current(self, slot: Callable[[int], object]) -> None:
        row = self.currentRow()
        if row >= 0 and self.selectionModel().hasSelection():
            slot(row)

    def row_actions(self) -> list[QAction]:
        return [
            self.play_action,
            self.regenerate_action,
            self.new_take_action,
            self.keep_seed_action,
            self.settings_action,
            self.details_action,
        ]

    def _update_actions(self) -> None:
        selected = bool(self.selectedItems())
        for action in self.row_actions():
            action.setEnabled(selected)
        row = self.currentRow()
        failed = selected and 0 <= row < len(self._rows) and self._rows[row].status == "failed"
        self.details_action.setVisible(failed)

    def retranslate(self) -> None:
        labels = ["#", self.tr("Voice"), self.tr("Text"), self.tr("Status"), self.tr("Length")]
        labels.append(self.tr("Check"))
        self.setHorizontalHeaderLabels(labels)
        for action, text, tip in (
            (self.play_action, self.tr("Play"), self.tr("Play the selected segment (double-click a row)")),
            (
                self.regenerate_action,
                self.tr("Regenerate"),
                self.tr("Generate the selected segment again with the same seed"),
            ),
            (
                self.new_take_action,
                self.tr("New take"),
                self.tr("Generate the selected segment again with a new seed"),
            ),
            (
                self.keep_seed_action,
                self.tr("Keep this take's seed"),
                self.tr("Regenerating keeps this take: its seed becomes the segment's own (marked *)"),
            ),
            (
                self.settings_action,
                self.tr("Segment settings…"),
                self.tr("This segment's own settings and seed"),
            ),
            (self.details_action, self.tr("Details…"), self.tr("Why this segment failed, with the log line")),
        ):
            action.setText(text)
            action.setIconText(text)  # a tool button would drop the "…" of the menu's name
            action.setToolTip(tip)
        widest = max(self.tr("Generating {0}%").format(100), self.tr("Queued"), key=len)
        self.setColumnWidth(3, self.fontMetrics().horizontalAdvance(widest) + 16)
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
        # The Check column only once the back-check has something to say: its room goes to Text.
        self.setColumnHidden(5, not any(self.check_text(r) for r in rows))
        self._update_actions()

    def update_row(self, index: int, row: SegmentRow) -> None:
        if 0 <= index < len(self._rows) and self._rows[index] != row:
            failed = self._rows[index].status == "failed"
            self._rows[index] = row
            self._fill(index, row)
            if failed != (row.status == "failed"):
                self._update_actions()
            if self.isColumnHidden(5) and self.check_text(row):
                self.setColumnHidden(5, False)

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
        cells[0].setToolTip(
            self.tr("*: this segment has its own settings or a kept seed (Segment settings…)")
            if row.custom
            else ""
        )
        cells[1].setToolTip(self.tr("Emotion: {0}").format(row.emotion) if row.emotion else "")
        cells[2].setToolTip(row.text)
        if row.stale and not failed:
            self._fit_status(texts[3])
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

    def _fit_status(self, text: str) -> None:
        """Widen Status (never narrow it) so a stale take's mark shows what it was made with: the
        narrow default cut "Made with CFG 2.0 · …" to "Made with CFG 2…". At most a third of the
        table, so the Text column keeps the room."""
        header = self.horizontalHeader()
        margin = 2 * self.style().pixelMetric(self.style().PixelMetric.PM_FocusFrameHMargin) + 8
        needed = min(self.fontMetrics().horizontalAdvance(text) + margin, self.viewport().width() // 3)
        if needed > header.sectionSize(3):
            header.resizeSection(3, needed)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        """A narrower window takes Status back to a third of the table at most, so a column widened
        for a stale mark (or by hand) never leaves Text a sliver at 800×600."""
        super().resizeEvent(event)
        third = self.viewport().width() // 3
        header = self.horizontalHeader()
        if header.sectionSize(3) > third > header.minimumSectionSize():
            header.resizeSection(3, third)

    def context_menu(self, row: int) -> QMenu:
        """The row's menu: it selects the row and offers the same actions as the buttons."""
        self.selectRow(row)
        menu = QMenu(self)
        menu.setToolTipsVisible(True)
        menu.addActions([a for a in self.row_actions() if a.isVisible()])
        if any(r.stale for r in self._rows):  # the Speech menu's action, by the same name
            menu.addSeparator()
            stale = menu.addAction(self.tr("Regenerate stale takes"))
            stale.triggered.connect(self.regenerateStaleRequested.emit)
        menu.aboutToHide.connect(menu.deleteLater)
        return menu

    def _menu(self, pos: QPoint) -> None:
        row = self.rowAt(pos.y())
        if row >= 0:
            self.context_menu(row).popup(self.viewport().mapToGlobal(pos))
