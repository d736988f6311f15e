"""CosyVoice2's flow estimator: the causal 1-D U-Net (``CausalConditionalDecoder``).

What ``cosyvoice/flow/decoder.py`` (ace7c47) computes with the Matcha-TTS 0.0.5.1 blocks it
builds on and the diffusers 0.29 transformer block Matcha wraps, for the released configuration
(one resolution level, ``channels: [256]``; GELU feed-forward):

    x, mu, spks (repeated over time), cond  → 320 channels
    t → sinusoidal embedding (320) → ``time_mlp`` (Linear, SiLU, Linear)
    down: resnet (two causal conv k=3 + LayerNorm + Mish blocks, the time added between, 1×1
          residual) + transformer blocks, then a causal conv k=3 (the last level's "downsample")
    mid:  ``num_mid_blocks`` × (resnet + transformer blocks)
    up:   concat with the down level's output, resnet + transformer blocks, causal conv k=3
    final causal block, 1×1 projection, × mask.

The transformer block is diffusers' ``BasicTransformerBlock`` as Matcha configures it:
LayerNorm → self-attention (no q/k/v bias, scaled dot product with an additive mask of
-1e10 on blocked keys) → residual; LayerNorm → Linear, exact GELU, Linear → residual. Streaming
masks attention to ``static_chunk_size`` frames as the encoder does; otherwise each frame sees
every unpadded frame.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError
from app.models.cosyvoice.conformer import chunk_mask


def check_estimator_args(args: dict[str, Any]) -> None:
    """Refuse U-Net settings the released CosyVoice2 does not use (one line naming the key)."""
    channels = list(args.get("channels", [256, 256]))
    if len(channels) != 1:
        raise VoxDeskError(f"CosyVoice2 flow estimator with channels {channels}: VoxDesk reads the "
                           "released one-level U-Net (channels: [C]).")  # fmt: skip
    if args.get("act_fn", "snake") != "gelu":
        raise VoxDeskError(f"CosyVoice2 flow estimator with act_fn {args.get('act_fn')!r}: VoxDesk "
                           "reads the released 'gelu'.")  # fmt: skip


class CausalConv(nn.Conv1d):
    """A stride-1 convolution padded on the left only: output t sees inputs ≤ t."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(F.pad(x, (self.kernel_size[0] - 1, 0)))


class CausalBlock(nn.Module):
    """Causal conv k=3, LayerNorm over channels, Mish; input and output masked."""

    def __init__(self, dim: int, dim_out: int) -> None:
        super().__init__()
        self.block = nn.ModuleDict({"0": CausalConv(dim, dim_out, 3), "2": nn.LayerNorm(dim_out)})

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.block["0"](x * mask)
        h = self.block["2"](h.transpose(1, 2)).transpose(1, 2)
        return F.mish(h) * mask


