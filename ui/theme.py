"""Light and dark palettes on the Fusion style (the same look on Windows and Linux)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

_DARK = {
    QPalette.ColorRole.Window: "#2b2d31",
    QPalette.ColorRole.WindowText: "#e6e6e6",
    QPalette.ColorRole.Base: "#1f2023",
    QPalette.ColorRole.AlternateBase: "#27292d",
    QPalette.ColorRole.Text: "#e6e6e6",
    QPalette.ColorRole.Button: "#35373c",
    QPalette.ColorRole.ButtonText: "#e6e6e6",
    QPalette.ColorRole.Highlight: "#4f8cf7",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.ToolTipBase: "#35373c",
    QPalette.ColorRole.ToolTipText: "#e6e6e6",
    QPalette.ColorRole.PlaceholderText: "#8a8d93",
    QPalette.ColorRole.Link: "#7aa7ff",
}

_LIGHT = {
    QPalette.ColorRole.Window: "#f3f4f6",
    QPalette.ColorRole.Base: "#ffffff",
    QPalette.ColorRole.AlternateBase: "#f7f8fa",
    QPalette.ColorRole.Highlight: "#2f6fde",
    QPalette.ColorRole.HighlightedText: "#ffffff",
}

STYLE_SHEET = """
QPushButton#speakButton { font-weight: 600; padding: 4px 18px; }
QGroupBox { font-weight: 600; margin-top: 10px; }
QGroupBox::title { subcontrol-origin: margin; left: 8px; padding: 0 4px; }
QLabel#hint { color: palette(placeholder-text); }
"""


def apply_theme(app: QApplication, theme: str) -> None:
    """Fusion style with the chosen palette."""
    app.setStyle("Fusion")
    palette = app.style().standardPalette()
    for role, color in (_DARK if theme == "dark" else _LIGHT).items():
        palette.setColor(role, QColor(color))
    if theme == "dark":
        palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#777a80"))
        palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#777a80"))
    app.setPalette(palette)
    app.setStyleSheet(STYLE_SHEET)
