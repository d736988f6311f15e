"""Speak / Stop / Play-pause / Export, with overall progress and the ETA."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QStyle, QWidget

from ui.progress import RunCounts
from ui.views.run_progress import RunProgressBar


def format_eta(seconds: float | None) -> str:
    if seconds is None:
        return ""
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class TransportBar(QWidget):
    """The bottom bar. Emits intents; the window decides what they mean."""

    speakClicked = Signal()
    stopClicked = Signal()
    playPauseClicked = Signal()
    exportClicked = Signal()
    showFailedClicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        style = self.style()
        self.speak_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekForward), "")
        self.stop_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_MediaStop), "")
        self.play_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_MediaPlay), "")
        self.export_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_DialogSaveButton), "")
        self.speak_button.setObjectName("speakButton")
        self.speak_button.setDefault(True)
        self.progress = RunProgressBar()
        self.progress.setMinimumWidth(80)
        self.status_label = QLabel()
        self.status_label.setMinimumWidth(120)
        self.status_label.setTextFormat(Qt.TextFormat.RichText)
        self.status_label.linkActivated.connect(lambda _link: self.showFailedClicked.emit())
        self.busy_label = QLabel()  # what the engine is doing right now: loading, encoding, ...
        self.busy_label.setObjectName("hint")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.setSpacing(8)
        for button in (self.speak_button, self.stop_button, self.play_button):
            button.setMinimumHeight(32)
            layout.addWidget(button)
        layout.addSpacing(12)
        layout.addWidget(self.progress, 1)
        layout.addWidget(self.status_label)
        layout.addWidget(self.busy_label)
        layout.addSpacing(12)
        self.export_button.setMinimumHeight(32)
        layout.addWidget(self.export_button)
        self.speak_button.clicked.connect(self.speakClicked)
        self.stop_button.clicked.connect(self.stopClicked)
        self.play_button.clicked.connect(self.playPauseClicked)
        self.export_button.clicked.connect(self.exportClicked)
        self.retranslate()
        self.set_busy(False)
        self.set_playing(False)

    def retranslate(self) -> None:
        self.speak_button.setText(self.tr("Speak"))
        self.speak_button.setToolTip(self.tr("Speak the whole script (Ctrl+Enter)"))
        self.stop_button.setText(self.tr("Stop"))
        self.stop_button.setToolTip(self.tr("Stop generating and playing (Esc)"))
        self.export_button.setText(self.tr("Export audio…"))
        self.export_button.setToolTip(self.tr("Export WAV, FLAC, per-segment files and subtitles (Ctrl+E)"))
        self.set_playing(self._playing if hasattr(self, "_playing") else False)

    def set_busy(self, busy: bool) -> None:
        self.speak_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)

    def set_playing(self, playing: bool) -> None:
        self._playing = playing
        icon = QStyle.StandardPixmap.SP_MediaPause if playing else QStyle.StandardPixmap.SP_MediaPlay
        self.play_button.setIcon(self.style().standardIcon(icon))
        self.play_button.setText(self.tr("Pause") if playing else self.tr("Play"))
        self.play_button.setToolTip(self.tr("Play or pause (Space, Ctrl+P)"))

    def set_busy_text(self, text: str) -> None:
        self.busy_label.setText(text)

    def counts_text(self, counts: RunCounts) -> str:
        """ "5 done · 3 failed · 0 left of 8", the failures in red with a link that shows them."""
        done = self.tr("{0} done").format(counts.done)
        parts = [done]
        if counts.failed:
            failed = self.tr("{0} failed").format(counts.failed)
            show = self.tr("show")
            parts.append(f'<span style="color:#c81e1e">{failed}</span> — <a href="failed">{show}</a>')
        parts.append(self.tr("{0} left of {1}").format(counts.remaining, counts.total))
        return " · ".join(parts)

    def set_counts(self, counts: RunCounts, eta: float | None) -> None:
        self.progress.set_counts(counts)
        text = self.counts_text(counts) if counts.total else ""
        remaining = format_eta(eta)
        if remaining:
            text = self.tr("{0} · about {1} left").format(text, remaining)
        self.status_label.setText(text)
        # A rich-text label's size hint can fall short of its text in a CJK fallback font (the
        # ETA's last digit was cut off): its width is measured on the words it shows.
        plain = QTextDocumentFragment.fromHtml(text).toPlainText()
        self.status_label.setMinimumWidth(
            max(120, self.status_label.fontMetrics().horizontalAdvance(plain) + 8)
        )
