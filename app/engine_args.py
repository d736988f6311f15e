"""The engine options the commands share (``synth``, ``serve``): where the model runs and with
which weights on the CPU, and the :class:`EngineConfig` they make."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.engine import EngineConfig


def add_engine_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument(
        "--cpu-weights",
        choices=("float32", "int8"),
        default="float32",
        help="on the CPU: exact float32 weights (default) or int8 Linear weights, about two to three "
        "times faster per step and a close approximation of the exact voice",
    )


def engine_config(args: argparse.Namespace, **extra: int) -> EngineConfig:
    """The engine settings the command line names (model, device, CPU weights)."""
    from app.engine import EngineConfig

    return EngineConfig(model_dir=args.model, device=args.device, cpu_weights=args.cpu_weights, **extra)
