"""Progress and ETA for a batch of segments, from measured speed (no Qt).

A segment's length is unknown until the model stops, so each one is estimated from its text
(seconds of audio per character, learnt from the segments already finished in this run). The
generation speed is measured as seconds of audio produced per wall-clock second.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

# Roughly 14 characters of English per second of speech; replaced by the measured rate.
DEFAULT_SECONDS_PER_CHAR = 0.07


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

    def add(self, key: int, text: str) -> None:
        if self._start is None or self.finished():
            self._start = self.clock()
        self._items[key] = _Item(chars=max(1, len(text)))

    def audio(self, key: int, seconds: float) -> None:
        item = self._items.get(key)
        if item is not None:
            item.seconds += seconds

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

    def eta(self) -> float | None:
        """Seconds left, or None until there is a speed to extrapolate from."""
        if self._start is None or self.finished():
            return None
        rate = self._seconds_per_char()
        produced = sum(i.seconds for i in self._items.values())
        elapsed = self.clock() - self._start
        if produced <= 0 or elapsed <= 0:
            return None
        remaining = sum(self._expected(i, rate) - i.seconds for i in self._items.values())
        return max(0.0, remaining) / (produced / elapsed)


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
