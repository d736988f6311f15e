"""The new-user walkthrough of issue 22, one screenshot per point: ``python -m ui.screenshot_walk [out_dir]``.

Run it on a real display (``xvfb-run -a -s "-screen 0 1280x800x24"`` with ``QT_QPA_PLATFORM=xcb``:
menus and questions are windows of their own, taken from the screen), in English and Chinese, each
on a throw-away ``VOXDESK_HOME`` with a tiny random checkpoint (see ui/screenshot.py). It does what
a new user does: import a voice, paste a script with an unknown ``[Carol]``, cast it, Speak, watch
the ETA, Esc, turn the wheel over CFG (unfocused, then focused), regenerate the stale takes, export
twice, save a self-contained project, File › New with unsaved edits, Recent scripts, the model
manager, About, Settings › On the CPU, a language change, and the window at 800×600. What it saw
(values, files on disk) is printed as ``check: ...`` lines beside the file names.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from ui.screenshot import ListedFiles

FILLER = {
    "en": "This sentence is here so that the run lasts long enough to show its estimate.",
    "zh_CN": "这句话让朗读持续得足够久，以便显示剩余时间的估计。",
}
SCRIPTS = {
    "en": (
        "Welcome to VoxDesk. Every sentence becomes a segment.\n"
        "[Carol] I am Carol, and nobody has recorded my voice yet.\n",
        "My story",
        "One more line, not saved yet.",
    ),
    "zh_CN": (
        "欢迎使用 VoxDesk。每个句子都会成为一个片段。\n[Carol] 我是 Carol，还没有人录过我的声音。\n",
        "我的故事",
        "再加一行，还没有保存。",
    ),
}


def render(language: str, out_dir: Path, model: Path, work: Path) -> list[Path]:
    from PySide6.QtCore import QPoint, QPointF, QRect, Qt, QTimer
    from PySide6.QtGui import QGuiApplication, QWheelEvent
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QInputDialog, QLabel, QMessageBox

    from app.audio.io import write_audio
    from app.audio.player import CaptureSink
    from ui.i18n import install_translators, remove_translators
    from ui.main import create_app
    from ui.main_window import MainWindow
    from ui.screenshot import settle, speech_like, until, wait
    from ui.settings import Settings
    from ui.theme import apply_theme

    app = create_app()
    apply_theme(app, "light")
    translators = install_translators(app, language)
    text, title, extra = SCRIPTS[language]
    text += "\n".join([FILLER[language]] * 8)
    settings = Settings()
    settings.model_dir = model
    settings.language = language
    dialogs = ListedFiles()
    window = MainWindow(settings=settings, sink=CaptureSink(buffer_seconds=900), dialogs=dialogs)
    window.resize(1280, 800)
    window.move(0, 0)
    window.show()
    window.windowHandle().requestActivate()  # keys and focus (Esc, the wheel) need an active window
    QTimer.singleShot(0, window.start)
    wait(window.client.host.loaded, 30_000)
    until(window.isActiveWindow, 5_000)
    settle()
    suffix = "en" if language == "en" else "zh"
    written: list[Path] = []

    def save(pixmap, name: str) -> None:  # noqa: ANN001
        path = out_dir / f"{name}_{suffix}.png"
        pixmap.save(str(path))
        written.append(path)

    def screen(rect: QRect):  # noqa: ANN202
        return QGuiApplication.primaryScreen().grabWindow(0, rect.x(), rect.y(), rect.width(), rect.height())

    pending: list[str] = []  # questions that answer() is waiting for

    def answer(name: str, respond: Callable[[QApplication], None]) -> None:
        """Take the next modal question from the screen, then answer it with ``respond``."""

        def shoot() -> None:
            box = QApplication.activeModalWidget()
            if box is None or not box.isVisible():
                QTimer.singleShot(100, shoot)
                return
            pending.remove(name)
            box.setProperty("walk_expected", True)
            settle()
            save(screen(box.frameGeometry().adjusted(-4, -4, 4, 4)), name)
            respond(box)

        pending.append(name)
        QTimer.singleShot(200, shoot)

    def activate() -> None:
        """Without a window manager nothing gives the window back its activation after a dialog."""
        window.windowHandle().requestActivate()
        until(window.isActiveWindow, 5_000)

    def check(what: str, value: object) -> None:
        print(f"check {language}: {what}: {value}", flush=True)

    unexpected: list[int] = []

    def watchdog() -> None:
        """A question the walk did not expect: shown on the screen, printed, answered Yes/OK."""
        box = QApplication.activeModalWidget()
        asks = isinstance(box, (QMessageBox, QInputDialog))  # the walk's own dialogs it closes itself
        if asks and not pending and box.isVisible() and not box.property("walk_expected"):
            unexpected.append(1)
            save(screen(box.frameGeometry()), f"unexpected_{len(unexpected)}")
            texts = [w.text() for w in box.findChildren(QLabel) if w.text()]
            check("unexpected question", texts)
            box.accept()

    guard = QTimer()
    guard.timeout.connect(watchdog)
    guard.start(3000)

    # Import a voice (the file dialog answers with 1.5 s: the tiny model has room for little more).
    recording = work / "anna.wav"
    write_audio(recording, speech_like(1.5, 16000, 1), 16000)
    dialogs.paths.append(recording)
    window.voices.import_dialog()
    settle()
    # Paste a script with an unknown [Carol].
    window.script.set_text(text)
    window.script.scriptChanged.emit()
    until(lambda: window.script.table.rowCount() > 8)
    settle()
    save(window.grab(), "01_unknown_tag")

    # The cast: pick a voice for [Carol]; the script keeps its tag.
    def pick(box) -> None:  # noqa: ANN001
        if isinstance(box, QInputDialog):
            box.setTextValue(box.comboBoxItems()[0])
        box.accept()

    answer("02_cast_question", pick)
    window.pick_voice_for_tag("Carol")
    settle()
    check("script keeps [Carol]", "[Carol]" in window.script.text())
    check("cast", window.project.cast)
    save(window.grab(), "03_cast")

    # Speak: the ETA while it runs, Esc, "Stopped".
    etas: list[float] = []

    def on_progress(fraction: float, eta: object) -> None:
        if isinstance(eta, float) and not etas:
            etas.append(eta)
            settle(5)
            save(window.grab(), "04_eta")
            QTimer.singleShot(0, lambda: QTest.keyClick(window.windowHandle(), Qt.Key.Key_Escape))

    activate()
    window.session.progressChanged.connect(on_progress)
    QTimer.singleShot(0, window.speak)
    wait(window.session.runFinished, 120_000)
    window.session.progressChanged.disconnect(on_progress)
    settle()
    check("first ETA (s)", etas)
    check("status after Esc", window.statusBar().currentMessage())
    save(window.grab(), "05_stopped")
    QTimer.singleShot(0, window.speak)  # the rest
    wait(window.session.runFinished, 300_000)
    window.playback.stop()
    settle()
    check("counts after the second Speak", window.session.counts())

    # CFG and the mouse wheel: unfocused nothing, focused the takes stay and are marked.
    cfg = window.script.settings.cfg

    def wheel() -> None:
        centre = QPointF(cfg.rect().center())
        event = QWheelEvent(
            centre, QPointF(cfg.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, -120),
            Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False,
        )
        QApplication.sendEvent(cfg, event)
        settle()

    activate()
    window.script.table.setFocus()
    before = cfg.value()
    wheel()
    check("CFG after an unfocused wheel tick", (before, cfg.value()))
    cfg.setFocus()
    settle()
    wheel()
    check("CFG after a focused wheel tick", (before, cfg.value(), "focus", cfg.hasFocus()))
    check("stale takes", window.session.stale_indices()[:5])
    check("counts", window.session.counts())
    window.script.table.selectRow(1)
    settle()
    save(window.grab(), "06_stale_takes")
    window.regenerate_stale()
    if window.session.busy():
        wait(window.session.runFinished, 300_000)
    window.playback.stop()
    settle()
    check("stale after Regenerate", window.session.stale_indices())
    save(window.grab(), "07_regenerated")

    # Export twice: the second time remembers the name and the per-segment choice.
    out = work / "exports"
    out.mkdir()
    window.actions.export()
    settle()
    dialog = window.actions.dialog
    dialog.path.setText(str(out / f"{title}.wav"))
    dialog.segments.setChecked(True)
    dialog.accept()
    settle()
    check("exported", sorted(p.name for p in out.iterdir()))
    window.actions.export()
    settle()
    dialog = window.actions.dialog
    check("second export remembers", (dialog.path.text(), dialog.segments.isChecked()))
    save(screen(dialog.frameGeometry().adjusted(-4, -4, 4, 4)), "08_export_remembered")
    dialog.reject()
    settle()

    # Save as self-contained project.
    scripts = work / "scripts"
    scripts.mkdir()
    dialogs.paths.append(scripts / f"{title}.voxdesk")
    window.actions.files.save_self_contained()
    settle()
    check("self-contained files", sorted(str(p.relative_to(scripts)) for p in scripts.rglob("*"))[:6])
    save(window.grab(), "09_self_contained")

    # File › New with unsaved edits: the question; Cancel keeps everything.
    window.script.set_text(window.script.text() + "\n" + extra)
    window.script.scriptChanged.emit()
    settle()
    answer("10_unsaved_prompt", lambda box: box.reject())
    window.actions.files.new_script()
    settle()
    check("edit kept after Cancel", extra in window.script.text())

    # File › Recent scripts.
    file_menu = window.menuBar().actions()[0].menu()
    file_menu.popup(window.mapToGlobal(QPoint(0, window.menuBar().height())))
    settle()
    recent = window.actions.files.recent_menu
    file_menu.setActiveAction(recent.menuAction())
    recent.popup(file_menu.geometry().topRight())
    settle()
    save(screen(file_menu.geometry().united(recent.geometry()).adjusted(-8, -8, 8, 8)), "11_recent")
    recent.hide()
    file_menu.hide()
    settle()

    # The model manager's loaded mark; About's version.
    window.actions.manage_models()
    settle()
    dialog = window.actions.dialog
    save(screen(dialog.frameGeometry().adjusted(-4, -4, 4, 4)), "12_models")
    dialog.reject()
    settle()
    answer("13_about", lambda box: box.accept())
    window.actions.about()
    settle()

    # Settings › On the CPU; then a language change and its Restart now (answered No here).
    window.actions.open_settings()
    settle()
    dialog = window.actions.dialog
    save(screen(dialog.frameGeometry().adjusted(-4, -4, 4, 4)), "14_settings_cpu")
    other = "zh_CN" if language == "en" else "en"
    dialog.language.setCurrentIndex(dialog.language.findData(other))
    answer("15_restart_now", lambda box: box.reject())
    dialog.accept()
    settle()

    # The window at 800×600.
    check("minimum size hint", window.minimumSizeHint().toTuple())
    window.resize(800, 600)
    settle()
    check("size at 800x600", window.size().toTuple())
    save(window.grab(), "16_800x600")

    window.dialogs.unsaved = lambda parent, message: "discard"  # type: ignore[method-assign]
    window.close()
    remove_translators(app, translators)
    QApplication.processEvents()
    return written


def main(argv: list[str]) -> int:
    from ui.screenshot import render_languages

    out_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs" / "walkthrough"
    return render_languages(render, out_dir, argv[1:] or ("en", "zh_CN"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
