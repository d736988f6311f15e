"""How a line feels, apart from the voice's timbre (IndexTTS-2.5), and the language it is read in.

:class:`EmotionForm` edits an :class:`app.voices.emotion.EmotionSpec`: the voice's own emotion
(none), another library voice's recording, eight weights, or a sentence describing it, each but
the first with a weight (the official ``emo_alpha``). Only the chosen source's fields show, so the
form is one row unless the eight sliders are open. The eight add up to at most 1 (the model's
range): a slider moved past what the others leave is held there, and the note beside them says
so. "From a sentence" needs the QwenEmotion model: without it (no "emotion_text" control) its line
is disabled and says what to download.

:class:`LanguageBox` is "Auto" (read from the text) and the family's languages by name.
"""

from __future__ import annotations

from PySide6.QtCore import QLocale, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from app.engine.request import EMOTIONS
from app.voices.emotion import EmotionSpec

SOURCES = ("none", "clip", "vector", "text")  # EmotionSpec.kind, in the order offered
STEPS = 100  # a slider's 0..1 in hundredths
COLUMNS = 4  # sliders per row: two rows of four


class EmotionForm(QWidget):
    """The emotion source, its own field, and how strongly it applies."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = QComboBox()
        for kind, label in zip(SOURCES, self._source_labels(), strict=True):
            self.source.addItem(label, kind)
        self.source.setToolTip(
            self.tr("IndexTTS-2.5 keeps the voice's timbre and takes its emotion from here")
        )
        self.voice = QComboBox()  # "clip": the library voice whose recording carries the emotion
        self.voice.setMinimumWidth(110)
        self.voice.setToolTip(self.tr("A voice from the library: its recording's emotion is copied"))
        self.text = QLineEdit()
        self.text.setPlaceholderText(self.tr("e.g. a quiet, frightened whisper (empty: read from each line)"))
        self.text.setToolTip(
            self.tr("Describe the emotion in words; the QwenEmotion model turns it into the eight weights")
        )
        self.text_reason = QLabel(
            self.tr("Needs the QwenEmotion model: download IndexTTS-2.5 with it in Models…")
        )
        self.text_reason.setObjectName("hint")
        self.weight_caption = QLabel(self.tr("Weight:"))
        self.weight = _slider(self.tr("How strongly the emotion applies, 0 to 1 (the official emo_alpha)"))
        self.weight_caption.setBuddy(self.weight)
        self.weight_value = QLabel()
        self.sliders: dict[str, QSlider] = {}
        self.numbers: dict[str, QLabel] = {}
        self.total = QLabel()
        self.total.setObjectName("hint")
        self.reset = QPushButton(self.tr("Reset"))
        self.reset.setToolTip(self.tr("Set all eight to 0"))
        self._has_text = True

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        for widget in (self.source, self.voice):
            top.addWidget(widget)
        top.addWidget(self.text, 1)
        top.addWidget(self.text_reason, 1)
        self.spacer = QWidget()  # takes the room of the fields a source lacks
        top.addWidget(self.spacer, 1)
        top.addSpacing(8)
        top.addWidget(self.weight_caption)
        top.addWidget(self.weight)
        top.addWidget(self.weight_value)

        self.vector_panel = QWidget()
        grid = QGridLayout(self.vector_panel)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(4)
        grid.setVerticalSpacing(2)
        names = self._emotion_labels()
        for i, emotion in enumerate(EMOTIONS):
            row, column = divmod(i, COLUMNS)
            caption = QLabel(names[emotion])
            slider = _slider(self.tr("How much of this emotion, 0 to 1 (the eight add up to at most 1)"))
            slider.setMinimumWidth(60)
            caption.setBuddy(slider)
            number = QLabel()
            number.setMinimumWidth(number.fontMetrics().horizontalAdvance("0.00") + 2)
            first = 4 * column  # caption, slider, number, then a gap before the next
            grid.addWidget(caption, row, first, Qt.AlignmentFlag.AlignRight)
            grid.addWidget(slider, row, first + 1)
            grid.addWidget(number, row, first + 2)
            grid.setColumnStretch(first + 1, 1)
            grid.setColumnMinimumWidth(first + 3, 10)
            self.sliders[emotion], self.numbers[emotion] = slider, number
            slider.valueChanged.connect(lambda value, e=emotion: self._moved(e, value))
        grid.addWidget(self.total, 0, 4 * COLUMNS)
        grid.addWidget(self.reset, 1, 4 * COLUMNS)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.vector_panel)

        self.set_spec(EmotionSpec())
        self.source.currentIndexChanged.connect(self._source_changed)
        self.voice.currentIndexChanged.connect(lambda _i: self.changed.emit())
        self.text.textChanged.connect(lambda _t: self.changed.emit())
        self.weight.valueChanged.connect(self._weight_moved)
        self.reset.clicked.connect(self._reset)

    def _source_labels(self) -> tuple[str, ...]:
        return (
            self.tr("the voice's own"),
            self.tr("from another recording"),
            self.tr("from eight sliders"),
            self.tr("from a sentence"),
        )

    def _emotion_labels(self) -> dict[str, str]:
        return dict(zip(EMOTIONS, (
            self.tr("Happy"), self.tr("Angry"), self.tr("Sad"), self.tr("Afraid"),
            self.tr("Disgusted"), self.tr("Melancholic"), self.tr("Surprised"), self.tr("Calm"),
        ), strict=True))  # fmt: skip

    # --- values -----------------------------------------------------------------------------
    def kind(self) -> str:
        return str(self.source.currentData())

    def spec(self) -> EmotionSpec:
        """What the form shows, as the project stores it."""
        kind, weight = self.kind(), self.weight.value() / STEPS
        voice = str(self.voice.currentData() or "")
        if kind == "clip" and voice:  # (with no voice in the library there is nothing to copy)
            return EmotionSpec(kind="clip", voice=voice, weight=weight)
        if kind == "vector":
            vector = tuple(self.sliders[e].value() / STEPS for e in EMOTIONS)
            return EmotionSpec(kind="vector", vector=vector, weight=weight)
        if kind == "text":
            return EmotionSpec(kind="text", text=self.text.text().strip(), weight=weight)
        return EmotionSpec()

    def set_spec(self, spec: EmotionSpec) -> None:
        """Show ``spec`` without announcing a change; a source's fields keep what the others had."""
        widgets = (self.source, self.voice, self.text, self.weight, *self.sliders.values())
        for widget in widgets:
            widget.blockSignals(True)
        self.source.setCurrentIndex(max(0, self.source.findData(spec.kind)))
        self.weight.setValue(round(spec.weight * STEPS))
        if spec.kind == "clip":
            if self.voice.findData(spec.voice) < 0:
                self.voice.addItem(spec.voice, spec.voice)  # not in the library (any more): kept, shown
            self.voice.setCurrentIndex(max(0, self.voice.findData(spec.voice)))
        if spec.kind == "vector":
            for emotion, value in zip(EMOTIONS, spec.vector, strict=False):
                self.sliders[emotion].setValue(round(value * STEPS))
        if spec.kind == "text":
            self.text.setText(spec.text)
        for widget in widgets:
            widget.blockSignals(False)
        self._offer_clip()
        self._show_source()
        self._show_numbers()

    def set_voices(self, names: list[str]) -> None:
        """The library's voices, for "from another recording"; the chosen one stays chosen (a
        spoken take then says that no voice has that name)."""
        current = self.voice.currentData()
        self.voice.blockSignals(True)
        self.voice.clear()
        for name in names:
            self.voice.addItem(name, name)
        if current and self.voice.findData(current) < 0 and self.kind() == "clip":
            self.voice.addItem(current, current)  # chosen, though gone from the library: kept, shown
        self.voice.setCurrentIndex(max(0, self.voice.findData(current)) if current else 0)
        self.voice.blockSignals(False)
        self._offer_clip()

    def _offer_clip(self) -> None:
        """The "from another recording" source is offered while there is a voice to take it from."""
        item = self.source.model().item(SOURCES.index("clip"))  # type: ignore[attr-defined]
        item.setEnabled(self.voice.count() > 0)

    def set_text_available(self, available: bool) -> None:
        """Whether the loaded folder has QwenEmotion ("emotion_text")."""
        self._has_text = available
        self._show_source()

    # --- reactions --------------------------------------------------------------------------
    def _source_changed(self) -> None:
        self._show_source()
        self.changed.emit()

    def _show_source(self) -> None:
        kind = self.kind()
        self.voice.setVisible(kind == "clip")
        self.text.setVisible(kind == "text")
        self.text.setEnabled(self._has_text)
        self.text_reason.setVisible(kind == "text" and not self._has_text)
        self.spacer.setVisible(kind not in ("text",))
        for widget in (self.weight_caption, self.weight, self.weight_value):
            widget.setVisible(kind != "none")
        self.vector_panel.setVisible(kind == "vector")

    def _moved(self, emotion: str, value: int) -> None:
        """Hold the total at 1: a slider gets at most what the other seven leave."""
        others = sum(s.value() for e, s in self.sliders.items() if e != emotion)
        held = value + others > STEPS
        if held:
            slider = self.sliders[emotion]
            slider.blockSignals(True)
            slider.setValue(STEPS - others)
            slider.blockSignals(False)
        self._show_numbers(held)
        self.changed.emit()

    def _weight_moved(self) -> None:
        self._show_numbers()
        self.changed.emit()

    def _reset(self) -> None:
        for slider in self.sliders.values():
            slider.blockSignals(True)
            slider.setValue(0)
            slider.blockSignals(False)
        self._show_numbers()
        self.changed.emit()

    def _show_numbers(self, held: bool = False) -> None:
        self.weight_value.setText(f"{self.weight.value() / STEPS:.2f}")
        for emotion, slider in self.sliders.items():
            self.numbers[emotion].setText(f"{slider.value() / STEPS:.2f}")
        total = sum(s.value() for s in self.sliders.values()) / STEPS
        if held:
            note = self.tr("Total {0} (at most 1):\nlower another to raise this one").format(f"{total:.2f}")
        else:
            note = self.tr("Total {0}\n(at most 1)").format(f"{total:.2f}")
        self.total.setText(note)


