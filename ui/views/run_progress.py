"""The run's progress bar: finished segments fill it, failed ones in red, running ones partly.

A plain ``QProgressBar`` cannot show that 3 of the 8 finished segments failed; this one paints
done (accent), failed (red) and the running segments' share (lighter accent) side by side.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from ui.progress import RunCounts
from ui.views.segment_table import FAILED_RED


class RunProgressBar(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.counts = RunCounts()
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName("progress")

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(240, 14)

    def set_counts(self, counts: RunCounts) -> None:
        if counts != self.counts:
            self.counts = counts
            self.update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        p.setPen(QPen(pal.color(QPalette.ColorRole.Mid), 1))
        p.setBrush(pal.color(QPalette.ColorRole.Base))
        p.drawRoundedRect(rect, 3, 3)
        c = self.counts
        if c.total:
            width = rect.width()
            accent = pal.color(QPalette.ColorRole.Highlight)
            light = QColor(accent)
            light.setAlphaF(0.45)
            x = rect.left()
            running = c.fraction() - c.finished / c.total
            for share, colour in (
                (c.done / c.total, accent),
                (c.failed / c.total, FAILED_RED),
                (running, light),
            ):
                if share > 0:
                    w = share * width
                    p.fillRect(QRectF(x, rect.top() + 1, w, rect.height() - 2), colour)
                    x += w
        p.setPen(Qt.PenStyle.NoPen)
        p.end()
