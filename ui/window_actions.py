"""The window's menus and the dialogs behind them (export, record, models, settings, scripts).

Dialogs open with ``open()`` (window-modal, non-blocking) and report back through ``accepted``;
the one currently open is ``actions.dialog`` so tests can drive it like a user would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import QApplication, QDialog, QMenu, QPushButton, QStyle

from app import project as projects
from ui.errors import report
from ui.script_files import ScriptFiles
from ui.views.export_dialog import ExportDialog, ExportOptions
from ui.views.pacing import GAPS

if TYPE_CHECKING:
    from ui.main_window import MainWindow
    from ui.views.record_dialog import RecordDialog


class WindowActions(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.dialog: QDialog | None = None
        self.open_folder: QPushButton | None = None  # shown after an export
        self.exported_to: Path | None = None
        self.files = ScriptFiles(window)
        self._build_menus()

    # --- menus ------------------------------------------------------------------------------
    def _action(
        self,
        menu: QMenu,
        text: str,
        slot: Callable[[], object],
        shortcut: str | None = None,
        icon: QStyle.StandardPixmap | None = None,
    ) -> QAction:
        action = QAction(text, self.w)
        if icon is not None:
            action.setIcon(self.w.style().standardIcon(icon))
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutVisibleInContextMenu(True)
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        self.w.addAction(action)  # shortcuts work even while the menu bar is hidden (e.g. a native one)
        return action

    def _menu_only(
        self, menu: QMenu, text: str, slot: Callable[[], object], keys: str, icon: QStyle.StandardPixmap
    ) -> QAction:
        """A menu entry that shows a shortcut the window already handles (its QShortcut acts,
        so the key works the same with the menu bar hidden and never fires twice)."""
        action = QAction(self.w.style().standardIcon(icon), text, self.w)
        action.setShortcut(QKeySequence(keys))
        action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.w.menuBar()
        sp = QStyle.StandardPixmap
        file = bar.addMenu(self.tr("&File"))
        self.files.add_to(file, self._action)
        file.addSeparator()
        self._action(file, self.tr("Import subtitles…"), self.w.dubbing.import_subtitles, None, None)
        self._menu_only(file, self.tr("Export audio…"), self.export, "Ctrl+E", sp.SP_DriveHDIcon)
        file.addSeparator()
        self._action(file, self.tr("Open book…"), lambda: self.w.books.open_book(), None, sp.SP_DirOpenIcon)
        self._action(file, self.tr("Import book…"), lambda: self.w.books.import_book(), None, None)
        file.addSeparator()
        self._action(file, self.tr("Quit"), self.w.close, "Ctrl+Q")
        speech = self.speech_menu = bar.addMenu(self.tr("&Speech"))
        for text, slot, keys, icon in (
            (self.tr("Speak"), self.w.speak, "Ctrl+Return", sp.SP_MediaSeekForward),
            (self.tr("Stop"), self.w.stop, "Esc", sp.SP_MediaStop),
            (self.tr("Play / pause"), self.w.play_pause, "Space", sp.SP_MediaPlay),
        ):
            self._menu_only(speech, text, slot, keys, icon)
        self._action(speech, self.tr("Regenerate stale takes"), self.w.regenerate_stale, None, None)
        speech.addSeparator()
        speech.addActions(self.w.backcheck.actions())
        speech.setToolTipsVisible(True)  # a disabled check says what a recognizer would add
        voices = bar.addMenu(self.tr("&Voices"))
        self._action(voices, self.tr("Record…"), self.record_voice, "Ctrl+R", sp.SP_MediaVolume)
        self._action(
            voices, self.tr("Import…"), self.w.voices.import_dialog, "Ctrl+I", sp.SP_DialogOpenButton
        )
        voices.addSeparator()
        train = self.w.training.train_selected
        self._action(voices, self.tr("Train this voice…"), train, None, sp.SP_ArrowUp)
        tools = bar.addMenu(self.tr("&Tools"))
        self._action(tools, self.tr("Models…"), self.manage_models, None, sp.SP_ComputerIcon)
        self._action(
            tools, self.tr("Pronunciation…"), self.edit_pronunciation, None, sp.SP_FileDialogDetailedView
        )
        self._action(tools, self.tr("Settings…"), self.open_settings, "Ctrl+,", sp.SP_FileDialogInfoView)
        help_menu = bar.addMenu(self.tr("&Help"))
        self._action(help_menu, self.tr("Open the log folder"), self.open_log_folder, None, sp.SP_DirIcon)
        self._action(help_menu, self.tr("About VoxDesk"), self.about, None, sp.SP_MessageBoxInformation)

    def _show(self, dialog: QDialog, on_accept: Callable[[], object]) -> QDialog:
        self.dialog = dialog
        dialog.accepted.connect(on_accept)
        dialog.finished.connect(lambda _r: self._closed(dialog))
        dialog.open()
        return dialog

    def _closed(self, dialog: QDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None
        dialog.deleteLater()

    # --- export -----------------------------------------------------------------------------
    def export(self) -> None:
        if not self.w.session.finished_audio():
            self.w.dialogs.info(self.w, self.tr("There is no audio to export yet. Press Speak first."))
            return
        name = self.w.project.path.stem if self.w.project.path else "voxdesk"
        defaults = ExportOptions.remembered(
            self.w.settings.output_dir,
            self.w.settings.last_export(),
            name,
            int(self.w.project.settings.gap_seconds * 1000),
        )
        dialog = ExportDialog(defaults, self.w.dialogs, self.w)
        # The dialog closes only when the export worked: after an error (or a "no" to a question)
        # it stays open with the user's choices, to change the folder or name and try again.
        dialog.export = lambda: self._export(dialog.options())[0]
        self._show(dialog, lambda: None)

    def run_export(self, options: ExportOptions) -> list[Path]:
        """Write what ``options`` asks for; asks before replacing files. Returns the files written."""
        return self._export(options)[1]

    def _export(self, options: ExportOptions) -> tuple[bool, list[Path]]:
        """(whether it all worked, the files written)."""
        from app import export

        finished = self.w.session.finished_audio()
        total = len(self.w.session.segments)
        if len(finished) < total:
            failed = self.w.session.failed_indices()
            missing = total - len(finished) - len(failed)
            parts = []
            if failed:
                numbers = ", ".join(str(i + 1) for i in failed[:10]) + (" …" if len(failed) > 10 else "")
                parts.append(self.tr("{0} of {1} segments failed ({2}).").format(len(failed), total, numbers))
            if missing:
                parts.append(self.tr("{0} of {1} segments are not generated yet.").format(missing, total))
            question = " ".join(parts) + " " + self.tr("Export the {0} finished ones?").format(len(finished))
            if not self.w.dialogs.confirm(self.w, question):
                return False, []
        # the silence after each segment, with the dialog's sentence gap ([pause] tags, paragraph
        # and chapter gaps as the script sets them)
        sentence_gap = replace(self.w.project.settings, gap_seconds=options.gap_ms / 1000)
        pauses = {job.key: job.pause_after for job in replace(self.w.project, settings=sentence_gap).jobs()}
        clips = [export.Clip(job.display_text, samples, pauses.get(job.key)) for job, samples in finished]
        existing = [p for p in options.targets(len(clips)) if p.exists()]
        if existing:
            names = ", ".join(p.name for p in existing[:3]) + (" …" if len(existing) > 3 else "")
            if not self.w.dialogs.confirm(self.w, self.tr("Replace the existing files? ({0})").format(names)):
                return False, []
        rate, gap = self.w.session.sample_rate, options.gap_ms / 1000
        written: list[Path] = []
        try:
            if options.merged:
                written.append(
                    export.export_merged(options.with_suffix(), clips, rate, gap, options.fmt, overwrite=True)
                )
            if options.srt:
                written.append(export.export_srt(options.srt_path(), clips, rate, gap, overwrite=True))
            if options.segments:
                written += export.export_segments(
                    options.segments_dir(), clips, rate, fmt=options.fmt, overwrite=True
                )
        except Exception as exc:  # noqa: BLE001
            self.w.dialogs.error(self.w, report(exc, "exporting"))
            return False, written
        self.w.settings.output_dir = options.path.parent
        self.w.settings.set_last_export(options.choices())
        self.w.project.with_settings(gap_seconds=gap)
        self.w.script.pauses.set_values({name: getattr(self.w.project.settings, name) for name in GAPS})
        self.w.autosave()
        self.w.statusBar().showMessage(
            self.tr("Exported {0} file(s) to {1}").format(len(written), options.path.parent), 30_000
        )
        self._offer_open_folder(options.path.parent)
        return True, written

    def _offer_open_folder(self, folder: Path) -> None:
        """An "Open folder" button in the status bar after an export (until the next one)."""
        if self.open_folder is None:
            self.open_folder = QPushButton(self.tr("Open folder"))
            self.open_folder.setFlat(True)
            self.w.statusBar().addPermanentWidget(self.open_folder)
            self.open_folder.clicked.connect(lambda: self.open_path(self.exported_to))
        self.exported_to = folder
        self.open_folder.setToolTip(str(folder))
        self.open_folder.show()

    def open_path(self, folder: Path | None) -> None:
        if folder is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    # --- voices -----------------------------------------------------------------------------
    def record_voice(self) -> None:
        from ui.views.record_dialog import RecordDialog

        dialog = RecordDialog(
            self.w.settings.input_device or None, self.w.dialogs, self.w, self.w.input_stream_factory
        )
        dialog.playRequested.connect(self.w.play_audio)
        self._show(dialog, lambda: self._save_recording(dialog))

    def _save_recording(self, dialog: RecordDialog) -> None:
        take = dialog.take()
        if take is not None:
            samples, rate = take
            self.w.voices.add_recording(samples, rate, dialog.voice_name())

    # --- script tools -----------------------------------------------------------------------
    def edit_pronunciation(self) -> None:
        from ui.views.pronunciation_dialog import PronunciationDialog

        dialog = PronunciationDialog(self.w.project.rules.rules, self.w)
        self._show(dialog, lambda: self._set_rules(dialog.rules()))

    def _set_rules(self, rules: list) -> None:
        self.w.project.rules.set_rules(rules)
        self.w.refresh_and_save()

    def edit_segment_settings(self, row: int) -> None:
        from ui.views.generation_form import SegmentSettingsDialog

        if row >= len(self.w.session.segments):
            return
        job = self.w.session.segments[row].job
        s = self.w.project.settings
        segments = self.w.project.segments()
        tagged = segments[job.index].emotion if job.index < len(segments) else None  # [Name|emotion]
        emotion = tagged if tagged is not None and not tagged.is_none() else s.emotion
        script_values = {
            "cfg_value": s.cfg_value,
            "inference_timesteps": s.inference_timesteps,
            "style": s.voice_design,
            "instruction": s.instruction,
            "emotion": emotion,
            "language": s.language,
        }
        over = self.w.project.overrides.get(job.key, projects.SegmentOverride())
        own = None
        values = (over.cfg_value, over.inference_timesteps, over.voice_design, over.instruction, over.rate,
                  over.emotion, over.language)  # fmt: skip
        if values != (None,) * len(values):
            own = {
                "cfg_value": over.cfg_value if over.cfg_value is not None else s.cfg_value,
                "inference_timesteps": over.inference_timesteps or s.inference_timesteps,
                "style": over.voice_design if over.voice_design is not None else s.voice_design,
                "instruction": over.instruction if over.instruction is not None else s.instruction,
                "rate": over.rate,
                "emotion": over.emotion if over.emotion is not None else emotion,
                "language": over.language if over.language is not None else s.language,
            }
        take = self.w.session.segments[row].seed
        dialog = SegmentSettingsDialog(script_values, own, over.seed, self.w, take_seed=take,
                                       controls=self.w.model.controls, languages=self.w.model.languages,
                                       voices=[v.name for v in self.w.library.list()])  # fmt: skip
        self._show(dialog, lambda: self._set_override(job.key, *dialog.result_values()))

    def _set_override(self, key: str, own: dict | None, seed: int | None) -> None:
        override = projects.SegmentOverride(
            seed=seed,
            cfg_value=own["cfg_value"] if own else None,
            inference_timesteps=own["inference_timesteps"] if own else None,
            voice_design=own["style"] if own else None,
            instruction=own["instruction"] if own else None,
            rate=own["rate"] if own else None,
            emotion=own["emotion"] if own else None,
            language=own["language"] if own else None,
        )
        self.w.project.set_override(key, override)
        self.w.refresh_and_save()

    # --- app --------------------------------------------------------------------------------
    def manage_models(self, first_run: bool = False) -> None:
        from ui.views.model_manager import ModelManager

        model = self.w.model
        loaded = (model.folder, model.name) if model.ready and model.folder is not None else None
        dialog = ModelManager(self.w.settings, self.w.dialogs, first_run, self.w, loaded=loaded)
        dialog.recognizerChanged.connect(self.w.voices.recognizer_changed)
        dialog.recognizerChanged.connect(self.w.backcheck.recognizer_changed)
        self._show(dialog, lambda: self._use_model(dialog.chosen_folder()))

    def _use_model(self, folder: Path | None) -> None:
        """Load ``folder`` in place of the model loaded now (the engine thread unloads one before
        it loads the other, whatever their families); speech being made is asked about first."""
        if folder is None:
            return
        if self.w.session.busy() and not self.w.dialogs.confirm(
            self.w,
            self.tr("VoxDesk is still speaking with the current model. Switching the model stops it; "
                    "the takes already finished are kept. Switch now?"),
        ):  # fmt: skip
            return
        self.w.settings.model_dir = folder
        self.w.load_model(folder)

    def open_settings(self) -> None:
        from ui.views.settings_dialog import SettingsDialog

        s = self.w.settings
        before = (s.language, (s.device, s.cpu_precision), s.model_dir)
        source = self.w.engine_source()
        local = source == ("local",) and self.w.model.ready and self.w.model.folder is not None
        folder = str(self.w.model.folder) if local else ""
        measure = self.w.client.measure
        dialog = SettingsDialog(s, self.w.dialogs, self.w, api=self.w.api, measure=measure, model_dir=folder)
        self._show(dialog, lambda: self._settings_changed(before, source))

    def _settings_changed(self, before: tuple[str, tuple[str, str], Path | None], source: tuple = ()) -> None:
        from ui.theme import apply_theme

        app = QApplication.instance()
        if app is not None:
            apply_theme(app, self.w.settings.theme)
        self.w.apply_output_device()
        self.w.backcheck.refresh()
        if self.w.settings.language != before[0]:
            question = self.tr(
                "The new language is used after VoxDesk restarts. Restart now?\n\n"
                "Your script is kept: VoxDesk closes as usual and opens it again."
            )
            if self.w.dialogs.confirm(self.w, question):
                QTimer.singleShot(0, self.restart)  # after this dialog has closed
        self.w.apply_local_api()
        s = self.w.settings
        folder = s.model_dir
        if self.w.engine_source() != source:
            self.w.start()  # local engine <-> speech server
        elif folder is not None and (folder != before[2] or (s.device, s.cpu_precision) != before[1]):
            self.w.load_model(folder)

    def restart(self) -> None:
        """Restart VoxDesk through the window's own close path. Unsaved work is not asked about:
        it goes into the autosave marked unsaved, and the new window restores it with its ``*``."""
        self.w.keep_unsaved_on_close = True
        if self.w.close():
            self.w.relaunch()
        else:
            self.w.keep_unsaved_on_close = False

    def open_log_folder(self) -> None:
        from app.paths import log_dir

        QDesktopServices.openUrl(QUrl.fromLocalFile(str(log_dir())))

    def about(self) -> None:
        from app.version import version

        self.w.dialogs.info(
            self.w,
            self.tr("Version {0}").format(version())
            + "\n\n"
            + self.tr(
                "VoxDesk clones a voice and speaks any text in it, entirely on this computer. "
                "Nothing is uploaded; the only network use is a model download you start yourself."
            ),
        )
