"""The Book view on the window's own engine: import, Start, Pause, Resume, per-chapter progress,
and a book that was generating when the app closed continues when it opens again."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressBar
from ui_fixtures import GuiThreadWatcher, ScriptedDialogs, home, open_window, ui_model  # noqa: F401

from app.longform.book import Book, Chapter
from app.longform.project import BookProject, BookSettings, read_log

BOOK = Book(
    "Harbour Lights",
    tuple(
        Chapter(f"Chapter {c}", f"The lamp was lit on night {c}. The sea was calm.\nMorning came.")
        for c in range(1, 4)
    ),  # fmt: skip
    author="Ada Writer",
)
PNG = (  # a 1x1 PNG
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde"
    b"\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82"
)


def _bars(view) -> list[tuple[int, int]]:
    out = []
    for row in range(view.table.rowCount()):
        bar = view.table.cellWidget(row, 2)
        assert isinstance(bar, QProgressBar)
        out.append((bar.value(), bar.maximum()))
    return out


def test_import_start_pause_resume_and_finish(qtbot, home, ui_model, tmp_path):  # noqa: F811
    source = tmp_path / "harbour.md"
    text = "# Harbour Lights\n\n## One\n\nThe lamp was lit. The sea was calm.\n\n## Two\n\nMorning came."
    source.write_text(text, encoding="utf-8")
    window = open_window(qtbot, ui_model, ScriptedDialogs())
    books = window.books
    books.import_book(source)
    dialog = books.dialog
    assert dialog is not None and dialog.seed.value() >= 0
    dialog.seed.setValue(11)
    dialog.accept()
    view = books.view
    qtbot.waitUntil(lambda: view.table.rowCount() == 2, timeout=30_000)
    assert view.title.text() == "Harbour Lights" and view.start_button.text() == "Start"
    assert [view.table.item(r, 1).text() for r in range(2)] == ["Pending", "Pending"]
    session = books.session
    assert session.project.settings.seed == 11 and session.project.root.parent.name == "books"

    watcher = GuiThreadWatcher()

    def pause_after_the_first_segment(p) -> None:
        if p.done_chars and p.running:
            session.pause()

    # on the book's thread (pause() only sets an event): queued to the GUI thread, a late pause
    # could land after the last of the three segments, which finish within ms of each other
    session.progressed.connect(pause_after_the_first_segment, Qt.ConnectionType.DirectConnection)
    qtbot.mouseClick(view.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.start_button.isEnabled() and view.progress.done_chars > 0, timeout=60_000)
    session.progressed.disconnect(pause_after_the_first_segment)
    assert view.progress.fraction < 1.0 and view.start_button.text() == "Resume"
    assert view.eta.text() == "Paused" and view.start_button.isEnabled()

    qtbot.mouseClick(view.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not view.progress.running and view.progress.fraction == 1.0, timeout=60_000)
    assert watcher.stop() == []  # the GUI thread never ran the model
    assert [view.table.item(r, 1).text() for r in range(2)] == ["Done", "Done"]
    assert _bars(view) == [(2, 2), (1, 1)] and view.eta.text() == "Finished"
    assert view.export_button.isEnabled() and not view.start_button.isEnabled()
    log = [(c, s) for c, s, _ in read_log(session.project.root)]
    assert len(log) == 3 == len(set(log))


def test_a_book_generating_at_close_continues_at_the_next_start(qtbot, home, ui_model, tmp_path):  # noqa: F811
    folder = tmp_path / "harbour"
    project = BookProject.create(folder, Book(BOOK.title, BOOK.chapters, BOOK.author, cover=PNG,
                                              cover_mime="image/png"), BookSettings(seed=3))  # fmt: skip
    from ui.settings import Settings

    Settings().set_last_book(folder, running=True)
    window = open_window(qtbot, ui_model, ScriptedDialogs())
    view = window.books.view
    assert view.isVisible()
    qtbot.waitUntil(lambda: view.progress is not None and view.progress.fraction == 1.0, timeout=60_000)
    assert view.author.text() == "Ada Writer" and view.cover.pixmap() is not None
    assert not view.cover.pixmap().isNull()
    assert BookProject.open(folder).is_done() and project.title == view.title.text()
    window.close()
    assert Settings().last_book() == (Path(folder), False)


def test_export_writes_the_audiobook_off_the_gui_thread(qtbot, home, ui_model, tmp_path):  # noqa: F811
    folder = tmp_path / "harbour"
    book = Book(BOOK.title, BOOK.chapters[:2], BOOK.author, cover=PNG, cover_mime="image/png")
    BookProject.create(folder, book, BookSettings(seed=3))
    from ui.settings import Settings

    Settings().set_last_book(folder, running=True)
    window = open_window(qtbot, ui_model, ScriptedDialogs())
    books = window.books
    qtbot.waitUntil(lambda: books.view.export_button.isEnabled(), timeout=60_000)
    qtbot.mouseClick(books.view.export_button, Qt.MouseButton.LeftButton)
    dialog = books.dialog
    dialog.folder.setText(str(tmp_path / "export"))
    dialog.mp3.setChecked(False)
    assert dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()
    dialog.m4b.setChecked(False)
    assert not dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()  # nothing to write
    dialog.m4b.setChecked(True)
    with qtbot.waitSignal(books.session.exported, timeout=60_000) as exported:
        dialog.accept()
    assert [p.suffix for p in exported.args[0]] == [".m4b"] and exported.args[0][0].is_file()
    assert books.view.eta.text() == f"Exported to {tmp_path / 'export'}"
