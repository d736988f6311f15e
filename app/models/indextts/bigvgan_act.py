"""BigVGAN v2's anti-aliased periodic activation (the torch path of NVIDIA/BigVGAN's ``Activation1d``).

A Snake-family activation makes harmonics above Nyquist, so BigVGAN runs it at twice the rate:
upsample ×2 (a 12-tap Kaiser-windowed sinc, cutoff a quarter of the doubled rate), the
activation, low-pass with the same kind of filter and keep every second sample. Both ends of
the signal are extended by repeating the edge sample before each filter, as the official code does.

- :class:`Periodic` is ``SnakeBeta`` (``x + sin²(αx) / (β + 1e-9)``) or, with ``beta=False``,
  ``Snake`` (β = α); with ``logscale`` the stored ``alpha``/``beta`` are logarithms (BigVGAN v2's
  ``snake_logscale``). VoxCPM's :class:`app.models.voxcpm.vae_layers.Snake` is the linear-scale
  Snake with its α stored as [1, C, 1]; BigVGAN stores α and β as [C] and may take their exp,
  hence this class.
- The filters are buffers named as the official ones (``upsample.filter``,
  ``downsample.lowpass.filter``, [1, 1, 12]): the checkpoint carries them and a strict load
  replaces the values computed here.
"""

from __future__ import annotations

import functools
import math

import torch
import torch.nn.functional as F
from torch import nn

RATIO = 2
TAPS = 12
EPS = 1e-9


@functools.lru_cache(maxsize=4)
def kaiser_sinc(cutoff: float, half_width: float, taps: int) -> torch.Tensor:
    """A low-pass FIR filter [1, 1, taps] (cutoff and transition half-width as fractions of the
    sample rate): a sinc under a Kaiser window whose β follows Kaiser's formula for the
    attenuation that ``half_width`` allows, scaled to sum to 1 (no leak of the DC level).
    Computed once on the CPU (also while a model is built on the meta device); callers copy it."""
    half = taps // 2
    attenuation = 2.285 * (half - 1) * math.pi * (4 * half_width) + 7.95
    if attenuation > 50.0:
        beta = 0.1102 * (attenuation - 8.7)
    elif attenuation >= 21.0:
        beta = 0.5842 * (attenuation - 21) ** 0.4 + 0.07886 * (attenuation - 21.0)
    else:
        beta = 0.0
    window = torch.kaiser_window(taps, periodic=False, beta=beta, device="cpu")
    # centred time axis: half-sample offsets for an even length
    t = (
        torch.arange(-half, half, device="cpu") + 0.5
        if taps % 2 == 0
        else torch.arange(taps, device="cpu") - half
    )
    taps_ = 2 * cutoff * window * torch.sinc(2 * cutoff * t)
    return (taps_ / taps_.sum()).view(1, 1, taps)


class Periodic(nn.Module):
    """Snake / SnakeBeta on [B, C, T] with per-channel ``alpha`` (and ``beta``) of shape [C]."""

    def __init__(self, channels: int, beta: bool, logscale: bool) -> None:
        super().__init__()
        start = 0.0 if logscale else 1.0
        self.alpha = nn.Parameter(torch.full((channels,), start))
        self.beta = nn.Parameter(torch.full((channels,), start)) if beta else None
        self.logscale = logscale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        alpha = self.alpha
        beta = alpha if self.beta is None else self.beta
        if self.logscale:
            alpha, beta = alpha.exp(), beta.exp()
        wave = torch.sin_(x * alpha[:, None]).square_()
        return torch.addcmul(x, wave, (beta + EPS).reciprocal()[:, None])


class UpSample(nn.Module):
    """×2 by a transposed depthwise conv with the Kaiser-sinc filter (gain 2)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("filter", kaiser_sinc(0.5 / RATIO, 0.6 / RATIO, TAPS).clone())
        self.pad = TAPS // RATIO - 1
        self.cut_left = self.pad * RATIO + (TAPS - RATIO) // 2
        self.cut_right = self.pad * RATIO + (TAPS - RATIO + 1) // 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        channels = x.shape[1]
        x = F.pad(x, (self.pad, self.pad), mode="replicate")
        # the gain folded into the filter: ×2 is exact in floating point, so this equals 2·conv(x, f)
        weight = (RATIO * self.filter).expand(channels, -1, -1)
        y = F.conv_transpose1d(x, weight, stride=RATIO, groups=channels)
        return y[..., self.cut_left : y.shape[-1] - self.cut_right]


class LowPass(nn.Module):
    """The Kaiser-sinc low-pass, evaluated at every ``RATIO``-th sample."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("filter", kaiser_sinc(0.5 / RATIO, 0.6 / RATIO, TAPS).clone())
        self.pad_left, self.pad_right = TAPS // 2 - 1, TAPS // 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        channels = x.shape[1]
        x = F.pad(x, (self.pad_left, self.pad_right), mode="replicate")
        return F.conv1d(x, self.filter.expand(channels, -1, -1), stride=RATIO, groups=channels)


class DownSample(nn.Module):
    """Holds the low-pass under the official name (``downsample.lowpass``)."""

    def __init__(self) -> None:
        super().__init__()
        self.lowpass = LowPass()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lowpass(x)


class AntiAliased(nn.Module):
    """``downsample(act(upsample(x)))`` on [B, C, T] → [B, C, T]."""

    def __init__(self, act: Periodic) -> None:
        super().__init__()
        self.act = act
        self.upsample = UpSample()
        self.downsample = DownSample()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.downsample(self.act(self.upsample(x)))
