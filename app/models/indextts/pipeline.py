"""What the IndexTTS runner asks of the rest of the pipeline: a request's conditioning before the
GPT, and a segment's audio after it (the runner's seams), and those seams over the loaded models.

:func:`parts_from` wraps :class:`~.models.IndexModels` the way :func:`~.reference.synthesize` runs
them, so a request through the engine draws from its generator in the reference's (the official)
order: QwenEmotion's sampling for emotion text, the voice's w2v-BERT calls
(:data:`~.voice.VOICE_CALLS`, then the emotion clip's), then per segment the GPT's beams and the
S2Mel noise. The request's controls ride in it: ``emotion`` (clip, vector or text, with its weight)
becomes the conditioning's ``emovec``, ``speed`` the segments' duration factor ``1 / speed``.
A segment's samples are the official float wav (int16 scale) over 32767, followed by
the official 200 ms of silence unless it is the last.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import torch

from app.engine.request import SynthRequest
from app.errors import VoxDeskError
from app.models.indextts.beam import BeamParams
from app.models.indextts.decoder import PEAK, decode_segment, silence_samples
from app.models.indextts.gpt import UnifiedGPT
from app.models.indextts.models import IndexModels
from app.models.indextts.text import TextFrontend
from app.models.indextts.voice import (
    VOICE_CALLS,
    Emotion,
    Voice,
    emotion_features,
    emotion_weights,
    emovec,
    skip_draws,
)

NO_VOICE = "IndexTTS-2.5 speaks in the voice of a recording: choose a voice first."
SEGMENT_TOKENS = 120  # the official max_text_tokens_per_segment
VOICE_RATE = 22050  # a voice's audio when its rate is not given (the family's voice_rate)


@dataclass
class Conditioning:
    """What the GPT conditions a request on, and what the decoder needs of its voice."""

    style: torch.Tensor  # [1, 192] CAMPPlus speaker style
    emovec: torch.Tensor  # [1, d] emotion vector
    voice: Any = None  # the decoder's per-voice data (:class:`~.voice.Voice`)
    duration_factor: float = 1.0  # the request's 1 / speed: its segments' length (the official argument)


class Conditioner(Protocol):
    """A request's conditioning, drawing what the official code draws before the GPT (QwenEmotion's
    sampling, w2v-BERT's LayerDrop numbers) from ``generator``, the request's CPU generator."""

    def __call__(self, request: SynthRequest, generator: torch.Generator) -> Conditioning: ...


class SegmentDecoder(Protocol):
    """A segment's codes → its audio (float32 mono in [-1, 1]) for the request's conditioning
    ``cond`` (its voice, its duration factor), drawing its noise from the request's ``generator``;
    ``last``: no segment follows (no silence after it)."""

    def __call__(
        self, codes: list[int], cond: Conditioning, generator: torch.Generator, last: bool
    ) -> np.ndarray: ...


@dataclass
class Parts:
    """The runner's seams, the GPT (loaded) and the decoding settings."""

    conditioner: Conditioner
    decoder: SegmentDecoder
    gpt: UnifiedGPT
    params: BeamParams = field(default_factory=BeamParams)
    segment_tokens: int = SEGMENT_TOKENS
    frontend: TextFrontend | None = None  # None: the runner reads the folder's
    voices: VoiceCache | None = None  # the speaker clips' conditions kept (parts_from's)
    emotion_text: bool = False  # the conditioner reads emotion descriptions (the folder has QwenEmotion)


class VoiceCache:
    """The conditions of the newest ``size`` speaker clips, by content: a voice's w2v-BERT,
    CAMPPlus and reference mel are computed once per engine (what the official ``infer`` keeps for
    a repeated prompt path), or taken from the voice library's cache entries
    (:meth:`Voice.entries`). The draws a new clip makes are the caller's (:func:`skip_draws`), so
    the audio never depends on where the conditions came from."""

    def __init__(self, models: IndexModels, size: int) -> None:
        self.models, self.size = models, max(1, size)
        self._voices: OrderedDict[bytes, Voice] = OrderedDict()

    def resolve(self, prompt: Any) -> tuple[Voice, dict[str, np.ndarray]]:
        """The conditions of a ``VoicePrompt``'s clip (the reference, else the prompt audio) and the
        cache entries newly computed (empty when kept here or given in ``prompt.features``)."""
        audio = None
        if prompt is not None:
            audio = prompt.reference_audio if prompt.reference_audio is not None else prompt.prompt_audio
        if audio is None:
            raise VoxDeskError(NO_VOICE)
        samples = np.ascontiguousarray(audio, np.float32)
        rate = prompt.sample_rate or VOICE_RATE
        key = hashlib.blake2b(samples.tobytes() + str((samples.shape, rate)).encode(), digest_size=16)
        key = key.digest()
        voice, entries = self._voices.pop(key, None), {}
        if voice is None:
            voice = Voice.from_entries(prompt.features, self.models.device)
        if voice is None:
            voice = Voice.from_audio(self.models, samples, rate)
            entries = voice.entries()
        self._voices[key] = voice
        while len(self._voices) > self.size:
            self._voices.popitem(last=False)
        return voice, entries

    def __len__(self) -> int:
        return len(self._voices)


def parts_from(models: IndexModels, params: BeamParams | None = None, segment_tokens: int = SEGMENT_TOKENS,
               voices: int = 32) -> Parts:  # fmt: skip
    """The runner's parts over ``models``: each request with its own emotion control
    (``request.emotion``, :meth:`Emotion.of`) and duration factor (``1 / request.speed``); the
    newest ``voices`` speaker clips' conditions are kept."""
    cache = VoiceCache(models, voices)

    def conditioner(request: SynthRequest, generator: torch.Generator) -> Conditioning:
        if request.voice is None:
            raise VoxDeskError(NO_VOICE)
        emotion = Emotion.of(request.emotion)
        weights = emotion_weights(models, emotion, request.text, generator)  # QwenEmotion draws first
        clip, _entries = cache.resolve(request.voice)
        skip_draws(generator, VOICE_CALLS, models)  # the speaker clip's calls
        emo_feats = emotion_features(models, clip, emotion)
        skip_draws(generator, 1, models)  # then the emotion clip's
        vec = emovec(models, clip, emotion, weights, emo_feats)
        return Conditioning(clip.style, vec, clip, 1.0 / request.speed)

    def decoder(codes: list[int], cond: Conditioning, generator: torch.Generator, last: bool) -> np.ndarray:
        wav = decode_segment(models, cond.voice, codes, generator, cond.duration_factor)
        samples = (wav / PEAK).float().cpu().numpy()
        if last:
            return samples
        return np.concatenate([samples, np.zeros(silence_samples(), np.float32)])

    return Parts(conditioner, decoder, models.gpt, params or BeamParams(), segment_tokens, models.text, cache,
                 emotion_text=models.qwen is not None)
