"""Spin boxes, combo boxes and sliders change on the mouse wheel only when they have the keyboard
focus.

Scrolling past a Guidance box must not change the script's CFG (one tick over it used to turn
2.0 into 1.9 and mark every finished take stale). One application-wide event filter covers every
such widget in every window and dialog, including ones made later: on Polish (before a widget is
first shown) a wheel no longer gives it focus, and a wheel over one without focus is dropped
instead of changing the value (the filter consumes it, so a scroll area under the pointer does not
scroll either while the pointer is over such a box). A click or Tab gives it
focus; then the wheel works as usual.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QSlider, QWidget

GUARDED = (QAbstractSpinBox, QComboBox, QSlider)  # (not scroll bars: the wheel is what they are for)


class WheelGuard(QObject):
    """Owned by the application; one per process (see :func:`install`)."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        kind = event.type()
        if kind == QEvent.Type.Polish and isinstance(obj, GUARDED):
            widget: QWidget = obj
            if widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
                widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        elif kind == QEvent.Type.Wheel and isinstance(obj, GUARDED) and not obj.hasFocus():
            return True  # consumed: neither the box nor its parents see it
        return False


def install() -> None:
    """Filter the application's events (once per process; a no-op without an application)."""
    app = QCoreApplication.instance()
    if app is None or app.findChild(WheelGuard, "voxdesk-wheel-guard") is not None:
        return
    guard = WheelGuard(app)
    guard.setObjectName("voxdesk-wheel-guard")
    app.installEventFilter(guard)
