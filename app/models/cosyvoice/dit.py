"""CosyVoice3's flow estimator: the DiT of the official ``cosyvoice/flow/DiT/{dit,modules}.py``.

Written from the official code at ace7c47 (with x_transformers 2.11.24, the official pin, for the
rotary embedding); the module and parameter names are the official ones, so ``flow.pt``'s
``decoder.estimator.*`` keys load as they are. What it does, including the quirks:

- the time ``t`` goes through a 256-wide sinusoidal embedding (scale 1000) and an MLP;
- the input rows are ``[x, cond, mu, spks]`` concatenated, projected, plus a causal convolutional
  position embedding (two grouped convolutions of width 31, left-padded, Mish);
- each block: AdaLayerNormZero (shift/scale/gate from ``t``), self-attention, tanh-GELU
  feed-forward, both gated; the attention output is zeroed at padded frames;
- the rotary embedding (x_transformers' ``RotaryEmbedding(dim_head)``: interleaved pairs) is
  applied to the whole ``q``/``k`` rows **before** the split into heads, and rotates only their
  first ``dim_head`` features: the first head gets positions, the others none;
- the mask: full attention over the valid frames, or, when streaming, chunks of
  ``static_chunk_size`` frames that see every earlier chunk and their own.

Batched rows (padded at the end and masked) give each row what it gives alone: the position
convolution is causal and every attention key past a row's length is masked.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError
from app.models.cosyvoice.config import Tag

FREQ_DIM = 256  # the official TimestepEmbedding's sinusoid width
POS_KERNEL = 31  # CausalConvPositionEmbedding's kernel
POS_GROUPS = 16
DIT_SIZES = (
    "dim",
    "depth",
    "heads",
    "dim_head",
    "ff_mult",
    "mel_dim",
    "mu_dim",
    "spk_dim",
    "static_chunk_size",
)


class TimestepEmbedding(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.time_mlp = nn.Sequential(nn.Linear(FREQ_DIM, dim), nn.SiLU(), nn.Linear(dim, dim))

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        half = FREQ_DIM // 2
        step = math.log(10000) / (half - 1)
        freqs = torch.exp(torch.arange(half, device=t.device).float() * -step)
        angles = 1000 * t.unsqueeze(1) * freqs.unsqueeze(0)
        sinusoid = torch.cat((angles.sin(), angles.cos()), dim=-1).to(t.dtype)
        return self.time_mlp(sinusoid)


class CausalConvPositionEmbedding(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        # Sequential(Conv1d, Mish): the official module layout, so flow.pt's keys load as they are
        self.conv1 = nn.Sequential(nn.Conv1d(dim, dim, POS_KERNEL, groups=POS_GROUPS), nn.Mish())
        self.conv2 = nn.Sequential(nn.Conv1d(dim, dim, POS_KERNEL, groups=POS_GROUPS), nn.Mish())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` [B, T, D] -> [B, T, D]; frame ``i`` sees frames ``i-60 .. i`` only."""
        h = x.transpose(1, 2)
        for conv, act in (self.conv1, self.conv2):
            h = act(grouped_conv(conv, F.pad(h, (POS_KERNEL - 1, 0))))
        return h.transpose(1, 2)


TAPS_MAX_FRAMES = 8192  # rows x frames up to which CUDA runs the position convolution as taps


def grouped_conv(conv: nn.Conv1d, x: torch.Tensor) -> torch.Tensor:
    """``conv(x)`` for the position convolution, ``x`` [B, D, T + 30] already padded.

    On CUDA, for up to :data:`TAPS_MAX_FRAMES` output frames, as one batched matmul per kernel
    tap, summed. cuDNN's heuristics pick an FFT algorithm for this grouped 31-wide convolution
    at small batches of 100 to 210 frames (a streamed request's first chunk): 55 ms and a
    16.6 GiB workspace per call on an H100, against 2 ms as taps (docs/benchmarks.md, "The first
    streamed chunk"). Larger problems keep cuDNN, whose choice there was sound (0.5-5 ms).
    """
    frames = x.shape[2] - conv.kernel_size[0] + 1
    if x.is_cuda and x.shape[0] * frames <= TAPS_MAX_FRAMES:
        return conv_taps(conv, x)
    return conv(x)


