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


@dataclass(frozen=True)
class FlowJob:
    """One flow call of a stream: tokens ``[:upto]``, frames kept from ``offset * 2``."""

    upto: int
    offset: int
    streaming: bool  # chunk attention masks (every chunk but the last)
    finalize: bool

    @property
    def frames(self) -> int:
        """Mel frames the flow returns past the prompt (the look-ahead tokens give none)."""
        return TOKEN_MEL_RATIO * (self.upto - (0 if self.finalize else PRE_LOOKAHEAD))


@dataclass
class TokenStream:
    """The flow and vocoder side of one LM run (one piece of a request's text).

    :meth:`push` records each new speech token and says whether a streaming chunk is due;
    :meth:`job` is the flow call due next (``final``: the LM has stopped) and :meth:`take` turns
    that call's mel into the audio not yet returned. :func:`run_flow` runs the jobs of several
    streams as one batched flow call. ``generator`` is what CosyVoice2's vocoder draws its
    per-call random numbers from.
    """

    family: str
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

    def push(self, token: int) -> bool:
        """Record ``token`` (CosyVoice3 drops a silent one after five in a row); a chunk is due."""
        if self.family == "cosyvoice3" and token in SILENT_V3:
            self.silent_run += 1
            if self.silent_run > MAX_SILENT:
                return self.due()
        else:
            self.silent_run = 0
        self.tokens.append(token)
        return self.due()

    def _hop(self) -> int:
        return self.hop.tokens + (self._pad if self.offset == 0 else 0)

    def due(self) -> bool:
        return self.streaming and len(self.tokens) - self.offset >= self._hop() + PRE_LOOKAHEAD

    def job(self, final: bool) -> FlowJob | None:
        """The next flow call: the due chunk, or (``final``) the rest; None when nothing is left."""
        if not final:
            return FlowJob(self.offset + self._hop() + PRE_LOOKAHEAD, self.offset, True, False)
        if not self.tokens:
            return None
        return FlowJob(len(self.tokens), self.offset, False, True)

    @torch.inference_mode()
    def take(self, job: FlowJob, mel: torch.Tensor) -> np.ndarray:
        """The audio of ``job`` from the flow's mel ``[1, 80, job.frames - 2 * offset]``."""
        if not bool(torch.isfinite(mel).all()):
            raise VoxDeskError(INVALID)
        vocode = self._vocode_v2 if self.family == "cosyvoice2" else self._vocode_v3
        audio = vocode(mel.float(), job.finalize)
        if not job.finalize:
            self.offset += self._hop()
            self.hop.grow()
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


_WINDOW = np.hamming(2 * SOURCE_CACHE)


def fade_in_out(speech: torch.Tensor, tail: torch.Tensor) -> torch.Tensor:
    """Cross-fade the first ``SOURCE_CACHE`` samples of ``speech`` with the held-back ``tail``
    (the two halves of a Hamming window, in float64 as the official numpy window computes)."""
    n = SOURCE_CACHE
    w = torch.from_numpy(_WINDOW).to(speech.device)
    out = speech.clone()
    out[..., :n] = (speech[..., :n] * w[:n] + tail[..., -n:] * w[n:]).to(speech.dtype)
    return out


@torch.inference_mode()
def run_flow(flow: Flow, work: list[tuple[TokenStream, FlowJob]]) -> list[torch.Tensor]:
    """Each job's new mel ``[1, 80, T]``, the jobs with the same masks and ``finalize`` run as
    one batched flow call (rows padded; the flow masks each row to its own lengths)."""
    out: list[torch.Tensor | None] = [None] * len(work)
    groups: dict[tuple[bool, bool], list[int]] = {}
    for i, (_, job) in enumerate(work):
        groups.setdefault((job.streaming, job.finalize), []).append(i)
    for (streaming, finalize), rows in groups.items():
        streams = [work[i][0] for i in rows]
        jobs = [work[i][1] for i in rows]
        voices = [s.voice for s in streams]
        dev = voices[0].tokens.device
        token = [torch.tensor(s.tokens[: j.upto]) for s, j in zip(streams, jobs, strict=True)]
        mel = flow.inference(
            token=_pad_rows(token, dev),
            token_len=torch.tensor([j.upto for j in jobs], device=dev),
            prompt_token=_pad_rows([v.tokens[0] for v in voices], dev),
            prompt_token_len=torch.tensor([v.tokens.shape[1] for v in voices], device=dev),
            prompt_feat=_pad_rows([v.feat[0] for v in voices], dev),
            prompt_feat_len=torch.tensor([v.feat.shape[1] for v in voices], device=dev),
            embedding=torch.cat([v.embedding for v in voices]),
            streaming=streaming,
            finalize=finalize,
        )
        for b, (i, job) in enumerate(zip(rows, jobs, strict=True)):
            out[i] = mel[b : b + 1, :, job.offset * TOKEN_MEL_RATIO : job.frames]
    return out  # type: ignore[return-value]


def _pad_rows(rows: list[torch.Tensor], device: torch.device) -> torch.Tensor:
    """Rows of different lengths (dim 0) right-padded with zeros into one batch."""
    n = max(r.shape[0] for r in rows)
    out = torch.zeros((len(rows), n, *rows[0].shape[1:]), dtype=rows[0].dtype, device=device)
    for b, r in enumerate(rows):
        out[b, : r.shape[0]] = r
    return out
