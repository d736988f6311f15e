"""Paged KV caches for the two LMs, and the attention that reads them.

The model calls ``kv.attend(layer, q, k, v)`` with ``q [B, L, H, d]`` and ``k/v [B, L, Hkv, d]``
(RoPE applied). Each batch row is one sequence; its new positions start at ``q_start[b]`` and
rows shorter than ``L`` are right-padded (pad positions write to a scratch block and their
outputs are ignored). The new K/V go to ``slot_mapping``; queries then attend causally over the
sequence's cached prefix plus the new positions, read through its block table.

Three interchangeable implementations give the same output:

- ``sdpa``: gathers the rows' blocks and calls torch SDPA with a causal position mask. No extra
  dependency; the CPU path and the reference for the others.
- ``triton``: a paged decode kernel (``L == 1``) that reads only the filled blocks, with the
  context split across programs when the batch is small. Prefill still uses ``sdpa``.
- ``flash``: flash-attn's ``flash_attn_with_kvcache`` over the gathered blocks, when the
  package is importable. Never required.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

try:  # triton is optional: CPU installs and Windows without triton-windows lack it
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - depends on the machine
    triton = None


@dataclass
class AttnContext:
    """Where this call's K/V go and what each row may read. All tensors on the cache device."""

    slot_mapping: torch.Tensor  # [B*L] long: flat cache slot of every new position (pads: scratch)
    block_tables: torch.Tensor  # [B, nb] long: block ids per row (unused entries: scratch block)
    q_start: torch.Tensor  # [B] long: position of each row's first new position
    context_lens: torch.Tensor  # [B] int32: filled positions per row after this call
    # the sdpa path's masks by (new positions, gathered positions): every layer of both stacks
    # reads the same ones, so they are built once per call (inside a CUDA graph capture too)
    masks: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]] = field(default_factory=dict)

    def sdpa_masks(self, length: int, total: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """(causal mask ``[B, 1, L, T]``, filled slots ``[B, T, 1, 1]``) for ``L`` new positions
        over ``T`` gathered ones."""
        key = (length, total)
        if key not in self.masks:
            qpos = self.q_start[:, None] + torch.arange(length, device=device)  # [B, L]
            kpos = torch.arange(total, device=device)
            causal = (kpos[None, None, :] <= qpos[:, :, None])[:, None]
            filled = (kpos[None, :] < self.context_lens[:, None])[:, :, None, None]
            self.masks[key] = (causal, filled)
        return self.masks[key]


def available_backends(device: torch.device) -> list[str]:
    names = ["sdpa"]
    if device.type == "cuda" and triton is not None:
        names.append("triton")
    if device.type == "cuda" and importlib.util.find_spec("flash_attn") is not None:
        names.append("flash")
    return names


# The Triton paged kernels multiply [heads, head_dim] tiles with tl.dot, which needs an inner
# dimension of at least 16: smaller heads (the tiny test and self-test models) take SDPA.
TRITON_MIN_HEAD_DIM = 16


def pick_backend(device: torch.device, wanted: str = "auto", head_dims: tuple[int, ...] = ()) -> str:
    """The attention backend for ``device``: ``wanted``, or with "auto" the fastest available
    that takes every head size in ``head_dims``."""
    names = available_backends(device)
    if any(d < TRITON_MIN_HEAD_DIM for d in head_dims) and "triton" in names:
        if wanted == "triton":
            raise ValueError(f"the triton attention backend needs heads of at least {TRITON_MIN_HEAD_DIM} "
                             f"values (this model has {min(head_dims)})")  # fmt: skip
        names.remove("triton")
    if wanted == "auto":
        return "flash" if "flash" in names else names[-1]
    if wanted not in names:
        raise ValueError(f"attention backend {wanted!r} is not available here (have {names})")
    return wanted


class PagedKVCache:
    """K and V for every layer of one transformer stack, in blocks of ``block_size`` positions.

    ``num_blocks`` blocks are shared out by the block manager; one more, the scratch block, takes
    the writes of padding rows so that every launch has a fixed shape (CUDA graphs).
    """

    def __init__(
        self,
        num_layers: int,
        num_blocks: int,
        block_size: int,
        num_kv_heads: int,
        head_dim: int,
        dtype: torch.dtype,
        device: torch.device | str,
        backend: str = "sdpa",
    ) -> None:
        shape = (num_layers, num_blocks + 1, block_size, num_kv_heads, head_dim)
        self.k = torch.zeros(shape, dtype=dtype, device=device)
        self.v = torch.zeros(shape, dtype=dtype, device=device)
        self.block_size = block_size
        self.scratch_block = num_blocks
        self.backend = backend
        self.context: AttnContext | None = None

    @staticmethod
    def bytes_per_block(num_layers: int, block_size: int, kv_heads: int, head_dim: int, dtype) -> int:
        itemsize = torch.empty((), dtype=dtype).element_size()
        return 2 * num_layers * block_size * kv_heads * head_dim * itemsize

    def attend(self, layer_idx: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        ctx = self.context
        if ctx is None:
            raise RuntimeError("attention called without a batch context")
        kc, vc = self.k[layer_idx], self.v[layer_idx]
        slots = ctx.slot_mapping
        kc.view(-1, *kc.shape[2:]).index_copy_(0, slots, k.reshape(-1, *k.shape[2:]).to(kc.dtype))
        vc.view(-1, *vc.shape[2:]).index_copy_(0, slots, v.reshape(-1, *v.shape[2:]).to(vc.dtype))
        if self.backend == "triton" and q.shape[1] == 1:
            return paged_decode_triton(q, kc, vc, ctx.block_tables, ctx.context_lens)
        if self.backend == "flash":
            return flash_paged(q, kc, vc, ctx)
        return sdpa_paged(q, kc, vc, ctx)


def _gather(cache: torch.Tensor, block_tables: torch.Tensor) -> torch.Tensor:
    """[B, nb*block_size, Hkv, d]: each row's blocks laid end to end."""
    return cache[block_tables].flatten(1, 2)


def sdpa_paged(q: torch.Tensor, kc: torch.Tensor, vc: torch.Tensor, ctx: AttnContext) -> torch.Tensor:
    keys, values = _gather(kc, ctx.block_tables), _gather(vc, ctx.block_tables)
    mask, filled = ctx.sdpa_masks(q.shape[1], keys.shape[1], q.device)
    # Slots past a row's context hold whatever an earlier owner (or a padding row) left there;
    # a masked NaN would still poison the sum (0 * NaN), so they are zeroed, not just masked.
    keys, values = keys.where(filled, 0), values.where(filled, 0)
    out = F.scaled_dot_product_attention(
        q.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2), attn_mask=mask, enable_gqa=True
    )
    return out.transpose(1, 2)


def flash_paged(q: torch.Tensor, kc: torch.Tensor, vc: torch.Tensor, ctx: AttnContext) -> torch.Tensor:
    """flash-attn over the gathered blocks. ``cache_seqlens = q_start + L`` aligns every row's
    queries bottom-right at their true positions, also for right-padded rows."""
    from flash_attn import flash_attn_with_kvcache

    keys, values = _gather(kc, ctx.block_tables), _gather(vc, ctx.block_tables)
    seqlens = (ctx.q_start + q.shape[1]).to(torch.int32)
    return flash_attn_with_kvcache(q, keys, values, cache_seqlens=seqlens, causal=True)


if triton is not None:

    @triton.jit
    def _decode_kernel(
        Q, K, V, Out, Mid, BT, CL, scale,
        sq_b, sq_h, sk_blk, sk_pos, sk_h, sbt, so_b, so_h,
        G: tl.constexpr, GP: tl.constexpr, D: tl.constexpr, BS: tl.constexpr,
        SPLITS: tl.constexpr, IEEE: tl.constexpr,
    ):  # fmt: skip
        b = tl.program_id(0)
        hk = tl.program_id(1)
        split = tl.program_id(2)
        ctx = tl.load(CL + b)
        nblk = (ctx + BS - 1) // BS
        per = (nblk + SPLITS - 1) // SPLITS
        g = tl.arange(0, GP)
        d = tl.arange(0, D)
        n = tl.arange(0, BS)
        gmask = g < G
        q = tl.load(Q + b * sq_b + (hk * G + g)[:, None] * sq_h + d[None, :], mask=gmask[:, None], other=0.0)
        m = tl.full([GP], float("-inf"), tl.float32)
        den = tl.zeros([GP], tl.float32)
        acc = tl.zeros([GP, D], tl.float32)
        for i in range(split * per, tl.minimum((split + 1) * per, nblk)):
            blk = tl.load(BT + b * sbt + i).to(tl.int64)
            pos = i * BS + n
            valid = pos < ctx
            offs = blk * sk_blk + n[:, None] * sk_pos + hk * sk_h + d[None, :]
            k = tl.load(K + offs, mask=valid[:, None], other=0.0)
            if IEEE:
                s = tl.dot(q, tl.trans(k), input_precision="ieee")
            else:
                s = tl.dot(q, tl.trans(k))
            s = tl.where(valid[None, :], s * scale, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, 1))
            p = tl.exp(s - m_new[:, None])
            alpha = tl.exp(m - m_new)
            den = den * alpha + tl.sum(p, 1)
            v = tl.load(V + offs, mask=valid[:, None], other=0.0)
            if IEEE:
                acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
            else:
                acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m = m_new
        if SPLITS == 1:
            out = acc / den[:, None]
            tl.store(Out + b * so_b + (hk * G + g)[:, None] * so_h + d[None, :], out, mask=gmask[:, None])
        else:
            # partials: [B, Hkv, SPLITS, GP, D + 2] holding acc, then m and den
            base = Mid + ((b * tl.num_programs(1) + hk) * SPLITS + split) * GP * (D + 2)
            tl.store(base + g[:, None] * (D + 2) + d[None, :], acc)
            tl.store(base + g * (D + 2) + D, m)
            tl.store(base + g * (D + 2) + D + 1, den)

    @triton.jit
    def _combine_kernel(
        Mid, Out, so_b, so_h,
        G: tl.constexpr, GP: tl.constexpr, D: tl.constexpr, SPLITS: tl.constexpr,
    ):  # fmt: skip
        b = tl.program_id(0)
        hk = tl.program_id(1)
        g = tl.arange(0, GP)
        d = tl.arange(0, D)
        base = Mid + (b * tl.num_programs(1) + hk) * SPLITS * GP * (D + 2)
        m = tl.full([GP], float("-inf"), tl.float32)
        for s in range(SPLITS):
            m = tl.maximum(m, tl.load(base + s * GP * (D + 2) + g * (D + 2) + D))
        den = tl.zeros([GP], tl.float32)
        acc = tl.zeros([GP, D], tl.float32)
        for s in range(SPLITS):
            row = base + s * GP * (D + 2) + g * (D + 2)
            ms = tl.load(row + D)
            w = tl.where(ms == float("-inf"), 0.0, tl.exp(ms - m))
            den += w * tl.load(row + D + 1)
            acc += w[:, None] * tl.load(row[:, None] + d[None, :])
        out = acc / den[:, None]
        gmask = g < G
        tl.store(Out + b * so_b + (hk * G + g)[:, None] * so_h + d[None, :], out, mask=gmask[:, None])