def conv_taps(conv: nn.Conv1d, x: torch.Tensor) -> torch.Tensor:
    """``conv(x)`` (no padding, stride 1, grouped) as a sum over the kernel's taps of batched
    matmuls: ``[G, out, in] @ [G, in, B * T]`` shifted by the tap."""
    b, d, width = x.shape
    k, g = conv.kernel_size[0], conv.groups
    frames = width - k + 1
    w = conv.weight.view(g, d // g, d // g, k)  # [G, out, in, K]
    xg = x.view(b, g, d // g, width).permute(1, 2, 0, 3).reshape(g, d // g, b * width)
    out = torch.zeros(g, d // g, b, frames, device=x.device, dtype=x.dtype)
    for tap in range(k):
        out += torch.bmm(w[..., tap], xg).view(g, d // g, b, width)[..., tap : tap + frames]
    return out.permute(2, 0, 1, 3).reshape(b, d, frames) + conv.bias[:, None]


class InputEmbedding(nn.Module):
    def __init__(self, mel_dim: int, mu_dim: int, dim: int, spk_dim: int) -> None:
        super().__init__()
        self.spk_dim = spk_dim
        self.proj = nn.Linear(mel_dim * 2 + mu_dim + spk_dim, dim)
        self.conv_pos_embed = CausalConvPositionEmbedding(dim)

    def forward(
        self, x: torch.Tensor, cond: torch.Tensor, mu: torch.Tensor, spks: torch.Tensor
    ) -> torch.Tensor:
        parts = [x, cond, mu]
        if self.spk_dim > 0:
            parts.append(spks.unsqueeze(1).expand(-1, x.shape[1], -1))
        h = self.proj(torch.cat(parts, dim=-1))
        return self.conv_pos_embed(h) + h


class Rotary(nn.Module):
    """x_transformers' ``RotaryEmbedding(dim_head)`` with ``apply_rotary_pos_emb``: frequencies
    ``inv_freq`` (a persistent buffer: ``flow.pt`` holds it), each used for an adjacent pair of
    features (``(a, b) -> (a cos - b sin, b cos + a sin)``), on the first ``2 * len(inv_freq)``
    features of a row; the rest pass unchanged."""

    def __init__(self, dim_head: int) -> None:
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim_head, 2).float() / dim_head)))

    def angles(self, frames: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(cos, sin) [T, rot_dim] of frame positions 0 .. T-1, each angle repeated per pair."""
        t = torch.arange(frames, device=self.inv_freq.device).type_as(self.inv_freq)
        freqs = torch.outer(t, self.inv_freq).repeat_interleave(2, dim=-1)
        return freqs.cos(), freqs.sin()

    @staticmethod
    def apply(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        rot = cos.shape[-1]
        head, rest = x[..., :rot], x[..., rot:]
        pairs = head.unflatten(-1, (-1, 2))
        turned = torch.stack((-pairs[..., 1], pairs[..., 0]), dim=-1).flatten(-2)
        return torch.cat((head * cos + turned * sin, rest), dim=-1).to(x.dtype)


class AdaLayerNormZero(nn.Module):
    """LayerNorm modulated by ``t``: returns the attention input and the other five modulations."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.linear = nn.Linear(dim, dim * 6)
        self.norm = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> tuple[torch.Tensor, ...]:
        shift, scale, gate, shift_ff, scale_ff, gate_ff = self.linear(F.silu(emb)).chunk(6, dim=1)
        return self.norm(x) * (1 + scale[:, None]) + shift[:, None], gate, shift_ff, scale_ff, gate_ff


class AdaLayerNormZeroFinal(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.linear = nn.Linear(dim, dim * 2)
        self.norm = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        scale, shift = self.linear(F.silu(emb)).chunk(2, dim=1)
        return self.norm(x) * (1 + scale)[:, None, :] + shift[:, None, :]


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int, dim_head: int) -> None:
        super().__init__()
        self.heads = heads
        inner = heads * dim_head
        self.to_q = nn.Linear(dim, inner)
        self.to_k = nn.Linear(dim, inner)
        self.to_v = nn.Linear(dim, inner)
        self.to_out = nn.ModuleList([nn.Linear(inner, dim)])

    def forward(
        self,
        x: torch.Tensor,
        attn_mask: torch.Tensor,
        keep: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor],
    ) -> torch.Tensor:
        """``attn_mask`` [B, 1, T or 1, T] bool (True = attend); ``keep`` [B, T, 1] bool."""
        b, frames, _ = x.shape
        q = Rotary.apply(self.to_q(x), *rope)  # rotary before the head split: the first head only
        k = Rotary.apply(self.to_k(x), *rope)
        v = self.to_v(x)
        q, k, v = (a.view(b, frames, self.heads, -1).transpose(1, 2) for a in (q, k, v))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        out = self.to_out[0](out.transpose(1, 2).reshape(b, frames, -1))
        return out.masked_fill(~keep, 0.0)


class FeedForward(nn.Module):
    def __init__(self, dim: int, mult: int) -> None:
        super().__init__()
        inner = int(dim * mult)
        # the official ``ff.ff`` = [[Linear, GELU], Dropout, Linear]: indices kept for flow.pt's keys
        self.ff = nn.Sequential(nn.Sequential(nn.Linear(dim, inner), nn.GELU(approximate="tanh")),
                                nn.Identity(), nn.Linear(inner, dim))  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ff(x)


