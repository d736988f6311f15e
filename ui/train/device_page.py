"""Page 1: what training does, and where it would run. Without an NVIDIA GPU the page says so
plainly, and Next is enabled only after the explicit choice to train on the processor."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWizardPage

from ui.train.threads import Call, call

if TYPE_CHECKING:
    from ui.train.wizard import TrainWizard

log = logging.getLogger(__name__)


class DevicePage(QWizardPage):
    def __init__(self, wizard: TrainWizard) -> None:
        super().__init__()
        self.w = wizard
        self.probe: Call | None = None
        self.found: tuple[str | None, str] | None = None  # training_device()'s answer
        self.intro = QLabel()
        self.intro.setWordWrap(True)
        self.steps = QLabel()
        self.steps.setWordWrap(True)
        self.device = QLabel()
        self.device.setWordWrap(True)
        self.detail = QLabel()
        self.detail.setObjectName("hint")
        self.detail.setWordWrap(True)
        self.use_cpu = QCheckBox()
        self.use_cpu.setVisible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addSpacing(8)
        layout.addWidget(self.steps)
        layout.addSpacing(8)
        layout.addWidget(self.device)
        layout.addWidget(self.detail)
        layout.addWidget(self.use_cpu)
        layout.addStretch(1)
        self.use_cpu.toggled.connect(lambda _on: self.completeChanged.emit())
        self.retranslate()

    def retranslate(self) -> None:
        self.setTitle(self.tr("Train the voice “{0}”").format(self.w.run.voice_name))
        self.intro.setText(
            self.tr(
                "Cloning from a short recording copies the sound of a voice. Training on ten minutes or more "
                "of the same person also learns their accent, rhythm and habits. The result is a new voice "
                "in the library; the model and the voice you started from stay as they are."
            )
        )
        self.steps.setText(
            self.tr(
                "1. Add recordings of the voice and check the words.\n"
                "2. Look at the plan sized to this computer.\n"
                "3. Train, listen to each checkpoint, and keep the best one as a voice."
            )
        )
        self.use_cpu.setText(
            self.tr("Train on the processor anyway (very slow: hours to days for the default run)")
        )
        self._show()

    def initializePage(self) -> None:  # noqa: N802
        if self.found is not None or self.probe is not None:
            return
        from app.train.plan import training_device

        self.probe = call(training_device, "looking for a GPU to train on", self._found, self._failed)
        self._show()

    def _failed(self, message: str) -> None:
        self._found((None, message))

    def _found(self, found: tuple[str | None, str]) -> None:
        self.found = found
        self.probe = None
        self._show()
        self.completeChanged.emit()

    def _show(self) -> None:
        if self.found is None:
            self.device.setText(self.tr("Looking for an NVIDIA GPU…"))
            self.detail.setText("")
            return
        device, text = self.found
        if device is not None:
            self.device.setText(self.tr("Training runs on: {0}").format(text))
            self.detail.setText("")
            self.use_cpu.setVisible(False)
            return
        self.device.setText(
            "<b>" + self.tr("Training needs an NVIDIA GPU, and none was found on this computer.") + "</b>"
        )
        # (the core's own sentence is for the CLI: it names --device cpu; it goes to the log)
        log.info("no GPU to train on: %s", text)
        self.detail.setText(
            self.tr(
                "It can train on the processor instead if you choose that below, but very slowly: the "
                "default run takes hours to days there, and the computer is busy all that time."
            )
        )
        self.use_cpu.setVisible(True)

    @property
    def chosen_device(self) -> str | None:
        """ "cuda", "cpu" (the explicit choice), or None: nothing to train on (yet)."""
        if self.found is None:
            return None
        if self.found[0] is not None:
            return self.found[0]
        return "cpu" if self.use_cpu.isChecked() else None

    def isComplete(self) -> bool:  # noqa: N802
        return self.chosen_device is not None

    def validatePage(self) -> bool:  # noqa: N802
        self.w.device = self.chosen_device
        self.w.device_text = (
            self.found[1] if self.found and self.found[0] else self.tr("the processor (very slow)")
        )
        return self.w.device is not None
