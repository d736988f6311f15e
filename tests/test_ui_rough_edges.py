"""Issue 22's smaller findings, one test per item, through the real widgets (offscreen)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from ui_fixtures import (  # noqa: F401
    HoldAfterFirstAudio,
    ScriptedDialogs,
    home,
    open_window,
    ui_model,
    wait_for_imports,
    write_voice_file,
)

from app.audio.io import READABLE_SUFFIXES, load_audio
from app.errors import VoxDeskError


def import_voice(qtbot, window, dialogs, path: Path) -> None:
    dialogs.files.append(path)
    qtbot.mouseClick(window.voices.import_button, Qt.MouseButton.LeftButton)
    wait_for_imports(qtbot, window)


def test_stop_says_stopped_with_what_was_done(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    window.script.set_text(" ".join(f"This is sentence {i}." for i in range(20)))
    window.script.scriptChanged.emit()
    with HoldAfterFirstAudio(window):
        qtbot.keyClick(window.script.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: any(s.chunks for s in window.session.segments), timeout=30_000)
        qtbot.keyClick(window, Qt.Key.Key_Escape)
    done = sum(s.status == "done" for s in window.session.segments)
    message = window.statusBar().currentMessage()
    assert message == f"Stopped: {done} of 20 done"
    assert "Finished" not in message


def test_tab_leaves_the_script_and_the_transcript(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    window.activateWindow()
    for field in (window.script.editor, window.voices.transcript):
        assert field.isVisible() and field.isEnabled()
        field.setFocus()
        qtbot.waitUntil(field.hasFocus)
        qtbot.keyClick(field, Qt.Key.Key_Tab)
        assert "\t" not in field.toPlainText()
        assert not field.hasFocus(), f"{field.objectName() or field} kept the focus"


def test_typing_random_in_the_seed_box_means_a_random_seed(qtbot, home):  # noqa: F811
    from ui.views.generation_form import RANDOM_SEED

    window = open_window(qtbot, None, ScriptedDialogs())
    box = window.script.settings.seed
    box.setValue(1234)
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, "Random")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert box.value() == RANDOM_SEED and window.script.settings.values()["seed"] is None
    box.selectAll()
    qtbot.keyClicks(box, "42")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert window.script.settings.values()["seed"] == 42
    box.selectAll()
    qtbot.keyClicks(box, box.specialValueText())  # whatever it shows for random is typeable
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert box.value() == RANDOM_SEED and box.text() == box.specialValueText()


def test_import_filter_and_error_message_name_what_decodes(qtbot, tmp_path):
    from ui.dialogs import audio_filter

    offered = {p.lstrip("*") for p in audio_filter().split("(")[1].rstrip(")").split()}
    assert offered == set(READABLE_SUFFIXES) and ".m4a" not in offered
    tone = (0.3 * np.sin(np.arange(16000) / 5.0)).astype(np.float32)
    written = {
        ".wav": {},
        ".flac": {},
        ".aiff": {},
        ".aif": {"format": "AIFF"},
        ".ogg": {"format": "OGG", "subtype": "VORBIS"},
        ".opus": {"format": "OGG", "subtype": "OPUS"},
        ".mp3": {"format": "MP3", "subtype": "MPEG_LAYER_III"},
    }
    assert set(written) == set(READABLE_SUFFIXES)
    for suffix, kwargs in written.items():
        path = tmp_path / f"voice{suffix}"
        rate = 48000 if suffix == ".opus" else 16000
        soundfile.write(str(path), np.repeat(tone, rate // 16000), rate, **kwargs)
        assert len(load_audio(path, 16000)) > 0, suffix
    fake = tmp_path / "voice.m4a"
    fake.write_bytes(b"\x00\x00\x00\x20ftypM4A " + bytes(200))
    with pytest.raises(VoxDeskError) as err:
        load_audio(fake, 16000)
    message = str(err.value)
    for name in ("WAV", "FLAC", "OGG", "Opus", "MP3", "AIFF"):
        assert name in message
    assert "M4A" not in message
    QApplication.processEvents()


def test_one_recommended_reference_length_everywhere(qtbot, home, tmp_path):  # noqa: F811
    """The record dialog, the guide under the waveform, the length warning and the library's
    messages all give RECOMMENDED_SECONDS (they gave 10–20 s, 3–10 s and ~15 s)."""
    from test_ui_dialogs import FakeInputStream

    from app.voices.library import RECOMMENDED_SECONDS, VoiceLibrary
    from ui.views.record_dialog import RecordDialog
    from ui.views.reference_guide import ReferenceGuide

    lo, hi = (f"{s:.0f}" for s in RECOMMENDED_SECONDS)
    span = f"{lo}–{hi}"
    dialog = RecordDialog(None, ScriptedDialogs(), None, FakeInputStream, countdown=0)
    qtbot.addWidget(dialog)
    assert f"{span} seconds" in dialog.tip.text()
    guide = ReferenceGuide()
    qtbot.addWidget(guide)
    guide.set_values(30.0, 20.0, (0.0, 12.0))
    assert f"{span} s is best" in guide.label.text()

    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    import_voice(
        qtbot, window, dialogs, write_voice_file(tmp_path / "Long.wav", seconds=RECOMMENDED_SECONDS[1] + 3)
    )
    assert window.voices.length_warning.isVisible()
    assert f"{span} s of clear speech" in window.voices.length_warning.text()
    import_voice(
        qtbot, window, dialogs, write_voice_file(tmp_path / "Short.wav", seconds=RECOMMENDED_SECONDS[0])
    )
    assert not window.voices.length_warning.isVisible()
    with pytest.raises(VoxDeskError, match=f"{span} s is best"):
        VoiceLibrary().create_from_samples(np.full(100, 0.3, np.float32), 16000, "Tiny")


def test_window_fits_800_by_600_with_room_for_the_text_column(qtbot, home, tmp_path):  # noqa: F811
    from PySide6.QtWidgets import QAbstractButton

    from ui.theme import apply_theme

    apply_theme(QApplication.instance(), "light")  # as the app starts: Fusion and its style sheet
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    window.script.set_text(" ".join(f"This is sentence number {i} of the script." for i in range(12)))
    window.script.scriptChanged.emit()
    hint = window.minimumSizeHint()
    assert hint.width() <= 800 and hint.height() <= 600, hint
    window.resize(800, 600)
    qtbot.waitUntil(lambda: window.width() == 800 and window.height() == 600)
    # Everything reachable: every visible button is shown whole, inside the window (the voice
    # panel scrolls: its buttons once scrolled to).
    scroller = window.voices.parentWidget().parentWidget()
    for button in window.findChildren(QAbstractButton):
        if button.isVisible() and button.window() is window:
            if window.voices.isAncestorOf(button):
                scroller.ensureWidgetVisible(button)
            assert button.width() >= button.minimumSizeHint().width(), button.text()
            top_left = button.mapTo(window, button.rect().topLeft())
            assert window.rect().contains(top_left), button.text()
    table = window.script.table
    text, status = table.columnWidth(2), table.columnWidth(3)
    assert text > status and text >= table.viewport().width() // 3, (text, status)


def test_row_buttons_and_context_menu_are_the_same_actions(qtbot, home):  # noqa: F811
    window = open_window(qtbot, None, ScriptedDialogs())
    window.script.set_text("One. Two.")
    window.script.scriptChanged.emit()
    table = window.script.table
    script = window.script
    buttons = {
        b.defaultAction()
        for b in (script.play_row, script.again_row, script.new_take_row, script.settings_row)
    }
    assert all(not a.isEnabled() for a in buttons)  # nothing selected yet
    menu = table.context_menu(1)
    assert table.currentRow() == 1 and all(a.isEnabled() for a in buttons)
    assert buttons <= set(menu.actions())
    texts = [a.text() for a in menu.actions()]
    assert texts == ["Play", "Regenerate", "New take", "Keep this take's seed", "Segment settings…"]
    assert all(a.toolTip() and a.toolTip() != a.text() for a in menu.actions())
    requested = []
    table.regenerateRequested.connect(lambda row, new: requested.append((row, new)))
    table.new_take_action.trigger()
    assert requested == [(1, True)]
    # A segment with its own seed shows * in its number cell, and the * is explained.
    from app.project import SegmentOverride

    window.project.set_override(window.session.segments[0].job.key, SegmentOverride(seed=7))
    window.refresh_and_save()
    assert table.cell_text(0, 0) == "1 *" and "*" in table.cell(0, 0).toolTip()
    assert table.cell(1, 0).toolTip() == ""
    # The window's Voices menu names its actions like the panel's buttons.
    menu_texts = {a.text() for a in window.menuBar().actions()[2].menu().actions()}
    assert {window.voices.record_button.text(), window.voices.import_button.text()} <= menu_texts
    assert window.transport.export_button.text() in {
        a.text() for a in window.menuBar().actions()[0].menu().actions()
    }


def test_model_is_named_by_what_it_is_and_marked_loaded(qtbot, home, ui_model):  # noqa: F811
    """A model in a folder called "model" is "VoxCPM2" in the status bar and the manager (it was
    "Model: model"); a catalog model that is loaded is marked in the manager's list."""
    import shutil

    from app.models import download as dl
    from app.paths import models_dir
    from ui.views.model_manager import ModelManager

    folder = home / "model"
    shutil.copytree(ui_model, folder)
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, folder, dialogs)
    assert window.model_label.text() == "Model: VoxCPM2"
    window.actions.manage_models()
    manager = window.actions.dialog
    assert manager.loaded_label.isVisible() and "Loaded now: VoxCPM2" in manager.loaded_label.text()
    assert not any("loaded ✓" in manager.models.item(i).text() for i in range(manager.models.count()))
    manager.reject()

    catalog = models_dir() / dl.KNOWN_MODELS[0].key
    other = ModelManager(window.settings, dialogs, loaded=(catalog, dl.KNOWN_MODELS[0].key))
    qtbot.addWidget(other)
    item = other.models.item(0)
    assert "loaded ✓" in item.text() and item.font().bold()
    assert not other.models.item(1).font().bold() and "loaded ✓" not in other.models.item(1).text()


