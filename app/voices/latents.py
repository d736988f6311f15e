"""Per-voice, per-model cache of prompt latents, so a voice is VAE-encoded once per model.

Files live in ``<voice folder>/latents/<model>-<content hash>-<role>.npy`` (``np.save`` with
``allow_pickle=False``; read back the same way, so a cache file can never run code). The content
hash changes when the voice is trimmed or its gain changes, so stale latents are never used;
:func:`prune` removes them. ``model_id`` is whatever identifies the weights to the caller (e.g.
``"openbmb/VoxCPM2"`` or a checkpoint folder's name plus a hash).
"""

from __future__ import annotations

import contextlib
import logging
import re
from pathlib import Path

import numpy as np

from app import atomic
from app.errors import VoxDeskError
from app.voices.library import Voice, VoiceLibrary

ROLES = ("prompt", "reference")
MAX_BYTES = 256 * 2**20  # a minute of prompt is well under 1 MB; anything huge is damage
log = logging.getLogger(__name__)


def _file(library: VoiceLibrary, voice: Voice, model_id: str, role: str) -> Path:
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id).strip("._") or "model"
    folder = library.folder(voice) / "latents"
    if folder.is_symlink():  # never written or read through a link out of the library
        raise VoxDeskError(f"The latent cache {folder} is a link, which VoxDesk does not follow.")
    return folder / f"{safe}-{voice.content_hash}-{role}.npy"


def load(
    library: VoiceLibrary,
    voice: Voice,
    model_id: str,
    role: str,
    shape: tuple[int, int] | None = None,
) -> np.ndarray | None:
    """Cached latents, or None when absent. An entry that cannot be used (unreadable, empty, not
    ``[n, P, D]`` — ``shape`` is ``(P, D)`` when the caller knows it — or not finite) is deleted
    with a line in the log and treated as absent, so the voice is simply encoded again."""
    try:
        path = _file(library, voice, model_id, role)
    except VoxDeskError as err:
        log.warning("Not reading cached latents: %s", err)
        return None
    try:
        if path.stat().st_size > MAX_BYTES:
            raise ValueError(f"{path.stat().st_size} bytes")
        array = np.load(path, allow_pickle=False)
        if not isinstance(array, np.ndarray) or array.ndim != 3 or array.shape[0] == 0:
            raise ValueError(f"shape {getattr(array, 'shape', None)}")
        if shape is not None and tuple(array.shape[1:]) != tuple(shape):
            raise ValueError(f"shape {array.shape}, the model needs [n, {shape[0]}, {shape[1]}]")
        if array.dtype.kind != "f":
            raise ValueError(f"dtype {array.dtype}")
        array = array.astype(np.float32, copy=False)
        if not np.isfinite(array).all():
            raise ValueError("values that are not finite")
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - whatever is wrong with a cache file, it is rebuilt
        log.warning("Discarding the cached latents %s (%s); the voice will be encoded again", path, exc)
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return array


def clear(library: VoiceLibrary, voice: Voice) -> int:
    """Delete every cached latent of ``voice`` (all models): the "Re-encode" action."""
    removed = 0
    for path in (library.folder(voice) / "latents").glob("*.npy"):
        with contextlib.suppress(OSError):
            path.unlink()
            removed += 1
    return removed


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
