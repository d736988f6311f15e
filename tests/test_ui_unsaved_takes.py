"""Finished takes are user work too: a take finished after the script was saved marks it unsaved,
so New, Open and closing ask before its only reference (the autosave) goes; a model switch or a
settings change keeps every take; a start with no autosave reopens the most recent script file.
Each path checks the files on disk afterwards (offscreen)."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
from test_ui_window import import_voice, speak_and_wait, type_script
from ui_fixtures import ScriptedDialogs, home, open_window, ui_model, write_voice_file  # noqa: F401

from app import project as projects
from ui.settings import Settings


def autosave_of(window) -> Path:
    return projects.autosave_dir() / f"{window.project.id}{projects.SUFFIX}"


def takes_in(path: Path) -> dict[str, str]:
    """Segment key -> the take's audio file, as the script file (or autosave) at ``path`` holds them."""
    results = json.loads(path.read_text(encoding="utf-8"))["results"]
    return {key: r["audio_file"] for key, r in results.items() if r["status"] == "done"}


def saved_with_takes(qtbot, window, dialogs, tmp_path, text: str) -> Path:
    """A voice, a script spoken, saved to story.voxdesk: the title is clean and the file has every take."""
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    type_script(qtbot, window, text)
    speak_and_wait(qtbot, window)
    path = tmp_path / "story.voxdesk"
    dialogs.files.append(path)
    assert window.actions.files.save_script()
    assert not window.isWindowModified() and len(takes_in(path)) == len(window.session.segments)
    return path


def test_takes_made_after_a_save_mark_the_script_unsaved_and_new_asks_before_they_go(
    qtbot,
    home,  # noqa: F811
    ui_model,  # noqa: F811
    tmp_path,
):
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    type_script(qtbot, window, "One sentence. Two sentences.")
    path = tmp_path / "story.voxdesk"
    dialogs.files.append(path)
    assert window.actions.files.save_script() and takes_in(path) == {}

    # Speaking the saved script: the new takes are unsaved work (the `*`), also in the autosave.
    speak_and_wait(qtbot, window)
    window.session.wait_for_writes()
    window.autosave()  # what the timer does 0.4 s later
    copy = autosave_of(window)
    assert window.isWindowModified() and json.loads(copy.read_text())["unsaved"] is True
    made = takes_in(copy)
    assert len(made) == 2 and all(Path(f).is_file() for f in made.values()) and takes_in(path) == {}

    # New asks, naming the takes (nothing was typed); Cancel keeps everything.
    dialogs.unsaved_answers.append("cancel")
    window.actions.files.new_script()
    assert dialogs.unsaved_questions[-1] == (
        "“story.voxdesk” has new takes that are not saved in it yet. Save it before closing it?"
    )
    assert window.script.text() == "One sentence. Two sentences." and copy.is_file()

    # Save: the file now refers to the takes; reopened, they play as they were.
    audio = [s.samples() for s in window.session.segments]
    dialogs.unsaved_answers.append("save")
    window.actions.files.new_script()
    assert takes_in(path) == made and window.script.text() == "" and not copy.exists()
    assert window.actions.files.open_path(path)
    assert [s.status for s in window.session.segments] == ["done", "done"]
    for seg, before in zip(window.session.segments, audio, strict=True):
        np.testing.assert_allclose(seg.samples(), before, atol=1 / 32768)

    # A new take of one row, then New › Discard: the file keeps the takes it was saved with.
    window.script.table.selectRow(0)
    with qtbot.waitSignal(window.session.runFinished, timeout=30_000):
        window.regenerate(0, new_seed=True)
        assert window.isWindowModified()  # its seed is fixed now: a change to the file already
    dialogs.unsaved_answers.append("discard")
    window.actions.files.new_script()
    assert takes_in(path) == made and len(dialogs.unsaved_questions) == 3
    assert window.actions.files.open_path(path)
    np.testing.assert_allclose(window.session.segments[0].samples(), audio[0], atol=1 / 32768)


