"""IndexTTS's S2Mel estimator: the DiT that the flow-matching solver (:mod:`.cfm`) calls 25 times.

Written from ``indextts/s2mel/modules/diffusion_transformer.py`` (index-tts at ee40fa7), with the
transformer in :mod:`.dit_transformer` and the WaveNet in :mod:`.dit_wavenet`. The module and
parameter names are the official ones, so the ``estimator.*`` keys of ``s2mel.pth``'s ``net.cfm``
load as they are, once :meth:`S2MelDiT.load` has folded each weight-norm pair (``weight_g`` /
``weight_v``, or the newer ``parametrizations.weight.original0/1``) into a plain ``weight``, exactly
as the official weight-norm hook computes it at every call.

``v = forward(x, prompt_x, x_lens, t, style, cond)``, all per frame unless said:

- ``t`` → two sinusoidal embeddings (256 wide, ``cos`` first, scale 1000) through MLPs: ``t1`` for
  the transformer's adaptive norms and the final layer, ``t2`` for the WaveNet;
- the rows ``[x, prompt_x, cond_projection(cond), style]`` are concatenated and merged by one linear
  map (``cond`` always goes through ``cond_projection``: the official forward never reads
  ``cond_embedder`` whatever ``content_type`` says, nor ``x_embedder`` nor ``content_mask_embedder``,
  so :meth:`S2MelDiT.load` drops those keys);
- the transformer; the long skip ``skip_linear([h, x])``;
- ``conv1`` → WaveNet (conditioned on ``t2``) + ``res_projection(h)`` → final layer (LayerNorm
  without affine, modulated by ``t1``, weight-normed linear) → ``conv2`` → [B, 80, T].

Frames past ``x_lens`` are masked as attention keys and in the WaveNet, so a batch of rows of
different lengths gives each row what it gives alone (rows padded at the end).

Only the configuration IndexTTS-2 / 2.5 ship is run: a WaveNet final layer, time and style not as
tokens, not causal, prompt tokens not zeroed; any other value is refused with one line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError
from app.models.indextts.dit_transformer import Transformer
from app.models.indextts.dit_wavenet import WaveNet
from app.models.indextts.weights import strict_load

FREQ_DIM = 256  # the official TimestepEmbedder's sinusoid width
TIME_SCALE = 1000.0
MAX_PERIOD = 10000.0
POSITIONS = 16384  # the official ``input_pos`` buffer: the longest row the DiT takes
UNUSED = ("x_embedder.weight_g", "x_embedder.weight_v", "x_embedder.bias", "x_embedder.weight",
          "x_embedder.parametrizations.weight.original0", "x_embedder.parametrizations.weight.original1",
          "cond_embedder.weight", "content_mask_embedder.weight")  # fmt: skip
_WEIGHT_NORM = ((".weight_g", ".weight_v"),
                (".parametrizations.weight.original0", ".parametrizations.weight.original1"))  # fmt: skip
# s2mel.DiT values VoxDesk runs (those of IndexTTS-2 and 2.5); anything else is refused
_REQUIRED = {
    "final_layer_type": "wavenet",
    "time_as_token": False,
    "style_as_token": False,
    "is_causal": False,
}
_OPTIONAL = {"zero_prompt_speech_token": False}


class TimestepEmbedder(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(FREQ_DIM, dim), nn.SiLU(), nn.Linear(dim, dim))
        half = FREQ_DIM // 2
        # a persistent buffer, as in the official module: s2mel.pth holds it and it is used as loaded
        self.register_buffer(
            "freqs", torch.exp(-math.log(MAX_PERIOD) * torch.arange(half, dtype=torch.float32) / half)
        )

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        """``t`` [B] → [B, dim]."""
        angles = TIME_SCALE * t[:, None].float() * self.freqs[None]  # float32 whatever the model's dtype
        return self.mlp(
            torch.cat([torch.cos(angles), torch.sin(angles)], dim=-1).to(self.mlp[0].weight.dtype)
        )


class FinalLayer(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(dim, 2 * dim))

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        shift, scale = self.adaLN_modulation(c).chunk(2, dim=1)
        x = F.layer_norm(x, x.shape[-1:], eps=1e-6)
        return self.linear(x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1))


def _section(tree: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = tree.get(name)
    if not isinstance(value, Mapping):
        raise VoxDeskError(
            f"config.yaml's s2mel.{name} is missing or not a mapping: download the model folder again."
        )
    return value


def _int(section: Mapping[str, Any], where: str, key: str) -> int:
    value = section.get(key)
    if type(value) is not int or value <= 0:
        raise VoxDeskError(f"config.yaml's s2mel.{where}.{key} is not a positive whole number: "
                           "download the model folder again.")  # fmt: skip
    return value


class S2MelDiT(nn.Module):
    """The official ``DiT`` at inference; built by :meth:`from_config`, filled by :meth:`load`."""

    def __init__(
        self,
        dim: int,
        heads: int,
        depth: int,
        mel_dim: int,
        content_dim: int,
        style_dim: int,
        wavenet_layers: int,
        wavenet_kernel: int,
        wavenet_dilation: int,
        style_condition: bool = True,
        long_skip: bool = True,
        uvit_skip: bool = True,
    ) -> None:
        super().__init__()
        self.style_condition = style_condition
        self.long_skip = long_skip
        self.transformer = Transformer(dim, heads, depth, uvit_skip)
        self.cond_projection = nn.Linear(content_dim, dim)
        self.t_embedder = TimestepEmbedder(dim)
        self.register_buffer("input_pos", torch.arange(POSITIONS))
        self.t_embedder2 = TimestepEmbedder(dim)
        self.conv1 = nn.Linear(dim, dim)
        self.conv2 = nn.Conv1d(dim, mel_dim, 1)
        self.wavenet = WaveNet(dim, wavenet_kernel, wavenet_dilation, wavenet_layers, dim)
        self.final_layer = FinalLayer(dim)
        self.res_projection = nn.Linear(dim, dim)
        self.skip_linear = nn.Linear(dim + mel_dim, dim)
        self.cond_x_merge_linear = nn.Linear(dim + 2 * mel_dim + style_dim * style_condition, dim)

    @classmethod
    def from_config(cls, s2mel: Mapping[str, Any]) -> S2MelDiT:
        """From ``config.yaml``'s ``s2mel`` section (its ``DiT``, ``wavenet`` and ``style_encoder``)."""
        dit, wavenet = _section(s2mel, "DiT"), _section(s2mel, "wavenet")
        style_dim = _int(_section(s2mel, "style_encoder"), "style_encoder", "dim")
        for key, want in (*_REQUIRED.items(), *_OPTIONAL.items()):
            value = dit.get(key, want) if key in _OPTIONAL else dit.get(key)
            if value != want:
                raise VoxDeskError(f"config.yaml's s2mel.DiT.{key} is {value!r}: VoxDesk runs the IndexTTS "
                                   f"S2Mel DiT with {want!r} only (that of IndexTTS-2 and 2.5).")  # fmt: skip
        flags = {}
        for key in ("style_condition", "long_skip_connection", "uvit_skip_connection"):
            if not isinstance(dit.get(key), bool):
                raise VoxDeskError(f"config.yaml's s2mel.DiT.{key} is not true or false: "
                                   "download the model folder again.")  # fmt: skip
            flags[key] = dit[key]
        if wavenet.get("style_condition") != flags["style_condition"]:
            raise VoxDeskError("config.yaml's s2mel.wavenet.style_condition differs from s2mel.DiT's: "
                               "download the model folder again.")  # fmt: skip
        dim, heads = _int(dit, "DiT", "hidden_dim"), _int(dit, "DiT", "num_heads")
        kernel = _int(wavenet, "wavenet", "kernel_size")
        if dim % heads or (dim // heads) % 2:
            raise VoxDeskError(f"config.yaml's s2mel.DiT.hidden_dim {dim} does not split into {heads} heads "
                               "of an even width: download the model folder again.")  # fmt: skip
        if _int(wavenet, "wavenet", "hidden_dim") != dim or kernel % 2 == 0:
            raise VoxDeskError("config.yaml's s2mel.wavenet needs hidden_dim equal to s2mel.DiT's and an "
                               "odd kernel_size: download the model folder again.")  # fmt: skip
        return cls(
            dim=dim,
            heads=heads,
            depth=_int(dit, "DiT", "depth"),
            mel_dim=_int(dit, "DiT", "in_channels"),
            content_dim=_int(dit, "DiT", "content_dim"),
            style_dim=style_dim,
            wavenet_layers=_int(wavenet, "wavenet", "num_layers"),
            wavenet_kernel=kernel,
            wavenet_dilation=_int(wavenet, "wavenet", "dilation_rate"),
            style_condition=flags["style_condition"],
            long_skip=flags["long_skip_connection"],
            uvit_skip=flags["uvit_skip_connection"],
        ).eval()

    @torch.no_grad()
    def load(self, cfm_state: Mapping[str, torch.Tensor]) -> S2MelDiT:
        """Take the ``estimator.*`` tensors of ``s2mel.pth``'s ``net.cfm`` (a ``module.`` prefix is
        dropped, as the official loader does); weight norm folded, the unread keys dropped, then a
        strict load that names the first missing, unknown or mis-shaped key."""
        state = {}
        for key, value in cfm_state.items():
            key = key.removeprefix("module.")
            if key.startswith("estimator.") and key.removeprefix("estimator.") not in UNUSED:
                state[key.removeprefix("estimator.")] = value
        strict_load(self, fold_weight_norm(state), "s2mel.pth (net.cfm.estimator)")
        return self

    def forward(
        self,
        x: torch.Tensor,
        prompt_x: torch.Tensor,
        x_lens: torch.Tensor | None,
        t: torch.Tensor,
        style: torch.Tensor,
        cond: torch.Tensor,
    ) -> torch.Tensor:
        """The velocity [B, 80, T] at time ``t`` [B] of ``x`` [B, 80, T], given the prompt's mel in
        ``prompt_x`` [B, 80, T] (zero past the prompt), ``style`` [B, 192] and ``cond`` [B, T, C].
        ``x_lens`` [B]: each row's frames (the rest is padding); None when every row has T."""
        frames = x.shape[-1]
        if frames > self.input_pos.shape[0]:
            raise VoxDeskError(f"The S2Mel DiT takes at most {self.input_pos.shape[0]} mel frames, not "
                               f"{frames}: speak a shorter text.")  # fmt: skip
        t1 = self.t_embedder(t)
        mel = x.transpose(1, 2)
        parts = [mel, prompt_x.transpose(1, 2), self.cond_projection(cond)]
        if self.style_condition:
            parts.append(style[:, None, :].expand(-1, frames, -1))
        h = self.cond_x_merge_linear(torch.cat(parts, dim=-1))
        if x_lens is not None:  # one length for every row is taken too, as the official takes it
            x_lens = x_lens.expand(x.shape[0])
        keep = None if x_lens is None else torch.arange(frames, device=x.device)[None, :] < x_lens[:, None]
        h = self.transformer(
            h, t1.unsqueeze(1), self.input_pos[:frames], None if keep is None else keep[:, None, None]
        )
        if self.long_skip:
            h = self.skip_linear(torch.cat([h, mel], dim=-1))
        mask = None if keep is None else keep[:, None].to(h.dtype)
        w = self.wavenet(self.conv1(h).transpose(1, 2), self.t_embedder2(t).unsqueeze(2), mask, x_lens)
        w = self.final_layer(w.transpose(1, 2) + self.res_projection(h), t1)
        return self.conv2(w.transpose(1, 2))


def fold_weight_norm(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Each weight-norm pair (``g``, ``v``) replaced by ``weight = g · v / ‖v‖`` (norm over all but
    the first dimension), computed as the official weight-norm hook computes it."""
    out = dict(state)
    for key in list(out):
        for g_name, v_name in _WEIGHT_NORM:
            stem = key.removesuffix(g_name)
            if key.endswith(g_name) and stem + v_name in out:
                g, v = out.pop(key), out.pop(stem + v_name)
                # in float32, as the official computes it from the float32 parameters the file fills
                out[stem + ".weight"] = torch._weight_norm(v.float(), g.float(), 0)
    return out
