"""Tiny random CosyVoice folders (the official layout, app/models/cosyvoice/checkpoint.py) for the
tests of the faces: the model manager, the voice library, ``voxdesk synth``, the server, the window.

Session fixtures: ``tiny_cv3`` (cosyvoice3-tiny) and ``tiny_cv2`` (cosyvoice2-tiny), written once
per test session (a few seconds each; the 151936-word Qwen vocabulary is most of it). Import them
into a test file with ``from tiny_cosyvoice import tiny_cv3  # noqa: F401``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.models.cosyvoice.checkpoint import write_checkpoint


@pytest.fixture(scope="session")
def tiny_cv3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Fun-CosyVoice3 folder."""
    return write_checkpoint(tmp_path_factory.mktemp("tiny-cv3"), "cosyvoice3-tiny")


@pytest.fixture(scope="session")
def tiny_cv2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny CosyVoice2 folder."""
    return write_checkpoint(tmp_path_factory.mktemp("tiny-cv2"), "cosyvoice2-tiny")