def test_a_take_still_being_written_when_new_is_chosen_is_asked_about(
    qtbot,
    home,  # noqa: F811
    ui_model,  # noqa: F811
    tmp_path,
):
    """The back-check's better take is written on a worker thread; New right after it waits for
    the file and asks, instead of finding the script clean."""
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    path = saved_with_takes(qtbot, window, dialogs, tmp_path, "Just one sentence here.")
    better = np.linspace(-0.1, 0.1, 4800, dtype=np.float32)
    window.session.replace_take(0, better, seed=7)
    assert not window.isWindowModified()  # the file is not written yet
    dialogs.unsaved_answers.append("save")
    window.actions.files.new_script()
    assert len(dialogs.unsaved_questions) == 1
    (take,) = takes_in(path).values()
    assert take.endswith("-7.wav") and Path(take).is_file()


def test_a_model_switch_and_a_settings_change_keep_every_take_and_closing_asks_about_new_ones(
    qtbot,
    home,  # noqa: F811
    ui_model,  # noqa: F811
    tmp_path,
):
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    path = saved_with_takes(qtbot, window, dialogs, tmp_path, "One sentence. Two sentences.")
    made = takes_in(path)
    audio = [s.samples() for s in window.session.segments]

    def still_there(stale: list[str]) -> None:
        """Every take is shown, plays as it was, is marked, and is in the file and the autosave."""
        segs = window.session.segments
        assert [s.status for s in segs] == ["done", "done"] and [list(s.stale) for s in segs] == [stale] * 2
        for seg, before in zip(segs, audio, strict=True):
            np.testing.assert_allclose(seg.samples(), before, atol=1 / 32768)
        window.autosave()
        assert takes_in(path) == made and takes_in(autosave_of(window)) == made
        assert all(Path(f).is_file() for f in made.values()) and not window.isWindowModified()

    # Settings › On the CPU › 8-bit weights: the engine reloads; the takes are made with another model.
    window.actions.open_settings()
    settings = window.actions.dialog
    settings.cpu.combo.setCurrentIndex(settings.cpu.combo.findData("int8"))
    settings.accept()
    qtbot.waitUntil(lambda: window.model.ready and window.settings.cpu_precision == "int8", timeout=30_000)
    qtbot.waitUntil(lambda: window.session.context.endswith("+int8"))
    still_there(["context"])

    # Models… › another model folder: the same.
    other = tmp_path / "other-model"
    shutil.copytree(ui_model, other)
    for weights in other.glob("*.safetensors"):
        os.utime(weights, (1_000_000_000, 1_000_000_000))  # other weights as far as the cache knows
    before = window.model.model_id
    window.actions.manage_models()
    dialogs.folders.append(other)
    window.actions.dialog.choose_folder()
    qtbot.waitUntil(lambda: window.model.ready and window.model.model_id != before, timeout=30_000)
    assert window.settings.model_dir == other
    still_there(["context"])
    assert dialogs.unsaved_questions == [] and dialogs.errors == []

    # Regenerating them with this model is new work: closing asks; Discard keeps the file's takes.
    with qtbot.waitSignal(window.session.runFinished, timeout=60_000):
        window.regenerate_stale()
    assert window.session.stale_indices() == []
    qtbot.waitUntil(window.isWindowModified)  # once their files are written
    dialogs.unsaved_answers.append("discard")
    assert window.close()
    assert "has new takes" in dialogs.unsaved_questions[-1] and takes_in(path) == made
    assert projects.autosaves() == []

    # The next start reopens the saved script, with the takes it was saved with.
    again = open_window(qtbot, other, ScriptedDialogs())
    assert again.project.path == path and again.script.text() == "One sentence. Two sentences."
    assert [s.status for s in again.session.segments] == ["done", "done"]
    for seg, before in zip(again.session.segments, audio, strict=True):
        np.testing.assert_allclose(seg.samples(), before, atol=1 / 32768)


