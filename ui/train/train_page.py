"""Page 4: the run. Step N of M with the ETA, the live loss curve, Pause / Resume / Stop, the
checkpoint table (scores, the spoken validation sentence, the best one highlighted), a hint when
the run starts to overfit, and "Use this checkpoint" to make it a voice in the library.

The job runs on a :class:`ui.train.threads.Training` thread owned by the wizard; this page only
shows what the thread reports and reads the job's files (losses, checkpoints) between steps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStyle,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from app.audio.io import read_audio
from app.errors import VoxDeskError
from ui.errors import report
from ui.train import scores
from ui.train.checkpoint_table import CheckpointTable
from ui.train.loss_chart import LossChart

if TYPE_CHECKING:
    from ui.train.wizard import TrainWizard


def format_duration(seconds: float) -> str:
    """h:mm:ss, or m:ss under an hour."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class TrainPage(QWizardPage):
    def __init__(self, wizard: TrainWizard) -> None:
        super().__init__()
        self.w = wizard
        self.last: Any = None  # the last TrainProgress
        self.error: str | None = None  # the job raised: one plain line
        self.ended_for_good = False  # a paused run the user stopped (no longer resumable)
        self.first_step: int | None = None  # the first step trained since the last (re)start
        icon = self.style().standardIcon
        self.headline = QLabel()
        self.phase = QLabel()
        self.phase.setObjectName("hint")
        self.phase.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(14)
        self.pause_button = QPushButton(icon(QStyle.StandardPixmap.SP_MediaPause), "")
        self.stop_button = QPushButton(icon(QStyle.StandardPixmap.SP_MediaStop), "")
        self.chart = LossChart()
        self.table = CheckpointTable()
        self.overfit = QLabel()
        self.overfit.setWordWrap(True)
        self.overfit.setVisible(False)
        self.name_label = QLabel()
        self.name = QLineEdit(
            self.w.library.unique_name(self.tr("{0} (trained)").format(self.w.run.voice_name))
        )
        self.use_button = QPushButton(icon(QStyle.StandardPixmap.SP_DialogApplyButton), "")

        controls = QHBoxLayout()
        controls.addWidget(self.bar, 1)
        controls.addWidget(self.pause_button)
        controls.addWidget(self.stop_button)
        checkpoints = QWidget()
        below = QVBoxLayout(checkpoints)
        below.setContentsMargins(0, 0, 0, 0)
        self.table_label = QLabel()
        below.addWidget(self.table_label)
        below.addWidget(self.table, 1)
        below.addWidget(self.overfit)
        use = QHBoxLayout()
        use.addWidget(self.name_label)
        use.addWidget(self.name, 1)
        use.addWidget(self.use_button)
        below.addLayout(use)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.chart)
        split.addWidget(checkpoints)
        split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(self.phase)
        layout.addLayout(controls)
        layout.addWidget(split, 1)

        self.pause_button.clicked.connect(self.pause_or_resume)
        self.stop_button.clicked.connect(self.stop)
        self.table.playRequested.connect(self.play)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.name.textChanged.connect(lambda _text: self._update_buttons())
        self.use_button.clicked.connect(self.use_checkpoint)
        self.retranslate()

    def retranslate(self) -> None:
        self.setTitle(self.tr("Training"))
        self.chart.empty_text = self.tr("The loss curve appears with the first steps.")
        self.table_label.setText(self.tr("Checkpoints (listen, then keep the one that sounds best):"))
        self.stop_button.setText(self.tr("Stop training"))
        self.stop_button.setToolTip(self.tr("End the run now; the checkpoints saved so far stay usable"))
        self.name_label.setText(self.tr("New voice:"))
        self.use_button.setText(self.tr("Use this checkpoint"))
        self.table.retranslate()
        self.show_progress(self.last)

    def initializePage(self) -> None:  # noqa: N802
        if self.w.run.stage in ("trained", "cancelled", "kept"):
            self.w.open_ended()
        else:
            self.w.start_training()

    def isComplete(self) -> bool:  # noqa: N802
        return True  # Close is always possible: while training it asks first (wizard.reject)

    # --- what the run reports ---------------------------------------------------------------
    def started(self) -> None:
        """A (re)start of the job: the next steps are reported afresh."""
        self.first_step = None
        self.show_progress(None)

    def show_progress(self, progress: Any) -> None:
        self.last = progress
        running = self.w.training_running
        if progress is None:
            self.headline.setText(self.tr("Starting…") if running else "")
            self.phase.setText("")
            self.bar.setRange(0, 0 if running else 1)
            self._update_buttons()
            return
        if progress.phase == "training" and self.first_step is None:
            self.first_step = progress.step
        self.phase.setText(self._phase_text(progress))
        if progress.phase == "loading":  # (reported as step 0: keep the step the run is at)
            self._update_buttons()
            return
        self.bar.setRange(0, max(1, progress.total_steps))
        self.bar.setValue(progress.step)
        headline = self.tr("Step {0} of {1}").format(progress.step, progress.total_steps)
        if progress.loss is not None:
            headline = self.tr("{0} · loss {1:.3f}").format(headline, progress.loss)
        if progress.eta_seconds is not None and running:
            headline = self.tr("{0} · about {1} left").format(headline, format_duration(progress.eta_seconds))
        self.headline.setText(headline)
        if progress.phase == "training" and progress.loss is not None:
            self.chart.add_loss(progress.step, progress.loss)
        self._update_buttons()

    def _phase_text(self, progress: Any) -> str:
        if self.w.training_running and self.w.training.requested == "pause":
            return self.tr("Pausing: saving a checkpoint first…")
        if self.w.training_running and self.w.training.requested == "cancel":
            return self.tr("Stopping…")
        texts = {
            "loading": self.tr("Loading the model…"),
            "training": (
                self.tr("Training… (resumed at step {0})").format(self.first_step)
                if self.first_step is not None and self.first_step > 1
                else self.tr("Training…")
            ),
            "validating": self.tr("Speaking and scoring the validation sentence…"),
            "saving": self.tr("Saving a checkpoint…"),
            "paused": (
                self.tr("Training stopped. The checkpoints saved so far can still become a voice.")
                if self.ended_for_good
                else self.tr("Paused. Resume now, or close: the run is kept and offered again next time.")
            ),
            "done": self.tr("Training finished. Listen to the checkpoints and keep the best as a voice."),
            "cancelled": self.tr("Training stopped. The checkpoints saved so far can still become a voice."),
            "failed": self.tr("Training failed: {0}").format(progress.message),
        }
        return texts.get(progress.phase, progress.message)

    def show_run(self, losses: list[tuple[int, float]], checkpoints: list, total_steps: int) -> None:
        """Everything the job has on disk (a resumed run, after a validation or at the end)."""
        self.chart.set_losses(losses, total_steps)
        self.show_checkpoints(checkpoints)
        if self.last is None or self.last.phase == "loading":
            step = max((c.step for c in checkpoints), default=0)
            self.headline.setText(self.tr("Step {0} of {1}").format(step, total_steps))
            self.bar.setRange(0, max(1, total_steps))
            self.bar.setValue(step)

    def show_checkpoints(self, checkpoints: list) -> None:
        self.table.set_checkpoints(checkpoints)
        best = self.table.best
        validated = [c.step for c in self.table.checkpoints if c.validation is not None]
        self.chart.set_marks(validated, best.step if best else None)
        top = scores.overfitting(self.table.checkpoints)
        self.overfit.setVisible(top is not None)
        if top is not None:
            self.overfit.setText(
                "⚠ "
                + self.tr(
                    "The validation got worse after step {0} while the loss kept falling: the voice may be "
                    "learning the recordings rather than the speaker (overfitting). Step {0} is the best so "
                    "far."
                ).format(top.step)
            )
        self._update_buttons()

    def failed(self, message: str) -> None:
        """The job raised (the thread reports one line): the run can be resumed from its last checkpoint."""
        self.error = message
        self.phase.setText(self.tr("Training failed: {0}").format(message))
        self._update_buttons()

    def show_ended(self, stage: str) -> None:
        """A run that ended before this wizard opened."""
        self.ended_for_good = True
        self.phase.setText(
            self.tr("Training finished. Listen to the checkpoints and keep the best as a voice.")
            if stage == "trained"
            else self.tr("Training stopped. The checkpoints saved so far can still become a voice.")
        )
        self._update_buttons()

    def stopped_for_good(self) -> None:
        self.ended_for_good = True
        self.phase.setText(self._phase_text(self.last) if self.last is not None else "")
        self._update_buttons()

    @property
    def resumable(self) -> bool:
        """Not running, and stopped by a pause or a failure (not finished, not stopped for good)."""
        if self.w.training_running or self.ended_for_good:
            return False
        return self.error is not None or (self.last is not None and self.last.phase in ("paused", "failed"))

    def _update_buttons(self) -> None:
        running = self.w.training_running
        stopping = running and self.w.training.requested is not None
        resumable = self.resumable
        icon = QStyle.StandardPixmap.SP_MediaPlay if resumable else QStyle.StandardPixmap.SP_MediaPause
        self.pause_button.setIcon(self.style().standardIcon(icon))
        self.pause_button.setText(self.tr("Resume") if resumable else self.tr("Pause"))
        self.pause_button.setToolTip(
            self.tr("Continue from the last checkpoint")
            if resumable
            else self.tr("Save a checkpoint and stop; resume now or at a later start")
        )
        self.pause_button.setEnabled((running and not stopping) or resumable)
        self.stop_button.setEnabled((running and not stopping) or resumable)
        can_use = not running and self.table.selected() is not None and bool(self.name.text().strip())
        self.use_button.setEnabled(can_use)
        self.use_button.setToolTip(
            "" if can_use or not running else self.tr("Pause or stop the training first")
        )

    # --- actions ----------------------------------------------------------------------------
    def pause_or_resume(self) -> None:
        if self.w.training_running:
            self.w.training.request("pause")
            self.show_progress(self.last)
        else:
            self.error = None
            self.w.start_training()

    def stop(self) -> None:
        question = self.tr(
            "Stop training? The checkpoints saved so far stay, and any of them can become a voice."
        )
        if not self.w.dialogs.confirm(self.w, question):
            return
        if self.w.training_running:
            self.w.training.request("cancel")
            self.show_progress(self.last)
        else:
            self.w.cancel_paused()

    def play(self, step: int) -> None:
        checkpoint = next((c for c in self.table.checkpoints if c.step == step), None)
        if checkpoint is None or checkpoint.validation is None:
            return
        try:
            samples, rate = read_audio(checkpoint.validation.audio, reject_silence=False)
        except VoxDeskError as err:
            self.w.dialogs.error(self.w, report(err, "playing a validation sentence"))
            return
        self.w.play(samples, rate, f"train-check:{step}")

    def use_checkpoint(self) -> None:
        checkpoint = self.table.selected()
        name = self.name.text().strip()
        if checkpoint is None or not name or self.w.job is None or self.w.training_running:
            return
        try:
            voice = self.w.job.make_voice(checkpoint, name, self.w.library)
        except Exception as exc:  # noqa: BLE001 - one line for the user, the traceback to the log
            self.w.dialogs.error(self.w, report(exc, "making a trained voice"))
            return
        self.w.voice_made(voice)
        self.w.dialogs.info(
            self.w,
            self.tr(
                "“{0}” is in the voice library now (step {1}). Choose it for any segment to hear it."
            ).format(getattr(voice, "name", name), checkpoint.step),
        )
        self.name.setText(self.w.library.unique_name(name))
