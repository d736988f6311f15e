"""A bench-only stand-in for the two ``flash_attn`` functions the official IndexTTS ``accel``
engine calls (indextts/accel/attention.py), over torch's scaled_dot_product_attention.

flash-attn has no wheel for the benchmark device's torch 2.11 / CUDA 13, and the official accel
engine imports it unconditionally. This shim lets that engine run unchanged so it can be timed
(app/models/indextts/bench_official.py puts this folder on its path with ``--accel``); it is never
shipped or imported by VoxDesk. Semantics follow flash-attn 2's documented ones for what the
engine uses: tensors [tokens, heads, dim], a paged cache [blocks, block_size, heads, dim] with
``block_table`` rows padded by -1, causal masks aligned to the bottom right. The decode function
makes no host synchronisation, so the engine can capture it in a CUDA graph; it gathers the
table's blocks (padding clamped to block 0 and masked out), so it reads more memory than the real
kernel: timings taken with it are an upper bound of the accel engine's.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__version__ = "0.0.0+voxdesk-bench-shim"


def _paged(cache: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """[B, blocks * block_size, H, D]: the rows of each table's blocks, in order."""
    blocks = cache[table.clamp(min=0).long()]  # [B, n, block_size, H, D]
    return blocks.flatten(1, 2)


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, scale: float | None):
    """q [B, Lq, H, D], k/v [B, Lk, H, D], mask [B, 1, Lq, Lk] (True = attend) -> [B, Lq, H, D]."""
    k, v = k.transpose(1, 2).to(q.dtype), v.transpose(1, 2).to(q.dtype)
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k, v, attn_mask=mask, scale=scale)
    return out.transpose(1, 2)


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, cache_seqlens=None, block_table=None,
                            softmax_scale=None, causal=False, **_unused):  # fmt: skip
    """Decode attention: q [B, Lq, H, D] against the first ``cache_seqlens[b]`` cached positions
    of each row (the new token's key and value are already in the cache: ``k``/``v`` unsupported)."""
    if k is not None or v is not None:
        raise NotImplementedError("flash_attn shim: appending k/v in flash_attn_with_kvcache")
    if block_table is None:
        k, v = k_cache, v_cache
    else:
        k, v = _paged(k_cache, block_table), _paged(v_cache, block_table)
    length, lq = k.shape[1], q.shape[1]
    pos = torch.arange(length, device=q.device)
    seqlens = cache_seqlens.to(q.device).long().view(-1, 1, 1)
    limit = seqlens - lq + torch.arange(lq, device=q.device).view(1, -1, 1)  # causal, bottom right
    mask = pos.view(1, 1, -1) <= limit if causal else pos.view(1, 1, -1) < seqlens
    return _attend(q, k, v, mask.unsqueeze(1), softmax_scale)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                           softmax_scale=None, causal=False, block_table=None, **_unused):  # fmt: skip
    """Prefill attention over packed sequences: q [total_q, H, D]; k/v [total_k, H, D], or the
    paged cache when ``block_table`` is given. One SDPA call per sequence (prefill only, never in a
    CUDA graph)."""
    starts_q, starts_k = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
    out = torch.empty_like(q)
    for i in range(len(starts_q) - 1):
        lq, lk = starts_q[i + 1] - starts_q[i], starts_k[i + 1] - starts_k[i]
        qi = q[starts_q[i] : starts_q[i + 1]].unsqueeze(0)
        if block_table is None:
            ki, vi = k[starts_k[i] : starts_k[i + 1]], v[starts_k[i] : starts_k[i + 1]]
        else:
            ki, vi = _paged(k, block_table[i : i + 1])[0, :lk], _paged(v, block_table[i : i + 1])[0, :lk]
        mask = torch.ones(lq, lk, dtype=torch.bool, device=q.device)
        if causal:
            mask = mask.tril(lk - lq)
        got = _attend(qi, ki.unsqueeze(0), vi.unsqueeze(0), mask.view(1, 1, lq, lk), softmax_scale)
        out[starts_q[i] : starts_q[i + 1]] = got[0]
    return out
