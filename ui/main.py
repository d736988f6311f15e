"""Start the window: ``run()`` is what ``voxdesk`` (no arguments) and ``python -m app`` call."""

from __future__ import annotations

import logging
import signal
import sys

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QApplication, QMessageBox, QSplashScreen

from app.errors import VoxDeskError
from app.paths import check_writable
from ui.errors import install_excepthook, setup_logging
from ui.i18n import install_translators
from ui.paths import app_icon
from ui.settings import Settings
from ui.theme import apply_theme

log = logging.getLogger(__name__)


class _ErrorRelay(QObject):
    """Shows the excepthook's message on the GUI thread, whichever thread failed."""

    message = Signal(str)

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.message.connect(self._show)

    def _show(self, text: str) -> None:
        QMessageBox.critical(QApplication.activeWindow(), "VoxDesk", text)


def create_app(argv: list[str] | None = None) -> QApplication:
    """The QApplication, created once (tests may already have one)."""
    app = QApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0], *(argv or [])])
    app.setApplicationName("VoxDesk")
    app.setOrganizationName("VoxDesk")
    app.setWindowIcon(app_icon())
    return app  # type: ignore[return-value]


def preload_torch(app: QApplication) -> None:
    """Import torch before the window exists, behind a splash screen.

    Loading torch's C extension holds the GIL for a few hundred milliseconds (seconds with CUDA
    on Windows); done later on the engine thread it would freeze a live window.
    """
    splash = QSplashScreen(app_icon().pixmap(128, 128))
    splash.showMessage("VoxDesk", Qt.AlignmentFlag.AlignBottom | Qt.AlignmentFlag.AlignHCenter)
    splash.show()
    app.processEvents()
    import torch  # noqa: F401

    splash.close()


def quit_on_signals(app: QApplication) -> None:
    """SIGTERM (a session logging out, ``kill``) and Ctrl+C in the terminal end the app as Quit
    does: the window closes (autosave, engine thread stopped). Python runs signal handlers only
    between bytecodes, so a timer wakes the interpreter while Qt waits for events."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: app.quit())
    wake = QTimer(app)
    wake.timeout.connect(lambda: None)
    wake.start(250)


def run(argv: list[str] | None = None) -> int:
    """Open the main window and run the event loop; returns the exit code."""
    setup_logging()
    app = create_app(argv)
    settings = Settings()
    apply_theme(app, settings.theme)
    install_translators(app, settings.language)  # parented to the app: they live as long as it

    try:
        check_writable()  # a read-only data folder: one plain message, not a traceback
    except VoxDeskError as err:
        log.error("Not starting: %s", err)
        QMessageBox.critical(None, "VoxDesk", str(err))
        return 1
    relay = _ErrorRelay(app)  # lives on the GUI thread: errors from any thread are shown there
    install_excepthook(relay.message.emit)
    preload_torch(app)
    from ui.main_window import MainWindow

    window = MainWindow(settings=settings)
    app.aboutToQuit.connect(window.close)  # however the app ends: autosave, stop the engine thread
    window.show()
    QTimer.singleShot(0, window.start)
    quit_on_signals(app)
    log.info("VoxDesk window opened")
    code = app.exec()
    log.info("VoxDesk window closed")
    return code