def test_a_start_without_an_autosave_reopens_the_most_recent_script(qtbot, home, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    window.actions.dialog.reject()  # the first-run model manager
    path = tmp_path / "story.voxdesk"
    type_script(qtbot, window, "Saved words.")
    dialogs.files.append(path)
    assert window.actions.files.save_script()
    type_script(qtbot, window, " Words thrown away.")
    dialogs.unsaved_answers.append("discard")
    assert window.close() and projects.autosaves() == []

    again = open_window(qtbot, None, ScriptedDialogs())
    again.actions.dialog.reject()
    assert again.script.text() == "Saved words." and again.project.path == path
    assert not again.isWindowModified() and again.windowTitle() == "story.voxdesk[*] — VoxDesk"
    assert again.statusBar().currentMessage() == "Reopened story.voxdesk, the last script"
    assert again.dialogs.errors == []


def test_a_missing_or_damaged_last_script_starts_a_new_one_and_says_why(qtbot, home, tmp_path):  # noqa: F811
    gone, damaged = tmp_path / "gone.voxdesk", tmp_path / "damaged.voxdesk"
    Settings().add_recent_script(gone, 10)
    window = open_window(qtbot, None, ScriptedDialogs())
    window.actions.dialog.reject()
    qtbot.wait(10)  # the start's one message, if any
    assert window.script.text() == "" and window.project.path is None and window.dialogs.errors == []
    assert "Reopened" not in window.statusBar().currentMessage()
    window.close()
    shutil.rmtree(projects.autosave_dir())

    damaged.write_bytes(b'{"format": "voxdesk-project", "text": ')
    Settings().add_recent_script(damaged, 10)
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    window.actions.dialog.reject()
    qtbot.waitUntil(lambda: dialogs.errors != [])
    assert window.script.text() == "" and window.project.path is None
    assert dialogs.errors == [
        "The last script, damaged.voxdesk, could not be reopened: damaged.voxdesk could not be read: "
        "it is damaged. Open its .bak copy if there is one."
    ]
    assert damaged.read_bytes() == b'{"format": "voxdesk-project", "text": '  # never touched
    assert Settings().recent_scripts()[0] == damaged


def test_another_default_voice_keeps_the_takes_marked_with_the_voice_they_were_spoken_in(
    qtbot,
    home,  # noqa: F811
    ui_model,  # noqa: F811
    tmp_path,
):
    """A voice change is a settings change too: the takes stay, but say whose voice they are in
    (they were shown as current, and Speak kept them)."""
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    path = saved_with_takes(qtbot, window, dialogs, tmp_path, "One sentence. Two sentences.")
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Ben.wav", freq=330.0))
    assert window.script.default_voice() == "Anna"
    window.script.voice.setCurrentIndex(window.script.voice.findData("Ben"))
    segs = window.session.segments
    assert [s.status for s in segs] == ["done", "done"] and [s.stale for s in segs] == [{"voice": "Anna"}] * 2
    table = window.script.table
    row = replace(table.rows()[0], playing=False)  # as it reads without the playhead
    assert table.status_text(row) == "Made with voice Anna · Regenerate to apply"
    window.autosave()
    assert takes_in(autosave_of(window)) == takes_in(path)  # kept for the user to decide
    window.script.voice.setCurrentIndex(window.script.voice.findData("Anna"))
    assert window.session.stale_indices() == []


def on_server(window) -> bool:
    return window.model.ready and window.session.context.startswith("remote-")


def test_switching_to_a_speech_server_keeps_the_local_takes(qtbot, home, ui_model, tmp_path):  # noqa: F811
    """Settings › Engine › a speech server: the engine changes, the takes stay, marked."""
    from server_fixtures import start_live

    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    path = saved_with_takes(qtbot, window, dialogs, tmp_path, "One sentence. Two sentences.")
    made = takes_in(path)
    live = start_live(ui_model, tmp_path / "server-voices")
    try:
        before = (window.settings.language, (window.settings.device, window.settings.cpu_precision),
                  window.settings.model_dir)  # fmt: skip
        source = window.engine_source()
        window.settings.backend, window.settings.server_url = "server", live.url
        window.actions._settings_changed(before, source)  # what accepting the Settings dialog does
        qtbot.waitUntil(lambda: on_server(window), timeout=30_000)
        segs = window.session.segments
        assert [s.status for s in segs] == ["done", "done"]
        assert [list(s.stale) for s in segs] == [["context"]] * 2
        window.autosave()
        assert takes_in(path) == made and takes_in(autosave_of(window)) == made
        assert not window.isWindowModified() and dialogs.unsaved_questions == []
    finally:
        window.close()
        live.server.stop()
        live.host.close()
