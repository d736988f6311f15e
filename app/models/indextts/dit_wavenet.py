"""The WaveNet stack that ends IndexTTS's S2Mel DiT (official ``indextts/s2mel/modules/wavenet.py`` ``WN``).

Written from index-tts at ee40fa7. Each of its convolutions is the official ``SConv1d``: weight norm
(folded into a plain weight when the checkpoint is loaded, see :mod:`app.models.indextts.dit`), and
**reflect** padding of ``(k - 1)·d`` frames split with the extra frame on the left, where a row not
longer than the padding is first extended with zeros (encodec's ``pad1d``). The key names keep the
official nesting (``in_layers.{i}.conv.conv.weight``).

A layer: ``tanh(a)·sigmoid(b)`` of the dilated convolution plus the time condition (one 1×1
convolution makes every layer's share of it), then a 1×1 convolution split into the residual (all
but the last layer) and the skip sum; padded frames are zeroed after each residual and at the end.

Rows of a batch may have different lengths (``lengths``): each row is reflected at its own end, so
it gives what it gives alone.
"""

from __future__ import annotations

import torch
from torch import nn


def reflect_index(lengths: torch.Tensor, frames: int, left: int, right: int) -> torch.Tensor:
    """Gather index [B, frames + left + right] into a row extended by one zero column (index
    ``frames``) that pads each row as encodec's ``pad1d(mode="reflect")`` pads it alone.

    Row ``b`` of length ``n`` is reflected over ``max(n, pad + 1)`` frames (``pad1d`` first extends a
    row not longer than the padding with zeros); frames past ``n`` read the zero column, and so do
    the columns past the row's own padded end (they are masked later)."""
    pos = torch.arange(-left, frames + right, device=lengths.device)[None, :]
    n = lengths[:, None]
    span = n.clamp(min=max(left, right) + 1)
    idx = torch.where(pos < 0, -pos, pos)
    idx = torch.where(idx >= span, 2 * (span - 1) - idx, idx)
    return torch.where((idx >= n) | (pos >= n + right), frames, idx)


class _NormConv(nn.Module):
    """The official ``NormConv1d`` level: only there so the keys read ``….conv.conv.weight``."""

    def __init__(self, conv: nn.Conv1d) -> None:
        super().__init__()
        self.conv = conv


class PaddedConv(nn.Module):
    """The official ``SConv1d`` (stride 1, not causal) with its weight norm folded."""

    def __init__(self, channels_in: int, channels_out: int, kernel: int, dilation: int = 1) -> None:
        super().__init__()
        self.conv = _NormConv(nn.Conv1d(channels_in, channels_out, kernel, dilation=dilation))
        total = (kernel - 1) * dilation
        self.pad = (total - total // 2, total // 2)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """``x`` [B, C, T]; ``lengths`` [B] or None (every row is T frames)."""
        left, right = self.pad
        if left or right:
            if lengths is None:
                lengths = torch.full((x.shape[0],), x.shape[-1], device=x.device)
            idx = reflect_index(lengths, x.shape[-1], left, right)
            extended = torch.cat([x, x.new_zeros(x.shape[0], x.shape[1], 1)], dim=-1)
            x = extended.gather(2, idx[:, None, :].expand(-1, x.shape[1], -1))
        return self.conv.conv(x)


class WaveNet(nn.Module):
    def __init__(self, hidden: int, kernel: int, dilation_rate: int, layers: int, cond_channels: int) -> None:
        super().__init__()
        self.hidden = hidden
        self.cond_layer = PaddedConv(cond_channels, 2 * hidden * layers, 1)
        self.in_layers = nn.ModuleList(
            PaddedConv(hidden, 2 * hidden, kernel, dilation_rate**i) for i in range(layers)
        )
        self.res_skip_layers = nn.ModuleList(
            PaddedConv(hidden, 2 * hidden if i < layers - 1 else hidden, 1) for i in range(layers)
        )

    def forward(
        self, x: torch.Tensor, g: torch.Tensor, mask: torch.Tensor | None, lengths: torch.Tensor | None
    ) -> torch.Tensor:
        """``x`` [B, H, T], ``g`` [B, cond, 1], ``mask`` [B, 1, T] (1 = frame) and ``lengths`` [B],
        both None when every row has T frames → [B, H, T]."""
        g = self.cond_layer(g)
        out = torch.zeros_like(x)
        h = self.hidden
        last = len(self.in_layers) - 1
        for i, (conv, res_skip) in enumerate(zip(self.in_layers, self.res_skip_layers, strict=True)):
            a, b = (conv(x, lengths) + g[:, 2 * h * i : 2 * h * (i + 1)]).split(h, dim=1)
            acts = res_skip(torch.tanh(a) * torch.sigmoid(b))
            if i < last:
                x = x + acts[:, :h] if mask is None else (x + acts[:, :h]) * mask
                out = out + acts[:, h:]
            else:
                out = out + acts
        return out if mask is None else out * mask