def paged_decode_triton(
    q: torch.Tensor, kc: torch.Tensor, vc: torch.Tensor, tables: torch.Tensor, context_lens: torch.Tensor
) -> torch.Tensor:
    """One query per row against its paged context. ``q [B, 1, H, d]``, caches ``[nb, bs, Hkv, d]``."""
    batch, _, heads, dim = q.shape
    block_size, kv_heads = kc.shape[1], kc.shape[2]
    group = heads // kv_heads
    gp = max(16, triton.next_power_of_2(group))
    # Small batches leave most SMs idle: split each row's context across programs.
    splits = 1 if batch * kv_heads >= 128 else 8
    q2 = q[:, 0]
    out = torch.empty_like(q2)
    mid = torch.empty((batch, kv_heads, splits, gp, dim + 2), device=q.device, dtype=torch.float32)
    _decode_kernel[(batch, kv_heads, splits)](
        q2, kc, vc, out, mid, tables, context_lens, dim**-0.5,
        q2.stride(0), q2.stride(1), kc.stride(0), kc.stride(1), kc.stride(2), tables.stride(0),
        out.stride(0), out.stride(1),
        G=group, GP=gp, D=dim, BS=block_size, SPLITS=splits, IEEE=q.dtype == torch.float32,
    )  # fmt: skip
    if splits > 1:
        _combine_kernel[(batch, kv_heads)](
            mid, out, out.stride(0), out.stride(1), G=group, GP=gp, D=dim, SPLITS=splits
        )  # fmt: skip
    return out[:, None]


