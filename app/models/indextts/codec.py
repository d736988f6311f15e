"""IndexTTS-2.5's semantic codec decoder: the GPT's mel codes → the features S2Mel is conditioned on.

As the official ``EnhancedCodec.decode`` computes it (index-tts ``indextts/codec/models.py``, the
quantizer of ``amphion_codec/quantize`` it builds — a residual VQ of factorized quantizers — and
the Vocos backbone of ``codec/kmeans/vocos.py``): per quantizer, a codebook lookup
(``codebook_dim`` wide) and a 1×1 weight-normed conv back to ``hidden_size``, summed over the
quantizers; the decoder (a Vocos backbone: a k7 conv, LayerNorm, ConvNeXt blocks, LayerNorm; then
a Linear to ``hidden_size``); ×2 nearest upsampling; the k3 ``up`` conv. Codes ``[1, N]`` give
``[1, 2N, hidden_size]``.

Weights: ``codec.pth``'s ``model`` table. The weight norm of ``out_project`` arrives as
``weight_g``/``weight_v`` (or ``parametrizations.weight.original0/1``) and is folded into a plain
``weight`` once, at load. The encoder half of the codec (``down``, ``encoder``, the quantizers'
``in_project``) only makes codes from audio features; inference never runs it, so its keys are
accepted in the file and not kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError
from app.models.common.weight_norm import fold_weight_norm
from app.models.indextts.weights import strict_load

# EnhancedCodec's constructor defaults: the official takes a key missing from the section at these.
DEFAULTS = {"codebook_size": 8192, "hidden_size": 1024, "codebook_dim": 8, "vocos_dim": 384,
            "vocos_intermediate_dim": 2048, "vocos_num_layers": 12, "num_quantizers": 1,
            "downsample_scale": 2}  # fmt: skip
ENCODER_PREFIXES = ("down.", "encoder.")
LN_EPS = 1e-6


class ConvNeXtBlock(nn.Module):
    """Vocos' ConvNeXt block without AdaLayerNorm: depthwise k7 conv, LayerNorm, Linear, GELU,
    Linear, a per-channel scale ``gamma``, residual."""

    def __init__(self, dim: int, intermediate: int) -> None:
        super().__init__()
        self.dwconv = nn.Conv1d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=LN_EPS)
        self.pwconv1 = nn.Linear(dim, intermediate)
        self.pwconv2 = nn.Linear(intermediate, dim)
        self.gamma = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(self.dwconv(x).transpose(1, 2))
        y = self.gamma * self.pwconv2(F.gelu(self.pwconv1(y)))
        return x + y.transpose(1, 2)


class VocosBackbone(nn.Module):
    """``[B, C_in, T]`` → ``[B, T, dim]``: the embedding conv, LayerNorm, ConvNeXt blocks, LayerNorm."""

    def __init__(self, channels: int, dim: int, intermediate: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Conv1d(channels, dim, kernel_size=7, padding=3)
        self.norm = nn.LayerNorm(dim, eps=LN_EPS)
        self.convnext = nn.ModuleList(ConvNeXtBlock(dim, intermediate) for _ in range(layers))
        self.final_layer_norm = nn.LayerNorm(dim, eps=LN_EPS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm(self.embed(x).transpose(1, 2)).transpose(1, 2)
        for block in self.convnext:
            x = block(x)
        return self.final_layer_norm(x.transpose(1, 2))


class FactorizedCodebook(nn.Module):
    """One factorized quantizer's decoding half: codes ``[B, T]`` → ``[B, hidden, T]``.

    The projection is the identity when the codebook is as wide as the features (the official
    ``nn.Identity``, which has no weights)."""

    def __init__(self, size: int, dim: int, hidden: int) -> None:
        super().__init__()
        self.codebook = nn.Embedding(size, dim)
        same = dim == hidden
        self.out_project: nn.Module = nn.Identity() if same else nn.Conv1d(dim, hidden, kernel_size=1)

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        return self.out_project(self.codebook(codes).transpose(1, 2))


class ResidualCodebooks(nn.Module):
    """The residual VQ's ``vq2emb``: the sum of every quantizer's decoded codes."""

    def __init__(self, count: int, size: int, dim: int, hidden: int) -> None:
        super().__init__()
        self.quantizers = nn.ModuleList(FactorizedCodebook(size, dim, hidden) for _ in range(count))

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        out = self.quantizers[0](codes[0])
        for quantizer, layer in zip(self.quantizers[1:], codes[1:], strict=True):
            out = out + quantizer(layer)
        return out


class SemanticCodec(nn.Module):
    """The decoding half of the official ``EnhancedCodec`` (see the module docstring)."""

    def __init__(self, codebook_size: int, hidden_size: int, codebook_dim: int, vocos_dim: int,
                 vocos_intermediate_dim: int, vocos_num_layers: int, num_quantizers: int,
                 ) -> None:  # fmt: skip
        super().__init__()
        self.codebook_size = codebook_size
        self.quantizer = ResidualCodebooks(num_quantizers, codebook_size, codebook_dim, hidden_size)
        self.decoder = nn.Sequential(
            VocosBackbone(hidden_size, vocos_dim, vocos_intermediate_dim, vocos_num_layers),
            nn.Linear(vocos_dim, hidden_size),
        )
        self.up = nn.Conv1d(hidden_size, hidden_size, kernel_size=3, padding=1)

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> SemanticCodec:
        """From config.yaml's ``semantic_codec`` mapping (a key it lacks takes the official default)."""
        values = {key: _int(section, key, default) for key, default in DEFAULTS.items()}
        scale = values.pop("downsample_scale")
        if scale <= 1:
            # The official decode only defines its output on the upsampling branch.
            raise VoxDeskError(f"config.yaml: semantic_codec.downsample_scale is {scale}, but IndexTTS "
                               "decodes codes only with a downsampling codec (2): download the model "
                               "folder again.")  # fmt: skip
        return cls(**values).eval()

    def load(self, state_dict: Mapping[str, torch.Tensor]) -> SemanticCodec:
        """Take ``codec.pth``'s ``model`` table strictly (the encoder half's keys dropped, weight
        norm folded); a key missing, unknown or misshapen is one line naming it."""
        kept = {k: v for k, v in state_dict.items()
                if not k.startswith(ENCODER_PREFIXES) and ".in_project." not in k}  # fmt: skip
        strict_load(self, fold_weight_norm(kept), "codec.pth")
        return self

    @property
    def num_quantizers(self) -> int:
        return len(self.quantizer.quantizers)

    @torch.inference_mode()
    def decode(self, codes: torch.Tensor) -> torch.Tensor:
        """Codes ``[B, N]`` (one quantizer) or ``[Q, B, N]`` → features ``[B, 2N, hidden_size]``.

        Codes outside the codebook (the GPT's start/stop tokens among them) are one line."""
        if codes.dim() == 2:
            codes = codes.unsqueeze(0)
        if codes.dim() != 3 or codes.shape[0] != self.num_quantizers or codes.shape[-1] == 0:
            raise VoxDeskError(f"The semantic codec decodes {self.num_quantizers} row(s) of codes, "
                               f"got a tensor of shape {tuple(codes.shape)}: nothing to speak.")  # fmt: skip
        low, high = int(codes.min()), int(codes.max())
        if low < 0 or high >= self.codebook_size:
            bad = low if low < 0 else high
            raise VoxDeskError(f"Semantic code {bad} is outside the codec's codebook (0 to "
                               f"{self.codebook_size - 1}): the GPT and codec.pth do not belong "
                               "together; download the model folder again.")  # fmt: skip
        codes = codes.to(self.up.weight.device).long()
        x = self.decoder(self.quantizer(codes)).transpose(1, 2)
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        return self.up(x).transpose(1, 2)


def _int(section: Mapping[str, Any], key: str, default: int) -> int:
    value = section.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise VoxDeskError(f"config.yaml: semantic_codec.{key} is {value!r}, not a whole number: "
                           "download the model folder again.")  # fmt: skip
    return value
