"""Settings › Local API: the voice OpenAI's stock names (alloy, echo, …) speak as, on the window's
own server; "The model's own voice" makes them speak as ``default``."""

from __future__ import annotations

import socket
import threading

import httpx
from tiny import tone
from ui_fixtures import ScriptedDialogs, home, open_window, ui_model  # noqa: F401

from ui.settings import Settings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_stock_voice_names_speak_as_the_chosen_voice(qtbot, home, ui_model):  # noqa: F811
    settings = Settings()
    settings.api_enabled, settings.api_port, settings.api_default_voice = True, _free_port(), "Anna"
    window = open_window(qtbot, ui_model, ScriptedDialogs())
    window.library.create_from_samples(tone(9600), 16000, "Anna", "hello")
    qtbot.waitUntil(lambda: window.api.state.host is not None, timeout=10_000)
    assert window.api.state.config.default_voice == "Anna"

    def speak(voice: str) -> bytes:
        """One request from another thread, the GUI thread spinning meanwhile (as a user's program)."""
        body = {"model": "tts-1", "input": "Hi there.", "voice": voice, "response_format": "pcm", "seed": 1,
                "min_new_tokens": 4, "max_new_tokens": 4}  # fmt: skip
        replies: list = []
        worker = threading.Thread(
            target=lambda: replies.append(httpx.post(window.api.url + "/audio/speech", json=body, timeout=60))
        )
        worker.start()
        qtbot.waitUntil(lambda: not worker.is_alive(), timeout=90_000)
        assert replies and replies[0].status_code == 200, replies
        return replies[0].content

    assert speak("alloy") == speak("Anna") != speak("default")

    from ui.views.settings_dialog import SettingsDialog

    dialog = SettingsDialog(window.settings, window.dialogs, window, api=window.api)
    box = dialog.local_api.default_voice
    assert box.currentData() == "Anna" and [box.itemData(i) for i in range(box.count())] == ["", "Anna"]
    box.setCurrentIndex(0)  # The model's own voice
    dialog.accept()
    s = window.settings
    before = (s.language, (s.device, s.cpu_precision), s.model_dir)
    window.actions._settings_changed(before, window.engine_source())
    assert window.settings.api_default_voice == "" and window.api.state.config.default_voice is None
    assert speak("alloy") == speak("default")
    window.close()
