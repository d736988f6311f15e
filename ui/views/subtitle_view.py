"""The subtitle view: imported cues in a table, how each was spoken and fitted, Dub / Stop / Export.

A passive widget: it shows what :class:`ui.dubbing.Dubbing` gives it and emits intents.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.longform.dub import CueResult
from app.longform.subtitles import Cue
from ui.views.cue_table import CHECK, END, FIT, NUMBER, SPOKEN, START, TEXT, VOICE, CueTableModel, ResultCells
from ui.views.transport import format_eta


class SubtitleView(QWidget):
    dubClicked = Signal()
    stopClicked = Signal()
    exportClicked = Signal()
    settingsChanged = Signal(int, int)  # speed-up bound in percent, takes per cue

    def __init__(self, rate_change: int, takes: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        style = self.style()
        self.file_label = QLabel()
        self.file_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.rate_box = QSpinBox()
        self.rate_box.setRange(0, 50)
        self.rate_box.setSuffix(" %")
        self.rate_box.setValue(rate_change)
        self.rate_box.setToolTip(
            self.tr("A take longer than its cue is sped up by at most this much to fit.")
        )
        self.takes_box = QSpinBox()
        self.takes_box.setRange(1, 10)
        self.takes_box.setValue(takes)
        self.takes_box.setToolTip(
            self.tr("A take longer than its cue is drawn again with a new seed, up to this many takes.")
        )
        self.length_box = QDoubleSpinBox()  # the exported track's length: the video's
        self.length_box.setRange(0.0, 100 * 3600.0)
        self.length_box.setDecimals(1)
        self.length_box.setSuffix(" s")
        self.length_box.setSpecialValueText(self.tr("last cue's end"))
        self.length_box.setToolTip(
            self.tr("The exported track's length: give the video's, or leave it at the last cue's end.")
        )
        for box in (self.rate_box, self.takes_box):
            box.valueChanged.connect(
                lambda _v: self.settingsChanged.emit(self.rate_box.value(), self.takes_box.value())
            )
        self.model = CueTableModel(
            [
                self.tr("#"),
                self.tr("Start"),
                self.tr("End"),
                self.tr("Voice"),
                self.tr("Text"),
                self.tr("Spoken"),
                self.tr("Fit"),
                self.tr("Check"),
            ]
        )
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.table.horizontalHeader()
        header.setResizeContentsPrecision(200)  # widths from the first rows: a long file opens at once
        for column in (NUMBER, START, END, VOICE, SPOKEN, FIT, CHECK):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(TEXT, QHeaderView.ResizeMode.Stretch)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(14)
        self.status = QLabel()
        self.dub_button = QPushButton(
            style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekForward), self.tr("Dub")
        )
        self.stop_button = QPushButton(
            style.standardIcon(QStyle.StandardPixmap.SP_MediaStop), self.tr("Stop")
        )
        self.export_button = QPushButton(
            style.standardIcon(QStyle.StandardPixmap.SP_DialogSaveButton), self.tr("Export…")
        )
        self.dub_button.clicked.connect(self.dubClicked)
        self.stop_button.clicked.connect(self.stopClicked)
        self.export_button.clicked.connect(self.exportClicked)

        top = QHBoxLayout()
        top.addWidget(self.file_label, 1)
        top.addWidget(QLabel(self.tr("Speed up at most")))
        top.addWidget(self.rate_box)
        top.addSpacing(12)
        top.addWidget(QLabel(self.tr("Takes per cue")))
        top.addWidget(self.takes_box)
        bottom = QHBoxLayout()
        bottom.addWidget(self.dub_button)
        bottom.addWidget(self.stop_button)
        bottom.addWidget(self.progress, 1)
        bottom.addWidget(self.status)
        bottom.addSpacing(12)
        bottom.addWidget(QLabel(self.tr("Track length")))
        bottom.addWidget(self.length_box)
        bottom.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.summary)
        layout.addLayout(bottom)
        self.set_busy(False, has_results=False)

    # --- what it shows ----------------------------------------------------------------------
    def set_cues(self, name: str, cues: Sequence[Cue], default_voice: str) -> None:
        self.file_label.setText(self.tr("{0} · {1} cues").format(name, len(cues)))
        self.model.set_cues(cues, default_voice)
        self.length_box.setValue(0.0)
        self.summary.setText(self.tr("Press Dub to speak every cue inside its time slot."))
        self.status.setText("")
        self.progress.setValue(0)

    def set_result(self, row: int, r: CueResult) -> None:
        fit, bad = self.fit_text(r)
        score = r.score
        self.model.set_result(
            row,
            ResultCells(
                spoken=self.tr("{0} s").format(f"{r.spoken:.2f}") if r.spoken else "",
                fit=fit,
                fit_bad=bad,
                fit_tip=r.message,
                check=score.label() if score is not None else "",
                check_bad=r.flagged,
                check_tip=self.tr("Heard: {0}").format(score.heard) if score is not None else "",
            ),
        )

    def clear_results(self) -> None:
        self.model.clear_results()

    def cell(self, row: int, column: int, role: Qt.ItemDataRole = Qt.ItemDataRole.DisplayRole) -> Any:
        """What the table shows at (row, column)."""
        return self.model.data(self.model.index(row, column), role)

    def fit_text(self, r: CueResult) -> tuple[str, bool]:
        """The Fit cell and whether it is a problem."""
        if r.status == "overrun":
            return self.tr("overruns by {0} at {1}×").format(self.amount(r.overrun), f"{r.rate:.2f}"), True
        if r.status == "fit" and r.rate != 1.0:
            return self.tr("fits at {0}×").format(f"{r.rate:.2f}"), False
        texts = {
            "fit": self.tr("fits"),
            "silent": self.tr("nothing to say"),
            "failed": self.tr("failed"),
            "cancelled": self.tr("stopped"),
        }
        return texts.get(r.status, ""), r.status == "failed"

    def amount(self, seconds: float) -> str:
        if seconds >= 0.1:
            return self.tr("{0} s").format(f"{seconds:.1f}")
        return self.tr("{0} ms").format(f"{seconds * 1000:.0f}")

    def summary_text(self, results: Sequence[CueResult]) -> str:
        """'48 of 50 cues fit; 2 overrun: #12 by 0.4 s, #31 by 1.1 s', in the window's language."""
        spoken = [r for r in results if r.status in ("fit", "overrun")]
        over = [r for r in results if r.status == "overrun"]
        text = self.tr("{0} of {1} cues fit").format(len(spoken) - len(over), len(spoken))
        if over:
            items = ", ".join(
                self.tr("#{0} by {1}").format(r.cue.number, self.amount(r.overrun)) for r in over
            )
            text += self.tr("; {0} overrun: {1}").format(len(over), items)
        counts = {s: sum(r.status == s for r in results) for s in ("silent", "failed", "cancelled")}
        extra = [
            text
            for text, n in (
                (self.tr("{0} with nothing to say").format(counts["silent"]), counts["silent"]),
                (self.tr("{0} failed").format(counts["failed"]), counts["failed"]),
                (self.tr("{0} stopped").format(counts["cancelled"]), counts["cancelled"]),
            )
            if n
        ]
        return self.tr("{0} ({1})").format(text, self.tr(", ").join(extra)) if extra else text

    def set_progress(self, done: int, total: int, eta: float | None) -> None:
        self.progress.setMaximum(max(1, total))
        self.progress.setValue(done)
        text = self.tr("{0} of {1} cues").format(done, total)
        if eta is not None and done < total:
            text = self.tr("{0} · about {1} left").format(text, format_eta(eta))
        self.status.setText(text)

    def show_check(self, shown: bool) -> None:
        """The Check column is there when the back-check hears the cues."""
        self.table.setColumnHidden(CHECK, not shown)

    def track_length(self) -> float | None:
        """The track length asked for in seconds; None: the last cue's end."""
        return self.length_box.value() or None

    def set_busy(self, busy: bool, has_results: bool) -> None:
        self.dub_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        self.export_button.setEnabled(not busy and has_results)
        self.rate_box.setEnabled(not busy)
        self.takes_box.setEnabled(not busy)
