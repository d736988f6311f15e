"""Issue 22's smaller findings, one test per item, through the real widgets (offscreen)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from ui_fixtures import ScriptedDialogs, home, open_window, ui_model, write_voice_file  # noqa: F401

from app.audio.io import READABLE_SUFFIXES, load_audio
from app.errors import VoxDeskError


def import_voice(qtbot, window, dialogs, path: Path) -> None:
    dialogs.files.append(path)
    qtbot.mouseClick(window.voices.import_button, Qt.MouseButton.LeftButton)


def test_stop_says_stopped_with_what_was_done(qtbot, home, ui_model, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    import_voice(qtbot, window, dialogs, write_voice_file(tmp_path / "Anna.wav"))
    window.script.set_text(" ".join(f"This is sentence {i}." for i in range(20)))
    window.script.scriptChanged.emit()
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
