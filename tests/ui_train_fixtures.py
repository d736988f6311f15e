"""Shared steps of the training-wizard tests: a window with the tiny model, the tiny recognizer
and a voice to train; recordings of tones the tiny recognizer hears as words; and the wizard
walked page by page as a user would (on this CPU-only machine: the explicit CPU choice)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf
from tiny_asr import tone_words, write_tiny_sensevoice
from ui_fixtures import ScriptedDialogs, open_window, wait_for_imports, write_voice_file

from app.asr import catalog

LONG_WORDS = 150  # 0.9 s a word: about 2:15 of speech, above the 2:00 minimum


def write_recording(path: Path, words: int, seed: int = 0) -> Path:
    """One long "reading": tones the tiny recognizer hears as words, with pauses between."""
    bands = np.random.default_rng(seed).integers(0, 4, size=words)
    sf.write(str(path), tone_words([int(b) for b in bands]), 16000)
    return path


def train_window(qtbot, model: Path, tmp_path: Path):
    """The window (tiny model loaded, tiny recognizer installed) with the voice "Ada" selected."""
    write_tiny_sensevoice(catalog.default_folder())
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, model, dialogs)
    window.voices.import_files([write_voice_file(tmp_path / "Ada.wav")])
    wait_for_imports(qtbot, window)
    return window, dialogs


def open_wizard(qtbot, window):
    """Train this voice… on the selected voice; past the first page with the explicit CPU choice."""
    window.voices.train_button.click()
    wizard = window.training.wizard
    assert wizard is not None and wizard.isVisible()
    qtbot.waitUntil(lambda: wizard.device_page.found is not None, timeout=30_000)
    wizard.device_page.use_cpu.setChecked(True)
    wizard.next()
    assert wizard.currentPage() is wizard.data_page
    return wizard


def add_recording(qtbot, wizard, dialogs: ScriptedDialogs, path: Path) -> None:
    dialogs.files.append(path)
    wizard.data_page.add_file_button.click()
    qtbot.waitUntil(lambda: not wizard.data_page.running, timeout=60_000)


def start_training(qtbot, wizard, steps: int) -> None:
    """From the data page: Next, the plan sized, ``steps`` steps, Start training."""
    wizard.next()
    assert wizard.currentPage() is wizard.plan_page
    qtbot.waitUntil(lambda: wizard.plan_page.isComplete(), timeout=30_000)
    wizard.plan_page.steps.setValue(steps)
    wizard.next()
    assert wizard.currentPage() is wizard.train_page and wizard.training_running


def wait_stopped(qtbot, wizard, timeout: int = 120_000) -> None:
    qtbot.waitUntil(lambda: not wizard.training_running, timeout=timeout)
