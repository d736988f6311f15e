"""Building blocks of the AudioVAE: Snake, weight-normed causal convs, residual and up/down blocks.

Parameter names follow the official checkpoint (``weight_g``/``weight_v``, ``alpha``,
``block.N``). Every decoder conv takes an optional ``stream`` that supplies the left context
(the previous chunk's last inputs) instead of zero padding; ``streaming_vae`` relies on it.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import torch
import torch.nn.functional as F
from torch import nn


class Stream(Protocol):
    """Left-context provider for streaming: see ``streaming_vae.StreamingDecoder``."""

    def extend(self, conv: CausalConv, x: torch.Tensor, context: int) -> torch.Tensor:
        """Return ``x`` with ``context`` earlier input frames prepended; remember the new tail."""
        ...


class Snake(nn.Module):
    """``x + sin²(αx) / (α + 1e-9)`` with a learned per-channel α."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(1, channels, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        alpha = self.alpha
        return x + (alpha + 1e-9).reciprocal() * torch.sin(alpha * x).pow(2)


class CausalConv(nn.Module):
    """A weight-normed causal ``conv1d`` or ``conv_transpose1d``.

    Plain conv: left-pads by ``left_pad`` (zeros, or the stream's context). Transposed conv:
    no padding, the last ``trim`` outputs are cut; streaming needs ``kernel - trim == stride``
    so each input frame yields exactly ``stride`` outputs.
    """

    def __init__(
        self,
        cin: int,
        cout: int,
        kernel: int,
        *,
        stride: int = 1,
        dilation: int = 1,
        groups: int = 1,
        left_pad: int = 0,
        transposed: bool = False,
        trim: int = 0,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.cin, self.kernel, self.stride, self.dilation, self.groups = cin, kernel, stride, dilation, groups
        self.left_pad, self.transposed, self.trim = left_pad, transposed, trim
        shape = (cin, cout // groups, kernel) if transposed else (cout, cin // groups, kernel)
        v = torch.empty(shape)
        nn.init.kaiming_uniform_(v, a=math.sqrt(5))  # torch's Conv default
        self.weight_g = nn.Parameter(torch.linalg.vector_norm(v, dim=(1, 2), keepdim=True))
        self.weight_v = nn.Parameter(v)
        if bias:
            fan_in = shape[1] * kernel
            self.bias = nn.Parameter(torch.empty(cout).uniform_(-(fan_in**-0.5), fan_in**-0.5))
        else:
            self.register_parameter("bias", None)

    @property
    def folded(self) -> bool:
        return "weight" in self._parameters

    @property
    def context(self) -> int:
        """Earlier input frames each output depends on (the streaming state length)."""
        if self.transposed:
            return (self.kernel - 1) // self.stride
        return self.left_pad

    def effective_weight(self) -> torch.Tensor:
        if self.folded:
            return self._parameters["weight"]
        v, g = self.weight_v, self.weight_g
        return v * (g / torch.linalg.vector_norm(v, dim=(1, 2), keepdim=True))

    @torch.no_grad()
    def fold_weight_norm(self) -> None:
        """Replace ``weight_g``/``weight_v`` by the plain ``weight`` they define."""
        if self.folded:
            return
        weight = self.effective_weight().detach().clone()
        del self.weight_g, self.weight_v
        self.weight = nn.Parameter(weight, requires_grad=False)

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, *args: Any) -> None:
        # A folded conv still accepts the checkpoint's weight_g/weight_v pair: fold it on the way in.
        g, v = prefix + "weight_g", prefix + "weight_v"
        if self.folded and g in state_dict and v in state_dict:
            gain, direction = state_dict.pop(g), state_dict.pop(v)
            norm = torch.linalg.vector_norm(direction, dim=(1, 2), keepdim=True)
            state_dict[prefix + "weight"] = direction * (gain / norm)
        super()._load_from_state_dict(state_dict, prefix, *args)

    def forward(self, x: torch.Tensor, stream: Stream | None = None) -> torch.Tensor:
        w = self.effective_weight()
        if self.transposed:
            n = x.shape[-1]
            if stream is None:
                y = F.conv_transpose1d(x, w, self.bias, self.stride, groups=self.groups)
                return y[..., : y.shape[-1] - self.trim]
            c = self.context
            x = stream.extend(self, x, c)
            if x.device.type == "cpu" and self.groups == 1:
                y = conv_transpose_gemm(x, w, self.bias, self.stride)
            else:
                y = F.conv_transpose1d(x, w, self.bias, self.stride, groups=self.groups)
            return y[..., c * self.stride : (c + n) * self.stride]
        if self.left_pad:
            x = F.pad(x, (self.left_pad, 0)) if stream is None else stream.extend(self, x, self.left_pad)
        return F.conv1d(x, w, self.bias, self.stride, 0, self.dilation, self.groups)


def conv_transpose_gemm(
    x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, stride: int
) -> torch.Tensor:
    """``conv_transpose1d(x, w, bias, stride)`` as one GEMM and an overlap-add (``fold``).

    On the CPU a streaming call feeds a few frames at a time, for which PyTorch takes its slow
    (non-oneDNN) transposed-convolution path; the GEMM form reads the weight once and is several
    times faster there. ``x [B, Cin, T]``, ``w [Cin, Cout, K]``, groups 1."""
    b, cin, t = x.shape
    cout, k = w.shape[1], w.shape[2]
    cols = torch.matmul(x.transpose(1, 2), w.reshape(cin, cout * k))  # [B, T, Cout*K]
    length = (t - 1) * stride + k
    y = F.fold(cols.transpose(1, 2), (1, length), (1, k), stride=(1, stride)).view(b, cout, length)
    return y if bias is None else y + bias[:, None]


def _down_pad(stride: int, version: int) -> int:
    """Left padding of an encoder downsampling conv (V2 subtracts ``output_padding``)."""
    pad = 2 * math.ceil(stride / 2)
    return pad - stride % 2 if version == 2 else pad


class ResidualUnit(nn.Module):
    """Snake, dilated causal k=7 conv, Snake, 1x1 conv; plus the input."""

    def __init__(self, dim: int, dilation: int, groups: int) -> None:
        super().__init__()
        self.block = nn.Sequential(
            Snake(dim),
            CausalConv(dim, dim, 7, dilation=dilation, groups=groups, left_pad=6 * dilation),
            Snake(dim),
            CausalConv(dim, dim, 1),
        )

    def forward(self, x: torch.Tensor, stream: Stream | None = None) -> torch.Tensor:
        snake1, conv1, snake2, conv2 = self.block
        return x + conv2(snake2(conv1(snake1(x), stream)))


class EncoderBlock(nn.Module):
    def __init__(self, dim: int, stride: int, groups: int, version: int) -> None:
        super().__init__()
        half = dim // 2
        self.block = nn.Sequential(
            *(ResidualUnit(half, d, groups) for d in (1, 3, 9)),
            Snake(half),
            CausalConv(half, dim, 2 * stride, stride=stride, left_pad=_down_pad(stride, version)),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(x)


class DecoderBlock(nn.Module):
    """Snake, causal transposed conv (upsample by ``stride``), three residual units."""

    def __init__(self, cin: int, cout: int, stride: int, groups: int) -> None:
        super().__init__()
        trim = 2 * math.ceil(stride / 2) - stride % 2
        self.block = nn.Sequential(
            Snake(cin),
            CausalConv(cin, cout, 2 * stride, stride=stride, transposed=True, trim=trim),
            *(ResidualUnit(cout, d, groups) for d in (1, 3, 9)),
        )
        self.input_channels = cin

    def forward(self, x: torch.Tensor, stream: Stream | None = None) -> torch.Tensor:
        snake, up, *units = self.block
        x = up(snake(x), stream)
        for unit in units:
            x = unit(x, stream)
        return x


class SampleRateCondition(nn.Module):
    """V2: per-channel modulation by the output sample-rate bucket, before a decoder block."""

    def __init__(self, dim: int, buckets: int, cond_type: str, cond_dim: int, out_layer: bool) -> None:
        super().__init__()
        self.cond_type = cond_type
        out_in = dim
        if cond_type in ("scale_bias", "scale_bias_init"):
            self.scale_embed = nn.Embedding(buckets, dim)
            self.bias_embed = nn.Embedding(buckets, dim)
            nn.init.ones_(self.scale_embed.weight)
            nn.init.zeros_(self.bias_embed.weight)
        elif cond_type == "add":
            self.cond_embed = nn.Embedding(buckets, dim)
        else:  # concat
            self.cond_embed = nn.Embedding(buckets, cond_dim)
            out_in = dim + cond_dim
        if out_layer:
            self.out_layer = nn.Sequential(Snake(out_in), CausalConv(out_in, dim, 1))
        else:
            self.out_layer = nn.Identity()

    def forward(self, x: torch.Tensor, bucket: int) -> torch.Tensor:
        # Indexing the tables by a Python int (no index tensor) keeps this free of host-to-device copies.
        if self.cond_type == "concat":
            cond = self.cond_embed.weight[bucket].view(1, -1, 1)
            x = torch.cat([x, cond.expand(x.shape[0], -1, x.shape[-1])], dim=1)
        elif self.cond_type == "add":
            x = x + self.cond_embed.weight[bucket].view(1, -1, 1)
        else:
            scale = self.scale_embed.weight[bucket].view(1, -1, 1)
            x = x * scale + self.bias_embed.weight[bucket].view(1, -1, 1)
        return self.out_layer(x)
