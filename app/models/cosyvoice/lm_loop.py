"""The speech-token LM alone on a paged KV cache: a batch of requests decoded in lock step.

The official ``inference_wrapper`` for several requests at once, without the engine's scheduler:
what the parity tests and the LM benchmark run, and the reference a runner's decode loop must
agree with. Each request gets consecutive blocks of one :class:`PagedKVCache`; the prefixes are
prefilled in one right-padded batch, then every step feeds each live request its last token.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from app.engine.attention import PagedKVCache, batch_context
from app.models.cosyvoice.lm import CosyLM
from app.models.cosyvoice.sampling import SamplingParams, length_bounds, sample_batch


@dataclass
class LMRequest:
    """One request's LM input: prompt text + text ids, the spoken text's length (the bounds count
    only it), the LM's prompt speech tokens and its own CPU generator."""

    text_ids: torch.Tensor
    text_len: int
    prompt_speech: torch.Tensor
    generator: torch.Generator


@torch.inference_mode()
def generate(
    lm: CosyLM, requests: list[LMRequest], params: SamplingParams, block_size: int = 16
) -> list[list[int]]:
    """Each request's speech tokens (stop id excluded; CosyVoice3's silent tokens not dropped)."""
    param = next(lm.parameters())
    device, dtype = param.device, param.dtype
    prefixes = [lm.prefix_embeds(r.text_ids.to(device), r.prompt_speech.to(device)) for r in requests]
    bounds = [length_bounds(r.text_len, params) for r in requests]
    tables, used = [], 0
    for prefix, (_, max_len) in zip(prefixes, bounds, strict=True):
        blocks = -(-(len(prefix) + max_len) // block_size)
        tables.append(list(range(used, used + blocks)))
        used += blocks
    spec = lm.kv_spec()
    kv = PagedKVCache(spec.num_layers, used, block_size, spec.num_kv_heads, spec.head_dim, dtype, device)
    lengths = [len(p) for p in prefixes]
    width = max(lengths)
    embeds = torch.zeros(len(requests), width, lm.qwen.hidden_size, dtype=dtype, device=device)
    for row, prefix in enumerate(prefixes):
        embeds[row, : len(prefix)] = prefix
    filled = [t[: -(-n // block_size)] for t, n in zip(tables, lengths, strict=True)]
    kv.context, positions = batch_context(filled, [0] * len(requests), lengths, width, block_size,
                                          kv.scratch_block, device)  # fmt: skip
    hidden = lm(embeds, positions, kv)[torch.arange(len(requests)), torch.tensor(lengths) - 1]
    out: list[list[int]] = [[] for _ in requests]
    live = [i for i, (_, max_len) in enumerate(bounds) if max_len > 0]
    hidden = hidden[live]
    while live:
        ignore = [len(out[i]) < bounds[i][0] for i in live]
        tokens = sample_batch(lm.logp(hidden), [out[i] for i in live], [requests[i].generator for i in live],
                              ignore, params)  # fmt: skip
        going = []
        for i, token in zip(live, tokens, strict=True):
            if token in lm.stop_ids:
                continue
            out[i].append(token)
            if len(out[i]) < bounds[i][1]:
                going.append(i)
        live = going
        if not live:
            break
        starts = [lengths[i] + len(out[i]) - 1 for i in live]
        filled = [tables[i][: s // block_size + 1] for i, s in zip(live, starts, strict=True)]
        kv.context, positions = batch_context(filled, starts, [1] * len(live), 1, block_size,
                                              kv.scratch_block, device)  # fmt: skip
        last = torch.tensor([out[i][-1] for i in live], device=device)
        hidden = lm(lm.speech_embeds(last)[:, None], positions, kv)[:, 0]
    return out
