"""CAM++ (3D-Speaker's CAMPPlus), the speaker model whose 192 values condition IndexTTS-2.5's GPT and S2Mel.

The official code builds ``CAMPPlus(feat_dim=80, embedding_size=192)`` (``indextts/s2mel/modules/
campplus/DTDNN.py`` with its defaults) and loads ``hf_cache/campplus_cn_common.bin``, a plain state
dict; CosyVoice ships the same network as ONNX. This is that network in inference form, with the
official parameter names (a strict load of the official file):

- ``head``: a 2-D front end over (frequency, time): a 3x3 convolution, two stages of two residual
  blocks that halve the frequency axis, one more halving convolution -> 32 x 10 = 320 channels;
- ``xvector``: a strided TDNN layer (320 -> 128, kernel 5, stride 2), three densely connected
  blocks of context-aware layers (12, 24 and 16 layers adding 32 channels each, dilation 1, 2, 2)
  each followed by a halving transition, then mean and standard deviation over time and a
  1x1 projection to 192 with a batch norm without affine parameters.

Every batch norm runs with its running statistics (eval mode).
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

FEAT_DIM = 80
EMBEDDING = 192
GROWTH = 32
BOTTLENECK = 4 * GROWTH
SEGMENT = 100  # frames pooled together for a context-aware layer's local context
BLOCKS = ((12, 1), (24, 2), (16, 2))  # (layers, dilation); kernel 3 everywhere


class _BnRelu(nn.Module):
    """Batch norm then ReLU (the official ``get_nonlinear('batchnorm-relu')``; key ``batchnorm``)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.batchnorm = nn.BatchNorm1d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.batchnorm(x))


