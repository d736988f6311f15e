"""The window with a CosyVoice model (issue 18 §5, §7): the controls the loaded family has (an
instruction, the script's speed; no guidance, steps or voice design), a script spoken with an
instruction and a library voice, a switch between families, and a broken CosyVoice folder that
still lets the window open with one line naming the file."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt
from tiny_cosyvoice import tiny_cv3  # noqa: F401
from ui_fixtures import (  # noqa: F401
    ScriptedDialogs,
    home,
    open_window,
    ui_model,
    wait_for_imports,
    write_voice_file,
)

from app.audio.player import CaptureSink
from app.voices import latents


def _shown(window) -> dict[str, bool]:
    form = window.script.settings
    return {name: getattr(form, name).isVisible() for name in ("cfg", "steps", "style_text", "instruction")}


def _wait_for(qtbot, window, architecture: str) -> None:
    def loaded() -> bool:
        return window.model.ready and window.model.info.architecture == architecture

    qtbot.waitUntil(loaded, timeout=60_000)


def test_cosyvoice_shows_its_own_controls_and_speaks_with_an_instruction(qtbot, home, tiny_cv3, tmp_path):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, tiny_cv3, dialogs)
    assert window.model.info.architecture == "cosyvoice3" and window.model.name == "Fun-CosyVoice3-0.5B"
    assert _shown(window) == {"cfg": False, "steps": False, "style_text": False, "instruction": True}
    form = window.script.settings
    assert form.instruction.count() > 20 and form.instruction.itemText(14) == "请用四川话表达。"

    window.voices.import_files([write_voice_file(tmp_path / "Anna.wav")])
    wait_for_imports(qtbot, window)
    (voice,) = window.library.list()
    form.instruction.setEditText("请非常开心地说一句话。")
    assert window.project.settings.instruction == "请非常开心地说一句话。"
    window.script.editor.setPlainText("[Anna] Hello there, how are you?")
    window.script.flush()
    with qtbot.waitSignal(window.session.runFinished, timeout=120_000):
        qtbot.keyClick(window.script.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    (segment,) = window.session.segments
    assert segment.status == "done" and segment.job.instruction == "请非常开心地说一句话。"
    assert segment.job.text == "Hello there, how are you?"  # no voice design put before the text
    cached = latents.load_named(window.library, voice, window.model.model_id, latents.COSYVOICE)
    assert sorted(cached) == sorted(latents.COSYVOICE)  # the voice's features kept for this model
    assert dialogs.errors == []


def test_switching_family_swaps_the_controls_and_keeps_the_settings(qtbot, home, ui_model, tiny_cv3):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, ui_model, dialogs)
    assert _shown(window) == {"cfg": True, "steps": True, "style_text": True, "instruction": False}
    assert window.voices.lora_row.isVisible()
    window.script.settings.style_text.setText("a calm narrator")
    window.actions._use_model(tiny_cv3)
    _wait_for(qtbot, window, "cosyvoice3")
    assert window.client.host._engine.info.name == "cosyvoice"  # one engine: VoxCPM's was unloaded
    assert _shown(window) == {"cfg": False, "steps": False, "style_text": False, "instruction": True}
    assert not window.voices.lora_row.isVisible()  # a voice's LoRA is VoxCPM's
    assert window.project.settings.voice_design == "a calm narrator"  # hidden, not discarded
    window.actions._use_model(ui_model)
    _wait_for(qtbot, window, "voxcpm2")
    assert _shown(window)["style_text"] and window.script.settings.style_text.text() == "a calm narrator"
    assert dialogs.questions == [] and dialogs.errors == []  # nothing was speaking: nothing to ask


@pytest.mark.parametrize(("how", "name"), [("missing", "llm.pt"), ("not-onnx", "speech_tokenizer_v3.onnx")])
def test_a_broken_cosyvoice_folder_still_opens_the_window(qtbot, home, tiny_cv3, tmp_path, how, name):  # noqa: F811
    folder = shutil.copytree(tiny_cv3, tmp_path / "model")
    if how == "missing":
        (folder / name).unlink()
    else:
        (folder / name).write_bytes(b"not an onnx graph" * 50)
    from ui.main_window import MainWindow
    from ui.settings import Settings

    settings, dialogs = Settings(), ScriptedDialogs()
    settings.model_dir = folder  # configured from an earlier run
    window = MainWindow(settings=settings, dialogs=dialogs, sink=CaptureSink(buffer_seconds=10))
    qtbot.addWidget(window)
    window.show()
    window.start()
    qtbot.waitUntil(lambda: window.model.state == "failed", timeout=60_000)
    (message,) = dialogs.errors
    assert name in message and "\n" not in message and "Traceback" not in message
    assert window.isVisible() and _shown(window)["cfg"]  # the window works on, VoxCPM's fields as before
