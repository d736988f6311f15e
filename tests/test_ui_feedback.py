"""The window tells the user what happened (issue 11), through the real window on a tiny model."""

from __future__ import annotations

import time

import numpy as np
import soundfile
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCharFormat
from PySide6.QtWidgets import QApplication
from test_ui_window import import_voice, speak_and_wait, type_script
from ui_fixtures import (  # noqa: F401
    GuiThreadWatcher,
    ScriptedDialogs,
    home,
    open_window,
    ui_model,
    wait_for_imports,
    write_voice_file,
)

from ui.views.segment_table import FAILED_RED, format_seconds
from ui.views.tag_checker import tag_format_at

# 8 segments: the five untagged ones are spoken by Anna, the three tagged [Carol] name no voice.
SCRIPT = "One. Two. Three.\n[Carol] Four. Five. Six.\nSeven. Eight."


def test_a_run_with_failures_shows_red_rows_summary_counts_and_survives_a_restart(
    qtbot,
    home,  # noqa: F811
    ui_model,  # noqa: F811
    tmp_path,
):
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    window.script.voice.setCurrentIndex(window.script.voice.findData("Anna"))
    type_script(qtbot, window, SCRIPT)
    speak_and_wait(qtbot, window)
    table = window.script.table
    statuses = [s.status for s in window.session.segments]
    assert statuses == ["done"] * 3 + ["failed"] * 3 + ["done"] * 2

    # The failed rows say so in red, with their one-line reason.
    for row in range(8):
        red = table.cell(row, 3).foreground().color() == FAILED_RED
        assert red == (statuses[row] == "failed")
    reason = window.session.segments[3].message
    assert "Carol" in reason and table.cell_text(3, 3) == f"Failed: {reason}"

    # The summary: counts apart, the failures in red with a "show" link; the status bar says it too.
    counts = window.session.counts()
    assert (counts.done, counts.failed, counts.remaining) == (5, 3, 0)
    assert window.transport.progress.counts == counts and counts.fraction() == 1.0
    assert counts.failed_fraction() == 3 / 8
    label = window.transport.status_label.text()
    assert "5 done" in label and "3 failed" in label and 'href="failed"' in label and "0 left of 8" in label
    assert window.statusBar().currentMessage() == "Finished: 5 done, 3 failed"

    # "show" selects the first failed row; the strip under the table explains it and offers the fix.
    window.transport.status_label.linkActivated.emit("failed")
    assert table.currentRow() == 3
    strip = window.script.failure
    assert strip.isVisible() and strip.row == 3 and reason in strip.label.text()
    assert strip.fix == "pick_voice" and strip.fix_button.isVisible()
    qtbot.mouseClick(strip.details, Qt.MouseButton.LeftButton)
    assert "segment 4 (Carol) failed" in dialogs.infos[-1] and reason in dialogs.infos[-1]

    # The export prompt names the failed segments as failed.
    dialogs.answers.append(False)
    window.actions.run_export(_options(tmp_path))
    assert "3 of 8 segments failed (4, 5, 6)" in dialogs.questions[-1]
    dialogs.unsaved_answers.append("save")  # closing asks about the never-saved script
    dialogs.files.append(tmp_path / "run.voxdesk")
    window.close()

    # After a restart: the same states, counts and bar (failed rows are still Failed).
    again = open_window(qtbot, ui_model, ScriptedDialogs())
    assert [s.status for s in again.session.segments] == statuses
    assert again.session.segments[3].message == reason
    assert again.session.counts() == counts and again.transport.progress.counts == counts
    assert again.script.table.cell(3, 3).foreground().color() == FAILED_RED
    assert "3 failed" in again.transport.status_label.text()

    # The quick fix: pick an existing voice for [Carol]; the script keeps its tag, the project's
    # cast maps it, the rows go back.
    strip = again.script.failure
    again.dialogs.choices.append("Anna")
    qtbot.mouseClick(strip.fix_button, Qt.MouseButton.LeftButton)
    assert "[Carol] Four. Five. Six." in again.script.text() and again.project.cast == {"Carol": "Anna"}
    assert [r.voice for r in again.script.table.rows()][3:6] == ["Anna"] * 3


def _options(tmp_path):
    from ui.views.export_dialog import ExportOptions

    return ExportOptions(path=tmp_path / "out" / "speech.wav")


