"""GPT codes to audio for one IndexTTS-2.5 segment, and the silence between segments.

The official segment tail (``infer_v2_5.py`` 830-860): the semantic codec decodes the codes (two
frames per code), the length regulator stretches them to ``int(frames · 1.72 · duration_factor)``
mel frames (:func:`length_regulator.target_frames`), the voice's prompt condition goes in front,
the CFM solver runs 25 Euler steps with guidance 0.7 from noise drawn on the request's generator
(after the segment's GPT draws), the prompt's frames are cut, BigVGAN speaks the mel, and the
result is ``clamp(32767 · wav, ±32767)`` as float (``infer`` converts to int16 only at the end).
Segments are joined with 200 ms of zeros between them (``insert_interval_silence``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from app.models.indextts.cfm import solve
from app.models.indextts.length_regulator import target_frames
from app.models.indextts.models import IndexModels
from app.models.indextts.voice import Voice

RATE = 22050  # BigVGAN's output rate, as infer_v2_5 hard-codes it
DIFFUSION_STEPS = 25
CFG_RATE = 0.7
INTERVAL_SILENCE_MS = 200
PEAK = 32767.0


@torch.inference_mode()
def decode_segment(models: IndexModels, voice: Voice, codes: Sequence[int], generator: torch.Generator | None,
                   duration_factor: float = 1.0) -> torch.Tensor:  # fmt: skip
    """The float samples [n] (int16 scale, clamped) of one segment's ``codes`` (cut at the stop code)."""
    device = models.device
    semantic = models.codec.decode(torch.tensor([list(codes)], dtype=torch.long, device=device))
    frames = target_frames(semantic.shape[1], duration_factor)
    cond = models.regulator(semantic, torch.tensor([frames], device=device))
    cond = torch.cat([voice.prompt_condition, cond], dim=1)
    mel = solve(models.dit, cond, voice.ref_mel, voice.style, steps=DIFFUSION_STEPS, cfg_rate=CFG_RATE,
                generator=generator)  # fmt: skip
    wav = models.vocoder(mel[:, :, voice.ref_mel.shape[-1] :].float())
    return torch.clamp(PEAK * wav[0], -PEAK, PEAK)


def silence_samples(rate: int = RATE, interval_ms: int = INTERVAL_SILENCE_MS) -> int:
    """Samples of silence between two segments (``int(rate · ms / 1000)``)."""
    return int(rate * interval_ms / 1000.0)


def join(wavs: Sequence[torch.Tensor], rate: int = RATE,
         interval_ms: int = INTERVAL_SILENCE_MS) -> torch.Tensor:  # fmt: skip
    """The segments' samples with the official silence between each two."""
    gap = torch.zeros(silence_samples(rate, interval_ms))
    parts: list[torch.Tensor] = []
    for i, wav in enumerate(wavs):
        if i and interval_ms > 0:
            parts.append(gap.to(wav))
        parts.append(wav)
    return torch.cat(parts) if parts else gap[:0]
