"""Speech tokens → audio for one LM run: the official ``token2wav`` schedule of both families.

The official ``CosyVoice2Model.tts`` (cosyvoice/cli/model.py:328 at ace7c47) feeds the flow and
the vocoder as tokens arrive. What it does, and what :class:`TokenStream` reproduces:

- **Non-streaming**: when the LM ends, the flow runs over every token (``finalize``), the mel is
  resampled for ``speed`` (``F.interpolate(mel, size=int(T / speed), mode='linear')``), then
  vocoded once.
- **Streaming**: a chunk is due when ``hop + pre_lookahead_len`` (3) tokens past the offset
  exist; the first hop is padded so the prompt plus it is a multiple of the hop
  (``prompt_token_pad``). The flow runs (streaming masks, ``finalize=False``) over every token
  up to that point, look-ahead included, and the frames past ``offset * 2`` are new. The hop
  starts at 25 and doubles after each chunk up to 100. When the LM ends, the rest goes through
  the flow with full attention (the official last call passes no ``stream``) and ``finalize``.
- CosyVoice2 (``token2wav`` :292): the vocoder keeps an 8-frame mel cache and a 3840-sample
  source cache between chunks, cross-fades 3840 samples with a Hamming window (``fade_in_out``)
  and holds the last 3840 samples back until the next chunk.
- CosyVoice3 (``token2wav`` :425): the whole mel so far is vocoded again at each chunk
  (``finalize=False`` drops the causal tail) and only the samples past ``speech_offset`` are
  new.
- CosyVoice3 drops a silent token that follows five in a row from what the flow gets
  (``llm_job`` :122-127, list at :423); the LM has conditioned on it all the same.

The official code keeps the hop **on the model object**: a second streaming call starts where
the first one's doubling stopped (100), not at 25. VoxDesk keeps it per request
(:class:`Hop`, shared by the pieces of one long text, which the official speaks in one call on
one model), so a request streams the same whatever came before it; the goldens hold each
model's first streaming call, which starts at 25 in both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch
import torch.nn.functional as F

from app.errors import VoxDeskError

PRE_LOOKAHEAD = 3  # flow.pre_lookahead_len in both yamls
TOKEN_MEL_RATIO = 2  # mel frames per speech token
HOP_START, HOP_MAX, HOP_SCALE = 25, 100, 2  # token_hop_len, token_max_hop_len, stream_scale_factor
MEL_CACHE = 8  # CosyVoice2's vocoder overlap, in mel frames
SOURCE_CACHE = MEL_CACHE * 480  # ... and in samples (480 per frame at 24 kHz)
SILENT_V3 = frozenset({1, 2, 28, 29, 55, 248, 494, 2241, 2242, 2322, 2323})
MAX_SILENT = 5
INVALID = "The model produced invalid audio: try another seed or voice."


class Flow(Protocol):
    def inference(
        self,
        token: torch.Tensor,
        token_len: torch.Tensor,
        prompt_token: torch.Tensor,
        prompt_token_len: torch.Tensor,
        prompt_feat: torch.Tensor,
        prompt_feat_len: torch.Tensor,
        embedding: torch.Tensor,
        streaming: bool,
        finalize: bool,
    ) -> torch.Tensor: ...


class Vocoder(Protocol):
    def inference(
        self,
        speech_feat: torch.Tensor,
        cache_source: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
        finalize: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor]: ...


@dataclass(frozen=True)
class Voice:
    """What the flow conditions on: the prompt's speech tokens ``[1, S]`` (long), its mel
    ``[1, 2S, 80]`` and the speaker embedding ``[1, 192]``, on the model's device."""

    tokens: torch.Tensor
    feat: torch.Tensor
    embedding: torch.Tensor


@dataclass
class Hop:
    """The streaming hop of one request: 25 tokens, doubled after each chunk up to 100."""

    tokens: int = HOP_START

    def grow(self) -> None:
        self.tokens = min(HOP_MAX, self.tokens * HOP_SCALE)


