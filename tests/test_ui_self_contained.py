"""File › Save as self-contained project: the takes go into a folder beside the file, so the two
move to another folder (another computer) together and every take plays and exports there."""

from __future__ import annotations

import json
import shutil

import numpy as np
import soundfile
from test_ui_window import import_voice, speak_and_wait, type_script
from ui_fixtures import ScriptedDialogs, home, open_window, played, ui_model, write_voice_file  # noqa: F401

from app import project as projects
from ui.views.export_dialog import ExportOptions


def test_save_self_contained_move_the_folder_open_and_every_take_plays_and_exports(
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
    audio = [s.samples() for s in window.session.segments]

    dialogs.files.append(tmp_path / "mine" / "story.voxdesk")
    (tmp_path / "mine").mkdir()
    file_menu = window.menuBar().actions()[0].menu()
    action = next(a for a in file_menu.actions() if a.text() == "Save as self-contained project…")
    action.trigger()
    assert "story_takes" in window.statusBar().currentMessage() and not window.isWindowModified()
    assert len(list((tmp_path / "mine" / "story_takes").glob("*.wav"))) == 2
    assert str(tmp_path) not in (tmp_path / "mine" / "story.voxdesk").read_text()
    project_id = window.project.id
    window.close()

    # Another computer: the folder is elsewhere, and neither the cache nor the autosave is there.
    moved = tmp_path / "usb" / "mine"
    moved.parent.mkdir()
    shutil.move(str(tmp_path / "mine"), str(moved))
    shutil.rmtree(projects.autosave_dir())
    shutil.rmtree(window.project.audio_dir())
    dialogs = ScriptedDialogs()
    again = open_window(qtbot, ui_model, dialogs)
    assert again.script.text() == ""
    assert again.actions.files.open_path(moved / "story.voxdesk") and again.project.id == project_id
    assert [s.status for s in again.session.segments] == ["done", "done"]
    assert again.session.stale_indices() == []
    for seg, before in zip(again.session.segments, audio, strict=True):
        assert seg.file is not None and seg.file.parent == moved / "story_takes"
        np.testing.assert_allclose(seg.samples(), before, atol=1 / 32768)
    again.play_segment(1)
    qtbot.waitUntil(lambda: len(played(again)) >= len(audio[1]), timeout=10_000)
    np.testing.assert_allclose(played(again)[: len(audio[1])], audio[1], atol=1 / 32768)
    out = tmp_path / "usb" / "story.wav"
    assert again.actions.run_export(ExportOptions(path=out, srt=False)) == [out]
    rate = again.session.sample_rate
    assert soundfile.info(str(out)).frames == sum(len(a) for a in audio) + round(0.3 * rate)
    data = json.loads((moved / "story.voxdesk").read_text())
    assert all(r["audio_file"].startswith("story_takes/") for r in data["results"].values())
