"""The voice panel's busy row while new voices are imported or saved: what is being read, how far
it got (with an ETA once there is evidence for one), how many more wait, and Cancel. After a
cancel it says so, briefly, in the same place."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QStyle, QVBoxLayout, QWidget

from ui.views.transport import format_eta
from ui.voice_import import ImportJob

NOTE_MS = 10_000  # how long "cancelled" stays up


class ImportStatus(QWidget):
    cancelClicked = Signal()

    def __init__(self, replaces: QWidget | None = None, parent: QWidget | None = None) -> None:
        """``replaces``: a widget hidden while this row shows (the panel's drop tip: no extra height)."""
        super().__init__(parent)
        self._replaces = replaces
        self.label = QLabel()
        self.label.setObjectName("hint")
        self.label.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(14)
        self.cancel_button = QPushButton(self.style().standardIcon(QStyle.StandardPixmap.SP_BrowserStop), "")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.bar, 1)
        row.addWidget(self.cancel_button)
        self.bar_row = QWidget()
        self.bar_row.setLayout(row)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar_row)
        self._note_timer = QTimer(self)
        self._note_timer.setSingleShot(True)
        self._note_timer.setInterval(NOTE_MS)
        self._note_timer.timeout.connect(lambda: self.show_jobs([]))
        self.cancel_button.clicked.connect(self.cancelClicked)
        self._jobs: list[ImportJob] = []
        self._fraction, self._eta = 0.0, None
        self.retranslate()
        super().setVisible(False)  # (not the override: ``replaces`` may have no parent yet)

    def retranslate(self) -> None:
        self.cancel_button.setText(self.tr("Cancel"))
        self.cancel_button.setToolTip(self.tr("Stop importing (Esc); the library stays as it was"))
        if self._jobs:
            self.show_jobs(self._jobs, self._fraction, self._eta)

    def setVisible(self, visible: bool) -> None:  # noqa: N802
        super().setVisible(visible)
        if self._replaces is not None:
            self._replaces.setVisible(not visible)

    def show_jobs(self, jobs: list[ImportJob], fraction: float = 0.0, eta: float | None = None) -> None:
        """The jobs not finished (the running one first) and the running one's progress."""
        self._jobs, self._fraction, self._eta = list(jobs), fraction, eta
        if not jobs:
            if not self._note_timer.isActive():
                self.setVisible(False)
            return
        self._note_timer.stop()
        job = jobs[0]
        if job.recording:
            text = self.tr("Saving the recording “{0}”…").format(job.label)
            self.bar.setRange(0, 0)  # a few tenths of a second with nothing to count: busy
        else:
            text = self.tr("Importing “{0}”… {1:.0f}%").format(job.label, 100 * fraction)
            self.bar.setRange(0, 100)
            self.bar.setValue(int(100 * fraction))
        if eta is not None:
            text = self.tr("{0} · about {1} left").format(text, format_eta(eta))
        if len(jobs) > 1:
            text = self.tr("{0} ({1} more waiting)").format(text, len(jobs) - 1)
        self.label.setText(text)
        self.bar_row.setVisible(True)
        self.setVisible(True)

    def show_note(self, text: str) -> None:
        """A line shown for a while when nothing else runs (e.g. that an import was cancelled)."""
        self.label.setText(text)
        self.bar_row.setVisible(False)
        self.setVisible(True)
        self._note_timer.start()
