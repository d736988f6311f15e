"""Subtitle dubbing in the window: File › Import subtitles… opens the subtitle view as a tab beside
the script; Dub speaks every cue inside its slot (app/longform/dub.py) through the loaded engine.

The GUI thread never waits: the file is read, the dub run and the files written on threads of
their own, and their results come back through queued signals. The dub drives the engine's
Qt-free host (the one the Local API serves through), so its cues are batched with whatever else
the engine is making; with a speech server chosen in Settings, it drives the server's backend.
A finished dub that was not exported is not dropped unasked: importing other subtitles or closing
the window asks first.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from app.errors import VoxDeskError
from app.longform.dub import CueResult, DubProgress, DubSettings
from app.longform.subtitles import Cue
from ui.errors import report
from ui.views.subtitle_view import SubtitleView

if TYPE_CHECKING:
    from ui.main_window import MainWindow


class Dubbing(QObject):
    _loaded = Signal(object, object)  # path, cues (or the VoxDeskError)
    _progress = Signal(object)  # DubProgress
    _decided = Signal(int, object)  # cue index, CueResult
    _done = Signal(object)  # list[CueResult], or a message
    _written = Signal(object)  # DubFiles, or a message

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.view: SubtitleView | None = None
        self.path: Path | None = None
        self.cues: list[Cue] = []
        self.results: list[CueResult] = []
        self.exported = True  # nothing made since the last export (or import)
        self._backend: Any = None  # the loaded engine's shared host, or the speech server's backend
        self._cancel: threading.Event | None = None
        self.sample_rate = 0  # of the dub's audio (the model's when it was made)
        self._loaded.connect(self._show)
        self._progress.connect(self._on_progress)
        self._decided.connect(self._on_decided)
        self._done.connect(self._on_done)
        self._written.connect(self._on_written)
        window.client.host.backendChanged.connect(self._attach)

    def _attach(self, backend: Any) -> None:
        self._backend = backend

    def busy(self) -> bool:
        return self._cancel is not None

    # --- import -----------------------------------------------------------------------------
    def import_subtitles(self) -> None:
        if self.busy():
            self.w.dialogs.info(
                self.w, self.tr("A dub is running: stop it before importing other subtitles.")
            )
            return
        if not self.settle():
            return
        path = self.w.dialogs.open_subtitles(self.w)
        if path is not None:
            self.load(path)

    def load(self, path: Path) -> None:
        """Read the file on a thread; the view follows (or one message says why not)."""
        from app.longform.subtitles import load_subtitles

        def work() -> None:
            try:
                cues: Any = load_subtitles(path)
            except VoxDeskError as exc:
                cues = exc
            except Exception as exc:  # noqa: BLE001 - a bug: one line, the traceback to the log
                cues = VoxDeskError(report(exc, "reading the subtitles"))
            self._loaded.emit(path, cues)

        threading.Thread(target=work, name="voxdesk-subtitles", daemon=True).start()

    def _show(self, path: Path, cues: Any) -> None:
        if isinstance(cues, VoxDeskError):
            self.w.dialogs.error(self.w, str(cues))
            return
        self.path, self.cues, self.results, self.exported = path, cues, [], True
        view = self._ensure_view()
        view.set_cues(path.name, cues, self.w.script.default_voice() or self.tr("(model voice)"))
        view.set_busy(False, has_results=False)
        view.show_check(self.w.backcheck.auto())
        self.w.tabs.setCurrentWidget(view)

    def _ensure_view(self) -> SubtitleView:
        if self.view is None:
            s = self.w.settings
            self.view = SubtitleView(s.dub_rate_change, s.dub_takes)
            self.view.dubClicked.connect(self.dub)
            self.view.stopClicked.connect(self.stop)
            self.view.exportClicked.connect(self.export)
            self.view.settingsChanged.connect(self._settings_changed)
            self.w.tabs.addTab(self.view, self.tr("Subtitles"))
        return self.view

    def _settings_changed(self, rate_change: int, takes: int) -> None:
        self.w.settings.dub_rate_change = rate_change
        self.w.settings.dub_takes = takes

    # --- dub --------------------------------------------------------------------------------
    def dub(self) -> None:
        if self.busy() or self.view is None or not self.cues:
            return
        if self._backend is None or not self.w.model.ready:
            message = self.tr("The model is not loaded yet. Wait for it to finish, or choose one in Models.")
            self.w.dialogs.info(self.w, message)
            return
        if not self.settle():
            return
        prompts, emotions = self._prompts(), self._emotions()
        p = self.w.project.settings
        settings = DubSettings(
            max_rate_change=self.view.rate_box.value() / 100,
            takes=self.view.takes_box.value(),
            seed=p.seed,
            cfg_value=p.cfg_value,
            inference_timesteps=p.inference_timesteps,
            normalize=p.normalize,
        )
        checker = policy = None
        if self.w.backcheck.auto():
            from app.asr import load_recognizer
            from app.backcheck.worker import CheckWorker

            folder = self.w.transcriber.folder()
            checker, policy = CheckWorker(lambda: load_recognizer(folder)), self.w.backcheck.policy()
        self._cancel = threading.Event()
        self.sample_rate = self.w.model.info.sample_rate
        self.results, self.exported = [], False
        self.view.clear_results()
        self.view.show_check(checker is not None)
        self.view.set_busy(True, has_results=False)
        self.view.set_progress(0, len(self.cues), None)
        args = (
            self._backend,
            list(self.cues),
            prompts,
            emotions,
            self.sample_rate,
            settings,
            checker,
            policy,
        )
        threading.Thread(target=self._run, args=args, name="voxdesk-dub", daemon=True).start()

    def _prompts(self) -> dict[str | None, Any]:
        """Each voice's VoicePrompt (or the error that it has none), built here on the GUI thread
        as Speak builds them; a cue's [Character] goes through the script's cast."""
        self.w._index_voices()
        cast = {k.casefold(): v for k, v in self.w.project.cast.items()}
        prompts: dict[str | None, Any] = {}
        for cue in self.cues:
            tag = cue.voice.casefold() if cue.voice else None
            if tag in prompts or not cue.speakable:
                continue
            name = cast.get(tag, cue.voice) if cue.voice else self.w.script.default_voice()
            try:
                prompts[tag] = self.w._voice_prompt(name)[1] if name else None
            except VoxDeskError as exc:
                prompts[tag] = exc
            except Exception as exc:  # noqa: BLE001 - a voice that cannot be read fails its cues
                prompts[tag] = VoxDeskError(report(exc, "preparing a voice"))
        return prompts

    def _emotions(self) -> dict[Any, Any] | None:
        """Each cue emotion's request control (or the error that it has none), read here on the GUI
        thread like the prompts; a clip's [Character] goes through the script's cast. None for a
        model without emotions: its cues are spoken without (the script editor says so)."""
        from app.voices.emotion import to_control

        if "emotion" not in (self.w.model.controls or ()):
            return None
        cast = {k.casefold(): v for k, v in self.w.project.cast.items()}
        emotions: dict[Any, Any] = {}
        for spec in {cue.emotion for cue in self.cues if cue.speakable and not cue.emotion.is_none()}:
            named = (
                replace(spec, voice=cast.get(spec.voice.casefold(), spec.voice))
                if spec.kind == "clip"
                else spec
            )
            try:
                emotions[spec] = to_control(named, self.w.library)
            except VoxDeskError as exc:
                emotions[spec] = exc
            except Exception as exc:  # noqa: BLE001 - a recording that cannot be read fails its cues
                emotions[spec] = VoxDeskError(report(exc, "reading an emotion's recording"))
        return emotions

    def _run(self, backend, cues, prompts, emotions, rate, settings, checker, policy) -> None:
        from app.longform.dub import dub

        def prompt_for(voice: str | None) -> Any:
            found = prompts.get(voice.casefold() if voice else None)
            if isinstance(found, VoxDeskError):
                raise found
            return found

        def emotion_for(spec: Any) -> Any:
            found = emotions.get(spec) if emotions is not None else None
            if isinstance(found, VoxDeskError):
                raise found
            return found

        try:
            results: Any = dub(backend, cues, prompt_for, rate, settings, checker=checker, policy=policy,
                               cancel=self._cancel, progress=self._progress.emit,
                               on_result=self._decided.emit, emotion_for=emotion_for)  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - shown by the GUI thread
            results = report(exc, "dubbing the subtitles")
        finally:
            if checker is not None:
                checker.close()
        self._done.emit(results)

    def stop(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def _on_progress(self, p: DubProgress) -> None:
        if self.view is not None:
            self.view.set_progress(p.done, p.total, p.eta)

    def _on_decided(self, index: int, result: CueResult) -> None:
        if self.view is not None and self._cancel is not None:
            self.view.set_result(index, result)

    def _on_done(self, results: Any) -> None:
        self._cancel = None
        if isinstance(results, str):
            self.w.dialogs.error(self.w, results)
            results = []
        self.results = results
        if self.view is not None:
            has = any(r.audio is not None for r in results)
            self.exported = not has
            self.view.set_busy(False, has_results=has)
            if results:
                self.view.summary.setText(self.view.summary_text(results))
                self.view.set_progress(sum(r.status != "cancelled" for r in results), len(results), None)

    # --- export -----------------------------------------------------------------------------
    def export(self) -> None:
        """Track, per-cue files, the SRT as spoken and the report into a folder (asked)."""
        from app.longform.dub_files import existing

        if self.busy() or not self.results or self.view is None:
            return
        from app.longform.dub_files import track_seconds

        duration = self.view.track_length()
        try:
            track_seconds(self.cues, duration)
        except VoxDeskError as exc:
            self.w.dialogs.error(self.w, str(exc))
            return
        start = self.path.parent if self.path is not None else None
        folder = self.w.dialogs.pick_folder(self.w, self.tr("Export the dub into a folder"), start)
        if folder is None:
            return
        taken = existing(folder, self.cues)
        if taken and not self.w.dialogs.confirm(
            self.w,
            self.tr("{0} already holds a dub ({1} files). Replace it?").format(folder.name, len(taken)),
        ):
            return
        results, rate = list(self.results), self.sample_rate
        self.view.export_button.setEnabled(False)
        self.view.status.setText(self.tr("Writing the files…"))

        def work() -> None:
            from app.longform.dub_files import export_dub

            try:
                files: Any = export_dub(folder, results, rate, duration, overwrite=True)
            except Exception as exc:  # noqa: BLE001 - one line for the user
                files = str(exc) if isinstance(exc, VoxDeskError) else report(exc, "exporting the dub")
            self._written.emit(files)

        threading.Thread(target=work, name="voxdesk-dub-export", daemon=True).start()

    def _on_written(self, files: Any) -> None:
        if self.view is not None:
            self.view.export_button.setEnabled(True)
            self.view.status.setText("")
        if isinstance(files, str):
            self.w.dialogs.error(self.w, files)
            return
        self.exported = True
        self.w.statusBar().showMessage(
            self.tr("Exported the dub: {0}, {1} cue files, {2}").format(
                files.track.name, len(files.cues), files.srt.name
            ),
            15_000,
        )

    def settle(self) -> bool:
        """True when nothing unexported would be lost, or the user agrees to drop it."""
        if self.exported or not self.results:
            return True
        return self.w.dialogs.confirm(
            self.w,
            self.tr("The dub of {0} is not exported. Discard it?").format(
                self.path.name if self.path else ""
            ),
        )
