"""IndexTTS's vocoder: BigVGAN v2 (22 050 Hz, 80 mel bands, 256 samples per frame), inference only.

As the official code computes it (index-tts ``indextts/s2mel/modules/bigvgan/bigvgan.py``, NVIDIA's
BigVGAN, MIT): ``conv_pre`` (k 7), then per upsampling stage a transposed conv and the mean of
the AMP blocks (one per resblock kernel size; each adds, per dilation,
``conv2(act(conv1(act(x))))`` with the anti-aliased activations of :mod:`.bigvgan_act`), a last
anti-aliased activation, ``conv_post`` (k 7, one channel) and ``tanh`` or a clamp to ±1.

The folder is the official ``hf_cache/bigvgan/``: ``config.json`` (read as data; only the
generator's keys) and ``bigvgan_generator.pt`` (``{"generator": state_dict}``, loaded with
``weights_only``). Weight norm is folded at load: a ``weight_g``/``weight_v`` pair becomes the
plain ``weight`` the official ``remove_weight_norm()`` leaves; a file already without weight norm
loads as is (the official loader's fallback). Only ``resblock`` "1" (AMPBlock1, every BigVGAN v2
release) is built: the pinned official AMPBlock2 returns nothing from ``forward``, so a "2"
model does not run there either. The optional CUDA kernel is not used: this is its torch path.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from app.errors import VoxDeskError
from app.models.indextts.bigvgan_act import AntiAliased, Periodic
from app.models.indextts.weights import load_torch, state_of, strict_load

CONFIG = "config.json"
GENERATOR = "bigvgan_generator.pt"
ACTIVATIONS = ("snakebeta", "snake")


@dataclass(frozen=True)
class VocoderConfig:
    """The generator's keys of BigVGAN's ``config.json`` (official names; defaults as it has them)."""

    num_mels: int
    upsample_rates: tuple[int, ...]
    upsample_kernel_sizes: tuple[int, ...]
    upsample_initial_channel: int
    resblock_kernel_sizes: tuple[int, ...]
    resblock_dilation_sizes: tuple[tuple[int, ...], ...]
    activation: str
    snake_logscale: bool
    use_tanh_at_final: bool = True
    use_bias_at_final: bool = True

    @property
    def hop(self) -> int:
        """Audio samples per mel frame."""
        return math.prod(self.upsample_rates)

    @classmethod
    def parse(cls, data: Any, where: str) -> VocoderConfig:
        """Validate ``data`` (the parsed JSON); one plain line naming the first bad key."""
        if not isinstance(data, dict):
            raise VoxDeskError(f"{where} does not hold a JSON object: download the BigVGAN folder again.")

        def bad(key: str, what: str) -> VoxDeskError:
            return VoxDeskError(f"{where}: {key} {what}; use the config.json published with the model.")

        def get(key: str, kind: type, default: Any = None) -> Any:
            value = data.get(key, default)
            if value is None:
                raise bad(key, "is missing")
            if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise bad(key, "must be a positive whole number")
            if kind is bool and not isinstance(value, bool):
                raise bad(key, "must be true or false")
            return value

        def ints(key: str, value: Any = None) -> tuple[int, ...]:
            value = data.get(key) if value is None else value
            ok = (
                isinstance(value, list)
                and value
                and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
            )
            if not ok:
                raise bad(key, "must be a list of positive whole numbers")
            return tuple(value)

        if data.get("resblock") != "1":
            raise bad("resblock", f'is {data.get("resblock")!r}: VoxDesk runs BigVGAN\'s AMP block "1" only')
        if data.get("activation") not in ACTIVATIONS:
            raise bad("activation", f'is {data.get("activation")!r}: VoxDesk knows "snakebeta" and "snake"')
        dilations = data.get("resblock_dilation_sizes")
        if not isinstance(dilations, list) or not dilations:
            raise bad("resblock_dilation_sizes", "must be a list of lists of positive whole numbers")
        cfg = cls(
            num_mels=get("num_mels", int),
            upsample_rates=ints("upsample_rates"),
            upsample_kernel_sizes=ints("upsample_kernel_sizes"),
            upsample_initial_channel=get("upsample_initial_channel", int),
            resblock_kernel_sizes=ints("resblock_kernel_sizes"),
            resblock_dilation_sizes=tuple(ints("resblock_dilation_sizes", d) for d in dilations),
            activation=data["activation"],
            snake_logscale=get("snake_logscale", bool),
            use_tanh_at_final=get("use_tanh_at_final", bool, True),
            use_bias_at_final=get("use_bias_at_final", bool, True),
        )
        if len(cfg.upsample_kernel_sizes) != len(cfg.upsample_rates):
            raise bad("upsample_kernel_sizes", "must have one entry per upsample_rates entry")
        if len(cfg.resblock_dilation_sizes) != len(cfg.resblock_kernel_sizes):
            raise bad("resblock_dilation_sizes", "must have one entry per resblock_kernel_sizes entry")
        if cfg.upsample_initial_channel >> len(cfg.upsample_rates) < 1:
            raise bad("upsample_initial_channel", "is too small to halve at every upsampling stage")
        return cfg


def read_config(path: Path) -> VocoderConfig:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise VoxDeskError(
            f"{path.name} is missing from {path.parent}: download the BigVGAN folder again."
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise VoxDeskError(f"Cannot read {path}: {exc}.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise VoxDeskError(
            f"{path} is not valid JSON (line {exc.lineno}): download the BigVGAN folder again."
        ) from None
    return VocoderConfig.parse(data, str(path))


def _conv(cin: int, cout: int, kernel: int, dilation: int = 1, bias: bool = True) -> nn.Conv1d:
    """A 'same'-length conv (odd kernel)."""
    return nn.Conv1d(
        cin, cout, kernel, dilation=dilation, padding=(kernel * dilation - dilation) // 2, bias=bias
    )


class AMPBlock(nn.Module):
    """Official ``AMPBlock1``: per dilation d, ``x += conv2(act(conv1_d(act(x))))``; the
    activations alternate between the two positions (``activations[0::2]`` before ``convs1``)."""

    def __init__(self, channels: int, kernel: int, dilations: tuple[int, ...], cfg: VocoderConfig) -> None:
        super().__init__()
        self.convs1 = nn.ModuleList(_conv(channels, channels, kernel, d) for d in dilations)
        self.convs2 = nn.ModuleList(_conv(channels, channels, kernel) for _ in dilations)
        self.activations = nn.ModuleList(_activation(channels, cfg) for _ in range(2 * len(dilations)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        acts = self.activations
        for conv1, conv2, act1, act2 in zip(self.convs1, self.convs2, acts[0::2], acts[1::2], strict=True):
            x = conv2(act2(conv1(act1(x)))) + x
        return x


def _activation(channels: int, cfg: VocoderConfig) -> AntiAliased:
    return AntiAliased(Periodic(channels, beta=cfg.activation == "snakebeta", logscale=cfg.snake_logscale))


class BigVGAN(nn.Module):
    """Mel [B, num_mels, T] → audio [B, T·hop] in [-1, 1]. Parameter names are the official
    state-dict keys without weight norm (``conv_pre.weight``, ``ups.0.0.weight``, ...)."""

    def __init__(self, cfg: VocoderConfig) -> None:
        super().__init__()
        self.cfg = cfg
        base = cfg.upsample_initial_channel
        self.conv_pre = _conv(cfg.num_mels, base, 7)
        widths = [base >> (i + 1) for i in range(len(cfg.upsample_rates))]
        stages = zip([base, *widths[:-1]], widths, cfg.upsample_kernel_sizes, cfg.upsample_rates, strict=True)
        # each stage a one-element list, as the official keys have it (ups.<i>.0.weight)
        self.ups = nn.ModuleList(
            nn.ModuleList([nn.ConvTranspose1d(cin, cout, k, u, padding=(k - u) // 2)])
            for cin, cout, k, u in stages
        )
        blocks = list(zip(cfg.resblock_kernel_sizes, cfg.resblock_dilation_sizes, strict=True))
        self.resblocks = nn.ModuleList(AMPBlock(ch, k, d, cfg) for ch in widths for k, d in blocks)
        self.activation_post = _activation(widths[-1], cfg)
        self.conv_post = _conv(widths[-1], 1, 7, bias=cfg.use_bias_at_final)

    @classmethod
    def from_folder(cls, folder: str | Path) -> BigVGAN:
        """The vocoder of ``folder`` (``config.json`` + ``bigvgan_generator.pt``) on the CPU, in
        eval mode, weight norm folded. Bad files raise :class:`VoxDeskError` naming them."""
        folder = Path(folder)
        cfg = read_config(folder / CONFIG)
        path = folder / GENERATOR
        state = fold_weight_norm(state_of(load_torch(path), "generator", path))
        with torch.device("meta"):  # no random init: every value comes from the file
            model = cls(cfg)
        model.to_empty(device="cpu")
        strict_load(model, state, f"{GENERATOR} in {folder}")
        return model.eval().requires_grad_(False)

    @property
    def hop(self) -> int:
        return self.cfg.hop

    @torch.inference_mode()
    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        weight = self.conv_pre.weight
        x = self.conv_pre(mel.to(weight.device, weight.dtype))
        n = len(self.cfg.resblock_kernel_sizes)
        for i, (up,) in enumerate(self.ups):
            x = up(x)
            blocks = self.resblocks[i * n : (i + 1) * n]
            total = blocks[0](x)
            for block in blocks[1:]:
                total = total + block(x)
            x = total / n
        x = self.conv_post(self.activation_post(x))
        x = torch.tanh(x) if self.cfg.use_tanh_at_final else torch.clamp(x, -1.0, 1.0)
        return x[:, 0]


def fold_weight_norm(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``state`` with each ``<conv>.weight_g``/``<conv>.weight_v`` pair replaced by
    ``<conv>.weight = v · g / ‖v‖`` (norm over all but dim 0, as ``torch.nn.utils.weight_norm``
    and the official ``remove_weight_norm`` compute it); other keys unchanged."""
    out = dict(state)
    for key in state:
        if key.endswith(".weight_g") and key[:-1] + "v" in state:
            stem = key[: -len(".weight_g")]
            g, v = out.pop(key), out.pop(stem + ".weight_v")
            out[stem + ".weight"] = torch._weight_norm(v, g, 0)
    return out
