"""Speaking rate and pauses in the window: the script's, a voice's and a line's rate; pause lengths;
pause tags heard in playback; the tag checker's view of pause tags."""

from __future__ import annotations

import numpy as np
import soundfile
from PySide6.QtCore import Qt
from ui_fixtures import (  # noqa: F401
    ScriptedDialogs,
    home,
    open_window,
    played,
    ui_model,
    wait_for_imports,
    write_voice_file,
)

from app.export import Clip, merge
from ui.views.tag_checker import tag_format_at


def test_rate_and_pause_controls_reach_the_project(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    dialogs.files.append(write_voice_file(tmp_path / "Anna.wav", 220))
    qtbot.mouseClick(window.voices.import_button, Qt.MouseButton.LeftButton)
    wait_for_imports(qtbot, window)
    window.script.editor.setPlainText("[Anna] One. [pause 700ms] Two.\n\n# Next\nThree [pause 5min].")
    window.script.flush()

    window.script.rate.setValue(1.25)
    window.script.pauses.boxes["paragraph_gap_seconds"].setValue(900)
    window.script.pauses.boxes["chapter_gap_seconds"].setValue(2500)
    s = window.project.settings
    assert (s.rate, s.paragraph_gap_seconds, s.chapter_gap_seconds) == (1.25, 0.9, 2.5)
    jobs = window.project.jobs()
    assert [j.rate for j in jobs] == [1.25] * 4
    assert [j.pause_after for j in jobs] == [0.7, 2.5, 0.9, 0.0]  # tag, chapter, heading, last

    window.voices.rate.setValue(0.8)  # Anna's own rate wins over the script's
    assert window.library.find("Anna").rate == 0.8
    assert window.project.settings.default_voice == "Anna"  # (untagged lines are hers too)
    assert [j.rate for j in window.project.jobs()] == [0.8] * 4
    window.voices.rate.setValue(window.voices.rate.minimum())  # "script's"
    assert window.library.find("Anna").rate is None and window.project.jobs()[0].rate == 1.25

    window.actions.edit_segment_settings(3)  # a line's own rate wins over both
    dialog = window.actions.dialog
    assert dialog.form.rate.value_or_none() is None  # "default"
    dialog.custom.setChecked(True)
    dialog.form.rate.setValue(1.6)
    dialog.accept()
    assert window.project.overrides[jobs[3].key].rate == 1.6
    assert window.project.jobs()[3].rate == 1.6 and window.script.table.cell_text(3, 0) == "4 *"

    # the tag checker: pause tags in italics, a heading in bold, a broken pause tag pointed out
    document = window.script.editor.document()
    assert tag_format_at(document, 0, 14).fontItalic()
    assert tag_format_at(document, 2, 3).fontWeight() == 700
    assert "[pause 5min] is not a pause" in window.script.tag_warning.text()
    assert window.script.unknown_tags() == []


def test_pauses_and_rate_are_heard_when_speaking(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    window.script.rate.setValue(1.5)
    window.script.pauses.boxes["paragraph_gap_seconds"].setValue(600)
    window.script.editor.setPlainText("One [pause 700ms] two.\n\nThree.")
    window.script.flush()
    with qtbot.waitSignal(window.session.runFinished, timeout=60_000):
        qtbot.keyClick(window.script.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    segs = window.session.segments
    assert [s.status for s in segs] == ["done"] * 3 and dialogs.errors == []
    assert [s.job.rate for s in segs] == [1.5] * 3
    rate = window.session.sample_rate
    clips = [Clip(s.job.display_text, s.samples(), s.job.pause_after) for s in segs]
    assert [c.pause_after for c in clips] == [0.7, 0.6, 0.0]
    expected = merge(clips, rate, window.project.settings.gap_seconds)
    heard = played(window)
    np.testing.assert_array_equal(heard[: len(expected)], expected)
    start = len(segs[0].samples())
    assert not np.any(heard[start : start + round(0.7 * rate)])  # the tag's silence

    out = tmp_path / "paced.wav"  # the export has the same silences (the sentence gap from the dialog)
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    dialog = window.actions.dialog
    dialog.path.setText(str(out))
    dialog.gap.setValue(100)
    dialog.accept()
    exported, _ = soundfile.read(out, dtype="float32")
    assert len(exported) == len(expected)
    assert np.abs(exported - np.clip(expected, -1, 1)).max() < 1e-3
