"""IndexTTS-2.5's length regulator: semantic features at 50 Hz → S2Mel's condition at the mel rate.

As the official ``InterpolateRegulator`` computes it for continuous input (index-tts
``indextts/s2mel/modules/length_regulator.py``, built by ``MyModel`` from config.yaml's
``s2mel.length_regulator``, called by ``infer_v2_5`` with ``n_quantizers=3, f0=None`` and ``[0]``
of its outputs kept): ``content_in_proj`` (Linear ``in_channels`` → ``channels``), nearest
interpolation to ``ylens`` frames, then one (k3 conv, GroupNorm of one group, Mish) per entry of
``sampling_ratios`` and a 1×1 conv, frames past each row's length zeroed. A config with
``f0_condition`` adds ``f0_mask`` to every frame (what ``f0=None`` means).

It runs twice per request: on the speaker clip's w2v-BERT features with ``ylens`` = the reference
mel's frames (the prompt condition), and on the codec's output with :func:`target_frames`.
The discrete-input embeddings (``embedding``, ``mask_token``, ``extra_codebooks``...) and
``f0_embedding`` are never used on that path; their keys are accepted in ``s2mel.pth`` and not kept.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import VoxDeskError
from app.models.indextts.weights import strict_load

FRAMES_PER_SEMANTIC_FRAME = 1.72  # 22 050 Hz / 256 hop ÷ 50 Hz, as infer_v2_5 writes it
UNUSED = ("embedding.", "mask_token", "extra_codebooks.", "extra_codebook_mask_tokens.", "f0_embedding.")


def target_frames(semantic_frames: int, duration_factor: float = 1.0) -> int:
    """The mel frames S2Mel makes from ``semantic_frames`` codec frames (2 per GPT code):
    ``int(frames · 1.72 · duration_factor)`` in that order, as ``infer_v2_5`` computes it."""
    if not (math.isfinite(duration_factor) and duration_factor > 0):
        raise VoxDeskError(f"Duration factor {duration_factor} is not a positive number: choose one "
                           "between 0.5 and 2.")  # fmt: skip
    frames = int(semantic_frames * FRAMES_PER_SEMANTIC_FRAME * duration_factor)
    if frames < 1:
        raise VoxDeskError(f"{semantic_frames} semantic frames at duration factor {duration_factor} make "
                           "no mel frame: choose a larger duration factor or a longer text.")  # fmt: skip
    return frames


class LengthRegulator(nn.Module):
    """The inference path of the official ``InterpolateRegulator`` (see the module docstring)."""

    def __init__(self, channels: int, in_channels: int, stages: int, f0_condition: bool = False) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for _ in range(stages):
            layers += [nn.Conv1d(channels, channels, 3, 1, 1), nn.GroupNorm(1, channels), nn.Mish()]
        layers.append(nn.Conv1d(channels, channels, 1, 1))
        self.model = nn.Sequential(*layers)
        self.content_in_proj = nn.Linear(in_channels, channels)
        self.f0_mask = nn.Parameter(torch.zeros(1, channels)) if f0_condition else None

    @classmethod
    def from_config(cls, s2mel: Mapping[str, Any]) -> LengthRegulator:
        """From config.yaml's ``s2mel`` mapping; options the 2.5 path cannot run are one line."""
        section = s2mel.get("length_regulator")
        if not isinstance(section, Mapping):
            raise VoxDeskError("config.yaml has no s2mel.length_regulator section: download the model "
                               "folder again.")  # fmt: skip
        ratios = section.get("sampling_ratios")
        if not isinstance(ratios, list | tuple) or not ratios:
            # Without ratios the official one does not interpolate, and its output mask fails.
            raise VoxDeskError(f"config.yaml: s2mel.length_regulator.sampling_ratios is {ratios!r}, not a "
                               "non-empty list: download the model folder again.")  # fmt: skip
        for key in ("is_discrete", "vector_quantize"):
            if section.get(key, False):
                raise VoxDeskError(f"config.yaml: s2mel.length_regulator.{key} is set, but IndexTTS-2.5 "
                                   "feeds it continuous features: not an IndexTTS-2.5 folder.")  # fmt: skip
        channels, in_channels = _int(section, "channels"), _int(section, "in_channels")
        return cls(channels, in_channels, len(ratios), bool(section.get("f0_condition", False))).eval()

    def load(self, state_dict: Mapping[str, torch.Tensor]) -> LengthRegulator:
        """Take ``s2mel.pth``'s ``net.length_regulator`` table strictly (``module.`` prefixes and
        the unused keys dropped); a key missing, unknown or misshapen is one line naming it."""
        kept = {k.removeprefix("module."): v for k, v in state_dict.items()}
        kept = {k: v for k, v in kept.items() if not k.startswith(UNUSED)}
        strict_load(self, kept, "s2mel.pth (length_regulator)")
        return self

    @torch.inference_mode()
    def forward(self, x: torch.Tensor, ylens: torch.Tensor) -> torch.Tensor:
        """Features ``[B, T, in_channels]`` and lengths ``[B]`` → ``[B, max(ylens), channels]``."""
        ylens = ylens.to(x.device).long().reshape(-1)
        frames = int(ylens.max())
        if frames < 1 or x.shape[1] < 1:
            raise VoxDeskError(f"The length regulator got {x.shape[1]} feature frames to stretch to "
                               f"{frames} mel frames: the prompt or the text is empty.")  # fmt: skip
        weight = self.content_in_proj.weight
        x = self.content_in_proj(x.to(weight.device, weight.dtype))
        x = F.interpolate(x.transpose(1, 2), size=frames, mode="nearest")
        if self.f0_mask is not None:
            x = x + self.f0_mask.unsqueeze(-1)
        out = self.model(x).transpose(1, 2)
        valid = torch.arange(frames, device=x.device).unsqueeze(0) < ylens.unsqueeze(1)
        return out * valid.unsqueeze(-1)


def _int(section: Mapping[str, Any], key: str) -> int:
    value = section.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise VoxDeskError(f"config.yaml: s2mel.length_regulator.{key} is {value!r}, not a whole number: "
                           "download the model folder again.")  # fmt: skip
    return value
