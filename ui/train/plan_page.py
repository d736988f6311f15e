"""Page 3: the plan sized to this computer (batch, gradient accumulation, checkpointing, the
memory it needs and whether that figure was measured or estimated), the number of steps and the
sentence each checkpoint speaks for validation. Its Next button starts the training."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QSpinBox, QVBoxLayout, QWizard, QWizardPage

from app.train.job import TrainConfig
from ui.train.threads import Call, call

if TYPE_CHECKING:
    from ui.train.wizard import TrainWizard

MIN_STEPS, MAX_STEPS = 1, 20_000
MAX_EVERY = 100  # validate and save every this many steps, or more often on a short run
CHECKPOINTS = 4  # ... so that even a short run has at least this many checkpoints to compare
GB = 2**30


def every(steps: int) -> int:
    """Steps between checkpoints (each validated) for a run of ``steps``."""
    return max(1, min(MAX_EVERY, steps // CHECKPOINTS))


def basis_text(basis: str) -> str:
    """The plan's basis (English, from app.train.plan) in the window's language."""
    words = {
        "estimated": QCoreApplication.translate("PlanPage", "estimated"),
        "measured on H200": QCoreApplication.translate("PlanPage", "measured on an H200"),
    }
    return words.get(basis, basis)


class PlanPage(QWizardPage):
    def __init__(self, wizard: TrainWizard) -> None:
        super().__init__()
        self.w = wizard
        self.sizing: Call | None = None
        self.problem = ""  # why there is no plan (e.g. too little GPU memory)
        self.setCommitPage(True)  # after it, training runs: no way Back
        self.intro = QLabel()
        self.intro.setWordWrap(True)
        self.model, self.device, self.batch, self.checkpointing, self.memory = (QLabel() for _ in range(5))
        for label in (self.model, self.device, self.batch, self.memory):
            label.setWordWrap(True)
        self.steps = QSpinBox()
        self.steps.setRange(MIN_STEPS, MAX_STEPS)
        self.steps.setSingleStep(100)
        self.steps.setValue(TrainConfig().steps)
        self.steps.setMaximumWidth(140)
        self.sentence = QLineEdit()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.form = QFormLayout()
        self.labels = [QLabel() for _ in range(7)]
        for label, field in zip(
            self.labels,
            (self.model, self.device, self.batch, self.checkpointing, self.memory, self.steps, self.sentence),
            strict=True,
        ):
            self.form.addRow(label, field)
        self.hint = QLabel()
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addLayout(self.form)
        layout.addWidget(self.hint)
        layout.addWidget(self.status)
        layout.addStretch(1)
        self.sentence.textChanged.connect(lambda _text: self.completeChanged.emit())
        self.steps.valueChanged.connect(lambda _steps: self._show_every())
        self.retranslate()

    def retranslate(self) -> None:
        self.setTitle(self.tr("The plan"))
        self.intro.setText(
            self.tr(
                "VoxDesk trains a small add-on to the model (a LoRA: rank 32, alpha 32, on the language "
                "model and the diffusion decoder, learning rate 0.0001, as the official recipe does), sized "
                "to fit this computer's memory."
            )
        )
        names = (
            self.tr("Model:"),
            self.tr("Runs on:"),
            self.tr("Batch:"),
            self.tr("Memory saving:"),
            self.tr("Memory needed:"),
            self.tr("Steps:"),
            self.tr("Validation sentence:"),
        )
        for label, name in zip(self.labels, names, strict=True):
            label.setText(name)
        self.steps.setToolTip(
            self.tr("More steps learn more, and past a point learn the recordings too well (overfitting).")
        )
        self.sentence.setToolTip(self.tr("Each checkpoint speaks this, so you can compare them by ear."))
        if not self.sentence.text():
            self.sentence.setText(self.tr("This is my own voice, and it speaks whatever I write for it."))
        self._show_every()
        self.setButtonText(QWizard.WizardButton.CommitButton, self.tr("Start training"))
        self._show()

    def _show_every(self) -> None:
        n = every(self.steps.value())
        when = self.tr("After every step") if n == 1 else self.tr("Every {0} steps").format(n)
        self.hint.setText(
            self.tr(
                "{0} VoxDesk saves a checkpoint, speaks the sentence and scores it: the error rate of the "
                "words as the recognizer hears them, and how alike the voice is to the held-out clips."
            ).format(when)
        )

    def initializePage(self) -> None:  # noqa: N802
        from app.train.plan import plan_training

        if self.sizing is not None or self.w.model_dir is None or self.w.device is None:
            return
        model_dir, device = self.w.model_dir, self.w.device
        self.w.plan = None
        self.problem = ""
        self.sizing = call(
            lambda: plan_training(model_dir, device, None),
            "sizing a training run",
            self._planned,
            self._failed,
        )
        self._show()

    def _planned(self, plan: object) -> None:
        self.w.plan = plan
        self._sized()

    def _failed(self, message: str) -> None:
        self.problem = message
        self._sized()

    def _sized(self) -> None:
        self.sizing = None
        self._show()
        self.completeChanged.emit()

    def _show(self) -> None:
        plan = self.w.plan
        self.model.setText(self.w.model_dir.name if self.w.model_dir else "")
        self.device.setText(self.w.device_text)
        if self.sizing is not None:
            self.status.setText(self.tr("Sizing the run to this computer…"))
        else:
            self.status.setText(self.problem)
        if plan is None:
            for label in (self.batch, self.checkpointing, self.memory):
                label.setText("—")
            return
        self.batch.setText(
            self.tr("batch size {0} × gradient accumulation {1} = {2} clips an update").format(
                plan.batch_size, plan.grad_accum, plan.batch_size * plan.grad_accum
            )
        )
        self.checkpointing.setText(
            self.tr("on (recomputes activations: slower, fits a smaller card)")
            if plan.checkpointing
            else self.tr("off (not needed)")
        )
        self.memory.setText(
            self.tr("about {0:.1f} GB ({1})").format(plan.estimated_peak_bytes / GB, basis_text(plan.basis))
        )

    def isComplete(self) -> bool:  # noqa: N802
        return self.w.plan is not None and bool(self.sentence.text().strip())

    def config(self) -> TrainConfig:
        steps = self.steps.value()
        return TrainConfig(
            steps=steps,
            save_every=every(steps),
            validate_every=every(steps),
            validation_text=self.sentence.text().strip(),
        )
