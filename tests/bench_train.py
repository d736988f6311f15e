"""LoRA training on the GPU: step time and peak memory at the plans chosen for 8/12/24 GB cards,
and a 300-step loss curve on a synthetic data set (not a pytest file).

    python tests/bench_train.py --device cuda --json train.json               # real shapes (H200)
    python tests/bench_train.py --device cpu --presets tiny-v2 --cards 12 --clip-seconds 0.02 --steps 1 \
        --curve-steps 20 --json /tmp/train-cpu.json                           # proof that it runs

Random weights from the checkpoint writer (``/tmp/bench-<preset>`` unless ``--ckpt-root``).
Each (model, card) pair: ``plan_training`` with the card's size less 0.8 GB for the desktop, a
fresh model with the plan's LoRA, one warm-up step, then ``--steps`` timed optimizer steps of
batches of ``--clip-seconds`` latents (15 s: the longest clip the data set keeps) and text; the
peak is ``torch.cuda.max_memory_allocated``, reported with the plan's estimate and their ratio
(the calibration factor ``app/train/plan.py`` takes). The curve trains VoxCPM2 (the first preset)
for ``--curve-steps`` steps on 16 fixed samples at the recipe's learning rate, one micro-batch a
step, and reports the loss every 10 steps: memorising a fixed set must drive it down.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.models.voxcpm.checkpoint import write_checkpoint  # noqa: E402
from app.models.voxcpm.weights import load_model  # noqa: E402
from app.train.plan import GiB, TrainPlan, plan_training  # noqa: E402
from app.train.trainer import Trainer  # noqa: E402

DESKTOP_GB = 0.8


def _checkpoint(args, preset: str) -> Path:
    given = dict(item.split("=", 1) for item in args.ckpt)
    folder = Path(given.get(preset) or Path(args.ckpt_root) / f"bench-{preset}")
    if not (folder / "model.safetensors").exists():
        write_checkpoint(folder, preset)
    return folder


def _samples(model, n: int, seconds: float, seed: int) -> list[tuple[list[int], torch.Tensor]]:
    gen = torch.Generator().manual_seed(seed)
    vae = model.audio_vae
    patches = max(2, math.ceil(seconds * model.encode_rate / (vae.chunk_size * model.patch_size)))
    text = max(4, int(seconds * 5))
    vocab = model.cfg.lm.vocab_size
    return [
        (torch.randint(200, vocab, (text,), generator=gen).tolist(),
         torch.randn(patches, model.patch_size, model.feat_dim, generator=gen))
        for _ in range(n)
    ]  # fmt: skip


def _trainer(
    folder: Path, device: str, plan: TrainPlan, samples_seconds: float, steps: int, lr: float = 1e-4
):
    dtype = "bfloat16" if device == "cuda" else "float32"
    model = load_model(folder, device, dtype)
    samples = _samples(model, max(16, plan.batch_size * plan.grad_accum), samples_seconds, 0)
    return Trainer(model, samples, steps=steps, lr=lr, r=32, alpha=32, targets=("lm", "dit"),
                   batch_size=plan.batch_size, grad_accum=plan.grad_accum, checkpointing=plan.checkpointing,
                   seed=0)  # fmt: skip


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


_measured: dict[tuple, dict] = {}


def measure(folder: Path, preset: str, card_gb: float, args) -> dict:
    free = int((card_gb - DESKTOP_GB) * GiB)
    plan = plan_training(folder, args.device, free if args.device == "cuda" else None)
    key = (preset, plan.batch_size, plan.grad_accum, plan.checkpointing)
    if key in _measured:  # the same plan for a larger card: measured once
        row = {**_measured[key], "card_gb": card_gb}
        if "peak_reserved_bytes" in row:
            row["fits_card"] = row["peak_reserved_bytes"] <= free
        print(json.dumps(row), flush=True)
        return row
    row = {"preset": preset, "card_gb": card_gb, "plan": asdict(plan)}
    trainer = _trainer(folder, args.device, plan, args.clip_seconds, 1000)
    if args.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    trainer.step()  # warm-up
    _sync(args.device)
    start = time.perf_counter()
    losses = [trainer.step() for _ in range(args.steps)]
    _sync(args.device)
    row["step_s"] = round((time.perf_counter() - start) / args.steps, 4)
    row["micro_step_s"] = round(row["step_s"] / plan.grad_accum, 4)
    row["loss"] = losses[-1]
    if args.device == "cuda":
        peak = torch.cuda.max_memory_allocated()
        row.update(peak_bytes=peak, peak_reserved_bytes=torch.cuda.max_memory_reserved(),
                   estimated_bytes=plan.estimated_peak_bytes,
                   measured_over_estimated=round(peak / plan.estimated_peak_bytes, 3),
                   fits_card=torch.cuda.max_memory_reserved() <= free)  # fmt: skip
    _measured[key] = row
    del trainer
    gc.collect()
    if args.device == "cuda":
        torch.cuda.empty_cache()
    print(json.dumps(row), flush=True)
    return row


def curve(folder: Path, preset: str, args) -> dict:
    plan = plan_training(folder, args.device, None)
    plan = TrainPlan(
        plan.device, min(plan.batch_size, 4), 1, plan.checkpointing, plan.estimated_peak_bytes, plan.basis
    )
    trainer = _trainer(folder, args.device, plan, args.clip_seconds, args.curve_steps)  # 16 samples
    start = time.perf_counter()
    losses = [trainer.step() for _ in range(args.curve_steps)]
    _sync(args.device)
    k = max(1, min(20, len(losses) // 5))
    out = {"preset": preset, "steps": args.curve_steps, "batch": plan.batch_size,
           "seconds": round(time.perf_counter() - start, 1), "every_10": losses[::10],
           "first_mean": sum(losses[:k]) / k, "last_mean": sum(losses[-k:]) / k}  # fmt: skip
    out["went_down"] = out["last_mean"] < out["first_mean"]
    print(json.dumps(out), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--presets", default="voxcpm2,voxcpm1.5")
    p.add_argument("--cards", default="8,12,24", help="card sizes in GB")
    p.add_argument("--steps", type=int, default=2, help="timed optimizer steps per configuration")
    p.add_argument("--clip-seconds", type=float, default=15.0)
    p.add_argument("--curve-steps", type=int, default=300)
    p.add_argument("--ckpt-root", default="/tmp")
    p.add_argument("--ckpt", action="append", default=[], help="PRESET=DIR: an existing checkpoint folder")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    torch.manual_seed(0)
    result = {"device": torch.cuda.get_device_name() if args.device == "cuda" else "cpu", "configs": []}
    presets = args.presets.split(",")
    for preset in presets:
        folder = _checkpoint(args, preset)
        for card in (float(c) for c in args.cards.split(",")):
            try:
                result["configs"].append(measure(folder, preset, card, args))
            except Exception as exc:  # noqa: BLE001 - a plan that does not fit is a result too
                result["configs"].append(
                    {"preset": preset, "card_gb": card, "error": f"{type(exc).__name__}: {exc}"}
                )
                print(json.dumps(result["configs"][-1]), flush=True)
    if args.curve_steps:
        result["curve"] = curve(_checkpoint(args, presets[0]), presets[0], args)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
