"""LoRA adapters for training, on the modules the official ``_apply_lora`` targets, saved in the
official folder format.

Official recipe (OpenBMB/VoxCPM @ 616d3d3e, ``conf/voxcpm_v2/voxcpm_finetune_lora.yaml`` and
``src/voxcpm/modules/layers/lora.py``): LoRA on ``q_proj``/``k_proj``/``v_proj``/``o_proj`` of the
base LM and the residual LM (``enable_lm``) and of the LocDiT stack (``enable_dit``), r 32, alpha
32, no dropout; ``y = W x + b + (B (A x)) * alpha / r`` with ``A`` Kaiming-uniform and ``B`` zero.
The wrapped layer keeps ``weight`` under its own name, so the state-dict keys are the official
ones (``base_lm.layers.0.self_attn.q_proj.lora_A``) and a folder saved here is read by the
official ``load_lora_weights`` and by VoxDesk's LoRA loader alike::

    <folder>/lora_weights.safetensors   only the lora_A / lora_B tensors (fp32)
    <folder>/lora_config.json           {"base_model": ..., "lora_config": {enable_lm, r, alpha, ...}}
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from app import atomic
from app.errors import VoxDeskError
from app.models.voxcpm.lora import CONFIG_FILE, WEIGHT_FILES, LoRAConfig

TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj")  # the official ATTENTION targets, in wrapping order
STACKS = {"lm": ("base_lm", "residual_lm"), "dit": ("feat_decoder.estimator",)}
WEIGHTS, CONFIG = WEIGHT_FILES[0], CONFIG_FILE  # the file format is the inference loader's


class LoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus a trainable low-rank update (fp32 ``lora_A``/``lora_B``)."""

    def __init__(self, base: nn.Linear, r: int, alpha: float) -> None:
        super().__init__()
        self.in_features, self.out_features = base.in_features, base.out_features
        self.weight, self.bias = base.weight, base.bias
        self.scaling = alpha / r
        dev = base.weight.device
        self.lora_A = nn.Parameter(torch.empty(r, self.in_features, device=dev))
        self.lora_B = nn.Parameter(torch.zeros(self.out_features, r, device=dev))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.linear(x, self.weight, self.bias)
        a, b = self.lora_A.to(x.dtype), self.lora_B.to(x.dtype)
        return out + F.linear(F.linear(x, a), b) * self.scaling


def apply_lora(model: nn.Module, r: int, alpha: float, targets: tuple[str, ...]) -> list[nn.Parameter]:
    """Freeze ``model`` and wrap the official target Linears of the ``targets`` stacks ("lm",
    "dit") in :class:`LoRALinear`; returns the LoRA parameters in ``named_parameters`` order.
    Packed q/k/v projections (CUDA inference) are unpacked: the adapters sit on q/k/v."""
    unknown = set(targets) - set(STACKS)
    if unknown or not targets:
        raise VoxDeskError(
            f"LoRA targets must be among {', '.join(STACKS)}; got {', '.join(targets) or 'none'}."
        )
    for p in model.parameters():
        p.requires_grad_(False)
    for stack in targets:
        for root_name in STACKS[stack]:
            root = model.get_submodule(root_name)
            for module in list(root.modules()):
                if hasattr(module, "qkv_proj"):
                    module.qkv_proj = None
                for attr in TARGETS:
                    child = getattr(module, attr, None)
                    if isinstance(child, nn.Linear):
                        setattr(module, attr, LoRALinear(child, r, alpha))
    return lora_parameters(model)


def lora_parameters(model: nn.Module) -> list[nn.Parameter]:
    return [p for n, p in model.named_parameters() if "lora_" in n]


def lora_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """The official-named LoRA tensors (fp32, CPU, contiguous copies)."""
    return {
        n: p.detach().float().cpu().contiguous().clone() for n, p in model.named_parameters() if "lora_" in n
    }


def official_config(r: int, alpha: float, targets: tuple[str, ...]) -> dict[str, Any]:
    """The ``lora_config`` block the official trainer writes (``LoRAConfig.model_dump()``): the
    inference side's :class:`LoRAConfig` with the training-only dropout."""
    cfg = LoRAConfig(enable_lm="lm" in targets, enable_dit="dit" in targets, r=r, alpha=alpha)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(cfg).items()} | {"dropout": 0.0}


def save_lora(
    model: nn.Module, folder: Path, r: int, alpha: float, targets: tuple[str, ...], base_model: str
) -> None:
    """Write the official LoRA folder (both files atomically; the caller makes the folder atomic)."""
    from safetensors.torch import save

    folder.mkdir(parents=True, exist_ok=True)
    atomic.write_bytes(folder / WEIGHTS, save(lora_state(model)))
    atomic.write_json(
        folder / CONFIG, {"base_model": base_model, "lora_config": official_config(r, alpha, targets)}
    )


def load_lora(model: nn.Module, folder: Path) -> None:
    """Copy a saved folder's LoRA tensors into ``model`` (which has the same adapters)."""
    from safetensors.torch import load_file

    params = dict(model.named_parameters())
    for name, value in load_file(str(Path(folder) / WEIGHTS)).items():
        if name not in params:
            raise VoxDeskError(f"The LoRA in {folder} does not fit this model ({name}).")
        params[name].data.copy_(value)


def read_config(folder: Path) -> dict[str, Any]:
    return json.loads((Path(folder) / CONFIG).read_text(encoding="utf-8"))["lora_config"]
