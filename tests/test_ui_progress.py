"""Progress and ETA of a Speak run, from measured speed (ui/progress.py, no Qt)."""

from __future__ import annotations

import pytest

from ui.progress import DEFAULT_SECONDS_PER_CHAR, MIN_ELAPSED_S, SPEED_WINDOW_S, BatchProgress
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
    # 3.5 s of audio in 2 s, but no segment finished yet: its length per character is a guess
    assert progress.eta() is None

    clock.now += 2.0
    progress.audio(1, 1.5)
    progress.done(1)  # segment 1 came out at 5 s: now 0.05 s per character
    assert progress.fraction(1) == 1.0
    assert progress.overall() == pytest.approx(5 / 10)
    # 5 s of audio in 4 s of wall time; segment 2 is expected at 5 s
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


def test_eta_none_until_there_is_evidence_for_one() -> None:
    """The issue's "about 8842:22 left" 20 s into 196 segments, and "4:50 left" for a one-second
    regenerate: neither has a finished segment to measure from, so no ETA is shown."""
    clock = Clock()
    run = BatchProgress(clock=clock)
    for key in range(196):
        run.add(key, "A sentence of about sixty characters, as a script has them.")
    clock.now += 20.0
    run.audio(0, 0.16)  # the first chunk of a slow start
    assert run.eta() is None

    clock.now += 2.0
    run.audio(0, 2.0)
    run.done(0)
    assert run.eta() is not None

    one = BatchProgress(clock=clock)
    one.add(1, "Hello there.")
    clock.now += 0.5
    one.audio(1, 0.5)
    assert one.eta() is None
    clock.now += 0.5
    one.audio(1, 0.5)
    one.done(1)
    assert one.eta() is None

    early = BatchProgress(clock=clock)  # a finished segment, but under MIN_ELAPSED_S of evidence
    early.add(1, "x" * 10)
    early.add(2, "x" * 10)
    clock.now += MIN_ELAPSED_S / 2
    early.audio(1, 3.0)
    early.done(1)
    assert early.eta() is None

    small = BatchProgress(clock=clock)  # all of its audio is under MIN_AUDIO_S: a share will do
    for key in range(10):
        small.add(key, "x" * 10)
    clock.now += MIN_ELAPSED_S
    for key in range(3):
        small.audio(key, 0.1)
        small.done(key)
    assert small.eta() == pytest.approx(0.7 / (0.3 / MIN_ELAPSED_S))


def test_eta_follows_the_recent_speed_not_the_whole_run() -> None:
    """A slow start (loading, encoding the voice) does not weigh on the ETA once the run is past
    the speed window: the speed is read from the last SPEED_WINDOW_S seconds."""
    clock = Clock()
    run = BatchProgress(clock=clock)
    for key in range(10):
        run.add(key, "x" * 100)
    clock.now += 60.0  # a minute without audio
    for key in range(3):  # then 1 s of audio per second, 5 s per segment
        for _ in range(5):
            clock.now += 1.0
            run.audio(key, 1.0)
        run.done(key)
    assert run.speed() == pytest.approx(15.0 / SPEED_WINDOW_S)  # 15 s of audio in the last 30 s
    for _ in range(int(SPEED_WINDOW_S)):
        clock.now += 1.0
        run.audio(3, 1.0)
    assert run.speed() == pytest.approx(1.0)
    # 7 segments of 5 s expected, 30 s of segment 3 already made (it grows past its estimate)
    left = 6 * 5.0 + 30.0 * 0.05
    assert run.eta() == pytest.approx(left / 1.0)
