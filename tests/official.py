"""Import the official ``voxcpm`` package (test-only) without its app dependencies.

The official inference path imports ``torchaudio`` (v1 prompt loading) and ``librosa``
(v2 prompt loading) at module level. Neither belongs in VoxDesk's test environment, so they
are replaced here by small modules offering exactly the calls inference makes, implemented
with soundfile and soxr:

- ``librosa.load(path, sr, mono=True)``: channel mean, then soxr in its HQ mode, which is what
  librosa itself does by default (``res_type='soxr_hq'``), then the length fixed to
  ``ceil(n * sr / rate)`` as ``librosa.resample(fix=True)`` does.
- ``torchaudio.load(path)``: ``(Tensor[channels, frames], sample_rate)``.
- ``torchaudio.functional.resample``: not provided; v1 parity tests feed prompts already at the
  VAE rate, where the official code does not resample.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types

import numpy as np


def _module(name: str) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__spec__ = importlib.machinery.ModuleSpec(name, None)
    return mod


def _librosa_load(path, sr=22050, mono=True, **_kwargs):
    import soundfile as sf
    import soxr

    data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    data = data.mean(axis=1) if mono else data.T
    if sr is not None and rate != sr:
        size = int(np.ceil(len(data) * (float(sr) / rate)))  # librosa's fix_length after soxr
        data = soxr.resample(data, rate, sr, quality="HQ").astype(np.float32)
        data = np.pad(data, (0, max(0, size - len(data))))[:size]
        rate = sr
    return data, rate


def _torchaudio_load(path, *_args, **_kwargs):
    import soundfile as sf
    import torch

    data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    return torch.from_numpy(np.ascontiguousarray(data.T)), rate


def _install_stubs() -> None:
    if "librosa" not in sys.modules:
        librosa = _module("librosa")
        librosa.load = _librosa_load
        sys.modules["librosa"] = librosa
    if "torchaudio" not in sys.modules:
        torchaudio = _module("torchaudio")
        torchaudio.load = _torchaudio_load
        torchaudio.functional = _module("torchaudio.functional")
        sys.modules["torchaudio"] = torchaudio
        sys.modules["torchaudio.functional"] = torchaudio.functional


def import_official() -> types.ModuleType:
    """Return the official ``voxcpm`` package.

    README's test command installs it with ``--no-deps``; a missing package fails the parity
    tests rather than skipping them, so parity can never pass unchecked.
    """
    _install_stubs()
    return importlib.import_module("voxcpm")
