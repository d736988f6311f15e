"""The window with a tiny IndexTTS-2.5 folder (issue 19 §4): the emotion and language controls
show, the script's choices and a line's ``[Anna|angry]`` reach the engine's request, a rate is
the request's speed (IndexTTS's duration factor 1/rate), the choices are saved with the script and
restored, and changing them marks the finished takes stale."""

from __future__ import annotations

import numpy as np
import pytest
from test_ui_window import import_voice, speak_and_wait, type_script
from tiny_indextts import tiny_ix  # noqa: F401
from ui_fixtures import ScriptedDialogs, home, open_window, write_voice_file  # noqa: F401

from app import project as projects
from app.errors import VoxDeskError
from app.voices.emotion import EmotionSpec


def _requests(window) -> list:
    """The engine requests the window builds for the script's segments now."""
    build = window.job_builder()
    out = []
    for job in window.project.jobs():
        _key, prompt, make = build(job)
        out.append(make(prompt))
    return out


def test_indextts_emotion_language_and_rate_reach_the_request_and_the_project_file(
    qtbot, home, tiny_ix, tmp_path  # noqa: F811
):
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, tiny_ix, dialogs)
    form = window.script.settings
    assert form.emotion.isVisible() and form.language.isVisible()
    assert not form.cfg.isVisible() and not form.instruction.isVisible()
    assert form.language.count() == 1 + len(window.model.languages) and "zh" in window.model.languages
    assert "duration factor" in window.script.rate.toolTip()
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav", 220))
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Bob.wav", 330))
    window.script.voice.setCurrentIndex(window.script.voice.findData("Anna"))
    type_script(qtbot, window, "[Anna|angry] Hello there.\nA plain line.")

    emotion = form.emotion
    emotion.source.setCurrentIndex(emotion.source.findData("vector"))
    emotion.sliders["happy"].setValue(50)
    emotion.sliders["calm"].setValue(20)
    emotion.weight.setValue(90)
    form.language.setCurrentIndex(form.language.findData("en"))
    window.script.rate.setValue(1.25)
    script_emotion = EmotionSpec("vector", vector=(0.5, 0, 0, 0, 0, 0, 0, 0.2), weight=0.9)
    assert window.project.settings.emotion == script_emotion and window.project.settings.language == "en"

    tagged, plain = _requests(window)
    assert tagged.emotion.vector == (0, 0.8, 0, 0, 0, 0, 0, 0) and tagged.emotion.weight == 1.0  # the line's
    assert plain.emotion.vector == script_emotion.vector and plain.emotion.weight == 0.9  # the script's
    assert tagged.language == plain.language == "en" and tagged.speed == plain.speed == 1.25

    emotion.source.setCurrentIndex(emotion.source.findData("clip"))
    emotion.voice.setCurrentIndex(emotion.voice.findData("Bob"))
    _tagged, plain = _requests(window)
    bob = window.library.find("Bob")
    assert plain.emotion.kind == "clip" and plain.emotion.clip_rate == bob.sample_rate
    assert np.array_equal(plain.emotion.clip, window.library.audio(bob))

    window.actions.edit_segment_settings(0)  # the line's own: shown, and replaced in the dialog
    dialog = window.actions.dialog
    assert dialog.form.emotion.isVisible() and dialog.form.emotion.sliders["angry"].value() == 80
    dialog.custom.setChecked(True)
    dialog.form.emotion.source.setCurrentIndex(dialog.form.emotion.source.findData("text"))
    dialog.form.emotion.text.setText("tired but kind")
    dialog.form.language.setCurrentIndex(dialog.form.language.findData("zh"))
    dialog.accept()
    tagged, _plain = _requests(window)
    assert tagged.emotion.text == "tired but kind" and tagged.language == "zh"

    path = window.project.save(tmp_path / "script")
    window.set_project(projects.Project.load(path))
    own = window.project.overrides[window.project.jobs()[0].key]
    assert own.emotion == EmotionSpec("text", text="tired but kind") and own.language == "zh"
    assert form.emotion.kind() == "clip" and form.emotion.voice.currentData() == "Bob"
    assert form.values()["emotion"] == {"kind": "clip", "voice": "Bob", "weight": 0.9}
    assert form.language.currentData() == "en" and window.script.rate.value() == 1.25

    window.voices.refresh(select_id=bob.id)  # the emotion's voice follows a rename
    window.voices.name.setText("Robert")
    window.voices.name.editingFinished.emit()
    assert window.project.settings.emotion == EmotionSpec("clip", voice="Robert", weight=0.9)
    voices = form.emotion.voice
    assert voices.currentData() == "Robert" and voices.findData("Bob") < 0

    window.script.editor.setPlainText("[Anna|@Carol] Who is Carol?")  # no voice of that name
    window.script.flush()
    with pytest.raises(VoxDeskError, match="Carol") as caught:
        _requests(window)
    assert "\n" not in str(caught.value)
    assert dialogs.errors == []


def test_changing_the_emotion_marks_finished_takes_stale(qtbot, home, tiny_ix, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, tiny_ix, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav", 220))
    window.script.voice.setCurrentIndex(window.script.voice.findData("Anna"))
    type_script(qtbot, window, "[Anna|sad] Hi.")
    speak_and_wait(qtbot, window)
    (segment,) = window.session.segments
    sad = EmotionSpec("vector", vector=(0, 0, 0.8, 0, 0, 0, 0, 0))
    assert segment.status == "done" and segment.job.emotion == sad
    assert window.session.stale_indices() == []
    assert window.script.table.item(0, 1).toolTip() == "Emotion: sad 0.8"  # the line's, on its voice
    form = window.script.settings
    form.language.setCurrentIndex(form.language.findData("en"))
    assert window.session.stale_indices() == [0]
    assert "language detected from the text" in window.script.table.rows()[0].stale
    form.language.setCurrentIndex(form.language.findData(""))
    assert window.session.stale_indices() == []
    window.script.editor.setPlainText("[Anna|happy] Hi.")
    window.script.flush()
    assert window.session.stale_indices() == [0]
    assert "emotion sad 0.8" in window.script.table.rows()[0].stale
    assert dialogs.errors == []
