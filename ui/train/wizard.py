"""The "Train this voice…" wizard: device, recordings, plan, training.

It is a window of its own (not modal), so the main window stays usable during a run of hours.
Closing it, or quitting the app, while the training runs asks: pause and keep the run, stop it,
or keep training; it never loses the run. Closing waits for the worker to stop without blocking
the GUI thread: the wizard closes itself once the thread has finished (``closeWhenStopped``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget, QWizard

from app.errors import VoxDeskError
from app.train.job import TrainJob
from app.voices.library import VoiceLibrary
from ui.dialogs import Dialogs
from ui.errors import report
from ui.train import runs
from ui.train.data_page import DataPage
from ui.train.device_page import DevicePage
from ui.train.plan_page import PlanPage
from ui.train.threads import Training
from ui.train.train_page import TrainPage

DEVICE, DATA, PLAN, TRAIN = range(4)
Play = Callable[[np.ndarray, int, str], None]


class TrainWizard(QWizard):
    voiceMade = Signal(object)  # the new Voice
    stopped = Signal()  # the training thread has finished (after a pause, a stop, the end or a failure)

    def __init__(
        self,
        run: runs.Run,
        *,
        library: VoiceLibrary,
        dialogs: Dialogs,
        model_dir: Path | None,
        recognizer_dir: Callable[[], Path | None],
        play: Play,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.run = run
        self.library, self.dialogs, self.model_dir = library, dialogs, model_dir
        self.recognizer_dir, self.play = recognizer_dir, play
        self.dataset: Any = None  # app.train.clips.DataSet, opened by the data page
        self.device: str | None = None  # "cuda" or "cpu" (the explicit choice)
        self.device_text = ""
        self.plan: Any = None  # app.train.plan.TrainPlan
        self.job: TrainJob | None = None
        self.training: Training | None = None
        self._close_when_stopped = False
        self._closing = False
        self._phase: str | None = None  # the phase of the last progress report
        self.device_page = DevicePage(self)
        self.data_page = DataPage(self)
        self.plan_page = PlanPage(self)
        self.train_page = TrainPage(self)
        for page_id, page in enumerate((self.device_page, self.data_page, self.plan_page, self.train_page)):
            self.setPage(page_id, page)
        # A run that already trained goes straight to its progress (and resumes).
        self.setStartId(TRAIN if run.stage != "data" else DEVICE)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage)
        self.setOption(QWizard.WizardOption.NoCancelButtonOnLastPage)  # the page has its own Stop
        self.resize(760, 620)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Train the voice “{0}”").format(self.run.voice_name))
        self.setButtonText(QWizard.WizardButton.FinishButton, self.tr("Close"))
        for page in (self.device_page, self.data_page, self.plan_page, self.train_page):
            page.retranslate()

    # --- the training thread ----------------------------------------------------------------
    @property
    def training_running(self) -> bool:
        return self.training is not None

    def start_training(self) -> None:
        """Start the run the plan page configured, or resume the run's job from its last checkpoint."""
        if self.training is not None:
            return
        folder = self.run.job_dir
        if self.run.stage == "data":
            dataset, config, plan, model_dir = (
                self.dataset,
                self.plan_page.config(),
                self.plan,
                self.model_dir,
            )
            self.run = runs.update(self.run, stage="training", step=0, total_steps=config.steps)

            def open_job() -> TrainJob:
                return TrainJob.create(folder, model_dir, dataset, config, plan)
        else:
            self.run = runs.update(self.run, stage="training")

            def open_job() -> TrainJob:
                return TrainJob.open(folder)

        self.training = Training(open_job, self)
        self.training.opened.connect(self._opened)
        self.training.progress.connect(self._progress)
        self.training.ended.connect(self._ended)
        self.training.failed.connect(self._failed)
        self.training.finished.connect(self._thread_finished)
        self._phase = None
        self.train_page.started()
        self.training.start()

    def open_ended(self) -> None:
        """Show a run that ended earlier (trained or stopped): its curve and checkpoints, to keep one."""
        try:
            self.job = TrainJob.open(self.run.job_dir)
        except VoxDeskError as err:
            self.dialogs.error(self, report(err, "opening a training run"))
            return
        self._show_job()
        self.train_page.show_ended(self.run.stage)

    def _opened(self, job: TrainJob) -> None:
        self.job = job
        self._show_job()

    def _show_job(self) -> None:
        if self.job is None:
            return
        checkpoints = self.job.checkpoints()
        total = self.job.config.steps
        self.train_page.show_run(self.job.losses(), checkpoints, total)
        step = max((c.step for c in checkpoints), default=0)
        if (step, total) != (self.run.step, self.run.total_steps):
            self.run = runs.update(self.run, step=step, total_steps=total)

    def _progress(self, progress: Any) -> None:
        # A checkpoint is written (and validated) between steps: read the table again after one.
        if self._phase in ("saving", "validating") and progress.phase != self._phase:
            self._show_job()
        self._phase = progress.phase
        self.train_page.show_progress(progress)

    def _ended(self, final: Any) -> None:
        stage = {"done": "trained", "cancelled": "cancelled"}.get(final.phase, "training")
        self.run = runs.update(self.run, stage=stage)
        self.train_page.show_progress(final)
        if final.phase == "failed" and final.message:
            self.dialogs.error(self, final.message)

    def _failed(self, message: str) -> None:
        self.train_page.failed(message)
        self.dialogs.error(self, message)

    def _thread_finished(self) -> None:
        if self.training is not None:
            self.training.wait()  # (finished is sent just before the thread ends)
            self.training.deleteLater()
        self.training = None
        self._show_job()
        self.train_page.show_progress(self.train_page.last)
        self.stopped.emit()
        self._close_if_asked()

    def _close_if_asked(self) -> None:
        if self._close_when_stopped:
            self._close_when_stopped = False
            self._closing = True
            self.done(0)

    def cancel_paused(self) -> None:
        """Stop a paused run for good: it is no longer offered for resuming (its checkpoints stay)."""
        self.run = runs.update(self.run, stage="cancelled")
        self.train_page.stopped_for_good()

    def voice_made(self, voice: Any) -> None:
        if self.run.stage in ("trained", "cancelled"):  # (a paused run stays offered for resuming)
            self.run = runs.update(self.run, stage="kept")
        self.voiceMade.emit(voice)

    # --- closing ----------------------------------------------------------------------------
    def settle(self) -> bool:
        """Whether the wizard may close now. While clips are being prepared, the preparation is
        cancelled (its clips are kept) and the wizard closes when it has stopped; while training,
        the user chooses: pause and keep the run, stop it, or keep training."""
        if self.data_page.running:
            self.data_page.cancel()
            if not self._close_when_stopped:
                self._close_when_stopped = True
                self.data_page.preparation.finished.connect(self._close_if_asked)
            return False
        if self.training is None:
            return True
        step = self.train_page.last.step if self.train_page.last is not None else self.run.step
        question = self.tr(
            "The voice is training (step {0} of {1}). Pause it and keep the run to resume later, "
            "stop it (its checkpoints stay usable), or keep training?"
        ).format(step, self.run.total_steps)
        options = [self.tr("Pause and keep"), self.tr("Stop training"), self.tr("Keep training")]
        answer = self.dialogs.ask(self, question, options)
        if answer in (0, 1):
            self.training.request("pause" if answer == 0 else "cancel")
            self.train_page.show_progress(self.train_page.last)
            self._close_when_stopped = True
        return False

    @property
    def closing_later(self) -> bool:
        """A pause or stop was asked for on closing: the wizard closes when its thread has stopped."""
        return self._close_when_stopped

    def done(self, result: int) -> None:
        """Every way of closing (Close, Cancel, Esc, the title bar) ends here."""
        if self._closing or self.settle():
            self._closing = True
            super().done(result)
