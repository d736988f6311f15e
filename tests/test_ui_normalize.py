"""Reading numbers as words in the window: on by default, a per-script switch saved with the
project, done after the pronunciation list, in a child process (the GUI thread never runs it)."""

from __future__ import annotations

import numpy as np
from ui_fixtures import ScriptedDialogs, home, open_window, ui_model  # noqa: F401

from app.models.voxcpm.generate import Synthesizer
from app.project import Project
from app.text.normalize import normalize_for_speech
from app.text.pronunciation import PronunciationList

SCRIPT = "It costs $5 at VDX."


def _speak(qtbot, window) -> None:
    with qtbot.waitSignal(window.session.runFinished, timeout=120_000):
        window.speak()


def test_segments_are_spoken_normalized_and_the_switch_is_saved(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    window.project.rules = PronunciationList.from_list([{"find": "VDX", "replace": "VoxDesk 2"}])
    window.script.settings.steps.setValue(3)
    window.script.editor.setPlainText(SCRIPT)
    window.script.flush()
    assert window.script.normalize.isChecked() and window.project.settings.normalize
    _speak(qtbot, window)
    assert dialogs.errors == []
    (seg,) = window.session.segments
    spoken = normalize_for_speech("It costs $5 at VoxDesk 2.")  # the pronunciation list ran first
    assert spoken == "It costs five dollars at VoxDesk two."
    synth = Synthesizer.from_dir(ui_model, "cpu")
    want = synth.synthesize(spoken, seed=seg.seed, timesteps=3)
    np.testing.assert_allclose(seg.samples(), want.audio, atol=1e-3, rtol=0)

    window.script.normalize.setChecked(False)  # the switch is the script's, and it is saved
    assert not window.project.settings.normalize and not window.project.jobs()[0].normalize
    seg = window.session.segments[0]  # the finished take is kept, marked as made with numbers read
    assert seg.status == "done" and seg.stale == {"normalize": True}
    mark = "Made with numbers read as words · Regenerate to apply"
    assert window.script.table.cell_text(0, 3).endswith(mark)
    path = window.project.save(tmp_path / "script")
    assert Project.load(path).settings.normalize is False
    assert Project.load(path).jobs()[0].text == "It costs $5 at VoxDesk 2."
