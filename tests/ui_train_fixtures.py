"""Shared steps of the training-wizard tests: a window with a tiny model that trains on real
clip lengths, the tiny recognizer and a voice to train; recordings of tones the tiny recognizer
hears as words; and the wizard walked page by page as a user would (on this CPU-only machine:
the explicit CPU choice)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch
from tiny import write_tiny_checkpoint
from tiny_asr import tone_words, write_tiny_sensevoice
from ui_fixtures import ScriptedDialogs, open_window, wait_for_imports, write_voice_file

from app.asr import catalog
from app.models.voxcpm.audio_vae import AudioVAE, AudioVAEConfig

LONG_WORDS = 150  # 0.9 s a word: about 2:15 of speech, above the 2:00 minimum
# The real VoxCPM2 audio VAE's strides (25 latent frames a second, 48 kHz out). The stock tiny
# VAE makes 1,000 a second: a 14 s training clip would be 14,000 positions.
VAE_RATES = {"encoder_rates": [2, 5, 8, 8], "decoder_rates": [8, 6, 5, 2, 2, 2], "decoder_dim": 64}


def write_train_model(folder: Path) -> Path:
    """The tiny VoxCPM2 checkpoint with the real VAE strides (small widths, random weights)."""
    model = write_tiny_checkpoint(folder, "voxcpm2")
    config = json.loads((model / "config.json").read_text())
    config["audio_vae_config"].update(VAE_RATES)
    (model / "config.json").write_text(json.dumps(config))
    torch.manual_seed(0)
    vae = AudioVAE(AudioVAEConfig.from_dict(config["audio_vae_config"], 2))
    torch.save({"state_dict": vae.state_dict()}, model / "audiovae.pth")
    return model


@pytest.fixture(scope="session")
def prepared_data(tmp_path_factory: pytest.TempPathFactory, tiny_asr: Path) -> Path:
    """A data set prepared once from a long recording (sliced and transcribed by the real code),
    copied into a run by :func:`open_prepared` so each training test does not prepare it again."""
    from app.asr import load_recognizer
    from app.train.clips import DataSet

    folder = tmp_path_factory.mktemp("prepared") / "data"
    dataset = DataSet.create(folder)
    dataset.add_sources([write_recording(folder.parent / "reading.wav", LONG_WORDS)])
    dataset.transcribe(load_recognizer(tiny_asr))
    return folder


@pytest.fixture(scope="session")
def train_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_train_model(tmp_path_factory.mktemp("train-model"))


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


def open_prepared(qtbot, window, prepared: Path):
    """Train this voice… on a voice whose recordings were prepared before (a run left on the
    recordings page: the wizard takes it up again), and on to its recordings page."""
    from ui.train import runs

    voice = window.voices.selected()
    run = runs.new_run(voice.id, voice.name)
    shutil.copytree(prepared, run.data_dir)
    wizard = open_wizard(qtbot, window)
    assert wizard.run == run and wizard.dataset.speech_seconds() >= 120
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
