"""The window with an IndexTTS-2.5 model: a library voice without a transcript speaks (the family
copies a voice from its recording alone: app/voices/cloning.py decides by its controls), and the
voice panel says so instead of asking for the words; the voice's conditions are kept in the library."""

from __future__ import annotations

from PySide6.QtCore import Qt
from tiny_indextts import tiny_ix  # noqa: F401
from ui_fixtures import ScriptedDialogs, home, open_window, played, wait_for_imports, write_voice_file  # noqa: F401

from app.voices import latents
from ui.views.reference_guide import ReferenceGuide


def test_a_voice_without_a_transcript_speaks_with_indextts(qtbot, home, tiny_ix, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, tiny_ix, dialogs)
    assert window.model.info.architecture == "indextts25"
    window.voices.import_files([write_voice_file(tmp_path / "Anna.wav", seconds=1.5)])
    wait_for_imports(qtbot, window)
    (voice,) = window.library.list()
    assert voice.transcript == ""
    assert window.voices.mode_hint.text().startswith("Mode: reference. The recording alone sets the voice")
    # the guide: the official 15 s cut of the speaker clip, whatever the script, and no transcript
    assert window.voices.guide.label.text() == (
        "This model uses the first 15.0 s of the recording, whatever the script; 5–15 s is best. "
        "It needs no transcript."
    )
    long = "[Anna] " + "it was a bright cold day in April, and the clocks were striking thirteen, " * 30 + "."
    window.script.editor.setPlainText(long)
    window.script.flush()
    assert window.model.info.limits.fixed_conditioning
    assert window.fit_problems() == []  # a long script: nothing refused ahead (the frontend splits it)
    window.script.editor.setPlainText("[Anna] 你好，世界。")
    window.script.flush()
    with qtbot.waitSignal(window.session.runFinished, timeout=180_000):
        qtbot.keyClick(window.script.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    (segment,) = window.session.segments
    assert dialogs.errors == []
    assert segment.status == "done", segment.error
    assert played(window).size > 0
    kept = latents.load_named(window.library, voice, window.model.model_id, latents.INDEXTTS)
    assert sorted(kept) == sorted(latents.INDEXTTS)  # the voice's conditions kept for this model


def test_a_selection_past_the_cut_is_said_unused_not_refused(qtbot) -> None:
    """IndexTTS cuts the recording (nothing fails): the guide says what is not used, without the red
    of a model whose positions a longer recording would overrun."""
    guide = ReferenceGuide()
    qtbot.addWidget(guide)
    guide.set_values(20.0, 15.0, (0.0, 20.0), cut=True, transcript=False)
    assert guide.too_long
    assert guide.label.text() == (
        "This model uses the first 15.0 s of the recording, whatever the script; 5–15 s is best. "
        "The selection is 20.0 s; what follows its first 15.0 s is not used. It needs no transcript."
    )
    assert guide.label.styleSheet() == ""
    guide.set_values(20.0, 15.0, (0.0, 20.0))  # positions bind (VoxCPM, CosyVoice): as before
    assert "trim it to 15.0 s or less." in guide.label.text() and "c81e1e" in guide.label.styleSheet()
