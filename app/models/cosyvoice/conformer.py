"""CosyVoice2's token encoder: the up-sampling conformer (``UpsampleConformerEncoder``).

What the official module (``cosyvoice/transformer/upsample_encoder.py`` at ace7c47, with the
WeNet/ESPnet parts it names) computes at inference, for the released configuration only
(``input_layer: linear``, ``pos_enc_layer_type: rel_pos_espnet``, ``rel_selfattn``, pre-norm,
no convolution module, no macaron feed-forward): :func:`check_encoder_args` refuses the rest.

tokens' embeddings [B, L, 512]
  → ``embed``: Linear + LayerNorm, × √512 (the relative positions go to attention, not to x)
  → ``pre_lookahead_layer``: a convolution over each token and the next 3 (zeros past the end,
    or in a non-final streaming chunk the 3 look-ahead tokens themselves), then a causal one,
    residual
  → ``encoders``: conformer blocks with relative-position self-attention (``pos_bias_u/v``,
    ``linear_pos``) and a SiLU feed-forward
  → ``up_layer``: nearest ×2 then a causal convolution (k=5)
  → ``up_embed`` → ``up_encoders`` → ``after_norm``.

Streaming masks attention to chunks: a position sees everything up to the end of its own
chunk of ``static_chunk_size`` tokens (×2 frames after the up-sampling). The official code
hard-codes 512 channels for the look-ahead and up-sampling layers; so does this one.

Batches are padded on the right; padded positions are masked as keys and zeroed before the
look-ahead convolution (where the official single-row code pads with zeros), so a padded row
computes what it computes alone.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError

WIDTH = 512  # upsample_encoder.py:203, :218
UP_BLOCKS = 4  # upsample_encoder.py:225
LOOKAHEAD = 3  # PreLookaheadLayer(pre_lookahead_len=3), hard-coded beside the 512
_SUPPORTED = {"input_layer": "linear", "pos_enc_layer_type": "rel_pos_espnet",
              "selfattention_layer_type": "rel_selfattn", "normalize_before": True,
              "use_cnn_module": False, "macaron_style": False, "activation_type": "swish"}  # fmt: skip


def check_encoder_args(args: dict[str, Any]) -> None:
    """Refuse encoder settings the released CosyVoice2 does not use (one line naming the key)."""
    defaults = {"normalize_before": True, "activation_type": "swish", "input_layer": "conv2d",
                "pos_enc_layer_type": "rel_pos", "selfattention_layer_type": "rel_selfattn",
                "use_cnn_module": True, "macaron_style": True}  # the official constructor's  # fmt: skip
    for key, want in _SUPPORTED.items():
        got = args.get(key, defaults[key])
        if got != want:
            raise VoxDeskError(f"CosyVoice2 flow encoder with {key}: {got!r} is not supported "
                               f"(VoxDesk reads the released {key}: {want!r}).")  # fmt: skip
    for key in ("input_size", "output_size"):
        if int(args.get(key, WIDTH)) != WIDTH:
            raise VoxDeskError(f"CosyVoice2 flow encoder {key} {args.get(key)} is not {WIDTH}, "
                               "the width its official code hard-codes.")  # fmt: skip


def rel_positions(length: int, dim: int, device: torch.device | None = None) -> torch.Tensor:
    """ESPnet's relative sinusoidal table [2*length-1, dim] for positions length-1 … -(length-1),
    built as ``EspnetRelPositionalEncoding`` builds it (float32; sin on even, cos on odd features;
    the negative half from ``-position``)."""
    position = torch.arange(0, length, dtype=torch.float32, device=device).unsqueeze(1)
    div = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32, device=device) * -(math.log(10000.0) / dim))
    pos = torch.zeros(length, dim, device=device)
    neg = torch.zeros(length, dim, device=device)
    pos[:, 0::2], pos[:, 1::2] = torch.sin(position * div), torch.cos(position * div)
    neg[:, 0::2], neg[:, 1::2] = torch.sin(-1 * position * div), torch.cos(-1 * position * div)
    return torch.cat([torch.flip(pos, [0]), neg[1:]], dim=0)


def chunk_mask(lengths: torch.Tensor, size: int, chunk: int) -> torch.Tensor:
    """[B, size, size] bool: key j valid for row b, and (if ``chunk`` > 0) in a chunk no later
    than query i's; with ``chunk`` 0 the [B, 1, size] key mask (full attention)."""
    keys = torch.arange(size, device=lengths.device)
    valid = (keys.unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(1)
    if chunk <= 0:
        return valid
    ends = (torch.div(keys, chunk, rounding_mode="trunc") + 1) * chunk
    return valid & (keys.unsqueeze(0) < ends.unsqueeze(1)).unsqueeze(0)


class LinearEmbed(nn.Module):
    """``LinearNoSubsampling`` with ESPnet's relative encoding: Linear, LayerNorm, × √dim."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.out = nn.Sequential(nn.Linear(dim, dim), nn.LayerNorm(dim, eps=1e-5))
        self.scale = math.sqrt(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(x) * self.scale


class RelPosAttention(nn.Module):
    """Transformer-XL style self-attention (``RelPositionMultiHeadedAttention``):
    scores = ((q + u)·k + shift((q + v)·W_pos p)) / √d_k, masked to -inf, softmax, masked to 0."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads, self.d_k = heads, dim // heads
        self.linear_q, self.linear_k = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.linear_v, self.linear_out = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.linear_pos = nn.Linear(dim, dim, bias=False)
        self.pos_bias_u = nn.Parameter(torch.zeros(heads, self.d_k))
        self.pos_bias_v = nn.Parameter(torch.zeros(heads, self.d_k))

    def forward(self, x: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.linear_q(x).view(b, t, self.heads, self.d_k)
        k = self.linear_k(x).view(b, t, self.heads, self.d_k).transpose(1, 2)
        v = self.linear_v(x).view(b, t, self.heads, self.d_k).transpose(1, 2)
        p = self.linear_pos(pos).view(1, -1, self.heads, self.d_k).transpose(1, 2)  # [1, h, 2t-1, d]
        ac = torch.matmul((q + self.pos_bias_u).transpose(1, 2), k.transpose(-2, -1))
        bd = torch.matmul((q + self.pos_bias_v).transpose(1, 2), p.transpose(-2, -1))  # [b, h, t, 2t-1]
        # Column m of bd is relative position t-1-m; query i and key j need position i-j.
        i = torch.arange(t, device=x.device)
        index = (t - 1 - i).unsqueeze(1) + i.unsqueeze(0)
        bd = bd.gather(-1, index.expand(b, self.heads, t, t))
        scores = (ac + bd) / math.sqrt(self.d_k)
        blocked = ~mask.unsqueeze(1)  # [b, 1, t or 1, t]
        attn = torch.softmax(scores.masked_fill(blocked, -float("inf")), dim=-1).masked_fill(blocked, 0.0)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, t, self.heads * self.d_k)
        return self.linear_out(out)


class FeedForward(nn.Module):
    """``PositionwiseFeedForward`` with the encoder's default activation, SiLU ("swish")."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.w_1, self.w_2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w_2(F.silu(self.w_1(x)))


class ConformerBlock(nn.Module):
    """``ConformerEncoderLayer`` as configured: pre-norm attention, pre-norm feed-forward."""

    def __init__(self, dim: int, heads: int, hidden: int) -> None:
        super().__init__()
        self.self_attn = RelPosAttention(dim, heads)
        self.feed_forward = FeedForward(dim, hidden)
        self.norm_mha, self.norm_ff = nn.LayerNorm(dim, eps=1e-12), nn.LayerNorm(dim, eps=1e-12)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.norm_mha(x), mask, pos)
        return x + self.feed_forward(self.norm_ff(x))


class PreLookahead(nn.Module):
    """``PreLookaheadLayer``: conv k=4 over a token and the next 3, leaky ReLU, causal conv k=3,
    plus the input. ``x`` [B, L, C] holds each row's look-ahead (context or zeros) after its
    first ``t`` positions; the output is [B, t, C]."""

    def __init__(self, channels: int, lookahead: int = LOOKAHEAD) -> None:
        super().__init__()
        self.lookahead = lookahead
        self.conv1 = nn.Conv1d(channels, channels, lookahead + 1)
        self.conv2 = nn.Conv1d(channels, channels, 3)

    def forward(self, x: torch.Tensor, t: int) -> torch.Tensor:
        h = F.pad(x.transpose(1, 2), (0, self.lookahead))
        h = F.leaky_relu(self.conv1(h)[:, :, :t])
        h = self.conv2(F.pad(h, (self.conv2.kernel_size[0] - 1, 0)))
        return h.transpose(1, 2) + x[:, :t]


class Upsample(nn.Module):
    """``Upsample1D``: nearest-neighbour ×stride, then a causal convolution of 2·stride+1."""

    def __init__(self, channels: int, stride: int = 2) -> None:
        super().__init__()
        self.stride = stride
        self.conv = nn.Conv1d(channels, channels, 2 * stride + 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.repeat_interleave(self.stride, dim=-1)
        return self.conv(F.pad(x, (2 * self.stride, 0)))


class UpsampleConformerEncoder(nn.Module):
    """The encoder, keyed as ``flow.pt``'s ``encoder.*``."""

    def __init__(self, heads: int, hidden: int, blocks: int, chunk: int, dim: int = WIDTH) -> None:
        super().__init__()
        self.dim, self.chunk = dim, chunk
        self.embed = LinearEmbed(dim)
        self.pre_lookahead_layer = PreLookahead(dim)
        self.encoders = nn.ModuleList(ConformerBlock(dim, heads, hidden) for _ in range(blocks))
        self.up_layer = Upsample(dim)
        self.up_embed = LinearEmbed(dim)
        self.up_encoders = nn.ModuleList(ConformerBlock(dim, heads, hidden) for _ in range(UP_BLOCKS))
        self.after_norm = nn.LayerNorm(dim, eps=1e-5)

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> UpsampleConformerEncoder:
        """From the yaml's ``encoder`` arguments (the official constructor's defaults)."""
        check_encoder_args(args)
        return cls(heads=int(args.get("attention_heads", 4)), hidden=int(args.get("linear_units", 2048)),
                   blocks=int(args.get("num_blocks", 6)),
                   chunk=int(args.get("static_chunk_size", 0)))  # fmt: skip

    def _layers(
        self, layers: nn.ModuleList, x: torch.Tensor, lengths: torch.Tensor, chunk: int
    ) -> torch.Tensor:
        mask = chunk_mask(lengths, x.shape[1], chunk)
        pos = rel_positions(x.shape[1], self.dim, x.device).to(x.dtype).unsqueeze(0)
        for layer in layers:
            x = layer(x, mask, pos)
        return x

    def forward(
        self, xs: torch.Tensor, lengths: torch.Tensor, lookahead: int, streaming: bool
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``xs`` [B, L, 512] token embeddings, ``lengths`` [B] → (h [B, 2T, 512], lengths [B]).

        ``lookahead`` 0: every token is encoded (the final call). ``lookahead`` 3: each row's last
        3 tokens are only the look-ahead context of a non-final streaming chunk, T = L - 3."""
        t = xs.shape[1] - lookahead
        lengths = lengths.to(xs.device)
        x = self.embed(xs)
        ends = torch.arange(xs.shape[1], device=xs.device).unsqueeze(0) < lengths.unsqueeze(1)
        x = self.pre_lookahead_layer(x * ends.unsqueeze(-1).to(x.dtype), t)
        lengths = lengths - lookahead
        x = self._layers(self.encoders, x, lengths, self.chunk if streaming else 0)
        x = self.up_layer(x.transpose(1, 2)).transpose(1, 2)
        lengths = lengths * self.up_layer.stride
        x = self.up_embed(x)
        x = self._layers(self.up_encoders, x, lengths, self.chunk * self.up_layer.stride if streaming else 0)
        return self.after_norm(x), lengths
