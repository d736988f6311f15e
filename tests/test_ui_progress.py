"""Progress and ETA of a Speak run, from measured speed (ui/progress.py, no Qt)."""

from __future__ import annotations

import pytest

from ui.progress import DEFAULT_SECONDS_PER_CHAR, BatchProgress
from ui.views.transport import format_eta


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_fraction_overall_and_eta_follow_measured_speed() -> None:
    clock = Clock()
    progress = BatchProgress(clock=clock)
    progress.add(1, "x" * 100)  # expected 100 * 0.07 = 7 s of audio until one finishes
    progress.add(2, "x" * 100)
    assert progress.eta() is None and progress.overall() == 0.0

    clock.now += 2.0
    progress.audio(1, 3.5)
    assert progress.fraction(1) == pytest.approx(3.5 / (100 * DEFAULT_SECONDS_PER_CHAR))
    assert progress.overall() == pytest.approx(3.5 / 14)
    # 3.5 s of audio in 2 s of wall time; 10.5 s of audio left
    assert progress.eta() == pytest.approx(10.5 / (3.5 / 2.0))

    clock.now += 2.0
    progress.audio(1, 1.5)
    progress.done(1)  # segment 1 came out at 5 s: now 0.05 s per character
    assert progress.fraction(1) == 1.0
    assert progress.overall() == pytest.approx(5 / 10)
    assert progress.eta() == pytest.approx(5 / (5 / 4.0))

    progress.audio(2, 6.0)  # longer than its estimate: the estimate grows, never passes 99 %
    assert progress.fraction(2) < 1.0 and progress.overall() < 1.0
    progress.done(2)
    assert progress.finished() and progress.overall() == 1.0 and progress.eta() is None


def test_unknown_keys_are_ignored_and_eta_formats() -> None:
    progress = BatchProgress(clock=Clock())
    progress.audio(7, 1.0)
    progress.done(7)
    assert progress.fraction(7) == 0.0 and progress.overall() == 0.0
    assert format_eta(None) == "" and format_eta(5.4) == "0:05" and format_eta(125) == "2:05"
