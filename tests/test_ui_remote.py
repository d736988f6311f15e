"""The window on a speech server (engine = a server) and the window's Local API, end to end."""

from __future__ import annotations

import socket

import httpx
import numpy as np
import pytest
from PySide6.QtCore import Qt
from server_fixtures import start_live
from ui_fixtures import ScriptedDialogs, home, open_window, ui_model, wait_for_imports, write_voice_file  # noqa: F401

from ui.settings import Settings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _speak(qtbot, window, text: str) -> None:
    window.script.editor.setPlainText(text)
    window.script.flush()
    with qtbot.waitSignal(window.session.runFinished, timeout=60_000):
        qtbot.keyClick(window.script.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)


@pytest.fixture
def served(ui_model, tmp_path):  # noqa: F811
    live = start_live(ui_model, tmp_path / "server-voices")
    yield live
    live.server.stop()
    live.host.close()


def test_window_speaks_through_a_speech_server(qtbot, home, ui_model, served, tmp_path):  # noqa: F811
    settings = Settings()
    settings.backend, settings.server_url = "server", served.url
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    assert window.model.info.model_id.startswith("remote-") and "Server" in window.model.device
    dialogs.files.append(write_voice_file(tmp_path / "Anna.wav", 220))
    qtbot.mouseClick(window.voices.import_button, Qt.MouseButton.LeftButton)
    wait_for_imports(qtbot, window)
    window.script.voice.setCurrentIndex(window.script.voice.findData("Anna"))
    _speak(qtbot, window, "Hello there. How are you today?")
    assert dialogs.errors == []
    segments = window.session.segments
    assert [s.status for s in segments] == ["done", "done"] and all(len(s.samples()) for s in segments)
    health = served.health()
    assert health["engine"]["finished"] == 2 and health["requests_total"] == 2  # made by the server

    # the server goes away: the next segment fails with a plain line, the done ones stay
    served.server.stop()
    done = [s.samples().copy() for s in segments]
    _speak(qtbot, window, "Hello there. How are you today? And a third one.")
    segments = window.session.segments
    assert [s.status for s in segments[:2]] == ["done", "done"]
    assert all(np.array_equal(a, s.samples()) for a, s in zip(done, segments[:2], strict=True))
    assert segments[2].status == "failed" and "Cannot reach the speech server" in segments[2].message
    window.close()


def test_local_api_serves_the_windows_own_engine(qtbot, home, ui_model):  # noqa: F811
    port = _free_port()
    settings = Settings()
    settings.api_enabled, settings.api_port = True, port
    window = open_window(qtbot, ui_model, ScriptedDialogs())
    assert window.api.running and window.api.url == f"http://127.0.0.1:{port}/v1"
    qtbot.waitUntil(lambda: window.api.state.host is not None, timeout=10_000)
    # one engine: the API's host drives the window's engine object, no second model
    assert window.api.state.host.engine is window.client.host._engine
    body = {"model": "tts-1", "input": "Hi there.", "voice": "default", "response_format": "wav", "seed": 1,
            "min_new_tokens": 5, "max_new_tokens": 5}  # fmt: skip
    response = httpx.post(window.api.url + "/audio/speech", json=body, timeout=30)
    assert response.status_code == 200 and response.content[:4] == b"RIFF"
    qtbot.waitUntil(lambda: window.api.requests == 1, timeout=5_000)
    # the window keeps speaking while the API serves
    _speak(qtbot, window, "Hello there.")
    assert [s.status for s in window.session.segments] == ["done"]
    # Settings: the Local API box shows the live address and counter; switching it off stops it
    from ui.views.settings_dialog import SettingsDialog

    dialog = SettingsDialog(window.settings, window.dialogs, window, api=window.api)
    assert dialog.local_api.url.text() == window.api.url and dialog.local_api.counter.text() == "1"
    dialog.local_api.enabled.setChecked(False)
    dialog.accept()
    window.actions._settings_changed((window.settings.language, window.settings.device,
                                      window.settings.model_dir), window.engine_source())  # fmt: skip
    assert not window.api.running
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"http://127.0.0.1:{port}/v1/audio/speech", json=body, timeout=5)
    window.close()


def test_a_taken_port_is_one_message(qtbot, home, ui_model):  # noqa: F811
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        settings = Settings()
        settings.api_enabled, settings.api_port = True, taken.getsockname()[1]
        dialogs = ScriptedDialogs()
        window = open_window(qtbot, ui_model, dialogs)
        assert not window.api.running
        assert len(dialogs.errors) == 1 and "already in use" in dialogs.errors[0]
        window.close()
