"""The script's seed box: a number, or "random" (its lowest value), and either can be typed.

A plain ``QSpinBox`` shows its special value text but refuses it letter by letter, so typing
"random" did nothing. Here the word it shows (translated) and the English "random" are accepted in
any case, and their beginnings count as unfinished input while typing.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QSizePolicy, QSpinBox

RANDOM_WORD = "random"


class SeedBox(QSpinBox):
    def __init__(self) -> None:
        super().__init__()
        # It may narrow below its ten-digit width in a small window (the seed then scrolls).
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        hint = super().minimumSizeHint()
        shown = max(self.specialValueText(), "000000", key=len)
        narrow = self.fontMetrics().horizontalAdvance(shown) + 28  # the text, frame and arrows
        return QSize(min(hint.width(), narrow), hint.height())

    def _words(self) -> set[str]:
        return {w for w in (self.specialValueText().casefold(), RANDOM_WORD) if w}

    def validate(self, text: str, pos: int) -> object:
        typed = text.strip().casefold()
        words = self._words()
        if typed and not typed.lstrip("+-").isdigit() and any(w.startswith(typed) for w in words):
            state = QValidator.State.Acceptable if typed in words else QValidator.State.Intermediate
            return state, text, pos
        return super().validate(text, pos)

    def valueFromText(self, text: str) -> int:  # noqa: N802 (Qt name)
        if text.strip().casefold() in self._words():
            return self.minimum()
        return super().valueFromText(text)
