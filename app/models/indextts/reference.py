"""One IndexTTS-2.5 request the official way, in one process, segment by segment: the reference.

:func:`synthesize` does what ``IndexTTS2.infer`` does for a new voice (nothing cached), with one
``torch.Generator`` seeded like ``torch.manual_seed(seed)`` standing in for torch's global generator
and a ``random.Random(seed)`` for Python's (the Japanese text path draws from it): same seed, same
codes and samples as the official ``infer`` after ``random.seed``/``torch.manual_seed`` of that seed
(tests/test_indextts_parity.py). The draws, in the official order: QwenEmotion's sampling (emotion
from text), the w2v-BERT LayerDrop numbers (two calls on the speaker clip, one on the emotion
clip), then per segment the GPT's beam draws (``gpt.generate``) and the CFM noise.

The engine's runner batches the same steps; this single-request path is what it is held to.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import torch

from app.models.indextts.beam import BeamParams
from app.models.indextts.decoder import RATE, decode_segment, join
from app.models.indextts.gpt import generate
from app.models.indextts.models import IndexModels
from app.models.indextts.vocab import language_id
from app.models.indextts.voice import (
    VOICE_CALLS,
    Emotion,
    Voice,
    emotion_features,
    emotion_weights,
    emovec,
    skip_draws,
)


@dataclass(frozen=True)
class Synthesis:
    """What one request gave: the samples (float, int16 scale, segments joined with silence) at
    :attr:`rate`, and per segment the text ids and the GPT codes."""

    wav: torch.Tensor
    segments: list[list[int]]
    codes: list[list[int]]
    rate: int = RATE


def synthesize(
    models: IndexModels,
    text: str,
    lang: str,
    voice_audio: np.ndarray,
    sr: int,
    *,
    emotion: Emotion | None = None,
    duration_factor: float = 1.0,
    seed: int = 0,
    params: BeamParams | None = None,
    max_tokens: int = 120,
    voice: Voice | None = None,
    generator: torch.Generator | None = None,
) -> Synthesis:
    """``text`` in ``lang`` spoken in the voice of ``voice_audio`` (float samples at ``sr``).

    ``voice``: the :class:`Voice` of that clip built before (a cache); the generator is advanced
    as for a new voice all the same, so the result does not depend on it. ``generator``: the
    request's torch generator, left where the official global one is after ``infer`` (default: a
    new one seeded with ``seed``)."""
    emotion = emotion or Emotion.plain()
    params = params or BeamParams()
    generator = generator or torch.Generator().manual_seed(seed)
    rng = random.Random(seed)
    weights = emotion_weights(models, emotion, text, generator)
    voice = voice or Voice.from_audio(models, voice_audio, sr)
    skip_draws(generator, VOICE_CALLS, models)
    emo_feats = emotion_features(models, voice, emotion)
    skip_draws(generator, 1, models)  # the emotion clip's call (the speaker clip's soxr features)
    vec = emovec(models, voice, emotion, weights, emo_feats)
    segments = models.text.segments(text, lang, max_tokens, rng=rng)
    cond = models.gpt.conditioning(voice.style, vec)
    lang_row = language_id(lang)
    codes, wavs = [], []
    for ids in segments:
        seg = generate(models.gpt, cond, ids, lang_row, params, generator)
        codes.append(seg)
        wavs.append(decode_segment(models, voice, seg, generator, duration_factor))
    return Synthesis(join(wavs), segments, codes)
