"""The back-check in the window: segments heard as they finish, flagged ones drawn again, the best
take kept in the cache and in export; Check all and Fix flagged; no recognizer; a recognizer
that fails mid-run.

The recognizer is the tiny SenseVoice-format model (tests/tiny_asr.py) run by the real sherpa-onnx
code. The tiny TTS model's random speech is too quiet to be heard (score 1.0: flagged), so every
take is drawn again up to the limit; :class:`Ears` has chosen takes heard as words instead (their
audio is replaced by the tones of those words before recognition), so a later take can win.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import soundfile
from PySide6.QtCore import Qt
from tiny_asr import tone_words, write_tiny_sensevoice
from ui_fixtures import ScriptedDialogs, home, open_window, played, ui_model  # noqa: F401

from app.asr import catalog
from app.asr.sensevoice import SenseVoiceRecognizer
from app.backcheck.takes import DEFAULT_MAX_TAKES, DEFAULT_THRESHOLD, take_seed
from app.export import Clip, merge
from app.models.voxcpm.generate import Synthesizer
from ui.settings import Settings

STEPS = 3  # solver steps a patch: quick takes
SCRIPT = "你好世界。\nHello world."  # two segments, heard in Chinese and in English
ZH_WORDS = [4, 5, 6, 7]  # the tiny recognizer's bands for 你 好 世 界


class Ears:
    """Counts the takes heard per language; take ``n`` of a language listed in ``words`` is heard
    as that list's tone words (the real recognizer runs on them) instead of its own audio."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, words: dict[tuple[str, int], list[int]]) -> None:
        self.calls: dict[str, int] = {}
        real = SenseVoiceRecognizer.transcribe

        def transcribe(recognizer, audio, sample_rate, language="auto", *more):
            self.calls[language] = self.calls.get(language, 0) + 1
            bands = words.get((language, self.calls[language]))
            if bands is not None:
                audio, sample_rate = tone_words(bands), 16000
            return real(recognizer, audio, sample_rate, language, *more)

        monkeypatch.setattr(SenseVoiceRecognizer, "transcribe", transcribe)


def _window(qtbot, model, auto: bool = True):
    Settings().check_auto = auto
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, model, dialogs)
    window.script.normalize.setChecked(False)  # no normalizer child: quick
    window.script.settings.steps.setValue(STEPS)
    window.script.editor.setPlainText(SCRIPT)
    window.script.flush()
    return window, dialogs


def _speak(qtbot, window) -> None:
    with qtbot.waitSignal(window.session.runFinished, timeout=60_000):
        window.speak()
    qtbot.waitUntil(lambda: not window.backcheck.busy(), timeout=60_000)
    window.session.wait_for_writes()


def _status(table, row: int) -> str:
    """The Status cell without the playhead ("▶ 0.4 s · ") the segment may have while playing."""
    return table.status_text(replace(table.rows()[row], playing=False))


def _take(model, seg, seed: int) -> np.ndarray:
    return Synthesizer.from_dir(model, "cpu").synthesize(seg.job.text, seed=seed, timesteps=STEPS).audio


def _export(qtbot, window, path) -> np.ndarray:
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    window.actions.dialog.path.setText(str(path))
    window.actions.dialog.accept()
    return soundfile.read(str(path), dtype="float32")[0]


def test_flagged_segment_is_redrawn_and_the_best_take_exported(qtbot, home, ui_model, tmp_path, monkeypatch):  # noqa: F811
    write_tiny_sensevoice(catalog.default_folder())
    ears = Ears(monkeypatch, {("zh", 2): ZH_WORDS})  # the Chinese segment's second take is heard right
    window, dialogs = _window(qtbot, ui_model)
    first: dict[int, tuple[int, np.ndarray]] = {}
    window.session.segmentDone.connect(
        lambda i: first.setdefault(i, (window.session.segments[i].seed, window.session.segments[i].samples()))
    )
    _speak(qtbot, window)
    assert dialogs.errors == [] and ears.calls == {"zh": 2, "en": DEFAULT_MAX_TAKES}
    zh, en = window.session.segments
    table = window.script.table

    # Chinese: take 1 heard as nothing (1.00, flagged), take 2 heard right: kept, no take 3.
    assert zh.seed == take_seed(first[0][0], 2)
    assert table.cell_text(0, 5) == "0.00" and table.cell(0, 5).toolTip() == "Heard: “你好世界”"
    assert _status(table, 0) == "Done · take 2"
    assert "heard 2 takes" in table.cell(0, 3).toolTip()
    # English: three takes all heard as nothing; the earliest is kept and still flagged.
    assert en.seed == first[1][0]
    np.testing.assert_array_equal(en.samples(), first[1][1])
    assert table.cell_text(1, 5) == "1.00 ⚑" and table.cell(1, 5).toolTip().startswith("Nothing was heard.")
    assert _status(table, 1) == "Done · take 1 of 3"

    # The kept take is that seed's audio, in the project's cache and record too.
    np.testing.assert_allclose(zh.samples(), _take(ui_model, zh, zh.seed), atol=1e-3, rtol=0)
    assert not np.allclose(zh.samples()[: len(first[0][1])], first[0][1][: len(zh.samples())], atol=1e-3)
    record = window.project.result(zh.job, window.session.context)
    assert record.seed == zh.seed and zh.file is not None and str(zh.file) == record.audio_file
    np.testing.assert_allclose(soundfile.read(str(zh.file), dtype="float32")[0], zh.samples(), atol=1e-4)

    # Playback was untouched (the first takes played); export writes the kept takes.
    rate, gap = window.session.sample_rate, window.project.settings.gap_seconds
    heard_first = merge([Clip("", first[0][1]), Clip("", first[1][1])], rate, gap)
    np.testing.assert_array_equal(played(window)[: len(heard_first)], heard_first)
    kept = merge([Clip(s.job.display_text, s.samples()) for s in (zh, en)], rate, gap)
    np.testing.assert_allclose(_export(qtbot, window, tmp_path / "speech.wav"), kept, atol=1e-4, rtol=0)


