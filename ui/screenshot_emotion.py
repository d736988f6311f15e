"""Screenshots of emotion tags in the script editor: ``python -m ui.screenshot_emotion [out_dir]``.

The real window on a throw-away ``VOXDESK_HOME`` with a tiny random IndexTTS-2.5 folder (the model
code's own writer, app/models/indextts/checkpoint.py) and two voices, showing a script whose lines
carry emotion tags (one of them unreadable, one naming a voice that does not exist); saves
``emotion19_window[_zh].png``. Then the same script with the tiny VoxCPM2 loaded, which ignores
emotions: ``emotion19_ignored[_zh].png`` (the script editor).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ui.screenshot import add_voices, open_window, render_languages, settle

SCRIPTS = {
    "en": (
        "[Anna|happy 0.6] What a lovely morning it is!\n"
        "[Ben|@Anna] And I feel just like she does.\n"
        '[Anna|"a quiet, frightened whisper"] Did you hear that?\n'
        "[Ben|furious] Who is there?\n"
        "[|sad 0.5, afraid 0.3] Nobody answered.\n"
        "[Ben|@Carol] Carol?"
    ),
    "zh_CN": (
        "[Anna|高兴 0.6] 今天早上真美好！\n"
        "[Ben|@Anna] 我的心情和她一样。\n"
        "[Anna|“害怕地低声耳语”] 你听到了吗？\n"
        "[Ben|暴怒] 谁在那里？\n"
        "[|悲伤 0.5，恐惧 0.3] 没有人回答。\n"
        "[Ben|@Carol] Carol？"
    ),
}


def _window(model: Path, language: str, settings_dir: Path):  # noqa: ANN202
    window = open_window(model, 120_000)
    window.script.voice.setCurrentIndex(window.script.voice.findData("Anna"))
    window.script.set_text(SCRIPTS[language])
    window.script.scriptChanged.emit()
    settle()
    return window


def render(language: str, out_dir: Path, voxcpm: Path, work: Path) -> list[Path]:
    from PySide6.QtWidgets import QApplication

    from app.models.indextts.checkpoint import write_folder
    from app.paths import models_dir
    from ui.i18n import install_translators, remove_translators
    from ui.main import create_app
    from ui.theme import apply_theme

    model = write_folder(models_dir() / "IndexTTS-2.5")  # as if downloaded
    app = create_app()
    apply_theme(app, "light")
    translators = install_translators(app, language)
    add_voices()
    suffix = "_zh" if language == "zh_CN" else ""
    shots = [out_dir / f"emotion19_window{suffix}.png", out_dir / f"emotion19_ignored{suffix}.png"]
    window = _window(model, language, work)
    window.grab().save(str(shots[0]))
    window.close()
    window = _window(voxcpm, language, work)
    window.script.grab().save(str(shots[1]))
    window.close()
    remove_translators(app, translators)
    QApplication.processEvents()
    return shots


def main(argv: list[str]) -> int:
    out_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs"
    return render_languages(render, out_dir, ("en", "zh_CN"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
