"""Screenshots of the window with IndexTTS-2.5 loaded: ``python -m ui.screenshot_indextts [out_dir]``.

The real window on a throw-away ``VOXDESK_HOME`` with a tiny random IndexTTS-2.5 folder (the model
code's own writer, app/models/indextts/checkpoint.py; written once and used for both languages),
two voices, the script's emotion set on the eight sliders, a line with its own ``[Anna|angry]``
and the script spoken; saves ``ix19_window[_zh].png`` (the emotion and language controls, the
rate whose tooltip names the duration factor, no guidance, steps or voice design).
"""

from __future__ import annotations

import sys
import tempfile
from functools import partial
from pathlib import Path

from ui.screenshot import add_voices, open_window, render_languages, settle, until

SCRIPTS = {
    "en": (
        "[Anna|angry] I told you three times already!\n"
        "Then the room went quiet, and nobody said a word.\n"
        "[Ben] Well, let's try it once more."
    ),
    "zh_CN": "[Anna|愤怒] 我已经跟你说了三遍了！\n然后屋里安静下来，谁也没说话。\n[Ben] 好吧，我们再试一次。",
}
SLIDERS = {"happy": 35, "surprised": 25, "calm": 20}  # the script's emotion, in hundredths


def render(language: str, out_dir: Path, _voxcpm: Path, _work: Path, model: Path) -> list[Path]:
    from PySide6.QtWidgets import QApplication

    from ui.i18n import install_translators, remove_translators
    from ui.main import create_app
    from ui.theme import apply_theme

    app = create_app()
    apply_theme(app, "light")
    translators = install_translators(app, language)
    voices = add_voices()
    window = open_window(model, 120_000)
    window.script.voice.setCurrentIndex(window.script.voice.findData("Anna"))
    emotion = window.script.settings.emotion
    emotion.source.setCurrentIndex(emotion.source.findData("vector"))
    for name, value in SLIDERS.items():
        emotion.sliders[name].setValue(value)
    emotion.weight.setValue(80)
    window.script.set_text(SCRIPTS[language])
    window.script.scriptChanged.emit()
    window.voices.refresh(select_id=voices["Anna"].id)
    settle()
    window.speak()
    until(lambda: not window.session.busy(), 300_000)
    window.script.table.selectRow(0)
    settle()
    shot = out_dir / f"ix19_window{'_zh' if language == 'zh_CN' else ''}.png"
    window.grab().save(str(shot))
    window.close()
    remove_translators(app, translators)
    QApplication.processEvents()
    return [shot]


def main(argv: list[str]) -> int:
    from app.models.indextts.checkpoint import write_folder

    out_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs"
    with tempfile.TemporaryDirectory() as tmp:
        model = write_folder(Path(tmp) / "IndexTTS-2.5")  # (a while: once for both languages)
        return render_languages(partial(render, model=model), out_dir, ("en", "zh_CN"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
