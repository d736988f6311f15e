"""VAE-encoded voices, kept per content hash so a voice is encoded once per engine."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections import OrderedDict

import numpy as np
import torch

from app.models.voxcpm.model import VoxCPM
from app.models.voxcpm.prompt import VoicePrompt

log = logging.getLogger(__name__)


class VoiceCache:
    """LRU of ``(audio bytes, padding) -> latent patches [n, P, D]`` (float32, host)."""

    def __init__(self, model: VoxCPM, size: int) -> None:
        self.model = model
        self.size = size
        self.entries: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self.hits = self.misses = 0

    def latents(self, audio: np.ndarray, padding: str) -> np.ndarray:
        wav = np.ascontiguousarray(audio, dtype=np.float32).reshape(-1)
        # every request with a voice recording hashes it here, on the engine thread: SHA-256 (hardware
        # accelerated on current CPUs) over the array's own memory is ~4x blake2b over a copy
        digest = hashlib.sha256(padding.encode())
        digest.update(memoryview(wav))
        key = digest.digest()
        if key in self.entries:
            self.hits += 1
            self.entries.move_to_end(key)
            return self.entries[key]
        self.misses += 1
        with torch.inference_mode():
            lat = self.model.encode_audio(torch.from_numpy(wav).unsqueeze(0), padding)[0].cpu().numpy()
        self.entries[key] = lat
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)
        return lat

    def resolve(self, voice: VoicePrompt | None) -> VoicePrompt | None:
        """``voice`` with its audio replaced by (cached) latents; empty audio is left for the
        prompt builder to reject with its own message."""
        if voice is None:
            return None
        changes = {}
        prompt, ref = voice.prompt_audio, voice.reference_audio
        if prompt is not None and np.size(prompt) and not self._usable(voice.prompt_latents, "prompt"):
            changes.update(prompt_latents=self.latents(prompt, "left"), prompt_audio=None)
        if ref is not None and np.size(ref) and not self._usable(voice.reference_latents, "reference"):
            changes.update(reference_latents=self.latents(ref, "right"), reference_audio=None)
        return dataclasses.replace(voice, **changes) if changes else voice

    def _usable(self, latents: np.ndarray | None, role: str) -> bool:
        """False for no latents, and for cached ones that do not fit this model (wrong shape, not
        finite): with the audio they came from at hand, those are encoded again."""
        if latents is None:
            return False
        shape = (self.model.patch_size, self.model.feat_dim)
        arr = np.asarray(latents)
        if arr.ndim == 3 and arr.shape[0] > 0 and arr.shape[1:] == shape and np.isfinite(arr).all():
            return True
        log.warning("Cached %s latents %s do not fit the model; encoding the voice again", role, arr.shape)
        return False
