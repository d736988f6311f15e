"""Screenshots of the subtitle view: ``python -m ui.screenshot_dub [out_dir]``.

On a throw-away ``VOXDESK_HOME`` with a tiny random checkpoint (see ui/screenshot.py), in English
and Chinese: subtitles imported through File › Import subtitles…, dubbed, the table and summary
shown. The tiny model's takes are a few hundredths of a second long and of random length, so
here every take is made exactly :data:`TAKE_PATCHES` patches long (120 ms) and the cues' slots
are cut around that length: most fit as they are, one fits once sped up, one still overruns,
one has nothing to say. Run it under Xvfb with ``QT_QPA_PLATFORM=xcb`` to see the real window.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

TAKE_PATCHES = 120  # 1 ms each in the tiny model
CUES = {
    "en": [
        "Welcome back to the channel, everyone out there.",
        "[Ben] Today we dub a whole video in a cloned voice.",
        "Every cue is spoken inside its own time slot.",
        "[Music]",
        "[Ben] A take that runs long is drawn again, then sped up.",
        "What still does not fit is listed, never hidden.",
    ],
    "zh_CN": [
        "欢迎回到频道，各位朋友们。",
        "[Ben] 今天我们用克隆的声音给整段视频配音。",
        "每条字幕都在自己的时段内说完。",
        "[Music]",
        "[Ben] 太长的录音会重新生成，然后加速。",
        "仍然放不下的会列出来，绝不隐藏。",
    ],
}
SLOTS = [0.5, 0.5, 0.105, 0.5, 0.08, 0.5]  # seconds: the third is sped up, the fifth overruns


def subtitles(language: str) -> str:
    blocks = []
    for n, (text, slot) in enumerate(zip(CUES[language], SLOTS, strict=True), 1):
        start = 1.0 + (n - 1) * 1.5
        blocks.append(f"{n}\n{_clock(start)} --> {_clock(start + slot)}\n{text}\n")
    return "\n".join(blocks)


def _clock(seconds: float) -> str:
    from app.export import srt_time

    return srt_time(seconds)


def render(language: str, out_dir: Path, model: Path, work: Path) -> list[Path]:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    import ui.dubbing
    from app.audio.player import CaptureSink
    from app.voices.library import VoiceLibrary
    from ui.i18n import install_translators, remove_translators
    from ui.main import create_app
    from ui.main_window import MainWindow
    from ui.screenshot import ListedFiles, settle, speech_like, wait
    from ui.screenshot_feedback import _Answers
    from ui.settings import Settings
    from ui.theme import apply_theme

    ui.dubbing.DubSettings = functools.partial(  # every take exactly TAKE_PATCHES long (see above)
        ui.dubbing.DubSettings, min_len=TAKE_PATCHES, max_len=TAKE_PATCHES
    )
    app = create_app()
    apply_theme(app, "light")
    translators = install_translators(app, language)
    library = VoiceLibrary()
    for name, seed in (("Anna", 1), ("Ben", 2)):
        if library.find(name) is None:
            library.create_from_samples(speech_like(1.2, 16000, seed), 16000, name)
    settings = Settings()
    settings.model_dir = model
    dialogs = ListedFiles()
    dialogs.confirm = _Answers().confirm  # type: ignore[method-assign]
    dialogs.unsaved = _Answers().unsaved  # type: ignore[method-assign]
    subs = work / ("film.srt" if language == "en" else "影片.srt")
    subs.write_text(subtitles(language), encoding="utf-8")
    dialogs.open_subtitles = lambda parent: subs  # type: ignore[method-assign]
    window = MainWindow(settings=settings, sink=CaptureSink(), dialogs=dialogs)
    window.resize(1280, 800)
    window.show()
    QTimer.singleShot(0, window.start)
    wait(window.client.host.loaded, 30_000)
    settle()
    window.script.voice.setCurrentIndex(window.script.voice.findData("Anna"))
    window.script.settings.steps.setValue(3)
    window.dubbing.import_subtitles()
    wait(window.dubbing._loaded, 10_000)
    settle()
    view = window.dubbing.view
    view.takes_box.setValue(2)
    QTimer.singleShot(0, window.dubbing.dub)
    wait(window.dubbing._done, 120_000)
    settle()
    view.table.clearSelection()  # the overrun's red text shows
    settle()
    path = out_dir / f"dub20_subtitles_{language}.png"
    window.grab().save(str(path))
    window.dubbing.exported = True  # a throw-away home: nothing to keep
    window.close()
    remove_translators(app, translators)
    QApplication.processEvents()
    return [path]


def main(argv: list[str]) -> int:
    from ui.screenshot import render_languages

    out_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "docs"
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return render_languages(render, out_dir, ("en", "zh_CN"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
