"""CosyVoice's token sampling, draw for draw the official one, on a generator per request.

The official ``ras_sampling`` (cosyvoice/utils/common.py, repetition-aware sampling from VALL-E 2)
draws from torch's global generator. Here each request has its own CPU ``torch.Generator``
and makes the same draws, in the same order, from tensors of the same sizes and values, so a
request seeded like ``set_all_random_seed(seed)`` gets the official tokens on the CPU:

1. ``ignore_eos`` (fewer tokens than the minimum so far): the score of id ``speech_token_size``
   becomes -inf. That is CosyVoice2's eos but CosyVoice3's *sos*, so the minimum blocks none of
   CosyVoice3's stop ids and only one of CosyVoice2's three (llm.py ``sampling_ids``).
2. Nucleus: softmax, stable descending sort, keep entries while their running float32 sum is
   below ``top_p`` and fewer than ``top_k`` are kept; one ``multinomial`` draw over the kept,
   unnormalised probabilities.
3. If that id is among the last ``win_size`` decoded ids at least ``win_size * tau_r`` times,
   its score becomes -inf and one ``multinomial`` draw over the softmax of the whole row picks
   again.

On a GPU the batch's softmax and sort run on the device and only the top ``top_k`` entries of
each row come to the host, in one copy per step; the rare repeat fallback copies its row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from app.models.cosyvoice.config import CosyVoiceConfig


@dataclass(frozen=True)
class SamplingParams:
    """The yaml's ``ras_sampling`` keywords and llm.py ``inference``'s length ratios."""

    top_p: float = 0.8
    top_k: int = 25
    win_size: int = 10
    tau_r: float = 0.1
    speech_token_size: int = 6561  # the id ``ignore_eos`` masks
    min_token_text_ratio: float = 2
    max_token_text_ratio: float = 20

    @classmethod
    def from_config(cls, cfg: CosyVoiceConfig) -> SamplingParams:
        s = cfg.sampling
        return cls(
            top_p=float(s.get("top_p", cls.top_p)),
            top_k=int(s.get("top_k", cls.top_k)),
            win_size=int(s.get("win_size", cls.win_size)),
            tau_r=float(s.get("tau_r", cls.tau_r)),
            speech_token_size=cfg.speech_token_size,
        )

    def length_bounds(self, text_len: int) -> tuple[int, int]:
        return length_bounds(text_len, self)


def length_bounds(text_len: int, params: SamplingParams = SamplingParams()) -> tuple[int, int]:
    """(min, max) speech tokens for ``text_len`` text ids being spoken (the prompt text not
    counted): ``ignore_eos`` while fewer than min are decoded; a run ends after max."""
    return int(text_len * params.min_token_text_ratio), int(text_len * params.max_token_text_ratio)


def _nucleus(values: np.ndarray, ids: np.ndarray, params: SamplingParams, generator: torch.Generator) -> int:
    """Step 2 on one row's sorted top entries (float32 probabilities and their ids)."""
    top_p = np.float32(params.top_p)
    kept, total = 0, np.float32(0.0)
    for v in values[: params.top_k]:
        if kept and not total < top_p:  # the official sum starts as 0.0, below any top_p > 0
            break
        total = np.float32(total + v)
        kept += 1
    prob = torch.from_numpy(values[:kept].copy())
    return int(ids[int(prob.multinomial(1, replacement=True, generator=generator))])


def _fallback(scores: torch.Tensor, first: int, generator: torch.Generator) -> int:
    """Step 3: ``scores`` (one row, already eos-masked when asked) without ``first``."""
    row = scores.detach().to("cpu", torch.float32, copy=True)
    row[first] = -float("inf")
    return int(row.softmax(dim=0).multinomial(1, replacement=True, generator=generator))


def _repeats(decoded: Sequence[int], token: int, params: SamplingParams) -> bool:
    recent = decoded[-params.win_size :]
    return sum(1 for t in recent if t == token) >= params.win_size * params.tau_r


def sample_batch(
    logp: torch.Tensor,
    decoded: Sequence[Sequence[int]],
    generators: Sequence[torch.Generator],
    ignore_eos: Sequence[bool],
    params: SamplingParams,
) -> list[int]:
    """One token per row of ``logp [B, V]``: row ``b`` with ``decoded[b]`` (its tokens so far),
    its CPU ``generators[b]`` and ``ignore_eos[b]``; the same as :func:`sample_row` per row."""
    scores = logp.float()
    masked = [b for b, flag in enumerate(ignore_eos) if flag]
    if masked:
        scores = scores.clone()
        scores[masked, params.speech_token_size] = -float("inf")
    values, ids = scores.softmax(dim=-1).sort(dim=-1, descending=True, stable=True)
    k = min(params.top_k, scores.shape[-1])
    top = torch.stack([values[:, :k], ids[:, :k].to(torch.float32)]).cpu().numpy()  # one copy
    out = []
    for b in range(scores.shape[0]):
        token = _nucleus(top[0, b], top[1, b].astype(np.int64), params, generators[b])
        if _repeats(decoded[b], token, params):
            token = _fallback(scores[b], token, generators[b])
        out.append(token)
    return out


def sample_row(
    logp: torch.Tensor,
    decoded: Sequence[int],
    generator: torch.Generator,
    ignore_eos: bool,
    params: SamplingParams,
) -> int:
    """The official ``sampling_ids`` + ``ras_sampling`` for one row ``logp [V]``."""
    return sample_batch(logp[None], [decoded], [generator], [ignore_eos], params)[0]
