"""The networks of IndexTTS's emotion encoder: a WeNet conformer and a perceiver resampler.

What the official ``ConformerEncoder`` (``indextts/gpt/conformer_encoder.py`` and
``indextts/gpt/conformer/*``) and ``PerceiverResampler`` (``indextts/gpt/perceiver.py``) compute at
inference, as ``UnifiedVoice`` builds them for ``emo_condition_module``: pre-norm blocks, no macaron
feed-forward, a convolution module (LayerNorm, not BatchNorm), SiLU, LayerNorm eps 1e-5, and the
conformer's *own* relative-position variant — a sinusoidal table of the positions 0 … T'-1 only,
with no ``rel_shift`` (the official code removed it), so ``(q + v)·W_pos p_j`` is a bias per key
position. This is not the ESPnet variant of ``app/models/cosyvoice/conformer.py`` (positions
T'-1 … -(T'-1), shifted), whose feed-forward alone is shared.

Masks: the official caller passes the feature *width* (1024) as every clip's length, so every
frame is valid while a clip has at most 1024 frames (finding 8 of docs/indextts_plan.md); the
prompt clips are cut at 15 s (750 frames), and :meth:`EmotionConformer.forward` refuses longer
input instead of reproducing a mask that cuts frames 1024 on.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError
from app.models.cosyvoice.conformer import FeedForward

MAX_FRAMES = 1024  # the "length" the official caller passes (i25:762-763)
PE_ROWS = 5000  # PositionalEncoding(max_len=5000), a buffer saved in gpt.pth
INPUT_LAYERS = ("conv2d2",)  # what the released config uses; the others are refused
CONV_KERNEL = 15  # ConformerEncoder's cnn_module_kernel default
PERCEIVER_DEPTH = 2  # PerceiverResampler defaults: depth 2, dim_head 64
PERCEIVER_HEAD_DIM = 64


def sinusoid_table(rows: int, dim: int) -> torch.Tensor:
    """[1, rows, dim] sin on even features, cos on odd (the table ``pe`` the file also holds)."""
    position = torch.arange(0, rows).unsqueeze(1)
    div = torch.exp(torch.arange(0, dim, 2) * -(math.log(10000.0) / dim))
    table = torch.zeros(rows, dim)
    table[:, 0::2], table[:, 1::2] = torch.sin(position * div), torch.cos(position * div)
    return table.unsqueeze(0)


class PosTable(nn.Module):
    """Holds ``pe`` under the official key ``embed.pos_enc.pe``."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.register_buffer("pe", sinusoid_table(PE_ROWS, dim))


