"""The checkpoints of a run: step, loss, the validation scores, a play button for the spoken
validation sentence; the best checkpoint highlighted (see ui/train/scores.py)."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFont, QIcon, QPalette
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QStyle, QTableWidget, QTableWidgetItem, QWidget

from ui.train import scores

PLAY, STEP, LOSS, CER, SIMILARITY, NOTE = range(6)


def _measured(validation: object, field: str, form: str) -> str:
    """A score as text; "—" when there is none (not validated, or not measurable: NaN)."""
    value = None if validation is None else float(getattr(validation, field))
    return "—" if value is None or math.isnan(value) else form.format(value)


class CheckpointTable(QTableWidget):
    playRequested = Signal(int)  # step

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, 6, parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        for column in range(NOTE):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(NOTE, QHeaderView.ResizeMode.Stretch)
        self.checkpoints: list = []
        self.best = None
        self._chosen: int | None = None  # the step the user selected (else the best is selected)
        self._filling = False
        self.cellClicked.connect(self._clicked)
        self.itemSelectionChanged.connect(self._selection_changed)
        self.retranslate()

    def retranslate(self) -> None:
        self.setHorizontalHeaderLabels(
            ["", self.tr("Step"), self.tr("Loss"), self.tr("Error rate"), self.tr("Similarity"), ""]
        )
        self.horizontalHeaderItem(CER).setToolTip(
            self.tr(
                "Character error rate of the validation sentence as the recognizer hears it: lower is better"
            )
        )
        self.horizontalHeaderItem(SIMILARITY).setToolTip(
            self.tr("Speaker similarity to the held-out clips, 0 to 1: higher is better")
        )
        self.set_checkpoints(self.checkpoints)

    def set_checkpoints(self, checkpoints: list) -> None:
        """Show ``checkpoints`` (app.train.job.Checkpoint) in step order, selecting the one the user
        chose, else the best one, else the last."""
        self._filling = True
        self.checkpoints = sorted(checkpoints, key=lambda c: c.step)
        self.best = scores.best(self.checkpoints)
        self.setRowCount(len(self.checkpoints))
        fixed = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        icon = self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay)
        bold = QFont(self.font())
        bold.setBold(True)
        highlight = QBrush(self.palette().color(QPalette.ColorRole.AlternateBase))
        for row, checkpoint in enumerate(self.checkpoints):
            validation = checkpoint.validation
            play = QTableWidgetItem(icon if validation is not None else QIcon(), "")
            play.setToolTip(self.tr("Play the validation sentence") if validation is not None else "")
            cells = (
                play,
                QTableWidgetItem(str(checkpoint.step)),
                QTableWidgetItem(f"{checkpoint.loss:.3f}"),
                QTableWidgetItem(_measured(validation, "cer", "{:.1%}")),
                QTableWidgetItem(_measured(validation, "similarity", "{:.2f}")),
                QTableWidgetItem(self.tr("best") if checkpoint is self.best else ""),
            )
            for column, item in enumerate(cells):
                item.setFlags(fixed)
                if column in (STEP, LOSS, CER, SIMILARITY):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if checkpoint is self.best:
                    item.setFont(bold)
                    item.setBackground(highlight)
                self.setItem(row, column, item)
        steps = [c.step for c in self.checkpoints]
        wanted = self._chosen if self._chosen in steps else (self.best.step if self.best else None)
        if wanted in steps:
            self.selectRow(steps.index(wanted))
        elif steps:
            self.selectRow(len(steps) - 1)
        self._filling = False

    def _selection_changed(self) -> None:
        if not self._filling:
            self._chosen = self.selected_step()

    def selected_step(self) -> int | None:
        row = self.currentRow()
        return self.checkpoints[row].step if 0 <= row < len(self.checkpoints) else None

    def selected(self):
        step = self.selected_step()
        return next((c for c in self.checkpoints if c.step == step), None)

    def _clicked(self, row: int, column: int) -> None:
        chosen = self.checkpoints[row] if 0 <= row < len(self.checkpoints) else None
        if column == PLAY and chosen is not None and chosen.validation is not None:
            self.playRequested.emit(chosen.step)
