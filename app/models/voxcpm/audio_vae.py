"""AudioVAE V1 (VoxCPM-0.5B / 1.5) and V2 (VoxCPM2): a causal DAC-like convolutional VAE.

The parameter names and shapes equal the official ``audiovae.pth`` exactly (old-style weight
norm: ``weight_g``/``weight_v``; Snake ``alpha``; V2's ``sr_cond_model`` and int32
``sr_bin_boundaries`` buffer), so the official file loads with ``load_state_dict(strict=True)``.
:meth:`AudioVAE.fold_weight_norm` drops the per-call weight-norm math; a folded model still
loads the official ``weight_g``/``weight_v`` keys (they are folded as they arrive).

The layers are in ``vae_layers.py``; ``streaming_vae.StreamingDecoder`` runs this decoder
chunk by chunk through the ``stream`` argument of :meth:`AudioVAE.decode`.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError
from app.models.voxcpm.vae_layers import (
    CausalConv,
    DecoderBlock,
    EncoderBlock,
    SampleRateCondition,
    Snake,
    Stream,
)

_COND_TYPES = ("scale_bias", "scale_bias_init", "add", "concat")

# Official pydantic defaults (modules/audiovae/audio_vae.py and audio_vae_v2.py).
_DEFAULTS: dict[int, dict[str, Any]] = {
    1: {
        "encoder_dim": 128,
        "encoder_rates": (2, 5, 8, 8),
        "latent_dim": 64,
        "decoder_dim": 1536,
        "decoder_rates": (8, 8, 5, 2),
        "depthwise": True,
        "sample_rate": 16000,
        "use_noise_block": False,
    },
    2: {
        "encoder_dim": 128,
        "encoder_rates": (2, 5, 8, 8),
        "latent_dim": 64,
        "decoder_dim": 2048,
        "decoder_rates": (8, 6, 5, 2, 2, 2),
        "depthwise": True,
        "sample_rate": 16000,
        "out_sample_rate": 48000,
        "use_noise_block": False,
        "sr_bin_boundaries": (20000, 30000, 40000),
        "cond_type": "scale_bias",
        "cond_dim": 128,
        "cond_out_layer": False,
    },
}


@dataclass(frozen=True)
class AudioVAEConfig:
    """The ``audio_vae_config`` of ``config.json``; ``version`` 1 or 2 picks the architecture.

    V1 has no output-rate or sample-rate-condition fields: it decodes at ``sample_rate``.
    """

    version: int = 2
    encoder_dim: int = 128
    encoder_rates: tuple[int, ...] = (2, 5, 8, 8)
    latent_dim: int | None = 64
    decoder_dim: int = 2048
    decoder_rates: tuple[int, ...] = (8, 6, 5, 2, 2, 2)
    depthwise: bool = True
    sample_rate: int = 16000
    out_sample_rate: int | None = 48000
    use_noise_block: bool = False
    sr_bin_boundaries: tuple[int, ...] | None = (20000, 30000, 40000)
    cond_type: str = "scale_bias"
    cond_dim: int = 128
    cond_out_layer: bool = False
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None, version: int) -> AudioVAEConfig:
        """Build from a parsed ``audio_vae_config`` (None/absent: the official defaults).

        Unknown keys are kept in ``extra`` and otherwise ignored, as pydantic does.
        """
        if version not in _DEFAULTS:
            raise VoxDeskError(f"Unknown AudioVAE version {version}: this model is not supported.")
        values = dict(_DEFAULTS[version])
        extra = {}
        for key, value in (d or {}).items():
            if key in values:
                values[key] = value
            else:
                extra[key] = value
        if version == 1:
            values["out_sample_rate"] = None
            values["sr_bin_boundaries"] = None
        for key in ("encoder_rates", "decoder_rates", "sr_bin_boundaries"):
            if values.get(key) is not None:
                values[key] = tuple(int(v) for v in values[key])
        return cls(version=version, extra=extra, **values)

    def __post_init__(self) -> None:
        if self.latent_dim is None:
            object.__setattr__(self, "latent_dim", self.encoder_dim * 2 ** len(self.encoder_rates))
        if self.version == 2 and self.out_sample_rate is None:
            object.__setattr__(self, "out_sample_rate", self.sample_rate)

        def bad(why: str) -> VoxDeskError:
            return VoxDeskError(f"The model's audio_vae_config is not supported ({why}).")

        if self.version not in (1, 2):
            raise bad(f"version {self.version}")
        if not self.encoder_rates or not self.decoder_rates:
            raise bad("empty encoder_rates or decoder_rates")
        if any(r < 1 for r in self.encoder_rates + self.decoder_rates):
            raise bad("a rate below 1")
        if self.depthwise and self.decoder_dim % 2 ** len(self.decoder_rates):
            raise bad("decoder_dim must be divisible by 2**len(decoder_rates) when depthwise")
        if self.use_noise_block:
            raise bad("use_noise_block adds random noise at inference")
        if self.cond_type not in _COND_TYPES:
            raise bad(f"cond_type {self.cond_type!r}")
        if self.cond_type == "concat" and not self.cond_out_layer:
            raise bad("cond_type 'concat' needs cond_out_layer")

    @property
    def encoder_rate(self) -> int:
        """Sample rate the encoder expects (prompts are resampled to it)."""
        return self.sample_rate

    @property
    def output_rate(self) -> int:
        """Sample rate of decoded audio."""
        return self.out_sample_rate if self.version == 2 else self.sample_rate

    @property
    def chunk_size(self) -> int:
        """Encoder hop: input samples per latent frame."""
        return math.prod(self.encoder_rates)

    @property
    def decoder_hop(self) -> int:
        """Output samples per latent frame."""
        return math.prod(self.decoder_rates)

    @property
    def conditioned(self) -> bool:
        """Whether the decoder has the V2 sample-rate condition layers."""
        return self.version == 2 and self.sr_bin_boundaries is not None


class Encoder(nn.Module):
    def __init__(self, cfg: AudioVAEConfig) -> None:
        super().__init__()
        dim = cfg.encoder_dim
        blocks: list[nn.Module] = [CausalConv(1, dim, 7, left_pad=6)]
        for stride in cfg.encoder_rates:
            dim *= 2
            blocks.append(EncoderBlock(dim, stride, dim // 2 if cfg.depthwise else 1, cfg.version))
        self.block = nn.Sequential(*blocks)
        self.fc_mu = CausalConv(dim, cfg.latent_dim, 3, left_pad=2)
        self.fc_logvar = CausalConv(dim, cfg.latent_dim, 3, left_pad=2)  # unused at inference

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc_mu(self.block(x))


class Decoder(nn.Module):
    def __init__(self, cfg: AudioVAEConfig) -> None:
        super().__init__()
        latent, channels = cfg.latent_dim, cfg.decoder_dim
        if cfg.depthwise:
            layers: list[nn.Module] = [
                CausalConv(latent, latent, 7, groups=latent, left_pad=6),
                CausalConv(latent, channels, 1),
            ]
        else:
            layers = [CausalConv(latent, channels, 7, left_pad=6)]
        for i, stride in enumerate(cfg.decoder_rates):
            cin, cout = channels // 2**i, channels // 2 ** (i + 1)
            layers.append(DecoderBlock(cin, cout, stride, cout if cfg.depthwise else 1))
        layers += [Snake(cout), CausalConv(cout, 1, 7, left_pad=6), nn.Tanh()]
        self.model = nn.ModuleList(layers)
        self.sr_bin_boundaries: torch.Tensor | None
        self.boundaries = cfg.sr_bin_boundaries
        if cfg.conditioned:
            self.register_buffer("sr_bin_boundaries", torch.tensor(cfg.sr_bin_boundaries, dtype=torch.int32))
            buckets = len(cfg.sr_bin_boundaries) + 1
            self.sr_cond_model = nn.ModuleList(
                SampleRateCondition(
                    m.input_channels, buckets, cfg.cond_type, cfg.cond_dim, cfg.cond_out_layer
                )
                if isinstance(m, DecoderBlock)
                else None
                for m in layers
            )
        else:
            self.sr_bin_boundaries = None
            self.sr_cond_model = None

    def forward(self, z: torch.Tensor, sample_rate: int | None, stream: Stream | None = None) -> torch.Tensor:
        # torch.bucketize(sr, boundaries) with right=False counts the boundaries below sr.
        bucket = bisect.bisect_left(self.boundaries, sample_rate) if self.boundaries else 0
        conds = self.sr_cond_model if self.sr_cond_model is not None else [None] * len(self.model)
        x = z
        for layer, cond in zip(self.model, conds, strict=True):
            if cond is not None:
                x = cond(x, bucket)
            x = layer(x, stream) if isinstance(layer, (CausalConv, DecoderBlock)) else layer(x)
        return x


class AudioVAE(nn.Module):
    """Encoder (audio at ``cfg.encoder_rate`` → ``mu``) and causal decoder (→ ``cfg.output_rate``)."""

    def __init__(self, cfg: AudioVAEConfig | None = None) -> None:
        super().__init__()
        self.cfg = cfg or AudioVAEConfig.from_dict(None, 2)
        self.encoder = Encoder(self.cfg)
        self.decoder = Decoder(self.cfg)

    @property
    def latent_dim(self) -> int:
        return self.cfg.latent_dim

    @property
    def chunk_size(self) -> int:
        return self.cfg.chunk_size

    @property
    def decoder_hop(self) -> int:
        return self.cfg.decoder_hop

    def encode(self, wav: torch.Tensor, sample_rate: int) -> torch.Tensor:
        """``wav [B,1,T]`` or ``[B,T]`` at the encoder rate → ``mu [B, D, ceil(T/chunk_size)]``.

        Right-pads with zeros to a multiple of the hop, as the official code does.
        """
        if sample_rate != self.cfg.encoder_rate:
            raise ValueError(f"AudioVAE encodes {self.cfg.encoder_rate} Hz audio, got {sample_rate} Hz")
        if wav.ndim == 2:
            wav = wav.unsqueeze(1)
        hop = self.chunk_size
        wav = F.pad(wav, (0, -wav.shape[-1] % hop))
        return self.encoder(wav.to(next(self.parameters()).dtype))

    def decode(
        self, z: torch.Tensor, sample_rate: int | None = None, stream: Stream | None = None
    ) -> torch.Tensor:
        """``z [B, D, N]`` → audio ``[B, 1, N * decoder_hop]`` in [-1, 1].

        V2 conditions on ``sample_rate`` (default: the configured output rate); V1 ignores it.
        ``stream`` is for ``StreamingDecoder`` only.
        """
        return self.decoder(z, sample_rate or self.cfg.output_rate, stream)

    def fold_weight_norm(self) -> AudioVAE:
        """Fold weight norm into plain weights for speed (numerically the same)."""
        for module in self.modules():
            if isinstance(module, CausalConv):
                module.fold_weight_norm()
        return self
