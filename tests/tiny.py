"""Tiny random VoxCPM checkpoints for every test file of the project.

The session fixtures ``tiny_v1`` and ``tiny_v2`` (written once per test session, in the
official file format) are registered for every test file by ``conftest.py``
(``pytest_plugins = ["tiny"]``), so just name them::

    def test_something(tiny_v2):       # a pathlib.Path to the model folder
        ...

or call :func:`write_tiny_checkpoint` for a private copy (e.g. to damage it).
A step of either tiny model takes about a millisecond on a CPU.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.models.voxcpm.checkpoint import write_checkpoint

ARCH_PRESETS = {"voxcpm2": "tiny-v2", "voxcpm": "tiny-v1"}


def write_tiny_checkpoint(
    directory: str | Path, arch: str = "voxcpm2", dtype: str = "float32", seed: int = 0
) -> Path:
    """Write a tiny checkpoint of ``arch`` ("voxcpm2" or "voxcpm") into ``directory``."""
    return write_checkpoint(directory, ARCH_PRESETS[arch], seed=seed, dtype=dtype)


def set_stop_head(model_dir: str | Path, stop: str) -> Path:
    """Rewrite the stop head of a written checkpoint so it never (``"never"``) or always
    (``"always"``: the first step past ``min_len``) votes to stop; every take then has a known
    length, which is what the bad-case retry tests need."""
    from safetensors.torch import load_file, save_file

    path = Path(model_dir) / "model.safetensors"
    weights = load_file(str(path))
    proj_w, proj_b, head = weights["stop_proj.weight"], weights["stop_proj.bias"], weights["stop_head.weight"]
    head.zero_()  # logits tie at 0: argmax picks "go on"
    if stop == "always":
        proj_w.zero_()
        proj_b.fill_(1.0)  # silu(1) > 0 in every unit, so logit 1 > logit 0
        head[1] = 1.0
    elif stop != "never":
        raise ValueError(stop)
    save_file(weights, str(path), metadata={"format": "pt"})
    return Path(model_dir)


def tone(n_samples: int, sample_rate: int = 16000, freq: float = 220.0, seed: int = 0) -> np.ndarray:
    """A float32 test signal: a sine plus a little noise (never silent)."""
    t = np.arange(n_samples) / sample_rate
    noise = np.random.default_rng(seed).standard_normal(n_samples)
    return (0.3 * np.sin(2 * np.pi * freq * t) + 0.05 * noise).astype(np.float32)


@pytest.fixture(scope="session")
def tiny_v2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny VoxCPM2 checkpoint (fp32)."""
    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny-v2"), "voxcpm2")


@pytest.fixture(scope="session")
def tiny_v1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny VoxCPM1 (0.5B/1.5 architecture) checkpoint (fp32)."""
    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny-v1"), "voxcpm")
