"""Page 2: the recordings. One long recording or a folder of clips (buttons, or dropped on the
page) is sliced into 3–15 s clips and transcribed on a worker thread; the user listens, corrects
the words and excludes bad clips. Next stays disabled, with the reason, below the minimum."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from app.audio.io import READABLE_SUFFIXES, read_audio
from app.errors import VoxDeskError
from app.train.clips import MIN_SPEECH_SECONDS, RECOMMENDED_SPEECH_SECONDS, DataSet
from ui.errors import report
from ui.train.clip_table import ClipTable
from ui.train.threads import Preparation
from ui.views.transport import format_eta

if TYPE_CHECKING:
    from ui.train.wizard import TrainWizard


def minutes(seconds: float) -> str:
    """m:ss for lengths of speech."""
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class DataPage(QWizardPage):
    def __init__(self, wizard: TrainWizard) -> None:
        super().__init__()
        self.w = wizard
        self.preparation: Preparation | None = None
        self.setAcceptDrops(True)
        icon = self.style().standardIcon
        self.intro = QLabel()
        self.intro.setWordWrap(True)
        self.add_file_button = QPushButton(icon(QStyle.StandardPixmap.SP_FileIcon), "")
        self.add_folder_button = QPushButton(icon(QStyle.StandardPixmap.SP_DirIcon), "")
        self.status = QLabel()
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(14)
        self.cancel_button = QPushButton(icon(QStyle.StandardPixmap.SP_BrowserStop), "")
        self.busy_row = QWidget()
        busy = QHBoxLayout(self.busy_row)
        busy.setContentsMargins(0, 0, 0, 0)
        busy.addWidget(self.bar, 1)
        busy.addWidget(self.cancel_button)
        self.table = ClipTable()
        self.recognizer_hint = QLabel()
        self.recognizer_hint.setObjectName("hint")
        self.recognizer_hint.setWordWrap(True)
        self.total = QLabel()
        self.total.setWordWrap(True)

        buttons = QHBoxLayout()
        buttons.addWidget(self.add_file_button)
        buttons.addWidget(self.add_folder_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.busy_row)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.recognizer_hint)
        layout.addWidget(self.total)
        self.busy_row.setVisible(False)

        self.add_file_button.clicked.connect(self.add_recording)
        self.add_folder_button.clicked.connect(self.add_folder)
        self.cancel_button.clicked.connect(self.cancel)
        self.table.playRequested.connect(self.play)
        self.table.textEdited.connect(lambda clip_id, text: self._update(clip_id, text=text))
        self.table.excludeToggled.connect(lambda clip_id, excluded: self._update(clip_id, excluded=excluded))
        self.retranslate()

    def retranslate(self) -> None:
        self.setTitle(self.tr("Recordings of the voice"))
        self.intro.setText(
            self.tr(
                "Add one long recording, or a folder of short ones, of this person reading aloud. "
                "VoxDesk cuts it at the pauses into clips of 3 to 15 seconds and writes down the words. "
                "Listen to a few clips, correct any wrong word, and exclude clips with noise or another "
                "voice. "
                "You can also drop files or a folder here."
            )
        )
        self.add_file_button.setText(self.tr("Add a recording…"))
        self.add_folder_button.setText(self.tr("Add a folder of clips…"))
        self.cancel_button.setText(self.tr("Cancel"))
        self.table.retranslate()
        self.refresh()

    @property
    def dataset(self) -> DataSet | None:
        return self.w.dataset

    @property
    def running(self) -> bool:
        return self.preparation is not None

    def initializePage(self) -> None:  # noqa: N802
        if self.w.dataset is None:
            try:
                self.w.dataset = DataSet.create(self.w.run.data_dir)
            except VoxDeskError as err:
                self.w.dialogs.error(self.w, report(err, "creating a training data set"))
        self.refresh()

    def isComplete(self) -> bool:  # noqa: N802
        return (
            not self.running
            and self.dataset is not None
            and self.dataset.speech_seconds() >= MIN_SPEECH_SECONDS
        )

    # --- adding recordings ------------------------------------------------------------------
    def add_recording(self) -> None:
        path = self.w.dialogs.open_audio(self.w)
        if path is not None:
            self.add_sources([path])

    def add_folder(self) -> None:
        folder = self.w.dialogs.pick_folder(self.w, self.tr("A folder of recordings"))
        if folder is not None:
            self.add_sources([folder])

    def add_sources(self, sources: list[Path]) -> None:
        """Slice and transcribe ``sources`` (files or folders) on a worker thread."""
        if self.running or self.dataset is None:
            return
        self.preparation = Preparation(self.dataset, sources, self.w.recognizer_dir(), self)
        self.preparation.progress.connect(self._progress)
        self.preparation.prepared.connect(self._prepared)
        self.preparation.failed.connect(self._failed)
        self.preparation.cancelled.connect(self._cancelled)
        self.preparation.finished.connect(self._thread_finished)
        self._progress(Preparation.SLICING, 0.0, None)
        self.preparation.start()
        self.refresh()

    def cancel(self) -> None:
        if self.preparation is not None:
            self.preparation.cancel()
            self.status.setText(self.tr("Cancelling…"))

    def _progress(self, phase: str, fraction: float, eta: object) -> None:
        text = (
            self.tr("Cutting the recordings into clips… {0:.0f}%")
            if phase == Preparation.SLICING
            else self.tr("Writing down the words of each clip… {0:.0f}%")
        ).format(100 * fraction)
        if eta is not None:
            text = self.tr("{0} · about {1} left").format(text, format_eta(float(eta)))
        self.status.setText(text)
        self.bar.setValue(int(100 * fraction))

    def _prepared(self, problems: list[str]) -> None:
        self.status.setText("")
        if problems:
            self.w.dialogs.error(self.w, "\n".join(problems))

    def _failed(self, message: str) -> None:
        self.status.setText("")
        self.w.dialogs.error(self.w, message)

    def _cancelled(self) -> None:
        self.status.setText(self.tr("Cancelled; the clips made so far are kept."))

    def _thread_finished(self) -> None:
        if self.preparation is not None:
            self.preparation.wait()  # (finished is sent just before the thread ends)
            self.preparation.deleteLater()
        self.preparation = None
        self.refresh()

    # --- the clips --------------------------------------------------------------------------
    def _update(self, clip_id: str, **changes: object) -> None:
        if self.dataset is None or self.running:  # (the table is disabled while preparing)
            return
        try:
            self.dataset.update(clip_id, **changes)  # type: ignore[arg-type]
        except VoxDeskError as err:
            self.w.dialogs.error(self.w, report(err, "editing a training clip"))
        self.refresh()

    def play(self, clip_id: str) -> None:
        clip = next((c for c in self.dataset.clips if c.id == clip_id), None) if self.dataset else None
        if clip is None:
            return
        try:
            samples, rate = read_audio(clip.path, reject_silence=False)
        except VoxDeskError as err:
            self.w.dialogs.error(self.w, report(err, "playing a training clip"))
            return
        self.w.play(samples, rate, f"train-clip:{clip_id}")

    def refresh(self) -> None:
        """Table, buttons and the total of usable speech against the minimum."""
        running = self.running
        self.busy_row.setVisible(running)
        for widget in (self.add_file_button, self.add_folder_button, self.table):
            widget.setEnabled(not running)
        if self.dataset is not None and not running:
            self.table.set_clips(self.dataset.clips)
        speech = self.dataset.speech_seconds() if self.dataset is not None else 0.0
        clips = self.dataset.clips if self.dataset is not None else []
        if not clips:
            text = self.tr(
                "No clips yet. At least {0} minutes of speech are needed; 10 minutes or more is best."
            )
            self.total.setText(text.format(MIN_SPEECH_SECONDS // 60))
        elif speech < MIN_SPEECH_SECONDS:
            text = self.tr("Usable speech: {0} of the {1}:00 minimum. Add more recordings to go on.")
            self.total.setText(text.format(minutes(speech), MIN_SPEECH_SECONDS // 60))
        elif speech < RECOMMENDED_SPEECH_SECONDS:
            text = self.tr("Usable speech: {0}. Enough to train; {1} minutes or more give a closer likeness.")
            self.total.setText(text.format(minutes(speech), RECOMMENDED_SPEECH_SECONDS // 60))
        else:
            self.total.setText(self.tr("Usable speech: {0}. Plenty.").format(minutes(speech)))
        untranscribed = any(not c.text and not c.excluded and not c.held_out for c in clips)
        self.recognizer_hint.setVisible(untranscribed and not running and self.w.recognizer_dir() is None)
        self.recognizer_hint.setText(
            self.tr(
                "Speech recognition is not installed, so the clips have no words yet: type what each clip "
                "says, or install a recognizer (Models… → Speech recognition) and add the recordings again."
            )
        )
        self.completeChanged.emit()

    # --- drag and drop ----------------------------------------------------------------------
    @staticmethod
    def _dropped(event: QDragEnterEvent | QDropEvent) -> list[Path]:
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        paths = [Path(url.toLocalFile()) for url in urls if url.isLocalFile()]
        return [p for p in paths if p.is_dir() or p.suffix.lower() in READABLE_SUFFIXES]

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if not self.running and self._dropped(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        paths = self._dropped(event)
        if paths and not self.running:
            event.acceptProposedAction()
            self.add_sources(paths)