def test_an_unknown_tag_is_marked_while_typing(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    window.actions.dialog.reject()
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    editor = window.script.editor
    editor.setFocus()
    qtbot.keyClicks(editor, "[Carol] Hello.")  # no settle wait, no flush: as the keys arrive
    fmt = tag_format_at(editor.document(), 0, 2)
    assert fmt is not None and fmt.underlineStyle() == QTextCharFormat.UnderlineStyle.SpellCheckUnderline
    assert fmt.foreground().color() == FAILED_RED
    warning = window.script.tag_warning
    assert warning.isVisible() and "[Carol]" in warning.text() and "pick a voice" in warning.text()

    # A known name (any case) is not marked.
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "[anna] Hi.")
    known = tag_format_at(editor.document(), 1, 2)
    assert known is None or known.underlineStyle() == QTextCharFormat.UnderlineStyle.NoUnderline

    # Quick fix "pick a voice" casts Anna as Carol (the tag stays); the mark and the warning go,
    # the hint says who speaks [Carol].
    dialogs.choices.append("Anna")
    warning.linkActivated.emit("pick:Carol")
    assert window.script.text().startswith("[Carol] Hello.")
    assert "No voice is named" not in warning.text() and "[Carol] → Anna" in warning.text()
    fmt = tag_format_at(editor.document(), 0, 2)
    assert fmt is None or fmt.underlineStyle() == QTextCharFormat.UnderlineStyle.NoUnderline

    # Quick fix "create": import a recording under that name.
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "[Dora] Bye.")
    assert "[Dora]" in warning.text()
    dialogs.files.append(write_voice_file(tmp_path / "recording.wav", 330))
    warning.linkActivated.emit("create:Dora")
    wait_for_imports(qtbot, window)
    assert window.library.find("Dora") is not None and "No voice is named" not in warning.text()


