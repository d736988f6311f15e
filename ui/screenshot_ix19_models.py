"""Screenshots of IndexTTS-2.5 in the model manager and of its licence dialog:
``python -m ui.screenshot_ix19_models LICENSE_DIR [out_dir]``.

``LICENSE_DIR`` holds the agreement's files (``LICENSE``, ``LICENSE_ZH.txt``: an official IndexTTS
checkout, or a downloaded model folder); they are read at run time and never copied into the
repository. On a throw-away ``VOXDESK_HOME`` the real manager selects IndexTTS-2.5 and opens the
dialog exactly as it does with texts it fetched (ui/views/license_gate.py); saves
``ix19_manager[_zh].png`` and ``ix19_license[_zh].png``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ui.screenshot import _ThrowAway, settle, until


def render(language: str, out_dir: Path, license_dir: Path) -> list[Path]:
    from PySide6.QtWidgets import QApplication

    from app.models import download as dl
    from app.models import licenses
    from ui.i18n import install_translators, remove_translators
    from ui.main import create_app
    from ui.settings import Settings
    from ui.theme import apply_theme
    from ui.views.model_manager import ModelManager

    app = create_app()
    apply_theme(app, "light")
    translators = install_translators(app, language)
    settings = Settings()
    settings.language = language
    manager = ModelManager(settings, _ThrowAway())
    model = next(m for m in dl.KNOWN_MODELS if m.key == "IndexTTS-2.5")
    manager.models.setCurrentRow(dl.KNOWN_MODELS.index(model))
    manager.resize(760, manager.sizeHint().height())
    manager.show()
    settle()
    suffix = "_zh" if language == "zh_CN" else ""
    shots = [out_dir / f"ix19_manager{suffix}.png", out_dir / f"ix19_license{suffix}.png"]
    manager.grab().save(str(shots[0]))
    texts = licenses.read_texts(license_dir, model.license)
    if not texts:
        raise SystemExit(f"{license_dir} has no LICENSE file")
    manager.gate.check(model.key, model.key, model.license, None, texts=texts, always=True)
    until(lambda: manager.license_dialog is not None and manager.license_dialog.isVisible(), 10_000)
    dialog = manager.license_dialog
    settle()
    dialog.grab().save(str(shots[1]))
    dialog.reject()
    manager.close()
    remove_translators(app, translators)
    QApplication.processEvents()
    return shots


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.splitlines()[1])
        return 2
    license_dir = Path(argv[0])
    out_dir = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent / "docs"
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for language in ("en", "zh_CN"):
            os.environ["VOXDESK_HOME"] = str(Path(tmp) / language)
            for path in render(language, out_dir, license_dir):
                print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
