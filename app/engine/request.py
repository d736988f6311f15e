"""What a caller asks the engine for: one utterance, with its own voice, seed and settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.audio.stretch import check_rate
from app.engine.settings import check_settings
from app.errors import VoxDeskError

if TYPE_CHECKING:
    from app.engine.voice import VoicePrompt


@dataclass(frozen=True)
class SynthRequest:
    text: str
    voice: VoicePrompt | None = None
    seed: int | None = None  # None: a random seed, reported back in RequestFinished
    cfg_value: float = 2.0
    inference_timesteps: int = 10
    min_len: int = 2
    max_len: int = 4096  # patches; the official cap 6*len(tokens)+10 also applies
    retry_badcase: bool = True  # the official retry: a take of 6 patches per token is drawn again
    normalize: bool = False  # numbers, dates, money... spelled out (app/text/normalize.py) first
    # speaking rate 0.5-2.0: the family's own control where it has one (``native_speed``),
    # otherwise the engine time-stretches the stream (app/audio/stretch.py)
    speed: float = 1.0
    lora: str | None = None  # an official-format LoRA folder (app/models/voxcpm/lora.py) to speak with
    # how to speak, in words (CosyVoice's instruct2: "用四川话说这句话", "Speak cheerfully"); families
    # without the "instruction" control refuse a non-empty one (app/engine/family.py)
    instruction: str = ""
    # CosyVoice: the official chunked flow + vocoder schedule (first audio after ~25 tokens);
    # False runs them once when the LM ends (the official non-streaming call). VoxCPM streams
    # patch by patch either way.
    stream: bool = True

    def check(self) -> None:
        """Raise :class:`VoxDeskError` for settings no model can honour."""
        if not self.text.strip():
            raise VoxDeskError("There is no text to speak: type some text and try again.")
        check_settings(
            cfg=self.cfg_value,
            timesteps=self.inference_timesteps,
            min_len=self.min_len,
            max_len=self.max_len,
            seed=self.seed,
        )
        check_rate(self.speed)
