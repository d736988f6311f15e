"""A voice as CosyVoice conditions on it: the prompt's speech tokens, speaker embedding and mel.

The frontend (speech tokenizer, CAM++ embedding, the 24 kHz mel: :mod:`.frontend`) costs more
than a short LM run on a CPU, so each engine keeps the last few voices it encoded, and the
features travel back to the voice library as named cache entries (``VoicePrompt.features``)
so a voice is encoded once per model, across sessions.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from app.errors import VoxDeskError

KEYS = ("cv_speech_tokens", "cv_embedding", "cv_prompt_feat")
MIN_SECONDS = 0.2  # under this the speech tokenizer yields (almost) nothing to clone
MAX_SECONDS = 30.0  # the official speech tokenizer refuses longer audio
NO_VOICE = (
    "CosyVoice speaks with a voice: give prompt audio with its transcript, or reference audio "
    "(any language)."
)


@dataclass(frozen=True)
class Features:
    speech_tokens: np.ndarray  # int64 [S]
    embedding: np.ndarray  # float32 [192]
    prompt_feat: np.ndarray  # float32 [2S, 80]

    def entries(self) -> dict[str, np.ndarray]:
        """As ``VoicePrompt.features`` holds them (the library keeps them per model)."""
        return dict(zip(KEYS, (self.speech_tokens, self.embedding, self.prompt_feat), strict=True))

    @classmethod
    def from_entries(cls, entries: dict[str, np.ndarray] | None) -> Features | None:
        """The cached features, or None when an entry is missing or malformed (encoded anew)."""
        if not entries or any(k not in entries for k in KEYS):
            return None
        tokens, emb, feat = (np.asarray(entries[k]) for k in KEYS)
        ok = (
            tokens.ndim == 1
            and tokens.size > 0
            and np.issubdtype(tokens.dtype, np.integer)
            and emb.shape == (192,)
            and feat.ndim == 2
            and feat.shape[1] == 80
            and feat.shape[0] == 2 * tokens.size
        )
        if not ok:
            return None
        return cls(tokens.astype(np.int64), emb.astype(np.float32), feat.astype(np.float32))


def voice_audio(voice: Any, default_rate: int) -> tuple[np.ndarray, int]:
    """The clip to clone from (the prompt, else the reference) and its rate; one plain line
    when there is none or it cannot be used."""
    audio = voice.prompt_audio if voice.prompt_audio is not None else voice.reference_audio
    if audio is None:
        raise VoxDeskError(NO_VOICE)
    rate = int(voice.sample_rate or default_rate)
    audio = np.asarray(audio, dtype=np.float32)
    if audio.ndim == 2:  # (samples, channels) as soundfile reads it: mean over channels
        audio = audio.mean(axis=1)
    seconds = audio.size / rate if rate > 0 else 0.0
    if audio.ndim != 1 or not np.isfinite(audio).all() or not np.abs(audio).max(initial=0.0) > 0:
        raise VoxDeskError("The voice audio is empty, silent or damaged: record or pick another clip.")
    if seconds < MIN_SECONDS:
        raise VoxDeskError("The voice audio is too short to clone: use a clip of 3 to 10 seconds.")
    if seconds > MAX_SECONDS:
        raise VoxDeskError("The voice audio is longer than 30 seconds: trim it to 3-10 seconds.")
    return audio, rate


class VoiceFeatureCache:
    """The features of the last ``size`` voice clips this engine encoded, by their content."""

    def __init__(self, frontend: Any, default_rate: int, size: int = 32) -> None:
        self.frontend = frontend
        self.default_rate = default_rate
        self.size = size
        self._items: OrderedDict[bytes, Features] = OrderedDict()

    def resolve(self, voice: Any) -> tuple[Features, dict[str, np.ndarray]]:
        """The voice's features, and the entries newly computed (empty when they were cached)."""
        if voice is None:
            raise VoxDeskError(NO_VOICE)
        cached = Features.from_entries(voice.features)
        if cached is not None:
            return cached, {}
        audio, rate = voice_audio(voice, self.default_rate)
        key = hashlib.blake2b(audio.tobytes() + rate.to_bytes(4, "little"), digest_size=16).digest()
        feats = self._items.get(key)
        if feats is None:
            vf = self.frontend.voice_features(audio, rate)
            feats = Features(
                np.asarray(vf.speech_tokens, np.int64),
                np.asarray(vf.embedding, np.float32).reshape(-1),
                np.asarray(vf.prompt_feat, np.float32),
            )
            if feats.speech_tokens.size == 0:
                raise VoxDeskError("No speech was found in the voice audio: pick a clip with speech.")
            self._items[key] = feats
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        self._items.move_to_end(key)
        return feats, feats.entries()


def with_features(voice: Any, entries: dict[str, np.ndarray]) -> Any:
    """``voice`` carrying ``entries`` in its ``features`` (the library stores them)."""
    merged = dict(voice.features or {})
    merged.update(entries)
    return replace(voice, features=merged)
