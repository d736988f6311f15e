"""The window's side of training: "Train this voice…", the offer to resume an unfinished run at
start, and the question before quitting while a voice trains."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from app.voices.library import Voice
from ui.train import runs

if TYPE_CHECKING:
    from ui.main_window import MainWindow
    from ui.train.wizard import TrainWizard


class TrainEntry(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.wizard: TrainWizard | None = None
        self._quit_when_stopped = False

    def train_selected(self) -> None:
        """The voice panel's button and the Voices menu: train the selected voice."""
        voice = self.w.voices.selected()
        if voice is None:
            self.w.dialogs.info(self.w, self.tr("Choose the voice to train in the list of voices first."))
            return
        self.train(voice)

    def train(self, voice: Voice) -> None:
        if self.wizard is not None:
            self.wizard.raise_()
            self.wizard.activateWindow()
            return
        folder = self.w.settings.model_dir
        if self.w.settings.backend == "server" or folder is None or not folder.is_dir():
            self.w.dialogs.error(
                self.w,
                self.tr(
                    "Training adapts a model on this computer: choose a downloaded model in Tools → Models… "
                    "first."
                ),
            )
            return
        run = runs.open_for(voice.id)
        if run is not None and run.unfinished:
            question = self.tr(
                "A training run of “{0}” is unfinished (step {1} of {2}). Resume it? "
                "(No starts a new run; the unfinished one is kept.)"
            ).format(run.voice_name, run.step, run.total_steps)
            if not self.w.dialogs.confirm(self.w, question):
                run = None
        elif run is not None and run.stage in ("trained", "cancelled"):
            question = self.tr(
                "The last training of “{0}” ended at step {1} of {2}, and no voice was kept from it. "
                "Open it to listen to its checkpoints and keep one? (No starts a new run; it stays saved.)"
            ).format(run.voice_name, run.step, run.total_steps)
            if not self.w.dialogs.confirm(self.w, question):
                run = None
        if run is None:
            run = runs.new_run(voice.id, voice.name)
        self._open(run)

    def offer_resume(self) -> None:
        """At start: offer the most recent run left by a pause, a close, a quit or a crash."""
        left = runs.unfinished()
        if not left or self.wizard is not None:
            return
        run = left[0]
        question = self.tr(
            "Training of the voice “{0}” stopped at step {1} of {2}. Resume it now? "
            "(It stays saved either way: Train this voice… offers it again.)"
        ).format(run.voice_name, run.step, run.total_steps)
        if self.w.dialogs.confirm(self.w, question):
            self._open(run)

    def _open(self, run: runs.Run) -> None:
        from ui.train.wizard import TrainWizard  # (imports app.train: torch, only when training)

        wizard = TrainWizard(
            run,
            library=self.w.library,
            dialogs=self.w.dialogs,
            model_dir=self.w.settings.model_dir,
            recognizer_dir=self.w.transcriber.folder,
            play=self.w.play_audio,
            parent=self.w,
        )
        wizard.voiceMade.connect(self._voice_made)
        wizard.finished.connect(lambda _result: self._closed(wizard))
        self.wizard = wizard
        wizard.show()

    def _voice_made(self, voice: Any) -> None:
        self.w.voices.refresh(select_id=voice.id)
        self.w.voices.voicesChanged.emit()

    def _closed(self, wizard: TrainWizard) -> None:
        if self.wizard is wizard:
            self.wizard = None
        wizard.deleteLater()
        if self._quit_when_stopped:
            self._quit_when_stopped = False
            self.w.close()

    def settle_for_quit(self) -> bool:
        """Whether the window may close now. While a voice trains, the wizard asks (pause and keep,
        stop, or keep training); after a pause or stop the window closes once the run has stopped."""
        wizard = self.wizard
        if wizard is None:
            return True
        wizard.done(0)  # closes unless it must ask or wait first (TrainWizard.settle)
        if self.wizard is None:
            return True
        if wizard.closing_later:
            self._quit_when_stopped = True
        return False
