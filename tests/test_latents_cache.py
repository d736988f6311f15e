"""The per-voice latents cache read back as untrusted input: any unreadable, mis-shaped or
non-finite entry is discarded (a line in the log) and the voice encoded again, and the voice
panel's "Re-encode" drops a voice's cache on request."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from PySide6.QtCore import Qt
from tiny import tone
from ui_fixtures import ScriptedDialogs, home, open_window, ui_model, wait_for_imports, write_voice_file  # noqa: F401

from app.engine import Engine, EngineConfig
from app.models.voxcpm.prompt import VoicePrompt
from app.voices import latents
from app.voices.library import VoiceLibrary

GOOD = np.random.default_rng(0).standard_normal((5, 4, 8)).astype(np.float32)


def _huge_header(path):
    path.write_bytes(b"\x93NUMPY\x01\x00\xff\xff" + b" " * 70000)


DAMAGE = {
    "empty": lambda p: p.write_bytes(b""),
    "garbage": lambda p: p.write_bytes(b"not a numpy file at all"),
    "huge-header": _huge_header,
    "truncated": lambda p: p.write_bytes(p.read_bytes()[:-40]),
    "two-dimensional": lambda p: np.save(p, np.zeros((5, 4), np.float32)),
    "no-patches": lambda p: np.save(p, np.zeros((0, 4, 8), np.float32)),
    "not-finite": lambda p: np.save(p, np.full((5, 4, 8), np.nan, np.float32)),
    "integers": lambda p: np.save(p, np.zeros((5, 4, 8), np.int64)),
    "pickled-object": lambda p: np.save(p, np.array([{"a": 1}], dtype=object), allow_pickle=True),
}


@pytest.fixture
def library(tmp_path):
    return VoiceLibrary(tmp_path / "voices")


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_cache_entry_is_discarded_with_a_log_line(library, tmp_path, caplog, damage):
    voice = library.import_file(write_voice_file(tmp_path / "Anna.wav"))
    path = latents.store(library, voice, "m", "prompt", GOOD)
    DAMAGE[damage](path)
    with caplog.at_level(logging.WARNING, logger="app.voices.latents"):
        assert latents.load(library, voice, "m", "prompt") is None
    assert not path.exists()
    assert "Discarding the cached latents" in caplog.text and path.name in caplog.text
    latents.store(library, voice, "m", "prompt", GOOD)  # the next encode is kept again
    np.testing.assert_array_equal(latents.load(library, voice, "m", "prompt"), GOOD)


def test_a_cache_entry_of_the_wrong_shape_is_discarded(library, tmp_path):
    voice = library.import_file(write_voice_file(tmp_path / "Anna.wav"))
    latents.store(library, voice, "m", "prompt", GOOD)
    assert latents.load(library, voice, "m", "prompt", shape=(4, 8)) is not None
    assert latents.load(library, voice, "m", "prompt", shape=(2, 8)) is None
    assert latents.load(library, voice, "m", "prompt") is None  # deleted


def test_the_engine_encodes_again_instead_of_using_unusable_latents(tiny_v2, caplog):
    engine = Engine(EngineConfig(model_dir=str(tiny_v2), device="cpu"))
    audio = tone(200, seed=5)
    fresh = engine.runner.voices.resolve(VoicePrompt(reference_audio=audio)).reference_latents
    for bad in (
        np.zeros((3, 1, 1), np.float32),
        np.full_like(fresh, np.nan),
        np.zeros((0, 4, 8), np.float32),
    ):
        with caplog.at_level(logging.WARNING, logger="app.engine.voice_cache"):
            resolved = engine.runner.voices.resolve(VoicePrompt(reference_audio=audio, reference_latents=bad))
        np.testing.assert_array_equal(resolved.reference_latents, fresh)
        assert "encoding the voice again" in caplog.text
    engine.shutdown()


def _speak(qtbot, window, text: str) -> None:
    window.script.editor.setPlainText(text)
    window.script.flush()
    with qtbot.waitSignal(window.session.runFinished, timeout=60_000):
        qtbot.keyClick(window.script.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert [s.status for s in window.session.segments] == ["done"] * len(window.session.segments)


def test_bad_cache_in_the_window_is_rebuilt_and_reencode_drops_it(qtbot, home, ui_model, tmp_path, caplog):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    window.voices.import_files([write_voice_file(tmp_path / "Anna.wav")])
    wait_for_imports(qtbot, window)
    _speak(qtbot, window, "One.")
    voice = VoiceLibrary().list()[0]
    model_id = window.model.model_id
    path = latents._file(VoiceLibrary(), voice, model_id, "reference")
    good = np.load(path)

    qtbot.mouseClick(window.voices.reencode_button, Qt.MouseButton.LeftButton)  # "Re-encode"
    assert not path.exists()
    _speak(qtbot, window, "One. Two.")
    np.testing.assert_allclose(np.load(path), good, atol=1e-6)  # encoded again and kept
    window.close()

    for damage in ("not-finite", "garbage"):
        DAMAGE[damage](path)
        again = open_window(qtbot, ui_model, dialogs)
        with caplog.at_level(logging.WARNING):
            _speak(qtbot, again, f"Three {damage}.")
        assert dialogs.errors == []
        np.testing.assert_allclose(np.load(path), good, atol=1e-6)  # rebuilt on disk
        again.close()
    assert "Discarding the cached latents" in caplog.text
