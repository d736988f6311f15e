"""Screenshots of the window with Fun-CosyVoice3 loaded: ``python -m ui.screenshot_cosyvoice [out_dir]``.

The real window on a throw-away ``VOXDESK_HOME`` with a tiny random CosyVoice3 folder (the model
code's own writer, app/models/cosyvoice/checkpoint.py), two voices, an instruction and a short
script spoken; saves ``cosy18_window[_zh].png`` (the window: the instruction field, no guidance,
steps or voice design) and ``cosy18_models[_zh].png`` (the model manager listing CosyVoice3 and
CosyVoice2 beside the VoxCPM models).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ui.screenshot import SCRIPTS, open_window, render_languages, settle, speech_like, until

INSTRUCTIONS = {"en": "Please say a sentence in a very soft voice.", "zh_CN": "请非常开心地说一句话。"}


def render(language: str, out_dir: Path, _voxcpm: Path, _work: Path) -> list[Path]:
    from PySide6.QtWidgets import QApplication

    from app.models.cosyvoice.checkpoint import write_checkpoint
    from app.paths import models_dir
    from app.voices.library import VoiceLibrary
    from ui.i18n import install_translators, remove_translators
    from ui.main import create_app
    from ui.theme import apply_theme
    from ui.views.model_manager import ModelManager

    model = write_checkpoint(models_dir() / "Fun-CosyVoice3-0.5B", "cosyvoice3-tiny")  # as if downloaded
    app = create_app()
    apply_theme(app, "light")
    translators = install_translators(app, language)
    text, transcript = SCRIPTS[language]
    library = VoiceLibrary()
    for name, seed in (("Ben", 2), ("Anna", 1)):
        voice = library.create_from_samples(speech_like(4.0, 16000, seed), 16000, name)
        library.set_transcript(voice, transcript if name == "Anna" else "")
    window = open_window(model)
    window.script.voice.setCurrentIndex(window.script.voice.findData("Anna"))
    window.script.settings.instruction.setEditText(INSTRUCTIONS[language])
    window.script.set_text(text)
    window.script.scriptChanged.emit()
    window.voices.refresh(select_id=library.find("Anna").id)
    settle()
    window.speak()
    until(lambda: not window.session.busy(), 180_000)
    window.script.table.selectRow(0)
    settle()
    suffix = "_zh" if language == "zh_CN" else ""
    shots = [out_dir / f"cosy18_window{suffix}.png", out_dir / f"cosy18_models{suffix}.png"]
    window.grab().save(str(shots[0]))
    loaded = (window.model.folder, window.model.name)
    manager = ModelManager(window.settings, window.dialogs, parent=window, loaded=loaded)
    manager.models.setCurrentRow(3)  # Fun-CosyVoice3
    manager.show()
    settle()
    manager.grab().save(str(shots[1]))
    manager.close()
    window.close()
    remove_translators(app, translators)
    QApplication.processEvents()
    return shots


def main(argv: list[str]) -> int:
    out_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs"
    return render_languages(render, out_dir, ("en", "zh_CN"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
