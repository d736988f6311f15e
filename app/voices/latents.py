"""Per-voice, per-model cache of what a model conditions on, so a voice is encoded once per model.

Each family keeps its own named entries (:data:`ENTRIES`): VoxCPM the VAE latents of the prompt
and the reference ("prompt", "reference": float [n, P, D]); CosyVoice the speech tokens
("cv_speech_tokens": int [n]), the speaker embedding ("cv_embedding": float [192]) and the prompt
mel ("cv_prompt_feat": float [T, 80]); IndexTTS the speaker clip's conditions (:data:`INDEXTTS`).
Files live in ``<voice folder>/latents/<model>-<content hash>-<name>.npy`` (``np.save`` with
``allow_pickle=False``; read back the same way, so a cache file can never run code), so the
families' entries never mix: ``model_id`` differs per model, and the name per entry. The content
hash changes when the voice is trimmed or its gain changes, so stale entries are never used;
:func:`prune` removes them. ``model_id`` is whatever identifies the weights to the caller (e.g.
``"openbmb/VoxCPM2"`` or a checkpoint folder's name plus a hash).
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app import atomic
from app.errors import VoxDeskError
from app.voices.library import Voice, VoiceLibrary


@dataclass(frozen=True)
class Entry:
    """What a cached array must look like: its kind of number, its rank and its fixed trailing
    sizes (None: any). The first axis is never empty."""

    kind: str  # "f": stored as float32; "i": stored as int64
    ndim: int
    tail: tuple[int | None, ...] = ()


ENTRIES = {
    "prompt": Entry("f", 3),  # VoxCPM: VAE latents [n_patches, P, D]
    "reference": Entry("f", 3),
    "cv_speech_tokens": Entry("i", 1),  # CosyVoice: speech tokens [n]
    "cv_embedding": Entry("f", 1),  # speaker embedding [192]
    "cv_prompt_feat": Entry("f", 2, (80,)),  # prompt mel [T, 80]
    "ix_spk_cond_emb": Entry("f", 2, (1024,)),  # IndexTTS: w2v-BERT features [T, 1024]
    "ix_emo_feats": Entry("f", 2, (1024,)),  # the same of the soxr 16 kHz clip [T', 1024]
    "ix_style": Entry("f", 1),  # CAMPPlus style [192]
    "ix_ref_mel": Entry("f", 2),  # the S2Mel prompt mel [Tp, n_mels]
    "ix_prompt_condition": Entry("f", 2),  # the length regulator's prompt condition [Tp, C]
}
ROLES = ("prompt", "reference")  # VoxCPM's
COSYVOICE = ("cv_speech_tokens", "cv_embedding", "cv_prompt_feat")
INDEXTTS = ("ix_spk_cond_emb", "ix_emo_feats", "ix_style", "ix_ref_mel", "ix_prompt_condition")
FEATURES = COSYVOICE + INDEXTTS  # the families that take a voice's audio at its own rate
MAX_BYTES = 256 * 2**20  # a minute of prompt is well under 1 MB; anything huge is damage
log = logging.getLogger(__name__)


def _file(library: VoiceLibrary, voice: Voice, model_id: str, role: str) -> Path:
    if role not in ENTRIES:
        raise ValueError(f"the cache entry must be one of {tuple(ENTRIES)}, got {role!r}")
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
    shape: tuple[int, ...] | None = None,
) -> np.ndarray | None:
    """The cached entry ``role`` (a name of :data:`ENTRIES`), or None when absent. An entry that
    cannot be used (unreadable, empty, of another rank, trailing sizes or kind of number than its
    :class:`Entry` says — ``shape`` gives the trailing sizes when the caller knows them, e.g.
    VoxCPM's ``(P, D)`` — or not finite) is deleted with a line in the log and treated as absent,
    so the voice is simply encoded again."""
    try:
        path = _file(library, voice, model_id, role)
    except VoxDeskError as err:
        log.warning("Not reading cached latents: %s", err)
        return None
    try:
        if path.stat().st_size > MAX_BYTES:
            raise ValueError(f"{path.stat().st_size} bytes")
        array = _checked(np.load(path, allow_pickle=False), ENTRIES[role], shape)
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - whatever is wrong with a cache file, it is rebuilt
        log.warning("Discarding the cached latents %s (%s); the voice will be encoded again", path, exc)
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return array


def _checked(array: object, entry: Entry, shape: tuple[int, ...] | None) -> np.ndarray:
    """``array`` as float32 / int64 when it is what ``entry`` describes; ValueError otherwise."""
    if not isinstance(array, np.ndarray) or array.ndim != entry.ndim or array.shape[0] == 0:
        raise ValueError(f"shape {getattr(array, 'shape', None)}")
    tail = tuple(shape) if shape is not None else entry.tail
    for have, want in zip(array.shape[1:], tail, strict=False):
        if want is not None and have != want:
            raise ValueError(f"shape {array.shape}, the model needs [n, {', '.join(map(str, tail))}]")
    if entry.kind == "f":
        if array.dtype.kind != "f":
            raise ValueError(f"dtype {array.dtype}")
        array = array.astype(np.float32, copy=False)
        if not np.isfinite(array).all():
            raise ValueError("values that are not finite")
        return array
    if array.dtype.kind not in "iu":
        raise ValueError(f"dtype {array.dtype}")
    return array.astype(np.int64, copy=False)


def load_named(
    library: VoiceLibrary, voice: Voice, model_id: str, names: tuple[str, ...]
) -> dict[str, np.ndarray]:
    """The entries of ``names`` that are cached and usable (the rest are absent from the dict)."""
    found = {name: load(library, voice, model_id, name) for name in names}
    return {name: array for name, array in found.items() if array is not None}


def clear(library: VoiceLibrary, voice: Voice) -> int:
    """Delete every cached latent of ``voice`` (all models): the "Re-encode" action."""
    removed = 0
    for path in (library.folder(voice) / "latents").glob("*.npy"):
        with contextlib.suppress(OSError):
            path.unlink()
            removed += 1
    return removed


def store(library: VoiceLibrary, voice: Voice, model_id: str, role: str, latents: np.ndarray) -> Path:
    """Save the entry ``role`` atomically (checked as :func:`load` checks it: a model's bad output
    is refused with ValueError rather than cached); returns the file written."""
    path = _file(library, voice, model_id, role)
    array = np.ascontiguousarray(_checked(np.asarray(latents), ENTRIES[role], None))
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
