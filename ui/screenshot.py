"""Render the README screenshots offscreen: ``python -m ui.screenshot [out_dir]``.

Opens the real main window on a throw-away ``VOXDESK_HOME`` with a tiny random checkpoint (the
VoxCPM2 architecture at toy size, written by the model code's own checkpoint writer), two voices
and a short dialogue, then saves ``screenshot.png`` (English) and ``screenshot_zh.png`` (Chinese).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ui.dialogs import Dialogs

SCRIPTS = {
    "en": (
        "Welcome to VoxDesk. Every sentence becomes its own segment.\n"
        "[Ben] And a line tagged with a voice name is read by that voice.\n"
        "Press Speak, and playback starts while the rest is still being generated.",
        "Hello, this is my voice, recorded for VoxDesk.",
    ),
    "zh_CN": (
        "欢迎使用 VoxDesk。每个句子都会成为一个独立的片段。\n"
        "[Ben] 以声音名称开头的行，会由那个声音来朗读。\n"
        "点击朗读后，前面的句子会先播放，后面的仍在生成。",
        "你好，这是我为 VoxDesk 录制的声音。",
    ),
}


class ListedFiles(Dialogs):
    """The real questions (they are what a screenshot shows); file dialogs answer from ``paths``
    and errors go to stderr (a screenshot run has nobody to close a message box)."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[Path] = []

    def open_audio(self, parent):  # noqa: ANN001
        return self.paths.pop(0) if self.paths else None

    def save_path(self, parent, title, suggested, file_filter):  # noqa: ANN001
        return self.paths.pop(0) if self.paths else None

    def error(self, parent, message):  # noqa: ANN001
        print(f"error: {message}", file=sys.stderr)


class _ThrowAway(Dialogs):
    """The README shot's script lives in a throw-away home: closing discards it unasked (an
    offscreen run has nobody to answer the question)."""

    def unsaved(self, parent, message):  # noqa: ANN001
        return "discard"


def settle(rounds: int = 30) -> None:
    """Let queued events run (layouts, repaints) before a screenshot."""
    from PySide6.QtCore import QCoreApplication

    for _ in range(rounds):
        QCoreApplication.processEvents()


def wait(signal, timeout_ms: int = 60_000) -> None:  # noqa: ANN001
    """Run the event loop until ``signal`` fires or ``timeout_ms`` passes."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()


def until(condition: Callable[[], bool], timeout_ms: int = 60_000) -> None:
    """Run the event loop until ``condition()`` holds (polled every 50 ms) or ``timeout_ms`` passes."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    timer = QTimer()
    timer.timeout.connect(lambda: loop.quit() if condition() else None)
    timer.start(50)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()
    timer.stop()


def speech_like(seconds: float, rate: int, seed: int) -> np.ndarray:
    """A waveform with syllable-like bursts, so the voice panel shows a plausible recording."""
    rng = np.random.default_rng(seed)
    n = int(seconds * rate)
    t = np.arange(n) / rate
    envelope = np.zeros(n, np.float32)
    pos = 0.15
    while pos < seconds - 0.2:
        length = rng.uniform(0.12, 0.35)
        centre, width = pos + length / 2, length / 2
        envelope += (rng.uniform(0.3, 0.9) * np.exp(-(((t - centre) / width) ** 2) * 3)).astype(np.float32)
        pos += length + rng.uniform(0.03, 0.25)
    carrier = np.sin(2 * np.pi * 140 * t) * 0.6 + rng.standard_normal(n) * 0.4
    return (0.6 * envelope * carrier).astype(np.float32)


def add_voices(seconds: float = 4.0) -> dict:
    """Ben and Anna in the library, each a few seconds of speech-like audio; by name."""
    from app.voices.library import VoiceLibrary

    library = VoiceLibrary()
    return {name: library.create_from_samples(speech_like(seconds, 16000, seed), 16000, name)
            for name, seed in (("Ben", 2), ("Anna", 1))}  # fmt: skip


def open_window(model: Path, timeout_ms: int = 60_000):  # noqa: ANN201
    """The real window on ``model`` (throw-away dialogs, audio captured), 1280×800, shown and
    waited for until the model is loaded."""
    from app.audio.player import CaptureSink
    from ui.main_window import MainWindow
    from ui.settings import Settings

    settings = Settings()
    settings.model_dir = model
    window = MainWindow(settings=settings, sink=CaptureSink(), dialogs=_ThrowAway())
    window.resize(1280, 800)
    window.show()
    window.start()
    wait(window.client.host.loaded, timeout_ms)
    return window


def write_model(folder: Path) -> Path:
    from app.models.voxcpm.checkpoint import write_checkpoint

    model = write_checkpoint(folder, "tiny-v2")
    config = json.loads((model / "config.json").read_text())
    config["max_length"] = config["lm_config"]["max_position_embeddings"] = 8192
    (model / "config.json").write_text(json.dumps(config))
    return model


def render(language: str, out: Path, model: Path) -> None:
    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from app.audio.player import CaptureSink
    from app.voices.library import VoiceLibrary
    from ui.i18n import install_translators, remove_translators
    from ui.main import create_app
    from ui.main_window import MainWindow
    from ui.settings import Settings
    from ui.theme import apply_theme

    app = create_app()
    apply_theme(app, "light")
    translators = install_translators(app, language)
    text, transcript = SCRIPTS[language]
    library = VoiceLibrary()
    for name, seed in (("Ben", 2), ("Anna", 1)):
        if library.find(name) is None:
            voice = library.create_from_samples(speech_like(4.0, 16000, seed), 16000, name)
            library.set_transcript(voice, transcript if name == "Anna" else "")
    settings = Settings()
    settings.model_dir = model
    window = MainWindow(settings=settings, sink=CaptureSink(), dialogs=_ThrowAway())
    window.resize(1280, 800)
    window.show()
    loop = QEventLoop()
    window.client.host.loaded.connect(loop.quit)
    QTimer.singleShot(0, window.start)
    QTimer.singleShot(30_000, loop.quit)
    loop.exec()
    window.script.voice.setCurrentIndex(window.script.voice.findData("Anna"))
    window.script.set_text(text)
    window.script.scriptChanged.emit()
    window.voices.refresh(select_id=library.find("Anna").id)
    window.script.table.selectRow(0)
    for _ in range(20):
        QCoreApplication.processEvents()
    window.grab().save(str(out))
    window.close()
    remove_translators(app, translators)
    QApplication.processEvents()


def render_languages(
    render_one: Callable[[str, Path, Path, Path], list[Path]], out_dir: Path, languages: Sequence[str]
) -> int:
    """The screenshot tools' loop: for each language a fresh ``VOXDESK_HOME``, a tiny model and an
    empty work folder, then ``render_one(language, out_dir, model, work)``; prints what it wrote."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for language in languages:
            os.environ["VOXDESK_HOME"] = str(Path(tmp) / language)
            model = write_model(Path(tmp) / f"VoxCPM2-tiny-{language}")
            work = Path(tmp) / f"work-{language}"
            work.mkdir()
            for path in render_one(language, out_dir, model, work):
                print(path)
    return 0


def main(argv: list[str]) -> int:
    out_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs"
    out_dir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory() as tmp:
        for language, name in (("en", "screenshot.png"), ("zh_CN", "screenshot_zh.png")):
            os.environ["VOXDESK_HOME"] = str(Path(tmp) / language)
            model = write_model(Path(tmp) / "VoxCPM2-tiny")
            render(language, out_dir / name, model)
            print(out_dir / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
