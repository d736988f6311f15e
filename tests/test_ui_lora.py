"""The voice panel's LoRA row: attach (copied and checked off the GUI thread), badge, remove."""

from __future__ import annotations

from PySide6.QtCore import Qt
from tiny import tone
from ui_fixtures import ScriptedDialogs

from app.models.voxcpm.config import load_config
from app.models.voxcpm.lora import LoRAConfig, write_random_lora
from app.voices.library import VoiceLibrary
from ui.views.voice_panel import VoicePanel


def test_attach_badge_and_remove(qtbot, tiny_v2, tmp_path):
    library = VoiceLibrary(tmp_path / "voices")
    voice = library.create_from_samples(tone(16000), 16000, "Anna")
    lora = write_random_lora(tmp_path / "step_0000200", load_config(tiny_v2), LoRAConfig(r=4), seed=1)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "lora_weights.safetensors").write_bytes(b"\x00" * 16)
    dialogs = ScriptedDialogs()
    panel = VoicePanel(library, dialogs)
    qtbot.addWidget(panel)
    row = panel.lora_row
    assert not row.remove_button.isEnabled() and "No LoRA" in row.badge.text()

    dialogs.folders = [lora]
    qtbot.mouseClick(row.attach_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: row.worker is None, timeout=20000)
    assert library.get(voice.id).lora == "step_0000200" and dialogs.errors == []
    assert row.badge.text() == "LoRA: step_0000200" and row.remove_button.isEnabled()
    assert panel.list.item(0).text() == "Anna  [LoRA]" and panel.selected().id == voice.id

    dialogs.folders = [broken]  # refused with one line; the attached LoRA stays
    qtbot.mouseClick(row.attach_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: row.worker is None, timeout=20000)
    assert len(dialogs.errors) == 1 and "lora_weights.safetensors" in dialogs.errors[0]
    assert "\n" not in dialogs.errors[0] and library.get(voice.id).lora == "step_0000200"

    dialogs.answers = [False, True]  # the first question is declined: nothing removed
    qtbot.mouseClick(row.remove_button, Qt.MouseButton.LeftButton)
    assert library.get(voice.id).lora == "step_0000200"
    qtbot.mouseClick(row.remove_button, Qt.MouseButton.LeftButton)
    assert library.get(voice.id).lora == "" and library.lora_folder(library.get(voice.id)) is None
    assert panel.list.item(0).text() == "Anna" and "No LoRA" in row.badge.text()
    assert len(dialogs.questions) == 2 and "step_0000200" in dialogs.questions[0]
