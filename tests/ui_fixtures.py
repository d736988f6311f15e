"""Shared pieces of the UI tests: a tiny model that fits a voice prompt, scripted dialogs,
a window on a private VOXDESK_HOME with a capture sink in place of the sound card, and a
watcher of what the GUI thread runs."""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback
from pathlib import Path

import numpy as np
import pytest
import soundfile
from tiny import tone, write_tiny_checkpoint

from app.audio.player import CaptureSink
from ui.dialogs import Dialogs

# The tiny VAE makes 1,000 patches per second of prompt audio; the stock tiny config allows 256
# positions. Widen the position range (nothing else changes) so a 0.6 s voice fits.
MAX_POSITIONS = 2048
VOICE_SECONDS = 0.6


def write_ui_model(folder: Path) -> Path:
    model = write_tiny_checkpoint(folder, "voxcpm2")
    config_path = model / "config.json"
    config = json.loads(config_path.read_text())
    config["max_length"] = MAX_POSITIONS
    config["lm_config"]["max_position_embeddings"] = MAX_POSITIONS
    config_path.write_text(json.dumps(config))
    return model


def write_voice_file(path: Path, freq: float = 220.0, seconds: float = VOICE_SECONDS) -> Path:
    soundfile.write(str(path), tone(int(16000 * seconds), 16000, freq), 16000)
    return path


class ScriptedDialogs(Dialogs):
    """Answers every modal question from lists; records what would have been shown."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.infos: list[str] = []
        self.questions: list[str] = []
        self.answers: list[bool] = []
        self.files: list[Path] = []
        self.folders: list[Path] = []
        self.choices: list[str | None] = []
        self.choice_questions: list[tuple[str, list[str]]] = []
        self.unsaved_questions: list[str] = []
        self.unsaved_answers: list[str] = []  # "save", "discard" or "cancel"; none left: "discard"
        self.asked: list[tuple[str, list[str]]] = []
        self.ask_answers: list[int] = []  # the index of the button pressed; none left: the last (Esc)

    def error(self, parent, message):
        self.errors.append(message)

    def info(self, parent, message):
        self.infos.append(message)

    def confirm(self, parent, message):
        self.questions.append(message)
        return self.answers.pop(0) if self.answers else True

    def unsaved(self, parent, message):
        self.unsaved_questions.append(message)
        return self.unsaved_answers.pop(0) if self.unsaved_answers else "discard"

    def ask(self, parent, message, options):
        self.asked.append((message, list(options)))
        return self.ask_answers.pop(0) if self.ask_answers else len(options) - 1

    def open_audio(self, parent):
        return self.files.pop(0) if self.files else None

    def open_project(self, parent):
        return self.files.pop(0) if self.files else None

    def open_subtitles(self, parent):
        return self.files.pop(0) if self.files else None

    def save_path(self, parent, title, suggested, file_filter):
        return self.files.pop(0) if self.files else None

    def choose(self, parent, question, options):
        self.choice_questions.append((question, list(options)))
        return self.choices.pop(0) if self.choices else None

    def pick_folder(self, parent, title, start=None):
        return self.folders.pop(0) if self.folders else None


@pytest.fixture(scope="session")
def ui_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_ui_model(tmp_path_factory.mktemp("ui-model"))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VOXDESK_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def open_window(qtbot, model: Path | None, dialogs: ScriptedDialogs, sink: CaptureSink | None = None):
    """A shown MainWindow on the current VOXDESK_HOME; waits until ``model`` is loaded."""
    from ui.main_window import MainWindow
    from ui.settings import Settings

    settings = Settings()
    settings.model_dir = model
    window = MainWindow(settings=settings, dialogs=dialogs, sink=sink or CaptureSink(buffer_seconds=600))
    qtbot.addWidget(window)
    window.show()
    if model is None:
        window.start()
        return window
    window.start()
    # (waitSignal on a cross-thread signal returns before the window's queued slot has run)
    qtbot.waitUntil(lambda: window.model.ready, timeout=30_000)
    return window


def wait_for_imports(qtbot, window) -> None:
    """Wait until the voice panel's worker has imported (or refused) every file given to it and
    the window has handled each result."""
    qtbot.waitUntil(lambda: not window.voices.importing, timeout=60_000)


def played(window) -> np.ndarray:
    """Everything the window sent to its capture sink so far."""
    window.playback.pump()
    sink = window.playback.sink
    sink.drain()
    return sink.captured


class GuiThreadWatcher:
    """Samples the GUI thread's Python stack from another thread every 2 ms. Keeps each sample
    that is inside model, engine-step or torch code (work that belongs on the engine thread), and
    the stack of every stall: a moment the GUI thread has not answered its 10 ms timer for 100 ms."""

    HEAVY = ("/app/models/", "/app/engine/scheduler.py", "/torch/")  # app/models/: the families' runners
    # The reference-length guide counts a segment's tokens on the GUI thread on purpose: the
    # tokenizer is Rust and takes microseconds a sentence; the frames around it are still checked.
    LIGHT = ("/app/models/voxcpm/tokenizer.py",)
    STALL = 0.100

    def __init__(self, last_ping: list[float] | None = None, heavy: tuple[str, ...] | None = None) -> None:
        # ``heavy``: other work to look for, as "path part" or "path part:function name"
        self.heavy = heavy or self.HEAVY
        self.samples: list[str] = []
        self.stalls: list[str] = []
        self._last_ping = last_ping or [float("inf")]  # without a timer: no stalls to find
        self._main = threading.main_thread().ident
        self._running = True
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        stalled_since = None
        while self._running:
            time.sleep(0.002)
            frame = sys._current_frames().get(self._main)
            late = time.perf_counter() - self._last_ping[0]
            if late > self.STALL and stalled_since != self._last_ping[0] and frame is not None:
                stalled_since = self._last_ping[0]
                where = "".join(traceback.format_stack(frame)[-8:])
                self.stalls.append(f"GUI thread late {late * 1000:.0f} ms in:\n{where}")
            while frame is not None:
                name = frame.f_code.co_filename.replace("\\", "/")
                where = f"{name}:{frame.f_code.co_name}"
                if not name.endswith(self.LIGHT) and any(part in where for part in self.heavy):
                    self.samples.append(f"{name}:{frame.f_lineno}")
                    break
                frame = frame.f_back

    def stop(self) -> list[str]:
        self._running = False
        self._thread.join()
        return self.samples


class HoldAfterFirstAudio:
    """Holds the window's engine once a step has produced audio, until :meth:`release` or the
    ``with`` block's end (whichever is first; a failing test never leaves the engine held): a
    test that stops a run mid-way then knows the run is mid-way however late a busy GUI thread
    handles the first chunk (20 tiny sentences finish ~0.5 s after the first one)."""

    def __init__(self, window) -> None:
        from app.engine.events import AudioChunk

        self.engine = window.client.host._engine
        self.step, self.released = self.engine.step, threading.Event()

        def held():
            events = self.step()
            if any(isinstance(e, AudioChunk) for e in events) and not self.released.is_set():
                self.engine.step = self.hold
            return events

        self.engine.step = held

    def hold(self):
        self.released.wait()
        return self.step()

    def release(self) -> None:
        self.engine.step = self.step
        self.released.set()

    def __enter__(self) -> HoldAfterFirstAudio:
        return self

    def __exit__(self, *exc) -> None:
        self.release()