def test_an_impossible_reference_is_warned_about_before_speak(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    # The UI model has 2048 positions and makes 1,000 patches per second of voice: 3 s cannot fit.
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Long.wav", seconds=3.0))
    type_script(qtbot, window, "Hello there.")
    guide = window.voices.guide
    usable = window.voices.usable_seconds()
    assert 0.5 < usable < 2.0
    assert guide.too_long and f"uses up to {format_seconds(usable)}" in guide.label.text()
    assert "5–15 s is best" in guide.label.text()

    dialogs.answers.append(False)  # "Speak anyway?" No: nothing starts, the selection is shrunk
    qtbot.keyClick(window.script.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert "cannot fit" in dialogs.questions[-1] and "“Long”" in dialogs.questions[-1]
    assert not window.session.busy() and window.session.segments[0].status == ""
    start, end = window.voices.waveform.selection()
    assert (end - start) / 16000 <= usable + 1e-3 and not guide.too_long

    qtbot.mouseClick(window.voices.trim_button, Qt.MouseButton.LeftButton)
    asked = len(dialogs.questions)
    speak_and_wait(qtbot, window)
    assert len(dialogs.questions) == asked and dialogs.errors == []
    assert window.session.segments[0].status == "done"


def test_import_says_too_short_or_silent(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    window.actions.dialog.reject()
    dialogs.errors.clear()
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "short.wav", seconds=0.15))
    silent = tmp_path / "silent.wav"
    soundfile.write(str(silent), np.zeros(16000, np.float32), 16000)
    import_voice(qtbot, window, dialogs, silent)
    short_msg, silent_msg = dialogs.errors
    assert "too short" in short_msg and "0.15 s" in short_msg and "silent" not in short_msg
    assert "silent" in silent_msg and "short" not in silent_msg
    assert window.voices.list.count() == 0


def test_speak_shows_a_change_within_100_ms_of_the_key(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    type_script(qtbot, window, "One sentence here. And a second one.")
    busy_texts: list[str] = []
    original = window.transport.set_busy_text
    window.transport.set_busy_text = lambda text: (busy_texts.append(text), original(text))
    watcher = GuiThreadWatcher()
    with qtbot.waitSignal(window.session.runFinished, timeout=60_000):
        started, cpu_started = time.perf_counter(), time.thread_time()
        qtbot.keyClick(window.script.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        elapsed, cpu = time.perf_counter() - started, time.thread_time() - cpu_started
        shown = [window.script.table.cell_text(i, 3) for i in range(2)]
        busy = window.transport.busy_label.text()
        stop_enabled = window.transport.stop_button.isEnabled()
    heavy = watcher.stop()
    print(f"Speak: first visible change {elapsed * 1000:.1f} ms after the key ({cpu * 1000:.1f} ms CPU)")
    # Encoding and generation run off the GUI thread: its stack, sampled every 2 ms, never shows
    # them, and the GUI thread's own CPU time from the key to the Queued rows is within 100 ms.
    # Wall time is the user's view (a few ms here); its wider margin is for a shared 2-core CI
    # machine, where another process can hold the core for a few hundred ms at any moment.
    assert heavy == [], heavy[:3]
    assert cpu < 0.100
    assert elapsed < 0.500
    assert shown == ["Queued", "Queued"] and busy == "Preparing the voices…" and stop_enabled
    assert "Encoding the voice…" in busy_texts and "Generating…" in busy_texts
    assert [s.status for s in window.session.segments] == ["done", "done"]
    assert window.transport.busy_label.text() == ""


def test_waveform_drag_selects_and_playback_shows_playhead_stop_and_device(qtbot, home, tmp_path):  # noqa: F811
    from app.audio.player import CaptureSink

    dialogs = ScriptedDialogs()
    sink = CaptureSink(buffer_seconds=600)
    sink.description = "test capture"
    window = open_window(qtbot, None, dialogs, sink)
    window.actions.dialog.reject()
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav", seconds=2.0))
    panel = window.voices
    wave = panel.waveform
    wave.resize(400, 80)
    assert "Drag across the waveform" in panel.wave_hint.text()

    # Dragging across the middle selects that range; a bare click keeps the selection.
    from PySide6.QtCore import QPoint

    qtbot.mousePress(wave, Qt.MouseButton.LeftButton, pos=QPoint(100, 40))
    qtbot.mouseMove(wave, QPoint(300, 40))
    qtbot.mouseRelease(wave, Qt.MouseButton.LeftButton, pos=QPoint(300, 40))
    start, end = wave.selection()
    n = len(panel._audio)
    assert abs(start - n * 100 / 399) < n / 200 and abs(end - n * 300 / 399) < n / 200
    qtbot.mouseClick(wave, Qt.MouseButton.LeftButton, pos=QPoint(50, 40))
    assert wave.selection() == (start, end)
    # The handles still adjust it.
    qtbot.mousePress(wave, Qt.MouseButton.LeftButton, pos=QPoint(300, 40))
    qtbot.mouseMove(wave, QPoint(350, 40))
    qtbot.mouseRelease(wave, Qt.MouseButton.LeftButton, pos=QPoint(350, 40))
    assert wave.selection()[0] == start and wave.selection()[1] > end
    qtbot.mouseClick(panel.trim_button, Qt.MouseButton.LeftButton)
    start, end = wave.selection()

    # Play voice: the button becomes Stop, the device is named, the playhead moves on the waveform.
    qtbot.mouseClick(panel.play_button, Qt.MouseButton.LeftButton)
    assert panel.output_line.text() == "Output: test capture"
    window.playback.pump()
    assert panel.play_button.text() == "Stop"
    sink.pull(8000)  # half a second reaches the listener
    window.playback.pump()
    assert wave.playhead() == start + 8000
    qtbot.mouseClick(panel.play_button, Qt.MouseButton.LeftButton)  # Stop
    assert window.playback.playlist is None and wave.playhead() is None
    assert panel.play_button.text() == "Play voice"


def test_segment_playback_marks_its_row(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    type_script(qtbot, window, "One sentence. Two sentences.")
    speak_and_wait(qtbot, window)
    window.playback.stop()
    sink = window.playback.sink
    window.script.table.selectRow(1)
    qtbot.mouseClick(window.script.play_row, Qt.MouseButton.LeftButton)
    window.playback.pump()
    sink.pull(100)  # the tiny model's segments last a few milliseconds
    window.playback.pump()
    row = window.script.table.rows()[1]
    status = window.script.table.cell_text(1, 3)
    assert row.playing and status.startswith("▶ ") and status.endswith(" · Done")
    assert not window.script.table.rows()[0].playing
    sink.drain()
    window.playback.pump()
    assert not window.script.table.rows()[1].playing
    assert window.script.table.cell_text(1, 3) == "Done"


def test_export_dialog_stays_open_after_an_error_and_offers_open_folder(
    qtbot,
    home,  # noqa: F811
    ui_model,  # noqa: F811
    tmp_path,
):
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    type_script(qtbot, window, "One sentence. Two sentences.")
    speak_and_wait(qtbot, window)

    # The seed of a take can be kept; the script's seed sits next to CFG and steps.
    take = window.session.segments[0].seed
    window.script.table.keepSeedRequested.emit(0)
    assert window.project.jobs()[0].seed == take
    assert window.session.segments[0].status == "done"  # keeping the seed keeps the take
    assert window.script.table.cell(0, 4).toolTip() == f"Seed {take}"
    assert window.script.settings.seed.isVisible() and window.script.settings.seed.text() == "random"
    window.script.settings.seed.setValue(1234)
    assert window.project.settings.seed == 1234 and window.project.jobs()[1].seed == 1234

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the folder should be")
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    dialog = window.actions.dialog
    dialog.path.setText(str(blocker / "speech.wav"))
    dialog.segments.setChecked(True)
    dialog.gap.setValue(750)
    dialog.accept()
    assert len(dialogs.errors) == 1
    assert window.actions.dialog is dialog and dialog.isVisible()  # still open, choices kept
    assert dialog.segments.isChecked() and dialog.gap.value() == 750
    assert dialog.path.text() == str(blocker / "speech.wav")
    assert window.actions.open_folder is None

    dialog.path.setText(str(tmp_path / "out" / "speech.wav"))
    dialog.accept()
    assert not dialog.isVisible() and (tmp_path / "out" / "speech.wav").is_file()
    assert window.actions.open_folder.isVisible() and window.actions.exported_to == tmp_path / "out"


def test_ctrl_s_saves_and_the_title_shows_unsaved_changes(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    window.actions.dialog.reject()
    window.activateWindow()  # what the window manager does when a dialog closes
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    assert window.windowTitle() == "Untitled script[*] — VoxDesk" and not window.isWindowModified()
    type_script(qtbot, window, "A first line.")
    assert window.isWindowModified()

    dialogs.files.append(tmp_path / "mine.voxdesk")  # the first Ctrl+S asks where
    qtbot.keyClick(window, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    saved = tmp_path / "mine.voxdesk"
    assert saved.is_file() and "A first line." in saved.read_text(encoding="utf-8")
    assert not window.isWindowModified() and window.windowTitle() == "mine.voxdesk[*] — VoxDesk"

    qtbot.keyClicks(window.script.editor, " More.")
    assert window.script.text() == "A first line. More."
    qtbot.keyClick(window, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)  # no question now
    assert dialogs.files == [] and "A first line. More." in saved.read_text(encoding="utf-8")
    assert not window.isWindowModified()
    menu_text = [
        a.text() + "\t" + a.shortcut().toString() for a in window.menuBar().actions()[0].menu().actions()
    ]
    assert "Save script\tCtrl+S" in menu_text and "Export audio…\tCtrl+E" in menu_text


def test_desktop_habits_folders_help_lengths_and_model_manager(qtbot, home, tmp_path, capsys):  # noqa: F811
    import pytest

    from app.cli import main
    from app.paths import data_dir
    from ui.dialogs import Dialogs, user_folder
    from ui.settings import Settings

    # File dialogs start in the user's Music/Documents (never the app's models folder), then in
    # the folder last used.
    dialogs = Dialogs(Settings())
    assert dialogs.start_folder("audio") == user_folder("audio")
    assert data_dir() not in dialogs.start_folder("audio").parents
    dialogs._used("audio", tmp_path / "take.wav")
    assert Dialogs(Settings()).start_folder("audio") == tmp_path

    assert format_seconds(0.006) == "6 ms" and format_seconds(0.049) == "49 ms"
    assert format_seconds(0.05) == "0.1 s" and format_seconds(2.34) == "2.3 s"

    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "no arguments to open the window" in out and "--self-test" in out

    window = open_window(qtbot, None, ScriptedDialogs())
    manager = window.actions.dialog  # the first-run model manager
    assert "free on this drive" in manager.space.text()
    rows = [manager.models.item(i).text() for i in range(manager.models.count())]
    assert "about 4.96 GB to download" in rows[0] and "about 1.61 GB to download" in rows[2], rows
    assert not manager.progress.isVisible()  # no unlabelled empty bar before a download
