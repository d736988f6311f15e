"""The text path on hostile input: one very long line segments in linear time, and a
pronunciation regex that backtracks without end is stopped, reported and skipped."""

from __future__ import annotations

import time

from ui_fixtures import ScriptedDialogs, home, open_window  # noqa: F401

from app import project as projects
from app.text.pronunciation import PronunciationList, Rule
from app.text.segmenter import split_script

EVIL = Rule(r"(a|aa)+$", "x", regex=True)
EVIL_TEXT = "a" * 40 + "!"


def test_a_100k_character_single_line_segments_quickly():
    for line in (
        "Hello there Mr. Smith, how are you e.g. today. " * 2100,  # dots, abbreviations, commas
        "word " * 20_000,  # no punctuation: cut at spaces
        "x" * 100_000,  # nothing at all: hard cuts
        "a." * 50_000,  # a dot every other character
    ):
        started = time.perf_counter()
        segments = split_script(line)
        elapsed = time.perf_counter() - started
        assert "".join(s.text for s in segments).replace(" ", "") == line.replace(" ", "")
        assert elapsed < 2.0, f"{elapsed:.2f} s for {len(line)} characters"  # ~0.1 s; was minutes


def test_a_runaway_regex_is_stopped_reported_and_skipped():
    rules = PronunciationList([EVIL, Rule("b", "B")])
    rules.validate()
    started = time.perf_counter()
    assert rules.apply(EVIL_TEXT + " b") == EVIL_TEXT + " B"
    assert time.perf_counter() - started < 10  # unbounded without the limit
    (problem,) = rules.take_problems()
    assert "Pronunciation rule 1" in problem and "took too long" in problem
    started = time.thread_time()  # CPU time: a busy shared CI core cannot stretch it
    assert rules.apply(EVIL_TEXT) == EVIL_TEXT  # skipped from then on: no second wait
    assert time.thread_time() - started < 0.05 and rules.take_problems() == []


def test_a_runaway_regex_in_the_window_is_reported_and_the_window_works(qtbot, home):  # noqa: F811
    project = projects.Project(text=f"{EVIL_TEXT} Hello.")
    project.rules.set_rules([EVIL, Rule("Hello", "Hi")])
    project.autosave()
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    qtbot.waitUntil(lambda: bool(dialogs.errors))
    assert "took too long" in dialogs.errors[0] and "(a|aa)+$" in dialogs.errors[0]
    assert [j.text for j in window.project.jobs()] == [EVIL_TEXT, "Hi."]
    window.script.editor.setPlainText(f"{EVIL_TEXT} again.")
    window.script.flush()
    assert len(dialogs.errors) == 1  # reported once, not per edit


def test_a_large_paste_is_segmented_off_the_gui_thread(qtbot, home, monkeypatch):  # noqa: F811
    import threading

    from app import project as project_module

    threads: list[str] = []
    real = project_module.split_script

    def recording(text, max_chars):
        threads.append(threading.current_thread().name)
        return real(text, max_chars)

    monkeypatch.setattr(project_module, "split_script", recording)
    window = open_window(qtbot, None, ScriptedDialogs())
    line = "Hello there Mr. Smith, how are you e.g. today. " * 2100  # one 100k-character line
    threads.clear()
    window.script.editor.setPlainText(line)
    window.script.flush()
    assert window.script.table.rows() == []  # not yet: the GUI thread did not wait for it
    qtbot.waitUntil(lambda: len(window.script.table.rows()) > 2000, timeout=30_000)
    assert threads and set(threads) == {"voxdesk-segmenter"}
    assert [r.text for r in window.script.table.rows()] == [s.text for s in real(line, 200)]
    window.script.editor.setPlainText("Short again.")  # a small edit after a large one wins
    window.script.flush()
    qtbot.wait(50)
    assert [r.text for r in window.script.table.rows()] == ["Short again."]
