"""The "Train this voice…" wizard walked as a new user, one screenshot per step:
``python -m ui.screenshot_train [out_dir]`` (default docs/), files ``wizard21_*_{en,zh}.png``.

Run it on a real display (``xvfb-run -a -s "-screen 0 1280x800x24"`` with ``QT_QPA_PLATFORM=xcb``:
the questions are windows of their own, taken from the screen), in English and Chinese, each on a
throw-away ``VOXDESK_HOME``. The model is the tests' tiny VoxCPM2 with the real VAE strides, the
recognizer and the speaker model the tests' tiny ones (the recognizer hears tones as words), all
from tests/ (``onnx`` needed): so the walk slices, transcribes and trains for real, on the CPU
after the explicit choice, three steps. What it saw is printed as ``check: ...`` lines beside the file names.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
STEPS = 3


def render(language: str, out_dir: Path, work: Path) -> list[Path]:
    from PySide6.QtCore import QRect, Qt, QTimer
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton, QScrollArea

    sys.path.insert(0, str(TESTS))
    from tiny_asr import write_tiny_sensevoice
    from tiny_speaker import write_tiny_speaker
    from ui_train_fixtures import write_recording, write_train_model

    from app.asr import catalog
    from app.audio.io import write_audio
    from app.audio.player import CaptureSink
    from app.train import speaker
    from app.voices.library import VoiceLibrary
    from ui.i18n import install_translators, remove_translators
    from ui.main import create_app
    from ui.main_window import MainWindow
    from ui.screenshot import ListedFiles, settle, speech_like, until, wait
    from ui.settings import Settings
    from ui.theme import apply_theme

    app = create_app()
    apply_theme(app, "light")
    translators = install_translators(app, language)
    model = write_train_model(work / "VoxCPM2-tiny")
    write_tiny_sensevoice(catalog.default_folder())
    write_tiny_speaker(speaker.default_folder())
    VoiceLibrary().create_from_samples(speech_like(4.0, 16000, 1), 16000, "Ada")
    settings = Settings()
    settings.model_dir = model
    settings.language = language
    dialogs = ListedFiles()
    window = MainWindow(settings=settings, sink=CaptureSink(buffer_seconds=900), dialogs=dialogs)
    window.resize(1280, 800)
    window.move(0, 0)
    window.show()
    QTimer.singleShot(0, window.start)
    wait(window.client.host.loaded, 30_000)
    settle()
    suffix = "en" if language == "en" else "zh"
    written: list[Path] = []

    def check(what: str, value: object) -> None:
        print(f"check {language}: {what}: {value}", flush=True)

    def save(pixmap, name: str) -> None:  # noqa: ANN001
        path = out_dir / f"wizard21_{name}_{suffix}.png"
        pixmap.save(str(path))
        written.append(path)

    def screen(rect: QRect):  # noqa: ANN202
        return QGuiApplication.primaryScreen().grabWindow(0, rect.x(), rect.y(), rect.width(), rect.height())

    def answer(name: str, button: Callable[[QMessageBox], QPushButton]) -> None:
        """Take the next question from the screen, then press ``button(box)``."""

        def shoot() -> None:
            box = QApplication.activeModalWidget()
            if not isinstance(box, QMessageBox) or not box.isVisible():
                QTimer.singleShot(100, shoot)
                return
            settle()
            save(screen(box.frameGeometry().adjusted(-4, -4, 4, 4)), name)
            check(name, box.text())
            button(box).click()

        QTimer.singleShot(200, shoot)

    def labelled(text: str) -> Callable[[QMessageBox], QPushButton]:
        return lambda box: next(b for b in box.buttons() if b.text() == text)

    # The entries: "Train this voice…" under the selected voice, and in the Voices menu.
    scroll = window.voices.parentWidget()
    while not isinstance(scroll, QScrollArea):
        scroll = scroll.parentWidget()
    scroll.ensureWidgetVisible(window.voices.train_button)
    menu = next(a.menu() for a in window.menuBar().actions() if a.menu() and a.menu().actions()[-1].text()
                == window.voices.train_button.text())  # fmt: skip
    menu.popup(window.mapToGlobal(window.menuBar().actionGeometry(menu.menuAction()).bottomLeft()))
    settle()
    save(screen(window.frameGeometry()), "01_entry")
    menu.close()
    window.voices.train_button.click()
    wizard = window.training.wizard
    wizard.move(60, 40)
    until(lambda: wizard.device_page.found is not None)
    settle()
    save(wizard.grab(), "02_no_gpu")
    check("device", wizard.device_page.device.text())

    # Recordings: a long reading and a short file, sliced and transcribed.
    wizard.device_page.use_cpu.setChecked(True)
    wizard.next()
    page = wizard.data_page
    dialogs.paths.append(write_recording(work / "reading.wav", 210))  # 3 clips held out, 2:20 left
    page.add_file_button.click()
    until(lambda: "%" in page.status.text() and page.bar.value() > 0)
    settle()
    save(wizard.grab(), "03_preparing")
    until(lambda: not page.running)
    short = work / "short.wav"
    write_audio(short, speech_like(1.2, 16000, 3), 16000)
    dialogs.paths.append(short)
    page.add_file_button.click()
    until(lambda: not page.running)
    page.table.exclude_items[1].setCheckState(Qt.CheckState.Checked)
    page.table.selectRow(0)
    settle()
    save(wizard.grab(), "04_clips")
    check("clips", [(c.seconds, c.problem, c.excluded) for c in wizard.dataset.clips])
    check("total", page.total.text())

    # The plan, then training.
    wizard.next()
    until(lambda: wizard.plan_page.isComplete())
    settle()
    save(wizard.grab(), "05_plan")
    wizard.plan_page.steps.setValue(STEPS)
    wizard.next()
    train = wizard.train_page
    until(lambda: train.first_step is not None, 600_000)
    settle()
    save(wizard.grab(), "06_training")
    check("training", train.headline.text())

    # Closing mid-training asks; pause and keep.
    answer("07_close_question", labelled(wizard.tr("Pause and keep")))
    wizard.close()
    until(lambda: window.training.wizard is None, 600_000)
    check("run kept", window.training.wizard is None)

    # Train this voice… again offers to resume; it continues from the checkpoint to the end.
    answer("08_resume_question", lambda box: box.button(QMessageBox.StandardButton.Yes))
    window.voices.train_button.click()
    until(lambda: window.training.wizard is not None)
    wizard = window.training.wizard
    wizard.move(60, 40)
    train = wizard.train_page
    until(lambda: not wizard.training_running and train.last is not None, 1_200_000)
    settle()
    save(wizard.grab(), "09_finished")
    check("finished", (train.headline.text(), train.first_step, len(train.table.checkpoints)))

    # Keep the best checkpoint as a voice.
    answer("10_voice_kept", lambda box: box.buttons()[0])
    train.use_button.click()
    settle()
    wizard.close()
    scroll.ensureWidgetVisible(window.voices.list)
    settle()
    save(window.grab(), "11_library")
    check("voices", [v.name for v in window.library.list()])
    window.close()
    remove_translators(app, translators)
    QApplication.processEvents()
    return written


def main(argv: list[str]) -> int:
    from ui.screenshot import render_languages

    out_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs"
    # the wizard trains a model of its own (the real VAE strides): the loop's tiny model goes unused
    return render_languages(
        lambda language, out, _model, work: render(language, out, work), out_dir, argv[1:] or ("en", "zh_CN")
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
