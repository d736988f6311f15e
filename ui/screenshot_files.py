"""Screenshots of unsaved work and kept takes (issue 22): ``python -m ui.screenshot_files [out_dir]``.

Run it on a real display (``xvfb-run`` with ``QT_QPA_PLATFORM=xcb``: the menus and the question
are separate windows, taken from the screen), on a throw-away ``VOXDESK_HOME`` with a tiny random
checkpoint (see ui/screenshot.py), in English and Chinese: a self-contained save, the question
about takes made after it, takes marked as made with another CFG, File › Recent scripts, the
Save / Discard / Cancel question, the note after a restart restored unsaved changes, and the note
after a start without an autosave reopened the last script.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from ui.screenshot import ListedFiles

SCRIPTS = {
    "en": (
        "Welcome to VoxDesk. Every sentence becomes a segment.\n"
        "Change a setting and the takes stay: they are marked until you regenerate them.",
        "Hello, this is my voice, recorded for VoxDesk.",
        "My story",
    ),
    "zh_CN": (
        "欢迎使用 VoxDesk。每个句子都会成为一个片段。\n修改设置后结果仍然保留：在重新生成之前会被标出。",
        "你好，这是我为 VoxDesk 录制的声音。",
        "我的故事",
    ),
}


class _Files(ListedFiles):
    """Also prints what would be an information box (the shots here are of other moments)."""

    def info(self, parent, message):  # noqa: ANN001
        print(f"info: {message}", file=sys.stderr)


def render(language: str, out_dir: Path, model: Path, scripts: Path) -> list[Path]:
    from PySide6.QtCore import QPoint, QRect, QTimer
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    from app import project as projects
    from app.audio.player import CaptureSink
    from app.voices.library import VoiceLibrary
    from ui.i18n import install_translators, remove_translators
    from ui.main import create_app
    from ui.main_window import MainWindow
    from ui.screenshot import settle, speech_like, wait
    from ui.settings import Settings
    from ui.theme import apply_theme

    app = create_app()
    apply_theme(app, "light")
    translators = install_translators(app, language)
    text, transcript, title = SCRIPTS[language]
    library = VoiceLibrary()
    if library.find("Anna") is None:
        voice = library.create_from_samples(speech_like(1.5, 16000, 1), 16000, "Anna")
        library.set_transcript(voice, transcript)
    settings = Settings()
    settings.model_dir = model
    dialogs = _Files()
    window = MainWindow(settings=settings, sink=CaptureSink(buffer_seconds=600), dialogs=dialogs)
    window.resize(1280, 800)
    window.move(0, 0)
    window.show()
    QTimer.singleShot(0, window.start)
    wait(window.client.host.loaded, 30_000)
    settle()
    window.script.voice.setCurrentIndex(window.script.voice.findData("Anna"))
    window.script.set_text(text)
    window.script.scriptChanged.emit()
    window.voices.refresh(select_id=library.find("Anna").id)
    QTimer.singleShot(0, window.speak)
    wait(window.session.runFinished)
    window.playback.stop()
    settle()
    suffix = "" if language == "en" else "_zh"
    written = []

    def save(pixmap, name: str) -> None:  # noqa: ANN001
        path = out_dir / f"{name}{suffix}.png"
        pixmap.save(str(path))
        written.append(path)

    def screen(rect: QRect):  # noqa: ANN202
        return QGuiApplication.primaryScreen().grabWindow(0, rect.x(), rect.y(), rect.width(), rect.height())

    def shoot_question(name: str) -> None:
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(100, lambda: shoot_question(name))
            return
        settle()
        save(screen(box.frameGeometry().adjusted(-4, -4, 4, 4)), name)
        box.reject()  # Cancel: everything stays

    dialogs.paths.append(scripts / f"{title}.voxdesk")
    window.actions.files.save_self_contained()
    settle()
    save(window.grab(), "files_self_contained")

    window.script.settings.cfg.setValue(1.5)  # the takes were made with 2.0
    window.script.table.selectRow(1)
    settle()
    save(window.grab(), "files_stale_takes")

    settings.add_recent_script(scripts / "old draft.voxdesk", 10)  # moved away since
    settings.add_recent_script(scripts / f"{title}.voxdesk", 10)
    file_menu = window.menuBar().actions()[0].menu()
    file_menu.popup(window.mapToGlobal(QPoint(0, window.menuBar().height())))
    settle()
    recent = window.actions.files.recent_menu
    file_menu.setActiveAction(recent.menuAction())
    recent.popup(file_menu.geometry().topRight())
    settle()
    area = file_menu.geometry().united(recent.geometry()).adjusted(-8, -8, 8, 8)
    save(screen(area), "files_recent")
    recent.hide()
    file_menu.hide()
    settle()

    QTimer.singleShot(300, lambda: shoot_question("files_unsaved_prompt"))
    window.actions.files.new_script()
    settle()

    # A restart after a crash: the autosave holds the unsaved changes.
    window.autosave()
    copy = projects.autosave_dir() / f"{window.project.id}{projects.SUFFIX}"
    kept = scripts / "autosave.copy"
    shutil.copy2(copy, kept)
    window.dialogs.unsaved = lambda parent, message: "discard"  # type: ignore[method-assign]
    window.close()
    shutil.copy2(kept, copy)
    again = MainWindow(settings=settings, sink=CaptureSink(), dialogs=_Files())
    again.resize(1280, 800)
    again.show()
    QTimer.singleShot(0, again.start)
    wait(again.client.host.loaded, 30_000)
    settle()
    save(again.grab(), "files_restored")
    again.dialogs.unsaved = lambda parent, message: "discard"  # type: ignore[method-assign]
    again.close()

    # Discard deleted the autosave: the next start reopens the last script file as it was saved.
    reopened = MainWindow(settings=settings, sink=CaptureSink(), dialogs=_Files())
    reopened.resize(1280, 800)
    reopened.show()
    QTimer.singleShot(0, reopened.start)
    wait(reopened.client.host.loaded, 30_000)
    settle()
    save(reopened.grab(), "takes_reopened")

    # New takes of the saved script (another CFG, saved, then Regenerate stale takes) are unsaved
    # work: New asks, naming the takes.
    reopened.script.settings.cfg.setValue(2.5)
    reopened.actions.files.save_script()
    QTimer.singleShot(0, reopened.regenerate_stale)
    wait(reopened.session.runFinished)
    reopened.playback.stop()
    QTimer.singleShot(300, lambda: shoot_question("takes_new_takes_prompt"))
    reopened.actions.files.new_script()
    settle()
    reopened.dialogs.unsaved = lambda parent, message: "discard"  # type: ignore[method-assign]
    reopened.close()
    remove_translators(app, translators)
    QApplication.processEvents()
    return written


def main(argv: list[str]) -> int:
    from ui.screenshot import render_languages

    out_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs"
    return render_languages(render, out_dir, ("en", "zh_CN"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
