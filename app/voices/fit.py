"""How much of a voice recording a model can use for a script, known before anything runs.

A request's prefill holds the voice's latent patches, the text's tokens and a few special tokens;
the speech it generates takes one position per patch after that. All of it must fit in the
model's positions (``max_length`` / ``max_position_embeddings``). The voice's share is fixed by
its length, so the longest segment of the script decides how long the recording may be.

A family whose voice is a conditioning of fixed size (``ModelLimits.fixed_conditioning``:
IndexTTS-2.5's speaker style and emotion rows, three positions whatever the recording's length) and
which splits long text into segments that fit by itself binds nothing ahead by its positions: it
uses the recording up to where it cuts it (``max_voice_seconds``), whatever the script.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

# Speech is estimated at ~14 characters per second of English (ui/progress.py learns the real
# rate during a run; before the first run this is all there is).
SECONDS_PER_CHAR = 0.07


@dataclass(frozen=True)
class ModelLimits:
    """The facts of a loaded model that decide what fits."""

    max_positions: int
    encoder_rate: int  # prompt audio rate
    encoder_samples_per_patch: int  # prompt audio samples per latent patch
    output_patches_per_second: float  # generated patches per second of speech
    count_tokens: Callable[[str], int]
    # the longest recording the family takes at all (CosyVoice's speech tokenizer: 30 s); None: no cap
    max_voice_seconds: float | None = None
    # True: the recording becomes a few positions whatever its length and the family splits long text
    # into segments that fit (IndexTTS-2.5), so only max_voice_seconds (where it cuts the recording,
    # which it then needs) limits what is used, and no script misfits
    fixed_conditioning: bool = False

    def __post_init__(self) -> None:
        if self.fixed_conditioning and self.max_voice_seconds is None:
            raise ValueError("a fixed conditioning needs max_voice_seconds: where the recording is cut")

    def voice_patches(self, seconds: float) -> int:
        samples = int(round(seconds * self.encoder_rate))
        return math.ceil(samples / self.encoder_samples_per_patch) if samples > 0 else 0

    def seconds_of(self, patches: int) -> float:
        return max(0, patches) * self.encoder_samples_per_patch / self.encoder_rate

    def speech_patches(self, text: str) -> int:
        """The expected length of ``text`` spoken, in patches: ~14 characters a second, never
        more than the official cap the engine applies (6 patches per text token, plus 10)."""
        from app.models.voxcpm.prompt import LENGTH_RATIO

        estimate = math.ceil(len(text) * SECONDS_PER_CHAR * self.output_patches_per_second)
        return min(estimate, int(self.count_tokens(text) * LENGTH_RATIO + 10))


def voice_copies(mode: str) -> int:
    """How many times the recording's patches go into the prefill in this mode."""
    return 2 if mode == "both" else 1


def segment_need(limits: ModelLimits, text: str, mode: str, transcript: str = "") -> int:
    """Positions a segment needs apart from the voice's patches: its tokens (after the voice's
    transcript in continuation), the special tokens, and its expected speech."""
    specials = 1  # audio start
    if mode in ("reference", "both"):
        specials += 2  # reference start / end
    words = (transcript if mode in ("continuation", "both") else "") + text
    return limits.count_tokens(words) + specials + limits.speech_patches(text)


def usable_seconds(limits: ModelLimits, texts: list[str], mode: str, transcript: str = "") -> float:
    """The longest recording with which every segment of ``texts`` still fits (0: none does)."""
    if limits.fixed_conditioning and limits.max_voice_seconds is not None:  # (always set: __post_init__)
        return limits.max_voice_seconds
    if not texts:
        texts = [""]
    need = max(segment_need(limits, t, mode, transcript) for t in texts)
    room = (limits.max_positions - need) // voice_copies(mode)
    seconds = limits.seconds_of(room)
    return seconds if limits.max_voice_seconds is None else min(seconds, limits.max_voice_seconds)


def misfits(
    limits: ModelLimits, texts: list[str], voice_seconds: float, mode: str, transcript: str = ""
) -> list[int]:
    """Indices of ``texts`` that cannot be spoken in full with a recording this long."""
    if limits.fixed_conditioning:
        return []
    voice = limits.voice_patches(voice_seconds) * voice_copies(mode)
    return [
        i
        for i, t in enumerate(texts)
        if voice + segment_need(limits, t, mode, transcript) > limits.max_positions
    ]
