"""The generation settings shared by the script and by a single segment.

``values()`` / ``set_values()`` speak plain dicts with the keys ``cfg_value``,
``inference_timesteps``, ``style`` (VoxCPM2 voice design: a description put before the text),
``instruction`` (CosyVoice: how to speak), ``emotion`` (IndexTTS-2.5: an
:class:`app.voices.emotion.EmotionSpec` as ``to_dict`` writes it) and ``language`` (IndexTTS-2.5:
"" = detected from the text). The segment dialog adds an "use the script's settings" switch, a
fixed seed and the line's own speaking rate (``rate``: None follows its voice's, then the
script's).

:meth:`GenerationForm.set_controls` shows only what the loaded model family honours
(``FamilyInfo.controls``): CosyVoice has an instruction and no guidance, steps or voice design;
IndexTTS-2.5 an emotion and a language. Hidden fields keep their values, so switching back to a
model that has them loses nothing.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.models.cosyvoice.instructions import SUGGESTIONS
from app.voices.emotion import EmotionSpec
from ui.dialogs import OK_CANCEL
from ui.views.emotion_form import EmotionForm, LanguageBox
from ui.views.pacing import RateBox
from ui.views.seed_box import SeedBox

DEFAULTS: dict[str, Any] = {
    "cfg_value": 2.0, "inference_timesteps": 10, "style": "", "instruction": "", "seed": None, "rate": None,
    "emotion": None, "language": "",
}  # fmt: skip
# which control of app/engine/family.py shows which field (fields not listed always show)
_CONTROL_OF = {
    "cfg": "cfg", "steps": "timesteps", "style_text": "voice_design", "instruction": "instruction",
    "language": "language", "emotion": "emotion",
}  # fmt: skip
RANDOM_SEED = -1  # the seed box's lowest value, shown as "random"


class GenerationForm(QWidget):
    """Guidance (CFG), quality steps, the voice-design text, the instruction, the emotion and the
    language."""

    changed = Signal()

    def __init__(
        self, parent: QWidget | None = None, compact: bool = False, seed: bool = False, rate: bool = False
    ) -> None:
        super().__init__(parent)
        self.cfg = QDoubleSpinBox()
        self.cfg.setRange(0.5, 5.0)
        self.cfg.setSingleStep(0.1)
        self.cfg.setDecimals(1)
        self.cfg.setToolTip(self.tr("How closely the voice follows the prompt and text (default 2.0)"))
        self.steps = QSpinBox()
        self.steps.setRange(1, 50)
        self.steps.setToolTip(self.tr("More steps: slightly better audio, slower (default 10)"))
        self.style_text = QLineEdit()
        self.style_text.setPlaceholderText(self.tr("VoxCPM2 voice design, e.g. a calm, warm narrator"))
        self.style_text.setToolTip(
            self.tr("VoxCPM2 only: describe the voice or manner; it is ignored by older models")
        )
        self.instruction = QComboBox()  # typed freely; the trained instructions as suggestions
        self.instruction.setEditable(True)
        self.instruction.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.instruction.addItems(SUGGESTIONS)
        self.instruction.lineEdit().setPlaceholderText(
            self.tr("How to speak, e.g. 请用四川话表达。 or Please say a sentence in a very soft voice.")
        )
        self.instruction.setToolTip(
            self.tr("CosyVoice: how to speak (emotion, dialect, speed, volume); the list holds the "
                    "instructions the model was trained on. Leave it empty to copy the voice as it is.")
        )  # fmt: skip
        self.seed = SeedBox()  # the script's locked seed, or "random" (a new seed per take)
        self.seed.setRange(RANDOM_SEED, 2**31 - 1)
        self.seed.setSpecialValueText(self.tr("random"))
        self.seed.setToolTip(
            self.tr("Lock one seed for the whole script (same input, same audio), or leave it random")
        )
        self.rate = RateBox(self.tr("default"))  # a line's own rate (the script's is in the pacing row)
        self.rate.setToolTip(
            self.tr("This line's speaking rate; “default” uses its voice's rate, or else the script's")
        )
        self.language = LanguageBox()
        self.emotion = EmotionForm()
        self.has_rate = rate
        labels: tuple[str, ...] = (self.tr("Guidance (CFG):"), self.tr("Quality steps:"))
        fields: tuple[QWidget, ...] = (self.cfg, self.steps)
        if seed:
            labels, fields = labels + (self.tr("Seed:"),), fields + (self.seed,)
        if rate:
            labels, fields = labels + (self.tr("Speaking rate:"),), fields + (self.rate,)
        labels = labels + (self.tr("Language:"), self.tr("Voice design:"), self.tr("Instruction:"),
                           self.tr("Emotion:"))  # fmt: skip
        fields = fields + (self.language, self.style_text, self.instruction, self.emotion)
        texts = (self.style_text, self.instruction)
        self._captions: dict[QWidget, QLabel] = {}
        self._form: QFormLayout | None = None
        if compact:  # the numbers on one row, the texts under them (fits 800 px wide)
            rows = QVBoxLayout(self)
            rows.setContentsMargins(0, 0, 0, 0)
            numbers, design, feeling = QHBoxLayout(), QHBoxLayout(), QHBoxLayout()
            rows.addLayout(numbers)
            rows.addLayout(design)
            rows.addLayout(feeling)
            for label, field in zip(labels, fields, strict=True):
                caption = QLabel(label)
                caption.setBuddy(field)
                self._captions[field] = caption
                if field is self.emotion:  # a line of its own, the caption beside its first row
                    caption.setMinimumHeight(self.emotion.source.sizeHint().height())
                    feeling.addWidget(caption, 0, Qt.AlignmentFlag.AlignTop)
                    feeling.addWidget(field, 1)
                    continue
                row = design if field in texts else numbers
                if row.count():  # the gap before a caption hides with it (a spacer would stay)
                    caption.setContentsMargins(8, 0, 0, 0)
                row.addWidget(caption)
                row.addWidget(field, 1 if field in texts else 0)
            numbers.addStretch(1)
        else:
            self._form = QFormLayout(self)
            self._form.setContentsMargins(0, 0, 0, 0)
            for label, field in zip(labels, fields, strict=True):
                self._form.addRow(label, field)
        self.set_values(DEFAULTS)
        self.set_controls(None)
        self.cfg.valueChanged.connect(self.changed)
        self.steps.valueChanged.connect(self.changed)
        self.style_text.textChanged.connect(self.changed)
        self.instruction.currentTextChanged.connect(self.changed)
        self.seed.valueChanged.connect(self.changed)
        self.rate.valueChanged.connect(self.changed)
        self.language.changed.connect(self.changed)
        self.emotion.changed.connect(self.changed)

    def set_controls(self, controls: frozenset[str] | None, languages: tuple[str, ...] = ()) -> None:
        """Show the fields of the controls the loaded family has (None: VoxCPM's, as before any
        model is known), with its ``languages`` (``FamilyInfo.languages``) offered; the rest are
        hidden and keep their values."""
        shown = controls if controls is not None else frozenset({"cfg", "timesteps", "voice_design"})
        self.language.set_languages(languages)
        self.emotion.set_text_available("emotion_text" in shown)
        for name, control in _CONTROL_OF.items():
            field: QWidget = getattr(self, name)
            visible = control in shown
            if self._form is not None:
                self._form.setRowVisible(field, visible)
            else:
                field.setVisible(visible)
                self._captions[field].setVisible(visible)

    def values(self) -> dict[str, Any]:
        seed = self.seed.value()
        values = {
            "cfg_value": round(self.cfg.value(), 2),
            "inference_timesteps": self.steps.value(),
            "style": self.style_text.text().strip(),
            "instruction": self.instruction.currentText().strip(),
            "seed": None if seed == RANDOM_SEED else seed,
            "emotion": self.emotion.spec().to_dict(),
            "language": self.language.code(),
        }
        if self.has_rate:
            values["rate"] = self.rate.value_or_none()
        return values

    def set_values(self, values: dict[str, Any]) -> None:
        merged = {**DEFAULTS, **values}
        widgets = (self.cfg, self.steps, self.style_text, self.instruction, self.seed, self.rate)
        for widget in widgets:
            widget.blockSignals(True)
        self.cfg.setValue(float(merged["cfg_value"]))
        self.steps.setValue(int(merged["inference_timesteps"]))
        self.style_text.setText(str(merged["style"]))
        self.instruction.setCurrentIndex(-1)
        self.instruction.setEditText(str(merged["instruction"]))
        self.seed.setValue(RANDOM_SEED if merged["seed"] is None else int(merged["seed"]))
        self.rate.set_value_or_none(merged["rate"])
        emotion = merged["emotion"]
        self.emotion.set_spec(emotion if isinstance(emotion, EmotionSpec) else _spec(emotion))
        self.language.set_code(str(merged["language"]))
        for widget in widgets:
            widget.blockSignals(False)

    def set_voices(self, names: list[str]) -> None:
        """The library's voices, for an emotion taken from another voice's recording."""
        self.emotion.set_voices(names)


def _spec(data: Any) -> EmotionSpec:
    """A stored emotion (``EmotionSpec.to_dict``), none when there is none."""
    return EmotionSpec.from_dict(data) if data else EmotionSpec()


class SegmentSettingsDialog(QDialog):
    """One segment's own settings, or None to follow the script's."""

    def __init__(
        self,
        script_values: dict[str, Any],
        own: dict[str, Any] | None,
        seed: int | None,
        parent: QWidget | None = None,
        take_seed: int | None = None,
        controls: frozenset[str] | None = None,
        languages: tuple[str, ...] = (),
        voices: list[str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Segment settings"))
        self.custom = QCheckBox(self.tr("Use its own settings for this segment"))
        self.form = GenerationForm(rate=True)
        self.form.set_controls(controls, languages)
        self.form.set_voices(voices or [])
        self.form.set_values(own if own is not None else script_values)
        self.custom.setChecked(own is not None)
        self.form.setEnabled(own is not None)
        self.custom.toggled.connect(self.form.setEnabled)
        self.fixed_seed = QCheckBox(self.tr("Keep this take's seed:"))
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setValue(seed if seed is not None else (take_seed or 0))
        self.fixed_seed.setChecked(seed is not None)
        self.seed.setEnabled(seed is not None)
        self.fixed_seed.toggled.connect(self.seed.setEnabled)
        seed_form = QFormLayout()
        seed_form.addRow(self.fixed_seed, self.seed)
        buttons = QDialogButtonBox(OK_CANCEL)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.custom)
        layout.addWidget(self.form)
        layout.addLayout(seed_form)
        layout.addWidget(buttons)

    def result_values(self) -> tuple[dict[str, Any] | None, int | None]:
        """(own settings or None, fixed seed or None)."""
        own = self.form.values() if self.custom.isChecked() else None
        seed = self.seed.value() if self.fixed_seed.isChecked() else None
        return own, seed
