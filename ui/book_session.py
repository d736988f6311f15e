"""The Book view's worker: a book project, generated on a thread of its own through the window's
engine, and exported on another.

The runner (app/longform/runner.py) blocks while it waits for audio, so it never runs on the GUI
thread: a plain Python thread drives it and its progress snapshots reach the GUI as queued
signals. It speaks through the window's engine (the Qt-free host the engine thread announces with
``sharedChanged``), so the book and the script share one loaded model. Pause cancels the segments
in flight; Start/Resume runs again, and the project on disk says what is left.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from ui.errors import report

log = logging.getLogger(__name__)


class BookSession(QObject):
    opened = Signal(object)  # BookProject
    progressed = Signal(object)  # BookProgress
    runningChanged = Signal(bool)
    exportProgress = Signal(float)
    exported = Signal(object)  # list of written files
    failed = Signal(str)
    engineChanged = Signal(bool)  # a local model is loaded (a book can be generated)

    def __init__(self, library_root: Path | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.progressed.connect(self._keep)
        self.library_root = library_root
        self.project: Any = None
        self.last: Any = None  # the latest BookProgress (read here, never from the disk)
        self._host: Any = None
        self._info: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ---- engine --------------------------------------------------------------------------
    def attach(self, host: Any, info: Any) -> None:
        """Slot for ``EngineHost.sharedChanged``: the engine to speak through (None: none)."""
        if host is None and self.running:
            self.pause()
        self._host, self._info = host, info
        self.engineChanged.emit(host is not None)

    @property
    def can_generate(self) -> bool:
        left = self.last is not None and self.last.fraction < 1.0
        return self._host is not None and self.project is not None and left

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ---- projects ------------------------------------------------------------------------
    def open(self, folder: Path) -> None:
        """Open a project folder (reading it lists its segment files: on a thread)."""

        def work():
            from app.longform.project import BookProject
            from app.longform.runner import book_progress

            project = BookProject.open(folder)
            return project, book_progress(project)

        self._background(work, self._opened, "opening the book")

    def create(self, source: Path, folder: Path, voice: str | None, seed: int) -> None:
        """Import a book file and create its project in ``folder`` (on a thread)."""

        def work():
            from app.longform.book import import_book
            from app.longform.project import BookProject, BookSettings
            from app.longform.runner import book_progress

            book = import_book(source)
            project = BookProject.create(
                folder, book, BookSettings(seed=seed, voice=voice), source=source.name
            )
            return project, book_progress(project)

        self._background(work, self._opened, "importing the book")

    def _keep(self, progress: Any) -> None:
        self.last = progress

    def _opened(self, opened: tuple[Any, Any]) -> None:
        self.project, self.last = opened
        self.opened.emit(self.project)
        self.progressed.emit(self.last)

    # ---- generation ----------------------------------------------------------------------
    def start(self) -> None:
        if self.running or not self.can_generate:
            return
        from app.longform.runner import BookRunner

        project, host, info = self.project, self._host, self._info
        self._stop.clear()

        def work() -> None:
            try:
                voice = None
                if project.settings.voice:
                    from app.voices.lookup import library_prompt

                    voice = library_prompt(project.settings.voice, self.library_root, info.encoder_rate,
                                           info.architecture)  # fmt: skip
                runner = BookRunner(project, host, voice, info.sample_rate, window=16)
                runner.run(progress=self.progressed.emit, cancel=self._stop.is_set)
            except Exception as exc:  # noqa: BLE001 - every failure becomes one line (traceback to the log)
                self.failed.emit(report(exc, "generating the book"))
            finally:
                self.runningChanged.emit(False)

        self._thread = threading.Thread(target=work, name="voxdesk-book", daemon=True)
        self._thread.start()
        self.runningChanged.emit(True)

    def pause(self) -> None:
        """Stop after the current event; the segments in flight are dropped and made next time."""
        self._stop.set()

    def shutdown(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    # ---- export --------------------------------------------------------------------------
    def export(self, out_dir: Path, formats: tuple[str, ...], target_lufs: float) -> None:
        from app.longform.book_export import export_book

        project = self.project

        def work():
            result = export_book(project, out_dir, target_lufs=target_lufs, formats=formats,
                                 progress=self.exportProgress.emit)  # fmt: skip
            return [*result.chapter_files, *([result.m4b] if result.m4b else [])]

        self._background(work, self.exported.emit, "exporting the book")

    # ---- helpers -------------------------------------------------------------------------
    def _background(self, work: Callable[[], Any], done: Callable[[Any], None], doing: str) -> None:
        """Run ``work`` on a thread; ``done(result)`` then runs on the GUI thread."""
        relay = _Relay(self)
        relay.done.connect(done)
        relay.failed.connect(self.failed)
        relay.done.connect(relay.deleteLater)
        relay.failed.connect(relay.deleteLater)

        def run() -> None:
            try:
                relay.done.emit(work())
            except Exception as exc:  # noqa: BLE001 - one line for the user, the traceback to the log
                relay.failed.emit(report(exc, doing))

        threading.Thread(target=run, name="voxdesk-book-io", daemon=True).start()


class _Relay(QObject):
    """Carries one background result to the GUI thread (a queued signal of an object living there)."""

    done = Signal(object)
    failed = Signal(str)
