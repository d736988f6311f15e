"""Screenshots of the voice panel with a LoRA attached: ``python -m ui.screenshot_lora [out_dir]``.

The real window on a throw-away ``VOXDESK_HOME`` and tiny model (``ui.screenshot``), two voices,
one with a random LoRA of the official format attached; saves ``lora21_voice_panel[_zh].png``
(the whole window) and ``lora21_lora_row[_zh].png`` (the voice panel alone).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ui.screenshot import SCRIPTS, open_window, render_languages, settle, speech_like


def render(language: str, out_dir: Path, model: Path, work: Path) -> list[Path]:
    from PySide6.QtWidgets import QApplication, QScrollArea

    from app.models.voxcpm.config import load_config
    from app.models.voxcpm.lora import LoRAConfig, write_random_lora
    from app.voices.library import VoiceLibrary
    from ui.i18n import install_translators, remove_translators
    from ui.main import create_app
    from ui.theme import apply_theme

    app = create_app()
    apply_theme(app, "light")
    translators = install_translators(app, language)
    text, transcript = SCRIPTS[language]
    library = VoiceLibrary()
    for name, seed in (("Ben", 2), ("Anna", 1)):
        voice = library.create_from_samples(speech_like(4.0, 16000, seed), 16000, name)
        library.set_transcript(voice, transcript if name == "Anna" else "")
    lora = write_random_lora(
        work / "anna-lora" / "step_0002000", load_config(model), LoRAConfig(r=32, alpha=32)
    )
    library.attach_lora("Anna", lora, model)
    window = open_window(model, 30_000)
    window.script.set_text(text)
    window.script.scriptChanged.emit()
    window.voices.refresh(select_id=library.find("Anna").id)
    settle()
    scroller = window.voices.parentWidget()
    while scroller is not None and not isinstance(scroller, QScrollArea):
        scroller = scroller.parentWidget()
    if scroller is not None:  # the panel scrolls in a short window: show the LoRA row
        scroller.ensureWidgetVisible(window.voices.lora_row)
    settle()
    suffix = "_zh" if language == "zh_CN" else ""
    shots = [out_dir / f"lora21_voice_panel{suffix}.png", out_dir / f"lora21_lora_row{suffix}.png"]
    window.grab().save(str(shots[0]))
    window.voices.grab().save(str(shots[1]))
    window.close()
    remove_translators(app, translators)
    QApplication.processEvents()
    return shots


def main(argv: list[str]) -> int:
    out_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs"
    return render_languages(render, out_dir, ("en", "zh_CN"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