class DiTBlock(nn.Module):
    def __init__(self, dim: int, heads: int, dim_head: int, ff_mult: int) -> None:
        super().__init__()
        self.attn_norm = AdaLayerNormZero(dim)
        self.attn = Attention(dim, heads, dim_head)
        self.ff_norm = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.ff = FeedForward(dim, ff_mult)

    def forward(
        self,
        x: torch.Tensor,
        t: torch.Tensor,
        attn_mask: torch.Tensor,
        keep: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor],
    ) -> torch.Tensor:
        norm, gate, shift_ff, scale_ff, gate_ff = self.attn_norm(x, t)
        x = x + gate.unsqueeze(1) * self.attn(norm, attn_mask, keep, rope)
        norm = self.ff_norm(x) * (1 + scale_ff[:, None]) + shift_ff[:, None]
        return x + gate_ff.unsqueeze(1) * self.ff(norm)


def attention_mask(mask: torch.Tensor, streaming: bool, chunk: int) -> torch.Tensor:
    """The official ``add_optional_chunk_mask`` for the DiT: ``mask`` [B, 1, T] (1 = frame) ->
    bool [B, 1, T or 1, T]. Not streaming: every frame sees every valid frame. Streaming: frame
    ``i`` sees the valid frames before the end of its chunk of ``chunk`` frames. A row that would
    see nothing (a row of padding only) sees everything, as the official code forces."""
    valid = mask.bool()
    if streaming:
        pos = torch.arange(valid.shape[-1], device=valid.device)
        ends = (pos // chunk + 1) * chunk
        allowed = valid & (pos.unsqueeze(0) < ends.unsqueeze(1)).unsqueeze(0)
    else:
        allowed = valid
    allowed = allowed | ~allowed.any(dim=-1, keepdim=True)
    return allowed.unsqueeze(1)


class DiT(nn.Module):
    """The estimator ``v(x, mask, mu, t, spks, cond)`` of :func:`app.models.cosyvoice.cfm.solve`."""

    def __init__(
        self,
        dim: int,
        depth: int = 8,
        heads: int = 8,
        dim_head: int = 64,
        ff_mult: int = 4,
        mel_dim: int = 80,
        mu_dim: int | None = None,
        spk_dim: int | None = None,
        static_chunk_size: int = 50,
    ) -> None:
        super().__init__()
        self.static_chunk_size = static_chunk_size
        self.time_embed = TimestepEmbedding(dim)
        self.input_embed = InputEmbedding(mel_dim, mu_dim or mel_dim, dim, spk_dim or 0)
        self.rotary_embed = Rotary(dim_head)
        self.transformer_blocks = nn.ModuleList(DiTBlock(dim, heads, dim_head, ff_mult) for _ in range(depth))
        self.norm_out = AdaLayerNormZeroFinal(dim)
        self.proj_out = nn.Linear(dim, mel_dim)

    @classmethod
    def from_tag(cls, tag: Tag) -> DiT:
        """From the yaml's ``estimator: !new:cosyvoice.flow.DiT.dit.DiT`` entry."""
        a = tag.args if isinstance(tag.args, dict) else {}
        if a.get("long_skip_connection"):
            raise VoxDeskError(
                "This CosyVoice3 flow uses a DiT long skip connection: VoxDesk does not run it."
            )
        sizes = {k: a[k] for k in DIT_SIZES if a.get(k) is not None}
        bad = next((k for k, v in sizes.items() if type(v) is not int or v <= 0), None)
        if bad or "dim" not in sizes:
            raise VoxDeskError(f"The CosyVoice3 flow's DiT '{bad or 'dim'}' is not a positive whole number.")
        return cls(**sizes)

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
        """``x``/``mu``/``cond`` [B, 80, T], ``mask`` [B, 1, T], ``t`` [B] or [], ``spks`` [B, 80]
        -> the velocity [B, 80, T]."""
        x, mu, cond = x.transpose(1, 2), mu.transpose(1, 2), cond.transpose(1, 2)
        if t.ndim == 0:
            t = t.repeat(x.shape[0])
        emb = self.time_embed(t)
        h = self.input_embed(x, cond, mu, spks)
        rope = self.rotary_embed.angles(h.shape[1])
        attn_mask = attention_mask(mask, streaming, self.static_chunk_size)
        keep = mask.bool().transpose(1, 2)
        for block in self.transformer_blocks:
            h = block(h, emb, attn_mask, keep, rope)
        return self.proj_out(self.norm_out(h, emb)).transpose(1, 2)
