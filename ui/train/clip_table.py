"""The training clips as a table: play, the words (editable), the length, the problem, Exclude.

Edits go straight to the ``DataSet`` (which saves atomically); the table only shows it. A
held-out clip (the reference for speaker similarity) is shown but neither trained on nor
excludable.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QStyle, QTableWidget, QTableWidgetItem, QWidget

from ui.views.segment_table import format_seconds

PLAY, TEXT, LENGTH, PROBLEM, EXCLUDE = range(5)
ID_ROLE = Qt.ItemDataRole.UserRole


def problem_text(problem: str | None) -> str:
    """The data set's problem word (English, from app.train.clips) in the window's language."""
    words = {
        "too short": QCoreApplication.translate("ClipTable", "too short"),
        "too long": QCoreApplication.translate("ClipTable", "too long"),
        "clipped": QCoreApplication.translate("ClipTable", "clipped"),
        "silent": QCoreApplication.translate("ClipTable", "silent"),
        "unsure transcript": QCoreApplication.translate("ClipTable", "unsure transcript"),
    }
    return "" if problem is None else words.get(problem, problem)


class ClipTable(QTableWidget):
    playRequested = Signal(str)  # clip id
    textEdited = Signal(str, str)  # clip id, new text
    excludeToggled = Signal(str, bool)  # clip id, excluded

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, 5, parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
        )
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        for column in (PLAY, LENGTH, PROBLEM, EXCLUDE):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(TEXT, QHeaderView.ResizeMode.Stretch)
        self._filling = False
        self._ids: list[str] = []  # each row's clip id (no per-cell item lookups: test_ui_refcount)
        self.exclude_items: list[QTableWidgetItem] = []
        self.cellClicked.connect(self._clicked)
        self.itemChanged.connect(self._changed)
        play = QShortcut(QKeySequence("Ctrl+Space"), self)
        play.setContext(Qt.ShortcutContext.WidgetShortcut)
        play.activated.connect(self._play_current)
        self.retranslate()

    def retranslate(self) -> None:
        self.setHorizontalHeaderLabels(
            ["", self.tr("Words spoken"), self.tr("Length"), self.tr("Problem"), self.tr("Exclude")]
        )
        self.setToolTip(
            self.tr("Double-click the words to correct them; Ctrl+Space plays the selected clip.")
        )

    def set_clips(self, clips: list) -> None:
        """Show ``clips`` (app.train.clips.Clip), keeping the selected row."""
        row = self.currentRow()
        self._filling = True
        self.setRowCount(len(clips))
        self._ids = [clip.id for clip in clips]
        self.exclude_items = []
        icon = self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay)
        fixed = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        for i, clip in enumerate(clips):
            play = QTableWidgetItem(icon, "")
            play.setFlags(fixed)
            play.setToolTip(self.tr("Play this clip"))
            text = QTableWidgetItem(clip.text)
            text.setFlags(fixed | Qt.ItemFlag.ItemIsEditable)
            length = QTableWidgetItem(format_seconds(clip.seconds))
            length.setFlags(fixed)
            length.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            problem = QTableWidgetItem(problem_text(clip.problem))
            problem.setFlags(fixed)
            if clip.held_out:
                exclude = QTableWidgetItem(self.tr("validation"))
                exclude.setFlags(fixed)
                exclude.setToolTip(
                    self.tr("Held out: each checkpoint's speaker similarity is measured against this clip.")
                )
            else:
                exclude = QTableWidgetItem()
                exclude.setFlags(fixed | Qt.ItemFlag.ItemIsUserCheckable)
                exclude.setCheckState(Qt.CheckState.Checked if clip.excluded else Qt.CheckState.Unchecked)
            self.exclude_items.append(exclude)
            for column, item in enumerate((play, text, length, problem, exclude)):
                item.setData(ID_ROLE, clip.id)
                self.setItem(i, column, item)
        self._filling = False
        if 0 <= row < len(clips):
            self.selectRow(row)

    def clip_id(self, row: int) -> str | None:
        return self._ids[row] if 0 <= row < len(self._ids) else None

    def _clicked(self, row: int, column: int) -> None:
        if column == PLAY and self.clip_id(row) is not None:
            self.playRequested.emit(self.clip_id(row))

    def _play_current(self) -> None:
        if self.clip_id(self.currentRow()) is not None:
            self.playRequested.emit(self.clip_id(self.currentRow()))

    def _changed(self, item: QTableWidgetItem) -> None:
        if self._filling:
            return
        clip_id = item.data(ID_ROLE)
        if item.column() == TEXT:
            self.textEdited.emit(clip_id, item.text())
        elif item.column() == EXCLUDE and item.flags() & Qt.ItemFlag.ItemIsUserCheckable:
            self.excludeToggled.emit(clip_id, item.checkState() == Qt.CheckState.Checked)
