"""The bar under the voice waveform: how much of this recording the model can use for the script.

Drawn on the waveform's time axis: green up to what fits, red beyond it, and the recommended
length (app/voices/prepare.py) marked above it. The line under it says the same in words.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.voices.library import RECOMMENDED_SECONDS
from ui.views.segment_table import FAILED_RED, format_seconds

FITS_GREEN = QColor(40, 150, 70)


class GuideBar(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.total = 0.0  # seconds shown by the waveform above
        self.usable: float | None = None  # None: no model loaded
        self.selection = (0.0, 0.0)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(200, 12)

    def set_values(self, total: float, usable: float | None, selection: tuple[float, float]) -> None:
        self.total, self.usable, self.selection = total, usable, selection
        self.update()

    def _x(self, seconds: float) -> float:
        return max(0.0, min(1.0, seconds / self.total)) * (self.width() - 1) if self.total > 0 else 0.0

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        pal = self.palette()
        h = self.height()
        p.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
        if self.total > 0 and self.usable is not None:
            start, end = self.selection
            fit_end = min(end, start + self.usable)
            dim = QColor(pal.color(QPalette.ColorRole.Text))
            dim.setAlphaF(0.15)
            p.fillRect(QRectF(0, h / 2, self.width(), h / 2), dim)
            # The selection (what would be used): green while it fits, red where it does not.
            p.fillRect(QRectF(self._x(start), h / 2, self._x(fit_end) - self._x(start), h / 2), FITS_GREEN)
            if end > fit_end:
                p.fillRect(
                    QRectF(self._x(fit_end), h / 2, self._x(end) - self._x(fit_end), h / 2), FAILED_RED
                )
            best = QColor(FITS_GREEN)
            best.setAlphaF(0.35)
            lo, hi = start + RECOMMENDED_SECONDS[0], start + RECOMMENDED_SECONDS[1]
            p.fillRect(QRectF(self._x(lo), 0, self._x(hi) - self._x(lo), h / 2 - 1), best)
            p.setPen(QPen(pal.color(QPalette.ColorRole.Text), 1))
            x = self._x(start + self.usable)
            if start + self.usable < self.total:
                p.drawLine(int(x), 0, int(x), h)
        p.setPen(Qt.PenStyle.NoPen)
        p.end()


class ReferenceGuide(QWidget):
    """``set_values`` with the recording's length, what the model can use, and the selection."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bar = GuideBar()
        self.label = QLabel()
        self.label.setObjectName("hint")
        self.label.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.bar)
        layout.addWidget(self.label)
        self.too_long = False
        self.set_values(0.0, None, (0.0, 0.0))

    def set_values(
        self,
        total: float,
        usable: float | None,
        selection: tuple[float, float],
        cut: bool = False,
        transcript: bool = True,
    ) -> None:
        """``cut``: ``usable`` is where the model cuts the recording whatever the script (IndexTTS),
        so a longer selection fails nothing; ``transcript``: the model reads a transcript at all."""
        self.bar.set_values(total, usable, selection)
        chosen = max(0.0, selection[1] - selection[0])
        self.too_long = usable is not None and chosen > usable
        if usable is None:
            text = self.tr("Load a model to see how much of this recording it can use.")
        elif cut:
            text = self.tr(
                "This model uses the first {0} of the recording, whatever the script; {1}–{2} s is best."
            ).format(format_seconds(usable), *(f"{s:.0f}" for s in RECOMMENDED_SECONDS))
            if self.too_long:
                text += " " + self.tr("The selection is {0}; what follows its first {1} is not used.").format(
                    format_seconds(chosen), format_seconds(usable)
                )
        elif usable <= 0:
            text = self.tr(
                "This model cannot use any recording for this script: shorten the longest sentence."
            )
        else:
            text = self.tr(
                "This model uses up to {0} of the recording for this script; {1}–{2} s is best."
            ).format(format_seconds(usable), *(f"{s:.0f}" for s in RECOMMENDED_SECONDS))
            if self.too_long:
                text += " " + self.tr("The selection ({0}) is longer: trim it to {1} or less.").format(
                    format_seconds(chosen), format_seconds(usable)
                )
        if usable is not None and not transcript:
            text += " " + self.tr("It needs no transcript.")
        self.label.setText(text)
        failing = not cut and (self.too_long or (usable is not None and usable <= 0))
        self.label.setStyleSheet("color: #c81e1e;" if failing else "")
