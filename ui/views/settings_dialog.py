"""Preferences: compute device, precision on the CPU, output folder, silence gap, audio devices,
language, theme and the back-check's threshold and takes."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from app.audio import devices
from app.backcheck.takes import MAX_TAKES_LIMIT
from app.errors import VoxDeskError
from ui.cpu_measure import CpuMeasure
from ui.dialogs import OK_CANCEL, Dialogs
from ui.settings import Settings
from ui.views.cpu_settings import CpuPrecisionBox


def audio_device_names(kind: str) -> list[str]:
    """Names of the input or output devices; empty when there is no sound system."""
    try:
        found = devices.input_devices() if kind == "input" else devices.output_devices()
    except VoxDeskError:  # no PortAudio: only "system default" is offered
        return []
    return [d.name for d in found]


class SettingsDialog(QDialog):
    """Edits a :class:`Settings`; writes it back on OK. Language and theme apply on accept."""

    def __init__(
        self,
        settings: Settings,
        dialogs: Dialogs,
        parent: QWidget | None = None,
        api=None,
        measure: CpuMeasure | None = None,
        model_dir: str = "",
    ) -> None:
        """``measure`` and ``model_dir``: the engine thread's measurer and the loaded local model
        (Settings › On the CPU › Measure on this computer); without them the button is off."""
        super().__init__(parent)
        self.settings = settings
        self.dialogs = dialogs
        self.setWindowTitle(self.tr("Settings"))
        self.setMinimumWidth(480)

        self.device = QComboBox()
        for value, label in (
            ("auto", self.tr("Automatic (GPU when available)")),
            ("cuda", self.tr("GPU (CUDA)")),
            ("cpu", self.tr("CPU")),
        ):
            self.device.addItem(label, value)
        self.cpu = CpuPrecisionBox(settings.cpu_precision, measure, model_dir)
        self.model_dir = QLineEdit(str(settings.model_dir or ""))
        self.model_dir.setReadOnly(True)
        self.model_dir.setPlaceholderText(self.tr("No model chosen yet"))
        pick_model = QPushButton(self.tr("Change…"))
        pick_model.clicked.connect(self._pick_model)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_dir, 1)
        model_row.addWidget(pick_model)
        self.output_dir = QLineEdit(str(settings.output_dir))
        browse = QPushButton(self.tr("Browse…"))
        browse.clicked.connect(self._browse)
        out_row = QHBoxLayout()
        out_row.addWidget(self.output_dir, 1)
        out_row.addWidget(browse)
        self.input_device = self._device_combo("input", settings.input_device)
        self.output_device = self._device_combo("output", settings.output_device)
        self.language = QComboBox()
        self.language.addItem("English", "en")
        self.language.addItem("简体中文", "zh_CN")
        self.theme = QComboBox()
        self.theme.addItem(self.tr("Light"), "light")
        self.theme.addItem(self.tr("Dark"), "dark")
        self.check_threshold = QDoubleSpinBox()
        self.check_threshold.setRange(0.0, 10.0)
        self.check_threshold.setSingleStep(0.05)
        self.check_threshold.setValue(settings.check_threshold)
        self.check_threshold.setToolTip(
            self.tr("A take is flagged when more than this share of its words (or characters) is misheard.")
        )
        self.check_takes = QSpinBox()
        self.check_takes.setRange(1, MAX_TAKES_LIMIT)
        self.check_takes.setValue(settings.check_takes)
        self.check_takes.setToolTip(self.tr("Most takes of a flagged segment, the first included."))

        form = QFormLayout(self)
        form.addRow(self.tr("Model folder:"), model_row)
        form.addRow(self.tr("Compute device:"), self.device)
        form.addRow(self.tr("On the CPU:"), self.cpu)
        form.addRow(self.tr("Export folder:"), out_row)
        form.addRow(self.tr("Microphone:"), self.input_device)
        form.addRow(self.tr("Speakers:"), self.output_device)
        form.addRow(self.tr("Language:"), self.language)
        form.addRow(self.tr("Theme:"), self.theme)
        form.addRow(self.tr("Back-check threshold:"), self.check_threshold)
        form.addRow(self.tr("Back-check takes:"), self.check_takes)
        from ui.views.api_settings import EngineSourceBox, LocalApiBox

        self.engine_source = EngineSourceBox(settings)
        self.local_api = LocalApiBox(settings, api)
        form.addRow(self.engine_source)
        form.addRow(self.local_api)
        buttons = QDialogButtonBox(OK_CANCEL)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

        self._select(self.device, settings.device)
        self._select(self.language, settings.language)
        self._select(self.theme, settings.theme)

    def _device_combo(self, kind: str, current: str) -> QComboBox:
        combo = QComboBox()
        combo.addItem(self.tr("System default"), "")
        for name in audio_device_names(kind):
            combo.addItem(name, name)
        if current and combo.findData(current) < 0:
            combo.addItem(current, current)  # a device that is unplugged now keeps its setting
        self._select(combo, current)
        return combo

    @staticmethod
    def _select(combo: QComboBox, value: str) -> None:
        index = combo.findData(value)
        combo.setCurrentIndex(max(0, index))

    def _browse(self) -> None:
        folder = self.dialogs.pick_folder(self, self.tr("Export folder"), Path(self.output_dir.text()))
        if folder is not None:
            self.output_dir.setText(str(folder))

    def _pick_model(self) -> None:
        from app.models.download import validate_model_dir

        start = Path(self.model_dir.text()) if self.model_dir.text() else None
        folder = self.dialogs.pick_folder(self, self.tr("Choose a model folder"), start)
        if folder is None:
            return
        problems = validate_model_dir(folder)
        if problems:
            self.dialogs.error(
                self, self.tr("{0} is not a usable model folder: {1}").format(folder, " ".join(problems))
            )
            return
        self.model_dir.setText(str(folder))

    def accept(self) -> None:
        problem = self.engine_source.problem()
        if problem:
            self.dialogs.error(self, problem)
            return
        self.engine_source.save(self.settings)
        self.local_api.save(self.settings)
        s = self.settings
        if self.model_dir.text():
            s.model_dir = Path(self.model_dir.text())
        s.device = self.device.currentData()
        s.cpu_precision = self.cpu.choice()
        s.output_dir = Path(self.output_dir.text().strip() or Path.home())
        s.input_device = self.input_device.currentData()
        s.output_device = self.output_device.currentData()
        s.language = self.language.currentData()
        s.theme = self.theme.currentData()
        s.check_threshold = self.check_threshold.value()
        s.check_takes = self.check_takes.value()
        super().accept()

    def done(self, result: int) -> None:
        self.cpu.stop()  # a measurement in progress ends with the dialog
        super().done(result)
