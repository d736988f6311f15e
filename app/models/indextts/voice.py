"""What one speaker clip gives IndexTTS-2.5, and the request's emotion control as the GPT's ``emovec``.

:class:`Voice` is everything the official ``infer_generator`` derives from the speaker clip
(``infer_v2_5.py`` 620-660): the w2v-BERT features of the clip through torchaudio's resampler
(``spk_cond_emb``), the CAMPPlus ``style``, the S2Mel prompt mel (``ref_mel``) and the length
regulator's ``prompt_condition`` of the features stretched to that mel, plus the features of the
clip resampled by soxr straight to 16 kHz (``emo_feats``), which plain cloning uses as its emotion
clip (docs/indextts_plan.md finding 7). It is built once per clip; a runner caches it per voice.

The emotion (:class:`Emotion`) becomes ``emovec`` [1, d] in the official order (604-680, 757-768):

1. text: QwenEmotion reads the emotion text (the spoken text when none is given) into 8 weights,
   drawing from the request's generator (:func:`emotion_weights`);
2. a vector (given or read): α clamped to [0, 1] and applied to the weights (``scale_vector``);
   a clip is then ignored and the speaker clip is the emotion clip at α 1;
3. the emotion clip's features (the speaker clip's ``emo_feats`` unless a clip is given);
4. ``merge(spk_cond_emb, emotion features, α)``; with weights,
   ``Σ w_k·row_k + (1 − Σ w)·merge`` over the matrix rows nearest to the voice's style.

The official code also draws LayerDrop numbers from the global generator in each w2v-BERT call
(:mod:`app.models.indextts.semantic`): :data:`VOICE_CALLS` for a new voice and one for a new
emotion clip; :func:`skip_draws` keeps a generator in step with it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import torch

from app.engine.request import EmotionControl, check_vector
from app.models.indextts.audio_in import campplus_fbank, load_emotion, load_prompt, ref_mel
from app.models.indextts.emotion import scale_vector
from app.models.indextts.models import IndexModels

T = TypeVar("T")
# the cache entries of a voice, in the order of the fields (app/voices/latents.py's INDEXTTS)
ENTRIES = ("ix_spk_cond_emb", "ix_emo_feats", "ix_style", "ix_ref_mel", "ix_prompt_condition")
VOICE_CALLS = 2  # get_emb runs twice on a new speaker clip (spk_cond_emb, and S_ref, never used)


@dataclass(frozen=True, eq=False)
class Voice:
    """The conditions of one speaker clip (tensors on the models' device)."""

    spk_cond_emb: torch.Tensor  # [1, T, 1024] w2v-BERT features of the torchaudio 16 kHz clip
    emo_feats: torch.Tensor  # [1, T', 1024] of the soxr 16 kHz clip: plain cloning's emotion clip
    style: torch.Tensor  # [1, 192] CAMPPlus
    ref_mel: torch.Tensor  # [1, 80, Tp] the S2Mel prompt mel
    prompt_condition: torch.Tensor  # [1, Tp, C] the length regulator's output for the prompt

    @classmethod
    @torch.inference_mode()
    def from_audio(cls, models: IndexModels, samples: np.ndarray, sample_rate: int) -> Voice:
        """The conditions of a speaker clip (float samples [n] or [n, channels] at ``sample_rate``)."""
        clip = load_prompt(samples, sample_rate)
        device = models.device
        spk = models.semantic.features(clip.audio_16k)
        mel = ref_mel(clip.audio_22k, models.config.tree).to(device)
        style = models.campplus(campplus_fbank(clip.audio_16k).unsqueeze(0).to(device))
        prompt = models.regulator(spk, torch.tensor([mel.shape[-1]], device=device))
        return cls(spk, models.semantic.features(clip.emo_16k), style, mel, prompt)

    def entries(self) -> dict[str, np.ndarray]:
        """The conditions as the voice library's cache entries (app/voices/latents.py, float32)."""
        arrays = (self.spk_cond_emb[0], self.emo_feats[0], self.style[0], self.ref_mel[0].T,
                  self.prompt_condition[0])  # fmt: skip
        return {name: t.float().cpu().numpy() for name, t in zip(ENTRIES, arrays, strict=True)}

    @classmethod
    def from_entries(cls, entries: Mapping[str, np.ndarray] | None, device: torch.device) -> Voice | None:
        """The conditions from :meth:`entries` (exactly those floats), or None unless every entry is
        there and their shapes agree (the caller computes the voice again)."""
        if not entries or any(name not in entries for name in ENTRIES):
            return None
        spk, emo, style, mel, prompt = (torch.from_numpy(np.asarray(entries[n], np.float32)) for n in ENTRIES)
        if spk.ndim != 2 or emo.ndim != 2 or style.ndim != 1 or mel.ndim != 2 or prompt.ndim != 2:
            return None
        if mel.shape[0] != prompt.shape[0]:
            return None
        return cls(*(t.unsqueeze(0).to(device) for t in (spk, emo, style, mel.T.contiguous(), prompt)))


@dataclass(frozen=True, eq=False)
class Emotion:
    """A request's emotion control: plain (the voice's own), a clip at ``alpha``, 8 weights, or a
    text read by QwenEmotion (``text`` None: the spoken text). Build it with the class methods."""

    kind: str = "plain"
    clip: np.ndarray | None = None
    clip_rate: int = 0
    weights: tuple[float, ...] | None = None
    text: str | None = None
    alpha: float = 1.0

    @classmethod
    def plain(cls) -> Emotion:
        return cls()

    @classmethod
    def from_clip(cls, samples: np.ndarray, sample_rate: int, alpha: float = 1.0) -> Emotion:
        return cls("clip", clip=np.asarray(samples), clip_rate=sample_rate, alpha=float(alpha))

    @classmethod
    def from_vector(cls, values: Sequence[float], alpha: float = 1.0) -> Emotion:
        """8 weights (happy, angry, sad, afraid, disgusted, melancholic, surprised, calm), checked."""
        return cls("vector", weights=tuple(check_vector(values)), alpha=float(alpha))

    @classmethod
    def from_text(cls, text: str | None = None, alpha: float = 1.0) -> Emotion:
        return cls("text", text=text, alpha=float(alpha))

    @classmethod
    def of(cls, control: EmotionControl | None) -> Emotion:
        """A request's emotion control (checked by the request) as the model's: its weight is the
        official ``emo_alpha``; a description of "" reads the spoken text."""
        if control is None:
            return cls.plain()
        if control.kind == "clip":
            return cls.from_clip(control.clip, control.clip_rate, control.weight)
        if control.kind == "vector":
            return cls.from_vector(control.vector or (), control.weight)
        return cls.from_text(control.text or None, control.weight)


def skip_draws(generator: torch.Generator, calls: int, models: IndexModels) -> None:
    """Advance ``generator`` as ``calls`` official w2v-BERT calls advance the global one."""
    for _ in range(calls * models.semantic.official_draws):
        torch.rand([], generator=generator)


def _on_global(generator: torch.Generator, fn: Callable[[str], T], arg: str) -> T:
    """``fn(arg)`` with torch's global CPU generator standing for ``generator`` (left where the
    global one ends; the global one is restored): QwenEmotion's ``generate`` samples from the global
    generator, as the official call does."""
    with torch.random.fork_rng(devices=[]):
        torch.set_rng_state(generator.get_state())
        out = fn(arg)
        generator.set_state(torch.get_rng_state())
    return out


def emotion_weights(models: IndexModels, emotion: Emotion, spoken: str,
                    generator: torch.Generator) -> list[float] | None:  # fmt: skip
    """Steps 1-2: the weights the matrices mix (None for plain and clip), α applied."""
    if emotion.kind == "text":
        qwen = models.require_qwen()
        text = spoken if emotion.text is None else emotion.text
        return scale_vector(_on_global(generator, qwen.vector, text), emotion.alpha)
    if emotion.kind == "vector":
        models.require_matrices()
        return scale_vector(emotion.weights or (), emotion.alpha)
    return None


@torch.inference_mode()
def emotion_features(models: IndexModels, voice: Voice, emotion: Emotion) -> torch.Tensor:
    """Step 3: the emotion clip's w2v-BERT features (a given clip only for the clip control)."""
    if emotion.kind == "clip" and emotion.clip is not None:
        return models.semantic.features(load_emotion(emotion.clip, emotion.clip_rate))
    return voice.emo_feats


@torch.inference_mode()
def emovec(models: IndexModels, voice: Voice, emotion: Emotion, weights: list[float] | None,
           emo_feats: torch.Tensor) -> torch.Tensor:  # fmt: skip
    """Step 4: ``emovec`` [1, d] for the GPT's conditioning."""
    alpha = emotion.alpha if emotion.kind == "clip" else 1.0
    merged = models.emotion.merge(voice.spk_cond_emb, emo_feats, alpha)
    if weights is None:
        return merged
    return models.require_matrices().mix(weights, voice.style, merged)
