"""The wizard's worker threads: preparing the clips, training, and short calls (probing the GPU,
sizing the plan). Each is a QThread whose signals Qt queues to the GUI thread; the GUI thread
never waits on one (closing waits only for a thread that was asked to stop, see wizard.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal

from ui.errors import report
from ui.voice_import import eta

_calls: set[Call] = set()  # running calls: kept alive past a closed wizard until they end


def call(
    fn: Callable[[], Any], context: str, done: Callable[[Any], None], failed: Callable[[str], None]
) -> Call:
    """Start ``fn()`` on a :class:`Call` thread; ``done(result)`` or ``failed(message)`` follow on
    the GUI thread. The thread has no parent, so closing the page that asked does not destroy it
    while it runs; pass methods of QObjects (Qt drops those connections when the receiver is
    deleted)."""
    thread = Call(fn, context)
    thread.done.connect(done)
    thread.failed.connect(failed)
    _calls.add(thread)
    thread.finished.connect(lambda: _finished(thread))
    thread.start()
    return thread


def _finished(thread: Call) -> None:
    thread.wait()  # (finished is sent just before the thread ends)
    _calls.discard(thread)
    thread.deleteLater()


class Call(QThread):
    """Run ``fn()`` once off the GUI thread: ``done(result)`` or ``failed(message)``."""

    done = Signal(object)
    failed = Signal(str)

    def __init__(self, fn: Callable[[], Any], context: str) -> None:
        super().__init__()
        self._fn, self._context = fn, context

    def run(self) -> None:
        try:
            result = self._fn()
        except Exception as exc:  # noqa: BLE001 - one line for the user, the traceback to the log
            self.failed.emit(report(exc, self._context))
        else:
            self.done.emit(result)


class Preparation(QThread):
    """Slice ``sources`` into clips of ``dataset``, then transcribe the clips with the recognizer in
    ``recognizer_dir`` (None: none installed; the user types the words)."""

    SLICING, TRANSCRIBING = "slicing", "transcribing"
    progress = Signal(str, float, object)  # phase, fraction of that phase, seconds left (None: unknown)
    prepared = Signal(list)  # one plain problem per source that gave no clips
    failed = Signal(str)
    cancelled = Signal()

    def __init__(
        self,
        dataset: Any,
        sources: Sequence[Path],
        recognizer_dir: Path | None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.dataset, self.sources, self.recognizer_dir = dataset, list(sources), recognizer_dir
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    def _reporter(self, phase: str) -> Callable[[float, str], None]:
        """The progress callback of one phase; its ETA comes from that phase's own speed."""
        start = time.monotonic()

        def progress(fraction: float, _what: str = "") -> None:
            self.progress.emit(phase, fraction, eta(time.monotonic() - start, fraction))

        return progress

    def run(self) -> None:
        from app.asr import load_recognizer

        try:
            problems = self.dataset.add_sources(
                self.sources, self._reporter(self.SLICING), self._cancel.is_set
            )
            if not self._cancel.is_set() and self.recognizer_dir is not None:
                self.progress.emit(self.TRANSCRIBING, 0.0, None)
                recognizer = load_recognizer(self.recognizer_dir)
                self.dataset.transcribe(recognizer, self._reporter(self.TRANSCRIBING), self._cancel.is_set)
        except Exception as exc:  # noqa: BLE001 - one line for the user, the traceback to the log
            if self._cancel.is_set():
                self.cancelled.emit()
            else:
                self.failed.emit(report(exc, "preparing training clips"))
            return
        if self._cancel.is_set():
            self.cancelled.emit()
        else:
            self.prepared.emit(list(problems))


class Training(QThread):
    """Create or open a ``TrainJob`` (``open_job``, called on this thread: creating one writes the
    manifest) and run it until it is done, paused, cancelled or fails."""

    opened = Signal(object)  # the TrainJob
    progress = Signal(object)  # TrainProgress, after every step and phase change
    ended = Signal(object)  # the final TrainProgress ("done", "paused", "cancelled", "failed")
    failed = Signal(str)  # an exception: one plain line (the traceback is in the log)

    def __init__(self, open_job: Callable[[], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._open_job = open_job
        self._stop: str | None = None  # read by the job between steps (one reference: atomic)

    def request(self, what: str) -> None:
        """Ask the job to "pause" (it saves a checkpoint first) or "cancel" at its next step."""
        self._stop = what

    @property
    def requested(self) -> str | None:
        return self._stop

    def run(self) -> None:
        try:
            job = self._open_job()
            self.opened.emit(job)
            final = job.run(self.progress.emit, lambda: self._stop)
        except Exception as exc:  # noqa: BLE001 - one line for the user, the traceback to the log
            self.failed.emit(report(exc, "training a voice"))
            return
        self.ended.emit(final)