def test_check_all_scores_and_fix_flagged_redraws(qtbot, home, ui_model, monkeypatch):  # noqa: F811
    write_tiny_sensevoice(catalog.default_folder())
    ears = Ears(monkeypatch, {("zh", 2): ZH_WORDS})
    window, dialogs = _window(qtbot, ui_model, auto=False)
    actions = window.backcheck
    assert not actions.auto_action.isChecked() and not actions.check_all_action.isEnabled()
    _speak(qtbot, window)
    assert ears.calls == {} and [window.script.table.cell_text(i, 5) for i in (0, 1)] == ["", ""]
    seeds = [s.seed for s in window.session.segments]
    assert actions.check_all_action.isEnabled() and not actions.fix_action.isEnabled()

    actions.check_all_action.trigger()
    qtbot.waitUntil(lambda: not actions.busy(), timeout=60_000)
    table = window.script.table
    assert ears.calls == {"zh": 1, "en": 1}  # scored once each, nothing drawn again
    assert [table.cell_text(i, 5) for i in (0, 1)] == ["1.00 ⚑", "1.00 ⚑"]
    assert [_status(table, i) for i in (0, 1)] == ["Done", "Done"]
    assert [s.seed for s in window.session.segments] == seeds
    assert not actions.check_all_action.isEnabled() and actions.fix_action.isEnabled()

    actions.fix_action.trigger()
    qtbot.waitUntil(lambda: not actions.busy(), timeout=60_000)
    window.session.wait_for_writes()
    zh, en = window.session.segments
    assert ears.calls == {"zh": 2, "en": DEFAULT_MAX_TAKES}  # up to max_takes - 1 more takes each
    assert zh.seed == take_seed(seeds[0], 2) and en.seed == seeds[1]
    assert [table.cell_text(i, 5) for i in (0, 1)] == ["0.00", "1.00 ⚑"]
    assert [_status(table, i) for i in (0, 1)] == ["Done · take 2", "Done · take 1 of 3"]
    np.testing.assert_allclose(zh.samples(), _take(ui_model, zh, zh.seed), atol=1e-3, rtol=0)
    assert window.project.result(zh.job, window.session.context).seed == zh.seed
    assert actions.fix_action.isEnabled() and dialogs.errors == []  # English is still flagged


def test_without_a_recognizer_the_checks_say_what_they_would_add(qtbot, home, ui_model):  # noqa: F811
    window, dialogs = _window(qtbot, ui_model)
    actions = window.backcheck
    speech = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Speech")
    assert all(a in speech.actions() for a in actions.actions()) and speech.toolTipsVisible()
    for action in actions.actions():
        assert not action.isEnabled() and action.toolTip().startswith("Needs a speech recognizer")
    _speak(qtbot, window)
    assert [s.status for s in window.session.segments] == ["done", "done"] and dialogs.errors == []
    assert [window.script.table.cell_text(i, 5) for i in (0, 1)] == ["", ""]
    assert not actions.check_all_action.isEnabled() and not actions.fix_action.isEnabled()


def test_a_recognizer_failing_mid_run_is_one_status_line(qtbot, home, ui_model, tmp_path, monkeypatch):  # noqa: F811
    write_tiny_sensevoice(catalog.default_folder(), language_ids={"ko": 99})  # Korean fails in onnxruntime
    Ears(monkeypatch, {("ko", 1): [0, 1]})  # (a quiet take never reaches the model)
    window, dialogs = _window(qtbot, ui_model)
    window.script.editor.setPlainText("Hello world.\n안녕하세요.\nYes no.\nVoice desk.")
    window.script.flush()
    _speak(qtbot, window)
    stopped = window.backcheck.stopped
    assert stopped.isVisible() and stopped.text().startswith("The back-check stopped (")
    assert "\n" not in stopped.text() and dialogs.errors == []
    segs = window.session.segments
    assert [s.status for s in segs] == ["done"] * 4  # synthesis went on
    assert window.script.table.cell_text(1, 5) == ""  # the Korean segment was not scored
    assert len(_export(qtbot, window, tmp_path / "all.wav")) > 0


def test_check_settings_fall_back_to_defaults(home):  # noqa: F811
    settings = Settings()
    assert (settings.check_auto, settings.check_threshold, settings.check_takes) == (
        True,
        DEFAULT_THRESHOLD,
        DEFAULT_MAX_TAKES,
    )
    settings.check_auto, settings.check_threshold, settings.check_takes = False, 0.5, 5
    again = Settings()
    assert (again.check_auto, again.check_threshold, again.check_takes) == (False, 0.5, 5)
    for key, bad in (("check/threshold", "lots"), ("check/threshold", "-1"), ("check/threshold", "nan")):
        again._set(key, bad)
        assert Settings().check_threshold == DEFAULT_THRESHOLD
    for bad in ("0", "11", "three", "-2"):
        again._set("check/takes", bad)
        assert Settings().check_takes == DEFAULT_MAX_TAKES
    again._set("check/auto", "maybe")
    assert Settings().check_auto is True
