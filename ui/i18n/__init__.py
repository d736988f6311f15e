"""Translations: Qt Linguist ``.ts`` sources compiled to ``.qm`` with ``pyside6-lrelease``.

Regenerate after changing user-visible strings::

    pyside6-lupdate ui -extensions py -ts ui/i18n/voxdesk_zh_CN.ts   # then translate in Linguist
    pyside6-lrelease ui/i18n/voxdesk_zh_CN.ts -qm ui/i18n/voxdesk_zh_CN.qm
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QLibraryInfo, QLocale, QTranslator
from PySide6.QtWidgets import QApplication

HERE = Path(__file__).parent


def install_translators(app: QApplication, language: str) -> list[QTranslator]:
    """Load VoxDesk's and Qt's own translations for ``language`` ("en": none). Keep the result alive."""
    if language == "en":
        return []
    installed: list[QTranslator] = []
    ours = QTranslator(app)
    if ours.load(str(HERE / f"voxdesk_{language}.qm")):
        app.installTranslator(ours)
        installed.append(ours)
    qt = QTranslator(app)
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    if qt.load(QLocale(language), "qtbase", "_", qt_dir):
        app.installTranslator(qt)
        installed.append(qt)
    return installed


def remove_translators(app: QApplication, translators: list[QTranslator]) -> None:
    for translator in translators:
        app.removeTranslator(translator)
