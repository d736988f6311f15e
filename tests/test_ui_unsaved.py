"""Unsaved work is never dropped without a word: New, Open, Quit (Ctrl+Q) and closing the window
ask Save / Discard / Cancel; a restored autosave is marked unsaved; File › Recent scripts.
Each path checks the files on disk afterwards (offscreen)."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from ui_fixtures import ScriptedDialogs, home, open_window  # noqa: F401

from app import project as projects
from ui.settings import Settings


def start(qtbot, dialogs: ScriptedDialogs | None = None):
    window = open_window(qtbot, None, dialogs or ScriptedDialogs())
    if window.actions.dialog is not None:
        window.actions.dialog.reject()  # the first-run model manager
    return window


def edit(window, text: str) -> None:
    window.script.set_text(text)
    window.script.scriptChanged.emit()
    window.autosave()


def saved_script(tmp_path, name: str, text: str):
    """A script saved to ``name`` in ``tmp_path`` (and not open anywhere)."""
    project = projects.Project(text=text)
    return project.save(tmp_path / name), project


def autosave_of(window):
    return projects.autosave_dir() / f"{window.project.id}{projects.SUFFIX}"


def quit_with_keys(qtbot, window) -> None:
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    qtbot.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)


def test_new_asks_and_save_writes_the_file_before_the_new_script(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = start(qtbot, dialogs)
    path, _ = saved_script(tmp_path, "story.voxdesk", "First line.")
    assert window.actions.files.open_path(path)
    assert not window.isWindowModified() and dialogs.unsaved_questions == []
    edit(window, "First line. An added line.")
    old_autosave = autosave_of(window)
    assert window.isWindowModified() and json.loads(old_autosave.read_text())["unsaved"] is True

    dialogs.unsaved_answers.append("save")
    window.actions.files.new_script()
    assert "“story.voxdesk” has unsaved changes" in dialogs.unsaved_questions[-1]
    assert json.loads(path.read_text())["text"] == "First line. An added line."
    assert window.script.text() == "" and window.project.path is None and not window.isWindowModified()
    assert not old_autosave.exists() and autosave_of(window).is_file()


def test_cancel_keeps_everything_and_discard_drops_only_the_unsaved_copy(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = start(qtbot, dialogs)
    path, _ = saved_script(tmp_path, "story.voxdesk", "First line.")
    other, _ = saved_script(tmp_path, "other.voxdesk", "Another script.")
    window.actions.files.open_path(path)
    edit(window, "First line. Unsaved words.")
    copy = autosave_of(window)

    dialogs.unsaved_answers.append("cancel")
    dialogs.files.append(other)
    window.actions.files.open_script()  # Open › Cancel
    assert window.script.text() == "First line. Unsaved words." and window.isWindowModified()
    assert "Unsaved words." in copy.read_text() and json.loads(path.read_text())["text"] == "First line."

    dialogs.unsaved_answers.append("discard")
    dialogs.files.append(other)
    window.actions.files.open_script()  # Open › Discard
    assert window.script.text() == "Another script." and window.project.path == other
    assert not copy.exists() and json.loads(path.read_text())["text"] == "First line."
    assert len(dialogs.unsaved_questions) == 2


def test_ctrl_q_asks_cancel_stays_open_and_save_writes_then_quits(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = start(qtbot, dialogs)
    edit(window, "Never saved.")
    copy = autosave_of(window)

    dialogs.unsaved_answers.append("cancel")
    quit_with_keys(qtbot, window)
    assert "never saved" in dialogs.unsaved_questions[-1]
    assert window.isVisible() and copy.is_file() and json.loads(copy.read_text())["unsaved"] is True

    target = tmp_path / "kept.voxdesk"
    dialogs.unsaved_answers.append("save")
    dialogs.files.append(target)
    quit_with_keys(qtbot, window)
    assert not window.isVisible()
    assert json.loads(target.read_text())["text"] == "Never saved."
    data = json.loads(copy.read_text())  # kept for the next start, no longer unsaved
    assert data["unsaved"] is False and data["saved_path"] == str(target)

    again = start(qtbot)
    assert again.script.text() == "Never saved." and not again.isWindowModified()
    assert again.project.path == target and "Restored" not in again.statusBar().currentMessage()


def test_closing_with_discard_deletes_the_autosave_and_a_save_that_fails_keeps_the_window(
    qtbot,
    home,  # noqa: F811
    tmp_path,
):
    dialogs = ScriptedDialogs()
    window = start(qtbot, dialogs)
    edit(window, "Throw this away.")
    copy = autosave_of(window)
    dialogs.unsaved_answers.append("save")  # ...then the file dialog is cancelled: nothing closes
    assert not window.close() and window.isVisible() and copy.is_file()
    dialogs.unsaved_answers.append("discard")
    assert window.close() and not copy.exists()
    assert list(tmp_path.glob("*.voxdesk")) == []
    assert start(qtbot).script.text() == ""


def test_a_restored_autosave_is_marked_unsaved_and_asks_before_it_is_replaced(qtbot, home, tmp_path):  # noqa: F811
    path, project = saved_script(tmp_path, "story.voxdesk", "Saved text.")
    project.text = "Saved text. Typed before a crash."
    project.autosave(unsaved=True)  # what the window wrote before it was killed

    dialogs = ScriptedDialogs()
    window = start(qtbot, dialogs)
    assert window.script.text() == "Saved text. Typed before a crash."
    assert window.isWindowModified() and window.windowTitle() == "story.voxdesk[*] — VoxDesk"
    assert window.statusBar().currentMessage().startswith("Restored unsaved changes from ")

    dialogs.unsaved_answers.append("cancel")
    window.actions.files.new_script()
    assert window.script.text() == "Saved text. Typed before a crash."
    dialogs.unsaved_answers.append("save")
    window.actions.files.new_script()
    assert json.loads(path.read_text())["text"] == "Saved text. Typed before a crash."


def test_an_autosave_from_before_the_flag_is_unsaved_when_it_differs_from_its_file(qtbot, home, tmp_path):  # noqa: F811
    path, project = saved_script(tmp_path, "story.voxdesk", "Saved text.")
    project.text = "Saved text. And more."
    copy = project.autosave()
    data = json.loads(copy.read_text())
    del data["unsaved"]
    copy.write_text(json.dumps(data))
    assert projects.Project.load(copy).unsaved
    data["text"] = "Saved text."
    copy.write_text(json.dumps(data))
    assert not projects.Project.load(copy).unsaved


def test_recent_scripts_newest_first_missing_ones_marked_and_cleared(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = start(qtbot, dialogs)
    first, _ = saved_script(tmp_path, "first.voxdesk", "One.")
    edit(window, "Two.")
    dialogs.files.append(tmp_path / "second.voxdesk")
    window.actions.files.save_script()
    window.actions.files.open_path(first)
    assert Settings().recent_scripts() == [first, tmp_path / "second.voxdesk"]  # kept in settings

    (tmp_path / "second.voxdesk").unlink()
    menu = window.actions.files.recent_menu
    menu.aboutToShow.emit()
    entries = [(a.text(), a.isEnabled()) for a in menu.actions() if not a.isSeparator()]
    assert entries == [
        ("first.voxdesk", True),
        ("second.voxdesk (not found)", False),
        ("Clear recent scripts", True),
    ]
    window.actions.files.new_script()
    next(a for a in menu.actions() if a.text() == "first.voxdesk").trigger()
    assert window.script.text() == "One." and window.project.path == first

    window.actions.files.open_path(tmp_path / "second.voxdesk")  # gone: said, and dropped from the list
    assert "does not exist" in dialogs.errors[-1] and Settings().recent_scripts() == [first]
    next(a for a in menu.actions() if a.text() == "Clear recent scripts").trigger()
    assert Settings().recent_scripts() == []
    assert [a.text() for a in menu.actions() if not a.isSeparator()][0] == "No recent scripts"