def test_cast_maps_an_unknown_tag_without_rewriting_the_script(qtbot, home, tmp_path):  # noqa: F811
    from PySide6.QtGui import QTextCharFormat

    from app.project import Project
    from ui.views.tag_checker import tag_format_at

    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Ben.wav"))
    script = "Hello there.\n[Carol] Nice to meet you."
    window.script.set_text(script)
    window.script.scriptChanged.emit()
    warning = window.script.tag_warning
    assert "No voice is named [Carol]" in warning.text()

    dialogs.choices.append("Ben")  # "pick a voice" under the editor
    warning.linkActivated.emit("pick:Carol")
    assert window.script.text() == script  # the character is kept
    assert window.project.cast == {"Carol": "Ben"}
    assert [s.job.voice for s in window.session.segments][-1] == "Ben"
    assert "[Carol] → Ben" in warning.text() and "No voice is named" not in warning.text()
    fmt = tag_format_at(window.script.editor.document(), 1, 2)
    assert fmt is not None and fmt.underlineStyle() != QTextCharFormat.UnderlineStyle.SpellCheckUnderline
    assert window.isWindowModified()

    # Kept in the project: saved, loaded, shown again.
    path = tmp_path / "dialogue.voxdesk"
    window.project.save(path)
    loaded = Project.load(path)
    assert loaded.cast == {"Carol": "Ben"} and loaded.jobs()[-1].voice == "Ben"
    window.set_project(loaded)
    assert "[Carol] → Ben" in warning.text()

    # Changed, then removed: the tag names its voice again (and is unknown again).
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Dora.wav", freq=330.0))
    dialogs.choices.append("Dora")
    warning.linkActivated.emit("pick:Carol")
    assert window.project.cast == {"Carol": "Dora"} and "[Carol] → Dora" in warning.text()
    warning.linkActivated.emit("uncast:Carol")
    assert window.project.cast == {} and "No voice is named [Carol]" in warning.text()
    assert window.script.text() == script


