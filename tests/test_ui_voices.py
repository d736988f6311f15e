"""The voice panel, script tools and shortcuts, through their widgets."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication
from ui_fixtures import (  # noqa: F401
    ScriptedDialogs,
    home,
    open_window,
    played,
    ui_model,
    wait_for_imports,
    write_voice_file,
)

from app.audio.prepare import speech_level_db
from app.text.pronunciation import Rule
from app.voices.library import VoiceLibrary


def test_rename_delete_trim_normalise_and_drop(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    window.actions.dialog.reject()
    panel = window.voices

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(write_voice_file(tmp_path / "Dropped.wav", seconds=2.0)))])
    drop = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    panel.dropEvent(drop)
    wait_for_imports(qtbot, window)
    assert [v.name for v in VoiceLibrary().list()] == ["Dropped"]
    assert window.script.voice.findData("Dropped") >= 0

    assert window.script.default_voice() == "Dropped"
    panel.name.setText("Narrator")
    panel.name.editingFinished.emit()
    assert VoiceLibrary().list()[0].name == "Narrator"
    assert window.script.voice.findData("Dropped") < 0
    assert window.script.default_voice() == window.project.settings.default_voice == "Narrator"

    wave = panel.waveform
    wave.resize(400, 80)
    qtbot.mousePress(wave, Qt.MouseButton.LeftButton, pos=QPoint(2, 40))  # on the start handle
    qtbot.mouseMove(wave, QPoint(100, 40))
    qtbot.mouseRelease(wave, Qt.MouseButton.LeftButton, pos=QPoint(100, 40))
    start, end = wave.selection()
    assert 0 < start < end == len(panel._audio)
    qtbot.mouseClick(panel.trim_button, Qt.MouseButton.LeftButton)
    voice = VoiceLibrary().list()[0]
    assert abs(voice.trim_start - start / voice.sample_rate) < 1e-3 and voice.trim_end is None
    assert abs(voice.duration - (end - start) / voice.sample_rate) < 1e-3
    assert wave.selection() == (start, end)  # the handles show the stored trim

    heard_before = len(played(window))
    qtbot.mouseClick(panel.play_selection, Qt.MouseButton.LeftButton)
    assert window.playback.sink.sample_rate == voice.sample_rate
    assert len(played(window)) - heard_before == end - start

    qtbot.mouseClick(panel.normalise_button, Qt.MouseButton.LeftButton)
    voice = VoiceLibrary().list()[0]
    assert voice.normalised
    assert abs(speech_level_db(VoiceLibrary().audio(voice), voice.sample_rate) + 20) < 0.2  # loudness

    panel.transcript.setPlainText("hello there")
    assert "continuation" in panel.mode_hint.text()
    panel.flush()
    assert VoiceLibrary().list()[0].transcript == "hello there"

    dialogs.answers.append(False)
    qtbot.mouseClick(panel.delete_button, Qt.MouseButton.LeftButton)
    assert "Narrator" in dialogs.questions[-1] and len(VoiceLibrary().list()) == 1
    qtbot.mouseClick(panel.delete_button, Qt.MouseButton.LeftButton)
    assert VoiceLibrary().list() == [] and panel.list.count() == 0
    assert dialogs.errors == []


def test_pronunciation_rules_and_segment_settings_reach_the_jobs(qtbot, home):  # noqa: F811
    window = open_window(qtbot, None, ScriptedDialogs())
    window.actions.dialog.reject()
    window.script.set_text("Read the SQL docs. Then rest.")
    window.script.scriptChanged.emit()

    window.script.pronunciation.click()
    rules = window.actions.dialog
    rules._add(Rule(find="SQL", replace="sequel", whole_word=True))
    rules.sample.setText("SQL and MySQL")
    assert rules.preview.text() == "sequel and MySQL"
    rules.accept()
    jobs = window.project.jobs()
    assert jobs[0].text == "Read the sequel docs." and jobs[0].display_text == "Read the SQL docs."

    window.script.settings.cfg.setValue(3.0)
    window.script.settings.style_text.setText("a calm narrator")
    assert window.project.settings.cfg_value == 3.0
    window.script.table.settingsRequested.emit(1)
    seg_dialog = window.actions.dialog
    seg_dialog.custom.setChecked(True)
    seg_dialog.form.steps.setValue(4)
    seg_dialog.form.style_text.setText("")
    seg_dialog.fixed_seed.setChecked(True)
    seg_dialog.seed.setValue(1234)
    seg_dialog.accept()
    first, second = window.project.jobs()
    assert (first.inference_timesteps, first.seed, first.text) == (
        10,
        None,
        "(a calm narrator)Read the sequel docs.",
    )
    assert (second.inference_timesteps, second.seed, second.text) == (4, 1234, "Then rest.")
    assert window.script.table.rows()[1].custom and not window.script.table.rows()[0].custom


def test_space_and_ctrl_p_play_pause_but_space_types_in_the_editor(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    dialogs.files.append(write_voice_file(tmp_path / "Anna.wav"))
    window.voices.import_dialog()
    wait_for_imports(qtbot, window)
    window.script.set_text("One. Two.")
    window.script.scriptChanged.emit()
    with qtbot.waitSignal(window.session.runFinished, timeout=30_000):
        window.transport.speak_button.click()
    window.playback.stop()
    heard_before = len(played(window))

    editor = window.script.editor
    editor.setFocus()
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    qtbot.keyClick(editor, Qt.Key.Key_Space)
    assert editor.toPlainText().endswith(" ") and window.playback.playlist is None

    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    window.script.table.setFocus()
    qtbot.keyClick(window.script.table, Qt.Key.Key_Space)
    assert window.playback.playing  # the finished script plays from the start
    qtbot.keyClick(window, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
    assert window.playback.playlist is not None and not window.playback.playing  # paused
    qtbot.keyClick(window, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
    assert window.playback.playing
    segs = window.session.segments
    assert len(played(window)) - heard_before >= sum(len(s.samples()) for s in segs)


def test_new_save_and_open_script(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    window.actions.dialog.reject()
    window.script.set_text("A script worth keeping.")
    window.script.scriptChanged.emit()

    dialogs.unsaved_answers.append("cancel")
    window.actions.files.new_script()
    assert "never saved" in dialogs.unsaved_questions[-1]
    assert window.script.text() == "A script worth keeping."

    dialogs.files.append(tmp_path / "keep")
    window.actions.files.save_script_as()
    saved = tmp_path / "keep.voxdesk"
    assert saved.is_file() and window.project.path == saved

    window.actions.files.new_script()  # saved to a file: no question
    assert window.script.text() == "" and window.script.table.rowCount() == 0
    assert len(dialogs.unsaved_questions) == 1

    dialogs.files.append(saved)
    window.actions.files.open_script()
    assert window.script.text() == "A script worth keeping." and window.script.table.rowCount() == 1

    broken = tmp_path / "broken.voxdesk"
    broken.write_text("{not json", encoding="utf-8")
    dialogs.files.append(broken)
    window.actions.files.open_script()
    assert "damaged" in dialogs.errors[-1] and window.script.text() == "A script worth keeping."
