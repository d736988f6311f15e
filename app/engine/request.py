"""What a caller asks the engine for: one utterance, with its own voice, seed and settings."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from app.audio.io import MAX_RATE, MIN_RATE, SILENCE_PEAK
from app.audio.stretch import check_rate
from app.engine.settings import check_settings
from app.errors import VoxDeskError

if TYPE_CHECKING:
    from app.engine.voice import VoicePrompt

# IndexTTS-2.5's eight emotions, in the order of its emotion vector (and of its matrices)
EMOTIONS = ("happy", "angry", "sad", "afraid", "disgusted", "melancholic", "surprised", "calm")


def check_vector(values: Sequence[Any]) -> list[float]:
    """8 emotion weights (:data:`EMOTIONS` order) as floats, each from 0 to 1, adding up to at most 1
    (the rest is the voice's own emotion); else one line saying what to change.

    The official ``infer`` checks nothing; this is the rule a user can read off the meaning."""
    if isinstance(values, str | bytes) or len(values) != len(EMOTIONS):
        count = len(values) if not isinstance(values, str | bytes) else "text"
        raise VoxDeskError(f"An emotion vector has {len(EMOTIONS)} weights ({', '.join(EMOTIONS)}); "
                           f"got {count}.")  # fmt: skip
    out = []
    for name, value in zip(EMOTIONS, values, strict=True):
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):  # 10**400 does not fit a float
            number = math.nan
        if isinstance(value, bool) or not 0.0 <= number <= 1.0:
            raise VoxDeskError(f"The {name} weight is {repr(value)[:20]}: each emotion weight is a number "
                               "from 0 to 1.")  # fmt: skip
        out.append(number)
    total = sum(out)
    if total > 1.0 + 1e-6:
        raise VoxDeskError(f"The emotion weights add up to {total:.3g}: keep the total at 1 or less "
                           "(what is left is the voice's own emotion).")  # fmt: skip
    return out


@dataclass(frozen=True, eq=False)
class EmotionControl:
    """How to feel, apart from the voice's timbre (IndexTTS-2.5): exactly one source.

    ``clip``: float32 mono samples of a second recording at ``clip_rate`` (its emotion, not its
    voice); ``vector``: 8 weights in :data:`EMOTIONS` order; ``text``: a sentence describing the
    emotion, read by QwenEmotion ("" = read the spoken text). ``weight``: 0..1, how strongly (the
    official ``emo_alpha``)."""

    clip: np.ndarray | None = None
    clip_rate: int = 0
    vector: tuple[float, ...] | None = None
    text: str | None = None
    weight: float = 1.0

    @property
    def kind(self) -> str:
        """"clip", "vector" or "text" (the first source set; :meth:`check` refuses two)."""
        if self.clip is not None:
            return "clip"
        if self.vector is not None:
            return "vector"
        return "text"

    def check(self) -> None:
        """Raise :class:`VoxDeskError` (one plain line) for a control no model can honour."""
        sources = [name for name, value in (("a recording", self.clip), ("weights", self.vector),
                                            ("a description", self.text)) if value is not None]  # fmt: skip
        if not sources:
            raise VoxDeskError("The emotion has no source: give a recording, 8 weights or a description.")
        if len(sources) > 1:
            raise VoxDeskError(f"The emotion comes from {' and '.join(sources)}: choose one of them.")
        try:
            weight = float(self.weight)
        except (TypeError, ValueError):
            weight = math.nan
        if isinstance(self.weight, bool) or not 0.0 <= weight <= 1.0:
            raise VoxDeskError(f"The emotion weight is {self.weight!r}: use a number from 0 to 1.")
        if self.vector is not None:
            check_vector(self.vector)
        if self.clip is not None:
            _check_clip(self.clip, self.clip_rate)


def _check_clip(clip: np.ndarray, rate: int) -> None:
    if isinstance(rate, bool) or not isinstance(rate, int | np.integer) or not MIN_RATE <= rate <= MAX_RATE:
        raise VoxDeskError(f"The emotion recording's sample rate is {rate!r}: it must be "
                           f"{MIN_RATE:,}-{MAX_RATE:,} Hz.")  # fmt: skip
    data = np.asarray(clip)
    if data.ndim not in (1, 2) or data.size == 0 or not np.issubdtype(data.dtype, np.floating):
        raise VoxDeskError("The emotion recording is not audio samples: choose a sound file.")
    if not np.isfinite(data).all():
        raise VoxDeskError("The emotion recording holds invalid samples (NaN or infinity): choose another.")
    if float(np.abs(data).max()) < SILENCE_PEAK:
        raise VoxDeskError("The emotion recording is silent: choose one in which someone speaks.")


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
    # speaking rate 0.5-2.0: the family's own control where it has one (``native_speed``; IndexTTS:
    # duration_factor 1/speed), otherwise the engine time-stretches the stream (app/audio/stretch.py)
    speed: float = 1.0
    lora: str | None = None  # an official-format LoRA folder (app/models/voxcpm/lora.py) to speak with
    # how to speak, in words (CosyVoice's instruct2: "用四川话说这句话", "Speak cheerfully"); families
    # without the "instruction" control refuse a non-empty one (app/engine/family.py)
    instruction: str = ""
    # CosyVoice: the official chunked flow + vocoder schedule (first audio after ~25 tokens);
    # False runs them once when the LM ends (the official non-streaming call). VoxCPM streams
    # patch by patch either way.
    stream: bool = True
    # how to feel (IndexTTS-2.5); families without the "emotion" control refuse one
    emotion: EmotionControl | None = None
    # the text's language ("" = the family guesses from the text); else one of FamilyInfo.languages
    language: str = ""

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
        if self.emotion is not None:
            self.emotion.check()
