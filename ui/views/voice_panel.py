"""The voice library panel: list, record/import (also by drag and drop), and the selected voice's
name, waveform with trim handles, normalise, transcript and play.

Every change goes straight to the :class:`VoiceLibrary` (its writes are atomic); failures come back
as plain messages through the window's :class:`Dialogs`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import numpy as np
from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from app.audio.io import READABLE_SUFFIXES
from app.errors import VoxDeskError
from app.voices.cloning import resolve_mode
from app.voices.fit import ModelLimits, usable_seconds
from app.voices.library import RECOMMENDED_SECONDS, Voice, VoiceLibrary
from app.voices.prepare import EditHistory, normalise_loudness, too_long, trim_silence
from ui.dialogs import Dialogs
from ui.errors import report
from ui.transcriber import Transcriber
from ui.views.import_status import ImportStatus
from ui.views.lora_row import LoRARow
from ui.views.pacing import RateBox
from ui.views.reference_guide import ReferenceGuide
from ui.views.segment_table import format_seconds
from ui.views.waveform import WaveformView
from ui.voice_import import ImportJob, VoiceImporter

T = TypeVar("T")
AUDIO_SUFFIXES = set(READABLE_SUFFIXES)  # what a drop accepts: what the reader decodes
TRANSCRIPT_SETTLE_MS = 500


class VoicePanel(QWidget):
    """Left side of the window. Emits ``voicesChanged`` after any add/rename/delete."""

    voicesChanged = Signal()
    voiceRenamed = Signal(str, str)  # old name, new name (sent before voicesChanged)
    playRequested = Signal(object, int, str)  # samples, sample rate, source (see Playback.play_clip)
    stopRequested = Signal()
    recordRequested = Signal()
    trainRequested = Signal()  # "Train this voice…" (ui/train/)
    latentsCleared = Signal(str)  # voice id: its cached encoding was dropped ("Re-encode")

    def __init__(
        self,
        library: VoiceLibrary,
        dialogs: Dialogs,
        parent: QWidget | None = None,
        transcriber: Transcriber | None = None,
    ) -> None:
        super().__init__(parent)
        self.library = library
        self.dialogs = dialogs
        # Speech recognition fills a new voice's transcript (None: the window has none to offer).
        self.transcriber = transcriber
        self.setAcceptDrops(True)
        self._architecture = "voxcpm2"
        self._controls: frozenset[str] | None = None  # the loaded family's (None: not known yet)
        self._audio: np.ndarray | None = None  # the selected voice's untrimmed audio (own rate)
        self._limits: ModelLimits | None = None
        self._script: list[tuple[str | None, str]] = []  # (voice name, text) of each segment
        icon = self.style().standardIcon

        self.list = QListWidget()
        self.list.setIconSize(QSize(18, 18))
        self.list.setMinimumHeight(140)
        self.record_button = QPushButton(icon(QStyle.StandardPixmap.SP_MediaVolume), "")
        self.import_button = QPushButton(icon(QStyle.StandardPixmap.SP_DialogOpenButton), "")
        self.delete_button = QPushButton(icon(QStyle.StandardPixmap.SP_TrashIcon), "")
        self.play_button = QPushButton(icon(QStyle.StandardPixmap.SP_MediaPlay), "")
        self.reencode_button = QPushButton(icon(QStyle.StandardPixmap.SP_BrowserReload), "")
        self.train_button = QPushButton(icon(QStyle.StandardPixmap.SP_ArrowUp), "")
        self.name = QLineEdit()
        self.waveform = WaveformView()
        self.guide = ReferenceGuide()
        self.play_selection = QPushButton(icon(QStyle.StandardPixmap.SP_MediaPlay), "")
        self.trim_button = QPushButton()
        self.trim_silence_button = QPushButton()
        self.normalise_button = QPushButton()
        self.undo_button = QPushButton(icon(QStyle.StandardPixmap.SP_ArrowBack), "")
        self.history = EditHistory()  # undo for trim and gain (the recording itself is never changed)
        self.length_warning = QLabel()
        self.length_warning.setObjectName("hint")
        self.length_warning.setWordWrap(True)
        self.transcript = QPlainTextEdit()
        self.transcript.setMaximumHeight(84)
        self.transcript.setTabChangesFocus(True)  # a tab character means nothing in a transcript
        self.recognize_button = QPushButton(icon(QStyle.StandardPixmap.SP_FileDialogContentsView), "")
        self.recognize_cancel = QPushButton(icon(QStyle.StandardPixmap.SP_BrowserStop), "")
        self.recognize_status = QLabel()  # progress, or why recognition did not fill the field
        self.recognize_status.setObjectName("hint")
        self.recognize_status.setWordWrap(True)
        self.mode_hint = QLabel()
        self.mode_hint.setObjectName("hint")
        self.mode_hint.setWordWrap(True)
        self.info = QLabel()
        self.info.setObjectName("hint")
        self.info.setWordWrap(True)
        self.wave_hint = QLabel()
        self.wave_hint.setObjectName("hint")
        self.wave_hint.setWordWrap(True)
        self.output_line = QLabel()  # where the sound goes: the output device, or that there is none
        self.output_line.setObjectName("hint")
        self.output_line.setWordWrap(True)
        self._playing_voice = False
        self.lora_row = LoRARow(library, dialogs, self.selected)

        self.library_box = QGroupBox()
        lib_layout = QVBoxLayout(self.library_box)
        lib_layout.addWidget(self.list, 1)
        row = QHBoxLayout()
        row.addWidget(self.record_button)
        row.addWidget(self.import_button)
        lib_layout.addLayout(row)
        self.drop_hint = QLabel()
        self.drop_hint.setObjectName("hint")
        self.import_status = ImportStatus(replaces=self.drop_hint)
        lib_layout.addWidget(self.import_status)
        lib_layout.addWidget(self.drop_hint)

        self.detail_box = QGroupBox()
        form = QFormLayout(self.detail_box)
        form.setContentsMargins(6, 6, 6, 6)  # narrow margins: the window fits 800 px
        self.name_label, self.transcript_label = QLabel(), QLabel()
        self.transcript_label.setWordWrap(True)
        form.addRow(self.name_label, self.name)
        self.rate_label, self.rate = QLabel(), RateBox(self.tr("script's"))
        self.rate.setKeyboardTracking(False)  # saved when a value is complete, not per keystroke
        form.addRow(self.rate_label, self.rate)
        form.addRow(self.waveform)
        form.addRow(self.guide)
        form.addRow(self.wave_hint)
        # two columns, so the panel stays narrow enough for an 800 px wide window
        edits = QGridLayout()
        buttons = (self.play_selection, self.trim_button, self.trim_silence_button, self.normalise_button)
        for i, button in enumerate((*buttons, self.undo_button, self.reencode_button)):
            edits.addWidget(button, i // 2, i % 2)
        form.addRow(edits)
        form.addRow(self.info)
        form.addRow(self.length_warning)
        form.addRow(self.transcript_label)
        form.addRow(self.transcript)
        recognize_row = QHBoxLayout()
        recognize_row.addWidget(self.recognize_button)
        recognize_row.addWidget(self.recognize_cancel)
        recognize_row.addWidget(self.recognize_status, 1)
        form.addRow(recognize_row)
        form.addRow(self.mode_hint)
        form.addRow(self.lora_row)
        train_row = QHBoxLayout()  # its own row, beside the LoRA it makes: three buttons in one row
        train_row.addWidget(self.train_button)  # widen the panel past an 800 px window
        train_row.addStretch(1)
        form.addRow(train_row)
        manage = QHBoxLayout()
        manage.addWidget(self.play_button)
        manage.addStretch(1)
        manage.addWidget(self.delete_button)
        form.addRow(manage)
        form.addRow(self.output_line)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.library_box, 2)
        layout.addWidget(self.detail_box, 3)

        self._transcript_timer = QTimer(self)
        self._transcript_timer.setSingleShot(True)
        self._transcript_timer.setInterval(TRANSCRIPT_SETTLE_MS)
        self._transcript_timer.timeout.connect(self._save_transcript)

        self.list.currentItemChanged.connect(lambda *_: self._show_selected())
        self.record_button.clicked.connect(self.recordRequested)
        self.import_button.clicked.connect(self.import_dialog)
        self.delete_button.clicked.connect(self.delete_selected)
        self.play_button.clicked.connect(self.play_voice)
        self.reencode_button.clicked.connect(self.reencode_selected)
        self.train_button.clicked.connect(self.trainRequested)
        self.play_selection.clicked.connect(self.play_trim_selection)
        self.trim_button.clicked.connect(self.apply_trim)
        self.normalise_button.clicked.connect(self.normalise_selected)
        self.trim_silence_button.clicked.connect(self.trim_silence_selected)
        self.undo_button.clicked.connect(self.undo_edit)
        undo = QShortcut(QKeySequence(QKeySequence.StandardKey.Undo), self)
        undo.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)  # text fields keep their own
        undo.activated.connect(self.undo_edit)
        self.name.editingFinished.connect(self._rename)
        self.rate.valueChanged.connect(self._set_rate)
        self.transcript.textChanged.connect(self._transcript_changed)
        self.waveform.selectionChanged.connect(lambda *_: self._update_info())
        self.recognize_button.clicked.connect(self.recognize_selected)
        self.recognize_cancel.clicked.connect(self.cancel_recognition)
        if transcriber is not None:
            transcriber.progress.connect(self._recognition_progress)
            transcriber.finished.connect(self._recognized)
            transcriber.failed.connect(self._recognition_failed)
            transcriber.cancelled.connect(self._recognition_cancelled)
        self._recognition_notes: dict[str, str] = {}  # voice id -> last failure / cancel note
        self._recognition_progress_of: dict[str, float] = {}  # voice id -> fraction, while running
        self._manual: set[str] = set()  # voice ids whose recognition may replace a typed transcript
        # New voices are decoded and written by a worker; these are its jobs not finished yet, in
        # order (GUI-side, so the list changes only when the window has handled each result).
        self.importer = VoiceImporter(library, self)
        self._imports: list[ImportJob] = []
        self._cancelled: list[str] = []  # what was cancelled while the queue was busy, for the note
        self._preloaded: tuple[str, np.ndarray] | None = None  # a new voice's samples, read by the worker
        self.importer.started.connect(lambda _job: self.import_status.show_jobs(self._imports))
        self.importer.progress.connect(lambda f, eta: self.import_status.show_jobs(self._imports, f, eta))
        self.importer.imported.connect(self._imported)
        self.importer.failed.connect(self._import_failed)
        self.importer.cancelled.connect(self._import_cancelled)
        self.import_status.cancelClicked.connect(self.cancel_import)
        self.lora_row.changed.connect(self._lora_changed)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        self.library_box.setTitle(self.tr("Voices"))
        self.detail_box.setTitle(self.tr("Selected voice"))
        self.record_button.setText(self.tr("Record…"))
        self.import_button.setText(self.tr("Import…"))
        self.delete_button.setText(self.tr("Delete"))
        self.play_button.setText(self.tr("Play voice"))
        self.reencode_button.setText(self.tr("Re-encode"))
        self.train_button.setText(self.tr("Train this voice…"))
        self.train_button.setToolTip(
            self.tr("Fine-tune the model on recordings of this voice for a closer likeness (needs a GPU)")
        )
        self.reencode_button.setToolTip(
            self.tr("Forget this voice's cached encoding: the next Speak encodes its recording again.")
        )
        self.set_playing(self._playing_voice)
        self.wave_hint.setText(
            self.tr("Drag across the waveform to select a part; drag the handles to adjust it.")
        )
        self.waveform.setToolTip(self.wave_hint.text())
        self.play_selection.setText(self.tr("Play selection"))
        self.trim_button.setText(self.tr("Trim to selection"))
        self.trim_silence_button.setText(self.tr("Trim silence"))
        self.trim_silence_button.setToolTip(self.tr("Cut the silence before and after the speech"))
        self.normalise_button.setText(self.tr("Normalise loudness"))
        self.normalise_button.setToolTip(self.tr("Bring the speech to a standard loudness, without clipping"))
        self.undo_button.setText(self.tr("Undo"))
        self.undo_button.setToolTip(self.tr("Undo the last trim or loudness change (Ctrl+Z)"))
        self.name_label.setText(self.tr("Name:"))
        self.rate_label.setText(self.tr("Speaking rate:"))
        self.rate.setSpecialValueText(self.tr("script's"))
        self.rate.setToolTip(
            self.tr("How fast this voice speaks in scripts; “script's” follows the script's rate")
        )
        self.transcript_label.setText(self.tr("Transcript (the exact words spoken, optional):"))
        self.transcript.setPlaceholderText(self.tr("e.g. Hello, this is my voice."))
        self.drop_hint.setText(self.tr("Tip: drop audio files here to import them."))
        self.recognize_button.setText(self.tr("Recognize words"))
        self.recognize_cancel.setText(self.tr("Cancel"))
        self.import_status.retranslate()
        self.lora_row.retranslate()
        self._update_hint()
        self._update_info()

    # --- library ----------------------------------------------------------------------------
    def voices(self) -> list[Voice]:
        return self.library.list()

    def selected(self) -> Voice | None:
        row = self.list.currentRow()  # not currentItem(): see ui/views/segment_table.py on None
        if not 0 <= row < self.list.count():
            return None
        item = self.list.item(row)
        try:
            return self.library.get(item.data(Qt.ItemDataRole.UserRole))
        except VoxDeskError:
            return None

    def refresh(self, select_id: str | None = None) -> None:
        current = select_id or (self.selected().id if self.selected() else None)
        self.list.blockSignals(True)
        self.list.clear()
        icon = self.style().standardIcon(QStyle.StandardPixmap.SP_MediaVolume)
        for voice in self.library.list():
            # the badge: a voice with a LoRA speaks with its own fine-tuned weights
            item = QListWidgetItem(icon, f"{voice.name}  [{self.tr('LoRA')}]" if voice.lora else voice.name)
            item.setData(Qt.ItemDataRole.UserRole, voice.id)
            lora = f" · {self.tr('LoRA: {0}').format(voice.lora)}" if voice.lora else ""
            item.setToolTip(f"{format_seconds(voice.duration)} · {voice.source}{lora}")
            self.list.addItem(item)
            if voice.id == current:
                self.list.setCurrentItem(item)
        if self.list.currentRow() < 0 and self.list.count():
            self.list.setCurrentRow(0)
        self.list.blockSignals(False)
        self._show_selected()

    def _show_selected(self) -> None:
        self._transcript_timer.stop()
        voice = self.selected()
        self.detail_box.setEnabled(voice is not None)
        self.name.setText(voice.name if voice else "")
        self.rate.blockSignals(True)
        self.rate.set_value_or_none(voice.rate if voice else None)
        self.rate.blockSignals(False)
        self.transcript.blockSignals(True)
        self.transcript.setPlainText(voice.transcript if voice else "")
        self.transcript.blockSignals(False)
        self._audio = None
        if voice is not None and self._preloaded is not None and self._preloaded[0] == voice.id:
            self._audio = self._preloaded[1]
        elif voice is not None:
            try:
                self._audio = self.library.audio(replace(voice, trim_start=0.0, trim_end=None))
            except VoxDeskError as err:
                self.dialogs.error(self, report(err))
        self.waveform.set_samples(self._audio)
        if voice is not None and self._audio is not None:
            rate = voice.sample_rate
            end = len(self._audio) if voice.trim_end is None else int(round(voice.trim_end * rate))
            self.waveform.set_selection(int(round(voice.trim_start * rate)), end)
        self._update_hint()
        self._update_info()
        self._update_recognition()
        self.lora_row.show_voice(voice)

    def _lora_changed(self, voice_id: str) -> None:
        self.refresh(select_id=voice_id)
        self.voicesChanged.emit()

    # --- what fits -------------------------------------------------------------------------
    def set_fit(self, limits: ModelLimits | None, script: list[tuple[str | None, str]]) -> None:
        """The loaded model's limits and the script's (voice, text) segments, for the guide."""
        self._limits, self._script = limits, list(script)
        self._update_guide()

    def usable_seconds(self, voice: Voice | None = None) -> float | None:
        """How much of ``voice`` (default: the selected one) the model can use for the segments it
        speaks (all segments when it speaks none); None without a model or a usable mode."""
        voice = voice or self.selected()
        if self._limits is None or voice is None:
            return None
        if voice.id == getattr(self.selected(), "id", None):
            voice = replace(voice, transcript=self.transcript.toPlainText().strip())
        try:
            mode = resolve_mode(voice, self._architecture, controls=self._controls)
        except VoxDeskError:
            return None
        own = [t for name, t in self._script if name and name.casefold() == voice.name.casefold()]
        texts = own or [t for _name, t in self._script]
        return usable_seconds(self._limits, texts, mode, voice.transcript)

    def _update_guide(self) -> None:
        voice = self.selected() if hasattr(self, "list") else None
        if voice is None or self._audio is None:
            self.guide.set_values(0.0, None, (0.0, 0.0))
            return
        rate = voice.sample_rate
        start, end = self.waveform.selection()
        self.guide.set_values(
            len(self._audio) / rate,
            self.usable_seconds(voice),
            (start / rate, end / rate),
            cut=self._limits is not None and self._limits.fixed_conditioning,
            transcript=self._controls is None or "prompt" in self._controls,
        )

    def select_usable(self) -> None:
        """Shrink the waveform selection to what the model can use (the Fix for "too long")."""
        voice, usable = self.selected(), self.usable_seconds()
        if voice is None or self._audio is None or usable is None:
            return
        start, end = self.waveform.selection()
        self.waveform.set_selection(start, min(end, start + int(usable * voice.sample_rate)))

    def _update_info(self) -> None:
        voice = self.selected() if hasattr(self, "list") else None
        self.undo_button.setEnabled(self.history.can_undo(voice))
        advice = voice is not None and too_long(voice)
        if advice:
            self.length_warning.setText(
                self.tr(
                    "⚠ This reference is {0} s long; {1}–{2} s of clear speech gives the same likeness "
                    "and every segment starts faster. Trim it to the best part."
                ).format(f"{voice.duration:.0f}", *(f"{s:.0f}" for s in RECOMMENDED_SECONDS))
            )
        self.length_warning.setVisible(advice)
        if hasattr(self, "guide"):
            self._update_guide()
        if voice is None or self._audio is None:
            self.info.setText("")
            return
        start, end = self.waveform.selection()
        gain = self.tr(", normalised") if voice.normalised else ""
        self.info.setText(
            self.tr("{0} in use of {1} · selection {2}{3}").format(
                format_seconds(voice.duration),
                format_seconds(voice.raw_duration),
                format_seconds((end - start) / voice.sample_rate),
                gain,
            )
        )

    def set_controls(self, controls: frozenset[str] | None) -> None:
        """The loaded family's controls: the LoRA row shows only for a family that takes one
        (None: not known yet, shown as before)."""
        self.lora_row.setVisible(controls is None or "lora" in controls)
        self._controls = controls
        self._update_hint()
        self._update_guide()

    def set_architecture(self, architecture: str) -> None:
        """ "voxcpm2" or "voxcpm": the transcript hint depends on which modes the model has."""
        self._architecture = architecture
        self._update_hint()
        self._update_guide()

    def _update_hint(self) -> None:
        voice = self.selected() if hasattr(self, "list") else None
        if voice is None:
            self.mode_hint.setText("")
            return
        typed = replace(voice, transcript=self.transcript.toPlainText())
        try:
            mode = resolve_mode(typed, self._architecture, controls=self._controls)
        except VoxDeskError as err:
            self.mode_hint.setText(str(err))
            return
        if self._controls is not None and "prompt" not in self._controls:  # IndexTTS: never a transcript
            self.mode_hint.setText(
                self.tr("Mode: reference. The recording alone sets the voice; this model reads no "
                        "transcript.")
            )
            return
        self.mode_hint.setText(
            {
                "continuation": self.tr(
                    "Mode: continuation. The model carries on from this recording and its transcript, "
                    "for the closest likeness. The transcript must match the words exactly."
                ),
                "reference": self.tr(
                    "Mode: reference (VoxCPM2). The recording alone sets the voice. Type the exact words "
                    "spoken to use continuation mode for a closer likeness."
                ),
            }.get(mode, mode)
        )

    # --- actions ----------------------------------------------------------------------------
    def _run(self, action: Callable[[], T], context: str) -> T | None:
        """``action()``, or None after showing its failure as one line (traceback to the log)."""
        try:
            return action()
        except Exception as exc:  # noqa: BLE001 - shown as one line, traceback to the log
            self.dialogs.error(self, report(exc, context))
            return None

    def import_dialog(self, name: str | None = None) -> None:
        """Ask for a file and import it (as ``name`` when given, e.g. for an unknown [tag])."""
        path = self.dialogs.open_audio(self)
        if path is not None:
            self.import_files([path], name)

    def select_name(self, name: str) -> bool:
        """Select the voice called ``name`` (any case); False when there is none."""
        voice = self.library.find(name)
        if voice is not None:
            self.refresh(select_id=voice.id)
        return voice is not None

    # --- new voices (decoded and written by the importer's worker) ----------------------------
    @property
    def importing(self) -> bool:
        """An import or a recording's save is queued or running."""
        return bool(self._imports)

    def import_files(self, files: list[Path], name: str | None = None) -> None:
        """Import each file as a new voice, in the background and in order (after any import
        already running)."""
        for path in files:
            self._imports.append(self.importer.import_file(Path(path), name))
        self.import_status.show_jobs(self._imports)

    def add_recording(self, samples: np.ndarray, sample_rate: int, name: str) -> None:
        self._imports.append(self.importer.save_recording(samples, sample_rate, name))
        self.import_status.show_jobs(self._imports)

    def cancel_import(self) -> None:
        """Cancel the imports not finished (Cancel, or Esc in the window); a recording not yet
        saved is discarded only when the user agrees."""
        jobs = [job for job in self._imports if not job.cancel.is_set()]
        takes = [job for job in jobs if job.recording]
        if takes:
            question = self.tr("Discard the recording “{0}”? It is not saved yet.").format(takes[0].label)
            if not self.dialogs.confirm(self, question):
                jobs = [job for job in jobs if not job.recording]
        for job in jobs:
            job.cancel.set()

    def shutdown(self) -> None:
        """The window closes: stop the imports (their files stay where they are), save recordings,
        let a LoRA being copied finish."""
        self.importer.shutdown()
        if self.lora_row.worker is not None:
            self.lora_row.worker.join()

    def _finish_import(self, job: ImportJob) -> None:
        if job in self._imports:
            self._imports.remove(job)
        self.import_status.show_jobs(self._imports)

    def _imported(self, job: ImportJob, voice: Voice, samples: np.ndarray | None) -> None:
        self._finish_import(job)
        # The user may have been editing another voice meanwhile: keep what they typed (as leaving
        # the field would) before the new voice is shown.
        self.flush()
        self._rename()
        self._preloaded = None if samples is None else (voice.id, samples)
        try:
            self.refresh(select_id=voice.id)
        finally:
            self._preloaded = None
        self.voicesChanged.emit()
        self._start_recognition(voice, samples=samples)

    def _import_failed(self, job: ImportJob, message: str) -> None:
        self._finish_import(job)
        self.dialogs.error(self, message)

    def _import_cancelled(self, job: ImportJob) -> None:
        self._cancelled.append(job.label)
        self._finish_import(job)
        if self._imports:
            return
        if len(self._cancelled) == 1:
            note = self.tr("Import of “{0}” cancelled; the voice library is unchanged.")
        else:
            note = self.tr("{1} imports cancelled (“{0}” and more); the voice library is unchanged.")
        self.import_status.show_note(note.format(self._cancelled[0], len(self._cancelled)))
        self._cancelled.clear()

    def _rename(self) -> None:
        voice = self.selected()
        new = self.name.text().strip()
        if voice is None or new == voice.name:
            return
        renamed = self._run(lambda: self.library.rename(voice, new), "renaming a voice")
        if renamed is None:
            self.name.setText(voice.name)
            return
        self.voiceRenamed.emit(voice.name, renamed.name)
        self.refresh(select_id=voice.id)
        self.voicesChanged.emit()

    def _set_rate(self) -> None:
        voice, rate = self.selected(), self.rate.value_or_none()
        if voice is None or rate == voice.rate:
            return
        if self._run(lambda: self.library.set_rate(voice, rate), "saving") is not None:
            self.refresh(select_id=voice.id)
            self.voicesChanged.emit()  # the script's segments follow the voice's new rate

    def delete_selected(self) -> None:
        voice = self.selected()
        if voice is None:
            return
        question = self.tr("Delete the voice “{0}”? Its recording is removed from the library.").format(
            voice.name
        )
        if not self.dialogs.confirm(self, question):
            return
        self._run(lambda: self.library.delete(voice), "deleting a voice")
        self.refresh()
        self.voicesChanged.emit()

    def _transcript_changed(self) -> None:
        self._update_hint()
        self._update_recognition()
        self._update_guide()
        self._transcript_timer.start()

    def _save_transcript(self) -> None:
        voice = self.selected()
        if voice is not None and voice.transcript != self.transcript.toPlainText().strip():
            self._run(lambda: self.library.set_transcript(voice, self.transcript.toPlainText()), "saving")

    def flush(self) -> None:
        """Save a transcript still being typed (before speaking or closing)."""
        if self._transcript_timer.isActive():
            self._transcript_timer.stop()
            self._save_transcript()

    def apply_trim(self) -> None:
        voice = self.selected()
        if voice is None or self._audio is None:
            return
        start, end = self.waveform.selection()
        rate = voice.sample_rate
        stop = None if end >= len(self._audio) else end / rate
        self._edit(lambda: self.library.trim(voice, start / rate, stop), "trimming a voice")

    def trim_silence_selected(self) -> None:
        voice = self.selected()
        if voice is not None:
            self._edit(lambda: trim_silence(self.library, voice), "trimming silence")

    def normalise_selected(self) -> None:
        voice = self.selected()
        if voice is not None:
            self._edit(lambda: normalise_loudness(self.library, voice), "normalising")

    def _edit(self, step: Callable[[], Voice], context: str) -> None:
        """Run one preparation step on the selected voice and remember how to undo it."""
        before = self.selected()
        after = self._run(step, context)
        if before is not None and after is not None:
            self.history.record(before, after)
            self.refresh(select_id=after.id)

    def undo_edit(self) -> None:
        """Put the selected voice's trim and gain back as they were before the last step."""
        voice = self.selected()
        if voice is not None and self.history.can_undo(voice):
            if self._run(lambda: self.history.undo(self.library, voice), "undoing") is not None:
                self.refresh(select_id=voice.id)

    def reencode_selected(self) -> None:
        """Forget the voice's cached latents (every model); the next Speak encodes it afresh."""
        from app.voices import latents

        voice = self.selected()
        if voice is None:
            return
        if self._run(lambda: latents.clear(self.library, voice), "re-encoding a voice") is not None:
            self.latentsCleared.emit(voice.id)
            self.info.setText(self.tr("The voice will be encoded again at the next Speak."))

    def set_playing(self, playing: bool) -> None:
        """A voice clip is playing: "Play voice" becomes "Stop"."""
        self._playing_voice = playing
        icon = QStyle.StandardPixmap.SP_MediaStop if playing else QStyle.StandardPixmap.SP_MediaPlay
        self.play_button.setIcon(self.style().standardIcon(icon))
        self.play_button.setText(self.tr("Stop") if playing else self.tr("Play voice"))

    def play_voice(self) -> None:
        if self._playing_voice:
            self.stopRequested.emit()
            return
        voice = self.selected()
        if voice is not None:
            samples = self._run(lambda: self.library.audio(voice), "playing a voice")
            if samples is not None:
                offset = int(round(voice.trim_start * voice.sample_rate))
                self.playRequested.emit(samples, voice.sample_rate, f"voice:{voice.id}:{offset}")

    def play_trim_selection(self) -> None:
        voice = self.selected()
        if voice is not None and self._audio is not None:
            start, end = self.waveform.selection()
            self.playRequested.emit(
                self._audio[start:end].copy(), voice.sample_rate, f"voice:{voice.id}:{start}"
            )

    def show_playhead(self, source: str, seconds: float | None) -> None:
        """The playhead of a voice clip (``source`` from :meth:`play_voice`); None hides it."""
        voice = self.selected()
        kind, _, rest = source.partition(":")
        voice_id, _, offset = rest.partition(":")
        if seconds is None or kind != "voice" or voice is None or voice.id != voice_id:
            self.waveform.set_playhead(None)
            return
        self.waveform.set_playhead(int(offset) + int(round(seconds * voice.sample_rate)))

    # --- speech recognition -----------------------------------------------------------------
    def _start_recognition(
        self, voice: Voice, manual: bool = False, samples: np.ndarray | None = None
    ) -> None:
        """Transcribe ``voice`` in the background; a new voice only when it has no transcript.
        ``samples``: its audio as used, when already read (a new voice's, by the importer)."""
        t = self.transcriber
        if t is None or not t.available or (voice.transcript and not manual):
            self._update_recognition()
            return
        if samples is None:
            samples = self._run(lambda: self.library.audio(voice), "reading a voice")
        if samples is None:
            return
        self._recognition_notes.pop(voice.id, None)
        self._recognition_progress_of[voice.id] = 0.0
        if manual:
            self._manual.add(voice.id)
        t.start(voice.id, samples, voice.sample_rate)
        self._update_recognition()

    def recognizer_changed(self) -> None:
        """A recognizer was installed or chosen (model manager): load it afresh next time."""
        if self.transcriber is not None:
            self.transcriber.reload()
        self._update_recognition()

    def recognize_selected(self) -> None:
        """The Recognize button: (re)transcribe the selected voice, replacing its transcript."""
        voice = self.selected()
        if voice is None:
            return
        self.flush()
        voice = self.selected()
        if voice.transcript and not voice.transcript_recognized:
            question = self.tr("Replace the transcript you typed with the words recognized in the recording?")
            if not self.dialogs.confirm(self, question):
                return
        self._start_recognition(voice, manual=True)

    def cancel_recognition(self) -> None:
        voice = self.selected()
        if voice is not None and self.transcriber is not None:
            self.transcriber.cancel(voice.id)

    def _is_selected(self, voice_id: str) -> bool:
        row = self.list.currentRow()  # not currentItem(): see ui/views/segment_table.py on None
        return 0 <= row < self.list.count() and self.list.item(row).data(Qt.ItemDataRole.UserRole) == voice_id

    def _recognition_progress(self, voice_id: str, fraction: float) -> None:
        self._recognition_progress_of[voice_id] = fraction
        if self._is_selected(voice_id):
            self._update_recognition()

    def _recognized(self, voice_id: str, transcript: object) -> None:
        manual = voice_id in self._manual
        self._finish_recognition(voice_id)
        try:
            voice = self.library.get(voice_id)
        except VoxDeskError:
            return  # deleted meanwhile
        text = transcript.text  # type: ignore[attr-defined]
        selected = self._is_selected(voice_id)
        typed = self.transcript.toPlainText().strip() if selected else voice.transcript
        if typed and not manual and not voice.transcript_recognized:
            # The user typed while recognition ran: their words win.
            kept = self.tr("Recognized “{0}”; your transcript was kept.")
            self._recognition_notes[voice_id] = kept.format(text)
        else:
            saved = self._run(lambda: self.library.set_transcript(voice, text, recognized=True), "saving")
            if saved is not None and selected:
                self._transcript_timer.stop()
                self.transcript.blockSignals(True)
                self.transcript.setPlainText(saved.transcript)
                self.transcript.blockSignals(False)
        if selected:
            self._update_hint()
        self._update_recognition()

    def _recognition_failed(self, voice_id: str, message: str) -> None:
        self._finish_recognition(voice_id)
        self._recognition_notes[voice_id] = message
        self._update_recognition()

    def _recognition_cancelled(self, voice_id: str) -> None:
        self._finish_recognition(voice_id)
        note = self.tr("Recognition cancelled; type the words, or press Recognize words.")
        self._recognition_notes[voice_id] = note
        self._update_recognition()

    def _finish_recognition(self, voice_id: str) -> None:
        self._recognition_progress_of.pop(voice_id, None)
        self._manual.discard(voice_id)

    def _update_recognition(self) -> None:
        """The Recognize row: progress, the last note, what recognition would add, or nothing."""
        if not hasattr(self, "_recognition_notes"):
            return
        voice = self.selected()
        t = self.transcriber
        available = t is not None and t.available
        running = voice is not None and voice.id in self._recognition_progress_of
        self.recognize_button.setEnabled(voice is not None and available and not running)
        self.recognize_cancel.setVisible(running)
        if voice is None:
            status = ""
        elif running:
            status = self.tr("Recognizing the words spoken… {0:.0f}%").format(
                100 * self._recognition_progress_of[voice.id]
            )
        elif voice.id in self._recognition_notes:
            status = self._recognition_notes[voice.id]
        elif voice.transcript_recognized and voice.transcript == self.transcript.toPlainText().strip():
            status = self.tr("Recognized automatically: listen, and correct any word that is wrong.")
        elif not available:
            status = self.tr(
                "Speech recognition is not installed. With it (Models… → Speech recognition), VoxDesk "
                "fills in the words spoken in a new recording for the closest likeness."
            )
        else:
            status = ""
        self.recognize_status.setText(status)
        self.recognize_button.setToolTip(
            "" if available else self.tr("Download a speech recognizer in Models… to use this.")
        )

    # --- drag and drop ----------------------------------------------------------------------
    @staticmethod
    def _audio_paths(event: QDragEnterEvent | QDropEvent) -> list[Path]:
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        return [Path(u.toLocalFile()) for u in urls if Path(u.toLocalFile()).suffix.lower() in AUDIO_SUFFIXES]

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if self._audio_paths(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        paths = self._audio_paths(event)
        if paths:
            event.acceptProposedAction()
            self.import_files(paths)