class _ResBlock2d(nn.Module):
    """Two 3x3 convolutions with a residual; ``stride`` halves the frequency axis only."""

    def __init__(self, channels: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, stride=(stride, 1), padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.shortcut = nn.Sequential()
        if stride != 1:
            self.shortcut = nn.Sequential(nn.Conv2d(channels, channels, 1, stride=(stride, 1), bias=False),
                                          nn.BatchNorm2d(channels))  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(out + self.shortcut(x))


class _Head(nn.Module):
    """The official ``FCM``: [B, 80, T] -> [B, 320, T]."""

    def __init__(self, channels: int = 32) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, channels, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.layer1 = nn.Sequential(_ResBlock2d(channels, 2), _ResBlock2d(channels, 1))
        self.layer2 = nn.Sequential(_ResBlock2d(channels, 2), _ResBlock2d(channels, 1))
        self.conv2 = nn.Conv2d(channels, channels, 3, stride=(2, 1), padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.out_channels = channels * (FEAT_DIM // 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x.unsqueeze(1))))
        out = F.relu(self.bn2(self.conv2(self.layer2(self.layer1(out)))))
        return out.flatten(1, 2)


class _Tdnn(nn.Module):
    """A 1-D convolution (no bias) then batch norm and ReLU."""

    def __init__(self, cin: int, cout: int, kernel: int, stride: int = 1) -> None:
        super().__init__()
        self.linear = nn.Conv1d(cin, cout, kernel, stride=stride, padding=(kernel - 1) // 2, bias=False)
        self.nonlinear = _BnRelu(cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.nonlinear(self.linear(x))


class _ContextAware(nn.Module):
    """The official ``CAMLayer``: a dilated convolution gated by a sigmoid of the global mean plus
    the mean of the :data:`SEGMENT`-frame segment each frame falls in."""

    def __init__(self, channels: int, out: int, dilation: int) -> None:
        super().__init__()
        self.linear_local = nn.Conv1d(channels, out, 3, padding=dilation, dilation=dilation, bias=False)
        self.linear1 = nn.Conv1d(channels, channels // 2, 1)
        self.linear2 = nn.Conv1d(channels // 2, out, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        frames = x.shape[-1]
        segments = F.avg_pool1d(x, SEGMENT, SEGMENT, ceil_mode=True)
        context = x.mean(-1, keepdim=True) + segments.repeat_interleave(SEGMENT, dim=-1)[..., :frames]
        gate = torch.sigmoid(self.linear2(F.relu(self.linear1(context))))
        return self.linear_local(x) * gate


class _DenseLayer(nn.Module):
    """BN-ReLU, a 1x1 bottleneck, BN-ReLU, a context-aware layer adding :data:`GROWTH` channels."""

    def __init__(self, channels: int, dilation: int) -> None:
        super().__init__()
        self.nonlinear1 = _BnRelu(channels)
        self.linear1 = nn.Conv1d(channels, BOTTLENECK, 1, bias=False)
        self.nonlinear2 = _BnRelu(BOTTLENECK)
        self.cam_layer = _ContextAware(BOTTLENECK, GROWTH, dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.cam_layer(self.nonlinear2(self.linear1(self.nonlinear1(x))))


class _DenseBlock(nn.Module):
    """Layers ``tdnnd1``.. each seeing every earlier output (concatenated on channels)."""

    def __init__(self, channels: int, layers: int, dilation: int) -> None:
        super().__init__()
        for i in range(layers):
            self.add_module(f"tdnnd{i + 1}", _DenseLayer(channels + i * GROWTH, dilation))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.children():
            x = torch.cat([x, layer(x)], dim=1)
        return x


class _Transit(nn.Module):
    """BN-ReLU then a 1x1 convolution without bias."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.nonlinear = _BnRelu(cin)
        self.linear = nn.Conv1d(cin, cout, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.nonlinear(x))


class _StatsPool(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x.mean(dim=-1), x.std(dim=-1, unbiased=True)], dim=-1)


class _Embedding(nn.Module):
    """The 1x1 projection of the pooled statistics and its affine-free batch norm."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.linear = nn.Conv1d(cin, cout, 1, bias=False)
        self.nonlinear = nn.Sequential(OrderedDict(batchnorm=nn.BatchNorm1d(cout, affine=False)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.nonlinear(self.linear(x.unsqueeze(-1)).squeeze(-1))


class CAMPPlus(nn.Module):
    """fbank [B, T, 80] (mean-removed) -> speaker embedding [B, 192]."""

    def __init__(self) -> None:
        super().__init__()
        self.head = _Head()
        channels = 128
        layers: OrderedDict[str, nn.Module] = OrderedDict(tdnn=_Tdnn(self.head.out_channels, channels, 5, 2))
        for i, (count, dilation) in enumerate(BLOCKS, start=1):
            layers[f"block{i}"] = _DenseBlock(channels, count, dilation)
            channels += count * GROWTH
            layers[f"transit{i}"] = _Transit(channels, channels // 2)
            channels //= 2
        layers["out_nonlinear"] = nn.Sequential(OrderedDict(batchnorm=nn.BatchNorm1d(channels),
                                                            relu=nn.ReLU()))  # fmt: skip
        layers["stats"] = _StatsPool()
        layers["dense"] = _Embedding(2 * channels, EMBEDDING)
        self.xvector = nn.Sequential(layers)
        self.eval()

    def forward(self, fbank: torch.Tensor) -> torch.Tensor:
        return self.xvector(self.head(fbank.transpose(1, 2)))


def load_campplus(path: str | Path) -> CAMPPlus:
    """``campplus_cn_common.bin`` (a plain state dict, read with ``weights_only=True``) in a strict load;
    one plain line naming the file or the first missing / unexpected / mis-shaped key."""
    from app.models.indextts.weights import load_torch, state_of, strict_load

    path = Path(path)
    model = CAMPPlus()
    state = state_of(load_torch(path), "", path)  # a plain state dict: no key to unwrap
    strict_load(model, state, f"The speaker model {path.name} in {path.parent}")
    return model.eval()
