"""Files that ship with the UI (icon, translations), found both from source and in a frozen bundle."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtGui import QIcon


def resources_dir() -> Path:
    """``resources/`` next to the packages (source tree), or inside the PyInstaller bundle."""
    bundle = getattr(sys, "_MEIPASS", None)
    root = Path(bundle) if bundle else Path(__file__).resolve().parent.parent
    return root / "resources"


def app_icon() -> QIcon:
    """The app icon from its PNG renderings (PNG needs no image plugin, unlike SVG)."""
    icon = QIcon()
    for path in sorted(resources_dir().glob("voxdesk*.png")):
        icon.addFile(str(path))
    return icon
