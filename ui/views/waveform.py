"""A waveform of one voice recording with two trim handles.

Drag across the waveform to select a range; drag a handle to adjust one end. The span between
the handles is the selection that "Play selection" plays and "Trim" keeps. While the recording
plays, a playhead line shows where the listener is. The drawing is a per-pixel min/max
envelope, computed once per size change, so painting stays cheap for long recordings.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPalette, QPen, QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

HANDLE_GRAB_PX = 8
PLAYHEAD = QColor(230, 120, 0)


class WaveformView(QWidget):
    """Shows ``samples`` and lets the user pick ``selection() -> (start, end)`` in samples."""

    selectionChanged = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(72)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.setMouseTracking(True)
        self._samples = np.zeros(0, dtype=np.float32)
        self._start = 0
        self._end = 0
        self._drag: str | None = None  # "start" | "end" (a handle) | "range" (a new selection)
        self._anchor = 0
        self._before = (0, 0)  # the selection before a range drag (a bare click keeps it)
        self._playhead: int | None = None
        self._envelope: np.ndarray | None = None

    # --- data -----------------------------------------------------------------------------
    def set_samples(self, samples: np.ndarray | None) -> None:
        self._samples = np.zeros(0, np.float32) if samples is None else np.asarray(samples, np.float32)
        self._start, self._end = 0, len(self._samples)
        self._envelope = None
        self.update()
        self.selectionChanged.emit(self._start, self._end)

    def samples(self) -> np.ndarray:
        return self._samples

    def set_playhead(self, sample: int | None) -> None:
        if sample != self._playhead:
            self._playhead = sample
            self.update()

    def playhead(self) -> int | None:
        return self._playhead

    def selection(self) -> tuple[int, int]:
        return self._start, self._end

    def set_selection(self, start: int, end: int) -> None:
        n = len(self._samples)
        start, end = max(0, min(start, n)), max(0, min(end, n))
        if end < start:
            start, end = end, start
        if (start, end) != (self._start, self._end):
            self._start, self._end = start, end
            self.update()
            self.selectionChanged.emit(start, end)

    # --- geometry ---------------------------------------------------------------------------
    def _x_of(self, sample: int) -> float:
        n = max(1, len(self._samples))
        return sample / n * max(1, self.width() - 1)

    def _sample_at(self, x: float) -> int:
        n = len(self._samples)
        return int(round(max(0.0, min(1.0, x / max(1, self.width() - 1))) * n))

    def _compute_envelope(self) -> np.ndarray:
        width = max(1, self.width())
        n = len(self._samples)
        if n == 0:
            return np.zeros((width, 2), np.float32)
        edges = np.linspace(0, n, width + 1).astype(np.int64)
        env = np.zeros((width, 2), np.float32)
        for i in range(width):
            a, b = edges[i], max(edges[i + 1], edges[i] + 1)
            chunk = self._samples[a : min(b, n)]
            if len(chunk):
                env[i] = chunk.min(), chunk.max()
        return env

    # --- events ---------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt name)
        self._envelope = None
        super().resizeEvent(event)

    def _near_handle(self, x: float) -> str | None:
        d_start, d_end = abs(x - self._x_of(self._start)), abs(x - self._x_of(self._end))
        if min(d_start, d_end) > HANDLE_GRAB_PX:
            return None
        return "start" if d_start <= d_end else "end"

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if not len(self._samples) or event.button() != Qt.MouseButton.LeftButton:
            return
        x = event.position().x()
        self._drag = self._near_handle(x)
        if self._drag is None:  # anywhere else: start selecting a new range from here
            self._drag, self._anchor, self._before = "range", self._sample_at(x), (self._start, self._end)
            return
        self._move_drag(x)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        x = event.position().x()
        if self._drag:
            self._move_drag(x)
            return
        near = self._near_handle(x) is not None
        self.setCursor(Qt.CursorShape.SizeHorCursor if near else Qt.CursorShape.IBeamCursor)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._drag == "range" and self._end - self._start < 2:
            self.set_selection(*self._before)  # a click, not a drag: nothing to select
        self._drag = None

    def _move_drag(self, x: float) -> None:
        s = self._sample_at(x)
        if self._drag == "range":
            self.set_selection(min(s, self._anchor), max(s, self._anchor))
        elif self._drag == "start":
            self.set_selection(min(s, self._end), self._end)
        else:
            self.set_selection(self._start, max(s, self._start))

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        pal = self.palette()
        rect = self.rect()
        p.fillRect(rect, pal.color(QPalette.ColorRole.Base))
        if self._envelope is None or len(self._envelope) != max(1, self.width()):
            self._envelope = self._compute_envelope()
        mid, half = rect.height() / 2, rect.height() / 2 - 4
        accent = pal.color(QPalette.ColorRole.Highlight)
        dim = QColor(pal.color(QPalette.ColorRole.Text))
        dim.setAlphaF(0.35)
        x0, x1 = self._x_of(self._start), self._x_of(self._end)
        if len(self._samples):
            shade = QColor(accent)
            shade.setAlphaF(0.12)
            p.fillRect(QRectF(x0, 0, x1 - x0, rect.height()), shade)
        for x, (lo, hi) in enumerate(self._envelope):
            p.setPen(accent if x0 <= x <= x1 else dim)
            p.drawLine(QPointF(x, mid - hi * half), QPointF(x, mid - lo * half + 0.5))
        if len(self._samples):
            p.setPen(QPen(accent, 2))
            for x in (x0, x1):
                p.drawLine(QPointF(x, 0), QPointF(x, rect.height()))
                p.drawRect(QRectF(x - 3, 0, 6, 8))
        if self._playhead is not None and len(self._samples):
            x = self._x_of(self._playhead)
            p.setPen(QPen(PLAYHEAD, 2))
            p.drawLine(QPointF(x, 0), QPointF(x, rect.height()))
        p.end()
