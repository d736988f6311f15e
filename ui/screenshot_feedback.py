"""Screenshots of the window's feedback (issue 11): ``python -m ui.screenshot_feedback [out_dir]``.

Offscreen, on a throw-away ``VOXDESK_HOME`` with a tiny random checkpoint (see ui/screenshot.py),
in English and Chinese: a run with failures (red rows, the summary, the failure strip), the
reference-length guide (a recording too long for the model), and playback with its playhead.
The tiny model turns a second of voice into 1,000 patches, so its limits are tighter than a
real model's; the guide's figures come from the loaded model either way.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SCRIPTS = {
    "en": (
        "Welcome to VoxDesk. Every sentence becomes a segment. Failures show where you look.\n"
        "[Carol] This line names a voice that does not exist. So does this one.\n"
        "The rest is spoken as usual. Press Speak to try it.",
        "Hello, this is my voice, recorded for VoxDesk.",
    ),
    "zh_CN": (
        "欢迎使用 VoxDesk。每个句子都会成为一个片段。失败会显示在你看得到的地方。\n"
        "[Carol] 这一行使用了一个不存在的声音。这一句也是。\n"
        "其余的句子照常朗读。点击朗读试试看。",
        "你好，这是我为 VoxDesk 录制的声音。",
    ),
}


class _Answers:
    """No modal dialog may block an offscreen run: questions are answered yes, messages logged, and
    the unsaved-work question on close is answered Discard (the run's home is thrown away)."""

    def __getattr__(self, name: str):
        def answer(*args, **kwargs):
            print(f"dialog {name}: {args[1:] if len(args) > 1 else ''}", file=sys.stderr)
            return {"confirm": True, "unsaved": "discard"}.get(name)

        return answer


def render(language: str, out_dir: Path, model: Path) -> list[Path]:
    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from app.audio.player import CaptureSink
    from app.voices.library import VoiceLibrary
    from ui.i18n import install_translators, remove_translators
    from ui.main import create_app
    from ui.main_window import MainWindow
    from ui.screenshot import speech_like
    from ui.settings import Settings
    from ui.theme import apply_theme

    def settle() -> None:
        for _ in range(30):
            QCoreApplication.processEvents()

    def wait(signal, timeout_ms: int = 60_000) -> None:
        loop = QEventLoop()
        signal.connect(loop.quit)
        QTimer.singleShot(timeout_ms, loop.quit)
        loop.exec()

    app = create_app()
    apply_theme(app, "light")
    translators = install_translators(app, language)
    text, transcript = SCRIPTS[language]
    library = VoiceLibrary()
    for name, seconds, seed in (("Anna", 1.5, 1), ("Ben", 1.2, 2), ("Long", 12.0, 3)):
        if library.find(name) is None:
            voice = library.create_from_samples(speech_like(seconds, 16000, seed), 16000, name)
            library.set_transcript(voice, transcript if name == "Anna" else "")
    settings = Settings()
    settings.model_dir = model
    sink = CaptureSink(buffer_seconds=600)
    sink.description = QCoreApplication.translate("Screenshot", "screenshot capture (no sound card)")
    window = MainWindow(settings=settings, sink=sink, dialogs=_Answers())
    window.resize(1280, 800)
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
    settle()
    window.playback.stop()
    window.show_failed()
    settle()
    suffix = "" if language == "en" else "_zh"
    written = []

    def save(widget, name: str) -> None:
        path = out_dir / f"{name}{suffix}.png"
        widget.grab().save(str(path))
        written.append(path)

    save(window, "feedback_failures")

    window.voices.refresh(select_id=library.find("Long").id)
    settle()
    save(window.voices, "reference_guide")

    window.voices.refresh(select_id=library.find("Anna").id)
    settle()
    window.voices.play_voice()
    window.playback.pump()
    sink.pull(int(0.9 * 16000))  # 0.9 s of the recording has reached the listener
    window.playback.pump()
    settle()
    save(window.voices, "playback_voice")

    window.playback.stop()
    window.play_pause()  # the finished script, from the start
    window.playback.pump()
    sink.pull(150)  # the tiny model's segments last a few milliseconds
    window.playback.pump()
    settle()
    save(window, "playback_script")

    window.playback.stop()
    window.close()
    remove_translators(app, translators)
    QApplication.processEvents()
    return written


def main(argv: list[str]) -> int:
    from ui.screenshot import render_languages

    out_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs"
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return render_languages(lambda language, out, model, _work: render(language, out, model), out_dir,
                            ("en", "zh_CN"))  # fmt: skip


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
