"""The engine options the commands share (``synth``, ``serve``): where the model runs and in which
precision on the CPU, and the :class:`EngineConfig` they make."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.cpu_precision import AUTO, CHOICES

if TYPE_CHECKING:
    from app.engine import EngineConfig


def add_engine_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument(
        "--dtype",
        choices=CHOICES,
        default=AUTO,
        help="precision on the CPU: auto (default: bf16 where the CPU has native bf16, AMX or "
        "AVX512-BF16, else fp32), float32 (exact), bfloat16, or int8 Linear weights (faster, a close "
        "approximation of the exact voice); a GPU runs the checkpoint's dtype",
    )
    # the option's name before --dtype: scripts that pass it keep working
    p.add_argument("--cpu-weights", dest="dtype", choices=("float32", "int8"), help=argparse.SUPPRESS)
    p.add_argument(
        "--lora-slots",
        type=int,
        default=8,
        metavar="N",
        help="LoRAs kept loaded at once (default 8): requests with up to N different LoRAs share each "
        "step; a request with one more waits for a slot",
    )


def engine_config(args: argparse.Namespace, **extra: int) -> EngineConfig:
    """The engine settings the command line names (model, device, CPU precision)."""
    from app.engine import EngineConfig
    from app.errors import VoxDeskError

    if not 1 <= args.lora_slots <= 64:
        raise VoxDeskError("--lora-slots must be between 1 and 64.")
    return EngineConfig(
        model_dir=args.model,
        device=args.device,
        cpu_precision=args.dtype,
        lora_slots=args.lora_slots,
        **extra,
    )
