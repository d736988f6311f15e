"""What a caller asks the engine for: one utterance, with its own voice, seed and settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.errors import VoxDeskError

if TYPE_CHECKING:
    from app.models.voxcpm.prompt import VoicePrompt


@dataclass(frozen=True)
class SynthRequest:
    text: str
    voice: VoicePrompt | None = None
    seed: int | None = None  # None: a random seed, reported back in RequestFinished
    cfg_value: float = 2.0
    inference_timesteps: int = 10
    min_len: int = 2
    max_len: int = 4096  # patches; the official cap 6*len(tokens)+10 also applies

    def check(self) -> None:
        """Raise :class:`VoxDeskError` for settings no model can honour."""
        if not self.text.strip():
            raise VoxDeskError("There is no text to speak: type some text and try again.")
        if not 1 <= self.inference_timesteps <= 100:
            raise VoxDeskError("Quality steps must be between 1 and 100: pick a value in that range.")
        if self.min_len < 0 or self.max_len < 1:
            raise VoxDeskError(
                "The length limits are invalid: use a minimum of 0 or more and a maximum of 1+."
            )
        if self.seed is not None and not 0 <= self.seed < 2**63:
            raise VoxDeskError("The seed must be a whole number from 0 to 2**63-1: pick another seed.")
