"""Progress and ETA for a batch of segments, from measured speed (no Qt).

A segment's length is unknown until the model stops, so each one is estimated from its text
(seconds of audio per character, learnt from the segments already finished in this run). The
generation speed is measured as seconds of audio produced per wall-clock second over the last
``SPEED_WINDOW_S`` of the run (the engine's speed changes as the batch shrinks, and a load or a
voice encode at the start is not speech).

No ETA is given before there is evidence for one: a segment finished in this run (so its length
per character is measured, not assumed), ``MIN_ELAPSED_S`` of wall time and ``MIN_AUDIO_S`` of
audio (or ``MIN_SHARE`` of the expected audio, for a job shorter than that). Extrapolating
from the first chunks of a 196-segment run gave "about 8842:22 left"; a one-segment regenerate
never shows one (it is finished when there would be evidence).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

# Roughly 14 characters of English per second of speech; replaced by the measured rate.
DEFAULT_SECONDS_PER_CHAR = 0.07
SPEED_WINDOW_S = 30.0  # the speed is audio made per second over this much of the recent run
MIN_ELAPSED_S = 3.0  # evidence needed before an ETA: wall time ...
MIN_AUDIO_S = 2.0  # ... seconds of audio produced (or MIN_SHARE of a shorter job), and one
MIN_SHARE = 0.05  # finished segment


@dataclass
class _Item:
    chars: int
    seconds: float = 0.0
    done: bool = False


@dataclass
class BatchProgress:
    """Tracks audio produced per segment; ``clock`` is injectable for tests."""

    clock: Callable[[], float] = time.monotonic
    _items: dict[int, _Item] = field(default_factory=dict)
    _start: float | None = None
    # (time, audio produced so far) after each chunk: the speed is read over a window of these
    _marks: deque[tuple[float, float]] = field(default_factory=deque)
    _produced: float = 0.0

    def add(self, key: int, text: str) -> None:
        if self._start is None or self.finished():
            self._start = self.clock()
            self._marks.clear()
        self._items[key] = _Item(chars=max(1, len(text)))

    def audio(self, key: int, seconds: float) -> None:
        item = self._items.get(key)
        if item is not None:
            item.seconds += seconds
            self._produced += seconds
            now = self.clock()
            self._marks.append((now, self._produced))
            # keep one mark older than the window: the window's start is read from it
            while len(self._marks) > 1 and self._marks[1][0] <= now - SPEED_WINDOW_S:
                self._marks.popleft()

    def done(self, key: int) -> None:
        item = self._items.get(key)
        if item is not None:
            item.done = True

    def finished(self) -> bool:
        return all(i.done for i in self._items.values())

    def _seconds_per_char(self) -> float:
        done = [i for i in self._items.values() if i.done and i.seconds > 0]
        if not done:
            return DEFAULT_SECONDS_PER_CHAR
        return sum(i.seconds for i in done) / sum(i.chars for i in done)

    def _expected(self, item: _Item, rate: float) -> float:
        if item.done:
            return item.seconds
        # Never below what is already there: a long segment keeps growing its estimate.
        return max(item.chars * rate, item.seconds * 1.05)

    def fraction(self, key: int) -> float:
        """0..1 for one segment (1.0 only when it finished)."""
        item = self._items.get(key)
        if item is None:
            return 0.0
        if item.done:
            return 1.0
        return min(0.99, item.seconds / self._expected(item, self._seconds_per_char()))

    def overall(self) -> float:
        rate = self._seconds_per_char()
        expected = sum(self._expected(i, rate) for i in self._items.values())
        produced = sum(i.seconds for i in self._items.values())
        if not self._items or expected <= 0:
            return 0.0
        return 1.0 if self.finished() else min(0.99, produced / expected)

    def speed(self) -> float | None:
        """Seconds of audio made per wall-clock second over the last ``SPEED_WINDOW_S``."""
        if self._start is None:
            return None
        now = self.clock()
        since = max(self._start, now - SPEED_WINDOW_S)
        before = 0.0  # audio produced by ``since``
        for t, produced in self._marks:
            if t > since:
                break
            before = produced
        if now <= since:
            return None
        return (self._produced - before) / (now - since)

    def eta(self) -> float | None:
        """Seconds left, or None until there is evidence to extrapolate from (see the module)."""
        if self._start is None or self.finished():
            return None
        measured = any(i.done and i.seconds > 0 for i in self._items.values())
        elapsed = self.clock() - self._start
        if not measured or elapsed < MIN_ELAPSED_S:
            return None
        rate = self._seconds_per_char()
        expected = sum(self._expected(i, rate) for i in self._items.values())
        speed = self.speed()
        if self._produced < min(MIN_AUDIO_S, MIN_SHARE * expected) or not speed:
            return None
        return max(0.0, expected - self._produced) / speed


@dataclass(frozen=True)
class RunCounts:
    """Where a script stands: finished segments (done or failed) apart from the remaining ones.

    ``partial`` is the summed progress (0..1 each) of the segments still generating, so the bar
    moves while a long segment is being made without ever counting it as finished.
    """

    total: int = 0
    done: int = 0
    failed: int = 0
    partial: float = 0.0

    @property
    def remaining(self) -> int:
        return self.total - self.done - self.failed

    @property
    def finished(self) -> int:
        return self.done + self.failed

    def fraction(self) -> float:
        """The bar: what is finished (done + failed), plus the running segments' share."""
        if not self.total:
            return 0.0
        return min(1.0, (self.finished + min(self.partial, self.remaining)) / self.total)

    def failed_fraction(self) -> float:
        return self.failed / self.total if self.total else 0.0
