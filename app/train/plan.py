"""Size a training run to the card: batch size, gradient accumulation, activation checkpointing.

The peak memory of a LoRA step is estimated from the model's shapes:

- frozen weights: every parameter in the training dtype (bf16 on CUDA: the official trainer keeps
  fp32 masters but runs every matmul under bf16 autocast, so storing frozen weights in bf16 feeds
  the matmuls the same numbers at half the memory);
- LoRA: fp32 weight + gradient + two AdamW moments = 16 bytes a parameter;
- activations: ``ACT_BYTES * hidden`` bytes per token per layer (the usual figure for a
  transformer layer under a fused attention kernel), for the base and residual LMs over the
  sequence, LocEnc over ``P + 1`` tokens per patch, LocDiT over ``2P + 3`` (v2) or ``2P + 1``;
  with checkpointing only each layer's input is kept (``2 * hidden`` bytes) plus one layer's
  activations while it is recomputed;
- ``OVERHEAD_BYTES`` for the CUDA context, cuBLAS workspaces and the allocator's slack.

The longest clip (15 s) sets the sequence. ``CALIBRATION`` could scale the estimate per architecture
from the H200 benchmark (``tests/bench_train.py``); it measured the estimate 6-16 % high, so none
is applied and the basis says "estimated". The effective batch stays the official recipe's 16 (2 x 8).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import torch

from app.errors import VoxDeskError
from app.models.voxcpm.config import LMConfig, VoxCPMConfig, load_config, parse_config

EFFECTIVE_BATCH = 16
MAX_CLIP_SECONDS = 15.0
TEXT_TOKENS_PER_SECOND = 5.0  # a generous speaking rate in tokens
ACT_BYTES = 34
OVERHEAD_BYTES = int(1.2 * 2**30)
HEADROOM = 0.9  # use at most this share of the free memory
GiB = 2**30
# Measured peak / estimate, per architecture. The H200 run (docs/benchmarks.md, "LoRA training on
# the GPU") measured 0.86-0.94 for VoxCPM2 and 0.84 for VoxCPM1.5 at the plans below: the estimate
# errs on the side of fitting, and scaling it down would pick plans (VoxCPM2 4 x 4 with
# checkpointing on 8 GB) that were not measured, so none is applied.
CALIBRATION: dict[str, float] = {}
# (batch, checkpointing), fastest first.
CHOICES = ((4, False), (2, False), (4, True), (2, True), (1, False), (1, True))


@dataclass(frozen=True)
class TrainPlan:
    device: str
    batch_size: int
    grad_accum: int
    checkpointing: bool
    estimated_peak_bytes: int
    basis: str  # "measured on H200" / "estimated"


def _gib(n: float) -> str:
    return f"{n / GiB:.1f} GB"


def training_device() -> tuple[str | None, str]:
    """("cuda", "NVIDIA RTX 4070, 11.2 GB free") or (None, a plain sentence on why not)."""
    if not torch.cuda.is_available():
        return None, (
            "Training needs an NVIDIA GPU, and none was found on this computer. It can run on the "
            "processor only if you choose it (--device cpu), and then takes days instead of minutes."
        )
    free, _total = torch.cuda.mem_get_info()
    return "cuda", f"{torch.cuda.get_device_name()}, {_gib(free)} free"


def _count(cfg: VoxCPMConfig) -> tuple[int, int]:
    """(all parameters, LoRA parameters at r = 1) of the model with LM + DiT adapters."""
    return _count_json(json.dumps(cfg.to_dict(), sort_keys=True))


@functools.lru_cache(maxsize=8)
def _count_json(config_json: str) -> tuple[int, int]:
    from app.models.voxcpm.model import VoxCPM

    with torch.device("meta"):
        model = VoxCPM(parse_config(json.loads(config_json)))
    total = sum(p.numel() for p in model.parameters())
    lora = 0
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.Linear) and name.rsplit(".", 1)[-1] in (
            "q_proj",
            "k_proj",
            "v_proj",
            "o_proj",
        ):
            if name.startswith(("base_lm.", "residual_lm.", "feat_decoder.estimator.")):
                lora += mod.in_features + mod.out_features
    return total, lora


def _stack_bytes(lm: LMConfig, tokens: int, checkpointing: bool) -> int:
    per_layer = ACT_BYTES * lm.hidden_size * tokens
    if checkpointing:
        return 2 * lm.hidden_size * tokens * lm.num_hidden_layers + per_layer
    return per_layer * lm.num_hidden_layers


def estimate_peak(cfg: VoxCPMConfig, batch: int, checkpointing: bool, device: str, r: int = 32) -> int:
    """Bytes a training step of ``batch`` 15 s clips needs at its peak (see the module doc)."""
    total, lora_r1 = _count(cfg)
    weight_bytes = 2 if device.startswith("cuda") else 4
    fps = cfg.audio_vae.get("sample_rate", 16000) / math.prod(cfg.audio_vae.get("encoder_rates", [640]))
    patches = math.ceil(MAX_CLIP_SECONDS * fps / cfg.patch_size)
    seq = patches + math.ceil(MAX_CLIP_SECONDS * TEXT_TOKENS_PER_SECOND) + 2
    p = cfg.patch_size
    dit_tokens = 2 * p + (3 if cfg.is_v2 else 1)
    act = (
        _stack_bytes(cfg.lm, seq, checkpointing)
        + _stack_bytes(cfg.residual_lm_config(), seq, checkpointing)
        + _stack_bytes(cfg.stack_lm_config(cfg.encoder), seq * (p + 1), checkpointing)
        + _stack_bytes(cfg.stack_lm_config(cfg.dit), seq * dit_tokens, checkpointing)
    )
    estimate = total * weight_bytes + 16 * r * lora_r1 + batch * act + OVERHEAD_BYTES
    return int(estimate * CALIBRATION.get(cfg.architecture, 1.0))


def plan_training(model_dir: Path, device: str, free_bytes: int | None, r: int = 32) -> TrainPlan:
    """The fastest (batch, checkpointing) whose estimated peak fits ``free_bytes`` (CUDA; ``None``:
    ask the card). On the CPU memory is not the limit: batch 1, no checkpointing."""
    cfg = load_config(model_dir)
    basis = "measured on H200" if cfg.architecture in CALIBRATION else "estimated"
    if not device.startswith("cuda"):
        peak = estimate_peak(cfg, 1, False, device, r)
        return TrainPlan(device, 1, EFFECTIVE_BATCH, False, peak, basis)
    if free_bytes is None:
        free_bytes = torch.cuda.mem_get_info()[0]
    for batch, ckpt in CHOICES:
        peak = estimate_peak(cfg, batch, ckpt, device, r)
        if peak <= free_bytes * HEADROOM:
            return TrainPlan(device, batch, EFFECTIVE_BATCH // batch, ckpt, peak, basis)
    need = estimate_peak(cfg, 1, True, device, r)
    raise VoxDeskError(
        f"Training this model needs about {_gib(need / HEADROOM)} of free GPU memory; the card has "
        f"{_gib(free_bytes)} free. Close other programs that use the GPU, or train a smaller model."
    )
