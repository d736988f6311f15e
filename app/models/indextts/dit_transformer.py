"""The transformer inside IndexTTS's S2Mel DiT: seed-vc's copy of gpt-fast, run without a KV cache.

Written from ``indextts/s2mel/modules/gpt_fast/model.py`` (index-tts at ee40fa7); the module and
parameter names are the official ones (``layers.{i}.attention.wqkv`` …), so the ``transformer.*``
keys of ``s2mel.pth`` load as they are. What it does:

- each block: ``x + attention(norm(x, c))`` then ``h + swiglu(norm(h, c))``, where every norm is an
  RMSNorm (eps 1e-5, computed in float32) whose output is scaled and shifted by a linear map of the
  time embedding ``c`` (the official ``AdaptiveLayerNorm``);
- attention: one fused ``wqkv`` projection, rotary embedding on adjacent feature pairs of each
  head (base 10000, positions 0 .. T-1), non-causal, keys past a row's length masked;
- the feed-forward width is ``4·dim·2/3`` rounded up to a multiple of 256;
- U-ViT skips: block ``i < depth // 2`` hands its output to a stack; each block ``i > depth // 2``
  takes the last one pushed and mixes it in with ``skip_in_linear`` before its own work (with an even
  depth one pushed output is never taken, as in the official code);
- a last adaptive RMSNorm.

The official ``setup_caches(max_batch_size=1, max_seq_length=8192)`` only builds tables this path
does not read (the KV cache is off, and the mask is passed in), so nothing of it is reproduced; the
rotary table is computed for the positions of each call, which gives the same rows.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

NORM_EPS = 1e-5
ROPE_BASE = 10000.0


def ffn_width(dim: int) -> int:
    """gpt-fast's default ``intermediate_size``: ``int(2·4·dim/3)`` rounded up to a multiple of 256."""
    hidden = int(2 * 4 * dim / 3)
    return hidden if hidden % 256 == 0 else hidden + 256 - hidden % 256


class RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.float()
        h = h * torch.rsqrt(torch.mean(h * h, dim=-1, keepdim=True) + NORM_EPS)
        return h.type_as(x) * self.weight


class AdaptiveNorm(nn.Module):
    """RMSNorm scaled and shifted by ``project_layer(c)`` (official ``AdaptiveLayerNorm``)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.project_layer = nn.Linear(dim, 2 * dim)
        self.norm = RMSNorm(dim)

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        scale, shift = self.project_layer(c).chunk(2, dim=-1)
        return scale * self.norm(x) + shift


def rope_table(positions: torch.Tensor, head_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin) [T, head_dim / 2] at ``positions`` [T], as the official ``freqs_cis`` rows."""
    exponents = torch.arange(0, head_dim, 2, device=positions.device)[: head_dim // 2].float() / head_dim
    angles = torch.outer(positions, 1.0 / (ROPE_BASE**exponents))
    turn = torch.polar(torch.ones_like(angles), angles)  # as the official: polar, not cos/sin (last bit)
    return turn.real, turn.imag


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """``x`` [B, T, H, D]: each adjacent pair ``(a, b)`` turned into ``(a cos - b sin, b cos + a sin)``."""
    pairs = x.float().unflatten(-1, (-1, 2))
    a, b = pairs[..., 0], pairs[..., 1]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((a * cos - b * sin, b * cos + a * sin), dim=-1).flatten(3).type_as(x)


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.wqkv = nn.Linear(dim, 3 * dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(
        self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor], mask: torch.Tensor | None
    ) -> torch.Tensor:
        """``x`` [B, T, D]; ``mask`` bool [B, 1, 1, T] (True = a key to attend to) or None (all)."""
        b, frames, dim = x.shape
        q, k, v = (p.view(b, frames, self.heads, -1) for p in self.wqkv(x).split(dim, dim=-1))
        q, k = apply_rope(q, *rope), apply_rope(k, *rope)
        y = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=mask
        )
        return self.wo(y.transpose(1, 2).reshape(b, frames, dim))


class FeedForward(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        width = ffn_width(dim)
        self.w1 = nn.Linear(dim, width, bias=False)
        self.w3 = nn.Linear(dim, width, bias=False)
        self.w2 = nn.Linear(width, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, uvit_skip: bool) -> None:
        super().__init__()
        self.attention = Attention(dim, heads)
        self.feed_forward = FeedForward(dim)
        self.ffn_norm = AdaptiveNorm(dim)
        self.attention_norm = AdaptiveNorm(dim)
        if uvit_skip:
            self.skip_in_linear = nn.Linear(2 * dim, dim)

    def forward(
        self,
        x: torch.Tensor,
        c: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor],
        mask: torch.Tensor | None,
        skip: torch.Tensor | None,
    ) -> torch.Tensor:
        if skip is not None:
            x = self.skip_in_linear(torch.cat([x, skip], dim=-1))
        h = x + self.attention(self.attention_norm(x, c), rope, mask)
        return h + self.feed_forward(self.ffn_norm(h, c))


class Transformer(nn.Module):
    """``forward(x [B, T, D], c [B, 1, D], positions [T], mask)`` → [B, T, D]; ``c`` is the time
    embedding, ``positions`` the official ``input_pos`` rows (0 .. T-1)."""

    def __init__(self, dim: int, heads: int, depth: int, uvit_skip: bool) -> None:
        super().__init__()
        self.head_dim = dim // heads
        self.layers = nn.ModuleList(Block(dim, heads, uvit_skip) for _ in range(depth))
        self.norm = AdaptiveNorm(dim)
        self.emit = set(range(depth // 2)) if uvit_skip else set()
        self.receive = set(range(depth // 2 + 1, depth)) if uvit_skip else set()

    def forward(
        self, x: torch.Tensor, c: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        rope = rope_table(positions, self.head_dim)
        skips: list[torch.Tensor] = []
        for i, layer in enumerate(self.layers):
            x = layer(x, c, rope, mask, skips.pop() if i in self.receive else None)
            if i in self.emit:
                skips.append(x)
        return self.norm(x, c)
