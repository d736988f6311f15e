"""File › Open book… / Import book…: the Book view, its session and its dialogs, for the window.

The book last open is remembered in the settings with whether it was generating; the next start
opens it again and, once the model is loaded, continues where it stopped.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QDialog, QFileDialog

from app import paths
from ui.book_session import BookSession
from ui.views.book_dialogs import ExportBookDialog, ImportBookDialog
from ui.views.book_view import BookView

if TYPE_CHECKING:
    from ui.main_window import MainWindow

BOOK_PATTERNS = "(*.epub *.txt *.md *.markdown)"


def books_dir() -> Path:
    """Where imported books' projects go by default."""
    return paths.data_dir() / "books"


def free_folder(base: Path) -> Path:
    """``base``, or ``base (2)``, ``base (3)``… — the first that does not exist yet."""
    folder, n = base, 1
    while folder.exists():
        n += 1
        folder = base.with_name(f"{base.name} ({n})")
    return folder


class BookActions(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.session = BookSession(window.library.root, self)
        self.view = BookView(self.session, window)
        self.dialog: QDialog | None = None  # the one open, for tests
        self._resume_when_ready = False
        self._closing = False
        self.session.failed.connect(lambda message: self.w.dialogs.error(self.view, message))
        self.session.opened.connect(self._remember)
        self.session.opened.connect(self._maybe_resume)
        self.session.runningChanged.connect(self._remember)
        self.session.engineChanged.connect(self._maybe_resume)
        self.session.exported.connect(self._exported)
        self.view.export_button.clicked.connect(self.export)
        last, running = window.settings.last_book()
        if last is not None and (last / "book.json").is_file():
            self._resume_when_ready = running
            self.session.open(last)
            self.view.show()

    def attach(self, host, info) -> None:
        self.session.attach(host, info)

    # ---- menu ----------------------------------------------------------------------------
    def open_book(self) -> None:
        name = QFileDialog.getExistingDirectory(self.w, self.tr("Open a book project"), str(books_dir()))
        if name:
            self.session.open(Path(name))
            self._show()

    def import_book(self, source: Path | None = None) -> None:
        if source is None:
            title = self.tr("Import a book")
            name, _ = QFileDialog.getOpenFileName(
                self.w, title, str(Path.home()), f"{self.tr('Books')} {BOOK_PATTERNS}"
            )
            if not name:
                return
            source = Path(name)
        voices = [v.name for v in self.w.library.list()]
        dialog = ImportBookDialog(source, free_folder(books_dir() / source.stem), voices, self.view)
        dialog.accepted.connect(lambda: self._create(source, dialog))
        self._open(dialog)

    def _create(self, source: Path, dialog: ImportBookDialog) -> None:
        choice = dialog.choices()
        self.session.create(source, choice.folder, choice.voice, choice.seed)
        self._show()

    def export(self) -> None:
        project = self.session.project
        if project is None:
            return
        dialog = ExportBookDialog(project.root / "export", self.view)
        dialog.accepted.connect(lambda: self._export(dialog))
        self._open(dialog)

    def _export(self, dialog: ExportBookDialog) -> None:
        choice = dialog.choices()
        self.view.eta.setText(self.tr("Exporting…"))
        self.session.export(choice.folder, choice.formats, choice.target_lufs)

    def _exported(self, files: list[Path]) -> None:
        if files:
            self.view.eta.setText(self.tr("Exported to {0}").format(Path(files[0]).parent))

    # ---- helpers -------------------------------------------------------------------------
    def _open(self, dialog: QDialog) -> None:
        self.dialog = dialog
        dialog.finished.connect(lambda _r: setattr(self, "dialog", None))
        dialog.open()

    def _show(self) -> None:
        self.view.show()
        self.view.raise_()
        self.view.activateWindow()

    def _remember(self, *_args) -> None:
        project = self.session.project
        if self._closing:
            return
        self.w.settings.set_last_book(project.root if project is not None else None, self.session.running)

    def _maybe_resume(self, *_args) -> None:
        """Continue the book that was generating when the app closed, once both it and the model
        are there."""
        if self._resume_when_ready and self.session.can_generate:
            self._resume_when_ready = False
            self.session.start()

    def shutdown(self) -> None:
        """The app is closing: stop generating, but remember that it was, to continue next time."""
        self._closing = True
        running = self.session.running
        self.session.shutdown()
        if self.session.project is not None:
            self.w.settings.set_last_book(self.session.project.root, running)
