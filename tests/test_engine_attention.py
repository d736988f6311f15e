"""The paged SDPA path against plain causal attention over dense K/V (CPU)."""

import pytest
import torch
import torch.nn.functional as F

from app.engine.attention import AttnContext, PagedKVCache, available_backends, pick_backend


def _naive(q, k, v, start):
    """Causal attention of queries at positions start.. over keys 0..start+L-1, GQA expanded."""
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = torch.einsum("lhd,thd->hlt", q.double(), k.double()) / q.shape[-1] ** 0.5
    qpos = start + torch.arange(q.shape[0])
    scores = scores.masked_fill(torch.arange(k.shape[0])[None, None] > qpos[None, :, None], float("-inf"))
    return torch.einsum("hlt,thd->lhd", F.softmax(scores, -1), v.double())


def _context(cache, tables, starts, lengths, width):
    """Slots for right-padded rows: row b writes positions starts[b]..starts[b]+lengths[b]-1."""
    bs = cache.block_size
    slots = []
    for row, start, n in zip(tables, starts, lengths, strict=True):
        for j in range(width):
            pos = start + j
            slots.append(row[pos // bs] * bs + pos % bs if j < n else cache.scratch_block * bs)
    nb = max(len(t) for t in tables)
    padded = [t + [cache.scratch_block] * (nb - len(t)) for t in tables]
    return AttnContext(
        slot_mapping=torch.tensor(slots),
        block_tables=torch.tensor(padded),
        q_start=torch.tensor(starts),
        context_lens=torch.tensor([s + n for s, n in zip(starts, lengths, strict=True)], dtype=torch.int32),
    )


def test_prefill_then_decode_matches_naive_attention():
    torch.manual_seed(0)
    heads, kv_heads, dim, bs = 4, 2, 16, 4
    cache = PagedKVCache(2, 12, bs, kv_heads, dim, torch.float32, "cpu")
    lens = [7, 3, 10]
    # scattered, non-contiguous block ids per sequence
    tables = [[5, 0, 6], [9, 8], [2, 7, 11]]
    dense = [(torch.randn(n + 2, kv_heads, dim), torch.randn(n + 2, kv_heads, dim)) for n in lens]
    queries = [torch.randn(n + 2, heads, dim) for n in lens]

    # prefill: all rows at once, right-padded to the longest
    width = max(lens)
    q = torch.zeros(3, width, heads, dim)
    k = torch.randn(3, width, kv_heads, dim)  # pad positions hold junk on purpose
    v = torch.randn(3, width, kv_heads, dim)
    for b, n in enumerate(lens):
        q[b, :n], k[b, :n], v[b, :n] = queries[b][:n], dense[b][0][:n], dense[b][1][:n]
    cache.context = _context(cache, tables, [0, 0, 0], lens, width)
    out = cache.attend(1, q, k, v)
    for b, n in enumerate(lens):
        ref = _naive(queries[b][:n], dense[b][0][:n], dense[b][1][:n], 0)
        torch.testing.assert_close(out[b, :n].double(), ref, atol=1e-5, rtol=1e-5)

    # two decode steps, one position each, reading the prefilled prefix through the tables
    for step in range(2):
        pos = [n + step for n in lens]
        q = torch.stack([queries[b][p : p + 1] for b, p in enumerate(pos)])
        k = torch.stack([dense[b][0][p : p + 1] for b, p in enumerate(pos)])
        v = torch.stack([dense[b][1][p : p + 1] for b, p in enumerate(pos)])
        cache.context = _context(cache, tables, pos, [1, 1, 1], 1)
        out = cache.attend(1, q, k, v)
        for b, p in enumerate(pos):
            ref = _naive(queries[b][p : p + 1], dense[b][0][: p + 1], dense[b][1][: p + 1], p)
            torch.testing.assert_close(out[b].double(), ref, atol=1e-5, rtol=1e-5)
    # layer 0 was never written: the layers are separate
    assert cache.k[0].abs().sum() == 0


def test_prefill_over_cached_prefix():
    """New positions attend over a prefix that an earlier call wrote (the prefix-cache case)."""
    torch.manual_seed(1)
    cache = PagedKVCache(1, 6, 4, 1, 8, torch.float32, "cpu")
    k, v, q = torch.randn(11, 1, 8), torch.randn(11, 1, 8), torch.randn(11, 2, 8)
    table = [3, 1, 4]
    cache.context = _context(cache, [table], [0], [8], 8)
    cache.attend(0, q[None, :8], k[None, :8], v[None, :8])
    cache.context = _context(cache, [table], [8], [3], 3)
    out = cache.attend(0, q[None, 8:], k[None, 8:], v[None, 8:])
    torch.testing.assert_close(out[0].double(), _naive(q[8:], k, v, 8), atol=1e-5, rtol=1e-5)


def test_backend_choice_on_cpu():
    assert available_backends(torch.device("cpu")) == ["sdpa"]
    assert pick_backend(torch.device("cpu")) == "sdpa"


def test_small_heads_take_sdpa_instead_of_the_triton_kernels(monkeypatch) -> None:
    """tl.dot needs an inner dimension of 16: a tiny model on a GPU (self-test, CosyVoice3-tiny's
    8-value heads) must not reach the Triton paged kernels, which fail to compile for it."""
    from app.engine import attention

    monkeypatch.setattr(attention, "available_backends", lambda _device: ["sdpa", "triton"])
    cuda = torch.device("cuda")
    assert pick_backend(cuda, "auto", (64, 64)) == "triton"
    assert pick_backend(cuda, "auto", (64, 8)) == "sdpa"
    with pytest.raises(ValueError, match="at least 16"):
        pick_backend(cuda, "triton", (8,))
