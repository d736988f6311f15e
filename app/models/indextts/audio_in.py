"""A prompt clip to the samples and features IndexTTS-2.5 conditions on, as the official code makes them.

The official ``infer_v2_5.py`` reads the clips twice over, through two resamplers
(docs/indextts_plan.md finding 7):

- the speaker clip: ``librosa.load(path)`` (channel mean, soxr in its HQ mode to librosa's default
  22 050 Hz), cut at 15 s, then torchaudio's ``Resample(22050, 16000)`` (windowed sinc) for w2v-BERT
  and the CAMPPlus fbank: :attr:`PromptAudio.audio_22k` and :attr:`PromptAudio.audio_16k`;
- the emotion clip: ``librosa.load(path, sr=16000)`` (soxr HQ straight to 16 kHz), cut at 15 s:
  :func:`load_emotion`. Plain cloning uses the speaker clip as emotion clip, so the same samples
  reach w2v-BERT twice, through the two resamplers: :attr:`PromptAudio.emo_16k`.

Then :func:`ref_mel` (the S2Mel prompt mel of the 22 050 Hz clip, ``s2mel/modules/audio.py``
with the official ``fmax`` reading) and :func:`campplus_fbank` (Kaldi fbank minus its mean).
The signal processing is CosyVoice's (:mod:`app.models.cosyvoice.features`, held to torchaudio,
librosa and matcha by its tests) and :func:`app.audio.io.resample` (librosa's soxr call and length).

A clip is cut to its first 16 s before resampling (the result's first 15 s are those of the
whole clip up to float rounding; a long recording is not resampled for nothing). Odd input
gets one plain line: NaN or infinity, under 0.1 s (Kaldi's fbank needs a whole frame and
CAMPPlus a few), a rate outside 1-384 kHz, or an array that is not [n] or [n, channels]. Silence
gives the official code's (finite) result.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from app.audio.io import MAX_RATE, MIN_RATE, resample
from app.errors import VoxDeskError
from app.models.cosyvoice.features import kaldi_fbank, matcha_mel
from app.models.cosyvoice.features import resample as sinc_resample
from app.models.indextts.config import IndexConfig, _Refused, parse_config

SPEAKER_RATE = 22050  # librosa.load's default rate
FEATURE_RATE = 16000  # w2v-BERT and CAMPPlus
MAX_SECONDS = 15.0  # infer_v2_5.py _load_and_cut_audio(..., 15)
MIN_SECONDS = 0.1
_MARGIN = 1.0  # seconds kept past the cut before resampling: far more than soxr's filter reaches


@dataclass(frozen=True)
class PromptAudio:
    """One speaker clip as the official code holds it: float32 mono, each cut at 15 s.

    ``audio_22k``: soxr HQ to 22 050 Hz; ``audio_16k``: that, through torchaudio's sinc resampler
    to 16 kHz (w2v-BERT's speaker features, CAMPPlus); ``emo_16k``: soxr HQ straight to 16 kHz
    (the emotion features when no other emotion clip is given)."""

    audio_22k: np.ndarray
    audio_16k: np.ndarray
    emo_16k: np.ndarray


def _mono(samples: np.ndarray, sample_rate: int, what: str) -> np.ndarray:
    """``samples`` [n] or [n, channels] as float32 mono (librosa's channel mean), checked, and
    cut to the part the official code can reach (before anything is computed on the rest)."""
    if not isinstance(sample_rate, (int, np.integer)) or not MIN_RATE <= sample_rate <= MAX_RATE:
        raise VoxDeskError(f"The {what} has a sample rate of {sample_rate} Hz; IndexTTS reads "
                           f"{MIN_RATE:,}-{MAX_RATE:,} Hz: export it at 16, 24, 44.1 or 48 kHz.")  # fmt: skip
    data = np.asarray(samples)
    if data.ndim not in (1, 2):
        raise VoxDeskError(f"The {what} is not mono or multi-channel audio: choose a sound file.")
    data = data[: math.ceil((MAX_SECONDS + _MARGIN) * sample_rate)].astype(np.float32, copy=False)
    if data.ndim == 2:
        data = data.mean(axis=1, dtype=np.float32) if data.shape[1] > 1 else data[:, 0]
    if data.size < MIN_SECONDS * sample_rate:
        raise VoxDeskError(f"The {what} is shorter than {MIN_SECONDS} s: choose a few seconds of speech.")
    if not np.isfinite(data).all():
        raise VoxDeskError(f"The {what} holds invalid samples (NaN or infinity): choose another file.")
    return np.ascontiguousarray(data)


def _soxr_cut(data: np.ndarray, sample_rate: int, rate: int) -> np.ndarray:
    """librosa.load(sr=rate) of the clip, then the official 15 s cut."""
    out = resample(data, sample_rate, rate)[: int(MAX_SECONDS * rate)]
    return np.ascontiguousarray(out, dtype=np.float32)


def load_emotion(samples: np.ndarray, sample_rate: int) -> np.ndarray:
    """An emotion clip as the official ``_load_and_cut_audio(path, 15, sr=16000)`` reads it:
    float32 mono 16 kHz, at most 15 s."""
    return _soxr_cut(_mono(samples, sample_rate, "emotion clip"), sample_rate, FEATURE_RATE)


def load_prompt(samples: np.ndarray, sample_rate: int) -> PromptAudio:
    """A speaker clip (float samples [n] or [n, channels] at ``sample_rate``) as :class:`PromptAudio`."""
    data = _mono(samples, sample_rate, "voice clip")
    audio_22k = _soxr_cut(data, sample_rate, SPEAKER_RATE)
    audio_16k = sinc_resample(torch.from_numpy(audio_22k), SPEAKER_RATE, FEATURE_RATE).numpy()
    return PromptAudio(audio_22k, audio_16k, _soxr_cut(data, sample_rate, FEATURE_RATE))


def _as_tensor(audio: np.ndarray | torch.Tensor) -> torch.Tensor:
    if isinstance(audio, torch.Tensor):
        return audio.float()
    return torch.from_numpy(np.asarray(audio, np.float32))


def ref_mel(audio_22k: np.ndarray | torch.Tensor, tree: Mapping[str, Any] | IndexConfig) -> torch.Tensor:
    """The S2Mel prompt mel [1, n_mels, frames] of the 22 050 Hz clip: the official ``mel_fn`` with
    the settings :attr:`IndexConfig.mel` reads from ``tree`` (``fmax`` quirk included); a tree
    that config.py refuses gets its one line."""
    try:
        cfg = tree if isinstance(tree, IndexConfig) else parse_config(copy.deepcopy(dict(tree)))
    except _Refused as exc:
        raise VoxDeskError(f"config.yaml: {exc}. Download the model folder again.") from None
    settings = {k: v for k, v in cfg.mel.items() if k != "center"}  # matcha_mel never centres
    return matcha_mel(_as_tensor(audio_22k).reshape(1, -1), **settings)


def campplus_fbank(audio_16k: np.ndarray | torch.Tensor) -> torch.Tensor:
    """Kaldi's 80-bin fbank [frames, 80] of the 16 kHz clip minus its mean over frames: CAMPPlus's input."""
    feat = kaldi_fbank(_as_tensor(audio_16k).reshape(-1))
    return feat - feat.mean(dim=0, keepdim=True)
