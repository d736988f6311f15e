"""The benchmark's flash_attn stand-in (tools/flash_attn_shim) gives what causal attention over the
same keys gives: packed prefill (plain and from a paged cache) and paged decode, the way the
official IndexTTS accel engine calls them (indextts/accel/attention.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "flash_attn_shim"))
from flash_attn import flash_attn_varlen_func, flash_attn_with_kvcache  # noqa: E402

H, D, BLOCK = 2, 8, 4


def dense(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal attention of q [Lq, H, D] over k/v [Lk, H, D], the queries being the last Lq keys."""
    lq, lk = q.shape[0], k.shape[0]
    mask = torch.ones(lq, lk, dtype=torch.bool).tril(lk - lq)
    q, k, v = (x.transpose(0, 1) for x in (q, k, v))
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(0, 1)


def paged(keys: list[torch.Tensor], blocks: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A cache of ``blocks`` blocks holding each sequence in shuffled blocks; its [B, n] table (-1 padded)."""
    cache = torch.randn(blocks, BLOCK, H, D)  # garbage where no sequence lives
    free = torch.randperm(blocks).tolist()
    width = max(-(-len(k) // BLOCK) for k in keys)
    table = torch.full((len(keys), width), -1, dtype=torch.int32)
    for i, k in enumerate(keys):
        for j in range(-(-len(k) // BLOCK)):
            block = free.pop()
            table[i, j] = block
            part = k[j * BLOCK : (j + 1) * BLOCK]
            cache[block, : len(part)] = part
    return cache, table


def test_decode_over_a_paged_cache_equals_dense_attention() -> None:
    torch.manual_seed(0)
    lengths = [5, 9, 1]
    keys = [torch.randn(n, H, D) for n in lengths]
    values = [torch.randn(n, H, D) for n in lengths]
    k_cache, table = paged(keys, 12)
    v_cache = k_cache.clone()
    for i, v in enumerate(values):  # the same blocks, the values' own contents
        for j in range(-(-len(v) // BLOCK)):
            part = v[j * BLOCK : (j + 1) * BLOCK]
            v_cache[table[i, j], : len(part)] = part
    q = torch.randn(len(lengths), 1, H, D)
    got = flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=torch.tensor(lengths, dtype=torch.int32),
                                  block_table=table, softmax_scale=D**-0.5, causal=True)  # fmt: skip
    for i in range(len(lengths)):
        torch.testing.assert_close(got[i], dense(q[i], keys[i], values[i]))


def test_packed_prefill_equals_dense_attention_plain_and_paged() -> None:
    torch.manual_seed(1)
    lengths = [3, 6]
    q = torch.randn(sum(lengths), H, D)
    k, v = torch.randn(sum(lengths), H, D), torch.randn(sum(lengths), H, D)
    cu = torch.tensor([0, 3, 9], dtype=torch.int32)
    got = flash_attn_varlen_func(q, k, v, cu, cu, 6, 6, softmax_scale=D**-0.5, causal=True)
    for a, b in ((0, 3), (3, 9)):
        torch.testing.assert_close(got[a:b], dense(q[a:b], k[a:b], v[a:b]))
    # the second sequence's first 4 positions already cached: its 2 new queries over 6 paged keys
    keys, values = [k[:3], k[3:9]], [v[:3], v[3:9]]
    k_cache, table = paged(keys, 8)
    v_cache = k_cache.clone()
    for i, val in enumerate(values):
        for j in range(-(-len(val) // BLOCK)):
            part = val[j * BLOCK : (j + 1) * BLOCK]
            v_cache[table[i, j], : len(part)] = part
    q2 = torch.cat([q[0:3], q[7:9]])
    got = flash_attn_varlen_func(q2, k_cache, v_cache, torch.tensor([0, 3, 5], dtype=torch.int32),
                                 torch.tensor([0, 3, 9], dtype=torch.int32), 3, 6, softmax_scale=D**-0.5,
                                 causal=True, block_table=table)  # fmt: skip
    torch.testing.assert_close(got[:3], dense(q[0:3], k[:3], v[:3]))
    torch.testing.assert_close(got[3:], dense(q[7:9], k[3:9], v[3:9]))
