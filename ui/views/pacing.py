"""Pacing controls: a speaking-rate box (script, voice, line) and the script's pause lengths.

A rate is 0.5×–2.0× (app/audio/stretch.py). Where the rate may also be left to someone else (a
voice follows the script; a line follows its voice, then the script), the box has one more step
below 0.5 that reads "inherit" and stands for None, as the seed box's "random" does.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QLabel, QSpinBox, QWidget

from app.audio.stretch import MAX_RATE, MIN_RATE

STEP = 0.05
GAPS = ("gap_seconds", "paragraph_gap_seconds", "chapter_gap_seconds")  # ScriptSettings' names
INHERIT = MIN_RATE - STEP  # the box's value that stands for None
_NOTE = "\n\n"  # before the tooltip's note on a model that makes the rate itself


class RateBox(QDoubleSpinBox):
    """Speaking rate, ``value_or_none()`` None when ``inherit`` text is shown."""

    def __init__(self, inherit: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDecimals(2)
        self.setSingleStep(STEP)
        self.setSuffix("×")
        self.setRange(INHERIT if inherit else MIN_RATE, MAX_RATE)
        if inherit:
            self.setSpecialValueText(inherit)
        self.setValue(INHERIT if inherit else 1.0)

    def value_or_none(self) -> float | None:
        value = round(self.value(), 2)
        return None if self.specialValueText() and value < MIN_RATE else value

    def set_value_or_none(self, value: float | None) -> None:
        self.setValue(self.minimum() if value is None else float(value))

    def set_native(self, controls: frozenset[str] | None, model: str) -> None:
        """Add to the tooltip (set by the owner) that the loaded ``model`` makes the rate itself
        (the "speed" control: CosyVoice, IndexTTS-2.5's duration factor), or take that away."""
        tip = self.toolTip().split(_NOTE)[0]
        if controls is not None and "speed" in controls:
            tip += _NOTE + self.tr(
                "{0} makes this rate itself instead of stretching the audio afterwards: the speech "
                "lasts 1 ÷ rate as long (its duration factor: 1.25× → 0.80×, 0.5× → 2.00×)."
            ).format(model)
        self.setToolTip(tip)


class PauseForm(QWidget):
    """The script's silences, in ms: between sentences, after a paragraph, before a chapter."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        self.caption = QLabel()
        row.addWidget(self.caption)
        self.boxes: dict[str, QSpinBox] = {}
        self.labels: dict[str, QLabel] = {}
        for name in GAPS:
            box = QSpinBox()  # (no " ms" suffix, narrower than its hint: the row fits 800 px)
            box.setRange(0, 10_000)
            box.setSingleStep(50)
            box.setMinimumWidth(box.fontMetrics().horizontalAdvance("10000") + 28)
            label = QLabel()
            label.setBuddy(box)
            row.addWidget(label)
            row.addWidget(box)
            box.valueChanged.connect(self.changed)
            self.boxes[name], self.labels[name] = box, label
        row.addStretch(1)
        self.retranslate()

    def retranslate(self) -> None:
        self.caption.setText(self.tr("Pauses (ms):"))
        self.labels["gap_seconds"].setText(self.tr("sentence"))
        self.labels["paragraph_gap_seconds"].setText(self.tr("paragraph"))
        self.labels["chapter_gap_seconds"].setText(self.tr("chapter"))
        tips = {
            "gap_seconds": self.tr("Silence between sentences and lines"),
            "paragraph_gap_seconds": self.tr("Silence after a paragraph (a blank line in the script)"),
            "chapter_gap_seconds": self.tr("Silence before a chapter (a line that starts with # )"),
        }
        for name, tip in tips.items():
            self.boxes[name].setToolTip(tip)

    def values(self) -> dict[str, float]:
        """Seconds, keyed as ScriptSettings names them."""
        return {name: box.value() / 1000 for name, box in self.boxes.items()}

    def set_values(self, seconds: dict[str, float]) -> None:
        for name, box in self.boxes.items():
            box.blockSignals(True)
            box.setValue(round(seconds[name] * 1000))
            box.blockSignals(False)