def test_cast_is_validated_when_a_project_is_read():
    from app.project import Project

    base = {"format": "voxdesk-project", "version": 1, "text": "[Carol] Hi."}
    good = Project.from_dict({**base, "cast": {"Carol": "Ben"}})
    assert good.cast == {"Carol": "Ben"} and good.problems == []
    mixed = Project.from_dict({**base, "cast": {"Carol": "Ben", "Eve": 3, "[x]": "Ben", "Dan": "a\nb"}})
    assert mixed.cast == {"Carol": "Ben"} and any("cast" in p for p in mixed.problems)
    for damaged in (["Carol", "Ben"], "Carol=Ben", {f"c{i}": "Ben" for i in range(1001)}):
        with pytest.raises(VoxDeskError, match="damaged"):
            Project.from_dict({**base, "cast": damaged})
    assert Project.from_dict(base).cast == {}


def test_language_change_offers_restart_now_through_the_close_path(qtbot, home):  # noqa: F811
    from app import project as projects

    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    window.actions.dialog.reject()  # the first-run model manager
    restarts = []
    window.relaunch = lambda: restarts.append(window.isVisible())
    window.script.set_text("Unsaved words.")
    window.script.scriptChanged.emit()

    def change_language(to: str, answer: bool) -> None:
        window.actions.open_settings()
        dialog = window.actions.dialog
        dialog.language.setCurrentIndex(dialog.language.findData(to))
        dialogs.answers.append(answer)
        dialog.accept()

    change_language("zh_CN", False)  # "Restart now?" No: nothing happens
    qtbot.wait(50)
    assert "Restart now?" in dialogs.questions[-1] and restarts == [] and window.isVisible()

    change_language("en", True)
    qtbot.waitUntil(lambda: bool(restarts), timeout=5000)
    assert restarts == [False]  # started again only once the window had closed
    assert dialogs.unsaved_questions == []  # a restart is not a close: nothing asked, nothing lost
    saved = projects.Project.load(projects.autosaves()[0])
    assert saved.text == "Unsaved words." and saved.unsaved  # the new window restores it, marked *


def test_relaunch_starts_the_same_program_with_the_same_arguments():
    import sys

    from ui.relaunch import relaunch_command

    assert relaunch_command(["voxdesk"], frozen=False) == (sys.executable, ["-m", "app"])
    assert relaunch_command(["/x/app/__main__.py", "--x"], frozen=False) == (
        sys.executable,
        ["-m", "app", "--x"],
    )
    assert relaunch_command(["VoxDesk.exe"], frozen=True) == (sys.executable, [])
