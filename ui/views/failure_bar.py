"""The strip under the segment list that explains the selected failed segment.

It shows the reason in full (in red), a "Details" button with the log line, and the fix that
applies to this kind of failure: trim the voice, pick another voice, or simply regenerate.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

# Which fix a failure's message calls for. The messages are the engine's and the window's own
# VoxDeskError lines (app/models/voxcpm/prompt.py, ui/main_window.py).
FIXES = (
    ("voice recording is too long", "trim"),
    ("There is no voice named", "pick_voice"),
)


def fix_for(message: str) -> str:
    """ "trim", "pick_voice" or "regenerate" (always possible) for a failure message."""
    for needle, fix in FIXES:
        if needle.casefold() in message.casefold():
            return fix
    return "regenerate"


class FailureBar(QFrame):
    detailsClicked = Signal(int)
    fixClicked = Signal(int, str)  # row, fix kind
    regenerateClicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("failureBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#failureBar { border: 1px solid #c81e1e; border-radius: 4px; }")
        self.row = -1
        self.fix = "regenerate"
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setStyleSheet("color: #c81e1e;")
        self.details = QPushButton()
        self.fix_button = QPushButton()
        self.regenerate = QPushButton()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.label, 1)
        for button in (self.fix_button, self.regenerate, self.details):
            layout.addWidget(button)
        self.details.clicked.connect(lambda: self.detailsClicked.emit(self.row))
        self.fix_button.clicked.connect(lambda: self.fixClicked.emit(self.row, self.fix))
        self.regenerate.clicked.connect(lambda: self.regenerateClicked.emit(self.row))
        self.retranslate()
        self.hide()

    def retranslate(self) -> None:
        self.details.setText(self.tr("Details…"))
        self.regenerate.setText(self.tr("Regenerate"))
        self.fix_button.setText(
            {"trim": self.tr("Trim the voice…"), "pick_voice": self.tr("Pick a voice…")}.get(self.fix, "")
        )

    def show_failure(self, row: int, message: str, fix: str | None = None) -> None:
        self.row, self.fix = row, fix or fix_for(message)
        self.label.setText(self.tr("Segment {0} failed: {1}").format(row + 1, message))
        self.fix_button.setVisible(self.fix != "regenerate")
        self.retranslate()
        self.show()

    def clear(self) -> None:
        self.row = -1
        self.hide()
