"""Settings › On the CPU › *Measure on this computer*: :func:`app.engine.cpu_measure.measure` run
on the engine thread, never on the GUI thread.

The engine thread is the right home: the measurement then never competes with a generation for
the cores (it runs between two engine steps, which wait for it), and the GUI thread only gets
small signals. Stopping sets a flag the measurement polls between decode steps.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.engine.cpu_measure import MeasureCancelled
from ui.errors import report


class _Worker(QObject):
    """Lives on the engine thread."""

    progress = Signal(int, str)  # percent, the path being timed ("float32", "bfloat16", "int8")
    done = Signal(object)  # app.engine.cpu_measure.Measurement
    failed = Signal(str)  # one plain-language line
    stopped = Signal()

    @Slot(str, object)
    def run(self, model_dir: str, stop: threading.Event) -> None:
        from app.engine.config import cpu_threads
        from app.engine.cpu_measure import measure

        try:
            result = measure(
                model_dir,
                threads=cpu_threads(leave=1),  # as the window's engine runs
                progress=lambda f, path: self.progress.emit(int(100 * f), path),
                cancelled=stop.is_set,
            )
        except MeasureCancelled:
            self.stopped.emit()
            return
        except Exception as exc:  # noqa: BLE001 - every failure becomes one message
            self.failed.emit(report(exc, "measuring the CPU paths"))
            return
        self.done.emit(result)


class CpuMeasure(QObject):
    """GUI-thread handle, one for the app's life (the engine client owns it, as it owns the engine
    host): :meth:`start` on a model folder, :meth:`stop`; the worker's signals are re-emitted here
    (queued, so their slots run on the GUI thread)."""

    progress = Signal(int, str)
    done = Signal(object)
    failed = Signal(str)
    stopped = Signal()
    _run = Signal(str, object)

    def __init__(self, thread: QThread, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._stop = threading.Event()
        self._worker = _Worker()
        self._worker.moveToThread(thread)
        self._run.connect(self._worker.run)
        self._worker.progress.connect(self.progress)
        self._worker.done.connect(self.done)
        self._worker.failed.connect(self.failed)
        self._worker.stopped.connect(self.stopped)

    def start(self, model_dir: str) -> None:
        """Queue a measurement; a run stopped earlier keeps its own flag, so it still ends."""
        self._stop = threading.Event()
        self._run.emit(model_dir, self._stop)

    def stop(self) -> None:
        self._stop.set()
