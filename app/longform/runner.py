"""Speak a book project chapter by chapter through a speech backend, resumably.

The runner keeps a window of segments in flight at once (the engine batches them: continuous
batching), in reading order, skipping every segment already on disk. Each finished segment goes
straight to its file, so memory holds only the segments in flight, whatever the book's length.
Progress (per chapter, and the book's ETA from the characters per second measured in this run)
goes to a callback; ``cancel()`` returning True stops the run between two events, dropping only
the segments in flight — the next run makes them again, with the same seeds.

The backend is anything with the :class:`app.backends.SpeechBackend` interface: the CLI's own
``EngineHost`` thread, or the window's engine (its shared host), or a remote server.
"""

from __future__ import annotations

import functools
import itertools
import queue
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from app.engine.events import AudioChunk, RequestFailed, RequestFinished, RequestRetried
from app.engine.request import SynthRequest
from app.longform.project import BookProject, ChapterState, segment_seed

POLL_S = 0.1  # how often a waiting runner looks at ``cancel``


@dataclass(frozen=True)
class ChapterProgress:
    state: ChapterState
    done: int  # segments
    total: int
    message: str = ""  # why it failed


@dataclass(frozen=True)
class BookProgress:
    """A snapshot, safe to hand to another thread."""

    chapters: tuple[ChapterProgress, ...]
    done_chars: int
    total_chars: int
    chars_per_s: float | None = None  # measured in this run; None before its first segment
    running: bool = False

    @property
    def fraction(self) -> float:
        return self.done_chars / self.total_chars if self.total_chars else 1.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the measured rate; None while nothing has been measured."""
        if not self.chars_per_s:
            return None
        return (self.total_chars - self.done_chars) / self.chars_per_s

    @property
    def chapters_done(self) -> int:
        return sum(c.state is ChapterState.DONE for c in self.chapters)


def format_eta(seconds: float) -> str:
    """``"4:05"``, or ``"2:04:05"`` past an hour (a book's ETA runs to hours)."""
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def book_progress(project: BookProject, active: set[int] = frozenset(), rate: float | None = None,
                  running: bool = False) -> BookProgress:  # fmt: skip
    """The project's progress as on disk; chapters in ``active`` are shown generating."""
    chapters = []
    for i, info in enumerate(project.chapters):
        state, message = project.state(i)
        if i in active and state is not ChapterState.DONE:
            state, message = ChapterState.GENERATING, ""
        chapters.append(ChapterProgress(state, len(project.done(i)), info.segments, message))
    done = sum(project.done_chars(i) for i in range(len(project.chapters)))
    return BookProgress(tuple(chapters), done, project.total_chars, rate, running)


@dataclass
class _InFlight:
    handle: int  # the backend's, for cancel
    chapter: int
    segment: int
    seed: int
    chunks: list


class BookRunner:
    """One run over a project; call :meth:`run` on the thread that may block (not the GUI's)."""

    def __init__(self, project: BookProject, backend, voice, sample_rate: int, window: int = 8) -> None:
        self.project = project
        self.backend = backend
        self.voice = voice  # a VoicePrompt, or None for the model's own voice
        self.sample_rate = sample_rate
        self.window = max(1, window)

    def _todo(self) -> Iterator[tuple[int, int]]:
        """(chapter, segment) of every segment not on disk, in reading order."""
        for ch in range(len(self.project.chapters)):
            done = self.project.done(ch)
            for seg in range(self.project.chapters[ch].segments):
                if seg not in done:
                    yield ch, seg

    def _request(self, ch: int, seg: int) -> SynthRequest:
        s = self.project.settings
        text = self.project.pieces(ch)[seg].text
        return SynthRequest(text, self.voice, segment_seed(s.seed, ch, seg), s.cfg, s.timesteps,
                            normalize=s.normalize)  # fmt: skip

    def run(self, progress: Callable[[BookProgress], None] | None = None,
            cancel: Callable[[], bool] | None = None) -> BookProgress:  # fmt: skip
        """Speak every segment not yet on disk; returns the final progress. A segment that fails
        marks its chapter failed (the message is kept) and the run goes on with the next chapter;
        the next run tries the chapter again."""
        events: queue.SimpleQueue = queue.SimpleQueue()
        failed: set[int] = set()
        for ch in range(len(self.project.chapters)):
            if self.project.state(ch)[0] is ChapterState.FAILED:
                self.project.clear_failed(ch)
        todo = self._todo()
        flight: dict[int, _InFlight] = {}  # our key -> segment
        keys = itertools.count()
        started = time.monotonic()
        spoken = 0  # characters finished in this run

        def report(running: bool = True) -> BookProgress:
            elapsed = time.monotonic() - started
            rate = spoken / elapsed if spoken and elapsed > 0 else None
            snap = book_progress(self.project, {f.chapter for f in flight.values()}, rate, running)
            if progress is not None:
                progress(snap)
            return snap

        def fill() -> None:
            while len(flight) < self.window:
                nxt = next((t for t in todo if t[0] not in failed), None)  # a failed chapter is skipped
                if nxt is None:
                    return
                req = self._request(*nxt)
                key = next(keys)
                handle = self.backend.submit(req, functools.partial(_put, events, key))
                flight[key] = _InFlight(handle, nxt[0], nxt[1], req.seed, [])

        try:
            fill()
            report()
            while flight:
                if cancel is not None and cancel():
                    break
                try:
                    key, ev = events.get(timeout=POLL_S)
                except queue.Empty:
                    continue
                item = flight.get(key)
                if item is None:
                    continue  # a late event of a request already dropped
                if isinstance(ev, AudioChunk):
                    item.chunks.append(ev.samples)
                elif isinstance(ev, RequestRetried):
                    item.chunks.clear()
                elif isinstance(ev, RequestFinished):
                    del flight[key]
                    audio = np.concatenate(item.chunks) if item.chunks else np.zeros(1, np.float32)
                    rate = int(ev.stats.get("sample_rate", self.sample_rate))
                    self.project.save_segment(item.chapter, item.segment, audio, rate, item.seed)
                    spoken += len(self.project.pieces(item.chapter)[item.segment].text)
                    fill()
                    report()
                elif isinstance(ev, RequestFailed):
                    del flight[key]
                    failed.add(item.chapter)
                    self.project.set_failed(item.chapter, ev.message)
                    for k in [k for k, f in flight.items() if f.chapter == item.chapter]:
                        self.backend.cancel(flight.pop(k).handle)
                    fill()
                    report()
        finally:
            for item in flight.values():
                self.backend.cancel(item.handle)
            flight.clear()
        return report(running=False)


def _put(events: queue.SimpleQueue, key: int, event) -> None:
    events.put((key, event))