def batch_context(
    tables: Sequence[Sequence[int]],
    starts: Sequence[int],
    counts: Sequence[int],
    width: int,
    block_size: int,
    scratch_block: int,
    device: torch.device | str = "cpu",
) -> tuple[AttnContext, torch.Tensor]:
    """The :class:`AttnContext` and positions ``[B, width]`` for row ``b`` adding ``counts[b]``
    positions from ``starts[b]`` to the sequence paged by block table ``tables[b]``; rows are
    right-padded to ``width`` (pads write to the scratch block and read position 0)."""
    b = len(tables)
    nb = max(1, *(len(t) for t in tables))
    block_tables = torch.full((b, nb), scratch_block, dtype=torch.long)
    slots = torch.full((b, width), scratch_block * block_size, dtype=torch.long)
    positions = torch.zeros(b, width, dtype=torch.long)
    for row, (table, start, count) in enumerate(zip(tables, starts, counts, strict=True)):
        if len(table) * block_size < start + count:
            raise ValueError(f"row {row}: {len(table)} blocks hold fewer than {start + count} positions")
        t = torch.tensor(table, dtype=torch.long)
        block_tables[row, : len(table)] = t
        pos = torch.arange(start, start + count)
        slots[row, :count] = t[pos // block_size] * block_size + pos % block_size
        positions[row, :count] = pos
    q_start = torch.tensor(list(starts), dtype=torch.long)
    lens = torch.tensor([s + c for s, c in zip(starts, counts, strict=True)], dtype=torch.int32)
    ctx = AttnContext(slots.view(-1).to(device), block_tables.to(device), q_start.to(device), lens.to(device))
    return ctx, positions.to(device)
