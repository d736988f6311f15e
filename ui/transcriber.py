"""Speech recognition for the window, off the GUI thread.

One worker thread takes jobs from a queue: it loads the recognizer on first use (about a second
for the real model; never at start-up) and transcribes; progress and results come back through
signals, which Qt queues to the GUI thread. A job can be cancelled; starting a job for a key that
already has one replaces it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal

from app.asr import Recognizer, RecognizerError, TranscriptionCancelled, load_recognizer
from app.asr.catalog import find_recognizer
from ui.errors import report


class _Job:
    def __init__(self, key: str, audio: np.ndarray, rate: int, language: str) -> None:
        self.key, self.audio, self.rate, self.language = key, audio, rate, language
        self.cancel = threading.Event()


class Transcriber(QObject):
    """``chosen()`` returns the recognizer folder the user picked (None: the downloaded one)."""

    progress = Signal(str, float)  # key, fraction done
    finished = Signal(str, object)  # key, app.asr.Transcript
    failed = Signal(str, str)  # key, one-line message
    cancelled = Signal(str)  # key

    def __init__(self, chosen: Callable[[], Path | None] = lambda: None, parent: QObject | None = None):
        super().__init__(parent)
        self._chosen = chosen
        self._recognizer: Recognizer | None = None
        self._loaded_from: Path | None = None
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._pending: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stale = threading.Event()

    # --- state (GUI thread) -----------------------------------------------------------------
    def folder(self) -> Path | None:
        return find_recognizer(self._chosen())

    @property
    def available(self) -> bool:
        """A recognizer is installed (it may still turn out damaged when loaded)."""
        return self.folder() is not None

    def busy(self, key: str | None = None) -> bool:
        with self._lock:
            return bool(self._pending) if key is None else key in self._pending

    def reload(self) -> None:
        """Load the recognizer afresh on the next job (the user installed or chose another)."""
        self._stale.set()

    # --- jobs -------------------------------------------------------------------------------
    def start(self, key: str, audio: np.ndarray, sample_rate: int, language: str = "auto") -> None:
        job = _Job(key, np.asarray(audio, np.float32).copy(), sample_rate, language)
        with self._lock:
            old = self._pending.get(key)
            if old is not None:
                old.cancel.set()
            self._pending[key] = job
        self._jobs.put(job)
        self._ensure_thread()

    def cancel(self, key: str | None = None) -> None:
        with self._lock:
            jobs = list(self._pending.values()) if key is None else [self._pending.get(key)]
        for job in jobs:
            if job is not None:
                job.cancel.set()

    def shutdown(self, timeout: float = 5.0) -> None:
        self.cancel()
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join(timeout)
            self._thread = None

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="voxdesk-transcribe", daemon=True)
            self._thread.start()

    # --- worker thread ----------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                self._run(job)
            finally:
                with self._lock:
                    if self._pending.get(job.key) is job:
                        del self._pending[job.key]

    def _run(self, job: _Job) -> None:
        if job.cancel.is_set():
            self.cancelled.emit(job.key)
            return
        try:
            recognizer = self._load()
            result = recognizer.transcribe(
                job.audio, job.rate, job.language, lambda f: self.progress.emit(job.key, f), job.cancel
            )
        except TranscriptionCancelled:
            self.cancelled.emit(job.key)
        except RecognizerError as err:
            self.failed.emit(job.key, report(err, "recognizing speech"))
        except Exception as exc:  # noqa: BLE001 - one line for the user, traceback to the log
            self.failed.emit(job.key, report(exc, "recognizing speech"))
        else:
            if job.cancel.is_set():
                self.cancelled.emit(job.key)
            else:
                self.finished.emit(job.key, result)

    def _load(self) -> Recognizer:
        folder = self.folder()
        if self._stale.is_set():
            self._stale.clear()
            self._recognizer = None
        if self._recognizer is None or folder != self._loaded_from:
            self._recognizer = None
            self._recognizer = load_recognizer(folder)
            self._loaded_from = folder
        return self._recognizer