class LanguageBox(QComboBox):
    """ "Auto" (detected from the text) or one of the loaded family's languages."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setToolTip(self.tr("The language the text is read in; Auto detects it from the text"))
        self._wanted = ""  # kept while the loaded family does not offer it
        self.set_languages(())
        self.currentIndexChanged.connect(self._picked)

    def names(self) -> dict[str, str]:
        return {
            "zh": self.tr("Chinese"),
            "en": self.tr("English"),
            "ja": self.tr("Japanese"),
            "es": self.tr("Spanish"),
            "ar": self.tr("Arabic"),
        }

    def set_languages(self, codes: tuple[str, ...]) -> None:
        names = self.names()
        self.blockSignals(True)
        self.clear()
        self.addItem(self.tr("Auto"), "")
        for code in codes:
            locale = QLocale(code)
            self.addItem(names.get(code) or QLocale.languageToString(locale.language()), code)
        self.setCurrentIndex(max(0, self.findData(self._wanted)))
        self.blockSignals(False)

    def code(self) -> str:
        """The chosen language ("" = auto); one the loaded family lacks stays chosen."""
        shown = str(self.currentData() or "")
        return shown or self._wanted

    def set_code(self, code: str) -> None:
        self._wanted = code
        self.blockSignals(True)
        self.setCurrentIndex(max(0, self.findData(code)))
        self.blockSignals(False)

    def _picked(self) -> None:
        self._wanted = str(self.currentData() or "")
        self.changed.emit()


def _slider(tip: str) -> QSlider:
    slider = QSlider(Qt.Orientation.Horizontal)
    slider.setRange(0, STEPS)
    slider.setSingleStep(5)
    slider.setPageStep(10)
    slider.setMinimumWidth(80)
    slider.setToolTip(tip)
    return slider
