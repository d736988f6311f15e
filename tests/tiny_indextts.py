"""A tiny random IndexTTS-2.5 folder (the official layout, app/models/indextts/checkpoint.py).

Session fixture ``tiny_ix`` (indextts25-tiny, seed 0), written once per test session (about 65 MB,
a few seconds). Import it into a test file with ``from tiny_indextts import tiny_ix  # noqa: F401``.
The text vocabulary, the w2v-BERT and the QwenEmotion folders are in it once their parts
(text.py, semantic.py, qwen_emotion.py) are merged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.models.indextts.checkpoint import write_folder


@pytest.fixture(scope="session")
def tiny_ix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny IndexTTS-2.5 folder; tests must not change it (copy what they alter)."""
    return write_folder(tmp_path_factory.mktemp("tiny-ix"))
