"""Screenshots of the Book view: ``python -m ui.screenshot_book [out_dir]`` writes
``book20_view_en.png`` / ``book20_view_zh_CN.png`` (a book generating, its ETA measured) and
``book20_import_en.png`` / ``…_zh_CN.png`` (the import question).

A book project with a drawn cover is made in a throw-away ``VOXDESK_HOME``; the window opens it
as it would after a restart mid-book (it continues by itself once the tiny model is loaded), and
the view is grabbed while it generates.
"""

from __future__ import annotations

import sys
from pathlib import Path

BOOKS = {
    "en": ("The Lighthouse Keeper", "Ada Writer", [
        ("Chapter 1: The Lamp", "The lamp was lit at dusk. It burned until the morning came."),
        ("Chapter 2: The Storm", "Wind rose from the west. The keeper climbed the stairs again."),
        ("Chapter 3: The Ship", "A light answered from the sea. Someone out there was waiting."),
        ("Chapter 4: The Harbour", "By noon the ship was safe. The town came down to the shore."),
        ("Chapter 5: The Letter", "A letter arrived in spring. It had come a very long way."),
        ("Chapter 6: Home", "The keeper read it twice. Then the lamp was lit once more."),
    ]),
    "zh_CN": ("守灯人", "林文", [
        ("第一章 灯", "黄昏时灯被点亮了。它一直亮到天明。"),
        ("第二章 风暴", "西边起了风。守灯人又爬上了楼梯。"),
        ("第三章 船", "海上有一盏灯回应。有人在那里等待。"),
        ("第四章 港口", "到了中午船已安全。全镇的人都来到岸边。"),
        ("第五章 来信", "春天来了一封信。它走了很远的路。"),
        ("第六章 回家", "守灯人读了两遍。然后灯又亮了起来。"),
    ]),
}  # fmt: skip


def cover_png(title: str) -> bytes:
    from PySide6.QtCore import QBuffer, QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QImage, QLinearGradient, QPainter

    image = QImage(300, 300, QImage.Format.Format_RGB32)
    p = QPainter(image)
    gradient = QLinearGradient(0, 0, 0, 300)
    gradient.setColorAt(0, QColor("#1d3557"))
    gradient.setColorAt(1, QColor("#457b9d"))
    p.fillRect(image.rect(), gradient)
    p.setBrush(QColor("#f1c453"))
    p.setPen(Qt.PenStyle.NoPen)
    p.drawEllipse(QRectF(125, 60, 50, 50))
    p.setPen(QColor("white"))
    font = QFont()
    font.setPointSize(20)
    font.setBold(True)
    p.setFont(font)
    p.drawText(QRectF(10, 150, 280, 120), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, title)
    p.end()
    buffer = QBuffer()
    buffer.open(QBuffer.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(buffer.data())


def render_one(language: str, out_dir: Path, model: Path, work: Path) -> list[Path]:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from app.audio.player import CaptureSink
    from app.longform.book import Book, Chapter
    from app.longform.project import BookProject, BookSettings
    from ui.i18n import install_translators, remove_translators
    from ui.main import create_app
    from ui.main_window import MainWindow
    from ui.screenshot import ListedFiles, settle
    from ui.settings import Settings
    from ui.theme import apply_theme

    app = create_app()
    apply_theme(app, "light")
    translators = install_translators(app, language)
    title, author, chapters = BOOKS[language]
    text = [Chapter(name, "\n".join([body] * 8)) for name, body in chapters]
    book = Book(title, tuple(text), author, cover=cover_png(title), cover_mime="image/png")
    folder = work / "book"
    BookProject.create(folder, book, BookSettings(seed=7))
    settings = Settings()
    settings.model_dir = model
    settings.set_last_book(folder, running=True)  # as if the app closed mid-book
    window = MainWindow(settings=settings, sink=CaptureSink(), dialogs=ListedFiles())
    window.show()
    view = window.books.view
    view.resize(820, 560)
    view_png = out_dir / f"book20_view_{language}.png"
    loop = QEventLoop()

    def grab(progress) -> None:  # noqa: ANN001
        if progress.running and progress.chars_per_s and progress.fraction > 0.3 and loop.isRunning():
            settle()
            view.grab().save(str(view_png))
            window.books.session.pause()
            loop.quit()

    window.books.session.progressed.connect(grab)
    QTimer.singleShot(0, window.start)
    QTimer.singleShot(120_000, loop.quit)
    loop.exec()
    written = [view_png] if view_png.exists() else []
    source = work / "keeper.txt"
    source.write_text("\n\n".join(f"{n}\n\n{b}" for n, b in chapters), encoding="utf-8")
    window.books.import_book(source)
    dialog = window.books.dialog
    settle()
    if dialog is not None:
        import_png = out_dir / f"book20_import_{language}.png"
        dialog.grab().save(str(import_png))
        written.append(import_png)
        dialog.reject()
    window.close()
    remove_translators(app, translators)
    QApplication.processEvents()
    return written


def main(argv: list[str]) -> int:
    from ui.screenshot import render_languages

    out_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs"
    return render_languages(render_one, out_dir, ("en", "zh_CN"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
