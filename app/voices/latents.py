"""Per-voice, per-model cache of prompt latents, so a voice is VAE-encoded once per model.

Files live in ``<voice folder>/latents/<model>-<content hash>-<role>.npy`` (``np.save`` with
``allow_pickle=False``; read back the same way, so a cache file can never run code). The content
hash changes when the voice is trimmed or its gain changes, so stale latents are never used;
:func:`prune` removes them. ``model_id`` is whatever identifies the weights to the caller (e.g.
``"openbmb/VoxCPM2"`` or a checkpoint folder's name plus a hash).
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import numpy as np

from app import atomic
from app.voices.library import Voice, VoiceLibrary

ROLES = ("prompt", "reference")


def _file(library: VoiceLibrary, voice: Voice, model_id: str, role: str) -> Path:
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id).strip("._") or "model"
    return library.folder(voice) / "latents" / f"{safe}-{voice.content_hash}-{role}.npy"


def load(library: VoiceLibrary, voice: Voice, model_id: str, role: str) -> np.ndarray | None:
    """Cached latents, or None when absent; a damaged cache file is deleted and treated as absent."""
    path = _file(library, voice, model_id, role)
    try:
        array = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return array if array.dtype == np.float32 else array.astype(np.float32)


def store(library: VoiceLibrary, voice: Voice, model_id: str, role: str, latents: np.ndarray) -> Path:
    """Save latents ([n_patches, P, D] float32) atomically; returns the file written."""
    path = _file(library, voice, model_id, role)
    array = np.ascontiguousarray(latents, dtype=np.float32)
    atomic.write_with(path, lambda f: np.save(f, array, allow_pickle=False))
    return path


def prune(library: VoiceLibrary, voice: Voice) -> int:
    """Delete cached latents of older versions of this voice (other trims/gains); returns the count."""
    folder = library.folder(voice) / "latents"
    removed = 0
    for path in folder.glob("*.npy"):
        if f"-{voice.content_hash}-" not in path.name:
            with contextlib.suppress(OSError):
                path.unlink()
                removed += 1
    return removed
