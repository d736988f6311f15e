"""The training loss as a small line chart drawn with QPainter (QtCharts is not in
PySide6-Essentials): the raw loss faintly, a smoothed line over it, and a mark at each validated
checkpoint (the best one in the highlight colour)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

DOTS = 60  # up to this many steps each gets a dot
SMOOTHING = 0.9  # exponential moving average of the drawn line (the raw loss is noisy per batch)
BEST = QColor(46, 139, 87)  # the best checkpoint's mark: green, apart from the palette's line colour
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 48, 10, 8, 20


def smoothed(values: list[float], factor: float = SMOOTHING) -> list[float]:
    """Exponential moving average, bias-corrected so the line starts at the first value."""
    out, average = [], 0.0
    for i, value in enumerate(values, 1):
        average = factor * average + (1 - factor) * value
        out.append(average / (1 - factor**i))
    return out


class LossChart(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._points: list[tuple[int, float]] = []
        self._total = 1
        self._marks: list[int] = []  # steps of validated checkpoints
        self._best: int | None = None
        self.empty_text = ""  # shown before the first step (set by the page: translated)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(480, 180)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(240, 110)

    def set_losses(self, points: list[tuple[int, float]], total_steps: int) -> None:
        self._points = list(points)
        self._total = max(1, total_steps)
        self.update()

    def add_loss(self, step: int, loss: float) -> None:
        if self._points and step <= self._points[-1][0]:  # a resumed run repeats no step; keep order
            self._points = [p for p in self._points if p[0] < step]
        self._points.append((step, loss))
        self.update()

    def set_marks(self, steps: list[int], best: int | None) -> None:
        self._marks, self._best = list(steps), best
        self.update()

    @property
    def points(self) -> list[tuple[int, float]]:
        return list(self._points)

    def paintEvent(self, _event) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        area = QRectF(self.rect()).adjusted(MARGIN_LEFT, MARGIN_TOP, -MARGIN_RIGHT, -MARGIN_BOTTOM)
        painter.fillRect(area, palette.color(QPalette.ColorRole.Base))
        painter.setPen(QPen(palette.color(QPalette.ColorRole.Mid), 1))
        painter.drawRect(area)
        text = palette.color(QPalette.ColorRole.PlaceholderText)
        if not self._points:
            painter.setPen(text)
            painter.drawText(area, Qt.AlignmentFlag.AlignCenter, self.empty_text)
            return
        losses = [loss for _, loss in self._points]
        low, high = min(losses), max(losses)
        if high - low < 1e-9:
            low, high = low - 0.5, high + 0.5

        def at(step: float, loss: float) -> QPointF:
            x = area.left() + area.width() * step / self._total
            y = area.bottom() - area.height() * (loss - low) / (high - low)
            return QPointF(x, y)

        for step in self._marks:
            best = step == self._best
            colour = BEST if best else palette.color(QPalette.ColorRole.Mid)
            painter.setPen(
                QPen(colour, 2 if best else 1, Qt.PenStyle.SolidLine if best else Qt.PenStyle.DashLine)
            )
            x = at(step, low).x()
            painter.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()))
        steps = [step for step, _ in self._points]
        line = smoothed(losses)
        for values, colour, width in (
            (losses, palette.color(QPalette.ColorRole.Mid), 1.0),
            (line, palette.color(QPalette.ColorRole.Highlight), 2.0),
        ):
            path = QPainterPath(at(steps[0], values[0]))
            for step, value in zip(steps[1:], values[1:], strict=True):
                path.lineTo(at(step, value))
            painter.setPen(QPen(colour, width))
            painter.drawPath(path)
        # Dots on the smoothed line where the steps are few (one step is no line), else at the newest.
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(palette.color(QPalette.ColorRole.Highlight))
        dots = list(zip(steps, line, strict=True))
        for step, loss in dots if len(dots) <= DOTS else dots[-1:]:
            painter.drawEllipse(at(step, loss), 3.0, 3.0)
        painter.setPen(text)
        metrics = painter.fontMetrics()
        for value, y in ((high, area.top()), (low, area.bottom())):
            label = f"{value:.3g}"
            painter.drawText(
                QRectF(0, y - metrics.height() / 2, MARGIN_LEFT - 4, metrics.height()),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                label,
            )
        bottom = QRectF(area.left(), area.bottom() + 2, area.width(), MARGIN_BOTTOM - 2)
        painter.drawText(bottom, Qt.AlignmentFlag.AlignLeft, "0")
        painter.drawText(bottom, Qt.AlignmentFlag.AlignRight, str(self._total))