@dataclass
class TokenStream:
    """The flow and vocoder side of one LM run (one piece of a request's text).

    :meth:`push` takes each new speech token and returns the audio of a chunk when one is due
    (streaming), else an empty array; :meth:`finish` runs the rest once the LM has stopped.
    ``generator`` is what CosyVoice2's vocoder draws its per-call random numbers from.
    """

    family: str
    flow: Flow
    hift: Vocoder
    voice: Voice
    streaming: bool = False
    speed: float = 1.0
    hop: Hop = field(default_factory=Hop)
    generator: torch.Generator | None = None
    tokens: list[int] = field(default_factory=list)  # what the flow gets (v3: silence capped)
    offset: int = 0  # tokens already turned into audio
    silent_run: int = 0
    _pad: int = -1  # prompt_token_pad, fixed when the stream starts
    _mel: torch.Tensor | None = None  # v2: the last 8 frames; v3: the whole mel so far
    _source: torch.Tensor | None = None  # v2: the vocoder's source tail
    _tail: torch.Tensor | None = None  # v2: the held-back samples to cross-fade
    _sent: int = 0  # v3: samples of the whole-mel vocoding already returned

    def __post_init__(self) -> None:
        prompt = self.voice.tokens.shape[1]
        self._pad = math.ceil(prompt / self.hop.tokens) * self.hop.tokens - prompt

    def push(self, token: int) -> np.ndarray:
        if self.family == "cosyvoice3" and token in SILENT_V3:
            self.silent_run += 1
            if self.silent_run > MAX_SILENT:
                return _EMPTY
        else:
            self.silent_run = 0
        self.tokens.append(token)
        if not self.streaming:
            return _EMPTY
        pieces = []
        while True:
            hop = self.hop.tokens + (self._pad if self.offset == 0 else 0)
            if len(self.tokens) - self.offset < hop + PRE_LOOKAHEAD:
                break
            pieces.append(self._token2wav(self.offset + hop + PRE_LOOKAHEAD, streaming=True, finalize=False))
            self.offset += hop
            self.hop.grow()
        return np.concatenate(pieces) if pieces else _EMPTY

    def finish(self) -> np.ndarray:
        """The audio of everything not yet returned (the LM has stopped)."""
        if not self.tokens:
            return _EMPTY
        return self._token2wav(len(self.tokens), streaming=False, finalize=True)

    @torch.inference_mode()
    def _token2wav(self, upto: int, streaming: bool, finalize: bool) -> np.ndarray:
        v, dev = self.voice, self.voice.tokens.device
        token = torch.tensor([self.tokens[:upto]], dtype=torch.long, device=dev)
        mel = self.flow.inference(
            token=token,
            token_len=torch.tensor([upto], device=dev),
            prompt_token=v.tokens,
            prompt_token_len=torch.tensor([v.tokens.shape[1]], device=dev),
            prompt_feat=v.feat,
            prompt_feat_len=torch.tensor([v.feat.shape[1]], device=dev),
            embedding=v.embedding,
            streaming=streaming,
            finalize=finalize,
        )[:, :, self.offset * TOKEN_MEL_RATIO :].float()
        if not bool(torch.isfinite(mel).all()):
            raise VoxDeskError(INVALID)
        vocode = self._vocode_v2 if self.family == "cosyvoice2" else self._vocode_v3
        audio = vocode(mel, finalize)
        return audio[0].cpu().numpy().astype(np.float32, copy=False)

    def _resample(self, mel: torch.Tensor) -> torch.Tensor:
        if self.speed == 1.0:
            return mel
        return F.interpolate(mel, size=int(mel.shape[2] / self.speed), mode="linear")

    def _vocode_v2(self, mel: torch.Tensor, finalize: bool) -> torch.Tensor:
        cached = self._mel is not None
        if cached:
            mel = torch.cat([self._mel, mel], dim=2)
        elif finalize:
            mel = self._resample(mel)  # speed: non-streaming only, as the official asserts
        speech, source = self.hift.inference(mel, cache_source=self._source, generator=self.generator)
        if cached:
            speech = fade_in_out(speech, self._tail)
        if finalize:
            return speech
        self._mel = mel[:, :, -MEL_CACHE:]
        self._source = source[:, :, -SOURCE_CACHE:]
        self._tail = speech[:, -SOURCE_CACHE:]
        return speech[:, :-SOURCE_CACHE]

    def _vocode_v3(self, mel: torch.Tensor, finalize: bool) -> torch.Tensor:
        self._mel = mel if self._mel is None else torch.cat([self._mel, mel], dim=2)
        speech, _ = self.hift.inference(self._resample(self._mel), finalize=finalize)
        new = speech[:, self._sent :]
        self._sent += new.shape[1]
        return new


_EMPTY = np.zeros(0, np.float32)
_WINDOW = np.hamming(2 * SOURCE_CACHE)


def fade_in_out(speech: torch.Tensor, tail: torch.Tensor) -> torch.Tensor:
    """Cross-fade the first ``SOURCE_CACHE`` samples of ``speech`` with the held-back ``tail``
    (the two halves of a Hamming window, in float64 as the official numpy window computes)."""
    n = SOURCE_CACHE
    w = torch.from_numpy(_WINDOW).to(speech.device)
    out = speech.clone()
    out[..., :n] = (speech[..., :n] * w[:n] + tail[..., -n:] * w[n:]).to(speech.dtype)
    return out
