"""CosyVoice's HiFT vocoder (mel → 24 kHz audio): CosyVoice2's ``HiFTGenerator`` and
CosyVoice3's ``CausalHiFTGenerator``, inference only.

As the official code computes it (FunAudioLLM/CosyVoice ``cosyvoice/hifigan/generator.py`` at
ace7c47): F0 and the harmonic source come from :mod:`.hift_source`; ``decode`` runs ``conv_pre``,
three (leaky-ReLU, upsampling ×8/×5/×3) stages, each adding the source's STFT (n_fft 16, hop 4,
Hann) brought to its rate by ``source_downs`` and ``source_resblocks`` and then averaging three
Snake ResBlocks, a reflection pad of one frame before the last stage's sum, ``conv_post``, and an
iSTFT of ``exp`` magnitudes (clipped at 100) with ``sin`` phases, clamped to ±0.99.
CosyVoice3's convs are causal; without ``finalize`` it treats the last 3 + 4 mel frames as
look-ahead only (the F0 predictor's, then ``conv_pre``'s) and drops the last 480 samples.

Weights: ``hift.pt`` as the official loader takes it (a ``generator.`` prefix dropped), weight
norm given as ``parametrizations.weight.original0/1`` or ``weight_g/weight_v``; it is folded
into plain weights on load (CosyVoice3's F0 predictor folded in float64, as the official one
computes it). The streaming caches and cross-fade around it (the official ``token2wav``) are
:mod:`.stream`'s.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError
from app.models.common.weight_norm import fold_weight_norm
from app.models.cosyvoice.config import CosyVoiceConfig
from app.models.cosyvoice.hift_source import CausalConv1d, F0Predictor, SourceModule, SourceTables
from app.models.voxcpm.vae_layers import Snake

AUDIO_LIMIT = 0.99
MAGNITUDE_LIMIT = 1e2


class CausalDown(nn.Conv1d):
    """Official ``CausalConv1dDownSample``: stride ``s``, kernel ``2s``, ``s - 1`` zeros on the left."""

    def __init__(self, cin: int, cout: int, kernel: int, stride: int) -> None:
        super().__init__(cin, cout, kernel, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(F.pad(x, (self.stride[0] - 1, 0)))


class CausalUp(nn.Conv1d):
    """Official ``CausalConv1dUpsample``: nearest ×``stride``, then a left-padded stride-1 conv."""

    def __init__(self, cin: int, cout: int, kernel: int, stride: int) -> None:
        super().__init__(cin, cout, kernel)
        self.factor = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.interpolate(x, scale_factor=self.factor, mode="nearest")
        return super().forward(F.pad(x, (self.kernel_size[0] - 1, 0)))


def _upsampler(cin: int, cout: int, kernel: int, rate: int, causal: bool) -> nn.Module:
    if causal:
        return CausalUp(cin, cout, kernel, rate)
    return nn.ConvTranspose1d(cin, cout, kernel, rate, padding=(kernel - rate) // 2)


def _downsampler(cin: int, cout: int, rate: int, causal: bool) -> nn.Module:
    """A source branch's conv from the STFT rate to a stage's rate (``rate`` STFT frames per step)."""
    if rate == 1:
        return CausalConv1d(cin, cout, 1) if causal else nn.Conv1d(cin, cout, 1)
    return (
        CausalDown(cin, cout, 2 * rate, rate)
        if causal
        else nn.Conv1d(cin, cout, 2 * rate, rate, padding=rate // 2)
    )


class ResBlock(nn.Module):
    """HiFi-GAN residual block with Snake activations: ``x += conv2(snake(conv1(snake(x))))`` per dilation."""

    def __init__(self, channels: int, kernel: int, dilations: list[int], causal: bool) -> None:
        super().__init__()

        def conv(d: int) -> nn.Conv1d:
            if causal:
                return CausalConv1d(channels, channels, kernel, dilation=d)
            return nn.Conv1d(channels, channels, kernel, dilation=d, padding=(kernel * d - d) // 2)

        self.convs1 = nn.ModuleList(conv(d) for d in dilations)
        self.convs2 = nn.ModuleList(conv(1) for _ in dilations)
        self.activations1 = nn.ModuleList(Snake(channels) for _ in dilations)
        self.activations2 = nn.ModuleList(Snake(channels) for _ in dilations)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        layers = zip(self.convs1, self.convs2, self.activations1, self.activations2, strict=True)
        for conv1, conv2, snake1, snake2 in layers:
            x = conv2(snake2(conv1(snake1(x)))) + x
        return x


class HiFT(nn.Module):
    """Mel [B, 80, T] → audio [B, T·480]. Build with :meth:`from_config`, then :meth:`load`;
    ``args`` is the yaml's ``hift`` mapping (official names and defaults)."""

    def __init__(
        self, args: dict[str, Any], sample_rate: int, causal: bool, tables: SourceTables | None
    ) -> None:
        super().__init__()
        base = int(args.get("base_channels", 512))
        rates = [int(r) for r in args.get("upsample_rates", [8, 8])]
        istft = args.get("istft_params", {"n_fft": 16, "hop_len": 4})
        self.n_fft, self.hop = int(istft["n_fft"]), int(istft["hop_len"])
        self.slope = float(args.get("lrelu_slope", 0.1))
        self.limit = float(args.get("audio_limit", AUDIO_LIMIT))
        self.causal = causal
        self.frame_rate = math.prod(rates)  # STFT frames per mel frame
        self.upsample = self.frame_rate * self.hop  # samples per mel frame
        f0 = args["f0_predictor"].args
        self.f0_predictor = F0Predictor(
            int(f0.get("in_channels", 80)), int(f0.get("cond_channels", 512)), causal
        )
        harmonics = int(args.get("nb_harmonics", 8)) + 1
        threshold = float(args.get("nsf_voiced_threshold", 10))
        self.m_source = SourceModule(sample_rate, self.upsample, harmonics, threshold, tables)
        mels = int(args.get("in_channels", 80))
        if causal:
            self.conv_pre: nn.Conv1d = CausalConv1d(
                mels, base, int(args.get("conv_pre_look_right", 4)) + 1, side="right"
            )
        else:
            self.conv_pre = nn.Conv1d(mels, base, 7, padding=3)
        widths = [base // 2 ** (i + 1) for i in range(len(rates))]
        kernels = args.get("upsample_kernel_sizes", [16, 16])
        self.ups = nn.ModuleList(
            _upsampler(cin, cout, int(k), u, causal)
            for cin, cout, k, u in zip([base, *widths[:-1]], widths, kernels, rates, strict=True)
        )
        spec = self.n_fft + 2
        downs = [math.prod(rates[len(rates) - i :]) for i in range(len(rates) - 1, -1, -1)]
        self.source_downs = nn.ModuleList(
            _downsampler(spec, ch, u, causal) for ch, u in zip(widths, downs, strict=True)
        )
        src = zip(widths, args.get("source_resblock_kernel_sizes", [7, 11]),
                  args.get("source_resblock_dilation_sizes", [[1, 3, 5]] * 2), strict=True)  # fmt: skip
        self.source_resblocks = nn.ModuleList(ResBlock(ch, int(k), list(d), causal) for ch, k, d in src)
        res_k = args.get("resblock_kernel_sizes", [3, 7, 11])
        res_d = args.get("resblock_dilation_sizes", [[1, 3, 5]] * 3)
        self.kernels = len(res_k)
        self.resblocks = nn.ModuleList(
            ResBlock(ch, int(k), list(d), causal) for ch in widths for k, d in zip(res_k, res_d, strict=True)
        )
        self.conv_post = (
            CausalConv1d(widths[-1], spec, 7) if causal else nn.Conv1d(widths[-1], spec, 7, padding=3)
        )
        self.register_buffer("window", torch.empty(self.n_fft), persistent=False)

    @classmethod
    def from_config(cls, cfg: CosyVoiceConfig) -> HiFT:
        """CosyVoice2's or CosyVoice3's vocoder for ``cfg``; weights uninitialised until :meth:`load`.
        Building it draws nothing from torch's global generator."""
        args = dict(cfg.hift.args)
        if cfg.sample_rate != 24000 or int(args.get("sampling_rate", cfg.sample_rate)) != 24000:
            raise VoxDeskError(f"This CosyVoice vocoder runs at {cfg.sample_rate} Hz: VoxDesk reads the "
                               "24 kHz CosyVoice2 and CosyVoice3 models only.")  # fmt: skip
        causal = cfg.family == "cosyvoice3"
        try:
            f0 = args["f0_predictor"].args
            tables = None
            if causal:
                flow = cfg.flow
                tables = SourceTables.replay(
                    int(flow.get("vocab_size")), int(flow.get("input_size")),
                    int(flow.get("spk_embed_dim")), int(flow.get("output_size")),
                    int(f0.get("in_channels", 80)), int(f0.get("cond_channels", 512)),
                    int(args.get("nb_harmonics", 8)) + 1,
                )  # fmt: skip
            with torch.device("meta"):
                model = cls(args, cfg.sample_rate, causal, tables)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            why = f"{type(exc).__name__}: {exc}"
            raise VoxDeskError(f"{cfg.family}.yaml: VoxDesk cannot build its hift section ({why}); "
                               "use the model's own yaml.") from None  # fmt: skip
        model.to_empty(device="cpu")
        n = np.arange(model.n_fft)
        hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / model.n_fft)  # scipy's periodic Hann, in float64
        model.window.copy_(torch.from_numpy(hann.astype(np.float32)))
        if causal:
            model.f0_predictor.to(torch.float64)
        return model.eval()

    @torch.no_grad()
    def load(self, state: dict[str, torch.Tensor]) -> HiFT:
        """Take ``hift.pt``'s tensors (see the module docstring); a file that does not fit the
        config raises :class:`VoxDeskError` naming the keys."""
        weights = _fold(state, torch.float64 if self.causal else None)
        own = self.state_dict()
        problems = [f"no {k}" for k in own if k not in weights]
        problems += [f"an unknown {k}" for k in weights if k not in own]
        problems += [f"{k} of shape {tuple(v.shape)}, not {tuple(own[k].shape)}"
                     for k, v in weights.items() if k in own and v.shape != own[k].shape]  # fmt: skip
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            yaml = "cosyvoice3.yaml" if self.causal else "cosyvoice2.yaml"
            raise VoxDeskError(f"hift.pt does not fit its {yaml}: it has {problems[0]}{more}; "
                               "download the model folder again.")  # fmt: skip
        self.load_state_dict(weights, strict=True)
        return self

    @torch.inference_mode()
    def inference(
        self,
        speech_feat: torch.Tensor,
        cache_source: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
        finalize: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Mel [B, 80, T] → (audio [B, S], source [B, 1, S']).

        CosyVoice2 draws its noise from ``generator`` (torch's global one if None) and, given
        ``cache_source`` [B, 1, n], uses it as the first n source samples; ``finalize`` is
        CosyVoice3's: False treats the last 7 frames as look-ahead (see the module docstring).
        """
        if self.causal:
            self.f0_predictor.to(torch.float64)  # as the official does at each call (after any cast)
            f0 = self.f0_predictor(speech_feat.to(torch.float64), finalize).to(speech_feat)
        else:
            f0 = self.f0_predictor(speech_feat)
        s = F.interpolate(f0[:, None], scale_factor=self.upsample, mode="nearest").transpose(1, 2)
        s = self.m_source(s, generator).transpose(1, 2)
        if not self.causal and cache_source is not None and cache_source.shape[2]:
            s[:, :, : cache_source.shape[2]] = cache_source
        mel = speech_feat
        if self.causal and not finalize:
            mel = speech_feat[:, :, : -self.f0_predictor.look_ahead]
        return self.decode(mel, s, finalize), s

    def decode(self, x: torch.Tensor, s: torch.Tensor, finalize: bool = True) -> torch.Tensor:
        """Mel [B, 80, T] and source [B, 1, T·480] → audio [B, T·480] (CosyVoice3 without
        ``finalize``: the last 4 frames are ``conv_pre``'s look-ahead, 480 fewer samples)."""
        stft = torch.stft(
            s.squeeze(1), self.n_fft, self.hop, self.n_fft, window=self.window, return_complex=True
        )
        spec = torch.view_as_real(stft)
        real, imag = spec[..., 0], spec[..., 1]
        if self.causal and not finalize:
            look = self.conv_pre.pad
            x = self.conv_pre(x[:, :, :-look], x[:, :, -look:])
            real, imag = real[:, :, : -self.frame_rate * look], imag[:, :, : -self.frame_rate * look]
        else:
            x = self.conv_pre(x)
        source = torch.cat([real, imag], dim=1)
        for i, up in enumerate(self.ups):
            x = up(F.leaky_relu(x, self.slope))
            if i == len(self.ups) - 1:
                x = F.pad(x, (1, 0), mode="reflect")
            x = x + self.source_resblocks[i](self.source_downs[i](source))
            blocks = self.resblocks[i * self.kernels : (i + 1) * self.kernels]
            total = blocks[0](x)
            for block in blocks[1:]:
                total = total + block(x)
            x = total / self.kernels
        x = self.conv_post(F.leaky_relu(x))
        half = self.n_fft // 2 + 1
        magnitude = torch.clip(torch.exp(x[:, :half]), max=MAGNITUDE_LIMIT)
        phase = torch.sin(x[:, half:])  # as the official: sin of the predicted phase
        spectrum = torch.complex(magnitude * torch.cos(phase), magnitude * torch.sin(phase))
        audio = torch.istft(spectrum, self.n_fft, self.hop, self.n_fft, window=self.window)
        if self.causal and not finalize:
            audio = audio[:, : -self.upsample]
        return torch.clamp(audio, -self.limit, self.limit)


def _fold(state: dict[str, torch.Tensor], f0_dtype: torch.dtype | None) -> dict[str, torch.Tensor]:
    """``hift.pt``'s keys as :class:`HiFT` names them: ``generator.`` dropped (as the official
    loader's ``replace``), each weight-norm pair folded into ``weight`` (the F0 predictor's in
    ``f0_dtype`` if given), Snake's ``alpha`` [C] shaped [1, C, 1]."""
    out = {k.replace("generator.", ""): v for k, v in state.items()}
    if f0_dtype is not None:
        out = fold_weight_norm(out, f0_dtype, prefix="f0_predictor.")
    out = fold_weight_norm(out)
    for key, value in out.items():
        if key.endswith(".alpha") and value.dim() == 1:
            out[key] = value.reshape(1, -1, 1)
    return out