class Subsample2(nn.Module):
    """``Conv2dSubsampling2``: a 3x3 stride-2 convolution over (time, feature), ReLU, a linear map
    of channels x features, then x √dim; returns (x [B, T', dim], positions [1, T', dim])."""

    def __init__(self, in_dim: int, dim: int) -> None:
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, dim, 3, 2), nn.ReLU())
        self.out = nn.Sequential(nn.Linear(dim * ((in_dim - 1) // 2), dim))
        self.pos_enc = PosTable(dim)
        self.scale = math.sqrt(dim)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.conv(x.unsqueeze(1))
        b, c, t, f = x.shape
        x = self.out(x.transpose(1, 2).reshape(b, t, c * f))
        return x * self.scale, self.pos_enc.pe[:, :t]


class RelAttention(nn.Module):
    """``RelPositionMultiHeadedAttention`` without ``rel_shift``:
    softmax(((q + u)·k + (q + v)·W_pos p) / √d_k)·v, every key valid."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads, self.d_k = heads, dim // heads
        self.linear_q, self.linear_k = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.linear_v, self.linear_out = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.linear_pos = nn.Linear(dim, dim, bias=False)
        self.pos_bias_u = nn.Parameter(torch.zeros(heads, self.d_k))
        self.pos_bias_v = nn.Parameter(torch.zeros(heads, self.d_k))

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.linear_q(x).view(b, t, self.heads, self.d_k)
        k = self.linear_k(x).view(b, t, self.heads, self.d_k).transpose(1, 2)
        v = self.linear_v(x).view(b, t, self.heads, self.d_k).transpose(1, 2)
        p = self.linear_pos(pos).view(1, -1, self.heads, self.d_k).transpose(1, 2)
        ac = torch.matmul((q + self.pos_bias_u).transpose(1, 2), k.transpose(-2, -1))
        bd = torch.matmul((q + self.pos_bias_v).transpose(1, 2), p.transpose(-2, -1))
        attn = torch.softmax((ac + bd) / math.sqrt(self.d_k), dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, t, self.heads * self.d_k)
        return self.linear_out(out)


class ConvModule(nn.Module):
    """``ConvolutionModule``: pointwise to 2C, GLU, depthwise (k=15, centred), LayerNorm, SiLU,
    pointwise."""

    def __init__(self, dim: int, kernel: int = CONV_KERNEL) -> None:
        super().__init__()
        self.pointwise_conv1 = nn.Conv1d(dim, 2 * dim, 1)
        self.depthwise_conv = nn.Conv1d(dim, dim, kernel, padding=(kernel - 1) // 2, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.pointwise_conv2 = nn.Conv1d(dim, dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.glu(self.pointwise_conv1(x.transpose(1, 2)), dim=1)
        h = self.depthwise_conv(h).transpose(1, 2)
        h = F.silu(self.norm(h)).transpose(1, 2)
        return self.pointwise_conv2(h).transpose(1, 2)


class ConformerBlock(nn.Module):
    """``ConformerEncoderLayer`` (pre-norm): attention, convolution, feed-forward, final norm."""

    def __init__(self, dim: int, heads: int, hidden: int) -> None:
        super().__init__()
        self.self_attn = RelAttention(dim, heads)
        self.feed_forward = FeedForward(dim, hidden)
        self.conv_module = ConvModule(dim)
        self.norm_ff, self.norm_mha = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.norm_conv, self.norm_final = nn.LayerNorm(dim), nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.norm_mha(x), pos)
        x = x + self.conv_module(self.norm_conv(x))
        x = x + self.feed_forward(self.norm_ff(x))
        return self.norm_final(x)


class EmotionConformer(nn.Module):
    """The emotion ``ConformerEncoder``: w2v-BERT features [B, T, 1024] → [B, (T-1)//2, dim]."""

    def __init__(self, in_dim: int, dim: int, heads: int, hidden: int, blocks: int) -> None:
        super().__init__()
        self.embed = Subsample2(in_dim, dim)
        self.encoders = nn.ModuleList(ConformerBlock(dim, heads, hidden) for _ in range(blocks))
        self.after_norm = nn.LayerNorm(dim)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        if not 3 <= feats.shape[1] <= MAX_FRAMES:
            raise VoxDeskError(f"The emotion clip gives {feats.shape[1]} feature frames; IndexTTS reads "
                               f"3 to {MAX_FRAMES} (use a clip between 0.1 and 15 seconds).")  # fmt: skip
        x, pos = self.embed(feats)
        for block in self.encoders:
            x = block(x, pos)
        return self.after_norm(x)


class CrossAttention(nn.Module):
    """The perceiver's ``Attention``: latents attend to themselves and the context together."""

    def __init__(self, dim: int, heads: int, head_dim: int = PERCEIVER_HEAD_DIM) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, head_dim
        self.to_q = nn.Linear(dim, heads * head_dim, bias=False)
        self.to_kv = nn.Linear(dim, 2 * heads * head_dim, bias=False)
        self.to_out = nn.Linear(heads * head_dim, dim, bias=False)

    def forward(self, latents: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        b, n, _ = latents.shape
        k, v = self.to_kv(torch.cat((latents, context), dim=-2)).chunk(2, dim=-1)
        q = self.to_q(latents).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k = k.reshape(b, -1, self.heads, self.head_dim).transpose(1, 2)
        v = v.reshape(b, -1, self.heads, self.head_dim).transpose(1, 2)
        attn = (torch.matmul(q, k.transpose(-2, -1)) * self.head_dim**-0.5).softmax(dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, n, self.heads * self.head_dim)
        return self.to_out(out)


class GegluFeedForward(nn.Sequential):
    """The perceiver's ``FeedForward``: Linear to 2·inner, x·GELU(gate), Linear back
    (keys ``0.*`` and ``2.*``; inner = int(dim · mult · 2 / 3))."""

    def __init__(self, dim: int, mult: float) -> None:
        inner = int(dim * mult * 2 / 3)
        super().__init__(nn.Linear(dim, 2 * inner), nn.Identity(), nn.Linear(inner, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, gate = self[0](x).chunk(2, dim=-1)
        return self[2](F.gelu(gate) * h)


class PerceiverResampler(nn.Module):
    """``PerceiverResampler`` with one latent: context [B, T', C] → [B, 1, dim], RMS-normalised
    (``F.normalize`` · √dim · gamma)."""

    def __init__(self, dim: int, context_dim: int, heads: int, mult: float, latents: int = 1) -> None:
        super().__init__()
        self.proj_context = nn.Linear(context_dim, dim) if context_dim != dim else nn.Identity()
        self.latents = nn.Parameter(torch.zeros(latents, dim))
        self.layers = nn.ModuleList(
            nn.ModuleList([CrossAttention(dim, heads), GegluFeedForward(dim, mult)])
            for _ in range(PERCEIVER_DEPTH)
        )
        self.norm = RmsNorm(dim)

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        context = self.proj_context(context)
        x = self.latents.unsqueeze(0).expand(context.shape[0], -1, -1)
        for attn, ff in self.layers:
            x = attn(x, context) + x
            x = ff(x) + x
        return self.norm(x)


class RmsNorm(nn.Module):
    """The perceiver's ``RMSNorm`` (key ``gamma``)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.scale = dim**0.5
        self.gamma = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(x, dim=-1) * self.scale * self.gamma
