"""The window and speech recognition: a new voice's transcript is filled in the background.

The recognizer is the tiny SenseVoice-format model (tests/tiny_asr.py) run by the real
sherpa-onnx code; the voice is a file of tones it hears as known words.
"""

from __future__ import annotations

import threading

import soundfile as sf
from PySide6.QtCore import Qt
from tiny_asr import expected_text, tone_words, write_tiny_sensevoice
from ui_fixtures import ScriptedDialogs, home, open_window, wait_for_imports  # noqa: F401

from app.asr import catalog
from app.voices.library import VoiceLibrary


def _voice_file(path, bands):
    sf.write(str(path), tone_words(bands), 16000)
    return path


def _window(qtbot):
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    window.actions.dialog.reject()  # the first-run model manager
    return window, dialogs


def test_import_fills_the_transcript_and_the_mode_changes(qtbot, home, tmp_path):  # noqa: F811
    write_tiny_sensevoice(catalog.default_folder())
    window, dialogs = _window(qtbot)
    panel = window.voices
    panel.import_files([_voice_file(tmp_path / "Anna.wav", [0, 1, 4, 5])])
    wait_for_imports(qtbot, window)
    # Right after the import the voice has no words yet: reference mode, recognition running.
    assert "Mode: reference" in panel.mode_hint.text()
    qtbot.waitUntil(lambda: panel.transcript.toPlainText() == expected_text([0, 1, 4, 5]), timeout=20_000)
    assert "Mode: continuation" in panel.mode_hint.text()
    assert "Recognized automatically" in panel.recognize_status.text()
    voice = VoiceLibrary().list()[0]
    assert voice.transcript == "hello world你好" and voice.transcript_recognized
    assert not panel.recognize_cancel.isVisible() and dialogs.errors == []

    # Editable: the user's correction is saved and is no longer marked as recognized.
    panel.transcript.setPlainText("Hello, world. 你好！")
    panel.flush()
    voice = VoiceLibrary().list()[0]
    assert voice.transcript == "Hello, world. 你好！" and not voice.transcript_recognized
    assert "Recognized automatically" not in panel.recognize_status.text()

    # Recognize again on request: it asks before replacing typed words.
    dialogs.answers = [True]
    qtbot.mouseClick(panel.recognize_button, Qt.MouseButton.LeftButton)
    assert dialogs.questions and "Replace the transcript" in dialogs.questions[-1]
    qtbot.waitUntil(lambda: panel.transcript.toPlainText() == "hello world你好", timeout=20_000)


def test_recording_is_transcribed_without_blocking_and_can_be_cancelled(qtbot, home, monkeypatch):  # noqa: F811
    from app.asr.sensevoice import SenseVoiceRecognizer

    write_tiny_sensevoice(catalog.default_folder())
    window, dialogs = _window(qtbot)
    panel = window.voices
    gate, entered = threading.Event(), threading.Event()
    real = SenseVoiceRecognizer._decode

    def slow(self, samples, language):  # holds the worker thread until the test lets it go
        entered.set()
        gate.wait(10)
        return real(self, samples, language)

    monkeypatch.setattr(SenseVoiceRecognizer, "_decode", slow)
    panel.add_recording(tone_words([8]), 16000, "Take 1")
    wait_for_imports(qtbot, window)
    qtbot.waitUntil(entered.is_set, timeout=20_000)
    # The GUI thread is free while recognition runs: the window answers and shows progress.
    assert panel.recognize_cancel.isVisible() and "Recognizing" in panel.recognize_status.text()
    qtbot.mouseClick(panel.recognize_cancel, Qt.MouseButton.LeftButton)
    gate.set()
    qtbot.waitUntil(lambda: "cancelled" in panel.recognize_status.text(), timeout=20_000)
    assert panel.transcript.toPlainText() == "" and VoiceLibrary().list()[0].transcript == ""
    assert dialogs.errors == []


def test_damaged_recognizer_is_one_line_and_import_still_works(qtbot, home, tmp_path):  # noqa: F811
    folder = write_tiny_sensevoice(catalog.default_folder())
    (folder / "model.int8.onnx").write_bytes(b"\x08\x07\x12")
    window, dialogs = _window(qtbot)
    panel = window.voices
    panel.import_files([_voice_file(tmp_path / "Ben.wav", [2, 3])])
    qtbot.waitUntil(lambda: "damaged or incomplete" in panel.recognize_status.text(), timeout=20_000)
    assert "\n" not in panel.recognize_status.text()
    assert [v.name for v in VoiceLibrary().list()] == ["Ben"] and panel.transcript.toPlainText() == ""
    assert "Mode: reference" in panel.mode_hint.text() and dialogs.errors == []


def test_silent_reference_says_no_speech(qtbot, home, tmp_path):  # noqa: F811
    write_tiny_sensevoice(catalog.default_folder())
    window, _ = _window(qtbot)
    panel = window.voices
    chord = sum(tone_words([k], seconds=1.0, gap=0.0) for k in range(10)) / 10  # loud, but no word
    path = tmp_path / "Hum.wav"
    sf.write(str(path), chord, 16000)
    panel.import_files([path])
    qtbot.waitUntil(lambda: "No speech was heard" in panel.recognize_status.text(), timeout=20_000)
    assert VoiceLibrary().list()[0].transcript == ""


def test_without_a_recognizer_the_panel_says_what_it_would_add(qtbot, home, tmp_path):  # noqa: F811
    window, _ = _window(qtbot)
    panel = window.voices
    panel.import_files([_voice_file(tmp_path / "Cleo.wav", [0])])
    wait_for_imports(qtbot, window)
    assert "Speech recognition is not installed" in panel.recognize_status.text()
    assert not panel.recognize_button.isEnabled() and not window.transcriber.busy()
    assert VoiceLibrary().list()[0].transcript == ""

    # Installing one (the model manager's "Use a recognizer folder…") enables it at once.
    folder = write_tiny_sensevoice(tmp_path / "my-asr")
    from ui.views.model_manager import ModelManager

    dialogs = ScriptedDialogs()
    dialogs.folders = [folder]
    manager = ModelManager(window.settings, dialogs, parent=window)
    qtbot.addWidget(manager)
    manager.recognizerChanged.connect(panel.recognizer_changed)
    manager.choose_recognizer_folder()
    assert window.settings.recognizer_dir == folder and "Using" in manager.asr_state.text()
    assert panel.recognize_button.isEnabled()
    qtbot.mouseClick(panel.recognize_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.transcript.toPlainText() == "hello", timeout=20_000)
