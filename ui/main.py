"""Start the window: ``run()`` is what ``voxdesk`` (no arguments) and ``python -m app`` call."""

from __future__ import annotations

import logging
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from ui.errors import install_excepthook, setup_logging
from ui.i18n import install_translators
from ui.paths import app_icon
from ui.settings import Settings
from ui.theme import apply_theme

log = logging.getLogger(__name__)


def create_app(argv: list[str] | None = None) -> QApplication:
    """The QApplication, created once (tests may already have one)."""
    app = QApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0], *(argv or [])])
    app.setApplicationName("VoxDesk")
    app.setOrganizationName("VoxDesk")
    app.setWindowIcon(app_icon())
    return app  # type: ignore[return-value]


def run(argv: list[str] | None = None) -> int:
    """Open the main window and run the event loop; returns the exit code."""
    setup_logging()
    app = create_app(argv)
    settings = Settings()
    apply_theme(app, settings.theme)
    translators = install_translators(app, settings.language)

    def show_error(message: str) -> None:
        QMessageBox.critical(app.activeWindow(), "VoxDesk", message)

    install_excepthook(show_error)
    from ui.main_window import MainWindow

    window = MainWindow(settings=settings)
    window.show()
    QTimer.singleShot(0, window.start)
    log.info("VoxDesk window opened")
    code = app.exec()
    del translators
    return code