class ResnetBlock(nn.Module):
    """Matcha's ``ResnetBlock1D`` with causal blocks; ``mlp`` adds the time embedding."""

    def __init__(self, dim: int, dim_out: int, time_dim: int) -> None:
        super().__init__()
        self.mlp = nn.ModuleDict({"1": nn.Linear(time_dim, dim_out)})
        self.block1, self.block2 = CausalBlock(dim, dim_out), CausalBlock(dim_out, dim_out)
        self.res_conv = nn.Conv1d(dim, dim_out, 1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        h = self.block1(x, mask) + self.mlp["1"](F.mish(t)).unsqueeze(-1)
        return self.block2(h, mask) + self.res_conv(x * mask)


class Attention(nn.Module):
    """diffusers' ``Attention`` with its default processor: no q/k/v bias, ``to_out.0`` biased."""

    def __init__(self, dim: int, heads: int, head_dim: int) -> None:
        super().__init__()
        inner = heads * head_dim
        self.heads, self.head_dim = heads, head_dim
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_k = nn.Linear(dim, inner, bias=False)
        self.to_v = nn.Linear(dim, inner, bias=False)
        self.to_out = nn.ModuleList([nn.Linear(inner, dim)])

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = (f(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
                   for f in (self.to_q, self.to_k, self.to_v))  # fmt: skip
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return self.to_out[0](out.transpose(1, 2).reshape(b, t, self.heads * self.head_dim))


class GeluFF(nn.Module):
    """diffusers' ``FeedForward(activation_fn="gelu")``: ``net.0.proj``, exact GELU, ``net.2``."""

    def __init__(self, dim: int, mult: int = 4) -> None:
        super().__init__()
        self.net = nn.ModuleDict({"0": nn.ModuleDict({"proj": nn.Linear(dim, dim * mult)}),
                                  "2": nn.Linear(dim * mult, dim)})  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net["2"](F.gelu(self.net["0"]["proj"](x)))


class TransformerBlock(nn.Module):
    """``BasicTransformerBlock`` as Matcha builds it (self-attention and feed-forward only)."""

    def __init__(self, dim: int, heads: int, head_dim: int) -> None:
        super().__init__()
        self.norm1, self.norm3 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn1 = Attention(dim, heads, head_dim)
        self.ff = GeluFF(dim)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        x = x + self.attn1(self.norm1(x), bias)
        return x + self.ff(self.norm3(x))


def _level(resnet: ResnetBlock, n_blocks: int, dim: int, heads: int, head_dim: int) -> list[nn.Module]:
    return [resnet, nn.ModuleList(TransformerBlock(dim, heads, head_dim) for _ in range(n_blocks))]


class CausalUNet(nn.Module):
    """The estimator, keyed as ``flow.pt``'s ``decoder.estimator.*``; called by ``cfm.solve``."""

    def __init__(self, in_channels: int, out_channels: int, channels: int, heads: int, head_dim: int,
                 n_blocks: int, mid_blocks: int, chunk: int) -> None:  # fmt: skip
        super().__init__()
        self.in_channels, self.chunk = in_channels, chunk
        time_dim = channels * 4
        self.time_mlp = nn.ModuleDict({"linear_1": nn.Linear(in_channels, time_dim),
                                       "linear_2": nn.Linear(time_dim, time_dim)})  # fmt: skip
        down = _level(ResnetBlock(in_channels, channels, time_dim), n_blocks, channels, heads, head_dim)
        self.down_blocks = nn.ModuleList([nn.ModuleList([*down, CausalConv(channels, channels, 3)])])
        mid = (_level(ResnetBlock(channels, channels, time_dim), n_blocks, channels, heads, head_dim)
               for _ in range(mid_blocks))  # fmt: skip
        self.mid_blocks = nn.ModuleList(nn.ModuleList(level) for level in mid)
        up = _level(ResnetBlock(2 * channels, channels, time_dim), n_blocks, channels, heads, head_dim)
        self.up_blocks = nn.ModuleList([nn.ModuleList([*up, CausalConv(channels, channels, 3)])])
        self.final_block = CausalBlock(channels, channels)
        self.final_proj = nn.Conv1d(channels, out_channels, 1)

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> CausalUNet:
        """From the yaml's ``estimator`` arguments (the official constructor's defaults)."""
        check_estimator_args(args)
        return cls(in_channels=int(args["in_channels"]), out_channels=int(args["out_channels"]),
                   channels=int(args["channels"][0]), heads=int(args.get("num_heads", 4)),
                   head_dim=int(args.get("attention_head_dim", 64)), n_blocks=int(args.get("n_blocks", 1)),
                   mid_blocks=int(args.get("num_mid_blocks", 2)),
                   chunk=int(args.get("static_chunk_size", 50)))  # fmt: skip

    def time_embedding(self, t: torch.Tensor) -> torch.Tensor:
        """Matcha's ``SinusoidalPosEmb`` (scale 1000, sin then cos) through ``time_mlp``."""
        half = self.in_channels // 2
        freq = torch.exp(torch.arange(half, device=t.device).float() * -(math.log(10000) / (half - 1)))
        emb = 1000 * t.unsqueeze(1) * freq.unsqueeze(0)
        emb = torch.cat((emb.sin(), emb.cos()), dim=-1).to(t.dtype)
        return self.time_mlp["linear_2"](F.silu(self.time_mlp["linear_1"](emb)))

    def _transform(self, blocks: nn.ModuleList, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        h = x.transpose(1, 2)
        for block in blocks:
            h = block(h, bias)
        return h.transpose(1, 2)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor,
        mu: torch.Tensor,
        t: torch.Tensor,
        spks: torch.Tensor,
        cond: torch.Tensor,
        streaming: bool = False,
    ) -> torch.Tensor:
        """``x``/``mu``/``cond`` [B, 80, T], ``mask`` [B, 1, T], ``t`` [B], ``spks`` [B, 80] →
        the velocity [B, 80, T] (zero on padded frames)."""
        temb = self.time_embedding(t)
        frames = x.shape[-1]
        h = torch.cat([x, mu, spks.unsqueeze(-1).expand(-1, -1, frames), cond], dim=1)
        keys = chunk_mask(mask[:, 0].sum(-1).long(), frames, self.chunk if streaming else 0)
        keys = keys.expand(-1, frames, -1)
        bias = ((1.0 - keys.to(x.dtype)) * -1.0e10).unsqueeze(1)  # [B, 1, T, T]
        resnet, blocks, down = self.down_blocks[0]
        h = self._transform(blocks, resnet(h, mask, temb), bias)
        skip = h
        h = down(h * mask)
        for resnet, blocks in self.mid_blocks:
            h = self._transform(blocks, resnet(h, mask, temb), bias)
        resnet, blocks, up = self.up_blocks[0]
        h = self._transform(blocks, resnet(torch.cat([h, skip], dim=1), mask, temb), bias)
        h = self.final_block(up(h * mask), mask)
        return self.final_proj(h * mask) * mask
