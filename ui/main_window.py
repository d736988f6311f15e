"""The VoxDesk main window: voices on the left, the script in the middle, transport at the bottom.

It wires the views to the app logic (voice library, project, export, player) and to the engine
through :class:`EngineClient` only. Everything modal goes through ``self.dialogs`` (a
:class:`Dialogs`), so tests answer questions without a blocking dialog.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QDateTime, QLocale, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QMainWindow,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app import project as projects
from app import quarantine
from app.errors import VoxDeskError
from app.text import normalize
from app.voices.library import VoiceLibrary
from ui import gc_guard, wheel_guard
from ui.backcheck import BackCheck
from ui.book_actions import BookActions
from ui.dialogs import Dialogs
from ui.dubbing import Dubbing
from ui.engine_host import EngineClient, ModelInfo
from ui.errors import report
from ui.local_api import LocalApi
from ui.model_state import ModelState
from ui.playback import CLIP, Playback, default_sink, describe_output
from ui.relaunch import relaunch
from ui.script_files import Reopened, reopen_recent
from ui.settings import Settings
from ui.speak_session import Builder, SpeakSession
from ui.stale_takes import describe_changes
from ui.train.entry import TrainEntry
from ui.transcriber import Transcriber
from ui.views.pacing import GAPS
from ui.views.script_editor import ScriptEditor
from ui.views.segment_table import SegmentRow
from ui.views.transport import TransportBar
from ui.views.voice_panel import VoicePanel
from ui.window_actions import WindowActions

log = logging.getLogger(__name__)
NORMALIZE_TIMEOUT_S = 120.0  # a first text waits for the grammars to load in the child
LARGE_SCRIPT = 20_000  # characters: above this an edit is split into segments on a worker thread


class MainWindow(QMainWindow):
    """``sink`` is the audio output (default: the sound card via sounddevice); tests pass a
    ``CaptureSink``. ``library`` defaults to the user's voice library."""

    _segmented = Signal(int, object)  # generation, jobs (or the exception): from the segmenter thread

    def __init__(
        self,
        settings: Settings | None = None,
        dialogs: Dialogs | None = None,
        sink: Any = None,
        library: VoiceLibrary | None = None,
    ) -> None:
        super().__init__()
        gc_guard.install()
        wheel_guard.install()
        self.settings = settings or Settings()
        self.dialogs = dialogs or Dialogs(self.settings)
        self.library = library or VoiceLibrary()
        self._restored_at: float | None = None  # when the restored autosave with unsaved changes was made
        self._reopened = Reopened()  # no autosave: the most recent script file was reopened
        self.project = self._open_last_project()
        self.model = ModelState()
        self.input_stream_factory: Any = None  # None: the microphone via sounddevice (tests replace it)
        self.relaunch = relaunch  # starts a new VoxDesk and quits this one (tests replace it)
        self._voice_index: dict[str, Any] = {}
        self._prompts: dict[tuple[str, str, str], Any] = {}
        self._segment_generation = 0  # bumped per refresh: a late background result is dropped
        self._segmenting = False
        self._segmented.connect(self._apply_segments)
        self._speak_when_loaded = False
        self._closed = False
        self.keep_unsaved_on_close = False  # a restart: unsaved work stays in the autosave, unasked
        self._stopping = False
        self._playing_index: int | None = None  # the segment under the playhead
        self._playing_at = 0.0

        self.playback = Playback(
            sink if sink is not None else default_sink(self.settings.output_device), self
        )
        self.client = EngineClient(self)
        self.api = LocalApi(self.library.root, self)
        self.session = SpeakSession(self.client, self.playback, self)

        self.transcriber = Transcriber(lambda: self.settings.recognizer_dir, self)
        self.voices = VoicePanel(self.library, self.dialogs, transcriber=self.transcriber)
        self.backcheck = BackCheck(self)
        self.script = ScriptEditor()
        self.tabs = QTabWidget()  # the script, and the subtitle view once subtitles are imported
        self.dubbing = Dubbing(self)
        self.transport = TransportBar()
        self.training = TrainEntry(self)
        self.actions = WindowActions(self)
        self.books = BookActions(self)
        self._autosave_timer = QTimer(self)
        self._autosave_timer.setSingleShot(True)
        self._autosave_timer.setInterval(400)
        self._autosave_timer.timeout.connect(self._autosave_when_split)
        self._build_layout()
        self._build_status_bar()
        self._connect()
        self._load_project_into_views()
        self._update_title()
        self._note_restored()
        self.resize(1280, 800)
        geometry, state = self.settings.window_state()
        if geometry:
            self.restoreGeometry(geometry)
        if state:
            self.restoreState(state)
        QTimer.singleShot(0, self.show_problems)  # files set aside while starting: one message

    # --- construction -----------------------------------------------------------------------
    def _build_layout(self) -> None:
        splitter = QSplitter(Qt.Orientation.Horizontal)
        # The voice panel scrolls rather than forcing the window taller than a small screen.
        voices = QScrollArea()
        voices.setWidget(self.voices)
        voices.setWidgetResizable(True)
        voices.setFrameShape(QFrame.Shape.NoFrame)
        voices.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        bar = voices.style().pixelMetric(voices.style().PixelMetric.PM_ScrollBarExtent)
        voices.setMinimumWidth(self.voices.minimumSizeHint().width() + bar + 2)
        splitter.addWidget(voices)
        self.tabs.setDocumentMode(True)
        self.tabs.setTabBarAutoHide(True)
        self.tabs.addTab(self.script, self.tr("Script"))
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([360, 920])
        splitter.setChildrenCollapsible(False)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(10, 10, 10, 0)
        layout.setSpacing(6)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.transport)
        self.setCentralWidget(central)

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.device_label = QLabel()
        self.model_label = QLabel()
        self.engine_label = QLabel()
        for label in (self.device_label, self.model_label, self.engine_label):
            label.setContentsMargins(8, 0, 8, 0)
            bar.addPermanentWidget(label)
        self._show_model_state()

    def _connect(self) -> None:
        host = self.client.host
        host.stateChanged.connect(self._engine_state)
        host.loadProgress.connect(self._load_progress)
        host.loaded.connect(self._model_loaded)
        host.loadFailed.connect(self._model_failed)
        host.deviceChanged.connect(self._device_changed)
        host.latentsEncoded.connect(self._store_latents)
        host.sharedChanged.connect(self.api.attach)
        host.sharedChanged.connect(self.books.attach)
        host.activity.connect(self._engine_activity)
        self.session.segmentChanged.connect(self._segment_changed)
        self.backcheck.changed.connect(self._segment_changed)
        self.session.progressChanged.connect(self._progress_changed)
        self.session.runFinished.connect(self._run_finished)
        self.session.stored.connect(self._schedule_autosave)
        self.session.taken.connect(lambda: self.set_modified(True))  # a new take is unsaved work
        self.session.failedToSave.connect(lambda m: self.dialogs.error(self, m))
        self.script.scriptChanged.connect(self._script_changed)
        self.script.settingsChanged.connect(self._script_settings_changed)
        self.script.pronunciationClicked.connect(self.actions.edit_pronunciation)
        self.script.table.regenerateRequested.connect(self.regenerate)
        self.script.table.settingsRequested.connect(self.actions.edit_segment_settings)
        self.script.table.playRequested.connect(self.play_segment)
        self.script.table.detailsRequested.connect(self.show_failure_details)
        self.script.table.keepSeedRequested.connect(self.keep_seed)
        self.script.table.regenerateStaleRequested.connect(self.regenerate_stale)
        self.script.failure.fixClicked.connect(self.fix_failure)
        self.script.fix_for = self._fix_for
        self.script.pickVoiceForTag.connect(self.pick_voice_for_tag)
        self.script.removeCastForTag.connect(lambda tag: self.set_cast(tag, None))
        self.script.createVoiceForTag.connect(lambda name: self.voices.import_dialog(name))
        self.transport.showFailedClicked.connect(self.show_failed)
        self.voices.voicesChanged.connect(self._voices_changed)
        self.voices.voiceRenamed.connect(self._voice_renamed)
        self.voices.playRequested.connect(self.play_audio)
        self.voices.stopRequested.connect(self.playback.stop)
        self.playback.playhead.connect(self._playhead_moved)
        self.playback.stateChanged.connect(self._playback_state)
        self.voices.recordRequested.connect(self.actions.record_voice)
        self.voices.trainRequested.connect(self.training.train_selected)
        self.voices.latentsCleared.connect(self._forget_prompts)
        self.transport.speakClicked.connect(self.speak)
        self.transport.stopClicked.connect(self.stop)
        self.transport.playPauseClicked.connect(self.play_pause)
        self.transport.exportClicked.connect(self.actions.export)
        self.playback.stateChanged.connect(self.transport.set_playing)
        self.playback.error.connect(self._playback_error)
        for keys, slot in (
            ("Ctrl+Return", self.speak),
            ("Ctrl+Enter", self.speak),
            ("Escape", lambda: (self.stop(), self.voices.cancel_import())),  # Esc stops all that runs
            ("Space", self.play_pause),
            ("Ctrl+P", self.play_pause),
            ("Ctrl+E", self.actions.export),
        ):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.activated.connect(slot)

    # --- project ----------------------------------------------------------------------------
    def _open_last_project(self) -> projects.Project:
        """The most recent autosave (a crash or a normal exit both leave one), else a new script.
        An autosave that cannot be read is set aside and the next one tried; one that needed a
        repair (a broken rule turned off) is set aside as it was and saved again repaired."""
        projects.clean_leftovers()
        for path in projects.autosaves():
            try:
                project = projects.Project.load(path)
            except Exception as exc:  # noqa: BLE001 - whatever is in it, the window opens
                if not isinstance(exc, VoxDeskError):
                    log.exception("Reading the autosave %s failed", path)
                quarantine.set_aside(path, str(exc) or type(exc).__name__)
                continue
            if project.problems:
                quarantine.set_aside(path, "; ".join(project.problems))
                self.project = project
                self.autosave(unsaved=project.unsaved)
            self._restored_at = path.stat().st_mtime if project.unsaved else None
            return project
        project, self._reopened = reopen_recent(self.settings)
        return project

    def _note_restored(self) -> None:
        """A restored autosave with unsaved changes: ``*`` in the title and a one-line note.
        The most recent script reopened instead of an autosave: a note, or why it could not be."""
        if self._reopened.note:
            self.statusBar().showMessage(self._reopened.note, 10_000)
        if self._restored_at is None:
            return
        when = QDateTime.fromSecsSinceEpoch(int(self._restored_at))
        text = QLocale(self.settings.language).toString(when, QLocale.FormatType.ShortFormat)
        self.set_modified(True)
        self.statusBar().showMessage(
            self.tr("Restored unsaved changes from {0}. Save them with Ctrl+S.").format(text)
        )

    def show_problems(self) -> None:
        """One message for what was set aside or skipped since the last one (files that could
        not be read, pronunciation rules that ran out of time)."""
        lines = []
        notices = quarantine.take_notices()
        if notices:
            lines.append(quarantine.message(notices))
        lines += self.project.rules.take_problems()
        if self._reopened.problem:
            lines.append(self._reopened.problem)
            self._reopened = replace(self._reopened, problem="")
        if lines:
            self.dialogs.error(self, "\n\n".join(lines))

    def _load_project_into_views(self) -> None:
        s = self.project.settings
        self.project.controls = self.model.controls
        self.script.set_text(self.project.text)
        self.script.settings.set_values(
            {
                "cfg_value": s.cfg_value,
                "inference_timesteps": s.inference_timesteps,
                "style": s.voice_design,
                "instruction": s.instruction,
                "seed": s.seed,
            }
        )
        self.script.set_normalize(s.normalize)
        self.script.set_pacing(s.rate, {name: getattr(s, name) for name in GAPS})
        self.script.set_cast(self.project.cast)
        self._voices_changed()

    def set_project(self, project: projects.Project) -> None:
        self.stop()
        self.project = project
        self._load_project_into_views()
        self.set_modified(False)
        self.autosave()

    def set_modified(self, modified: bool) -> None:
        """Unsaved changes to the script file: ``*`` in the title until Ctrl+S."""
        self.setWindowModified(modified)
        self._update_title()

    def _update_title(self) -> None:
        path = self.project.path
        name = path.name if path is not None else self.tr("Untitled script")
        self.setWindowTitle(f"{name}[*] — VoxDesk")

    def autosave(self, unsaved: bool | None = None) -> None:
        """Write the autosave copy; it records whether it holds unsaved changes (the title's ``*``)."""
        try:
            self.project.autosave(self.isWindowModified() if unsaved is None else unsaved)
        except Exception as exc:  # noqa: BLE001
            self.dialogs.error(self, report(exc, "autosaving the script"))

    def _autosave_when_split(self) -> None:
        """The timer's autosave waits for a background split (it needs the segments too)."""
        if self._segmenting:
            self._autosave_timer.start()
        else:
            self.autosave()

    def _schedule_autosave(self) -> None:
        self._autosave_timer.start()

    def _script_changed(self) -> None:
        if self.project.text != self.script.text():
            self.set_modified(True)
        self.project.text = self.script.text()
        if len(self.project.text) > LARGE_SCRIPT:
            self._segment_in_background()
        else:
            self._refresh_segments()
        self._schedule_autosave()

    def _segment_in_background(self) -> None:
        """Split a large script on a worker thread (a long paste never blocks the window); the
        rows follow when it is done. Works on a copy: the GUI thread keeps the project."""
        self._segment_generation += 1
        generation, self._segmenting = self._segment_generation, True
        snapshot = replace(self.project, overrides=dict(self.project.overrides))

        def work() -> None:
            try:
                jobs: Any = snapshot.jobs()
            except Exception as exc:  # noqa: BLE001 - shown by the GUI thread
                jobs = exc
            self._segmented.emit(generation, (jobs, snapshot.split_cache))

        threading.Thread(target=work, name="voxdesk-segmenter", daemon=True).start()

    def _apply_segments(self, generation: int, result: Any) -> None:
        if generation != self._segment_generation:
            return  # the text changed again since; a newer result is on its way
        jobs, split = result
        if split is not None and split[0] == self.project.text:
            self.project.split_cache = split  # autosaving needs the same split: not again here
        if isinstance(jobs, Exception):
            self._refresh_segments()  # shows the error the usual way
        else:
            self._refresh_segments(jobs)

    def _sync_segments(self) -> None:
        """Before speaking: a background split still running is replaced by one done now."""
        if self._segmenting:
            self._refresh_segments()

    def _script_settings_changed(self) -> None:
        values = self.script.settings.values()
        try:
            self.project.with_settings(
                cfg_value=values["cfg_value"],
                inference_timesteps=values["inference_timesteps"],
                voice_design=values["style"],
                instruction=values["instruction"],
                default_voice=self.script.default_voice(),
                normalize=self.script.normalize.isChecked(),
                seed=values["seed"],
                rate=self.script.rate.value(),
                **self.script.pauses.values(),
            )
        except VoxDeskError as err:
            self.dialogs.error(self, str(err))
        self.set_modified(True)
        self._refresh_segments()
        self._schedule_autosave()

    def _voices_changed(self) -> None:
        voices = self.library.list()
        names = [v.name for v in voices]
        self.project.voice_rates = {v.name.casefold(): v.rate for v in voices if v.rate is not None}
        default = self.project.settings.default_voice
        if default is None and names and not self.project.text:
            default = names[0]
        self.script.set_voices(names, default)
        if self.script.default_voice() != self.project.settings.default_voice:
            self.project.with_settings(default_voice=self.script.default_voice())
            self._schedule_autosave()
        self._refresh_segments()

    def _voice_renamed(self, old: str, new: str) -> None:
        """The script's default voice follows a rename (``[Name]`` tags in the text are the user's)."""
        if (self.project.settings.default_voice or "").casefold() == old.casefold():
            self.project.with_settings(default_voice=new)
        for character, voice in list(self.project.cast.items()):
            if voice.casefold() == old.casefold():
                self.project.set_cast(character, new)
        self.script.set_cast(self.project.cast)

    def _refresh_segments(self, jobs: list[projects.SegmentJob] | None = None) -> None:
        self._segment_generation += 1
        self._segmenting = False
        self.session.reset(self.project, jobs)
        self.backcheck.prune()
        if self.project.rules.problems:
            QTimer.singleShot(0, self.show_problems)
        self.script.table.set_rows([self._row(i) for i in range(len(self.session.segments))])
        self.script.update_failure()
        limits = self.model.info.limits if self.model.info is not None else None
        self.voices.set_fit(limits, [(s.job.voice, s.job.text) for s in self.session.segments])
        if not self.session.busy():
            self._progress_changed(0.0, None)

    def refresh_and_save(self) -> None:
        """After the pronunciation list or a segment's settings changed."""
        self.set_modified(True)
        self._refresh_segments()
        self._schedule_autosave()

    def _row(self, index: int) -> SegmentRow:
        seg = self.session.segments[index]
        job = seg.job
        check, takes, kept = self.backcheck.cell(seg)
        return SegmentRow(
            text=job.display_text,
            voice=job.voice or self.tr("(model voice)"),
            status=seg.status,
            progress=self.session.fraction(index),
            seconds=seg.seconds,
            message=seg.message,
            custom=job.key in self.project.overrides,
            takes=takes,
            kept=kept,
            check=check,
            seed=seg.seed,
            stale=describe_changes(seg.stale) if seg.status == "done" else "",
            playing=index == self._playing_index,
            position=self._playing_at if index == self._playing_index else None,
        )

    def _segment_changed(self, index: int) -> None:
        if index < len(self.session.segments):
            self.script.table.update_row(index, self._row(index))
            if self.session.segments[index].status == "failed" or self.script.failure.row == index:
                self.script.update_failure()

    # --- failures ---------------------------------------------------------------------------
    def show_failed(self) -> None:
        """The "show" link of the run summary: select the first failed segment."""
        failed = self.session.failed_indices()
        if failed:
            self.script.table.selectRow(failed[0])
            self.script.table.scrollTo(self.script.table.model().index(failed[0], 0))
            self.script.table.setFocus()
            self.script.update_failure()

    def failure_details(self, index: int) -> str:
        seg = self.session.segments[index]
        job = seg.job
        lines = [
            self.tr("Segment {0} · voice: {1}").format(index + 1, job.voice or self.tr("(model voice)")),
            job.display_text,
            "",
            seg.message,
        ]
        if seg.detail:
            from ui.errors import log_file

            lines += ["", self.tr("Log ({0}):").format(log_file()), seg.detail]
        return "\n".join(lines)

    def _fix_for(self, index: int, message: str) -> str:
        """The Fix a failed segment gets: a voice name that names no voice is fixed by picking
        one (whatever language the message is in); a too-long voice by trimming it."""
        from ui.views.failure_bar import fix_for

        voice = self.session.segments[index].job.voice if index < len(self.session.segments) else None
        if voice and self.library.find(voice) is None:
            return "pick_voice"
        return fix_for(message)

    def show_failure_details(self, index: int) -> None:
        if 0 <= index < len(self.session.segments) and self.session.segments[index].status == "failed":
            self.dialogs.info(self, self.failure_details(index))

    def fix_failure(self, index: int, fix: str) -> None:
        """The failure strip's Fix button: trim the voice, or pick an existing one for the tag."""
        if not 0 <= index < len(self.session.segments):
            return
        job = self.session.segments[index].job
        if fix == "trim" and job.voice:
            self.voices.select_name(job.voice)
            self.voices.select_usable()
            self.voices.waveform.setFocus()
            self.statusBar().showMessage(
                self.tr("Drag on the waveform to choose the part to keep, then press “Trim to selection”."),
                10_000,
            )
        elif fix == "pick_voice" and job.voice:
            self.pick_voice_for_tag(job.voice)

    def pick_voice_for_tag(self, tag: str) -> None:
        """Quick fix for an unknown ``[tag]``: choose an existing voice to speak it (no voices:
        import one). The script keeps its tag; the choice goes into the project's cast."""
        names = [v.name for v in self.library.list()]
        if not names:
            self.voices.import_dialog(tag)
            return
        question = self.tr("Which voice should speak the lines tagged [{0}]?").format(tag)
        name = self.dialogs.choose(self, question, names)
        if name:
            self.set_cast(tag, name)

    def set_cast(self, tag: str, voice: str | None) -> None:
        """Map ``[tag]`` to a voice in the project's cast (None: remove the mapping)."""
        self.project.set_cast(tag, voice)
        self.script.set_cast(self.project.cast)
        self.refresh_and_save()

    # --- speaking ---------------------------------------------------------------------------
    def _build_job(self, job: projects.SegmentJob) -> tuple[str | None, Any, Any]:
        """(voice key, VoicePrompt or None, request builder) for one segment; GUI thread."""
        from app.engine.request import SynthRequest

        key, prompt = self._voice_prompt(job.voice) if job.voice else (None, None)
        voice = self._voice_index.get(job.voice.casefold()) if job.voice else None
        controls = self.model.controls
        takes_lora = controls is None or "lora" in controls  # a LoRA is VoxCPM's: others speak without
        lora_dir = self.library.lora_folder(voice) if voice is not None and takes_lora else None
        # normalized in a child process (see app/text/normalize.py), ready by the time the engine
        # thread builds the request; segments are submitted in order, so the first is ready first
        spoken = normalize.background.submit(job.text) if job.normalize else None

        def build(resolved: Any) -> SynthRequest:
            return SynthRequest(
                text=job.text if spoken is None else spoken.result(timeout=NORMALIZE_TIMEOUT_S),
                voice=resolved,
                seed=job.seed,
                cfg_value=job.cfg_value,
                inference_timesteps=job.inference_timesteps,
                speed=job.rate,
                lora=None if lora_dir is None else str(lora_dir),
                instruction=job.instruction,
            )

        return key, prompt, build

    def _voice_prompt(self, name: str) -> tuple[str, Any]:
        """The voice's key and VoicePrompt, built once per voice version and model (the audio
        is read and resampled here; its latents come from the library cache when present)."""
        from app.voices.cloning import to_voice_prompt

        voice = self._voice_index.get(name.casefold())
        if voice is None:
            raise VoxDeskError(
                self.tr("There is no voice named “{0}”. Import or record it, or fix the [tag].").format(name)
            )
        key = f"{voice.id}:{voice.content_hash}"
        cache_key = (key, voice.transcript, self.model.model_id)
        if cache_key not in self._prompts:
            self._prompts[cache_key] = to_voice_prompt(
                self.library,
                voice,
                self.model.encoder_rate,
                architecture=self.model.architecture,
                model_id=self.model.model_id,
                controls=self.model.controls,
            )
        return key, self._prompts[cache_key]

    def _forget_prompts(self, voice_id: str) -> None:
        """Re-encode: drop the voice's prompts built from its (now deleted) cached latents."""
        self._prompts = {k: p for k, p in self._prompts.items() if not k[0].startswith(f"{voice_id}:")}

    def _index_voices(self) -> None:
        """Read the library once per Speak: names to voices, for the segments' tags."""
        self.voices.flush()
        self._voice_index = {v.name.casefold(): v for v in self.library.list()}
        live = {f"{v.id}:{v.content_hash}" for v in self._voice_index.values()}
        self._prompts = {k: p for k, p in self._prompts.items() if k[0] in live}

    def job_builder(self) -> Builder:
        """What turns a segment's job into an engine job, with the library read afresh."""
        self._index_voices()
        return self._build_job

    def can_speak(self) -> bool:
        if not self.model.ready:
            self.dialogs.info(
                self, self.tr("The model is not loaded yet. Wait for it to finish, or choose one in Models.")
            )
            return False
        return True

    def speak(self) -> None:
        self.script.flush()
        self.voices.flush()
        self._sync_segments()
        if self.session.busy():
            return
        if not self.session.segments:
            self.dialogs.info(self, self.tr("There is nothing to speak yet. Type some text first."))
            return
        if self.model.state == "loading":  # start as soon as it is loaded; say so meanwhile
            self._speak_when_loaded = True
            self.transport.set_busy(True)
            self.transport.set_busy_text(self.tr("Waiting for the model to load…"))
            return
        if not self.can_speak():
            return
        self._index_voices()
        if not self._fits_or_confirmed():
            return
        self.transport.set_busy(True)
        self.transport.set_busy_text(self.tr("Preparing the voices…"))
        self.backcheck.new_run()
        self.session.speak(self._build_job)

    def fit_problems(self) -> list[tuple[Any, list[int], float]]:
        """(voice, segment indices, usable seconds) for every voice that is too long for some of
        the segments it is to speak (known from the model's positions before anything runs)."""
        from app.voices.cloning import resolve_mode
        from app.voices.fit import misfits, usable_seconds

        limits = self.model.info.limits if self.model.info is not None else None
        if limits is None:
            return []
        by_voice: dict[str, list[int]] = {}
        for i, seg in enumerate(self.session.segments):
            if seg.status != "done" and seg.job.voice:
                by_voice.setdefault(seg.job.voice.casefold(), []).append(i)
        problems = []
        for name, rows in by_voice.items():
            voice = self._voice_index.get(name)
            if voice is None:
                continue  # an unknown [tag]: marked in the editor, fails with its own reason
            try:
                mode = resolve_mode(voice, self.model.architecture, controls=self.model.controls)
            except VoxDeskError:
                continue
            texts = [self.session.segments[i].job.text for i in rows]
            bad = misfits(limits, texts, voice.duration, mode, voice.transcript)
            if bad:
                problems.append(
                    (voice, [rows[b] for b in bad], usable_seconds(limits, texts, mode, voice.transcript))
                )
        return problems

    def _fits_or_confirmed(self) -> bool:
        """Warn before Speak when a segment cannot fit; "No" takes the user to the trim."""
        from ui.views.segment_table import format_seconds

        problems = self.fit_problems()
        if not problems:
            return True
        voice, rows, usable = problems[0]
        numbers = ", ".join(str(i + 1) for i in rows[:8]) + (" …" if len(rows) > 8 else "")
        question = self.tr(
            "Segments {0} cannot fit in this model with the voice “{1}”: its recording is {2}, and the "
            "model can use up to {3} of it for them. They would fail or be cut short.\n\n"
            "Speak anyway? Choose No to trim the voice first."
        ).format(numbers, voice.name, format_seconds(voice.duration), format_seconds(max(0.0, usable)))
        if self.dialogs.confirm(self, question):
            return True
        self.voices.select_name(voice.name)
        self.voices.select_usable()
        self.voices.waveform.setFocus()
        return False

    def regenerate(self, index: int, new_seed: bool) -> None:
        self._sync_segments()
        if not self.can_speak() or index >= len(self.session.segments):
            return
        seg = self.session.segments[index]
        over = self.project.overrides.get(seg.job.key, projects.SegmentOverride())
        if new_seed:
            seed = int(np.random.default_rng().integers(0, 2**31 - 1))
        else:
            seed = over.seed if over.seed is not None else seg.seed
        if seed != over.seed:
            self.set_modified(True)  # the segment's seed is fixed now, in the file too
        self.project.set_override(seg.job.key, replace(over, seed=seed))
        self._refresh_segments()
        self.transport.set_busy(True)
        self._index_voices()
        self.session.regenerate([index], self._build_job)
        self._schedule_autosave()

    def regenerate_stale(self) -> None:
        """Speech › Regenerate stale takes: every finished take made with other settings than the
        script's now is generated again with the settings now (the project keeps each old take
        until its new one is written, and keeps it when the new one fails)."""
        self.script.flush()
        self._sync_segments()
        stale = self.session.stale_indices()
        if not stale:
            self.dialogs.info(self, self.tr("Every finished take was made with the current settings."))
            return
        if self.session.busy() or not self.can_speak():
            return
        self.transport.set_busy(True)
        self._index_voices()
        self.session.regenerate(stale, self._build_job)

    def keep_seed(self, index: int) -> None:
        """Fix this segment's seed to the one of its current take (regenerating keeps the take)."""
        if not 0 <= index < len(self.session.segments):
            return
        seg = self.session.segments[index]
        if seg.seed is None:
            self.dialogs.info(self, self.tr("This segment has no take yet: speak it first."))
            return
        over = self.project.overrides.get(seg.job.key, projects.SegmentOverride())
        self.project.set_override(seg.job.key, replace(over, seed=seg.seed))
        self.refresh_and_save()

    def stop(self) -> None:
        self._speak_when_loaded = False
        self._stopping = True  # the run's end is a stop, not a finish (see _run_finished)
        try:
            self.session.stop()
        finally:
            self._stopping = False
        self.backcheck.stop()
        self.transport.set_busy(False)
        self.transport.set_busy_text("")

    def _run_finished(self) -> None:
        self.transport.set_busy(False)
        self.transport.set_busy_text("")
        self._progress_changed(1.0, None)
        c = self.session.counts()
        if self._stopping and c.failed:
            text = self.tr("Stopped: {0} of {1} done, {2} failed").format(c.done, c.total, c.failed)
        elif self._stopping:
            text = self.tr("Stopped: {0} of {1} done").format(c.done, c.total)
        elif c.failed:
            text = self.tr("Finished: {0} done, {1} failed").format(c.done, c.failed)
        else:
            text = self.tr("Finished: {0} done").format(c.done)
        self.statusBar().showMessage(text, 15_000)
        self._schedule_autosave()

    def _progress_changed(self, fraction: float, eta: object) -> None:
        self.transport.set_counts(self.session.counts(), eta if isinstance(eta, float) else None)

    # --- playback ---------------------------------------------------------------------------
    def play_pause(self) -> None:
        """Pause or resume; with nothing loaded, play the finished script from the start."""
        if self.playback.playlist is not None:
            self.playback.toggle_pause()
        elif not self.session.busy() and self.session.finished_audio():
            keys = [job.key for job, _ in self.session.finished_audio()]
            pauses = {job.key: job.pause_after for job, _ in self.session.finished_audio()}
            self.playback.begin(keys, self.session.sample_rate, self.project.settings.gap_seconds, pauses)
            for job, samples in self.session.finished_audio():
                self.playback.add(job.key, samples)
                self.playback.finish(job.key)

    def play_audio(self, samples: np.ndarray, sample_rate: int, source: str = "") -> None:
        self.voices.output_line.setText(describe_output(self.playback.sink))
        self.playback.play_clip(samples, sample_rate, source)

    def play_segment(self, index: int) -> None:
        seg = self.session.segments[index]
        if seg.status == "done":
            self.play_audio(seg.samples(), self.session.sample_rate, f"segment:{index}")

    def _playback_error(self, message: str) -> None:
        self.voices.output_line.setText(describe_output(self.playback.sink))
        self.dialogs.error(self, message)

    def _playback_state(self, playing: bool) -> None:
        voice_clip = self.playback.clip_source.startswith("voice:")
        self.voices.set_playing(voice_clip and self.playback.playlist is not None)

    def _playhead_moved(self, key: object, seconds: float) -> None:
        """Draw the playhead: on the waveform for a voice, on the segment's row for speech."""
        source = self.playback.clip_source
        self.voices.show_playhead(source, seconds if key == CLIP else None)
        index: int | None = None
        if key == CLIP and source.startswith("segment:"):
            index = int(source.split(":", 1)[1])
        elif key is not None and key != CLIP:
            index = next((i for i, s in enumerate(self.session.segments) if s.job.key == key), None)
        before, self._playing_index = self._playing_index, index
        self._playing_at = round(seconds, 3 if seconds < 0.05 else 1)
        for i in {before, index} - {None}:
            if i < len(self.session.segments):
                self.script.table.update_row(i, self._row(i))
        if self.playback.playlist is None:
            self.voices.set_playing(False)

    def apply_output_device(self) -> None:
        """Settings changed: play through the newly chosen device from the next playback on."""
        from app.audio.player import SoundDeviceSink

        if isinstance(self.playback.sink, SoundDeviceSink):
            self.playback.stop()
            self.playback.sink = default_sink(self.settings.output_device)
        self.voices.output_line.setText(describe_output(self.playback.sink))

    # --- engine -----------------------------------------------------------------------------
    def start(self) -> None:
        """After the window shows: load the configured model (or connect to the configured speech
        server), or open the model manager; start the Local API if it is switched on."""
        self.voices.output_line.setText(describe_output(self.playback.sink))
        self.apply_local_api()
        QTimer.singleShot(0, self.training.offer_resume)  # a run left by a quit or a crash
        if self.settings.backend == "server":
            self.model = ModelState(folder=None, state="loading")
            self._show_model_state()
            self.client.load_remote(self.settings.server_url, self.settings.server_key)
            return
        folder = self.settings.model_dir
        if folder is None or not folder.is_dir():
            self.actions.manage_models(first_run=True)
            return
        self.load_model(folder)

    def engine_source(self) -> tuple:
        s = self.settings
        return (s.backend, s.server_url, s.server_key) if s.backend == "server" else ("local",)

    def apply_local_api(self) -> None:
        """Start, restart or stop the Local API to match Settings; a taken port is one message."""
        s = self.settings
        wanted = (s.api_port, s.api_key, s.api_default_voice) if s.api_enabled else None
        if wanted == getattr(self, "_api_running", None):
            return
        self.api.stop()
        self._api_running = None
        if wanted is not None:
            try:
                self.api.start(*wanted)
                self._api_running = wanted
            except VoxDeskError as exc:
                self.dialogs.error(self, str(exc))

    def load_model(self, folder: Path) -> None:
        self.model = ModelState(folder=folder, state="loading")
        self._show_model_state()
        self.client.load(str(folder), self.settings.device, self.settings.cpu_precision)

    def _engine_state(self, state: str) -> None:
        self.model.state = state
        self._show_model_state()

    def _load_progress(self, percent: int, stage: str) -> None:
        stages = {  # the engine's stage names (app/engine/engine.py), shown in the UI language
            "Starting": self.tr("starting"),
            "Loading the model": self.tr("loading the model"),
            "Reserving memory": self.tr("reserving memory"),
            "Preparing the GPU": self.tr("preparing the GPU"),
            "Ready": self.tr("ready"),
        }
        self.model.progress = (percent, stages.get(stage, stage))
        self._show_model_state()
        if self._speak_when_loaded:
            self.transport.set_busy_text(
                self.tr("Waiting for the model to load ({0}%, {1})…").format(*self.model.progress)
            )

    def _model_loaded(self, info: ModelInfo) -> None:
        self.model.set_info(info)
        self.session.sample_rate = info.sample_rate
        self.session.context = info.results_key
        self.voices.set_architecture(info.architecture)
        self.project.controls = self.model.controls  # the texts and fields this family takes
        self.script.settings.set_controls(self.model.controls)
        self.voices.set_controls(self.model.controls)
        self._refresh_segments()
        self._show_model_state()
        if self.project.settings.normalize:
            normalize.background.submit("1")  # its grammars load in the child while the user types
        if self._speak_when_loaded:
            self._speak_when_loaded = False
            self.transport.set_busy(False)
            self.speak()

    def _model_failed(self, message: str) -> None:
        if self._speak_when_loaded:
            self._speak_when_loaded = False
            self.transport.set_busy(False)
            self.transport.set_busy_text("")
        self.model.state = "failed"
        self._show_model_state()
        self.dialogs.error(self, message)

    def _engine_activity(self, what: str) -> None:
        """The busy line: what the engine does for this run right now."""
        if not self.session.busy():
            return
        texts = {
            "encoding": self.tr("Encoding the voice…"),
            "generating": self.tr("Generating…"),
        }
        self.transport.set_busy_text(texts.get(what, what))

    def _device_changed(self, text: str) -> None:
        self.model.device = text
        self._show_model_state()

    def _store_latents(self, voice_key: str, role: str, latents: np.ndarray) -> None:
        """Keep a voice's freshly encoded latents in the library (next start needs no encode)."""
        from app.voices import latents as cache

        voice_id, _hash = voice_key.split(":", 1)
        try:
            voice = self.library.get(voice_id)
            if f"{voice.id}:{voice.content_hash}" == voice_key:
                cache.store(self.library, voice, self.model.model_id, role, latents)
        except Exception as exc:  # noqa: BLE001 - a cache miss next time is all this costs
            report(exc, "caching voice latents")

    def _show_model_state(self) -> None:
        m = self.model
        self.device_label.setText(m.device or self.tr("Device: not loaded"))
        self.model_label.setText(self.tr("Model: {0}").format(m.name) if m.name else self.tr("No model"))
        self.model_label.setToolTip(str(m.folder) if m.folder is not None else "")
        states = {
            "none": self.tr("Engine: no model"),
            "loading": self.tr("Engine: loading {0}% ({1})").format(*m.progress),
            "ready": self.tr("Engine: ready"),
            "busy": self.tr("Engine: generating"),
            "failed": self.tr("Engine: model failed to load"),
        }
        self.engine_label.setText(states.get(m.state, m.state))

    # --- closing ----------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self._closed:  # closed twice (e.g. close() and then the app's aboutToQuit)
            super().closeEvent(event)
            return
        self.voices.flush()
        if not self.training.settle_for_quit():  # a voice is training: pause it, stop it or stay
            event.ignore()
            return
        # Save / Discard / Cancel; a restart keeps unsaved work in the autosave (marked unsaved)
        settled = "kept" if self.keep_unsaved_on_close else self.actions.files.settle_unsaved()
        if settled is None or not (self.keep_unsaved_on_close or self.dubbing.settle()):
            event.ignore()
            return
        self._closed = True
        self.session.stop()
        self.dubbing.stop()
        self.books.shutdown()
        self.session.wait_for_writes()
        self._autosave_timer.stop()  # saved now: a late timer must not write again after closing
        if settled != "discarded":
            self.autosave()
        self.settings.save_window_state(bytes(self.saveGeometry()), bytes(self.saveState()))
        self.playback.stop()
        self.api.stop()
        self.transcriber.shutdown(timeout=2.0)
        self.voices.shutdown()
        self.backcheck.close()
        self.client.close()
        super().closeEvent(event)
