"""One script's segments seen from the GUI thread: status, audio, progress, playback order.

The window hands in the project's :class:`SegmentJob`s. Each generation gets a fresh tag, so a late
chunk of a cancelled or superseded request is recognised and dropped. Chunks go to the in-order
playlist as they arrive (playback starts with the first chunk of the first segment and follows
script order, while later segments are still generating). A finished segment is written to the
project's cache folder and recorded in the project, so it survives a restart.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal

from app.errors import VoxDeskError
from app.project import Project, SegmentJob
from app.takes import Made, take_changes
from ui.engine_host import EngineClient, Job
from ui.errors import log_line, report
from ui.playback import Playback
from ui.progress import BatchProgress, RunCounts

_tags = itertools.count(1)
REPAINT_MS = 50  # rows and progress are repainted at most this often


def new_tag() -> int:
    """A job tag no other engine job of this process has (the back-check's takes use them too)."""
    return next(_tags)


@dataclass
class SegmentAudio:
    """What is known about one segment of the current script."""

    job: SegmentJob
    status: str = ""  # "", queued, generating, done, failed, cancelled
    chunks: list[np.ndarray] = field(default_factory=list)
    file: Path | None = None  # finished audio in the project's cache
    seconds: float | None = None
    seed: int | None = None
    message: str = ""  # why it failed: one plain line
    detail: str = ""  # the log line written when it failed
    tag: int | None = None
    takes: int = 1  # 2 or 3: the engine drew the segment again after a runaway (bad-case) take
    made: Made | None = None  # what the finished take was made with
    stale: dict[str, Any] = field(default_factory=dict)  # what differs from the settings now ({}: current)

    def samples(self) -> np.ndarray:
        if self.chunks:
            return np.concatenate(self.chunks)
        if self.file is not None:
            return read_wav(self.file)
        return np.zeros(0, np.float32)


def read_wav(path: Path) -> np.ndarray:
    """A finished segment's samples, read with the bounds of every audio file read back."""
    from app.audio.io import read_audio

    return read_audio(path, reject_silence=False)[0]


Builder = Callable[[SegmentJob], tuple[str | None, Any, Callable[[Any], Any]]]


class SpeakSession(QObject):
    """Routes engine events for the current script to segments, the playlist and progress."""

    segmentChanged = Signal(int)
    segmentDone = Signal(int)  # a segment's generation finished: its audio is complete
    progressChanged = Signal(float, object)  # overall 0..1, ETA seconds or None
    runFinished = Signal()
    failedToSave = Signal(str)
    stored = Signal()  # a finished segment's file is on disk and recorded in the project
    taken = Signal()  # ... and it is a new take: the script has work not yet in its file
    _written = Signal(object, object, object, str, float)  # writer thread: project, job, seed, path, seconds

    def __init__(self, client: EngineClient, playback: Playback, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.client = client
        self.playback = playback
        self.sample_rate = 0
        self.context = ""  # the loaded model's id: results of another model do not count
        self.project: Project | None = None
        self._reset_context = ""
        self.segments: list[SegmentAudio] = []
        self._by_tag: dict[int, int] = {}
        self._starting: list[SegmentAudio] | None = None  # Speak pressed, jobs not yet submitted
        self._progress = BatchProgress()
        self._dirty: set[int] = set()
        self._repaint = QTimer(self)
        self._repaint.setSingleShot(True)
        self._repaint.setInterval(REPAINT_MS)
        self._repaint.timeout.connect(self.flush)
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="voxdesk-writer")
        self._written.connect(self._on_written)
        host = client.host
        host.chunk.connect(self._on_chunk)
        host.finished.connect(self._on_finished)
        host.failed.connect(self._on_failed)
        host.retried.connect(self._on_retried)

    # --- script -----------------------------------------------------------------------------
    def reset(self, project: Project, jobs: list[SegmentJob] | None = None) -> None:
        """Re-read the project's segments after an edit (``jobs``: already made from it, e.g. on
        a worker thread). A segment whose job is unchanged (it may have moved) keeps its
        generation running, or its audio in memory (same model only). Others take their stored
        result when it still matches, else their last take marked stale (a settings change never
        hides a finished take); running ones that were edited away are cancelled."""
        self.project = project
        starting, self._starting = self._starting is not None, None
        same_model = self._reset_context == self.context
        self._reset_context = self.context
        # Matched without the seed: fixing a take's own seed ("keep this take's seed") keeps it.
        old = {
            replace(s.job, index=0, seed=None): s
            for s in self.segments
            if s.tag is not None or (same_model and s.status == "done" and s.chunks)
        }
        finished = {s.job.key: s for s in self.segments if s.status == "done" and s.tag is None}
        self._by_tag = {}
        segments: list[SegmentAudio] = []
        for job in project.jobs() if jobs is None else jobs:
            key = replace(job, index=0, seed=None)
            seg = old.get(key)
            same = seg is not None and (
                job.seed == seg.job.seed or (seg.tag is None and job.seed in (None, seg.seed))
            )
            seg = old.pop(key) if same else None
            if seg is not None:
                seg.job = job
                if seg.tag is not None:
                    self._by_tag[seg.tag] = job.index
            else:
                seg = self._restored(project, job, finished.get(job.key))
            if seg.status == "done":
                seg.stale = take_changes(seg.made, seg.seed, job, self.context)
            segments.append(seg)
        self.segments = segments
        gone = [s for s in old.values() if s.tag is not None]
        if gone:
            self.client.cancel([s.tag for s in gone])
            for seg in gone:
                self.playback.fail(seg.job.key)  # the playlist must not wait for it
        if not self._by_tag and (gone or starting):
            self.flush()
            self.runFinished.emit()

    def _restored(self, project: Project, job: SegmentJob, before: SegmentAudio | None) -> SegmentAudio:
        """A segment for ``job``: the project's current result, else the finished take in memory
        (``before``, made with other settings), else the project's last take (the same, after a
        restart), else its failure or nothing yet. The caller marks a take made with other
        settings stale."""
        seg = SegmentAudio(job)
        res = project.result(job, self.context)
        if res.status == "done" and res.audio_file:
            seg.status, seg.file, seg.made = "done", Path(res.audio_file), Made.of(job, self.context)
            seg.seconds, seg.seed = res.duration, res.seed
        elif before is not None:  # newer than the project's record while its file is written
            before.job = job
            return before
        elif (take := project.take(job)) is not None and take.audio_file:
            seg.status, seg.file, seg.made = "done", Path(take.audio_file), take.made
            seg.seconds, seg.seed = take.duration, take.seed
        elif res.status == "failed":  # a failure is still a failure after a restart
            seg.status, seg.message = "failed", res.error
        return seg

    def busy(self) -> bool:
        return bool(self._by_tag) or self._starting is not None

    def stale_indices(self) -> list[int]:
        """Finished segments whose take was made with other settings than the script's now."""
        return [i for i, s in enumerate(self.segments) if s.status == "done" and s.stale]

    # --- commands ---------------------------------------------------------------------------
    def speak(self, build: Builder) -> None:
        """Play the whole script: finished segments from the cache, all others generated at once.

        The rows turn Queued at once; the voices are read and the jobs submitted on the next turn
        of the event loop, so the window shows that Speak was pressed before any work starts."""
        if not self.segments:
            return
        self._progress = BatchProgress()
        self._begin([s.job.key for s in self.segments])
        todo = []
        for index, seg in enumerate(self.segments):
            if seg.status == "done":
                self.playback.add(seg.job.key, seg.samples())
                self.playback.finish(seg.job.key)
            else:
                todo.append(index)
                seg.status, seg.message = "queued", ""
                self._touch(index)
        self.flush()
        if not todo:
            self.runFinished.emit()
            return
        self._starting = segments = self.segments
        QTimer.singleShot(0, lambda: self._start(segments, todo, build))

    def _start(self, segments: list[SegmentAudio], todo: list[int], build: Builder) -> None:
        if self._starting is not segments:  # stopped, or the script changed meanwhile
            return
        self._starting = None
        todo = [i for i in todo if segments[i].status == "queued"]
        if todo:
            self._generate(todo, build)
        else:
            self.runFinished.emit()

    def regenerate(self, indices: list[int], build: Builder) -> None:
        """Generate segments again (their jobs say which seed); plays them when nothing else runs."""
        if not self.busy():
            self._progress = BatchProgress()
            self._begin([self.segments[i].job.key for i in indices])
        self._generate(indices, build)

    def _begin(self, keys: list[str]) -> None:
        gap = self.project.settings.gap_seconds if self.project is not None else 0.0
        pauses = {s.job.key: s.job.pause_after for s in self.segments}
        self.playback.begin(keys, self.sample_rate, gap, pauses)

    def _generate(self, indices: list[int], build: Builder) -> None:
        jobs, failures = [], []
        for index in indices:
            seg = self.segments[index]
            if seg.tag is not None:
                self._by_tag.pop(seg.tag, None)
                self.client.cancel([seg.tag])
            seg.tag = new_tag()
            seg.status, seg.chunks, seg.message, seg.file, seg.seconds = "queued", [], "", None, None
            seg.takes, seg.made, seg.stale = 1, None, {}
            seg.detail = ""
            self._by_tag[seg.tag] = index
            self._progress.add(seg.tag, seg.job.text)
            try:
                voice, prompt, make = build(seg.job)
            except VoxDeskError as exc:  # e.g. a voice tag naming no voice: logged by _fail
                failures.append((seg.tag, str(exc)))
                continue
            except Exception as exc:  # noqa: BLE001
                failures.append((seg.tag, report(exc, "preparing a segment")))
                continue
            jobs.append(Job(seg.tag, voice, prompt, make))
            self._touch(index)
        if jobs:
            self.client.submit(jobs)
        for tag, message in failures:  # after all are registered: the run ends with the last one
            self._fail(tag, message)
        self._emit_progress()

    def stop(self) -> None:
        """Cancel everything still generating and stop playback."""
        tags = list(self._by_tag)
        starting, self._starting = self._starting, None
        if starting is not None:
            for index, seg in enumerate(self.segments):
                if seg.status == "queued" and seg.tag is None:
                    seg.status = "cancelled"
                    self._touch(index)
        if tags:
            self.client.cancel(tags)
        for tag in tags:
            index = self._by_tag.pop(tag)
            seg = self.segments[index]
            seg.status, seg.tag, seg.chunks = "cancelled", None, []
            self._touch(index)
        self.playback.stop()
        self.flush()
        if tags or starting is not None:
            self.runFinished.emit()

    # --- queries ----------------------------------------------------------------------------
    def fraction(self, index: int) -> float:
        seg = self.segments[index]
        return self._progress.fraction(seg.tag) if seg.tag is not None else float(seg.status == "done")

    def counts(self) -> RunCounts:
        """Done, failed and remaining segments of the script, counted apart."""
        done = sum(s.status == "done" for s in self.segments)
        failed = sum(s.status == "failed" for s in self.segments)
        partial = sum(self.fraction(i) for i, s in enumerate(self.segments) if s.tag is not None)
        return RunCounts(len(self.segments), done, failed, partial)

    def failed_indices(self) -> list[int]:
        return [i for i, s in enumerate(self.segments) if s.status == "failed"]

    def finished_audio(self) -> list[tuple[SegmentJob, np.ndarray]]:
        """(job, samples) of every finished segment, in script order."""
        return [(s.job, s.samples()) for s in self.segments if s.status == "done"]

    # --- engine events ----------------------------------------------------------------------
    def _on_chunk(self, tag: int, samples: np.ndarray) -> None:
        index = self._by_tag.get(tag)
        if index is None:
            return
        seg = self.segments[index]
        seg.chunks.append(samples)
        seg.status = "generating"
        seg.seconds = sum(len(c) for c in seg.chunks) / max(1, self.sample_rate)
        self.playback.add(seg.job.key, samples)
        self._progress.audio(tag, len(samples) / max(1, self.sample_rate))
        self._touch(index)

    def _on_retried(self, tag: int, take: int) -> None:
        """The take streamed so far ran away (6 patches per token) and is being drawn again:
        its audio is dropped from the segment and from playback, which resumes with the new take."""
        index = self._by_tag.get(tag)
        if index is None:
            return
        seg = self.segments[index]
        seg.chunks, seg.seconds, seg.takes = [], 0.0, take
        self.playback.restart(seg.job.key)
        self._touch(index)

    def _on_finished(self, tag: int, event: Any) -> None:
        index = self._by_tag.pop(tag, None)
        if index is None:
            return
        seg = self.segments[index]
        seg.status, seg.seed, seg.tag = "done", int(event.seed), None
        seg.made = Made.of(seg.job, self.context)
        self._progress.done(tag)
        self.playback.finish(seg.job.key)
        self._store(seg)
        self._after_event(index)
        self.segmentDone.emit(index)

    def replace_take(self, index: int, audio: np.ndarray, seed: int) -> None:
        """A better take of a finished segment (the back-check's) becomes its audio: in memory,
        in the project's cache and in export. A playlist already running keeps what it has."""
        seg = self.segments[index]
        seg.chunks, seg.seed, seg.file, seg.takes = [audio], seed, None, 1
        seg.made, seg.stale = Made.of(seg.job, self.context), {}
        seg.seconds = len(audio) / max(1, self.sample_rate)
        self._store(seg)
        self._touch(index)

    def _store(self, seg: SegmentAudio) -> None:
        """Keep the finished audio in the project's cache (a restart restores it). The file is
        written (and fsync'ed) on a worker thread; the project is updated back on this thread."""
        if self.project is None:
            return
        audio, job, seed = seg.samples(), seg.job, seg.seed or 0
        path = self.project.audio_path(job, seed, self.context)
        self._writer.submit(self._write, self.project, path, audio, self.sample_rate, job, seed)

    def _write(
        self, project: Project, path: Path, audio: np.ndarray, rate: int, job: SegmentJob, seed: int
    ) -> None:
        """Worker thread: only the file write; everything else goes through ``_written``."""
        from app.audio.io import write_audio

        try:
            write_audio(path, audio, rate)
        except Exception as exc:  # noqa: BLE001 - the audio stays in memory for this session
            self.failedToSave.emit(report(exc, "saving a segment"))
            return
        self._written.emit(project, job, seed, str(path), len(audio) / rate)

    def _on_written(self, project: Project, job: SegmentJob, seed: int, path: str, seconds: float) -> None:
        """Record the take in the project it was made for (another script opened meanwhile
        does not get it) and say so: a new take is unsaved work, like an edit."""
        if project is not self.project:
            return
        project.mark(job, "done", self.context, audio_file=path, duration=seconds, seed=seed)
        seg = next((s for s in self.segments if s.job == job and s.seed == seed and s.status == "done"), None)
        if seg is not None:
            seg.file = Path(path)
        self.taken.emit()
        self.stored.emit()

    def wait_for_writes(self) -> None:
        """Block until every pending segment file is on disk (closing the window)."""
        self._writer.submit(lambda: None).result()
        QCoreApplication.sendPostedEvents(self)  # run the queued ``_on_written`` calls now

    def _on_failed(self, tag: int, message: str) -> None:
        if tag in self._by_tag:
            self._fail(tag, message)

    def _fail(self, tag: int, message: str) -> None:
        index = self._by_tag.pop(tag)
        seg = self.segments[index]
        seg.status, seg.message, seg.tag = "failed", message, None
        seg.detail = log_line(message, f"segment {index + 1} ({seg.job.voice or 'model voice'}) failed")
        self._progress.done(tag)
        self.playback.fail(seg.job.key)
        # Recorded, so the row still says Failed after a restart; but a failed regeneration never
        # replaces a finished take in the project: the next refresh shows that take again.
        if self.project is not None and self.project.take(seg.job) is None:
            self.project.mark(seg.job, "failed", self.context, error=message)
            self.stored.emit()
        self._after_event(index)

    def _after_event(self, index: int) -> None:
        self._touch(index)
        if not self._by_tag:
            self.flush()
            self.runFinished.emit()

    def _emit_progress(self) -> None:
        if not self._repaint.isActive():
            self._repaint.start()

    def _touch(self, index: int) -> None:
        """Mark a row for the next repaint: many chunks a second cost one table update."""
        self._dirty.add(index)
        self._emit_progress()

    def flush(self) -> None:
        """Send the pending row and progress updates now."""
        self._repaint.stop()
        dirty, self._dirty = sorted(self._dirty), set()
        for index in dirty:
            if index < len(self.segments):
                self.segmentChanged.emit(index)
        self.progressChanged.emit(self._progress.overall(), self._progress.eta())
