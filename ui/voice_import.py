"""New voices for the window, off the GUI thread: imported files and finished recordings.

One worker thread takes jobs in order from a queue (a second import while one runs waits its
turn). Each job decodes, mixes down and resamples the audio (``read_audio``, block by block), and
writes the voice into the library through its staging folder; the new voice's stored samples are
read back there too, so the window can draw the waveform and start speech recognition without
decoding on the GUI thread. Progress, results and failures come back through signals, which Qt
queues to the GUI thread. A cancel stops the job between two blocks (or before the new voice is
renamed into place) and leaves the library as it was.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal

from app.audio.io import AudioCancelled
from app.voices.library import VoiceLibrary
from ui.errors import report

# An ETA only after this much evidence: decoding is linear in frames, so the rate measured over
# the first tenth (and a second) of a file holds for the rest.
ETA_MIN_ELAPSED_S = 1.0
ETA_MIN_FRACTION = 0.1


@dataclass
class ImportJob:
    """A file to import (``path``) or recorded samples to save (``samples`` at ``rate``)."""

    label: str  # what the window shows: the file's name, or the recording's
    name: str | None = None  # the voice's name (None: from the file's name)
    path: Path | None = None
    samples: np.ndarray | None = None
    rate: int = 0
    cancel: threading.Event = field(default_factory=threading.Event)

    @property
    def recording(self) -> bool:
        return self.path is None


def eta(elapsed: float, fraction: float) -> float | None:
    """Seconds left, from the speed so far; None before there is evidence for one."""
    if elapsed < ETA_MIN_ELAPSED_S or fraction < ETA_MIN_FRACTION or fraction >= 1.0:
        return None
    return elapsed * (1.0 - fraction) / fraction


class VoiceImporter(QObject):
    """Serial worker for :meth:`VoiceLibrary.import_file` and :meth:`create_from_samples`."""

    started = Signal(object)  # ImportJob
    progress = Signal(float, object)  # fraction decoded, seconds left (None: not known yet)
    # ImportJob, Voice, its stored samples (untrimmed, at its rate; None if they could not be read)
    imported = Signal(object, object, object)
    failed = Signal(object, str)  # ImportJob, one-line message
    cancelled = Signal(object)  # ImportJob

    def __init__(self, library: VoiceLibrary, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self._jobs: queue.Queue[ImportJob | None] = queue.Queue()
        self._pending: list[ImportJob] = []  # queued and running, in order
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    # --- GUI thread -------------------------------------------------------------------------
    def import_file(self, path: Path, name: str | None = None) -> ImportJob:
        return self._put(ImportJob(label=Path(path).name, name=name, path=Path(path)))

    def save_recording(self, samples: np.ndarray, rate: int, name: str) -> ImportJob:
        return self._put(ImportJob(label=name, name=name, samples=np.asarray(samples, np.float32), rate=rate))

    def shutdown(self, timeout: float = 10.0) -> None:
        """Cancel the file imports (the files stay where they are), let recordings be saved (a
        second or so: they exist nowhere else), and wait for the worker; a cancelled job removes
        its staging folder."""
        with self._lock:
            jobs = list(self._pending)
        for job in jobs:
            if not job.recording:
                job.cancel.set()
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join(timeout)
            self._thread = None

    def _put(self, job: ImportJob) -> ImportJob:
        with self._lock:
            self._pending.append(job)
        self._jobs.put(job)
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="voxdesk-import", daemon=True)
            self._thread.start()
        return job

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
                    self._pending.remove(job)

    def _run(self, job: ImportJob) -> None:
        if job.cancel.is_set():
            self.cancelled.emit(job)
            return
        self.started.emit(job)
        start, shown = time.monotonic(), -1

        def progress(fraction: float) -> None:
            nonlocal shown
            if int(fraction * 100) != shown:  # one signal per percent, not one per block
                shown = int(fraction * 100)
                self.progress.emit(fraction, eta(time.monotonic() - start, fraction))

        try:
            if job.recording:
                voice = self.library.create_from_samples(job.samples, job.rate, job.name, cancel=job.cancel)
            else:
                voice = self.library.import_file(job.path, job.name, progress=progress, cancel=job.cancel)
        except AudioCancelled:
            self.cancelled.emit(job)
            return
        except Exception as exc:  # noqa: BLE001 - one line for the user, traceback to the log
            self.failed.emit(job, report(exc, "saving a recording" if job.recording else "importing a voice"))
            return
        try:  # the voice is in the library now; without its samples the window reads them itself
            samples = self.library.audio(replace(voice, trim_start=0.0, trim_end=None, gain_db=0.0))
        except Exception as exc:  # noqa: BLE001
            report(exc, "reading a new voice back")
            samples = None
        self.imported.emit(job, voice, samples)
