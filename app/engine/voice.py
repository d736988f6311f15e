"""Who speaks: one voice as the faces hand it to the engine, whatever the family.

Each family turns it into what it conditions on (VoxCPM: VAE latents; CosyVoice: speech tokens,
a speaker embedding, a prompt mel) in its runner's ``resolve_voice``; the results come back as
named cache entries so a voice is encoded once per model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class VoicePrompt:
    """Who speaks. Audio is mono float32 at the model's encoder rate (config: audio_vae sample_rate)."""

    prompt_audio: np.ndarray | None = None  # continuation: audio whose transcript is prompt_text
    prompt_text: str = ""
    reference_audio: np.ndarray | None = None  # VoxCPM2 reference mode (no transcript needed)
    # Optional cached latents ([n_patches, P, D] float32) so a voice is VAE-encoded once per model.
    prompt_latents: np.ndarray | None = None
    reference_latents: np.ndarray | None = None
    # The rate of prompt_audio/reference_audio when it is not the model's encoder rate (families
    # that resample themselves, as CosyVoice's frontend does from the file's own rate); None: the
    # encoder rate, as before.
    sample_rate: int | None = None
    # Other families' cached conditioning by name (CosyVoice: speech tokens, speaker embedding,
    # prompt mel), filled from and returned to the voice library's per-model cache.
    features: dict[str, np.ndarray] | None = None

    @property
    def has_prompt(self) -> bool:
        return self.prompt_audio is not None or self.prompt_latents is not None

    @property
    def has_reference(self) -> bool:
        return self.reference_audio is not None or self.reference_latents is not None
